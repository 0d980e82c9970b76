/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Filter probes on the data path: the shared geometry
 * (include/flowbloom/geometry.h) turned into BPF array lookups. The blocked
 * layout reads one 64-byte block and tests all k bits without branches;
 * the classic layout reads up to k blocks and stops at the first zero bit.
 */
#ifndef FLOWBLOOM_FILTER_BPF_H
#define FLOWBLOOM_FILTER_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/geometry.h"
#include "maps.bpf.h"
#include "types.bpf.h"

static __always_inline int fb_probe_blocked(void *filter, const struct fb_header *hdr, __u64 h)
{
	__u32 idx = fb_blocked_block(h, hdr->nblocks);
	struct fb_block *blk = bpf_map_lookup_elem(filter, &idx);

	return blk && fb_block_has(blk, h, hdr->k);
}

static __always_inline int fb_probe_classic(void *filter, const struct fb_header *hdr, __u64 h)
{
	__u64 mbits = fb_header_mbits(hdr);
	__u32 k = hdr->k;
	__u32 i;

	for (i = 0; i < FB_MAX_K; i++) {
		__u64 p;
		__u32 idx;
		struct fb_block *blk;

		if (i >= k)
			break;
		p = fb_classic_bit(h, i, mbits);
		idx = fb_bit_block(p);
		blk = bpf_map_lookup_elem(filter, &idx);
		if (!blk || !fb_block_test_bit(blk, p))
			return 0;
	}
	return 1;
}

/* The other filter types (bpf/types.bpf.h), their geometry in the blocks
 * after the header. A global function: the verifier checks it once, not
 * once per call site (fb_probe runs for the 5-tuple and per prefix length,
 * and the scalable probe's 8 stages inlined at each would pass the
 * verifier's limit). A global function cannot take a map pointer, so it
 * looks the filter up again (the outer lookup is inlined: a few
 * instructions). A Bloom filter's path pays only the header's type test. */
__noinline int fb_probe_typed(__u32 type, __u64 h)
{
	__u32 zero = 0, gb = FB_TYPE_GEOM_BLOCK;
	void *filter = bpf_map_lookup_elem(&fb_filter, &zero), *g;

	if (!filter)
		return 0;
	g = bpf_map_lookup_elem(filter, &gb);
	if (!g)
		return 0;
	if (type == FB_TYPE_CUCKOO)
		return fb_cuckoo_probe(filter, g, h);
	if (type == FB_TYPE_DLEFT)
		return fb_dleft_probe(filter, g, h);
	if (type == FB_TYPE_SCALABLE)
		return fb_sbf_probe_blocks(filter, gb, h);
	return 0;
}

/* The filter's NH key words (FB_HASH_NHK) for this CPU, derived again
 * when the secret changed (a new filter or a replace with a new key). A
 * global function: the verifier checks its five SipHash runs once, not
 * once per state the parser leaves (+160k processed instructions). */
__noinline int fb_hkey_derive(struct fb_hkey *c, __u64 key0, __u64 key1)
{
	__u64 key[2] = { key0, key1 };

	if (!c)
		return 0;

	fb_nhk_words(key, c->kw);
	c->key[0] = key0;
	c->key[1] = key1;
	c->valid = 1;
	return 0;
}

static __always_inline const struct fb_hkey *fb_hkey_get(const struct fb_header *hdr)
{
	__u32 zero = 0;
	struct fb_hkey *c = bpf_map_lookup_elem(&fb_hkey, &zero);

	if (c && (!c->valid || c->key[0] != hdr->key[0] || c->key[1] != hdr->key[1]))
		fb_hkey_derive(c, hdr->key[0], hdr->key[1]);
	return c;
}

/* The hash the CLI stored key under (include/flowbloom/hash.h). */
static __always_inline __u64 fb_flow_hash(const struct fb_header *hdr, const struct fb_hkey *hk,
					  const struct fb_key *key)
{
	return fb_hash_with(key, hdr->hash, hdr->key, hk->kw);
}

/* A Bloom filter (type 0): may it hold the flow of hash h? */
static __always_inline int fb_probe_bloom(void *filter, const struct fb_header *hdr, __u64 h)
{
	if (hdr->layout == FB_LAYOUT_CLASSIC)
		return fb_probe_classic(filter, hdr, h);
	return fb_probe_blocked(filter, hdr, h);
}

/* 1 if the filter may hold the flow of hash h, 0 if it certainly does not. */
static __always_inline int fb_probe_hash(void *filter, const struct fb_header *hdr, __u64 h)
{
	if (hdr->type)
		return fb_probe_typed(hdr->type, h);
	return fb_probe_bloom(filter, hdr, h);
}

/* 1 if the filter may hold key, 0 if it certainly does not. */
static __always_inline int fb_probe(void *filter, const struct fb_header *hdr,
				    const struct fb_hkey *hk, const struct fb_key *key)
{
	return fb_probe_hash(filter, hdr, fb_flow_hash(hdr, hk, key));
}

#endif
