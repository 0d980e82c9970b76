/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of test_monitor share: the exact per-flow key table, the rig
 * (a filter with monitoring maps and the program loaded on them), frames and
 * the event log.
 */
#ifndef FLOWBLOOM_TEST_MONITOR_H
#define FLOWBLOOM_TEST_MONITOR_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CPU_SET, pthread_setaffinity_np */
#endif

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "types/bits.h"
#include "store/replace.h"
#include "rules/rules.h"
#include "store/stats.h"
#include "store/store.h"
#include "rules/flow.h"
#include "flowbloom.skel.h"
#include "prog/loader.h"
#include "monitor/monmaps.h"
#include "packet.h"
#include "rules/pcapfile.h"
#include "testlib.h"
#include "report.h"

#define NFLOWS 100000
#define NPACKETS 1000000
#define ZIPF_S 1.1
#define FRAME_MAX (65535 + 14 + 8)
/* Open addressing, keys to dense indexes, for exact per-flow counts. */
struct keytab {
	struct fb_key *keys;
	__u64 *packets, *bytes;
	__u32 *slot; /* index + 1, 0: empty */
	size_t n, cap, mask;
};
/* Filter NAME with fresh monitoring maps, and the program loaded on them
 * (counting into the filter's own stats, as an attachment does). */
struct rig {
	struct fb_store f;
	struct fb_monitor m;
	struct flowbloom_bpf *skel;
	int prog;
	struct ring_buffer *rb;
};

/* Events go to a callback that records them per key. */
struct evlog {
	struct keytab *t; /* NULL: only count */
	__u32 *events;	  /* per key index */
	__u64 total, unknown, bad_time;
	__u64 t_min, t_max; /* CLOCK_MONOTONIC window the events must fall in */
	const struct fb_key *ignore;
};

/* test_monitor.c */
extern char label[256];
void kt_init(struct keytab *t, size_t cap);
void kt_free(struct keytab *t);
long kt_find(struct keytab *t, const struct fb_key *k, bool add);
int rig_up(struct rig *r, const char *name, const struct fb_mon_opts *o, bool trace);
void rig_down(struct rig *r);
int send_frame(int prog, const void *frame, size_t len);
size_t build(const struct fb_key *k, size_t extra, __u8 *buf);
int on_event(void *ctx, void *data, size_t len);
__u64 mono_ns(void);

/* monitor_accuracy.c */
void check_events(const char *what, struct rig *r, struct keytab *t, struct evlog *l);
void random_flows(struct keytab *t, size_t n, uint64_t seed);
long feed_zipf(int prog, struct keytab *t, size_t packets, uint64_t seed);
void test_zipf(const char *what, bool atomic, double eps, double delta, bool newflows);
void test_pcaps(const char *dir);

/* monitor_runs.c */
void test_cpus(void);
void test_intervals(void);
void test_aging(void);
void test_top_aging(void);
void test_seen_wrap(void);
void test_overload(void);
void test_hash(void);
int feed(const char *name, size_t packets, size_t flows);

/* monitor_byaddr.c */
void test_byaddr(void);

/* monitor_words.c */
void test_words(void);

#endif
