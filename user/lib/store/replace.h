/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `load --replace` (replace.c).
 */
#ifndef FLOWBLOOM_USER_REPLACE_H
#define FLOWBLOOM_USER_REPLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "store/store.h"

/* Replace the filter's whole content with keys, in a new filter array of
 * nblocks blocks and k bits (and new counters for a counting filter), then
 * switch the data path to it in one step. -1: nothing changed (*bad as in
 * fb_rules_add, or (size_t)-1). Call with the lock held. */
int fb_replace(struct fb_store *f, __u32 nblocks, __u8 k, const struct fb_key *keys, size_t n,
	       size_t *bad);
/* fb_replace() for another filter type: geom (fb_type_geom_blocks()
 * blocks) is the new array's geometry, written before the rules. */
int fb_replace_geom(struct fb_store *f, __u32 nblocks, __u8 k, const struct fb_block *geom,
		    const struct fb_key *keys, size_t n, size_t *bad);
/* A larger array (nblocks after the header) with the same content,
 * switched in as fb_replace() does: a scalable filter's room for new
 * stages. -1 (printed): nothing changed. Call with the lock held. */
int fb_replace_grow(struct fb_store *f, __u32 nblocks);
/* The same with any content: fill() writes the new array nf (its header a
 * copy of the old one with the new geometry, no rules, the other
 * generation; counters and exact sets empty, the sets sized for nsets
 * rules) and returns 0, or non-zero to drop it (nothing changed). */
int fb_replace_fill(struct fb_store *f, __u32 nblocks, __u8 k, size_t nsets,
		    int (*fill)(struct fb_store *nf, void *arg), void *arg);
/* Every replace carries the rules with a lifetime (gens.h) over, unless
 * fill made generations itself. fb_replace_timed() is the other way round:
 * the permanent rules are kept and the rules with a lifetime are replaced
 * by keys, living secs (load --replace --ttl). -1 as fb_replace(); *bad
 * also (size_t)-1 for a failure of no particular rule. */
int fb_replace_timed(struct fb_store *f, const struct fb_key *keys, size_t n, double secs,
		     size_t *bad);

#endif
