/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Turning capture on and off in running XDP programs (the protocol is in
 * include/flowbloom/capture.h): find the programs a filter is attached
 * with, take each one's control block under a lease, give them one ring
 * buffer, arm them; renew the lease while reading; disarm and release.
 * Nothing is loaded, attached or detached.
 */
#ifndef FLOWBLOOM_USER_CAPCTL_H
#define FLOWBLOOM_USER_CAPCTL_H

#include <stdbool.h>
#include <net/if.h>
#include <linux/types.h>
#include "flowbloom/capture.h"
#include "store/store.h"

#define FB_CAP_MAX_PROGS 64

struct fb_cap_prog {
	__u32 prog_id;
	char ifname[IF_NAMESIZE];
	char mode[8]; /* native, generic */
	int ctl_fd, rings_fd, buf_fd;
	struct fb_cap_ctl *ctl; /* mmap of the control block */
	__u64 lease;		/* the lease this capture last wrote; 0: not held */
	bool armed;
};

struct fb_cap_opts {
	__u32 verdicts; /* 1 << XDP_DROP | 1 << XDP_PASS */
	__u32 sample;	/* 1 in N */
	__u32 snaplen;	/* 1..FB_CAP_SNAP_MAX */
	__u64 ring_bytes;
};

struct fb_capture {
	struct fb_cap_prog prog[FB_CAP_MAX_PROGS];
	unsigned nprogs;
	int ring_fd; /* the ring buffer every armed program writes */
	__u64 owner; /* pid << 32 | a random nonce */
};

/* The programs filter f is attached with in this network namespace (only
 * on dev, if not NULL), their control blocks opened. -1 (reported) if
 * there is none, or one lacks the capture maps (an older build). */
int fb_capture_open(const struct fb_store *f, const char *dev, struct fb_capture *c);
/* Or one program at a time (loaded, attached or not: the benchmark's),
 * after fb_capture_init(): 0, or -1 (reported). */
void fb_capture_init(struct fb_capture *c);
int fb_capture_add(struct fb_capture *c, __u32 prog_id, const char *ifname, const char *mode);
/* Take every program's control block (refused, reported, if another
 * capture holds one: nothing is changed then), create the ring buffer of
 * o->ring_bytes (a power of two, at least a page), reset the counters,
 * arm. Returns the ring buffer's fd (owned by c), or -1. */
int fb_capture_start(struct fb_capture *c, const struct fb_cap_opts *o);
/* Push the lease forward (call every FB_CAP_RENEW_NS or so). If the lease
 * ran out meanwhile (this process was stopped) and nobody took over, the
 * capture is re-armed; *lapsed counts how often. -1 (reported): another
 * capture took a control block over. */
int fb_capture_renew(struct fb_capture *c, unsigned *lapsed);
/* The counters of every armed program, summed over CPUs. */
int fb_capture_stats(const struct fb_capture *c, __u64 stat[FB_CAP_STAT_NR]);
/* Disarm, empty the ring slots, release the leases. Records already in
 * the ring stay readable through ring_fd until fb_capture_close(). */
void fb_capture_stop(struct fb_capture *c);
void fb_capture_close(struct fb_capture *c);

/* The capture ring buffer program prog_id holds now: its size in bytes
 * (0: none) and, in *running, whether a capture's lease on the program
 * still runs. A ring held with no capture running is one a killed capture
 * left: the next capture on the program, or a detach, frees it. 0: both
 * known; 1: the program has no capture maps of this build (0 and false);
 * -1 with errno: the program is gone or it, its maps or its control
 * cannot be read now, neither known; -2 with errno: *running known, the
 * ring's size not (memory, say). */
int fb_capture_held(__u32 prog_id, __u64 *ring_bytes, bool *running);

/* CLOCK_MONOTONIC_COARSE in ns: the clock of leases. */
__u64 fb_capture_clock(void);

#endif
