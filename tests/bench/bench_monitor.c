// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark 7: monitoring's cost per packet, variant by variant.
 */
#include "benchmark.h"

/*
 * 8. Flow monitoring (docs/design.md, Monitoring inside): the blocked 1 MiB load with
 * monitoring off, the sketch (with the top table), the seen-set, both; the
 * sketch on one atomic plane instead of per-CPU planes; per-flow
 * accounting (a table holding every flow, and one too small, whose
 * packets go to the overflow sketch); on one core with random flows, and
 * on two cores sending the same flow (the worst case for atomics). Same
 * run, same filter: the differences are monitoring's cost.
 */
struct mon_variant {
	const char *name;
	bool sketch, newflows, atomic;
	double eps;
	__u64 expect;
	__u32 flows; /* 0: all the filter's; else this many (in cache) */
	__u64 acct;  /* per-flow accounting: its flows per CPU; 0: off */
};

static struct flowbloom_bpf *load_monitored(struct fb_store *f, struct fb_monitor *m,
					    const struct mon_variant *v, __u32 bench)
{
	struct fb_load_opts lo = { .private_stats = true,
				   .action = FB_ACTION_DROP,
				   .bench = bench };
	struct flowbloom_bpf *skel;
	struct fb_mon_opts o;

	if (v->sketch || v->newflows || v->acct) {
		fb_monitor_opts_default(&o);
		o.sketch = v->sketch;
		o.newflows = v->newflows;
		o.atomic = v->atomic;
		o.epsilon = v->eps;
		o.expect = v->expect;
		o.acct = v->acct != 0;
		o.max_flows = v->acct;
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

void bench_monitor(struct fb_store *f, __u32 n)
{
	/* Defaults (eps 0.001: 5 x 4096 cells, 320 KiB per CPU; a seen-set for
	 * 100k flows, 1.6 MB) on all the filter's flows; then a small
	 * geometry (40 KiB, 160 KiB) on 4096 flows: everything in cache. */
	const struct mon_variant vs[] = {
		{ "off", false, false, false, 0, 0, 0, 0 },
		{ "sketch + top", true, false, false, 0.001, 100000, 0, 0 },
		{ "seen-set", false, true, false, 0.001, 100000, 0, 0 },
		{ "sketch + top + seen-set", true, true, false, 0.001, 100000, 0, 0 },
		{ "atomic sketch + top", true, false, true, 0.001, 100000, 0, 0 },
		{ "off, 4096 flows", false, false, false, 0, 0, 4096, 0 },
		{ "sketch + top + seen-set, in cache", true, true, false, 0.01, 10000, 4096, 0 },
		{ "accounting (every flow fits)", false, false, false, 0.001, 100000, 0, n },
		{ "sketch + top + accounting", true, false, false, 0.001, 100000, 0, n },
		{ "accounting, 4096 flows, in cache", false, false, false, 0.01, 10000, 4096,
		  4096 },
		{ "accounting, table full (overflow sketch)", true, false, false, 0.001, 100000, 0,
		  FB_ACCT_MIN_FLOWS },
		{ "off, 65536 flows", false, false, false, 0, 0, 65536, 0 },
		{ "accounting, 65536 flows (default table)", false, false, false, 0.001, 100000,
		  65536, FB_MON_DEF_FLOWS },
	};
	double ns[13], two[4];
	struct fb_monitor m;
	char name[96];
	size_t i;

	printf("\n5. monitoring, blocked 1 MiB v4 hit, %u flows (ns per packet)  kernel     wall\n",
	       n);
	for (i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		const struct mon_variant *v = &vs[i];
		struct flowbloom_bpf *skel =
			load_monitored(f, &m, v, (v->flows ? v->flows : n) - 1);

		snprintf(name, sizeof(name), "monitor %s", v->name);
		ns[i] = measure(name, bpf_program__fd(skel->progs.flowbloom), 0)->kern;
		flowbloom_bpf__destroy(skel);
		if (v->sketch || v->newflows || v->acct)
			fb_monitor_close(&m);
	}
	if (libbpf_num_possible_cpus() >= 2 && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		printf("  two cores, one flow on both (CPU 0, CPU 1):\n");
		for (i = 0; i < 4; i++) {
			const struct mon_variant *v = &vs[i == 0 ? 0 : i == 1 ? 1 : i == 2 ? 4 : 7];
			struct flowbloom_bpf *skel = load_monitored(f, &m, v, 0);

			snprintf(name, sizeof(name), "monitor %s, 2 cores", v->name);
			two[i] = measure_two(name, bpf_program__fd(skel->progs.flowbloom));
			flowbloom_bpf__destroy(skel);
			if (i)
				fb_monitor_close(&m);
		}
	}
	fb_monitor_unpin(f);
	printf("  monitoring's cost (kernel ns over 'off', this run): sketch + top %.0f, "
	       "seen-set %.0f, both %.0f; in cache, both %.0f; atomic plane %+.0f vs per-CPU\n",
	       ns[1] - ns[0], ns[2] - ns[0], ns[3] - ns[0], ns[6] - ns[5], ns[4] - ns[1]);
	if (libbpf_num_possible_cpus() >= 2 && sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		printf("  two cores, same flow: per-CPU sketch %+.0f, atomic sketch %+.0f, "
		       "accounting %+.0f over off\n",
		       two[1] - two[0], two[2] - two[0], two[3] - two[0]);
	printf("  per-flow accounting's cost (kernel ns over 'off', this run): %u flows in a "
	       "table that holds them %.0f, 65536 flows in the default table %.0f, 4096 in "
	       "cache %.0f; with sketch + top %.0f (sketch alone %.0f); table full, overflow "
	       "sketch %.0f over sketch + top\n",
	       n, ns[7] - ns[0], ns[12] - ns[11], ns[9] - ns[5], ns[8] - ns[0], ns[1] - ns[0],
	       ns[10] - ns[1]);
	target("monitoring: sketch + top + seen-set in cache, ns over off", ns[6] - ns[5], 25,
	       true);
	/* A call (the accounting is one global function), the headers it
	 * reads, the hash, and two cache lines of a table that is larger than
	 * the sketch's in-cache geometry. */
	target("accounting in cache, ns over off", ns[9] - ns[5], 50, true);
}
