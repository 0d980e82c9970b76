#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Loops that watch a filter (`stats --watch`, `flows --follow`, `top
# --interval`, `guard`) when the filter is destroyed under them: each must
# stop within a poll (half a second at most, however long its interval),
# exit 1 and say once that the filter is gone, rather than print the
# zeros of maps nothing feeds any more. They used to run forever (the
# `timeout` below would have killed them: exit 124). A filter created again
# under the same name is another filter: still gone for the old loop.
# Monitoring maps come from `test_monitor feed` (the real program through
# BPF_PROG_TEST_RUN), as in monitor_cli.sh.
source "$(dirname "$0")/../lib/lib.sh"
t_begin gone_cli
FEED=$(dirname "$FB")/tests/program/test_monitor
BG=()
cleanup() {
	local d
	t_kill "${BG[@]}"
	for d in "$FLOWBLOOM_ROOT"/*/monitor; do
		[ -d "$d" ] && rm -f "$d"/* && rmdir "$d"
	done
	t_cleanup_filters
	rm -rf "$T_TMP"
}
t_traps

# gone LABEL CMD...: start CMD, destroy g1 under it once it is in its loop
# (top --interval's is one interval long: a fixed wait could miss it),
# expect exit 1 and "is gone" within a poll or two (20 s: a loaded machine
# answers late; a loop that never notices is killed then, exit 124).
# With GONE_WITHIN=S: the loop's interval is far longer than that, and it
# must still notice within S s (it waited its interval out first).
gone() {
	local label=$1 pid rc t0
	shift
	check "$label: create" "$FB" create g1 --capacity 1000 --fp-rate 0.01
	"$FEED" feed g1 2000 100 >/dev/null || fail "$label: feed"
	timeout 20 "$@" >"$T_TMP/loop.out" 2>"$T_TMP/loop.err" &
	pid=$!
	BG+=("$pid")
	T_WAIT_STEP=0.02 t_wait_until 10 t_looping "$pid" ||
		fail "$label: not in its loop after 10 s ($(head -c 200 "$T_TMP/loop.err"))"
	t0=$(date +%s%N)
	check "$label: destroy while it runs" "$FB" destroy g1
	# Same name again: the loop holds the old maps, not these.
	"$FB" create g1 --capacity 1000 --fp-rate 0.01 >/dev/null
	wait "$pid"
	rc=$?
	t0=$((($(date +%s%N) - t0) / 1000000))
	check_eq "$label: exits 1 (124: still running after 20 s)" "$rc" 1
	[ -z "${GONE_WITHIN:-}" ] ||
		check "$label: noticed within $GONE_WITHIN s (in $t0 ms)" test "$t0" -le $((GONE_WITHIN * 1000))
	check_eq "$label: says the filter is gone" \
		"$(grep -c "filter 'g1' is gone" "$T_TMP/loop.err")" 1
	# ... and that alone (guard said as well that g1, its BAN, "was
	# destroyed while this command waited for its lock"); guard's
	# "stopped after" line is no error.
	check_eq "$label: one error" "$(grep -vc '^flowbloom: guard: stopped after' "$T_TMP/loop.err")" 1
	"$FB" destroy g1 >/dev/null
}

gone "stats --watch" "$FB" stats g1 --watch 0.2
gone "stats -j --watch" "$FB" -j stats g1 --watch 0.2
gone "flows --follow" "$FB" flows g1 --follow
gone "top --interval" "$FB" top g1 --interval 1.5
gone "guard" "$FB" guard g1 --into g1 --pps 1000 --ttl 2s --interval 0.3s
# A long interval: the filter is looked for every half second meanwhile.
GONE_WITHIN=3 gone "top --interval 30" "$FB" top g1 --interval 30
GONE_WITHIN=3 gone "stats --watch 30" "$FB" stats g1 --watch 30
GONE_WITHIN=3 gone "guard --interval 30" "$FB" guard g1 --into g1 --pps 1000 --ttl 60s --interval 30s

# Not destroyed: --watch keeps going until Ctrl-C, exit 0.
check "create g2" "$FB" create g2 --capacity 1000 --fp-rate 0.01
# watching LABEL ARGS...: stats ARGS prints table after table until
# Ctrl-C, then exits 0.
watching() {
	local label=$1 pid
	shift
	# Emptied here, not by the child's redirection: until the child has
	# opened it, the previous call's tables would still be there, and
	# Ctrl-C would reach a process that has no handler yet (exit 130).
	: >"$T_TMP/w"
	"$FB" stats "$@" >"$T_TMP/w" 2>&1 &
	pid=$!
	BG+=("$pid")
	tables() { [ "$(grep -c '^counter' "$T_TMP/w")" -ge "$1" ]; }
	t_wait_until 10 tables 3 && pass "$label prints again and again (3 tables)" ||
		fail "$label printed $(grep -c '^counter' "$T_TMP/w") tables in 10 s: $(head -c 200 "$T_TMP/w")"
	kill -INT "$pid"
	wait "$pid"
	check_eq "$label of a live filter: Ctrl-C exits 0" $? 0
}
watching "stats --watch" g2 --watch 0.2
# One packet is "1 packet" in top's and traffic's heads (the feed: one
# flow, one packet of 198 bytes; the sketch's bound 1 packet, 1 byte).
"$FB" create g4 --capacity 100 --fp-rate 0.01 >/dev/null
"$FEED" feed g4 1 1 >/dev/null || fail "one packet: feed"
check_eq "top: 1 packet, 1 byte, no plural" "$("$FB" top g4 | sed -n 2p)" \
	"estimates are never below the truth, and above it by at most 1 packet, 1 byte with probability 99.33%"
"$FB" traffic g4 udp 198.51.100.1:1 198.51.100.2:2 | head -1 >"$T_TMP/tr"
grep -q "^'g4' since .*Z: 1 packet, 198 bytes$" "$T_TMP/tr" && pass "traffic: 1 packet" || fail "traffic: $(cat "$T_TMP/tr")"
"$FB" destroy g4 >/dev/null
# top --interval ended by Ctrl-C: the interval so far, over the time it
# lasted, exit 0 (it printed nothing and exited 0).
"$FEED" feed g2 2000 100 >/dev/null || fail "top --interval, Ctrl-C: feed"
"$FB" top g2 --interval 30 >"$T_TMP/top.out" 2>"$T_TMP/top.err" &
pid=$!
BG+=("$pid")
T_WAIT_STEP=0.02 t_wait_until 10 t_looping "$pid" || fail "top --interval 30: not in its loop after 10 s"
kill -INT "$pid"
wait "$pid"
check_eq "top --interval 30, Ctrl-C in its loop: exits 0" $? 0
grep -qE "^top 0 of 'g2' by packets over (0\.[0-9]+|[1-9]\.[0-9]+) s: 0 packets, 0 bytes$" "$T_TMP/top.out" &&
	pass "... and shows the interval so far" || fail "... printed '$(head -c 300 "$T_TMP/top.out" "$T_TMP/top.err")'"
# --watch=SECS, as every option with a value is also written: the same loop
# (it was refused as an unknown option), and its bad value a usage error.
watching "stats --watch=0.2" g2 --watch=0.2
t_refused 2 "stats --watch=0: the interval's usage error" "bad duration '0' for --watch" "$FB" stats g2 --watch=0
check "destroy g2" "$FB" destroy g2
# Nowhere to print (stdout on a full disk): the loop ends, exit 1, saying so
# (it polled on for good, printing nothing).
"$FB" create g5 --capacity 100 --fp-rate 0.01 >/dev/null
"$FEED" feed g5 10 1 >/dev/null || fail "/dev/full: feed"
timeout 20 "$FB" flows g5 --follow >/dev/full 2>"$T_TMP/full.err"
check_eq "flows --follow >/dev/full: ends, exit 1, the write error said" \
	"$? $(grep -c '^flowbloom: write error on stdout' "$T_TMP/full.err")" "1 1"
"$FB" destroy g5 >/dev/null
t_end
