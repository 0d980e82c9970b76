// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_types, set algebra (user/lib/types/setalgebra.c) on Bloom filters built as the
 * CLI builds them and probed as the data path probes; cardinality; the space
 * table of every type.
 */
#include "types_test.h"

/* ---- set algebra ---- */

struct bloom {
	struct fb_block *blocks;
	__u8 *cnt;
	struct fb_bloom_mem m;
};

static void bloom_new(struct bloom *b, __u8 layout, __u32 nblocks, __u8 k, bool counting)
{
	b->blocks = zalloc_blocks(FB_HDR_BLOCKS + nblocks);
	b->cnt = counting ? calloc((size_t)nblocks * FB_BLOCK_BITS / 2, 1) : NULL;
	b->m = (struct fb_bloom_mem){ .hdr = (struct fb_header *)b->blocks,
				      .blocks = b->blocks,
				      .cnt = b->cnt,
				      .cnt_bits = 4 };
	b->m.hdr->layout = layout;
	b->m.hdr->hash = FB_HASH_SIPHASH13;
	b->m.hdr->k = k;
	b->m.hdr->nblocks = nblocks;
	b->m.hdr->key[0] = hkey[0];
	b->m.hdr->key[1] = hkey[1];
}

static void bloom_free(struct bloom *b)
{
	free(b->blocks);
	free(b->cnt);
}

/* Adds as user/lib/types/bits.c and user/lib/types/counting.c do, from the shared geometry. */
static void bloom_add(struct bloom *b, __u64 h)
{
	const struct fb_header *hd = b->m.hdr;
	__u64 pos[FB_MAX_K];
	__u32 i;

	fb_positions(h, hd->layout, hd->nblocks, hd->k, pos);
	for (i = 0; i < hd->k; i++) {
		b->blocks[fb_bit_block(pos[i])].w[fb_bit_word(pos[i])] |= fb_bit_mask(pos[i]);
		if (b->cnt) {
			__u8 *c = &b->cnt[pos[i] / 2];
			unsigned sh = (pos[i] & 1) * 4, v = (*c >> sh) & 0xf;

			if (v < 15)
				*c = (*c & ~(0xf << sh)) | (v + 1) << sh;
		}
	}
}

/* The data path's probe (include/flowbloom/probe.h) over memory. */
static bool bloom_probe(const struct bloom *b, __u64 h)
{
	return fb_probe_array(b->blocks, FB_HDR_BLOCKS + (__u64)b->m.hdr->nblocks, h);
}

static bool same_bits(const struct bloom *a, const struct bloom *b)
{
	size_t n = (size_t)a->m.hdr->nblocks;

	return !memcmp(&a->blocks[FB_HDR_BLOCKS], &b->blocks[FB_HDR_BLOCKS], n * FB_BLOCK_BYTES) &&
	       (!a->cnt || !memcmp(a->cnt, b->cnt, n * FB_BLOCK_BITS / 2));
}

void algebra(__u8 layout, const char *name)
{
	/* A = flows 0..60k, B = 40k..100k: 20k shared. 4096 blocks (2 Mbit),
	 * k = 7: about 1.4 % for 100k flows. */
	struct bloom a, b, u, x, half;
	char why[160];
	struct fb_sa_est e;
	long miss = 0;
	size_t i;
	int rc;

	bloom_new(&a, layout, 4096, 7, true);
	bloom_new(&b, layout, 4096, 7, true);
	bloom_new(&u, layout, 4096, 7, true);
	bloom_new(&half, layout, 2048, 7, true);
	for (i = 0; i < 60000; i++)
		bloom_add(&a, added[i]);
	for (i = 40000; i < N_ADD; i++)
		bloom_add(&b, added[i]);
	for (i = 0; i < N_ADD; i++)
		bloom_add(&u, added[i]);
	for (i = 40000; i < 60000; i++)
		bloom_add(&u, added[i]); /* the multiset union: shared flows twice */
	for (i = 0; i < 60000; i++)
		bloom_add(&half, added[i]);

	rc = fb_sa_estimate(&a.m, &b.m, &e, why, sizeof(why));
	printf("%s estimates: |A| %.0f (60000), |B| %.0f (60000), |A u B| %.0f (100000), "
	       "|A n B| %.0f (20000), Jaccard %.4f (0.2000)\n",
	       name, e.a, e.b, e.uni, e.inter, e.jaccard);
	snprintf(label, sizeof(label), "%s: |A u B| estimate within 2 %%", name);
	ASSERT_TRUE(rc == 0 && fabs(e.uni - 100000) <= 2000, label);
	snprintf(label, sizeof(label), "%s: |A n B| estimate within 5 %%, Jaccard within 0.01",
		 name);
	ASSERT_TRUE(fabs(e.inter - 20000) <= 1000 && fabs(e.jaccard - 0.2) <= 0.01, label);

	/* Union: bit for bit (and counter for counter) the filter of the
	 * union; still the probe finds everything. */
	rc = fb_sa_union(&a.m, &b.m, why, sizeof(why));
	snprintf(label, sizeof(label),
		 "%s: union of A and B is bit-identical to the filter of "
		 "A u B (counters: saturating sum)",
		 name);
	ASSERT_TRUE(rc == 0 && same_bits(&a, &u), label);

	/* Intersection: every shared flow found. Rebuild A first. */
	bloom_free(&a);
	bloom_new(&a, layout, 4096, 7, true);
	for (i = 0; i < 60000; i++)
		bloom_add(&a, added[i]);
	bloom_new(&x, layout, 4096, 7, true);
	memcpy(x.blocks, a.blocks, (FB_HDR_BLOCKS + 4096) * (size_t)FB_BLOCK_BYTES);
	memcpy(x.cnt, a.cnt, 4096 * FB_BLOCK_BITS / 2);
	rc = fb_sa_intersect(&x.m, &b.m, why, sizeof(why));
	for (i = 40000; i < 60000; i++)
		miss += !bloom_probe(&x, added[i]);
	snprintf(label, sizeof(label), "%s: intersection holds all 20k shared flows", name);
	ASSERT_TRUE(rc == 0 && miss == 0, label);

	/* Fold: A halved is bit-identical to A built at half the size, and
	 * the standard probe with the halved geometry finds every flow. */
	rc = fb_sa_fold(&a.m, why, sizeof(why));
	for (miss = 0, i = 0; i < 60000; i++)
		miss += !bloom_probe(&a, added[i]);
	snprintf(label, sizeof(label),
		 "%s: folded filter: no false negative through the probe "
		 "with nblocks/2",
		 name);
	ASSERT_TRUE(rc == 0 && a.m.hdr->nblocks == 2048 && miss == 0, label);
	snprintf(label, sizeof(label),
		 "%s: folded filter is bit-identical to one built at half "
		 "size (counters too)",
		 name);
	ASSERT_TRUE(same_bits(&a, &half), label);

	/* Refusals, with the reason. */
	rc = fb_sa_union(&a.m, &b.m, why, sizeof(why));
	snprintf(label, sizeof(label), "%s: union of filters of different sizes refused (%s)", name,
		 why);
	ASSERT_TRUE(rc == -1 && strstr(why, "sizes differ"), label);
	b.m.hdr->key[0] ^= 1;
	rc = fb_sa_intersect(&u.m, &b.m, why, sizeof(why));
	snprintf(label, sizeof(label), "%s: intersection with another hash key refused (%s)", name,
		 why);
	ASSERT_TRUE(rc == -1 && strstr(why, "keys differ"), label);
	b.m.hdr->key[0] ^= 1;
	b.m.hdr->nblocks = 4095;
	rc = fb_sa_fold(&b.m, why, sizeof(why));
	snprintf(label, sizeof(label), "%s: fold of 4095 blocks refused (%s)", name, why);
	ASSERT_TRUE(rc == -1, label);
	b.m.hdr->nblocks = 4096;
	bloom_free(&a);
	bloom_free(&b);
	bloom_free(&u);
	bloom_free(&x);
	bloom_free(&half);
}

void cardinality(__u8 layout, const char *name)
{
	static const size_t ns[] = { 100, 1000, 10000, 30000, 60000, 100000 };
	struct bloom f;
	__u32 nblocks;
	__u8 k;
	double worst = 0;
	size_t i = 0, j;

	if (layout == FB_LAYOUT_CLASSIC)
		fb_size_classic(N_ADD, 0.01, &nblocks, &k);
	else
		fb_size_blocked(N_ADD, 0.01, &nblocks, &k);
	bloom_new(&f, layout, nblocks, k, false);
	for (j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
		double est, err;

		for (; i < ns[j]; i++)
			bloom_add(&f, added[i]);
		est = fb_sa_cardinality(&f.m);
		err = fabs(est - ns[j]) / ns[j];
		worst = fmax(worst, err);
		printf("%s cardinality: %zu flows -> %.1f (%+.2f %%)\n", name, ns[j], est,
		       100 * (est - ns[j]) / ns[j]);
	}
	snprintf(label, sizeof(label),
		 "%s (sized for 100k at 1 %%): cardinality within 2 %% from 100 to 100k flows "
		 "(worst %.2f %%)",
		 name, 100 * worst);
	ASSERT_TRUE(worst <= 0.02, label);
	bloom_free(&f);
}

/* Blocked, k = 12 and 16: a word then takes two bits of a flow (bits i and
 * i + 8), the same bit 1 time in 64, so each flow sets fewer than two
 * there; an estimate that counts two is low by 1/128 of the flows (0.8 %
 * at k = 16, 0.5 % at 12). The noise at 100k flows is about 0.1 %. */
void cardinality_two_per_word(void)
{
	static const size_t ns[] = { 10000, 30000, 60000, 100000 };
	static const __u8 ks[] = { 12, 16 };
	struct bloom f;
	size_t i, j, x;

	for (x = 0; x < sizeof(ks) / sizeof(ks[0]); x++) {
		double worst = 0;

		bloom_new(&f, FB_LAYOUT_BLOCKED, 4032, ks[x], false);
		for (i = j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
			double est;

			for (; i < ns[j]; i++)
				bloom_add(&f, added[i]);
			est = fb_sa_cardinality(&f.m);
			if (fabs(est - ns[j]) / ns[j] > fabs(worst))
				worst = (est - ns[j]) / ns[j];
		}
		snprintf(label, sizeof(label),
			 "blocked k=%u (two bits of a flow in a word): cardinality within 0.4 %% "
			 "from 10k to 100k flows (worst %+.2f %%)",
			 ks[x], 100 * worst);
		ASSERT_TRUE(fabs(worst) <= 0.004, label);
		bloom_free(&f);
	}
}

/* ---- space ---- */

void space_table(const double meas[4][2])
{
	static const double rates[] = { 0.01, 0.001, 0.0001 };
	size_t i;

	printf("\nbits per flow at equal fp rate (design load; 'stored' = as laid out here)\n");
	printf("%-8s %10s %10s %10s %10s %10s %10s\n", "rate", "cbf-4bit", "blocked", "dleft",
	       "dleft-st", "cuckoo", "cuckoo-st");
	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		double p = rates[i], cbf = 4 * fb_classic_mbits(1, p);
		struct fb_cuckoo_geom cg;
		__u32 nb;
		__u8 k;
		double blocked, dl, dls, ck, cks;
		unsigned r;

		fb_size_blocked(1e6, p, &nb, &k);
		blocked = nb * 512.0 / 1e6;
		/* d-left at its design load, 6 flows per bucket of 8 cells:
		 * n / B = 4 * 6 = 24, and the rate n / (B 2^r) <= p gives r;
		 * a cell is r + 2 bits (packed) or 16/32 (stored). */
		for (r = 1; 24.0 / ldexp(1, r) > p; r++)
			;
		dl = (r + 2) * 8.0 / 6;
		dls = (r + 2 <= 16 ? 16 : 32) * 8.0 / 6;
		cg.fp_bits = fb_cuckoo_fp_bits_for(p);
		/* The fewest bits f (not only 8/12/16/32) reaching p at 95 %. */
		for (r = 1; - expm1(8 * 0.95 * log1p(-1 / (ldexp(1, r) - 1))) > p; r++)
			;
		ck = r / FB_CUCKOO_DESIGN_LOAD;
		cks = 8.0 * fb_cuckoo_slot_bytes(cg.fp_bits) / FB_CUCKOO_DESIGN_LOAD;
		printf("%-8g %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", p, cbf, blocked, dl, dls,
		       ck, cks);
		if (i == 0) {
			snprintf(label, sizeof(label),
				 "space at 1 %%: d-left %.1f < counting Bloom %.1f bits/flow, "
				 "cuckoo "
				 "%.1f < d-left",
				 dl, cbf, ck);
			ASSERT_TRUE(dl < cbf && ck < dl, label);
		}
	}
	printf("measured at 100k flows (tables as sized by create, powers of two):\n");
	printf("  cuckoo f=12: %.2f bits/flow, fp %.5f; d-left (1 %%): %.2f bits/flow, fp %.5f; "
	       "scalable (1 %%, from 10k): %.2f bits/flow, fp %.5f; counting Bloom 4-bit (1 %%, "
	       "classic): %.2f bits/flow, fp 0.01 by formula\n",
	       meas[0][0], meas[0][1], meas[1][0], meas[1][1], meas[2][0], meas[2][1],
	       4 * fb_classic_mbits(1, 0.01));
	printf("\n");
}
