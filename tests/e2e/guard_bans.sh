#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom guard`: the bans in force in BAN, whoever placed them, live:
# frames with any source sent from one namespace (AF_PACKET) to a veth
# whose XDP program monitors.
#  - an earlier guard's bans each count until their own end (they counted,
#    all of them, until the last ended: flowbloom_guard_active_bans said 2
#    with one ban in force, and a guard's --max-bans 2 refused a new one);
#  - a dry run counts them against --max-bans as the real run does (it
#    counted none: it reported bans the real run refuses);
#  - bans the generations replaced took away (load --replace --ttl) are
#    no longer counted (they were, until their end);
#  - two guards banning into one BAN at once: the gauge is the bans in
#    force in BAN, theirs together (each wrote its own count over the
#    other's), and one's --max-bans counts the other's bans.
# Addresses: 198.51.100.0/24 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin guard_bans

cleanup() {
	local p
	for p in ${GPID:-} ${HPID:-}; do
		kill "$p" 2>/dev/null
	done
	t_cleanup_filters
}
t_traps

t_net_pair --no-ipv6 || t_skip_all "$T_NET_WHY"
t_addr "$NSB" "$VB" 198.51.100.1/24
check "create g" "$FB" create g --capacity 1000 --fp-rate 0.0001
check "attach g with monitoring" "$FB" -n "$NSB" attach g "$VB" --mode generic --action drop --monitor

# send SECS SRC=PPS[@FROM-TO]...: UDP frames from SRC to .1 at PPS, paced,
# from FROM to TO s (all SECS without), through VA.
send() {
	inA "$PY" -c 'import sys; from pkt import send_paced; send_paced(sys.argv[1], float(sys.argv[2]), sys.argv[3:])' "$VA" "$@"
}
# guarded INTO ERR SRC [OPTION...]: a guard of g into INTO (--pps 1040,
# --interval 0.5s, --count 3, OPTION...) over 1.8 s of SRC at 2000 pps;
# what it says in ERR.
guarded() {
	local into=$1 err=$2 src=$3
	shift 3
	"$FB" guard g --into "$into" --pps 1040 --interval 0.5s --count 3 "$@" 2>"$err" >/dev/null &
	HPID=$!
	t_wait_until 10 t_looping "$HPID"
	send 1.8 "$src=2000"
	wait "$HPID"
	HPID=""
}
# active F: flowbloom_guard_active_bans of F.
active() { "$FB" metrics "$1" | awk -v m="flowbloom_guard_active_bans{filter=\"$1\"}" '$1 == m { print $2 }'; }
in_force() { "$FB" query "$1" "$2" "$3" | grep -q '^maybe'; }

# --- an earlier guard's bans, each until its own end ---------------------------------
# .8 floods 1.5 s, .9 6 s: the first guard (TTL 6 s) stops with both in
# force, .8's ending some 4 s before .9's.
check "create rs" "$FB" create rs --capacity 1000 --fp-rate 0.0001
"$FB" guard g --into rs --pps 1040 --ttl 6s --interval 0.5s 2>"$T_TMP/rs1.err" >/dev/null &
GPID=$!
t_wait_until 10 t_looping "$GPID"
send 6 198.51.100.8=2000@0-1.5 198.51.100.9=2000
kill -TERM "$GPID"
wait "$GPID"
GPID=""
check "the first guard banned .8" grep -q "ban src 198.51.100.8" "$T_TMP/rs1.err"
check "... and .9" grep -q "ban src 198.51.100.9" "$T_TMP/rs1.err"
if ! in_force rs src 198.51.100.8; then
	fail "rs: .8's ban ended before the first guard stopped (a loaded machine): $(cat "$T_TMP/rs1.err")"
else
	check_eq "the first guard stopped with 2 bans in force: 2 active bans" "$(active rs)" 2
	t_wait_until 10 eval '! in_force rs src 198.51.100.8' || fail "rs: .8 still banned 10 s later"
	if in_force rs src 198.51.100.9; then
		check_eq ".8's ban ended, .9's in force: 1 active ban" "$(active rs)" 1
		# --max-bans 2: .9's ban in force, room for .6.
		guarded rs "$T_TMP/rs2.err" 198.51.100.6 --ttl 6s --max-bans 2
		check "... a guard's --max-bans 2 counts only .9's ban: .6 banned" \
			grep -q "ban src 198.51.100.6" "$T_TMP/rs2.err"
	else
		fail "rs: .9's ban ended with .8's (a loaded machine): $(cat "$T_TMP/rs1.err")"
	fi
fi

# --- a dry run counts them against --max-bans ----------------------------------------
check "create dr" "$FB" create dr --capacity 1000 --fp-rate 0.0001
"$FB" guard g --into dr --pps 1040 --ttl 30s --interval 0.5s 2>"$T_TMP/dr1.err" >/dev/null &
GPID=$!
t_wait_until 10 t_looping "$GPID"
send 1.5 198.51.100.8=2000
kill -TERM "$GPID"
wait "$GPID"
GPID=""
check "dr: a guard left .8 banned" in_force dr src 198.51.100.8
for run in dry real; do
	flag=""
	[ "$run" = dry ] && flag=--dry-run
	guarded dr "$T_TMP/dr-$run.err" 198.51.100.6 --ttl 30s --max-bans 1 $flag
	check "dr, $run run, --max-bans 1: .6 not banned, .8's ban counted" \
		grep -q "not banned src 198.51.100.6.*ban limit 1 reached: 1 bans in force" "$T_TMP/dr-$run.err"
done
check "... nor in dr" bash -c "'$FB' query dr src 198.51.100.6 | grep -q '^no '"
# The generations replaced (load --replace --ttl): .8's ban is gone from
# dr, and from the count (the record still counted it until its end:
# the gauge said 1, and --max-bans 1 refused .6 with no ban in force).
echo "src 198.51.100.250" >"$T_TMP/dr-rules"
check "dr: load --replace --ttl" "$FB" load dr "$T_TMP/dr-rules" --replace --ttl 1m
check "... .8's ban gone from dr" bash -c "'$FB' query dr src 198.51.100.8 | grep -q '^no '"
check_eq "... and from the count: 0 active bans" "$(active dr)" 0
guarded dr "$T_TMP/dr-replaced.err" 198.51.100.6 --ttl 30s --max-bans 1 --dry-run
check "... a dry run's --max-bans 1 has room for .6" grep -q "ban src 198.51.100.6" "$T_TMP/dr-replaced.err"
check "... and counts nothing else in force" bash -c "! grep -q 'not banned' '$T_TMP/dr-replaced.err'"

# --- two guards into one BAN at once -------------------------------------------------
# One bans by source (.7, .8), the other by destination (.1): 3 bans in
# force in tw, whichever wrote last.
check "create tw" "$FB" create tw --capacity 1000 --fp-rate 0.0001
"$FB" guard g --into tw --pps 1040 --ttl 30s --interval 0.5s 2>"$T_TMP/tw-src.err" >/dev/null &
GPID=$!
"$FB" guard g --into tw --by dst --pps 1040 --ttl 30s --interval 0.5s 2>"$T_TMP/tw-dst.err" >/dev/null &
HPID=$!
t_wait_until 10 t_looping "$GPID"
t_wait_until 10 t_looping "$HPID"
send 2 198.51.100.7=2000 198.51.100.8=2000
check "tw: .7 banned by source" grep -q "ban src 198.51.100.7" "$T_TMP/tw-src.err"
check "... .8 too" grep -q "ban src 198.51.100.8" "$T_TMP/tw-src.err"
check "... .1 by destination" grep -q "ban dst 198.51.100.1" "$T_TMP/tw-dst.err"
# The gauge, read over 2 s: the guards write every half second.
seen=""
for _ in 1 2 3 4 5 6 7 8; do
	seen="$seen $(active tw)"
	sleep 0.25
done
check_eq "two guards: 3 active bans, whichever wrote last (read:$seen)" \
	"$(echo $seen | tr ' ' '\n' | sort -u | tr '\n' ' ')" "3 "
kill -TERM "$GPID" "$HPID"
wait "$GPID" "$HPID"
GPID="" HPID=""
check_eq "... and 3 when both stopped" "$(active tw)" 3
# Their bans, all of them, against a dry run's --max-bans 3.
guarded tw "$T_TMP/tw-dry.err" 198.51.100.5 --ttl 30s --max-bans 3 --dry-run
check "... a dry run's --max-bans 3 counts both guards' bans: .5 not banned" \
	grep -q "not banned src 198.51.100.5.*ban limit 3 reached: 3 bans in force" "$T_TMP/tw-dry.err"
t_finish
