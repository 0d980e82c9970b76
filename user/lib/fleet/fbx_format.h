/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The export file format, field by field: what the one writer and the one
 * reader (fbx.h) and the compressed stream under them (fbz.h) agree on.
 *
 * Every integer little-endian, version 2 (version 1 files, written before
 * the flow key carried the address family, are refused: their IPv6 rules
 * would hash differently and never match):
 *   0   "FLOWBLM\n"                          magic (8 bytes)
 *   8   u32 version = 2
 *   12  u32 size of the header that follows (FB_FBX_HDR_SIZE, 120)
 *   16  u8 layout, hash, k, counter_bits, action, confirm, type, flags
 *       (flags: 1, the flow count is an estimate; type: enum fb_type, 0 for
 *       Bloom filters; another type has layout and k 0, which a reader
 *       that predates types refuses, and its geometry in the first blocks
 *       of the bits)
 *   24  u32 nblocks, u32 kinds
 *   32  u64 key[2], u64 flows, u64 capacity
 *   64  u32 fp-rate in parts per 10^9, u32 0
 *   72  64 bytes: struct fb_prefixes (bytes only)
 *   136 nblocks x 64 bytes of bits, as little-endian u64 words
 *   ... counters (counting filters): the counter bytes, 4-bit counters two
 *       per byte, low nibble first
 *   ... exact sets (confirm = 1): u64 n, then n x (40-byte struct fb_key as
 *       bytes, u32 count): every rule of the exact sets
 *   ... generations of rules with a lifetime (u32 at 68 says how many;
 *       fbx_gens.c), each: u64 expiry (CLOCK_REALTIME ns), u64 flows, u32
 *       nblocks, u32 kinds, u8 k, 7 bytes 0, 64 bytes struct fb_prefixes,
 *       then its bits and counters as the filter's
 *   end u32 CRC-32 (zlib) of everything before it
 *
 */
#ifndef FLOWBLOOM_USER_FBX_FORMAT_H
#define FLOWBLOOM_USER_FBX_FORMAT_H

#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/geometry.h"
#include "types/counting.h"

#define FB_FBX_MAGIC "FLOWBLM\n"
#define FB_FBX_VERSION 2

/* Where each header field sits in the file. */
enum fb_fbx_off {
	FB_FBX_OFF_MAGIC = 0,					/* 8 bytes */
	FB_FBX_OFF_VERSION = 8,					/* u32 */
	FB_FBX_OFF_HDR_SIZE = 12,				/* u32 */
	FB_FBX_OFF_LAYOUT = 16,					/* u8 enum fb_layout */
	FB_FBX_OFF_HASH = 17,					/* u8 enum fb_hash_alg */
	FB_FBX_OFF_K = 18,					/* u8 */
	FB_FBX_OFF_COUNTER_BITS = 19,				/* u8 0, 4 or 8 */
	FB_FBX_OFF_ACTION = 20,					/* u8 enum fb_action */
	FB_FBX_OFF_CONFIRM = 21,				/* u8 0 or 1 */
	FB_FBX_OFF_TYPE = 22,					/* u8 enum fb_type */
	FB_FBX_OFF_FLAGS = 23,					/* u8 FB_HDRF_* */
	FB_FBX_OFF_NBLOCKS = 24,				/* u32 */
	FB_FBX_OFF_KINDS = 28,					/* u32 FB_KINDF() */
	FB_FBX_OFF_KEY = 32,					/* 2 x u64 */
	FB_FBX_OFF_FLOWS = 48,					/* u64 */
	FB_FBX_OFF_CAPACITY = 56,				/* u64 */
	FB_FBX_OFF_FP_PPB = 64,					/* u32 */
	FB_FBX_OFF_NGENS = 68,					/* u32 generations */
	FB_FBX_OFF_PREFIXES = 72,				/* struct fb_prefixes */
	FB_FBX_BITS_OFF = FB_FBX_OFF_PREFIXES + FB_BLOCK_BYTES, /* the bits start here */
};
#define FB_FBX_HDR_SIZE (FB_FBX_BITS_OFF - FB_FBX_OFF_LAYOUT)
#define FB_FBX_RULE_BYTES (sizeof(struct fb_key) + 4) /* an exact-set entry */
/* Most exact-set entries (the exact sets' own largest size) and the
 * largest count of one (what a count change can carry). */
#define FB_FBX_MAX_RULES (1U << 28)
#define FB_FBX_MAX_COUNT 0x7fffffffU

/* Bytes of the counters section for nblocks blocks of bits-wide counters
 * (0 for a plain filter): the counter map without its header blocks. */
static inline size_t fb_fbx_counter_bytes(__u32 nblocks, unsigned bits)
{
	return bits ? fb_counting_map_bytes((__u64)nblocks * FB_BLOCK_BITS, bits) -
			       FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES
		    : 0;
}
#define FB_FBX_GEN_HEAD (32 + FB_BLOCK_BYTES)

/* Little-endian integers, as every field of the format is. */
static inline void fb_le_put32(__u8 *p, __u32 v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static inline void fb_le_put64(__u8 *p, __u64 v)
{
	fb_le_put32(p, (__u32)v);
	fb_le_put32(p + 4, (__u32)(v >> 32));
}

static inline __u32 fb_le_get32(const __u8 *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

static inline __u64 fb_le_get64(const __u8 *p)
{
	return fb_le_get32(p) | (__u64)fb_le_get32(p + 4) << 32;
}

#endif
