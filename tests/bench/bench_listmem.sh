#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What a list costs the CLI in memory: peak RSS of `load`, `load
# --replace`, `add -f` and `apply` of N distinct rules into a fresh filter
# sized for them (--capacity N --fp-rate 0.001), plain, counting,
# `--confirm exact` and cuckoo (apply: no cuckoo, its file has no type),
# for a list of 5-tuples and one of prefixes of four lengths (IPv6, /64
# to /112: no expansion). Prints per row the peak RSS, the bytes per rule
# above the same command of a one-rule list, and the filter's kernel
# memory per rule beside (info's total). Usage:
#   bash tests/bench/bench_listmem.sh [SIZES] [TYPES] [LISTS] [FLOWBLOOM-BINARY]
# e.g. "1000000 4000000" "plain counting confirm cuckoo" "flows prefixes".
# Uses a private filter root and temporary files of about 45 bytes a rule.
set -e
SIZES=${1:-"1000000 4000000"}
TYPES=${2:-"plain counting confirm cuckoo"}
LISTS=${3:-"flows prefixes"}
FB=${4:-$(cd "$(dirname "$0")/../.." && pwd)/build/flowbloom}
export FLOWBLOOM_ROOT=/sys/fs/bpf/fbbench_listmem_$$
TMP=$(mktemp -d /tmp/fbbench-listmem.XXXXXX)
trap '"$FB" destroy lm >/dev/null 2>&1 || true; rmdir "$FLOWBLOOM_ROOT" 2>/dev/null || true; rm -rf "$TMP"' EXIT

gen() { # KIND N FILE
	python3 - "$@" <<'PY'
import sys
kind, n = sys.argv[1], int(sys.argv[2])
with open(sys.argv[3], "w") as f:
    for b in range(0, n, 100000):
        r = range(b, min(n, b + 100000))
        if kind == "flows":
            f.write("".join("udp [2001:db8::%x:%x]:%d [2001:db8:1::%x]:53\n" %
                            (i >> 16, i & 0xffff, 1024 + i % 60000, i % 4096) for i in r))
        else:
            f.write("".join("2001:db8:%x:%x%s::/%d\n" %
                            ((4 + (i & 3)) << 12 | (i >> 18) & 0xfff, (i >> 2) & 0xffff,
                             ":1" * (i & 3), 64 + 16 * (i & 3)) for i in r))
PY
}
opts() { # TYPE
	case $1 in
	plain) ;;
	counting) echo --counting ;;
	confirm) echo --confirm exact ;;
	cuckoo) echo --type cuckoo ;;
	esac
}
conf() { # TYPE N FILE: apply's file
	printf 'capacity = %s\nfp-rate = 0.001\nload = %s\n' "$2" "$3"
	case $1 in
	counting) echo "counting = 4" ;;
	confirm) echo "confirm = exact" ;;
	esac
}
# rss TYPE N VERB FILE: max RSS (KiB) of VERB with FILE on a fresh filter.
rss() {
	local t=$1 n=$2 verb=$3 file=$4
	"$FB" destroy lm >/dev/null 2>&1 || true
	if [ "$verb" = apply ]; then
		conf "$t" "$n" "$file" >"$TMP/lm.conf"
		/usr/bin/time -f %M -o "$TMP/rss" "$FB" apply "$TMP/lm.conf" >"$TMP/out" 2>&1 ||
			{ cat "$TMP/out" >&2; return 1; }
	else
		# shellcheck disable=SC2046 # opts are words
		"$FB" create lm --capacity "$n" --fp-rate 0.001 $(opts "$t") >/dev/null
		case $verb in
		load) set -- load lm "$file" ;;
		replace) set -- load lm "$file" --replace ;;
		add) set -- add lm -f "$file" ;;
		esac
		/usr/bin/time -f %M -o "$TMP/rss" "$FB" "$@" >"$TMP/out" 2>&1 ||
			{ cat "$TMP/out" >&2; return 1; }
	fi
	"$FB" -j info lm | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel_memory"]["total"])' >"$TMP/kmem"
	tail -n 1 "$TMP/rss"
}

printf '%-8s %-9s %9s %-8s %9s %10s %11s\n' type list rules verb "RSS MiB" "B/rule" "filter B/r"
for n in $SIZES; do
	for kind in $LISTS; do
		gen "$kind" "$n" "$TMP/list"
		gen "$kind" 1 "$TMP/one"
		for t in $TYPES; do
			for verb in load replace add apply; do
				[ "$verb" = apply ] && [ "$t" = cuckoo ] && continue
				base=$(rss "$t" "$n" "$verb" "$TMP/one")
				peak=$(rss "$t" "$n" "$verb" "$TMP/list")
				printf '%-8s %-9s %9s %-8s %9.1f %10.1f %11.1f\n' "$t" "$kind" "$n" "$verb" \
					"$(echo "$peak / 1024" | bc -l)" "$(echo "($peak - $base) * 1024 / $n" | bc -l)" \
					"$(echo "$(cat "$TMP/kmem") / $n" | bc -l)"
			done
		done
	done
done
