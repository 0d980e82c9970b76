// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Counting filters: counters, journaled add/delete of one flow, check and
 * repair (see counting.h; batches: counting_bulk.c). Callers hold the
 * filter's write lock. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "report.h"
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
	return fb_cnt_read(f->cnt, f->cnt_hdr->bits == 8, p);
}

static void cnt_put(struct fb_store *f, __u64 p, unsigned v)
{
	fb_cnt_write(f->cnt, f->cnt_hdr->bits == 8, p, v);
}

static void bit_set(struct fb_store *f, __u64 p)
{
	fb_cnt_bit_set(f->blocks, p);
}

static void bit_clear(struct fb_store *f, __u64 p)
{
	fb_cnt_bit_clear(f->blocks, p);
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
	int r;

	/* A batch's part first: it holds the flow the per-flow journal
	 * names, whose rollback is then part of the part's. */
	r = fb_cntlog_recover(f, false);
	if (r)
		return r < 0 ? -1 : 0; /* noted there */
	if (j->op != FB_JOURNAL_ADD && j->op != FB_JOURNAL_DEL)
		return 0;
	k = fb_cnt_positions(f, &j->key, pos);
	/* Did position `done` change before the crash? Its counter moved off
	 * cur_old by one, in the operation's direction. */
	if (j->done < k && !(j->changed & 1U << j->done) && j->cur_old != FB_JOURNAL_NO_OLD) {
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
	fb_cnt_journal_end(f, j->nflows_before);
	return 1;
}

void fb_counting_check(struct fb_store *f, bool repair, struct fb_check *out)
{
	__u64 m = fb_header_mbits(f->hdr), p;
	unsigned max = fb_counting_max(f);

	memset(out, 0, sizeof(*out));
	out->journal_dirty = f->cnt_hdr->journal.op != FB_JOURNAL_IDLE || fb_cntlog_open(f);
	if (repair && out->journal_dirty && fb_cntlog_recover(f, true) <= 0)
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

enum fb_del_part fb_gens_part(const struct fb_store *f, const struct fb_gen_views *gv,
			      const struct fb_key *key)
{
	bool perm = fb_counting_min(f, key) > 0, gens = false;
	int g;

	for (g = 0; g < gv->n && !gens; g++)
		gens = fb_counting_min(&gv->v[g], key) > 0;
	return perm && gens ? FB_DEL_BOTH : gens ? FB_DEL_LIFETIME : FB_DEL_PERMANENT;
}

int fb_gens_del_held(struct fb_store *f, struct fb_gen_views *gv, const struct fb_key *key,
		     enum fb_del_part part)
{
	int g, n = 0;

	/* fb_counting_del() refuses (-1) where a counter is 0. */
	if (part == FB_DEL_PERMANENT)
		return !fb_counting_del(f, key);
	for (g = 0; g < gv->n; g++)
		n += !fb_counting_del(&gv->v[g], key);
	return n;
}

/* Would fb_counting_del() of key succeed in f, the decrements t holds done
 * first? If so, they now include its own. */
static bool pending_del(const struct fb_store *f, struct pending *t, const struct fb_key *key)
{
	unsigned max = fb_counting_max(f), k, i, x;
	__u64 pos[FB_MAX_K];

	k = fb_cnt_positions(f, key, pos);
	for (i = 0; i < k; i++) {
		unsigned c = fb_counting_get(f, pos[i]), d = pending_get(t, pos[i]);

		for (x = 0; x < i; x++)
			d += pos[x] == pos[i];
		if (c < max && c <= d)
			return false;
	}
	for (i = 0; i < k; i++)
		if (fb_counting_get(f, pos[i]) < max)
			pending_put(t, pos[i], pending_get(t, pos[i]) + 1);
	return true;
}

int fb_gens_check_dels(const struct fb_store *f, const struct fb_gen_views *gv,
		       const struct fb_key *keys, size_t n, enum fb_del_part part, size_t *bad)
{
	const struct fb_store *v[1 + FB_GEN_SLOTS];
	struct pending t[1 + FB_GEN_SLOTS];
	int nv = 0, i, rc = 0;
	size_t x;

	*bad = 0;
	for (i = 0; i < gv->n; i++)
		v[nv++] = &gv->v[i]; /* the generations, */
	v[nv++] = f;		     /* then the permanent rules: v[nv - 1] */
	for (i = 0; i < nv && !rc; i++)
		if (pending_open(v[i], &t[i])) {
			rc = -2;
			nv = i;
		}
	/* In input order, as fb_gens_del_held() runs, each from its part. */
	for (x = 0; x < n && !rc; x++) {
		enum fb_del_part p = part ? part : fb_gens_part(f, gv, &keys[x]);
		bool held = false;

		for (i = 0; i < nv && p != FB_DEL_BOTH; i++)
			if ((i < nv - 1) == (p == FB_DEL_LIFETIME))
				held |= pending_del(v[i], &t[i], &keys[x]);
		if (!held) {
			*bad = x;
			rc = p == FB_DEL_BOTH ? -3 : -1;
		}
	}
	for (i = 0; i < nv; i++)
		munmap(t[i].p, t[i].bytes);
	return rc;
}

bool fb_counting_half_done(const struct fb_store *f, const struct fb_gen_views *gv)
{
	int g;

	if (f->cnt_hdr && (f->cnt_hdr->journal.op != FB_JOURNAL_IDLE || fb_cntlog_open(f)))
		return true;
	for (g = 0; gv && g < gv->n; g++)
		if (gv->v[g].cnt_hdr &&
		    (gv->v[g].cnt_hdr->journal.op != FB_JOURNAL_IDLE || fb_cntlog_open(&gv->v[g])))
			return true;
	return false;
}

int fb_gens_recover(struct fb_store *f)
{
	struct fb_gen_views gv;
	bool quiet = fb_report_quiet;
	int i, done = 0, r;

	if (!f->hdr->gens || !f->hdr->counter_bits)
		return 0;
	/* Not opened (reported): a write half done there may be left. A
	 * damaged one stays so: the way out said with it. */
	fb_report_quiet = true;
	r = fb_gens_views_open(f, &gv);
	fb_report_quiet = quiet;
	if (r == -2)
		fb_report_err("%s: flowbloom check --repair %s takes the generation out (its "
			      "rules with a lifetime with it)",
			      fb_report_last, f->name);
	else if (r < 0)
		fb_report_err("%s", fb_report_last);
	if (r < 0)
		return -1;
	for (i = 0; i < gv.n && done >= 0; i++) {
		r = fb_counting_recover(&gv.v[i]);
		done = r < 0 ? -1 : done + r;
	}
	fb_gens_views_close(&gv);
	return done;
}

int fb_counting_recover_all(struct fb_store *f)
{
	int g = fb_gens_recover(f), r;

	if (g < 0)
		return -1;
	r = fb_counting_recover(f);
	return r < 0 ? -1 : r + g;
}

/* A program that writes counting filters recovers them on lock (store.h). */
__attribute__((constructor)) static void register_types(void)
{
	fb_ftype_register();
}
