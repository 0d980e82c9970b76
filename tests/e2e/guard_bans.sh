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
#    other's), and one's --max-bans counts the other's bans;
#  - a guard whose read of the record fails (strace injects the fault)
#    keeps another guard's later end (it wrote its own over it: the 30 s
#    ban counted as ended with its 2 s one).
# Addresses: 198.51.100.0/24 only.
source "$(dirname "$0")/../lib/lib.sh"
t_begin guard_bans

cleanup() {
	t_kill ${GPID:-} ${HPID:-}
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
	t_send_paced "$@"
}
# guarded INTO ERR SRC [OPTION...]: a guard of g into INTO (--pps 1040,
# --interval 0.5s, OPTION...) over 1.8 s of SRC at 2000 pps, stopped
# (SIGTERM) once the sender is done, not after a count of intervals (a
# loaded machine starts the sender late); what it says in ERR.
guarded() {
	local into=$1 err=$2 src=$3
	shift 3
	"$FB" guard g --into "$into" --pps 1040 --interval 0.5s "$@" 2>"$err" >/dev/null &
	HPID=$!
	t_wait_until 10 t_looping "$HPID"
	send 1.8 "$src=2000"
	kill -TERM "$HPID"
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

# --- the record's read refused: another guard's later end stays ----------------------
# Guards leave .8 banned for 90 s in pa, pb1 to pb4; a 2 s guard bans it
# again: into pa traced, to find its read of .8's recorded end (the last
# bpf lookup before it unlocks BAN after writing the ban), into pbN with
# that read, and the one after (guard reads again), made to fail. pbN's
# record still says 90 s once the 2 s ban has ended. The aim: the calls
# after guard's probes of the kernel's jiffies (1 to 3, 2 bpf calls each,
# as fast as they come) are the same each run; each try on a filter of
# its own, the probes it made guessed, until the fault lands.
if ! command -v strace >/dev/null; then
	skip "the record's read refused: strace is not installed (make deps installs it)"
else
	GP=""
	for f in pa pb1 pb2 pb3 pb4; do
		"$FB" create $f --capacity 1000 --fp-rate 0.0001 >/dev/null || fail "create $f"
		"$FB" guard g --into $f --pps 1040 --ttl 30s --interval 0.5s 2>"$T_TMP/$f.err" >/dev/null &
		GP="$GP $!"
		t_wait_until 10 t_looping "$!"
	done
	send 1.8 198.51.100.8=2000
	kill -TERM $GP
	wait $GP
	check "pa, pb1..4: a guard left .8 banned" eval 'for f in pa pb1 pb2 pb3 pb4; do in_force $f src 198.51.100.8 || exit 1; done'
	# faulted BAN [WHEN]: the 2 s guard into BAN (--count 1) under strace,
	# its bpf calls WHEN (strace -e inject's when) failing, its bpf and
	# flock calls in BAN.trace, .8 at 2000 pps from before it starts.
	# (Started 0.5 s after the sender: started once the flood is seen,
	# the guard's calls before the ban varied between runs and pb1..4's
	# aim, taken from pa's, missed now and then.)
	faulted() {
		t_send_paced 2 198.51.100.8=2000 &
		HPID=$!
		sleep 0.5
		strace -f -qq -o "$T_TMP/$1.trace" -e trace=bpf,flock ${2:+-e inject=bpf:error=EFAULT:when=$2} \
			"$FB" guard g --into "$1" --pps 1040 --ttl 2s --interval 0.5s --count 1 2>"$T_TMP/$1.err2" >/dev/null
		wait "$HPID"
		HPID=""
	}
	# The aim, from pa's run, may miss on a loaded machine (the guard's
	# calls before its ban vary with when it meets the flood): three tries.
	landed="" why=""
	for try in 1 2 3; do
		faulted pa
		# "AIM PROBES": the read's bpf call after the probes' calls, the probes.
		aim=$("$PY" -c '
import sys
n = wrote = look = probes = 0
for line in open(sys.argv[1]):
    if "bpf(" in line:
        n += 1
        probes += "BPF_PROG_TEST_RUN" in line
        wrote = wrote or "BPF_MAP_UPDATE_" in line
        look = n if "BPF_MAP_LOOKUP_ELEM" in line else look
    elif "LOCK_UN" in line and wrote:
        print(look - 2 * probes, probes)
        break' "$T_TMP/pa.trace")
		if [ -z "$aim" ] || ! grep -q "ban src 198.51.100.8" "$T_TMP/pa.err2"; then
			why="pa: the 2 s guard banned nothing to aim at: $(cat "$T_TMP/pa.err2")"
			continue
		fi
		why="pb1..4: the fault never landed on the record's reads"
		set -- $aim
		at=$1 n=1
		for p in $2 3 1 2; do
			f=pb$n n=$((n + 1))
			faulted $f "$((at + 2 * p))..$((at + 2 * p + 2))+2"
			fd=$(grep 'pathname="guard_bans"' "$T_TMP/$f.trace" | sed 's/.*= //')
			if grep -m1 INJECTED "$T_TMP/$f.trace" | grep -q "BPF_MAP_LOOKUP_ELEM, {map_fd=$fd," &&
				grep -q "ban src 198.51.100.8" "$T_TMP/$f.err2"; then
				landed=$f
				break
			fi
		done
		[ -n "$landed" ] && break
	done
	[ -n "$landed" ] || fail "$why (3 tries)"
	if [ -n "$landed" ]; then
		sleep 3
		check "$landed: the 2 s ban ended, the 90 s one in force" in_force $landed src 198.51.100.8
		check_eq "... the record's reads refused: still counted (1 active ban)" "$(active $landed)" 1
		check "... the end kept, said" grep -q "note: cannot read the end recorded for a ban in force: kept" \
			"$T_TMP/$landed.err2"
	fi
fi
t_finish
