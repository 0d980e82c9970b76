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
 * lengths they need, then kind flags. -1 if a prefix-length list would
 * exceed FB_MAX_LENGTHS (*bad: the first such rule); nothing changed then.
 * -2 if an exact set refused a rule (printed). -3 another filter type
 * could not place rule *bad (full at f->refused_load); nothing changed.
 * Call with the lock held. */
int fb_rules_add(struct fb_store *f, const struct fb_key *keys, size_t n, size_t *bad);
/* Merge the lengths keys need into px; -1 with *bad as above. */
int fb_rules_merge_lengths(struct fb_prefixes *px, const struct fb_key *keys, size_t n,
			   size_t *bad);
/* enum fb_prefix_list of an address rule, -1 for a 5-tuple; its name. */
int fb_rules_prefix_list(const struct fb_key *k);
const char *fb_rules_prefix_list_name(int l);

#endif
