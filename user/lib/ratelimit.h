/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A message a peer can make once per route, said in full only so often
 * (the kernel's printk_ratelimit): the first `burst` of a window of
 * `interval` seconds in full, the rest counted, and the window's count
 * said once when it is over ("N more ... in the last 10 s"). A hostile
 * input then fills the log at a bounded rate, whatever it sends, and the
 * first ones still say what was refused.
 */
#ifndef FLOWBLOOM_USER_RATELIMIT_H
#define FLOWBLOOM_USER_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>

struct fb_ratelimit {
	double interval;	 /* seconds; 0: every message said */
	unsigned burst;		 /* said in full per window */
	double start;		 /* CLOCK_MONOTONIC the window opened at; 0: none open */
	unsigned said;		 /* in full, in this window */
	unsigned long long held; /* not said, in this window */
};

/* One message of r's kind: true to say it in full, false if it is only
 * counted. A window over has its count said first (fb_ratelimit_due). */
bool fb_ratelimit_take(struct fb_ratelimit *r);
/* How many messages of r's window went unsaid, once the window is over (or
 * now, if end), its length in *secs; 0 while it runs or if none did. The
 * window over is closed. */
unsigned long long fb_ratelimit_due(struct fb_ratelimit *r, bool end, double *secs);

#endif
