// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Clocks and interrupts of the CLI's loops (see clock.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "clock.h"

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

void fb_catch_interrupt(void)
{
	struct sigaction sa;

	/* No SA_RESTART: a blocking poll or sleep returns at once with EINTR,
	 * and the loop ends cleanly (exit 0), output flushed. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void fb_catch_hangup(void)
{
	struct sigaction sa;

	/* nohup: ignored it stays, the command keeps running. */
	if (!sigaction(SIGHUP, NULL, &sa) && sa.sa_handler == SIG_IGN)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
}

bool fb_interrupted(void)
{
	return interrupted;
}

/* Sleep until CLOCK_MONOTONIC reaches `until` (seconds); false if
 * interrupted first. Absolute deadlines keep periodic output from
 * drifting. */
bool fb_clock_sleep_until(double until)
{
	struct timespec ts = { .tv_sec = (time_t)until,
			       .tv_nsec = (long)((until - (time_t)until) * 1e9) };

	while (!interrupted) {
		int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (r != EINTR)
			return !interrupted;
	}
	return false;
}

__u64 fb_clock_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__u64 fb_clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ISO 8601 UTC, to the microsecond (frac) or the second. */
void fb_clock_format(__u64 ns, bool frac, char *buf, size_t len)
{
	time_t s = ns / 1000000000ULL;
	struct tm tm;
	size_t n;

	gmtime_r(&s, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (frac)
		snprintf(buf + n, len - n, ".%06uZ", (unsigned)(ns % 1000000000ULL / 1000));
	else
		snprintf(buf + n, len - n, "Z");
}
