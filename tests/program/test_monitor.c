// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_monitor: flow monitoring through the real XDP program
 * (BPF_PROG_TEST_RUN), against exact counts kept by the test.
 *
 *  - hash: the data path's NH with the linear key words equals hash.h's
 *    fb_nh (maps earlier builds made).
 *  - words: the program's key words are SipHash-1-3 of the maps' key, and
 *    it picks the sketch cells, top-talker bucket and seen-set bits user
 *    space computes from them; earlier builds' maps keep their linear
 *    words on both sides (monitor_words.c).
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
 *  - byaddr: a sketch by source or destination address (monitor_byaddr.c).
 *
 * `test_monitor feed NAME PACKETS FLOWS` feeds a Zipf trace into filter
 * NAME's maps (creating monitoring maps if it has none) for
 * tests/e2e/monitor_cli.sh. Filters live under /sys/fs/bpf/fbtest_monitor_<pid>.
 */
#define _GNU_SOURCE
#include "monitor_test.h"

char label[256];

/* ------------------------------------------------------------ key table */

void kt_init(struct keytab *t, size_t cap)
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

void kt_free(struct keytab *t)
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
long kt_find(struct keytab *t, const struct fb_key *k, bool add)
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
	fb_monitor_unpin(f);
	fb_store_close(f);
	fb_store_destroy(name);
}

int rig_up(struct rig *r, const char *name, const struct fb_mon_opts *o, bool trace)
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

void rig_down(struct rig *r)
{
	ring_buffer__free(r->rb);
	flowbloom_bpf__destroy(r->skel);
	fb_monitor_close(&r->m);
	drop_filter(&r->f);
}

int send_frame(int prog, const void *frame, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .data_size_in = len, .repeat = 1);

	return bpf_prog_test_run_opts(prog, &t) ? -1 : (int)t.retval;
}

/* A frame of flow k, `extra` payload bytes after the headers. */
size_t build(const struct fb_key *k, size_t extra, __u8 *buf)
{
	size_t len = test_build_frame(k, buf);

	memset(buf + len, 0xa5, extra);
	return len + extra;
}

int on_event(void *ctx, void *data, size_t len)
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

__u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char root[128], pcaps[768];

	fb_libbpf_logging(getenv("TEST_VERBOSE") != NULL);
	if (argc == 5 && !strcmp(argv[1], "feed"))
		return feed(argv[2], strtoul(argv[3], NULL, 10), strtoul(argv[4], NULL, 10));
	test_private_root("monitor", root, sizeof(root));
	snprintf(pcaps, sizeof(pcaps), "%.*s/../../../../shared/pcaps",
		 (int)(strrchr(argv[0], '/') - argv[0]), argv[0]);
	test_hash();
	test_zipf("zipf, per-CPU planes", false, 0.001, 0.01, true);
	test_zipf("zipf, atomic plane", true, 0.001, 0.01, false);
	test_zipf("zipf, coarse sketch", false, 0.01, 0.05, false);
	test_pcaps(getenv("PCAPS") ? getenv("PCAPS") : pcaps);
	test_cpus();
	test_intervals();
	test_aging();
	test_top_aging();
	test_seen_wrap();
	test_overload();
	test_byaddr();
	test_words();
	rmdir(root);
	return test_summary();
}
