#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# How `make bench` judges its figures (tests/bench/figures.sh, bench.sh):
# a target is met only by a figure above 0 within its limit, so a part that
# measured nothing, a negative rate (a live receiver that dropped nothing)
# or a division by zero (an empty figure) is MISSED, never met; medians of
# an even count are the mean of the middle two; and a run whose `del` part
# failed (tests/bench/bench_del.sh: a `del -f` that deleted nothing, so
# the filter is not empty after it) fails the benchmark instead of
# printing its target met.
source "$(dirname "$0")/../lib/lib.sh"
t_begin bench_judge
cleanup() { t_cleanup_filters; }
t_traps
TOP=$(cd "$(dirname "$0")/../.." && pwd)
source "$TOP/tests/bench/figures.sh"

verdict() { target "$@" | awk '{ print $NF }'; }
check_eq "a figure within an at_most limit is met" "$(verdict t 1.01 1.2 at_most)" met
check_eq "a figure at an at_least limit is met" "$(verdict t 1.20 1.2 at_least)" met
check_eq "a figure short of an at_least limit is MISSED" "$(verdict t 1.19 1.2 at_least)" MISSED
check_eq "a figure over an at_most limit is MISSED" "$(verdict t 1.21 1.2 at_most)" MISSED
check_eq "an empty figure (a division by zero in bc) is MISSED" "$(verdict t '' 1.2 at_most)" MISSED
check_eq "a negative figure (a receiver that dropped nothing) is MISSED" \
	"$(verdict t -3.56 1.2 at_most)" MISSED
check_eq "a zero figure (a part that took no time) is MISSED" "$(verdict t 0 1.0 at_most)" MISSED
check_eq "a figure that is no number is MISSED" "$(verdict t 'x' 1.0 at_most)" MISSED
check_eq "a figure that is no number prints as none" "$(target t '' 1.2 at_most | awk '{ print $2 }')" none
check_eq "median of an odd count" "$(echo '5 1 3 ' | median)" 3
check_eq "median of an even count: the mean of the middle two" "$(echo '4 1 3 2' | median)" 2.5
check_eq "median of nothing is nothing" "$(echo ' ' | median)" ""

# bench.sh's del part with a CLI whose `del` deletes nothing and succeeds.
cat >"$T_TMP/fb" <<EOF
#!/usr/bin/env bash
[ "\$1" = del ] && { echo "deleted 0 flows"; exit 0; }
exec "$FB" "\$@"
EOF
chmod +x "$T_TMP/fb"
run_del() { # CLI: bench.sh's del part, small, with that CLI
	BENCH=del BENCH_DEL_N=300000 BENCH_DEL_ROUNDS=1 FLOWBLOOM_BIN=$1 \
		bash "$TOP/tests/bench/bench.sh" >"$T_TMP/del.out" 2>"$T_TMP/del.err"
}
run_del "$T_TMP/fb"
check_eq "a del part whose del -f deleted nothing fails the benchmark" "$?" 1
check_eq "... and prints no target met" "$(grep -c ' met$' "$T_TMP/del.out")" 0
check "... and says why" grep -q "filter is not empty" "$T_TMP/del.err"
run_del "$FB"
check_eq "the del part with the real CLI succeeds" "$?" 0
check "... and judges its target on a figure" \
	grep -qE '^  del -f / add -f, CPU time .* [0-9]+\.[0-9]+ \(<= 1\.00\) (met|MISSED)$' "$T_TMP/del.out"
t_finish
