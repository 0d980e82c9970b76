#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs every test (what `make test` calls) and adds up their closing lines
# into one: "N passed, N failed". Needs root, bpffs and a BPF-enabled kernel.
# TESTS="unit cli" limits the run to some suites.
cd "$(dirname "$0")/.." || exit 1

SUITES=${TESTS:-"unit verdict samebits cli pcaps counting counting_cli prefix prefix_cli confirm monitor monitor_cli fleet ipfix bgp e2e"}
total_pass=0
total_fail=0
total_skip=0
broken=""

mount | grep -q ' /sys/fs/bpf type bpf' || mount -t bpf bpf /sys/fs/bpf

for s in $SUITES; do
	if [ -x "build/tests/test_$s" ]; then
		cmd=(build/tests/test_"$s")
	elif [ -f "tests/$s.sh" ]; then
		cmd=(bash "tests/$s.sh")
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
