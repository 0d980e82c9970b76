/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One frame through a loaded program with BPF_PROG_TEST_RUN (testrun.c):
 * what replay does for every packet of a capture and `query --packet` for
 * every flow. Load the program with .trace (and .private_stats, so that the
 * filter's counters stay untouched).
 */
#ifndef FLOWBLOOM_USER_TESTRUN_H
#define FLOWBLOOM_USER_TESTRUN_H

#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/maps.h"

struct flowbloom_bpf;

/* Run frame (len >= 14 bytes: the kernel refuses shorter ones) once:
 * *verdict the XDP action, *tr what the program recorded of it. 0, or
 * -errno (nothing reported: the caller names the packet). */
int fb_test_run(const struct flowbloom_bpf *skel, const void *frame, size_t len, __u32 *verdict,
		struct fb_trace *tr);

#endif
