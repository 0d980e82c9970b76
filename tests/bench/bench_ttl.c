// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `bench ttl`: what rules with a lifetime cost per packet (README, Rule
 * lifetimes). The blocked 1 MiB filter (NH) of the main bench, hits and
 * misses, through the program built without the lifetime code
 * (cfg_bench_no_ttl, the baseline), with it and no generation (what every
 * filter without lifetimes runs), then with 1, 2 and 4 live generations
 * (other flows, added for hours). A hit in the filter never reaches the
 * generations; a miss probes each.
 */
#include "benchmark.h"
#include "rules/lifetime.h"
#include "rules/rules.h"
#include "store/gens.h"

/* Instructions of a program as loaded (BPF) and as run (x86 bytes). */
static void sizes(struct fb_store *f, bool no_ttl, __u32 *xlated, __u32 *jited)
{
	struct fb_load_opts lo = { .private_stats = true,
				   .action = FB_ACTION_DROP,
				   .bench_no_ttl = no_ttl };
	struct flowbloom_bpf *skel = fb_load(f, &lo);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!skel || bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.flowbloom), &info, &len))
		exit(1);
	*xlated = info.xlated_prog_len / 8;
	*jited = info.jited_prog_len;
	flowbloom_bpf__destroy(skel);
}

static int cmp_ratio(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double run(struct fb_store *f, const char *label, bool no_ttl, int miss)
{
	struct fb_load_opts lo = { .private_stats = true,
				   .action = FB_ACTION_DROP,
				   .bench = miss ? FB_BENCH_MISS : SMALL_FLOWS - 1,
				   .bench_no_ttl = no_ttl };
	struct flowbloom_bpf *skel = fb_load(f, &lo);
	char name[64];
	double ns;

	if (!skel)
		exit(1);
	snprintf(name, sizeof(name), "%s %s", label, miss ? "miss" : "hit");
	/* The kernel's own mean: on a shared machine the wall clock of the
	 * call also counts the other tasks (the ratio of two adjacent runs). */
	ns = measure(name, bpf_program__fd(skel->progs.flowbloom), 0)->kern;
	flowbloom_bpf__destroy(skel);
	return ns;
}

/* What live generations cost a packet (hit or miss), in ns over the
 * program built without the lifetime code (which never looks at them):
 * the median of the ratios of pairs measured back to back (another
 * task's burst slows both of a pair alike), over base, the fastest
 * baseline of the part. */
static double gens_cost(struct fb_store *f, const char *label, int miss, int pairs, double base)
{
	double r[5];
	int i;

	for (i = 0; i < pairs; i++) {
		double b = run(f, "without the lifetime code", true, miss);

		r[i] = run(f, label, false, miss) / b;
	}
	qsort(r, pairs, sizeof(r[0]), cmp_ratio);
	return (r[pairs / 2] - 1) * base;
}

/* Generation g of f for ttl, holding keys: sized to them as `add --ttl`
 * sizes it (full false), or as large as the filter (as generations were
 * made before they were sized, the baseline). */
static void gen_add(struct fb_store *f, const struct fb_key *keys, size_t n, double ttl, unsigned g,
		    bool full)
{
	struct fb_store gs;
	size_t bad;

	fb_store_lock(f);
	if (!full) {
		if (fb_gens_add(f, keys, n, ttl, &bad, NULL))
			exit(1);
	} else {
		if (fb_gens_import(f, g, ttl, f->hdr->nblocks, f->hdr->k, &gs) ||
		    fb_rules_add(&gs, keys, n, &bad))
			exit(1);
		fb_gen_close(&gs);
		__atomic_fetch_or(&f->hdr->gens, 1U << g, __ATOMIC_RELEASE);
	}
	fb_store_unlock(f);
}

void bench_ttl(void)
{
	static const double ttl[] = { 3600, 7200, 14400, 28800 };
	double base[2], ratio[2], cost[2][4][2];
	struct fb_key keys[4][1000];
	uint64_t seed = 0x771;
	struct fb_store f, ff;
	char label[64];
	int miss, g, i, full;
	__u8 k;

	printf("\nRule lifetimes: ns/packet, blocked 1 MiB, one core (test_run)\n");
	if (make_filter("ttl", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, SMALL_FLOWS, &f) ||
	    make_filter("ttl-full", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, SMALL_FLOWS, &ff))
		exit(1);
	/* Alternated, nine pairs each: the ratio of each pair (measured
	 * back to back, so other tasks and drift hit both alike), the median
	 * of those kept. */
	for (miss = 0; miss < 2; miss++) {
		double r[9], b, n;

		for (i = 0; i < 9; i++) {
			b = run(&f, "without the lifetime code", true, miss);
			n = run(&f, "with it, no generation", false, miss);
			r[i] = n / b;
			base[miss] = i ? (b < base[miss] ? b : base[miss]) : b;
		}
		qsort(r, 9, sizeof(r[0]), cmp_ratio);
		ratio[miss] = r[4];
	}
	/* 1,000 other flows a generation, added for hours: in generations
	 * sized to them (f), and in generations as large as the filter (ff). */
	for (g = 0; g < 4; g++)
		for (i = 0; i < 1000; i++)
			test_random_flow(&seed, &keys[g][i], 0);
	for (g = 0; g < 4; g++) {
		for (full = 0; full < 2; full++) {
			struct fb_store *t = full ? &ff : &f;

			gen_add(t, keys[g], 1000, ttl[g], g, full);
			if (g == 1)
				continue;
			snprintf(label, sizeof(label), "%d live generation%s%s", g + 1,
				 g ? "s" : "", full ? " of 1 MiB" : ", sized");
			for (miss = 0; miss < 2; miss++)
				cost[full][g][miss] =
					gens_cost(t, label, miss, miss ? 5 : 1, base[miss]);
		}
	}
	printf("  live generations of 1,000 flows each: ns a packet more than without the "
	       "lifetime code\n"
	       "  (the median ratio of back-to-back pairs, times the fastest baseline): sized "
	       "to their flows\n  (%u blocks each), and as large as the filter\n",
	       fb_gens_blocks(f.hdr, 1000, &k));
	printf("  %-24s %12s %12s %12s %12s\n", "live generations", "miss, sized", "miss, 1 MiB",
	       "hit, sized", "hit, 1 MiB");
	for (g = 0; g < 4; g++)
		if (g != 1)
			printf("  %-24d %12.1f %12.1f %12.1f %12.1f\n", g + 1, cost[0][g][1],
			       cost[1][g][1], cost[0][g][0], cost[1][g][0]);
	printf("  %-62s %6.2f (no target)\n",
	       "4 live generations, a miss: sized / 1 MiB (ns over the baseline)",
	       cost[1][3][1] > 0 ? cost[0][3][1] / cost[1][3][1] : 0);
	{
		__u32 xa, ja, xb, jb;

		sizes(&f, true, &xa, &ja);
		sizes(&f, false, &xb, &jb);
		printf("  program without / with the lifetime code: %u / %u BPF instructions, "
		       "%u / %u bytes of x86\n",
		       xa, xb, ja, jb);
	}
	printf("  %-62s %6.3f\n", "a filter without lifetimes, hit: with / without the code",
	       ratio[0]);
	target("a filter without lifetimes, miss: with / without the code", ratio[1], 1.03, true);
	fb_store_close(&f);
	fb_store_close(&ff);
	fb_store_destroy("ttl");
	fb_store_destroy("ttl-full");
}
