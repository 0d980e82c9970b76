// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Messages said in full at most `burst` times a window (ratelimit.h).
 */
#include <time.h>
#include "ratelimit.h"

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

unsigned long long fb_ratelimit_due(struct fb_ratelimit *r, bool end, double *secs)
{
	unsigned long long held = r->held;
	double now;

	if (!r->start)
		return 0;
	now = mono();
	if (!end && now < r->start + r->interval)
		return 0;
	*secs = now - r->start;
	r->start = 0;
	r->said = 0;
	r->held = 0;
	return held;
}

bool fb_ratelimit_take(struct fb_ratelimit *r)
{
	if (r->interval <= 0)
		return true;
	if (!r->start) {
		r->start = mono();
		/* CLOCK_MONOTONIC of 0 is the boot's first instant: never
		 * read here, but 0 means "no window". */
		if (!r->start)
			r->start = 1e-9;
	}
	if (r->said < r->burst) {
		r->said++;
		return true;
	}
	r->held++;
	return false;
}
