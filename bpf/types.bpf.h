/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Probes of the other filter types on the data path: the shared geometry
 * (include/flowbloom/cuckoo.h, dleft.h, scalable.h) turned into BPF array
 * lookups of 64-byte blocks, as bpf/filter.bpf.h does for the Bloom layouts.
 * filter is the array of blocks; the geometry is read from wherever the
 * caller keeps it (a header block in the same array, in the product).
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
static __always_inline int fb_cuckoo_probe(void *filter, const struct fb_cuckoo_geom *g, __u64 h)
{
	__u32 fpb = g->fp_bits, nb = g->nbuckets;
	__u32 fp = fb_cuckoo_fp(h, fpb), i1 = fb_cuckoo_index(h, nb),
	      i2 = fb_cuckoo_alt(i1, fp, nb);
	__u32 b1 = fb_cuckoo_block(g, i1), b2 = fb_cuckoo_block(g, i2), s1, s2;
	struct fb_block *blk1, *blk2;
	int hit;

	s1 = fb_cuckoo_read_seq(g);
	blk1 = bpf_map_lookup_elem(filter, &b1);
	blk2 = bpf_map_lookup_elem(filter, &b2);
	if (!blk1 || !blk2)
		return 0;
	hit = fb_cuckoo_bucket_has(blk1, fb_cuckoo_offset(i1, fpb), fpb, fp) |
	      fb_cuckoo_bucket_has(blk2, fb_cuckoo_offset(i2, fpb), fpb, fp);
	s2 = fb_cuckoo_read_seq(g);
	return hit || s1 != s2 || (s1 & 1);
}

/* d = 4 bucket reads, four cache lines, independent of each other. */
static __always_inline int fb_dleft_probe(void *filter, const struct fb_dleft_geom *g, __u64 h)
{
	__u32 found = 0;
	int i;

#pragma unroll
	for (i = 0; i < FB_DLEFT_D; i++) {
		__u32 j, rem, b;
		struct fb_block *blk;

		fb_dleft_place(h, g, i, &j, &rem);
		b = fb_dleft_block(g, i, j);
		blk = bpf_map_lookup_elem(filter, &b);
		if (!blk)
			return 0;
		found |= fb_dleft_bucket_count(blk, fb_dleft_offset(g, i, j), g->cell_bits, rem);
	}
	return found != 0;
}

/* One block per stage, at most FB_SBF_MAX_STAGES, first hit wins. */
static __always_inline int fb_sbf_probe(void *filter, const struct fb_sbf_geom *g, __u64 h)
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
		blk = bpf_map_lookup_elem(filter, &b);
		if (!blk)
			return 0;
		if (fb_sbf_block_has(blk, hs, st->k))
			return 1;
	}
	return 0;
}

/* fb_sbf_probe() for a geometry kept in the filter array itself (the
 * product's layout): struct fb_sbf_geom spans five 64-byte values from
 * block gb, so each stage descriptor is looked up in its own block (two
 * per block, after the first), never read across a value's end. */
static __always_inline int fb_sbf_probe_blocks(void *filter, __u32 gb, __u64 h)
{
	const struct fb_sbf_geom *g = bpf_map_lookup_elem(filter, &gb);
	__u32 n, i;

	if (!g)
		return 0;
	n = g->nstages;
	for (i = 0; i < FB_SBF_MAX_STAGES; i++) {
		const struct fb_sbf_stage *st;
		struct fb_block *blk;
		__u32 sb = gb + 1 + i / 2, b;
		__u64 hs;

		if (i >= n)
			break;
		blk = bpf_map_lookup_elem(filter, &sb);
		if (!blk)
			return 0;
		st = (const struct fb_sbf_stage *)((const char *)blk + (i & 1) * sizeof(*st));
		hs = fb_sbf_stage_hash(h, i);
		b = fb_sbf_block(st, hs);
		blk = bpf_map_lookup_elem(filter, &b);
		if (!blk)
			return 0;
		if (fb_sbf_block_has(blk, hs, st->k))
			return 1;
	}
	return 0;
}

#endif
