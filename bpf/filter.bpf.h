/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Filter probes on the data path: where the filter's blocks are (its
 * chunks), for the probes every type shares with user space
 * (include/flowbloom/probe.h), and the entry the descriptor loop calls for
 * the filters off its fast path.
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
 * (fb_chunk_slot(gen, 0)) in fb_filter; NULL if that chunk is not there. */
static __always_inline struct fb_block *fb_block_at(__u32 base, __u32 p)
{
	return fb_chunk_block(&fb_filter, base, p);
}

/* What names a filter array here (include/flowbloom/probe.h): the slot
 * of its chunk 0 (fb_chunk_slot(gen, 0) of a filter's, fb_gen_chunk_slot()
 * of a generation's), and its logical block b (the numbering of the
 * geometry and of user space). */
typedef __u32 fb_tbl_t;

static __always_inline struct fb_block *fb_tblock(fb_tbl_t base, __u32 b)
{
	return fb_block_at(base, b + FB_HEAD_SHIFT);
}

#include "flowbloom/probe.h"

/*
 * The layouts and types off the fast path: classic Bloom filters, cuckoo,
 * d-left and scalable filters (fb_filter_probe_slow(), probe.h). A global function, so the verifier checks
 * it once rather than at every probe of the descriptor loop, at the price
 * of a call for these filters only. It gets the head the packet already
 * holds (a pointer to memory, which a global function may take, where a
 * map may not), so a probe reads the filter the packet started with even
 * if `load --replace` switches filters meanwhile. base: the slot of the
 * head's chunk 0 (a filter's, or a generation's of rules with a lifetime).
 */
__noinline int fb_probe_slow(const struct fb_head *head, __u64 h, __u32 base)
{
	if (!head)
		return 0;
	return fb_filter_probe_slow(base, &head->hdr, h);
}

_Static_assert(FB_TYPE_GEOM_BLOCK + FB_HEAD_SHIFT + 5 <= FB_CHUNK_BLOCKS,
	       "a type's geometry (up to five blocks) sits in chunk 0");

#endif
