/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Counting filters (Fan, Cao, Almeida, Broder 2000): a counter per bit,
 * kept off the fast path. The XDP program reads only the bits; the counters
 * are the truth, in their own pinned, mmap-able BPF array (NAME/counters).
 * A bit is 1 exactly when its counter is non-zero.
 *
 * Counter map layout, in 64-byte blocks:
 *   blocks 0-1  struct fb_cnt_header (width, the write journal)
 *   blocks 2..  m counters of 4 bits (two per byte, low nibble first) or 8
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
 * fb_counting_recover() rolls the interrupted flow back exactly.
 */
#ifndef FLOWBLOOM_USER_COUNTING_H
#define FLOWBLOOM_USER_COUNTING_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/key.h"

struct fb_store;

#define FB_CNT_MAGIC 0x544e4346 /* "FCNT" */
#define FB_CNT_HDR_BLOCKS 2

enum fb_journal_op {
	FB_JOURNAL_IDLE = 0,
	FB_JOURNAL_ADD = 1,
	FB_JOURNAL_DEL = 2,
};

struct fb_journal {
	__u32 op;	     /* enum fb_journal_op */
	__u32 done;	     /* positions 0..done-1 are applied */
	__u32 cur_old;	     /* counter at position `done` before it changes */
	__u32 changed;	     /* bit i: position i's counter moved */
	__u64 nflows_before; /* header nflows before this flow */
	struct fb_key key;
};

struct fb_cnt_header {
	__u32 magic;
	__u8 bits; /* 4 or 8 */
	__u8 pad[3];
	struct fb_journal journal;
	__u8 reserved[128 - 8 - sizeof(struct fb_journal)];
};

_Static_assert(sizeof(struct fb_cnt_header) == FB_CNT_HDR_BLOCKS * 64, "counter header blocks");

/* Bytes of the counter map for m counters of the given width. */
size_t fb_counting_map_bytes(__u64 mbits, unsigned bits);
void fb_counting_init(struct fb_cnt_header *ch, unsigned bits);

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
/* Roll back a write interrupted by a crash. Returns 1 if there was one. */
int fb_counting_recover(struct fb_store *f);

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
