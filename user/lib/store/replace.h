/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Replacing a filter's array in one step (replace.c): `load --replace`
 * (rules.h), set algebra; and a scalable filter's growth, in place.
 */
#ifndef FLOWBLOOM_USER_REPLACE_H
#define FLOWBLOOM_USER_REPLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "store/store.h"

/* A larger array (nblocks after the header): zeroed chunks appended to
 * the array in use (its generation's next slots, mapped again), nothing
 * copied; a scalable filter's room for new stages. -1 (printed): nothing
 * changed. Call with the lock held. */
int fb_replace_grow(struct fb_store *f, __u32 nblocks);
/* The same with any content: fill() writes the new array nf (its header a
 * copy of the old one with the new geometry, no rules, the other
 * generation; counters and exact sets empty, the sets sized for nsets
 * rules) and returns 0, or non-zero to drop it (nothing changed). */
int fb_replace_fill(struct fb_store *f, __u32 nblocks, __u8 k, size_t nsets,
		    int (*fill)(struct fb_store *nf, void *arg), void *arg);
/* With f->keep_same, the new array is compared with the live one first
 * (bits, counters, exact sets, prefix and shape table, header): the same,
 * it is dropped and f->same set (0, nothing changed); with f->dry it is
 * dropped either way, f->same saying which. */
/* Every replace carries the rules with a lifetime (gens.h) over, unless
 * fill made generations itself (fb_replace_timed(), rules/lifetime.h). */

#endif
