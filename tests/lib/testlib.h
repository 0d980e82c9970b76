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

/* Counts one check (tests/lib/testlib.c keeps the counts for every file of
 * a test binary); prints FAIL with detail, PASS under TEST_VERBOSE. */
bool test_check(bool ok, const char *label, const char *detail);
void test_skip(const char *label, const char *why);
/* "N passed, N failed[, N skipped]"; the exit status. */
int test_summary(void);
/* A private bpffs root for suite NAME: FLOWBLOOM_ROOT set to
 * /sys/fs/bpf/fbtest_NAME_PID (copied into root, len bytes), removed with
 * everything in it at exit and on SIGINT or SIGTERM (tests/run.sh stops a
 * suite with SIGTERM: its filters stayed pinned). First thing in main. */
void test_private_root(const char *name, char *root, size_t len);

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

#endif
