#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A cuckoo or d-left batch is all or nothing across a SIGKILL of its
# writer (user/lib/types/batchlog.h). `add -f`, `load` and `del --force -f`
# of 200 flows over a filter holding others are killed at many of their
# stores (FLOWBLOOM_TEST_RELOC_DELAY_US=1 pauses after each, strace's
# SIGKILL at the Nth pause: inside relocation chains too, at the last
# store, before the journal closes) and at bpf calls; the next lock holder
# (check --repair, or another writer: an add and del of an unrelated flow)
# puts the batch's buckets back. After it: every flow of the batch held
# as before the batch (all of them, never some), every other flow held
# once, check clean (a cuckoo count exact), no batch left open, the real
# program (replay) matching every member and none of the batch's flows but
# for false positives; the batch run again then holds each flow once.
# The recovery itself killed (at its first puts) is taken up by the writer
# after it; while it runs slowed, the program matches every member. A new
# filter's add killed at its last stores: its flows held
# and matched, all or none. A batch larger than the journal goes in parts: killed in a
# later part, the note says how many of its flows are in, and those are
# the batch's first flows, each held once.
source "$(dirname "$0")/../lib/lib.sh"
t_begin batch_crash
GEN="python3 $(dirname "$0")/types_gen.py"
cleanup() { t_cleanup_filters; }
t_traps

command -v strace >/dev/null || t_skip_all "strace is not installed (make deps installs it)"

$GEN flows "$T_TMP/m.txt" "$T_TMP/m.pcap" 1400 0 # members
$GEN flows "$T_TMP/b.txt" "$T_TMP/b.pcap" 200 5000 # the batch
$GEN flows "$T_TMP/x.txt" "$T_TMP/x.pcap" 1 9000 # another writer's flow

source "$(dirname "$0")/../lib/batch.sh"
copies() { counts "$@"; }

# batch TYPE CAPACITY OP: OP (add, load, del) of b.txt killed at stores W
# until it completes.
batch() {
	local t=$1 cap=$2 op=$3 n=c$1$3 w done=0 i=0 rc chains=0
	"$FB" create $n --type "$t" --capacity "$cap" --fp-rate 0.01 >/dev/null &&
		"$FB" add $n -f "$T_TMP/m.txt" >/dev/null || fail "$n: setup"
	[ "$op" = del ] && { "$FB" add $n -f "$T_TMP/b.txt" >/dev/null || fail "$n: batch in"; }
	copies $n "$T_TMP/b.txt" >"$T_TMP/b0"
	copies $n "$T_TMP/m.txt" >"$T_TMP/m0"
	copies $n "$T_TMP/x.txt" >"$T_TMP/x0"
	twin $n
	case $op in
	add) "$FB" add r$n -f "$T_TMP/b.txt" ;;
	load) "$FB" load r$n "$T_TMP/b.txt" ;;
	del) "$FB" del r$n --force -f "$T_TMP/b.txt" ;;
	esac >/dev/null || fail "$n: the batch unkilled"
	{ copies r$n "$T_TMP/b.txt"; copies r$n "$T_TMP/m.txt"; } >"$T_TMP/r1"
	for w in 1 2 3 5 9 30 68 120 160 199 200 201 202 203 204 205 207 210 220 250 300 400 600 900; do
		case $op in
		add) killed "$w" add $n -f "$T_TMP/b.txt" ;;
		load) killed "$w" load $n "$T_TMP/b.txt" ;;
		del) killed "$w" del $n --force -f "$T_TMP/b.txt" ;;
		esac
		rc=$?
		[ $rc = 0 ] && done=1 && break
		[ $rc = 137 ] || { fail "$n at store $w: exit $rc, not the kill"; break; }
		i=$((i + 1))
		"$FB" -j check $n >"$T_TMP/ck.json" 2>/dev/null
		# (once: list and info say what the next write does)
		if [ $i = 1 ]; then
			"$FB" list >/dev/null 2>"$T_TMP/list.err"
			grep -q "^flowbloom: note: $t filter '$n' holds part of a batch a killed writer left: the next write to it or \`flowbloom check $n --repair\` rolls it back$" "$T_TMP/list.err" ||
				grep -q "^flowbloom: note: cuckoo filter '$n' was left inside a relocation chain" "$T_TMP/list.err" ||
				fail "$n: list said '$(cat "$T_TMP/list.err")'"
			"$FB" info $n | grep -q "^  an add or del was killed \(half way: the next write to it (add, del, load) or \`flowbloom check $n --repair\` rolls it back\|inside a relocation chain\)" ||
				fail "$n: info does not say the batch is open"
		fi
		[ "$(t_json "d['interrupted_batch'], d['interrupted_relocation']" "$T_TMP/ck.json")" = "(True, True)" ] &&
			chains=$((chains + 1))
		# The next lock holder: check --repair, or another writer
		# (sometimes itself killed at its first puts: the one after it
		# takes the rollback up).
		case $((i % 4)) in
		0) "$FB" check --repair $n >/dev/null 2>&1 ;;
		1) "$FB" add $n -f "$T_TMP/x.txt" 2>"$T_TMP/next.err" >/dev/null &&
			"$FB" del $n --force -f "$T_TMP/x.txt" >/dev/null 2>&1 ;;
		2) killed 1 add $n -f "$T_TMP/x.txt"
			"$FB" add $n -f "$T_TMP/x.txt" >/dev/null 2>&1 &&
			"$FB" del $n --force -f "$T_TMP/x.txt" >/dev/null 2>&1 ;;
		3) killed 3 check --repair $n
			"$FB" check --repair $n >/dev/null 2>&1 ;;
		esac
		[ $((i % 4)) = 1 ] && ! grep -q "^flowbloom: note: filter '$n': rolled back $([ $op = del ] && echo a del || echo an add) of 200 flows a killed writer left half applied: none of it is in$" "$T_TMP/next.err" &&
			fail "$n at store $w: the next writer said '$(cat "$T_TMP/next.err")'"
		copies $n "$T_TMP/b.txt" | cmp -s - "$T_TMP/b0" ||
			fail "$n killed at store $w: the batch's flows are not held as before it: $(copies $n "$T_TMP/b.txt" | diff "$T_TMP/b0" - | grep -c '^>') differ"
		{ copies $n "$T_TMP/m.txt"; copies $n "$T_TMP/x.txt"; } | cmp -s - <(cat "$T_TMP/m0" "$T_TMP/x0") ||
			fail "$n killed at store $w: other flows not held as before"
		"$FB" check $n >/dev/null 2>&1 || fail "$n killed at store $w: not clean after: $("$FB" check $n | tail -n +2 | paste -sd' ')"
		[ "$("$FB" -j info $n | t_json "d['interrupted_batch']")" = False ] ||
			fail "$n killed at store $w: info still says a batch is open"
		read -r mm bm <<<"$(matched $n "$T_TMP/m.pcap" "$T_TMP/b.pcap")"
		if [ "$op" = del ]; then
			[ "$mm $bm" = "1400 200" ] || fail "$n killed at store $w: program matched $mm of 1400 members, $bm of 200 batch flows (want all)"
		else
			[ "$mm" = 1400 ] && [ "$bm" -lt 10 ] ||
				fail "$n killed at store $w: program matched $mm of 1400 members, $bm of 200 batch flows (want all, and false positives)"
		fi
	done
	check_eq "$t $op: killed at $i stores, each rolled back whole, then it completed" "$done" 1
	if [ $t = cuckoo ] && [ $op != del ]; then
		[ $chains -gt 0 ] && pass "$t $op: $chains of the kills inside a relocation chain" ||
			fail "$t $op: no kill landed inside a relocation chain"
	fi
	{ copies $n "$T_TMP/b.txt"; copies $n "$T_TMP/m.txt"; } | cmp -s - "$T_TMP/r1" &&
		pass "$t $op: then every flow holds the copies an unkilled $op leaves" ||
		fail "$t $op: then $({ copies $n "$T_TMP/b.txt"; copies $n "$T_TMP/m.txt"; } | diff "$T_TMP/r1" - | grep -c '^>') flows hold other copies than an unkilled $op leaves"
	check "$t $op: then clean" "$FB" check $n
	read -r mm bm <<<"$(matched $n "$T_TMP/m.pcap" "$T_TMP/b.pcap")"
	if [ $op = del ]; then ok=$([ "$bm" -lt 10 ] && echo 1); else ok=$([ "$bm" = 200 ] && echo 1); fi
	[ "$mm" = 1400 ] && [ "$ok" = 1 ] &&
		pass "$t $op: then the program agrees ($mm members, $bm batch flows)" ||
		fail "$t $op: then the program matched $mm members, $bm batch flows"
	"$FB" destroy $n >/dev/null
	"$FB" destroy r$n >/dev/null
}

# Cuckoo at load 0.68 to 0.78 (512 buckets x 4): most batches relocate.
for op in add load del; do
	batch cuckoo 1000 $op
	batch dleft 2000 $op
done

# A kill at the batch's bpf calls (before its first store, or after the
# last): never a part of it.
"$FB" create cb --type cuckoo --capacity 1000 --fp-rate 0.01 >/dev/null &&
	"$FB" add cb -f "$T_TMP/m.txt" >/dev/null || fail "bpf kills: setup"
copies cb "$T_TMP/b.txt" >"$T_TMP/cb0"
twin cb
"$FB" add rcb -f "$T_TMP/b.txt" >/dev/null || fail "bpf kills: unkilled"
copies rcb "$T_TMP/b.txt" >"$T_TMP/cb1"
bad=""
for w in 1 2 3 4 5 6 8 10 12 16 20 30; do
	strace -f -qq -o /dev/null -e trace=bpf -e inject=bpf:signal=KILL:when=$w \
		"$FB" add cb -f "$T_TMP/b.txt" >/dev/null 2>&1 && break
	"$FB" check --repair cb >/dev/null 2>&1
	copies cb "$T_TMP/b.txt" >"$T_TMP/bk"
	if cmp -s "$T_TMP/bk" "$T_TMP/cb0"; then
		:
	elif cmp -s "$T_TMP/bk" "$T_TMP/cb1"; then
		"$FB" del cb --force -f "$T_TMP/b.txt" >/dev/null
	else
		bad="$bad $w"
	fi
done
check_eq "killed at its bpf calls: a batch is in whole or not at all" "$bad" ""

# While the rollback runs (slowed: 10 ms a bucket), the program keeps
# matching every member: a cuckoo table is put back with every probe at
# maybe (the batch's flows match then too), a d-left one cell by cell.
for t in cuckoo dleft; do
	"$FB" create slow --type $t --capacity 1000 --fp-rate 0.01 >/dev/null &&
		"$FB" add slow -f "$T_TMP/m.txt" >/dev/null || fail "slow $t: setup"
	killed 150 add slow -f "$T_TMP/b.txt"
	FLOWBLOOM_TEST_RELOC_DELAY_US=10000 "$FB" check --repair slow >/dev/null 2>&1 &
	rb=$!
	lo=1400 during=0 seen=""
	while kill -0 $rb 2>/dev/null; do
		read -r mm bm <<<"$(matched slow "$T_TMP/m.pcap" "$T_TMP/b.pcap")"
		kill -0 $rb 2>/dev/null || break # (this replay may have ended after it)
		during=$((during + 1))
		[ "$mm" -lt "$lo" ] && lo=$mm
		seen="$seen $bm"
	done
	wait $rb
	[ $during -gt 0 ] && [ "$lo" = 1400 ] &&
		pass "$t: $during replays during the rollback matched all 1400 members (batch flows:$seen)" ||
		fail "$t: during the rollback ($during replays) members matched down to $lo"
	"$FB" destroy slow >/dev/null
done

# A new filter's first flows: what the program probes for (their rule
# kind) goes in before the table does, so a kill at the batch's last
# stores never leaves flows held that no probe reaches (before: 200 held,
# none matched).
bad=""
for t in cuckoo dleft; do
	for w in 196 198 199 200 201 202 203 204; do
		"$FB" create new --type $t --capacity 1000 --fp-rate 0.01 >/dev/null || fail "new $t: create"
		killed $w add new -f "$T_TMP/b.txt"
		rc=$?
		"$FB" check --repair new >/dev/null 2>&1
		h=$("$FB" count new -f "$T_TMP/b.txt" | awk '$1 > 0' | wc -l)
		m=$(matched new "$T_TMP/b.pcap")
		case "$h $m" in "200 200" | "0 0") ;; *) bad="$bad $t@$w:held=$h,matched=$m" ;; esac
		"$FB" destroy new >/dev/null
		[ $rc = 0 ] && break
	done
done
check_eq "a new filter's add killed at its last stores: held and matched, all or none" "$bad" ""

# Parts: 30,000 flows into a table of 32768 buckets touch more buckets
# than the journal holds (its last chunk's tail: 16,112 of 8 bytes).
$GEN flows "$T_TMP/big.txt" "$T_TMP/big.pcap" 30000 20000
"$FB" create big --type cuckoo --capacity 100000 --fp-rate 0.01 >/dev/null || fail "parts: create"
twin big
killed 25000 add big -f "$T_TMP/big.txt"
check_eq "parts: killed in a later part" "$?" 137
"$FB" add big -f "$T_TMP/x.txt" 2>"$T_TMP/next.err" >/dev/null || fail "parts: next writer"
k=$(sed -n "s/^flowbloom: note: filter 'big': rolled back the part of an add a killed writer left half applied: the first \([0-9]*\) of its 30000 flows are in, the others not (a batch that large goes in parts, each whole)$/\1/p" "$T_TMP/next.err")
[ -n "$k" ] && [ "$k" -gt 0 ] && [ "$k" -lt 30000 ] && pass "parts: the note says $k of 30000 are in" ||
	fail "parts: note '$(cat "$T_TMP/next.err")'"
"$FB" add rbig -f <(head -n "${k:-0}" "$T_TMP/big.txt") >/dev/null || fail "parts: the first flows unkilled"
copies big "$T_TMP/big.txt" | cmp -s - <(copies rbig "$T_TMP/big.txt") &&
	pass "parts: those are the batch's first flows, held as an unkilled add of them leaves them, the rest out" ||
	fail "parts: $(copies big "$T_TMP/big.txt" | diff <(copies rbig "$T_TMP/big.txt") - | grep -c '^>') flows held otherwise"
check "parts: clean" "$FB" check big
check "parts: the rest added" "$FB" add big -f <(tail -n +"$((${k:-0} + 1))" "$T_TMP/big.txt")
"$FB" add rbig -f <(tail -n +"$((${k:-0} + 1))" "$T_TMP/big.txt") >/dev/null
copies big "$T_TMP/big.txt" | cmp -s - <(copies rbig "$T_TMP/big.txt") && pass "parts: then every flow held as by an unkilled add" ||
	fail "parts: then $(copies big "$T_TMP/big.txt" | diff <(copies rbig "$T_TMP/big.txt") - | grep -c '^>') flows held otherwise"
check_eq "parts: the program matches all" "$(matched big "$T_TMP/big.pcap")" 30000

t_finish
