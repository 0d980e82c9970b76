/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the counting filter (counting.c, counting_bulk.c): one flow's
 * positions, its journaled add and delete, the memory they touch.
 */
#ifndef FLOWBLOOM_USER_COUNTING_INT_H
#define FLOWBLOOM_USER_COUNTING_INT_H

#include <linux/types.h>
#include <stdbool.h>
#include "store/store.h"

unsigned fb_cnt_positions(const struct fb_store *f, const struct fb_key *key, __u64 pos[FB_MAX_K]);
/* The flow at positions pos (k of them), under its own journal entry. */
void fb_cnt_add_at(struct fb_store *f, const struct fb_key *key, const __u64 *pos, unsigned k);
void fb_cnt_del_at(struct fb_store *f, const struct fb_key *key, const __u64 *pos, unsigned k);
/* fb_cnt_del_at() unless a counter says the flow is not there (false). */
bool fb_cnt_del_checked_at(struct fb_store *f, const struct fb_key *key, const __u64 *pos,
			   unsigned k);
void fb_cnt_prefetch(const struct fb_store *f, __u64 p);
__u64 *fb_cnt_bit_word(struct fb_store *f, __u64 p);

#endif
