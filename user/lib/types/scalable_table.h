/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Scalable Bloom filters in user space, on plain memory (blocks: block 0
 * of the filter's array; g: include/flowbloom/scalable.h). Flows are given
 * as their 64-bit keyed hashes. Callers hold the filter's write lock.
 */
#ifndef FLOWBLOOM_USER_SCALABLE_TABLE_H
#define FLOWBLOOM_USER_SCALABLE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include "flowbloom/scalable.h"
#include "types/plan.h"

/* Stage 0 for capacity0 flows, compound rate p: P_0 = p (1 - r), stage 0
 * at first_block. 0 ok, -1 impossible. */
int fb_sbf_init(struct fb_sbf_geom *g, double capacity0, double p, __u32 first_block);
/* Geometry of stage i (capacity n_0 s^i, rate P_0 r^i) right after stage
 * i - 1. 0 ok, -1 too large. */
int fb_sbf_stage_geom(const struct fb_sbf_geom *g, unsigned i, struct fb_sbf_stage *st);
/* Is g usable inside an array of avail_blocks blocks (stages in order,
 * not overlapping, k and counts sane)? 0 ok; -1 (why). */
int fb_sbf_check(const struct fb_sbf_geom *g, __u64 avail_blocks, char *why, size_t len);
/* First block after the last stage in use: the array must hold this many. */
__u64 fb_sbf_end_block(const struct fb_sbf_geom *g);
/* The compound bound P_0 / (1 - r). */
double fb_sbf_bound(const struct fb_sbf_geom *g);
/* Expected rate with the stages' current counts: 1 - prod(1 - p_i(n_i)). */
double fb_sbf_fpr(const struct fb_sbf_geom *g);
__u64 fb_sbf_count(const struct fb_sbf_geom *g);

/* May the filter hold h? The data path's probe (include/flowbloom/probe.h)
 * over blocks, read up to the last stage's end (fb_sbf_check() first). */
bool fb_sbf_lookup(const struct fb_block *blocks, const struct fb_sbf_geom *g, __u64 h);
/*
 * Add n flows; flows already present are not added again (Almeida et
 * al.), so counts stay the number of distinct flows. New flows fill the
 * last stage to its capacity, then new stages are added as needed.
 * avail_blocks: blocks the memory holds. Returns 0 ok; -1 more than
 * FB_SBF_MAX_STAGES stages would be needed (err: the first flow that does
 * not fit); -3 the memory is too small for the new stages: *need_blocks
 * says how large it must be (grow it, zeroed, keeping its contents, and
 * call again); -2 out of memory. Nothing changes unless 0.
 */
int fb_sbf_add(struct fb_block *blocks, __u64 avail_blocks, struct fb_sbf_geom *g, const __u64 *h,
	       size_t n, __u64 *need_blocks, struct fb_batch_err *err);

#endif
