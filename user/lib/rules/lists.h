/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Block-lists (lists.c): files of addresses, prefixes, ranges, FireHOL
 * netsets, Spamhaus DROP lines and FLOWs, read into rules. What `load`,
 * `apply` and `apply --check` read.
 */
#ifndef FLOWBLOOM_USER_LISTS_H
#define FLOWBLOOM_USER_LISTS_H

#include <stddef.h>
#include "flowbloom/key.h"

struct fb_list {
	struct fb_key *keys;
	size_t n, cap;
};

/* Append FILE's rules ("-": stdin) to l. 0, or -1 with the error reported
 * as FILE:LINE: why (l then holds what came before: free it). */
int fb_list_read(const char *file, struct fb_list *l);
/* Sort l and drop duplicates (they add nothing, and would count twice). */
void fb_list_unique(struct fb_list *l);
void fb_list_free(struct fb_list *l);

#endif
