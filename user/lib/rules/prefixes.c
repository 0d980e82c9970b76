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

/* Entry c of prefix rule k expanded to length t (> k->plen): it fills the
 * t - plen bits under the prefix; only t = 0 would shift by the width
 * (and has c = 0). */
void fb_prefix_piece(const struct fb_key *k, int t, __u64 c, struct fb_key *e)
{
	const __u8 *a = k->kind == FB_KIND_SRC ? k->saddr : k->daddr;

	*e = *k;
	from_u128(to_u128(a) | (t > 0 ? (u128)c << (128 - t) : 0),
		  k->kind == FB_KIND_SRC ? e->saddr : e->daddr);
	e->plen = t;
}

unsigned fb_prefixes_held_expanded(const struct fb_key *k, const struct fb_lengths *ls,
				   unsigned (*held)(const struct fb_key *sub, void *ctx), void *ctx,
				   int *at)
{
	unsigned sum = 0;
	int i;

	*at = 0;
	if ((k->kind != FB_KIND_SRC && k->kind != FB_KIND_DST) || k->plen >= 128)
		return 0;
	for (i = 0; i < ls->n && i < FB_MAX_LENGTHS; i++) {
		int t = ls->len[i];
		unsigned min = ~0U, v;
		__u64 c, cnt;
		struct fb_key e;

		/* One rule expands into at most FB_EXPAND_MAX entries. */
		if (t <= k->plen || t - k->plen > 32 || (1ull << (t - k->plen)) > FB_EXPAND_MAX)
			continue;
		cnt = 1ull << (t - k->plen);
		for (c = 0; c < cnt && min; c++) {
			fb_prefix_piece(k, t, c, &e);
			v = held(&e, ctx);
			min = v < min ? v : min;
		}
		if (min && (!*at || t < *at))
			*at = t;
		sum += min;
	}
	return sum;
}

/* Lengths present: count per length 0..128. */
struct hist {
	double count[129];
	bool keep[129]; /* already in the filter: must be chosen */
};

/*
 * Choose at most maxlen (<= FB_MAX_LENGTHS) target lengths T (all `keep`
 * lengths among them, and the longest length present) minimising
 * sum over rules of 2^(t - len), t the shortest target >= len.
 * dp[j][m]: cheapest cover of all lengths <= cand[j] with cand[j] chosen
 * as the m-th target. O(L^2 * 8) for L <= 129 candidates.
 */
static double choose_targets(const struct hist *h, bool target[129], int maxlen)
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
	for (m = 1; m <= maxlen; m++)
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

/* Probes a packet makes with m[l] lengths per list (as
 * fb_probes_per_packet(): the flow probe, then its family's lists). */
static unsigned probes_with(bool flow, const int m[FB_PFX_NR])
{
	unsigned v4 = m[FB_PFX_SRC4] + m[FB_PFX_DST4], v6 = m[FB_PFX_SRC6] + m[FB_PFX_DST6];

	return flow + (v4 > v6 ? v4 : v6);
}

/*
 * With a budget: the number of lengths per list that makes the fewest
 * probes per packet (a miss pays one per length) among those whose
 * expanded entries the filter takes in no more memory than the fewest
 * entries need; ties go to fewer entries. cost[l][m]: entries of list l
 * in m lengths (INFINITY: not possible). Lists are few (4) and m <= 4:
 * every combination is tried.
 */
static void choose_lengths(const double cost[FB_PFX_NR][FB_MAX_LENGTHS + 1],
			   const int mmax[FB_PFX_NR], double others, bool flow,
			   const struct fb_expand_budget *b, int m[FB_PFX_NR])
{
	int t[FB_PFX_NR], l, c, combos = 1;
	double base = others, limit, best_e = INFINITY;
	unsigned best_p = ~0U;

	for (l = 0; l < FB_PFX_NR; l++) {
		m[l] = mmax[l];
		base += cost[l][mmax[l]];
		combos *= mmax[l] ? mmax[l] : 1;
	}
	limit = b->bytes(b->ctx, base, probes_with(flow, m));
	if (isinf(limit))
		return;
	for (c = 0; c < combos; c++) {
		double e = others, bytes;
		unsigned p;
		int r = c;

		for (l = 0; l < FB_PFX_NR; l++) {
			int span = mmax[l] ? mmax[l] : 1;

			t[l] = mmax[l] ? 1 + r % span : 0;
			r /= span;
			e += cost[l][t[l]];
		}
		if (isinf(e) || e > FB_EXPAND_MAX)
			continue;
		p = probes_with(flow, t);
		if (p > best_p || (p == best_p && e >= best_e))
			continue;
		bytes = b->bytes(b->ctx, e, p);
		if (bytes > limit)
			continue;
		best_p = p;
		best_e = e;
		memcpy(m, t, sizeof(t));
	}
}

/* The lengths of h, as "/24 /25 ..." (for one message at a time). */
static const char *lengths_text(const struct hist *h)
{
	static char buf[129 * 5];
	size_t at = 0;
	int x;

	buf[0] = 0;
	for (x = 0; x <= 128; x++)
		if (h->count[x] > 0 || h->keep[x])
			at += snprintf(buf + at, sizeof(buf) - at, "%s/%d", at ? " " : "", x);
	return buf;
}

/* List l cannot be fitted into the lengths target (its cheapest fit):
 * which of its rules does that fit expand most (the first such), for the
 * refusal to name its line. */
static void too_many(const struct fb_key *keys, size_t n, int l, const bool target[129],
		     struct fb_expansion *ex)
{
	int most = -1, t;
	size_t i;

	for (i = 0; i < n; i++) {
		if (list_of(&keys[i]) != l)
			continue;
		for (t = keys[i].plen; t < 128 && !target[t]; t++)
			;
		if (t - keys[i].plen > most) {
			most = t - keys[i].plen;
			ex->bad = i;
		}
	}
}

int fb_prefixes_expand(struct fb_key **keys, size_t *n, const struct fb_prefixes *have,
		       const struct fb_expand_budget *budget, struct fb_expansion *ex, char *err,
		       size_t errlen)
{
	bool target[FB_PFX_NR][129], flow = false, kept = false;
	double cost[FB_PFX_NR][FB_MAX_LENGTHS + 1], others = 0;
	int l, x, m, distinct[FB_PFX_NR] = { 0 }, mmax[FB_PFX_NR], pick[FB_PFX_NR];
	struct hist h[FB_PFX_NR];
	size_t i, total = 0, out = 0;
	struct fb_key *nk;

	memset(h, 0, sizeof(h));
	memset(ex, 0, sizeof(*ex));
	ex->bad = (size_t)-1;
	for (l = 0; l < FB_PFX_NR; l++)
		for (x = 0; x < have->list[l].n; x++) {
			h[l].keep[have->list[l].len[x]] = true;
			kept = true;
		}
	for (i = 0; i < *n; i++) {
		l = list_of(&(*keys)[i]);
		if (l < 0) {
			others++;
			flow |= (*keys)[i].kind == FB_KIND_FLOW;
			continue;
		}
		ex->before++;
		h[l].count[(*keys)[i].plen]++;
	}
	for (l = 0; l < FB_PFX_NR; l++) {
		double all = 0;

		for (x = 0; x <= 128; x++) {
			distinct[l] += h[l].count[x] > 0 || h[l].keep[x];
			all += h[l].count[x];
		}
		mmax[l] = distinct[l] < FB_MAX_LENGTHS ? distinct[l] : FB_MAX_LENGTHS;
		for (m = 0; m <= FB_MAX_LENGTHS; m++)
			cost[l][m] = m >= distinct[l] ? all : INFINITY;
		if (distinct[l] > FB_MAX_LENGTHS) {
			cost[l][FB_MAX_LENGTHS] = choose_targets(&h[l], target[l], FB_MAX_LENGTHS);
			if (isinf(cost[l][FB_MAX_LENGTHS])) {
				snprintf(err, errlen,
					 "%s rules need a prefix length the filter cannot add: it "
					 "already uses %d (`load --replace` picks all lengths "
					 "afresh)",
					 fb_rules_prefix_list_name(l), have->list[l].n);
				return -1;
			}
			if (cost[l][FB_MAX_LENGTHS] > FB_EXPAND_MAX) {
				too_many(*keys, *n, l, target[l], ex);
				snprintf(err, errlen,
					 "%s rules use %d prefix lengths (%s); fitting them into "
					 "%d would take %.0f entries (more than %u)",
					 fb_rules_prefix_list_name(l), distinct[l],
					 lengths_text(&h[l]), FB_MAX_LENGTHS,
					 cost[l][FB_MAX_LENGTHS], FB_EXPAND_MAX);
				return -1;
			}
		}
		/* Fewer lengths, for the budget to weigh. */
		if (budget && !kept)
			for (m = 1; m < mmax[l]; m++)
				cost[l][m] = choose_targets(&h[l], target[l], m);
	}
	memcpy(pick, mmax, sizeof(pick));
	if (budget && !kept)
		choose_lengths(cost, mmax, others, flow, budget, pick);
	for (l = 0; l < FB_PFX_NR; l++) {
		if (pick[l] >= distinct[l]) {
			for (x = 0; x <= 128; x++)
				target[l][x] = h[l].count[x] > 0 || h[l].keep[x];
			continue;
		}
		choose_targets(&h[l], target[l], pick[l]);
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
		size_t c, cnt;
		int t;

		l = list_of(k);
		if (l < 0 || !(ex->lists & 1 << l)) {
			nk[out++] = *k;
			continue;
		}
		for (t = k->plen; !target[l][t]; t++)
			;
		cnt = (size_t)1 << (t - k->plen);
		for (c = 0; c < cnt; c++)
			fb_prefix_piece(k, t, c, &nk[out++]);
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
