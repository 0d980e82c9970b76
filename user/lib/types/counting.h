/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Counting filters (Fan, Cao, Almeida, Broder 2000): a counter per bit,
 * kept off the fast path. The XDP program reads only the bits; the counters
 * are the truth, in their own pinned, mmap-able BPF array (NAME/counters).
 * A bit is 1 exactly when its counter is non-zero.
 *
 * The counter map's layout (header, journal, counters) is the store's,
 * which makes and maps it: store/counters.h.
 *
 * Counters saturate at 15 (255) and then never move: an overflowed counter
 * can no longer be trusted to reach 0 when it should, so it never does, and
 * overflow can never cause a false negative.
 *
 * Crash safety, per flow: the journal records the operation, the key, how
 * many of its k positions are done and the old value of the counter being
 * changed. An add sets the bit before raising the counter and a delete
 * clears it after lowering it, so an interrupted write can only leave a bit
 * set over a zero counter (a false positive, never a false negative).
 * fb_counting_recover() rolls the interrupted flow back exactly. A batch
 * (add -f, del -f, load) is all or nothing, in parts for a large one: the
 * batch journal (counting_log.h) around the per-flow one.
 */
#ifndef FLOWBLOOM_USER_COUNTING_H
#define FLOWBLOOM_USER_COUNTING_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/key.h"
#include "store/counters.h"

struct fb_store;
struct fb_gen_views;

unsigned fb_counting_max(const struct fb_store *f);
unsigned fb_counting_get(const struct fb_store *f, __u64 p);

/* Add one flow: raise its k counters, set bits leaving 0. */
void fb_counting_add(struct fb_store *f, const struct fb_key *key);
/* fb_counting_add() for many flows, faster: the blocked layout's batches
 * are applied sorted by block (any order gives the same counters). */
void fb_counting_add_many(struct fb_store *f, const struct fb_key *keys, size_t n);
/* Delete one flow: -1 (nothing changed) if any of its counters is 0. */
int fb_counting_del(struct fb_store *f, const struct fb_key *key);
/* fb_counting_del() for a batch fb_counting_check_dels() accepted (so none
 * is refused), faster (sorted by block, as fb_counting_add_many()). */
void fb_counting_del_many(struct fb_store *f, const struct fb_key *keys, size_t n);
/* Smallest of the flow's counters: at least the times it was added. */
unsigned fb_counting_min(const struct fb_store *f, const struct fb_key *key);
/* Would deleting keys[0..n) in order succeed? On failure (-1) *bad is the
 * first flow that would find a zero counter; -2: out of memory. Call with
 * the lock held. */
int fb_counting_check_dels(const struct fb_store *f, const struct fb_key *keys, size_t n,
			   size_t *bad);
/* fb_counting_check_dels() then fb_counting_del_many(), in one pass over
 * the counters (each flow checked as it is deleted; a refusal puts the
 * deleted ones back): 0 deleted; -1 refused (*bad), -2 out of memory, both
 * with nothing changed (for a refused batch, flows it named may have been
 * out of the filter for the moment the pass took). */
int fb_counting_del_batch(struct fb_store *f, const struct fb_key *keys, size_t n, size_t *bad);
/* Did a writer killed half way leave a write in f's counters, or in those
 * of a generation of gv (NULL: none)? Readers that copy the filter (export,
 * merge) refuse it then: recovery is a writer's (fb_store_lock()). */
bool fb_counting_half_done(const struct fb_store *f, const struct fb_gen_views *gv);
/* Roll back a write interrupted by a crash: a batch's part (the batch
 * journal, counting_log.h: a note says so), else one flow. Returns 1 if
 * it was one flow, 0 if none or a part, -1 if the batch journal is
 * damaged (reported; check --repair drops it). */
int fb_counting_recover(struct fb_store *f);
/* The same in every generation of rules with a lifetime; how many, or -1
 * (reported) if they cannot be opened now. */
int fb_gens_recover(struct fb_store *f);
/* Both: what fb_store_lock() runs for a counting filter (the store's hook,
 * store.h); -1 if the generations could not be looked at (the lock is
 * refused: a write must not go on over one half done). */
int fb_counting_recover_all(struct fb_store *f);

/*
 * Which part of a counting filter with rules with a lifetime a deletion
 * takes a flow from: its permanent rules, or the live generations holding
 * it. Deleting a flow where it is only a false positive lowers counters
 * other rules own, and a counter brought to 0 clears a bit they need (a
 * false negative): a flow that both parts answer "maybe" for is held by
 * one of them, or both, and which cannot be told. `del` then asks
 * (FB_DEL_BOTH: refused, --permanent or --with-lifetime says).
 */
enum fb_del_part {
	FB_DEL_ANY,	  /* where it is held: refused if both (FB_DEL_BOTH) */
	FB_DEL_PERMANENT, /* the permanent rules only */
	FB_DEL_LIFETIME,  /* every live generation holding it */
	FB_DEL_BOTH,	  /* fb_gens_part(): both hold it */
};
/* Which part holds key: FB_DEL_PERMANENT (or neither), FB_DEL_LIFETIME or
 * FB_DEL_BOTH. */
enum fb_del_part fb_gens_part(const struct fb_store *f, const struct fb_gen_views *gv,
			      const struct fb_key *key);
/* Would fb_gens_del_held() of keys[0..n), in order, each from part (ANY:
 * fb_gens_part()'s), find each held (the copies it takes on the way
 * counted)? 0 yes; -1 no, *bad the first that would find none; -3 (ANY)
 * *bad the first both parts hold; -2 out of memory. Call with the lock
 * held. */
int fb_gens_check_dels(const struct fb_store *f, const struct fb_gen_views *gv,
		       const struct fb_key *keys, size_t n, enum fb_del_part part, size_t *bad);
/* One copy of key out of f's permanent rules (part PERMANENT), or out of
 * every generation of gv that holds it (LIFETIME); how many places. */
int fb_gens_del_held(struct fb_store *f, struct fb_gen_views *gv, const struct fb_key *key,
		     enum fb_del_part part);

struct fb_check {
	__u64 stale_bits;   /* bit set, counter 0 (harmless: false positives) */
	__u64 missing_bits; /* counter > 0, bit clear (false negatives!) */
	__u64 saturated;    /* counters at their maximum */
	__u64 counter_sum;  /* sum of all counters */
	bool journal_dirty; /* an interrupted write is pending */
	bool count_checked; /* no saturation, so the sum can be checked */
	bool count_ok;	    /* counter_sum == k * flows (or unchecked) */
};

/* Verify bits == (counters > 0) and the flow count; with repair, roll back
 * an interrupted write and rebuild the bits from the counters. */
void fb_counting_check(struct fb_store *f, bool repair, struct fb_check *out);

#endif
