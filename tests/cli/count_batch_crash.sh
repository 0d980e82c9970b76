#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A counting filter's batch is all or nothing across a SIGKILL of its
# writer (user/lib/types/counting_log.h), as batch_crash.sh checks for
# cuckoo and d-left. `add -f`, `load` and `del -f` of 200 flows over a
# counting filter holding 1400 others are killed at many points
# (FLOWBLOOM_TEST_RELOC_DELAY_US=1 pauses after each flow, before the
# journal closes and after each word the recovery puts back; strace's
# SIGKILL lands at the Nth pause); the next lock holder (check --repair,
# another writer, itself sometimes killed) rolls the batch back. After
# it: every flow counted exactly as before the batch (never some of the
# batch in), check clean, the real program (replay) matching every member;
# the batch run again then counts each flow exactly as an unkilled run.
# A batch larger than the journal goes in parts: killed in a later part,
# the note says how many flows are in, and those are the batch's first.
source "$(dirname "$0")/../lib/lib.sh"
t_begin count_batch_crash
GEN="python3 $(dirname "$0")/types_gen.py"
cleanup() { t_cleanup_filters; }
t_traps

command -v strace >/dev/null || t_skip_all "strace is not installed (make deps installs it)"

$GEN flows "$T_TMP/m.txt" "$T_TMP/m.pcap" 1400 0   # members
$GEN flows "$T_TMP/b.txt" "$T_TMP/b.pcap" 200 5000 # the batch
$GEN flows "$T_TMP/x.txt" "$T_TMP/x.pcap" 1 9000   # another writer's flow

source "$(dirname "$0")/../lib/batch.sh"
run() { # OP NAME FILE
	case $1 in
	add) "$FB" add "$2" -f "$3" ;;
	load) "$FB" load "$2" "$3" ;;
	del) "$FB" del "$2" -f "$3" ;;
	esac
}

# batch OP: OP of b.txt killed at pause W until it completes.
batch() {
	local op=$1 n=c$1 w done=0 i=0 rc state
	"$FB" create $n --counting --capacity 4000 --fp-rate 0.01 >/dev/null &&
		"$FB" add $n -f "$T_TMP/m.txt" >/dev/null || fail "$n: setup"
	[ "$op" = del ] && { "$FB" add $n -f "$T_TMP/b.txt" >/dev/null || fail "$n: batch in"; }
	{ counts $n "$T_TMP/b.txt"; counts $n "$T_TMP/m.txt"; counts $n "$T_TMP/x.txt"; } >"$T_TMP/s0"
	twin $n
	run $op r$n "$T_TMP/b.txt" >/dev/null || fail "$n: the batch unkilled"
	{ counts r$n "$T_TMP/b.txt"; counts r$n "$T_TMP/m.txt"; counts r$n "$T_TMP/x.txt"; } >"$T_TMP/s1"
	cmp -s "$T_TMP/s0" "$T_TMP/s1" && fail "$n: the batch changes no count"
	for w in 1 2 3 5 9 30 68 120 160 199 200 201 202 203 204 205 207 210 220 250 300 400 600 900; do
		case $op in
		add) killed "$w" add $n -f "$T_TMP/b.txt" ;;
		load) killed "$w" load $n "$T_TMP/b.txt" ;;
		del) killed "$w" del $n -f "$T_TMP/b.txt" ;;
		esac
		rc=$?
		[ $rc = 0 ] && done=1 && break
		[ $rc = 137 ] || { fail "$n at pause $w: exit $rc, not the kill"; break; }
		i=$((i + 1))
		[ $i = 1 ] && { "$FB" check $n >/dev/null 2>&1 && fail "$n: check calls a filter with a batch open clean"; }
		case $((i % 4)) in
		0) "$FB" check --repair $n >/dev/null 2>&1 ;;
		1) "$FB" add $n -f "$T_TMP/x.txt" 2>"$T_TMP/next.err" >/dev/null &&
			"$FB" del $n -f "$T_TMP/x.txt" >/dev/null 2>&1 ;;
		2) killed 1 add $n -f "$T_TMP/x.txt"
			"$FB" add $n -f "$T_TMP/x.txt" >/dev/null 2>&1 &&
			"$FB" del $n -f "$T_TMP/x.txt" >/dev/null 2>&1 ;;
		3) killed 3 check --repair $n
			"$FB" check --repair $n >/dev/null 2>&1 ;;
		esac
		[ $((i % 4)) = 1 ] && ! grep -q "^flowbloom: note: filter '$n': rolled back $([ $op = del ] && echo a del || echo an add) of 200 flows a killed writer left half applied: none of it is in$" "$T_TMP/next.err" &&
			fail "$n at pause $w: the next writer said '$(cat "$T_TMP/next.err")'"
		{ counts $n "$T_TMP/b.txt"; counts $n "$T_TMP/m.txt"; counts $n "$T_TMP/x.txt"; } >"$T_TMP/s"
		cmp -s "$T_TMP/s" "$T_TMP/s0" ||
			fail "$n killed at pause $w: $(diff "$T_TMP/s0" "$T_TMP/s" | grep -c '^>') flows not counted as before the batch"
		"$FB" check $n >/dev/null 2>&1 || fail "$n killed at pause $w: not clean after: $("$FB" check $n | tail -n +2 | paste -sd' ')"
		read -r mm bm <<<"$(matched $n "$T_TMP/m.pcap" "$T_TMP/b.pcap")"
		if [ "$op" = del ]; then
			[ "$mm $bm" = "1400 200" ] || fail "$n killed at pause $w: program matched $mm of 1400 members, $bm of 200 batch flows (want all)"
		else
			[ "$mm" = 1400 ] && [ "$bm" -lt 10 ] ||
				fail "$n killed at pause $w: program matched $mm of 1400 members, $bm of 200 batch flows (want all, and false positives)"
		fi
	done
	[ $i -ge 10 ] || fail "$op: only $i kills landed (the pauses after each flow missing?)"
	check_eq "$op: killed at $i pauses, each rolled back whole, then it completed" "$done" 1
	{ counts $n "$T_TMP/b.txt"; counts $n "$T_TMP/m.txt"; counts $n "$T_TMP/x.txt"; } | cmp -s - "$T_TMP/s1" &&
		pass "$op: then every flow counted as an unkilled $op leaves it" ||
		fail "$op: then $({ counts $n "$T_TMP/b.txt"; counts $n "$T_TMP/m.txt"; counts $n "$T_TMP/x.txt"; } | diff "$T_TMP/s1" - | grep -c '^>') flows counted otherwise"
	check "$op: then clean" "$FB" check $n
	read -r mm bm <<<"$(matched $n "$T_TMP/m.pcap" "$T_TMP/b.pcap")"
	if [ $op = del ]; then ok=$([ "$bm" -lt 10 ] && echo 1); else ok=$([ "$bm" = 200 ] && echo 1); fi
	[ "$mm" = 1400 ] && [ "$ok" = 1 ] && pass "$op: the program agrees ($mm members, $bm of the batch)" ||
		fail "$op: the program matched $mm members, $bm of the batch"
	"$FB" destroy $n >/dev/null
	"$FB" destroy r$n >/dev/null
}

for op in add load del; do batch $op; done

# A del a flow of which the counters do not hold is refused whole; killed
# while it puts back the flows it took out, it is rolled back too.
"$FB" create cref --counting --capacity 4000 --fp-rate 0.01 >/dev/null &&
	"$FB" add cref -f "$T_TMP/m.txt" >/dev/null &&
	"$FB" add cref -f "$T_TMP/b.txt" >/dev/null || fail "refused: setup"
{ cat "$T_TMP/b.txt"; cat "$T_TMP/x.txt"; } >"$T_TMP/bx.txt"
counts cref "$T_TMP/bx.txt" >"$T_TMP/r0"
bad=""
for w in 1 50 150 199 200 201 250 300 399 400 401 402; do
	killed $w del cref -f "$T_TMP/bx.txt"
	rc=$?
	"$FB" check --repair cref >/dev/null 2>&1
	counts cref "$T_TMP/bx.txt" | cmp -s - "$T_TMP/r0" || bad="$bad $w(rc $rc)"
done
check_eq "a refused del killed at any point: every flow counted as before" "$bad" ""

# Parts: the smallest filter (one chunk, 2M counters) holds 2,340 flows of
# k = 7 a part (its journal 256 KiB); 6000 flows go in 3 parts.
$GEN flows "$T_TMP/big.txt" "$T_TMP/big.pcap" 6000 20000
"$FB" create big --counting --capacity 4000 --fp-rate 0.01 >/dev/null || fail "parts: create"
twin big
killed 5000 add big -f "$T_TMP/big.txt"
check_eq "parts: killed in a later part" "$?" 137
"$FB" add big -f "$T_TMP/x.txt" 2>"$T_TMP/next.err" >/dev/null || fail "parts: next writer"
"$FB" del big -f "$T_TMP/x.txt" >/dev/null 2>&1
k=$(sed -n "s/^flowbloom: note: filter 'big': rolled back the part of an add a killed writer left half applied: the first \([0-9]*\) of its 6000 flows are in, the others not (a batch that large goes in parts, each whole)$/\1/p" "$T_TMP/next.err")
[ -n "$k" ] && [ "$k" -gt 0 ] && [ "$k" -lt 6000 ] && pass "parts: the note says $k of 6000 are in" ||
	fail "parts: note '$(cat "$T_TMP/next.err")'"
"$FB" add rbig -f <(head -n "${k:-0}" "$T_TMP/big.txt") >/dev/null || fail "parts: the first flows unkilled"
counts big "$T_TMP/big.txt" | cmp -s - <(counts rbig "$T_TMP/big.txt") &&
	pass "parts: those are the batch's first flows, counted once, the rest not" ||
	fail "parts: $(counts big "$T_TMP/big.txt" | diff <(counts rbig "$T_TMP/big.txt") - | grep -c '^>') flows counted otherwise"
check "parts: clean" "$FB" check big
check "parts: the rest added" "$FB" add big -f <(tail -n +"$((${k:-0} + 1))" "$T_TMP/big.txt")
"$FB" add rbig -f <(tail -n +"$((${k:-0} + 1))" "$T_TMP/big.txt") >/dev/null
counts big "$T_TMP/big.txt" | cmp -s - <(counts rbig "$T_TMP/big.txt") && pass "parts: then every flow counted as by an unkilled add" ||
	fail "parts: then $(counts big "$T_TMP/big.txt" | diff <(counts rbig "$T_TMP/big.txt") - | grep -c '^>') flows counted otherwise"
check_eq "parts: the program matches all" "$(matched big "$T_TMP/big.pcap")" 6000
# A del in parts refused in its last part: the parts before go back in,
# every flow counted as before; the same del without that flow takes all.
z=$(paste -d' ' <(counts big "$T_TMP/x.txt") "$T_TMP/x.txt" | awk '$1 == 0 { $1 = ""; print substr($0, 2); exit }')
{ cat "$T_TMP/big.txt"; echo "$z"; } >"$T_TMP/bigx.txt"
counts big "$T_TMP/big.txt" >"$T_TMP/p0"
"$FB" del big -f "$T_TMP/bigx.txt" >/dev/null 2>"$T_TMP/pdel.err"
check_eq "parts: a del refused in its third part (status 1), naming that line" \
	"$? $(grep -c "bigx.txt:6001: " "$T_TMP/pdel.err")" "1 1"
counts big "$T_TMP/big.txt" | cmp -s - "$T_TMP/p0" && pass "parts: ... every flow counted as before" ||
	fail "parts: after a refused del $(counts big "$T_TMP/big.txt" | diff "$T_TMP/p0" - | grep -c '^>') flows counted otherwise"
check "parts: ... clean" "$FB" check big
check "parts: the del of the batch alone" "$FB" del big -f "$T_TMP/big.txt"
check_eq "parts: ... leaves every flow at 0" "$(counts big "$T_TMP/big.txt" | sort -u | paste -sd' ')" 0

# Without the test pauses: `add -f` of 400,000 flows killed by the clock
# at points through its run (parsing, then applying in parts of about
# 20,000). The next writer leaves the flow count at a part's end (a
# multiple of the part's flows, in input order), and the counters agree
# with it (check: their sum is k times the flows). Before the batch
# journal, a kill while applying left any number of flows in.
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    for i in range(400000):
        f.write("udp 198.51.100.%d:%d 203.0.113.%d:%d\n" % (i % 200, 1 + i // 200, (i // 7) % 200, 53 + i % 3))
' "$T_TMP/huge.txt"
"$FB" create tk --counting --capacity 800000 --fp-rate 0.01 >/dev/null || fail "clock: create"
t0=$(date +%s%N)
"$FB" add tk -f "$T_TMP/huge.txt" >/dev/null || fail "clock: unkilled add"
ms=$((($(date +%s%N) - t0) / 1000000))
"$FB" destroy tk >/dev/null
bad="" mid=0
for pct in 40 55 65 72 78 84 88 92 95 98; do
	"$FB" create tk --counting --capacity 800000 --fp-rate 0.01 >/dev/null
	"$FB" add tk -f "$T_TMP/huge.txt" >/dev/null 2>&1 &
	pid=$!
	sleep "$(awk -v m="$ms" -v p="$pct" 'BEGIN { printf "%.3f", m * p / 100000 }')"
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	"$FB" add tk -f "$T_TMP/x.txt" >/dev/null 2>"$T_TMP/next.err" || bad="$bad $pct%:next"
	"$FB" del tk -f "$T_TMP/x.txt" >/dev/null 2>&1
	n=$("$FB" -j info tk | t_json "d['flows']")
	k=$(sed -n "s/.*the first \([0-9]*\) of its 400000 flows are in.*/\1/p" "$T_TMP/next.err")
	[ -n "$k" ] && [ "$k" -gt 0 ] && mid=$((mid + 1))
	case "$n" in 0 | 400000) ;; "${k:-x}") ;; *) bad="$bad $pct%:flows=$n,note=${k:-none}" ;; esac
	"$FB" check tk >/dev/null 2>&1 || bad="$bad $pct%:check"
	[ "$n" = 0 ] || [ "$("$FB" count tk -f <(head -n "$n" "$T_TMP/huge.txt") | awk '$1 < 1' | wc -l)" = 0 ] ||
		bad="$bad $pct%:first-$n-not-all-in"
	"$FB" destroy tk >/dev/null
done
check_eq "clock: add of 400000 flows killed at 10 points: each left whole parts, the first flows" "$bad" ""
[ $mid -gt 0 ] && pass "clock: $mid of the kills landed while it applied" ||
	skip "clock: no kill landed while it applied (a run of $ms ms)"

t_finish
