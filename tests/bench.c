// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The benchmark suite (`make bench`): every figure in one run, on the same
 * machine, as ratios against baselines measured in the same run.
 *
 *  1. ns/packet through BPF_PROG_TEST_RUN with a large repeat, on one core:
 *     empty program, parse only, flowbloom (blocked and classic, 1 MiB and
 *     256 MiB, hits and misses, IPv4 and IPv6), the kernel's Bloom filter
 *     map and an exact hash map holding the same flows. Each packet probes
 *     a different flow (include/flowbloom/bench.h). The kernel reports a
 *     truncated integer mean; the wall clock of the call is printed beside
 *     it, and the ratio uses the wall clock.
 *  2. Fill rate: flows/s through the mmap, against a syscall per flow.
 *  3. Memory: fast-path bytes per flow against the hash map's.
 *
 * Not a test: it prints figures and which targets they meet.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "bench.skel.h"
#include "bits.h"
#include "counting.h"
#include "flowbloom/bench.h"
#include "flowbloom.skel.h"
#include "loader.h"
#include "monmaps.h"
#include "packet.h"
#include "prefixes.h"
#include "rules.h"
#include "sizing.h"
#include "store.h"

#define MIB (1024.0 * 1024.0)
#define SMALL_BITS (8ULL * 1024 * 1024)	   /* 1 MiB */
#define LARGE_BITS (2048ULL * 1024 * 1024) /* 256 MiB */
#define SMALL_FLOWS (1U << 19)		   /* flows in the 1 MiB filters */
#define LARGE_FLOWS (1U << 20)		   /* flows in the 256 MiB filters, hash map */

static unsigned repeat = 2000000;
static bool quick; /* `bench quick`: parse and blocked 1 MiB v4 only */
static int rounds = 3;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct row {
	char name[64];
	double kern, wall; /* ns per packet */
};

static struct row rows[64];
static int nrows;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median over rounds of ns/packet, kernel-reported and wall clock. */
static struct row *measure(const char *name, int prog_fd, int v6)
{
	struct fb_key k;
	uint8_t frame[128];
	double kern[8], wall[8];
	struct row *r = &rows[nrows++];
	int i;

	fb_bench_flow(0, v6, &k);
	for (i = 0; i < rounds; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .repeat = repeat);
		double t0;

		t.data_size_in = test_build_frame(&k, frame);
		t0 = now();
		if (bpf_prog_test_run_opts(prog_fd, &t)) {
			fprintf(stderr, "bench: %s: test run failed: %s\n", name, strerror(errno));
			exit(1);
		}
		wall[i] = (now() - t0) * 1e9 / repeat;
		kern[i] = t.duration;
	}
	qsort(kern, rounds, sizeof(double), cmp_double);
	qsort(wall, rounds, sizeof(double), cmp_double);
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->kern = kern[rounds / 2];
	r->wall = wall[rounds / 2];
	printf("  %-44s %8.1f %8.1f\n", r->name, r->kern, r->wall);
	fflush(stdout);
	return r;
}

static struct row *find(const char *name)
{
	int i;

	for (i = 0; i < nrows; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

/* A filter of `bits` bits holding flows 0..n-1 (IPv4 and IPv6 forms). */
static int make_filter_hash(const char *name, __u64 bits, int k, int layout, int hash, __u32 n,
			    struct fb_store *f)
{
	struct fb_create_opts o = {
		.nblocks = bits / FB_BLOCK_BITS,
		.k = k,
		.layout = layout,
		.hash = hash,
		.action = FB_ACTION_DROP,
	};
	struct fb_key key;
	__u32 i;

	if (fb_store_create(name, &o) || fb_store_open(name, f))
		return -1;
	for (i = 0; i < n; i++) {
		fb_bench_flow(i, 0, &key);
		fb_bits_set(f, &key);
		fb_bench_flow(i, 1, &key);
		fb_bits_set(f, &key);
	}
	f->hdr->nflows = 2ULL * n;
	f->hdr->kinds = FB_KINDF(FB_KIND_FLOW);
	return 0;
}

static int make_filter(const char *name, __u64 bits, int k, int layout, __u32 n, struct fb_store *f)
{
	return make_filter_hash(name, bits, k, layout, FB_HASH_SIPHASH13, n, f);
}

static void bench_flowbloom(const char *label, struct fb_store *f, __u32 n, int v6)
{
	char name[64];
	int miss;

	for (miss = 0; miss < 2; miss++) {
		struct fb_load_opts lo = { .private_stats = true,
					   .action = FB_ACTION_DROP,
					   .bench = miss ? FB_BENCH_MISS : n - 1,
					   .bench_v6 = v6 };
		struct flowbloom_bpf *skel = fb_load(f, &lo);

		if (!skel)
			exit(1);
		snprintf(name, sizeof(name), "flowbloom %s %s %s", label, v6 ? "v6" : "v4",
			 miss ? "miss" : "hit");
		measure(name, bpf_program__fd(skel->progs.flowbloom), v6);
		flowbloom_bpf__destroy(skel);
	}
}

/* Baseline programs from bench.bpf.c. With share, the kernel Bloom map and
 * the hash map are share's (filled once); else sized for kb_entries (k=7)
 * and hash_entries. */
static struct bench_bpf *load_bench(__u32 bench, int v6, __u32 kb_entries, __u32 hash_entries,
				    const struct bench_bpf *share)
{
	struct bench_bpf *b = bench_bpf__open();

	if (!b)
		exit(1);
	b->rodata->cfg_bench = bench;
	b->rodata->cfg_bench_v6 = v6;
	if (share) {
		bpf_map__reuse_fd(b->maps.kbloom, bpf_map__fd(share->maps.kbloom));
		bpf_map__reuse_fd(b->maps.exact, bpf_map__fd(share->maps.exact));
	} else {
		bpf_map__set_max_entries(b->maps.kbloom, kb_entries);
		bpf_map__set_map_extra(b->maps.kbloom, 7);
		bpf_map__set_max_entries(b->maps.exact, hash_entries);
	}
	if (bench_bpf__load(b)) {
		fprintf(stderr, "bench: cannot load bench.bpf.o\n");
		exit(1);
	}
	return b;
}

static double fill_kbloom(int fd, __u32 n)
{
	struct fb_key key;
	double t0 = now();
	__u32 i;

	for (i = 0; i < n; i++) {
		fb_bench_flow(i, 0, &key);
		bpf_map_update_elem(fd, NULL, &key, BPF_ANY);
		fb_bench_flow(i, 1, &key);
		bpf_map_update_elem(fd, NULL, &key, BPF_ANY);
	}
	return 2.0 * n / (now() - t0);
}

static double fill_exact(int fd, __u32 n)
{
	struct fb_key key;
	__u32 one = 1, i;
	double t0 = now();

	for (i = 0; i < n; i++) {
		fb_bench_flow(i, 0, &key);
		bpf_map_update_elem(fd, &key, &one, BPF_ANY);
		fb_bench_flow(i, 1, &key);
		bpf_map_update_elem(fd, &key, &one, BPF_ANY);
	}
	return 2.0 * n / (now() - t0);
}

/* memlock of a map as the kernel accounts it (fdinfo). */
static unsigned long long memlock(int fd)
{
	char path[64], line[256];
	unsigned long long v = 0;
	FILE *in;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	in = fopen(path, "r");
	if (!in)
		return 0;
	while (fgets(line, sizeof(line), in))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(in);
	return v;
}

static void baselines(int v6, struct bench_bpf **small, struct bench_bpf **large)
{
	struct bench_bpf *b;
	char name[64];
	int miss;

	b = load_bench(SMALL_FLOWS - 1, v6, 1, 1, NULL);
	measure(v6 ? "empty program v6" : "empty program v4", bpf_program__fd(b->progs.xdp_empty),
		v6);
	measure(v6 ? "parse only v6" : "parse only v4", bpf_program__fd(b->progs.xdp_parse), v6);
	bench_bpf__destroy(b);
	for (miss = 0; miss < 2; miss++) {
		b = small[miss];
		snprintf(name, sizeof(name), "kernel bloom 1 MiB %s %s", v6 ? "v6" : "v4",
			 miss ? "miss" : "hit");
		measure(name, bpf_program__fd(b->progs.xdp_kbloom), v6);
		b = large[miss];
		snprintf(name, sizeof(name), "kernel bloom 256 MiB %s %s", v6 ? "v6" : "v4",
			 miss ? "miss" : "hit");
		measure(name, bpf_program__fd(b->progs.xdp_kbloom), v6);
		snprintf(name, sizeof(name), "exact hash map 1M %s %s", v6 ? "v6" : "v4",
			 miss ? "miss" : "hit");
		measure(name, bpf_program__fd(b->progs.xdp_exact), v6);
	}
}

/* One DRAM access, measured directly: a chase of dependent loads through a
 * random cycle of the cache lines of 256 MiB (Sattolo's shuffle), so every
 * load misses the caches and waits for the one before it. */
static double dram_latency(void)
{
	size_t lines = (256u << 20) / 64, i, p = 0, steps = 4000000;
	uint64_t *buf = aligned_alloc(64, lines * 64), seed = 7;
	uint32_t *order = malloc(lines * sizeof(*order));
	double t0, ns;

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
	t0 = now();
	for (i = 0; i < steps; i++)
		p = buf[p * 8];
	ns = (now() - t0) * 1e9 / steps;
	free(buf);
	return p == lines ? 0 : ns; /* p keeps the chase from being optimised out */
}

static void target(const char *what, double got, double limit, bool at_most)
{
	bool ok = at_most ? got <= limit : got >= limit;

	printf("  %-62s %6.2f (%s %.2f) %s\n", what, got, at_most ? "<=" : ">=", limit,
	       ok ? "met" : "MISSED");
}

/* 2. Fill rate into 256 MiB: the mmap path (plain and counting) against a
 * syscall per flow. */
static void bench_fill(double *plain_out)
{
	struct fb_store fp, fc;
	struct fb_key key, *keys;
	double t0, plain, counting, sys;
	__u32 i, n = 4000000, nsys = 200000;

	printf("\n2. fill rate into 256 MiB (flows/s)\n");
	make_filter("fillp", LARGE_BITS, 8, FB_LAYOUT_BLOCKED, 0, &fp);
	keys = malloc(n * sizeof(*keys));
	for (i = 0; i < n; i++)
		fb_bench_flow(i, i & 1, &keys[i]);
	t0 = now();
	fb_bits_set_many(&fp, keys, n);
	plain = n / (now() - t0);
	printf("  %-44s %12.0f\n", "plain, mmap", plain);
	t0 = now();
	for (i = 0; i < nsys; i++) {
		__u64 h;
		__u32 idx;
		struct fb_block blk;
		int w;

		fb_bench_flow(n + i, i & 1, &key);
		h = fb_hash_key(&key, fp.hdr->hash, fp.hdr->key);
		idx = FB_HDR_BLOCKS + fb_blocked_index(h, fp.hdr->nblocks);
		bpf_map_lookup_elem(fp.bits_fd, &idx, &blk);
		for (w = 0; w < FB_BLOCK_WORDS; w++)
			blk.w[w] |= fb_blocked_word_mask(h, fp.hdr->k, w);
		bpf_map_update_elem(fp.bits_fd, &idx, &blk, BPF_ANY);
	}
	sys = nsys / (now() - t0);
	printf("  %-44s %12.0f\n", "plain, lookup+update syscalls per flow", sys);
	fb_store_close(&fp);
	fb_store_destroy("fillp");
	{
		struct fb_create_opts o = { .nblocks = LARGE_BITS / FB_BLOCK_BITS,
					    .k = 8,
					    .layout = FB_LAYOUT_BLOCKED,
					    .hash = FB_HASH_SIPHASH13,
					    .counter_bits = 4 };

		if (fb_store_create("fillc", &o) || fb_store_open("fillc", &fc))
			exit(1);
	}
	t0 = now();
	fb_counting_add_many(&fc, keys, n);
	counting = n / (now() - t0);
	free(keys);
	printf("  %-44s %12.0f\n", "counting (4-bit), mmap, journaled", counting);
	fb_store_close(&fc);
	fb_store_destroy("fillc");
	*plain_out = plain;
}

/* 5. Live: frames from BPF_PROG_TEST_RUN in live-frames mode, redirected by
 * xdp_gen into `gen` (a veth), received by an XDP program in native mode on
 * its peer `rx`. The generator is also attached to `idle` (a veth kept
 * down): without any attachment each live run pays two XDP dispatcher
 * updates. Every receiver drops every frame (the generator's flows are all
 * in the filter and the action is drop), so verdict costs are equal. */
static double live_run(int gen_fd, unsigned frames)
{
	struct fb_key k;
	uint8_t frame[128];
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .repeat = frames,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);
	double t0;

	fb_bench_flow(0, 0, &k);
	t.data_size_in = test_build_frame(&k, frame);
	t0 = now();
	if (bpf_prog_test_run_opts(gen_fd, &t)) {
		fprintf(stderr, "bench: live test run: %s\n", strerror(errno));
		exit(1);
	}
	return now() - t0;
}

static __u64 percpu_sum(int fd, size_t value_size, size_t offset)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	size_t vs = (value_size + 7) & ~7UL;
	char *buf = calloc(ncpu, vs);
	__u32 zero = 0;
	__u64 sum = 0, v;

	if (!bpf_map_lookup_elem(fd, &zero, buf))
		for (c = 0; c < ncpu; c++) {
			memcpy(&v, buf + c * vs + offset, 8);
			sum += v;
		}
	free(buf);
	return sum;
}

static int bench_live(const char *gen, const char *rx, const char *idle)
{
	unsigned gen_if = if_nametoindex(gen), rx_if = if_nametoindex(rx);
	unsigned idle_if = if_nametoindex(idle), frames = 5000000;
	struct fb_store fs, fl;
	struct bench_bpf *g, *cnt;
	double secs, base = 0;
	int i;

	if (!gen_if || !rx_if || !idle_if) {
		fprintf(stderr, "bench live: no such devices\n");
		return 1;
	}
	if (make_filter("livesmall", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, SMALL_FLOWS, &fs) ||
	    make_filter("livelarge", LARGE_BITS, 8, FB_LAYOUT_BLOCKED, LARGE_FLOWS, &fl))
		return 1;
	printf("\n5. live veth, one core, 64-byte IPv4 UDP frames, all dropped (Mpps)\n");
	for (i = 0; i < 3; i++) {
		struct flowbloom_bpf *fb = NULL;
		__u32 mask = i == 2 ? LARGE_FLOWS - 1 : SMALL_FLOWS - 1;
		const char *name = i == 0   ? "count-only program"
				   : i == 1 ? "flowbloom blocked 1 MiB"
					    : "flowbloom blocked 256 MiB";
		__u64 got;
		int rx_fd;

		g = bench_bpf__open();
		g->rodata->cfg_bench = mask;
		g->rodata->cfg_ifindex = gen_if;
		if (bench_bpf__load(g))
			return 1;
		if (i == 0) {
			cnt = load_bench(0, 0, 1, 1, NULL);
			rx_fd = bpf_program__fd(cnt->progs.xdp_count);
		} else {
			struct fb_load_opts lo = { .private_stats = true,
						   .action = FB_ACTION_DROP };

			fb = fb_load(i == 1 ? &fs : &fl, &lo);
			if (!fb)
				return 1;
			rx_fd = bpf_program__fd(fb->progs.flowbloom);
		}
		if (bpf_xdp_attach(rx_if, rx_fd, XDP_FLAGS_DRV_MODE, NULL) ||
		    bpf_xdp_attach(idle_if, bpf_program__fd(g->progs.xdp_gen), XDP_FLAGS_DRV_MODE,
				   NULL)) {
			fprintf(stderr, "bench live: attach: %s\n", strerror(errno));
			return 1;
		}
		live_run(bpf_program__fd(g->progs.xdp_gen), 100000); /* warm up */
		got = i == 0 ? percpu_sum(bpf_map__fd(cnt->maps.count), 8, 0)
			     : percpu_sum(bpf_map__fd(fb->maps.fb_stats), sizeof(struct fb_stats),
					  offsetof(struct fb_stats, c[FB_STAT_DROPPED].packets));
		secs = live_run(bpf_program__fd(g->progs.xdp_gen), frames);
		got = (i == 0 ? percpu_sum(bpf_map__fd(cnt->maps.count), 8, 0)
			      : percpu_sum(bpf_map__fd(fb->maps.fb_stats), sizeof(struct fb_stats),
					   offsetof(struct fb_stats, c[FB_STAT_DROPPED].packets))) -
		      got;
		printf("  %-44s %6.2f Mpps (%llu of %u frames dropped by the receiver)\n", name,
		       got / secs / 1e6, (unsigned long long)got, frames);
		if (i == 0)
			base = got / secs;
		else if (i == 1)
			target("live: flowbloom 1 MiB / count-only", got / secs / base, 0.9, false);
		bpf_xdp_detach(rx_if, XDP_FLAGS_DRV_MODE, NULL);
		bpf_xdp_detach(idle_if, XDP_FLAGS_DRV_MODE, NULL);
		if (i == 0)
			bench_bpf__destroy(cnt);
		flowbloom_bpf__destroy(fb);
		bench_bpf__destroy(g);
	}
	fb_store_close(&fs);
	fb_store_close(&fl);
	fb_store_destroy("livesmall");
	fb_store_destroy("livelarge");
	return 0;
}

/* 6. Prefix lists: ~1,500 prefixes partitioning 198.51.0.0/17 (lengths
 * /18-/28, more than 8, so `load` would expand them), in flowbloom (as
 * `load` does: expanded, then added) and in an LPM trie (xdp-filter users'
 * alternative). Hits: sources in 198.51.0-127.y; misses: 198.51.128-255.y.
 * 7. --confirm exact: the cost of confirming hits, and of misses. */
static void bench_prefixes(void)
{
	struct fb_key *keys = calloc(4096, sizeof(*keys));
	struct fb_prefixes none = { 0 };
	struct fb_expansion ex;
	struct fb_store pf, cf;
	struct bench_bpf *lb[2];
	char err[256], name[64];
	size_t n = 1, i, j;
	uint64_t seed = 42;
	double t0, t_fb, t_lpm;
	__u32 nb;
	__u8 k;
	int miss;

	/* A random partition: split a random prefix until there are 1,500. */
	fb_bench_flow(0, 0, &keys[0]);
	keys[0].w[1] &= fb_prefix_mask(96 + 17, 1);
	keys[0].w[4] = fb_key_word_tail(0, 0, 0, FB_KIND_SRC, 96 + 17, FB_FAMILY_IPV4);
	while (n < 1500) {
		i = test_rand64(&seed) % n;
		if (keys[i].plen >= 96 + 28)
			continue;
		keys[n] = keys[i];
		keys[i].plen++;
		keys[n].plen++;
		keys[n].saddr[12 + (keys[n].plen - 97) / 8] |= 0x80 >> ((keys[n].plen - 97) % 8);
		n++;
	}
	printf("\n6. prefix list: %zu prefixes of 198.51.0.0/17 (ns per packet, wall)\n", n);
	/* LPM trie: the original prefixes, one syscall each. */
	lb[0] = load_bench(0x7fff, 0, 1, 1, NULL);
	bench_bpf__destroy(lb[0]);
	{
		struct bench_bpf *b = bench_bpf__open();

		b->rodata->cfg_bench = 0x7fff;
		bpf_map__set_max_entries(b->maps.lpm, n);
		if (bench_bpf__load(b))
			exit(1);
		lb[0] = b;
	}
	t0 = now();
	for (i = 0; i < n; i++) {
		struct fb_lpm_key lk;
		__u32 one = 1;

		fb_lpm_key_set(&lk, keys[i].family, keys[i].saddr, keys[i].plen);
		bpf_map_update_elem(bpf_map__fd(lb[0]->maps.lpm), &lk, &one, BPF_ANY);
	}
	t_lpm = now() - t0;
	{
		struct bench_bpf *b = bench_bpf__open();

		b->rodata->cfg_bench = FB_BENCH_MISS;
		bpf_map__reuse_fd(b->maps.lpm, bpf_map__fd(lb[0]->maps.lpm));
		if (bench_bpf__load(b))
			exit(1);
		lb[1] = b;
	}
	/* flowbloom: as `load` does it. */
	t0 = now();
	if (fb_prefixes_expand(&keys, &n, &none, &ex, err, sizeof(err))) {
		fprintf(stderr, "bench: %s\n", err);
		exit(1);
	}
	fb_size_blocked(n, fb_probe_target(0.001, FB_MAX_LENGTHS), &nb, &k);
	{
		struct fb_create_opts o = { .nblocks = nb,
					    .k = k,
					    .layout = FB_LAYOUT_BLOCKED,
					    .hash = FB_HASH_SIPHASH13,
					    .action = FB_ACTION_DROP };

		if (fb_store_create("pfx", &o) || fb_store_open("pfx", &pf) ||
		    fb_rules_add(&pf, keys, n, &i))
			exit(1);
	}
	t_fb = now() - t0;
	for (miss = 0; miss < 2; miss++) {
		struct fb_load_opts lo = { .private_stats = true,
					   .action = FB_ACTION_DROP,
					   .bench = miss ? FB_BENCH_MISS : 0x7fff };
		struct flowbloom_bpf *skel = fb_load(&pf, &lo);

		snprintf(name, sizeof(name), "flowbloom prefixes %s", miss ? "miss" : "hit");
		measure(name, bpf_program__fd(skel->progs.flowbloom), 0);
		flowbloom_bpf__destroy(skel);
		snprintf(name, sizeof(name), "LPM trie %s", miss ? "miss" : "hit");
		measure(name, bpf_program__fd(lb[miss]->progs.xdp_lpm), 0);
	}
	printf("  flowbloom: %zu prefixes after expansion (%u lengths), %zu bytes, loaded in "
	       "%.1f ms\n",
	       ex.after, ((struct fb_prefixes *)&pf.blocks[1])->list[0].n, pf.map_bytes,
	       t_fb * 1e3);
	printf("  LPM trie: %zu prefixes, %llu bytes (memlock), loaded in %.1f ms\n", ex.before,
	       memlock(bpf_map__fd(lb[0]->maps.lpm)), t_lpm * 1e3);
	bench_bpf__destroy(lb[0]);
	bench_bpf__destroy(lb[1]);
	fb_store_close(&pf);
	fb_store_destroy("pfx");
	free(keys);

	/* 7. Confirmation: the same 1 MiB filter of 2^16 flows with and
	 * without --confirm exact. */
	printf("\n7. --confirm exact, 1 MiB filter of %u flows (ns per packet, wall)\n", 1U << 16);
	{
		struct fb_create_opts o = { .nblocks = SMALL_BITS / FB_BLOCK_BITS,
					    .k = 8,
					    .layout = FB_LAYOUT_BLOCKED,
					    .hash = FB_HASH_SIPHASH13,
					    .action = FB_ACTION_DROP,
					    .capacity = 1U << 17,
					    .confirm = 1 };
		struct fb_key key;

		if (fb_store_create("conf", &o) || fb_store_open("conf", &cf))
			exit(1);
		keys = malloc((1U << 16) * sizeof(*keys));
		for (j = 0; j < 1U << 16; j++)
			fb_bench_flow(j, 0, &keys[j]);
		if (fb_rules_add(&cf, keys, 1U << 16, &i))
			exit(1);
		free(keys);
		(void)key;
	}
	for (miss = 0; miss < 2; miss++) {
		int c;

		for (c = 0; c < 2; c++) {
			struct fb_load_opts lo = { .private_stats = true,
						   .action = FB_ACTION_DROP,
						   .bench = miss ? FB_BENCH_MISS : 0xffff };
			struct flowbloom_bpf *skel;

			cf.hdr->confirm = c;
			skel = fb_load(&cf, &lo);
			snprintf(name, sizeof(name), "flowbloom 1 MiB %s %s",
				 c ? "confirmed" : "plain", miss ? "miss" : "hit");
			measure(name, bpf_program__fd(skel->progs.flowbloom), 0);
			flowbloom_bpf__destroy(skel);
		}
	}
	cf.hdr->confirm = 1;
	fb_store_close(&cf);
	fb_store_destroy("conf");
}

/*
 * 8. Flow monitoring (README, Monitoring): the blocked 1 MiB load with
 * monitoring off, the sketch (with the top table), the seen-set, both; the
 * sketch on one atomic plane instead of per-CPU planes; on one core with
 * random flows, and on two cores sending the same flow (the worst case for
 * atomics). Same run, same filter: the differences are monitoring's cost.
 */
struct mon_variant {
	const char *name;
	bool sketch, newflows, atomic;
	double eps;
	__u64 expect;
	__u32 flows; /* 0: all the filter's; else this many (in cache) */
};

static struct flowbloom_bpf *load_monitored(struct fb_store *f, struct fb_monitor *m,
					    const struct mon_variant *v, __u32 bench)
{
	struct fb_load_opts lo = { .private_stats = true,
				   .action = FB_ACTION_DROP,
				   .bench = bench };
	struct flowbloom_bpf *skel;
	struct fb_mon_opts o;

	if (v->sketch || v->newflows) {
		fb_monitor_opts_default(&o);
		o.sketch = v->sketch;
		o.newflows = v->newflows;
		o.atomic = v->atomic;
		o.epsilon = v->eps;
		o.expect = v->expect;
		if (fb_monitor_create(f, &o) || fb_monitor_open(f, m))
			exit(1);
		lo.monitor = m;
	}
	skel = fb_load(f, &lo);
	if (!skel)
		exit(1);
	return skel;
}

struct core_run {
	int fd, cpu;
	double ns;
};

static void *core_run(void *arg)
{
	struct core_run *c = arg;
	uint8_t frame[128];
	struct fb_key k;
	cpu_set_t set;
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .repeat = repeat);

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	fb_bench_flow(0, 0, &k);
	t.data_size_in = test_build_frame(&k, frame);
	c->ns = bpf_prog_test_run_opts(c->fd, &t) ? -1.0 : (double)t.duration;
	return NULL;
}

/* Both CPUs run the same frame at once; mean of their kernel ns/packet. */
static double measure_two(const char *name, int fd)
{
	struct core_run c[2] = { { fd, 0, 0 }, { fd, 1, 0 } };
	pthread_t th[2];
	int i;

	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, core_run, &c[i]);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("  %-44s %8.1f %8.1f\n", name, c[0].ns, c[1].ns);
	return (c[0].ns + c[1].ns) / 2;
}

static void bench_monitor(struct fb_store *f, __u32 n)
{
	/* Defaults (eps 0.001: 5 x 4096 cells, 320 KiB per CPU; a seen-set for
	 * 100k flows, 1.6 MB) on all the filter's flows; then a small
	 * geometry (40 KiB, 160 KiB) on 4096 flows: everything in cache. */
	static const struct mon_variant vs[] = {
		{ "off", false, false, false, 0, 0, 0 },
		{ "sketch + top", true, false, false, 0.001, 100000, 0 },
		{ "seen-set", false, true, false, 0.001, 100000, 0 },
		{ "sketch + top + seen-set", true, true, false, 0.001, 100000, 0 },
		{ "atomic sketch + top", true, false, true, 0.001, 100000, 0 },
		{ "off, 4096 flows", false, false, false, 0, 0, 4096 },
		{ "sketch + top + seen-set, in cache", true, true, false, 0.01, 10000, 4096 },
	};
	double ns[7], two[3];
	struct fb_monitor m;
	char name[96];
	size_t i;

	printf("\n8. monitoring, blocked 1 MiB v4 hit, %u flows (ns per packet)  kernel     wall\n",
	       n);
	for (i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		const struct mon_variant *v = &vs[i];
		struct flowbloom_bpf *skel =
			load_monitored(f, &m, v, (v->flows ? v->flows : n) - 1);

		snprintf(name, sizeof(name), "monitor %s", v->name);
		ns[i] = measure(name, bpf_program__fd(skel->progs.flowbloom), 0)->kern;
		flowbloom_bpf__destroy(skel);
		if (v->sketch || v->newflows)
			fb_monitor_close(&m);
	}
	if (libbpf_num_possible_cpus() >= 2 && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		printf("  two cores, one flow on both (CPU 0, CPU 1):\n");
		for (i = 0; i < 3; i++) {
			const struct mon_variant *v = &vs[i == 0 ? 0 : i == 1 ? 1 : 4];
			struct flowbloom_bpf *skel = load_monitored(f, &m, v, 0);

			snprintf(name, sizeof(name), "monitor %s, 2 cores", v->name);
			two[i] = measure_two(name, bpf_program__fd(skel->progs.flowbloom));
			flowbloom_bpf__destroy(skel);
			if (i)
				fb_monitor_close(&m);
		}
	}
	fb_monitor_unpin(f->dir);
	printf("  monitoring's cost (kernel ns over 'off', this run): sketch + top %.0f, "
	       "seen-set %.0f, both %.0f; in cache, both %.0f; atomic plane %+.0f vs per-CPU\n",
	       ns[1] - ns[0], ns[2] - ns[0], ns[3] - ns[0], ns[6] - ns[5], ns[4] - ns[1]);
	if (libbpf_num_possible_cpus() >= 2 && sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		printf("  two cores, same flow: per-CPU sketch %+.0f, atomic sketch %+.0f over "
		       "off\n",
		       two[1] - two[0], two[2] - two[0]);
	target("monitoring: sketch + top + seen-set in cache, ns over off", ns[6] - ns[5], 25,
	       true);
}

int main(int argc, char **argv)
{
	struct fb_store bs, bl, cs, cl, nhs, nhl;
	struct bench_bpf *ksmall[2][2], *klarge[2][2], *fill_s, *fill_l;
	double kb_fill = 0, hash_fill = 0, plain = 0;
	unsigned long long hash_mem = 0, kb_mem = 0;
	char root[64];
	int v6, miss;

	if (argc > 1 && !strcmp(argv[1], "quick")) {
		struct fb_store q;
		struct bench_bpf *b;

		quick = true;
		snprintf(root, sizeof(root), "/sys/fs/bpf/fbbench_%d", getpid());
		setenv("FLOWBLOOM_ROOT", root, 1);
		if (make_filter("quick", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, SMALL_FLOWS, &q))
			return 1;
		b = load_bench(SMALL_FLOWS - 1, 0, 1, 1, NULL);
		measure("parse only v4", bpf_program__fd(b->progs.xdp_parse), 0);
		bench_flowbloom("blocked 1 MiB", &q, SMALL_FLOWS, 0);
		q.hdr->hash = FB_HASH_NH; /* bits now wrong for hits; timing only */
		bench_flowbloom("blocked 1 MiB nh", &q, SMALL_FLOWS, 0);
		q.hdr->hash = FB_HASH_SIPHASH24;
		bench_flowbloom("blocked 1 MiB siphash24", &q, SMALL_FLOWS, 0);
		q.hdr->hash = FB_HASH_SIPHASH13;
		bench_monitor(&q, SMALL_FLOWS);
		bench_bpf__destroy(b);
		fb_store_close(&q);
		fb_store_destroy("quick");
		return 0;
	}
	if (argc > 5 && !strcmp(argv[1], "live")) {
		/* Enter the network namespace only: `ip netns exec` would also
		 * remount /sys, hiding bpffs. */
		char path[128];
		int fd;

		snprintf(path, sizeof(path), "/run/netns/%s", argv[2]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNET)) {
			fprintf(stderr, "bench live: cannot enter netns %s: %s\n", argv[2],
				strerror(errno));
			return 1;
		}
		close(fd);
		snprintf(root, sizeof(root), "/sys/fs/bpf/fbbench_%d", getpid());
		setenv("FLOWBLOOM_ROOT", root, 1);
		fb_libbpf_logging(false);
		return bench_live(argv[3], argv[4], argv[5]);
	}
	if (argc > 1 && !strcmp(argv[1], "prefix")) {
		snprintf(root, sizeof(root), "/sys/fs/bpf/fbbench_%d", getpid());
		setenv("FLOWBLOOM_ROOT", root, 1);
		fb_libbpf_logging(false);
		bench_prefixes();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "fill")) {
		snprintf(root, sizeof(root), "/sys/fs/bpf/fbbench_%d", getpid());
		setenv("FLOWBLOOM_ROOT", root, 1);
		bench_fill(&plain);
		return 0;
	}
	if (argc > 1)
		repeat = atoi(argv[1]);
	snprintf(root, sizeof(root), "/sys/fs/bpf/fbbench_%d", getpid());
	setenv("FLOWBLOOM_ROOT", root, 1);
	fb_libbpf_logging(false);

	printf("flowbloom benchmark: %u packets per run, median of %d runs, one core\n", repeat,
	       rounds);
	printf("setting up filters and maps...\n");
	if (make_filter("bsmall", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, SMALL_FLOWS, &bs) ||
	    make_filter("csmall", SMALL_BITS, 7, FB_LAYOUT_CLASSIC, SMALL_FLOWS, &cs) ||
	    make_filter("blarge", LARGE_BITS, 8, FB_LAYOUT_BLOCKED, LARGE_FLOWS, &bl) ||
	    make_filter("clarge", LARGE_BITS, 7, FB_LAYOUT_CLASSIC, LARGE_FLOWS, &cl)) {
		fprintf(stderr, "bench: cannot create filters\n");
		return 1;
	}
	/* Baseline maps, filled once; one program per (family, hit/miss). The
	 * kernel map at 1 MiB: 800k entries x 7 hashes x 7/5 rounds up to 2^23
	 * bits; at 200M entries it is capped at 2^31 bits = 256 MiB. */
	fill_s = load_bench(0, 0, 800000, 1, NULL);
	fill_l = load_bench(0, 0, 200000000, 2 * LARGE_FLOWS, NULL);
	kb_fill = fill_kbloom(bpf_map__fd(fill_s->maps.kbloom), SMALL_FLOWS);
	fill_kbloom(bpf_map__fd(fill_l->maps.kbloom), LARGE_FLOWS);
	hash_fill = fill_exact(bpf_map__fd(fill_l->maps.exact), LARGE_FLOWS);
	hash_mem = memlock(bpf_map__fd(fill_l->maps.exact));
	kb_mem = memlock(bpf_map__fd(fill_l->maps.kbloom));
	for (v6 = 0; v6 < 2; v6++)
		for (miss = 0; miss < 2; miss++) {
			ksmall[v6][miss] = load_bench(miss ? FB_BENCH_MISS : SMALL_FLOWS - 1, v6, 0,
						      0, fill_s);
			klarge[v6][miss] = load_bench(miss ? FB_BENCH_MISS : LARGE_FLOWS - 1, v6, 0,
						      0, fill_l);
		}

	printf("\n1. ns per packet (BPF_PROG_TEST_RUN)              kernel     wall\n");
	for (v6 = 0; v6 < 2; v6++) {
		struct bench_bpf *s[2] = { ksmall[v6][0], ksmall[v6][1] };
		struct bench_bpf *l[2] = { klarge[v6][0], klarge[v6][1] };

		baselines(v6, s, l);
		bench_flowbloom("blocked 1 MiB", &bs, SMALL_FLOWS, v6);
		bench_flowbloom("classic 1 MiB", &cs, SMALL_FLOWS, v6);
		bench_flowbloom("blocked 256 MiB", &bl, LARGE_FLOWS, v6);
		bench_flowbloom("classic 256 MiB", &cl, LARGE_FLOWS, v6);
	}
	/* The fast hash option, v4, in cache and in DRAM. */
	if (make_filter_hash("nhsmall", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, FB_HASH_NH, SMALL_FLOWS,
			     &nhs) ||
	    make_filter_hash("nhlarge", LARGE_BITS, 8, FB_LAYOUT_BLOCKED, FB_HASH_NH, LARGE_FLOWS,
			     &nhl))
		return 1;
	bench_flowbloom("blocked 1 MiB nh", &nhs, SMALL_FLOWS, 0);
	bench_flowbloom("blocked 256 MiB nh", &nhl, LARGE_FLOWS, 0);
	fb_store_close(&nhs);
	fb_store_close(&nhl);
	fb_store_destroy("nhsmall");
	fb_store_destroy("nhlarge");

	bench_fill(&plain);
	printf("  %-44s %12.0f\n", "kernel bloom map, syscall per flow", kb_fill);
	printf("  %-44s %12.0f\n", "exact hash map, syscall per flow", hash_fill);
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
		printf("  exact hash map (kernel memlock, %u flows): %6.2f\n", 2 * LARGE_FLOWS,
		       (double)hash_mem / (2.0 * LARGE_FLOWS));
		printf("  kernel bloom map 256 MiB (memlock): %llu bytes\n", kb_mem);

		printf("\n4. targets (ratios of wall-clock ns in this run)\n");
		{
			struct row *parse = find("parse only v4"),
				   *empty = find("empty program v4");
			double miss_ns = dram_latency();

			target("blocked 1 MiB hit / parse only (v4)",
			       find("flowbloom blocked 1 MiB v4 hit")->wall / parse->wall, 1.5,
			       true);
			target("blocked 1 MiB miss / parse only (v4)",
			       find("flowbloom blocked 1 MiB v4 miss")->wall / parse->wall, 1.5,
			       true);
			target("blocked 1 MiB hit / parse only (v6)",
			       find("flowbloom blocked 1 MiB v6 hit")->wall /
				       find("parse only v6")->wall,
			       1.5, true);
			printf("  (one DRAM access, pointer chase through 256 MiB: %.0f ns)\n",
			       miss_ns);
			target("blocked 256 MiB hit / (parse only + one DRAM access)",
			       find("flowbloom blocked 256 MiB v4 hit")->wall /
				       (parse->wall + miss_ns),
			       1.2, true);
			target("blocked 256 MiB hit / (1 MiB hit + one DRAM access)",
			       find("flowbloom blocked 256 MiB v4 hit")->wall /
				       (find("flowbloom blocked 1 MiB v4 hit")->wall + miss_ns),
			       1.2, true);
			target("kernel bloom 256 MiB hit / flowbloom blocked 256 MiB hit",
			       find("kernel bloom 256 MiB v4 hit")->wall /
				       find("flowbloom blocked 256 MiB v4 hit")->wall,
			       3, false);
			target("exact hash 1M hit / flowbloom blocked 1 MiB hit",
			       find("exact hash map 1M v4 hit")->wall /
				       find("flowbloom blocked 1 MiB v4 hit")->wall,
			       5, false);
			target("with --hash nh: blocked 1 MiB hit / parse only (v4)",
			       find("flowbloom blocked 1 MiB nh v4 hit")->wall / parse->wall, 1.5,
			       true);
			target("with --hash nh: exact hash 1M hit / blocked 1 MiB hit",
			       find("exact hash map 1M v4 hit")->wall /
				       find("flowbloom blocked 1 MiB nh v4 hit")->wall,
			       5, false);
			target("with --hash nh: 256 MiB hit / (parse only + one DRAM access)",
			       find("flowbloom blocked 256 MiB nh v4 hit")->wall /
				       (parse->wall + miss_ns),
			       1.2, true);
			target("fill, M flows/s into 256 MiB (plain, mmap)", plain / 1e6, 10,
			       false);
			printf("  (empty program v4: %.1f ns)\n", empty->wall);
		}
	}
	bench_monitor(&bs, SMALL_FLOWS);
	for (v6 = 0; v6 < 2; v6++)
		for (miss = 0; miss < 2; miss++) {
			bench_bpf__destroy(ksmall[v6][miss]);
			bench_bpf__destroy(klarge[v6][miss]);
		}
	bench_bpf__destroy(fill_s);
	bench_bpf__destroy(fill_l);
	fb_store_close(&bs);
	fb_store_close(&cs);
	fb_store_close(&bl);
	fb_store_close(&cl);
	fb_store_destroy("bsmall");
	fb_store_destroy("csmall");
	fb_store_destroy("blarge");
	fb_store_destroy("clarge");
	return 0;
}
