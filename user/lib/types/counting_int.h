/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the counting filter (counting.c, counting_bulk.c): one flow's
 * positions, its journaled add and delete, the memory they touch. The add
 * and delete are inline here so that a batch (counting_bulk.c) runs them
 * without a call a flow, the maps' addresses kept in registers.
 */
#ifndef FLOWBLOOM_USER_COUNTING_INT_H
#define FLOWBLOOM_USER_COUNTING_INT_H

#include <linux/types.h>
#include <stdbool.h>
#include <sys/mman.h>
#include "store/store.h"
#include "types/sizing.h"
#include "types/counting_log.h"

unsigned fb_cnt_positions(const struct fb_store *f, const struct fb_key *key, __u64 pos[FB_MAX_K]);
void fb_cnt_prefetch(const struct fb_store *f, __u64 p);

/* Counter p of the array cnt, 8 bits wide or 4 (two to a byte, the even
 * one low). */
static inline unsigned fb_cnt_read(const __u8 *cnt, bool wide, __u64 p)
{
	if (wide)
		return cnt[p];
	return (cnt[p / 2] >> ((p & 1) * 4)) & 0xf;
}

static inline void fb_cnt_write(__u8 *cnt, bool wide, __u64 p, unsigned v)
{
	if (wide) {
		cnt[p] = v;
		return;
	}
	__u8 *b = &cnt[p / 2];
	unsigned shift = (p & 1) * 4;

	*b = (*b & ~(0xf << shift)) | (v << shift);
}

/* The word holding bit p. */
static inline __u64 *fb_cnt_bit_word(struct fb_block *blocks, __u64 p)
{
	return &blocks[fb_bit_block(p)].w[fb_bit_word(p)];
}

/* Bits are read concurrently by the XDP program: whole-word relaxed stores,
 * never torn. Writers are serialised by the filter lock. */
static inline void fb_cnt_bit_set(struct fb_block *blocks, __u64 p)
{
	__u64 *w = fb_cnt_bit_word(blocks, p);

	__atomic_store_n(w, *w | fb_bit_mask(p), __ATOMIC_RELAXED);
}

static inline void fb_cnt_bit_clear(struct fb_block *blocks, __u64 p)
{
	__u64 *w = fb_cnt_bit_word(blocks, p);

	__atomic_store_n(w, *w & ~fb_bit_mask(p), __ATOMIC_RELAXED);
}

/* Journal stores must reach memory in program order relative to the
 * counter and bit stores they describe (a crash is a process kill: the
 * kernel keeps the shared pages; compiler order is what matters). */
#define FB_JOURNAL_STORE(field, val) __atomic_store_n(&(field), (val), __ATOMIC_RELEASE)

/* cur_old when no counter is being changed: no counter +-1 equals it, so
 * recovery never mistakes an untouched position for a changed one. */
#define FB_JOURNAL_NO_OLD 0x80000000U

static inline void fb_cnt_journal_begin(struct fb_store *f, __u32 op, const struct fb_key *key)
{
	struct fb_journal *j = &f->cnt_hdr->journal;

	j->key = *key;
	j->nflows_before = f->hdr->nflows;
	j->done = 0;
	j->changed = 0;
	j->cur_old = FB_JOURNAL_NO_OLD;
	FB_JOURNAL_STORE(j->op, op);
}

static inline void fb_cnt_journal_end(struct fb_store *f, __u64 nflows)
{
	__atomic_store_n(&f->hdr->nflows, nflows, __ATOMIC_RELEASE);
	FB_JOURNAL_STORE(f->cnt_hdr->journal.op, FB_JOURNAL_IDLE);
}

/* The flow at positions pos (k of them), under its own journal entry. The
 * maps' addresses, the width and the journal's changed mask are kept in
 * locals: the journal's stores are ordered for the compiler, which would
 * otherwise read them all back from memory after each. */
static __always_inline void fb_cnt_add_at(struct fb_store *f, const struct fb_key *key,
					  const __u64 *pos, unsigned k)
{
	struct fb_journal *j = &f->cnt_hdr->journal;
	struct fb_block *blocks = f->blocks;
	bool wide = f->cnt_hdr->bits == 8;
	unsigned max = wide ? 255 : 15, changed = 0, i;
	__u8 *cnt = f->cnt;

	if (fb_cntlog_flow(f, cnt, f->cnt_hdr->bits, pos, k)) {
		/* Under a batch's part: its rollback restores every counter
		 * and then the bits, and the data path reads only the bits,
		 * each set before its counter leaves 0. */
		for (i = 0; i < k; i++) {
			unsigned c = fb_cnt_read(cnt, wide, pos[i]);

			if (c < max) {
				if (!c)
					fb_cnt_bit_set(blocks, pos[i]);
				fb_cnt_write(cnt, wide, pos[i], c + 1);
			}
		}
		f->hdr->nflows = fb_flows_add(f->hdr->nflows, 1, f->hdr->nblocks);
		fb_cntlog_flow_done();
		return;
	}
	fb_cnt_journal_begin(f, FB_JOURNAL_ADD, key);
	for (i = 0; i < k; i++) {
		unsigned c = fb_cnt_read(cnt, wide, pos[i]);

		if (c < max) {
			FB_JOURNAL_STORE(j->cur_old, c);
			/* Bit before counter: a crash here leaves a bit over a
			 * zero counter, a false positive at worst. */
			if (!c)
				fb_cnt_bit_set(blocks, pos[i]);
			fb_cnt_write(cnt, wide, pos[i], c + 1);
			changed |= 1U << i;
			FB_JOURNAL_STORE(j->changed, changed);
			FB_JOURNAL_STORE(j->cur_old, FB_JOURNAL_NO_OLD);
		}
		FB_JOURNAL_STORE(j->done, i + 1);
	}
	fb_cnt_journal_end(f, fb_flows_add(j->nflows_before, 1, f->hdr->nblocks));
	fb_cntlog_flow_done();
}

static __always_inline void fb_cnt_del_at(struct fb_store *f, const struct fb_key *key,
					  const __u64 *pos, unsigned k)
{
	struct fb_journal *j = &f->cnt_hdr->journal;
	struct fb_block *blocks = f->blocks;
	bool wide = f->cnt_hdr->bits == 8;
	unsigned max = wide ? 255 : 15, changed = 0, i;
	__u8 *cnt = f->cnt;

	if (fb_cntlog_flow(f, cnt, f->cnt_hdr->bits, pos, k)) {
		/* Under a batch's part (see fb_cnt_add_at()). */
		for (i = 0; i < k; i++) {
			unsigned c = fb_cnt_read(cnt, wide, pos[i]);

			if (c && c < max) {
				fb_cnt_write(cnt, wide, pos[i], c - 1);
				if (c == 1)
					fb_cnt_bit_clear(blocks, pos[i]);
			}
		}
		f->hdr->nflows -= f->hdr->nflows ? 1 : 0;
		fb_cntlog_flow_done();
		return;
	}
	fb_cnt_journal_begin(f, FB_JOURNAL_DEL, key);
	for (i = 0; i < k; i++) {
		unsigned c = fb_cnt_read(cnt, wide, pos[i]);

		/* A saturated counter has lost count: it stays. Positions
		 * repeated within one flow were counted twice and find c > 0
		 * again here. */
		if (c && c < max) {
			FB_JOURNAL_STORE(j->cur_old, c);
			fb_cnt_write(cnt, wide, pos[i], c - 1);
			/* Counter before bit, for the same reason as in add. */
			if (c == 1)
				fb_cnt_bit_clear(blocks, pos[i]);
			changed |= 1U << i;
			FB_JOURNAL_STORE(j->changed, changed);
			FB_JOURNAL_STORE(j->cur_old, FB_JOURNAL_NO_OLD);
		}
		FB_JOURNAL_STORE(j->done, i + 1);
	}
	fb_cnt_journal_end(f, j->nflows_before ? j->nflows_before - 1 : 0);
	fb_cntlog_flow_done();
}

/*
 * fb_cnt_del_at() if the flow can go with the counters as they are (as
 * fb_counting_del() checks: each unsaturated counter above the times its
 * position came earlier in the flow); false, nothing changed, if not. Each
 * counter is read once: `del -f`'s checked pass costs what `add -f`'s does.
 * The i-th of d repeats of a position sees c - d, as fb_cnt_del_at()'s
 * re-read would.
 */
static __always_inline bool fb_cnt_del_checked_at(struct fb_store *f, const struct fb_key *key,
						  const __u64 *pos, unsigned k)
{
	struct fb_journal *j = &f->cnt_hdr->journal;
	struct fb_block *blocks = f->blocks;
	bool wide = f->cnt_hdr->bits == 8;
	unsigned max = wide ? 255 : 15, changed = 0, c[FB_MAX_K], i, x;
	/* The blocked layout puts bit i in word i mod 8: with k <= 8 no
	 * position repeats, and the count of repeats is 0. */
	bool repeats = f->hdr->layout != FB_LAYOUT_BLOCKED || k > FB_BLOCK_WORDS;
	__u8 *cnt = f->cnt;

	if (!repeats) {
		/* Then the check is only whether a counter is 0 (0 is below
		 * the maximum). */
		for (i = 0; i < k; i++) {
			c[i] = fb_cnt_read(cnt, wide, pos[i]);
			if (!c[i])
				return false;
		}
	} else {
		for (i = 0; i < k; i++) {
			unsigned dup = 0;

			c[i] = fb_cnt_read(cnt, wide, pos[i]);
			for (x = 0; x < i; x++)
				dup += pos[x] == pos[i];
			if (c[i] < max) {
				if (c[i] <= dup)
					return false;
				c[i] -= dup;
			}
		}
	}
	if (fb_cntlog_flow(f, cnt, f->cnt_hdr->bits, pos, k)) {
		/* Under a batch's part (see fb_cnt_add_at()). */
		for (i = 0; i < k; i++)
			if (c[i] < max) {
				fb_cnt_write(cnt, wide, pos[i], c[i] - 1);
				if (c[i] == 1)
					fb_cnt_bit_clear(blocks, pos[i]);
			}
		f->hdr->nflows -= f->hdr->nflows ? 1 : 0;
		fb_cntlog_flow_done();
		return true;
	}
	fb_cnt_journal_begin(f, FB_JOURNAL_DEL, key);
	for (i = 0; i < k; i++) {
		if (c[i] < max) {
			FB_JOURNAL_STORE(j->cur_old, c[i]);
			fb_cnt_write(cnt, wide, pos[i], c[i] - 1);
			if (c[i] == 1)
				fb_cnt_bit_clear(blocks, pos[i]);
			changed |= 1U << i;
			FB_JOURNAL_STORE(j->changed, changed);
			FB_JOURNAL_STORE(j->cur_old, FB_JOURNAL_NO_OLD);
		}
		FB_JOURNAL_STORE(j->done, i + 1);
	}
	fb_cnt_journal_end(f, j->nflows_before ? j->nflows_before - 1 : 0);
	fb_cntlog_flow_done();
	return true;
}

/*
 * Pending decrements per position while checking a batch of deletes: an
 * array shaped like the counters (same width), so checking costs one
 * access per position, as deleting does. It is anonymous memory the kernel
 * zeroes on first touch: a batch backs at most the pages it touches (at
 * most the counter map's size), whatever the filter's size. A pending
 * count never needs more than the counter's width: it stops at the
 * counter's value, below its maximum.
 */
struct pending {
	__u8 *p;
	size_t bytes;
	unsigned bits;
};

static inline unsigned pending_get(const struct pending *t, __u64 p)
{
	if (t->bits == 8)
		return t->p[p];
	return (t->p[p / 2] >> ((p & 1) * 4)) & 0xf;
}

static inline void pending_put(struct pending *t, __u64 p, unsigned v)
{
	if (t->bits == 8) {
		t->p[p] = v;
		return;
	}
	__u8 *b = &t->p[p / 2];
	unsigned shift = (p & 1) * 4;

	*b = (*b & ~(0xf << shift)) | (v << shift);
}

/* No decrement pending yet, for f's counters: 0, or -1 out of memory. */
static inline int pending_open(const struct fb_store *f, struct pending *t)
{
	t->bits = f->cnt_hdr->bits;
	t->bytes = (fb_header_mbits(f->hdr) * t->bits + 7) / 8;
	t->p = mmap(NULL, t->bytes, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return t->p == MAP_FAILED ? -1 : 0;
}

#endif
