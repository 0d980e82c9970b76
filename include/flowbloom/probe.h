/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Each filter type's membership probe, written once: compiled into the XDP
 * program (bpf/filter.bpf.h) and into the library (user/lib/types/
 * probe_mem.h), so `query`, `check` and the data path answer alike by
 * construction. The geometry (which blocks, bits, buckets, cells) is the
 * types' own headers (geometry.h, cuckoo.h, dleft.h, scalable.h); this file
 * turns it into reads of 64-byte blocks.
 *
 * Blocks are numbered as the geometry numbers them (the logical array:
 * block 0 the header, geometry.h). The includer says what names an array
 * and where its block b is, by defining before including this file:
 *   typedef ... fb_tbl_t;
 *   static __always_inline [const] struct fb_block *fb_tblock(fb_tbl_t tbl, __u32 b);
 * returning NULL where there is no block b. The data path: tbl is the slot
 * of the filter's chunk 0, fb_tblock two map lookups (a chunk, then its
 * value); tests/program/types_check.bpf.c: one array map; user space: the
 * mmap of the filter, NULL past its end. A NULL block answers "absent",
 * which on the data path only happens while chunks are being swapped (the
 * head the packet holds names chunks that stay until it is retired) and is
 * what the verifier needs to see tested.
 *
 * Written as the verifier accepts it: loops with a constant bound and an
 * early break (FB_MAX_K, FB_DLEFT_D, FB_SBF_MAX_STAGES), offsets masked by
 * constants inside a block, no pointer arithmetic across blocks. The one
 * probe not taken from here is the data path's fast loop (NH hash, blocked
 * Bloom filter, bpf/flowbloom.bpf.c): for a filter of one chunk it reads the
 * block beside the head it already holds rather than through fb_tblock, a
 * lookup fewer per probe, which an accessor shared with user space cannot
 * express.
 */
#ifndef FLOWBLOOM_PROBE_H
#define FLOWBLOOM_PROBE_H

#include <linux/types.h>
#include "geometry.h"
#include "cuckoo.h"
#include "dleft.h"
#include "scalable.h"

/* Blocked Bloom filter: one block, all k bits (fb_block_has: branch-free). */
static __always_inline int fb_bloom_blocked_probe(fb_tbl_t tbl, const struct fb_header *hdr,
						  __u64 h)
{
	const struct fb_block *blk = fb_tblock(tbl, fb_blocked_block(h, hdr->nblocks));

	return blk && fb_block_has(blk, h, hdr->k);
}

/* Classic Bloom filter: up to k blocks, stopping at the first zero bit. */
static __always_inline int fb_bloom_classic_probe(fb_tbl_t tbl, const struct fb_header *hdr,
						  __u64 h)
{
	__u64 mbits = fb_header_mbits(hdr);
	__u32 k = hdr->k;
	__u32 i;

	for (i = 0; i < FB_MAX_K; i++) {
		const struct fb_block *blk;
		__u64 p;

		if (i >= k)
			break;
		p = fb_classic_bit(h, i, mbits);
		blk = fb_tblock(tbl, fb_bit_block(p));
		if (!blk || !fb_block_test_bit(blk, p))
			return 0;
	}
	return 1;
}

/* Cuckoo: two bucket reads (at most two cache lines), bracketed by the
 * relocation sequence number (cuckoo.h): a relocation overlapping the
 * probe answers "maybe". */
static __always_inline int fb_cuckoo_probe(fb_tbl_t tbl, const struct fb_cuckoo_geom *g, __u64 h)
{
	__u32 fpb = g->fp_bits, nb = g->nbuckets;
	__u32 fp = fb_cuckoo_fp(h, fpb), i1 = fb_cuckoo_index(h, nb),
	      i2 = fb_cuckoo_alt(i1, fp, nb);
	__u32 b1 = fb_cuckoo_block(g, i1), b2 = fb_cuckoo_block(g, i2), s1, s2;
	const struct fb_block *blk1, *blk2;
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

/* d-left: d = 4 bucket reads, four cache lines, independent of each
 * other. The flow's counter (dleft.h; 0: absent). */
static __always_inline __u32 fb_dleft_probe(fb_tbl_t tbl, const struct fb_dleft_geom *g, __u64 h)
{
	__u32 found = 0;
	int i;

#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < FB_DLEFT_D; i++) {
		const struct fb_block *blk;
		__u32 j, rem;

		fb_dleft_place(h, g, i, &j, &rem);
		blk = fb_tblock(tbl, fb_dleft_block(g, i, j));
		if (!blk)
			return 0;
		found |= fb_dleft_bucket_count(blk, fb_dleft_offset(g, i, j), g->cell_bits, rem);
	}
	return found;
}

/* Scalable: one block per stage, at most FB_SBF_MAX_STAGES, first hit
 * wins. */
static __always_inline int fb_sbf_probe(fb_tbl_t tbl, const struct fb_sbf_geom *g, __u64 h)
{
	__u32 n = g->nstages, i;

	for (i = 0; i < FB_SBF_MAX_STAGES; i++) {
		const struct fb_sbf_stage *st = &g->stage[i];
		const struct fb_block *blk;
		__u64 hs;

		if (i >= n)
			break;
		hs = fb_sbf_stage_hash(h, i);
		blk = fb_tblock(tbl, fb_sbf_block(st, hs));
		if (!blk)
			return 0;
		if (fb_sbf_block_has(blk, hs, st->k))
			return 1;
	}
	return 0;
}

/* Is the filter a blocked Bloom filter (the common case, which the data
 * path probes without the call the others cost)? */
static __always_inline int fb_filter_blocked(const struct fb_header *hdr)
{
	return hdr->type == FB_TYPE_BLOOM && hdr->layout == FB_LAYOUT_BLOCKED;
}

/* Every other type and layout (the type's geometry is read from the array:
 * FB_TYPE_GEOM_BLOCK on, the scalable one five blocks; the includer's
 * arrays hold them all when they hold the first, as whole chunks do). */
static __always_inline int fb_filter_probe_slow(fb_tbl_t tbl, const struct fb_header *hdr, __u64 h)
{
	const void *g;

	if (hdr->type == FB_TYPE_BLOOM)
		return fb_bloom_classic_probe(tbl, hdr, h);
	g = fb_tblock(tbl, FB_TYPE_GEOM_BLOCK);
	if (!g)
		return 0;
	if (hdr->type == FB_TYPE_CUCKOO)
		return fb_cuckoo_probe(tbl, g, h);
	if (hdr->type == FB_TYPE_DLEFT)
		return fb_dleft_probe(tbl, g, h) != 0;
	if (hdr->type == FB_TYPE_SCALABLE)
		return fb_sbf_probe(tbl, g, h);
	return 0;
}

/* A filter of any type and layout, as its header hdr says: does it hold
 * hash h (may it: every type answers with false positives)? What the data
 * path answers (bpf/flowbloom.bpf.c calls the two parts across a function
 * boundary) and what user space answers (user/lib/types/bits.c). */
static __always_inline int fb_filter_probe(fb_tbl_t tbl, const struct fb_header *hdr, __u64 h)
{
	if (fb_filter_blocked(hdr))
		return fb_bloom_blocked_probe(tbl, hdr, h);
	return fb_filter_probe_slow(tbl, hdr, h);
}

#endif
