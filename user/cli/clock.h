/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Clocks and interrupts for the CLI's loops (clock.c): stats --watch,
 * top --watch, flows --follow.
 */
#ifndef FLOWBLOOM_CLI_CLOCK_H
#define FLOWBLOOM_CLI_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Ctrl-C and SIGTERM end --watch and --follow loops cleanly (exit 0). */
void fb_catch_interrupt(void);
/* SIGHUP as well, unless ignored (nohup): a terminal or ssh session
 * that goes away ends a capture cleanly, its file kept. */
void fb_catch_hangup(void);
bool fb_interrupted(void);
/* (CLOCK_MONOTONIC in seconds: fb_now() in util.h.) */
/* Sleep until CLOCK_MONOTONIC reaches `until` (seconds); false if
 * interrupted first. Absolute deadlines keep periodic output from
 * drifting. */
bool fb_clock_sleep_until(double until);
__u64 fb_clock_real_ns(void);
__u64 fb_clock_mono_ns(void);
/* ISO 8601 UTC, to the microsecond (frac) or the second. */
void fb_clock_format(__u64 ns, bool frac, char *buf, size_t len);

#endif
