// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The counts behind testlib.h's assertions: one set per test binary, however
 * many files its checks are in.
 */
#include "testlib.h"

static int test_passed, test_failed, test_skipped;

bool test_check(bool ok, const char *label, const char *detail)
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

void test_skip(const char *label, const char *why)
{
	test_skipped++;
	printf("SKIP %s: %s\n", label, why);
}

int test_summary(void)
{
	printf("%d passed, %d failed", test_passed, test_failed);
	if (test_skipped)
		printf(", %d skipped", test_skipped);
	printf("\n");
	return test_failed ? 1 : 0;
}
