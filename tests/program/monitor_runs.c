// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_monitor's other runs: two CPUs sending the same new flows, aging, a
 * one-page ring buffer, the key hash, and `feed` (traffic for the CLI tests).
 */
#include "monitor_test.h"

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

void test_cpus(void)
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

/* ------------------------------------------------------------ intervals */

#define IV_FLOWS 3
#define IV_BOUNDARIES 1000

struct sender {
	int prog, cpu;
	const struct keytab *t;
	int stop;
	__u64 sent[IV_FLOWS], bytes[IV_FLOWS];
	long failed;
	pthread_barrier_t *go;
};

/* The flows of t in turn, from this thread's CPU, until told to stop. */
static void *send_until_stopped(void *arg)
{
	struct sender *sd = arg;
	__u8 frame[IV_FLOWS][256];
	size_t len[IV_FLOWS], i;
	cpu_set_t set;

	for (i = 0; i < IV_FLOWS; i++)
		len[i] = build(&sd->t->keys[i], 10 + 100 * i, frame[i]);
	CPU_ZERO(&set);
	CPU_SET(sd->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(sd->go);
	while (!__atomic_load_n(&sd->stop, __ATOMIC_RELAXED))
		for (i = 0; i < IV_FLOWS; i++) {
			sd->failed += send_frame(sd->prog, frame[i], len[i]) < 0;
			sd->sent[i]++;
			sd->bytes[i] += len[i];
		}
	return NULL;
}

/*
 * Interval estimates add up (what `ipfix` exports and `guard` rates): one
 * CPU sends three flows without pause while the other reads the sketch at
 * 1,000 interval boundaries, 1 ms apart, as fb_monitor_snap_pair() says
 * (estimate up to the second reading, start the next interval from the
 * first). Every flow's estimates, summed, must hold every packet it sent:
 * packets counted while a reading ran included. Beside it, what one
 * reading per boundary would have summed, printed: it loses such packets.
 */
void test_intervals(void)
{
	__u64 pair[IV_FLOWS][2] = { { 0 } }, one[IV_FLOWS] = { 0 }, p, b;
	struct fb_mon_snap base, lower, upper;
	struct sender sd = { 0 };
	pthread_barrier_t go;
	struct fb_mon_opts o;
	struct keytab t;
	struct rig r;
	pthread_t th;
	cpu_set_t set, all;
	int i, f, under = 0, failed = 0;

	if (libbpf_num_possible_cpus() < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		test_skip("intervals", "needs two CPUs");
		return;
	}
	fb_monitor_opts_default(&o);
	o.sketch = true;
	if (!ASSERT_EQ(rig_up(&r, "intervals", &o, false), 0, "intervals: set up"))
		return;
	kt_init(&t, 16);
	random_flows(&t, IV_FLOWS, 0x1e7);
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (!ASSERT_EQ(fb_monitor_snap_take(&r.m, &base), 0, "intervals: first reading"))
		goto out;
	pthread_barrier_init(&go, NULL, 2);
	sd = (struct sender){ .prog = r.prog, .cpu = 0, .t = &t, .go = &go };
	pthread_create(&th, NULL, send_until_stopped, &sd);
	pthread_barrier_wait(&go);
	for (i = 0; i <= IV_BOUNDARIES; i++) {
		if (i < IV_BOUNDARIES) {
			usleep(1000);
		} else {
			/* The last boundary after the sender has stopped. */
			__atomic_store_n(&sd.stop, 1, __ATOMIC_RELAXED);
			pthread_join(th, NULL);
		}
		if (fb_monitor_snap_pair(&r.m, fb_monitor_snap_take, &lower, &upper)) {
			failed++;
			continue;
		}
		for (f = 0; f < IV_FLOWS; f++) {
			fb_monitor_estimate(&r.m, &upper, &base, &t.keys[f], &p, &b);
			pair[f][0] += p;
			pair[f][1] += b;
			fb_monitor_estimate(&r.m, &lower, &base, &t.keys[f], &p, &b);
			one[f] += p;
		}
		fb_monitor_snap_free(&base);
		fb_monitor_snap_free(&upper);
		base = lower;
	}
	fb_monitor_snap_free(&base);
	ASSERT_EQ(failed + sd.failed, 0, "intervals: every reading and every packet ran");
	/* Traffic throughout, or the sums prove nothing. */
	snprintf(label, sizeof(label), "intervals: %llu packets a flow, >= 10 per boundary",
		 (unsigned long long)sd.sent[0]);
	ASSERT_TRUE(sd.sent[0] >= 10 * IV_BOUNDARIES, label);
	for (f = 0; f < IV_FLOWS; f++) {
		snprintf(label, sizeof(label),
			 "intervals: flow %d: estimates summed over %d intervals hold its %llu "
			 "packets (sum %llu)",
			 f, IV_BOUNDARIES + 1, (unsigned long long)sd.sent[f],
			 (unsigned long long)pair[f][0]);
		ASSERT_TRUE(pair[f][0] >= sd.sent[f] && pair[f][1] >= sd.bytes[f], label);
		under += one[f] < sd.sent[f];
		printf("intervals: flow %d: %llu packets sent, estimates summed %llu (%+.2f%%); "
		       "one reading per boundary would sum %llu\n",
		       f, (unsigned long long)sd.sent[f], (unsigned long long)pair[f][0],
		       100.0 * ((double)pair[f][0] - sd.sent[f]) / sd.sent[f],
		       (unsigned long long)one[f]);
	}
	printf("intervals: one reading per boundary: %d of %d flows summed below the truth\n",
	       under, IV_FLOWS);
out:
	sched_setaffinity(0, sizeof(all), &all);
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

void test_aging(void)
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

/* -------------------------------------------------------------- seen wrap */

/*
 * The seen-set's tags tell generations apart modulo 2^16. A flow whose
 * words were last written 256 generations ago (as if silent for 256
 * periods: the words are written by hand, the data path's clock cannot be
 * moved) is new again, reported; with the 8-bit tags of before, that word
 * looked current and the flow went unreported. 2^16 generations ago is
 * the limit, and looks current.
 */
void test_seen_wrap(void)
{
	struct fb_mon_opts o;
	struct evlog log = { 0 };
	struct fb_key probe = probe_key;
	struct keytab t;
	struct rig r;
	__u64 g, h, mask, ago[] = { 256, 1U << 16 }, want[] = { 1, 0 };
	size_t bytes;
	__u32 zero = 0, slot;
	struct fb_seen_slot *v;
	int i;

	probe.w[4] = fb_key_word_tail(htons(9), htons(9), 17, FB_KIND_FLOW, 0, FB_FAMILY_IPV4);
	fb_monitor_opts_default(&o);
	o.newflows = true;
	o.age = 0.5;
	o.expect = 1000;
	if (!ASSERT_EQ(rig_up(&r, "seenwrap", &o, false), 0, "set up seen wrap"))
		return;
	kt_init(&t, 1);
	random_flows(&t, 1, 0x5ee2);
	log.ignore = &probe;
	r.rb = ring_buffer__new(r.m.events_fd, on_event, &log, NULL);
	bytes = (size_t)(r.m.cfg.seen_slots + FB_SEEN_PAD_SLOTS) * sizeof(*v);
	v = malloc(bytes);
	h = fb_mon_hash(&t.keys[0], r.m.kw);
	slot = fb_seen_index(h, r.m.cfg.seen_slots);
	mask = fb_seen_mask(h);
	for (i = 0; i < 2; i++) {
		/* Right after a boundary: the steps take milliseconds of 500. */
		g = wait_gen(&r, fb_monitor_seen_gen(&r.m) + 1, &probe);
		if (!ASSERT_EQ(bpf_map_lookup_elem(r.m.seen_fd, &zero, v), 0, "seen wrap: read"))
			break;
		v[slot].w[g & 1] = fb_seen_tag(g - ago[i]) | mask;
		v[slot].w[!(g & 1)] = 0;
		if (!ASSERT_EQ(bpf_map_update_elem(r.m.seen_fd, &zero, v, 0), 0,
			       "seen wrap: write"))
			break;
		snprintf(label, sizeof(label),
			 "seen wrap: a flow last seen %llu generations ago: %llu event",
			 (unsigned long long)ago[i], (unsigned long long)want[i]);
		ASSERT_EQ(burst(&r, &t, 0, 1, &log), want[i], label);
		ASSERT_EQ(fb_monitor_seen_gen(&r.m), g, "seen wrap: (still the same period)");
	}
	free(v);
	kt_free(&t);
	rig_down(&r);
}

/* ------------------------------------------------------------ top aging */

/* n packets of flow k in one test run (its repeat), on this CPU. */
static int send_n(int prog, const struct fb_key *k, __u32 n)
{
	__u8 frame[256];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .repeat = n);

	o.data_size_in = build(k, 10, frame);
	return bpf_prog_test_run_opts(prog, &o);
}

/* Is flow hash h resident in its bucket's packet ways, on CPU cpu? */
static bool resident(const struct rig *r, int cpu, __u64 h)
{
	const struct fb_top_bucket *b = &r->m.top[cpu].b[fb_top_index(h)];

	return b->fp[0] == h || b->fp[1] == h;
}

/*
 * The top table forgets a silent resident: two heavy flows (5000 packets)
 * hold both packet ways of a bucket; a newcomer of that bucket with fewer
 * packets (1500) is kept out while they are recent, and takes a way once
 * they have been silent for two epochs (shortened to 500 ms here), though
 * the sketch still counts them heavier since the maps were made.
 */
void test_top_aging(void)
{
	struct fb_mon_opts o;
	struct fb_key k[3], c;
	uint64_t seed = 0x70a9;
	__u64 h[3];
	cpu_set_t set, all;
	struct rig r;
	int n = 0, cpu;

	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		test_skip("top aging", "cannot pin to CPU 0");
		return;
	}
	cpu = sched_getcpu();
	fb_monitor_opts_default(&o);
	o.sketch = true;
	setenv("FLOWBLOOM_TEST_TOP_EPOCH_MS", "500", 1);
	n = rig_up(&r, "topage", &o, false);
	unsetenv("FLOWBLOOM_TEST_TOP_EPOCH_MS");
	if (!ASSERT_EQ(n, 0, "set up top aging"))
		return;
	/* Three flows of one bucket. */
	for (n = 0; n < 3;) {
		test_random_flow(&seed, &c, 0);
		h[n] = fb_mon_hash(&c, r.m.kw);
		if (n && fb_top_index(h[n]) != fb_top_index(h[0]))
			continue;
		k[n++] = c;
	}
	ASSERT_TRUE(!send_n(r.prog, &k[0], 5000) && !send_n(r.prog, &k[1], 5000),
		    "top aging: two residents, 5000 packets each");
	ASSERT_TRUE(resident(&r, cpu, h[0]) && resident(&r, cpu, h[1]),
		    "top aging: both hold the bucket's packet ways");
	ASSERT_EQ(send_n(r.prog, &k[2], 1500), 0, "top aging: a newcomer, 1500 packets");
	ASSERT_TRUE(!resident(&r, cpu, h[2]), "top aging: kept out by the recent heavier two");
	usleep(1600000);
	ASSERT_EQ(send_n(r.prog, &k[2], 1500), 0, "top aging: 1500 more after 3 silent epochs");
	ASSERT_TRUE(resident(&r, cpu, h[2]),
		    "top aging: the newcomer took the way of a resident silent for two epochs");
	sched_setaffinity(0, sizeof(all), &all);
	rig_down(&r);
}

/* ------------------------------------------------------------- overload */

void test_overload(void)
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

void test_hash(void)
{
	uint64_t seed = 0x4a54;
	__u64 key[2], kw[FB_MON_NH_WORDS], bad = 0, range = 0;
	struct fb_key k;
	__u32 i, row;

	for (i = 0; i < 100000; i++) {
		key[0] = test_rand64(&seed);
		key[1] = test_rand64(&seed);
		test_random_flow(&seed, &k, i & 1);
		fb_mon_nh1_words(key, kw);
		bad += fb_mon_hash(&k, kw) != fb_nh(&k, key);
		for (row = 0; row < FB_MON_MAX_DEPTH; row++)
			range += fb_mon_col(fb_mon_hash(&k, kw), row, 12) >= 4096;
	}
	ASSERT_EQ(bad, 0, "hash: under the linear words, the data path's NH equals hash.h's fb_nh");
	ASSERT_EQ(range, 0, "hash: columns stay below the width");
}

/* ----------------------------------------------------------------- feed */

int feed(const char *name, size_t packets, size_t flows)
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
