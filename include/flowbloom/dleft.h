/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * d-left counting Bloom filter geometry (Bonomi, Mitzenmacher, Panigrahy,
 * Singh, Varghese 2006), compiled into the XDP program and the library
 * (user/lib/types/dleft_table.c); the probe, written once for both, is
 * include/flowbloom/probe.h.
 *
 * FB_DLEFT_D = 4 subtables of B = 2^bucket_bits buckets each; a bucket is
 * FB_DLEFT_CELLS = 8 cells; a cell holds a remainder of rem_bits bits and a
 * 2-bit counter: cell = rem << 2 | counter, counter 0 meaning empty. Cells
 * are 16 bits (rem_bits <= 14) or 32 bits (rem_bits <= 30), each written
 * with one naturally aligned store, so a bucket is 16 or 32 bytes and never
 * straddles a cache line.
 *
 * The paper's construction: a "true fingerprint" F of w = bucket_bits +
 * rem_bits bits is taken from the keyed hash h (its low w bits), and
 * subtable i uses P_i(F) for d fixed permutations P_i of [0, 2^w): the top
 * bucket_bits bits are the bucket, the low rem_bits the remainder. Because
 * each P_i is a bijection, two flows share (bucket, remainder) in subtable
 * i exactly when they share F, hence in every subtable: a fingerprint is
 * stored at most once in the whole table (repeated adds raise its counter)
 * and a delete finds the one cell to lower. Here P_i(x) is a multiply by an
 * odd constant, an xorshift by w/2, a second multiply and xorshift, all
 * modulo 2^w: each step is invertible modulo 2^w, so P_i is a bijection;
 * the multiplies carry low bits up into the bucket index, so the d bucket
 * choices look independent (the power of d choices needs that).
 *
 * A flow not in the filter matches exactly when its F equals a stored F,
 * so the false-positive rate is 1 - (1 - 2^-w)^n ~ n / (B 2^rem_bits),
 * whatever subtable each F landed in.
 *
 * Cache lines: the d candidate buckets are independent random choices (the
 * load balancing needs that), so a probe reads d = 4 buckets in 4 cache
 * lines, one each (buckets are aligned, 4 or 2 per line). The four loads do
 * not depend on each other, so the CPU overlaps their misses. Putting the
 * d buckets in one line would make the choices dependent: a line would get
 * a Poisson(d * load) number of flows and overflow often.
 *
 * No flow ever moves: an add writes an empty cell or raises a counter, a
 * delete lowers one; each is a single store, so the data path never misses
 * a flow that is in the table.
 */
#ifndef FLOWBLOOM_DLEFT_H
#define FLOWBLOOM_DLEFT_H

#include <linux/types.h>
#include "geometry.h"

#define FB_DLEFT_D 4
#define FB_DLEFT_CELLS 8
#define FB_DLEFT_CMAX 3 /* 2-bit counter: saturates and then stays */
/* Average flows per bucket the table is sized for (the paper's 6 of 8). */
#define FB_DLEFT_DESIGN_LOAD 6
#define FB_DLEFT_MIN_BUCKET_BITS 2
#define FB_DLEFT_MAX_BUCKET_BITS 24

struct fb_dleft_geom {
	__u32 first_block; /* 64-byte block where subtable 0 starts */
	__u8 bucket_bits;  /* B = 2^bucket_bits buckets per subtable */
	__u8 rem_bits;	   /* remainder bits, <= cell_bits - 2 */
	__u8 cell_bits;	   /* 16 or 32 */
	__u8 pad;
	__u64 count; /* flows added minus deleted (bookkeeping for user space) */
};

_Static_assert(sizeof(struct fb_dleft_geom) == 16, "d-left geometry layout");

/* log2 of a bucket's bytes: 8 cells of 2 or 4 bytes. */
static __always_inline __u32 fb_dleft_bucket_shift(__u32 cell_bits)
{
	return cell_bits <= 16 ? 4 : 5;
}

static __always_inline __u64 fb_dleft_odd(int i, int round)
{
	return fb_odd64((i & 3) * 2 + round); /* hash.h */
}

/* P_i(F) for subtable i (see above). */
static __always_inline __u64 fb_dleft_perm(__u64 f, int i, __u32 w)
{
	__u64 m = w >= 64 ? ~0ULL : (1ULL << w) - 1;
	__u32 s = w >> 1 ? w >> 1 : 1;

	f = (f * fb_dleft_odd(i, 0)) & m;
	f ^= f >> s;
	f = (f * fb_dleft_odd(i, 1)) & m;
	f ^= f >> s;
	return f;
}

/* Subtable i's bucket (0-based inside the subtable) and remainder. */
static __always_inline void fb_dleft_place(__u64 h, const struct fb_dleft_geom *g, int i,
					   __u32 *bucket, __u32 *rem)
{
	__u32 w = g->bucket_bits + g->rem_bits;
	__u64 f = fb_dleft_perm(h & ((1ULL << w) - 1), i, w);

	*bucket = (__u32)(f >> g->rem_bits);
	*rem = (__u32)(f & ((1ULL << g->rem_bits) - 1));
}

/* Global bucket index of subtable i's bucket j, and where it lives. */
static __always_inline __u32 fb_dleft_block(const struct fb_dleft_geom *g, int i, __u32 j)
{
	__u64 bucket = ((__u64)i << g->bucket_bits) + j;

	return g->first_block + (__u32)((bucket << fb_dleft_bucket_shift(g->cell_bits)) >> 6);
}

static __always_inline __u32 fb_dleft_offset(const struct fb_dleft_geom *g, int i, __u32 j)
{
	__u64 bucket = ((__u64)i << g->bucket_bits) + j;

	return (__u32)(bucket << fb_dleft_bucket_shift(g->cell_bits)) & 63;
}

/* Counter (0: absent) of remainder rem in the bucket at byte offset off of
 * blk. Whole 64-bit loads through volatile, offset masked by a constant
 * per width (for the verifier), every cell compared. */
static __always_inline __u32 fb_dleft_bucket_count(const void *blk, __u32 off, __u32 cell_bits,
						   __u32 rem)
{
	const volatile unsigned char *b = (const volatile unsigned char *)blk;
	__u32 found = 0;
	int j, c;

	if (cell_bits <= 16) {
		for (j = 0; j < 2; j++) {
			__u64 v = *(const volatile __u64 *)(b + (off & 48) + 8 * j);

			for (c = 0; c < 4; c++) {
				__u32 cell = (v >> (16 * c)) & 0xffff;

				if ((cell >> 2) == rem && (cell & 3))
					found = cell & 3;
			}
		}
	} else {
		for (j = 0; j < 4; j++) {
			__u64 v = *(const volatile __u64 *)(b + (off & 32) + 8 * j);

			for (c = 0; c < 2; c++) {
				__u32 cell = (__u32)(v >> (32 * c));

				if ((cell >> 2) == rem && (cell & 3))
					found = cell & 3;
			}
		}
	}
	return found;
}

#endif
