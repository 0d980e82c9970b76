// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmarks 2 and 5: the fill rate through the mmap against a syscall per
 * flow, and live frames over a veth pair into a native-mode program.
 */
#include "benchmark.h"

/* 2. Fill rate into 256 MiB: the mmap path (plain and counting) against a
 * syscall per flow. */
void bench_fill(double *plain_out)
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

int bench_live(const char *gen, const char *rx, const char *idle)
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
