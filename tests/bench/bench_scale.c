// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The live head-to-head at scale (bench.sh part `scale`, section 14): a
 * million and ten million blocked sources, and a prefix list of a million
 * entries shaped like Spamhaus DROP, held by flowbloom, by an exact
 * per-CPU hash map (xdp-filter's design: bench.bpf.c xdp_exact6) and by an
 * LPM trie (xdp_lpm). Sources are IPv6 (scale.h): 2001:db8::/32 is the only
 * documentation space with room for ten million of them.
 *
 *   bench scale-fill NAME WHAT      fill flowbloom filter NAME (made by
 *                                   `flowbloom create`) with WHAT's rules
 *   bench scale-rx NETNS DEV KIND WHAT
 *                                   a receiver (exact or lpm) holding
 *                                   WHAT's rules, attached to DEV; or
 *                                   (line) the floor: one random line a
 *                                   frame of an array flowbloom's size;
 *                                   or (floor) the keyed probe alone, of
 *                                   a copy of flowbloom's filter `scale`
 * WHAT is a number of hosts (scale_host(0..N-1), /128 source rules) or
 * "pfx" (the prefix list: DROP's lengths /11-/24 and hosts, each IPv4-
 * shaped a.b.c.d/L placed at 2001:db8:ab:cd::/(32+L), hosts /64). Each
 * prints the memory it holds. `bench gen` with BENCH_SCALE=WHAT sends the
 * matching frames (bench_gen.c).
 */
#include "benchmark.h"
#include <arpa/inet.h>
#include "scale.h"
#include "types/create.h"
#include "store/memuse.h"

#define PFX_N 1000000
#define PFX_SEED 0xd409

/* The prefix list: entry i's prefix (an LPM key) and a source inside it. */
static void pfx_list(struct fb_lpm_key *pk, __u8 (*src)[16])
{
	struct pentry *e = malloc(PFX_N * sizeof(*e));
	uint64_t seed = PFX_SEED;
	size_t i;

	if (!e)
		exit(1);
	gen_list(e, PFX_N, &seed);
	for (i = 0; i < PFX_N; i++) {
		__u32 a = ntohl(e[i].addr), inside = (__u32)test_rand64(&seed);
		__u64 iid = test_rand64(&seed);
		__u8 addr[16] = { 0x20, 0x01, 0x0d, 0xb8 };
		int b;

		for (b = 0; b < 4; b++)
			addr[4 + b] = a >> (24 - 8 * b);
		if (pk)
			fb_lpm_key_set(&pk[i], FB_FAMILY_IPV6, addr, 32 + e[i].len);
		if (src) {
			/* Random bits below the prefix, and a random interface id. */
			__u32 host = e[i].len < 32 ? inside & ~(~0U << (32 - e[i].len)) : 0;

			for (b = 0; b < 4; b++)
				addr[4 + b] |= (a | host) >> (24 - 8 * b);
			for (b = 0; b < 8; b++)
				addr[8 + b] = iid >> (56 - 8 * b);
			memcpy(src[i], addr, 16);
		}
	}
	free(e);
}

/* WHAT: a host count, or 0 for the prefix list. */
static size_t what_n(const char *what)
{
	return strcmp(what, "pfx") ? strtoul(what, NULL, 0) : 0;
}

/* The rules of WHAT as LPM keys (count in *n). */
static struct fb_lpm_key *rules_of(const char *what, size_t *n)
{
	size_t hosts = what_n(what), i;
	struct fb_lpm_key *k;

	*n = hosts ? hosts : PFX_N;
	k = malloc(*n * sizeof(*k));
	if (!k)
		exit(1);
	if (!hosts) {
		pfx_list(k, NULL);
		return k;
	}
	for (i = 0; i < hosts; i++) {
		__u8 a[16];

		scale_host((__u32)i, a);
		fb_lpm_key_set(&k[i], FB_FAMILY_IPV6, a, 128);
	}
	return k;
}

int scale_fill(const char *name, const char *what)
{
	struct fb_prefixes none = { 0 };
	struct fb_lpm_key *lk;
	struct fb_expand_budget budget;
	struct fb_expansion ex;
	struct fb_key *keys;
	struct fb_store f;
	size_t n, i, bad;
	char err[256];
	double t0 = now();
	__u32 nb;
	__u8 k;

	lk = rules_of(what, &n);
	keys = calloc(n, sizeof(*keys));
	if (!keys || fb_store_open(name, &f) || fb_store_lock(&f))
		return 1;
	for (i = 0; i < n; i++) {
		struct fb_key *x = &keys[i];

		memcpy(x->saddr, lk[i].addr, 16);
		x->w[4] =
			fb_key_word_tail(0, 0, 0, FB_KIND_SRC, lk[i].prefixlen - 8, FB_FAMILY_IPV6);
	}
	free(lk);
	/* As `load --replace` does: lengths chosen by cost, the filter
	 * sized for the rules at its rate per packet. */
	budget.bytes = fb_replace_bytes;
	budget.ctx = f.hdr;
	if (fb_prefixes_expand(&keys, &n, &none, &budget, &ex, err, sizeof(err))) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	{
		struct fb_prefixes px = { 0 };
		unsigned probes;

		fb_rules_merge_lengths(&px, keys, n, &bad);
		probes = fb_probes_per_packet(FB_KINDF(FB_KIND_SRC), &px);
		if (fb_size_blocked((double)n, fb_probe_target(f.hdr->fp_ppb / 1e9, probes), &nb,
				    &k))
			return 1;
	}
	if (fb_rules_replace(&f, fb_whole_chunks(nb), k, keys, n, &bad)) {
		fprintf(stderr, "bench: filling %s failed\n", name);
		return 1;
	}
	printf("%zu %zu %.2f %u\n", n, f.map_bytes, now() - t0, f.hdr->k);
	fb_store_unlock(&f);
	fb_store_close(&f);
	free(keys);
	return 0;
}

/* The blocks of flowbloom's filter for WHAT's hosts, as `create
 * --capacity N --fp-rate 0.01` makes it (the line receiver's array). */
static int filter_blocks(const char *what, size_t *n)
{
	struct fb_create_req r = { .type = -1,
				   .have_capacity = true,
				   .have_fp_rate = true,
				   .capacity = what_n(what),
				   .fp_rate = 0.01 };
	struct fb_create_opts o;
	char why[256];

	if (fb_create_opts_make(&r, &o, why, sizeof(why))) {
		fprintf(stderr, "bench: %s\n", why);
		return -1;
	}
	*n = o.nblocks;
	return 0;
}

int scale_rx(const char *dev, const char *kind, const char *what)
{
	int exact = !strcmp(kind, "exact"), floor = !strcmp(kind, "floor"),
	    line = floor || !strcmp(kind, "line"), ncpu = libbpf_num_possible_cpus(), fd;
	unsigned ifi = if_nametoindex(dev);
	struct bench_bpf *b = bench_bpf__open();
	struct fb_lpm_key *lk = NULL;
	struct bpf_program *prog;
	double t0 = now();
	size_t n, i;

	if (!ifi || !b)
		return 1;
	if ((exact || line) && !what_n(what)) {
		fprintf(stderr, "bench: %s receiver holds hosts, not prefixes\n", kind);
		return 1;
	}
	if (line ? filter_blocks(what, &n) : !(lk = rules_of(what, &n)))
		return 1;
	bpf_map__set_max_entries(b->maps.exact6, exact ? n : 1);
	bpf_map__set_max_entries(b->maps.lpm, exact || line ? 1 : n);
	bpf_map__set_max_entries(b->maps.dram, line ? n : 1);
	b->rodata->cfg_dram_lines = line ? n : 1;
	bpf_map__set_max_entries(b->maps.kbloom, 1);
	bpf_map__set_max_entries(b->maps.exact, 1);
	if (bench_bpf__load(b))
		return 1;
	fd = bpf_map__fd(exact ? b->maps.exact6 : line ? b->maps.dram : b->maps.lpm);
	prog = exact   ? b->progs.xdp_exact6
	       : floor ? b->progs.xdp_probe_floor
	       : line  ? b->progs.xdp_line6
		       : b->progs.xdp_lpm;
	if (floor) {
		/* The keyed probe alone: flowbloom's filter `scale` (its IPv6
		 * source descriptor and its blocks, copied). */
		struct fb_store f;

		if (fb_store_open("scale", &f) || f.hdr->nblocks != n ||
		    floor_fill(b, &f, (__u32)n, 1, FB_KIND_SRC)) {
			fprintf(stderr, "bench: no filter 'scale' of %zu blocks to copy\n", n);
			return 1;
		}
		fb_store_close(&f);
	} else if (exact) {
		/* Batches: one syscall per 65,536 addresses. */
		enum { BATCH = 65536 };
		__u64 *zero = calloc((size_t)BATCH * ncpu, sizeof(__u64));
		__u8(*keys)[16] = malloc(BATCH * 16);

		for (i = 0; i < n; i += BATCH) {
			__u32 c = n - i < BATCH ? n - i : BATCH, j;

			for (j = 0; j < c; j++)
				memcpy(keys[j], lk[i + j].addr, 16);
			if (bpf_map_update_batch(fd, keys, zero, &c, NULL)) {
				fprintf(stderr, "bench: hash batch: %s\n", strerror(errno));
				return 1;
			}
		}
		free(zero);
		free(keys);
	} else if (!line) {
		__u32 one = 1;

		for (i = 0; i < n; i++)
			if (bpf_map_update_elem(fd, &lk[i], &one, BPF_ANY)) {
				fprintf(stderr, "bench: lpm update: %s\n", strerror(errno));
				return 1;
			}
	}
	free(lk);
	/* A netlink attachment holds its own reference: it stays after exit. */
	if (bpf_xdp_attach(ifi, bpf_program__fd(prog), XDP_FLAGS_DRV_MODE, NULL)) {
		fprintf(stderr, "bench scale-rx: attach to %s: %s\n", dev, strerror(errno));
		return 1;
	}
	printf("%zu %llu %.2f\n", n, fb_map_memlock(fd), now() - t0);
	bench_bpf__destroy(b);
	return 0;
}

/* For bench gen: load the generator for WHAT into b (opened, not loaded). */
void scale_gen_setup(struct bench_bpf *b, const char *what)
{
	size_t hosts = what_n(what);

	b->rodata->cfg_scale_n = (__u32)hosts;
	b->rodata->cfg_nsrc = hosts ? 1 : PFX_N;
	bpf_map__set_max_entries(b->maps.scale_srcs, hosts ? 1 : PFX_N);
}

int scale_gen_fill(struct bench_bpf *b, const char *what)
{
	__u8(*src)[16];
	__u32 i;

	if (what_n(what))
		return 0;
	src = malloc((size_t)PFX_N * 16);
	if (!src)
		return -1;
	pfx_list(NULL, src);
	for (i = 0; i < PFX_N; i++)
		if (bpf_map_update_elem(bpf_map__fd(b->maps.scale_srcs), &i, src[i], BPF_ANY))
			return -1;
	free(src);
	return 0;
}
