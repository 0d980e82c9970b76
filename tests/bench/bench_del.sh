#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Bulk add and delete on a counting filter, as an operator runs them:
# `add -f` then `del -f` of N distinct UDP flows (default 10M) into a
# filter created with --capacity N --fp-rate 0.001 --counting, each under
# /usr/bin/time -v. Prints wall time, CPU time and max RSS of both (the
# figures docs/performance.md records), and the verb's own figure
# (the time under the lock, after parsing). Usage:
#   bash tests/bench/bench_del.sh [N] [FLOWBLOOM-BINARY] [CREATE-ARGS]
# CREATE-ARGS replaces the geometry, e.g. "--bits 2147483648 --hashes 8"
# for a 256 MiB filter (1 GiB of 4-bit counters); --counting is always
# added. Runs `check` after each verb: it must be clean, and after the
# delete the filter empty. Uses a private filter root and a temporary file
# of about 41 bytes a flow.
set -e
N=${1:-10000000}
FB=${2:-$(cd "$(dirname "$0")/../.." && pwd)/build/flowbloom}
GEOM=${3:-"--capacity $N --fp-rate 0.001"}
export FLOWBLOOM_ROOT=/sys/fs/bpf/fbbench_del_$$
TMP=$(mktemp -d /tmp/fbbench-del.XXXXXX)
trap '"$FB" destroy bd >/dev/null 2>&1 || true; rmdir "$FLOWBLOOM_ROOT" 2>/dev/null || true; rm -rf "$TMP"' EXIT

python3 - "$TMP/flows.txt" "$N" <<'PY'
import sys
n = int(sys.argv[2])
with open(sys.argv[1], "w") as f:
    for b in range(0, n, 100000):
        f.write("".join("udp 198.51.%d.%d:%d 203.0.113.%d:%d\n" % (i >> 16 & 255, i >> 8 & 255,
                1024 + (i & 1023), i & 255, 1 + (i >> 10 & 16383)) for i in range(b, min(n, b + 100000))))
PY
# shellcheck disable=SC2086 # GEOM is words
"$FB" create bd $GEOM --counting
for verb in add del; do
	/usr/bin/time -v "$FB" "$verb" bd -f "$TMP/flows.txt" 2>"$TMP/time" >"$TMP/out"
	awk -v verb="$verb -f" -v out="$(cat "$TMP/out")" '
		/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); wall = t[n] + (n > 1 ? 60 * t[n - 1] : 0) }
		/User time/ { user = $NF } /System time/ { sys = $NF }
		/Maximum resident set size/ { rss = $NF }
		END { printf "%-7s wall %6.2f s  user %6.2f s  sys %5.2f s  max RSS %5d MiB   (%s)\n",
			verb, wall, user, sys, rss / 1024, out }' "$TMP/time"
	"$FB" check bd >"$TMP/check" 2>&1 || { echo "check after $verb -f is not clean:"; cat "$TMP/check"; exit 1; }
done
"$FB" -j info bd | python3 -c 'import json, sys
d = json.load(sys.stdin)
left = [(k, v) for k, v in d.items() if k in ("flows", "bits_set") and v]
sys.exit("after del -f the filter is not empty: %s" % left if left else 0)' 
