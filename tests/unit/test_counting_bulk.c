// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Bulk add and delete on counting filters (fb_counting_add_many,
 * fb_counting_del_many, fb_counting_check_dels, fb_counting_del_batch),
 * unit, no kernel: a blocked-layout batch is applied sorted by block, so
 * each is checked against the one-at-a-time path (fb_counting_add,
 * fb_counting_del, itself checked against an exact model in test_counting)
 * on a twin filter with the same key: the counters, bits and flow count
 * must come out byte for byte the same, with duplicate flows in a batch,
 * flows repeated until 4-bit counters saturate, k > 8 (positions repeated
 * within a flow). A delete batch the one-at-a-time path would stop at
 * flow j (a flow never added, or deleted once more than added, its copies
 * spread through the batch) is refused at j with no byte changed, the
 * journal included. The shapes cover every path of the sort (block index
 * of 0, 2, 3, 9 and 17 bits: one group or several, one bucket pass, then
 * zero, one or two passes inside a bucket; a refusal in a later group puts
 * the groups before back), batches sorted a chunk at a time (through a
 * test hook), a batch too sparse to sort, and the classic layout (input
 * order). A crash at any store of a sorted batch,
 * rolled back, leaves the filter as after some subset of the batch.
 */
#include "counting_test.h"
#include "types/counting_log.h"

struct bulkcfg {
	const char *name;
	const char *chunk; /* FLOWBLOOM_TEST_ORDER_CHUNK, or NULL */
	__u8 layout, k;
	__u32 nblocks;
	unsigned bits;
	unsigned pool;	 /* distinct flows drawn from */
	unsigned batch;	 /* flows per batch (duplicates included) */
	unsigned rounds; /* add/delete batches */
};

/* A random multiset of pool flows: mostly uniform, plus one flow repeated
 * 20 times (4-bit counters saturate). */
static void draw_batch(uint64_t *seed, const struct bulkcfg *cf, unsigned *pick, unsigned n)
{
	unsigned i, hot = test_rand64(seed) % cf->pool;

	for (i = 0; i < n; i++)
		pick[i] = i < 20 ? hot : test_rand64(seed) % cf->pool;
	for (i = n; i-- > 1;) { /* shuffle: the hot flow anywhere */
		unsigned j = test_rand64(seed) % (i + 1), t = pick[i];

		pick[i] = pick[j];
		pick[j] = t;
	}
}

/* The one-at-a-time path on y: the index of the first delete refused (y is
 * then as before the batch), or n if all went through. */
static size_t dels_one_by_one(struct fake *y, const struct fb_key *keys, size_t n)
{
	struct snap s;
	size_t i;

	snap_take(y, &s);
	for (i = 0; i < n; i++)
		if (fb_counting_del(&y->f, &keys[i]))
			break;
	if (i < n)
		snap_restore(y, &s);
	snap_free(&s);
	return i;
}

static bool same_content(const struct fake *x, const struct fake *y)
{
	struct snap s;
	bool same;

	snap_take(y, &s);
	same = snap_same_content(x, &s) && x->f.cnt_hdr->journal.op == FB_JOURNAL_IDLE;
	snap_free(&s);
	return same;
}

static void bulk_cfg(const struct bulkcfg *cf)
{
	uint64_t seed = 0xb01c + cf->nblocks + cf->k, s2;
	struct fb_key *pool = calloc(cf->pool, sizeof(*pool));
	struct fb_key *batch = calloc((size_t)cf->batch * cf->rounds + 1, sizeof(*batch));
	unsigned *mult = calloc(cf->pool, sizeof(*mult)), *left = calloc(cf->pool, sizeof(*left));
	unsigned *pick = calloc(cf->batch, sizeof(*pick));
	unsigned r, i, n, add_diff = 0, del_diff = 0, refused = 0, ref_bad = 0, accepted = 0;
	unsigned acc_diff = 0, sat = 0;
	struct fake x, y;
	char label[240];
	__u64 p;

	if (cf->chunk)
		setenv("FLOWBLOOM_TEST_ORDER_CHUNK", cf->chunk, 1);
	else
		unsetenv("FLOWBLOOM_TEST_ORDER_CHUNK");
	/* Twins: the same header and key (the same seed draws it). */
	s2 = seed;
	fake_init(&x, cf->layout, cf->k, cf->nblocks, cf->bits, &s2);
	s2 = seed;
	fake_init(&y, cf->layout, cf->k, cf->nblocks, cf->bits, &s2);
	seed = s2;
	for (i = 0; i < cf->pool; i++)
		test_random_flow(&seed, &pool[i], i & 1);
	for (r = 0; r < cf->rounds; r++) {
		size_t bad, want;
		int rc;

		/* Add a batch: bulk on x, one at a time on y. */
		draw_batch(&seed, cf, pick, cf->batch);
		for (i = 0; i < cf->batch; i++) {
			batch[i] = pool[pick[i]];
			mult[pick[i]]++;
		}
		fb_counting_add_many(&x.f, batch, cf->batch);
		for (i = 0; i < cf->batch; i++)
			fb_counting_add(&y.f, &batch[i]);
		add_diff += !same_content(&x, &y);

		/* A batch of deletes of flows present (each at most as often as
		 * it was added), through del_batch on even rounds and
		 * check_dels + del_many on odd ones. */
		for (i = n = 0; i < cf->pool && n < cf->batch / 2; i++) {
			unsigned j = test_rand64(&seed) % cf->pool, c;

			for (c = mult[j] / 2 + 1; c-- && mult[j] && n < cf->batch / 2; mult[j]--)
				batch[n++] = pool[j];
		}
		for (i = n; i-- > 1;) {
			unsigned j = test_rand64(&seed) % (i + 1);
			struct fb_key t = batch[i];

			batch[i] = batch[j];
			batch[j] = t;
		}
		want = dels_one_by_one(&y, batch, n);
		if (r & 1) {
			rc = fb_counting_check_dels(&x.f, batch, n, &bad);
			if (!rc)
				fb_counting_del_many(&x.f, batch, n);
		} else {
			rc = fb_counting_del_batch(&x.f, batch, n, &bad);
		}
		del_diff += want != n || rc || !same_content(&x, &y);

		/* A batch that may be refused: flows present, and at a random
		 * place a flow never added (odd rounds: refused unless all its
		 * counters are non-zero) or one more flow still present (even
		 * rounds). The one at a time path says where it stops, if at
		 * all. */
		memcpy(left, mult, cf->pool * sizeof(*left));
		for (i = n = 0; i < cf->batch / 4; i++) {
			unsigned j = test_rand64(&seed) % cf->pool;

			if (left[j]) {
				left[j]--;
				batch[n++] = pool[j];
			}
		}
		i = n ? test_rand64(&seed) % (n + 1) : 0;
		memmove(&batch[i + 1], &batch[i], (n - i) * sizeof(*batch));
		if (r == cf->rounds - 1) {
			/* Everything present, each as often as it was added,
			 * and one flow once more: refused only by counting the
			 * batch's own earlier deletes of it (its copies are
			 * spread through the batch), unless its counters are
			 * saturated or shared. */
			unsigned j, c;

			for (j = n = 0; j < cf->pool; j++)
				for (c = 0; c < mult[j]; c++)
					batch[n++] = pool[j];
			batch[n] = batch[test_rand64(&seed) % n];
			for (i = n; i-- > 1;) {
				unsigned t = test_rand64(&seed) % (i + 1);
				struct fb_key tk = batch[i];

				batch[i] = batch[t];
				batch[t] = tk;
			}
		} else if (r & 1) {
			test_random_flow(&seed, &batch[i], 0); /* never added */
		} else {
			unsigned j = test_rand64(&seed) % cf->pool, t;

			for (t = 0; t < cf->pool && !left[j]; t++)
				j = (j + 1) % cf->pool;
			batch[i] = pool[j]; /* mostly one still present */
		}
		n++;
		want = dels_one_by_one(&y, batch, n);
		if (want < n) {
			struct snap s;

			refused++;
			snap_take(&x, &s);
			rc = fb_counting_check_dels(&x.f, batch, n, &bad);
			ref_bad += rc != -1 || bad != want;
			rc = fb_counting_del_batch(&x.f, batch, n, &bad);
			/* Not a counter, bit or count changed, nor the per-flow
			 * journal (the batch journal closed with what it saved). */
			ref_bad += rc != -1 || bad != want || !snap_same_content(&x, &s) ||
				   memcmp(x.cmem, s.c, FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES);
			snap_free(&s);
		} else {
			/* Went through on y: the same on x, and the flows
			 * deleted are no longer counted as present. */
			accepted++;
			rc = fb_counting_del_batch(&x.f, batch, n, &bad);
			acc_diff += rc || !same_content(&x, &y);
			for (i = 0; i < n; i++) {
				unsigned j;

				for (j = 0; j < cf->pool; j++)
					if (!memcmp(&pool[j], &batch[i], sizeof(*batch)) &&
					    mult[j]) {
						mult[j]--;
						break;
					}
			}
		}
	}
	for (p = 0; p < mbits(&x.f); p++)
		sat += fb_counting_get(&x.f, p) == fb_counting_max(&x.f);

	snprintf(label, sizeof(label),
		 "%s: %u add batches of %u: bulk == one at a time, byte for byte", cf->name,
		 cf->rounds, cf->batch);
	ASSERT_EQ(add_diff, 0, label);
	snprintf(label, sizeof(label), "%s: delete batches of flows present: bulk == one at a time",
		 cf->name);
	ASSERT_EQ(del_diff, 0, label);
	snprintf(label, sizeof(label),
		 "%s: %u batches refused one at a time: refused at the same flow, no byte changed",
		 cf->name, refused);
	ASSERT_TRUE(refused > 0 && !ref_bad, label);
	snprintf(label, sizeof(label), "%s: %u batches with one more delete accepted: the same",
		 cf->name, accepted);
	ASSERT_TRUE(accepted > 0 && !acc_diff, label);
	if (cf->bits == 4) {
		snprintf(label, sizeof(label), "%s: some counters saturated (%u)", cf->name, sat);
		ASSERT_TRUE(sat > 0, label);
	}
	snprintf(label, sizeof(label), "%s: bits == (counters > 0) everywhere", cf->name);
	ASSERT_EQ(bits_vs_counters(&x.f), 0, label);
	fake_free(&x);
	fake_free(&y);
	free(pool);
	free(batch);
	free(mult);
	free(left);
	free(pick);
}

/* ---------------------------------------------------------------------- */
/* Crashes inside a sorted batch (x86-64): stop before each store into the */
/* filter's memory, as test_counting_crash does for one flow                */

static sigjmp_buf trap_env;
static volatile long trap_count, trap_stop;
static struct fake *volatile trap_fake;

static void trap_protect(int prot)
{
	mprotect(trap_fake->bmem, trap_fake->blen, prot);
	mprotect(trap_fake->cmem, trap_fake->clen, prot);
}

#if defined(__x86_64__)
#define TRAP_FLAG 0x100
static bool in_region(void *a, void *base, size_t len)
{
	return (char *)a >= (char *)base && (char *)a < (char *)base + len;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	if (!trap_fake || (!in_region(si->si_addr, trap_fake->bmem, trap_fake->blen) &&
			   !in_region(si->si_addr, trap_fake->cmem, trap_fake->clen))) {
		signal(sig, SIG_DFL); /* a real crash: fault again, for real */
		return;
	}
	if (trap_count == trap_stop)
		siglongjmp(trap_env, 1); /* the process dies before this store */
	trap_count++;
	trap_protect(PROT_READ | PROT_WRITE);
	uc->uc_mcontext.gregs[REG_EFL] |= TRAP_FLAG; /* step over the store */
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	uc->uc_mcontext.gregs[REG_EFL] &= ~(long long)TRAP_FLAG;
	trap_protect(PROT_READ);
}
#endif

/* The batch operation, stopped before its stop-th store; true if it ran to
 * the end. *stores: the stores made. */
static bool batch_until(struct fake *x, bool add, const struct fb_key *keys, size_t n, long stop,
			long *stores)
{
	volatile bool done = false;
	size_t bad;

	trap_fake = x;
	trap_count = 0;
	trap_stop = stop;
	if (!sigsetjmp(trap_env, 1)) {
		trap_protect(PROT_READ);
		if (add)
			fb_counting_add_many(&x->f, keys, n);
		else if (fb_counting_del_batch(&x->f, keys, n, &bad))
			abort(); /* the batch is one that was added */
		done = true;
	}
	trap_protect(PROT_READ | PROT_WRITE);
	/* A process that died there would not go on with its batch's part
	 * open: the one this process jumped out of is no one's now. */
	fb_cntlog_cur = NULL;
	*stores = trap_count;
	trap_fake = NULL;
	return done;
}

/*
 * A batch of 6 flows (one of them twice) is applied in block order, each
 * flow under its own journal entry: a crash anywhere, once rolled back,
 * must leave the filter as if some subset of the batch had been applied
 * one flow at a time (compared byte for byte with each of the 64 subsets,
 * applied to a copy), with check clean. A wrong key in the journal (the
 * sorted copy carries the keys) rolls back the wrong flow and matches none.
 */
static void crash_cfg(const char *name, __u32 nblocks, unsigned bits, unsigned background)
{
	enum { B = 6 };
	uint64_t seed = 0xc0b1 + nblocks + bits;
	struct fb_key keys[B], g;
	struct snap base, sub[1 << B];
	unsigned i, mask, op, points[2] = { 0 }, nomatch[2] = { 0 }, unclean[2] = { 0 };
	struct fake x;
	struct fb_check c;
	char label[240];
	long total, stores, stop;

	fake_init(&x, FB_LAYOUT_BLOCKED, 8, nblocks, bits, &seed);
	for (i = 0; i < background; i++) {
		test_random_flow(&seed, &g, i & 1);
		fb_counting_add(&x.f, &g);
	}
	for (i = 0; i < B; i++)
		test_random_flow(&seed, &keys[i], i & 1);
	keys[3] = keys[0];
	for (op = 0; op < 2; op++) { /* 0: add the batch, 1: delete it again */
		bool add = !op;

		snap_take(&x, &base);
		for (mask = 0; mask < 1 << B; mask++) {
			for (i = 0; i < B; i++)
				if (mask & 1U << i) {
					if (add)
						fb_counting_add(&x.f, &keys[i]);
					else
						fb_counting_del(&x.f, &keys[i]);
				}
			snap_take(&x, &sub[mask]);
			snap_restore(&x, &base);
		}
		if (!batch_until(&x, add, keys, B, LONG_MAX, &total) || total < 10) {
			test_skip(name, "store trapping does not work here");
			for (mask = 0; mask < 1 << B; mask++)
				snap_free(&sub[mask]);
			snap_free(&base);
			break;
		}
		for (stop = 0; stop < total; stop++) {
			snap_restore(&x, &base);
			if (batch_until(&x, add, keys, B, stop, &stores))
				continue;
			points[op]++;
			fb_counting_recover(&x.f);
			for (mask = 0; mask < 1 << B; mask++)
				if (snap_same_content(&x, &sub[mask]))
					break;
			nomatch[op] += mask == 1 << B;
			fb_counting_check(&x.f, false, &c);
			unclean[op] +=
				c.stale_bits || c.missing_bits || c.journal_dirty || !c.count_ok;
		}
		/* Leave x with the whole batch applied (op 0) or deleted. */
		snap_restore(&x, &sub[(1 << B) - 1]);
		for (mask = 0; mask < 1 << B; mask++)
			snap_free(&sub[mask]);
		snap_free(&base);
	}
	snprintf(label, sizeof(label),
		 "%s: %u / %u crash points of a bulk add / delete: rolled back to some subset of "
		 "the batch",
		 name, points[0], points[1]);
	ASSERT_TRUE(points[0] && points[1] && !nomatch[0] && !nomatch[1], label);
	snprintf(label, sizeof(label), "%s: check is clean after each rollback", name);
	ASSERT_EQ(unclean[0] + unclean[1], 0, label);
	fake_free(&x);
}

static void unit_crash(void)
{
#if defined(__x86_64__)
	struct sigaction sa = { .sa_flags = SA_SIGINFO | SA_NODEFER }, old_segv, old_trap;

	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_segv;
	sigaction(SIGSEGV, &sa, &old_segv);
	sa.sa_sigaction = on_trap;
	sigaction(SIGTRAP, &sa, &old_trap);
	crash_cfg("crash blocked 4-bit 3 blocks", 3, 4, 30);
	crash_cfg("crash blocked 8-bit 3 blocks", 3, 8, 30);
	crash_cfg("crash blocked 4-bit 1 block saturated", 1, 4, 300);
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGTRAP, &old_trap, NULL);
#else
	(void)batch_until;
	(void)crash_cfg;
	test_skip("bulk crash points", "store trapping is written for x86-64");
#endif
}

int main(void)
{
	static const struct bulkcfg cfgs[] = {
		/* 1 block: one bucket, one group. */
		{ "blocked 4-bit 1 block", NULL, FB_LAYOUT_BLOCKED, 8, 1, 4, 12, 20, 6 },
		/* 2-bit block index: fewer buckets than groups. */
		{ "blocked 4-bit 3 blocks", NULL, FB_LAYOUT_BLOCKED, 8, 3, 4, 40, 60, 6 },
		/* 3-bit block index: one bucket pass, a bucket a group;
		 * crowded, saturating. */
		{ "blocked 4-bit 7 blocks", NULL, FB_LAYOUT_BLOCKED, 8, 7, 4, 80, 120, 8 },
		/* 9 bits: buckets (32 a group), then one pass inside each. */
		{ "blocked 8-bit 300 blocks", NULL, FB_LAYOUT_BLOCKED, 8, 300, 8, 3000, 4000, 6 },
		{ "blocked 4-bit 300 blocks k=12", NULL, FB_LAYOUT_BLOCKED, 12, 300, 4, 3000, 4000,
		  6 },
		/* 17 bits: two passes inside each bucket. */
		{ "blocked 4-bit 2^17 blocks", NULL, FB_LAYOUT_BLOCKED, 8, 1U << 17, 4, 6000, 10000,
		  4 },
		/* Fewer flows than nblocks / 64: input order. */
		{ "blocked 4-bit 2^16 blocks sparse", NULL, FB_LAYOUT_BLOCKED, 8, 1U << 16, 4, 200,
		  300, 4 },
		/* Sorted a chunk of 700 flows at a time; delete batches over
		 * a chunk checked in input order. */
		{ "blocked 8-bit 300 blocks chunks of 700", "700", FB_LAYOUT_BLOCKED, 8, 300, 8,
		  3000, 4000, 6 },
		/* Classic: input order. */
		{ "classic 4-bit 16 blocks", NULL, FB_LAYOUT_CLASSIC, 7, 16, 4, 400, 600, 6 },
	};
	double t0 = now();
	unsigned i;

	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		bulk_cfg(&cfgs[i]);
	unit_crash();
	printf("bulk part: %.2f s\n", now() - t0);
	return test_summary();
}
