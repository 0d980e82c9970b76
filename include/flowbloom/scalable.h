/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Scalable Bloom filter geometry (Almeida, Baquero, Preguica, Hutchison
 * 2007), compiled into the XDP program and the library
 * (user/lib/types/scalable_table.c); the probe, written once for both, is
 * include/flowbloom/probe.h.
 *
 * Up to FB_SBF_MAX_STAGES stages, each a blocked Bloom filter
 * (include/flowbloom/geometry.h) at its own first_block. When the last
 * stage holds its capacity, a new stage is added with capacity s times
 * larger (s = 2) and a rate tightened by r (r = 0.85): stage i is sized for
 * n_0 s^i flows at P_0 r^i. A flow is in the filter if any stage says so,
 * so the rate is at most sum P_0 r^i < P_0 / (1 - r) whatever the number of
 * stages; `create --grow --fp-rate P` takes P_0 = P (1 - r).
 *
 * Stage 0 uses the flow's hash h itself (so stage 0 is exactly a plain
 * blocked filter); stage i > 0 uses fmix64(h + i * golden), a bijection of
 * h, so stages pick their blocks and bits independently and the compound
 * rate is 1 - prod(1 - p_i), as the analysis assumes. The data path probes
 * every stage (at most 8, one cache line each) and stops at the first hit.
 * Stages only ever gain bits: growth never removes a flow.
 */
#ifndef FLOWBLOOM_SCALABLE_H
#define FLOWBLOOM_SCALABLE_H

#include <linux/types.h>
#include "geometry.h"

#define FB_SBF_MAX_STAGES 8
#define FB_SBF_GROWTH 2		  /* s */
#define FB_SBF_TIGHTEN_PPM 850000 /* r = 0.85 */

struct fb_sbf_stage {
	__u32 first_block; /* 64-byte block where the stage's bits start */
	__u32 nblocks;	   /* bit blocks of the stage */
	__u8 k;		   /* bits per flow */
	__u8 pad[3];
	__u32 fp_ppb;	/* the stage's design rate, parts per 10^9 */
	__u64 capacity; /* flows the stage is sized for */
	__u64 count;	/* flows added to it (bookkeeping for user space) */
};

struct fb_sbf_geom {
	__u8 nstages; /* stages in use, 1..FB_SBF_MAX_STAGES */
	__u8 growth;  /* s */
	__u8 pad[2];
	__u32 tighten_ppm; /* r, parts per million */
	__u32 fp0_ppb;	   /* P_0 */
	__u32 pad2;
	__u64 capacity0; /* n_0 */
	__u64 reserved[5];
	struct fb_sbf_stage stage[FB_SBF_MAX_STAGES];
};

_Static_assert(sizeof(struct fb_sbf_stage) == 32, "scalable stage layout");
_Static_assert(sizeof(struct fb_sbf_geom) == 5 * 64, "scalable geometry: five blocks");
_Static_assert(__builtin_offsetof(struct fb_sbf_geom, stage) == 64,
	       "stage descriptors start in the second block, two per block (probe.h)");

static __always_inline __u64 fb_sbf_stage_hash(__u64 h, __u32 i)
{
	return i ? fb_fmix64(h + i * 0x9e3779b97f4a7c15ULL) : h;
}

/* Does stage st (its blocks start at blocks[st->first_block]) hold hash
 * hs (already fb_sbf_stage_hash'ed)? */
static __always_inline int fb_sbf_block_has(const struct fb_block *blk, __u64 hs, __u32 k)
{
	return fb_block_has(blk, hs, k); /* a stage is a blocked Bloom filter */
}

static __always_inline __u32 fb_sbf_block(const struct fb_sbf_stage *st, __u64 hs)
{
	return st->first_block + fb_blocked_index(hs, st->nblocks);
}

#endif
