#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make bench`: the benchmark suite (not part of `make test`). Prints a
# table of figures and which targets they meet.
#   bench.sh [REPEAT]   all of it; REPEAT packets per test_run (default 2M)
# (`bench types` alone: the filter types side by side, docs/bench-types.txt)
# The live part runs in a network namespace made here with a veth pair
# (gen -> rx) and a down veth (idle); all are removed on exit.
cd "$(dirname "$0")/../.." || exit 1
B=build/tests/bench/bench
NS=fbbench$$

cleanup() {
	ip netns del "$NS" 2>/dev/null
	for d in /sys/fs/bpf/fbbench_*; do
		[ -d "$d" ] || continue
		rm -f "$d"/*/* 2>/dev/null
		rmdir "$d"/* "$d" 2>/dev/null
	done
}
trap cleanup EXIT INT TERM

"$B" "$@" || exit 1
"$B" types || exit 1

ip netns add "$NS" || exit 1
ip -n "$NS" link add gen type veth peer name rx &&
	ip -n "$NS" link add idle type veth peer name idle2 &&
	ip -n "$NS" link set gen up &&
	ip -n "$NS" link set rx up &&
	ip -n "$NS" link set lo up || exit 1
"$B" live "$NS" gen rx idle
