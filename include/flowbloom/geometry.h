/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Filter geometry: how a flow key's hash becomes bit positions. Compiled
 * into the XDP program and the library, whose probes are one code
 * (include/flowbloom/probe.h: map lookups on the data path, an mmap in
 * user space), so both sides pick the same bits by construction;
 * tests/program/test_samebits and test_types check it anyway.
 *
 * A filter is, as user space sees it, one array of 64-byte blocks. Block 0
 * holds struct fb_header (geometry, hash key, which rule kinds exist),
 * block 1 the prefix lengths that source and destination rules use (struct
 * fb_prefixes), and blocks FB_HDR_BLOCKS.. hold the m bits. How that array
 * sits in BPF maps (chunks of one fixed shape, so the data path's lookups
 * are inlined) is below, "Physical layout".
 *
 * Two layouts:
 *  - blocked (default): the hash picks one 64-byte block and sets k bits
 *    inside it, bit i in 64-bit word i mod 8 (the split-block filter of
 *    Apache Parquet, widened to 64-bit words), so a probe reads one cache
 *    line whatever k is (Putze, Sanders, Singler 2007).
 *  - classic: k positions across all m bits by Kirsch-Mitzenmacher double
 *    hashing g_i = h1 + i*h2, h1 and h2 the two 32-bit halves of the hash
 *    (h2 forced odd), reduced to [0, m) by multiply-shift instead of modulo
 *    (Lemire 2019): BPF division costs tens of cycles, the multiply one.
 */
#ifndef FLOWBLOOM_GEOMETRY_H
#define FLOWBLOOM_GEOMETRY_H

#include <linux/types.h>
#include "hash.h"
#include "key.h"
#include "prefix.h"
#include "ttl.h"
#include "mask.h"

#define FB_MAGIC 0x4d4f4c42 /* "BLOM" little-endian */
/* 2: the flow key carries the family (key.h); 3: the filter is held in
 * chunks (the physical layout below). A filter of an earlier version is
 * reported as made by an older build, never read. */
#define FB_VERSION 3

#define FB_BLOCK_BYTES 64
#define FB_BLOCK_WORDS 8
#define FB_BLOCK_BITS 512
#define FB_HDR_BLOCKS 2
#define FB_MAX_K 16
/* m <= 2^32 so a position fits the 32x32->64 multiply-shift reduction. */
#define FB_MAX_BLOCKS (1U << 23)

enum fb_layout {
	FB_LAYOUT_BLOCKED = 1,
	FB_LAYOUT_CLASSIC = 2,
};

enum fb_action {
	FB_ACTION_DEFAULT = 0, /* attachment defers to the filter's header */
	FB_ACTION_DROP = 1,    /* block-list: a match is dropped */
	FB_ACTION_ALLOW = 2,   /* allow-list: only matches pass */
	FB_ACTION_MONITOR = 3, /* count, pass everything */
};

/*
 * Filter types (issue 11). A Bloom filter (blocked or classic, plain or
 * counting) has type 0, so every header written before types existed
 * reads as what it is. The other types keep their geometry in the blocks
 * right after the header (FB_TYPE_GEOM_BLOCK, fb_type_geom_blocks() of
 * them: include/flowbloom/cuckoo.h, dleft.h, scalable.h), their table after
 * that; nblocks counts both, so the array is still nblocks + FB_HDR_BLOCKS
 * blocks, and layout and k are 0 (no Bloom geometry to misread).
 */
enum fb_type {
	FB_TYPE_BLOOM = 0,
	FB_TYPE_CUCKOO = 1,
	FB_TYPE_DLEFT = 2,
	FB_TYPE_SCALABLE = 3,
	FB_TYPE_MAX,
};

#define FB_TYPE_GEOM_BLOCK FB_HDR_BLOCKS

static __always_inline __u32 fb_type_geom_blocks(__u32 type)
{
	return type == FB_TYPE_SCALABLE ? 5 : type ? 1 : 0;
}

struct fb_block {
	__u64 w[FB_BLOCK_WORDS];
};

/* Block 0 of every filter. Written by the CLI, read by the data path. */
struct fb_header {
	__u32 magic;	   /* FB_MAGIC */
	__u8 version;	   /* FB_VERSION */
	__u8 layout;	   /* enum fb_layout */
	__u8 hash;	   /* enum fb_hash_alg */
	__u8 k;		   /* bits per flow, 1..FB_MAX_K */
	__u32 nblocks;	   /* bit blocks after the header; m = nblocks * 512 */
	__u32 kinds;	   /* FB_KINDF() of every rule kind ever added */
	__u64 key[2];	   /* 128-bit SipHash key from getrandom() */
	__u64 nflows;	   /* flows added (bookkeeping for info; not read by XDP) */
	__u8 action;	   /* enum fb_action used when an attachment says DEFAULT */
	__u8 counter_bits; /* 0: plain filter; 4 or 8: counting filter */
	__u8 confirm;	   /* 1: confirm hits in the exact sets (fb_exact, fb_lpm) */
	__u8 gen;	   /* generation slot (0/1) of the exact sets in use */
	__u32 fp_ppb;	   /* requested false-positive rate, parts per 10^9 (0: explicit) */
	union {
		__u64 capacity; /* the filter: requested capacity n (0: explicit geometry) */
		__u64 expires;	/* a generation (ttl.h): its expiry, bpf_jiffies64() */
	};
	__u8 type;  /* enum fb_type; 0: Bloom (layout, k, nblocks say how) */
	__u8 flags; /* FB_HDRF_* */
	/* Derived from the above for the data path, in the line it reads
	 * anyway (include/flowbloom/head.h; user/lib/store/head.c writes
	 * them): probe descriptors per family, and whether the filter takes
	 * the fast loop (NH, blocked Bloom). Not exported. */
	__u8 nprobe[2];
	__u8 fast;
	__u8 reserved;
	__u16 gens; /* the filter: generations in use, bit g = generation g of the set (ttl.h) */
};

/* nflows is an estimate: the filter is an intersection of counting filters,
 * whose counters (minima) need not add up to k x flows (`check` skips that
 * test). Carried by union, export and import. */
#define FB_HDRF_NFLOWS_ESTIMATE 1
/* The array is a generation of rules with a lifetime (ttl.h): expires is
 * set, capacity is not, gens is 0. */
#define FB_HDRF_GENERATION 2
/* Compact: a Bloom filter's bits are what its size asks, in whole pages of
 * its chunks, not all of them (fb_whole_pages(); `create --compact`);
 * `load --replace` re-sizes it so again. */
#define FB_HDRF_COMPACT 4

_Static_assert(sizeof(struct fb_header) == FB_BLOCK_BYTES, "header is exactly block 0");
_Static_assert(__builtin_offsetof(struct fb_header, gens) == 62, "gens in the last half-word");

/* Block 1 (FB_PREFIX_BLOCK): the prefix lengths of source and destination
 * rules, and the
 * masks of every other rule shape (mask.h), packed, zero-terminated. A
 * filter made before shapes existed has zeros there: no masks. */
#define FB_PREFIX_BLOCK 1
struct fb_prefixes {
	struct fb_lengths list[FB_PFX_NR]; /* enum fb_prefix_list */
	__u8 masks[FB_MASK_TABLE_BYTES];
};

_Static_assert(FB_PFX_NR * sizeof(struct fb_lengths) + FB_MASK_TABLE_BYTES == FB_BLOCK_BYTES,
	       "the mask table fills block 1");

_Static_assert(sizeof(struct fb_prefixes) == FB_BLOCK_BYTES, "prefix table is exactly block 1");
_Static_assert(sizeof(struct fb_block) == FB_BLOCK_BYTES, "a block is one cache line");

/*
 * Physical layout. The logical array is cut into chunks: BPF arrays of one
 * 256 KiB value each, every one of the same shape. The outer map
 * (fb_filter, an ARRAY_OF_MAPS) then needs no BPF_F_INNER_MAP template,
 * and without that flag the verifier inlines every lookup into an inner
 * map: no helper call per probe (a call and return costs ~12 ns on a
 * kernel whose returns go through AMD's SRSO "Safe RET" thunk). Filters of
 * any size still share the one shape. One value per chunk: a block is the
 * chunk's value plus an offset, one lookup, not one per page.
 *
 * Chunk 0 starts with the head page (struct fb_head, include/flowbloom/
 * head.h): what the data path reads per packet besides the bits. The
 * header and the prefix table are its last two blocks, so logical block L
 * is physical block L + FB_HEAD_SHIFT of the chunks laid end to end, and
 * user space maps the chunks back to back to see the logical array whole.
 *
 * fb_filter's slots: 0 holds chunk 0 (the head: one lookup per packet),
 * 1 + gen * FB_MAX_CHUNKS + i chunk i of generation gen (the header's gen,
 * which `load --replace` flips), chunk 0 included. A replace fills the
 * other generation's slots, then swaps slot 0; see user/lib/store/. The
 * ranges after those two hold the generations of rules with a lifetime
 * (ttl.h), each a head and chunks of its own (at most FB_GEN_MAX_CHUNKS),
 * found through its range's chunk 0.
 */
#define FB_PAGE_BYTES 4096
#define FB_PAGE_BLOCKS (FB_PAGE_BYTES / FB_BLOCK_BYTES) /* 64: the head */
#define FB_CHUNK_BLOCKS 4096
#define FB_CHUNK_BYTES (FB_CHUNK_BLOCKS * FB_BLOCK_BYTES) /* 256 KiB */
#define FB_HEAD_SHIFT (FB_PAGE_BLOCKS - FB_HDR_BLOCKS)	  /* 62 */
#define FB_MAX_CHUNKS ((FB_MAX_BLOCKS + FB_PAGE_BLOCKS + FB_CHUNK_BLOCKS - 1) / FB_CHUNK_BLOCKS)
/* Slot ranges: the filter's two of FB_MAX_CHUNKS (replace generations),
 * then two sets of FB_GEN_SLOTS generations of rules with a lifetime, of
 * FB_GEN_MAX_CHUNKS each (ttl.h). */
#define FB_FILTER_SLOTS (1 + 2 * FB_MAX_CHUNKS + 2 * FB_GEN_SLOTS * FB_GEN_MAX_CHUNKS)

/* Chunks that hold a logical array of nblocks blocks after the header. */
static __always_inline __u32 fb_chunks_for(__u64 nblocks)
{
	return (__u32)((nblocks + FB_PAGE_BLOCKS + FB_CHUNK_BLOCKS - 1) / FB_CHUNK_BLOCKS);
}

/* The blocks after the header that nchunks chunks hold (a filter gets all
 * of them: a larger m only lowers its false-positive rate), at most
 * FB_MAX_BLOCKS. */
static __always_inline __u32 fb_chunks_nblocks(__u32 nchunks)
{
	__u64 n = (__u64)nchunks * FB_CHUNK_BLOCKS - FB_PAGE_BLOCKS;

	return n > FB_MAX_BLOCKS ? FB_MAX_BLOCKS : (__u32)n;
}

/* A Bloom filter of at least nblocks blocks given all of the chunks it
 * takes (create and `load --replace` size filters so). */
static __always_inline __u32 fb_whole_chunks(__u32 nblocks)
{
	return fb_chunks_nblocks(fb_chunks_for(nblocks));
}

/* The same in whole pages (a compact filter, FB_HDRF_COMPACT): the blocks
 * after the header start on a page of chunk 0 (FB_HEAD_SHIFT), so a probe
 * of a small filter reads one of a few pages, whose address translations
 * stay cached, rather than one of its chunk's 64. */
static __always_inline __u32 fb_whole_pages(__u32 nblocks)
{
	__u64 n = ((__u64)nblocks + FB_PAGE_BLOCKS - 1) / FB_PAGE_BLOCKS * FB_PAGE_BLOCKS;

	return n > FB_MAX_BLOCKS ? FB_MAX_BLOCKS : (__u32)n;
}

/* fb_filter's slot of chunk i of generation gen (a filter's header's gen,
 * 0 or 1, which `load --replace` flips). */
static __always_inline __u32 fb_chunk_slot(__u32 gen, __u32 i)
{
	return 1 + (gen & 1) * FB_MAX_CHUNKS + i;
}

/* The same for a generation of rules with a lifetime: range (>= 2,
 * ttl.h fb_gen_range()) is its header's gen. */
static __always_inline __u32 fb_gen_chunk_slot(__u32 range, __u32 i)
{
	return 1 + 2 * FB_MAX_CHUNKS + (range - 2) * FB_GEN_MAX_CHUNKS + i;
}

/* Either, by a header's gen (user space: a test the data path avoids). */
static inline __u32 fb_range_slot(__u32 gen, __u32 i)
{
	return gen < 2 ? fb_chunk_slot(gen, i) : fb_gen_chunk_slot(gen, i);
}

static __always_inline __u32 fb_reduce32(__u32 x, __u32 n)
{
	return ((__u64)x * n) >> 32;
}

/* Parquet's split-block salts (odd multipliers) for bits 0..7, and eight
 * more odd constants for k up to 16 (bit i and i+8 share word i mod 8). */
static __always_inline __u32 fb_salt(int i)
{
	switch (i & 15) {
	case 0:
		return 0x47b6137bU;
	case 1:
		return 0x44974d91U;
	case 2:
		return 0x8824ad5bU;
	case 3:
		return 0xa2b7289dU;
	case 4:
		return 0x705495c7U;
	case 5:
		return 0x2df1424bU;
	case 6:
		return 0x9efc4947U;
	case 7:
		return 0x5c6bfb31U;
	case 8:
		return 0x9e3779b1U;
	case 9:
		return 0x85ebca77U;
	case 10:
		return 0xc2b2ae3dU;
	case 11:
		return 0x27d4eb2fU;
	case 12:
		return 0x165667b1U;
	case 13:
		return 0xd3a2646dU;
	case 14:
		return 0xfd7046c5U;
	default:
		return 0xb55a4f09U;
	}
}

/* Blocked layout: which bit block (0-based, after the header) a hash uses. */
static __always_inline __u32 fb_blocked_index(__u64 h, __u32 nblocks)
{
	return fb_reduce32((__u32)(h >> 32), nblocks);
}

/* Blocked layout: that block's index in the filter array (after the
 * header blocks), what the program looks up and the CLI's mmap indexes. */
static __always_inline __u32 fb_blocked_block(__u64 h, __u32 nblocks)
{
	return FB_HDR_BLOCKS + fb_blocked_index(h, nblocks);
}

/* Blocked layout: the k-bit mask inside the block, one word at a time.
 * Without a branch on k: on the data path a test of k per salt would
 * split the verifier's state sixteen ways at every probe (k is the
 * header's, unknown to it) and carry the split through the rest of the
 * program. */
static __always_inline __u64 fb_blocked_word_mask(__u64 h, __u32 k, int word)
{
	__u32 lo = (__u32)h, on = (1U << (k & 31)) - 1; /* bit i: salt i in use */
	__u64 mask = 0;
	int i;

	for (i = word; i < FB_MAX_K; i += FB_BLOCK_WORDS)
		mask |= (1ULL << ((lo * fb_salt(i)) >> 26)) & (0 - (__u64)(on >> i & 1));
	return mask;
}

/* The two k that fb_block_has() tests without masks, one bit per word:
 * k = 8 (every word) and k = 4 (words 0-3, half the work). Create and
 * load choose one of them when it meets the rate in the memory the filter
 * gets (fb_blocked_fast_k(), user/lib/types/sizing.c). */
#define FB_FAST_K_HI FB_BLOCK_WORDS
#define FB_FAST_K_LO (FB_BLOCK_WORDS / 2)

/* k = 4: one bit in each of words 0-3 (salt w in word w), where
 * fb_blocked_word_mask() puts them. The loop of k = 8 below, written out
 * again: one helper for both (a loop bound as a parameter) makes clang
 * spill more in the data path, and its call chain's stack passes the
 * verifier's 512 bytes. */
static __always_inline int fb_block_has_lo(const struct fb_block *blk, __u64 h)
{
	__u32 lo = (__u32)h;
	__u64 all = ~0ULL;
	int w;

#ifdef __clang__
#pragma unroll
#endif
	for (w = 0; w < FB_FAST_K_LO; w++)
		all &= blk->w[w] >> ((lo * fb_salt(w)) >> 26);
	return all & 1;
}

/* Blocked layout: does blk hold hash h's k bits? Branch-free, every word
 * tested (one cache line either way): the data path's probe, the CLI's
 * test and the scalable filter's stages all use this one. */
static __always_inline int fb_block_has(const struct fb_block *blk, __u64 h, __u32 k)
{
	__u32 lo = (__u32)h;
	__u64 miss = 0;
	int w;

	/* k = 8 (one bit per word) and k = 4 (words 0-3): each word shifted
	 * so that its bit is bit 0, the words ANDed: bit 0 of the result is
	 * set if all of them are. No masks, no complement: a third and a
	 * sixth of the general case's work. */
	if (k == FB_BLOCK_WORDS) {
		__u64 all = ~0ULL;

#ifdef __clang__
#pragma unroll
#endif
		for (w = 0; w < FB_BLOCK_WORDS; w++)
			all &= blk->w[w] >> ((lo * fb_salt(w)) >> 26);
		return all & 1;
	}
	if (k == FB_FAST_K_LO)
		return fb_block_has_lo(blk, h);
#ifdef __clang__
#pragma unroll
#endif
	for (w = 0; w < FB_BLOCK_WORDS; w++) {
		__u64 m = fb_blocked_word_mask(h, k, w);

		miss |= (blk->w[w] & m) ^ m;
	}
	return miss == 0;
}

/* Blocked layout: set hash h's k bits in blk (plain stores: the CLI's
 * writers hold the filter's lock). */
static __always_inline void fb_block_set(struct fb_block *blk, __u64 h, __u32 k)
{
	int w;

	for (w = 0; w < FB_BLOCK_WORDS; w++)
		blk->w[w] |= fb_blocked_word_mask(h, k, w);
}

/* Classic layout: bit position g_i in [0, m) of the i-th probe. */
static __always_inline __u64 fb_classic_bit(__u64 h, __u32 i, __u64 mbits)
{
	__u32 h1 = (__u32)h, h2 = (__u32)(h >> 32) | 1;
	__u32 g = h1 + i * h2;

	return ((__u64)g * mbits) >> 32;
}

/* Where bit position p (0-based within the bit area) lives. */
static __always_inline __u32 fb_bit_block(__u64 p)
{
	return FB_HDR_BLOCKS + (__u32)(p / FB_BLOCK_BITS);
}

static __always_inline int fb_bit_word(__u64 p)
{
	return (p / 64) % FB_BLOCK_WORDS;
}

static __always_inline __u64 fb_bit_mask(__u64 p)
{
	return 1ULL << (p % 64);
}

/* Classic layout: bit position p's bit in blk, its block (fb_bit_block). */
static __always_inline int fb_block_test_bit(const struct fb_block *blk, __u64 p)
{
	return (blk->w[fb_bit_word(p) & (FB_BLOCK_WORDS - 1)] & fb_bit_mask(p)) != 0;
}

static __always_inline void fb_block_set_bit(struct fb_block *blk, __u64 p)
{
	blk->w[fb_bit_word(p) & (FB_BLOCK_WORDS - 1)] |= fb_bit_mask(p);
}

static __always_inline __u64 fb_header_mbits(const struct fb_header *h)
{
	return (__u64)h->nblocks * FB_BLOCK_BITS;
}

/*
 * The k positions of hash h as bit indexes in [0, m), for code that needs
 * them one by one (counters, checks). For the blocked layout, bit i of the
 * block is word i mod 8, bit (lo * salt_i) >> 26 — the same bits
 * fb_blocked_word_mask() sets. Positions may repeat (k > 8, or classic
 * collisions); counters then count the flow twice, consistently.
 */
static __always_inline void fb_positions(__u64 h, __u8 layout, __u32 nblocks, __u32 k,
					 __u64 pos[FB_MAX_K])
{
	__u64 base = (__u64)fb_blocked_index(h, nblocks) * FB_BLOCK_BITS;
	__u64 mbits = (__u64)nblocks * FB_BLOCK_BITS;
	__u32 i;

	for (i = 0; i < k && i < FB_MAX_K; i++) {
		if (layout == FB_LAYOUT_CLASSIC)
			pos[i] = fb_classic_bit(h, i, mbits);
		else
			pos[i] = base + (i % FB_BLOCK_WORDS) * 64 + (((__u32)h * fb_salt(i)) >> 26);
	}
}

#endif
