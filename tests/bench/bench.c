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
 *     The exact hash map also at 10M flows, against a filter sized for them
 *     (and its program cut after its head and after its probes).
 *  2. Fill rate: flows/s through the mmap, against a syscall per flow.
 *  3. Memory: fast-path bytes per flow against the hash map's.
 *  4. Targets: ratios of the above (bench_targets.c).
 *  `bench types`: the filter types side by side (bench_types.c);
 *  `bench prefix`, `bench pfxtable`: prefix lists (bench_prefixes.c);
 *  `bench verifier`, `bench shapes`: the verifier's work per configuration; rule shapes;
 *  `bench srcs|count|gen`: the live head-to-head's tools (bench_gen.c,
 *  driven by bench.sh).
 *
 * Not a test: it prints figures and which targets they meet.
 */
#define _GNU_SOURCE
#include "benchmark.h"
#include "store/memuse.h"
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>

unsigned repeat = 2000000;
static bool quick; /* `bench quick`: parse and blocked 1 MiB (v4, v6) only */
static int rounds = 3;

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct row rows[256];
static int nrows;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median over rounds of ns/packet, kernel-reported and wall clock. */
struct row *measure(const char *name, int prog_fd, int v6)
{
	struct fb_key k;
	uint8_t frame[128];
	double kern[8], wall[8];
	struct row *r = &rows[nrows < 255 ? nrows++ : nrows];
	__u32 t_ret = 0;
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
		t_ret = t.retval;
	}
	qsort(kern, rounds, sizeof(double), cmp_double);
	qsort(wall, rounds, sizeof(double), cmp_double);
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->kern = kern[rounds / 2];
	r->wall = wall[rounds / 2];
	r->verdict = (int)t_ret;
	printf("  %-44s %8.1f %8.1f\n", r->name, r->kern, r->wall);
	fflush(stdout);
	return r;
}

static struct row none = { "(not measured)", 0, 0, -1 };

/* The row measured under this name; a row of zeros named "(not
 * measured)" if none was. */
struct row *bench_row(const char *name)
{
	for (int i = 0; i < nrows; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return &none;
}

/* The first row whose name starts with prefix and holds infix. */
struct row *bench_row_like(const char *prefix, const char *infix)
{
	for (int i = 0; i < nrows; i++)
		if (!strncmp(rows[i].name, prefix, strlen(prefix)) && strstr(rows[i].name, infix))
			return &rows[i];
	return &none;
}

/* `flowbloom create NAME ARGS` (the CLI under test: its defaults, e.g.
 * the hash), then the filter opened. */
int make_filter_cli(const char *name, const char *args, struct fb_store *f)
{
	const char *fb = getenv("FLOWBLOOM_BIN") ?: "build/flowbloom";
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s create %s %s >/dev/null", fb, name, args);
	if (system(cmd) || fb_store_open(name, f)) {
		fprintf(stderr, "bench: cannot create filter %s (%s)\n", name, args);
		return -1;
	}
	return 0;
}

/* A filter of `bits` bits holding flows 0..n-1 (IPv4 and IPv6 forms),
 * created by the CLI with `extra` options (e.g. "--hash nh"). */
static int make_filter_hash(const char *name, __u64 bits, int k, int layout, const char *extra,
			    __u32 n, struct fb_store *f)
{
	struct fb_key key;
	char args[256];
	__u32 i;

	snprintf(args, sizeof(args), "--bits %llu --hashes %d --layout %s %s",
		 (unsigned long long)bits, k, layout == FB_LAYOUT_CLASSIC ? "classic" : "blocked",
		 extra);
	if (make_filter_cli(name, args, f))
		return -1;
	for (i = 0; i < n; i++) {
		fb_bench_flow(i, 0, &key);
		fb_bits_set(f, &key);
		fb_bench_flow(i, 1, &key);
		fb_bits_set(f, &key);
	}
	f->hdr->nflows = 2ULL * n;
	f->hdr->kinds = FB_KINDF(FB_KIND_FLOW);
	return fb_head_sync(f, true);
}

int make_filter(const char *name, __u64 bits, int k, int layout, __u32 n, struct fb_store *f)
{
	return make_filter_hash(name, bits, k, layout, "", n, f);
}

const char *hash_name(int h)
{
	return h >= 0 && h < 5 && fb_hash_names[h] ? fb_hash_names[h] : "?";
}

void bench_flowbloom(const char *label, struct fb_store *f, __u32 n, int v6)
{
	struct row *r;
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
		r = measure(name, bpf_program__fd(skel->progs.flowbloom), v6);
		if (!miss) /* a miss may be a false positive */
			expect_verdict(r, XDP_DROP);
		flowbloom_bpf__destroy(skel);
	}
}

/* Baseline programs from bench.bpf.c. With share, the kernel Bloom map and
 * the hash map are share's (filled once); else sized for kb_entries (k=7)
 * and hash_entries. */
struct bench_bpf *load_bench(__u32 bench, int v6, __u32 kb_entries, __u32 hash_entries,
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

static void baselines(int v6, struct bench_bpf **small, struct bench_bpf **large)
{
	struct bench_bpf *b;
	struct row *r;
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
		r = measure(name, bpf_program__fd(b->progs.xdp_kbloom), v6);
		if (!miss)
			expect_verdict(r, XDP_DROP);
		b = large[miss];
		snprintf(name, sizeof(name), "kernel bloom 256 MiB %s %s", v6 ? "v6" : "v4",
			 miss ? "miss" : "hit");
		r = measure(name, bpf_program__fd(b->progs.xdp_kbloom), v6);
		if (!miss)
			expect_verdict(r, XDP_DROP);
		snprintf(name, sizeof(name), "exact hash map 1M %s %s", v6 ? "v6" : "v4",
			 miss ? "miss" : "hit");
		b = small[miss];
		r = measure(name, bpf_program__fd(b->progs.xdp_exact), v6);
		expect_verdict(r, miss ? XDP_PASS : XDP_DROP);
	}
}

/* n entries into map fd, keys and values of ksz and vsz bytes, 65,536 a
 * system call; what names the map in the error. */
static int update_batched(int fd, const void *keys, size_t ksz, const void *vals, size_t vsz,
			  __u32 n, const char *what)
{
	__u32 i, cnt;

	for (i = 0; i < n; i += cnt) {
		LIBBPF_OPTS(bpf_map_batch_opts, bo);

		cnt = n - i < 65536 ? n - i : 65536;
		if (bpf_map_update_batch(fd, (const char *)keys + (size_t)i * ksz,
					 (const char *)vals + (size_t)i * vsz, &cnt, &bo)) {
			fprintf(stderr, "bench: %s batch update: %s\n", what, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* xdp_probe_floor's data: the filter's one descriptor of family fam
 * (0 IPv4, 1 IPv6), of kind kind, and its nb blocks, one per line of dram. */
int floor_fill(struct bench_bpf *b, const struct fb_store *f, __u32 nb, int fam, int kind)
{
	const struct fb_head *head = fb_store_head(f);
	__u32 zero = 0, i, *idx = malloc((size_t)nb * sizeof(*idx));
	int err;

	if (!idx || head->hdr.nprobe[fam] != 1 || head->probe[fam][0].kind != kind) {
		fprintf(stderr, "bench: the filter has not one descriptor of that shape\n");
		free(idx);
		return -1;
	}
	if (bpf_map_update_elem(bpf_map__fd(b->maps.floor_probe), &zero, &head->probe[fam][0], 0)) {
		free(idx);
		return -1;
	}
	for (i = 0; i < nb; i++)
		idx[i] = i;
	err = update_batched(bpf_map__fd(b->maps.dram), idx, sizeof(*idx),
			     &f->blocks[FB_HDR_BLOCKS], FB_BLOCK_BYTES, nb, "dram");
	free(idx);
	return err;
}

/* The exact hash map at 10M flows (IPv4) against a filter sized for them
 * (blocked, 1 %), hits over the first 2^23 flows. */
static void bench_hash10m(void)
{
	const __u32 n = 10000000, mask = (1U << 23) - 1;
	struct bench_bpf *fill, *b, *floor[2];
	struct fb_store f;
	struct fb_key *keys = malloc((size_t)n * sizeof(*keys));
	__u32 *vals = calloc(n, sizeof(*vals)), i, nb, k;
	char name[64];
	int miss;

	fill = load_bench(0, 0, 1, n, NULL);
	for (i = 0; i < n; i++)
		fb_bench_flow(i, 0, &keys[i]);
	if (update_batched(bpf_map__fd(fill->maps.exact), keys, sizeof(*keys), vals, sizeof(*vals),
			   n, "hash map"))
		exit(1);
	free(vals);
	for (miss = 0; miss < 2; miss++) {
		b = load_bench(miss ? FB_BENCH_MISS : mask, 0, 0, 0, fill);
		snprintf(name, sizeof(name), "exact hash map 10M v4 %s", miss ? "miss" : "hit");
		expect_verdict(measure(name, bpf_program__fd(b->progs.xdp_exact), 0),
			       miss ? XDP_PASS : XDP_DROP);
		bench_bpf__destroy(b);
	}
	bench_bpf__destroy(fill);
	if (make_filter_cli("b10m", "--capacity 10000000 --fp-rate 0.01", &f))
		exit(1);
	nb = f.hdr->nblocks;
	k = f.hdr->k;
	fb_bits_set_many(&f, keys, n);
	f.hdr->nflows = n;
	f.hdr->kinds = FB_KINDF(FB_KIND_FLOW);
	fb_head_sync(&f, true);
	free(keys);
	printf("  (blocked 10M/1%%: `create --capacity 10000000 --fp-rate 0.01`: %.1f MiB, k=%u, "
	       "%s; hits over the first 2^23 flows)\n",
	       (double)nb * FB_BLOCK_BYTES / MIB, k, hash_name(f.hdr->hash));
	bench_flowbloom("blocked 10M/1%", &f, mask + 1, 0);
	/* Where its time goes: the same program cut after its head, then
	 * after its probes (the stages object, include/flowbloom/bench.h). */
	for (miss = 0; miss < 2; miss++)
		for (i = FB_BENCH_STAGE_HEAD; i <= FB_BENCH_STAGE_PROBE; i++) {
			snprintf(name, sizeof(name), "  cut after its %s v4 %s",
				 i == FB_BENCH_STAGE_HEAD ? "head" : "probes",
				 miss ? "miss" : "hit");
			bench_stage_measure(name, &f, (int)i, miss ? FB_BENCH_MISS : mask);
		}
	/* The floors at that size, packets independent: parse and one
	 * random line of an array as large as the filter's bits (xdp_dram);
	 * and the probe alone over a copy of the filter's bits
	 * (xdp_probe_floor, bench.bpf.c). */
	for (miss = 0; miss < 2; miss++) {
		b = bench_bpf__open();
		if (!b)
			exit(1);
		bpf_map__set_max_entries(b->maps.dram, nb);
		b->rodata->cfg_dram_lines = nb;
		b->rodata->cfg_dram_chase = 0;
		b->rodata->cfg_bench = miss ? FB_BENCH_MISS : mask;
		b->rodata->cfg_floor_base = fb_chunk_slot(f.hdr->gen, 0);
		bpf_map__reuse_fd(b->maps.floor_chunks, f.outer_fd);
		if (miss) {
			bpf_map__reuse_fd(b->maps.dram, bpf_map__fd(floor[0]->maps.dram));
			bpf_map__reuse_fd(b->maps.floor_probe,
					  bpf_map__fd(floor[0]->maps.floor_probe));
		}
		if (bench_bpf__load(b)) {
			fprintf(stderr, "bench: cannot load the 10M floors\n");
			exit(1);
		}
		floor[miss] = b;
	}
	if (floor_fill(floor[0], &f, nb, 0, FB_KIND_FLOW))
		exit(1);
	snprintf(name, sizeof(name), "parse + one line of a %.1f MiB array v4",
		 (double)nb * FB_BLOCK_BYTES / MIB);
	bench_floor10m = measure(name, bpf_program__fd(floor[0]->progs.xdp_dram), 0);
	for (i = 0; i < 2; i++)
		for (miss = 0; miss < 2; miss++) {
			struct bpf_program *prog = i ? floor[miss]->progs.xdp_probe_floor_chunks
						     : floor[miss]->progs.xdp_probe_floor;
			struct row *r;
			double held;

			floor[miss]->bss->floor_hits = 0;
			if (i)
				snprintf(name, sizeof(name), "  over its own chunks v4 %s",
					 miss ? "miss" : "hit");
			else
				snprintf(name, sizeof(name), "probe floor %.1f MiB v4 %s",
					 (double)nb * FB_BLOCK_BYTES / MIB, miss ? "miss" : "hit");
			r = measure(name, bpf_program__fd(prog), 0);
			bench_probe_floor[i * 2 + miss] = r;
			held = 100.0 * floor[miss]->bss->floor_hits / ((double)repeat * rounds);
			printf("    (held %.2f %% of the keys%s)\n", held,
			       !miss && held < 100
				       ? ": NOT every key the filter holds, not its probe"
				       : "");
		}
	/* The chunk floors hold the filter's maps: gone before the filter. */
	bench_bpf__destroy(floor[1]);
	bench_bpf__destroy(floor[0]);
	fb_store_close(&f);
	fb_store_destroy("b10m");
}

void target(const char *what, double got, double limit, bool at_most)
{
	bool ok = at_most ? got <= limit : got >= limit;

	printf("  %-62s %6.2f (%s %.2f) %s\n", what, got, at_most ? "<=" : ">=", limit,
	       ok ? "met" : "MISSED");
}

/* This run's filter root (FLOWBLOOM_ROOT), removed at exit if empty:
 * each part destroys its own filters. */
static char root[64];

static void remove_root(void)
{
	rmdir(root);
}

/* Remove the tree under directory fd (then closed) with raw syscalls
 * only: it runs in a signal handler. */
static void remove_tree(int fd)
{
	char buf[4096];
	long n;

	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 {
				__u64 ino;
				__s64 off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			int sub;

			off += d->reclen;
			if (!strcmp(d->name, ".") || !strcmp(d->name, ".."))
				continue;
			if (d->type == DT_DIR &&
			    (sub = openat(fd, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) >= 0)
				remove_tree(sub);
			unlinkat(fd, d->name, d->type == DT_DIR ? AT_REMOVEDIR : 0);
		}
	}
	close(fd);
}

/* Killed (^C, `bench quick | head`): its root goes, as bench.sh's does. */
static void on_signal(int sig)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

	if (fd >= 0)
		remove_tree(fd);
	rmdir(root);
	_exit(128 + sig);
}

/* FBBENCH_ROOT (bench.sh sets it, to clean up after a killed run), else a
 * directory of this process's own, removed if the run is killed. */
static void bench_root(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	const char *r = getenv("FBBENCH_ROOT");

	if (r && *r) {
		snprintf(root, sizeof(root), "%s", r);
		return;
	}
	snprintf(root, sizeof(root), "/sys/fs/bpf/fbbench_%d", getpid());
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
}

static void bench_fill_part(void)
{
	double plain, counting;

	bench_fill(&plain, &counting);
}

/* The parts run by name (bench.sh's BENCH words), each on its own. */
static const struct {
	const char *name;
	void (*fn)(void);
} parts[] = {
	{ "verifier", bench_verifier }, { "pfxtable", bench_prefix_table },
	{ "prefix", bench_prefixes },	{ "types", bench_types },
	{ "fill", bench_fill_part },	{ "capture", bench_capture },
	{ "compress", bench_compress }, { "ttl", bench_ttl },
	{ "shapes", bench_shapes },	{ "hash10m", bench_hash10m },
};

int main(int argc, char **argv)
{
	struct fb_store bs, bl, cs, cl, nhs, nhl;
	struct bench_bpf *ksmall[2][2], *klarge[2][2], *fill_s, *fill_l;
	double kb_fill = 0, hash_fill = 0, plain = 0, counting = 0;
	unsigned long long hash_mem = 0, kb_mem = 0;
	int v6, miss;

	/* libbpf's lines (e.g. about the run config section libxdp reads) only
	 * with -v, as in the CLI: the figures are the output. */
	fb_libbpf_logging(false);
	atexit(remove_root);
	if (argc > 1 && !strcmp(argv[1], "quick")) {
		struct fb_store q;
		struct bench_bpf *b;

		quick = true;
		bench_root();
		setenv("FLOWBLOOM_ROOT", root, 1);
		if (make_filter("quick", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, SMALL_FLOWS, &q))
			return 1;
		b = load_bench(SMALL_FLOWS - 1, 0, 1, 1, NULL);
		for (v6 = 0; v6 < 2; v6++) {
			measure(v6 ? "parse only v6" : "parse only v4",
				bpf_program__fd(b->progs.xdp_parse), v6);
			bench_flowbloom("blocked 1 MiB", &q, SMALL_FLOWS, v6);
		}
		/* Other hashes, each in a filter of its own bits. */
		for (v6 = 13; v6 <= 24; v6 += 11) {
			char args[32], label[40];
			struct fb_store o;

			snprintf(args, sizeof(args), "--hash siphash%d", v6);
			snprintf(label, sizeof(label), "blocked 1 MiB siphash%d", v6);
			if (make_filter_hash("quickh", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, args,
					     SMALL_FLOWS, &o))
				return 1;
			bench_flowbloom(label, &o, SMALL_FLOWS, 0);
			fb_store_close(&o);
			fb_store_destroy("quickh");
		}
		bench_monitor(&q, SMALL_FLOWS);
		bench_bpf__destroy(b);
		fb_store_close(&q);
		fb_store_destroy("quick");
		return 0;
	}
	if (bench_tool(argc, argv, &v6))
		return v6;
	for (size_t i = 0; argc > 1 && i < sizeof(parts) / sizeof(parts[0]); i++)
		if (!strcmp(argv[1], parts[i].name)) {
			bench_root();
			setenv("FLOWBLOOM_ROOT", root, 1);
			parts[i].fn();
			return 0;
		}
	/* Anything else must be the packets per run: a mistyped part would
	 * otherwise start the whole benchmark with a repeat of 0. */
	if (argc > 1) {
		char *end;
		unsigned long r = strtoul(argv[1], &end, 10);

		if (*end || !r || r > 1000000000UL || argv[1][0] < '0' || argv[1][0] > '9') {
			fprintf(stderr,
				"bench: unknown part or repeat count '%s'\n"
				"usage: bench [REPEAT | quick | PART]\nparts:",
				argv[1]);
			for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
				fprintf(stderr, " %s", parts[i].name);
			fprintf(stderr, "\n");
			return 2;
		}
		repeat = (unsigned)r;
	}
	bench_root();
	setenv("FLOWBLOOM_ROOT", root, 1);
	fb_libbpf_logging(false);

	printf("flowbloom benchmark: %u packets per run, median of %d runs, one core\n", repeat,
	       rounds);
	printf("setting up filters and maps...\n");
	fflush(stdout);
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
	/* The exact hash map holds the 1 MiB filters' flows, no more: the
	 * same list, its lookups cycling over the same flows. */
	fill_s = load_bench(0, 0, 800000, 2 * SMALL_FLOWS, NULL);
	fill_l = load_bench(0, 0, 200000000, 1, NULL);
	kb_fill = fill_kbloom(bpf_map__fd(fill_s->maps.kbloom), SMALL_FLOWS);
	fill_kbloom(bpf_map__fd(fill_l->maps.kbloom), LARGE_FLOWS);
	hash_fill = fill_exact(bpf_map__fd(fill_s->maps.exact), SMALL_FLOWS);
	hash_mem = fb_map_memlock(bpf_map__fd(fill_s->maps.exact));
	kb_mem = fb_map_memlock(bpf_map__fd(fill_l->maps.kbloom));
	for (v6 = 0; v6 < 2; v6++)
		for (miss = 0; miss < 2; miss++) {
			ksmall[v6][miss] = load_bench(miss ? FB_BENCH_MISS : SMALL_FLOWS - 1, v6, 0,
						      0, fill_s);
			klarge[v6][miss] = load_bench(miss ? FB_BENCH_MISS : LARGE_FLOWS - 1, v6, 0,
						      0, fill_l);
		}

	printf("\n1. ns per packet (BPF_PROG_TEST_RUN)              kernel     wall\n");
	printf("  (flowbloom filters made by `flowbloom create --bits M --hashes K`: hash %s, the "
	       "CLI's default, unless marked)\n",
	       hash_name(bs.hdr->hash));
	for (v6 = 0; v6 < 2; v6++) {
		struct bench_bpf *s[2] = { ksmall[v6][0], ksmall[v6][1] };
		struct bench_bpf *l[2] = { klarge[v6][0], klarge[v6][1] };

		baselines(v6, s, l);
		bench_flowbloom("blocked 1 MiB", &bs, SMALL_FLOWS, v6);
		bench_flowbloom("classic 1 MiB", &cs, SMALL_FLOWS, v6);
		bench_flowbloom("blocked 256 MiB", &bl, LARGE_FLOWS, v6);
		bench_flowbloom("classic 256 MiB", &cl, LARGE_FLOWS, v6);
	}
	/* Parse plus one DRAM access in BPF map memory: the 256 MiB target's
	 * baseline. */
	{
		struct bench_bpf *d = bench_bpf__open();

		if (!d)
			return 1;
		bpf_map__set_max_entries(d->maps.dram, (256u << 20) / 64);
		d->rodata->cfg_dram_lines = (256u << 20) / 64;
		if (bench_bpf__load(d)) {
			fprintf(stderr, "bench: cannot load the DRAM baseline\n");
			return 1;
		}
		measure("parse + one line of a 256 MiB array v4",
			bpf_program__fd(d->progs.xdp_dram), 0);
		bench_bpf__destroy(d);
	}
	/* The PRF option (allow-lists' default), v4, in cache and in DRAM. */
	if (make_filter_hash("nhsmall", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, "--hash siphash13",
			     SMALL_FLOWS, &nhs) ||
	    make_filter_hash("nhlarge", LARGE_BITS, 8, FB_LAYOUT_BLOCKED, "--hash siphash13",
			     LARGE_FLOWS, &nhl))
		return 1;
	bench_flowbloom("blocked 1 MiB siphash13", &nhs, SMALL_FLOWS, 0);
	bench_flowbloom("blocked 256 MiB siphash13", &nhl, LARGE_FLOWS, 0);
	fb_store_close(&nhs);
	fb_store_close(&nhl);
	fb_store_destroy("nhsmall");
	fb_store_destroy("nhlarge");

	bench_hash10m();

	bench_fill(&plain, &counting);
	printf("  %-44s %12.0f\n", "kernel bloom map, syscall per flow", kb_fill);
	printf("  %-44s %12.0f\n", "exact hash map, syscall per flow", hash_fill);
	bench_targets(hash_mem, kb_mem, plain, counting);
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
