// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sections 3 and 4 of the main benchmark: fast-path memory per flow, and
 * the targets, as ratios of the rows section 1 measured in this run
 * (bench.c).
 */
#include "benchmark.h"
#include "testlib.h"

void expect_verdict(const struct row *r, int verdict)
{
	if (r->verdict != verdict) {
		fprintf(stderr,
			"bench: %s: the last packet's verdict was %d, not %d (XDP_DROP 1, XDP_PASS "
			"2)\n",
			r->name, r->verdict, verdict);
		exit(1);
	}
}

/* The 10M-flow filter's row (its name carries its size). */
static struct row *find10m(const char *hm)
{
	char suffix[16];

	snprintf(suffix, sizeof(suffix), " v4 %s", hm);
	return bench_row_like("flowbloom blocked 10M/1%", suffix);
}

/* The floor measured beside it (bench_hash10m). */
struct row *bench_floor10m;
struct row *bench_probe_floor[4];

/* The last line of a probe floor's note: the 10M filter against it. */
static void against_floor(const struct row *h, const struct row *m)
{
	printf("   flowbloom 10M / that = %.2f hit, %.2f miss)\n", find10m("hit")->kern / h->kern,
	       find10m("miss")->kern / m->kern);
}

/* One DRAM access, measured directly: a chase of dependent loads through a
 * random cycle of the cache lines of 256 MiB (Sattolo's shuffle), so every
 * load misses the caches and waits for the one before it. */
static double dram_latency(void)
{
	size_t lines = (256u << 20) / 64, i, p = 0, steps = 200000;
	uint64_t *buf = aligned_alloc(64, lines * 64), seed = 7;
	uint32_t *order = malloc(lines * sizeof(*order));
	double t0, ns = 1e9;
	int r;

	if (!buf || !order)
		return 0;
	for (i = 0; i < lines; i++)
		order[i] = i;
	for (i = lines - 1; i > 0; i--) {
		size_t j = test_rand64(&seed) % i;
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < lines; i++)
		buf[(size_t)order[i] * 8] = order[(i + 1) % lines];
	free(order);
	/* The fastest of 20 chases: another process's time slice only ever
	 * adds to the wall clock (the machine may be shared). */
	for (r = 0; r < 20; r++) {
		t0 = now();
		for (i = 0; i < steps; i++)
			p = buf[p * 8];
		t0 = (now() - t0) * 1e9 / steps;
		if (t0 < ns)
			ns = t0;
	}
	free(buf);
	return p == lines ? 0 : ns; /* p keeps the chase from being optimised out */
}

/* hash_mem and kb_mem: the exact hash map's and the kernel Bloom map's
 * memlock; plain and counting: section 2's fill rates, flows/s. */
void bench_targets(unsigned long long hash_mem, unsigned long long kb_mem, double plain,
		   double counting)
{
	__u32 i;

	printf("\n3. fast-path memory per flow (bytes)\n");
	for (i = 0; i < 2; i++) {
		double p = i ? 0.001 : 0.01;
		__u32 nb;
		__u8 k;

		fb_size_blocked(1e6, p, &nb, &k);
		printf("  blocked at %-5g: %6.2f (k=%u)", p,
		       (double)(nb + FB_HDR_BLOCKS) * FB_BLOCK_BYTES / 1e6, k);
		fb_size_classic(1e6, p, &nb, &k);
		printf("   classic: %6.2f (k=%u)\n",
		       (double)(nb + FB_HDR_BLOCKS) * FB_BLOCK_BYTES / 1e6, k);
	}
	printf("  exact hash map (kernel memlock, %u flows): %6.2f\n", 2 * SMALL_FLOWS,
	       (double)hash_mem / (2.0 * SMALL_FLOWS));
	printf("  kernel bloom map 256 MiB (memlock): %llu bytes\n", kb_mem);

	printf("\n4. targets (ratios of kernel-reported ns in this run: the wall clock "
	       "also "
	       "counts\n   other processes' time slices on this shared machine; the "
	       "kernel's "
	       "mean is\n   truncated to whole ns)\n");
	{
		struct row *parse = bench_row("parse only v4"),
			   *empty = bench_row("empty program v4"),
			   *dram = bench_row("parse + one line of a 256 MiB array v4");
		double miss_ns = dram_latency(), line_ns = dram->kern - parse->kern;

		target("blocked 1 MiB hit / parse only (v4)",
		       bench_row("flowbloom blocked 1 MiB v4 hit")->kern / parse->kern, 1.5, true);
		target("blocked 1 MiB miss / parse only (v4)",
		       bench_row("flowbloom blocked 1 MiB v4 miss")->kern / parse->kern, 1.5, true);
		target("blocked 1 MiB hit / parse only (v6)",
		       bench_row("flowbloom blocked 1 MiB v6 hit")->kern /
			       bench_row("parse only v6")->kern,
		       1.5, true);
		printf("  (one DRAM access: a random line of a 256 MiB BPF array, %.0f ns "
		       "over "
		       "parse only;\n   a user-space pointer chase through 256 MiB, "
		       "fastest "
		       "of 20: %.0f ns)\n",
		       line_ns, miss_ns);
		target("blocked 256 MiB hit / (parse only + one DRAM access)",
		       bench_row("flowbloom blocked 256 MiB v4 hit")->kern / dram->kern, 1.15,
		       true);
		target("blocked 256 MiB hit / (1 MiB hit + one DRAM access)",
		       bench_row("flowbloom blocked 256 MiB v4 hit")->kern /
			       (bench_row("flowbloom blocked 1 MiB v4 hit")->kern + line_ns),
		       1.15, true);
		target("kernel bloom 256 MiB hit / flowbloom blocked 256 MiB hit",
		       bench_row("kernel bloom 256 MiB v4 hit")->kern /
			       bench_row("flowbloom blocked 256 MiB v4 hit")->kern,
		       3, false);
		target("exact hash 1M hit / flowbloom blocked 1 MiB hit",
		       bench_row("exact hash map 1M v4 hit")->kern /
			       bench_row("flowbloom blocked 1 MiB v4 hit")->kern,
		       5, false);
		target("with --hash siphash13: blocked 1 MiB hit / parse only (v4)",
		       bench_row("flowbloom blocked 1 MiB siphash13 v4 hit")->kern / parse->kern,
		       1.5, true);
		target("with --hash siphash13: exact hash 1M hit / blocked 1 MiB hit",
		       bench_row("exact hash map 1M v4 hit")->kern /
			       bench_row("flowbloom blocked 1 MiB siphash13 v4 hit")->kern,
		       5, false);
		target("with --hash siphash13: 256 MiB hit / (parse only + one DRAM "
		       "access)",
		       bench_row("flowbloom blocked 256 MiB siphash13 v4 hit")->kern / dram->kern,
		       1.15, true);
		target("exact hash 10M hit / flowbloom blocked 10M/1% hit",
		       bench_row("exact hash map 10M v4 hit")->kern / find10m("hit")->kern, 5,
		       false);
		target("exact hash 10M miss / flowbloom blocked 10M/1% miss",
		       bench_row("exact hash map 10M v4 miss")->kern / find10m("miss")->kern, 5,
		       false);
		if (bench_floor10m) {
			struct row *fl = bench_floor10m;

			printf("  (%s: %.0f ns, a program that parses and reads one\n", fl->name,
			       fl->kern);
			printf("   random line of an array the 10M filter's size, nothing "
			       "else; exact hash 10M hit / that\n");
			printf("   = %.2f; flowbloom 10M hit / that = %.2f)\n",
			       bench_row("exact hash map 10M v4 hit")->kern / fl->kern,
			       find10m("hit")->kern / fl->kern);
		}
		if (bench_probe_floor[0] && bench_probe_floor[1]) {
			struct row *h = bench_probe_floor[0], *m = bench_probe_floor[1];

			printf("  (probe floor: %.0f ns hit, %.0f miss: parse, NH of the key,\n",
			       h->kern, m->kern);
			printf("   its one line of a copy of the 10M filter's bits and the\n");
			printf("   8-bit test, by the data path's own functions, nothing else;\n");
			printf("   exact hash 10M / that = %.2f hit, %.2f miss;\n",
			       bench_row("exact hash map 10M v4 hit")->kern / h->kern,
			       bench_row("exact hash map 10M v4 miss")->kern / m->kern);
			against_floor(h, m);
		}
		if (bench_probe_floor[2] && bench_probe_floor[3]) {
			struct row *h = bench_probe_floor[2], *m = bench_probe_floor[3];

			printf("  (the same over the filter's own chunks, the chunk's\n");
			printf("   lookup on the way to the block: %.0f ns hit, %.0f miss;\n",
			       h->kern, m->kern);
			against_floor(h, m);
		}
		target("exact hash 10M hit / flowbloom blocked 256 MiB hit",
		       bench_row("exact hash map 10M v4 hit")->kern /
			       bench_row("flowbloom blocked 256 MiB v4 hit")->kern,
		       5, false);
		target("exact hash 1M miss / flowbloom blocked 1 MiB miss",
		       bench_row("exact hash map 1M v4 miss")->kern /
			       bench_row("flowbloom blocked 1 MiB v4 miss")->kern,
		       5, false);
		target("IPv6 / IPv4: blocked 1 MiB hit ",
		       bench_row("flowbloom blocked 1 MiB v6 hit")->kern /
			       bench_row("flowbloom blocked 1 MiB v4 hit")->kern,
		       1.2, true);
		target("IPv6 / IPv4: blocked 1 MiB miss ",
		       bench_row("flowbloom blocked 1 MiB v6 miss")->kern /
			       bench_row("flowbloom blocked 1 MiB v4 miss")->kern,
		       1.2, true);
		target("IPv6 / IPv4: blocked 256 MiB hit ",
		       bench_row("flowbloom blocked 256 MiB v6 hit")->kern /
			       bench_row("flowbloom blocked 256 MiB v4 hit")->kern,
		       1.2, true);
		target("fill, M flows/s into 256 MiB (plain, mmap)", plain / 1e6, 10, false);
		target("fill, M flows/s into 256 MiB (counting 4-bit, mmap)", counting / 1e6, 10,
		       false);
		printf("  (empty program v4: %.1f ns kernel, %.1f wall)\n", empty->kern,
		       empty->wall);
	}
}
