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
cleanup() {
	[ -n "$LOOP" ] && kill "$LOOP" 2>/dev/null
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
"$FB" load tc "$T_TMP/p.txt" >/dev/null
replacing tc
check_eq "rules with a lifetime: query during replaces: every one, every time" \
	"$(answers 12 "$FB" query tc -f "$T_TMP/t.txt")" "12 300 of 300 maybe"
c=$(for i in 1 2 3 4 5 6; do slow "$FB" -j count tc -f "$T_TMP/t.txt" 2>&1 |
	t_json "sum(r['count'] for r in d['results'])"; done | sort -u)
check_eq "... count during replaces: each once" "$c" 300
stopped
check_eq "... the replaces all done" "$(cat "$T_TMP/rep.bad")" ""
for f in big bigc bigx tc; do
	check_eq "$f: check is clean after the race" "$("$FB" -j check $f 2>&1 | t_json "d['clean']")" True
done
check_eq "rules with a lifetime still held" "$(summed tc "$T_TMP/t.txt")" 300

t_finish
