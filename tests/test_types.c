// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The other filter types (issue 11) and set algebra, host side, on plain
 * memory: cuckoo (user/cuckoo.c), d-left counting (user/dleft.c), scalable
 * (user/scalable.c), union/intersection/fold/cardinality
 * (user/setalgebra.c). Zero false negatives under adds, deletes and
 * growth; measured false-positive rates against each type's formula at
 * 100k flows and 1M probes; load factors reached; all-or-nothing batches;
 * relocations never hide a flow from a concurrent reader; and
 * tests/types_check.bpf.c, run with BPF_PROG_TEST_RUN on tables filled
 * through the mmap by the user-space code, picks the same slots.
 * Prints the measured figures (docs/types.md has them).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cuckoo.h"
#include "dleft.h"
#include "scalable.h"
#include "setalgebra.h"
#include "sizing.h"
#include "packet.h"
#include "testlib.h"
#include "types_check.h"

#define N_ADD 100000
#define N_PROBE 1000000

static __u64 hkey[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
static struct fb_key *added_keys, *probe_keys;
static __u64 *added, *probes; /* their SipHash-1-3 hashes */
static char label[256];

static void make_sets(void)
{
	uint64_t seed = 0x7e57;
	size_t i;

	added_keys = malloc(N_ADD * sizeof(*added_keys));
	probe_keys = malloc(N_PROBE * sizeof(*probe_keys));
	added = malloc(N_ADD * sizeof(*added));
	probes = malloc(N_PROBE * sizeof(*probes));
	for (i = 0; i < N_ADD; i++) {
		test_random_flow(&seed, &added_keys[i], i & 1);
		added[i] = fb_hash_key(&added_keys[i], FB_HASH_SIPHASH13, hkey);
	}
	seed = 0xbadf10e5;
	for (i = 0; i < N_PROBE; i++) {
		test_random_flow(&seed, &probe_keys[i], i & 1);
		probes[i] = fb_hash_key(&probe_keys[i], FB_HASH_SIPHASH13, hkey);
	}
}

static void *zalloc_blocks(__u64 n)
{
	void *p = aligned_alloc(64, n * FB_BLOCK_BYTES);

	memset(p, 0, n * FB_BLOCK_BYTES);
	return p;
}

/* Within tol of want, or within 4 standard deviations of a binomial count
 * when the expected count is too small for tol to be meaningful (cuckoo
 * f=16: ~93 expected in 1M probes, sd ~10 %; every other case here expects
 * over 1400, where 15 % is the tighter bound). Labels say "within 15 %*". */
static bool near(double got, double want, double tol, double trials)
{
	double sd = sqrt(want * (1 - want) / trials);
	double slack = fmax(tol * want, 4 * sd);

	return fabs(got - want) <= slack;
}

/* ---- geometry ---- */

static void test_geometry(void)
{
	uint64_t seed = 1;
	long bad = 0;
	int i, w;

	for (i = 0; i < 100000; i++) {
		__u64 h = test_rand64(&seed);
		unsigned f = (unsigned[]){ 8, 12, 16, 32 }[i & 3];
		__u32 fp = fb_cuckoo_fp(h, f), nb = 1U << (4 + i % 20);
		__u32 i1 = fb_cuckoo_index(h, nb), i2 = fb_cuckoo_alt(i1, fp, nb);

		bad += !fp || (f < 32 && fp >> f) || i1 >= nb || i2 >= nb ||
		       fb_cuckoo_alt(i2, fp, nb) != i1;
	}
	ASSERT_EQ(bad, 0, "cuckoo: fingerprint non-zero and in range, i1 = alt(alt(i1))");
	/* Each d-left permutation is a bijection of [0, 2^w). */
	for (w = 3; w <= 16; w += 13) {
		__u32 n = 1U << w, x;
		unsigned char *seen = calloc(n, 1);

		for (i = 0; i < FB_DLEFT_D; i++) {
			memset(seen, 0, n);
			for (x = 0; x < n; x++) {
				__u64 y = fb_dleft_perm(x, i, w);

				bad += y >= n || seen[y]++;
			}
		}
		free(seen);
	}
	ASSERT_EQ(bad, 0, "d-left: P_0..P_3 are permutations of [0, 2^w) (w = 3, 16)");
	bad = 0;
	for (i = 0; i < 1000; i++) {
		__u64 h = test_rand64(&seed);

		bad += fb_sbf_stage_hash(h, 0) != h || fb_sbf_stage_hash(h, 1) == h;
	}
	ASSERT_EQ(bad, 0, "scalable: stage 0 uses the flow's hash, later stages another");
}

/* A geometry read from a map is input: every bad field is refused with
 * its reason before any operation touches memory. */
static void test_checks(void)
{
	struct fb_cuckoo_geom c;
	struct fb_dleft_geom d;
	struct fb_sbf_geom s, s0;
	char why[200];

	fb_cuckoo_size(1000, 0.01, &c);
	c.first_block = 2;
	ASSERT_EQ(fb_cuckoo_check(&c, 2 + fb_cuckoo_blocks(&c), why, sizeof(why)), 0,
		  "check: a sized cuckoo geometry is accepted");
	ASSERT_EQ(fb_cuckoo_check(&c, 1 + fb_cuckoo_blocks(&c), why, sizeof(why)), -1,
		  "check: a cuckoo table one block beyond its array is refused");
	c.nbuckets = 1000;
	ASSERT_TRUE(fb_cuckoo_check(&c, 1 << 20, why, sizeof(why)) == -1 && strstr(why, "power"),
		    "check: cuckoo bucket count not a power of two is refused");
	c.nbuckets = 1024;
	c.fp_bits = 13;
	ASSERT_EQ(fb_cuckoo_check(&c, 1 << 20, why, sizeof(why)), -1,
		  "check: 13-bit cuckoo fingerprints are refused");
	fb_dleft_size(1000, 0.01, &d);
	ASSERT_EQ(fb_dleft_check(&d, fb_dleft_blocks(&d), why, sizeof(why)), 0,
		  "check: a sized d-left geometry is accepted");
	d.rem_bits = 15;
	ASSERT_EQ(fb_dleft_check(&d, 1 << 20, why, sizeof(why)), -1,
		  "check: a 15-bit remainder in 16-bit cells is refused");
	d.rem_bits = 10;
	d.bucket_bits = 40;
	ASSERT_EQ(fb_dleft_check(&d, 1ULL << 40, why, sizeof(why)), -1,
		  "check: 2^40 d-left buckets are refused");
	fb_sbf_init(&s, 1000, 0.01, 2);
	s0 = s;
	ASSERT_EQ(fb_sbf_check(&s, fb_sbf_end_block(&s), why, sizeof(why)), 0,
		  "check: a scalable geometry is accepted");
	s.nstages = 9;
	ASSERT_EQ(fb_sbf_check(&s, 1 << 20, why, sizeof(why)), -1,
		  "check: 9 scalable stages are refused");
	s = s0;
	s.nstages = 2;
	s.stage[1] = s.stage[0];
	ASSERT_EQ(fb_sbf_check(&s, 1 << 20, why, sizeof(why)), -1,
		  "check: overlapping scalable stages are refused");
	s = s0;
	s.stage[0].k = 0;
	ASSERT_EQ(fb_sbf_check(&s, 1 << 20, why, sizeof(why)), -1,
		  "check: a scalable stage with k = 0 is refused");
}

/* ---- cuckoo ---- */

static void cuckoo_fp(unsigned fp_bits, double *bits_per_item, double *fpr_out)
{
	struct fb_cuckoo_geom g;
	struct fb_batch_err err;
	struct fb_block *t;
	long miss = 0, fp = 0, rc = 0;
	size_t i;
	double want, got;

	fb_cuckoo_size(N_ADD, 0.5, &g);
	g.fp_bits = fp_bits;
	t = zalloc_blocks(fb_cuckoo_blocks(&g));
	for (i = 0; i < N_ADD; i += 10000)
		rc |= fb_cuckoo_add(t, &g, added + i, 10000, &err);
	snprintf(label, sizeof(label), "cuckoo f=%u: 100k flows added in batches of 10k", fp_bits);
	ASSERT_EQ(rc, 0, label);
	ASSERT_EQ(fb_cuckoo_occupied(t, &g), N_ADD, "cuckoo: one slot per flow");
	for (i = 0; i < N_ADD; i++)
		miss += !fb_cuckoo_lookup(t, &g, added[i]);
	snprintf(label, sizeof(label), "cuckoo f=%u: no false negative among 100k", fp_bits);
	ASSERT_EQ(miss, 0, label);
	for (i = 0; i < N_PROBE; i++)
		fp += fb_cuckoo_lookup(t, &g, probes[i]);
	got = (double)fp / N_PROBE;
	want = fb_cuckoo_fpr(&g, N_ADD);
	snprintf(
		label, sizeof(label),
		"cuckoo f=%u alpha=%.3f: fp rate %.6f within 15%%* of 1-(1-1/(2^f-1))^(2b alpha) = "
		"%.6f",
		fp_bits, fb_cuckoo_load(&g), got, want);
	ASSERT_TRUE(near(got, want, 0.15, N_PROBE), label);
	printf("cuckoo f=%u: nbuckets %u, load %.3f, fp %.6f (formula %.6f, bound 2b*alpha/2^f "
	       "%.6f)\n",
	       fp_bits, g.nbuckets, fb_cuckoo_load(&g), got, want,
	       2.0 * FB_CUCKOO_SLOTS * fb_cuckoo_load(&g) / ldexp(1, fp_bits));
	*bits_per_item = fb_cuckoo_blocks(&g) * 512.0 / N_ADD;
	*fpr_out = got;

	/* Deletes: half go, the other half all stay. */
	rc = fb_cuckoo_del(t, &g, added, N_ADD / 2, &err);
	ASSERT_EQ(rc, 0, "cuckoo: delete 50k added flows");
	for (miss = 0, i = N_ADD / 2; i < N_ADD; i++)
		miss += !fb_cuckoo_lookup(t, &g, added[i]);
	ASSERT_EQ(miss, 0, "cuckoo: no false negative among the 50k kept after deletes");
	ASSERT_EQ(fb_cuckoo_occupied(t, &g), N_ADD / 2, "cuckoo: deletes freed 50k slots");
	free(t);
}

static void cuckoo_refusals(void)
{
	struct fb_cuckoo_geom g = { .nbuckets = 1024, .fp_bits = 16 };
	struct fb_batch_err err = { 0 };
	struct fb_block *t = zalloc_blocks(fb_cuckoo_blocks(&g)), *snap;
	__u64 batch[11], absent = 0;
	size_t bytes = fb_cuckoo_blocks(&g) * FB_BLOCK_BYTES, i;
	struct fb_cuckoo_geom gsnap;
	int rc;

	fb_cuckoo_add(t, &g, added, 2000, NULL);
	/* A flow whose fingerprint is in neither of its buckets. */
	for (i = 0; i < N_PROBE && !absent; i++)
		if (!fb_cuckoo_lookup(t, &g, probes[i]))
			absent = probes[i];
	snap = malloc(bytes);
	memcpy(snap, t, bytes);
	gsnap = g;
	rc = fb_cuckoo_del(t, &g, &absent, 1, &err);
	ASSERT_EQ(rc, -1, "cuckoo: deleting a flow never added (absent) is refused");
	memcpy(batch, added, 10 * sizeof(*batch));
	batch[10] = absent;
	rc = fb_cuckoo_del(t, &g, batch, 11, &err);
	ASSERT_TRUE(rc == -1 && err.bad == 10, "cuckoo: a delete batch with one absent flow is "
					       "refused, naming it");
	ASSERT_TRUE(!memcmp(snap, t, bytes) && !memcmp(&gsnap, &g, sizeof(g)),
		    "cuckoo: refused deletes changed nothing");
	/* The same flow twice in one batch needs two stored copies. */
	batch[0] = batch[1] = added[0];
	rc = fb_cuckoo_del(t, &g, batch, 2, &err);
	ASSERT_TRUE(rc == -1 && err.bad == 1 && !memcmp(snap, t, bytes),
		    "cuckoo: deleting one flow twice (one copy stored) is refused");
	/* Added twice, deleted once: still there. */
	fb_cuckoo_add(t, &g, added, 1, NULL);
	fb_cuckoo_del(t, &g, added, 1, NULL);
	ASSERT_TRUE(fb_cuckoo_lookup(t, &g, added[0]), "cuckoo: a flow added twice survives one "
						       "delete");
	free(snap);
	free(t);
}

/* Union of two cuckoo filters: every flow of either found; a union that
 * does not fit is refused whole; other geometries refused. */
static void cuckoo_union(void)
{
	struct fb_cuckoo_geom a = { .nbuckets = 4096, .fp_bits = 12 }, b = a, a2;
	struct fb_block *ta = zalloc_blocks(fb_cuckoo_blocks(&a)),
			*tb = zalloc_blocks(fb_cuckoo_blocks(&b)), *snap;
	size_t bytes = fb_cuckoo_blocks(&a) * FB_BLOCK_BYTES, i;
	struct fb_batch_err err;
	char why[200];
	long miss = 0;
	int rc;

	fb_cuckoo_add(ta, &a, added, 6000, NULL);
	fb_cuckoo_add(tb, &b, added + 4000, 6000, NULL); /* 2000 shared */
	rc = fb_cuckoo_union(ta, &a, tb, &b, why, sizeof(why), &err);
	for (i = 0; i < 10000; i++)
		miss += !fb_cuckoo_lookup(ta, &a, added[i]);
	ASSERT_TRUE(rc == 0 && miss == 0 && fb_cuckoo_occupied(ta, &a) == 12000 && a.count == 12000,
		    "cuckoo union: all 10k flows of A u B found, 12k fingerprints (a multiset)");
	/* Once more does not fit (18k fingerprints, 16384 slots): refused,
	 * nothing changed. */
	snap = malloc(bytes);
	memcpy(snap, ta, bytes);
	a2 = a;
	rc = fb_cuckoo_union(ta, &a, tb, &b, why, sizeof(why), &err);
	ASSERT_TRUE(
		rc == -1 && !memcmp(snap, ta, bytes) && !memcmp(&a2, &a, sizeof(a)),
		"cuckoo union: a union beyond the table's capacity is refused, nothing changed");
	b.fp_bits = 16;
	rc = fb_cuckoo_union(ta, &a, tb, &b, why, sizeof(why), &err);
	ASSERT_TRUE(rc == -3 && strstr(why, "differ"), "cuckoo union: other geometry refused");
	free(snap);
	free(ta);
	free(tb);
}

/* Fill a table of nb buckets until an add fails; the load at that point. */
static double cuckoo_max_load(unsigned fp_bits, __u32 nb, bool *unchanged, long *miss)
{
	struct fb_cuckoo_geom g = { .nbuckets = nb, .fp_bits = fp_bits }, gs;
	struct fb_block *t = zalloc_blocks(fb_cuckoo_blocks(&g)), *snap;
	size_t bytes = fb_cuckoo_blocks(&g) * FB_BLOCK_BYTES, i = 0, step = 256, j;
	struct fb_batch_err err;
	double load;

	snap = malloc(bytes);
	/* Batches of 256 until one is refused, then one by one. */
	while (i + step <= N_ADD) {
		if (step > 1)
			memcpy(snap, t, bytes), gs = g;
		if (fb_cuckoo_add(t, &g, added + i, step, &err)) {
			if (step == 1)
				break;
			*unchanged = !memcmp(snap, t, bytes) && !memcmp(&gs, &g, sizeof(g));
			step = 1;
			continue;
		}
		i += step;
	}
	load = fb_cuckoo_load(&g);
	for (*miss = 0, j = 0; j < i; j++)
		*miss += !fb_cuckoo_lookup(t, &g, added[j]);
	free(snap);
	free(t);
	return load;
}

/* Every store of a relocation, applied one at a time: after each, every
 * flow stored before is still in one of its buckets (the data path's
 * probe without the sequence check). Then the worst split read of each
 * relocation: a reader that reads one bucket before the whole path and
 * the other after it. Store order cannot save that reader; the sequence
 * check does. */
static bool split_hit(const struct fb_block *before, const struct fb_block *after,
		      const struct fb_cuckoo_geom *g, __u64 h, int first)
{
	__u32 fp = fb_cuckoo_fp(h, g->fp_bits), i1 = fb_cuckoo_index(h, g->nbuckets);
	__u32 b[2] = { i1, fb_cuckoo_alt(i1, fp, g->nbuckets) };

	return fb_cuckoo_bucket_has(&before[fb_cuckoo_block(g, b[first])],
				    fb_cuckoo_offset(b[first], g->fp_bits), g->fp_bits, fp) ||
	       fb_cuckoo_bucket_has(&after[fb_cuckoo_block(g, b[!first])],
				    fb_cuckoo_offset(b[!first], g->fp_bits), g->fp_bits, fp);
}

static void cuckoo_store_order(void)
{
	struct fb_cuckoo_geom g = { .nbuckets = 64, .fp_bits = 16 };
	size_t bytes = fb_cuckoo_blocks(&g) * FB_BLOCK_BYTES, n, i, s;
	struct fb_block *t = zalloc_blocks(fb_cuckoo_blocks(&g)), *before = malloc(bytes);
	long hidden = 0, moves = 0, split_miss = 0, seq_miss = 0;

	for (n = 0; n < 250; n++) {
		struct fb_plan p;
		struct fb_cuckoo_geom gp = g;
		__u32 s0 = g.seq;

		memcpy(before, t, bytes);
		fb_plan_init(&p, t, fb_cuckoo_bucket_shift(g.fp_bits));
		if (fb_cuckoo_plan_add(&p, &g, &added[n], 1, NULL)) {
			fb_plan_free(&p);
			break;
		}
		moves += p.nlog > 2;
		for (s = 0; s < p.nlog; s++) {
			struct fb_plan one = p;

			one.log = &p.log[s];
			one.nlog = 1;
			fb_plan_apply(&one);
			gp.seq = 0; /* probe on bucket contents alone */
			for (i = 0; i < n; i++)
				hidden += !fb_cuckoo_lookup_mem(t, &gp, added[i]);
		}
		for (i = 0; i < n; i++) {
			int first;

			for (first = 0; first < 2; first++) {
				bool hit = split_hit(before, t, &g, added[i], first);

				split_miss += !hit;
				seq_miss += !(hit || s0 != g.seq || (s0 & 1));
			}
		}
		fb_plan_free(&p);
	}
	snprintf(label, sizeof(label),
		 "cuckoo: store by store through %ld relocations up to load %.2f, no stored flow "
		 "is ever missing",
		 moves, (double)n / 256);
	ASSERT_TRUE(hidden == 0 && moves > 10, label);
	snprintf(label, sizeof(label),
		 "cuckoo: a reader splitting its two bucket reads across a relocation would miss "
		 "%ld moved flows; with the sequence check it misses none",
		 split_miss);
	ASSERT_TRUE(split_miss > 0 && seq_miss == 0, label);
	free(before);
	free(t);
}

/* A reader thread probing stored flows while the writer adds and deletes
 * others one at a time around load 0.95, so stored flows keep being
 * relocated under the reader. */
struct race {
	struct fb_block *t;
	struct fb_cuckoo_geom *g;
	size_t stable;
	volatile int stop, started;
	long probes, miss, raw_miss;
};

static void *reader(void *arg)
{
	struct race *r = arg;
	uint64_t seed = 42;

	r->started = 1;
	while (!r->stop) {
		size_t i = test_rand64(&seed) % r->stable;
		struct fb_cuckoo_geom raw = *r->g;

		r->miss += !fb_cuckoo_lookup_mem(r->t, r->g, added[i]);
		raw.seq = 0;
		r->raw_miss += !fb_cuckoo_lookup_mem(r->t, &raw, added[i]);
		r->probes++;
	}
	return NULL;
}

static void cuckoo_race(void)
{
	struct fb_cuckoo_geom g = { .nbuckets = 1024, .fp_bits = 16 };
	struct race r = { .t = zalloc_blocks(fb_cuckoo_blocks(&g)), .g = &g, .stable = 2048 };
	size_t i, top = 0, rounds = 0;
	pthread_t th;

	fb_cuckoo_add(r.t, &g, added, r.stable, NULL);
	pthread_create(&th, NULL, reader, &r);
	while (!r.started)
		usleep(1000);
	for (rounds = 0; rounds < 40; rounds++) {
		for (i = r.stable; i < N_ADD; i++)
			if (fb_cuckoo_add(r.t, &g, &added[i], 1, NULL))
				break;
		top = i;
		for (i = r.stable; i < top; i++)
			fb_cuckoo_del(r.t, &g, &added[i], 1, NULL);
	}
	r.stop = 1;
	pthread_join(th, NULL);
	snprintf(label, sizeof(label),
		 "cuckoo: a concurrent reader never misses a stored flow (%ld probes during %u "
		 "relocation paths up to load %.3f; %ld probes saw a flow in neither bucket and "
		 "answered by the sequence check)",
		 r.probes, g.seq / 2, (double)top / 4096, r.raw_miss);
	ASSERT_TRUE(r.miss == 0 && r.probes > 10000 && g.seq > 1000, label);
	free(r.t);
}

/* ---- d-left ---- */

static void dleft_fp(double *bits_per_item, double *fpr_out)
{
	struct fb_dleft_geom g;
	struct fb_dleft_stats st;
	struct fb_batch_err err;
	struct fb_block *t;
	long miss = 0, fp = 0, rc = 0;
	size_t i;
	double want, got;

	ASSERT_EQ(fb_dleft_size(N_ADD, 0.01, &g), 0, "d-left: sized for 100k at 1 %");
	t = zalloc_blocks(fb_dleft_blocks(&g));
	for (i = 0; i < N_ADD; i += 10000)
		rc |= fb_dleft_add(t, &g, added + i, 10000, &err);
	ASSERT_EQ(rc, 0, "d-left: 100k flows added in batches of 10k");
	for (i = 0; i < N_ADD; i++)
		miss += !fb_dleft_lookup(t, &g, added[i]);
	ASSERT_EQ(miss, 0, "d-left: no false negative among 100k");
	fb_dleft_stats(t, &g, &st);
	for (i = 0; i < N_PROBE; i++)
		fp += fb_dleft_lookup(t, &g, probes[i]) != 0;
	got = (double)fp / N_PROBE;
	want = fb_dleft_fpr(&g, st.used);
	snprintf(label, sizeof(label),
		 "d-left B=2^%u r=%u: fp rate %.6f within 15%%* of 1-(1-2^-(b+r))^n = %.6f",
		 g.bucket_bits, g.rem_bits, got, want);
	ASSERT_TRUE(near(got, want, 0.15, N_PROBE), label);
	printf("d-left: 4 x 2^%u buckets of 8 %u-bit cells, r=%u, cell load %.3f, fullest bucket "
	       "%d, fp %.6f (formula %.6f)\n",
	       g.bucket_bits, g.cell_bits, g.rem_bits, (double)st.used / st.cells,
	       st.load[8]   ? 8
	       : st.load[7] ? 7
			    : 6,
	       got, want);
	*bits_per_item = fb_dleft_blocks(&g) * 512.0 / N_ADD;
	*fpr_out = got;

	/* Repeated adds count; deletes lower; the rest stay. */
	fb_dleft_add(t, &g, added, 1, NULL);
	ASSERT_EQ(fb_dleft_lookup(t, &g, added[0]), 2, "d-left: a flow added twice counts 2");
	rc = fb_dleft_del(t, &g, added, N_ADD / 2, &err);
	ASSERT_EQ(rc, 0, "d-left: delete 50k flows");
	ASSERT_EQ(fb_dleft_lookup(t, &g, added[0]), 1, "d-left: added twice, deleted once: 1");
	for (miss = 0, i = N_ADD / 2; i < N_ADD; i++)
		miss += !fb_dleft_lookup(t, &g, added[i]);
	ASSERT_EQ(miss, 0, "d-left: no false negative among the 50k kept after deletes");
	free(t);
}

static void dleft_rules(void)
{
	struct fb_dleft_geom g = { .bucket_bits = 6, .rem_bits = 14, .cell_bits = 16 }, gs;
	struct fb_block *t = zalloc_blocks(fb_dleft_blocks(&g)), *snap;
	size_t bytes = fb_dleft_blocks(&g) * FB_BLOCK_BYTES, i;
	struct fb_batch_err err;
	long wrong = 0;
	__u64 batch[3], absent = 0;
	int x, c, rc;

	/* Least loaded, leftmost on ties: predict each flow's subtable from
	 * the loads before its add, then find where it went. */
	for (i = 0; i < 1500; i++) {
		__u32 j[FB_DLEFT_D], rem[FB_DLEFT_D];
		int load[FB_DLEFT_D], best = 0, where = -1;
		const unsigned char *base = (const unsigned char *)t;

		if (fb_dleft_lookup(t, &g, added[i]))
			continue;
		for (x = 0; x < FB_DLEFT_D; x++) {
			fb_dleft_place(added[i], &g, x, &j[x], &rem[x]);
			load[x] = 0;
			for (c = 0; c < FB_DLEFT_CELLS; c++) {
				__u16 cell;

				memcpy(&cell, base + ((((__u64)x << 6) + j[x]) << 4) + 2 * c, 2);
				load[x] += (cell & 3) != 0;
			}
			if (load[x] < load[best])
				best = x;
		}
		if (load[best] == FB_DLEFT_CELLS)
			break;
		fb_dleft_add(t, &g, &added[i], 1, NULL);
		for (x = 0; x < FB_DLEFT_D && where < 0; x++)
			if (fb_dleft_bucket_count(&t[fb_dleft_block(&g, x, j[x])],
						  fb_dleft_offset(&g, x, j[x]), 16, rem[x]))
				where = x;
		wrong += where != best;
	}
	snprintf(label, sizeof(label),
		 "d-left: each of %zu flows went to its least loaded bucket, leftmost on ties", i);
	ASSERT_EQ(wrong, 0, label);
	/* Full: the batch that overflows is refused whole. */
	snap = malloc(bytes);
	memcpy(snap, t, bytes);
	gs = g;
	rc = fb_dleft_add(t, &g, added + 1500, 2000, &err);
	ASSERT_TRUE(rc == -1 && !memcmp(snap, t, bytes) && !memcmp(&gs, &g, sizeof(g)),
		    "d-left: a batch that overflows a bucket is refused, nothing changed");
	printf("d-left: refused at cell load %.3f (flow %zu of the batch)\n", err.load, err.bad);
	for (i = 0; i < N_PROBE && !absent; i++)
		if (!fb_dleft_lookup(t, &g, probes[i]))
			absent = probes[i];
	batch[0] = added[0];
	batch[1] = absent;
	rc = fb_dleft_del(t, &g, batch, 2, &err);
	ASSERT_TRUE(rc == -1 && err.bad == 1 && !memcmp(snap, t, bytes),
		    "d-left: a delete batch with an absent flow is refused, nothing changed");
	/* Saturation: added 4 times, the 2-bit counter stays at 3 forever. */
	batch[0] = batch[1] = batch[2] = added[0];
	fb_dleft_add(t, &g, batch, 3, NULL);
	fb_dleft_del(t, &g, batch, 3, NULL);
	fb_dleft_del(t, &g, batch, 1, NULL);
	ASSERT_EQ(fb_dleft_lookup(t, &g, added[0]), 3,
		  "d-left: a saturated counter is never lowered (no false negative)");
	free(snap);
	free(t);
}

static double dleft_max_load(void)
{
	struct fb_dleft_geom g = { .bucket_bits = 12, .rem_bits = 14, .cell_bits = 16 };
	struct fb_block *t = zalloc_blocks(fb_dleft_blocks(&g));
	struct fb_dleft_stats st;
	size_t i;

	for (i = 0; i < N_ADD; i++)
		if (fb_dleft_add(t, &g, &added[i], 1, NULL))
			break;
	fb_dleft_stats(t, &g, &st);
	free(t);
	return (double)st.used / st.cells;
}

/* ---- scalable ---- */

static void scalable(double *bits_per_item, double *fpr_out)
{
	struct fb_sbf_geom g;
	struct fb_batch_err err;
	__u64 avail, need = 0;
	struct fb_block *t;
	long miss = 0, fp = 0, rc = 0, grown = 0;
	size_t i, j;
	double got;

	ASSERT_EQ(fb_sbf_init(&g, 10000, 0.01, 0), 0, "scalable: stage 0 for 10k, P = 1 %");
	avail = fb_sbf_end_block(&g);
	t = zalloc_blocks(avail);
	for (i = 0; i < N_ADD; i += 5000) {
		rc = fb_sbf_add(t, avail, &g, added + i, 5000, &need, &err);
		if (rc == -3) {
			/* What the CLI does with a new map: larger, old bits kept. */
			struct fb_block *bigger = zalloc_blocks(need);

			memcpy(bigger, t, avail * FB_BLOCK_BYTES);
			free(t);
			t = bigger;
			avail = need;
			grown++;
			rc = fb_sbf_add(t, avail, &g, added + i, 5000, &need, &err);
		}
		if (rc)
			break;
		for (j = 0; j < i + 5000; j++)
			miss += !fb_sbf_lookup(t, &g, added[j]);
	}
	ASSERT_EQ(rc, 0, "scalable: 100k flows added in batches of 5k, growing");
	ASSERT_EQ(miss, 0, "scalable: no false negative after any batch, across growth");
	snprintf(label, sizeof(label),
		 "scalable: %u stages for 100k flows from 10k (grown %ld times)", g.nstages, grown);
	ASSERT_EQ(g.nstages, 4, label);
	for (i = 0; i < N_PROBE; i++)
		fp += fb_sbf_lookup(t, &g, probes[i]);
	got = (double)fp / N_PROBE;
	snprintf(label, sizeof(label), "scalable: fp rate %.6f below the bound P0/(1-r) = %.6f",
		 got, fb_sbf_bound(&g));
	ASSERT_TRUE(got <= fb_sbf_bound(&g), label);
	snprintf(label, sizeof(label),
		 "scalable: fp rate %.6f within 15%%* of 1-prod(1-p_i(n_i)) = %.6f", got,
		 fb_sbf_fpr(&g));
	ASSERT_TRUE(near(got, fb_sbf_fpr(&g), 0.15, N_PROBE), label);
	for (i = 0; i < g.nstages; i++)
		printf("scalable stage %zu: %u blocks, k=%u, capacity %llu, flows %llu, rate "
		       "%.6f\n",
		       i, g.stage[i].nblocks, g.stage[i].k, (unsigned long long)g.stage[i].capacity,
		       (unsigned long long)g.stage[i].count, g.stage[i].fp_ppb * 1e-9);
	printf("scalable: fp %.6f, expected %.6f, bound %.6f\n", got, fb_sbf_fpr(&g),
	       fb_sbf_bound(&g));
	/* Flows the filter already (falsely) held were not added again: the
	 * count is the flows added, fewer than 100k by about the rate. */
	snprintf(label, sizeof(label),
		 "scalable: counts %llu flows added (the rest were already matching)",
		 (unsigned long long)fb_sbf_count(&g));
	ASSERT_RANGE(fb_sbf_count(&g), N_ADD * (1 - fb_sbf_bound(&g)), N_ADD, label);
	{
		__u64 before = fb_sbf_count(&g);

		rc = fb_sbf_add(t, avail, &g, added, N_ADD, &need, &err);
		ASSERT_TRUE(rc == 0 && fb_sbf_count(&g) == before,
			    "scalable: re-adding the same flows adds nothing");
	}
	*bits_per_item = fb_sbf_end_block(&g) * 512.0 / N_ADD;
	*fpr_out = got;
	free(t);
}

static void scalable_limit(void)
{
	struct fb_sbf_geom g, gs;
	struct fb_batch_err err;
	__u64 need = 0, avail;
	struct fb_block *t;
	int rc;

	fb_sbf_init(&g, 100, 0.01, 0);
	avail = 1 << 16;
	t = zalloc_blocks(avail);
	/* 8 stages hold 100 * (2^8 - 1) = 25500 flows. */
	rc = fb_sbf_add(t, avail, &g, added, 25000, &need, &err);
	ASSERT_TRUE(rc == 0 && g.nstages == 8, "scalable: 25k flows from 100 fill 8 stages");
	gs = g;
	rc = fb_sbf_add(t, avail, &g, added + 25000, 1000, &need, &err);
	ASSERT_TRUE(rc == -1 && !memcmp(&gs, &g, sizeof(g)),
		    "scalable: a batch needing a 9th stage is refused, nothing changed");
	free(t);
}

/* ---- set algebra ---- */

struct bloom {
	struct fb_block *blocks;
	__u8 *cnt;
	struct fb_bloom_mem m;
};

static void bloom_new(struct bloom *b, __u8 layout, __u32 nblocks, __u8 k, bool counting)
{
	b->blocks = zalloc_blocks(FB_HDR_BLOCKS + nblocks);
	b->cnt = counting ? calloc((size_t)nblocks * FB_BLOCK_BITS / 2, 1) : NULL;
	b->m = (struct fb_bloom_mem){ .hdr = (struct fb_header *)b->blocks,
				      .blocks = b->blocks,
				      .cnt = b->cnt,
				      .cnt_bits = 4 };
	b->m.hdr->layout = layout;
	b->m.hdr->hash = FB_HASH_SIPHASH13;
	b->m.hdr->k = k;
	b->m.hdr->nblocks = nblocks;
	b->m.hdr->key[0] = hkey[0];
	b->m.hdr->key[1] = hkey[1];
}

static void bloom_free(struct bloom *b)
{
	free(b->blocks);
	free(b->cnt);
}

/* Adds as user/filter.c and user/counting.c do, from the shared geometry. */
static void bloom_add(struct bloom *b, __u64 h)
{
	const struct fb_header *hd = b->m.hdr;
	__u64 pos[FB_MAX_K];
	__u32 i;

	fb_positions(h, hd->layout, hd->nblocks, hd->k, pos);
	for (i = 0; i < hd->k; i++) {
		b->blocks[fb_bit_block(pos[i])].w[fb_bit_word(pos[i])] |= fb_bit_mask(pos[i]);
		if (b->cnt) {
			__u8 *c = &b->cnt[pos[i] / 2];
			unsigned sh = (pos[i] & 1) * 4, v = (*c >> sh) & 0xf;

			if (v < 15)
				*c = (*c & ~(0xf << sh)) | (v + 1) << sh;
		}
	}
}

/* The data path's probe (bpf/filter.bpf.h) over memory. */
static bool bloom_probe(const struct bloom *b, __u64 h)
{
	const struct fb_header *hd = b->m.hdr;
	__u32 i;
	int w;

	if (hd->layout == FB_LAYOUT_CLASSIC) {
		for (i = 0; i < hd->k; i++) {
			__u64 p = fb_classic_bit(h, i, fb_header_mbits(hd));

			if (!(b->blocks[fb_bit_block(p)].w[fb_bit_word(p)] & fb_bit_mask(p)))
				return false;
		}
		return true;
	}
	for (w = 0; w < FB_BLOCK_WORDS; w++) {
		__u64 m = fb_blocked_word_mask(h, hd->k, w);

		if ((b->blocks[FB_HDR_BLOCKS + fb_blocked_index(h, hd->nblocks)].w[w] & m) != m)
			return false;
	}
	return true;
}

static bool same_bits(const struct bloom *a, const struct bloom *b)
{
	size_t n = (size_t)a->m.hdr->nblocks;

	return !memcmp(&a->blocks[FB_HDR_BLOCKS], &b->blocks[FB_HDR_BLOCKS], n * FB_BLOCK_BYTES) &&
	       (!a->cnt || !memcmp(a->cnt, b->cnt, n * FB_BLOCK_BITS / 2));
}

static void algebra(__u8 layout, const char *name)
{
	/* A = flows 0..60k, B = 40k..100k: 20k shared. 4096 blocks (2 Mbit),
	 * k = 7: about 1.4 % for 100k flows. */
	struct bloom a, b, u, x, half;
	char why[160];
	struct fb_sa_est e;
	long miss = 0;
	size_t i;
	int rc;

	bloom_new(&a, layout, 4096, 7, true);
	bloom_new(&b, layout, 4096, 7, true);
	bloom_new(&u, layout, 4096, 7, true);
	bloom_new(&half, layout, 2048, 7, true);
	for (i = 0; i < 60000; i++)
		bloom_add(&a, added[i]);
	for (i = 40000; i < N_ADD; i++)
		bloom_add(&b, added[i]);
	for (i = 0; i < N_ADD; i++)
		bloom_add(&u, added[i]);
	for (i = 40000; i < 60000; i++)
		bloom_add(&u, added[i]); /* the multiset union: shared flows twice */
	for (i = 0; i < 60000; i++)
		bloom_add(&half, added[i]);

	rc = fb_sa_estimate(&a.m, &b.m, &e, why, sizeof(why));
	printf("%s estimates: |A| %.0f (60000), |B| %.0f (60000), |A u B| %.0f (100000), "
	       "|A n B| %.0f (20000), Jaccard %.4f (0.2000)\n",
	       name, e.a, e.b, e.uni, e.inter, e.jaccard);
	snprintf(label, sizeof(label), "%s: |A u B| estimate within 2 %%", name);
	ASSERT_TRUE(rc == 0 && fabs(e.uni - 100000) <= 2000, label);
	snprintf(label, sizeof(label), "%s: |A n B| estimate within 5 %%, Jaccard within 0.01",
		 name);
	ASSERT_TRUE(fabs(e.inter - 20000) <= 1000 && fabs(e.jaccard - 0.2) <= 0.01, label);

	/* Union: bit for bit (and counter for counter) the filter of the
	 * union; still the probe finds everything. */
	rc = fb_sa_union(&a.m, &b.m, why, sizeof(why));
	snprintf(label, sizeof(label),
		 "%s: union of A and B is bit-identical to the filter of "
		 "A u B (counters: saturating sum)",
		 name);
	ASSERT_TRUE(rc == 0 && same_bits(&a, &u), label);

	/* Intersection: every shared flow found. Rebuild A first. */
	bloom_free(&a);
	bloom_new(&a, layout, 4096, 7, true);
	for (i = 0; i < 60000; i++)
		bloom_add(&a, added[i]);
	bloom_new(&x, layout, 4096, 7, true);
	memcpy(x.blocks, a.blocks, (FB_HDR_BLOCKS + 4096) * (size_t)FB_BLOCK_BYTES);
	memcpy(x.cnt, a.cnt, 4096 * FB_BLOCK_BITS / 2);
	rc = fb_sa_intersect(&x.m, &b.m, why, sizeof(why));
	for (i = 40000; i < 60000; i++)
		miss += !bloom_probe(&x, added[i]);
	snprintf(label, sizeof(label), "%s: intersection holds all 20k shared flows", name);
	ASSERT_TRUE(rc == 0 && miss == 0, label);

	/* Fold: A halved is bit-identical to A built at half the size, and
	 * the standard probe with the halved geometry finds every flow. */
	rc = fb_sa_fold(&a.m, why, sizeof(why));
	for (miss = 0, i = 0; i < 60000; i++)
		miss += !bloom_probe(&a, added[i]);
	snprintf(label, sizeof(label),
		 "%s: folded filter: no false negative through the probe "
		 "with nblocks/2",
		 name);
	ASSERT_TRUE(rc == 0 && a.m.hdr->nblocks == 2048 && miss == 0, label);
	snprintf(label, sizeof(label),
		 "%s: folded filter is bit-identical to one built at half "
		 "size (counters too)",
		 name);
	ASSERT_TRUE(same_bits(&a, &half), label);

	/* Refusals, with the reason. */
	rc = fb_sa_union(&a.m, &b.m, why, sizeof(why));
	snprintf(label, sizeof(label), "%s: union of filters of different sizes refused (%s)", name,
		 why);
	ASSERT_TRUE(rc == -1 && strstr(why, "sizes differ"), label);
	b.m.hdr->key[0] ^= 1;
	rc = fb_sa_intersect(&u.m, &b.m, why, sizeof(why));
	snprintf(label, sizeof(label), "%s: intersection with another hash key refused (%s)", name,
		 why);
	ASSERT_TRUE(rc == -1 && strstr(why, "keys differ"), label);
	b.m.hdr->key[0] ^= 1;
	b.m.hdr->nblocks = 4095;
	rc = fb_sa_fold(&b.m, why, sizeof(why));
	snprintf(label, sizeof(label), "%s: fold of 4095 blocks refused (%s)", name, why);
	ASSERT_TRUE(rc == -1, label);
	b.m.hdr->nblocks = 4096;
	bloom_free(&a);
	bloom_free(&b);
	bloom_free(&u);
	bloom_free(&x);
	bloom_free(&half);
}

static void cardinality(__u8 layout, const char *name)
{
	static const size_t ns[] = { 100, 1000, 10000, 30000, 60000, 100000 };
	struct bloom f;
	__u32 nblocks;
	__u8 k;
	double worst = 0;
	size_t i = 0, j;

	if (layout == FB_LAYOUT_CLASSIC)
		fb_size_classic(N_ADD, 0.01, &nblocks, &k);
	else
		fb_size_blocked(N_ADD, 0.01, &nblocks, &k);
	bloom_new(&f, layout, nblocks, k, false);
	for (j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
		double est, err;

		for (; i < ns[j]; i++)
			bloom_add(&f, added[i]);
		est = fb_sa_cardinality(&f.m);
		err = fabs(est - ns[j]) / ns[j];
		worst = fmax(worst, err);
		printf("%s cardinality: %zu flows -> %.1f (%+.2f %%)\n", name, ns[j], est,
		       100 * (est - ns[j]) / ns[j]);
	}
	snprintf(label, sizeof(label),
		 "%s (sized for 100k at 1 %%): cardinality within 2 %% from 100 to 100k flows "
		 "(worst %.2f %%)",
		 name, 100 * worst);
	ASSERT_TRUE(worst <= 0.02, label);
	bloom_free(&f);
}

/* ---- space ---- */

static void space_table(const double meas[4][2])
{
	static const double rates[] = { 0.01, 0.001, 0.0001 };
	size_t i;

	printf("\nbits per flow at equal fp rate (design load; 'stored' = as laid out here)\n");
	printf("%-8s %10s %10s %10s %10s %10s %10s\n", "rate", "cbf-4bit", "blocked", "dleft",
	       "dleft-st", "cuckoo", "cuckoo-st");
	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		double p = rates[i], cbf = 4 * fb_classic_mbits(1, p);
		struct fb_cuckoo_geom cg;
		__u32 nb;
		__u8 k;
		double blocked, dl, dls, ck, cks;
		unsigned r;

		fb_size_blocked(1e6, p, &nb, &k);
		blocked = nb * 512.0 / 1e6;
		/* d-left at its design load, 6 flows per bucket of 8 cells:
		 * n / B = 4 * 6 = 24, and the rate n / (B 2^r) <= p gives r;
		 * a cell is r + 2 bits (packed) or 16/32 (stored). */
		for (r = 1; 24.0 / ldexp(1, r) > p; r++)
			;
		dl = (r + 2) * 8.0 / 6;
		dls = (r + 2 <= 16 ? 16 : 32) * 8.0 / 6;
		cg.fp_bits = fb_cuckoo_fp_bits_for(p);
		/* The fewest bits f (not only 8/12/16/32) reaching p at 95 %. */
		for (r = 1; - expm1(8 * 0.95 * log1p(-1 / (ldexp(1, r) - 1))) > p; r++)
			;
		ck = r / FB_CUCKOO_DESIGN_LOAD;
		cks = 8.0 * fb_cuckoo_slot_bytes(cg.fp_bits) / FB_CUCKOO_DESIGN_LOAD;
		printf("%-8g %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", p, cbf, blocked, dl, dls,
		       ck, cks);
		if (i == 0) {
			snprintf(label, sizeof(label),
				 "space at 1 %%: d-left %.1f < counting Bloom %.1f bits/flow, "
				 "cuckoo "
				 "%.1f < d-left",
				 dl, cbf, ck);
			ASSERT_TRUE(dl < cbf && ck < dl, label);
		}
	}
	printf("measured at 100k flows (tables as sized by create, powers of two):\n");
	printf("  cuckoo f=12: %.2f bits/flow, fp %.5f; d-left (1 %%): %.2f bits/flow, fp %.5f; "
	       "scalable (1 %%, from 10k): %.2f bits/flow, fp %.5f; counting Bloom 4-bit (1 %%, "
	       "classic): %.2f bits/flow, fp 0.01 by formula\n",
	       meas[0][0], meas[0][1], meas[1][0], meas[1][1], meas[2][0], meas[2][1],
	       4 * fb_classic_mbits(1, 0.01));
	printf("\n");
}

/* ---- the data path's probes: same slots in BPF ---- */

static int run_key(int prog, const struct fb_key *k)
{
	unsigned char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));

	memcpy(pkt, k, sizeof(*k));
	if (bpf_prog_test_run_opts(prog, &o))
		return -1;
	return o.retval;
}

static void bpf_same(const char *dir)
{
	char path[600];
	struct bpf_object *obj;
	struct tc_geom *g;
	struct fb_block *t;
	int prog, type;
	size_t tbytes = (size_t)TC_TABLE_BLOCKS * FB_BLOCK_BYTES;

	snprintf(path, sizeof(path), "%s/../types_check.bpf.o", dir);
	obj = bpf_object__open_file(path, NULL);
	if (!obj || bpf_object__load(obj)) {
		ASSERT_TRUE(0, "load tests/types_check.bpf.o (the three probes pass the verifier)");
		return;
	}
	ASSERT_TRUE(1, "tests/types_check.bpf.o: the cuckoo, d-left and scalable probes pass the "
		       "verifier");
	prog = bpf_program__fd(bpf_object__find_program_by_name(obj, "types_check"));
	g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(bpf_object__find_map_by_name(obj, "tc_geom")), 0);
	t = mmap(NULL, tbytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(bpf_object__find_map_by_name(obj, "tc_table")), 0);
	if (!ASSERT_TRUE(g != MAP_FAILED && t != MAP_FAILED, "mmap the test maps"))
		goto out;
	g->hash = FB_HASH_SIPHASH13;
	g->key[0] = hkey[0];
	g->key[1] = hkey[1];
	for (type = TC_CUCKOO; type <= TC_SCALABLE; type++) {
		static const char *const names[] = { "", "cuckoo", "d-left", "scalable" };
		const size_t nadd = 20000, nprobe = 50000;
		long missing = 0, disagree = 0, errors = 0, fp = 0;
		__u64 need;
		size_t i;
		int rc = -1;

		memset(t, 0, tbytes);
		memset(&g->c, 0, sizeof(g->c) + sizeof(g->d) + sizeof(g->s));
		g->type = type;
		/* Filled in place through the mmap, by the user-space code,
		 * with the table from block 1 (block 0 stands for a header). */
		if (type == TC_CUCKOO) {
			g->c = (struct fb_cuckoo_geom){ .first_block = 1,
							.nbuckets = 8192,
							.fp_bits = 12 };
			rc = fb_cuckoo_add(t, &g->c, added, nadd, NULL);
		} else if (type == TC_DLEFT) {
			g->d = (struct fb_dleft_geom){
				.first_block = 1, .bucket_bits = 10, .rem_bits = 10, .cell_bits = 16
			};
			rc = fb_dleft_add(t, &g->d, added, nadd, NULL);
		} else {
			fb_sbf_init(&g->s, 2000, 0.02, 1);
			rc = fb_sbf_add(t, TC_TABLE_BLOCKS, &g->s, added, nadd, &need, NULL);
		}
		snprintf(label, sizeof(label), "%s: 20k flows added through the mmap", names[type]);
		if (!ASSERT_EQ(rc, 0, label))
			continue;
		for (i = 0; i < nadd; i++) {
			int v = run_key(prog, &added_keys[i]);

			errors += v < 0;
			missing += v != XDP_DROP;
		}
		for (i = 0; i < nprobe; i++) {
			int v = run_key(prog, &probe_keys[i]);
			bool user = type == TC_CUCKOO  ? fb_cuckoo_lookup(t, &g->c, probes[i])
				    : type == TC_DLEFT ? fb_dleft_lookup(t, &g->d, probes[i]) != 0
						       : fb_sbf_lookup(t, &g->s, probes[i]);

			errors += v < 0;
			fp += v == XDP_DROP;
			disagree += (v == XDP_DROP) != user;
		}
		snprintf(label, sizeof(label),
			 "%s: the XDP program finds all 20k flows and agrees with user space on "
			 "50k others (%ld of them false positives)",
			 names[type], fp);
		ASSERT_TRUE(!missing && !disagree && !errors && fp > 0, label);
		{
			/* Cost of a whole run (key copy, SipHash-1-3, probe),
			 * one flow repeated: tables in cache. */
			unsigned char pkt[64] = { 0 };
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt,
				    .data_size_in = sizeof(pkt), .repeat = 200000);
			__u32 hit_ns, miss_ns;

			memcpy(pkt, &added_keys[0], sizeof(struct fb_key));
			bpf_prog_test_run_opts(prog, &o);
			hit_ns = o.duration;
			memcpy(pkt, &probe_keys[0], sizeof(struct fb_key));
			bpf_prog_test_run_opts(prog, &o);
			miss_ns = o.duration;
			printf("%s in XDP: %u ns per run on a hit, %u ns on a miss (hash + probe, "
			       "in cache)\n",
			       names[type], hit_ns, miss_ns);
		}
	}
out:
	if (g != MAP_FAILED)
		munmap(g, sizeof(*g));
	if (t != MAP_FAILED)
		munmap(t, tbytes);
	bpf_object__close(obj);
}

int main(int argc, char **argv)
{
	char dir[512];
	double meas[4][2], load;
	bool unchanged = false;
	long miss;
	unsigned f;

	(void)argc;
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(argv[0], '/') - argv[0]), argv[0]);
	libbpf_set_print(NULL);
	make_sets();
	test_geometry();
	test_checks();

	ASSERT_EQ(fb_cuckoo_fp_bits_for(0.03), 8, "cuckoo: 3 % takes 8-bit fingerprints");
	ASSERT_EQ(fb_cuckoo_fp_bits_for(0.01), 12, "cuckoo: 1 % takes 12-bit fingerprints");
	ASSERT_EQ(fb_cuckoo_fp_bits_for(0.001), 16, "cuckoo: 0.1 % takes 16-bit fingerprints");
	ASSERT_EQ(fb_cuckoo_fp_bits_for(1e-6), 32, "cuckoo: 1e-6 takes 32-bit fingerprints");
	cuckoo_fp(8, &meas[3][0], &meas[3][1]);
	cuckoo_fp(16, &meas[3][0], &meas[3][1]);
	cuckoo_fp(12, &meas[0][0], &meas[0][1]);
	cuckoo_refusals();
	cuckoo_union();
	for (f = 8; f <= 16; f += 4) {
		load = cuckoo_max_load(f, 1 << 14, &unchanged, &miss);
		printf("cuckoo f=%u: first refusal at load %.4f (2^14 buckets, b=4, %d kicks)\n", f,
		       load, FB_CUCKOO_MAX_KICKS);
		snprintf(label, sizeof(label),
			 "cuckoo f=%u: load factor %.4f >= 0.95 before the first refusal, which "
			 "changed nothing, no flow lost",
			 f, load);
		ASSERT_TRUE(load >= 0.95 && unchanged && miss == 0, label);
	}
	cuckoo_store_order();
	cuckoo_race();

	dleft_fp(&meas[1][0], &meas[1][1]);
	dleft_rules();
	load = dleft_max_load();
	printf("d-left: first overflow at cell load %.4f (4 x 2^12 buckets of 8 cells)\n", load);
	snprintf(label, sizeof(label),
		 "d-left: cell load %.4f >= 0.75 (the paper's 6 of 8) before the first overflow",
		 load);
	ASSERT_TRUE(load >= 0.75, label);

	scalable(&meas[2][0], &meas[2][1]);
	scalable_limit();

	algebra(FB_LAYOUT_BLOCKED, "blocked");
	algebra(FB_LAYOUT_CLASSIC, "classic");
	cardinality(FB_LAYOUT_BLOCKED, "blocked");
	cardinality(FB_LAYOUT_CLASSIC, "classic");

	space_table((const double(*)[2])meas);
	bpf_same(dir);
	return test_summary();
}
