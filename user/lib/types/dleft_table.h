/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * d-left counting Bloom filters in user space, on plain memory (blocks:
 * block 0 of the filter's array; g: include/flowbloom/dleft.h). Flows are
 * given as their 64-bit keyed hashes. Batches are all or nothing (planned
 * on an overlay, user/lib/types/plan.h). Callers hold the filter's write lock.
 */
#ifndef FLOWBLOOM_USER_DLEFT_TABLE_H
#define FLOWBLOOM_USER_DLEFT_TABLE_H

#include <stddef.h>
#include "flowbloom/dleft.h"
#include "types/plan.h"

/* Geometry for capacity flows at rate p: B the power of two keeping the
 * average load <= FB_DLEFT_DESIGN_LOAD flows per bucket at capacity, the
 * fewest remainder bits reaching p, 16-bit cells when they fit.
 * first_block is left to the caller. 0 ok, -1 impossible. */
int fb_dleft_size(double capacity, double p, struct fb_dleft_geom *g);
/* Is g usable inside an array of avail_blocks blocks? 0 ok; -1 (why). */
int fb_dleft_check(const struct fb_dleft_geom *g, __u64 avail_blocks, char *why, size_t len);
__u64 fb_dleft_blocks(const struct fb_dleft_geom *g);
/* Expected rate with `distinct` distinct fingerprints stored:
 * 1 - (1 - 2^-(bucket_bits + rem_bits))^distinct. */
double fb_dleft_fpr(const struct fb_dleft_geom *g, double distinct);

/* The flow's counter: 0 absent, 1..3 (3: saturated, at least 3). The data
 * path's probe (include/flowbloom/probe.h) over blocks, read up to the
 * table's end (fb_dleft_check() first). */
unsigned fb_dleft_lookup(const struct fb_block *blocks, const struct fb_dleft_geom *g, __u64 h);
/* Add n flows: a fingerprint already stored gets its counter raised
 * (saturating at 3), a new one goes to the least loaded of its d buckets,
 * the leftmost on ties. 0 ok; -1 all d buckets of some flow are full
 * (err: which, at what cell load): nothing changed; -2 out of memory. */
int fb_dleft_add(struct fb_block *blocks, struct fb_dleft_geom *g, const __u64 *h, size_t n,
		 struct fb_batch_err *err);
/* Delete n flows: lower each one's counter, free the cell at 0; a
 * saturated counter stays (it may count more flows than it can say).
 * 0 ok; -1 some flow absent (err->bad): nothing changed; -2 no memory. */
int fb_dleft_del(struct fb_block *blocks, struct fb_dleft_geom *g, const __u64 *h, size_t n,
		 struct fb_batch_err *err);
/* Their plans on p (fb_plan_init(p, blocks, fb_dleft_bucket_shift(
 * g->cell_bits))), not applied: the caller applies or drops them. Same
 * returns. */
int fb_dleft_plan_add(struct fb_plan *p, struct fb_dleft_geom *g, const __u64 *h, size_t n,
		      struct fb_batch_err *err);
int fb_dleft_plan_del(struct fb_plan *p, struct fb_dleft_geom *g, const __u64 *h, size_t n,
		      struct fb_batch_err *err);

struct fb_dleft_stats {
	__u64 cells, used, saturated;
	__u64 load[FB_DLEFT_CELLS + 1]; /* buckets holding 0..8 flows */
	__u64 counter_sum;
};

void fb_dleft_stats(const struct fb_block *blocks, const struct fb_dleft_geom *g,
		    struct fb_dleft_stats *st);

#endif
