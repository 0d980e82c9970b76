// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_monitor: flow monitoring through the real XDP program
 * (BPF_PROG_TEST_RUN), against exact counts kept by the test.
 *
 *  - hash: the data path's NH with precomputed key words equals hash.h's.
 *  - zipf: 1,000,000 packets of 100,000 flows drawn from a Zipf law
 *    (s = 1.1), sizes 42-1514 bytes, IPv4 and IPv6, one at a time: the
 *    sketch's N is exact, no estimate (packets or bytes, all 100k flows) is
 *    below the truth, the share above truth + eps N is at most delta,
 *    top-10 by packets and by bytes have recall >= 0.9; every flow that
 *    sent a packet gives exactly one new-flow event, with nothing lost.
 *    With per-CPU planes, with one atomic plane, and with a coarse sketch
 *    (eps 0.01, delta 0.05) where estimates past the bound do occur.
 *  - captures: every packet of ../shared/pcaps/ (keys from the program's
 *    own trace record), the same checks.
 *  - cpus: the same flows from CPU 0 and CPU 1 at once: each plane holds
 *    its share, the sum is exact, and each new flow gives one event even
 *    though both CPUs saw its first packet (fetch_or/cmpxchg claim).
 *  - aging: with a 0.5 s period, a flow is reported once per period of
 *    activity, carried over while active, reported again after a silent
 *    period.
 *  - overload: a one-page ring buffer and no reader: events + lost equals
 *    the new flows, lost > 0; after a drain, events flow again.
 *
 * `test_monitor feed NAME PACKETS FLOWS` feeds a Zipf trace into filter
 * NAME's maps (creating monitoring maps if it has none) for
 * tests/monitor_cli.sh. Filters live under /sys/fs/bpf/fbtest_monitor_<pid>.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flow.h"
#include "flowbloom.skel.h"
#include "loader.h"
#include "monmaps.h"
#include "packet.h"
#include "pcapfile.h"
#include "stats.h"
#include "store.h"
#include "testlib.h"

#define NFLOWS 100000
#define NPACKETS 1000000
#define ZIPF_S 1.1
#define FRAME_MAX (65535 + 14 + 8)

static char label[256];

/* ------------------------------------------------------------ key table */

/* Open addressing, keys to dense indexes, for exact per-flow counts. */
struct keytab {
	struct fb_key *keys;
	__u64 *packets, *bytes;
	__u32 *slot; /* index + 1, 0: empty */
	size_t n, cap, mask;
};

static void kt_init(struct keytab *t, size_t cap)
{
	size_t slots = 1;

	while (slots < 2 * cap)
		slots <<= 1; /* at most half full, and a mask for the probe */
	t->cap = cap;
	t->mask = slots - 1;
	t->n = 0;
	t->keys = calloc(cap, sizeof(*t->keys));
	t->packets = calloc(cap, sizeof(*t->packets));
	t->bytes = calloc(cap, sizeof(*t->bytes));
	t->slot = calloc(slots, sizeof(*t->slot));
	if (!t->keys || !t->packets || !t->bytes || !t->slot) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
}

static void kt_free(struct keytab *t)
{
	free(t->keys);
	free(t->packets);
	free(t->bytes);
	free(t->slot);
}

static __u64 kt_hash(const struct fb_key *k)
{
	static const __u64 kw[FB_MON_NH_WORDS] = { 1, 3, 5, 7, 11, 13 };

	return fb_mon_hash(k, kw);
}

/* Index of key, added if absent (add) or -1. */
static long kt_find(struct keytab *t, const struct fb_key *k, bool add)
{
	size_t i = kt_hash(k) & t->mask;

	for (;; i = (i + 1) & t->mask) {
		__u32 s = t->slot[i];

		if (!s)
			break;
		if (!memcmp(&t->keys[s - 1], k, sizeof(*k)))
			return s - 1;
	}
	if (!add || t->n == t->cap)
		return -1;
	t->keys[t->n] = *k;
	t->slot[i] = ++t->n;
	return t->n - 1;
}

/* ------------------------------------------------------------- fixtures */

static int make_filter(const char *name, struct fb_store *f)
{
	struct fb_create_opts o = { .nblocks = 16,
				    .k = 4,
				    .layout = FB_LAYOUT_BLOCKED,
				    .hash = FB_HASH_SIPHASH13,
				    .action = FB_ACTION_MONITOR };

	if (fb_store_create(name, &o) || fb_store_open(name, f))
		return -1;
	return 0;
}

static void drop_filter(struct fb_store *f)
{
	char name[FB_NAME_MAX];

	snprintf(name, sizeof(name), "%s", f->name);
	fb_monitor_unpin(f->dir);
	fb_store_close(f);
	fb_store_destroy(name);
}

/* Filter NAME with fresh monitoring maps, and the program loaded on them
 * (counting into the filter's own stats, as an attachment does). */
struct rig {
	struct fb_store f;
	struct fb_monitor m;
	struct flowbloom_bpf *skel;
	int prog;
	struct ring_buffer *rb;
};

static int rig_up(struct rig *r, const char *name, const struct fb_mon_opts *o, bool trace)
{
	struct fb_load_opts lo = { .action = FB_ACTION_MONITOR, .trace = trace };

	memset(r, 0, sizeof(*r));
	if (make_filter(name, &r->f))
		return -1;
	if (fb_monitor_create(&r->f, o) || fb_monitor_open(&r->f, &r->m)) {
		fb_store_close(&r->f);
		fb_store_destroy(name);
		return -1;
	}
	lo.monitor = &r->m;
	r->skel = fb_load(&r->f, &lo);
	if (!r->skel) {
		fb_monitor_close(&r->m);
		drop_filter(&r->f);
		return -1;
	}
	r->prog = bpf_program__fd(r->skel->progs.flowbloom);
	return 0;
}

static void rig_down(struct rig *r)
{
	ring_buffer__free(r->rb);
	flowbloom_bpf__destroy(r->skel);
	fb_monitor_close(&r->m);
	drop_filter(&r->f);
}

static int send_frame(int prog, const void *frame, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .data_size_in = len, .repeat = 1);

	return bpf_prog_test_run_opts(prog, &t) ? -1 : (int)t.retval;
}

/* A frame of flow k, `extra` payload bytes after the headers. */
static size_t build(const struct fb_key *k, size_t extra, __u8 *buf)
{
	size_t len = test_build_frame(k, buf);

	memset(buf + len, 0xa5, extra);
	return len + extra;
}

/* Events go to a callback that records them per key. */
struct evlog {
	struct keytab *t; /* NULL: only count */
	__u32 *events;	  /* per key index */
	__u64 total, unknown, bad_time;
	__u64 t_min, t_max; /* CLOCK_MONOTONIC window the events must fall in */
	const struct fb_key *ignore;
};

static int on_event(void *ctx, void *data, size_t len)
{
	const struct fb_mon_event *e = data;
	struct evlog *l = ctx;
	long i;

	if (len < sizeof(*e))
		return 0;
	if (l->ignore && !memcmp(&e->key, l->ignore, sizeof(e->key)))
		return 0;
	l->total++;
	if (l->t_max && (e->ts_ns < l->t_min || e->ts_ns > l->t_max))
		l->bad_time++;
	if (!l->t)
		return 0;
	i = kt_find(l->t, &e->key, false);
	if (i < 0)
		l->unknown++;
	else
		l->events[i]++;
	return 0;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ------------------------------------------------------------ accuracy */

static int cmp_desc(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The accuracy checks shared by the Zipf trace and the captures. */
static void check_sketch(const char *what, struct rig *r, struct keytab *t)
{
	double eps = fb_monitor_epsilon(&r->m), delta = fb_monitor_delta(&r->m);
	__u64 sum_p = 0, sum_b = 0, below = 0, over_p = 0, over_b = 0, *sorted;
	struct fb_top_entry *top;
	struct fb_mon_snap s;
	int by, got, k;
	size_t i;

	if (!ASSERT_EQ(fb_monitor_snap_take(&r->m, &s), 0, "snapshot"))
		return;
	for (i = 0; i < t->n; i++) {
		sum_p += t->packets[i];
		sum_b += t->bytes[i];
	}
	snprintf(label, sizeof(label), "%s: the sketch's N is every packet", what);
	ASSERT_EQ(s.packets, sum_p, label);
	snprintf(label, sizeof(label), "%s: the sketch's byte total is every byte", what);
	ASSERT_EQ(s.bytes, sum_b, label);
	for (i = 0; i < t->n; i++) {
		__u64 p, b;

		fb_monitor_estimate(&r->m, &s, NULL, &t->keys[i], &p, &b);
		below += p < t->packets[i] || b < t->bytes[i];
		over_p += p > t->packets[i] + eps * s.packets;
		over_b += b > t->bytes[i] + eps * s.bytes;
	}
	snprintf(label, sizeof(label), "%s: no estimate below the truth (%zu flows)", what, t->n);
	ASSERT_EQ(below, 0, label);
	snprintf(label, sizeof(label),
		 "%s: packets: share over truth + eps N (eps %.2g) <= delta %.2g", what, eps,
		 delta);
	ASSERT_RANGE((double)over_p / t->n, 0, delta, label);
	snprintf(label, sizeof(label), "%s: bytes: share over truth + eps N <= delta", what);
	ASSERT_RANGE((double)over_b / t->n, 0, delta, label);
	printf("%s: %zu flows, N = %llu packets: %llu (%.4f%%) over by packets, %llu by bytes; "
	       "bound eps N = %.0f packets\n",
	       what, t->n, (unsigned long long)s.packets, (unsigned long long)over_p,
	       100.0 * over_p / t->n, (unsigned long long)over_b, eps * s.packets);

	/* Top-10 recall against the exact counts, by packets and by bytes. */
	sorted = malloc(t->n * sizeof(*sorted));
	for (by = 0; by < 2; by++) {
		__u64 *val = by ? t->bytes : t->packets, tenth;
		int hit = 0, want = t->n < 10 ? (int)t->n : 10;
		double recall;

		memcpy(sorted, val, t->n * sizeof(*sorted));
		qsort(sorted, t->n, sizeof(*sorted), cmp_desc);
		tenth = sorted[want - 1];
		got = fb_monitor_top(&r->m, &s, NULL, by, 10, &top);
		for (k = 0; k < got; k++) {
			long j = kt_find(t, &top[k].key, false);

			/* Ties at the 10th place count as hits. */
			hit += j >= 0 && val[j] >= tenth;
		}
		recall = (double)hit / want;
		snprintf(label, sizeof(label), "%s: top-10 by %s recall %.2f >= 0.9", what,
			 by ? "bytes" : "packets", recall);
		ASSERT_RANGE(recall, 0.9, 1.0, label);
		free(top);
	}
	free(sorted);
	fb_monitor_snap_free(&s);
}

/* Exactly one event per flow that sent a packet, none for others. */
static void check_events(const char *what, struct rig *r, struct keytab *t, struct evlog *l)
{
	struct fb_mon_stats st;
	__u64 active = 0, missing = 0, dup = 0, ghost = 0;
	size_t i;

	ring_buffer__consume(r->rb);
	fb_monitor_read_stats(&r->m, &st);
	for (i = 0; i < t->n; i++) {
		active += t->packets[i] > 0;
		missing += t->packets[i] && !l->events[i];
		dup += l->events[i] > 1;
		ghost += !t->packets[i] && l->events[i];
	}
	snprintf(label, sizeof(label), "%s: one event per new flow (%llu flows)", what,
		 (unsigned long long)active);
	ASSERT_EQ(l->total, active, label);
	snprintf(label, sizeof(label), "%s: no flow without its event", what);
	ASSERT_EQ(missing, 0, label);
	snprintf(label, sizeof(label), "%s: no flow with two events", what);
	ASSERT_EQ(dup, 0, label);
	snprintf(label, sizeof(label), "%s: no event for a flow never sent", what);
	ASSERT_EQ(ghost + l->unknown, 0, label);
	snprintf(label, sizeof(label), "%s: event times within the run", what);
	ASSERT_EQ(l->bad_time, 0, label);
	snprintf(label, sizeof(label), "%s: new-flow counter = events, none lost", what);
	ASSERT_TRUE(st.c[FB_MON_STAT_NEW] == l->total && st.c[FB_MON_STAT_LOST] == 0, label);
}

/* ----------------------------------------------------------------- zipf */

/* n distinct random flows, half IPv6. */
static void random_flows(struct keytab *t, size_t n, uint64_t seed)
{
	struct fb_key k;

	while (t->n < n) {
		test_random_flow(&seed, &k, t->n & 1);
		kt_find(t, &k, true);
	}
}

/* Rank r (0-based) has weight 1 / (r + 1)^s; cdf[r] = P(rank <= r). */
static double *zipf_cdf(size_t n, double s)
{
	double *cdf = malloc(n * sizeof(*cdf)), sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		cdf[i] = sum += pow(i + 1, -s);
	for (i = 0; i < n; i++)
		cdf[i] /= sum;
	return cdf;
}

static size_t zipf_draw(const double *cdf, size_t n, uint64_t *seed)
{
	double u = (test_rand64(seed) >> 11) * 0x1.0p-53;
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Send `packets` Zipf packets of t's flows through prog; exact counts into
 * t. Returns the number of failed runs. */
static long feed_zipf(int prog, struct keytab *t, size_t packets, uint64_t seed)
{
	static __u8 frame[2048];
	double *cdf = zipf_cdf(t->n, ZIPF_S);
	long failed = 0;
	size_t i;

	for (i = 0; i < packets; i++) {
		size_t f = zipf_draw(cdf, t->n, &seed);
		size_t len = build(&t->keys[f], test_rand64(&seed) % 1460, frame);

		failed += send_frame(prog, frame, len) < 0;
		t->packets[f]++;
		t->bytes[f] += len;
	}
	free(cdf);
	return failed;
}

/* The Zipf trace through a sketch of (eps, delta); events checked too when
 * newflows. A coarse sketch (w = 512, d = 3) makes collisions common, so
 * the share of estimates past the bound is measured, not just zero. */
static void test_zipf(const char *what, bool atomic, double eps, double delta, bool newflows)
{
	struct fb_mon_opts o;
	struct evlog log = { 0 };
	struct keytab t;
	struct rig r;

	fb_monitor_opts_default(&o);
	o.sketch = true;
	o.newflows = newflows;
	o.atomic = atomic;
	o.epsilon = eps;
	o.delta = delta;
	o.expect = 4000000; /* a roomy seen-set: misses ~1e-9, so "exactly one" holds */
	o.ring_bytes = 16U << 20;
	snprintf(label, sizeof(label), "%s: set up", what);
	if (!ASSERT_EQ(rig_up(&r, "zipf", &o, false), 0, label))
		return;
	kt_init(&t, NFLOWS);
	random_flows(&t, NFLOWS, atomic ? 0xa70 : 0x21bf);
	log.t = &t;
	log.events = calloc(t.n, sizeof(*log.events));
	log.t_min = mono_ns();
	if (newflows)
		r.rb = ring_buffer__new(r.m.events_fd, on_event, &log, NULL);
	snprintf(label, sizeof(label), "%s: %d packets run", what, NPACKETS);
	ASSERT_EQ(feed_zipf(r.prog, &t, NPACKETS, atomic ? 7 : 11), 0, label);
	log.t_max = mono_ns();
	check_sketch(what, &r, &t);
	if (newflows)
		check_events(what, &r, &t, &log);
	free(log.events);
	kt_free(&t);
	rig_down(&r);
}

/* ------------------------------------------------------------- captures */

static void test_pcaps(const char *dir)
{
	static __u8 frame[FRAME_MAX];
	struct fb_mon_opts o;
	struct evlog log = { 0 };
	struct dirent **ents;
	struct keytab t;
	struct rig r;
	long failed = 0, files = 0, packets = 0;
	int n, i;

	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		test_skip("captures", "no ../shared/pcaps");
		return;
	}
	fb_monitor_opts_default(&o);
	o.sketch = o.newflows = true;
	o.expect = 1000000;
	o.ring_bytes = 4U << 20;
	if (!ASSERT_EQ(rig_up(&r, "pcaps", &o, true), 0, "set up captures"))
		goto out;
	kt_init(&t, 1 << 20);
	log.events = calloc(t.cap, sizeof(*log.events));
	log.t = &t;
	r.rb = ring_buffer__new(r.m.events_fd, on_event, &log, NULL);
	for (i = 0; i < n; i++) {
		char path[2048];
		struct fb_pcap *pc;
		size_t len;
		int cut;

		if (!strstr(ents[i]->d_name, ".pcap"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		fb_libbpf_logging(false);
		pc = fb_pcap_open(path);
		if (!pc)
			continue;
		files++;
		while (fb_pcap_next(pc, frame, sizeof(frame), &len, &cut) == 1) {
			struct fb_stats before, after;
			struct fb_trace tr;
			__u32 zero = 0;
			long j;

			if (len < 14)
				continue;
			packets++;
			/* Bytes as the program counts them (and `stats`): the
			 * frame's linear part, all of it but for test runs of
			 * frames over a page, which get fragments. */
			if (fb_stats_read(&r.f, &before) || send_frame(r.prog, frame, len) < 0 ||
			    bpf_map_lookup_elem(bpf_map__fd(r.skel->maps.fb_trace), &zero, &tr) ||
			    fb_stats_read(&r.f, &after)) {
				failed++;
				continue;
			}
			len = after.c[FB_STAT_SEEN].bytes - before.c[FB_STAT_SEEN].bytes;
			if (tr.parse != FB_PARSE_OK)
				continue; /* not monitored: no key */
			j = kt_find(&t, &tr.key, true);
			if (j < 0) {
				failed++;
				continue;
			}
			t.packets[j]++;
			t.bytes[j] += len;
		}
		fb_pcap_close(pc);
		/* Keep the ring from filling: events are checked at the end. */
		ring_buffer__consume(r.rb);
	}
	printf("captures: %ld files, %ld packets, %zu flows\n", files, packets, t.n);
	ASSERT_EQ(failed, 0, "captures: every packet ran");
	check_sketch("captures", &r, &t);
	check_events("captures", &r, &t, &log);
	free(log.events);
	kt_free(&t);
	rig_down(&r);
out:
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
}

/* ----------------------------------------------------------------- cpus */

struct runner {
	int prog, cpu;
	const struct keytab *t;
	long failed;
	pthread_barrier_t *go;
};

/* Every flow of t, once, from this thread's CPU. */
static void *run_on_cpu(void *arg)
{
	struct runner *ru = arg;
	__u8 frame[256];
	cpu_set_t set;
	size_t i;

	CPU_ZERO(&set);
	CPU_SET(ru->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(ru->go);
	for (i = 0; i < ru->t->n; i++)
		ru->failed += send_frame(ru->prog, frame, build(&ru->t->keys[i], 10, frame)) < 0;
	return NULL;
}

static void test_cpus(void)
{
	struct fb_mon_opts o;
	struct evlog log = { 0 };
	struct runner ru[2];
	pthread_barrier_t go;
	pthread_t th[2];
	struct keytab t;
	struct rig r;
	__u64 plane[2] = { 0, 0 }, wrong = 0;
	size_t i, cells;
	int c;

	if (libbpf_num_possible_cpus() < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		test_skip("cpus", "needs two CPUs");
		return;
	}
	fb_monitor_opts_default(&o);
	o.sketch = o.newflows = true;
	o.expect = 1000000;
	o.ring_bytes = 4U << 20;
	if (!ASSERT_EQ(rig_up(&r, "cpus", &o, false), 0, "set up cpus"))
		return;
	kt_init(&t, 20000);
	random_flows(&t, 20000, 0xc0u);
	log.t = &t;
	log.events = calloc(t.n, sizeof(*log.events));
	r.rb = ring_buffer__new(r.m.events_fd, on_event, &log, NULL);
	pthread_barrier_init(&go, NULL, 2);
	for (c = 0; c < 2; c++) {
		ru[c] = (struct runner){ .prog = r.prog, .cpu = c, .t = &t, .go = &go };
		pthread_create(&th[c], NULL, run_on_cpu, &ru[c]);
	}
	for (c = 0; c < 2; c++)
		pthread_join(th[c], NULL);
	ASSERT_EQ(ru[0].failed + ru[1].failed, 0, "cpus: every packet ran");
	/* Each CPU's plane saw exactly its own packets (row 0 sums). */
	cells = (size_t)r.m.cfg.depth << r.m.cfg.shift;
	for (c = 0; c < 2; c++)
		for (i = 0; i < (1U << r.m.cfg.shift); i++)
			plane[c] += r.m.cells[c * cells + i].packets;
	ASSERT_TRUE(plane[0] == t.n && plane[1] == t.n, "cpus: each CPU's plane counts its share");
	{
		struct fb_mon_snap s;

		fb_monitor_snap_take(&r.m, &s);
		for (i = 0; i < t.n; i++) {
			__u64 p, b;

			fb_monitor_estimate(&r.m, &s, NULL, &t.keys[i], &p, &b);
			wrong += p < 2;
		}
		ASSERT_EQ(s.packets, 2 * t.n, "cpus: the planes add up to every packet");
		ASSERT_EQ(wrong, 0, "cpus: every flow's estimate covers both CPUs' packets");
		fb_monitor_snap_free(&s);
	}
	for (i = 0; i < t.n; i++)
		t.packets[i] = 2;
	check_events("cpus, same flows on two CPUs at once", &r, &t, &log);
	pthread_barrier_destroy(&go);
	free(log.events);
	kt_free(&t);
	rig_down(&r);
}

/* ---------------------------------------------------------------- aging */

static const struct fb_key probe_key = {
	.w = { 0, 0xffff0000ULL | (__u64)0x630064c6 << 32, 0,
	       0xffff0000ULL | (__u64)0x630071cb << 32, 0 },
};

/* Wait until the data path's generation reaches `target`, nudging its clock
 * with a probe flow (ignored by the event log) every few milliseconds. */
static __u64 wait_gen(struct rig *r, __u64 target, const struct fb_key *probe)
{
	__u8 frame[256];
	__u64 gen;
	int i;

	for (i = 0; i < 2000; i++) {
		send_frame(r->prog, frame, build(probe, 0, frame));
		gen = fb_monitor_seen_gen(&r->m);
		if (gen >= target)
			return gen;
		usleep(2000);
	}
	return gen;
}

/* Send each flow of t once; returns new events seen (after a drain). */
static __u64 burst(struct rig *r, struct keytab *t, size_t from, size_t n, struct evlog *l)
{
	__u8 frame[256];
	__u64 before = l->total;
	size_t i;

	for (i = from; i < from + n; i++)
		send_frame(r->prog, frame, build(&t->keys[i], 0, frame));
	ring_buffer__consume(r->rb);
	return l->total - before;
}

static void test_aging(void)
{
	struct fb_mon_opts o;
	struct evlog log = { 0 };
	struct fb_mon_stats st;
	struct fb_key probe = probe_key;
	struct keytab t;
	struct rig r;
	__u64 g, carried0;

	probe.w[4] = fb_key_word_tail(htons(9), htons(9), 17, FB_KIND_FLOW, 0, FB_FAMILY_IPV4);
	fb_monitor_opts_default(&o);
	o.newflows = true;
	o.age = 0.5;
	o.expect = 100000;
	if (!ASSERT_EQ(rig_up(&r, "aging", &o, false), 0, "set up aging"))
		return;
	kt_init(&t, 1000);
	random_flows(&t, 1000, 0xa9e);
	log.ignore = &probe;
	r.rb = ring_buffer__new(r.m.events_fd, on_event, &log, NULL);

	/* Start right after a period boundary: each step below takes a few
	 * milliseconds of a 500 ms period. */
	g = wait_gen(&r, fb_monitor_seen_gen(&r.m) + 1, &probe);
	g = wait_gen(&r, g + 1, &probe);
	ASSERT_EQ(burst(&r, &t, 0, 500, &log), 500, "aging: period g: 500 new flows, 500 events");
	ASSERT_EQ(burst(&r, &t, 0, 500, &log), 0, "aging: period g: the same flows again, none");
	ASSERT_EQ(fb_monitor_seen_gen(&r.m), g, "aging: (still period g)");
	/* The probe flow, active across the boundary, is carried too: count
	 * from after its first packet of g + 1. */
	wait_gen(&r, g + 1, &probe);
	fb_monitor_read_stats(&r.m, &st);
	carried0 = st.c[FB_MON_STAT_REFRESHED];
	ASSERT_EQ(burst(&r, &t, 0, 500, &log), 0,
		  "aging: period g+1: flows of period g are carried over, no event");
	fb_monitor_read_stats(&r.m, &st);
	ASSERT_EQ(st.c[FB_MON_STAT_REFRESHED] - carried0, 500, "aging: 500 flows counted carried");
	ASSERT_EQ(burst(&r, &t, 500, 500, &log), 500, "aging: period g+1: 500 others are new");
	ASSERT_EQ(fb_monitor_seen_gen(&r.m), g + 1, "aging: (still period g+1)");

	/* Silent through g+2: at g+3 the first 500 were last seen two
	 * periods ago, forgotten, new again. */
	wait_gen(&r, g + 3, &probe);
	ASSERT_EQ(burst(&r, &t, 0, 500, &log), 500,
		  "aging: period g+3: flows silent for a period are new again");
	ASSERT_EQ(fb_monitor_seen_gen(&r.m), g + 3, "aging: (still period g+3)");
	fb_monitor_read_stats(&r.m, &st);
	ASSERT_EQ(st.c[FB_MON_STAT_LOST], 0, "aging: nothing lost");
	kt_free(&t);
	rig_down(&r);
}

/* ------------------------------------------------------------- overload */

static void test_overload(void)
{
	struct fb_mon_opts o;
	struct evlog log = { 0 };
	struct fb_mon_stats st;
	struct keytab t;
	struct rig r;
	__u8 frame[256];
	size_t i;

	fb_monitor_opts_default(&o);
	o.newflows = true;
	o.ring_bytes = getpagesize(); /* room for ~56 events */
	if (!ASSERT_EQ(rig_up(&r, "overload", &o, false), 0, "set up overload"))
		return;
	kt_init(&t, 2010);
	random_flows(&t, 2010, 0x0e1);
	r.rb = ring_buffer__new(r.m.events_fd, on_event, &log, NULL);
	for (i = 0; i < 2000; i++)
		send_frame(r.prog, frame, build(&t.keys[i], 0, frame));
	ring_buffer__consume(r.rb);
	fb_monitor_read_stats(&r.m, &st);
	printf("overload: 2000 new flows, %llu events, %llu lost\n", (unsigned long long)log.total,
	       (unsigned long long)st.c[FB_MON_STAT_LOST]);
	ASSERT_EQ(st.c[FB_MON_STAT_NEW], 2000, "overload: every new flow counted");
	ASSERT_EQ(log.total + st.c[FB_MON_STAT_LOST], 2000, "overload: events + lost = new flows");
	ASSERT_TRUE(st.c[FB_MON_STAT_LOST] > 0 && log.total > 0, "overload: some lost, some not");
	ASSERT_EQ(burst(&r, &t, 2000, 10, &log), 10, "overload: after a drain, events flow again");
	kt_free(&t);
	rig_down(&r);
}

/* ----------------------------------------------------------------- hash */

static void test_hash(void)
{
	uint64_t seed = 0x4a54;
	__u64 key[2], kw[FB_MON_NH_WORDS], bad = 0, range = 0;
	struct fb_key k;
	__u32 i, row;

	for (i = 0; i < 100000; i++) {
		key[0] = test_rand64(&seed);
		key[1] = test_rand64(&seed);
		test_random_flow(&seed, &k, i & 1);
		fb_mon_nh_words(key, kw);
		bad += fb_mon_hash(&k, kw) != fb_nh(&k, key);
		for (row = 0; row < FB_MON_MAX_DEPTH; row++)
			range += fb_mon_col(fb_mon_hash(&k, kw), row, 12) >= 4096;
	}
	ASSERT_EQ(bad, 0, "hash: the data path's NH equals hash.h's fb_nh");
	ASSERT_EQ(range, 0, "hash: columns stay below the width");
}

/* ----------------------------------------------------------------- feed */

static int feed(const char *name, size_t packets, size_t flows)
{
	struct fb_load_opts lo = { .action = FB_ACTION_DEFAULT };
	struct flowbloom_bpf *skel;
	struct fb_monitor m;
	struct fb_store f;
	struct keytab t;
	int rc;

	if (fb_store_open(name, &f))
		return 1;
	rc = fb_monitor_open(&f, &m);
	if (rc > 0) {
		struct fb_mon_opts o;

		fb_monitor_opts_default(&o);
		o.sketch = o.newflows = true;
		rc = fb_monitor_create(&f, &o) || fb_monitor_open(&f, &m);
	}
	if (rc)
		return 1;
	lo.monitor = &m;
	skel = fb_load(&f, &lo);
	if (!skel)
		return 1;
	kt_init(&t, flows);
	random_flows(&t, flows, 0xfeed);
	rc = feed_zipf(bpf_program__fd(skel->progs.flowbloom), &t, packets, 5) ? 1 : 0;
	/* The heaviest flow, for the shell test to ask about. */
	{
		char text[128];

		fb_flow_format(&t.keys[0], text, sizeof(text));
		printf("%s\t%llu\t%llu\n", text, (unsigned long long)t.packets[0],
		       (unsigned long long)t.bytes[0]);
	}
	kt_free(&t);
	flowbloom_bpf__destroy(skel);
	fb_monitor_close(&m);
	fb_store_close(&f);
	return rc;
}

int main(int argc, char **argv)
{
	char root[128], pcaps[768];

	fb_libbpf_logging(getenv("TEST_VERBOSE") != NULL);
	if (argc == 5 && !strcmp(argv[1], "feed"))
		return feed(argv[2], strtoul(argv[3], NULL, 10), strtoul(argv[4], NULL, 10));
	snprintf(root, sizeof(root), "/sys/fs/bpf/fbtest_monitor_%d", getpid());
	setenv("FLOWBLOOM_ROOT", root, 1);
	snprintf(pcaps, sizeof(pcaps), "%.*s/../../../shared/pcaps",
		 (int)(strrchr(argv[0], '/') - argv[0]), argv[0]);
	test_hash();
	test_zipf("zipf, per-CPU planes", false, 0.001, 0.01, true);
	test_zipf("zipf, atomic plane", true, 0.001, 0.01, false);
	test_zipf("zipf, coarse sketch", false, 0.01, 0.05, false);
	test_pcaps(getenv("PCAPS") ? getenv("PCAPS") : pcaps);
	test_cpus();
	test_aging();
	test_overload();
	rmdir(root);
	return test_summary();
}
