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

void bench_ttl(void)
{
	static const double ttl[] = { 3600, 7200, 14400, 28800 };
	double base[2], none[2], gens[2], ratio[2];
	struct fb_key keys[1000];
	uint64_t seed = 0x771;
	struct fb_store f;
	char label[64];
	size_t bad;
	int miss, g, i;

	printf("\nRule lifetimes: ns/packet, blocked 1 MiB, one core (test_run)\n");
	if (make_filter("ttl", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, SMALL_FLOWS, &f))
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
			none[miss] = i ? (n < none[miss] ? n : none[miss]) : n;
		}
		qsort(r, 9, sizeof(r[0]), cmp_ratio);
		ratio[miss] = r[4];
	}
	for (g = 0; g < 4; g++) {
		for (i = 0; i < 1000; i++)
			test_random_flow(&seed, &keys[i], 0);
		fb_store_lock(&f);
		if (fb_gens_add(&f, keys, 1000, ttl[g], &bad, NULL))
			exit(1);
		fb_store_unlock(&f);
		if (g == 1)
			continue;
		snprintf(label, sizeof(label), "%d live generation%s", g + 1, g ? "s" : "");
		for (miss = 0; miss < 2; miss++)
			gens[miss] = run(&f, label, false, miss);
		printf("  %d generation%s: a miss costs %.1f ns more, a hit %.1f ns\n", g + 1,
		       g ? "s" : "", gens[1] - none[1], gens[0] - none[0]);
	}
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
	fb_store_destroy("ttl");
}
