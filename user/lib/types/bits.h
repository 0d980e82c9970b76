/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Bit operations on a filter's mmap'd array (bits.c).
 */
#ifndef FLOWBLOOM_USER_BITS_H
#define FLOWBLOOM_USER_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "store/gens.h"
#include "store/store.h"

/* Set a key's bits (a Bloom filter's). */
void fb_bits_set(struct fb_store *f, const struct fb_key *key);
/* May the filter hold key? What the data path answers for it (the same
 * probe, include/flowbloom/probe.h), whatever the filter's type. */
bool fb_bits_test(const struct fb_store *f, const struct fb_key *key);
/* The same for hash h over a filter array in memory: blocks[0] its header,
 * nblocks the blocks there (a block beyond answers absent). */
bool fb_probe_array(const struct fb_block *blocks, __u64 nblocks, __u64 h);
/* fb_bits_set() for many keys, faster (prefetches ahead). */
void fb_bits_set_many(struct fb_store *f, const struct fb_key *keys, size_t n);
/* What `query` answers: a 5-tuple or a prefix rule as fb_bits_test(); a
 * plain address (src/dst ADDR) as the data path would for a packet from or
 * to it, through every prefix length the filter holds. */
bool fb_bits_query(const struct fb_store *f, const struct fb_key *k);
/* fb_bits_query() of f's permanent rules and of its live generations gv
 * (store/gens.h) that end at until (jiffies) or later (0: all of them):
 * what `query` answers, and whether a ban of guard's still lasts. */
bool fb_bits_query_gens(const struct fb_store *f, const struct fb_gen_views *gv,
			const struct fb_key *k, __u64 until);
/* Bits set, out of m. */
__u64 fb_bits_popcount(const struct fb_store *f);
/* The false-positive rate per probe of a Bloom filter's array as it is:
 * the chance that a key never added finds all its k bits set, from the
 * bits themselves (a classic filter: fill^k; a blocked one: the mean over
 * blocks of the product, word by word, of each word's fill to the power
 * of the bits the probe tests there). Unlike the formula from the flows
 * added, it does not count a rule added twice twice, and it reads what a
 * fold or a union really left. */
double fb_bits_fpr(const struct fb_store *f);

#endif
