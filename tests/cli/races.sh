#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Readers racing writers: what a verb that reads without the lock (`query`,
# `count`, `info`) says while `load --replace` switches the filter beside
# it. A flow present before, during and after every replace is present in
# every answer: never "no", never an error, `info`'s digest that of the
# one content. The windows are widened with strace, each bpf call of the
# reader delayed, so that replaces land between its read of the head in
# slot 0 and its mapping of the chunks, counters, exact sets and
# generations of rules with a lifetime that head names. (Before the fix
# such a reader mapped the empty chunk a replace leaves in the released
# slots, and the generations it retired: `query` said "no" for up to every
# flow, 0 of 300 for rules with a lifetime.)
# Writers racing writers: tests/cli/concurrent.sh.
source "$(dirname "$0")/../lib/lib.sh"
t_begin races
GEN="python3 $(dirname "$0")/types_gen.py"
LOOP=""
MERGE=""
cleanup() {
	[ -n "$LOOP" ] && kill "$LOOP" 2>/dev/null
	[ -n "$MERGE" ] && kill "$MERGE" 2>/dev/null
	wait 2>/dev/null
	t_cleanup_filters
	rm -rf "$T_TMP"
}
t_traps
command -v strace >/dev/null || t_skip_all "strace is missing (make deps installs it)"

# P (1000 flows) present throughout; R = P and 2000 more, the replacement;
# T (300) added with a lifetime of an hour.
$GEN flows "$T_TMP/p.txt" /dev/null 1000 0
$GEN flows "$T_TMP/r2.txt" /dev/null 2000 20000
cat "$T_TMP/p.txt" "$T_TMP/r2.txt" >"$T_TMP/r.txt"
$GEN flows "$T_TMP/t.txt" /dev/null 300 50000

# slow CMD...: CMD with each of its bpf calls 2 ms late
slow() { strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:delay_enter=2000 "$@"; }
# replacing NAME: `load --replace R` again and again in the background
# (until stopped), each exit status noted
replacing() {
	rm -f "$T_TMP/rep.bad"
	(while :; do "$FB" load "$1" "$T_TMP/r.txt" --replace >/dev/null 2>>"$T_TMP/rep.bad" ||
		echo failed >>"$T_TMP/rep.bad"; done) &
	LOOP=$!
}
stopped() {
	kill "$LOOP" 2>/dev/null
	wait "$LOOP" 2>/dev/null
	LOOP=""
}
# answers N CMD...: CMD's last line (and stderr) N times, slowed, counted
answers() {
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do slow "$@" 2>&1 | tail -1; done | sort | uniq -c |
		sed 's/^ *//' | paste -sd';'
}
summed() { # NAME FILE: the sum of count's answers
	"$FB" -j count "$1" -f "$2" | t_json "sum(r['count'] for r in d['results'])"
}

# A plain filter of 16 chunks, a counting one of 8 and a confirming one:
# query (and count) while it is replaced.
"$FB" create big --capacity 2000000 --fp-rate 0.001 >/dev/null
"$FB" create bigc --counting --capacity 500000 --fp-rate 0.001 >/dev/null
"$FB" create bigx --confirm exact --capacity 1000000 --fp-rate 0.001 >/dev/null
for f in big bigc bigx; do "$FB" load $f "$T_TMP/r.txt" >/dev/null || fail "$f: load"; done
digest=$("$FB" -j info big | t_json "d['digest']")
replacing big
check_eq "plain filter of 16 chunks: query during replaces: every flow of P, every time" \
	"$(answers 12 "$FB" query big -f "$T_TMP/p.txt")" "12 1000 of 1000 maybe"
d=$(for i in 1 2 3 4 5 6; do slow "$FB" -j info big 2>&1 | t_json "d['digest']"; done | sort -u)
check_eq "... info during replaces: the content's one digest" "$d" "$digest"
stopped
check_eq "... the replaces all done" "$(cat "$T_TMP/rep.bad")" ""

replacing bigc
check_eq "counting filter of 8 chunks: query during replaces: every flow of P" \
	"$(answers 8 "$FB" query bigc -f "$T_TMP/p.txt")" "8 1000 of 1000 maybe"
c=$(for i in 1 2 3 4 5 6; do slow "$FB" -j count bigc -f "$T_TMP/p.txt" 2>&1 |
	t_json "sum(r['count'] for r in d['results'])"; done | sort -u)
check_eq "... count during replaces: each flow of P once" "$c" 1000
stopped
check_eq "... the replaces all done" "$(cat "$T_TMP/rep.bad")" ""

replacing bigx
check_eq "confirming filter: query during replaces: every flow of P confirmed" \
	"$(answers 8 "$FB" query bigx -f "$T_TMP/p.txt")" "8 1000 of 1000 yes"
stopped
check_eq "... the replaces all done" "$(cat "$T_TMP/rep.bad")" ""

# Rules with a lifetime: a replace carries their generation into the other
# set of slots and retires the one the reader's head names.
"$FB" create tc --counting --capacity 20000 --fp-rate 0.001 >/dev/null
"$FB" add tc -f "$T_TMP/t.txt" --ttl 1h >/dev/null || fail "tc: add --ttl"
"$FB" add tc --ttl 1h udp 203.0.113.9:1 203.0.113.1:7 >/dev/null || fail "tc: add --ttl"
"$FB" load tc "$T_TMP/p.txt" >/dev/null
$PY - "$T_TMP/x.pcap" <<'PY'
import sys
from pkt import pcap_write, udp4
pcap_write(sys.argv[1], [udp4("203.0.113.9", 1, "203.0.113.1", 7)])
PY
life="drop flow udp 203.0.113.9:1 203.0.113.1:7 (lifetime, generation 0, ends in S s)"
ends() { tr -s ' ' | sed -E 's/^[0-9]+ //; s/ends in [0-9]+\.[0-9] s/ends in S s/' | sort | uniq -c | sed 's/^ *//'; }
replacing tc
check_eq "rules with a lifetime: query during replaces: every one, every time" \
	"$(answers 12 "$FB" query tc -f "$T_TMP/t.txt")" "12 300 of 300 maybe"
c=$(for i in 1 2 3 4 5 6; do slow "$FB" -j count tc -f "$T_TMP/t.txt" 2>&1 |
	t_json "sum(r['count'] for r in d['results'])"; done | sort -u)
check_eq "... count during replaces: each once" "$c" 300
# info: its generation live, with its flows and fill, and what a packet
# meets with it (before: "ended 17190174 s ago", flows 0, fill -1, the
# retired range read through the head it had mapped).
e="[(g['expired'], g['flows'], g['fill_ratio'] > 0) for g in d['generations']],"
e+=" d.get('with_generations', {}).get('live_generations')"
d=$(for i in 1 2 3 4 5 6 7 8; do slow "$FB" -j info tc 2>&1 | t_json "$e"; done | sort -u)
check_eq "... info during replaces: the generation live, its flows and fill" "$d" \
	"([(False, 301, True)], 1)"
# The rule life of a packet, as the program records it: when its
# generation ends is known (before: "(lifetime, generation 0)" alone when
# a replace had retired the range the reader's head named).
d=$(for i in 1 2 3 4 5 6 7 8; do
	slow "$FB" query tc --packet udp 203.0.113.9:1 203.0.113.1:7 2>&1 | head -1
done | ends)
check_eq "... query --packet during replaces: the generation and its end" "$d" "8 $life"
d=$(for i in 1 2 3 4 5 6 7 8; do slow "$FB" replay tc "$T_TMP/x.pcap" --explain 2>&1 | head -1; done | ends)
check_eq "... replay --explain during replaces: the generation and its end" "$d" "8 $life"
stopped
check_eq "... the replaces all done" "$(cat "$T_TMP/rep.bad")" ""

# metrics: the generations' figures and guard's bans in force (two bans,
# src .1 and .2 for an hour, recorded beside the filter as guard records
# them: struct fb_key ::ffff:198.51.100.N, kind src, length 128, their end
# far off), read while the filter is replaced. (Before the fix metrics
# read the generations a replace had retired: flows_with_lifetime 0 and
# the active bans left out or 0.)
"$FB" create gm --capacity 20000 --fp-rate 0.001 >/dev/null
printf "src 198.51.100.1\nsrc 198.51.100.2\n" >"$T_TMP/gm.txt"
cat "$T_TMP/t.txt" >>"$T_TMP/gm.txt"
"$FB" add gm -f "$T_TMP/gm.txt" --ttl 1h >/dev/null || fail "gm: add --ttl"
"$FB" load gm "$T_TMP/p.txt" >/dev/null
bpftool map create "$FLOWBLOOM_ROOT/gm/guard" type array key 4 value 64 entries 1 name fb_guard
bpftool map create "$FLOWBLOOM_ROOT/gm/guard_bans" type hash key 40 value 8 entries 1024 \
	name fb_guard flags 1
for b in 01 02; do
	bpftool map update pinned "$FLOWBLOOM_ROOT/gm/guard_bans" \
		key hex 0 0 0 0 0 0 0 0 0 0 ff ff c6 33 64 $b 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 \
		0 0 0 0 0 2 80 0 value hex ff ff ff ff ff ff ff 7f
done
# gm's figures: generations, flows with a lifetime, active bans, exit status
gm_figs() {
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	for m in filter_generations filter_flows_with_lifetime guard_active_bans; do
		awk -v m="flowbloom_$m{filter=\"gm\"}" '$1 == m { v = $2 } END { printf "%s ", v == "" ? "-" : v }' <<<"$out"
	done
	echo "exit $rc"
}
check_eq "metrics, idle: gm's generation, its 302 flows, its 2 bans" "$(gm_figs "$FB" metrics gm)" \
	"1 302 2 exit 0"
replacing gm
d=$(for i in 1 2 3 4 5 6 7 8; do gm_figs slow "$FB" metrics gm; done | sort | uniq -c | sed 's/^ *//')
check_eq "... metrics during replaces: the generation, its flows, the bans, every time" "$d" \
	"8 1 302 2 exit 0"
stopped
check_eq "... the replaces all done" "$(cat "$T_TMP/rep.bad")" ""
# A filter not mapped again after a replace (mmap refused: memory) is not
# read: exit 1, said, never a crash on the header it no longer maps. Each
# mmap refused from the last one an idle run makes.
mmap_refused() {
	local n rc i
	n=$(strace -f -qq -o "$T_TMP/mm" -e trace=mmap "$FB" "$@" gm >/dev/null && grep -c 'mmap(' "$T_TMP/mm")
	for i in $(seq 12); do
		strace -f -qq -o /dev/null -e trace=bpf,mmap -e inject=bpf:delay_enter=2000 \
			-e inject=mmap:error=ENOMEM:when="$n"+ "$FB" "$@" gm >/dev/null 2>"$T_TMP/me"
		rc=$?
		# Said: the filter, or a part of it (a generation), not read.
		if [ $rc = 0 ] || { [ $rc = 1 ] && grep -Eq "cannot (open filter|read generation [0-9]+ of) 'gm'" "$T_TMP/me"; }; then
			echo ok
		else
			echo "exit $rc: $(head -1 "$T_TMP/me")"
		fi
	done | sort | uniq -c | sed 's/^ *//'
}
for verb in metrics info; do
	replacing gm
	check_eq "... $verb during replaces, mmap refused: read or said, never a crash" \
		"$(mmap_refused $verb)" "12 ok"
	stopped
	check_eq "... the replaces all done" "$(cat "$T_TMP/rep.bad")" ""
done
# Merges into one of their sources (merge A A --into A) copy it without
# the lock, then check under it that it is unchanged since: a writer
# between the two copies, or between the copy and the lock, is refused,
# never undone. strace holds the merge's Nth flock 2 s (its locks: SH and
# UN per copy, then EX), the writer goes in then.
flocks() { [ "$(cat "$T_TMP/fl" 2>/dev/null | grep -c 'flock(')" -ge "$1" ]; }
# merging N OUT NAME...: merge in the background, its Nth flock late
merging() {
	local n=$1 out=$2
	shift 2
	rm -f "$T_TMP/fl"
	strace -f -qq -o "$T_TMP/fl" -e trace=flock -e inject=flock:delay_enter=2000000:when=$n \
		"$FB" merge "$@" >"$out" 2>&1 &
	MERGE=$!
	t_wait_until 10 flocks $((n - 1))
}
refusal="flowbloom: 'mA' changed while it was being merged (a concurrent writer); nothing changed, run it again"
X="udp 198.51.100.1:1 203.0.113.1:2"
"$FB" create mA --counting --capacity 1000 --fp-rate 0.001 >/dev/null
"$FB" add mA $X udp 198.51.100.2:1 203.0.113.1:2 >/dev/null || fail "mA: add"
merging 3 "$T_TMP/m.out" mA mA --into mA
"$FB" del mA $X >/dev/null || fail "mA: del"
wait $MERGE
check_eq "merge A A --into A, a del between its copies: refused" "$(cat "$T_TMP/m.out")" "$refusal"
check_eq "... the rule deleted stays so" \
	"$("$FB" -j count mA $X | t_json "d['results'][0]['count']")" 0

# check --repair between the copy and the lock: the exact-set rule it
# takes out (one the filter does not hold, put in behind the CLI here) not
# put back by the merge's write.
set_id() {
	bpftool -j map lookup pinned "$FLOWBLOOM_ROOT/$1/exact" key "$2" 0 0 0 | $PY -c 'import json, sys
print(int("".join(x[2:] for x in reversed(json.load(sys.stdin)["value"])), 16))'
}
"$FB" create kx --capacity 10 --fp-rate 0.01 --confirm exact >/dev/null
"$FB" add kx udp 203.0.113.5:5 198.51.100.5:5 >/dev/null
key=$(bpftool -j map dump id "$(set_id kx 0)" | $PY -c 'import json, sys
print(" ".join(x[2:] for x in json.load(sys.stdin)[0]["key"]))')
"$FB" create cA --capacity 1000 --fp-rate 0.001 --confirm exact >/dev/null
"$FB" add cA $X >/dev/null || fail "cA: add"
bpftool map update id "$(set_id cA 0)" key hex $key value 1 0 0 0 || fail "cA: the extra rule"
check_eq "cA: check finds the rule the filter does not hold" \
	"$("$FB" -j check cA 2>/dev/null | t_json "d['exact_not_in_filter']")" 1
refusal=${refusal//mA/cA}
merging 5 "$T_TMP/m.out" cA cA --into cA
"$FB" check cA --repair >/dev/null 2>&1
wait $MERGE
check_eq "merge A A --into A, check --repair between its copy and its lock: refused" \
	"$(cat "$T_TMP/m.out")" "$refusal"
check_eq "... the repair stays" "$("$FB" -j check cA 2>&1 | t_json "d['clean']")" True

for f in big bigc bigx tc gm mA cA; do
	check_eq "$f: check is clean after the race" "$("$FB" -j check $f 2>&1 | t_json "d['clean']")" True
done
check_eq "rules with a lifetime still held" "$(summed tc "$T_TMP/t.txt")" 300

t_finish
