#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom guard` under a flood from hundreds of spoofed sources, live:
# frames sent from one namespace (AF_PACKET) to a veth whose XDP program
# monitors by source address; each guard's stdout (its ExaBGP commands)
# captured.
#  - without --max-bans, guard bans and announces every source above the
#    threshold, up to BAN's capacity (hundreds of routes upstream), and
#    says so at the start (it did not: an operator learnt the bound when
#    a peer's maximum-prefix limit closed the session);
#  - with --max-bans N, the routes announced stay at N, for two guards
#    banning into one BAN at once, and for a guard restarted (SIGKILL)
#    while the storm goes on;
#  - a source spoofed to be an address in --never is not banned.
# Addresses: 198.51.100.0/24 and 203.0.113.0/24 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin guard_storm

PIDS=""
cleanup() {
	t_kill $PIDS
	t_cleanup_filters
}
t_traps

t_net_pair --no-ipv6 || t_skip_all "$T_NET_WHY"
t_addr "$NSB" "$VB" 198.51.100.1/24
check "create g" "$FB" create g --capacity 1000 --fp-rate 0.0001
check "attach g with monitoring by source" "$FB" -n "$NSB" attach g "$VB" --mode generic --action monitor --sketch-by src

guard() {
	local tag=$1 into=$2
	shift 2
	"$FB" guard g --into "$into" --pps 10 --interval 0.5s --ttl 30s --announce "$@" \
		>"$T_TMP/$tag.out" 2>"$T_TMP/$tag.err" &
	eval "P_$tag=$!"
	PIDS="$PIDS $!"
}
looping() {
	local p
	for p in "$@"; do
		t_wait_until 10 t_looping "$p" || fail "guard $p never ran its loop"
	done
}
# routes TAG...: the distinct routes TAGs announced.
routes() {
	local t
	for t in "$@"; do cat "$T_TMP/$t.out"; done | grep '^announce route' | sort -u | wc -l
}
active() { "$FB" metrics "$1" | awk '$1 ~ /^flowbloom_guard_active_bans/ { print $2 }'; }

# 400 sources at 40 pps each, .53 (a resolver, listed in --never) among them.
SRCS=()
for i in $(seq 10 209); do SRCS+=("198.51.100.$i=40"); done
for i in $(seq 10 209); do SRCS+=("203.0.113.$i=40"); done
echo 203.0.113.53 >"$T_TMP/never"

for f in a b c; do
	check "create $f" "$FB" create $f --capacity 100000 --fp-rate 0.0001
done
guard a a --never "$T_TMP/never"
guard b1 b --max-bans 50
guard b2 b --max-bans 50
guard c1 c --max-bans 50
looping $P_a $P_b1 $P_b2 $P_c1
t_send_paced 2 "${SRCS[@]}"
kill -KILL $P_c1
wait $P_c1 2>/dev/null
guard c2 c --max-bans 50
looping $P_c2
t_send_paced 2 "${SRCS[@]}"
# (a's and c's routes as they come, not after a fixed 1 s: 20 s at most)
t_wait_until 20 eval '[ "$(routes a)" -ge 300 ] && [ "$(routes c1 c2)" -ge 50 ]'
N=$(routes a)
echo "# no --max-bans: $N routes announced for 400 sources"
[ "$N" -ge 300 ] || fail "a: $N routes: the storm was not seen ($(tail -3 "$T_TMP/a.err"))"
check "a: --announce without --max-bans: said at the start, with the bound (BAN's capacity)" \
	grep -q "note: --announce without --max-bans: up to 100000 routes" "$T_TMP/a.err"
check_eq "b: ... not with --max-bans" "$(grep -c 'without --max-bans' "$T_TMP/b1.err")" 0
check_eq "a: the --never source was not banned" "$(grep -c '203.0.113.53/32' "$T_TMP/a.out")" 0
check_eq "a: ... but spared" "$(grep -c 'spare src 203.0.113.53' "$T_TMP/a.err")" 1
check_eq "b: two guards with --max-bans 50: 50 routes announced between them" "$(routes b1 b2)" 50
check_eq "... 50 bans in force" "$(active b)" 50
check_eq "c: a guard killed and restarted in the storm, --max-bans 50: 50 routes" "$(routes c1 c2)" 50
check_eq "... 50 bans in force" "$(active c)" 50
for p in $(t_ours $PIDS); do
	kill -TERM "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
PIDS=""
check_eq "b: every route withdrawn when the guards stopped" \
	"$(cat "$T_TMP/b1.out" "$T_TMP/b2.out" | grep '^withdraw route' | sort -u | wc -l)" 50
check_eq "c: ... the killed guard's too, by the one restarted, each once" \
	"$(grep '^withdraw route' "$T_TMP/c2.out" | sort -u | wc -l) $(grep -c '^withdraw route' "$T_TMP/c2.out")" "50 50"
t_finish
