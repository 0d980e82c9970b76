/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Set algebra on Bloom filters (blocked and classic layouts, plain or
 * counting), on plain memory: union, intersection, fold, and cardinality
 * estimates from the fill (Swamidass and Baldi 2007).
 *
 * Two filters combine only with the same layout, hash algorithm, hash key,
 * k and size (and counter width): otherwise the same flow sets different
 * bits in each, and the result would hold neither set. Operations that
 * clear bits (intersection, fold) must not run on a filter the data path
 * is reading: run them on a copy and swap it in.
 */
#ifndef FLOWBLOOM_USER_SETALGEBRA_H
#define FLOWBLOOM_USER_SETALGEBRA_H

#include <stdbool.h>
#include <stddef.h>
#include "flowbloom/geometry.h"

struct fb_bloom_mem {
	struct fb_header *hdr;	 /* geometry and hash key */
	struct fb_block *blocks; /* block 0 of the filter array: bits at FB_HDR_BLOCKS.. */
	__u8 *cnt;	   /* counters by bit position (user/lib/types/counting.h); NULL: none */
	unsigned cnt_bits; /* 4 or 8 */
};

/* 0 if a and b can be combined; -1 with the reason in why. With counters,
 * both must have them, of the same width. */
int fb_sa_compatible(const struct fb_bloom_mem *a, const struct fb_bloom_mem *b, bool counters,
		     char *why, size_t len);
/* dst |= src; counting: counters add, saturating (a saturated counter
 * never comes down, so no false negative is possible). 0 / -1 (why). */
int fb_sa_union(struct fb_bloom_mem *dst, const struct fb_bloom_mem *src, char *why, size_t len);
/* dst &= src; counting: the smaller counter. Holds every flow of both
 * sets' intersection (and possibly more). 0 / -1 (why). */
int fb_sa_intersect(struct fb_bloom_mem *dst, const struct fb_bloom_mem *src, char *why,
		    size_t len);
/*
 * Halve the filter in place; hdr->nblocks becomes nblocks / 2 (a power of
 * two, at least 2). Positions come from multiply-shift reductions,
 * floor(x n / 2^32): with n / 2 that is exactly floor(old / 2). So the
 * blocked layout's block j' = old blocks 2j' and 2j'+1 ORed word by word
 * (bits inside a block depend only on the hash's low half, unchanged), and
 * the classic layout's bit p' = old bits 2p' | 2p'+1, not the halves ORed
 * as for modulo reduction. Counters are summed the same way, saturating.
 * The probe functions with the halved geometry then find every flow.
 */
int fb_sa_fold(struct fb_bloom_mem *f, char *why, size_t len);

/* Flows in the filter estimated from its fill: n = -(m/k) ln(1 - X/m)
 * for the classic layout; for the blocked layout the same over each word
 * position of the blocks (word w of every block is a one-hash filter of
 * nblocks * 64 bits receiving k_w of each flow's bits), summed. INFINITY
 * when full. */
double fb_sa_cardinality(const struct fb_bloom_mem *f);

struct fb_sa_est {
	double a, b;	   /* each filter's flows */
	double uni, inter; /* |A u B| from A|B's fill, |A n B| = a + b - uni */
	double jaccard;	   /* inter / uni */
};

int fb_sa_estimate(const struct fb_bloom_mem *a, const struct fb_bloom_mem *b, struct fb_sa_est *e,
		   char *why, size_t len);

#endif
