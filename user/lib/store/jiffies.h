/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The data path's clock, bpf_jiffies64(), from user space (jiffies.c).
 *
 * The kernel counts jiffies in whole ticks of CLOCK_MONOTONIC (the tick
 * handler advances jiffies by the ticks elapsed since the last update, in
 * ktime), so jiffies = floor((monotonic - c) / tick) for a constant c
 * of the boot. c is measured once per process: a 10-instruction XDP program
 * run by BPF_PROG_TEST_RUN writes bpf_jiffies64() into its frame, between
 * two CLOCK_MONOTONIC reads. Every conversion errs on the side of a rule
 * living longer, never shorter.
 */
#ifndef FLOWBLOOM_USER_JIFFIES_H
#define FLOWBLOOM_USER_JIFFIES_H

#include <linux/types.h>

/* Calibrate (once); 0, or -1 reported. */
int fb_jiffies_init(void);
/* Jiffies now, never above the kernel's count. */
__u64 fb_jiffies_now(void);
/* The smallest value x such that jiffies < x at every instant up to secs
 * from now: a rule expiring at x matches for at least secs. */
__u64 fb_jiffies_after(double secs);
/* Seconds from now until the kernel's jiffies reach j (negative: past). */
double fb_jiffies_secs(__u64 j);
/* Seconds per tick. */
double fb_jiffies_tick(void);

#endif
