#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom guard --announce`: the record of which guards hold an
# announced route (guard_routes.c) across PID namespaces and past eight
# guards, live: frames sent from one namespace (AF_PACKET) to a veth whose
# XDP program monitors; each guard's stdout (its ExaBGP commands) captured.
#  - guards in different PID namespaces (unshare --pid, one in a container
#    and one on the host, or two containers whose guards are both pid 1 and
#    see the host's /proc): one's ban ending while the other's of the same
#    address is in force does not withdraw the route (it did: each judged
#    the other dead by a pid its own /proc does not have, or took the other
#    for itself), and a guard in a PID namespace killed (SIGKILL) holds
#    nothing;
#  - a ninth guard on one route whose ban ends last is recorded: the eight
#    others' ends do not withdraw it (they did: eight holders were kept and
#    the ninth's hold refused).
# Addresses: 198.51.100.0/24 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin guard_pidns

PIDS=""
cleanup() {
	t_kill $PIDS
	t_cleanup_filters
}
t_traps

unshare --pid --fork --kill-child --mount-proc true 2>/dev/null ||
	t_skip_all "no unshare --pid --fork --kill-child --mount-proc"
t_net_pair --no-ipv6 || t_skip_all "$T_NET_WHY"
t_addr "$NSB" "$VB" 198.51.100.1/24
check "create g" "$FB" create g --capacity 1000 --fp-rate 0.0001
check "attach g with monitoring" "$FB" -n "$NSB" attach g "$VB" --mode generic --action drop --monitor

# guard TAG BAN WHERE OPTION...: a guard of g into BAN (--pps 1040,
# --interval 0.5s, --announce), on the host (WHERE host), in a PID
# namespace of its own with its own /proc (ns), or in one seeing the
# host's /proc (nsproc: it is pid 1 there); its commands in TAG.out, its
# events in TAG.err, its pid (unshare's: killing it kills the guard) P_TAG.
guard() {
	local tag=$1 into=$2 where=$3 pre=()
	shift 3
	case "$where" in
	ns) pre=(unshare --pid --fork --kill-child --mount-proc) ;;
	nsproc) pre=(unshare --pid --fork --kill-child) ;;
	esac
	"${pre[@]}" "$FB" guard g --into "$into" --pps 1040 --interval 0.5s --announce "$@" \
		>"$T_TMP/$tag.out" 2>"$T_TMP/$tag.err" &
	eval "P_$tag=$!"
	PIDS="$PIDS $!"
}
lines() { grep -c -e "$2" "$T_TMP/$1.out"; }
WD='^withdraw route 198.51.100.7/32 next-hop self$'
events() { grep -c "guard: $2 src 198.51.100.7[: ]" "$T_TMP/$1.err"; }
banned() { [ "$(events "$1" ban)" -ge 1 ]; }
ended() { [ "$(events "$1" unban)" -ge 1 ]; }

for f in p1 p2 p3 p4 p9; do
	check "create $f" "$FB" create $f --capacity 1000 --fp-rate 0.0001
done
# p1: a 2 s ban on the host, a 20 s one in a PID namespace. p2: the other
# way round. p3: both in PID namespaces of their own, both pid 1 under
# the host's /proc. p4: as p1, the namespace's guard killed.
guard s1 p1 host --ttl 2s
guard l1 p1 ns --ttl 20s
guard s2 p2 ns --ttl 2s
guard l2 p2 host --ttl 20s
guard s3 p3 nsproc --ttl 2s
guard l3 p3 nsproc --ttl 20s
guard s4 p4 host --ttl 2s
guard l4 p4 ns --ttl 20s
for p in $PIDS; do
	t_wait_until 10 t_looping "$p" || fail "a guard not running: $(cat "$T_TMP"/*.err)"
done
t_send_paced 1.5 198.51.100.7=2000
for t in s1 l1 s2 l2 s3 l3 s4 l4; do
	t_wait_until 20 banned $t || fail "$t: .7 not banned: $(cat "$T_TMP/$t.err")"
done
kill -KILL "$P_l4"
{ wait "$P_l4"; } 2>/dev/null
for t in s1 s2 s3 s4; do
	t_wait_until 10 ended $t || fail "$t: .7's ban never ended"
done
check_eq "p1: the host guard's 2 s ban ended, a PID namespace's guard's in force: not withdrawn" \
	"$(lines s1 "$WD")" 0
check_eq "p2: a PID namespace's guard's 2 s ban ended, the host guard's in force: not withdrawn" \
	"$(lines s2 "$WD")" 0
check_eq "p3: two PID namespaces' pid 1 guards: the 2 s ban ended, the other's in force: not withdrawn" \
	"$(lines s3 "$WD")" 0
check_eq "p4: the 2 s ban ended, the PID namespace's guard killed: withdrawn" "$(lines s4 "$WD")" 1
for p in $(t_ours $PIDS); do
	kill -KILL "$p" 2>/dev/null
	{ wait "$p"; } 2>/dev/null
done
PIDS=""

# p9: eight guards ban .7 (3 s), then a ninth (20 s): the eight bans end
# while the ninth's is in force: none of them withdraws the route.
G9="a b c d e f g h"
for t in $G9; do
	guard "$t" p9 host --ttl 3s
done
for p in $PIDS; do
	t_wait_until 10 t_looping "$p" || fail "a guard not running"
done
t_send_paced 5 198.51.100.7=2000 &
SP=$!
for t in $G9; do
	t_wait_until 20 banned "$t" || fail "$t: .7 not banned: $(cat "$T_TMP/$t.err")"
done
guard n9 p9 host --ttl 20s
t_wait_until 10 banned n9 || fail "n9: .7 not banned: $(cat "$T_TMP/n9.err")"
wait "$SP"
for t in $G9; do
	t_wait_until 10 ended "$t" || fail "$t: .7's ban never ended"
done
check_eq "p9: eight guards' bans ended, a ninth's in force: not withdrawn" \
	"$(cat "$T_TMP"/[a-h].out | grep -c -e "$WD")" 0
check_eq "... n9 still holds .7 (no unban)" "$(events n9 unban)" 0
kill -TERM "$P_n9"
wait "$P_n9"
check_eq "p9: the ninth guard stopped (exit 0)" "$?" 0
check_eq "... none other's ban in force: it withdraws" "$(lines n9 "$WD")" 1
for p in $(t_ours $PIDS); do
	kill -TERM "$p" 2>/dev/null
	{ wait "$p"; } 2>/dev/null
done
PIDS=""
t_finish
