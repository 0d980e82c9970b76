/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Probes of the other filter types on the data path: the shared geometry
 * (include/flowbloom/cuckoo.h, dleft.h, scalable.h) turned into reads of
 * 64-byte blocks. Blocks are numbered as the geometry numbers them (the
 * logical array: geometry.h); the includer says where block b is by
 * defining, before including this file,
 *   static __always_inline struct fb_block *fb_tblock(__u32 tbl, __u32 b);
 * (NULL if absent): the product reads the filter's chunks
 * (bpf/filter.bpf.h), tests/program/types_check.bpf.c a plain array.
 */
#ifndef FLOWBLOOM_TYPES_BPF_H
#define FLOWBLOOM_TYPES_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/cuckoo.h"
#include "flowbloom/dleft.h"
#include "flowbloom/scalable.h"

/* Two bucket reads (at most two cache lines), bracketed by the relocation
 * sequence number: a relocation overlapping the probe answers "maybe". */
static __always_inline int fb_cuckoo_probe(__u32 tbl, const struct fb_cuckoo_geom *g, __u64 h)
{
	__u32 fpb = g->fp_bits, nb = g->nbuckets;
	__u32 fp = fb_cuckoo_fp(h, fpb), i1 = fb_cuckoo_index(h, nb),
	      i2 = fb_cuckoo_alt(i1, fp, nb);
	__u32 b1 = fb_cuckoo_block(g, i1), b2 = fb_cuckoo_block(g, i2), s1, s2;
	struct fb_block *blk1, *blk2;
	int hit;

	s1 = fb_cuckoo_read_seq(g);
	blk1 = fb_tblock(tbl, b1);
	blk2 = fb_tblock(tbl, b2);
	if (!blk1 || !blk2)
		return 0;
	hit = fb_cuckoo_bucket_has(blk1, fb_cuckoo_offset(i1, fpb), fpb, fp) |
	      fb_cuckoo_bucket_has(blk2, fb_cuckoo_offset(i2, fpb), fpb, fp);
	s2 = fb_cuckoo_read_seq(g);
	return hit || s1 != s2 || (s1 & 1);
}

/* d = 4 bucket reads, four cache lines, independent of each other. */
static __always_inline int fb_dleft_probe(__u32 tbl, const struct fb_dleft_geom *g, __u64 h)
{
	__u32 found = 0;
	int i;

#pragma unroll
	for (i = 0; i < FB_DLEFT_D; i++) {
		__u32 j, rem, b;
		struct fb_block *blk;

		fb_dleft_place(h, g, i, &j, &rem);
		b = fb_dleft_block(g, i, j);
		blk = fb_tblock(tbl, b);
		if (!blk)
			return 0;
		found |= fb_dleft_bucket_count(blk, fb_dleft_offset(g, i, j), g->cell_bits, rem);
	}
	return found != 0;
}

/* One block per stage, at most FB_SBF_MAX_STAGES, first hit wins. */
static __always_inline int fb_sbf_probe(__u32 tbl, const struct fb_sbf_geom *g, __u64 h)
{
	__u32 n = g->nstages, i;

	for (i = 0; i < FB_SBF_MAX_STAGES; i++) {
		const struct fb_sbf_stage *st = &g->stage[i];
		struct fb_block *blk;
		__u64 hs;
		__u32 b;

		if (i >= n)
			break;
		hs = fb_sbf_stage_hash(h, i);
		b = fb_sbf_block(st, hs);
		blk = fb_tblock(tbl, b);
		if (!blk)
			return 0;
		if (fb_sbf_block_has(blk, hs, st->k))
			return 1;
	}
	return 0;
}

#endif
