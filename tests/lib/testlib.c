// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The counts behind testlib.h's assertions: one set per test binary, however
 * many files its checks are in.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <signal.h>
#include <unistd.h>
#include "testlib.h"

static int test_passed, test_failed, test_skipped;
static char priv_root[128];
static pid_t priv_pid;

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

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Pins and directories, deepest first, never following a link; not from
 * a forked child (the parent's root is still in use). */
static void remove_root(void)
{
	if (priv_root[0] && getpid() == priv_pid)
		nftw(priv_root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void on_stop(int sig)
{
	(void)sig;
	exit(130); /* runs remove_root() */
}

void test_private_root(const char *name, char *root, size_t len)
{
	priv_pid = getpid();
	snprintf(priv_root, sizeof(priv_root), "/sys/fs/bpf/fbtest_%s_%d", name, (int)priv_pid);
	setenv("FLOWBLOOM_ROOT", priv_root, 1);
	atexit(remove_root);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	snprintf(root, len, "%s", priv_root);
}
