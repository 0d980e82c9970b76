// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * d-left counting Bloom filters on plain memory (see dleft_table.h and
 * include/flowbloom/dleft.h). Nothing ever moves: each add or delete is
 * one aligned store of one cell, in any order safe for the data path.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "types/dleft_table.h"
#include "types/probe_mem.h"

int fb_dleft_size(double capacity, double p, struct fb_dleft_geom *g)
{
	double want = ceil(capacity / ((double)FB_DLEFT_D * FB_DLEFT_DESIGN_LOAD));
	unsigned bb = FB_DLEFT_MIN_BUCKET_BITS, r;

	if (!(capacity >= 0) || !(p > 0))
		return -1;
	while (ldexp(1.0, (int)bb) < want) {
		if (bb >= FB_DLEFT_MAX_BUCKET_BITS)
			return -1;
		bb++;
	}
	memset(g, 0, sizeof(*g));
	g->bucket_bits = bb;
	for (r = 1; r <= 30; r++) {
		g->rem_bits = r;
		if (fb_dleft_fpr(g, capacity) <= p)
			break;
	}
	if (r > 30)
		return -1;
	g->cell_bits = r <= 14 ? 16 : 32;
	return 0;
}

int fb_dleft_check(const struct fb_dleft_geom *g, __u64 avail_blocks, char *why, size_t len)
{
	if (g->cell_bits != 16 && g->cell_bits != 32)
		snprintf(why, len, "d-left cell bits %u (16 or 32)", g->cell_bits);
	else if (g->bucket_bits < FB_DLEFT_MIN_BUCKET_BITS ||
		 g->bucket_bits > FB_DLEFT_MAX_BUCKET_BITS)
		snprintf(why, len, "d-left bucket bits %u (%u to %u)", g->bucket_bits,
			 FB_DLEFT_MIN_BUCKET_BITS, FB_DLEFT_MAX_BUCKET_BITS);
	else if (g->rem_bits < 1 || g->rem_bits > g->cell_bits - 2)
		snprintf(why, len, "d-left remainder bits %u (1 to %u for %u-bit cells)",
			 g->rem_bits, g->cell_bits - 2, g->cell_bits);
	else if ((__u64)g->first_block + fb_dleft_blocks(g) > avail_blocks)
		snprintf(why, len, "d-left table (blocks %u..%llu) beyond the array (%llu blocks)",
			 g->first_block, (unsigned long long)(g->first_block + fb_dleft_blocks(g)),
			 (unsigned long long)avail_blocks);
	else
		return 0;
	return -1;
}

__u64 fb_dleft_blocks(const struct fb_dleft_geom *g)
{
	__u64 buckets = (__u64)FB_DLEFT_D << g->bucket_bits;

	return ((buckets << fb_dleft_bucket_shift(g->cell_bits)) + FB_BLOCK_BYTES - 1) /
	       FB_BLOCK_BYTES;
}

double fb_dleft_fpr(const struct fb_dleft_geom *g, double distinct)
{
	return -expm1(distinct * log1p(-ldexp(1.0, -(int)(g->bucket_bits + g->rem_bits))));
}

unsigned fb_dleft_lookup(const struct fb_block *blocks, const struct fb_dleft_geom *g, __u64 h)
{
	struct fb_tbl t = { blocks, g->first_block + fb_dleft_blocks(g) };

	return fb_dleft_probe(&t, g, h);
}

static __u64 bucket_off(const struct fb_dleft_geom *g, int i, __u32 j)
{
	return (__u64)g->first_block * FB_BLOCK_BYTES +
	       ((((__u64)i << g->bucket_bits) + j) << fb_dleft_bucket_shift(g->cell_bits));
}

static __u32 cell_get(const unsigned char *bucket, const struct fb_dleft_geom *g, int c)
{
	__u16 v16;
	__u32 v32;

	if (g->cell_bits <= 16)
		return memcpy(&v16, bucket + 2 * c, 2), v16;
	return memcpy(&v32, bucket + 4 * c, 4), v32;
}

static int cell_set(struct fb_plan *p, const struct fb_dleft_geom *g, int i, __u32 j, int c,
		    __u32 v)
{
	unsigned w = g->cell_bits / 8;

	return fb_plan_set(p, bucket_off(g, i, j) + (__u64)c * w, w, v);
}

/* Where the flow's fingerprint is stored (subtable, cell), and each
 * candidate bucket's load. Returns the counter, 0 if not stored. */
static __u32 find(struct fb_plan *p, const struct fb_dleft_geom *g, __u64 h, __u32 j[], __u32 rem[],
		  int load[], int *ti, int *tc)
{
	__u32 found = 0;
	int i, c;

	for (i = 0; i < FB_DLEFT_D; i++) {
		const unsigned char *b;

		fb_dleft_place(h, g, i, &j[i], &rem[i]);
		b = fb_plan_bucket(p, bucket_off(g, i, j[i]));
		load[i] = 0;
		for (c = 0; c < FB_DLEFT_CELLS; c++) {
			__u32 cell = cell_get(b, g, c);

			load[i] += (cell & 3) != 0;
			if ((cell & 3) && (cell >> 2) == rem[i] && !found) {
				found = cell & 3;
				*ti = i;
				*tc = c;
			}
		}
	}
	return found;
}

static double cell_load(const struct fb_dleft_geom *g, __u64 used)
{
	return (double)used / ((double)FB_DLEFT_D * FB_DLEFT_CELLS * ((__u64)1 << g->bucket_bits));
}

int fb_dleft_plan_add(struct fb_plan *p, struct fb_dleft_geom *g, const __u64 *h, size_t n,
		      struct fb_batch_err *err)
{
	__u64 added = 0;
	size_t x;
	int rc = 0;

	for (x = 0; x < n && !rc; x++) {
		if (p->marks)
			p->marks[x] = p->nlog;
		__u32 j[FB_DLEFT_D], rem[FB_DLEFT_D], c;
		int load[FB_DLEFT_D], ti = 0, tc = 0, i, best = 0;

		c = find(p, g, h[x], j, rem, load, &ti, &tc);
		if (c) {
			if (c < FB_DLEFT_CMAX)
				rc = cell_set(p, g, ti, j[ti], tc, rem[ti] << 2 | (c + 1)) ? -2 : 0;
			continue;
		}
		/* Least loaded, leftmost on ties (strict < keeps the left). */
		for (i = 1; i < FB_DLEFT_D; i++)
			if (load[i] < load[best])
				best = i;
		if (load[best] == FB_DLEFT_CELLS) {
			rc = -1;
			if (err) {
				struct fb_dleft_stats st;

				fb_dleft_stats((const struct fb_block *)p->live, g, &st);
				err->bad = x;
				err->load = cell_load(g, st.used + added);
			}
			break;
		}
		{
			const unsigned char *b = fb_plan_bucket(p, bucket_off(g, best, j[best]));

			for (tc = 0; cell_get(b, g, tc) & 3; tc++)
				;
		}
		rc = cell_set(p, g, best, j[best], tc, rem[best] << 2 | 1) ? -2 : 0;
		added++;
	}
	if (!rc && fb_plan_set_ext(p, &g->count, 8, g->count + n))
		rc = -2;
	return rc;
}

int fb_dleft_plan_del(struct fb_plan *p, struct fb_dleft_geom *g, const __u64 *h, size_t n,
		      struct fb_batch_err *err)
{
	size_t x;
	int rc = 0;

	for (x = 0; x < n && !rc; x++) {
		if (p->marks)
			p->marks[x] = p->nlog;
		__u32 j[FB_DLEFT_D], rem[FB_DLEFT_D], c;
		int load[FB_DLEFT_D], ti = 0, tc = 0;

		c = find(p, g, h[x], j, rem, load, &ti, &tc);
		if (!c) {
			rc = -1;
			if (err) {
				err->bad = x;
				err->load = 0;
			}
			break;
		}
		if (c == FB_DLEFT_CMAX)
			continue; /* saturated: lost count, never lowered */
		rc = cell_set(p, g, ti, j[ti], tc, c == 1 ? 0 : rem[ti] << 2 | (c - 1)) ? -2 : 0;
	}
	if (!rc && fb_plan_set_ext(p, &g->count, 8, g->count >= n ? g->count - n : 0))
		rc = -2;
	return rc;
}

/* Plan, then apply: all or nothing as long as the writer lives. */
static int plan_apply(struct fb_block *blocks, struct fb_dleft_geom *g, const __u64 *h, size_t n,
		      struct fb_batch_err *err, bool del)
{
	struct fb_plan p;
	int rc;

	fb_plan_init(&p, blocks, fb_dleft_bucket_shift(g->cell_bits));
	rc = del ? fb_dleft_plan_del(&p, g, h, n, err) : fb_dleft_plan_add(&p, g, h, n, err);
	if (!rc)
		fb_plan_apply(&p);
	fb_plan_free(&p);
	return rc;
}

int fb_dleft_add(struct fb_block *blocks, struct fb_dleft_geom *g, const __u64 *h, size_t n,
		 struct fb_batch_err *err)
{
	return plan_apply(blocks, g, h, n, err, false);
}

int fb_dleft_del(struct fb_block *blocks, struct fb_dleft_geom *g, const __u64 *h, size_t n,
		 struct fb_batch_err *err)
{
	return plan_apply(blocks, g, h, n, err, true);
}

void fb_dleft_stats(const struct fb_block *blocks, const struct fb_dleft_geom *g,
		    struct fb_dleft_stats *st)
{
	__u64 buckets = (__u64)FB_DLEFT_D << g->bucket_bits, b;
	const unsigned char *base = (const unsigned char *)&blocks[g->first_block];
	unsigned shift = fb_dleft_bucket_shift(g->cell_bits);
	int c;

	memset(st, 0, sizeof(*st));
	st->cells = buckets * FB_DLEFT_CELLS;
	for (b = 0; b < buckets; b++) {
		int used = 0;

		for (c = 0; c < FB_DLEFT_CELLS; c++) {
			__u32 cell = cell_get(base + (b << shift), g, c), k = cell & 3;

			used += k != 0;
			st->saturated += k == FB_DLEFT_CMAX;
			st->counter_sum += k;
		}
		st->used += used;
		st->load[used]++;
	}
}
