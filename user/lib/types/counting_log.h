/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The batch journal of a counting filter: what makes `add -f`, `del -f`
 * and `load` of one all or nothing across a kill of their writer, as the
 * cuckoo and d-left batches are (batchlog.h), and by the same means: the
 * old contents of what is about to change, saved first, put back by the
 * next lock holder.
 *
 * It lives at the end of the counter map (store/counters.h). A batch is
 * applied in parts, each the next flows in input order (as many as the
 * journal holds at k records a flow): the part is marked open; before a
 * flow's counters change, every 8-byte word of counters it will write
 * that the part has not saved yet is saved (its index and old contents,
 * the count stored after them, before the counters); the flows are
 * applied as before (sorted by block within the part, each under the
 * per-flow journal, bits set before counters rise and cleared after they
 * reach 0); the part is marked closed. A writer killed while a part is
 * open leaves it to the next lock holder (fb_store_lock()'s recovery: any
 * writer; check --repair), which writes every saved word back (newest
 * first, so the oldest contents win), then makes each of their bits
 * agree with its counter, then puts back the header's flow count: the
 * part is then not in at all, the parts before it are, and running the
 * batch again counts each of its flows once more (the note says how many
 * flows of the batch are in). The data path reads only bits: a bit over
 * a counter the rollback restores to non-zero is never cleared, so a flow
 * held throughout never misses.
 *
 * A map made by an earlier build has no room for the journal: its batches
 * go a flow at a time, as they did (a kill leaves some flows in).
 */
#ifndef FLOWBLOOM_USER_COUNTING_LOG_H
#define FLOWBLOOM_USER_COUNTING_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>
#include <linux/types.h>
#include "store/counters.h"

struct fb_store;

#define FB_CNTLOG_MAGIC 0x4c544e43 /* "CNTL" */

enum fb_cntlog_state { FB_CNTLOG_IDLE = 0, FB_CNTLOG_OPEN = 1 };

/* The journal's first block; records follow. */
struct fb_cntlog_hdr {
	__u32 magic;
	__u32 state;   /* enum fb_cntlog_state, stored last (release) */
	__u32 op;      /* enum fb_journal_op */
	__u32 nrec;    /* records saved, stored after them */
	__u64 nflows;  /* the header's nflows before the part */
	__u64 flows;   /* flows of the whole batch */
	__u64 through; /* flows 0..through-1 of it are in, the part not */
	__u8 reserved[24];
};

_Static_assert(sizeof(struct fb_cntlog_hdr) == 64, "one block");

/* One word of counters: its index (in 8-byte words from the first
 * counter) and its contents before the part. */
struct fb_cntlog_rec {
	__u64 word;
	__u64 old;
};

/* A part being written: what the inline add and delete (counting_int.h)
 * save through, fb_cntlog_cur while a part of f is open. */
struct fb_cntlog {
	struct fb_store *f;
	struct fb_cntlog_hdr *h;
	struct fb_cntlog_rec *rec;
	__u32 n, cap;
	bool off;      /* not saving (a refused delete putting its flows back) */
	unsigned pace; /* tests: microseconds paused after each flow */
	/* Words saved lately, direct mapped: a word already saved by this
	 * part is not saved again (a block's words, flows sorted by block). */
	__u64 seen[256];
};

extern struct fb_cntlog *fb_cntlog_cur;

/* The journal of f's counters: its records' capacity, 0 if it has none
 * (an earlier build's map). */
size_t fb_cntlog_cap(const struct fb_store *f);
/* Flows a part of f holds (k records each), 0 if no journal. */
size_t fb_cntlog_part_flows(const struct fb_store *f);
/* Open a part of a batch of `flows` flows of op, `through` of them in
 * already (l is the caller's, current until fb_cntlog_end()). False: f
 * has no journal (nothing done). */
bool fb_cntlog_begin(struct fb_store *f, struct fb_cntlog *l, __u32 op, size_t flows,
		     size_t through);
void fb_cntlog_end(struct fb_cntlog *l);
/* Is a part open in f (a killed writer's)? */
bool fb_cntlog_open(const struct fb_store *f);
/* Roll it back (the caller holds the lock): 1 done (a note says so), 0
 * none open, -1 damaged (reported; with drop, closed as it is). */
int fb_cntlog_recover(struct fb_store *f, bool drop);

/* Save the words of counters holding positions pos[0..k) not yet saved
 * by the part, then publish the count: before any of them changes. */
static inline void fb_cntlog_save(struct fb_cntlog *l, const __u8 *cnt, unsigned bits,
				  const __u64 *pos, unsigned k)
{
	__u32 n = l->n;
	unsigned i;

	for (i = 0; i < k; i++) {
		__u64 w = pos[i] * bits / 64;
		__u64 *s = &l->seen[w & 255];

		if (*s == w)
			continue;
		*s = w;
		l->rec[n].word = w;
		l->rec[n].old = ((const __u64 *)cnt)[w];
		n++;
	}
	if (n == l->n)
		return;
	l->n = n;
	__atomic_store_n(&l->h->nrec, n, __ATOMIC_RELEASE);
	/* The counters' stores after it, for the compiler too. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Before flow f's counters at pos[0..k) change: saved, if a part of f is
 * open. True then: the part's journal covers the flow, which needs no
 * per-flow journal. */
static inline bool fb_cntlog_flow(struct fb_store *f, const __u8 *cnt, unsigned bits,
				  const __u64 *pos, unsigned k)
{
	struct fb_cntlog *l = fb_cntlog_cur;

	if (!l || l->f != f || l->off)
		return false;
	fb_cntlog_save(l, cnt, bits, pos, k);
	return true;
}

/* After it (tests: the pause where strace's kill lands). */
static inline void fb_cntlog_flow_done(void)
{
	struct fb_cntlog *l = fb_cntlog_cur;

	if (l && l->pace)
		usleep(l->pace);
}

#endif
