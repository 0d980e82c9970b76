// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Counting filters (user/counting.c), from the counter arithmetic up to
 * four writers sharing one pinned filter while the XDP program reads it.
 *
 * Unit, no kernel (a filter built on anonymous memory): 4-bit counters stop
 * at 15 and 8-bit ones at 255 and never move again; a delete of a flow that
 * was never added is refused and changes no byte; fb_counting_check_dels
 * finds the first delete of a batch that would fail; fb_counting_min is at
 * least the times a flow was added. Thousands of random adds and deletes
 * (both layouts, both widths, m small enough that flows collide and 4-bit
 * counters saturate) against an exact model: every counter equals the
 * recount of the flows present (saturated ones stay at their maximum),
 * every bit is (counter > 0), every present flow passes fb_bits_test.
 * Crash recovery: hand-made journal states (a whole add or delete, an add
 * or delete stopped inside position j) must roll back to the state before
 * the operation; and every crash point of real adds and deletes, found by
 * stopping the operation before its N-th store into the filter's memory
 * (x86-64: the memory is read-only, each store faults and is single-stepped,
 * the N-th one longjmps out), must leave no counter without its bit and
 * roll back exactly.
 *
 * Kernel (BPF_PROG_TEST_RUN on the real program, with its trace record):
 * after random adds and deletes through the library, every present flow
 * matches, deleted flows match at no more than 3x the formula's
 * false-positive rate; a 4-bit filter with one flow added 20 times and
 * flows sharing its counters never misses a present flow at any step;
 * four processes doing 100,000 adds and deletes each on one filter, under
 * its lock, while this one sends traffic through the program, leave
 * counters equal to the recount of what each says it holds; a writer
 * that opened the filter before a `load --replace` and locked it after
 * writes into the new array (the program matches its flow), and one whose
 * filter was destroyed meanwhile fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bits.h"
#include "counting.h"
#include "flowbloom.skel.h"
#include "loader.h"
#include "packet.h"
#include "replace.h"
#include "rules.h"
#include "sizing.h"
#include "store.h"
#include "testlib.h"

static char root[128];
static pid_t main_pid;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------------- */
/* A counting filter on anonymous memory, for the unit tests              */

struct fake {
	struct fb_store f;
	void *bmem, *cmem; /* the filter array (header + bits), the counter array */
	size_t blen, clen; /* mapped lengths, whole pages */
};

static size_t page_round(size_t n)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);

	return (n + ps - 1) / ps * ps;
}

static void fake_init(struct fake *x, __u8 layout, __u8 k, __u32 nblocks, unsigned bits,
		      uint64_t *seed)
{
	__u64 m = (__u64)nblocks * FB_BLOCK_BITS;
	struct fb_header *h;

	memset(x, 0, sizeof(*x));
	x->blen = page_round((size_t)(nblocks + FB_HDR_BLOCKS) * FB_BLOCK_BYTES);
	x->clen = page_round(fb_counting_map_bytes(m, bits));
	x->bmem = mmap(NULL, x->blen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	x->cmem = mmap(NULL, x->clen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->bmem == MAP_FAILED || x->cmem == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	h = x->bmem;
	h->magic = FB_MAGIC;
	h->version = FB_VERSION;
	h->layout = layout;
	h->hash = FB_HASH_SIPHASH13;
	h->k = k;
	h->nblocks = nblocks;
	h->action = FB_ACTION_DROP;
	h->counter_bits = bits;
	h->key[0] = test_rand64(seed);
	h->key[1] = test_rand64(seed);
	x->f.dir_fd = x->f.outer_fd = x->f.bits_fd = x->f.stats_fd = x->f.cnt_fd = -1;
	x->f.hdr = h;
	x->f.blocks = x->bmem;
	x->f.map_bytes = (size_t)(nblocks + FB_HDR_BLOCKS) * FB_BLOCK_BYTES;
	fb_counting_init(x->cmem, bits);
	x->f.cnt_hdr = x->cmem;
	x->f.cnt = (__u8 *)x->cmem + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
	x->f.cnt_bytes = fb_counting_map_bytes(m, bits);
}

static void fake_free(struct fake *x)
{
	munmap(x->bmem, x->blen);
	munmap(x->cmem, x->clen);
}

static __u64 mbits(const struct fb_store *f)
{
	return fb_header_mbits(f->hdr);
}

static unsigned key_pos(const struct fb_store *f, const struct fb_key *key, __u64 pos[FB_MAX_K])
{
	const struct fb_header *h = f->hdr;

	fb_positions(fb_hash_key(key, h->hash, h->key), h->layout, h->nblocks, h->k, pos);
	return h->k;
}

static bool bit_at(const struct fb_store *f, __u64 p)
{
	return f->blocks[fb_bit_block(p)].w[fb_bit_word(p)] & fb_bit_mask(p);
}

static void bit_put(struct fb_store *f, __u64 p, bool on)
{
	__u64 *w = &f->blocks[fb_bit_block(p)].w[fb_bit_word(p)];

	*w = on ? *w | fb_bit_mask(p) : *w & ~fb_bit_mask(p);
}

static void cnt_set(struct fb_store *f, __u64 p, unsigned v)
{
	__u8 *b;
	unsigned s;

	if (f->cnt_hdr->bits == 8) {
		f->cnt[p] = v;
		return;
	}
	b = &f->cnt[p / 2];
	s = (p & 1) * 4;
	*b = (*b & ~(0xf << s)) | (v << s);
}

/* A copy of both arrays, whole (journal included). */
struct snap {
	void *b, *c;
	size_t blen, clen;
};

static void snap_take(const struct fake *x, struct snap *s)
{
	s->blen = x->blen;
	s->clen = x->clen;
	s->b = malloc(s->blen);
	s->c = malloc(s->clen);
	memcpy(s->b, x->bmem, s->blen);
	memcpy(s->c, x->cmem, s->clen);
}

static void snap_restore(struct fake *x, const struct snap *s)
{
	memcpy(x->bmem, s->b, s->blen);
	memcpy(x->cmem, s->c, s->clen);
}

static void snap_free(struct snap *s)
{
	free(s->b);
	free(s->c);
}

/* A counter's value in a snapshot. */
static unsigned cnt_in_snap(const struct fake *x, const struct snap *s, __u64 p)
{
	struct fb_store g = x->f;

	g.cnt_hdr = s->c;
	g.cnt = (__u8 *)s->c + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
	return fb_counting_get(&g, p);
}

/* Every byte the same, journal included. */
static bool snap_same_all(const struct fake *x, const struct snap *s)
{
	return !memcmp(x->bmem, s->b, s->blen) && !memcmp(x->cmem, s->c, s->clen);
}

/* The same contents: flow count, bits and counters (not the journal). */
static bool snap_same_content(const struct fake *x, const struct snap *s)
{
	const struct fb_header *h = s->b;
	size_t bo = FB_HDR_BLOCKS * FB_BLOCK_BYTES, co = FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;

	return x->f.hdr->nflows == h->nflows &&
	       !memcmp((__u8 *)x->bmem + bo, (__u8 *)s->b + bo, x->f.map_bytes - bo) &&
	       !memcmp((__u8 *)x->cmem + co, (__u8 *)s->c + co, x->f.cnt_bytes - co);
}

/* ---------------------------------------------------------------------- */
/* Exact model: one counter per position, saturating like the real ones    */

struct model {
	unsigned *c;
	__u64 m;
	unsigned max;
};

static void model_init(struct model *md, const struct fb_store *f)
{
	md->m = mbits(f);
	md->max = fb_counting_max(f);
	md->c = calloc(md->m, sizeof(*md->c));
}

/* Would deleting this flow find a zero counter (a position repeated within
 * the flow needs that many counts)? Saturated counters do not count. */
static bool model_can_del(const struct model *md, const __u64 *pos, unsigned k, unsigned *c)
{
	unsigned i, x, dup;

	for (i = 0; i < k; i++) {
		for (dup = 0, x = 0; x < i; x++)
			dup += pos[x] == pos[i];
		if (c[pos[i]] < md->max && c[pos[i]] <= dup)
			return false;
	}
	return true;
}

static void model_add(struct model *md, const __u64 *pos, unsigned k)
{
	unsigned i;

	for (i = 0; i < k; i++)
		if (md->c[pos[i]] < md->max)
			md->c[pos[i]]++;
}

static void model_del(unsigned *c, unsigned max, const __u64 *pos, unsigned k)
{
	unsigned i;

	for (i = 0; i < k; i++)
		if (c[pos[i]] && c[pos[i]] < max)
			c[pos[i]]--;
}

/* Counters of flows keys[i] present mult[i] times, not capped. */
static __u32 *recount(const struct fb_store *f, const struct fb_key *keys, const unsigned *mult,
		      size_t n)
{
	__u32 *rc = calloc(mbits(f), sizeof(*rc));
	__u64 pos[FB_MAX_K];
	unsigned k, i;
	size_t x;

	for (x = 0; x < n; x++) {
		if (mult && !mult[x])
			continue;
		k = key_pos(f, &keys[x], pos);
		for (i = 0; i < k; i++)
			rc[pos[i]] += mult ? mult[x] : 1;
	}
	return rc;
}

/* Positions whose bit is not (counter > 0). */
static __u64 bits_vs_counters(const struct fb_store *f)
{
	__u64 m = mbits(f), p, bad = 0;

	for (p = 0; p < m; p++)
		bad += bit_at(f, p) != (fb_counting_get(f, p) > 0);
	return bad;
}

/* ---------------------------------------------------------------------- */
/* Unit: arithmetic, refusal, check_dels, min                              */

static void unit_saturation(unsigned bits)
{
	uint64_t seed = 0x5a7 + bits;
	__u64 pos[FB_MAX_K];
	unsigned max = bits == 8 ? 255 : 15, n = max + 5, i, k, bad = 0, fails = 0;
	struct fake x;
	struct fb_key a;
	struct fb_check c;
	char label[160];

	fake_init(&x, FB_LAYOUT_BLOCKED, 8, 4, bits, &seed);
	test_random_flow(&seed, &a, 0);
	k = key_pos(&x.f, &a, pos);
	for (i = 0; i < n; i++) {
		fb_counting_add(&x.f, &a);
		if (fb_counting_min(&x.f, &a) != (i + 1 < max ? i + 1 : max))
			bad++;
	}
	snprintf(label, sizeof(label), "%u-bit: adding one flow %u times counts 1, 2, .. %u, %u..",
		 bits, n, max, max);
	ASSERT_EQ(bad, 0, label);
	for (i = bad = 0; i < k; i++)
		bad += fb_counting_get(&x.f, pos[i]) != max;
	snprintf(label, sizeof(label), "%u-bit: its %u counters stop at %u", bits, k, max);
	ASSERT_EQ(bad, 0, label);
	for (i = 0; i < n; i++)
		fails += fb_counting_del(&x.f, &a) != 0;
	for (i = bad = 0; i < k; i++)
		bad += fb_counting_get(&x.f, pos[i]) != max;
	snprintf(label, sizeof(label), "%u-bit: %u deletes of it succeed", bits, n);
	ASSERT_EQ(fails, 0, label);
	snprintf(label, sizeof(label), "%u-bit: and leave its saturated counters at %u", bits, max);
	ASSERT_EQ(bad, 0, label);
	snprintf(label, sizeof(label), "%u-bit: a saturated flow still passes fb_bits_test", bits);
	ASSERT_TRUE(fb_bits_test(&x.f, &a), label);
	fb_counting_check(&x.f, false, &c);
	snprintf(label, sizeof(label), "%u-bit: check counts %u saturated counters", bits, k);
	ASSERT_EQ(c.saturated, k, label);
	snprintf(label, sizeof(label), "%u-bit: check does not claim to check the sum", bits);
	ASSERT_TRUE(!c.count_checked && c.count_ok && !c.stale_bits && !c.missing_bits, label);
	fake_free(&x);

	/* One below the maximum still counts exactly, both ways. */
	fake_init(&x, FB_LAYOUT_BLOCKED, 8, 4, bits, &seed);
	for (i = 0; i < max - 1; i++)
		fb_counting_add(&x.f, &a);
	for (i = fails = 0; i < max - 1; i++)
		fails += fb_counting_del(&x.f, &a) != 0;
	snprintf(label, sizeof(label), "%u-bit: %u adds then %u deletes leave nothing", bits,
		 max - 1, max - 1);
	ASSERT_TRUE(!fails && fb_bits_popcount(&x.f) == 0 && fb_counting_min(&x.f, &a) == 0 &&
			    x.f.hdr->nflows == 0,
		    label);
	snprintf(label, sizeof(label), "%u-bit: one more delete is refused", bits);
	ASSERT_EQ(fb_counting_del(&x.f, &a), -1, label);
	fake_free(&x);
}

static void unit_refuse_and_batches(__u8 layout)
{
	const char *ln = layout == FB_LAYOUT_CLASSIC ? "classic" : "blocked";
	uint64_t seed = 0x4ef0 + layout;
	struct fb_key fl[64], f, g, h, batch[8];
	struct fake x;
	struct snap s;
	size_t bad;
	char label[160];
	unsigned i, refused = 0, changed = 0, tries = 0;
	int rc;

	fake_init(&x, layout, 7, 8, 4, &seed);
	test_random_flow(&seed, &f, 0);
	snap_take(&x, &s);
	snprintf(label, sizeof(label), "%s: delete on an empty filter is refused", ln);
	ASSERT_EQ(fb_counting_del(&x.f, &f), -1, label);
	snprintf(label, sizeof(label), "%s: and changes no byte", ln);
	ASSERT_TRUE(snap_same_all(&x, &s), label);
	snap_free(&s);

	for (i = 0; i < 64; i++) {
		test_random_flow(&seed, &fl[i], i & 1);
		fb_counting_add(&x.f, &fl[i]);
	}
	/* Flows never added: refused (unless every counter of theirs happens
	 * to be non-zero, the counting filter's own false positive). */
	snap_take(&x, &s);
	while (refused < 200 && tries < 10000) {
		__u64 pos[FB_MAX_K];
		unsigned k, z = 0;

		tries++;
		test_random_flow(&seed, &g, tries & 1);
		k = key_pos(&x.f, &g, pos);
		for (i = 0; i < k; i++)
			z += fb_counting_get(&x.f, pos[i]) == 0;
		if (!z)
			continue;
		rc = fb_counting_del(&x.f, &g);
		refused += rc == -1;
		changed += rc != -1 || !snap_same_all(&x, &s);
		if (!snap_same_all(&x, &s))
			snap_restore(&x, &s);
	}
	snprintf(label, sizeof(label),
		 "%s: 200 deletes of flows never added (a counter 0) refused, no byte changed", ln);
	ASSERT_TRUE(refused == 200 && !changed, label);
	snap_free(&s);

	/* Batches: the second delete of a flow added once. */
	f = fl[10];
	g = fl[20];
	h = fl[30];
	batch[0] = f;
	batch[1] = f;
	rc = fb_counting_check_dels(&x.f, batch, 2, &bad);
	snprintf(label, sizeof(label), "%s: check_dels [F, F], F added once: refused at 1", ln);
	ASSERT_TRUE(rc == -1 && bad == 1, label);
	batch[0] = g, batch[1] = f, batch[2] = h, batch[3] = fl[40], batch[4] = f;
	rc = fb_counting_check_dels(&x.f, batch, 5, &bad);
	snprintf(label, sizeof(label), "%s: check_dels [G, F, H, I, F]: refused at 4", ln);
	ASSERT_TRUE(rc == -1 && bad == 4, label);
	rc = fb_counting_check_dels(&x.f, fl, 64, &bad);
	snprintf(label, sizeof(label), "%s: check_dels of all 64 flows added: accepted", ln);
	ASSERT_EQ(rc, 0, label);
	fb_counting_add(&x.f, &f);
	batch[0] = f, batch[1] = g, batch[2] = f;
	rc = fb_counting_check_dels(&x.f, batch, 3, &bad);
	snprintf(label, sizeof(label), "%s: check_dels [F, G, F], F added twice: accepted", ln);
	ASSERT_EQ(rc, 0, label);
	batch[3] = f;
	rc = fb_counting_check_dels(&x.f, batch, 4, &bad);
	snprintf(label, sizeof(label), "%s: check_dels [F, G, F, F], F added twice: refused at 3",
		 ln);
	ASSERT_TRUE(rc == -1 && bad == 3, label);
	snprintf(label, sizeof(label), "%s: fb_counting_min of a flow added twice >= 2", ln);
	ASSERT_TRUE(fb_counting_min(&x.f, &f) >= 2, label);
	for (i = 0, rc = 0; i < 64; i++)
		rc += fb_counting_min(&x.f, &fl[i]) < 1;
	snprintf(label, sizeof(label), "%s: fb_counting_min >= 1 for all 64 flows added", ln);
	ASSERT_EQ(rc, 0, label);
	fake_free(&x);
}

/* ---------------------------------------------------------------------- */
/* Unit: random sequences against the model                                */

struct seqcfg {
	const char *name;
	__u8 layout, k;
	__u32 nblocks;
	unsigned bits;
	unsigned pool; /* distinct flows drawn from */
	unsigned cap;  /* most flows present at once */
	unsigned ops;
	bool want_sat; /* the run is built so that counters saturate */
};

static void unit_sequence(const struct seqcfg *cf)
{
	uint64_t seed = 0x5e9 * cf->nblocks + cf->k * 31 + cf->bits + cf->layout;
	__u64 pos[FB_MAX_K];
	struct fb_key *keys = calloc(cf->pool, sizeof(*keys));
	unsigned *mult = calloc(cf->pool, sizeof(*mult)), *tmp;
	unsigned op, i, k, total = 0, max_total = 0, batchn = 0;
	long del_fail = 0, refused = 0, refuse_bad = 0, fp_skip = 0, model_bad = 0, batch_bad = 0;
	long sat_seen = 0, min_bad = 0, miss = 0, exact_bad = 0, sat_bad = 0;
	struct model md;
	struct fake x;
	struct fb_check c;
	char label[200];
	__u32 *rc;
	__u64 p;

	fake_init(&x, cf->layout, cf->k, cf->nblocks, cf->bits, &seed);
	model_init(&md, &x.f);
	tmp = calloc(md.m, sizeof(*tmp));
	for (i = 0; i < cf->pool; i++)
		test_random_flow(&seed, &keys[i], i & 1);
	for (op = 0; op < cf->ops; op++) {
		unsigned r = test_rand64(&seed) % 100;

		i = test_rand64(&seed) % cf->pool;
		if (total == 0 || (r < 50 && total < cf->cap)) {
			k = key_pos(&x.f, &keys[i], pos);
			fb_counting_add(&x.f, &keys[i]);
			model_add(&md, pos, k);
			mult[i]++;
			total++;
		} else if (r < 88) {
			while (!mult[i])
				i = (i + 1) % cf->pool;
			k = key_pos(&x.f, &keys[i], pos);
			if (fb_counting_del(&x.f, &keys[i]))
				del_fail++;
			model_del(md.c, md.max, pos, k);
			mult[i]--;
			total--;
		} else {
			struct snap s;
			unsigned n = 0;

			while (mult[i] && n++ < cf->pool)
				i = (i + 1) % cf->pool;
			if (mult[i])
				continue; /* every flow of the pool is present */
			k = key_pos(&x.f, &keys[i], pos);
			if (model_can_del(&md, pos, k, md.c)) {
				/* Every counter of an absent flow is non-zero:
				 * deleting it would succeed and hurt others (the
				 * known limit of counting filters). Not done. */
				fp_skip++;
				continue;
			}
			snap_take(&x, &s);
			refuse_bad +=
				fb_counting_del(&x.f, &keys[i]) != -1 || !snap_same_all(&x, &s);
			refused++;
			snap_restore(&x, &s);
			snap_free(&s);
		}
		if (total > max_total)
			max_total = total;
		if (op % 53 == 0) {
			/* A batch of 6 deletes, mostly present flows: check_dels
			 * must name exactly the first one a sequence of deletes
			 * would refuse. */
			struct fb_key b[6];
			size_t bad = 0, want_bad = 6, n;
			int got;

			for (n = 0; n < 6; n++) {
				unsigned j = test_rand64(&seed) % cf->pool;

				if (test_rand64(&seed) % 4)
					while (!mult[j] && total)
						j = (j + 1) % cf->pool;
				b[n] = keys[j];
			}
			memcpy(tmp, md.c, md.m * sizeof(*tmp));
			for (n = 0; n < 6; n++) {
				k = key_pos(&x.f, &b[n], pos);
				if (!model_can_del(&md, pos, k, tmp)) {
					want_bad = n;
					break;
				}
				model_del(tmp, md.max, pos, k);
			}
			got = fb_counting_check_dels(&x.f, b, 6, &bad);
			batch_bad += want_bad == 6 ? got != 0 : got != -1 || bad != want_bad;
			batchn++;
		}
		if (op % 101 == 0 || op + 1 == cf->ops) {
			for (p = 0; p < md.m; p++) {
				model_bad += fb_counting_get(&x.f, p) != md.c[p];
				sat_seen += md.c[p] == md.max;
			}
		}
	}
	snprintf(label, sizeof(label), "%s: %u ops: every delete of a present flow succeeds",
		 cf->name, cf->ops);
	ASSERT_EQ(del_fail, 0, label);
	snprintf(label, sizeof(label),
		 "%s: %ld deletes of absent flows refused, no byte changed (%ld skipped: all "
		 "counters > 0)",
		 cf->name, refused, fp_skip);
	/* (A crowded filter may leave no absent flow with a zero counter.) */
	ASSERT_TRUE((refused > 0 || cf->want_sat) && refuse_bad == 0, label);
	snprintf(label, sizeof(label), "%s: check_dels names the first failing delete (%u batches)",
		 cf->name, batchn);
	ASSERT_EQ(batch_bad, 0, label);
	snprintf(label, sizeof(label),
		 "%s: counters equal the saturating model at every checkpoint", cf->name);
	ASSERT_EQ(model_bad, 0, label);
	snprintf(label, sizeof(label), "%s: counters %s saturate (%ld counter-checkpoints at max)",
		 cf->name, cf->want_sat ? "do" : "never", sat_seen);
	ASSERT_TRUE(cf->want_sat ? sat_seen > 0 : sat_seen == 0, label);

	/* The exact recount from the multiset of present flows. */
	rc = recount(&x.f, keys, mult, cf->pool);
	for (p = 0; p < md.m; p++) {
		unsigned got = fb_counting_get(&x.f, p);

		if (md.c[p] == md.max)
			sat_bad += got != md.max; /* saturated once: stays */
		else
			exact_bad += got != rc[p];
	}
	snprintf(label, sizeof(label), "%s: every unsaturated counter equals the exact recount",
		 cf->name);
	ASSERT_EQ(exact_bad, 0, label);
	snprintf(label, sizeof(label), "%s: every saturated counter is still at %u", cf->name,
		 md.max);
	ASSERT_EQ(sat_bad, 0, label);
	snprintf(label, sizeof(label), "%s: every bit is (counter > 0)", cf->name);
	ASSERT_EQ(bits_vs_counters(&x.f), 0, label);
	for (i = 0; i < cf->pool; i++) {
		unsigned want;

		if (!mult[i])
			continue;
		miss += !fb_bits_test(&x.f, &keys[i]);
		want = mult[i] < md.max ? mult[i] : md.max;
		min_bad += fb_counting_min(&x.f, &keys[i]) < want;
	}
	snprintf(label, sizeof(label), "%s: all %u present flows pass fb_bits_test", cf->name,
		 total);
	ASSERT_EQ(miss, 0, label);
	snprintf(label, sizeof(label), "%s: fb_counting_min >= times added, for each", cf->name);
	ASSERT_EQ(min_bad, 0, label);
	snprintf(label, sizeof(label), "%s: nflows is the number present", cf->name);
	ASSERT_EQ(x.f.hdr->nflows, total, label);
	fb_counting_check(&x.f, false, &c);
	snprintf(label, sizeof(label), "%s: check: no stale or missing bit, count ok", cf->name);
	ASSERT_TRUE(!c.stale_bits && !c.missing_bits && !c.journal_dirty && c.count_ok, label);
	if (!cf->want_sat) {
		snprintf(label, sizeof(label), "%s: check verified the sum (nothing saturated)",
			 cf->name);
		ASSERT_TRUE(c.count_checked && c.saturated == 0, label);
	}
	printf("%s: m=%llu k=%u, %u ops, up to %u flows present, %u at the end, %llu saturated\n",
	       cf->name, (unsigned long long)md.m, cf->k, cf->ops, max_total, total,
	       (unsigned long long)c.saturated);
	free(rc);
	free(tmp);
	free(md.c);
	free(keys);
	free(mult);
	fake_free(&x);
}

/* ---------------------------------------------------------------------- */
/* Unit: hand-made journal states                                          */

/* Set the journal as fb_counting_add/del would have it at a crash. */
static void journal_set(struct fb_store *f, __u32 op, const struct fb_key *key, __u32 done,
			__u32 changed, __u32 cur_old, __u64 nflows_before)
{
	struct fb_journal *j = &f->cnt_hdr->journal;

	j->op = op;
	j->key = *key;
	j->done = done;
	j->changed = changed;
	j->cur_old = cur_old;
	j->nflows_before = nflows_before;
}

/*
 * Apply the first `upto` positions of an add (or delete) of key by hand,
 * the way fb_counting_add/del order their stores, and stop inside position
 * upto at `stage`:
 *   add: 0 cur_old written; 1 bit set; 2 counter raised (changed not yet)
 *   del: 0 cur_old written; 1 counter lowered; 2 bit cleared (changed not yet)
 * Returns the journal's changed mask.
 */
static __u32 emulate(struct fb_store *f, bool add, const struct fb_key *key, unsigned upto,
		     int stage)
{
	struct fb_journal *j = &f->cnt_hdr->journal;
	unsigned max = fb_counting_max(f), k, i, c;
	__u64 pos[FB_MAX_K];

	k = key_pos(f, key, pos);
	/* journal_begin() clears cur_old (0x80000000: no counter +-1). */
	journal_set(f, add ? FB_JOURNAL_ADD : FB_JOURNAL_DEL, key, 0, 0, 0x80000000U,
		    f->hdr->nflows);
	for (i = 0; i < k && i <= upto; i++) {
		c = fb_counting_get(f, pos[i]);
		if (i == upto && stage < 0)
			break; /* done == upto, nothing of position upto yet */
		if (add ? c < max : c && c < max) {
			j->cur_old = c;
			if (i == upto && stage == 0)
				break;
			if (add) {
				bit_put(f, pos[i], true);
				if (i == upto && stage == 1)
					break;
				cnt_set(f, pos[i], c + 1);
			} else {
				cnt_set(f, pos[i], c - 1);
				if (i == upto && stage == 1)
					break;
				if (c == 1)
					bit_put(f, pos[i], false);
			}
			if (i == upto)
				break;
			j->changed |= 1U << i;
			j->cur_old = 0x80000000U; /* cleared before done moves on */
		}
		j->done = i + 1;
	}
	return j->changed;
}

static bool clean_after(struct fake *x)
{
	struct fb_check c;

	fb_counting_check(&x->f, false, &c);
	return !c.stale_bits && !c.missing_bits && !c.journal_dirty && c.count_ok;
}

static void unit_journal(__u8 layout, unsigned bits)
{
	const char *ln = layout == FB_LAYOUT_CLASSIC ? "classic" : "blocked";
	uint64_t seed = 0x10a + layout * 7 + bits;
	__u64 pos[FB_MAX_K];
	unsigned k, i, max, v[FB_MAX_K], jpos, stage, bad_add = 0, bad_del = 0, npart = 0;
	struct fake x;
	struct snap s0, s1;
	struct fb_key fk, bg;
	char label[200];
	__u32 changed;
	int r;

	fake_init(&x, layout, layout == FB_LAYOUT_CLASSIC ? 6 : 8, 1, bits, &seed);
	max = fb_counting_max(&x.f);
	for (i = 0; i < 30; i++) {
		test_random_flow(&seed, &bg, i & 1);
		fb_counting_add(&x.f, &bg);
	}
	test_random_flow(&seed, &fk, 0);
	k = key_pos(&x.f, &fk, pos);
	snap_take(&x, &s0);

	/* A whole add, then the journal as a crash just before it went idle. */
	for (i = 0, changed = 0; i < k; i++)
		v[i] = fb_counting_get(&x.f, pos[i]);
	fb_counting_add(&x.f, &fk);
	for (i = 0; i < k; i++) {
		unsigned x2, before = v[i];

		for (x2 = 0; x2 < i; x2++) /* a repeated position moved already */
			before += pos[x2] == pos[i] && v[x2] < max;
		if (before < max)
			changed |= 1U << i;
	}
	journal_set(&x.f, FB_JOURNAL_ADD, &fk, k, changed, 0, x.f.hdr->nflows - 1);
	r = fb_counting_recover(&x.f);
	snprintf(label, sizeof(label), "%s %u-bit: whole add with journal ADD done=k: rolled back",
		 ln, bits);
	ASSERT_TRUE(r == 1 && snap_same_content(&x, &s0) && clean_after(&x), label);

	/* A whole delete, the same way. */
	snap_restore(&x, &s0);
	fb_counting_add(&x.f, &fk);
	snap_take(&x, &s1);
	for (i = 0, changed = 0; i < k; i++)
		v[i] = fb_counting_get(&x.f, pos[i]);
	ASSERT_EQ(fb_counting_del(&x.f, &fk), 0, "delete of the flow just added");
	for (i = 0; i < k; i++) {
		unsigned x2, before = v[i];

		for (x2 = 0; x2 < i; x2++)
			before -= pos[x2] == pos[i] && v[x2] && v[x2] < max;
		if (before && before < max)
			changed |= 1U << i;
	}
	journal_set(&x.f, FB_JOURNAL_DEL, &fk, k, changed, 0, x.f.hdr->nflows + 1);
	r = fb_counting_recover(&x.f);
	snprintf(label, sizeof(label),
		 "%s %u-bit: whole delete with journal DEL done=k: rolled back", ln, bits);
	ASSERT_TRUE(r == 1 && snap_same_content(&x, &s1) && clean_after(&x), label);

	/* Stopped inside position j, at each stage of it: for the last stage
	 * the counter has moved but `changed` does not say so yet. */
	for (jpos = 0; jpos < k; jpos++) {
		for (stage = 0; stage < 3; stage++) {
			snap_restore(&x, &s0);
			x.f.cnt_hdr->journal.cur_old = 0;
			emulate(&x.f, true, &fk, jpos, stage);
			fb_counting_recover(&x.f);
			bad_add += !snap_same_content(&x, &s0) || !clean_after(&x);
			snap_restore(&x, &s1);
			emulate(&x.f, false, &fk, jpos, stage);
			fb_counting_recover(&x.f);
			bad_del += !snap_same_content(&x, &s1) || !clean_after(&x);
			npart++;
		}
	}
	snprintf(label, sizeof(label),
		 "%s %u-bit: add stopped inside each position j (%u states): rolled back", ln, bits,
		 npart);
	ASSERT_EQ(bad_add, 0, label);
	snprintf(label, sizeof(label),
		 "%s %u-bit: delete stopped inside each position j (%u states): rolled back", ln,
		 bits, npart);
	ASSERT_EQ(bad_del, 0, label);
	snap_free(&s0);
	snap_free(&s1);
	fake_free(&x);
}

/*
 * The window between `done = j` and `cur_old = c_j` (fb_counting_add and
 * fb_counting_del write done at the end of position j-1 and cur_old at the
 * start of position j). Before the fix, fb_counting_recover read a stale cur_old as position
 * j's old value). Crafted so that position j's untouched counter equals
 * the stale cur_old plus one (add) or minus one (delete).
 */
static void unit_journal_window(void)
{
	uint64_t seed = 0x3141;
	__u64 pf[FB_MAX_K], pg[FB_MAX_K];
	struct fb_key fk, g;
	struct fake x;
	struct snap s0;
	struct fb_check c;
	unsigned k, i, tries;
	bool found = false, gshares0, gshares1;

	/* ADD, j = 1: G holds F's position 1 (counter 1), nobody holds F's
	 * position 0 (counter 0). F's add stops after position 0 is done. */
	fake_init(&x, FB_LAYOUT_BLOCKED, 8, 1, 4, &seed);
	test_random_flow(&seed, &fk, 0);
	k = key_pos(&x.f, &fk, pf);
	for (tries = 0; tries < 100000 && !found; tries++) {
		test_random_flow(&seed, &g, tries & 1);
		key_pos(&x.f, &g, pg);
		for (i = 0, gshares0 = gshares1 = false; i < k; i++) {
			gshares0 |= pg[i] == pf[0];
			gshares1 |= pg[i] == pf[1];
		}
		found = gshares1 && !gshares0;
	}
	if (!ASSERT_TRUE(found, "found a flow G sharing F's position 1, not 0"))
		return;
	fb_counting_add(&x.f, &g);
	snap_take(&x, &s0);
	emulate(&x.f, true, &fk, 1, -1); /* done=1, cur_old=0 from position 0 */
	fb_counting_recover(&x.f);
	ASSERT_TRUE(
		snap_same_content(&x, &s0),
		"window add j=1: stopped between done=1 and cur_old=c1 (c1 = c0+1): rolled back");
	ASSERT_TRUE(
		fb_bits_test(&x.f, &g),
		"window add j=1: the other flow G still passes fb_bits_test (no false negative)");
	fb_counting_check(&x.f, false, &c);
	ASSERT_TRUE(c.count_ok, "window add j=1: the counter sum is still k x flows");

	/* ADD, j = 0: the add of F2 stops right after journal_begin, before
	 * position 0's cur_old is written: cur_old is what G's add left (0,
	 * on an empty filter), and F2's position 0 is one of G's (counter 1). */
	for (tries = 0, found = false; tries < 200000 && !found; tries++) {
		test_random_flow(&seed, &fk, tries & 1);
		key_pos(&x.f, &fk, pf);
		for (i = 0; i < k; i++)
			found |= pf[0] == pg[i];
	}
	if (ASSERT_TRUE(found, "found a flow F2 whose position 0 is one of G's")) {
		snap_restore(&x, &s0);
		journal_set(&x.f, FB_JOURNAL_ADD, &fk, 0, 0, x.f.cnt_hdr->journal.cur_old,
			    x.f.hdr->nflows);
		fb_counting_recover(&x.f);
		ASSERT_TRUE(snap_same_content(&x, &s0),
			    "window add j=0: stopped after journal_begin, before cur_old (left "
			    "over: 0; "
			    "c0 = 1): nothing changed after recovery");
		ASSERT_TRUE(fb_bits_test(&x.f, &g),
			    "window add j=0: G still passes fb_bits_test (no false negative)");
	}
	snap_free(&s0);
	fake_free(&x);

	/* DELETE, j = 1: F and H present, H holds F's position 0 (counter 2),
	 * only F holds position 1 (counter 1). F's delete stops after
	 * position 0: cur_old = 2, and position 1's counter is 2 - 1. */
	fake_init(&x, FB_LAYOUT_BLOCKED, 8, 1, 4, &seed);
	test_random_flow(&seed, &fk, 1);
	k = key_pos(&x.f, &fk, pf);
	for (tries = 0, found = false; tries < 100000 && !found; tries++) {
		test_random_flow(&seed, &g, tries & 1);
		key_pos(&x.f, &g, pg);
		for (i = 0, gshares0 = gshares1 = false; i < k; i++) {
			gshares0 |= pg[i] == pf[0];
			gshares1 |= pg[i] == pf[1];
		}
		found = gshares0 && !gshares1;
	}
	if (ASSERT_TRUE(found, "found a flow H sharing F's position 0, not 1")) {
		fb_counting_add(&x.f, &g);
		fb_counting_add(&x.f, &fk);
		snap_take(&x, &s0);
		emulate(&x.f, false, &fk, 1, -1);
		fb_counting_recover(&x.f);
		ASSERT_TRUE(snap_same_content(&x, &s0),
			    "window delete j=1: stopped between done=1 and cur_old=c1 (c1 = c0-1): "
			    "rolled back");
		fb_counting_check(&x.f, false, &c);
		ASSERT_TRUE(c.count_ok, "window delete j=1: the counter sum is still k x flows");
		snap_free(&s0);
	}
	fake_free(&x);
}

/* ---------------------------------------------------------------------- */
/* Unit: every crash point of real operations (x86-64)                     */

static sigjmp_buf trap_env;
static volatile long trap_count, trap_stop;
static struct fake *volatile trap_fake;
static void *volatile trap_addr; /* where the store it stopped before would go */

static void trap_protect(int prot)
{
	mprotect(trap_fake->bmem, trap_fake->blen, prot);
	mprotect(trap_fake->cmem, trap_fake->clen, prot);
}

#if defined(__x86_64__)
static bool in_region(void *a, void *base, size_t len)
{
	return (char *)a >= (char *)base && (char *)a < (char *)base + len;
}

#define TRAP_FLAG 0x100
static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	if (!trap_fake || (!in_region(si->si_addr, trap_fake->bmem, trap_fake->blen) &&
			   !in_region(si->si_addr, trap_fake->cmem, trap_fake->clen))) {
		signal(sig, SIG_DFL); /* a real crash: fault again, for real */
		return;
	}
	if (trap_count == trap_stop) {
		trap_addr = si->si_addr;
		siglongjmp(trap_env, 1); /* the process dies before this store */
	}
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

/* Run the operation, stopping it before its stop-th store into the
 * filter's memory. Returns true if it ran to the end; *stores is the count
 * of stores made. */
static bool run_until(struct fake *x, bool add, const struct fb_key *key, long stop, long *stores,
		      int *rc)
{
	volatile bool done = false;

	trap_fake = x;
	trap_count = 0;
	trap_stop = stop;
	if (!sigsetjmp(trap_env, 1)) {
		trap_protect(PROT_READ);
		if (add)
			fb_counting_add(&x->f, key);
		else
			*rc = fb_counting_del(&x->f, key);
		done = true;
	}
	trap_protect(PROT_READ | PROT_WRITE);
	*stores = trap_count;
	trap_fake = NULL;
	return done;
}

struct crash_tally {
	long points, fn_states, not_rolled_back, not_clean;
	long in_window; /* of not_rolled_back: stopped before a store of cur_old or done */
	long lost_bits; /* of not_rolled_back: a bit set before the operation is now clear */
	char first[240];
};

/* Bits set over a non-zero counter in the snapshot, clear now: flows that
 * were present before the operation may now miss. */
static bool lost_a_bit(const struct fake *x, const struct snap *s0)
{
	struct fb_store g = x->f;
	__u64 m = mbits(&x->f), p;

	g.blocks = s0->b;
	g.cnt_hdr = s0->c;
	g.cnt = (__u8 *)s0->c + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
	for (p = 0; p < m; p++)
		if (bit_at(&g, p) && fb_counting_get(&g, p) && !bit_at(&x->f, p))
			return true;
	return false;
}

/* Every crash point of one operation: before recovery no counter may be
 * without its bit; after fb_counting_recover the contents must be those
 * before the operation, and check clean. Leaves x as after the operation. */
static void crash_points(struct fake *x, bool add, const struct fb_key *key, struct crash_tally *t)
{
	struct snap s0, s1;
	struct fb_check c;
	long total, stores, stop;
	int rc = 0;

	snap_take(x, &s0);
	if (!run_until(x, add, key, LONG_MAX, &total, &rc) || rc) {
		snap_free(&s0);
		return;
	}
	snap_take(x, &s1);
	for (stop = 0; stop < total; stop++) {
		struct fb_journal j;
		__u64 pos[FB_MAX_K];
		unsigned cur;

		snap_restore(x, &s0);
		if (run_until(x, add, key, stop, &stores, &rc))
			continue; /* cannot happen: total stores are needed */
		t->points++;
		j = x->f.cnt_hdr->journal;
		key_pos(&x->f, key, pos);
		cur = j.done < x->f.hdr->k ? fb_counting_get(&x->f, pos[j.done]) : 0;
		fb_counting_check(&x->f, false, &c);
		t->fn_states += c.missing_bits != 0;
		fb_counting_recover(&x->f);
		if (!snap_same_content(x, &s0)) {
			t->in_window += trap_addr == &x->f.cnt_hdr->journal.cur_old ||
					trap_addr == &x->f.cnt_hdr->journal.done;
			t->lost_bits += lost_a_bit(x, &s0);
			if (!t->not_rolled_back++)
				snprintf(t->first, sizeof(t->first),
					 "%s stopped before store %ld of %ld: journal done=%u "
					 "changed=%#x cur_old=%u, counter at position done %u "
					 "(%u before the operation)",
					 add ? "add" : "delete", stop, total, j.done, j.changed,
					 j.cur_old, cur,
					 j.done < x->f.hdr->k ? cnt_in_snap(x, &s0, pos[j.done])
							      : 0);
		} else {
			fb_counting_check(&x->f, false, &c);
			t->not_clean +=
				c.stale_bits || c.missing_bits || c.journal_dirty || !c.count_ok;
		}
	}
	snap_restore(x, &s1);
	snap_free(&s0);
	snap_free(&s1);
}

static void unit_crash_points(void)
{
	static const struct {
		const char *name;
		__u8 layout, k;
		unsigned bits, background;
	} cfgs[] = {
		{ "blocked 4-bit", FB_LAYOUT_BLOCKED, 8, 4, 40 },
		{ "classic 4-bit", FB_LAYOUT_CLASSIC, 6, 4, 40 },
		{ "blocked 8-bit", FB_LAYOUT_BLOCKED, 8, 8, 40 },
		{ "classic 8-bit", FB_LAYOUT_CLASSIC, 6, 8, 40 },
		{ "blocked 4-bit saturated", FB_LAYOUT_BLOCKED, 8, 4, 600 },
	};
#if defined(__x86_64__)
	struct sigaction sa = { .sa_flags = SA_SIGINFO | SA_NODEFER }, old_segv, old_trap;
	unsigned ci, fi, i;
	char label[600];

	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_segv;
	sigaction(SIGSEGV, &sa, &old_segv);
	sa.sa_sigaction = on_trap;
	sigaction(SIGTRAP, &sa, &old_trap);
	for (ci = 0; ci < sizeof(cfgs) / sizeof(cfgs[0]); ci++) {
		struct crash_tally ta = { 0 }, td = { 0 };
		uint64_t seed = 0xc4a5 + ci;
		struct fake x;
		struct fb_key key;
		long probe_stores;
		int rc;

		fake_init(&x, cfgs[ci].layout, cfgs[ci].k, 1, cfgs[ci].bits, &seed);
		for (i = 0; i < cfgs[ci].background; i++) {
			test_random_flow(&seed, &key, i & 1);
			fb_counting_add(&x.f, &key);
		}
		/* The trap must see the stores at all. */
		test_random_flow(&seed, &key, 0);
		if (!run_until(&x, true, &key, LONG_MAX, &probe_stores, &rc) || probe_stores < 10) {
			test_skip("crash points", "store trapping does not work here");
			fake_free(&x);
			break;
		}
		for (fi = 0; fi < 6; fi++) {
			test_random_flow(&seed, &key, fi & 1);
			crash_points(&x, true, &key, &ta);  /* fresh flow */
			crash_points(&x, true, &key, &ta);  /* again: counters >= 1 */
			crash_points(&x, false, &key, &td); /* delete one of the two */
			crash_points(&x, false, &key, &td); /* and the other */
		}
		snprintf(label, sizeof(label),
			 "%s: %ld crash points of adds: no counter without its bit before "
			 "recovery",
			 cfgs[ci].name, ta.points);
		ASSERT_EQ(ta.fn_states, 0, label);
		snprintf(label, sizeof(label),
			 "%s: %ld crash points of deletes: no counter without its bit before "
			 "recovery",
			 cfgs[ci].name, td.points);
		ASSERT_EQ(td.fn_states, 0, label);
		snprintf(label, sizeof(label),
			 "%s: every crash point of an add rolls back exactly (first bad: %s)",
			 cfgs[ci].name, ta.first[0] ? ta.first : "none");
		ASSERT_EQ(ta.not_rolled_back, 0, label);
		snprintf(label, sizeof(label),
			 "%s: every crash point of a delete rolls back exactly (first bad: %s)",
			 cfgs[ci].name, td.first[0] ? td.first : "none");
		ASSERT_EQ(td.not_rolled_back, 0, label);
		snprintf(label, sizeof(label), "%s: check is clean after each rollback",
			 cfgs[ci].name);
		ASSERT_EQ(ta.not_clean + td.not_clean, 0, label);
		snprintf(label, sizeof(label),
			 "%s: crash points outside the done -> cur_old window all roll back "
			 "exactly",
			 cfgs[ci].name);
		ASSERT_EQ(ta.not_rolled_back - ta.in_window + td.not_rolled_back - td.in_window, 0,
			  label);
		printf("%s: crash points: adds %ld (%ld not rolled back, %ld of them clearing a "
		       "bit another flow needs), deletes %ld (%ld not rolled back)\n",
		       cfgs[ci].name, ta.points, ta.not_rolled_back, ta.lost_bits, td.points,
		       td.not_rolled_back);
		fake_free(&x);
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGTRAP, &old_trap, NULL);
#else
	(void)cfgs;
	(void)run_until;
	(void)crash_points;
	test_skip("crash points", "store trapping is written for x86-64");
#endif
}

/* ---------------------------------------------------------------------- */
/* Kernel: filters in a private bpffs root, the real program               */

#define MAX_MADE 8
static char made[MAX_MADE][FB_NAME_MAX];

static void forget(const char *name)
{
	int i;

	for (i = 0; i < MAX_MADE; i++)
		if (!strcmp(made[i], name))
			made[i][0] = 0;
}

static void cleanup(void)
{
	int i;

	if (getpid() != main_pid)
		return;
	for (i = 0; i < MAX_MADE; i++)
		if (made[i][0]) {
			fb_store_destroy(made[i]);
			made[i][0] = 0;
		}
	rmdir(root);
}

static void on_signal(int sig)
{
	(void)sig;
	exit(130); /* runs cleanup() */
}

/* Create a counting filter sized for cap flows at rate p and open it. */
static int make_filter(const char *name, __u8 layout, unsigned bits, __u64 cap, double p,
		       struct fb_store *f)
{
	struct fb_create_opts o = { .layout = layout,
				    .hash = FB_HASH_SIPHASH13,
				    .action = FB_ACTION_DROP,
				    .counter_bits = bits,
				    .capacity = cap,
				    .fp_rate = p };
	int i, err;

	err = layout == FB_LAYOUT_CLASSIC ? fb_size_classic(cap, p, &o.nblocks, &o.k)
					  : fb_size_blocked(cap, p, &o.nblocks, &o.k);
	if (err || fb_store_create(name, &o))
		return -1;
	for (i = 0; i < MAX_MADE; i++)
		if (!made[i][0]) {
			snprintf(made[i], sizeof(made[i]), "%s", name);
			break;
		}
	return fb_store_open(name, f);
}

static void drop_filter(const char *name)
{
	ASSERT_EQ(fb_store_destroy(name), 0, "destroy the filter");
	forget(name);
}

/* The data path probes a rule kind only once its flag is set (cmd_add.c). */
static void publish_kind(struct fb_store *f)
{
	__atomic_fetch_or(&f->hdr->kinds, FB_KINDF(FB_KIND_FLOW), __ATOMIC_RELEASE);
}

struct prog {
	struct flowbloom_bpf *skel;
	int fd, trace_fd;
};

static int prog_load(const struct fb_store *f, struct prog *pr)
{
	struct fb_load_opts lo = { .trace = true, .private_stats = true };

	pr->skel = fb_load(f, &lo);
	if (!pr->skel)
		return -1;
	pr->fd = bpf_program__fd(pr->skel->progs.flowbloom);
	pr->trace_fd = bpf_map__fd(pr->skel->maps.fb_trace);
	return 0;
}

/* 1 if the program drops the flow with a flow-rule match, 0 if it does
 * not match, -1 on a failed run. */
static int matches(const struct prog *pr, const struct fb_key *k)
{
	int m, v = test_probe_flow(pr->fd, pr->trace_fd, k, &m);

	if (v < 0)
		return -1;
	return v == XDP_DROP && m;
}

/* Counter-by-counter comparison with a recount (uncapped; none saturate). */
static __u64 counters_vs(const struct fb_store *f, const __u32 *want)
{
	__u64 m = mbits(f), p, bad = 0;

	for (p = 0; p < m; p++)
		bad += fb_counting_get(f, p) != want[p];
	return bad;
}

static void kernel_sequence(__u8 layout, unsigned bits)
{
	const char *ln = layout == FB_LAYOUT_CLASSIC ? "classic" : "blocked";
	enum { POOL = 40000, CAP = 20000 };
	long distinct = 0;
	uint64_t seed = 0x6b65 + layout * 100 + bits;
	struct fb_key *keys = calloc(POOL, sizeof(*keys));
	unsigned *mult = calloc(POOL, sizeof(*mult));
	bool *ever = calloc(POOL, sizeof(*ever));
	long present = 0, missing = 0, disagree = 0, errors = 0, deleted = 0, del_hit = 0;
	long fresh_hit = 0, del_fail = 0, ops = 0;
	unsigned i, r, batch;
	struct fb_store f;
	struct fb_check c;
	struct prog pr;
	char name[64], label[200];
	double fpr;
	__u32 *rc;

	snprintf(name, sizeof(name), "cnt-seq-%s%u", ln, bits);
	if (!ASSERT_EQ(make_filter(name, layout, bits, CAP, 0.01, &f), 0, "create and open"))
		goto out;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "load the program"))
		goto close;
	for (i = 0; i < POOL; i++)
		test_random_flow(&seed, &keys[i], i & 1);

	/* Fill to about 18k flows (a few twice), then churn: adds of new and
	 * old flows, deletes of present ones; about 18k present at the end. */
	for (batch = 0; batch < 240; batch++) {
		fb_store_lock(&f);
		for (r = 0; r < 256; r++, ops++) {
			unsigned x = test_rand64(&seed) % POOL;
			int roll = test_rand64(&seed) % 100;
			bool add = batch < 80 ? roll < 95 : present < 18000 ? roll < 55 : roll < 40;

			if (add || !present) {
				if (present && test_rand64(&seed) % 32 == 0)
					while (!mult[x])
						x = (x + 1) % POOL; /* again */
				else
					while (mult[x])
						x = (x + 1) % POOL; /* a new one */
				fb_counting_add(&f, &keys[x]);
				mult[x]++;
				ever[x] = true;
				present++;
			} else {
				while (!mult[x])
					x = (x + 1) % POOL;
				del_fail += fb_counting_del(&f, &keys[x]) != 0;
				mult[x]--;
				present--;
			}
		}
		publish_kind(&f);
		fb_store_unlock(&f);
	}
	snprintf(label, sizeof(label), "%s %u-bit: %ld ops, every delete accepted", ln, bits, ops);
	ASSERT_EQ(del_fail, 0, label);

	for (i = 0; i < POOL; i++) {
		int m = matches(&pr, &keys[i]);

		errors += m < 0;
		disagree += m >= 0 && m != fb_bits_test(&f, &keys[i]);
		if (mult[i])
			missing += m != 1;
		else if (ever[i]) {
			deleted++;
			del_hit += m == 1;
		}
	}
	for (i = 0; i < 20000; i++) {
		struct fb_key k;
		int m;

		test_random_flow(&seed, &k, i & 1);
		m = matches(&pr, &k);
		errors += m < 0;
		fresh_hit += m == 1;
	}
	/* The rate for the distinct flows present (a flow added twice sets
	 * its bits once). */
	for (i = 0; i < POOL; i++)
		distinct += mult[i] > 0;
	fpr = fb_fpr(f.hdr->layout, distinct, f.hdr->nblocks, f.hdr->k);
	snprintf(label, sizeof(label), "%s %u-bit: every test run succeeded", ln, bits);
	ASSERT_EQ(errors, 0, label);
	snprintf(label, sizeof(label),
		 "%s %u-bit: all present flows match in the program (no false negative)", ln, bits);
	ASSERT_EQ(missing, 0, label);
	snprintf(label, sizeof(label), "%s %u-bit: program and fb_bits_test agree", ln, bits);
	ASSERT_EQ(disagree, 0, label);
	snprintf(label, sizeof(label),
		 "%s %u-bit: %ld deleted flows match at %.5f <= 3 x formula %.5f", ln, bits,
		 deleted, (double)del_hit / deleted, fpr);
	ASSERT_RANGE((double)del_hit / deleted, 0, 3 * fpr, label);
	snprintf(label, sizeof(label), "%s %u-bit: never-added flows match at %.5f <= 3 x %.5f", ln,
		 bits, fresh_hit / 20000.0, fpr);
	ASSERT_RANGE(fresh_hit / 20000.0, 0, 3 * fpr, label);
	fb_counting_check(&f, false, &c);
	snprintf(label, sizeof(label), "%s %u-bit: bits == (counters > 0), sum = k x flows", ln,
		 bits);
	ASSERT_TRUE(!c.stale_bits && !c.missing_bits && c.count_checked && c.count_ok, label);
	rc = recount(&f, keys, mult, POOL);
	snprintf(label, sizeof(label), "%s %u-bit: every counter equals the exact recount", ln,
		 bits);
	ASSERT_EQ(counters_vs(&f, rc), 0, label);
	snprintf(label, sizeof(label), "%s %u-bit: nflows is the number present", ln, bits);
	ASSERT_EQ(f.hdr->nflows, present, label);
	free(rc);
	printf("%s %u-bit: m=%llu k=%u, %ld present (%ld distinct), %ld deleted: %.5f match, never "
	       "added %.5f, "
	       "formula %.5f\n",
	       ln, bits, (unsigned long long)mbits(&f), f.hdr->k, present, distinct, deleted,
	       (double)del_hit / deleted, fresh_hit / 20000.0, fpr);
	flowbloom_bpf__destroy(pr.skel);
close:
	fb_store_close(&f);
	drop_filter(name);
out:
	free(keys);
	free(mult);
	free(ever);
}

/* ---------------------------------------------------------------------- */
/* Kernel: saturation, step by step                                        */

struct satrun {
	struct fb_store *f;
	struct prog *pr;
	struct fb_key *bg;
	unsigned nbg;
	struct fb_key *sh;
	unsigned *shn; /* times each sharer is present */
	unsigned nsh;
	long steps, misses, errors;
	char first[160];
};

/* Every present flow (background, sharers, A if present) must match. */
static void sat_step(struct satrun *s, const struct fb_key *a, unsigned an, const char *what)
{
	unsigned i;
	int m;

	s->steps++;
	for (i = 0; i < s->nbg + s->nsh + 1; i++) {
		const struct fb_key *k = i < s->nbg	       ? &s->bg[i]
					 : i < s->nbg + s->nsh ? &s->sh[i - s->nbg]
							       : a;

		if (i >= s->nbg && i < s->nbg + s->nsh && !s->shn[i - s->nbg])
			continue;
		if (i == s->nbg + s->nsh && !an)
			continue;
		m = matches(s->pr, k);
		s->errors += m < 0;
		if (m == 0 && !s->misses++)
			snprintf(s->first, sizeof(s->first), "after %s: flow %u misses", what, i);
	}
}

static void kernel_saturation(void)
{
	enum { NBG = 2000, NSH = 8 };
	uint64_t seed = 0x5a75;
	__u64 pa[FB_MAX_K], pos[FB_MAX_K];
	struct fb_key a, bg[NBG], sh[NSH];
	unsigned shn[NSH] = { 0 }, an = 0, i, j, k, found = 0, shared_pos = 0;
	int delrc[20], nok = 0;
	struct satrun s = { 0 };
	struct fb_store f;
	struct prog pr;
	const char *name = "cnt-sat4";
	char label[400];
	long tries = 0;

	if (!ASSERT_EQ(make_filter(name, FB_LAYOUT_BLOCKED, 4, 20000, 0.01, &f), 0,
		       "saturation: create and open"))
		return;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "saturation: load the program"))
		goto close;
	s = (struct satrun){
		.f = &f, .pr = &pr, .bg = bg, .nbg = NBG, .sh = sh, .shn = shn, .nsh = NSH
	};
	test_random_flow(&seed, &a, 0);
	k = key_pos(&f, &a, pa);
	/* Flows sharing at least one of A's counters. */
	while (found < NSH && tries < 20000000) {
		struct fb_key c;
		bool share = false;

		tries++;
		test_random_flow(&seed, &c, tries & 1);
		key_pos(&f, &c, pos);
		for (i = 0; i < k; i++)
			for (j = 0; j < k; j++)
				share |= pos[i] == pa[j];
		if (share)
			sh[found++] = c;
	}
	if (!ASSERT_EQ(found, NSH, "found 8 flows sharing a counter with A"))
		goto unload;
	fb_store_lock(&f);
	for (i = 0; i < NBG; i++) {
		test_random_flow(&seed, &bg[i], i & 1);
		fb_counting_add(&f, &bg[i]);
	}
	publish_kind(&f);
	fb_store_unlock(&f);
	sat_step(&s, &a, an, "background");
	for (i = 0; i < 20; i++) {
		fb_store_lock(&f);
		fb_counting_add(&f, &a);
		fb_store_unlock(&f);
		an++;
		sat_step(&s, &a, an, "adding A");
	}
	for (i = 0; i < k; i++)
		shared_pos += fb_counting_get(&f, pa[i]) == 15;
	ASSERT_EQ(shared_pos, k, "A added 20 times: all its 4-bit counters at 15");
	/* Sharers: each added once, the first three twice. */
	for (i = 0; i < NSH; i++)
		for (j = 0; j < (i < 3 ? 2u : 1u); j++) {
			fb_store_lock(&f);
			fb_counting_add(&f, &sh[i]);
			fb_store_unlock(&f);
			shn[i]++;
			sat_step(&s, &a, an, "adding a sharer");
		}
	/* Delete some: sharer 0 once, 1 twice, 3 and 4 once. */
	{
		static const unsigned which[] = { 0, 1, 1, 3, 4 };

		for (i = 0; i < 5; i++) {
			fb_store_lock(&f);
			nok += fb_counting_del(&f, &sh[which[i]]) == 0;
			fb_store_unlock(&f);
			shn[which[i]]--;
			sat_step(&s, &a, an, "deleting a sharer");
		}
	}
	ASSERT_EQ(nok, 5, "the 5 deletes of present sharers succeed");
	for (i = 0; i < 20; i++) {
		fb_store_lock(&f);
		delrc[i] = fb_counting_del(&f, &a);
		fb_store_unlock(&f);
		an = an ? an - 1 : 0;
		sat_step(&s, &a, an, "deleting A");
	}
	for (i = 0, nok = 0; i < 15; i++)
		nok += delrc[i] == 0;
	ASSERT_EQ(nok, 15, "the first 15 deletes of A return 0");
	for (i = 15, nok = 0; i < 20; i++)
		nok += delrc[i] == 0;
	printf("saturation: deletes 16..20 of A returned 0 %d of 5 times (its counters are all "
	       "saturated, so they never move); A's counters now:",
	       nok);
	for (i = 0; i < k; i++)
		printf(" %u", fb_counting_get(&f, pa[i]));
	printf("; A %s in the program\n",
	       matches(&pr, &a) == 1 ? "still matches" : "no longer matches");
	for (i = 0, shared_pos = 0; i < k; i++)
		shared_pos += fb_counting_get(&f, pa[i]) == 15;
	ASSERT_EQ(shared_pos, k, "after 20 deletes of A its saturated counters stay at 15");
	/* The remaining sharers go too. */
	for (i = 0; i < NSH; i++)
		while (shn[i]) {
			fb_store_lock(&f);
			nok = fb_counting_del(&f, &sh[i]);
			fb_store_unlock(&f);
			ASSERT_EQ(nok, 0, "delete a remaining sharer");
			shn[i]--;
			sat_step(&s, &a, an, "deleting the rest");
		}
	snprintf(label, sizeof(label),
		 "saturation: %ld steps, %u flows checked in the program at each: no present "
		 "flow ever missed (%s)",
		 s.steps, NBG + NSH + 1, s.first[0] ? s.first : "none");
	ASSERT_EQ(s.misses, 0, label);
	ASSERT_EQ(s.errors, 0, "saturation: every test run succeeded");
	{
		struct fb_check c;

		fb_counting_check(&f, false, &c);
		ASSERT_TRUE(!c.stale_bits && !c.missing_bits,
			    "saturation: bits == (counters > 0) at the end");
		printf("saturation: %llu saturated counters at the end, nflows %llu\n",
		       (unsigned long long)c.saturated, (unsigned long long)f.hdr->nflows);
	}
unload:
	flowbloom_bpf__destroy(pr.skel);
close:
	fb_store_close(&f);
	drop_filter(name);
}

/* ---------------------------------------------------------------------- */
/* Kernel: four writers and the data path at once                          */

#define NCHILD 4
#define CHILD_OPS 100000
#define CHILD_BATCH 64
#define NRESIDENT 2000

/* Flows of writer id (0..3; NCHILD is the parent's residents), never equal
 * to another writer's: its id is in the source address. */
static void writer_flow(uint64_t *seed, int id, long n, struct fb_key *k)
{
	test_random_flow(seed, k, n & 1);
	if (n & 1)
		k->saddr[8] = 0xe0 + id;
	else
		k->saddr[15] = 0xe0 + id;
}

static void child_main(const char *name, int id, const char *out)
{
	struct fb_key *keys = malloc(CHILD_OPS * sizeof(*keys));
	uint64_t seed = 0xc41d0 + id * 7919;
	long n = 0, done = 0, fails = 0, nmade = 0;
	struct fb_store f;
	FILE *fp;
	int b;

	if (!keys || fb_store_open(name, &f))
		_exit(10);
	while (done < CHILD_OPS) {
		if (fb_store_lock(&f))
			_exit(11);
		for (b = 0; b < CHILD_BATCH && done < CHILD_OPS; b++, done++) {
			if (!n || test_rand64(&seed) % 100 < 70) {
				writer_flow(&seed, id, nmade++, &keys[n]);
				fb_counting_add(&f, &keys[n]);
				n++;
			} else {
				long i = test_rand64(&seed) % n;

				fails += fb_counting_del(&f, &keys[i]) != 0;
				keys[i] = keys[--n];
			}
		}
		publish_kind(&f);
		fb_store_unlock(&f);
	}
	fb_store_close(&f);
	fp = fopen(out, "w");
	if (!fp || fwrite(keys, sizeof(*keys), n, fp) != (size_t)n || fclose(fp))
		_exit(12);
	_exit(fails ? 1 : 0);
}

static void kernel_concurrency(void)
{
	const char *name = "cnt-conc8";
	uint64_t seed = 0xc0c0, rseed = 0x7a11;
	struct fb_key res[NRESIDENT], *all = NULL;
	long nall = 0, probes = 0, res_miss = 0, errors = 0, miss = 0, i;
	int alive = NCHILD, ok_children = 0, c;
	char out[NCHILD][128], label[200];
	pid_t pids[NCHILD];
	struct fb_store f;
	struct fb_check chk;
	struct prog pr;
	double t0, wall;
	__u32 *rc;

	if (!ASSERT_EQ(make_filter(name, FB_LAYOUT_BLOCKED, 8, 400000, 0.01, &f), 0,
		       "concurrency: create and open"))
		return;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "concurrency: load the program"))
		goto close;
	fb_store_lock(&f);
	for (i = 0; i < NRESIDENT; i++) {
		writer_flow(&seed, NCHILD, i, &res[i]);
		fb_counting_add(&f, &res[i]);
	}
	publish_kind(&f);
	fb_store_unlock(&f);

	fflush(stdout);
	t0 = now();
	for (c = 0; c < NCHILD; c++) {
		snprintf(out[c], sizeof(out[c]), "/tmp/fbtest_counting_%d_%d.bin", main_pid, c);
		pids[c] = fork();
		if (pids[c] == 0)
			child_main(name, c, out[c]);
		if (pids[c] < 0) {
			perror("fork");
			alive--;
		}
	}
	/* Traffic while they write: a resident flow (must match, whatever the
	 * writers do to the counters they share) and a random one. */
	while (alive > 0) {
		struct fb_key k;
		int m, st;
		pid_t p;

		m = matches(&pr, &res[probes % NRESIDENT]);
		errors += m < 0;
		res_miss += m == 0;
		test_random_flow(&rseed, &k, probes & 1);
		errors += matches(&pr, &k) < 0;
		probes++;
		if (probes % 64)
			continue;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			alive--;
			ok_children += WIFEXITED(st) && WEXITSTATUS(st) == 0;
		}
	}
	wall = now() - t0;
	snprintf(label, sizeof(label), "concurrency: %d writers exit 0 (every delete accepted)",
		 NCHILD);
	ASSERT_EQ(ok_children, NCHILD, label);
	snprintf(label, sizeof(label),
		 "concurrency: %ld probes of resident flows during the writes: none missed",
		 probes);
	ASSERT_EQ(res_miss, 0, label);

	all = malloc((NRESIDENT + (size_t)NCHILD * CHILD_OPS) * sizeof(*all));
	memcpy(all, res, sizeof(res));
	nall = NRESIDENT;
	for (c = 0; c < NCHILD; c++) {
		FILE *fp = fopen(out[c], "r");
		size_t n;

		if (!fp)
			continue;
		n = fread(all + nall, sizeof(*all), CHILD_OPS, fp);
		nall += n;
		fclose(fp);
		unlink(out[c]);
	}
	rc = recount(&f, all, NULL, nall);
	ASSERT_EQ(counters_vs(&f, rc), 0,
		  "concurrency: every counter equals the recount of all writers' flows");
	free(rc);
	ASSERT_EQ(bits_vs_counters(&f), 0, "concurrency: bits == (counters > 0)");
	ASSERT_EQ(f.hdr->nflows, nall, "concurrency: nflows is the total present");
	fb_counting_check(&f, false, &chk);
	ASSERT_TRUE(!chk.stale_bits && !chk.missing_bits && !chk.journal_dirty &&
			    chk.count_checked && chk.count_ok && !chk.saturated,
		    "concurrency: check clean, nothing saturated");
	for (i = 0; i < nall; i++) {
		int m = matches(&pr, &all[i]);

		errors += m < 0;
		miss += m == 0;
	}
	snprintf(label, sizeof(label), "concurrency: all %ld present flows match in the program",
		 nall);
	ASSERT_EQ(miss, 0, label);
	ASSERT_EQ(errors, 0, "concurrency: every test run succeeded");
	printf("concurrency: %d writers x %d ops in %.3f s (%.0f ops/s, batches of %d under the "
	       "lock), %ld probes meanwhile, %ld flows present\n",
	       NCHILD, CHILD_OPS, wall, NCHILD * (double)CHILD_OPS / wall, CHILD_BATCH, probes,
	       nall);
	free(all);
	flowbloom_bpf__destroy(pr.skel);
close:
	fb_store_close(&f);
	drop_filter(name);
}

/* Issue 9: a writer that opened the filter before a `load --replace`
 * switched arrays, and took the lock after it, must write into the array in
 * use. Before the fix its flows went into the retired array: "added 1
 * flow", then neither query nor the program found it. A writer whose
 * filter was destroyed while it waited must fail, not write into the
 * removed maps. */
static void kernel_stale_writer(void)
{
	struct fb_store w, r, q, w2;
	struct fb_key a[20], x;
	uint64_t seed = 2029;
	struct prog pr;
	size_t bad;
	int i, hits = 0;

	if (!ASSERT_EQ(make_filter("stale", FB_LAYOUT_BLOCKED, 4, 1000, 0.001, &w), 0,
		       "stale writer: create a counting filter"))
		return;
	for (i = 0; i < 20; i++)
		test_random_flow(&seed, &a[i], i & 1);
	test_random_flow(&seed, &x, 0);
	/* The writer has opened the filter (w); now another command replaces
	 * its content while the writer waits for the lock. */
	if (!ASSERT_EQ(fb_store_open("stale", &r), 0, "stale writer: open it again"))
		goto out;
	fb_store_lock(&r);
	ASSERT_EQ(fb_replace(&r, r.hdr->nblocks, r.hdr->k, a, 20, &bad), 0,
		  "stale writer: load --replace meanwhile");
	fb_store_unlock(&r);
	fb_store_close(&r);
	ASSERT_EQ(fb_store_lock(&w), 0, "stale writer: the writer takes the lock");
	ASSERT_EQ(fb_rules_add(&w, &x, 1, &bad), 0, "stale writer: adds its flow");
	fb_store_unlock(&w);
	if (!ASSERT_EQ(fb_store_open("stale", &q), 0, "stale writer: a fresh open"))
		goto out;
	ASSERT_TRUE(fb_bits_test(&q, &x), "stale writer: the added flow is in the array in use");
	ASSERT_EQ(fb_counting_min(&q, &x), 1, "stale writer: ... with its counters");
	ASSERT_EQ(q.hdr->nflows, 21, "stale writer: 20 replaced + 1 added flows");
	if (ASSERT_EQ(prog_load(&q, &pr), 0, "stale writer: load the program")) {
		for (i = 0; i < 20; i++)
			hits += matches(&pr, &a[i]) == 1;
		ASSERT_EQ(matches(&pr, &x), 1, "stale writer: the program matches the added flow");
		ASSERT_EQ(hits, 20, "stale writer: ... and every replaced one");
		flowbloom_bpf__destroy(pr.skel);
	}
	fb_store_close(&q);
	/* Destroyed while a writer waits. */
	if (ASSERT_EQ(fb_store_open("stale", &w2), 0, "stale writer: open before a destroy")) {
		fb_store_close(&w);
		ASSERT_EQ(fb_store_destroy("stale"), 0, "stale writer: destroy meanwhile");
		forget("stale");
		ASSERT_EQ(fb_store_lock(&w2), -1, "stale writer: the lock then fails");
		fb_store_close(&w2);
		return;
	}
out:
	fb_store_close(&w);
	drop_filter("stale");
}

int main(void)
{
	static const struct seqcfg seqs[] = {
		/* Small m, many collisions: 4-bit counters saturate. */
		{ "seq blocked 4-bit m=512", FB_LAYOUT_BLOCKED, 8, 1, 4, 400, 500, 6000, true },
		{ "seq classic 4-bit m=512", FB_LAYOUT_CLASSIC, 6, 1, 4, 400, 700, 6000, true },
		/* Never saturating: exact equality everywhere. */
		{ "seq blocked 4-bit m=2048 k=12", FB_LAYOUT_BLOCKED, 12, 4, 4, 300, 90, 6000,
		  false },
		{ "seq classic 4-bit m=4096", FB_LAYOUT_CLASSIC, 7, 8, 4, 300, 120, 6000, false },
		{ "seq blocked 8-bit m=1024", FB_LAYOUT_BLOCKED, 7, 2, 8, 600, 300, 6000, false },
		{ "seq classic 8-bit m=1024", FB_LAYOUT_CLASSIC, 7, 2, 8, 600, 300, 6000, false },
		/* 8-bit, heavily loaded, still below 255. */
		{ "seq blocked 8-bit m=512 crowded", FB_LAYOUT_BLOCKED, 8, 1, 8, 2000, 1500, 8000,
		  false },
	};
	double t0 = now();
	unsigned i;

	main_pid = getpid();
	snprintf(root, sizeof(root), "/sys/fs/bpf/fbtest_counting_%d", main_pid);
	setenv("FLOWBLOOM_ROOT", root, 1);
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fb_libbpf_logging(false);

	unit_saturation(4);
	unit_saturation(8);
	unit_refuse_and_batches(FB_LAYOUT_BLOCKED);
	unit_refuse_and_batches(FB_LAYOUT_CLASSIC);
	for (i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		unit_sequence(&seqs[i]);
	unit_journal(FB_LAYOUT_BLOCKED, 4);
	unit_journal(FB_LAYOUT_CLASSIC, 4);
	unit_journal(FB_LAYOUT_BLOCKED, 8);
	unit_journal(FB_LAYOUT_CLASSIC, 8);
	unit_journal_window();
	unit_crash_points();
	printf("unit part: %.2f s\n", now() - t0);

	t0 = now();
	kernel_sequence(FB_LAYOUT_BLOCKED, 4);
	kernel_sequence(FB_LAYOUT_CLASSIC, 8);
	kernel_saturation();
	kernel_concurrency();
	kernel_stale_writer();
	printf("kernel part: %.2f s\n", now() - t0);
	return test_summary();
}
