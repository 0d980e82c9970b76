/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Assertions for the C tests, in the kernel selftests' manner: each names
 * what it checks, prints PASS/FAIL, returns whether it held. A test binary
 * ends with test_summary(), which prints "N passed, N failed" and returns
 * the exit status; tests/run.sh adds the lines up.
 */
#ifndef FLOWBLOOM_TESTLIB_H
#define FLOWBLOOM_TESTLIB_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_passed, test_failed, test_skipped;

static inline bool test_check(bool ok, const char *label, const char *detail)
{
	if (ok) {
		test_passed++;
		if (getenv("TEST_VERBOSE"))
			printf("PASS %s\n", label);
	} else {
		test_failed++;
		printf("FAIL %s%s%s\n", label, detail ? ": " : "", detail ? detail : "");
	}
	fflush(stdout);
	return ok;
}

#define ASSERT_TRUE(cond, label) test_check(!!(cond), label, #cond)

#define ASSERT_EQ(got, want, label)                                                                \
	({                                                                                         \
		long long _g = (long long)(got), _w = (long long)(want);                           \
		char _d[160];                                                                      \
		snprintf(_d, sizeof(_d), "got %lld, want %lld", _g, _w);                           \
		test_check(_g == _w, label, _d);                                                   \
	})

#define ASSERT_RANGE(got, lo, hi, label)                                                           \
	({                                                                                         \
		double _g = (double)(got), _l = (double)(lo), _h = (double)(hi);                   \
		char _d[160];                                                                      \
		snprintf(_d, sizeof(_d), "got %g, want [%g, %g]", _g, _l, _h);                     \
		test_check(_g >= _l && _g <= _h, label, _d);                                       \
	})

static inline void test_skip(const char *label, const char *why)
{
	test_skipped++;
	printf("SKIP %s: %s\n", label, why);
}

static inline int test_summary(void)
{
	printf("%d passed, %d failed", test_passed, test_failed);
	if (test_skipped)
		printf(", %d skipped", test_skipped);
	printf("\n");
	return test_failed ? 1 : 0;
}

#endif
