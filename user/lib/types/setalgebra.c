// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Set algebra and cardinality estimates on Bloom filters (see
 * setalgebra.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "types/setalgebra.h"
#include "types/sizing.h"
#include "util.h"

int fb_sa_compatible(const struct fb_bloom_mem *a, const struct fb_bloom_mem *b, bool counters,
		     char *why, size_t len)
{
	const struct fb_header *x = a->hdr, *y = b->hdr;

	if (x->layout != y->layout)
		snprintf(why, len, "layouts differ (%s, %s)",
			 FB_NAME_OR(fb_layout_names, x->layout, "unknown"),
			 FB_NAME_OR(fb_layout_names, y->layout, "unknown"));
	else if (x->hash != y->hash)
		snprintf(why, len, "hash algorithms differ");
	else if (x->key[0] != y->key[0] || x->key[1] != y->key[1])
		snprintf(why, len, "hash keys differ (the filters were created separately)");
	else if (x->k != y->k)
		snprintf(why, len, "bits per flow differ (k = %u, %u)", x->k, y->k);
	else if (x->nblocks != y->nblocks)
		snprintf(why, len, "sizes differ (%u, %u blocks; fold the larger first)",
			 x->nblocks, y->nblocks);
	else if (counters && (!a->cnt) != (!b->cnt))
		snprintf(why, len, "only one of the filters has counters");
	else if (counters && a->cnt && a->cnt_bits != b->cnt_bits)
		snprintf(why, len, "counter widths differ (%u, %u bits)", a->cnt_bits, b->cnt_bits);
	else
		return 0;
	return -1;
}

static unsigned cnt_max(const struct fb_bloom_mem *f)
{
	return f->cnt_bits == 8 ? 255 : 15;
}

static unsigned cnt_get(const struct fb_bloom_mem *f, __u64 p)
{
	if (f->cnt_bits == 8)
		return f->cnt[p];
	return (f->cnt[p / 2] >> ((p & 1) * 4)) & 0xf;
}

static void cnt_put(struct fb_bloom_mem *f, __u64 p, unsigned v)
{
	__u8 *b;
	unsigned shift;

	if (f->cnt_bits == 8) {
		f->cnt[p] = v;
		return;
	}
	b = &f->cnt[p / 2];
	shift = (p & 1) * 4;
	*b = (*b & ~(0xf << shift)) | (v << shift);
}

static __u64 *word(struct fb_bloom_mem *f, __u64 i)
{
	return &f->blocks[FB_HDR_BLOCKS + i / FB_BLOCK_WORDS].w[i % FB_BLOCK_WORDS];
}

int fb_sa_union(struct fb_bloom_mem *dst, const struct fb_bloom_mem *src, char *why, size_t len)
{
	__u64 words = (__u64)dst->hdr->nblocks * FB_BLOCK_WORDS, i;

	if (fb_sa_compatible(dst, src, true, why, len))
		return -1;
	/* Only adds bits: safe on a live filter. */
	for (i = 0; i < words; i++) {
		__u64 *d = word(dst, i);

		__atomic_store_n(d, *d | *word((struct fb_bloom_mem *)src, i), __ATOMIC_RELAXED);
	}
	if (dst->cnt) {
		unsigned max = cnt_max(dst);

		for (i = 0; i < words * 64; i++) {
			unsigned s = cnt_get(dst, i) + cnt_get(src, i);

			cnt_put(dst, i, s > max ? max : s);
		}
	}
	dst->hdr->kinds |= src->hdr->kinds;
	dst->hdr->nflows = fb_flows_add(dst->hdr->nflows, src->hdr->nflows, dst->hdr->nblocks);
	return 0;
}

int fb_sa_intersect(struct fb_bloom_mem *dst, const struct fb_bloom_mem *src, char *why, size_t len)
{
	__u64 words = (__u64)dst->hdr->nblocks * FB_BLOCK_WORDS, i;
	double card;

	if (fb_sa_compatible(dst, src, true, why, len))
		return -1;
	for (i = 0; i < words; i++)
		*word(dst, i) &= *word((struct fb_bloom_mem *)src, i);
	if (dst->cnt)
		for (i = 0; i < words * 64; i++) {
			unsigned x = cnt_get(dst, i), y = cnt_get(src, i);

			cnt_put(dst, i, x < y ? x : y);
		}
	dst->hdr->kinds &= src->hdr->kinds;
	card = fb_sa_cardinality(dst);
	/* A full filter estimates infinity: the count saturates. */
	dst->hdr->nflows = card < (double)fb_flows_max(dst->hdr->nblocks)
				   ? (__u64)(card + 0.5)
				   : fb_flows_max(dst->hdr->nblocks);
	return 0;
}

static int bit_get(struct fb_bloom_mem *f, __u64 p)
{
	return (*word(f, p / 64) >> (p % 64)) & 1;
}

int fb_sa_fold(struct fb_bloom_mem *f, char *why, size_t len)
{
	__u32 nb = f->hdr->nblocks, half = nb / 2, b;
	unsigned max = f->cnt ? cnt_max(f) : 0;
	__u64 p, mhalf = (__u64)half * FB_BLOCK_BITS;
	int w;

	/* Any even size folds exactly: a position is (x * m) >> 32 (blocked:
	 * the block, classic: the bit; geometry.h), and with m = 2h,
	 * ((x * 2h) >> 32) / 2 = (x * h) >> 32, the folded filter's own. */
	if (nb < 2 || (nb & 1)) {
		snprintf(why, len,
			 "only a filter of an even number of blocks folds; this one has %u", nb);
		return -1;
	}
	/* In place, ascending: position j reads 2j and 2j+1, never below j,
	 * so nothing is read after it was overwritten. */
	if (f->hdr->layout == FB_LAYOUT_CLASSIC) {
		for (p = 0; p < mhalf; p++) {
			__u64 *d = word(f, p / 64);
			int v = bit_get(f, 2 * p) | bit_get(f, 2 * p + 1);

			*d = (*d & ~(1ULL << (p % 64))) | (__u64)v << (p % 64);
			if (f->cnt) {
				unsigned s = cnt_get(f, 2 * p) + cnt_get(f, 2 * p + 1);

				cnt_put(f, p, s > max ? max : s);
			}
		}
	} else {
		for (b = 0; b < half; b++) {
			struct fb_block *d = &f->blocks[FB_HDR_BLOCKS + b];
			const struct fb_block *x = &f->blocks[FB_HDR_BLOCKS + 2 * b],
					      *y = &f->blocks[FB_HDR_BLOCKS + 2 * b + 1];

			for (w = 0; w < FB_BLOCK_WORDS; w++)
				d->w[w] = x->w[w] | y->w[w];
			for (p = 0; f->cnt && p < FB_BLOCK_BITS; p++) {
				unsigned s = cnt_get(f, (__u64)2 * b * FB_BLOCK_BITS + p) +
					     cnt_get(f, ((__u64)2 * b + 1) * FB_BLOCK_BITS + p);

				cnt_put(f, (__u64)b * FB_BLOCK_BITS + p, s > max ? max : s);
			}
		}
	}
	/* The upper half is no longer part of the filter: clear it, so a
	 * later union or popcount over the old size sees nothing stale. */
	memset(&f->blocks[FB_HDR_BLOCKS + half], 0, (size_t)half * FB_BLOCK_BYTES);
	if (f->cnt)
		memset(f->cnt + mhalf * f->cnt_bits / 8, 0, mhalf * f->cnt_bits / 8);
	f->hdr->nblocks = half;
	return 0;
}

/* Popcount per word position (blocked) or in total (pop[0], classic), of
 * a, or of a | b when b is given. */
static void popcounts(const struct fb_bloom_mem *a, const struct fb_bloom_mem *b, __u64 pop[8])
{
	__u32 nb = a->hdr->nblocks, i;
	int w;

	memset(pop, 0, 8 * sizeof(*pop));
	for (i = 0; i < nb; i++)
		for (w = 0; w < FB_BLOCK_WORDS; w++) {
			__u64 v = a->blocks[FB_HDR_BLOCKS + i].w[w];

			if (b)
				v |= b->blocks[FB_HDR_BLOCKS + i].w[w];
			pop[a->hdr->layout == FB_LAYOUT_CLASSIC ? 0 : w] += __builtin_popcountll(v);
		}
}

static double estimate(const struct fb_header *h, const __u64 pop[8])
{
	double sum = 0;
	int w;

	if (h->layout == FB_LAYOUT_CLASSIC) {
		double m = (double)h->nblocks * FB_BLOCK_BITS;

		return pop[0] >= m ? INFINITY : -(m / h->k) * log1p(-(double)pop[0] / m);
	}
	/* Word w of every block: a flow in the block sets c of its 64 bits
	 * (c = 1, or 2 for k > 8: bits i and i + 8, the same one 1 time in
	 * 64), so a given bit stays clear after n flows with probability
	 * (1 - (1 - (63/64)^c) / nblocks)^n. Solved for n, per word, weighed
	 * by c. */
	for (w = 0; w < FB_BLOCK_WORDS; w++) {
		double m = (double)h->nblocks * 64;
		unsigned c = h->k / FB_BLOCK_WORDS + ((unsigned)w < h->k % FB_BLOCK_WORDS);
		double q = -expm1(c * log1p(-1.0 / 64));

		if (!c)
			continue; /* no bit of any flow goes to this word */
		if (pop[w] >= m)
			return INFINITY;
		sum += c * log1p(-(double)pop[w] / m) / log1p(-q / h->nblocks);
	}
	return sum / h->k;
}

double fb_sa_cardinality(const struct fb_bloom_mem *f)
{
	__u64 pop[8];

	popcounts(f, NULL, pop);
	return estimate(f->hdr, pop);
}

int fb_sa_estimate(const struct fb_bloom_mem *a, const struct fb_bloom_mem *b, struct fb_sa_est *e,
		   char *why, size_t len)
{
	__u64 pop[8];

	if (fb_sa_compatible(a, b, false, why, len))
		return -1;
	e->a = fb_sa_cardinality(a);
	e->b = fb_sa_cardinality(b);
	popcounts(a, b, pop);
	e->uni = estimate(a->hdr, pop);
	e->inter = e->a + e->b - e->uni;
	if (e->inter < 0)
		e->inter = 0;
	e->jaccard = e->uni > 0 ? e->inter / e->uni : 0;
	return 0;
}
