#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Issue 10 PoC: live veth Mpps with 2,000 blocked IPv6 sources, one core.
# Five veth pairs in one namespace made here, one receiver each: count-only,
# xdp-filter (Debian xdp-tools, its own CLI), the PoC design (b) with
# SipHash-1-3 and with ML2+fmix (perf.bpf.c p_live), flowbloom (the main
# tree's CLI, unchanged). The generator (gen.bpf.c, live frames) visits them
# in turn, ROUNDS times; medians. Every frame is dropped by every receiver.
#   flock /tmp/fb-globals.lock ./live.sh [FRAMES] [ROUNDS]
# Everything it makes (namespace, veths, pins, programs) is removed on exit.
cd "$(dirname "$0")" || exit 1
FRAMES=${1:-3000000}
ROUNDS=${2:-5}
NSRC=2000
NS=fbperf$$
FB=/work/main/build/flowbloom
export FLOWBLOOM_ROOT=/sys/fs/bpf/fbperf_$$
IN="nsenter --net=/run/netns/$NS"
PIDS=()
NAMES=("count-only" "xdp-filter" "PoC (b) sip13" "PoC (b) ml2+fmix" "flowbloom main (sip13)")

cleanup() {
	exec 9>&- 2>/dev/null
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	$IN xdp-filter unload rx2 >/dev/null 2>&1
	$FB -n "$NS" detach rx5 >/dev/null 2>&1
	$FB destroy perfsrc >/dev/null 2>&1
	rm -rf "$FLOWBLOOM_ROOT" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -f /tmp/fbperf_fifo_$$ /tmp/fbperf_rules_$$
}
trap cleanup EXIT INT TERM

drops() {
	$IN ethtool -S "$1" | awk '/rx_queue_[0-9]+_xdp_drops/ { s += $2 } END { print s + 0 }'
}

ip netns add "$NS" || exit 1
ip -n "$NS" link set lo up
ip -n "$NS" link add idle type veth peer name idle2 || exit 1
for i in 1 2 3 4 5; do
	ip -n "$NS" link add "gen$i" type veth peer name "rx$i" &&
		ip -n "$NS" link set "gen$i" up && ip -n "$NS" link set "rx$i" up || exit 1
done
echo "live veth, 64-byte IPv6 UDP frames from $NSRC sources in 2001:db8::/32, all listed;"
echo "$FRAMES frames per run, $ROUNDS rounds, generator and receivers on CPU 1"

# Receivers 1, 3, 4: our own loaders, attached until the fifo closes.
mkfifo /tmp/fbperf_fifo_$$
taskset -c 1 build/live "$NS" - - count rx1 </tmp/fbperf_fifo_$$ >/dev/null &
PIDS+=($!)
taskset -c 1 build/livepoc "$NS" rx3 "$NSRC" 0 </tmp/fbperf_fifo_$$ >/dev/null &
PIDS+=($!)
taskset -c 1 build/livepoc "$NS" rx4 "$NSRC" 2 </tmp/fbperf_fifo_$$ >/dev/null &
PIDS+=($!)
exec 9>/tmp/fbperf_fifo_$$
# xdp-filter on rx2.
$IN xdp-filter load rx2 -m native -f ipv6 -p allow || exit 1
t0=$(date +%s.%N)
for i in $(seq 0 $((NSRC - 1))); do
	$IN xdp-filter ip "$(printf '2001:db8::1:%x' "$i")" -m src || exit 1
done
t1=$(date +%s.%N)
id=$($IN ip link show rx2 | grep -o 'prog/xdp id [0-9]*' | awk '{ print $3 }' | head -1)
echo "xdp-filter: $NSRC addresses in $(echo "$t1 - $t0" | bc) s (a process each); attached: $(bpftool prog show id "$id" | head -1)"
# flowbloom on rx5.
for i in $(seq 0 $((NSRC - 1))); do printf 'src 2001:db8::1:%x\n' "$i"; done >/tmp/fbperf_rules_$$
$FB create perfsrc --capacity "$NSRC" --fp-rate 0.001 >/dev/null &&
	$FB add perfsrc -f /tmp/fbperf_rules_$$ >/dev/null &&
	$FB -n "$NS" attach perfsrc rx5 >/dev/null || exit 1
sleep 1
for i in 1 2 3 4 5; do
	id=$($IN ip link show "rx$i" | grep -o 'prog/xdp id [0-9]*' | awk '{ print $3 }')
	[ -n "$id" ] || { echo "rx$i: nothing attached"; exit 1; }
done

declare -A R
for r in $(seq 1 "$ROUNDS"); do
	for i in 1 2 3 4 5; do
		d0=$(drops "rx$i")
		secs=$(taskset -c 1 build/live "$NS" "gen$i" idle "$NSRC" "$FRAMES")
		d1=$(drops "rx$i")
		[ $((d1 - d0 - 100000)) -ge "$FRAMES" ] || echo "rx$i: only $((d1 - d0 - 100000)) dropped"
		R[$i]+="$(awk -v f="$FRAMES" -v s="$secs" 'BEGIN { printf "%.3f ", f / s / 1e6 }')"
	done
done
for i in 1 2 3 4 5; do
	med=$(echo "${R[$i]}" | tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	M[$i]=$med
	printf '  %-28s median %5.2f Mpps   runs: %s\n' "${NAMES[$((i - 1))]}" "$med" "${R[$i]}"
done
awk -v c="${M[1]}" -v x="${M[2]}" -v s="${M[3]}" -v m="${M[4]}" -v f="${M[5]}" 'BEGIN {
	printf "  ratios: flowbloom main / count-only %.2f, / xdp-filter %.2f\n", f / c, f / x
	printf "          PoC sip13 / count-only %.2f, / xdp-filter %.2f\n", s / c, s / x
	printf "          PoC ml2   / count-only %.2f, / xdp-filter %.2f\n", m / c, m / x
	printf "          xdp-filter / count-only %.2f\n", x / c }'
