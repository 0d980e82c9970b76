// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_types, cuckoo (user/lib/types/cuckoo_table.c): false-positive rate per fingerprint
 * width, refusals, union, the load of the first refused add, every store of
 * a relocation, a reader racing the writer.
 */
#include "types_test.h"

/* ---- cuckoo ---- */

void cuckoo_fp(unsigned fp_bits, double *bits_per_item, double *fpr_out)
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

void cuckoo_refusals(void)
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
void cuckoo_union(void)
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

/* A table sized for N flows takes N flows: for every table size create
 * picks up to 2048 buckets, the largest capacity it picks that size for
 * (the fullest such table: load 0.95 by the design rule alone), 100
 * tables of random flows, each filled with its capacity in one batch. */
void cuckoo_capacity(void)
{
	__u32 top[16] = { 0 }, n, lg;
	struct fb_cuckoo_geom g;
	uint64_t seed = 0xca9ac17e;
	long refused = 0, tables = 0;
	__u64 *h = malloc(8192 * sizeof(*h));
	int t;

	for (n = 1; n <= 8192; n++)
		if (!fb_cuckoo_size(n, 0.01, &g) && g.nbuckets <= 2048)
			top[__builtin_ctz(g.nbuckets)] = n;
	for (lg = 0; lg < 16; lg++) {
		long before = refused;

		for (t = 0; top[lg] && t < 100; t++, tables++) {
			struct fb_block *b;

			fb_cuckoo_size(top[lg], 0.01, &g);
			b = zalloc_blocks(fb_cuckoo_blocks(&g));
			for (n = 0; n < top[lg]; n++)
				h[n] = test_rand64(&seed);
			refused += fb_cuckoo_add(b, &g, h, top[lg], NULL) != 0;
			free(b);
		}
		if (top[lg])
			printf("cuckoo: capacity %u in %u buckets (load %.3f): %ld of 100 "
			       "refused\n",
			       top[lg], 1U << lg, top[lg] / (4.0 * (1U << lg)), refused - before);
	}
	snprintf(label, sizeof(label),
		 "cuckoo: every table sized for N flows (up to 2048 buckets, %ld tables at the "
		 "largest N of their size) takes N: %ld refused",
		 tables, refused);
	ASSERT_EQ(refused, 0, label);
	free(h);
}

/* A large table near its capacity. An add fails when no chain within the
 * search's reach ends at a free slot; how often that happens at a given
 * load does not depend on the table's size, so the chance that a table
 * meets one before its design load 0.95 grows with the flows it holds:
 * with a reach of 500 buckets, one of two tables of 2^26 buckets refused
 * at load 0.9494, under the capacity `create` promised. A 2^20-bucket
 * table filled to 0.962 meets such failures as often (about 15 expected
 * with 500): the reach must leave none there. */
void cuckoo_capacity_large(void)
{
	struct fb_cuckoo_geom g = { .first_block = 0, .nbuckets = 1U << 20, .fp_bits = 8 };
	__u64 slots = (__u64)FB_CUCKOO_SLOTS * g.nbuckets, want = (__u64)(0.962 * slots), n;
	struct fb_block *t = zalloc_blocks(fb_cuckoo_blocks(&g));
	uint64_t seed = 0x1a26e7ab;
	__u64 h[1024];
	long refused = 0;
	double first = 0;
	size_t i;

	for (n = 0; n < want; n += sizeof(h) / sizeof(h[0])) {
		for (i = 0; i < sizeof(h) / sizeof(h[0]); i++)
			h[i] = test_rand64(&seed);
		if (fb_cuckoo_add(t, &g, h, sizeof(h) / sizeof(h[0]), NULL)) {
			if (!refused++)
				first = fb_cuckoo_load(&g);
		}
	}
	snprintf(label, sizeof(label),
		 "cuckoo: a 2^20-bucket table takes flows to load %.3f, no batch refused "
		 "(%ld refused, the first at load %.4f; search reach %d buckets)",
		 fb_cuckoo_load(&g), refused, first, FB_CUCKOO_MAX_KICKS);
	ASSERT_EQ(refused, 0, label);
	free(t);
}

/* Fill a table of nb buckets until an add fails; the load at that point. */
double cuckoo_max_load(unsigned fp_bits, __u32 nb, bool *unchanged, long *miss)
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

/* Copies of h's fingerprint in its buckets. */
static unsigned copies(const struct fb_block *t, const struct fb_cuckoo_geom *g, __u64 h)
{
	__u32 fp = fb_cuckoo_fp(h, g->fp_bits), i1 = fb_cuckoo_index(h, g->nbuckets);
	__u32 b[2] = { i1, fb_cuckoo_alt(i1, fp, g->nbuckets) };
	unsigned n = 0, j, s, sb = fb_cuckoo_slot_bytes(g->fp_bits);

	for (j = 0; j < (b[1] == b[0] ? 1U : 2U); j++)
		for (s = 0; s < FB_CUCKOO_SLOTS; s++) {
			__u32 v = 0;

			memcpy(&v,
			       (const unsigned char *)&t[g->first_block] +
				       ((__u64)b[j] << fb_cuckoo_bucket_shift(g->fp_bits)) + s * sb,
			       sb);
			n += v == fp;
		}
	return n;
}

/* A writer killed after store s of an add, its chain then ended as the
 * next writer or check --repair ends it: every flow stored before holds
 * as many copies as it did before the add. */
static long killed_at(const struct fb_block *t, const struct fb_cuckoo_geom *g,
		      const struct fb_block *before, const struct fb_cuckoo_geom *g0, size_t n,
		      size_t bytes, struct fb_block *scratch)
{
	struct fb_cuckoo_geom gk = *g;
	long bad = 0;
	size_t i;

	memcpy(scratch, t, bytes);
	fb_cuckoo_end_chain(scratch, &gk);
	bad += gk.seq & 1;
	for (i = 0; i < n; i++)
		bad += copies(scratch, &gk, added[i]) != copies(before, g0, added[i]);
	return bad;
}

void cuckoo_store_order(void)
{
	struct fb_cuckoo_geom g = { .nbuckets = 64, .fp_bits = 16 };
	size_t bytes = fb_cuckoo_blocks(&g) * FB_BLOCK_BYTES, n, i, s;
	struct fb_block *t = zalloc_blocks(fb_cuckoo_blocks(&g)), *before = malloc(bytes);
	struct fb_block *scratch = malloc(bytes);
	long hidden = 0, moves = 0, split_miss = 0, seq_miss = 0, kills = 0, kill_bad = 0;

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
			struct fb_cuckoo_geom g0 = gp;

			one.log = &p.log[s];
			one.nlog = 1;
			fb_plan_apply(&one);
			gp.seq = 0; /* probe on bucket contents alone */
			for (i = 0; i < n; i++)
				hidden += !fb_cuckoo_lookup(t, &gp, added[i]);
			if (p.nlog > 2) {
				g0.seq = s0;
				kill_bad += killed_at(t, &g, before, &g0, n, bytes, scratch);
				kills++;
			}
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
	snprintf(label, sizeof(label),
		 "cuckoo: killed after each of %ld stores of relocations, the chain ended: every "
		 "flow holds the copies it held before (%ld differ)",
		 kills, kill_bad);
	ASSERT_TRUE(kills > 10 && kill_bad == 0, label);
	free(scratch);
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

		r->miss += !fb_cuckoo_lookup(r->t, r->g, added[i]);
		raw.seq = 0;
		r->raw_miss += !fb_cuckoo_lookup(r->t, &raw, added[i]);
		r->probes++;
	}
	return NULL;
}

void cuckoo_race(void)
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
