/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rule insertion (rules.c): bits or counters, then the prefix lengths
 * the rules need, then kind flags.
 */
#ifndef FLOWBLOOM_USER_RULES_H
#define FLOWBLOOM_USER_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "store/store.h"

/* Add rules of any kind (plain or counting): bits, then the prefix
 * lengths and masks they need, then kind flags. -1 if a prefix-length list
 * would exceed FB_MAX_LENGTHS (*bad: the first such rule), -4 if the mask
 * table would exceed FB_MAX_MASKS; nothing changed then.
 * -2 if an exact set refused a rule (printed). -3 another filter type
 * could not place rule *bad (full at f->refused_load); nothing changed.
 * Call with the lock held. */
int fb_rules_add(struct fb_store *f, const struct fb_key *keys, size_t n, size_t *bad);
/* Merge the lengths and masks keys need into px; -1 or -4 with *bad as
 * above. */
int fb_rules_merge_lengths(struct fb_prefixes *px, const struct fb_key *keys, size_t n,
			   size_t *bad);
/*
 * Is k a rule the data path can match, of the family it says? Every key
 * that comes from outside the FLOW grammar (an export file's exact sets,
 * the BGP state file, a route's rule) passes this before it becomes a rule:
 * a known kind and family; an address rule's length within its family
 * (IPv4 rules count from 96, ::ffff:0:0/96, and hold a v4-mapped address),
 * its address masked to that length, nothing else set; a 5-tuple of its
 * family's addresses, ports only for protocols that carry them, and for
 * IPv6 no extension header as protocol (the data path keys the protocol
 * after them: such a rule would never match). 0, or -1 with why.
 */
int fb_rules_valid(const struct fb_key *k, char *why, size_t len);
/* enum fb_prefix_list of an address rule, -1 for a 5-tuple; its name. */
int fb_rules_prefix_list(const struct fb_key *k);
const char *fb_rules_prefix_list_name(int l);
/* The masks (rule shapes) of a table into d[FB_MAX_MASKS]; their count. */
int fb_rules_masks(const struct fb_prefixes *px, __u32 *d);
/* Add mask d to the table unless there: -1 if it is full. */
int fb_rules_add_mask(struct fb_prefixes *px, __u32 d);
/* Why keys[bad] (refused with -4 by a batch added to table px) does not
 * fit, for an error line. */
void fb_rules_mask_refusal(const struct fb_prefixes *px, const struct fb_key *keys, size_t bad,
			   char *buf, size_t len);
/* Why k's shape does not fit table t (it holds FB_MAX_MASKS others), for
 * an error line: the shape, the limit and t's shapes. */
void fb_rules_mask_text(const struct fb_prefixes *t, const struct fb_key *k, char *buf, size_t len);
/* Why keys[bad] (refused with -1 by a batch added to table px: a 5th
 * prefix length of its list) does not fit: the list and the lengths it
 * would have. */
void fb_rules_length_refusal(const struct fb_prefixes *px, const struct fb_key *keys, size_t bad,
			     char *buf, size_t len);
/* The reason for either refusal (err -1 or -4), for an error line. */
void fb_rules_refusal(int err, const struct fb_prefixes *px, const struct fb_key *keys, size_t bad,
		      char *buf, size_t len);

/*
 * What `query` answers for k in f alone (the permanent rules, or one
 * generation): true if the data path would find it, a Bloom hit that with
 * --confirm exact is in the exact sets too. A plain address (src/dst
 * ADDR) at each prefix length f holds; any other rule as written, and a
 * prefix rule also whole at a longer length of f's, as `load` expands
 * one: *as is then that length (the key's 128-bit space), else 0.
 * 1 (found), 0 (not), or -1 when it is not found and an exact set could
 * not be read (reported): whether the rule is there is not known.
 */
int fb_rules_query(const struct fb_store *f, const struct fb_key *k, int *as);
/* fb_rules_query() of f's permanent rules, then of its live generations gv
 * (store/gens.h): 1 if any finds it, else -1 if any could not tell, else 0. */
struct fb_gen_views;
int fb_rules_query_gens(const struct fb_store *f, const struct fb_gen_views *gv,
			const struct fb_key *k, int *as);

/* Replace the filter's whole content with keys, in a new filter array of
 * nblocks blocks and k bits (and new counters for a counting filter), then
 * switch the data path to it in one step. -1: nothing changed (*bad as in
 * fb_rules_add, or (size_t)-1). Call with the lock held. */
int fb_rules_replace(struct fb_store *f, __u32 nblocks, __u8 k, const struct fb_key *keys, size_t n,
		     size_t *bad);
/* fb_rules_replace() for a re-sized filter: geom (fb_type_geom_blocks()
 * blocks; NULL for a Bloom filter) is another type's new geometry, written
 * before the rules; capacity, if not 0, the flows the new array is sized
 * for (the new header's capacity). */
int fb_rules_replace_geom(struct fb_store *f, __u32 nblocks, __u8 k, const struct fb_block *geom,
			  __u64 capacity, const struct fb_key *keys, size_t n, size_t *bad);

#endif
