// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Counting filters: counters, journaled add/delete of one flow, check and
 * repair (see counting.h; batches: counting_bulk.c). Callers hold the
 * filter's write lock. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "types/bits.h"
#include "types/counting.h"
#include "types/sizing.h"
#include "types/counting_int.h"
#include "types/ftype.h"
#include "store/gens.h"
#include "store/store.h"

unsigned fb_counting_max(const struct fb_store *f)
{
	return f->cnt_hdr->bits == 8 ? 255 : 15;
}

unsigned fb_counting_get(const struct fb_store *f, __u64 p)
{
	if (f->cnt_hdr->bits == 8)
		return f->cnt[p];
	return (f->cnt[p / 2] >> ((p & 1) * 4)) & 0xf;
}

static void cnt_put(struct fb_store *f, __u64 p, unsigned v)
{
	if (f->cnt_hdr->bits == 8) {
		f->cnt[p] = v;
		return;
	}
	__u8 *b = &f->cnt[p / 2];
	unsigned shift = (p & 1) * 4;

	*b = (*b & ~(0xf << shift)) | (v << shift);
}

/* Bits are read concurrently by the XDP program: whole-word relaxed stores,
 * never torn. Writers are serialised by the filter lock. */
__u64 *fb_cnt_bit_word(struct fb_store *f, __u64 p)
{
	return &f->blocks[fb_bit_block(p)].w[fb_bit_word(p)];
}

static void bit_set(struct fb_store *f, __u64 p)
{
	__u64 *w = fb_cnt_bit_word(f, p);

	__atomic_store_n(w, *w | fb_bit_mask(p), __ATOMIC_RELAXED);
}

static void bit_clear(struct fb_store *f, __u64 p)
{
	__u64 *w = fb_cnt_bit_word(f, p);

	__atomic_store_n(w, *w & ~fb_bit_mask(p), __ATOMIC_RELAXED);
}

static bool bit_get(const struct fb_store *f, __u64 p)
{
	return fb_block_test_bit(&f->blocks[fb_bit_block(p)], p);
}

unsigned fb_cnt_positions(const struct fb_store *f, const struct fb_key *key, __u64 pos[FB_MAX_K])
{
	const struct fb_header *h = f->hdr;

	fb_positions(fb_hash_key(key, h->hash, h->key), h->layout, h->nblocks, h->k, pos);
	return h->k;
}

/* Journal stores must reach memory in program order relative to the
 * counter and bit stores they describe (a crash is a process kill: the
 * kernel keeps the shared pages; compiler order is what matters). */
#define JOURNAL_STORE(field, val) __atomic_store_n(&(field), (val), __ATOMIC_RELEASE)

/* cur_old when no counter is being changed: no counter +-1 equals it, so
 * recovery never mistakes an untouched position for a changed one. */
#define NO_OLD 0x80000000U

static void journal_begin(struct fb_store *f, __u32 op, const struct fb_key *key)
{
	struct fb_journal *j = &f->cnt_hdr->journal;

	j->key = *key;
	j->nflows_before = f->hdr->nflows;
	j->done = 0;
	j->changed = 0;
	j->cur_old = NO_OLD;
	JOURNAL_STORE(j->op, op);
}

static void journal_end(struct fb_store *f, __u64 nflows)
{
	__atomic_store_n(&f->hdr->nflows, nflows, __ATOMIC_RELEASE);
	JOURNAL_STORE(f->cnt_hdr->journal.op, FB_JOURNAL_IDLE);
}

void fb_cnt_add_at(struct fb_store *f, const struct fb_key *key, const __u64 *pos, unsigned k)
{
	struct fb_journal *j = &f->cnt_hdr->journal;
	unsigned max = fb_counting_max(f), i;

	journal_begin(f, FB_JOURNAL_ADD, key);
	for (i = 0; i < k; i++) {
		unsigned c = fb_counting_get(f, pos[i]);

		if (c < max) {
			JOURNAL_STORE(j->cur_old, c);
			/* Bit before counter: a crash here leaves a bit over a
			 * zero counter, a false positive at worst. */
			if (!c)
				bit_set(f, pos[i]);
			cnt_put(f, pos[i], c + 1);
			JOURNAL_STORE(j->changed, j->changed | 1U << i);
			JOURNAL_STORE(j->cur_old, NO_OLD);
		}
		JOURNAL_STORE(j->done, i + 1);
	}
	journal_end(f, fb_flows_add(j->nflows_before, 1, f->hdr->nblocks));
}

void fb_counting_add(struct fb_store *f, const struct fb_key *key)
{
	__u64 pos[FB_MAX_K];
	unsigned k = fb_cnt_positions(f, key, pos);

	fb_cnt_add_at(f, key, pos, k);
}

void fb_cnt_prefetch(const struct fb_store *f, __u64 p)
{
	__builtin_prefetch(&f->cnt[p * f->cnt_hdr->bits / 8], 1);
}

int fb_counting_del(struct fb_store *f, const struct fb_key *key)
{
	unsigned max = fb_counting_max(f), k, i;
	__u64 pos[FB_MAX_K];

	k = fb_cnt_positions(f, key, pos);
	for (i = 0; i < k; i++) {
		unsigned c = fb_counting_get(f, pos[i]), dup = 0, x;

		for (x = 0; x < i; x++)
			dup += pos[x] == pos[i];
		/* Not in the filter (a position repeated within the flow needs
		 * that many counts): deleting would break other flows. */
		if (c < max && c <= dup)
			return -1;
	}
	fb_cnt_del_at(f, key, pos, k);
	return 0;
}

void fb_cnt_del_at(struct fb_store *f, const struct fb_key *key, const __u64 *pos, unsigned k)
{
	struct fb_journal *j = &f->cnt_hdr->journal;
	unsigned max = fb_counting_max(f), i;

	journal_begin(f, FB_JOURNAL_DEL, key);
	for (i = 0; i < k; i++) {
		unsigned c = fb_counting_get(f, pos[i]);

		/* A saturated counter has lost count: it stays. Positions
		 * repeated within one flow were counted twice and find c > 0
		 * again here. */
		if (c && c < max) {
			JOURNAL_STORE(j->cur_old, c);
			cnt_put(f, pos[i], c - 1);
			/* Counter before bit, for the same reason as in add. */
			if (c == 1)
				bit_clear(f, pos[i]);
			JOURNAL_STORE(j->changed, j->changed | 1U << i);
			JOURNAL_STORE(j->cur_old, NO_OLD);
		}
		JOURNAL_STORE(j->done, i + 1);
	}
	journal_end(f, j->nflows_before ? j->nflows_before - 1 : 0);
}

/*
 * fb_cnt_del_at() if the flow can go with the counters as they are (as
 * fb_counting_del() checks: each unsaturated counter above the times its
 * position came earlier in the flow); false, nothing changed, if not. Each
 * counter is read once: `del -f`'s checked pass costs what `add -f`'s does.
 * The i-th of d repeats of a position sees c - d, as fb_cnt_del_at()'s
 * re-read would.
 */
bool fb_cnt_del_checked_at(struct fb_store *f, const struct fb_key *key, const __u64 *pos,
			   unsigned k)
{
	struct fb_journal *j = &f->cnt_hdr->journal;
	unsigned max = fb_counting_max(f), c[FB_MAX_K], i, x;
	/* The blocked layout puts bit i in word i mod 8: with k <= 8 no
	 * position repeats, and the count of repeats is 0. */
	bool repeats = f->hdr->layout != FB_LAYOUT_BLOCKED || k > FB_BLOCK_WORDS;

	for (i = 0; i < k; i++) {
		unsigned dup = 0;

		c[i] = fb_counting_get(f, pos[i]);
		for (x = 0; repeats && x < i; x++)
			dup += pos[x] == pos[i];
		if (c[i] < max) {
			if (c[i] <= dup)
				return false;
			c[i] -= dup;
		}
	}
	journal_begin(f, FB_JOURNAL_DEL, key);
	for (i = 0; i < k; i++) {
		if (c[i] < max) {
			JOURNAL_STORE(j->cur_old, c[i]);
			cnt_put(f, pos[i], c[i] - 1);
			if (c[i] == 1)
				bit_clear(f, pos[i]);
			JOURNAL_STORE(j->changed, j->changed | 1U << i);
			JOURNAL_STORE(j->cur_old, NO_OLD);
		}
		JOURNAL_STORE(j->done, i + 1);
	}
	journal_end(f, j->nflows_before ? j->nflows_before - 1 : 0);
	return true;
}

unsigned fb_counting_min(const struct fb_store *f, const struct fb_key *key)
{
	unsigned k, i, m = ~0U;
	__u64 pos[FB_MAX_K];

	k = fb_cnt_positions(f, key, pos);
	for (i = 0; i < k; i++) {
		unsigned c = fb_counting_get(f, pos[i]);

		if (c < m)
			m = c;
	}
	return m;
}

int fb_counting_recover(struct fb_store *f)
{
	struct fb_journal *j = &f->cnt_hdr->journal;
	__u64 pos[FB_MAX_K];
	unsigned k, i;

	if (j->op != FB_JOURNAL_ADD && j->op != FB_JOURNAL_DEL)
		return 0;
	k = fb_cnt_positions(f, &j->key, pos);
	/* Did position `done` change before the crash? Its counter moved off
	 * cur_old by one, in the operation's direction. */
	if (j->done < k && !(j->changed & 1U << j->done) && j->cur_old != NO_OLD) {
		unsigned c = fb_counting_get(f, pos[j->done]);

		if (c == j->cur_old + (j->op == FB_JOURNAL_ADD ? 1 : -1))
			j->changed |= 1U << j->done;
	}
	/* Undo in reverse order, so repeated positions unwind exactly. */
	for (i = k; i-- > 0;) {
		unsigned c;

		if (!(j->changed & 1U << i))
			continue;
		c = fb_counting_get(f, pos[i]);
		cnt_put(f, pos[i], j->op == FB_JOURNAL_ADD ? c - 1 : c + 1);
	}
	for (i = 0; i < k; i++) {
		if (fb_counting_get(f, pos[i]))
			bit_set(f, pos[i]);
		else
			bit_clear(f, pos[i]);
	}
	journal_end(f, j->nflows_before);
	return 1;
}

void fb_counting_check(struct fb_store *f, bool repair, struct fb_check *out)
{
	__u64 m = fb_header_mbits(f->hdr), p;
	unsigned max = fb_counting_max(f);

	memset(out, 0, sizeof(*out));
	out->journal_dirty = f->cnt_hdr->journal.op != FB_JOURNAL_IDLE;
	if (repair && out->journal_dirty)
		fb_counting_recover(f);
	for (p = 0; p < m; p++) {
		unsigned c = fb_counting_get(f, p);
		bool b = bit_get(f, p);

		out->counter_sum += c;
		out->saturated += c == max;
		if (b && !c) {
			out->stale_bits++;
			if (repair)
				bit_clear(f, p);
		} else if (!b && c) {
			out->missing_bits++;
			if (repair)
				bit_set(f, p);
		}
	}
	/* Every flow present raised k counters. A saturated counter stops
	 * counting both ways, so then the sum proves nothing. */
	out->count_checked = !out->saturated && !(f->hdr->flags & FB_HDRF_NFLOWS_ESTIMATE);
	out->count_ok = !out->count_checked || out->counter_sum == f->hdr->nflows * f->hdr->k;
}

bool fb_gens_held(const struct fb_store *f, const struct fb_gen_views *gv, const struct fb_key *key)
{
	int g;

	if (fb_counting_min(f, key) > 0)
		return true;
	for (g = 0; g < gv->n; g++)
		if (fb_counting_min(&gv->v[g], key) > 0)
			return true;
	return false;
}

int fb_gens_del_held(struct fb_store *f, struct fb_gen_views *gv, const struct fb_key *key)
{
	int g, n = 0;

	/* fb_counting_del() refuses (-1) where a counter is 0. */
	n += !fb_counting_del(f, key);
	for (g = 0; g < gv->n; g++)
		n += !fb_counting_del(&gv->v[g], key);
	return n;
}

int fb_gens_recover(struct fb_store *f)
{
	struct fb_gen_views gv;
	int i, done = 0;

	if (!f->hdr->gens || !f->hdr->counter_bits || fb_gens_views_open(f, &gv) < 0)
		return 0;
	for (i = 0; i < gv.n; i++)
		done += fb_counting_recover(&gv.v[i]);
	fb_gens_views_close(&gv);
	return done;
}

int fb_counting_recover_all(struct fb_store *f)
{
	return fb_counting_recover(f) + fb_gens_recover(f);
}

/* A program that writes counting filters recovers them on lock (store.h). */
__attribute__((constructor)) static void register_types(void)
{
	fb_ftype_register();
}
