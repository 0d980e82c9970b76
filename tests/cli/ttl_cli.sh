#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Rules with a lifetime through the CLI (no traffic: the data path's side
# is tests/program/test_ttl.c and tests/e2e/guard.sh): add/load --ttl,
# durations, info (generations, ends, fill; -j), query/count/del over
# generations, load --replace carrying them, load --replace --ttl replacing
# them and keeping the permanent rules, export/import carrying them (and
# dropping those ended), the set algebra refusing such files, check and
# --repair (stale generation slots, ended generations), metrics, refusals
# (filter types, --confirm exact), and every replace/import result
# checked through the real program (replay).
source "$(dirname "$0")/../lib/lib.sh"
t_begin ttl_cli
cleanup() { t_cleanup_filters; }
t_traps

gens() { "$FB" -j info "$1" | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["generations"]))'; }
maybe() { "$FB" query "$@" | tail -1 | cut -d' ' -f1; }
# replay_drops NAME PCAP: packets the real program drops
replay_drops() { "$FB" -j replay "$1" "$2" | $PY -c 'import json,sys; print(json.load(sys.stdin)["drop"])'; }

# One UDP packet from each of 198.51.100.1-4 to 203.0.113.1.
$PY - "$T_TMP/s.pcap" <<'PY'
import sys
from pkt import ether, ipv4_udp, pcap_write
pcap_write(sys.argv[1], (ether(0x0800, b"\x02" * 6, b"\x04" * 6) +
                         ipv4_udp(bytes([198, 51, 100, i]), 1000, bytes([203, 0, 113, 1]), 53, b"ping")
                         for i in range(1, 5)))
PY
check "replay sees 4 packets" test "$("$FB" -j replay x "$T_TMP/s.pcap" 2>&1; true)"

# --- durations and refusals
"$FB" create p --capacity 1000 --fp-rate 0.0001 >/dev/null
for d in 2 2s 1.5s 500ms 10m 1h 1d; do
	"$FB" add p src 198.51.100.9 --ttl "$d" >/dev/null 2>&1
	check_eq "--ttl $d accepted" "$?" 0
done
for d in 0 -1s 2x s 1e9 31d 5ms 0x10s 0x1p3; do
	"$FB" add p src 198.51.100.9 --ttl "$d" >/dev/null 2>&1
	check_eq "--ttl $d: usage error" "$?" 2
done
"$FB" add p src 198.51.100.9 --ttl >/dev/null 2>&1
check_eq "--ttl without a value: usage error" "$?" 2
check "--ttl=2s form" "$FB" add p src 198.51.100.9 --ttl=2s
check "--ttl before the flows" "$FB" add p --ttl 2s src 198.51.100.9
# A lifetime shorter than the command is said, not passed over in silence:
# every bpf(2) call made 20 ms slower (strace), so the generation a 10 ms
# rule joins ends before the command does, whatever the machine's speed;
# a lifetime that outlasts the command gets no warning.
if command -v strace >/dev/null; then
	strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:delay_exit=20000 \
		"$FB" add p src 198.51.100.9 --ttl 10ms >"$T_TMP/o" 2>"$T_TMP/e"
	check_eq "add --ttl 10ms, a slow command: exit 0" "$?" 0
	check "... a generation that ended before the command: warned" grep -q "ends in -" "$T_TMP/o"
	check "... the warning says the rules may never have matched" grep -q "may never have matched" "$T_TMP/e"
else
	skip "no strace: the lifetime-shorter-than-the-command warning"
fi
"$FB" add p src 198.51.100.9 --ttl 2s >"$T_TMP/o" 2>"$T_TMP/e"
check_eq "add --ttl 2s: no warning" "$(cat "$T_TMP/e")" ""
"$FB" destroy p >/dev/null
"$FB" create cf --capacity 100 --fp-rate 0.01 --confirm exact >/dev/null
check_fails "--confirm exact filter refuses --ttl" "$FB" add cf src 198.51.100.9 --ttl 2s
"$FB" create dl --type dleft --capacity 100 --fp-rate 0.01 >/dev/null
check_fails "dleft filter refuses --ttl" "$FB" load dl /dev/null --ttl 2s
"$FB" destroy cf >/dev/null
"$FB" destroy dl >/dev/null
# A lifetime out of range states the range as it is written (rules.md:
# 10 ms to 30 days), not in seconds with an exponent (2.592e+06s).
t_refused 2 "--ttl 5ms: a usage error stating 10ms to 30d" "from 10ms to 30d)" \
	"$FB" add p src 198.51.100.9 --ttl 5ms
t_refused 2 "--ttl 31d: the same range" "bad duration '31d' for --ttl .*from 10ms to 30d)" \
	"$FB" load p /dev/null --ttl 31d
t_refused 2 "guard --interval 1ms: 50ms to 1d" "from 50ms to 1d)" \
	"$FB" guard p --into p --pps 1 --ttl 1m --interval 1ms

# --- a rule shape with a lifetime: matched by the program inside its
# generation, carried by export and import
"$FB" create sh --capacity 1000 --fp-rate 0.0001 >/dev/null
check "add --ttl a rule shape" "$FB" add sh --ttl 1h udp src 198.51.100.3 dport 53
check_eq "the program drops its one packet" "$(replay_drops sh "$T_TMP/s.pcap")" 1
check "export a shape with a lifetime" "$FB" export sh "$T_TMP/sh.fbx"
check "... imports" "$FB" import "$T_TMP/sh.fbx" shi
check_eq "... and the imported filter drops it too" "$(replay_drops shi "$T_TMP/s.pcap")" 1
"$FB" destroy sh >/dev/null
"$FB" destroy shi >/dev/null

# --- a generation is sized to its rules, classic and blocked layouts: one
# rule makes a generation far smaller than the filter, which the program
# still matches through (and only its rule).
for lay in blocked classic; do
	"$FB" create sz --capacity 100000 --fp-rate 0.001 --layout $lay >/dev/null
	"$FB" add sz --ttl 1h udp src 198.51.100.3 >/dev/null
	bits=$("$FB" -j info sz | $PY -c 'import json,sys; d=json.load(sys.stdin); g=d["generations"][0]; print(g["bits"], d["bits"], int(g["capacity"]))')
	read -r gbits fbits gcap <<<"$bits"
	check "$lay: one rule with a lifetime: a generation of 64 blocks, not the filter's size ($bits)" \
		test "$gbits" = 32768 -a "$fbits" -gt 1000000
	check "$lay: ... room for hundreds of rules in it (capacity $gcap)" test "$gcap" -gt 100 -a "$gcap" -lt 5000
	check "$lay: info shows the generation's bits" bash -c "'$FB' info sz | grep -q 'flows 1 of [0-9]*, 32768 bits, fill ratio'"
	check_eq "$lay: the program drops its one packet, no other" "$(replay_drops sz "$T_TMP/s.pcap")" 1
	"$FB" destroy sz >/dev/null
done

# A short list's filter probes 4 bits (k = 4); its generations, at their
# stricter rate, take 8 where that needs fewer bits: the program reads
# each generation's own k.
"$FB" create k4 --capacity 2508 --fp-rate 0.01 >/dev/null
"$FB" add k4 --ttl 1h udp src 198.51.100.3 >/dev/null
check_eq "a k = 4 filter's generation has k = 8" \
	"$("$FB" -j info k4 | $PY -c 'import json,sys; d=json.load(sys.stdin); print(d["hashes"], d["generations"][0]["hashes"])')" "4 8"
check_eq "... and the program drops its one packet through it" "$(replay_drops k4 "$T_TMP/s.pcap")" 1
"$FB" destroy k4 >/dev/null

# The lifetime as given, every digit (not 5.4e+03).
"$FB" create tl --capacity 1000 --fp-rate 0.01 >/dev/null
out=$("$FB" add tl src 198.51.100.9 --ttl 1.5h)
check "add --ttl 1.5h says 'for 5400 s'" bash -c "echo '$out' | grep -q 'for 5400 s: generation 0, '"
"$FB" destroy tl >/dev/null

# --- a counting filter: permanent .1, .2 for 2.5 s, .3 for 60 s
# What needs .2 alive is checked by `lifetimes TTL` (.2's lifetime), and
# its verdicts count only if it ended within that lifetime (timed from
# before .2's add): on a machine so loaded that it did not, they say
# nothing, and the filter is made again with a lifetime twice as long (up
# to 20 s), rather than failing or passing on the clock.
lifetimes() {
	local ttl=$1 out now
	"$FB" destroy c >/dev/null 2>&1
	"$FB" create c --capacity 1000 --fp-rate 0.0001 --counting >/dev/null
	"$FB" add c src 198.51.100.1 >/dev/null
	T2=$(date +%s%N)
	out=$("$FB" add c src 198.51.100.2 --ttl ${ttl}s)
	check "add --ttl says where and when it ends" $PY -c '
import re, sys
m = re.search(r"for (\S+) s: generation 0, which ends in (\S+) s", sys.argv[1])
assert m and float(m.group(1)) == float(sys.argv[2]) and 0 < float(m.group(2)) <= 1.25 * float(sys.argv[2])' "$out" "$ttl"
	printf 'src 198.51.100.3\n' >"$T_TMP/l3"
	T3=$(date +%s%N)
	check "load --ttl" "$FB" load c "$T_TMP/l3" --ttl 60s
	check_eq "info -j: two generations" "$(gens c)" 2
	# Each ends at least its lifetime after its command started (the
	# time gone since: at most now - T), and at most 1/4 of it later.
	"$FB" -j info c >"$T_TMP/info.json"
	now=$(date +%s%N)
	$PY -c '
import json, sys
g = json.load(open(sys.argv[1]))["generations"]
ttl, e2, e3 = float(sys.argv[2]), int(sys.argv[3]) / 1e9, int(sys.argv[4]) / 1e9
assert [x["flows"] for x in g] == [1, 1], g
assert ttl - e2 <= g[0]["ends_in"] <= 1.25 * ttl and 60 - e3 <= g[1]["ends_in"] <= 75, (g, e2, e3)
assert all(0 < x["fill_ratio"] < 0.01 and not x["expired"] for x in g), g' \
		"$T_TMP/info.json" "$ttl" $((now - T2)) $((now - T3)) &&
		pass "info -j: generations by end, flows, fill" || fail "info -j generations"
	check "info shows the generations" bash -c "'$FB' info c | grep -q 'rules with a lifetime: 2 generations'"
	# What a packet meets with them: the permanent rules' probe and one for
	# each generation's source rules, the rates combined (not 1 - 1 = 0).
	"$FB" -j info c | $PY -c '
import json, sys
d = json.load(sys.stdin)
w = d["with_generations"]
assert d["probes_per_packet"] == 1 and w["live_generations"] == 2 and w["probes_per_packet"] == 3, w
assert w["fp_rate_per_packet"] > d["fp_rate_per_packet"] > 0, (w, d["fp_rate_per_packet"])' &&
		pass "info -j: probes and rate per packet with the live generations" ||
		fail "info -j: with_generations"
	check "info says what a packet meets with them" bash -c "'$FB' info c | grep -q 'with its 2 live generations: 3 probes per packet, expected false-positive rate per packet [1-9]'"
	check_eq "query: all three" "$(maybe c src 198.51.100.1 src 198.51.100.2 src 198.51.100.3)" 3
	check_eq "count adds the generations' copies" "$("$FB" count c src 198.51.100.3 | cut -d' ' -f1)" 1
	check_eq "the program drops all three" "$(replay_drops c "$T_TMP/s.pcap")" 3
	TOOK=$((($(date +%s%N) - T2) / 1000000))
}
for ttl in 2.5 5 10 20; do
	saved="$T_PASS $T_FAIL $T_SKIP"
	lifetimes $ttl >"$T_TMP/lifetimes.out"
	[ "$TOOK" -ge "$(awk -v t="$ttl" 'BEGIN { print t * 1000 }')" ] && [ "$ttl" != 20 ] || break
	read -r T_PASS T_FAIL T_SKIP <<<"$saved"
	echo "note: the checks of a live .2 took $TOOK ms, more than its lifetime ($ttl s): again, twice as long"
done
cat "$T_TMP/lifetimes.out"
check "export with lifetimes" "$FB" export c "$T_TMP/c.fbx"
check "export --plain with lifetimes" "$FB" export c "$T_TMP/cp.fbx" --plain
check_fails "merge refuses a file with lifetimes" "$FB" merge c "$T_TMP/c.fbx" --into m
# A filter with live rules with a lifetime as a source: its copy would
# leave them out (the result and card missing them without a word), so
# merge, intersect and card refuse it; merged into, it keeps them. gA and
# gB share their key (imports of one export).
"$FB" create g0 --bits 262144 --hashes 7 >/dev/null && "$FB" export g0 "$T_TMP/g0.fbx" >/dev/null
"$FB" import "$T_TMP/g0.fbx" gA >/dev/null && "$FB" import "$T_TMP/g0.fbx" gB >/dev/null
check "gA: a rule with a lifetime" "$FB" add gA src 198.51.100.0/24 --ttl 1h
check "gB: a permanent rule" "$FB" add gB udp 203.0.113.5:1 203.0.113.6:2
for v in merge intersect; do
	t_refused 1 "$v refuses a source filter with lifetimes" \
		"'gA' holds rules with a lifetime, which merge and intersect leave out" \
		"$FB" $v gA gB --into gC
done
check_fails "... nothing made" "$FB" info gC
t_refused 1 "card refuses it too" "'gA' holds rules with a lifetime, which card leaves out" "$FB" card gA
check "merged into, it keeps them" "$FB" merge gB gA --into gA
check_eq "... both rules in gA" "$(maybe gA src 198.51.100.9 udp 203.0.113.5:1 203.0.113.6:2)" 2
"$PY" -c 'import sys, time; time.sleep(max(0, int(sys.argv[1]) / 1e9 + 1.28 * float(sys.argv[2]) - time.time()))' "$T2" "$ttl"
check_eq "after $ttl s + 1/4: .2 no longer matches (query)" "$(maybe c src 198.51.100.2)" 0
check_eq "... nor in the program" "$(replay_drops c "$T_TMP/s.pcap")" 2
"$FB" check c >"$T_TMP/chk"
check "check: clean, and says a generation ended" grep -q "1 generation of rules with a lifetime ended" "$T_TMP/chk"
check "check --repair reclaims it" "$FB" check c --repair
check_eq "... one generation left" "$(gens c)" 1

# load --replace: the permanent rules replaced, the lifetimes carried.
printf 'src 198.51.100.4\n' >"$T_TMP/l4"
check "load --replace" "$FB" load c "$T_TMP/l4" --replace
check_eq "replaced: .1 gone, .4 in, .3 (60 s) carried" "$(maybe c src 198.51.100.1 src 198.51.100.4 src 198.51.100.3)" 2
check_eq "... in the program: .3 and .4 dropped" "$(replay_drops c "$T_TMP/s.pcap")" 2
no_stale() { "$FB" -j check "$1" | grep -q '"stale_generations":0'; }
check "... clean, no stale slot" no_stale c
# load --replace --ttl: the rules with a lifetime replaced, .4 kept.
printf 'src 198.51.100.2\n' >"$T_TMP/l2"
check "load --replace --ttl" "$FB" load c "$T_TMP/l2" --replace --ttl 30s
check_eq "replaced with a lifetime: .3 gone, .2 in, .4 kept" "$(maybe c src 198.51.100.3 src 198.51.100.2 src 198.51.100.4)" 2
check_eq "... in the program: .2 and .4" "$(replay_drops c "$T_TMP/s.pcap")" 2
check_eq "... one generation" "$(gens c)" 1
check "... clean" "$FB" check c
# del over generations (counting): .2 has a lifetime, .4 not.
check "del a rule with a lifetime" "$FB" del c src 198.51.100.2
check_eq "... gone" "$(maybe c src 198.51.100.2)" 0
check_fails "del of a rule held nowhere is refused" "$FB" del c src 198.51.100.2
check "... and the filter is clean" "$FB" check c
# A batch is checked whole, as the deletes will run: a permanent rule held
# once and deleted twice is refused, naming the second copy's argument, and
# nothing is deleted (a copy taken anyway would come out of the counters
# of the flows sharing them). A file names a rule once however often it
# is written (as load takes it): one copy.
"$FB" create cd --capacity 1000 --fp-rate 0.01 --counting >/dev/null
check "a permanent rule and one with a lifetime" "$FB" add cd src 198.51.100.4
check "... and one with a lifetime" "$FB" add cd src 198.51.100.5 --ttl 60s
t_refused 1 "the permanent one deleted twice in one batch" \
	"argument 3: 'src 198.51.100.4' is deleted more often than filter 'cd' holds it: argument 1 deletes it too (load holds a rule once, however often its list names it); nothing deleted" \
	"$FB" del cd src 198.51.100.4 src 198.51.100.4
check_eq "... both still in" "$(maybe cd src 198.51.100.4 src 198.51.100.5)" 2
check_eq "... the flow count unchanged" "$("$FB" -j info cd | $PY -c 'import json,sys; print(json.load(sys.stdin)["flows"])')" 1
check "... and the filter is clean" "$FB" check cd
printf 'src 198.51.100.4\nsrc 198.51.100.5\nsrc 198.51.100.4\n' >"$T_TMP/twice"
check "each deleted once, in one batch (a file naming one twice)" "$FB" del cd -f "$T_TMP/twice"
check_eq "... both gone" "$(maybe cd src 198.51.100.4 src 198.51.100.5)" 0
# A flow both parts hold (the permanent rules and those with a lifetime)
# is held by one, the other, or both, as a rule or as a false positive,
# which cannot be told; deleting it where it is only a false positive
# takes bits other rules need. del asks: refused, nothing deleted, until
# --permanent or --with-lifetime says which.
check "a permanent rule held with a lifetime too" "$FB" add cd src 198.51.100.6 --ttl 1h
check "... and permanently" "$FB" add cd src 198.51.100.6
t_refused 1 "del of a flow both parts hold: refused, asking which" \
	"argument 1: 'src 198.51.100.6' is held both by the permanent rules and by rules with a lifetime of filter 'cd' (or is a false positive of one): say which to delete it from, --permanent or --with-lifetime; nothing deleted" \
	"$FB" del cd src 198.51.100.6
check "del --with-lifetime takes the copy with a lifetime" "$FB" del cd src 198.51.100.6 --with-lifetime
check_eq "... the permanent one left" "$("$FB" -j info cd | $PY -c 'import json,sys; print(json.load(sys.stdin)["flows"])') $(maybe cd src 198.51.100.6)" "1 1"
check "then a plain del takes it (held once now)" "$FB" del cd src 198.51.100.6
check_eq "... gone" "$(maybe cd src 198.51.100.6)" 0
t_refused 1 "del --with-lifetime of a permanent rule: refused" \
	"'src 198.51.100.4' is not in the rules with a lifetime of filter 'cd'" \
	"$FB" del cd --with-lifetime src 198.51.100.4
t_refused 2 "--permanent and --with-lifetime together: a usage error" "one part, or neither" \
	"$FB" del cd --permanent --with-lifetime src 198.51.100.4
# Rules with a lifetime that the permanent rules hold only as false
# positives: permanent rules past the filter's capacity (some 5 % false
# positives), 5,000 rules added for an hour. A plain del of them is
# refused at the first the permanent rules answer for; --with-lifetime
# deletes them and leaves the permanent counters alone: every permanent
# rule still drops in the program (the copies taken from the permanent
# counters too cleared bits some 1,000 of them needed), and the flows that
# were false positives are again.
"$FB" create cfp --capacity 100000 --fp-rate 0.01 --counting >/dev/null
$PY - "$T_TMP" <<'PY'
import sys
from pkt import ether, ipv4_udp, pcap_write
d = sys.argv[1]
perm = [(bytes([198, 51, (i >> 8) & 255, i & 255]), 1000 + (i >> 16)) for i in range(300000)]
open(d + "/perm", "w").write("".join("udp %s:%d 203.0.113.1:53\n" % (".".join(map(str, a)), p) for a, p in perm))
pcap_write(d + "/perm.pcap", (ether(0x0800, b"\x02" * 6, b"\x04" * 6) +
                              ipv4_udp(a, p, bytes([203, 0, 113, 1]), 53, b"x") for a, p in perm))
open(d + "/timed", "w").write("".join("udp 203.0.113.%d:%d 198.51.100.1:80\n" % (i % 250 + 1, 5000 + i)
                                      for i in range(5000)))
PY
"$FB" add cfp -f "$T_TMP/perm" >/dev/null
fps=$(maybe cfp -f "$T_TMP/timed")
check "some of the rules to add are false positives of the permanent ones ($fps)" test "$fps" -gt 10
check "add them for an hour" "$FB" add cfp -f "$T_TMP/timed" --ttl 1h
t_refused 1 "a plain del of them: refused at a flow both parts hold" \
	"timed:[0-9]*: .* is held both by the permanent rules and by rules with a lifetime" \
	"$FB" del cfp -f "$T_TMP/timed"
check "del them --with-lifetime" "$FB" del cfp -f "$T_TMP/timed" --with-lifetime
check_eq "... every permanent rule drops in the program" "$(replay_drops cfp "$T_TMP/perm.pcap")" 300000
check_eq "... the false positives are again" "$(maybe cfp -f "$T_TMP/timed")" "$fps"
check "... and the filter is clean" "$FB" check cfp
"$FB" destroy cfp >/dev/null
# The other way round: permanent rules that a generation holds only as
# false positives. 8,000 rules with a lifetime filling one generation (2,000
# size it, 6,000 more fill it: some 0.4 % false positives at --fp-rate
# 0.5); of 100,000 other flows, those it answers "maybe" for are added
# permanently, then deleted with --permanent (a plain del is refused):
# every rule with a lifetime still matches (taking their copies from the
# generation cleared bits its rules needed).
"$FB" create cg --capacity 1000 --fp-rate 0.5 --counting >/dev/null
$PY - "$T_TMP" <<'PY'
import sys
d = sys.argv[1]
g = ["udp 203.0.113.%d:%d 198.51.100.2:80\n" % (i % 250 + 1, 10000 + i) for i in range(8000)]
open(d + "/g1", "w").write("".join(g[:2000]))
open(d + "/g2", "w").write("".join(g[2000:]))
open(d + "/g", "w").write("".join(g))
open(d + "/cand", "w").write("".join("udp 198.51.100.%d:%d 203.0.113.9:53\n" % (i % 250 + 1, 1024 + i % 60000) for i in range(100000)))
PY
check "2,000 rules for an hour" "$FB" add cg -f "$T_TMP/g1" --ttl 1h
check "... 6,000 more into their generation" "$FB" add cg -f "$T_TMP/g2" --ttl 1h
# Each once: add -f adds a rule as often as its file names it, del -f
# deletes it once (as load holds it).
"$FB" query cg -f "$T_TMP/cand" | awk '$1 == "maybe" { $1 = ""; sub(/^ +/, ""); print }' | sort -u >"$T_TMP/gfp"
check "some other flows are false positives of the generation ($(wc -l <"$T_TMP/gfp"))" test -s "$T_TMP/gfp"
check "... added permanently" "$FB" add cg -f "$T_TMP/gfp"
t_refused 1 "... a plain del: refused, asking which part" "held both by the permanent rules" \
	"$FB" del cg -f "$T_TMP/gfp"
check "... del --permanent" "$FB" del cg -f "$T_TMP/gfp" --permanent
check_eq "... every rule with a lifetime still matches" "$(maybe cg -f "$T_TMP/g")" 8000
check_eq "... the permanent rules hold none of them now" "$("$FB" -j info cg | $PY -c 'import json,sys; print(json.load(sys.stdin)["flows"])')" 0
check "... and the filter is clean" "$FB" check cg
"$FB" destroy cg >/dev/null

# --- import: lifetimes carried as wall-clock ends; an ended one dropped
check "import the export" "$FB" import "$T_TMP/c.fbx" ci
check_eq "imported: .1 permanent, .3 (60 s) in; .2 ended before the import" \
	"$(maybe ci src 198.51.100.1 src 198.51.100.3 src 198.51.100.2)" 2
check_eq "... one generation, about a minute left (60 s from the load)" "$("$FB" -j info ci | $PY -c '
import json, sys, time; g = json.load(sys.stdin)["generations"]
print(len(g), 60 - (time.time() - int(sys.argv[1]) / 1e9) <= g[0]["ends_in"] <= 75)' "$T3")" "1 True"
check_eq "... in the program" "$(replay_drops ci "$T_TMP/s.pcap")" 2
check "... clean" "$FB" check ci
# The plain form carries them alike (the default export is compressed).
check "import the plain export" "$FB" import "$T_TMP/cp.fbx" cip
check_eq "plain import: .1 and .3 in, .2 ended" \
	"$(maybe cip src 198.51.100.1 src 198.51.100.3 src 198.51.100.2)" 2
# A corrupted generation section is refused whole. The flip is in the
# plain export, 200 bytes from its end: inside the last generation's
# counters, bytes the CRC covers. (In the compressed export the same offset
# lands somewhere in the zstd frame, where some bits are ones zstd's
# decoder ignores, e.g. the reserved low bits of a block's sequence modes
# byte: such a flip decodes to the same content and is rightly accepted.
# tests/unit/fleet_flip.c flips every bit of both forms.)
size=$(stat -c %s "$T_TMP/cp.fbx")
$PY -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[int(sys.argv[2]) - 200] ^= 1; open(sys.argv[3], "wb").write(b)' \
	"$T_TMP/cp.fbx" "$size" "$T_TMP/bad.fbx"
check_fails "a flipped bit in a generation: refused" "$FB" import "$T_TMP/bad.fbx" cb
check "... for its counters or the checksum" bash -c "'$FB' import '$T_TMP/bad.fbx' cb 2>&1 | grep -q 'contradict their counters\|checksum mismatch'"
size=$(stat -c %s "$T_TMP/c.fbx")
head -c $((size - 100)) "$T_TMP/c.fbx" >"$T_TMP/short.fbx"
check_fails "a truncated generation: refused" "$FB" import "$T_TMP/short.fbx" cb
check_fails "... through a pipe too" bash -c "cat '$T_TMP/short.fbx' | '$FB' import - cb"
check_eq "... nothing created" "$("$FB" list | grep -c '^cb')" 0
# A generation that ends past the longest lifetime and its quarter (30 d +
# 7.5 d; an export of a host whose clock is years ahead, here its end set
# 400 years on, the CRC fixed) ends then, said on stderr: its rules used
# to match for centuries.
"$FB" create far --capacity 1000 --fp-rate 0.01 >/dev/null
"$FB" add far src 198.51.100.7 --ttl 1h >/dev/null
"$FB" export far "$T_TMP/far.fbx" --plain >/dev/null
check "an export's generation end set 400 years on" $PY - "$T_TMP/far.fbx" "$T_TMP/far400.fbx" <<'PY'
import struct, sys, time, zlib
d = bytearray(open(sys.argv[1], "rb").read()[:-4])
now = time.time_ns()
at = [i for i in range(len(d) - 8) if now + 3600e9 < struct.unpack_from("<Q", d, i)[0] < now + 4600e9]
assert len(at) == 1, at
struct.pack_into("<Q", d, at[0], now + 400 * 365 * 86400 * 10**9)
open(sys.argv[2], "wb").write(bytes(d) + struct.pack("<I", zlib.crc32(bytes(d))))
PY
"$FB" import "$T_TMP/far400.fbx" far400 >/dev/null 2>"$T_TMP/e"
check_eq "... imported" "$?" 0
check "... the cut said" grep -q "generation 0 ends in [0-9]* s, past the longest lifetime and its quarter (3240000 s): it ends then" "$T_TMP/e"
check_eq "... it ends within 37.5 days" "$("$FB" -j info far400 | $PY -c '
import json, sys; g = json.load(sys.stdin)["generations"]; print(len(g), 3239000 < g[0]["ends_in"] <= 3240000)')" "1 True"
check_eq "... its rule still matches" "$(maybe far400 src 198.51.100.7)" 1
"$FB" destroy far >/dev/null
"$FB" destroy far400 >/dev/null

# --- a killed add left a generation slot no mask names: check finds it
"$FB" create k --capacity 100 --fp-rate 0.01 >/dev/null
(strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:signal=KILL:when=20 \
	"$FB" add k src 198.51.100.9 --ttl 30s >/dev/null 2>&1) 2>/dev/null
"$FB" check k >/dev/null 2>&1 || "$FB" check k --repair >/dev/null
check "after a killed add and check --repair: clean" "$FB" check k
# --- a live generation damaged (its counters' pin removed: no writer does
# that) refuses every write of a counting filter, whose lock would roll back
# a write half done in it; check says so once and how to get out, check
# --repair takes it out (its rules with a lifetime with it), and the filter
# is writable again, its permanent rules kept.
"$FB" create dg --capacity 1000 --fp-rate 0.01 --counting >/dev/null
"$FB" add dg src 198.51.100.1 >/dev/null
"$FB" add dg src 198.51.100.3 --ttl 1h >/dev/null
rm "$FLOWBLOOM_ROOT/dg/$(ls "$FLOWBLOOM_ROOT/dg" | grep '^gcnt')"
t_refused 1 "a damaged generation: add refused, check --repair named" "check --repair dg" \
	"$FB" add dg src 198.51.100.4
"$FB" check dg >"$T_TMP/o" 2>"$T_TMP/e"
check_eq "check: exit 1" "$?" 1
check "... NOT clean, the generation named as damaged" \
	grep -q "generation 0 of rules with a lifetime is damaged (.*no counters.*): check --repair takes it out" "$T_TMP/o"
check_eq "... the damage said once" "$(grep -c "no counters" "$T_TMP/o" "$T_TMP/e" | awk -F: '{ n += $2 } END { print n }')" 1
check_eq "... -j: damaged_generations 1" "$("$FB" -j check dg | $PY -c 'import json,sys; print(json.load(sys.stdin)["damaged_generations"])')" 1
"$FB" check dg --repair >"$T_TMP/o" 2>"$T_TMP/e"
check_eq "check --repair: exit 0" "$?" 0
check "... the generation taken out" grep -q "generation 0 of rules with a lifetime is damaged .*: taken out" "$T_TMP/o"
check "... then clean" "$FB" check dg
check "... writable again" "$FB" add dg src 198.51.100.4
check_eq "... the permanent rules kept, the damaged generation's rule gone" \
	"$(maybe dg src 198.51.100.1 src 198.51.100.4 src 198.51.100.3)" 2
check "... load --replace too" "$FB" load dg /dev/null --replace --allow-empty
"$FB" destroy dg >/dev/null
check "metrics reads filters with generations" bash -c "'$FB' metrics | grep -q '^flowbloom_filter_generations{filter=\"c\"} 1'"
t_finish
