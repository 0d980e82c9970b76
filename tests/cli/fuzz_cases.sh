#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the fuzzers (tests/fuzz, docs/testing.md#fuzzing) found, kept as
# regressions (through the real binary where a command reaches them), each
# with the input that showed it:
# numbers with a sign or a blank before them (strtoull takes both: " -5"
# was 2^64 - 5) are usage errors for counts and sizes, and errors in
# apply's NAME.conf, as create reads them; real numbers are plain decimal
# (strtod also reads 0x1p-7, inf, a sign); sizing a filter for
# more flows than any filter holds converts no double out of range.
source "$(dirname "$0")/../lib/lib.sh"
t_begin fuzz_cases
t_traps

# usage_refused LABEL PATTERN CMD...: exit 2, stderr matching PATTERN.
usage_refused() { t_refused 2 "$@"; }

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
# conf_refused LABEL WHY CAPACITY FP-RATE: apply --check of a NAME.conf
# with those two lines exits 1 with WHY (FILE:LINE: why).
conf_refused() {
	printf 'capacity = %s\nfp-rate = %s\n' "$3" "$4" >"$T_TMP/fz.conf"
	"$FB" apply --check "$T_TMP/fz.conf" >"$T_TMP/out" 2>"$T_TMP/err"
	check_eq "apply --check: $1 refused: exit" $? 1
	grep -qF "$2" "$T_TMP/err" && pass "... naming ${2%%: *}" || fail "... said '$(head -c 300 "$T_TMP/err")'"
}
# apply's NAME.conf reads its numbers as create does (it promises create
# cannot refuse what apply --check accepted): FILE:LINE: why, exit 1.
for v in "+100000" "-100000" "0x10" "1e5"; do
	conf_refused "capacity = $v" "fz.conf:1: capacity must be a whole number of at least 1, not '$v'" "$v" 0.001
done
printf 'capacity = 100000\nfp-rate = 0.001\n' >"$T_TMP/fz.conf"
check "apply --check: capacity = 100000 accepted" "$FB" apply --check "$T_TMP/fz.conf"

# Real numbers: strtod also reads hexadecimal (0x1p-7 is 0.0078), inf, nan,
# a sign and leading blanks; an operator's false-positive rate or interval
# is plain decimal.
for v in "0x1p-7" "+0.01" " 0.01"; do
	usage_refused "create --fp-rate '$v': a usage error" "not '$v'" \
		"$FB" create fz2 --capacity 1000 --fp-rate "$v"
done
# In NAME.conf blanks around a value are the line's, not the number's.
for v in "0x1p-7" "+0.01" "inf"; do
	conf_refused "fp-rate = $v" "fz.conf:2: fp-rate must be a number from 1e-9 to 0.999999999, not '$v'" 1000 "$v"
done
# A rate the header's parts per 10^9 cannot keep: 1e-10 rounded to 0 (read
# as explicit geometry: load --replace stopped re-sizing the filter), one
# just below 1 rounded to 10^9 (an export import then refused).
for v in 1e-10 0.9999999996; do
	conf_refused "fp-rate = $v" "fz.conf:2: fp-rate must be a number from 1e-9 to 0.999999999, not '$v'" 1000 "$v"
	usage_refused "create --fp-rate $v: a usage error" "--fp-rate must be a number from 1e-9 to 0.999999999, not '$v'" \
		"$FB" create fz2 --capacity 1000 --fp-rate "$v"
done
printf 'capacity = 1000\nfp-rate = 1e-9\n' >"$T_TMP/fz2.conf"
check "apply --check: fp-rate = 1e-9 accepted" "$FB" apply --check "$T_TMP/fz2.conf"
printf 'capacity = 1000\nfp-rate = .01\n' >"$T_TMP/fz2.conf"
check "apply --check: fp-rate = .01 accepted" "$FB" apply --check "$T_TMP/fz2.conf"
usage_refused "stats --watch 0x1p1: a usage error" "bad duration '0x1p1'" timeout 10 "$FB" stats fz --watch 0x1p1
check_fails "create: no filter fz2 made" "$FB" info fz2

# Sizing past every filter (apply's capacity = 1100000000000, fp-rate =
# 0.01): the bisection's start, half the classic size, was converted to a
# 32-bit count unchecked (undefined behaviour, caught by UBSan in
# applyconf_fuzz). The answer was right by luck ("too big"); compiled here
# with the sanitizer, any such conversion stops the driver.
cat >"$T_TMP/sizing.c" <<'EOF'
#include <stdio.h>
#include "types/sizing.h"
int main(void)
{
	static const double n[] = { 1.1e12, 1.8e19, 1e6 };
	__u32 nb;
	__u8 k;
	unsigned i;

	for (i = 0; i < 3; i++)
		printf("%d %d\n", fb_size_blocked(n[i], 0.01, &nb, &k),
		       fb_size_classic(n[i], 1e-9, &nb, &k));
	return 0;
}
EOF
TOP=$(cd "$(dirname "$0")/../.." && pwd)
if ${CC:-gcc} -O1 -I"$TOP/include" -I"$TOP/user/lib" -fsanitize=undefined,float-cast-overflow \
	-fno-sanitize-recover=all "$T_TMP/sizing.c" "$TOP/user/lib/types/sizing.c" -lm \
	-o "$T_TMP/sizing" 2>"$T_TMP/cc.err"; then
	out=$("$T_TMP/sizing" 2>&1)
	check_eq "sizing 1.1e12 and 1.8e19 flows: too big, no undefined conversion; 1e6 fits" \
		"$(echo $out)" "-1 -1 -1 -1 0 0"
else
	fail "sizing driver: $(head -c 300 "$T_TMP/cc.err")"
fi

# The harnesses themselves: they build (`make fuzz`; a CLI function the
# verbs' option parsing came to call once broke their link unseen), and
# each runs its seeds with every promise it checks (libFuzzer's -runs=0:
# the inputs given, no mutation; new ones would go to the empty first
# directory, never into the seeds).
if make -s -C "$TOP" fuzz >"$T_TMP/fuzz.make" 2>&1; then
	pass "make fuzz builds every harness"
	for src in "$TOP"/tests/fuzz/*_fuzz.c; do
		h=$(basename "$src" .c)
		mkdir -p "$T_TMP/new-$h"
		"$TOP/build/fuzz/$h" -runs=0 "$T_TMP/new-$h" "$TOP/tests/fuzz/corpus/${h%_fuzz}" \
			>"$T_TMP/$h.log" 2>&1
		check_eq "$h: its seeds ($(ls "$TOP/tests/fuzz/corpus/${h%_fuzz}" | wc -l)) keep every promise" $? 0
	done
else
	fail "make fuzz: $(tail -c 300 "$T_TMP/fuzz.make")"
fi
t_finish
