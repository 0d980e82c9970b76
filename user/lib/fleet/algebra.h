/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The set-algebra verbs' library side (algebra.c): filters loaded into
 * memory from a pinned filter or an export file, combined there
 * (setalgebra.c does the bits and counters; here: prefix lengths, kinds,
 * exact sets), then written into a filter, created aside and published,
 * or switched in with the replace machinery (replace.c). Intersection and
 * fold clear bits, so a live filter is never changed in place.
 */
#ifndef FLOWBLOOM_USER_ALGEBRA_H
#define FLOWBLOOM_USER_ALGEBRA_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/geometry.h"
#include "fleet/fbx.h"
#include "types/setalgebra.h"

/* A filter in memory: blocks[0] its header, blocks[1] its prefix lengths,
 * blocks[FB_HDR_BLOCKS..] its bits (the layout of the filter array). */
struct fb_alg_img {
	char label[PATH_MAX];	   /* filter name or file, for messages */
	struct fb_block *blocks;   /* FB_HDR_BLOCKS + nblocks blocks */
	__u8 *cnt;		   /* counters (counting filters), else NULL */
	size_t cnt_bytes;	   /* their size */
	struct fb_fbx_rule *rules; /* --confirm exact: the exact sets' rules */
	size_t nrules;
	struct fb_bloom_mem m; /* the same memory, for setalgebra.c */
	__u32 crc;	       /* loaded from a filter: CRC-32 of its array, counters and
				* exact sets */
	int gens;      /* loaded from a filter: its live generations of rules with a lifetime,
		   * which the copy leaves out (a filter merged into keeps them) */
	__u32 perm_id; /* written into a result's head: the identity of the
			* permanent rules it holds as they were (head.h); 0:
			* the new array's own */
};

/* An argument names an export file, not a filter, when it could not be a
 * filter name: it holds a '/' or a '.' (r1.fbx, ./r1, /var/lib/x). */
bool fb_alg_is_file(const char *arg);
/* Load a filter (under a shared lock, as export) or an export file (read
 * by the one reader, fbx.h: what import accepts). 0, or -1 (printed). */
int fb_alg_load(const char *arg, struct fb_alg_img *img);
void fb_alg_free(struct fb_alg_img *img);

enum fb_alg_op { FB_ALG_UNION, FB_ALG_INTERSECT };
/* dst = dst op src: bits and counters (setalgebra.c), prefix lengths (the
 * union of both lists, or their intersection), kinds (OR / AND), flows
 * (sum, an upper bound / the estimate; counting filters: the counters'
 * sum / k, what `check` expects), exact sets (counts summed / the
 * rules in both, the smaller count). -1 (printed, dst unchanged) if they
 * are incompatible, with the reason. */
int fb_alg_combine(struct fb_alg_img *dst, const struct fb_alg_img *src, enum fb_alg_op op);
/* Write img into filter NAME: created (aside, published by one rename) if
 * it does not exist; otherwise, if compatible, its content replaced by one
 * switch of the outer map (*replaced set). -1 (printed): nothing changed.
 * carry: img holds NAME's permanent rules as they were (a union with NAME,
 * expect_crc set), which keep their identity, so a writer of its own
 * copies there (bgp) finds them where it left them and adds none again;
 * else they are new rules (an intersection may have dropped some).
 * When NAME was itself an input, expect_crc is the crc it had when loaded:
 * if a writer changed it since, the result would lose that change, so it
 * is refused (no lock is held across the loads: no lock-order deadlock
 * between two merges into each other's inputs). */
int fb_alg_store(const char *name, struct fb_alg_img *img, const __u32 *expect_crc, bool carry,
		 bool *replaced);
/* Halve filter NAME (setalgebra.c's fold on a copy, switched in). *nblocks
 * is the new size. -1 (printed): nothing changed. */
int fb_alg_fold(const char *name, __u32 *nblocks);

#endif
