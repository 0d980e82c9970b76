// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules sorted in place (keysort.h): introsort, quicksort with a median
 * of three, insertion sort for short runs and heapsort past a depth of
 * twice log2(n), so never worse than n log n and no memory beyond the
 * list's.
 */
#include <string.h>
#include "keysort.h"

static int cmp(const struct fb_key *a, const struct fb_key *b)
{
	return memcmp(a, b, sizeof(*a));
}

static void swap(struct fb_key *a, struct fb_key *b)
{
	struct fb_key t = *a;

	*a = *b;
	*b = t;
}

static void insertion(struct fb_key *k, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct fb_key t = k[i];

		for (j = i; j > 0 && cmp(&k[j - 1], &t) > 0; j--)
			k[j] = k[j - 1];
		k[j] = t;
	}
}

static void sift(struct fb_key *k, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			return;
		if (c + 1 < n && cmp(&k[c], &k[c + 1]) < 0)
			c++;
		if (cmp(&k[i], &k[c]) >= 0)
			return;
		swap(&k[i], &k[c]);
		i = c;
	}
}

static void heapsort_keys(struct fb_key *k, size_t n)
{
	size_t i;

	for (i = n / 2; i-- > 0;)
		sift(k, i, n);
	for (i = n; i-- > 1;) {
		swap(&k[0], &k[i]);
		sift(k, 0, i);
	}
}

static void intro(struct fb_key *k, size_t n, unsigned depth)
{
	while (n > 16) {
		size_t m = n / 2, i, j;

		if (!depth--) {
			heapsort_keys(k, n);
			return;
		}
		/* The median of the first, middle and last into k[0]. */
		if (cmp(&k[m], &k[0]) < 0)
			swap(&k[m], &k[0]);
		if (cmp(&k[n - 1], &k[m]) < 0) {
			swap(&k[n - 1], &k[m]);
			if (cmp(&k[m], &k[0]) < 0)
				swap(&k[m], &k[0]);
		}
		swap(&k[0], &k[m]);
		/* Hoare's partition around k[0]: runs of equal keys split
		 * evenly, so a list of one key repeated stays n log n. */
		i = 0;
		j = n;
		for (;;) {
			while (cmp(&k[++i], &k[0]) < 0 && i < n - 1)
				;
			while (cmp(&k[--j], &k[0]) > 0)
				;
			if (i >= j)
				break;
			swap(&k[i], &k[j]);
		}
		swap(&k[0], &k[j]);
		/* The shorter side by recursion, the longer by the loop. */
		if (j < n - j - 1) {
			intro(k, j, depth);
			k += j + 1;
			n -= j + 1;
		} else {
			intro(k + j + 1, n - j - 1, depth);
			n = j;
		}
	}
	insertion(k, n);
}

void fb_keys_sort(struct fb_key *k, size_t n)
{
	unsigned depth = 0;
	size_t m;

	for (m = n; m > 1; m >>= 1)
		depth += 2;
	intro(k, n, depth);
}

size_t fb_keys_unique(struct fb_key *k, size_t n)
{
	size_t i, j;

	if (!n)
		return 0;
	fb_keys_sort(k, n);
	for (i = j = 1; i < n; i++)
		if (cmp(&k[i], &k[j - 1]))
			k[j++] = k[i];
	return j;
}
