#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `flowbloom bgp` under a flapping peer, as ExaBGP feeds it: N IPv6 /128
# blackhole routes (500 a message) into a counting filter, then one route
# withdrawn and announced again every GAP seconds, FLAPS times. Prints the
# CPU time (utime + stime from /proc/PID/stat) of the load and of the
# flapping (and a second after it), its share of a core, the state writes the flapping made (the
# state file's commit counter) and the CPU per write (the flapping's CPU
# over its writes: the lines themselves cost next to nothing), and the
# state file's size: the figures docs/performance.md records. Usage:
#   bash tests/bench/bench_bgp.sh [N] [FLAPS] [GAP] [FLOWBLOOM-BINARY] [BGP-ARGS]
# (default 500000 30 0.1; BGP-ARGS e.g. "--ttl 1h"; PER=1 in the
# environment: one route a message, the most lines, so the most journal
# writes, for a table). Uses a private filter root and a state directory
# under /run.
set -e
N=${1:-500000}
FLAPS=${2:-30}
GAP=${3:-0.1}
FB=${4:-$(cd "$(dirname "$0")/../.." && pwd)/build/flowbloom}
EXTRA=${5:-}
export FLOWBLOOM_ROOT=/sys/fs/bpf/fbbench_bgp_$$
SD=$(mktemp -d /run/fbbench-bgp.XXXXXX)
BP=
cleanup() {
	exec 9>&- 2>/dev/null || true
	[ -n "$BP" ] && kill "$BP" 2>/dev/null && wait "$BP" 2>/dev/null
	"$FB" destroy bb >/dev/null 2>&1 || true
	rmdir "$FLOWBLOOM_ROOT" 2>/dev/null || true
	rm -rf "$SD"
}
trap cleanup EXIT

NB='"neighbor": {"address": {"local": "198.51.100.2", "peer": "198.51.100.9"}, "direction": "receive"'
BH='"attribute": {"community": [[65535, 666]]}'
python3 - "$N" "$NB" "$BH" "${PER:-500}" >"$SD/table" <<'PY'
import sys
n, nb, bh, per = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
for s in range(0, n, per):
    nl = ", ".join('{"nlri": "2001:db8:%x:%x::1/128"}' % (i >> 16, i & 0xffff) for i in range(s, min(n, s + per)))
    print('{"type": "update", %s, "message": {"update": {%s, "announce": {"ipv6 unicast": {"x": [%s]}}}}}}' % (nb, bh, nl))
PY
"$FB" create bb --capacity $((N + 100000)) --fp-rate 0.001 --counting >/dev/null
mkfifo "$SD/fifo"
# shellcheck disable=SC2086 # EXTRA is words
"$FB" bgp bb --state "$SD/bb.bgp" $EXTRA <"$SD/fifo" 2>"$SD/err" >/dev/null &
BP=$!
exec 9>"$SD/fifo"
cpu() { awk -v t="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / t}' "/proc/$BP/stat"; }
commits() { head -1 "$SD/bb.bgp" | awk '{print $NF}'; }
t0=$(date +%s.%N)
cat "$SD/table" >&9
until [ "$(grep -c '^198\.51\.100\.9	' "$SD/bb.bgp" 2>/dev/null)" = "$N" ]; do sleep 0.2; done
t1=$(date +%s.%N)
sleep 2
c1=$(cpu)
k1=$(commits)
echo "load: $N routes, cpu ${c1} s, until written $(echo "$t1 - $t0" | bc) s, state $(stat -c %s "$SD/bb.bgp") bytes"
t1=$(date +%s.%N)
for i in $(seq "$FLAPS"); do
	if [ $((i % 2)) = 1 ]; then
		printf '{"type": "update", %s, "message": {"update": {"withdraw": {"ipv6 unicast": [{"nlri": "2001:db8::1/128"}]}}}}}\n' "$NB"
	else
		printf '{"type": "update", %s, "message": {"update": {%s, "announce": {"ipv6 unicast": {"x": [{"nlri": "2001:db8::1/128"}]}}}}}}\n' "$NB" "$BH"
	fi
	sleep "$GAP"
done >&9
sleep 1 # the last flap's write
c2=$(cpu)
k2=$(commits)
t2=$(date +%s.%N)
w=$((k2 - k1))
echo "flaps: $FLAPS every $GAP s over $(echo "$t2 - $t1" | bc | cut -c1-5) s: cpu $(echo "$c2 - $c1" | bc) s" \
	"($(echo "100 * ($c2 - $c1) / ($t2 - $t1)" | bc) % of a core), $w writes," \
	"$(echo "scale=3; ($c2 - $c1) / ($w + ($w == 0))" | bc) s of cpu a write"
exec 9>&-
wait "$BP"
BP=
tail -1 "$SD/err"
