#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Export files that are valid (the CRC right, every check of the format
# passed) but made by someone who wants to steer the operator who imports
# them: a shared block-list published as an export, say. Checked:
# - the action travels with the file: `import` says which (text and -j),
#   so a block-list made a monitor or allow filter is not imported
#   silently; `merge`/`intersect` refuse sources whose actions differ, and
#   a result whose action differs from the existing NAME --into names,
#   leaving NAME as it was; a hash weaker than create gives the file's
#   action (a block-list's NH made an allow-list, nh-v1) is said too, and
#   so are more bits set than its flow count sets (every bit, "1 flow");
# - a capacity its geometry cannot hold at its own false-positive rate
#   (a 2 Mbit filter "sized for 16777216 flows": info's claim, the bound
#   bgp and guard keep, and with --confirm exact exact sets of 2^25
#   entries, 512 MiB of kernel memory from a 258 KB file) is refused by
#   import, merge and card alike, nothing created; so is a confirming
#   filter's capacity past what create allows (2^27 rules);
# - every capacity create, load --replace, fold and merge make still
#   exports and imports: Bloom filters by capacity at rates from 1e-6 to
#   0.999, compact, classic, counting, confirming, sized by bits, grown by
#   a longer list, folded, merged; cuckoo, d-left and scalable filters;
# - merge --into a new filter from a confirming filter sized by bits keeps
#   it sized by bits (capacity 0, its exact sets as large), rather than
#   "sized for 1 flows".
# - a confirming filter whose capacity merge raised to its rules past its
#   bits (as older builds' merges did whenever the rules outnumbered it),
#   a del since: its export imports, sized for what its bits hold, said;
# - a confirming filter sized by bits whose exact sets a replace made
#   larger than its bits size them for: its export imports, every rule in.
source "$(dirname "$0")/../lib/lib.sh"
t_begin import_hostile
cleanup() { t_cleanup_filters; }
t_traps

jget() { t_json "d$1"; }
digest() { "$FB" -j info "$1" | jget '["digest"]'; }
# patch IN OUT FIELD=VALUE...: a plain export with header fields changed
# and the CRC recomputed (fields as in user/lib/fleet/fbx_format.h).
patch() {
	python3 - "$@" <<'PY'
import struct, sys, zlib
OFF = dict(hash=(17, "B"), action=(20, "B"), confirm=(21, "B"), nblocks=(24, "I"), flows=(48, "Q"),
           capacity=(56, "Q"), fp=(64, "I"))
src, dst = sys.argv[1], sys.argv[2]
d = bytearray(open(src, "rb").read()[:-4])
for a in sys.argv[3:]:
    f, v = a.split("=")
    if f == "rules":  # an empty exact-set section, for a file made confirming
        d += struct.pack("<Q", 0)
        continue
    if f == "bits":  # every bit of the filter set to v (0 or 1)
        nb = struct.unpack("<I", d[24:28])[0]
        d[136:136 + nb * 64] = bytes([255 * int(v)]) * (nb * 64)
        continue
    o, w = OFF[f]
    struct.pack_into("<" + w, d, o, int(v, 0))
open(dst, "wb").write(bytes(d) + struct.pack("<I", zlib.crc32(bytes(d)) & 0xffffffff))
PY
}
gone() { [ ! -e "$FLOWBLOOM_ROOT/$1" ] && ! ls "$FLOWBLOOM_ROOT" | grep -q "$1"; }

"$FB" create bl --capacity 1000 --fp-rate 0.01 >/dev/null
"$FB" add bl src 203.0.113.66 >/dev/null
"$FB" export bl "$T_TMP/bl.fbx" --plain >/dev/null

# The action: a block-list turned into a monitor (passes everything) or
# an allow-list (passes only its flows) file imports as what it is, and
# import says so: `attach` takes the filter's own action.
patch "$T_TMP/bl.fbx" "$T_TMP/mon.fbx" action=3
patch "$T_TMP/bl.fbx" "$T_TMP/allow.fbx" action=2
"$FB" import "$T_TMP/bl.fbx" b1 >"$T_TMP/out"
grep -q "imported b1 from .*bl.fbx: m=2064384 bits, k=4, 1 flow, action drop$" "$T_TMP/out" &&
	pass "import names the action (drop)" || fail "import's line: $(cat "$T_TMP/out")"
"$FB" import "$T_TMP/mon.fbx" m1 >"$T_TMP/out"
grep -q ", action monitor" "$T_TMP/out" && pass "import names the action (monitor)" ||
	fail "a monitor file imported without saying so: $(cat "$T_TMP/out")"
"$FB" -j import "$T_TMP/allow.fbx" a1 >"$T_TMP/out.json"
check_eq "import -j names the action" "$(t_json 'd["action"]' "$T_TMP/out.json")" allow
# The block-list's hash came with it: NH, where create gives an allow-list
# SipHash-1-3 (a PRF) against adaptive probing. Said, and -j names it.
check_eq "import -j names the hash" "$(t_json 'd["hash"]' "$T_TMP/out.json")" nh
"$FB" import "$T_TMP/allow.fbx" a2 >/dev/null 2>"$T_TMP/err"
grep -q "note: .*allow.fbx: hash nh, not siphash13 as create gives a filter of action allow" \
	"$T_TMP/err" && pass "an allow-list with a block-list's hash: said" ||
	fail "an allow-list with NH imported without saying so: $(cat "$T_TMP/err")"
"$FB" import "$T_TMP/bl.fbx" b2 >/dev/null 2>"$T_TMP/err"
check_eq "a block-list with its own hash: nothing said" "$(cat "$T_TMP/err")" ""
patch "$T_TMP/bl.fbx" "$T_TMP/v1.fbx" hash=3
"$FB" import "$T_TMP/v1.fbx" v1 >/dev/null 2>"$T_TMP/err"
grep -q "note: .*v1.fbx: hash nh-v1, not nh as create gives a filter of action drop" \
	"$T_TMP/err" && pass "nh-v1 (key words derived linearly): said" ||
	fail "an nh-v1 file imported without saying so: $(cat "$T_TMP/err")"
# Every bit set under a flow count of 1: a block-list that drops every
# packet, which import's line would call "1 flow". Said.
patch "$T_TMP/bl.fbx" "$T_TMP/full.fbx" bits=1
"$FB" import "$T_TMP/full.fbx" full >"$T_TMP/out" 2>"$T_TMP/err"
grep -q "note: .*full.fbx: 2064384 of 2064384 bits set, more than 1 flow set with k=4: it matches more than its flow count says (false-positive rate 1 per probe)" \
	"$T_TMP/err" && pass "a full filter that says 1 flow: said" ||
	fail "a full filter imported as 1 flow without a word: $(cat "$T_TMP/out" "$T_TMP/err")"

# merge/intersect of sources whose actions differ: one key means one
# create, and create alone sets the action, so such a file was changed.
for op in merge intersect; do
	t_refused 1 "$op of a drop and an allow file: refused" \
		"bl.fbx and .*allow.fbx: actions differ (drop, allow)" \
		"$FB" $op "$T_TMP/bl.fbx" "$T_TMP/allow.fbx" --into x_$op
	gone x_$op && pass "... nothing created" || fail "$op created x_$op"
done
d=$(digest b1)
t_refused 1 "merge of monitor files --into a drop filter: refused" \
	"cannot replace 'b1' with the result: actions differ (drop, monitor)" \
	"$FB" merge "$T_TMP/mon.fbx" "$T_TMP/mon.fbx" --into b1
check_eq "... b1 unchanged, still drop" "$(digest b1) $("$FB" -j info b1 | jget '["action"]')" "$d drop"
check "merge of files of b1's action --into b1" "$FB" merge "$T_TMP/bl.fbx" b1 --into b1

# A capacity the geometry cannot hold at the file's own rate.
patch "$T_TMP/bl.fbx" "$T_TMP/cap.fbx" capacity=16777216
for v in import card; do
	case $v in
	import) set -- import "$T_TMP/cap.fbx" c1 ;;
	card) set -- card "$T_TMP/cap.fbx" ;;
	esac
	t_refused 1 "$v: capacity 16777216 in 2064384 bits at 0.01: refused" \
		"cap.fbx: capacity 16777216: more than 2064384 bits with k=4 hold at fp-rate 0.01" \
		"$FB" "$@"
done
gone c1 && pass "... nothing imported" || fail "c1 was created"
t_refused 1 "merge: the same file refused" "capacity 16777216" \
	"$FB" merge "$T_TMP/cap.fbx" "$T_TMP/bl.fbx" --into c2
patch "$T_TMP/bl.fbx" "$T_TMP/cap0.fbx" capacity=16777216 fp=0
t_refused 1 "capacity 16777216 without a rate in 2064384 bits: refused" \
	"capacity 16777216: more than its 2064384 bits" \
	"$FB" import "$T_TMP/cap0.fbx" c3

# With --confirm exact the capacity sizes the exact sets: 2^25 entries,
# 512 MiB of kernel memory for a filter of 256 KiB.
"$FB" create cf --bits 512 --hashes 3 --confirm exact >/dev/null
"$FB" add cf src 203.0.113.66 >/dev/null
"$FB" export cf "$T_TMP/cf.fbx" --plain >/dev/null
patch "$T_TMP/cf.fbx" "$T_TMP/cfcap.fbx" capacity=16777216
t_refused 1 "a confirming file sized for 2^24 flows in 2 Mbit: refused" \
	"capacity 16777216: more than its 2064384 bits" \
	"$FB" import "$T_TMP/cfcap.fbx" c4
gone c4 && pass "... nothing imported" || fail "c4 was created"
# ... and past create's bound for exact sets (2^27 rules) even where the
# bits could hold it: 32 Mbit with k=1 (classic) hold 2^27 + 1 flows at
# rate 0.999.
"$FB" create big --bits 33554432 --hashes 1 --layout classic >/dev/null
"$FB" export big "$T_TMP/big.fbx" --plain >/dev/null
patch "$T_TMP/big.fbx" "$T_TMP/bigcf.fbx" confirm=1 capacity=134217729 fp=999000000 rules=0
t_refused 1 "a confirming file of capacity 2^27 + 1: refused as create refuses it" \
	"capacity 134217729: --confirm exact holds at most 134217728 rules" \
	"$FB" import "$T_TMP/bigcf.fbx" c5
patch "$T_TMP/big.fbx" "$T_TMP/bigok.fbx" capacity=134217729 fp=999000000
check "... the same capacity without --confirm: imported" "$FB" import "$T_TMP/bigok.fbx" c6

# What create, load, fold and merge make still travels.
roundtrip() { # LABEL NAME
	local cap
	"$FB" destroy "$2_back" >/dev/null 2>&1
	cap=$("$FB" -j info "$2" | jget '["capacity"]')
	if "$FB" export "$2" "$T_TMP/$2.fbx" >/dev/null &&
		"$FB" import "$T_TMP/$2.fbx" "$2_back" >/dev/null 2>"$T_TMP/err"; then
		check_eq "$1: exported and imported, the same capacity ($cap)" \
			"$("$FB" -j info "$2_back" | jget '["capacity"]')" "$cap"
	else
		fail "$1: $(cat "$T_TMP/err")"
	fi
}
python3 -c 'import sys
for i in range(int(sys.argv[1])): print("udp 198.51.100.%d:%d 203.0.113.%d:%d" % (i % 250, 1024 + i // 250, i % 7, 53))' 5000 >"$T_TMP/l5k.txt"
head -200 "$T_TMP/l5k.txt" >"$T_TMP/l200.txt"
i=0
for args in "--capacity 1000 --fp-rate 0.999" "--capacity 100000 --fp-rate 0.999" \
	"--capacity 3000000 --fp-rate 0.5" "--capacity 1000 --fp-rate 0.000001" \
	"--capacity 5000 --fp-rate 0.01 --compact" "--capacity 100000 --fp-rate 0.3 --layout classic" \
	"--capacity 20000 --fp-rate 0.01 --counting" "--capacity 1000 --fp-rate 0.01 --confirm exact" \
	"--bits 100000 --hashes 3 --confirm exact" "--capacity 1000 --fp-rate 0.01 --type cuckoo" \
	"--capacity 1000 --fp-rate 0.01 --type dleft" "--capacity 1000 --fp-rate 0.01 --grow"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$FB" create r$i $args >/dev/null || { fail "create $args"; continue; }
	"$FB" load r$i "$T_TMP/l200.txt" >/dev/null
	roundtrip "create $args" r$i
	# A list longer than the capacity, then a shorter one.
	"$FB" load r$i "$T_TMP/l5k.txt" --replace >/dev/null 2>&1 &&
		roundtrip "create $args, 5000 rules loaded" r$i
	"$FB" load r$i "$T_TMP/l200.txt" --replace >/dev/null 2>&1 &&
		roundtrip "create $args, 5000 then 200 rules loaded" r$i
done
"$FB" create fo --capacity 1000000 --fp-rate 0.01 >/dev/null
"$FB" load fo "$T_TMP/l5k.txt" >/dev/null
"$FB" fold fo >/dev/null && "$FB" fold fo >/dev/null
roundtrip "a folded filter" fo
"$FB" merge r8 r8 --into mg >/dev/null
roundtrip "a merge of a confirming filter" mg

# merge --into a new filter sizes a confirming filter's exact sets for its
# rules by raising its capacity to them (an older build's merge did so
# whenever the rules outnumbered the capacity), past what its bits hold at
# its rate; a del since leaves fewer flows than that. Such an export, valid
# and made by a build, was refused ('capacity 80000: more than 2064384
# bits with k=16 hold at fp-rate 1e-09'): it imports sized for what its
# geometry holds (its exact sets hold every rule still), and says so.
"$FB" create ca --capacity 20000 --fp-rate 0.000000001 --counting --confirm exact >/dev/null
"$FB" export ca "$T_TMP/ca.fbx" --plain >/dev/null
"$FB" import "$T_TMP/ca.fbx" cb >/dev/null
python3 -c 'for i in range(80000): print("udp 198.51.%d.%d:%d 203.0.113.1:53" % (100 + i // 40000, i % 250, 1024 + i // 250 % 160))' >"$T_TMP/l80k.txt"
head -40000 "$T_TMP/l80k.txt" >"$T_TMP/ca.txt"
tail -40000 "$T_TMP/l80k.txt" >"$T_TMP/cb.txt"
"$FB" load ca "$T_TMP/ca.txt" >/dev/null 2>&1 && "$FB" load cb "$T_TMP/cb.txt" >/dev/null 2>&1 &&
	"$FB" merge ca cb --into cm >/dev/null && "$FB" del cm -f "$T_TMP/cb.txt" >/dev/null ||
	fail "a merge of confirming filters past their bits: not made"
check_eq "... its capacity raised past its bits (80000), 40000 flows left" \
	"$("$FB" -j info cm | t_json '[d["capacity"], d["flows"]]')" "[80000, 40000]"
"$FB" export cm "$T_TMP/cm.fbx" >/dev/null
"$FB" import "$T_TMP/cm.fbx" cm_back >"$T_TMP/out" 2>"$T_TMP/err"
check_eq "... its export imports" "$?" 0
grep -q "note: .*cm.fbx: capacity 80000 is more than 2064384 bits with k=16 hold at fp-rate 1e-09 (a merge sized its exact sets for the rules it had): imported sized for 40000 flows" \
	"$T_TMP/err" && pass "... saying the capacity it takes" || fail "... said: $(cat "$T_TMP/err")"
check_eq "... sized for its 40000 flows (its bits hold 26229 at 1e-09)" \
	"$("$FB" -j info cm_back | t_json 'd["capacity"]')" 40000
check_eq "... every rule confirmed, none deleted back" \
	"$("$FB" -j query cm_back -f "$T_TMP/l80k.txt" | t_json '[d["yes"], d["maybe"]]')" "[40000, 0]"

# merge --into a new filter keeps a confirming filter sized by bits so,
# with its exact sets as large as the source's.
"$FB" merge cf "$T_TMP/cf.fbx" --into cfm >/dev/null
check_eq "merge of a filter sized by bits: capacity 0, exact sets as the source's" \
	"$("$FB" -j info cfm | t_json '[d["capacity"], d["kernel_memory"]["exact_sets"] >= 4000000]')" \
	"$("$FB" -j info cf | t_json '[d["capacity"], True]')"

# A confirming filter sized by bits whose exact sets a replace made larger
# than its bits size them for (300,000 rules; 2 Mbit make sets of 258,048):
# its export imports (compressed, plain, through a pipe) with every rule.
python3 -c 'for i in range(300000):
    print("udp 198.51.%d.%d:%d 203.0.113.%d:%d" % (100 + (i >> 16) % 4, (i >> 8) & 255, 1024 + (i & 1023), i & 255, 1 + (i >> 8)))' >"$T_TMP/l300k.txt"
"$FB" create rb --bits $((1 << 20)) --hashes 4 --confirm exact >/dev/null
check "load --replace 300,000 rules into a 2 Mbit confirming filter" \
	"$FB" load rb "$T_TMP/l300k.txt" --replace
"$FB" export rb "$T_TMP/rb.fbz" >/dev/null
"$FB" export rb "$T_TMP/rb.fbx" --plain >/dev/null
for src in "$T_TMP/rb.fbz" "$T_TMP/rb.fbx" -; do
	if [ "$src" == - ]; then
		"$FB" import - rb_back <"$T_TMP/rb.fbz" >/dev/null 2>"$T_TMP/err"
	else
		"$FB" import "$src" rb_back >/dev/null 2>"$T_TMP/err"
	fi
	check_eq "its export imports (${src##*/}): $(head -c 150 "$T_TMP/err")" \
		"$("$FB" -j info rb_back 2>/dev/null | t_json '[d["digest"], d["capacity"]]')" \
		"$("$FB" -j info rb | t_json '[d["digest"], d["capacity"]]')"
	"$FB" destroy rb_back >/dev/null 2>&1
done

t_end
