// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The live head-to-head's tools (bench.sh runs them; sections 11, 12):
 *   bench srcs 4|6                 the block list: one source address a line
 *   bench count NETNS DEV          attach a count-and-drop program to DEV
 *                                  (native mode; it stays until DEV goes)
 *   bench stage-rx NETNS DEV NAME STAGE
 *                                  attach filter NAME's program cut after
 *                                  STAGE (include/flowbloom/bench.h) to DEV
 *   bench gen NETNS 4|6 FRAMES DEV:IDLE:CPU...
 *                                  one live-frames generator per DEV, each on
 *                                  its CPU, all started together; prints the
 *                                  wall and CPU seconds each took, then the
 *                                  longest wall
 * Every frame is a 64-byte UDP frame to 203.0.113.1 / 2001:db8::1 whose
 * source is the next address of the block list, so each receiver (which
 * holds the whole list) drops every frame: verdict costs are equal.
 */
#include "benchmark.h"
#include "flowbloom_stages.skel.h"
#include <arpa/inet.h>

/* IPv4: the two documentation /24s without network and broadcast (508
 * addresses: that is all there is); IPv6: 2001:db8::1:0 .. 2001:db8::1:7cf. */
#define NSRC6 2000
#define NSRC4 508

static unsigned nsrc(int v6)
{
	return v6 ? NSRC6 : NSRC4;
}

static void src_addr(int v6, unsigned i, __u8 a[16])
{
	memset(a, 0, 16);
	if (v6) {
		static const __u8 p[14] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

		memcpy(a, p, 14);
		a[14] = i >> 8;
		a[15] = i;
	} else {
		a[0] = i < 254 ? 198 : 203;
		a[1] = i < 254 ? 51 : 0;
		a[2] = i < 254 ? 100 : 113;
		a[3] = 1 + i % 254;
	}
}

static int bench_srcs(int v6)
{
	char s[64];
	__u8 a[16];
	unsigned i;

	for (i = 0; i < nsrc(v6); i++) {
		src_addr(v6, i, a);
		inet_ntop(v6 ? AF_INET6 : AF_INET, a, s, sizeof(s));
		printf("%s\n", s);
	}
	return 0;
}

static int bench_count(const char *dev)
{
	unsigned ifi = if_nametoindex(dev);
	struct bench_bpf *b;

	if (!ifi) {
		fprintf(stderr, "bench count: no device %s\n", dev);
		return 1;
	}
	b = load_bench(0, 0, 1, 1, NULL);
	/* A netlink attachment holds its own reference: it stays after exit. */
	if (bpf_xdp_attach(ifi, bpf_program__fd(b->progs.xdp_count), XDP_FLAGS_DRV_MODE, NULL)) {
		fprintf(stderr, "bench count: attach to %s: %s\n", dev, strerror(errno));
		return 1;
	}
	bench_bpf__destroy(b);
	return 0;
}

/* The program cut after stage (build/flowbloom_stages.bpf.o) on filter
 * f's array, with its own statistics; bench: cfg_bench (0 for live
 * frames). NULL if it does not load. */
static struct flowbloom_stages_bpf *stage_load(const struct fb_store *f, int stage, __u32 bench)
{
	struct flowbloom_stages_bpf *s = flowbloom_stages_bpf__open();

	if (!s)
		return NULL;
	s->rodata->cfg_bench_stage = (__u8)stage;
	s->rodata->cfg_bench = bench;
	bpf_map__set_pin_path(s->maps.fb_filter, NULL);
	bpf_map__set_pin_path(s->maps.fb_stats, NULL);
	if (bpf_map__reuse_fd(s->maps.fb_filter, f->outer_fd) || flowbloom_stages_bpf__load(s)) {
		flowbloom_stages_bpf__destroy(s);
		return NULL;
	}
	return s;
}

/* Filter name's program cut after stage on dev (see stage_load). */
static int bench_stage_rx(const char *dev, const char *name, int stage)
{
	unsigned ifi = if_nametoindex(dev);
	struct flowbloom_stages_bpf *s;
	struct fb_store f;

	if (!ifi || stage < FB_BENCH_STAGE_PARSE || stage > FB_BENCH_STAGE_PROBE) {
		fprintf(stderr, "bench stage-rx: no device %s, or no stage %d\n", dev, stage);
		return 1;
	}
	if (fb_store_open(name, &f))
		return 1;
	s = stage_load(&f, stage, 0);
	fb_store_close(&f);
	/* A netlink attachment holds its own reference: it stays after exit. */
	if (!s ||
	    bpf_xdp_attach(ifi, bpf_program__fd(s->progs.flowbloom), XDP_FLAGS_DRV_MODE, NULL)) {
		fprintf(stderr, "bench stage-rx: cannot load or attach to %s: %s\n", dev,
			strerror(errno));
		if (s)
			flowbloom_stages_bpf__destroy(s);
		return 1;
	}
	flowbloom_stages_bpf__destroy(s);
	return 0;
}

/* The same cut through BPF_PROG_TEST_RUN, on f's IPv4 benchmark flows
 * (bench: as bench_flowbloom's), measured as row name. */
struct row *bench_stage_measure(const char *name, const struct fb_store *f, int stage, __u32 bench)
{
	struct flowbloom_stages_bpf *s = stage_load(f, stage, bench);
	struct row *r;

	if (!s) {
		fprintf(stderr, "bench: cannot load the program cut after stage %d\n", stage);
		exit(1);
	}
	r = measure(name, bpf_program__fd(s->progs.flowbloom), 0);
	flowbloom_stages_bpf__destroy(s);
	return r;
}

struct gen {
	struct bench_bpf *b;
	struct bpf_program *prog; /* xdp_gen_list, or xdp_gen_scale (BENCH_SCALE) */
	unsigned idle_if;
	int cpu;
	unsigned frames;
	int v6;
	pthread_barrier_t *start;
	double secs, cpu_secs; /* wall clock; this thread's CPU time (softirqs included) */
	int err;
};

static int gen_run(struct gen *g, unsigned frames)
{
	struct fb_key k;
	uint8_t frame[128];
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .repeat = frames,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);

	fb_bench_flow(0, g->v6, &k); /* to 203.0.113.1 / 2001:db8::1; source rewritten */
	t.data_size_in = test_build_frame(&k, frame);
	return bpf_prog_test_run_opts(bpf_program__fd(g->prog), &t);
}

/* The calling thread's CPU time. The receiver's XDP program runs in the
 * softirq the generator's sends raise, on its CPU; without
 * CONFIG_IRQ_TIME_ACCOUNTING that time is the thread's. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *gen_thread(void *arg)
{
	struct gen *g = arg;
	cpu_set_t set;
	double t0, c0;

	CPU_ZERO(&set);
	CPU_SET(g->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		g->err = errno ?: EINVAL;
	if (!g->err && gen_run(g, 100000)) /* warm up */
		g->err = errno;
	pthread_barrier_wait(g->start);
	if (g->err)
		return NULL;
	t0 = now();
	c0 = cpu_now();
	if (gen_run(g, g->frames))
		g->err = errno;
	g->secs = now() - t0;
	g->cpu_secs = cpu_now() - c0;
	return NULL;
}

static int bench_gen(int v6, unsigned frames, int ngen, char **specs)
{
	struct gen g[8] = { 0 };
	pthread_t th[8];
	pthread_barrier_t start;
	double longest = 0;
	/* The frames of the benchmark at scale (bench_scale.c): IPv6. */
	const char *scale = getenv("BENCH_SCALE");
	int i;

	if (ngen < 1 || ngen > 8)
		return 2;
	pthread_barrier_init(&start, NULL, ngen);
	for (i = 0; i < ngen; i++) {
		char dev[IF_NAMESIZE + 1], idle[IF_NAMESIZE + 1];
		unsigned gen_if, j;
		__u8 a[16];

		if (sscanf(specs[i], "%16[^:]:%16[^:]:%d", dev, idle, &g[i].cpu) != 3 ||
		    !(gen_if = if_nametoindex(dev)) || !(g[i].idle_if = if_nametoindex(idle))) {
			fprintf(stderr, "bench gen: bad DEV:IDLE:CPU '%s'\n", specs[i]);
			return 2;
		}
		g[i].b = bench_bpf__open();
		if (!g[i].b)
			return 1;
		g[i].b->rodata->cfg_ifindex = gen_if;
		g[i].b->rodata->cfg_nsrc = nsrc(v6);
		g[i].b->rodata->cfg_bench_v6 = v6;
		g[i].prog = scale ? g[i].b->progs.xdp_gen_scale : g[i].b->progs.xdp_gen_list;
		if (scale)
			scale_gen_setup(g[i].b, scale);
		if (bench_bpf__load(g[i].b) || (scale && scale_gen_fill(g[i].b, scale)))
			return 1;
		for (j = 0; !scale && j < nsrc(v6); j++) {
			src_addr(v6, j, a);
			bpf_map_update_elem(bpf_map__fd(g[i].b->maps.srcs), &j, a, BPF_ANY);
		}
		/* Attached to a down veth: without any attachment, each live run
		 * pays two XDP dispatcher updates. */
		if (bpf_xdp_attach(g[i].idle_if, bpf_program__fd(g[i].prog), XDP_FLAGS_DRV_MODE,
				   NULL)) {
			fprintf(stderr, "bench gen: attach to %s: %s\n", idle, strerror(errno));
			return 1;
		}
		g[i].frames = frames;
		g[i].v6 = v6;
		g[i].start = &start;
	}
	for (i = 0; i < ngen; i++)
		pthread_create(&th[i], NULL, gen_thread, &g[i]);
	for (i = 0; i < ngen; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < ngen; i++) {
		if (g[i].err) {
			fprintf(stderr, "bench gen: %s: %s\n", specs[i], strerror(g[i].err));
			return 1;
		}
		printf("%.6f %.6f ", g[i].secs, g[i].cpu_secs);
		if (g[i].secs > longest)
			longest = g[i].secs;
		bpf_xdp_detach(g[i].idle_if, XDP_FLAGS_DRV_MODE, NULL);
		bench_bpf__destroy(g[i].b);
	}
	printf("%.6f\n", longest);
	return 0;
}

bool bench_tool(int argc, char **argv, int *rc)
{
	const char *t = argc > 1 ? argv[1] : "";

	if (argc > 2 && !strcmp(t, "srcs"))
		*rc = bench_srcs(atoi(argv[2]) == 6);
	else if (argc > 3 && !strcmp(t, "scale-fill"))
		*rc = scale_fill(argv[2], argv[3]);
	else if (argc > 3 &&
		 (!strcmp(t, "count") || !strcmp(t, "stage-rx") || !strcmp(t, "scale-rx") ||
		  !strcmp(t, "gen")) &&
		 fb_enter_netns(argv[2]))
		*rc = 1;
	else if (argc > 3 && !strcmp(t, "count"))
		*rc = bench_count(argv[3]);
	else if (argc > 5 && !strcmp(t, "stage-rx"))
		*rc = bench_stage_rx(argv[3], argv[4], atoi(argv[5]));
	else if (argc > 5 && !strcmp(t, "scale-rx"))
		*rc = scale_rx(argv[3], argv[4], argv[5]);
	else if (argc > 5 && !strcmp(t, "gen"))
		*rc = bench_gen(atoi(argv[3]) == 6, strtoul(argv[4], NULL, 0), argc - 5, argv + 5);
	else
		return false;
	return true;
}
