// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_types, d-left counting (user/lib/types/dleft_table.c) and scalable (user/lib/types/scalable_table.c):
 * false-positive rates, rules, the cell load of the first overflow, the
 * stage limit.
 */
#include "types_test.h"

/* ---- d-left ---- */

void dleft_fp(double *bits_per_item, double *fpr_out)
{
	struct fb_dleft_geom g;
	struct fb_dleft_stats st;
	struct fb_batch_err err;
	struct fb_block *t;
	long miss = 0, fp = 0, rc = 0;
	size_t i;
	double want, got;

	ASSERT_EQ(fb_dleft_size(N_ADD, 0.01, &g), 0, "d-left: sized for 100k at 1 %");
	t = zalloc_blocks(fb_dleft_blocks(&g));
	for (i = 0; i < N_ADD; i += 10000)
		rc |= fb_dleft_add(t, &g, added + i, 10000, &err);
	ASSERT_EQ(rc, 0, "d-left: 100k flows added in batches of 10k");
	for (i = 0; i < N_ADD; i++)
		miss += !fb_dleft_lookup(t, &g, added[i]);
	ASSERT_EQ(miss, 0, "d-left: no false negative among 100k");
	fb_dleft_stats(t, &g, &st);
	for (i = 0; i < N_PROBE; i++)
		fp += fb_dleft_lookup(t, &g, probes[i]) != 0;
	got = (double)fp / N_PROBE;
	want = fb_dleft_fpr(&g, st.used);
	snprintf(label, sizeof(label),
		 "d-left B=2^%u r=%u: fp rate %.6f within 15%%* of 1-(1-2^-(b+r))^n = %.6f",
		 g.bucket_bits, g.rem_bits, got, want);
	ASSERT_TRUE(near(got, want, 0.15, N_PROBE), label);
	printf("d-left: 4 x 2^%u buckets of 8 %u-bit cells, r=%u, cell load %.3f, fullest bucket "
	       "%d, fp %.6f (formula %.6f)\n",
	       g.bucket_bits, g.cell_bits, g.rem_bits, (double)st.used / st.cells,
	       st.load[8]   ? 8
	       : st.load[7] ? 7
			    : 6,
	       got, want);
	*bits_per_item = fb_dleft_blocks(&g) * 512.0 / N_ADD;
	*fpr_out = got;

	/* Repeated adds count; deletes lower; the rest stay. */
	fb_dleft_add(t, &g, added, 1, NULL);
	ASSERT_EQ(fb_dleft_lookup(t, &g, added[0]), 2, "d-left: a flow added twice counts 2");
	rc = fb_dleft_del(t, &g, added, N_ADD / 2, &err);
	ASSERT_EQ(rc, 0, "d-left: delete 50k flows");
	ASSERT_EQ(fb_dleft_lookup(t, &g, added[0]), 1, "d-left: added twice, deleted once: 1");
	for (miss = 0, i = N_ADD / 2; i < N_ADD; i++)
		miss += !fb_dleft_lookup(t, &g, added[i]);
	ASSERT_EQ(miss, 0, "d-left: no false negative among the 50k kept after deletes");
	free(t);
}

void dleft_rules(void)
{
	struct fb_dleft_geom g = { .bucket_bits = 6, .rem_bits = 14, .cell_bits = 16 }, gs;
	struct fb_block *t = zalloc_blocks(fb_dleft_blocks(&g)), *snap;
	size_t bytes = fb_dleft_blocks(&g) * FB_BLOCK_BYTES, i;
	struct fb_batch_err err;
	long wrong = 0;
	__u64 batch[3], absent = 0;
	int x, c, rc;

	/* Least loaded, leftmost on ties: predict each flow's subtable from
	 * the loads before its add, then find where it went. */
	for (i = 0; i < 1500; i++) {
		__u32 j[FB_DLEFT_D], rem[FB_DLEFT_D];
		int load[FB_DLEFT_D], best = 0, where = -1;
		const unsigned char *base = (const unsigned char *)t;

		if (fb_dleft_lookup(t, &g, added[i]))
			continue;
		for (x = 0; x < FB_DLEFT_D; x++) {
			fb_dleft_place(added[i], &g, x, &j[x], &rem[x]);
			load[x] = 0;
			for (c = 0; c < FB_DLEFT_CELLS; c++) {
				__u16 cell;

				memcpy(&cell, base + ((((__u64)x << 6) + j[x]) << 4) + 2 * c, 2);
				load[x] += (cell & 3) != 0;
			}
			if (load[x] < load[best])
				best = x;
		}
		if (load[best] == FB_DLEFT_CELLS)
			break;
		fb_dleft_add(t, &g, &added[i], 1, NULL);
		for (x = 0; x < FB_DLEFT_D && where < 0; x++)
			if (fb_dleft_bucket_count(&t[fb_dleft_block(&g, x, j[x])],
						  fb_dleft_offset(&g, x, j[x]), 16, rem[x]))
				where = x;
		wrong += where != best;
	}
	snprintf(label, sizeof(label),
		 "d-left: each of %zu flows went to its least loaded bucket, leftmost on ties", i);
	ASSERT_EQ(wrong, 0, label);
	/* Full: the batch that overflows is refused whole. */
	snap = malloc(bytes);
	memcpy(snap, t, bytes);
	gs = g;
	rc = fb_dleft_add(t, &g, added + 1500, 2000, &err);
	ASSERT_TRUE(rc == -1 && !memcmp(snap, t, bytes) && !memcmp(&gs, &g, sizeof(g)),
		    "d-left: a batch that overflows a bucket is refused, nothing changed");
	printf("d-left: refused at cell load %.3f (flow %zu of the batch)\n", err.load, err.bad);
	for (i = 0; i < N_PROBE && !absent; i++)
		if (!fb_dleft_lookup(t, &g, probes[i]))
			absent = probes[i];
	batch[0] = added[0];
	batch[1] = absent;
	rc = fb_dleft_del(t, &g, batch, 2, &err);
	ASSERT_TRUE(rc == -1 && err.bad == 1 && !memcmp(snap, t, bytes),
		    "d-left: a delete batch with an absent flow is refused, nothing changed");
	/* Saturation: added 4 times, the 2-bit counter stays at 3 forever. */
	batch[0] = batch[1] = batch[2] = added[0];
	fb_dleft_add(t, &g, batch, 3, NULL);
	fb_dleft_del(t, &g, batch, 3, NULL);
	fb_dleft_del(t, &g, batch, 1, NULL);
	ASSERT_EQ(fb_dleft_lookup(t, &g, added[0]), 3,
		  "d-left: a saturated counter is never lowered (no false negative)");
	free(snap);
	free(t);
}

double dleft_max_load(bool *refused, bool *unchanged, long *miss)
{
	/* 4 x 2^10 buckets of 8 cells: 32768 cells, which N_ADD flows
	 * overfill (a table they cannot fill would show their count, not
	 * an overflow). */
	struct fb_dleft_geom g = { .bucket_bits = 10, .rem_bits = 14, .cell_bits = 16 };
	struct fb_block *t = zalloc_blocks(fb_dleft_blocks(&g)), *snap;
	size_t bytes = fb_dleft_blocks(&g) * FB_BLOCK_BYTES, i, j;
	struct fb_dleft_geom gs;
	struct fb_dleft_stats st;

	snap = malloc(bytes);
	*refused = *unchanged = false;
	for (i = 0; i < N_ADD; i++) {
		memcpy(snap, t, bytes);
		gs = g;
		if (fb_dleft_add(t, &g, &added[i], 1, NULL)) {
			*refused = true;
			*unchanged = !memcmp(snap, t, bytes) && !memcmp(&gs, &g, sizeof(g));
			break;
		}
	}
	for (*miss = 0, j = 0; j < i; j++)
		*miss += !fb_dleft_lookup(t, &g, added[j]);
	fb_dleft_stats(t, &g, &st);
	free(snap);
	free(t);
	return (double)st.used / st.cells;
}

/* ---- scalable ---- */

void scalable(double *bits_per_item, double *fpr_out)
{
	struct fb_sbf_geom g;
	struct fb_batch_err err;
	__u64 avail, need = 0;
	struct fb_block *t;
	long miss = 0, fp = 0, rc = 0, grown = 0;
	size_t i, j;
	double got;

	ASSERT_EQ(fb_sbf_init(&g, 10000, 0.01, 0), 0, "scalable: stage 0 for 10k, P = 1 %");
	avail = fb_sbf_end_block(&g);
	t = zalloc_blocks(avail);
	for (i = 0; i < N_ADD; i += 5000) {
		rc = fb_sbf_add(t, avail, &g, added + i, 5000, &need, &err);
		if (rc == -3) {
			/* What the CLI does with a new map: larger, old bits kept. */
			struct fb_block *bigger = zalloc_blocks(need);

			memcpy(bigger, t, avail * FB_BLOCK_BYTES);
			free(t);
			t = bigger;
			avail = need;
			grown++;
			rc = fb_sbf_add(t, avail, &g, added + i, 5000, &need, &err);
		}
		if (rc)
			break;
		for (j = 0; j < i + 5000; j++)
			miss += !fb_sbf_lookup(t, &g, added[j]);
	}
	ASSERT_EQ(rc, 0, "scalable: 100k flows added in batches of 5k, growing");
	ASSERT_EQ(miss, 0, "scalable: no false negative after any batch, across growth");
	snprintf(label, sizeof(label),
		 "scalable: %u stages for 100k flows from 10k (grown %ld times)", g.nstages, grown);
	ASSERT_EQ(g.nstages, 4, label);
	for (i = 0; i < N_PROBE; i++)
		fp += fb_sbf_lookup(t, &g, probes[i]);
	got = (double)fp / N_PROBE;
	snprintf(label, sizeof(label), "scalable: fp rate %.6f below the bound P0/(1-r) = %.6f",
		 got, fb_sbf_bound(&g));
	ASSERT_TRUE(got <= fb_sbf_bound(&g), label);
	snprintf(label, sizeof(label),
		 "scalable: fp rate %.6f within 15%%* of 1-prod(1-p_i(n_i)) = %.6f", got,
		 fb_sbf_fpr(&g));
	ASSERT_TRUE(near(got, fb_sbf_fpr(&g), 0.15, N_PROBE), label);
	for (i = 0; i < g.nstages; i++)
		printf("scalable stage %zu: %u blocks, k=%u, capacity %llu, flows %llu, rate "
		       "%.6f\n",
		       i, g.stage[i].nblocks, g.stage[i].k, (unsigned long long)g.stage[i].capacity,
		       (unsigned long long)g.stage[i].count, g.stage[i].fp_ppb * 1e-9);
	printf("scalable: fp %.6f, expected %.6f, bound %.6f\n", got, fb_sbf_fpr(&g),
	       fb_sbf_bound(&g));
	/* Flows the filter already (falsely) held were not added again: the
	 * count is the flows added, fewer than 100k by about the rate. */
	snprintf(label, sizeof(label),
		 "scalable: counts %llu flows added (the rest were already matching)",
		 (unsigned long long)fb_sbf_count(&g));
	ASSERT_RANGE(fb_sbf_count(&g), N_ADD * (1 - fb_sbf_bound(&g)), N_ADD, label);
	{
		__u64 before = fb_sbf_count(&g);

		rc = fb_sbf_add(t, avail, &g, added, N_ADD, &need, &err);
		ASSERT_TRUE(rc == 0 && fb_sbf_count(&g) == before,
			    "scalable: re-adding the same flows adds nothing");
	}
	*bits_per_item = fb_sbf_end_block(&g) * 512.0 / N_ADD;
	*fpr_out = got;
	free(t);
}

void scalable_limit(void)
{
	struct fb_sbf_geom g, gs;
	struct fb_batch_err err;
	__u64 need = 0, avail;
	struct fb_block *t;
	int rc;

	fb_sbf_init(&g, 100, 0.01, 0);
	avail = 1 << 16;
	t = zalloc_blocks(avail);
	/* 8 stages hold 100 * (2^8 - 1) = 25500 flows. */
	rc = fb_sbf_add(t, avail, &g, added, 25000, &need, &err);
	ASSERT_TRUE(rc == 0 && g.nstages == 8, "scalable: 25k flows from 100 fill 8 stages");
	gs = g;
	rc = fb_sbf_add(t, avail, &g, added + 25000, 1000, &need, &err);
	ASSERT_TRUE(rc == -1 && !memcmp(&gs, &g, sizeof(g)),
		    "scalable: a batch needing a 9th stage is refused, nothing changed");
	free(t);
	/* The rate info shows for a stage is the one it is sized for, in
	 * parts per 10^9: 3e-9 is not shown as 4e-9 (3 x 1e-9 x 1e9 is
	 * 3.0000000000000004 in doubles, which ceil took to 4). */
	fb_sbf_init(&g, 100, 2e-8, 0);
	snprintf(label, sizeof(label), "scalable: P0 %u ppb, stage 0 shown at %u ppb", g.fp0_ppb,
		 g.stage[0].fp_ppb);
	ASSERT_TRUE(g.fp0_ppb == 3 && g.stage[0].fp_ppb == 3, label);
}
