// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `bench capture`: what `flowbloom capture` costs the data path. The
 * target: with no capture running, the program pays nothing measurable
 * against the program built without the capture code (-DFB_NO_CAPTURE,
 * build/flowbloom_nocap.bpf.o), loaded as fb_load loads it. Both are loaded
 * on the same filter and measured in alternation, so drift and load on
 * the shared machine fall on both alike. Then, for the record, a capture
 * running at 1 in 1000 and at every packet (the ring fills, then counts
 * losses), armed through the library as the CLI arms it.
 */
#include "benchmark.h"
#include "capture/capctl.h"
#include "flowbloom_nocap.skel.h"

#define PAIRS 9
#define ROUNDS 15

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return v[n / 2];
}

/* One test run of repeat / 4 packets: the kernel's mean ns per packet
 * (short runs, many pairs: drift from the machine's other load falls
 * within a pair). */
static double once(int fd)
{
	struct fb_key k;
	uint8_t frame[128];
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .repeat = repeat / 4 ?: 1);

	fb_bench_flow(0, 0, &k);
	t.data_size_in = test_build_frame(&k, frame);
	if (bpf_prog_test_run_opts(fd, &t)) {
		fprintf(stderr, "bench: capture: test run failed: %s\n", strerror(errno));
		exit(1);
	}
	return t.duration;
}

/* The lease, renewed while a capture runs in the benchmark's thread. */
struct renewer {
	struct fb_capture *c;
	volatile int stop;
};

static void *renew(void *arg)
{
	struct renewer *r = arg;

	while (!r->stop) {
		fb_capture_renew(r->c, NULL);
		usleep(FB_CAP_RENEW_NS / 1000);
	}
	return NULL;
}

/* ns/packet (kernel mean) with a capture armed on prog_fd. */
static double running(const char *name, struct flowbloom_bpf *skel, __u32 sample)
{
	struct fb_cap_opts o = { .verdicts = 1 << XDP_DROP,
				 .sample = sample,
				 .snaplen = 128,
				 .ring_bytes = 4ULL << 20 };
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	__u64 st[FB_CAP_STAT_NR];
	struct renewer rn = { NULL, 0 };
	struct fb_capture c;
	pthread_t th;
	double ns;

	if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.flowbloom), &info, &len))
		exit(1);
	fb_capture_init(&c);
	if (fb_capture_add(&c, info.id, "test_run", "native") || fb_capture_start(&c, &o) < 0)
		exit(1);
	rn.c = &c;
	pthread_create(&th, NULL, renew, &rn);
	ns = measure(name, bpf_program__fd(skel->progs.flowbloom), 0)->kern;
	rn.stop = 1;
	pthread_join(th, NULL);
	fb_capture_stop(&c);
	if (!fb_capture_stats(&c, st))
		printf("  %-44s matched %llu, sampled %llu, lost %llu\n", "",
		       (unsigned long long)st[FB_CAP_STAT_MATCHED],
		       (unsigned long long)st[FB_CAP_STAT_SAMPLED],
		       (unsigned long long)st[FB_CAP_STAT_LOST]);
	fb_capture_close(&c);
	return ns;
}

static char vlog[1 << 16];

/* The verifier's "processed N insns" and time of the last load into vlog. */
static void verifier_line(const char *name)
{
	char *line = strstr(vlog, "processed "), *vt = strstr(vlog, "verification time ");

	if (line)
		printf("  verifier, %-33s %7lu insns  %6.1f ms\n", name,
		       strtoul(line + 10, NULL, 10), vt ? strtoul(vt + 18, NULL, 10) / 1e3 : 0.0);
}

/* The loaded program's size: xlated instructions, JIT bytes. */
static void sizes(const char *name, int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		printf("  program, %-34s %7u insns  %6u bytes JITed (id %u)\n", name,
		       info.xlated_prog_len / 8, info.jited_prog_len, info.id);
	fflush(stdout);
}

/* The program without capture code, on f's filter, as fb_load loads the
 * real one for the benchmark (drop, hits, private statistics). */
static struct flowbloom_nocap_bpf *load_nocap(const struct fb_store *f, bool verbose)
{
	struct flowbloom_nocap_bpf *n = flowbloom_nocap_bpf__open();

	if (!n)
		exit(1);
	n->rodata->cfg_action = FB_ACTION_DROP;
	n->rodata->cfg_bench = SMALL_FLOWS - 1;
	bpf_map__set_pin_path(n->maps.fb_filter, NULL);
	bpf_map__set_pin_path(n->maps.fb_stats, NULL);
	vlog[0] = 0;
	bpf_program__set_log_buf(n->progs.flowbloom, vlog, sizeof(vlog));
	bpf_program__set_log_level(n->progs.flowbloom, 4);
	if (bpf_map__reuse_fd(n->maps.fb_filter, f->outer_fd) || flowbloom_nocap_bpf__load(n)) {
		fprintf(stderr, "bench: cannot load flowbloom_nocap.bpf.o\n");
		exit(1);
	}
	if (verbose)
		verifier_line("without capture code");
	return n;
}

/* The real program, likewise, with its verifier statistics. */
static struct flowbloom_bpf *load_real(const struct fb_store *f, bool verbose)
{
	struct flowbloom_bpf *s = flowbloom_bpf__open();

	if (!s)
		exit(1);
	s->rodata->cfg_action = FB_ACTION_DROP;
	s->rodata->cfg_bench = SMALL_FLOWS - 1;
	bpf_map__set_pin_path(s->maps.fb_filter, NULL);
	bpf_map__set_pin_path(s->maps.fb_stats, NULL);
	vlog[0] = 0;
	bpf_program__set_log_buf(s->progs.flowbloom, vlog, sizeof(vlog));
	bpf_program__set_log_level(s->progs.flowbloom, 4);
	if (bpf_map__reuse_fd(s->maps.fb_filter, f->outer_fd) || flowbloom_bpf__load(s)) {
		fprintf(stderr, "bench: cannot load flowbloom.bpf.o\n");
		exit(1);
	}
	if (verbose)
		verifier_line("with capture code");
	return s;
}

/* PAIRS runs of each of fa and fb in alternating order: the median of the
 * pairs' ratios, and of each program's figures. */
static double pairs(int fa, int fb, double *ma, double *mb)
{
	double a[PAIRS], b[PAIRS], ratio[PAIRS];
	int i;

	for (i = 0; i < PAIRS; i++) {
		if (i & 1) {
			a[i] = once(fa);
			b[i] = once(fb);
		} else {
			b[i] = once(fb);
			a[i] = once(fa);
		}
		ratio[i] = a[i] / b[i];
	}
	*ma = median(a, PAIRS);
	*mb = median(b, PAIRS);
	return median(ratio, PAIRS);
}

/* One round, every program loaded afresh (where the JIT puts a program
 * moves its timing by a few percent, the same way for every packet of
 * that load: measured within one load only, placement would pass for a
 * cost): the real program against the build without capture code, and,
 * for the noise floor, that build against another load of itself. */
static double round_ratio(const struct fb_store *f, double *ma, double *mb, double *aa,
			  bool verbose)
{
	struct flowbloom_bpf *idle = load_real(f, verbose);
	struct flowbloom_nocap_bpf *none = load_nocap(f, verbose), *none2 = load_nocap(f, false);
	int fa = bpf_program__fd(idle->progs.flowbloom),
	    fb = bpf_program__fd(none->progs.flowbloom);
	double r, x, y;

	if (verbose) {
		sizes("with capture code", fa);
		sizes("without capture code", fb);
		if (getenv("BENCH_CAPTURE_PAUSE"))
			sleep(atoi(getenv("BENCH_CAPTURE_PAUSE")));
	}
	r = pairs(fa, fb, ma, mb);
	*aa = pairs(bpf_program__fd(none2->progs.flowbloom), fb, &x, &y);
	flowbloom_bpf__destroy(idle);
	flowbloom_nocap_bpf__destroy(none);
	flowbloom_nocap_bpf__destroy(none2);
	return r;
}

void bench_capture(void)
{
	double rr[ROUNDS], ra[ROUNDS], rb[ROUNDS], raa[ROUNDS], mr, ma, mb, maa, r1000, r1;
	struct flowbloom_bpf *idle;
	cpu_set_t one_cpu, all;
	struct fb_store f;
	int i;

	printf("\n14. capture's cost, blocked 1 MiB v4 hit (dropped), %u flows (ns per packet,"
	       " kernel)\n",
	       SMALL_FLOWS);
	if (make_filter("capbench", SMALL_BITS, 8, FB_LAYOUT_BLOCKED, SMALL_FLOWS, &f))
		exit(1);
	CPU_ZERO(&one_cpu);
	CPU_SET(sched_getcpu(), &one_cpu);
	sched_getaffinity(0, sizeof(all), &all);
	sched_setaffinity(0, sizeof(one_cpu), &one_cpu);
	for (i = 0; i < ROUNDS; i++) {
		rr[i] = round_ratio(&f, &ra[i], &rb[i], &raa[i], i == 0);
		printf("  load %2d: no capture running %6.1f, built without capture code %6.1f: "
		       "ratio %.4f (the latter against itself: %.4f)\n",
		       i + 1, ra[i], rb[i], rr[i], raa[i]);
	}
	sched_setaffinity(0, sizeof(all), &all);
	mr = median(rr, ROUNDS);
	maa = median(raa, ROUNDS);
	ma = median(ra, ROUNDS);
	mb = median(rb, ROUNDS);
	idle = load_real(&f, false);
	r1000 = running("capture running, 1 in 1000", idle, 1000);
	r1 = running("capture running, every packet", idle, 1);
	flowbloom_bpf__destroy(idle);
	printf("  no capture running: %+.2f ns over the build without it (medians of %d loads of "
	       "%d pairs; median ratio %.4f; the same build against itself %.4f); running: 1 in "
	       "1000 %+.1f ns, every packet %+.1f ns\n",
	       ma - mb, ROUNDS, PAIRS, mr, maa, r1000 - mb, r1 - mb);
	target("capture: idle / built without it, ns per packet (median of loads)", mr, 1.02, true);
	fb_store_close(&f);
	fb_store_destroy("capbench");
}
