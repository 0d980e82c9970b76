/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Filter probes on the data path: the shared geometry
 * (include/flowbloom/geometry.h) turned into reads of the filter's chunks.
 * The blocked layout reads one 64-byte block and tests all k bits without
 * branches; the classic layout reads up to k blocks and stops at the first
 * zero bit; the other types are in bpf/types.bpf.h.
 *
 * Every lookup here is inlined by the verifier (the chunks have one fixed
 * shape, geometry.h "Physical layout"): a block costs two dependent loads
 * (the chunk's map pointer, then the block), no call.
 */
#ifndef FLOWBLOOM_FILTER_BPF_H
#define FLOWBLOOM_FILTER_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/geometry.h"
#include "flowbloom/head.h"
#include "maps.bpf.h"

/* Physical block p of the filter whose generation's slots start at base
 * (fb_chunk_slot(gen, 0)); NULL if that chunk is not there. */
static __always_inline struct fb_block *fb_block_at(__u32 base, __u32 p)
{
	__u32 slot = base + p / FB_CHUNK_BLOCKS, zero = 0;
	void *chunk = bpf_map_lookup_elem(&fb_filter, &slot);
	__u8 *v;

	if (!chunk)
		return NULL;
	v = bpf_map_lookup_elem(chunk, &zero);
	if (!v)
		return NULL;
	return (struct fb_block *)(v + p % FB_CHUNK_BLOCKS * FB_BLOCK_BYTES);
}

/* Logical block b (the numbering of the geometry and of user space). */
static __always_inline struct fb_block *fb_tblock(__u32 base, __u32 b)
{
	return fb_block_at(base, b + FB_HEAD_SHIFT);
}

#include "types.bpf.h"

static __always_inline int fb_probe_blocked(__u32 base, const struct fb_header *hdr, __u64 h)
{
	struct fb_block *blk = fb_tblock(base, fb_blocked_block(h, hdr->nblocks));

	return blk && fb_block_has(blk, h, hdr->k);
}

static __always_inline int fb_probe_classic(__u32 base, const struct fb_header *hdr, __u64 h)
{
	__u64 mbits = fb_header_mbits(hdr);
	__u32 k = hdr->k;
	__u32 i;

	for (i = 0; i < FB_MAX_K; i++) {
		struct fb_block *blk;
		__u64 p;

		if (i >= k)
			break;
		p = fb_classic_bit(h, i, mbits);
		blk = fb_tblock(base, fb_bit_block(p));
		if (!blk || !fb_block_test_bit(blk, p))
			return 0;
	}
	return 1;
}

/*
 * The layouts and types off the fast path: classic Bloom filters, cuckoo,
 * d-left and scalable filters. A global function, so the verifier checks
 * it once rather than at every probe of the descriptor loop, at the price
 * of a call for these filters only. It gets the head the packet already
 * holds (a pointer to memory, which a global function may take, where a
 * map may not), so a probe reads the filter the packet started with even
 * if `load --replace` switches filters meanwhile. base: the slot of the
 * head's chunk 0 (a filter's, or a generation's of rules with a lifetime).
 */
__noinline int fb_probe_slow(const struct fb_head *head, __u64 h, __u32 base)
{
	const struct fb_header *hdr;
	void *g;

	if (!head)
		return 0;
	hdr = &head->hdr;
	if (hdr->type == FB_TYPE_BLOOM)
		return fb_probe_classic(base, hdr, h);
	/* The geometry: the first logical blocks after the header, in chunk
	 * 0 (the scalable one spans five blocks). */
	g = fb_tblock(base, FB_TYPE_GEOM_BLOCK);
	if (!g)
		return 0;
	if (hdr->type == FB_TYPE_CUCKOO)
		return fb_cuckoo_probe(base, g, h);
	if (hdr->type == FB_TYPE_DLEFT)
		return fb_dleft_probe(base, g, h);
	if (hdr->type == FB_TYPE_SCALABLE)
		return fb_sbf_probe(base, g, h);
	return 0;
}

_Static_assert(FB_TYPE_GEOM_BLOCK + FB_HEAD_SHIFT + 5 <= FB_CHUNK_BLOCKS,
	       "a type's geometry (up to five blocks) sits in chunk 0");

#endif
