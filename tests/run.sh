#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs every test (what `make test` calls) and adds up their closing lines
# into one: "N passed, N failed". Needs root, bpffs and a BPF-enabled kernel.
# TESTS="unit cli" limits the run to some suites (by name); a word ending in
# / selects a kind: TESTS="unit/ cli/" runs every suite in tests/unit and
# tests/cli. Words mix: TESTS="program/ e2e".
cd "$(dirname "$0")/.." || exit 1

# Suites are found, not listed, by folder: a C suite is tests/KIND/test_NAME.c
# (KIND unit or program) built into build/tests/KIND/test_NAME, a shell suite
# tests/KIND/NAME.sh (KIND cli or e2e). tests/lib, tests/bench and demo.sh
# are not suites. C suites run first (no network), the shell suites after.
KINDS="unit program cli e2e"
find_suites() { # [KIND...]: "KIND/NAME" per line
	local k f n kinds=${*:-$KINDS}
	for k in $kinds; do
		for f in tests/"$k"/test_*.c; do
			[ -f "$f" ] || continue
			n=${f##*/test_}
			echo "$k/${n%.c}"
		done
		for f in tests/"$k"/*.sh; do
			[ -f "$f" ] || continue
			n=$(basename "$f" .sh)
			echo "$k/$n"
		done
	done
}
ALL=$(find_suites)
if [ -n "${TESTS:-}" ]; then
	SUITES=""
	for w in $TESTS; do
		case "$w" in
		*/) m=$(find_suites "${w%/}") ;;
		*) m=$(echo "$ALL" | grep -E "/$w\$") ;;
		esac
		[ -n "$m" ] || m="?/$w" # reported below as no such suite
		SUITES="$SUITES $m"
	done
else
	SUITES=$ALL
fi
total_pass=0
total_fail=0
total_skip=0
broken=""

mount | grep -q ' /sys/fs/bpf type bpf' || mount -t bpf bpf /sys/fs/bpf

for ks in $SUITES; do
	k=${ks%%/*}
	s=${ks#*/}
	if [ -f "tests/$k/test_$s.c" ] && [ -x "build/tests/$k/test_$s" ]; then
		cmd=(build/tests/"$k"/test_"$s")
	elif [ -f "tests/$k/$s.sh" ]; then
		cmd=(bash "tests/$k/$s.sh")
	else
		echo "no such suite: $s"
		broken="$broken $s"
		continue
	fi
	echo "== $s"
	start=$(date +%s)
	log=$(mktemp "/tmp/fbtest-$s.XXXXXX")
	"${cmd[@]}" 2>&1 | tee "$log" | grep -v -E '^[0-9]+ passed, [0-9]+ failed'
	rc=${PIPESTATUS[0]}
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	rm -f "$log"
	if [ -z "$last" ]; then
		echo "$s: no closing line (exit $rc)"
		broken="$broken $s"
		continue
	fi
	p=$(echo "$last" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$last" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	k=$(echo "$last" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + ${k:-0}))
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && broken="$broken $s"
	echo "-- $s: $last ($(($(date +%s) - start)) s)"
done

[ -n "$broken" ] && echo "suites that did not finish cleanly:$broken" && total_fail=$((total_fail + 1))
if [ "$total_skip" -gt 0 ]; then
	echo "$total_pass passed, $total_fail failed, $total_skip skipped"
else
	echo "$total_pass passed, $total_fail failed"
fi
[ "$total_fail" -eq 0 ]
