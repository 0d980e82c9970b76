/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Cuckoo filters in user space, on plain memory: blocks is block 0 of the
 * filter's array (the mmap of the BPF map, or any buffer), g its geometry
 * (include/flowbloom/cuckoo.h). Flows are given as their 64-bit keyed
 * hashes (fb_hash_key()). Callers hold the filter's write lock.
 *
 * Batches are all or nothing: a batch is planned on an overlay first
 * (user/lib/types/plan.h) and applied to the live memory only if every flow fits
 * (adds) or is present (deletes).
 */
#ifndef FLOWBLOOM_USER_CUCKOO_TABLE_H
#define FLOWBLOOM_USER_CUCKOO_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include "flowbloom/cuckoo.h"
#include "types/plan.h"

/* Buckets a relocation search may visit per flow (BFS, Li et al. 2014):
 * the bound on "kicks". How often an add finds no chain at a given load
 * does not depend on the table's size, so a large table meets one before
 * its design load 0.95 the more often the more flows it holds: with 500,
 * 1 of 2 tables of 2^26 buckets refused below 0.95, and 2^20- and
 * 2^22-bucket tables refused 4.7 and 18 flows each below 0.96. With
 * 2000, none of 36 such tables refused a flow below 0.965 (a chain is
 * about one level deeper; the search costs only when both buckets are
 * full, at most 2000 buckets read). */
#define FB_CUCKOO_MAX_KICKS 2000

/* Smallest fingerprint (8, 12, 16 or 32 bits) whose rate at the design
 * load is <= p; 0 if even 32 bits cannot. */
unsigned fb_cuckoo_fp_bits_for(double p);
/* Geometry for capacity flows at rate p: fp_bits as above, nbuckets the
 * smallest power of two that keeps the load <= FB_CUCKOO_DESIGN_LOAD at
 * capacity (<= 0.75 in a table under 2048 buckets; 32 buckets at least).
 * first_block is left to the caller. 0 ok, -1 impossible. */
int fb_cuckoo_size(double capacity, double p, struct fb_cuckoo_geom *g);
/* The load a table of nbuckets is sized for (0.75 under 2048 buckets,
 * else FB_CUCKOO_DESIGN_LOAD). */
double fb_cuckoo_design_load(__u32 nbuckets);
/* Is g a geometry these functions can work on, inside an array of
 * avail_blocks blocks? A header read from a map is input: check it before
 * any other call. 0 ok; -1 with the reason in why. */
int fb_cuckoo_check(const struct fb_cuckoo_geom *g, __u64 avail_blocks, char *why, size_t len);
/* 64-byte blocks the table occupies. */
__u64 fb_cuckoo_blocks(const struct fb_cuckoo_geom *g);
/* Expected rate with n flows stored: 1 - (1 - 1/(2^f - 1))^(2 b alpha),
 * alpha = n / (b * nbuckets) (fingerprints are uniform over 2^f - 1
 * non-zero values). */
double fb_cuckoo_fpr(const struct fb_cuckoo_geom *g, double n);
double fb_cuckoo_load(const struct fb_cuckoo_geom *g);

/* May the table hold h? The data path's probe (include/flowbloom/probe.h)
 * over blocks, read up to the table's end (fb_cuckoo_check() first). */
bool fb_cuckoo_lookup(const struct fb_block *blocks, const struct fb_cuckoo_geom *g, __u64 h);
/* Add n flows. 0 ok; -1 some flow found no slot within FB_CUCKOO_MAX_KICKS
 * (err: which one, at what load): nothing changed; -2 out of memory. */
int fb_cuckoo_add(struct fb_block *blocks, struct fb_cuckoo_geom *g, const __u64 *h, size_t n,
		  struct fb_batch_err *err);
/* The plan of fb_cuckoo_add() without applying it: p must be initialised
 * with fb_plan_init(p, blocks, fb_cuckoo_bucket_shift(g->fp_bits)); on 0
 * the caller applies (fb_plan_apply) or drops it. Same returns. */
int fb_cuckoo_plan_add(struct fb_plan *p, struct fb_cuckoo_geom *g, const __u64 *h, size_t n,
		       struct fb_batch_err *err);
/* Delete n flows, one stored copy each. 0 ok; -1 some flow's fingerprint
 * is in neither bucket (err->bad): nothing changed; -2 out of memory.
 * A fingerprint shared with another flow passes this check: deleting a
 * flow that was never added can remove another's (hence the CLI's
 * --confirm exact / --force rule). */
int fb_cuckoo_del(struct fb_block *blocks, struct fb_cuckoo_geom *g, const __u64 *h, size_t n,
		  struct fb_batch_err *err);
/* Its plan, as fb_cuckoo_plan_add() is fb_cuckoo_add()'s. */
int fb_cuckoo_plan_del(struct fb_plan *p, struct fb_cuckoo_geom *g, const __u64 *h, size_t n,
		       struct fb_batch_err *err);
/* Union: every fingerprint stored in src (a filter with the same hash key,
 * which the caller checks, and the same geometry) is added to g's table,
 * as a multiset (a flow in both is then stored twice, and needs two
 * deletes). All or nothing. 0 ok; -1 full (err: fingerprints placed, load);
 * -2 out of memory; -3 geometries differ (why). */
int fb_cuckoo_union(struct fb_block *blocks, struct fb_cuckoo_geom *g,
		    const struct fb_block *src_blocks, const struct fb_cuckoo_geom *src, char *why,
		    size_t len, struct fb_batch_err *err);
/* End a relocation chain a killed writer left open (g->seq odd; the
 * caller holds the filter's lock): the table then holds each stored
 * fingerprint as often as before the chain, and probes are exact again.
 * Nothing to do when seq is even. */
void fb_cuckoo_end_chain(struct fb_block *blocks, struct fb_cuckoo_geom *g);
/* Slots in use, counted from the table (the exact number of stored
 * fingerprints, whatever g->count says). */
__u64 fb_cuckoo_occupied(const struct fb_block *blocks, const struct fb_cuckoo_geom *g);

#endif
