// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules with a lifetime (user/lib/store/gens.c, include/flowbloom/ttl.h)
 * through the real XDP program (BPF_PROG_TEST_RUN), against the clock:
 *  - rules added for 2 s (5-tuples and a source address, plain and counting
 *    filters) match at every probe until 2 s after the add began, and none
 *    of them after 2 s + 2 s / FB_GEN_DIV (+ clock slack) from its end;
 *  - thousands of rules with random lifetimes (0.3 to 3 s), added in
 *    batches over 4 s, against an exact model of when each must match and
 *    when it must not; a `load --replace` of the permanent rules in the
 *    middle carries them (no miss before their end, no match after);
 *  - a filter without lifetimes has no generation (the data path's test);
 *  - generations sized to their rules: the smallest for one rule, a larger
 *    one when a window's is full, the third as large as the filter; with
 *    every slot in use, batches into full generations up to the filter's
 *    whole rate, then refused with the filter unchanged; no rule missed,
 *    and random packets dropped at the rate `info` reports;
 *  - in a filter of several chunks, rules with a lifetime of other shapes
 *    (mask.h) match through their generation's own head and chunks, the
 *    trace names the shape, `check` finds every head current, and nothing
 *    matches after the bound;
 *  - a generation's probe table another build wrote (emptied here): the
 *    rule missed, `check` reports it, the refresh attach runs rebuilds it.
 * Each probe runs the whole program (parse, filter, generations).
 */
#include <math.h>
#include "counting_test.h"
#include "rules/lifetime.h"
#include "store/gens.h"
#include "store/head.h"
#include "store/jiffies.h"
#include "store/repair.h"
#include "rules/rules.h"
#include "util.h"

#define SLACK 0.03 /* clock reads, bracket of the jiffies calibration, ticks */

struct rule {
	struct fb_key key;
	double t_lo, t_hi; /* fb_now() before and after the add */
	double ttl;
	bool refused;
};

static int probe(const struct prog *pr, const struct fb_key *k)
{
	int m, v = test_probe_flow(pr->fd, pr->trace_fd, k, &m);

	return v < 0 ? -1 : v == XDP_DROP;
}

/* A source-address rule and a packet from that address. */
static void src_rule(uint64_t *seed, struct fb_key *rule, struct fb_key *pkt)
{
	test_random_flow(seed, pkt, 0);
	memset(rule, 0, sizeof(*rule));
	memcpy(rule->saddr, pkt->saddr, 16);
	rule->kind = FB_KIND_SRC;
	rule->plen = 128;
	rule->family = pkt->family;
}

static void two_seconds(unsigned bits)
{
	enum { N = 200 };
	struct fb_key keys[N], src, src_pkt, perm[N];
	double t0, t1, t, first_miss = 1e9, last_hit = 0, bound;
	long errors = 0, early = 0, perm_miss = 0;
	uint64_t seed = 0x2121 + bits;
	struct fb_gen where;
	struct fb_store f;
	struct prog pr;
	char name[32], label[200];
	size_t bad;
	int i, m;

	snprintf(name, sizeof(name), "ttl2-%u", bits);
	if (!ASSERT_EQ(make_filter(name, FB_LAYOUT_BLOCKED, bits, 4000, 1e-6, &f), 0, "create"))
		return;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "load the program"))
		goto close;
	for (i = 0; i < N; i++) {
		test_random_flow(&seed, &keys[i], i & 1);
		test_random_flow(&seed, &perm[i], i & 1);
	}
	src_rule(&seed, &src, &src_pkt);
	fb_store_lock(&f);
	ASSERT_EQ(fb_rules_add(&f, perm, N, &bad), 0, "permanent rules added");
	ASSERT_EQ(f.hdr->gens, 0, "a filter without lifetimes has no generation");
	t0 = fb_now();
	ASSERT_EQ(fb_gens_add(&f, keys, N, 2.0, &bad, &where), 0, "200 flows added for 2 s");
	ASSERT_EQ(fb_gens_add(&f, &src, 1, 2.0, &bad, NULL), 0, "a source added for 2 s");
	t1 = fb_now();
	fb_store_unlock(&f);
	snprintf(label, sizeof(label), "%s: one generation, ending in %.3f s (2 to 2.5 s)",
		 bits ? "counting" : "plain", where.secs);
	ASSERT_TRUE(f.hdr->gens == 1 && where.secs >= 2.0 - (t1 - t0) && where.secs <= 2.55, label);
	bound = t1 + 2.0 + 2.0 / FB_GEN_DIV + SLACK;
	/* Probe every 20 ms until well past the bound. */
	while ((t = fb_now()) < bound + 0.3) {
		int all = 1, any = 0;

		for (i = 0; i < N + 1; i++) {
			m = probe(&pr, i < N ? &keys[i] : &src_pkt);
			errors += m < 0;
			all &= m == 1;
			any |= m == 1;
		}
		if (!all && t < first_miss)
			first_miss = t;
		if (any)
			last_hit = fb_now();
		if (!all && t < t0 + 2.0)
			early++;
		usleep(20000);
	}
	for (i = 0; i < N; i++)
		perm_miss += probe(&pr, &perm[i]) != 1;
	snprintf(label, sizeof(label), "%s: every probe ran", bits ? "counting" : "plain");
	ASSERT_EQ(errors, 0, label);
	snprintf(label, sizeof(label),
		 "%s: all 201 rules matched at every probe until 2 s (first miss at %.3f s)",
		 bits ? "counting" : "plain", first_miss - t0);
	ASSERT_TRUE(!early && first_miss >= t0 + 2.0, label);
	snprintf(label, sizeof(label),
		 "%s: none matched after 2 s + 2 s/%d (last match at %.3f s, bound %.3f s)",
		 bits ? "counting" : "plain", FB_GEN_DIV, last_hit - t0, bound - t0);
	ASSERT_TRUE(last_hit <= bound, label);
	snprintf(label, sizeof(label), "%s: the permanent rules still match",
		 bits ? "counting" : "plain");
	ASSERT_EQ(perm_miss, 0, label);
	fb_store_lock(&f);
	snprintf(label, sizeof(label), "%s: the next writer reclaims the generation",
		 bits ? "counting" : "plain");
	ASSERT_TRUE(fb_gens_reclaim(&f) == 1 && f.hdr->gens == 0, label);
	fb_store_unlock(&f);
	fb_load_close(pr.skel);
close:
	fb_store_close(&f);
	drop_filter(name);
}

static void random_model(void)
{
	enum { BATCHES = 40, PER = 100, N = BATCHES * PER, PERM = 500 };
	struct rule *r = calloc(N, sizeof(*r));
	struct fb_key *keys = calloc(PER, sizeof(*keys)), *perm = calloc(PERM, sizeof(*perm));
	long checks = 0, fn = 0, late = 0, errors = 0, refused = 0, must = 0, mustnot = 0;
	double t_start, t_end, tick = fb_jiffies_tick(), t;
	uint64_t seed = 0x7a7a;
	int b, i, j, maxgens = 0, replaced = 0;
	struct fb_store f;
	struct prog pr;
	char label[200];
	size_t bad;

	if (!ASSERT_TRUE(r && keys && perm, "memory"))
		goto out;
	if (!ASSERT_EQ(make_filter("ttl-model", FB_LAYOUT_BLOCKED, 4, 6000, 1e-7, &f), 0,
		       "create a counting filter"))
		goto out;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "load the program"))
		goto close;
	for (i = 0; i < PERM; i++)
		test_random_flow(&seed, &perm[i], i & 1);
	t_start = fb_now();
	/* A batch every 100 ms, each with its own random lifetime; every
	 * rule added so far probed between batches. */
	for (b = 0; b < BATCHES + 25; b++) {
		if (b < BATCHES) {
			double ttl = 0.3 + (test_rand64(&seed) % 2700) / 1000.0;
			int rc;

			for (i = 0; i < PER; i++) {
				test_random_flow(&seed, &r[b * PER + i].key, i & 1);
				keys[i] = r[b * PER + i].key;
			}
			fb_store_lock(&f);
			t = fb_now();
			rc = fb_gens_add(&f, keys, PER, ttl, &bad, NULL);
			for (i = 0; i < PER; i++) {
				r[b * PER + i].t_lo = t;
				r[b * PER + i].t_hi = fb_now();
				r[b * PER + i].ttl = ttl;
				r[b * PER + i].refused = rc != 0;
			}
			refused += rc != 0;
			maxgens = __builtin_popcount(f.hdr->gens) > maxgens
					  ? __builtin_popcount(f.hdr->gens)
					  : maxgens;
			/* Halfway: the permanent rules replaced (load --replace),
			 * the rules with a lifetime carried over. */
			if (b == BATCHES / 2)
				replaced = !fb_rules_replace(&f, f.hdr->nblocks, f.hdr->k, perm,
							     PERM, &bad);
			fb_store_unlock(&f);
		}
		for (j = 0; j < (b < BATCHES ? (b + 1) * PER : N); j++) {
			double before, after;
			int m;

			if (r[j].refused)
				continue;
			before = fb_now();
			m = probe(&pr, &r[j].key);
			after = fb_now();
			checks++;
			errors += m < 0;
			if (after < r[j].t_lo + r[j].ttl) {
				must++;
				fn += m != 1;
			} else if (before > r[j].t_hi + r[j].ttl * (1 + 1.0 / FB_GEN_DIV) + SLACK) {
				mustnot++;
				late += m == 1;
			}
		}
		usleep(100000 - (int)(fmod(fb_now() - t_start, 0.1) * 1e6) % 100000);
	}
	t_end = fb_now();
	ASSERT_EQ(errors, 0, "model: every probe ran");
	ASSERT_EQ(refused, 0, "model: no batch refused (generations enough for 0.3-3 s)");
	ASSERT_TRUE(replaced, "model: load --replace of the permanent rules in the middle");
	snprintf(label, sizeof(label),
		 "model: %ld probes of %d rules over %.1f s (tick %.0f ms, up to %d generations): "
		 "%ld while they must match, no miss",
		 checks, N, t_end - t_start, tick * 1e3, maxgens, must);
	ASSERT_EQ(fn, 0, label);
	snprintf(label, sizeof(label),
		 "model: %ld probes after TTL + TTL/%d: none matched (false positives at 1e-7)",
		 mustnot, FB_GEN_DIV);
	ASSERT_EQ(late, 0, label);
	ASSERT_TRUE(must > 10000 && mustnot > 10000, "model: both sides probed at length");
	for (i = 0; i < PERM; i++)
		errors += probe(&pr, &perm[i]) != 1;
	ASSERT_EQ(errors, 0, "model: the replaced permanent rules match");
	fb_load_close(pr.skel);
close:
	fb_store_close(&f);
	drop_filter("ttl-model");
out:
	free(r);
	free(keys);
	free(perm);
}

/* The program's drops among keys[0..n). */
static long drops(const struct prog *pr, const struct fb_key *keys, size_t n)
{
	long d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d += probe(pr, &keys[i]) == 1;
	return d;
}

/* Packets of n random flows the program drops, against the number
 * fb_gens_packet() expects: within 6 standard deviations and 5. */
static void fp_measured(const struct prog *pr, const struct fb_store *f, uint64_t *seed, int n,
			const char *what)
{
	struct fb_key k;
	unsigned probes;
	double rate, want;
	char label[200];
	long d = 0;
	int i;

	fb_gens_packet(f, &probes, &rate);
	for (i = 0; i < n; i++) {
		test_random_flow(seed, &k, i & 1);
		d += probe(pr, &k) == 1;
	}
	want = rate * n;
	snprintf(label, sizeof(label),
		 "%s: %ld of %d packets no rule holds dropped, %.1f expected (%u probes, rate %.2g "
		 "<= the filter's 1 %%)",
		 what, d, n, want, probes, rate);
	ASSERT_TRUE(rate <= 0.01 && d <= want + 6 * sqrt(want) + 5, label);
}

/* A blocked NH filter for cap flows at 1 % (the CLI's default hash),
 * sized as `create` sizes it (k = 4 where the chunk's bits allow). */
static int make_nh(const char *name, __u64 cap, struct fb_store *f)
{
	struct fb_create_opts o = { .layout = FB_LAYOUT_BLOCKED,
				    .hash = FB_HASH_NHK,
				    .action = FB_ACTION_DROP,
				    .capacity = cap,
				    .fp_rate = 0.01 };

	if (fb_size_blocked(o.capacity, o.fp_rate, &o.nblocks, &o.k))
		return -1;
	o.nblocks = fb_whole_chunks(o.nblocks);
	o.k = (__u8)fb_blocked_fast_k(cap, o.fp_rate, o.nblocks, o.k);
	if (fb_store_create(name, &o))
		return -1;
	return fb_store_open(name, f);
}

/* A window's generations grow FB_GEN_GROWTH times, and its third is as
 * large as the filter (rules/lifetime.c): batches of one lifetime until
 * there are three. */
static void sized_stages(void)
{
	enum { PER = 2000, MAX = 200000 };
	struct fb_key *keys = calloc(MAX, sizeof(*keys));
	struct fb_gen gl[FB_GEN_SLOTS];
	uint64_t seed = 0x57a6e;
	char label[200];
	struct fb_store f;
	struct prog pr;
	size_t n = 0, bad;
	int i, ng = 0, rc = 0;

	if (!ASSERT_TRUE(keys != NULL, "memory"))
		return;
	if (!ASSERT_EQ(make_nh("ttl-stages", 100000, &f), 0, "stages: create"))
		goto out;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "load the program"))
		goto close;
	fb_store_lock(&f);
	while (!rc && ng < 3 && n + PER <= MAX) {
		size_t b = n ? PER : 10; /* a small batch first */

		for (i = 0; i < (int)b; i++)
			test_random_flow(&seed, &keys[n + i], i & 1);
		rc = fb_gens_add(&f, &keys[n], b, 60, &bad, NULL);
		n += b;
		ng = fb_gens_list(&f, gl);
	}
	fb_store_unlock(&f);
	snprintf(label, sizeof(label),
		 "stages: %zu rules of one lifetime: generations of %u, %u and %u blocks, the "
		 "third the filter's %u",
		 n, ng > 0 ? gl[0].nblocks : 0, ng > 1 ? gl[1].nblocks : 0,
		 ng > 2 ? gl[2].nblocks : 0, f.hdr->nblocks);
	ASSERT_TRUE(!rc && ng == 3 && gl[0].nblocks < gl[1].nblocks &&
			    gl[1].nblocks < f.hdr->nblocks && gl[2].nblocks == f.hdr->nblocks,
		    label);
	ASSERT_EQ(drops(&pr, keys, n), (long)n, "stages: every rule added is matched");
	fb_load_close(pr.skel);
close:
	fb_store_close(&f);
	drop_filter("ttl-stages");
out:
	free(keys);
}

/*
 * Generations sized to their rules (rules/lifetime.c), through the
 * program: one rule makes the smallest; batches of one lifetime fill it,
 * then open one FB_GEN_GROWTH times larger; with every slot in use a
 * batch goes into a full generation of its window until that one reaches
 * the filter's whole rate, and is then refused, the filter unchanged. No
 * rule added is ever missed, and the packets no rule holds are dropped
 * at the rate `info` reports.
 */
static void sized_gens(void)
{
	enum { PER = 2000, MAX = 400000 };
	struct fb_key *keys = calloc(MAX, sizeof(*keys));
	struct fb_gen gl[FB_GEN_SLOTS], where;
	uint64_t seed = 0x51e;
	size_t n = 0, bad, before;
	int i, ng, rc = 0, into_full = 0;
	__u32 first = 0, mask;
	__u8 k = 0;
	struct fb_store f;
	struct prog pr;
	char label[200];

	if (!ASSERT_TRUE(keys != NULL, "memory"))
		return;
	if (!ASSERT_EQ(make_nh("ttl-sized", 2508, &f), 0, "sized: create"))
		goto out;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "load the program"))
		goto close;
	fb_store_lock(&f);
	test_random_flow(&seed, &keys[n], 0);
	rc = fb_gens_add(&f, &keys[n++], 1, 60, &bad, &where);
	snprintf(label, sizeof(label),
		 "sized: one rule for 60 s: a generation of %u blocks, k = %u (the filter %u, "
		 "k = %u: the generation takes k = 8, fewer bits at its rate)",
		 where.nblocks, where.k, f.hdr->nblocks, f.hdr->k);
	ASSERT_TRUE(!rc && where.nblocks == fb_gens_blocks(f.hdr, 1, &k) && where.k == k &&
			    where.nblocks == 64 && where.nblocks < f.hdr->nblocks &&
			    f.hdr->k == FB_FAST_K_LO && where.k == FB_FAST_K_HI,
		    label);
	first = where.nblocks;
	/* Batches of the same lifetime until a second generation opens. */
	while (!rc && __builtin_popcount(f.hdr->gens) < 2 && n + PER <= MAX) {
		for (i = 0; i < PER; i++)
			test_random_flow(&seed, &keys[n + i], i & 1);
		rc = fb_gens_add(&f, &keys[n], PER, 60, &bad, &where);
		n += PER;
	}
	ng = fb_gens_list(&f, gl);
	snprintf(label, sizeof(label),
		 "sized: %zu rules of one lifetime: a second generation of %u blocks for them "
		 "(the first, %u blocks, too small)",
		 n, ng == 2 ? gl[1].nblocks : 0, first);
	ASSERT_TRUE(!rc && ng == 2 && gl[0].nblocks == first &&
			    gl[1].nblocks == fb_gens_blocks(f.hdr, (double)n, &k) && gl[1].k == k &&
			    fb_gens_room(f.hdr, &gl[0], PER) != 1,
		    label);
	fb_store_unlock(&f);
	ASSERT_EQ(drops(&pr, keys, n), (long)n, "sized: every rule added is matched");
	fp_measured(&pr, &f, &seed, 20000, "sized, two generations");
	/* Every other slot: one rule each, lifetimes whose windows part. */
	fb_store_lock(&f);
	for (i = 1; i <= FB_GEN_SLOTS - 2 && !rc; i++) {
		test_random_flow(&seed, &keys[n], 0);
		rc = fb_gens_add(&f, &keys[n++], 1, 60.0 * (1 << i), &bad, NULL);
	}
	ASSERT_TRUE(!rc && __builtin_popcount(f.hdr->gens) == FB_GEN_SLOTS,
		    "sized: every slot in use");
	/* The 60 s window's generations take batches until they reach the
	 * filter's whole rate. */
	while (!rc && n + PER <= MAX) {
		for (i = 0; i < PER; i++)
			test_random_flow(&seed, &keys[n + i], i & 1);
		ng = fb_gens_list(&f, gl);
		rc = fb_gens_add(&f, &keys[n], PER, 60, &bad, &where);
		if (!rc) {
			into_full += fb_gens_room(f.hdr, &gl[0], PER) != 1 &&
				     fb_gens_room(f.hdr, &gl[1], PER) != 1;
			n += PER;
		}
	}
	mask = f.hdr->gens;
	snprintf(label, sizeof(label),
		 "sized: every slot in use, %d batches into full generations, then refused "
		 "(status %d)",
		 into_full, rc);
	ASSERT_TRUE(rc == -4 && bad == (size_t)-1 && into_full > 0, label);
	ng = fb_gens_list(&f, gl);
	for (before = 0, i = 0; i < ng; i++)
		before += gl[i].nflows;
	rc = fb_gens_add(&f, &keys[n], PER, 60, &bad, NULL);
	ng = fb_gens_list(&f, gl);
	for (i = 0; i < ng; i++)
		before -= gl[i].nflows;
	ASSERT_TRUE(rc == -4 && f.hdr->gens == mask && !before,
		    "sized: the refused batch again: refused, the filter as it was");
	fb_store_unlock(&f);
	snprintf(label, sizeof(label), "sized: all %zu rules added are matched", n);
	ASSERT_EQ(drops(&pr, keys, n), (long)n, label);
	fp_measured(&pr, &f, &seed, 20000, "sized, full generations");
	fb_load_close(pr.skel);
close:
	fb_store_close(&f);
	drop_filter("ttl-sized");
out:
	free(keys);
}

/* The trace's gen of the last run_traced(): where the deciding rule was
 * (the filter's own, or a generation's slot range). */
static __u32 traced_gen;

/* The program's verdict for the packet of key p and the trace's kind and
 * shape (and traced_gen); -1 if it could not run. */
static int run_traced(const struct prog *pr, const struct fb_key *p, __u32 *kind, __u32 *shape)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .repeat = 1);
	uint8_t frame[128];
	struct fb_trace tr;
	__u32 zero = 0;

	t.data_in = frame;
	t.data_size_in = test_build_frame(p, frame);
	if (bpf_prog_test_run_opts(pr->fd, &t) || bpf_map_lookup_elem(pr->trace_fd, &zero, &tr))
		return -1;
	*kind = tr.kind;
	*shape = tr.mask;
	traced_gen = tr.gen;
	return (int)t.retval;
}

/* A filter of hash alg sized for cap flows at 1e-6 (make_filter() makes
 * SipHash-1-3 ones). */
static int make_hashed(const char *name, __u8 alg, __u64 cap, struct fb_store *f)
{
	struct fb_create_opts o = { .layout = FB_LAYOUT_BLOCKED,
				    .hash = alg,
				    .action = FB_ACTION_DROP,
				    .capacity = cap,
				    .fp_rate = 1e-6 };

	if (alg == FB_HASH_SIPHASH13)
		return make_filter(name, FB_LAYOUT_BLOCKED, 0, cap, 1e-6, f);
	if (fb_size_blocked(cap, 1e-6, &o.nblocks, &o.k) || fb_store_create(name, &o))
		return -1;
	return fb_store_open(name, f);
}

/* Shapes and 5-tuples with a lifetime through one of the data path's
 * loops: NH's fast one (a filter of one chunk, or of several), or the
 * general one (SipHash-1-3). */
static void shapes_chunks(__u8 alg, __u64 cap)
{
	enum { N = 300 };
	/* Generations are sized to their rules (rules/lifetime.c): N flows
	 * and bulk more, enough to make the generation as many chunks as the
	 * case needs (one; several; the most a generation has). */
	/* UDP from a source /24 to destination port 53 (IPv4), and the
	 * same from a source /48 to a destination /64 (IPv6). */
	const __u32 d4 = fb_mask_desc(96 + 24, 0, 0, 16, 1, 0),
		    d6 = fb_mask_desc(48, 64, 0, 0, 0, 1);
	struct fb_key *keys = NULL, rules[2], pkts[2], other;
	int several = cap > 60000, i, j;
	size_t bulk = 0, chunks;
	__u8 k = 0;
	uint64_t seed = 0x5e1f + cap;
	struct fb_repair_state rs;
	char what[64], label[200];
	long miss = 0, late = 0, where = 0;
	__u32 kind, shape, range = 0;
	double t1, bound;
	struct fb_store f;
	struct prog pr;
	size_t bad;

	snprintf(what, sizeof(what), "%s, %s", alg == FB_HASH_NHK ? "NH" : "SipHash-1-3",
		 cap > 1000000 ? "larger than a generation"
		 : several     ? "several chunks"
			       : "one chunk");
	if (!ASSERT_EQ(make_hashed("ttl-shapes", alg, cap, &f), 0, "create"))
		return;
	snprintf(label, sizeof(label), "%s: the filter's size", what);
	ASSERT_TRUE((f.nchunks > 1) == several, label);
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "load the program"))
		goto close;
	/* One chunk; several; or the most a generation has. */
	chunks = cap > 1000000 ? FB_GEN_MAX_CHUNKS : several ? 2 : 1;
	while (several && fb_chunks_for(fb_gens_blocks(f.hdr, N + bulk, &k)) < chunks)
		bulk = bulk ? bulk * 2 : 1000;
	keys = calloc(N + bulk, sizeof(*keys));
	if (!ASSERT_TRUE(keys != NULL, "memory"))
		goto unload;
	for (i = 0; i < (int)(N + bulk); i++)
		test_random_flow(&seed, &keys[i], i & 1);
	for (i = 0; i < 2; i++) {
		test_random_flow(&seed, &pkts[i], i);
		pkts[i].proto = 17;
		pkts[i].dport = htons(53);
		fb_mask_key(&rules[i], &pkts[i], i ? d6 : d4);
	}
	fb_store_lock(&f);
	snprintf(label, sizeof(label), "%s: %zu flows added for 1 s", what, N + bulk);
	ASSERT_EQ(fb_gens_add(&f, keys, N + bulk, 1.0, &bad, NULL), 0, label);
	ASSERT_EQ(fb_gens_add(&f, rules, 2, 1.0, &bad, NULL), 0, "two shapes added for 1 s");
	t1 = fb_now();
	{
		struct fb_gen gl[FB_GEN_SLOTS];
		int n = fb_gens_list(&f, gl);
		__u32 want = fb_gens_blocks(f.hdr, N + bulk, &k);

		snprintf(label, sizeof(label),
			 "%s: one generation, sized for its %zu flows: %u blocks, %zu chunk%s",
			 what, N + bulk, want, chunks, chunks > 1 ? "s" : "");
		ASSERT_TRUE(n == 1 && gl[0].nblocks == want && gl[0].k == k &&
				    fb_chunks_for(want) == chunks && want <= f.hdr->nblocks,
			    label);
		if (n == 1)
			range = gl[0].slot;
	}
	ASSERT_EQ(fb_repair_check(&f, false, &rs), 0, "check ran");
	snprintf(label, sizeof(label), "%s: check finds every head current, no stale slot", what);
	ASSERT_TRUE(!rs.stale_head && !rs.stale_gens, label);
	fb_store_unlock(&f);
	ASSERT_EQ(f.hdr->kinds, 0, "the filter itself holds no rule");
	for (i = 0; i < N; i++) {
		miss += run_traced(&pr, &keys[i], &kind, &shape) != XDP_DROP ||
			kind != FB_KIND_FLOW;
		where += traced_gen != range;
	}
	snprintf(label, sizeof(label), "%s: every flow with a lifetime matched in its generation",
		 what);
	ASSERT_EQ(miss, 0, label);
	snprintf(label, sizeof(label), "%s: the trace names that generation (slot range %u)", what,
		 range);
	ASSERT_EQ(where, 0, label);
	for (i = 0; i < 2; i++) {
		other = pkts[i];
		other.sport ^= htons(0x1234);
		other.daddr[15] ^= 0x5a; /* inside the destination /64 */
		if (!i)
			other.saddr[15] ^= 0x5a; /* inside the source /24 */
		snprintf(label, sizeof(label),
			 "%s: IPv%d shape: packets it covers dropped, the trace names it", what,
			 i ? 6 : 4);
		ASSERT_TRUE(run_traced(&pr, &pkts[i], &kind, &shape) == XDP_DROP &&
				    kind == FB_KIND_MASK && shape == (i ? d6 : d4) &&
				    traced_gen == range &&
				    run_traced(&pr, &other, &kind, &shape) == XDP_DROP &&
				    kind == FB_KIND_MASK && traced_gen == range,
			    label);
		other.dport ^= htons(1);
		other.saddr[i ? 4 : 13] ^= 0x40; /* outside the source prefix */
		snprintf(label, sizeof(label), "%s: IPv%d shape: a packet outside it passes", what,
			 i ? 6 : 4);
		ASSERT_TRUE(run_traced(&pr, &other, &kind, &shape) == XDP_PASS && !kind &&
				    traced_gen == FB_TRACE_OWN,
			    label);
	}
	bound = t1 + 1.0 + 1.0 / FB_GEN_DIV + SLACK;
	while (fb_now() < bound)
		usleep(20000);
	for (i = 0; i < N; i++)
		late += run_traced(&pr, &keys[i], &kind, &shape) != XDP_PASS;
	for (j = 0; j < 2; j++)
		late += run_traced(&pr, &pkts[j], &kind, &shape) != XDP_PASS;
	snprintf(label, sizeof(label), "%s: none matches after 1 s + 1 s/4", what);
	ASSERT_EQ(late, 0, label);
unload:
	fb_load_close(pr.skel);
	free(keys);
close:
	fb_store_close(&f);
	drop_filter("ttl-shapes");
}

/* A generation's probe table another build wrote (simulated: emptied) is
 * rebuilt by the refresh attach runs first, as the filter's own is: the
 * program misses the rule with a lifetime before it, drops after. */
static void stale_gen_head(void)
{
	struct fb_repair_state rs;
	struct fb_key src, pkt;
	struct fb_gen_views gv;
	uint64_t seed = 0x57a1e;
	struct fb_store f;
	struct prog pr;
	size_t bad;

	if (!ASSERT_EQ(make_filter("ttl-stale", FB_LAYOUT_BLOCKED, 0, 4000, 1e-6, &f), 0,
		       "stale table: create"))
		return;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "stale table: load the program"))
		goto close;
	src_rule(&seed, &src, &pkt);
	fb_store_lock(&f);
	ASSERT_EQ(fb_gens_add(&f, &src, 1, 60.0, &bad, NULL), 0, "stale table: a source for 60 s");
	if (ASSERT_EQ(fb_gens_views_open(&f, &gv), 1, "stale table: one live generation")) {
		memset(fb_store_head(&gv.v[0])->hdr.nprobe, 0,
		       sizeof(fb_store_head(&gv.v[0])->hdr.nprobe));
		fb_gens_views_close(&gv);
	}
	ASSERT_EQ(fb_repair_check(&f, false, &rs), 0, "stale table: check");
	ASSERT_TRUE(rs.stale_head, "stale table: check reports the generation's");
	fb_store_unlock(&f);
	ASSERT_EQ(probe(&pr, &pkt), 0, "stale table: the program misses the rule: passed");
	ASSERT_EQ(fb_head_refresh(&f), 0, "stale table: refreshed as attach does");
	fb_store_lock(&f);
	ASSERT_EQ(fb_repair_check(&f, false, &rs), 0, "stale table: check again");
	ASSERT_TRUE(!rs.stale_head, "stale table: every table current after the refresh");
	fb_store_unlock(&f);
	ASSERT_EQ(probe(&pr, &pkt), 1, "stale table: the program drops it");
	fb_load_close(pr.skel);
close:
	fb_store_close(&f);
	drop_filter("ttl-stale");
}

int main(void)
{
	double t0 = now();

	rig_init();
	if (fb_jiffies_init()) {
		test_skip("ttl", "cannot read jiffies through BPF_PROG_TEST_RUN");
		return test_summary();
	}
	two_seconds(0);
	two_seconds(4);
	random_model();
	sized_gens();
	sized_stages();
	shapes_chunks(FB_HASH_NHK, 12000000);
	shapes_chunks(FB_HASH_NHK, 2000);
	shapes_chunks(FB_HASH_SIPHASH13, 100000);
	stale_gen_head();
	printf("ttl: %.2f s\n", now() - t0);
	return test_summary();
}
