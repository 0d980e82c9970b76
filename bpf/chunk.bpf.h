/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The shape of every chunk of a filter's bits (include/flowbloom/
 * geometry.h, "Physical layout"): the inner-map template of fb_filter
 * (maps.bpf.h), and of the benchmark's floor that probes a filter's own
 * chunks (tests/bench/bench.bpf.c), whose outer map must match it; and
 * how a block is found in them. A template only: the chunks are created by
 * the CLI. No map is declared here, so a program may take the shape
 * without fb_filter's pin.
 */
#ifndef FLOWBLOOM_CHUNK_BPF_H
#define FLOWBLOOM_CHUNK_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/geometry.h"
#include "flowbloom/maps.h"

struct fb_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, FB_CHUNK_MAP_FLAGS);
	__uint(max_entries, 1);
	/* Sizes, not types: clang only forward-declares a type used here. */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FB_CHUNK_BYTES);
};

/* Physical block p of the filter whose generation's slots start at base
 * (fb_chunk_slot(gen, 0)) in outer, an ARRAY_OF_MAPS of such chunks: the
 * chunk's slot, then the block in it (two inlined lookups, no call); NULL
 * if that chunk is not there. */
static __always_inline struct fb_block *fb_chunk_block(void *outer, __u32 base, __u32 p)
{
	__u32 slot = base + p / FB_CHUNK_BLOCKS, zero = 0;
	void *chunk = bpf_map_lookup_elem(outer, &slot);
	__u8 *v;

	if (!chunk)
		return NULL;
	v = bpf_map_lookup_elem(chunk, &zero);
	if (!v)
		return NULL;
	return (struct fb_block *)(v + p % FB_CHUNK_BLOCKS * FB_BLOCK_BYTES);
}

#endif
