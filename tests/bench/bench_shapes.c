// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark 14: rule shapes (include/flowbloom/mask.h). ns per packet
 * through the real program, one core, IPv4, 1 MiB filters (k=8), against
 * baselines measured in the same run: a 5-tuple-only filter and a
 * source-only filter (/32 rules) holding the same 64k sources.
 *
 * With N shapes, the bench flows' shape (`udp src 198.51.x.y dport 53`, one
 * rule per source) is added last, after N-1 decoy shapes (`udp dst
 * 203.0.113.128/25..30 dport 53` style, never the flows' 203.0.113.1): a
 * hit probes all N shapes and matches at the last, a miss (sources
 * 198.51.128-255.y) probes all N. So both are the worst case for N.
 */
#include "benchmark.h"
#include "flowbloom/mask.h"

#define NSRC 65536U

static void add_shapes(struct fb_store *f, int nmasks)
{
	struct fb_key *keys = calloc(NSRC + 64 * 8, sizeof(*keys)), p;
	size_t n = 0, bad;
	__u32 i;
	int j, r;

	if (!keys)
		exit(1);
	for (j = 0; j < nmasks - 1; j++) {
		/* Decoy shape j: proto, dst/(25 + j % 6), dport/16, sport/(j / 6). */
		__u32 d = fb_mask_desc(0, 96 + 25 + j % 6, j / 6, 16, 1, FB_FAMILY_IPV4);

		for (r = 0; r < 16; r++) {
			fb_bench_flow(0, 0, &p);
			p.daddr[15] = (__u8)(128 + r * 8); /* 203.0.113.128+: never .1 */
			fb_mask_key(&keys[n++], &p, d);
		}
	}
	for (i = 0; i < NSRC; i++) {
		fb_bench_flow(i, 0, &p);
		fb_mask_key(&keys[n++], &p, fb_mask_desc(128, 0, 0, 16, 1, FB_FAMILY_IPV4));
	}
	if (fb_rules_add(f, keys, n, &bad)) {
		fprintf(stderr, "bench: adding %zu shape rules failed\n", n);
		exit(1);
	}
	free(keys);
}

void bench_shapes(void)
{
	static const int counts[] = { 1, 4, 8 };
	struct fb_store f;
	struct fb_key k;
	char name[64];
	__u32 i;
	size_t c;

	printf("\n14. rule shapes: %u sources, 1 MiB, k=8, IPv4 (ns per packet)      kernel     "
	       "wall\n",
	       NSRC);
	/* Baselines: the same sources as 5-tuples, and as /32 source rules. */
	if (make_filter("shp5", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, NSRC, &f))
		exit(1);
	bench_flowbloom("5-tuple only", &f, NSRC, 0);
	fb_store_close(&f);
	fb_store_destroy("shp5");
	if (make_filter("shpsrc", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, 0, &f))
		exit(1);
	{
		struct fb_key *keys = calloc(NSRC, sizeof(*keys));
		size_t bad;

		for (i = 0; keys && i < NSRC; i++) {
			fb_bench_flow(i, 0, &k);
			memset(&keys[i], 0, sizeof(keys[i]));
			memcpy(keys[i].saddr, k.saddr, 16);
			keys[i].kind = FB_KIND_SRC;
			keys[i].plen = 128;
			keys[i].family = FB_FAMILY_IPV4;
		}
		f.hdr->kinds = 0;
		if (!keys || fb_rules_add(&f, keys, NSRC, &bad))
			exit(1);
		free(keys);
	}
	bench_flowbloom("source /32 only", &f, NSRC, 0);
	fb_store_close(&f);
	fb_store_destroy("shpsrc");
	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		snprintf(name, sizeof(name), "shp%d", counts[c]);
		if (make_filter(name, SMALL_BITS, 8, FB_LAYOUT_BLOCKED, 0, &f))
			exit(1);
		f.hdr->kinds = 0;
		add_shapes(&f, counts[c]);
		snprintf(name, sizeof(name), "%d shape%s", counts[c], counts[c] > 1 ? "s" : "");
		bench_flowbloom(name, &f, NSRC, 0);
		fb_store_close(&f);
		snprintf(name, sizeof(name), "shp%d", counts[c]);
		fb_store_destroy(name);
	}
}
