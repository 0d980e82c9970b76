/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rules with a lifetime (gens.c): the generations of a filter (see
 * include/flowbloom/ttl.h for the layout and the data path's side).
 *
 * A generation is a whole filter array in an outer-map slot of the set in
 * use, with its expiry in its header, and for a counting filter counters
 * of its own (pinned as gcntS, S the slot). Writers hold the filter's lock.
 * A generation whose expiry passed is ignored by the data path at once; the
 * next writer reclaims its slot (fb_gens_reclaim), and so does check
 * --repair, but nothing depends on it.
 */
#ifndef FLOWBLOOM_USER_GENS_H
#define FLOWBLOOM_USER_GENS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/ttl.h"
#include "store/store.h"

/* Lifetimes accepted: 10 ms (a few ticks) to 30 days. */
#define FB_TTL_MIN 0.01
#define FB_TTL_MAX (30 * 86400.0)
/* The longest a generation lives: the longest lifetime and the quarter
 * it may end after it (include/flowbloom/ttl.h). */
#define FB_GEN_MAX_SECS (FB_TTL_MAX + FB_TTL_MAX / FB_GEN_DIV)

struct fb_gen {
	unsigned g;    /* 0..FB_GEN_SLOTS-1 in the set */
	__u32 slot;    /* outer-map slot */
	__u64 expires; /* jiffies */
	double secs;   /* until expiry; <= 0: expired (not yet reclaimed) */
	__u64 nflows;  /* rules added to it */
	__u32 nblocks; /* its geometry */
	__u8 k;
	/* fb_gens_add() refusing a rule: the prefix lengths and shapes of
	 * the generation it was refused by (empty for a new one). */
	struct fb_prefixes px;
};

/* Can f hold rules with a lifetime? 0, or -1 reported. */
int fb_gens_supported(const struct fb_store *f);
/* The generations in f's mask, by expiry; how many (-1 reported). */
int fb_gens_list(const struct fb_store *f, struct fb_gen out[FB_GEN_SLOTS]);
/* Generation g of the set in use as a store the rule code writes
 * (fb_rules_add, counting): f's identity, the generation's array and
 * counters. fb_gen_close() releases only what fb_gen_open() opened. 0,
 * -1 (reported), or -2 (reported) for damage no writer leaves: its head,
 * a chunk or its counters missing, a header not a generation's. */
int fb_gen_open(const struct fb_store *f, unsigned g, struct fb_store *gs);
void fb_gen_close(struct fb_store *gs);

/* The most blocks a generation has: nblocks, at most FB_GEN_MAX_CHUNKS
 * chunks' worth (fb_gen_make() cuts a larger template to that). */
__u32 fb_gen_max_blocks(__u32 nblocks);
/* A new, empty generation g of set, shaped as tmpl, expiring at expires
 * (jiffies), opened into gs; the caller sets its bit in the mask. 0, or -1
 * reported. (Rules go in through rules/lifetime.h.) */
int fb_gen_make(const struct fb_store *dir, const struct fb_header *tmpl, unsigned set, unsigned g,
		__u64 expires, struct fb_store *gs);
/* Expired generations out of the mask and their slots emptied; how many,
 * or -1 (reported) if the generations cannot be read now: none reclaimed,
 * and the writer stops (it said an error). */
int fb_gens_reclaim(struct fb_store *f);
/* The live generations of f, opened (for query, del, count, info):
 * fb_gens_views_close() releases them. */
struct fb_gen_views {
	int n;
	struct fb_gen g[FB_GEN_SLOTS];
	struct fb_store v[FB_GEN_SLOTS];
};
/* How many; < 0 (reported) if one cannot be opened: -2 if it is damaged
 * (fb_gen_open()). */
int fb_gens_views_open(const struct fb_store *f, struct fb_gen_views *gv);
void fb_gens_views_close(struct fb_gen_views *gv);
/* The same for a reader without the lock, whose filter a replace may
 * switch meanwhile: its generations then retired (their slots emptied) and
 * carried to the other set. Read again, f mapped again, until the head f
 * maps is the one in use once they are open; the last try under a shared
 * lock. */
#define FB_GENS_READ_TRIES 5
int fb_gens_views_read(struct fb_store *f, struct fb_gen_views *gv);
/* The same for any reader of f's generations without the lock (info):
 * fn(f, arg) run on f as mapped, until f is still the filter in use after
 * it; undo(arg) (if given) releases what a try read before the next. fn's
 * result (its errors said only for the try that counts), or -1 (reported)
 * if f was replaced every time or cannot be mapped again. */
int fb_gens_read(struct fb_store *f, int (*fn)(struct fb_store *f, void *arg),
		 void (*undo)(void *arg), void *arg);
/* For check: the live generations that are damaged (fb_gen_open() -2),
 * which every writer of a counting filter refuses to go on over: how
 * many, the first one's g in *first and its damage in why; with repair
 * each is taken out as a reclaim would (its rules with a lifetime with
 * it: nothing can be read of them). -1 (reported) if one cannot be read
 * now, or the clock or the list cannot. */
int fb_gens_damaged(struct fb_store *f, bool repair, unsigned *first, char *why, size_t len);
/* Counting filters over the generations (held, deleted, recovered):
 * types/counting.h. */

/* For `load --replace` (replace.c), nf being the new filter array whose
 * header names the other set: copy f's live generations into nf's set,
 * and set nf->hdr->gens (rules/lifetime.h starts one afresh instead).
 * After the switch, fb_gens_retire() empties the slots of mask in the set
 * no longer in use (others left stale by a killed writer are check
 * --repair's). */
int fb_gens_carry(struct fb_store *f, struct fb_store *nf);
/* Import: generation g of staged filter f, shaped nblocks x k, ending at
 * least secs from now, empty; the caller fills gs, then sets the mask. */
int fb_gens_import(struct fb_store *f, unsigned g, double secs, __u32 nblocks, __u8 k,
		   struct fb_store *gs);
void fb_gens_retire(struct fb_store *f, unsigned set, __u32 mask);
/* Empty every generation slot of set that its mask does not name (what a
 * killed replace or reclaim left); how many, -1 (reported) if a slot or
 * pin cannot be read. repair: do it, else count. */
int fb_gens_stale(struct fb_store *f, unsigned set, bool repair);

#endif
