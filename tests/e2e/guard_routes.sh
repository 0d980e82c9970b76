#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom guard --announce`: guards banning one address into one BAN
# and announcing it (to one ExaBGP, a process each), live: frames sent
# from one namespace (AF_PACKET) to a veth whose XDP program monitors;
# each guard's stdout (its ExaBGP commands) captured.
#  - one guard's ban ends while another's of the same address is in force:
#    its route is not withdrawn (it was: the peer stopped blocking an
#    address one guard still banned);
#  - one guard stops while another's ban of the address is in force: the
#    route is not withdrawn (it was), and the last guard whose ban of it
#    ends withdraws it;
#  - the route stays only for a guard that announces it: a ban of a guard
#    without --announce, or of a guard killed (SIGKILL), or a FlowSpec
#    route beside a blackhole, keeps no route announced;
#  - the record full of routes killed guards left (SIGKILL: nothing
#    released) makes room: a guard's route is still held (it was not:
#    every hold failed, E2BIG, and the other guard's ban end withdrew it),
#    and the killed guards' routes, their bans over, are withdrawn (they
#    were forgotten, left announced with no guard to withdraw them).
# Addresses: 198.51.100.0/24 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin guard_routes

PIDS=""
cleanup() {
	t_kill $PIDS
	t_cleanup_filters
}
t_traps

t_net_pair --no-ipv6 || t_skip_all "$T_NET_WHY"
t_addr "$NSB" "$VB" 198.51.100.1/24
check "create g" "$FB" create g --capacity 1000 --fp-rate 0.0001
check "attach g with monitoring" "$FB" -n "$NSB" attach g "$VB" --mode generic --action drop --monitor

# send SECS SRC=PPS...: UDP frames from SRC to .1 at PPS, paced, through VA.
send() {
	t_send_paced "$@"
}
# guard TAG BAN OPTION...: a guard of g into BAN (--pps 1040, --interval
# 0.5s), its commands in TAG.out, its events in TAG.err, its pid P_TAG.
guard() {
	local tag=$1 into=$2
	shift 2
	"$FB" guard g --into "$into" --pps 1040 --interval 0.5s "$@" >"$T_TMP/$tag.out" 2>"$T_TMP/$tag.err" &
	eval "P_$tag=$!"
	PIDS="$PIDS $!"
}
# lines TAG PATTERN: how many lines of TAG's commands match PATTERN.
lines() { grep -c -e "$2" "$T_TMP/$1.out"; }
ANN='^announce route 198.51.100.7/32 next-hop self community \[65535:666\]$'
WD='^withdraw route 198.51.100.7/32 next-hop self$'
# events TAG WHAT: how many WHAT events (ban, unban) TAG said for .7.
events() { grep -c "guard: $2 src 198.51.100.7[: ]" "$T_TMP/$1.err"; }

for f in r1 r3 r4 r5 r6; do
	check "create $f" "$FB" create $f --capacity 1000 --fp-rate 0.0001
done
# r1: two announcing guards, bans of 2 s and 20 s. r3: the 20 s guard
# does not announce. r4: the 20 s guard is killed. r5: the 2 s guard
# announces FlowSpec, the 20 s one a blackhole (two routes).
guard s1 r1 --ttl 2s --announce
guard l1 r1 --ttl 20s --announce
guard s3 r3 --ttl 2s --announce
guard l3 r3 --ttl 20s
guard s4 r4 --ttl 2s --announce
guard l4 r4 --ttl 20s --announce
guard s5 r5 --ttl 2s --announce --flowspec
guard l5 r5 --ttl 20s --announce
# r6: its record of routes (1024, as a guard makes it for r6) full of
# routes of guards killed long ago (pid 4194303, start 1: no such process),
# their bans' ends never reached; the map as guard pins it.
if command -v bpftool >/dev/null; then
	R6="$FLOWBLOOM_ROOT/r6/guard_routes"
	bpftool map create "$R6" type hash key 24 value 192 entries 1024 name fb_guard flags 1 ||
		fail "r6: create its guard_routes with bpftool"
	"$PY" -c '
import sys
for i in range(1024):
    key = bytes([0x20, 0x01, 0x0d, 0xb8] + [0] * 10 + [i >> 8, i & 255, 1, 1] + [0] * 6)
    val = (4194303).to_bytes(4, "little") + bytes(4) + (1).to_bytes(8, "little") + b"\xff" * 8
    val += bytes(192 - len(val))
    print("map update pinned %s key hex %s value hex %s" % (sys.argv[1], " ".join("%02x" % b for b in key), " ".join("%02x" % b for b in val)))
' "$R6" >"$T_TMP/r6.batch"
	guard s6 r6 --ttl 2s --announce
	guard l6 r6 --ttl 20s --announce
	G6="s6 l6"
else
	skip "r6: no bpftool"
	G6=""
fi
for p in $PIDS; do
	t_wait_until 10 t_looping "$p"
done
# Filled once its guards run (a guard starting withdraws such routes at
# once: guard_restart.sh).
[ -z "$G6" ] || bpftool batch file "$T_TMP/r6.batch" >/dev/null || fail "r6: fill its guard_routes"
send 1.5 198.51.100.7=2000
for t in s1 l1 s3 l3 s4 l4 s5 l5 $G6; do
	t_wait_until 20 eval "[ \$(events $t ban) -ge 1 ]" || fail "$t: .7 not banned: $(cat "$T_TMP/$t.err")"
done
kill -KILL "$P_l4"
wait "$P_l4" 2>/dev/null
for t in s1 s3 s4 s5 ${G6%% *}; do
	t_wait_until 10 eval "[ \$(events $t unban) -ge 1 ]" || fail "$t: .7's ban never ended"
done
check_eq "r1: both guards announced .7" "$(lines s1 "$ANN") $(lines l1 "$ANN")" "1 1"
check_eq "... the 2 s ban ended, the other guard's in force: its route not withdrawn" \
	"$(lines s1 "$WD")" 0
check_eq "r3: the 2 s ban ended, the other guard's does not announce: withdrawn" \
	"$(lines s3 "$WD")" 1
check_eq "r4: the 2 s ban ended, the other guard killed: withdrawn" "$(lines s4 "$WD")" 1
check_eq "r5: the 2 s ban's FlowSpec route withdrawn beside the other's blackhole" \
	"$(lines s5 '^withdraw flow route { match { source 198.51.100.7/32; } }$')" 1
if [ -n "$G6" ]; then
	check_eq "r6: its record full of killed guards' routes: the 2 s ban ended, the other's in force: not withdrawn" \
		"$(lines s6 "$WD")" 0
	check_eq "... no hold refused for room" "$(cat "$T_TMP/s6.err" "$T_TMP/l6.err" | grep -c 'cannot record')" 0
	check_eq "... each killed guard's route withdrawn once to make it (they were forgotten, announced for good)" \
		"$(cat "$T_TMP/s6.out" "$T_TMP/l6.out" | grep '^withdraw route 2001:db8:' | sort -u | wc -l) $(cat "$T_TMP/s6.out" "$T_TMP/l6.out" | grep -c '^withdraw route 2001:db8:')" "1024 1024"
fi

# r1 again: .7 floods, the 2 s guard bans it again; the 20 s guard stops
# with its ban in force, the 2 s guard's too: no withdrawal. The 2 s
# guard's ends: it withdraws.
send 1.5 198.51.100.7=2000
t_wait_until 20 eval "[ \$(events s1 ban) -ge 2 ]" || fail "s1: .7 not banned again: $(cat "$T_TMP/s1.err")"
check_eq "r1: .7 announced again by the 2 s guard" "$(lines s1 "$ANN")" 2
kill -TERM "$P_l1"
wait "$P_l1"
check_eq "r1: the 20 s guard stopped (exit 0)" "$?" 0
check_eq "... the other guard's ban of .7 in force: its route not withdrawn" "$(lines l1 "$WD")" 0
t_wait_until 10 eval "[ \$(events s1 unban) -ge 2 ]" || fail "s1: .7's second ban never ended"
check_eq "... the 2 s guard's ban ended, none other in force: withdrawn" "$(lines s1 "$WD")" 1

# The guards still running (an ended one's pid may be another's now).
for p in $(t_ours $PIDS); do
	kill -TERM "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
PIDS=""
check_eq "r1: stopped with no ban in force: nothing more withdrawn" "$(lines s1 "$WD")" 1
t_finish
