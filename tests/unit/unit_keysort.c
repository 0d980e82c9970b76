// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_unit, the in-place sort of rules (user/lib/keysort.c) against
 * qsort() with memcmp, which it replaces in `load`'s duplicate drop and
 * the exact sets' batch: the same order and the same distinct keys, on
 * random lists, lists of a few keys repeated (runs of equal keys), sorted
 * and reversed ones, of every length to 300 and a few large ones. And
 * the bounded list's checks (fb_list_next_check): a list refused past max
 * holds at most 1.25 max rules (twice max before), each check a quarter
 * or more new rules.
 */
#include "unit.h"
#include "keysort.h"
#include "rules/lists.h"

static int cmp_mem(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct fb_key));
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One list of n keys drawn from `distinct` values (0: all random) in
 * shape 0 random, 1 sorted, 2 reversed. */
static bool same_as_qsort(size_t n, size_t distinct, int shape, uint64_t *seed)
{
	struct fb_key *a = calloc(n + 1, sizeof(*a)), *b = calloc(n + 1, sizeof(*b));
	size_t i, u, v;
	bool ok;

	for (i = 0; i < n; i++) {
		uint64_t r = next_rand(seed);
		int w;

		if (distinct)
			r %= distinct;
		/* Keys that differ early and late: the last word too. */
		for (w = 0; w < 5; w++)
			a[i].w[w] = w == 0 || w == 4 ? r * 0x9e3779b97f4a7c15ULL >> (w * 3)
						     : (uint64_t)w;
	}
	if (shape)
		qsort(a, n, sizeof(*a), cmp_mem);
	if (shape == 2)
		for (i = 0; i < n / 2; i++) {
			struct fb_key t = a[i];

			a[i] = a[n - 1 - i];
			a[n - 1 - i] = t;
		}
	memcpy(b, a, n * sizeof(*a));
	qsort(a, n, sizeof(*a), cmp_mem);
	fb_keys_sort(b, n);
	ok = !memcmp(a, b, n * sizeof(*a));
	for (i = u = 0; i < n; i++)
		if (!i || memcmp(&a[i], &a[i - 1], sizeof(*a)))
			a[u++] = a[i];
	v = fb_keys_unique(b, n);
	ok = ok && u == v && !memcmp(a, b, u * sizeof(*a));
	free(a);
	free(b);
	return ok;
}

void test_keysort(void)
{
	static const size_t distinct[] = { 0, 1, 2, 3, 17 };
	static const size_t big[] = { 1000, 65537, 300000 };
	uint64_t seed = 0x2545f4914f6cdd1dULL;
	unsigned bad = 0, runs = 0;
	size_t n, d, i, max;
	int shape;

	for (n = 0; n <= 300; n++)
		for (d = 0; d < sizeof(distinct) / sizeof(*distinct); d++)
			for (shape = 0; shape < 3; shape++, runs++)
				bad += !same_as_qsort(n, distinct[d], shape, &seed);
	for (i = 0; i < sizeof(big) / sizeof(*big); i++)
		for (d = 0; d < sizeof(distinct) / sizeof(*distinct); d++)
			for (shape = 0; shape < 3; shape++, runs++)
				bad += !same_as_qsort(big[i], distinct[d], shape, &seed);
	test_check(!bad, "fb_keys_sort and fb_keys_unique are qsort with memcmp", "");
	test_check(runs > 4000, "... over every list shape", "");

	/* A list of distinct rules without end: the most it holds when
	 * refused, for bounds of every size. */
	bad = 0;
	for (max = 1; max < (1ULL << 34); max = max * 3 + 1) {
		size_t c = fb_list_next_check(0, max), was;

		while (c <= max) {
			was = c;
			c = fb_list_next_check(c, max);
			if (c <= was || (c - was) * 4 < was)
				bad++;
		}
		if (c > max + max / 4 + 1 || c < max + 1)
			bad++;
	}
	test_check(!bad, "a list refused past max holds at most 1.25 max + 1 rules", "");
	/* Duplicates: after a check left n (at most max), the next is a
	 * quarter or more later, never at n itself. */
	bad = 0;
	for (max = 1; max < 100000; max = max * 2 + 3)
		for (n = 0; n <= max; n += 1 + n / 3)
			if (fb_list_next_check(n, max) <= n ||
			    fb_list_next_check(n, max) - n < n / 4)
				bad++;
	test_check(!bad, "each check a quarter or more past the last", "");
	/* No bound: doubling, 2^20 first. */
	test_check(fb_list_next_check(0, 0) == 1U << 20 &&
			   fb_list_next_check(3U << 20, 0) == 6U << 20,
		   "without a bound the checks double", "");
}
