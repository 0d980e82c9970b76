#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom guard --announce` started after a guard that was killed
# (SIGKILL: systemd's Restart=on-failure, ExaBGP's respawn), live: frames
# sent from one namespace (AF_PACKET) to a veth whose XDP program
# monitors; each guard's stdout (its ExaBGP commands) captured.
#  - the killed guard's route whose ban has ended is withdrawn at the start
#    (it was not: ExaBGP kept announcing a route no guard would ever
#    withdraw);
#  - its route whose ban is still in force is taken over: kept while the
#    ban lasts, withdrawn at its end (it was never withdrawn), or when the
#    new guard stops;
#  - a route a running guard holds, and a route no guard recorded (an
#    operator's own), are left alone; so is everything in a dry run;
#  - a FlowSpec route a killed guard left is withdrawn as FlowSpec by a
#    guard announcing blackholes.
# Addresses: 198.51.100.0/24 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin guard_restart

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
ann() { echo "^announce route 198.51.100.$1/32 next-hop self community \[65535:666\]\$"; }
wd() { echo "^withdraw route 198.51.100.$1/32 next-hop self\$"; }
# events TAG WHAT N: how many WHAT events (ban, unban) TAG said for .N.
events() { grep -c "guard: $2 src 198.51.100.$3[: ]" "$T_TMP/$1.err"; }
looping() {
	local p
	for p in "$@"; do
		t_wait_until 10 t_looping "$p" || fail "guard $p never ran its loop"
	done
}

# only N: a --never file of the other flooding addresses (.6 to .9).
only() {
	local a
	for a in 6 7 8 9; do
		[ "$a" == "$1" ] || echo "198.51.100.$a"
	done >"$T_TMP/only$1"
	echo "$T_TMP/only$1"
}
for f in r1 r2 r3 r4; do
	check "create $f" "$FB" create $f --capacity 1000 --fp-rate 0.0001
done
# r1: .7 banned for 2 s, .8 for 30 s, by guards then killed. r2: .9's ban
# held by a running guard and by a killed one. r4: a FlowSpec route of .7
# left by a killed guard.
guard k7 r1 --ttl 2s --announce --never "$(only 7)"
guard k8 r1 --ttl 30s --announce --never "$(only 8)"
guard k9 r2 --ttl 30s --announce --never "$(only 9)"
guard l9 r2 --ttl 30s --announce --never "$(only 9)"
guard f7 r4 --ttl 2s --announce --flowspec --never "$(only 7)"
looping $P_k7 $P_k8 $P_k9 $P_l9 $P_f7
t_send_paced 1.5 198.51.100.7=2000@0-1.5 198.51.100.8=2000@0-1.5 198.51.100.9=2000@0-1.5
for t in "k7 7" "k8 8" "k9 9" "l9 9" "f7 7"; do
	t_wait_until 20 eval "[ \$(events ${t% *} ban ${t#* }) -ge 1 ]" ||
		fail "${t% *}: .${t#* } not banned: $(cat "$T_TMP/${t% *}.err")"
done
kill -KILL $P_k7 $P_k8 $P_k9 $P_f7
wait $P_k7 $P_k8 $P_k9 $P_f7 2>/dev/null
check_eq "the killed guards announced and withdrew nothing more" \
	"$(lines k7 "$(ann 7)") $(lines k8 "$(ann 8)") $(lines k9 "$(ann 9)") $(cat "$T_TMP"/k[789].out | grep -c withdraw)" "1 1 1 0"
# .7's 2 s ban ends (by 2.5 s): a dry run first changes nothing, then a
# guard restarted into r1 withdraws .7's route at once, takes .8's over.
sleep 3
guard d1 r1 --ttl 30s --announce --dry-run
looping $P_d1
guard n1 r1 --ttl 30s --announce
looping $P_n1
check_eq "r1: a dry run withdraws nothing" "$(wc -l <"$T_TMP/d1.out")" 0
check_eq "r1: the restarted guard withdrew .7's route (its ban ended) at once" "$(lines n1 "$(wd 7)")" 1
check_eq "... not .8's (its ban in force)" "$(lines n1 "$(wd 8)")" 0
check_eq "... nor anything else" "$(wc -l <"$T_TMP/n1.out")" 1
kill -TERM $P_d1
wait $P_d1
# A second guard started now: .8 is held by the running one.
guard m1 r1 --ttl 30s --announce
looping $P_m1
kill -TERM $P_m1
wait $P_m1
check_eq "r1: a guard started beside it withdraws nothing (.8 held by a running guard)" \
	"$(wc -l <"$T_TMP/m1.out")" 0
# The restarted guard stops: the route it took over is withdrawn.
kill -TERM $P_n1
wait $P_n1
check_eq "r1: the restarted guard stopped (exit 0)" "$?" 0
check_eq "... withdrawing .8's route it took over" "$(lines n1 "$(wd 8)")" 1

# r2: .9 held by the running l9 too: a guard started into r2 leaves it.
guard n2 r2 --ttl 30s --announce
looping $P_n2
sleep 1
kill -TERM $P_n2
wait $P_n2
check_eq "r2: .9 held by a running guard beside a killed one: not withdrawn, not taken" \
	"$(wc -l <"$T_TMP/n2.out")" 0
kill -TERM $P_l9
wait $P_l9
check_eq "r2: the running guard stopping withdraws it" "$(lines l9 "$(wd 9)")" 1

# r3: no guard recorded anything (an operator's own routes are ExaBGP's):
# nothing withdrawn.
guard n3 r3 --ttl 30s --announce
looping $P_n3
kill -TERM $P_n3
wait $P_n3
check_eq "r3: nothing recorded, nothing withdrawn" "$(wc -l <"$T_TMP/n3.out")" 0

# r4: a FlowSpec route left: withdrawn as FlowSpec by a blackhole guard.
guard n4 r4 --ttl 30s --announce
looping $P_n4
kill -TERM $P_n4
wait $P_n4
check_eq "r4: the killed guard's FlowSpec route withdrawn as it was announced" \
	"$(cat "$T_TMP/n4.out")" "withdraw flow route { match { source 198.51.100.7/32; } }"

# A ban taken over ends while its guard runs: withdrawn at its end.
check "create r5" "$FB" create r5 --capacity 1000 --fp-rate 0.0001
guard k5 r5 --ttl 4s --announce
looping $P_k5
t_send_paced 1 198.51.100.6=2000
t_wait_until 20 eval "[ \$(events k5 ban 6) -ge 1 ]" || fail "k5: .6 not banned: $(cat "$T_TMP/k5.err")"
kill -KILL $P_k5
wait $P_k5 2>/dev/null
guard n5 r5 --ttl 30s --announce
looping $P_n5
check_eq "r5: .6's ban in force: taken over, not withdrawn at the start" "$(wc -l <"$T_TMP/n5.out")" 0
t_wait_until 20 eval "[ \$(lines n5 '$(wd 6)') -ge 1 ]"
check_eq "... withdrawn at its end (within 4 s + 1 s)" "$(lines n5 "$(wd 6)")" 1
kill -TERM $P_n5
wait $P_n5
check_eq "... and not again when the guard stops" "$(lines n5 "$(wd 6)")" 1
PIDS=""
t_finish
