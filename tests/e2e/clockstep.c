// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * For tests/e2e/ipfix.sh, preloaded (LD_PRELOAD) into one process: its
 * CLOCK_REALTIME (clock_gettime, time) is the machine's plus the seconds
 * written in the file $FB_CLOCKSTEP_FILE, read at every call, so a test
 * steps the wall clock of that process alone, as NTP steps a machine's.
 * CLOCK_MONOTONIC is left alone, as a step leaves it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t c, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	const char *path = getenv("FB_CLOCKSTEP_FILE");
	long step = 0;
	FILE *f;
	int r;

	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	if (!real)
		return -1;
	r = real(c, ts);
	if (!r && c == CLOCK_REALTIME && path && (f = fopen(path, "r"))) {
		if (fscanf(f, "%ld", &step) == 1)
			ts->tv_sec += step;
		fclose(f);
	}
	return r;
}

time_t time(time_t *t)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts))
		return (time_t)-1;
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
