# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# How bench.sh judges its figures (sourced by it, and by tests/cli/bench_judge.sh).
#   target WHAT GOT LIMIT at_most|at_least  one line as bench.c's target(),
#       also appended to $FIG_ALL if set. GOT is a ratio of two rates or
#       times: a figure that is not a number above 0 (a part that measured
#       nothing, a division by zero that left it empty) is MISSED, never met.
#   ratio WHAT GOT                          a ratio with no target
#   median                                  of the numbers on stdin (words):
#       the middle one, or the mean of the two middle ones
#   wall, cpu                               the first / second halves of
#       bench.sh live_run's WALL:CPU results on stdin

target() {
	awk -v w="$1" -v g="$2" -v l="$3" -v m="$4" 'BEGIN {
		num = g ~ /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/ && g + 0 > 0
		ok = num && (m == "at_most" ? g + 0 <= l : g + 0 >= l)
		printf "  %-62s %6s (%s %.2f) %s\n", w, num ? sprintf("%.2f", g) : "none",
			m == "at_most" ? "<=" : ">=", l, ok ? "met" : "MISSED" }' |
		tee -a "${FIG_ALL:-/dev/null}"
}

ratio() { awk -v w="$1" -v g="$2" 'BEGIN { printf "  %-62s %6.2f (no target)\n", w, g }'; }

median() {
	tr ' ' '\n' | grep . | sort -g |
		awk '{ a[NR] = $1 } END { if (NR) print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

wall() { tr ' ' '\n' | grep . | cut -d: -f1 | tr '\n' ' '; }
cpu() { tr ' ' '\n' | grep . | cut -d: -f2 | tr '\n' ' '; }
