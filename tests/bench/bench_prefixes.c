// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark 6: prefix lists in flowbloom (expanded as `load` does) against an
 * LPM trie.
 */
#include "benchmark.h"

/* 6. Prefix lists: ~1,500 prefixes partitioning 198.51.0.0/17 (lengths
 * /18-/28, more than 8, so `load` would expand them), in flowbloom (as
 * `load` does: expanded, then added) and in an LPM trie (xdp-filter users'
 * alternative). Hits: sources in 198.51.0-127.y; misses: 198.51.128-255.y.
 * 7. --confirm exact: the cost of confirming hits, and of misses. */
void bench_prefixes(void)
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
