#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom bgp`'s state writes, paced: each rewrites the state file whole
# (O(paths)), and was started each time the input paused, so a peer
# flapping one route steered bgp's CPU (a flap every 0.1 s over a large
# table took a whole core). A real bgp process on a FIFO, its CPU time read
# from /proc/PID/stat, the filter read back with `info` and `query`:
# - 120,000 routes held, then one route flapped every 0.05 s for 4 s and
#   400 others withdrawn among the flaps: bgp's CPU time over the flapping
#   stays under a third of a core (it took 70 to 90 %); once the feed
#   pauses every withdrawal is applied, while the input is still open (no
#   end of input forcing a write): the filter holds exactly the rules the
#   state file names;
# - killed (SIGKILL) while a write waits for its pace, with 10 routes
#   withdrawn and 5 announced since the last one: ExaBGP sends a new
#   process none of them again, and the next run, given no input, applies
#   the journal's lines again: the 5 rules in the filter, the 10 out, the
#   filter exactly what the new state file names (it deleted the 5 and
#   kept the 10 for good);
# - a small table keeps its latency: a withdrawal is applied within a
#   second and a half while the input stays open;
# - a route withdrawn and announced again 20 times between two writes
#   (with and without --ttl): each announcement added its rule again while
#   the deletion waited, its 4-bit counters saturated, and its final
#   withdrawal left it in the filter for good; an announcement now takes
#   the waiting deletion back, and the rule is held once.
# - the journal (STATE.journal): killed after a write, before STATE.added
#   or the journal is emptied, no line applied twice; the journal not
#   writable (ENOSPC), then a kill: said once, the lines up to it kept;
#   a session up, a route announced again and End-of-RIB, and a session
#   down with --on-session-down flush, replayed as they ran; with --ttl,
#   the routes announced and withdrawn since held and not; a journal of
#   garbage, old lines and a torn last line: bad lines named, torn and old
#   ones not applied; --flush empties it.
# - killed among the deletions a write allows (before the first, between
#   two, after the last): the file no longer names the withdrawn routes
#   and the journal is emptied, so their rules stayed in the filter for
#   good; the next run applies those not started, none twice (a rule held
#   by another peer's path, or added by hand, keeps its count), with and
#   without --ttl, and a --ttl change's old copies too; STATE.deleted
#   not writable, or of garbage.
# - restarted while a peer restarts (its session up again, its routes held
#   stale until its End-of-RIB): the marks are in the state file, written
#   for them alone (no path started or ended), so after a kill the peer's
#   End-of-RIB to the next run ends the routes it did not announce again
#   (the marks lived in memory only: it ended nothing, and those routes
#   kept their rules for good).
source "$(dirname "$0")/../lib/lib.sh"
t_begin bgp_pace

t_bgp_traps
HOLD="" # strace holding bgp (section 2): killed first, its delay not waited for
cleanup() {
	[ -z "$HOLD" ] || kill -KILL "$HOLD" 2>/dev/null
	exec 9>&- 2>/dev/null
	[ -n "$BP" ] && t_kill "$BP" && wait "$BP" 2>/dev/null
}

NB=$T_EXA_NB
BH=$T_EXA_BH
# ann6 NLRI / wd6 NLRI: an IPv6 blackhole route and its withdrawal.
ann6() { printf '{"type": "update", %s, "message": {"update": {%s, "announce": {"ipv6 unicast": {"x": [{"nlri": "%s"}]}}}}}}\n' "$NB" "$BH" "$1"; }
wd6() { printf '{"type": "update", %s, "message": {"update": {"withdraw": {"ipv6 unicast": [{"nlri": "%s"}]}}}}}\n' "$NB" "$1"; }
# table N: N /128 blackhole routes 2001:db8:I/65536:I%65536::1, 500 a
# message.
table() {
	python3 - "$1" "$NB" "$BH" <<'EOF'
import sys
n, nb, bh = int(sys.argv[1]), sys.argv[2], sys.argv[3]
for s in range(0, n, 500):
    nl = ", ".join('{"nlri": "2001:db8:%x:%x::1/128"}' % (i >> 16, i & 0xffff) for i in range(s, min(n, s + 500)))
    print('{"type": "update", %s, "message": {"update": {%s, "announce": {"ipv6 unicast": {"x": [%s]}}}}}}' % (nb, bh, nl))
EOF
}
start() { t_bgp_start "$@"; }
stop() { t_bgp_stop; }
# paths STATE: the paths the state file holds; held STATE N: it holds N.
paths() { grep -c '^198\.51\.100\.9	' "$1"; }
held() { [ "$(paths "$1")" = "$2" ]; }
nflows() { "$FB" -j info "$1" | t_json 'd["flows"]'; }
cnt2() { "$FB" count dl dst "2001:db8:3::$1" | awk '{print $1}'; }
q() { "$FB" query "$1" "${@:2}" | head -1 | awk '{print $1}'; }
# is NAME WANT RULE...: query's verdict on RULE is WANT.
is() { [ "$(q "$1" "${@:3}")" = "$2" ]; }
cpu() { awk '{print $14 + $15}' "/proc/$BP/stat"; } # clock ticks
now() { date +%s.%N; }

# --- 1. a large table, a flapping route --------------------------------------
N=120000
"$FB" create pc --capacity 150000 --fp-rate 0.001 --counting >/dev/null || fail "create pc"
S=$T_TMP/pc.bgp
table $N >"$T_TMP/table"
start pc "$S"
cat "$T_TMP/table" >&9
check "bgp holds the $N routes" t_wait_until 60 held "$S" $N
sleep 1
c0=$(cpu)
t0=$(now)
for i in $(seq 79); do
	if [ $((i % 2)) = 1 ]; then
		wd6 2001:db8:0:0::1/128
		# 400 others withdrawn in between, ten at a time
		for j in $(seq 0 9); do wd6 "2001:db8:0:$(printf %x $((1000 + i / 2 * 10 + j)))::1/128"; done
	else
		ann6 2001:db8:0:0::1/128
	fi
	sleep 0.05
done >&9
c1=$(cpu)
t1=$(now)
tck=$(getconf CLK_TCK)
share=$(echo "$c0 $c1 $t0 $t1 $tck" | awk '{printf "%d", 100 * ($2 - $1) / $5 / ($4 - $3)}')
echo "# bgp's CPU over the flapping: ${share}% of a core ($(((c1 - c0) * 1000 / tck)) ms)"
check "a route flapped every 0.05 s over $N routes: bgp takes under 33 % of a core (${share} %)" \
	test "$share" -lt 33
# The flapped route ends withdrawn; 400 others withdrawn (i = 1, 3, ... 79).
W=$((N - 1 - 400))
check "the feed paused, the input open: every withdrawal is applied (state holds $W paths)" \
	t_wait_until 20 held "$S" $W
check_eq "... the filter holds exactly the rules the state file names" "$(nflows pc)" "$W"
check_eq "... the flapped route's rule is out, a withdrawn one's, a held one's in" \
	"$(q pc dst 2001:db8::1) $(q pc dst 2001:db8:0:3f0::1) $(q pc dst 2001:db8:0:5::1)" "no no maybe"
check_eq "... nothing left waiting, nothing refused" \
	"$(grep -c 'no longer in the filter\|not applied\|could not' "$T_TMP/bgp.err")" 0

# --- 2. killed while a write waits for its pace ------------------------------
# A withdrawal makes a write (about 0.1 s of CPU at this size), the next one
# is due 6 times its CPU time after it: withdraw 10 and announce 5 new
# routes then, and SIGKILL bgp before that next write. The 15 lines are
# made before, the write seen by the state file's time (a shell test, not
# a count of its 120,000 lines). The next write is held at its first step
# (strace on the state file's directory, delaying bgp's first call on it:
# on disk, as before its pace ended) and bgp killed there, so the kill
# comes before it however late the checks run (killed after a wait of
# about 0.6 s wall time, it came after the write on a loaded machine).
L15=$(
	for j in $(seq 0 9); do wd6 "2001:db8:0:$(printf %x $((2000 + j)))::1/128"; done
	for j in $(seq 0 4); do ann6 "2001:db8:ff:$j::1/128"; done
)
touch "$T_TMP/before.wd"
wd6 2001:db8:0:7cf::1/128 >&9
# Written and done: the file renamed, the directory synced and closed, the
# journal emptied after (its line was in it before the write); no call on
# the directory until new input.
check "a withdrawal written" t_wait_until 30 eval 'test "$S" -nt "$T_TMP/before.wd" && ! test -s "$S.journal"'
HOLD=""
if command -v strace >/dev/null; then
	strace -qq -o "$T_TMP/hold.tr" -p "$BP" -P "$T_TMP" -e inject=all:delay_enter=120s &
	HOLD=$!
	t_wait_until 10 grep -q "^TracerPid:[[:space:]]*$HOLD\$" "/proc/$BP/status" ||
		fail "strace did not attach to bgp: $(head -c 300 "$T_TMP/hold.tr")"
fi
echo "$L15" >&9
T_WAIT_STEP=0.02 check "the 5 new routes are in the filter at once" t_wait_until 30 is pc maybe dst 2001:db8:ff:4::1
if [ -n "$HOLD" ]; then
	t_wait_until 30 grep -q . "$T_TMP/hold.tr"
	check "... bgp's next write held at its first call on the directory ($(head -c 60 "$T_TMP/hold.tr"))" \
		grep -q . "$T_TMP/hold.tr"
else
	skip "bgp's next write held: strace is missing (make deps installs it); killed without"
fi
kill -KILL "$BP"
[ -z "$HOLD" ] || { kill -KILL "$HOLD"; wait "$HOLD" 2>/dev/null; HOLD=""; }
wait "$BP" 2>/dev/null
BP=""
exec 9>&-
check_eq "killed before the next write: the state file holds the withdrawn routes" \
	"$(paths "$S")" $((W - 1))
J=$(wc -l <"$S.journal")
check_eq "... the journal holds the 15 lines read since the last write" "$J" 15
start pc "$S"
check "a new run starts over the killed one's state, with no new input" \
	t_wait_until 20 grep -q 'rules\? held from' "$T_TMP/bgp.err"
grep -q "$J lines read after the last write of $S, by a run that ended before the next: applied again" \
	"$T_TMP/bgp.err" && pass "... saying the $J lines are applied again" ||
	fail "... said: $(head -c 600 "$T_TMP/bgp.err")"
# ExaBGP sends a new process only later changes: what the killed one read
# since its last write comes from the journal or nowhere.
check_eq "... the 5 routes announced since are held, their rules in the filter" \
	"$(paths "$S") $(q pc dst 2001:db8:ff:0::1) $(q pc dst 2001:db8:ff:4::1)" "$((W - 6)) maybe maybe"
check_eq "... the 10 withdrawn since are not, their rules out" \
	"$(grep -c '^[^#].*2001:db8:0:7d[0-9]::1' "$S") $(q pc dst 2001:db8:0:7d0::1) $(q pc dst 2001:db8:0:7d9::1)" "0 no no"
check_eq "... the filter holds exactly the rules the state file names, each once" \
	"$(nflows pc) $("$FB" count pc dst 2001:db8:ff:4::1 | awk '{print $1}')" "$((W - 6)) 1"
check_eq "... the journal emptied by the new write" "$(stat -c %s "$S.journal")" 0
check "... it ends" stop
"$FB" destroy pc >/dev/null

# --- 3. a small table keeps its latency --------------------------------------
"$FB" create sm --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create sm"
start sm "$T_TMP/sm.bgp"
for j in $(seq 0 9); do ann6 "2001:db8:0:$j::1/128"; done >&9
check "10 routes held" t_wait_until 10 held "$T_TMP/sm.bgp" 10
for i in $(seq 10); do
	wd6 2001:db8:0:0::1/128
	sleep 0.05
	ann6 2001:db8:0:0::1/128
	sleep 0.05
done >&9
t0=$(now)
wd6 2001:db8:0:1::1/128 >&9
t_wait_until 30 is sm no dst 2001:db8:0:1::1
lat=$(echo "$t0 $(now)" | awk '{printf "%d", 1000 * ($2 - $1)}')
check "a withdrawal after flaps is applied within 1.5 s, the input open (${lat} ms)" \
	test "$lat" -lt 1500
check_eq "... the filter holds what the state file names" "$(nflows sm)" "$(paths "$T_TMP/sm.bgp")"
check "... it ends" stop
"$FB" destroy sm >/dev/null

# --- 4. a route flapped between two writes -----------------------------------
# Withdrawn and announced again 20 times in one read, so within one write:
# each announcement added the rule again while its deletion waited, the
# 4-bit counters saturated at 15, and the final withdrawal left the rule
# in the filter for good (with --ttl, until its generation ended).
{ ann6 2001:db8:0:60::1/128; for i in $(seq 20); do
	wd6 2001:db8:0:60::1/128
	ann6 2001:db8:0:60::1/128
done; } >"$T_TMP/flaps"
for ttl in "" "--ttl 1h"; do
	"$FB" create fl --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create fl"
	rm -f "$T_TMP/fl.bgp"
	"$FB" bgp fl --state "$T_TMP/fl.bgp" $ttl <"$T_TMP/flaps" 2>"$T_TMP/bgp.err" >/dev/null
	check_eq "bgp $ttl: 20 flaps between two writes: the rule held once" \
		"$("$FB" count fl dst 2001:db8:0:60::1 | awk '{print $1}')" 1
	# From a file: one read (a pipe's writes may arrive in three, each
	# its own commit, the deletion then said twice).
	{ wd6 2001:db8:0:60::1/128; ann6 2001:db8:0:60::1/128; wd6 2001:db8:0:60::1/128; } >"$T_TMP/last"
	"$FB" bgp fl --state "$T_TMP/fl.bgp" $ttl <"$T_TMP/last" 2>"$T_TMP/bgp.err" >/dev/null
	check_eq "... withdrawn at last: its rule is out, the filter clean" \
		"$(q fl dst 2001:db8:0:60::1) $(nflows fl) $(grep -c -- '-dst 2001:db8:0:60::1' "$T_TMP/bgp.err")" "no 0 1"
	check_eq "... no counter saturated (its count is 0)" \
		"$("$FB" count fl dst 2001:db8:0:60::1 | awk '{print $1}')" 0
	"$FB" destroy fl >/dev/null
done
# --- 5. the journal: a kill at each step of a write, a journal cut short,
# hostile, or not writable -----------------------------------------------------
"$FB" create jn --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create jn"
J=$T_TMP/jn.bgp
commit() { head -1 "$J" | awk '{print $NF}'; }
cnt() { "$FB" count jn dst "$1" | awk '{print $1}'; }
{ ann6 2001:db8:1::1/128; ann6 2001:db8:1::2/128; } >"$T_TMP/in"
"$FB" bgp jn --state "$J" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"
check_eq "2 routes held (the state file's commit 2)" "$(paths "$J") $(commit)" "2 2"
if command -v strace >/dev/null; then
	# Each write empties STATE.added, then the journal (one ftruncate
	# each; a start with nothing to change writes nothing): the 1st and
	# 2nd are the end's write's. Killed there, the
	# state file holds the lines' outcome and their journal lines (of
	# its commit) are still there: skipped, not applied again.
	for n in 1 2; do
		{ ann6 "2001:db8:1::1$n/128"; wd6 2001:db8:1::1$n/128; ann6 "2001:db8:1::1$n/128"
		  ann6 "2001:db8:1::2$n/128"; } >"$T_TMP/in"
		(strace -f -qq -o /dev/null -e trace=ftruncate -e inject=ftruncate:signal=KILL:when=$n \
			"$FB" bgp jn --state "$J" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
		check_eq "killed emptying the $([ $n = 1 ] && echo STATE.added || echo journal) after a write: the journal holds 4 lines of its commit" \
			"$(grep -c "^$(commit)	" "$J.journal")" 4
		"$FB" bgp jn --state "$J" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
		check_eq "... the next run applies none again, deletes none the file names" \
			"$(grep -c 'applied again\|deleted$' "$T_TMP/bgp.err") $(q jn dst 2001:db8:1::1$n) $(q jn dst 2001:db8:1::2$n)" \
			"0 maybe maybe"
		check_eq "... each rule once, the filter exactly the state file's" \
			"$(cnt 2001:db8:1::1$n) $(cnt 2001:db8:1::2$n) $(nflows jn)" "1 1 $(paths "$J")"
	done
	# Killed within a line's addition: STATE.added names the line's
	# rules before they reach the filter (1st write) and once they are
	# in it (2nd). Named only after, a kill between left them in the
	# filter and named nowhere: the journal's line, applied again, added
	# each a second time (count 2), and the route's withdrawal left it
	# blocking. The next run tells by the rules' counters whether they
	# were added: each once (beside a copy added by hand, kept), and
	# withdrawn, gone (or the hand's copy left), at either kill.
	amany() { printf '{"type": "update", %s, "message": {"update": {%s, "announce": {"ipv6 unicast": {"x": [{"nlri": "%s"}, {"nlri": "%s"}, {"nlri": "%s"}]}}}}}}\n' "$NB" "$BH" "$@"; }
	for w in 1 2; do
		for hand in 0 1; do
			r=2001:db8:1::7$w$hand
			[ $hand = 0 ] || "$FB" add jn dst "$r" >/dev/null
			amany "$r/128" "2001:db8:1::8$w$hand/128" "2001:db8:1::9$w$hand/128" >"$T_TMP/in"
			(strace -f -qq -o /dev/null -P "$J.added" -e trace=write,writev \
				-e inject=write,writev:error=EIO:signal=KILL:when=$w \
				"$FB" bgp jn --state "$J" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
			"$FB" bgp jn --state "$J" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
			check_eq "killed at STATE.added's $([ $w = 1 ] && echo 1st || echo 2nd) write of a line of 3 routes$([ $hand = 1 ] && echo ', one added by hand too'): the next run holds each once" \
				"$(cnt "$r") $(cnt 2001:db8:1::8$w$hand) $(cnt 2001:db8:1::9$w$hand) $(nflows jn)" \
				"$((1 + hand)) 1 1 $(($(paths "$J") + hand))"
			{ wd6 "$r/128"; wd6 "2001:db8:1::8$w$hand/128"; wd6 "2001:db8:1::9$w$hand/128"; } |
				"$FB" bgp jn --state "$J" >/dev/null 2>"$T_TMP/bgp.err"
			check_eq "... withdrawn: out of the filter (the hand's copy kept)" \
				"$(cnt "$r") $(q jn dst 2001:db8:1::8$w$hand) $(q jn dst 2001:db8:1::9$w$hand)" \
				"$hand no no"
			[ $hand = 0 ] || "$FB" del jn dst "$r" >/dev/null
		done
	done
	# The journal not writable (a full disk: ENOSPC at its 2nd line):
	# the lines are applied all the same, said once, and a kill before
	# the next write (at its rename) loses the lines from the failed one
	# on, as it did without a journal.
	{ ann6 2001:db8:1::31/128; ann6 2001:db8:1::32/128; ann6 2001:db8:1::33/128
	  wd6 2001:db8:1::1/128; } >"$T_TMP/in"
	c=$(commit)
	(strace -f -qq -o /dev/null -e trace=writev,renameat -e inject=writev:error=ENOSPC:when=2 \
		-e inject=renameat:signal=KILL:when=1 \
		"$FB" bgp jn --state "$J" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
	check_eq "the journal's 2nd line not written (ENOSPC): said once, the lines applied" \
		"$(grep -c 'cannot write .*journal: No space left on device: input line 2 and those after it are applied, but a kill before the next write' "$T_TMP/bgp.err") $(grep -c '+dst 2001:db8:1::3' "$T_TMP/bgp.err")" "1 3"
	check_eq "... killed before the next write: the journal holds the line before it, whole" \
		"$(grep -c "^$((c + 1))	" "$J.journal") $(grep -c '2001:db8:1::31/128' "$J.journal")" "1 1"
	"$FB" bgp jn --state "$J" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
	check_eq "... the next run: the journaled route held, the others lost (and said)" \
		"$(q jn dst 2001:db8:1::31) $(q jn dst 2001:db8:1::32) $(q jn dst 2001:db8:1::1) $(nflows jn)" \
		"maybe no maybe $(paths "$J")"
	check_eq "... the 2 rules no line announced again said deleted (not the 3 STATE.added names)" \
		"$(grep -c '^flowbloom: bgp: 2 rules added after the last write of .*jn.bgp, by a run that ended before the next: deleted$' "$T_TMP/bgp.err")" 1
	# A session's lines replay as they ran: a session up (routes held
	# stale) and a route announced again (no path started or ended, its
	# mark cleared) are journaled too, so an End-of-RIB to the next run
	# ends the routes not announced again; a session down with
	# --on-session-down flush ends its routes again.
	up='{"type": "state", "neighbor": {"address": {"local": "198.51.100.2", "peer": "198.51.100.9"}, "state": "up"}}'
	eor() { printf '{"type": "update", %s, "message": {"eor": {"afi": "ipv6", "safi": "unicast"}}}}\n' "$NB"; }
	{ echo "$up"; ann6 2001:db8:1::2/128; } >"$T_TMP/in"
	(strace -f -qq -o /dev/null -e trace=renameat -e inject=renameat:signal=KILL:when=1 \
		"$FB" bgp jn --state "$J" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
	eor >"$T_TMP/in"
	"$FB" bgp jn --state "$J" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"
	check_eq "killed after a session up and a route announced again: End-of-RIB to the next run ends the others" \
		"$(q jn dst 2001:db8:1::2) $(q jn dst 2001:db8:1::11) $(paths "$J") $(nflows jn)" "maybe no 1 1"
	ann6 2001:db8:1::51/128 >"$T_TMP/in"
	echo "${up/\"up\"/\"down\"}" >>"$T_TMP/in"
	(strace -f -qq -o /dev/null -e trace=renameat -e inject=renameat:signal=KILL:when=1 \
		"$FB" bgp jn --state "$J" --on-session-down flush <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
	check_eq "killed after a route and its session down (--on-session-down flush): the journal holds both" \
		"$(grep -c "^$(($(commit) + 1))	" "$J.journal")" 2
	"$FB" bgp jn --state "$J" --on-session-down flush </dev/null >/dev/null 2>"$T_TMP/bgp.err"
	check_eq "... the next run ends the session's routes again: none held, the filter empty" \
		"$(q jn dst 2001:db8:1::51) $(q jn dst 2001:db8:1::2) $(paths "$J") $(nflows jn)" "no no 0 0"
	# --ttl (no STATE.added: rules end by themselves): the journal's
	# announcement gets its rule a copy on the record, its withdrawal
	# takes the file's copies out; the killed run's own copy, named
	# nowhere, is left to end with its lifetime.
	"$FB" create jt --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create jt"
	{ ann6 2001:db8:2::1/128; ann6 2001:db8:2::2/128; } |
		"$FB" bgp jt --ttl 1h --state "$T_TMP/jt.bgp" >/dev/null 2>"$T_TMP/bgp.err"
	{ ann6 2001:db8:2::3/128; wd6 2001:db8:2::2/128; } >"$T_TMP/in"
	(strace -f -qq -o /dev/null -e trace=renameat -e inject=renameat:signal=KILL:when=1 \
		"$FB" bgp jt --ttl 1h --state "$T_TMP/jt.bgp" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
	"$FB" bgp jt --ttl 1h --state "$T_TMP/jt.bgp" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
	check_eq "--ttl, killed before a write: the next run holds the route announced since, not the one withdrawn" \
		"$(q jt dst 2001:db8:2::1) $(q jt dst 2001:db8:2::3) $(q jt dst 2001:db8:2::2) $(paths "$T_TMP/jt.bgp")" \
		"maybe maybe no 2"
	wd6 2001:db8:2::3/128 | "$FB" bgp jt --ttl 1h --state "$T_TMP/jt.bgp" >/dev/null 2>"$T_TMP/bgp.err"
	check_eq "... withdrawn: the copy on the record deleted, the killed run's left to its lifetime" \
		"$("$FB" count jt dst 2001:db8:2::3 | awk '{print $1}') $(paths "$T_TMP/jt.bgp")" "1 1"
	"$FB" destroy jt >/dev/null
else
	skip "bgp killed within a write, its journal not writable: strace is missing (make deps installs it)"
fi
# A journal cut short, or written by someone who should not: a malformed
# line said (FILE:LINE), a line of the state file's own commit or before
# skipped, a last line without a newline (a kill within its write) not
# applied, a huge commit number refused; the others applied.
c=$(commit)
{
	echo garbage
	printf '%s\t%s\n' "$c" "$(ann6 2001:db8:1::41/128)"
	printf '%s\t{"type": "update", oops\n' $((c + 1))
	printf '%s\t%s\n' $((c + 1)) "$(ann6 2001:db8:1::42/128)"
	printf '99999999999999999999\t%s\n' "$(ann6 2001:db8:1::43/128)"
	printf '%s\t%s\n' $((c + 1)) "$(wd6 2001:db8:1::2/128)"
	printf '%s\t%s\n' $((c + 1)) "$(ann6 2001:db8:1::44/128)" | head -c 100 # no newline
} >"$J.journal"
"$FB" bgp jn --state "$J" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
grep -q '^flowbloom: bgp: 2 lines read after the last write of .*jn.bgp, by a run that ended before the next: applied again$' \
	"$T_TMP/bgp.err" && pass "a journal of garbage, an old line, a huge commit number and a torn line: 2 lines applied" ||
	fail "a journal of garbage...: said $(head -c 800 "$T_TMP/bgp.err")"
check_eq "... the garbage and the bad lines said with their place" \
	"$(grep -c 'jn.bgp.journal:1: not COMMIT<TAB>LINE; skipped\|jn.bgp.journal:3: .*line skipped\|jn.bgp.journal:5: not COMMIT' "$T_TMP/bgp.err")" 3
check_eq "... the line of the file's commit, the huge and the torn one not applied; the others are" \
	"$(q jn dst 2001:db8:1::41) $(q jn dst 2001:db8:1::43) $(q jn dst 2001:db8:1::44) $(q jn dst 2001:db8:1::42) $(q jn dst 2001:db8:1::2)" \
	"no no no maybe no"
check_eq "... the filter exactly the state file's, the journal emptied" \
	"$(nflows jn) $(stat -c %s "$J.journal")" "$(paths "$J") 0"
# --flush: deletes every rule, replays nothing, empties the journal.
printf '%s\t%s\n' $(($(commit) + 1)) "$(ann6 2001:db8:1::45/128)" >"$J.journal"
"$FB" bgp jn --state "$J" --flush >/dev/null 2>"$T_TMP/bgp.err"
check_eq "--flush: nothing applied again, every rule deleted, the journal emptied" \
	"$(grep -c 'applied again' "$T_TMP/bgp.err") $(nflows jn) $(stat -c %s "$J.journal")" "0 0 0"
# A journal whose state file is gone (removed by hand): of a state this
# run does not have, not applied.
rm -f "$J"
printf '2\t%s\n' "$(ann6 2001:db8:1::46/128)" >"$J.journal"
"$FB" bgp jn --state "$J" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
check_eq "a journal without its state file: not applied, said, emptied" \
	"$(q jn dst 2001:db8:1::46) $(grep -c 'jn.bgp.journal: no state file to apply it to; not applied' "$T_TMP/bgp.err") $(stat -c %s "$J.journal")" \
	"no 1 0"
"$FB" destroy jn >/dev/null

# --- 6. killed among the deletions a write allows ----------------------------
# The write renames the state file, empties STATE.added and the journal,
# then applies the deletions: killed in between, the withdrawn routes'
# rules were named by no file. Killed before the first (the first
# ftruncate), between the two (the second message on stderr: the first
# deletion's), after the last (the third).
NB10=${NB/198.51.100.9/198.51.100.10}
S=$T_TMP/dl.bgp
if command -v strace >/dev/null; then
	for at in ftruncate:1 write:2 write:3; do
		"$FB" create dl --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create dl"
		rm -f "$S" "$S".*
		"$FB" add dl dst 2001:db8:3::2 >/dev/null # the operator's, and bgp's too
		{ for i in 1 2 3 4; do ann6 "2001:db8:3::$i/128"; done
		  NB=$NB10 ann6 2001:db8:3::4/128; } | "$FB" bgp dl --state "$S" >/dev/null 2>&1
		{ wd6 2001:db8:3::1/128; wd6 2001:db8:3::2/128; wd6 2001:db8:3::4/128; } >"$T_TMP/in"
		sc=${at%:*}
		(strace -f -qq -o /dev/null -P "$T_TMP/bgp.err" -P "$S.journal" -e trace="$sc" \
			-e inject="$sc":signal=KILL:when="${at#*:}" \
			"$FB" bgp dl --state "$S" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
		check_eq "killed among the deletions ($at): the file no longer holds the withdrawn paths" \
			"$(paths "$S") $(grep -c '^[^#].*2001:db8:3::4/128' "$S")" "1 1"
		"$FB" bgp dl --state "$S" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
		check_eq "... the next run: the withdrawn rules out, the operator's and the one another path holds kept, each counted once" \
			"$(cnt2 1) $(cnt2 2) $(cnt2 3) $(cnt2 4) $(nflows dl)" "0 1 1 1 3"
		"$FB" bgp dl --state "$S" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
		check_eq "... and the run after it deletes none again" \
			"$(cnt2 1) $(cnt2 2) $(cnt2 3) $(cnt2 4) $(grep -c 'deleted\|-dst' "$T_TMP/bgp.err")" "0 1 1 1 1"
		"$FB" destroy dl >/dev/null
	done
	# --ttl: the copies of a withdrawn route ended with their lifetime
	# only; and a run without --ttl after a --ttl one makes the rules
	# permanent, then deletes their copies with a lifetime.
	"$FB" create dl --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create dl"
	rm -f "$S" "$S".*
	{ ann6 2001:db8:3::1/128; ann6 2001:db8:3::2/128; } |
		"$FB" bgp dl --ttl 1h --state "$S" >/dev/null 2>&1
	wd6 2001:db8:3::1/128 >"$T_TMP/in"
	(strace -f -qq -o /dev/null -e trace=ftruncate -e inject=ftruncate:signal=KILL:when=1 \
		"$FB" bgp dl --ttl 1h --state "$S" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
	"$FB" bgp dl --ttl 1h --state "$S" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
	check_eq "--ttl, killed before the deletions: the next run deletes the withdrawn rule's copies" \
		"$(cnt2 1) $(cnt2 2) $(paths "$S")" "0 1 1"
	(strace -f -qq -o /dev/null -e trace=ftruncate -e inject=ftruncate:signal=KILL:when=1 \
		"$FB" bgp dl --state "$S" </dev/null >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
	check_eq "made permanent, killed before the old copies' deletion: the file says permanent" \
		"$(head -1 "$S" | grep -c 'rules permanent') $(cnt2 2)" "1 2"
	"$FB" bgp dl --state "$S" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
	check_eq "... the next run deletes the copies with a lifetime: the rule held once" \
		"$(cnt2 2) $(grep -c -- '-dst' "$T_TMP/bgp.err")" "1 0"
	"$FB" destroy dl >/dev/null
	# STATE.deleted not writable (a full disk): no deletion started (a
	# kill after it could not tell the next run), said once; the next
	# run applies them.
	"$FB" create dl --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create dl"
	rm -f "$S" "$S".*
	{ for i in 1 2 3; do ann6 "2001:db8:3::$i/128"; done; } | "$FB" bgp dl --state "$S" >/dev/null 2>&1
	{ wd6 2001:db8:3::1/128; wd6 2001:db8:3::2/128; } >"$T_TMP/in"
	strace -f -qq -o /dev/null -P "$S.deleted" -e trace=write -e inject=write:error=ENOSPC \
		"$FB" bgp dl --state "$S" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"
	check_eq "STATE.deleted not writable: nothing deleted, said once, each named at the end" \
		"$(cnt2 1) $(cnt2 2) $(grep -c 'cannot write .*dl.bgp.deleted: No space left on device' "$T_TMP/bgp.err") $(grep -c 'still in filter' "$T_TMP/bgp.err")" \
		"1 1 1 2"
	"$FB" bgp dl --state "$S" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
	check_eq "... the next run deletes them" "$(cnt2 1) $(cnt2 2) $(cnt2 3) $(nflows dl)" "0 0 1 1"
	# Notes of garbage, of another commit, past the list, of a failed
	# deletion (not started), and a last one cut short (not started):
	# each deletion not started is applied.
	{ ann6 2001:db8:3::1/128; ann6 2001:db8:3::2/128; } | "$FB" bgp dl --state "$S" >/dev/null 2>&1
	{ wd6 2001:db8:3::1/128; wd6 2001:db8:3::2/128; } >"$T_TMP/in"
	(strace -f -qq -o /dev/null -P "$S.journal" -e trace=ftruncate -e inject=ftruncate:signal=KILL:when=1 \
		"$FB" bgp dl --state "$S" <"$T_TMP/in" >/dev/null 2>"$T_TMP/bgp.err"; :) 2>/dev/null
	c=$(head -1 "$S" | awk '{print $NF}')
	printf 'garbage\n%s\t0\n%s\t7\n%s\t1\tagain\n%s\t0' $((c - 1)) "$c" "$c" "$c" >"$S.deleted"
	"$FB" bgp dl --state "$S" </dev/null >/dev/null 2>"$T_TMP/bgp.err"
	check_eq "notes of garbage, another commit, past the list, a failure, one cut short: both deletions applied, the garbage named" \
		"$(cnt2 1) $(cnt2 2) $(cnt2 3) $(grep -c 'dl.bgp.deleted:1: not COMMIT<TAB>INDEX; skipped' "$T_TMP/bgp.err") $(grep -c '2 deletions due after the last write of .*dl.bgp, not applied by the run that wrote it: applied' "$T_TMP/bgp.err")" \
		"0 0 1 1 1"
	"$FB" destroy dl >/dev/null
else
	skip "bgp killed among its deletions: strace is missing (make deps installs it)"
fi

# --- 7. restarted while a peer restarts --------------------------------------
S=$T_TMP/gr.bgp
up='{"type": "state", "neighbor": {"address": {"local": "198.51.100.2", "peer": "198.51.100.9"}, "state": "up"}}'
down=${up/\"up\"/\"down\"}
eor6() { printf '{"type": "update", %s, "message": {"eor": {"afi": "ipv6", "safi": "unicast"}}}}\n' "$NB"; }
marks() { grep -c '^# stale$' "$1"; }
written() { [ "$(stat -c %s "$S.journal")" = 0 ]; }
"$FB" create gr --capacity 1000 --fp-rate 0.001 --counting >/dev/null || fail "create gr"
start gr "$S"
{ echo "$up"; for i in 1 2 3; do ann6 "2001:db8:4::$i/128"; done; eor6; } >&9
check "3 routes held, none stale" t_wait_until 10 held "$S" 3
# The peer restarts (graceful restart: its routes kept over the loss), and
# announces a new route first: a write.
{ echo "$down"; echo "$up"; ann6 2001:db8:4::4/128; } >&9
check "the session up again, a new route: written" t_wait_until 10 eval 'held "$S" 4 && written'
check_eq "... with the 3 held routes' stale marks" "$(marks "$S")" 3
kill -KILL "$BP"
wait "$BP" 2>/dev/null
BP=""
exec 9>&-
start gr "$S"
{ ann6 2001:db8:4::1/128; eor6; } >&9
check "killed after the write: the peer's End-of-RIB to the next run ends the 2 routes not announced again" \
	t_wait_until 10 held "$S" 2
check_eq "... their rules out, the others in, the filter exactly the state file's" \
	"$(q gr dst 2001:db8:4::1) $(q gr dst 2001:db8:4::2) $(q gr dst 2001:db8:4::3) $(q gr dst 2001:db8:4::4) $(nflows gr) $(marks "$S")" \
	"maybe no no maybe 2 0"
# Marks alone (no path started or ended) make a write too.
{ echo "$down"; echo "$up"; } >&9
check "the session down and up again, nothing else: the 2 marks written" \
	t_wait_until 10 eval '[ "$(marks "$S")" = 2 ] && written'
check "... it ends" stop
"$FB" destroy gr >/dev/null
t_end
