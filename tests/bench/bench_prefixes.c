// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark 6: prefix lists in flowbloom (expanded as `load` does) against an
 * LPM trie.
 */
#include "benchmark.h"
#include "store/memuse.h"
#include <arpa/inet.h>

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
		if (bpf_map_update_elem(bpf_map__fd(lb[0]->maps.lpm), &lk, &one, BPF_ANY)) {
			fprintf(stderr, "bench: lpm update: %s\n", strerror(errno));
			exit(1);
		}
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
	if (fb_prefixes_expand(&keys, &n, &none, NULL, &ex, err, sizeof(err))) {
		fprintf(stderr, "bench: %s\n", err);
		exit(1);
	}
	fb_size_blocked(n, fb_probe_target(0.001, FB_MAX_LENGTHS), &nb, &k);
	{
		struct fb_create_opts o = { .nblocks = nb,
					    .k = k,
					    .layout = FB_LAYOUT_BLOCKED,
					    .hash = FB_HASH_NHK,
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
	       ex.after, (fb_store_prefixes(&pf))->list[0].n, pf.map_bytes, t_fb * 1e3);
	printf("  LPM trie: %zu prefixes, %llu bytes (memlock), loaded in %.1f ms\n", ex.before,
	       fb_map_memlock(bpf_map__fd(lb[0]->maps.lpm)), t_lpm * 1e3);
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
					    .hash = FB_HASH_NHK,
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

/* 9. Prefix-list table: N entries shaped like Spamhaus DROP (as
 * docs/performance.md describes them: N/10 prefixes /11-/24 with DROP's
 * length weights, the rest single /32 addresses; all prefixes up to 1,500),
 * random IPv4. flowbloom gets the list through the CLI (`create --capacity N
 * --fp-rate 0.001`, then `load --replace FILE`, which expands lengths and
 * re-sizes the filter for its per-packet rate), and runs as the real program
 * on the real filter. Against: an LPM trie of the original prefixes, and a
 * hash map probed once per distinct length (longest first). Each packet
 * carries the next of 65,536 probe addresses (xdp_addr writes it, then
 * tail-calls the program measured): hits are random addresses inside random
 * entries, misses random addresses no entry covers. */
static const double drop_w[14] = { 0.2, 0.3, 0.5, 1, 1, 4, 2, 4, 6, 8, 8, 20, 10, 35 };

static __u32 mask4(int len)
{
	return len ? htonl(~0U << (32 - len)) : 0;
}

void gen_list(struct pentry *e, size_t n, uint64_t *seed)
{
	size_t i, np = n <= 1500 ? n : n / 10;
	double tot = 0;
	int l;

	for (l = 0; l < 14; l++)
		tot += drop_w[l];
	for (i = 0; i < n; i++) {
		__u32 a = (__u32)test_rand64(seed);
		int len = 32;

		if (i < np) {
			double r = (double)(test_rand64(seed) >> 11) / (1ULL << 53) * tot;

			for (l = 0; l < 13 && r >= drop_w[l]; l++)
				r -= drop_w[l];
			len = 11 + l;
		}
		e[i].len = len;
		e[i].addr = a & mask4(len);
	}
}

/* Run a CLI command, its output indented; seconds it took (< 0: failed). */
static double cli(const char *cmd)
{
	char line[512];
	double t0 = now();
	FILE *p = popen(cmd, "r");

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		printf("    | %s", line);
	if (pclose(p))
		return -1;
	return now() - t0;
}

static double pfx_measure(const char *what, int drv_fd, int jmp_fd, int prog_fd)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(jmp_fd, &zero, &prog_fd, BPF_ANY)) {
		fprintf(stderr, "bench: prog array: %s\n", strerror(errno));
		exit(1);
	}
	return measure(what, drv_fd, 0)->kern;
}

static void pfx_run(size_t n, const char *fb_bin)
{
	struct pentry *e = malloc(n * sizeof(*e));
	__u32 *hit = malloc(4 << 16), *miss = malloc(4 << 16);
	uint64_t seed = 0x5eed + n;
	int lens[33] = { 0 }, nlen = 0, l, m;
	struct bench_bpf *b;
	struct flowbloom_bpf *skel;
	struct fb_store f;
	char path[128], cmd[512], name[32], what[64];
	double t_lpm, t_hash, t_create, t_load, ns[4][2], fbdrop[2];
	size_t i;
	FILE *out;

	gen_list(e, n, &seed);
	for (i = 0; i < n; i++)
		lens[e[i].len] = 1;
	printf("\n  %zu entries (%zu prefixes /11-/24, the rest /32)\n", n, n <= 1500 ? n : n / 10);
	fflush(stdout);
	/* flowbloom, through the CLI. */
	snprintf(path, sizeof(path), "/tmp/fbbench-pfx-%d.txt", getpid());
	snprintf(name, sizeof(name), "pfx%zu", n);
	out = fopen(path, "w");
	for (i = 0; i < n; i++) {
		__u32 a = ntohl(e[i].addr);

		fprintf(out, "%u.%u.%u.%u/%u\n", a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255,
			e[i].len);
	}
	if (fclose(out))
		exit(1);
	snprintf(cmd, sizeof(cmd), "%s create %s --capacity %zu --fp-rate 0.001 2>&1", fb_bin, name,
		 n);
	t_create = cli(cmd);
	snprintf(cmd, sizeof(cmd), "%s load %s %s --replace 2>&1", fb_bin, name, path);
	t_load = cli(cmd);
	unlink(path);
	if (t_create < 0 || t_load < 0 || fb_store_open(name, &f)) {
		fprintf(stderr, "bench: flowbloom create/load of %zu prefixes failed\n", n);
		exit(1);
	}
	{
		struct fb_load_opts lo = { .private_stats = true, .action = FB_ACTION_DROP };

		skel = fb_load(&f, &lo);
		if (!skel)
			exit(1);
	}
	/* The baselines: one object holds the trie, the hash map, the probe
	 * addresses and the tail-call slot. */
	b = bench_bpf__open();
	if (!b)
		exit(1);
	bpf_map__set_max_entries(b->maps.lpm4, n);
	bpf_map__set_max_entries(b->maps.hlen, n);
	for (l = 32; l >= 0; l--)
		if (lens[l])
			b->rodata->cfg_lens[nlen++] = l;
	b->rodata->cfg_nlens = nlen;
	if (bench_bpf__load(b))
		exit(1);
	t_lpm = now();
	for (i = 0; i < n; i++) {
		struct {
			__u32 plen, addr;
		} lk = { e[i].len, e[i].addr };
		__u32 one = 1;

		if (bpf_map_update_elem(bpf_map__fd(b->maps.lpm4), &lk, &one, BPF_ANY)) {
			fprintf(stderr, "bench: lpm update: %s\n", strerror(errno));
			exit(1);
		}
	}
	t_lpm = now() - t_lpm;
	t_hash = now();
	{
		size_t chunk = 1 << 16;
		__u64 *keys = malloc(chunk * 8);
		__u32 *vals = malloc(chunk * 4), cnt;

		for (i = 0; i < n; i += chunk) {
			LIBBPF_OPTS(bpf_map_batch_opts, bo);
			size_t j;

			cnt = n - i < chunk ? n - i : chunk;
			for (j = 0; j < cnt; j++) {
				keys[j] = e[i + j].addr | (__u64)e[i + j].len << 32;
				vals[j] = 1;
			}
			if (bpf_map_update_batch(bpf_map__fd(b->maps.hlen), keys, vals, &cnt,
						 &bo)) {
				fprintf(stderr, "bench: hash batch update: %s\n", strerror(errno));
				exit(1);
			}
		}
		free(keys);
		free(vals);
	}
	t_hash = now() - t_hash;
	/* Probe addresses. */
	for (i = 0; i < 1 << 16; i++) {
		const struct pentry *x = &e[test_rand64(&seed) % n];

		hit[i] = x->addr | ((__u32)test_rand64(&seed) & ~mask4(x->len));
		for (;;) {
			struct {
				__u32 plen, addr;
			} lk = { 32, (__u32)test_rand64(&seed) };
			__u32 v;

			if (bpf_map_lookup_elem(bpf_map__fd(b->maps.lpm4), &lk, &v)) {
				miss[i] = lk.addr;
				break;
			}
		}
	}
	for (m = 0; m < 2; m++) {
		int afd = bpf_map__fd(b->maps.addrs), jfd = bpf_map__fd(b->maps.jmp);
		int drv = bpf_program__fd(b->progs.xdp_addr);
		struct fb_stats st0, st1;
		const char *hm = m ? "miss" : "hit";

		for (i = 0; i < 1 << 16; i++) {
			__u32 k = i;

			bpf_map_update_elem(afd, &k, m ? &miss[i] : &hit[i], BPF_ANY);
		}
		snprintf(what, sizeof(what), "%zu: parse only %s", n, hm);
		ns[0][m] = pfx_measure(what, drv, jfd, bpf_program__fd(b->progs.xdp_parse));
		fb_stats_read_fd(bpf_map__fd(skel->maps.fb_stats), "bench", &st0);
		snprintf(what, sizeof(what), "%zu: flowbloom (%s) %s", n, hash_name(f.hdr->hash),
			 hm);
		ns[1][m] = pfx_measure(what, drv, jfd, bpf_program__fd(skel->progs.flowbloom));
		fb_stats_read_fd(bpf_map__fd(skel->maps.fb_stats), "bench", &st1);
		fbdrop[m] =
			(double)(st1.c[FB_STAT_DROPPED].packets - st0.c[FB_STAT_DROPPED].packets) /
			(double)(st1.c[FB_STAT_SEEN].packets - st0.c[FB_STAT_SEEN].packets);
		snprintf(what, sizeof(what), "%zu: LPM trie %s", n, hm);
		ns[2][m] = pfx_measure(what, drv, jfd, bpf_program__fd(b->progs.xdp_lpm4));
		snprintf(what, sizeof(what), "%zu: hash map x %d lengths %s", n, nlen, hm);
		ns[3][m] = pfx_measure(what, drv, jfd, bpf_program__fd(b->progs.xdp_hashlen));
	}
	{
		const struct fb_prefixes *px = fb_store_prefixes(&f);

		printf("    flowbloom dropped %.4f of hit packets, %.2e of misses (false "
		       "positives); %u lengths (IPv4 src), k=%u, %u blocks\n",
		       fbdrop[0], fbdrop[1], px->list[FB_PFX_SRC4].n, f.hdr->k, f.hdr->nblocks);
	}
	printf("    memory: flowbloom %zu bytes (filter map), LPM trie %llu, hash map %llu "
	       "(memlock)\n",
	       f.map_bytes, fb_map_memlock(bpf_map__fd(b->maps.lpm4)),
	       fb_map_memlock(bpf_map__fd(b->maps.hlen)));
	printf("    load: flowbloom `create` %.2f s + `load --replace` %.2f s (CLI, whole "
	       "process); LPM trie %.2f s (a syscall per prefix); hash map %.2f s (batches of "
	       "65536)\n",
	       t_create, t_load, t_lpm, t_hash);
	for (m = 0; m < 2; m++) {
		snprintf(what, sizeof(what), "%zu entries, %s: LPM trie / flowbloom (%s)", n,
			 m ? "miss" : "hit", hash_name(f.hdr->hash));
		target(what, ns[2][m] / ns[1][m], 1.0, false);
	}
	fflush(stdout);
	flowbloom_bpf__destroy(skel);
	bench_bpf__destroy(b);
	fb_store_close(&f);
	snprintf(cmd, sizeof(cmd), "%s destroy %s 2>&1", fb_bin, name);
	cli(cmd);
	free(e);
	free(hit);
	free(miss);
}

void bench_prefix_table(void)
{
	const char *env = getenv("BENCH_PFX_SIZES");
	const char *fb_bin = getenv("FLOWBLOOM_BIN") ?: "build/flowbloom";
	char *s = strdup(env && *env ? env : "1000,1500,10000,100000,1000000,10000000"), *tok;

	printf("\n9. prefix lists, DROP-shaped, IPv4 source (ns per packet; every row includes "
	       "the probe\n    driver's lookup and tail call; ratios of kernel ns: hundreds of ns, "
	       "and the wall\n    clock counts other helpers' time slices; target: at least as "
	       "fast as the trie at every size)\n");
	for (tok = strtok(s, ","); tok; tok = strtok(NULL, ","))
		pfx_run(strtoul(tok, NULL, 0), fb_bin);
	free(s);
}
