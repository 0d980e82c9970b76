// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Prefix-length expansion and ranges (see prefixes.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rules/prefixes.h"
#include "rules/rules.h"
#include "store/store.h"

typedef unsigned __int128 u128;

static u128 to_u128(const __u8 a[16])
{
	u128 v = 0;
	int i;

	for (i = 0; i < 16; i++)
		v = v << 8 | a[i];
	return v;
}

static void from_u128(u128 v, __u8 a[16])
{
	int i;

	for (i = 15; i >= 0; i--, v >>= 8)
		a[i] = (__u8)v;
}

/* Lengths present: count per length 0..128. */
struct hist {
	double count[129];
	bool keep[129]; /* already in the filter: must be chosen */
};

/*
 * Choose at most FB_MAX_LENGTHS target lengths T (all `keep` lengths
 * among them, and the longest length present) minimising
 * sum over rules of 2^(t - len), t the shortest target >= len.
 * dp[j][m]: cheapest cover of all lengths <= cand[j] with cand[j] chosen
 * as the m-th target. O(L^2 * 8) for L <= 129 candidates.
 */
static double choose_targets(const struct hist *h, bool target[129])
{
	int cand[129], nc = 0, j, i, m, best_m = 0;
	static double dp[129][FB_MAX_LENGTHS + 1];
	static int from[129][FB_MAX_LENGTHS + 1];
	double best = INFINITY;

	for (j = 0; j <= 128; j++)
		if (h->count[j] > 0 || h->keep[j])
			cand[nc++] = j;
	memset(target, 0, 129 * sizeof(bool));
	if (!nc)
		return 0;
	for (j = 0; j < nc; j++)
		for (m = 0; m <= FB_MAX_LENGTHS; m++)
			dp[j][m] = INFINITY;
	for (j = 0; j < nc; j++) {
		/* Cost of expanding the lengths in (lo, cand[j]] to cand[j]. */
		for (i = -1; i < j; i++) {
			double cost = 0;
			int x, lo = i < 0 ? -1 : cand[i];
			bool blocked = false;

			for (x = lo + 1; x <= cand[j]; x++) {
				if (h->keep[x] && x != cand[j])
					blocked =
						true; /* a kept length between: it must be a target */
				cost += h->count[x] * ldexp(1.0, cand[j] - x);
			}
			if (blocked)
				continue;
			if (i < 0) {
				dp[j][1] = cost;
				from[j][1] = -1;
				continue;
			}
			for (m = 2; m <= FB_MAX_LENGTHS; m++)
				if (dp[i][m - 1] + cost < dp[j][m]) {
					dp[j][m] = dp[i][m - 1] + cost;
					from[j][m] = i;
				}
		}
	}
	for (m = 1; m <= FB_MAX_LENGTHS; m++)
		if (dp[nc - 1][m] < best) {
			best = dp[nc - 1][m];
			best_m = m;
		}
	for (j = nc - 1, m = best_m; j >= 0 && m > 0; j = from[j][m], m--)
		target[cand[j]] = true;
	return best;
}

static int list_of(const struct fb_key *k)
{
	return fb_rules_prefix_list(k);
}

int fb_prefixes_expand(struct fb_key **keys, size_t *n, const struct fb_prefixes *have,
		       struct fb_expansion *ex, char *err, size_t errlen)
{
	bool target[FB_PFX_NR][129];
	struct hist h[FB_PFX_NR];
	size_t i, total = 0, out = 0;
	struct fb_key *nk;
	int l, x, distinct[FB_PFX_NR] = { 0 };

	memset(h, 0, sizeof(h));
	memset(ex, 0, sizeof(*ex));
	for (l = 0; l < FB_PFX_NR; l++)
		for (x = 0; x < have->list[l].n; x++)
			h[l].keep[have->list[l].len[x]] = true;
	for (i = 0; i < *n; i++) {
		l = list_of(&(*keys)[i]);
		if (l < 0)
			continue;
		ex->before++;
		h[l].count[(*keys)[i].plen]++;
	}
	for (l = 0; l < FB_PFX_NR; l++) {
		double cost;

		for (x = 0; x <= 128; x++)
			distinct[l] += h[l].count[x] > 0 || h[l].keep[x];
		if (distinct[l] <= FB_MAX_LENGTHS) {
			for (x = 0; x <= 128; x++)
				target[l][x] = h[l].count[x] > 0 || h[l].keep[x];
			continue;
		}
		cost = choose_targets(&h[l], target[l]);
		if (isinf(cost)) {
			snprintf(err, errlen,
				 "%s rules need a prefix length the filter cannot add: it already "
				 "uses %d (`load --replace` picks all lengths afresh)",
				 fb_rules_prefix_list_name(l), have->list[l].n);
			return -1;
		}
		if (cost > FB_EXPAND_MAX) {
			snprintf(err, errlen,
				 "%s rules use %d prefix lengths; fitting them into %d would take "
				 "%.0f entries (more than %u)",
				 fb_rules_prefix_list_name(l), distinct[l], FB_MAX_LENGTHS, cost,
				 FB_EXPAND_MAX);
			return -1;
		}
		ex->lists |= 1 << l;
	}
	if (!ex->lists) {
		ex->after = ex->before;
		return 0;
	}
	/* Count, then expand into a new array. */
	for (i = 0; i < *n; i++) {
		const struct fb_key *k = &(*keys)[i];
		int t;

		l = list_of(k);
		if (l < 0 || !(ex->lists & 1 << l)) {
			total++;
			continue;
		}
		for (t = k->plen; !target[l][t]; t++)
			;
		total += (size_t)1 << (t - k->plen);
	}
	nk = malloc(total * sizeof(*nk));
	if (!nk) {
		snprintf(err, errlen, "out of memory expanding prefixes");
		return -1;
	}
	for (i = 0; i < *n; i++) {
		const struct fb_key *k = &(*keys)[i];
		const __u8 *a;
		size_t c, cnt;
		u128 base;
		int t;

		l = list_of(k);
		if (l < 0 || !(ex->lists & 1 << l)) {
			nk[out++] = *k;
			continue;
		}
		for (t = k->plen; !target[l][t]; t++)
			;
		a = k->kind == FB_KIND_SRC ? k->saddr : k->daddr;
		base = to_u128(a);
		cnt = (size_t)1 << (t - k->plen);
		for (c = 0; c < cnt; c++) {
			struct fb_key e = *k;

			/* Entry c fills the t - plen bits under the prefix;
			 * only t = 0 would shift by the width (and has c = 0). */
			from_u128(base | (t > 0 ? (u128)c << (128 - t) : 0),
				  k->kind == FB_KIND_SRC ? e.saddr : e.daddr);
			e.plen = t;
			nk[out++] = e;
		}
	}
	free(*keys);
	*keys = nk;
	*n = out;
	ex->after = 0;
	for (i = 0; i < out; i++)
		ex->after += list_of(&nk[i]) >= 0;
	return 0;
}

int fb_prefixes_from_range(const __u8 lo[16], const __u8 hi[16],
			   int (*out)(const __u8 addr[16], int plen, void *ctx), void *ctx)
{
	u128 a = to_u128(lo), b = to_u128(hi);
	int count = 0;

	if (a > b)
		return -1;
	for (;;) {
		/* The largest aligned block starting at a that stays <= b. */
		int size = 0; /* log2 of the block */
		__u8 addr[16];

		while (size < 128 && !(a & ((u128)1 << size)) && a + (((u128)2 << size) - 1) <= b &&
		       a + (((u128)2 << size) - 1) >= a)
			size++;
		if (size == 127 && a == 0 && b == ~(u128)0)
			size = 128;
		from_u128(a, addr);
		if (out(addr, 128 - size, ctx))
			return -1;
		count++;
		if (size == 128)
			break;
		a += (u128)1 << size;
		if (a == 0 || a > b) /* wrapped past the top, or done */
			break;
	}
	return count;
}
