#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the fuzzers (tests/fuzz, docs/testing.md#fuzzing) found, kept as
# regressions through the real binary, each with the input that showed it:
# numbers with a sign or a blank before them (strtoull takes both: " -5"
# was 2^64 - 5) are usage errors for counts and sizes.
source "$(dirname "$0")/../lib/lib.sh"
t_begin fuzz_cases
t_traps

# usage_refused LABEL PATTERN CMD...: exit 2, stderr matching PATTERN.
usage_refused() {
	local label=$1 pat=$2 rc
	shift 2
	"$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	if [ "$rc" -ne 2 ]; then
		fail "$label: exit $rc, want 2 ($(head -c 200 "$T_TMP/err"))"
	elif ! grep -q -- "$pat" "$T_TMP/err"; then
		fail "$label: stderr '$(head -c 300 "$T_TMP/err")', want '$pat'"
	else
		pass "$label"
	fi
}

# Counts: create's sizes (fb_parse_u64).
for v in "+100000" " 100000" " -100000"; do
	usage_refused "create --capacity '$v': a usage error" "bad number '$v' for --capacity" \
		"$FB" create fz --capacity "$v" --fp-rate 0.001
	check_fails "... and no filter fz made" "$FB" info fz
done
check "create --capacity 100000 still made" "$FB" create fz --capacity 100000 --fp-rate 0.001
# Sizes: capture --buffer (fb_parse_size), before anything else is looked at.
for v in "+64K" " 64K" " -1"; do
	usage_refused "capture --buffer '$v': a usage error" "bad size '$v' for --buffer" \
		"$FB" capture fz -w "$T_TMP/cap.pcapng" --buffer "$v"
done
t_finish
