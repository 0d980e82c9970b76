// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Scalable Bloom filters on plain memory (see scalable_table.h and
 * include/flowbloom/scalable.h). Each stage is sized with the blocked
 * layout's own formula (user/lib/types/sizing.c), for its capacity and its tightened
 * rate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "types/probe_mem.h"
#include "types/scalable_table.h"
#include "types/sizing.h"

static double stage_rate(const struct fb_sbf_geom *g, unsigned i)
{
	return g->fp0_ppb * 1e-9 * pow(g->tighten_ppm * 1e-6, i);
}

int fb_sbf_stage_geom(const struct fb_sbf_geom *g, unsigned i, struct fb_sbf_stage *st)
{
	double cap = (double)g->capacity0 * pow(g->growth, i), rate = stage_rate(g, i);
	__u32 first = i ? g->stage[i - 1].first_block + g->stage[i - 1].nblocks : 0;
	__u32 nblocks;
	__u8 k;

	if (i >= FB_SBF_MAX_STAGES || fb_size_blocked(cap, rate, &nblocks, &k))
		return -1;
	if (i == 0)
		first = g->stage[0].first_block;
	if ((__u64)first + nblocks > 0xffffffffULL)
		return -1;
	memset(st, 0, sizeof(*st));
	st->first_block = first;
	st->nblocks = nblocks;
	st->k = k;
	/* Rounded up to whole ppb, less the doubles' noise (3 x 1e-9 x 1e9
	 * is 3.0000000000000004: a stage at P0 shown above it). */
	st->fp_ppb = (__u32)ceil(rate * 1e9 - 1e-6);
	st->capacity = (__u64)cap;
	return 0;
}

int fb_sbf_init(struct fb_sbf_geom *g, double capacity0, double p, __u32 first_block)
{
	memset(g, 0, sizeof(*g));
	if (!(capacity0 >= 1) || !(p > 0 && p < 1))
		return -1;
	g->growth = FB_SBF_GROWTH;
	g->tighten_ppm = FB_SBF_TIGHTEN_PPM;
	g->fp0_ppb = (__u32)floor(p * (1 - FB_SBF_TIGHTEN_PPM * 1e-6) * 1e9);
	g->capacity0 = (__u64)capacity0;
	g->stage[0].first_block = first_block;
	if (!g->fp0_ppb || fb_sbf_stage_geom(g, 0, &g->stage[0]))
		return -1;
	g->nstages = 1;
	return 0;
}

int fb_sbf_check(const struct fb_sbf_geom *g, __u64 avail_blocks, char *why, size_t len)
{
	__u64 end = 0;
	unsigned i;

	if (g->nstages < 1 || g->nstages > FB_SBF_MAX_STAGES) {
		snprintf(why, len, "scalable stage count %u (1 to %u)", g->nstages,
			 FB_SBF_MAX_STAGES);
		return -1;
	}
	if (g->growth < 2 || !g->tighten_ppm || g->tighten_ppm >= 1000000 || !g->fp0_ppb ||
	    !g->capacity0) {
		snprintf(why, len, "scalable growth parameters (s %u, r %u ppm, P0 %u ppb)",
			 g->growth, g->tighten_ppm, g->fp0_ppb);
		return -1;
	}
	for (i = 0; i < g->nstages; i++) {
		const struct fb_sbf_stage *st = &g->stage[i];

		if (!st->nblocks || st->nblocks > FB_MAX_BLOCKS || st->k < 1 || st->k > FB_MAX_K ||
		    st->first_block < end || (__u64)st->first_block + st->nblocks > avail_blocks ||
		    st->count > st->capacity) {
			snprintf(why, len,
				 "scalable stage %u (blocks %u+%u, k %u, %llu of %llu flows) does "
				 "not fit an array of %llu blocks",
				 i, st->first_block, st->nblocks, st->k,
				 (unsigned long long)st->count, (unsigned long long)st->capacity,
				 (unsigned long long)avail_blocks);
			return -1;
		}
		end = (__u64)st->first_block + st->nblocks;
	}
	return 0;
}

__u64 fb_sbf_end_block(const struct fb_sbf_geom *g)
{
	const struct fb_sbf_stage *st = &g->stage[g->nstages - 1];

	return (__u64)st->first_block + st->nblocks;
}

double fb_sbf_bound(const struct fb_sbf_geom *g)
{
	return g->fp0_ppb * 1e-9 / (1 - g->tighten_ppm * 1e-6);
}

double fb_sbf_fpr(const struct fb_sbf_geom *g)
{
	double pass = 1;
	unsigned i;

	for (i = 0; i < g->nstages; i++)
		pass *= 1 - fb_fpr_blocked((double)g->stage[i].count, g->stage[i].nblocks,
					   g->stage[i].k);
	return 1 - pass;
}

__u64 fb_sbf_count(const struct fb_sbf_geom *g)
{
	__u64 n = 0;
	unsigned i;

	for (i = 0; i < g->nstages; i++)
		n += g->stage[i].count;
	return n;
}

bool fb_sbf_lookup(const struct fb_block *blocks, const struct fb_sbf_geom *g, __u64 h)
{
	struct fb_tbl t = { blocks, fb_sbf_end_block(g) };

	return fb_sbf_probe(&t, g, h);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Bits are read concurrently by the data path: whole-word stores that
 * only ever add bits. */
static void set_bits(struct fb_block *blocks, const struct fb_sbf_stage *st, __u64 hs)
{
	struct fb_block *blk = &blocks[fb_sbf_block(st, hs)];
	int w;

	for (w = 0; w < FB_BLOCK_WORDS; w++)
		__atomic_store_n(&blk->w[w], blk->w[w] | fb_blocked_word_mask(hs, st->k, w),
				 __ATOMIC_RELAXED);
}

int fb_sbf_add(struct fb_block *blocks, __u64 avail_blocks, struct fb_sbf_geom *g, const __u64 *h,
	       size_t n, __u64 *need_blocks, struct fb_batch_err *err)
{
	struct fb_sbf_geom next = *g;
	struct fb_tbl t = { blocks, avail_blocks };
	__u64 *fresh = malloc((n ? n : 1) * sizeof(*fresh)), *sorted, room;
	unsigned char *taken;
	size_t nf = 0, x, i, placed;
	unsigned s;

	if (!fresh)
		return -2;
	/* The batch's distinct flows not already in the filter, in batch
	 * order: sorted, a stage would get a narrow range of hashes, so the
	 * few blocks they pick (by the upper bits) would be overfilled, and
	 * every probe landing there a false positive (measured: 9.8 % instead
	 * of 0.38 % for 100k flows added at once from 10k). */
	for (x = 0; x < n; x++)
		if (!fb_sbf_probe(&t, g, h[x]))
			fresh[nf++] = h[x];
	sorted = malloc((nf ? nf : 1) * sizeof(*sorted));
	taken = calloc(nf ? nf : 1, 1);
	if (!sorted || !taken) {
		free(sorted);
		free(taken);
		free(fresh);
		return -2;
	}
	memcpy(sorted, fresh, nf * sizeof(*fresh));
	qsort(sorted, nf, sizeof(*sorted), cmp_u64);
	for (x = i = 0; x < nf; x++) {
		/* The first of the equal hashes in sorted order stands for them
		 * all: a repeat of a flow earlier in the batch is dropped. */
		__u64 *at = bsearch(&fresh[x], sorted, nf, sizeof(*sorted), cmp_u64);
		size_t pos = (size_t)(at - sorted);

		while (pos > 0 && sorted[pos - 1] == fresh[x])
			pos--;
		if (taken[pos])
			continue;
		taken[pos] = 1;
		fresh[i++] = fresh[x];
	}
	free(sorted);
	free(taken);
	nf = i;
	/* Stages the batch needs, planned on a copy of the geometry. */
	s = next.nstages - 1;
	room = next.stage[s].capacity - next.stage[s].count;
	for (placed = 0; nf - placed > room;) {
		placed += room;
		if (fb_sbf_stage_geom(&next, next.nstages, &next.stage[next.nstages])) {
			if (err) {
				/* The batch position of the first flow left
				 * out. */
				for (x = 0; x < n && h[x] != fresh[placed]; x++)
					;
				double cap = 0;

				for (s = 0; s < next.nstages; s++)
					cap += (double)next.stage[s].capacity;
				err->bad = x;
				err->load = (fb_sbf_count(g) + placed) / cap;
			}
			free(fresh);
			return -1;
		}
		room = next.stage[next.nstages].capacity;
		next.nstages++;
	}
	if (fb_sbf_end_block(&next) > avail_blocks) {
		*need_blocks = fb_sbf_end_block(&next);
		free(fresh);
		return -3;
	}
	/* Bits first, then the stage descriptors, then the count of stages
	 * (release): the data path never probes a stage before it is whole. */
	for (x = 0, s = g->nstages - 1; x < nf; x++) {
		while (next.stage[s].count >= next.stage[s].capacity)
			s++;
		set_bits(blocks, &next.stage[s], fb_sbf_stage_hash(fresh[x], s));
		next.stage[s].count++;
	}
	for (s = 0; s < next.nstages; s++) {
		if (s >= g->nstages)
			g->stage[s] = next.stage[s];
		__atomic_store_n(&g->stage[s].count, next.stage[s].count, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&g->nstages, next.nstages, __ATOMIC_RELEASE);
	free(fresh);
	return 0;
}
