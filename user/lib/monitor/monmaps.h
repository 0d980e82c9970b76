/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The user-space side of flow monitoring: creating a filter's monitoring
 * maps and pinning them in its bpffs directory, handing them to the XDP
 * program at load, and reading them back (sketch estimates, top talkers,
 * counters). The data path and the geometry are in bpf/monitor.bpf.h and
 * include/flowbloom/monitor.h.
 *
 *   <root>/<NAME>/monitor/config    struct fb_mon_config (geometry, hash key)
 *   <root>/<NAME>/monitor/sketch    cells, one plane per CPU      (--monitor)
 *   <root>/<NAME>/monitor/top       top-talker buckets per CPU    (--monitor)
 *   <root>/<NAME>/monitor/top_keys  their flow keys               (--monitor)
 *   <root>/<NAME>/monitor/seen      seen-set slots                (--new-flows)
 *   <root>/<NAME>/monitor/newflows  ring buffer of new-flow events (--new-flows)
 *   <root>/<NAME>/monitor/mstats    per-CPU monitoring counters   (--new-flows)
 *   <root>/<NAME>/monitor/flows     per-flow table, one plane per CPU (--accounting)
 *
 * Arrays are BPF_F_MMAPABLE: readers map them instead of a syscall per cell.
 */
#ifndef FLOWBLOOM_USER_MONMAPS_H
#define FLOWBLOOM_USER_MONMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/flowacct.h"
#include "flowbloom/monitor.h"
#include "store/store.h"

struct flowbloom_bpf;

#define FB_MON_DEF_EPSILON 0.001
#define FB_MON_DEF_DELTA 0.01
#define FB_MON_DEF_EXPECT 100000
#define FB_MON_DEF_AGE 60.0
#define FB_MON_DEF_RING (1U << 20)
#define FB_MON_DEF_FLOWS 65536 /* accounted flows per CPU */
#define FB_MON_MIN_AGE 0.1
#define FB_MON_MAX_AGE (7 * 86400.0)

/* getopt codes of attach's monitoring options (fb_mon_option in cmd.h). */
enum fb_mon_optcode {
	FB_OPT_MONITOR = 0x200,
	FB_OPT_EPSILON,
	FB_OPT_DELTA,
	FB_OPT_NEWFLOWS,
	FB_OPT_AGE,
	FB_OPT_EXPECT,
	FB_OPT_RING,
	FB_OPT_ACCT,
	FB_OPT_MAXFLOWS,
	FB_OPT_SKETCHBY,
};

/* What `attach --monitor / --new-flows` asks for. */
struct fb_mon_opts {
	unsigned given;	  /* 1 << (FB_OPT_* - FB_OPT_MONITOR) of the options given */
	bool sketch;	  /* count-min sketch + top talkers */
	bool newflows;	  /* seen-set + new-flow events */
	bool atomic;	  /* one shared sketch plane, atomic adds (benchmarks) */
	double epsilon;	  /* sketch error, relative to N */
	double delta;	  /* probability of exceeding it */
	__u64 expect;	  /* distinct flows per aging period (seen-set size) */
	double age;	  /* aging period, seconds */
	__u32 ring_bytes; /* new-flow ring buffer */
	bool acct;	  /* per-flow accounting table */
	__u64 max_flows;  /* its flows per CPU */
	__u32 sketch_by;  /* 0: flows; FB_MON_BY_SRC or FB_MON_BY_DST (--sketch-by) */
};

/* Largest map value (a CPU's sketch plane, or the seen-set) we create. */
#define FB_MON_MAX_VALUE (1ULL << 30)
#define FB_SEEN_MAX_SLOTS                                                                          \
	(FB_MON_MAX_VALUE / sizeof(struct fb_seen_slot) - FB_SEEN_HDR_SLOTS - FB_SEEN_PAD_SLOTS)

struct fb_monitor {
	char dir[640]; /* its path, for messages */
	int dir_fd;    /* the monitoring directory, verified (pintree.c) */
	struct fb_mon_config cfg;
	__u64 kw[FB_MON_NH_WORDS]; /* NH key words: fb_mon_words(&cfg) */
	int config_fd, sketch_fd, top_fd, keys_fd, seen_fd, events_fd, stats_fd;
	struct fb_mon_cell *cells; /* mmap of the sketch, all planes */
	size_t cells_bytes;
	struct fb_top_plane *top; /* one per CPU */
	size_t top_bytes;
	struct fb_top_keys *keys; /* one per CPU */
	size_t keys_bytes;
	struct fb_seen_slot *seen; /* slot 0: struct fb_seen_clock */
	size_t seen_bytes;
	int flows_fd;
	void *flows; /* the accounting planes, mapped read-write (flowacct.h) */
	size_t flows_bytes, plane_bytes;
};

/* A copy of the sketch with the planes summed: what estimates are read
 * from, so one reading sees one instant (more or less) of every cell. */
struct fb_mon_snap {
	__u32 shift, depth;
	struct fb_mon_cell *cells; /* depth * width */
	__u64 packets, bytes;	   /* N: the sum of row 0 */
};

struct fb_top_entry {
	struct fb_key key;
	__u64 packets, bytes;
};

void fb_monitor_opts_default(struct fb_mon_opts *o);
/* w = 2^shift >= e / eps, d = ceil(ln(1 / delta)); -1 (printed) out of
 * range. */
int fb_monitor_geometry(double epsilon, double delta, __u32 *shift, __u32 *depth);
/* Seen-set: slots and k for `expect` flows per period; the expected share
 * of new flows missed (a false positive in either generation). */
void fb_monitor_seen_size(__u64 expect, __u32 *slots, __u32 *k);
double fb_monitor_seen_miss_rate(double flows, __u32 slots, __u32 k);
/* The kernel's tick (1/HZ) in ns: what a jiffy is worth. */
__u64 fb_monitor_tick_ns(void);
/* Accounting table buckets for max_flows flows per CPU. */
__u32 fb_monitor_acct_buckets(__u64 max_flows);

/* All below print one error line and return -1 on failure. */
/* Create (replacing any old ones) and pin the monitoring maps of f. */
int fb_monitor_create(const struct fb_store *f, const struct fb_mon_opts *o);
/* For attach: if f is attached nowhere, fresh maps (the sketch counts from
 * this attachment on); else the existing ones, which must have what o asks
 * for (geometry options given must match). Program replacing (attach
 * --replace; 0: none) counts as no attachment: it gives way. Opens them
 * into m. */
int fb_monitor_prepare(const struct fb_store *f, const struct fb_mon_opts *o, __u32 replacing,
		       struct fb_monitor *m);
/* What m's sketch counts: "flow", "src" or "dst" (--sketch-by). */
const char *fb_monitor_sketch_by(const struct fb_monitor *m);
/* The key m's sketch counts key's packets under (fb_mon_sketch_key() for
 * a sketch by address, else key itself). */
void fb_monitor_sketch_key(const struct fb_monitor *m, const struct fb_key *key,
			   struct fb_key *out);
/* One line describing m (`attach` prints it, or a JSON object of its own). */
void fb_monitor_describe(const struct fb_monitor *m, char *buf, size_t len);
/* Effective bounds: eps' = e / w <= eps, delta' = e^-d <= delta. */
double fb_monitor_epsilon(const struct fb_monitor *m);
double fb_monitor_delta(const struct fb_monitor *m);
/* 0 ok; 1 if f has no monitoring maps (nothing printed); -1 error; -3
 * maps of another flowbloom's layout (said: detach everywhere, attach
 * again; fb_monitor_prepare() makes them anew when no program uses them). */
int fb_monitor_open(const struct fb_store *f, struct fb_monitor *m);
/* Are the maps m opened no longer f's monitoring maps (detached
 * everywhere and attached again: attach made new ones, which a reader of
 * the old ones would never see fed)? */
bool fb_monitor_remade(const struct fb_store *f, const struct fb_monitor *m);
void fb_monitor_close(struct fb_monitor *m);
/* f's monitoring directory, checked as every directory of the pin tree:
 * the fd; -1 (printed); -2 (nothing printed) if there is none. */
int fb_monitor_dir(const struct fb_store *f);
/* Remove f's monitor directory and its pins, if there. */
void fb_monitor_unpin(const struct fb_store *f);

int fb_monitor_read_stats(const struct fb_monitor *m, struct fb_mon_stats *out);
/* The aging generation the data path last saw, and the share of its
 * seen bits that are set. */
__u64 fb_monitor_seen_gen(const struct fb_monitor *m);
double fb_monitor_seen_fill(const struct fb_monitor *m);

int fb_monitor_snap_take(const struct fb_monitor *m, struct fb_mon_snap *s);
/* A snapshot summed over planes of m's sketch geometry: plane p's cells
 * at plane0 + p * stride bytes (the sketch's planes, or the accounting
 * table's overflow sketches). 0, or -1 reported. */
int fb_monitor_snap_sum(const struct fb_monitor *m, struct fb_mon_snap *s, const void *plane0,
			size_t stride, __u32 planes);
void fb_monitor_snap_free(struct fb_mon_snap *s);
/* A reading of the sketch (take: fb_monitor_snap_take, or the accounting
 * table's fb_acct_osnap_take).
 * A boundary between intervals whose estimates must add up (ipfix, guard):
 * two readings back to back. A reading takes a while (some 100 us), and a
 * packet counted meanwhile is in some of its flow's cells and not in
 * others; each cell of a reading holds at least what was counted when the
 * reading began and at most what was counted when it ended. *upper, read
 * second, holds in every cell all that *lower does and everything counted
 * before lower's end. Estimate an interval from the previous boundary's
 * lower to this one's upper, then start the next from this lower: every
 * packet then lies inside one interval in every row, and the estimates'
 * sum over intervals is never below the truth. (One reading per boundary
 * can lose such a packet from both intervals: the minimum over rows picks
 * a row where it is in the base.) 0, or -1 reported, neither kept. */
int fb_monitor_snap_pair(const struct fb_monitor *m,
			 int (*take)(const struct fb_monitor *m, struct fb_mon_snap *s),
			 struct fb_mon_snap *lower, struct fb_mon_snap *upper);
/* Estimate of one flow (never below the truth). With base, of the traffic
 * between base and s (the sketch is linear: a difference of two sketches is
 * the sketch of the difference). */
void fb_monitor_estimate(const struct fb_monitor *m, const struct fb_mon_snap *s,
			 const struct fb_mon_snap *base, const struct fb_key *key, __u64 *packets,
			 __u64 *bytes);
/* The n heaviest candidates by packets (or bytes), scored with s (minus
 * base: then only those that sent in between); *out malloc'd. Returns how
 * many (<= n). */
int fb_monitor_top(const struct fb_monitor *m, const struct fb_mon_snap *s,
		   const struct fb_mon_snap *base, bool by_bytes, size_t n,
		   struct fb_top_entry **out);

#endif
