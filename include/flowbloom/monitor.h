/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Flow monitoring, shared by the XDP program (bpf/monitor.h) and the CLI
 * (user/monitor.c): the map value structs, the one keyed hash of a flow key
 * and how it becomes sketch cells, a top-talker bucket and seen-set bits.
 *
 * - Count-min sketch (Cormode and Muthukrishnan 2005): depth d rows of width
 *   w cells {packets, bytes}; w = ceil(e / eps), d = ceil(ln(1 / delta)).
 *   A flow adds to one cell per row and its estimate is the smallest of
 *   them: never below the truth, and above truth + eps * N with probability
 *   at most delta (N: all packets, or all bytes, counted). Row i's column
 *   comes from one 64-bit hash by double hashing, g_i = h1 + i * h2
 *   (Kirsch and Mitzenmacher 2006), reduced by multiply-shift (Lemire 2019).
 *   Each CPU updates its own copy (a "plane") with plain adds; readers sum
 *   the planes. Plain adds on per-CPU planes measured faster than atomic
 *   adds on one shared plane, on one core and on both (README, Monitoring).
 * - Top talkers: a small per-CPU table of candidates, four ways per bucket
 *   (two kept by packets, two by bytes), filled from the estimate the
 *   sketch update just produced: a flow takes the way of the lighter
 *   resident when its estimate is larger. User space scores the candidates
 *   of all CPUs with the whole sketch.
 * - New flows: a Bloom filter of 16-byte slots, each two 64-bit words, one
 *   per generation (the current and the previous aging period). A word is
 *   an 8-bit generation tag and 56 filter bits; a word whose tag is not the
 *   current or previous generation is empty, and is reset the first time a
 *   flow of the current generation lands on it. So aging needs no sweep and
 *   no user-space timer, and both generations of a slot share a cache line.
 *
 * The hash is NH (include/flowbloom/hash.h) under its own 128-bit random key,
 * drawn when the monitoring maps are created: about a third of SipHash-1-3's
 * cost, universal, but not a PRF (an attacker who watches the estimates can
 * learn about the key; the filter's own hash is unaffected).
 */
#ifndef FLOWBLOOM_MONITOR_H
#define FLOWBLOOM_MONITOR_H

#include <linux/types.h>
#include "geometry.h"
#include "hash.h"
#include "key.h"

#define FB_MON_MAGIC 0x4e4f4d46 /* "FMON" little-endian */
#define FB_MON_VERSION 1

/* What an attachment monitors (cfg_mon in bpf/monitor.h, config flags). */
#define FB_MON_SKETCH (1U << 0)	  /* count-min sketch and top-talker table */
#define FB_MON_NEWFLOWS (1U << 1) /* seen-set and new-flow events */
#define FB_MON_ATOMIC (1U << 2)	  /* one shared sketch plane, atomic adds */

#define FB_MON_MAX_DEPTH 8	    /* delta >= e^-8 ~ 3.4e-4 */
#define FB_MON_MAX_WIDTH (1U << 20) /* eps >= 2.6e-6 */
#define FB_TOP_WAYS 4		    /* ways 0-1: by packets, 2-3: by bytes */
#define FB_TOP_BUCKETS 1024	    /* per CPU */
#define FB_SEEN_BITS 56		    /* filter bits per generation word */
#define FB_SEEN_TAG_SHIFT 56
#define FB_SEEN_MAX_K 8
/* Time unit of the generation number: 2^24 ns (16.8 ms). */
#define FB_SEEN_TIME_SHIFT 24

/* Where the pins live, inside the filter's bpffs directory. */
#define FB_MON_DIR "monitor"

struct fb_mon_cell {
	__u64 packets;
	__u64 bytes;
};

/* One bucket of the top-talker table: the hot part the data path reads on
 * every packet, exactly one cache line. The keys live in a second map,
 * written only when a way changes hands. */
struct fb_top_bucket {
	__u64 fp[FB_TOP_WAYS];	  /* the resident's 64-bit hash; 0: empty */
	__u64 score[FB_TOP_WAYS]; /* its estimate on this CPU when last seen */
};

struct fb_seen_slot {
	__u64 w[2]; /* generation g lives in w[g & 1] */
};

/* A new flow, as the ring buffer delivers it. */
struct fb_mon_event {
	struct fb_key key;
	__u64 ts_ns;   /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 ifindex; /* where the packet came in */
	__u32 bytes;   /* length of the first packet */
	__u8 verdict;  /* XDP_* */
	__u8 pad[7];
};

enum fb_mon_stat {
	FB_MON_STAT_NEW = 0,   /* new flows detected (events + lost) */
	FB_MON_STAT_LOST,      /* events the ring buffer had no room for */
	FB_MON_STAT_REFRESHED, /* flows carried over from the previous period */
	FB_MON_STAT_NR,
};

#define FB_MON_STAT_SLOTS 8
_Static_assert(FB_MON_STAT_NR <= FB_MON_STAT_SLOTS, "monitor stat slots");

struct fb_mon_stats {
	__u64 c[FB_MON_STAT_SLOTS];
};

/* The monitoring maps' geometry, pinned beside them (user space only; the
 * program gets the same numbers as read-only data at load). */
struct fb_mon_config {
	__u32 magic;   /* FB_MON_MAGIC */
	__u32 version; /* FB_MON_VERSION */
	__u32 flags;   /* FB_MON_* */
	__u32 width;
	__u32 depth;
	__u32 planes;	   /* sketch planes: possible CPUs, or 1 with FB_MON_ATOMIC */
	__u32 top_planes;  /* top-table planes: possible CPUs */
	__u32 top_buckets; /* per plane */
	__u64 key[2];	   /* NH key */
	double epsilon;	   /* as asked; width = ceil(e / epsilon) */
	double delta;	   /* as asked; depth = ceil(ln(1 / delta)) */
	__u32 seen_slots;
	__u32 seen_k;
	__u64 seen_expect; /* flows per period the seen-set was sized for */
	__u64 age_ns;	   /* aging period */
	__u32 age_mult;	   /* generation = (t >> 24) * age_mult >> 32, see below */
	__u32 ring_bytes;
	__u64 created_ns; /* CLOCK_REALTIME when the maps were created */
	__u64 reserved[4];
};

static __always_inline __u64 fb_mon_hash(const struct fb_key *key, const __u64 mkey[2])
{
	return fb_nh(key, mkey);
}

/* Column of row i for hash h (0 <= result < width). */
static __always_inline __u32 fb_mon_col(__u64 h, __u32 i, __u32 width)
{
	__u32 h1 = (__u32)h, h2 = (__u32)(h >> 32) | 1;

	return fb_reduce32(h1 + i * h2, width);
}

/* Index of the cell of row i in plane p (the sketch map is an array of
 * cells: plane-major, then row, then column). */
static __always_inline __u32 fb_mon_cell_index(__u32 plane, __u32 i, __u32 col, __u32 width,
					       __u32 depth)
{
	return (plane * depth + i) * width + col;
}

static __always_inline __u32 fb_top_index(__u64 h, __u32 buckets)
{
	return fb_reduce32((__u32)(h >> 16), buckets);
}

static __always_inline __u32 fb_seen_index(__u64 h, __u32 slots)
{
	return fb_reduce32((__u32)(h >> 32), slots);
}

/* The flow's k bits among the 56 of a generation word: the split-block
 * salts (geometry.h) give k well-spread 32-bit products, and a
 * multiply-shift maps each to [0, 56). */
static __always_inline __u64 fb_seen_mask(__u64 h, __u32 k)
{
	__u32 lo = (__u32)h;
	__u64 mask = 0;
	int i;

	for (i = 0; i < FB_SEEN_MAX_K; i++)
		if ((__u32)i < k)
			mask |= 1ULL << fb_reduce32(lo * fb_salt(i), FB_SEEN_BITS);
	return mask;
}

static __always_inline __u64 fb_seen_tag(__u64 gen)
{
	return (gen & 0xff) << FB_SEEN_TAG_SHIFT;
}

#define FB_SEEN_TAG_MASK (0xffULL << FB_SEEN_TAG_SHIFT)

/*
 * Generation number of CLOCK_MONOTONIC time now_ns: now_ns / age_ns without
 * a 64-bit division (tens of cycles). With t = now_ns >> 24 and
 * mult = round(2^56 / age_ns), now_ns / age_ns ~ t * mult / 2^32, computed
 * exactly in two halves so nothing overflows for any uptime. Error: the
 * 16.8 ms unit, and the rounding of mult (relative 0.5 / mult: 7e-10 for
 * 0.1 s, 6e-4 for a day), which only stretches the period that little.
 */
static __always_inline __u64 fb_seen_gen(__u64 now_ns, __u32 mult)
{
	__u64 t = now_ns >> FB_SEEN_TIME_SHIFT;

	return (t >> 32) * mult + (((t & 0xffffffffULL) * mult) >> 32);
}

#endif
