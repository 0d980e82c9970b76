#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# --confirm exact, end to end through the real program (replay): with a
# filter so small that every probe says "maybe", only packets whose flow or
# source is really in the list may match; the rest would all be false
# positives. Also: replace keeps confirming the new list only, deletes of
# non-members are refused, and the ip link filter refuses confirmation.
source "$(dirname "$0")/../lib/lib.sh"
t_begin confirm
t_traps

[ -d "$PCAPS" ] || fail "captures: $PCAPS not found (../shared/pcaps beside the checkout, or PCAPS=DIR)"
caps=("$PCAPS"/udp-*.pcap "$PCAPS"/tcp*.pcap "$PCAPS"/icmp*.pcap)
# Flows the program sees in these captures (from a plain replay).
"$FB" create probe --capacity 1000 --fp-rate 0.01 >/dev/null
"$FB" -j replay probe "${caps[@]}" --explain >"$T_TMP/all.json" 2>/dev/null
"$FB" destroy probe >/dev/null
python3 - "$T_TMP/all.json" "$T_TMP" <<'PY'
import json, sys, random
flows = sorted({d["flow"] for d in map(json.loads, open(sys.argv[1])) if d.get("parse") == "ok"})
random.seed(3)
pick = random.sample(flows, min(10, len(flows)))
srcs = sorted({f.split()[1].rsplit(":", 1)[0].strip("[]") for f in flows if "." in f.split()[1]})
src = random.choice(srcs)
# 8,000 flows no capture has (documentation addresses, port 9) fill the
# filter folded down to 63 blocks (32,256 bits, k = 1) to ~22%: many
# probes then say "maybe".
junk = ["udp 203.0.113.%d:%d 198.51.100.%d:9" % (i % 250, 1024 + i, i % 200) for i in range(8000)]
open(sys.argv[2] + "/list_a.txt", "w").write("\n".join(pick[:5] + junk) + "\n")
open(sys.argv[2] + "/list_b.txt", "w").write("\n".join(pick[5:] + junk) + "\nsrc %s\n" % src)
PY

# expect FILE LIST: the keyed packets that must match under LIST, and their count
expect() {
	python3 - "$1" "$2" <<'PY'
import json, sys, ipaddress
rules = [l.split() for l in open(sys.argv[2]) if l.strip()]
flows = {" ".join(r) for r in rules if r[0] != "src"}
srcs = [ipaddress.ip_address(r[1]) for r in rules if r[0] == "src"]
n = 0
for d in map(json.loads, open(sys.argv[1])):
    if d.get("parse") != "ok":
        continue
    s = d["flow"].split()[1].rsplit(":", 1)[0].strip("[]") if ":" in d["flow"].split()[1] and "." in d["flow"].split()[1] else d["flow"].split()[1].strip("[]")
    try:
        sa = ipaddress.ip_address(s)
    except ValueError:
        sa = None
    n += d["flow"] in flows or sa in srcs
print(n)
PY
}
jget() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }
matched() { python3 -c 'import json,sys; print(sum(json.loads(l)["matched"] for l in sys.stdin))'; }

check "create a tiny confirming filter" "$FB" create cf --bits 512 --hashes 1 --confirm exact
check "create the same without confirmation" "$FB" create plain --bits 512 --hashes 1
# A filter takes at least one 256 KiB chunk: fold both down to an odd
# number of blocks (63), small enough to saturate.
for f in cf plain; do while "$FB" fold $f >/dev/null 2>&1; do :; done; done
check_eq "both folded to 63 blocks" "$("$FB" -j info cf | jget '["blocks"]') $("$FB" -j info plain | jget '["blocks"]')" "63 63"
check "load list A (confirming)" "$FB" load cf "$T_TMP/list_a.txt"
check "load list A (plain)" "$FB" load plain "$T_TMP/list_a.txt"
keyed=$(python3 -c 'import json,sys; print(sum(json.loads(l).get("parse")=="ok" for l in open(sys.argv[1])))' "$T_TMP/all.json")
want=$(expect "$T_TMP/all.json" "$T_TMP/list_a.txt")
got=$("$FB" -j replay cf "${caps[@]}" | matched)
plain=$("$FB" -j replay plain "${caps[@]}" | matched)
check_eq "confirming: exactly the listed flows match ($want of $keyed keyed packets)" "$got" "$want"
[ "$plain" -gt "$want" ] && pass "plain saturated filter matches more ($plain): the false positives confirmation removed" ||
	fail "plain filter matched only $plain (want > $want): the test shows nothing"

check "replace with list B (flows and a source)" "$FB" load cf "$T_TMP/list_b.txt" --replace
want=$(expect "$T_TMP/all.json" "$T_TMP/list_b.txt")
got=$("$FB" -j replay cf "${caps[@]}" | matched)
check_eq "after replace: exactly list B matches ($want)" "$got" "$want"

check "counting confirming filter" "$FB" create cc --bits 512 --hashes 1 --counting --confirm exact
check "add to it" "$FB" add cc src 198.51.100.0/24 udp 198.51.100.1:53 203.0.113.7:4000
check_fails "delete of a non-member refused" "$FB" del cc src 203.0.113.5
check "delete of a member" "$FB" del cc src 198.51.100.0/24
check_fails "second delete refused" "$FB" del cc src 198.51.100.0/24
# The exact sets travel with an export, IPv6 rules included (their keys carry
# the family, which import checks), and the imported filter confirms.
check "IPv6 rules in a confirming filter" "$FB" add cc src 2001:db8:7::/48 tcp [2001:db8::1]:443 [2001:db8::2]:51000
check "export it" "$FB" export cc "$T_TMP/cc.fbx" --plain
check "import it" "$FB" import "$T_TMP/cc.fbx" cc2
check_eq "imported: the IPv6 prefix rule confirmed" "$("$FB" -j query cc2 src 2001:db8:7::9 | python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["result"])' 2>&1)" "yes"
check_fails "imported: deleting a non-member refused (it confirms)" "$FB" del cc2 src 2001:db8:8::/48
check "imported: deleting the IPv6 5-tuple" "$FB" del cc2 tcp [2001:db8::1]:443 [2001:db8::2]:51000
python3 - "$T_TMP/cc.fbx" "$T_TMP/v1.fbx" <<'PY'
import struct, sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
b[8:12] = struct.pack("<I", 1)          # a version-1 file, CRC made valid
b[-4:] = struct.pack("<I", zlib.crc32(bytes(b[:-4])))
open(sys.argv[2], "wb").write(b)
PY
check_fails "a version-1 export is refused" "$FB" import "$T_TMP/v1.fbx" cc3
"$FB" import "$T_TMP/v1.fbx" cc3 2>&1 | grep -q "unsupported format version" && pass "it says why" || fail "no reason for refusing version 1"
# A batch the exact sets cannot take (they hold max(capacity, 65536)
# rules) is refused whole: none of it stays in the sets, so they are not
# left full of rules the filter does not hold.
python3 -c '
for i in range(65537): print("udp 198.51.100.%d:%d 203.0.113.1:53" % (i & 255, 1024 + (i >> 8)))' >"$T_TMP/over.txt"
check "create a confirming filter for 1000" "$FB" create ef --capacity 1000 --fp-rate 0.01 --confirm exact
t_refused 1 "65537 flows: more than its exact sets hold" "exact sets of 'ef' are full" "$FB" add ef -f "$T_TMP/over.txt"
check "then one new flow is added (the refused batch left nothing in the sets)" \
	"$FB" add ef udp 203.0.113.9:1000 198.51.100.9:2000
check_eq "... and is the only one" "$("$FB" -j info ef | python3 -c 'import json,sys; print(json.load(sys.stdin)["flows"])')" 1
head -65535 "$T_TMP/over.txt" >"$T_TMP/fits.txt"
check "65535 more fit beside it" "$FB" add ef -f "$T_TMP/fits.txt"
# A flow deleted twice in one batch but held once: refused whole, naming
# the second copy's line, even when each of its counters is shared with
# other flows (the counters alone cannot tell then, and the second copy
# would come out of those flows': false negatives).
python3 -c '
for i in range(20000): print("udp 198.51.100.%d:%d 203.0.113.%d:53" % (i % 250, 1024 + i // 250, i % 200))' >"$T_TMP/f20k.txt"
check "a dense counting, confirming filter" \
	"$FB" create ce --capacity 20000 --fp-rate 0.3 --compact --counting --counter-bits 8 --confirm exact
check "20000 flows into it" "$FB" add ce -f "$T_TMP/f20k.txt"
X=$("$FB" count ce -f "$T_TMP/f20k.txt" | awk '$1 >= 2 { print $2, $3, $4; exit }')
check_eq "one flow added once whose counters all count 2 or more" "$([ -n "$X" ] && echo yes)" yes
# shellcheck disable=SC2086 # X: the FLOW's words, twice
t_refused 1 "the flow deleted twice in one batch" \
	"argument 4: '$X' is deleted more often than filter 'ce' holds it (1 in its exact set)" \
	"$FB" del ce $X $X
check_eq "... and every flow still matches" "$("$FB" query ce -f "$T_TMP/f20k.txt" | tail -1)" "20000 of 20000 yes"
check "... and the filter is clean" "$FB" check ce
# A file names it once however often it is written, as load takes it.
printf '%s\n%s\n' "$X" "$X" >"$T_TMP/twice.txt"
check "deleted once, it goes (a file naming it twice)" "$FB" del ce -f "$T_TMP/twice.txt"
grep -vxF "$X" "$T_TMP/f20k.txt" >"$T_TMP/others.txt"
check_eq "... the others still match" "$("$FB" query ce -f "$T_TMP/others.txt" | tail -1)" "19999 of 19999 yes"
# After load --replace, the exact sets are made as large as create makes
# them (twice the capacity), not for the replacing list alone: the filter
# still takes flows up to its capacity.
check "a confirming filter for 100000" "$FB" create cx --capacity 100000 --fp-rate 0.01 --confirm exact
python3 -c '
for i in range(70000): print("udp 198.51.100.%d:%d 203.0.113.9:53" % (i & 255, 1024 + (i >> 8)))' >"$T_TMP/f70k.txt"
head -10 "$T_TMP/f20k.txt" >"$T_TMP/ten.txt"
check "replaced by a list of 10 rules" "$FB" load cx "$T_TMP/ten.txt" --replace
check "then 70000 flows more" "$FB" add cx -f "$T_TMP/f70k.txt"
# Loading is batched: a list into an empty exact set (a new filter's, or
# the fresh one load --replace fills) is counted in user space and written
# a batch at a time, with no lookups: a handful of bpf calls, not three per
# rule (strace counts them, as memory.sh does for metrics). The counts and
# tries are whole: every rule matches, check counts each once.
python3 -c '
for i in range(30000): print("udp 198.51.100.%d:%d 203.0.113.%d:53" % (i & 255, 1024 + (i >> 8), i % 200))
for i in range(15000): print("src 2001:db8:%x:%x::/64" % (i >> 8, i & 255))
for i in range(15000): print("dst 2001:db8:%x::/48" % (0x8000 + i))' >"$T_TMP/f60k.txt"
check "a confirming filter for 60000" "$FB" create cb --capacity 60000 --fp-rate 0.01 --confirm exact
if command -v strace >/dev/null; then
	for opt in "" --replace; do
		# shellcheck disable=SC2086 # opt: no word, or one
		strace -f -qq -o "$T_TMP/st" -e trace=bpf "$FB" load cb "$T_TMP/f60k.txt" $opt >/dev/null 2>&1
		n=$(grep -c '^[0-9]* *bpf(' "$T_TMP/st")
		check_eq "load${opt:+ $opt} of 60000 rules (20000 prefixes) into an empty exact set: fewer than 600 bpf calls ($n)" \
			"$((n > 0 && n < 600))" 1
	done
else
	skip "bpf calls of load: strace is missing (make deps installs it)"
	"$FB" load cb "$T_TMP/f60k.txt" --replace >/dev/null
fi
check_eq "... every rule matches" "$("$FB" query cb -f "$T_TMP/f60k.txt" | tail -1)" "60000 of 60000 yes"
"$FB" -j check cb >"$T_TMP/chk"
check_eq "... check: clean, 60000 rules counted once each" \
	"$(t_json '"%s %s %s" % (d["clean"], d["exact_rules"], d["exact_copies"])' "$T_TMP/chk")" "True 60000 60000"
check "... a rule added again" "$FB" add cb udp 198.51.100.0:1024 203.0.113.0:53
"$FB" -j check cb >"$T_TMP/chk"
check_eq "... is counted twice" "$(t_json '"%s %s" % (d["exact_rules"], d["exact_copies"])' "$T_TMP/chk")" "60000 60001"
# Exported, its export into a new filter (import), and the two merged
# (merge --into): the exact sets read and written in batches too, every
# count as it was (the merge's the sum of both).
if command -v strace >/dev/null; then
	strace -f -qq -o "$T_TMP/st" -e trace=bpf "$FB" export cb "$T_TMP/cb.fbx" >/dev/null 2>&1
	n=$(grep -c '^[0-9]* *bpf(' "$T_TMP/st")
	check_eq "... exported: its 60000 rules read in fewer than 600 bpf calls ($n)" "$((n > 0 && n < 600))" 1
else
	check "... exported" "$FB" export cb "$T_TMP/cb.fbx"
fi
for v in "import $T_TMP/cb.fbx cbi" "merge cb cbi --into cbm"; do
	if command -v strace >/dev/null; then
		# shellcheck disable=SC2086 # the verb's words
		strace -f -qq -o "$T_TMP/st" -e trace=bpf "$FB" $v >/dev/null 2>&1
		n=$(grep -c '^[0-9]* *bpf(' "$T_TMP/st")
		check_eq "${v%% *} of its 60000 rules: fewer than 600 bpf calls ($n)" "$((n > 0 && n < 600))" 1
	else
		# shellcheck disable=SC2086
		"$FB" $v >/dev/null || fail "${v%% *}"
	fi
	t=${v##* }
	"$FB" -j check "$t" >"$T_TMP/chk"
	want="True 60000 60001"
	[ "$t" = cbm ] && want="True 60000 120002"
	check_eq "... $t: clean, the counts as they were" \
		"$(t_json '"%s %s %s" % (d["clean"], d["exact_rules"], d["exact_copies"])' "$T_TMP/chk")" "$want"
	check_eq "... $t: every rule confirmed" "$("$FB" query "$t" -f "$T_TMP/f60k.txt" | tail -1)" "60000 of 60000 yes"
done
# A kernel without batches for a map (the trie's came later than the hash
# map's; 524 is its ENOTSUPP, returned before the batch runs): the rules
# go in one at a time instead. strace makes the first trie batch fail so.
if command -v strace >/dev/null; then
	check "a confirming filter for 1000 (a kernel without the trie's batches)" \
		"$FB" create ct --capacity 1000 --fp-rate 0.01 --confirm exact
	printf 'src 198.51.100.0/24\nsrc 2001:db8:7::/48\ndst 203.0.113.0/25\n' >"$T_TMP/ct.txt"
	# Which bpf call that is: the second batch of the same add, traced on
	# a filter made alike (the counts' batch comes first).
	"$FB" create ct2 --capacity 1000 --fp-rate 0.01 --confirm exact >/dev/null
	strace -f -qq -o "$T_TMP/st" -e trace=bpf "$FB" add ct2 -f "$T_TMP/ct.txt" >/dev/null 2>&1
	"$FB" destroy ct2 >/dev/null
	at=$(grep 'bpf(' "$T_TMP/st" | grep -n 'BPF_MAP_UPDATE_BATCH' | sed -n 2p | cut -d: -f1)
	strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:error=524:when="${at:-1}" \
		"$FB" add ct -f "$T_TMP/ct.txt" >/dev/null 2>"$T_TMP/err"
	rc=$?
	check_eq "... the add succeeds, the trie written a rule at a time ($(head -c 150 "$T_TMP/err"))" \
		"$rc ${at:+found}" "0 found"
	check_eq "... every rule matches" "$("$FB" query ct -f "$T_TMP/ct.txt" | tail -1)" "3 of 3 yes"
	check "... check is clean" "$FB" check ct
	# Read back so too: each walk of a set (check's, export's, apply's
	# compare) whose first batch the kernel refuses reads it a key at a
	# time. Each lookup batch of an export refused in turn: the same file.
	printf 'udp 198.51.100.1:53 203.0.113.2:4000\n' >>"$T_TMP/ct.txt"
	"$FB" load ct "$T_TMP/ct.txt" --replace >/dev/null
	"$FB" export ct "$T_TMP/ct.fbx" >/dev/null
	strace -f -qq -o "$T_TMP/st" -e trace=bpf "$FB" export ct "$T_TMP/ct2.fbx" >/dev/null 2>&1
	bad=
	for at in $(grep 'bpf(' "$T_TMP/st" | grep -n 'BPF_MAP_LOOKUP_BATCH' | cut -d: -f1); do
		strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:error=524:when="$at" \
			"$FB" export ct "$T_TMP/ct2.fbx" >/dev/null 2>"$T_TMP/err" &&
			cmp -s "$T_TMP/ct.fbx" "$T_TMP/ct2.fbx" || bad="$bad $at:$(head -c 100 "$T_TMP/err")"
	done
	check_eq "... exported with each lookup batch refused in turn: the same file" "${at:+found}$bad" found
	strace -f -qq -o "$T_TMP/st" -e trace=bpf "$FB" check ct >/dev/null 2>&1
	at=$(grep 'bpf(' "$T_TMP/st" | grep -n 'BPF_MAP_LOOKUP_BATCH' | sed -n 2p | cut -d: -f1)
	strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:error=524:when="${at:-1}" \
		"$FB" check ct >/dev/null 2>"$T_TMP/err"
	rc=$?
	check_eq "... check with a trie's batch refused: clean ($(head -c 100 "$T_TMP/err"))" "$rc ${at:+found}" "0 found"
	"$FB" destroy ct >/dev/null || fail "destroy ct"
else
	skip "a kernel without the trie's batches: strace is missing (make deps installs it)"
fi
# A list the exact sets cannot hold, into an empty set: refused whole, the
# batches already written taken out again.
check "a confirming filter for 1000 (exact sets of 65536 rules)" "$FB" create cs --capacity 1000 --fp-rate 0.01 --confirm exact
cat "$T_TMP/f60k.txt" "$T_TMP/f70k.txt" >"$T_TMP/f130k.txt"
t_refused 1 "130000 rules into its empty exact sets: full" "exact sets of 'cs' are full" "$FB" load cs "$T_TMP/f130k.txt"
"$FB" -j check cs >"$T_TMP/chk"
check_eq "... nothing of them left: check clean, no rule" \
	"$(t_json '"%s %s" % (d["clean"], d["exact_rules"])' "$T_TMP/chk")" "True 0"
check "... 60000 of them then load" "$FB" load cs "$T_TMP/f60k.txt"
check_fails "no confirmation for the ip link filter" "$FB" create default --capacity 10 --fp-rate 0.1 --confirm exact
check_fails "bad --confirm value" "$FB" create x --capacity 10 --fp-rate 0.1 --confirm fuzzy
for n in cf plain cc cc2 ef ce cx cb cbi cbm cs; do "$FB" destroy "$n" >/dev/null || fail "destroy $n"; done
t_end
