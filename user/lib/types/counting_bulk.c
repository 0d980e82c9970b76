// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Counting filters in batches: add and delete many flows, in block order
 * when the layout allows, and check a batch of deletes (see counting.h).
 * Callers hold the filter's write lock. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "types/counting.h"
#include "types/counting_int.h"
#include "store/gens.h"
#include "store/store.h"

/* In input order: the classic layout's path, and the fallback when the
 * sort's memory is not available. As fb_bits_set_many(): positions for a
 * batch first, prefetch the bit words and counters they touch, then apply
 * flow by flow (each under its own journal entry). A delete batch here
 * was checked first (fb_counting_check_dels), so no flow is refused. */
static void apply_many_inorder(struct fb_store *f, const struct fb_key *keys, size_t n, bool del)
{
	enum { BATCH = 8 };
	__u64 pos[BATCH][FB_MAX_K];
	unsigned k = f->hdr->k, i;
	size_t x, y, m;

	for (x = 0; x < n; x += m) {
		m = n - x < BATCH ? n - x : BATCH;
		for (y = 0; y < m; y++) {
			fb_cnt_positions(f, &keys[x + y], pos[y]);
			for (i = 0; i < k; i++) {
				fb_cnt_prefetch(f, pos[y][i]);
				__builtin_prefetch(fb_cnt_bit_word(f->blocks, pos[y][i]), 1);
			}
		}
		for (y = 0; y < m; y++)
			(del ? fb_cnt_del_at : fb_cnt_add_at)(f, &keys[x + y], pos[y], k);
	}
}

static int check_dels_inorder(const struct fb_store *f, const struct fb_key *keys, size_t n,
			      size_t *bad)
{
	enum { BATCH = 8 };
	__u64 pos[BATCH][FB_MAX_K];
	unsigned max = fb_counting_max(f), k = f->hdr->k, i;
	struct pending t;
	size_t x, y, m;
	int rc = 0;

	if (pending_open(f, &t))
		return -2;
	/* In order, as the deletes will run: *bad is exactly the first flow
	 * that would find a counter already brought to 0 by the batch. */
	for (x = 0; x < n && !rc; x += m) {
		m = n - x < BATCH ? n - x : BATCH;
		for (y = 0; y < m; y++) {
			fb_cnt_positions(f, &keys[x + y], pos[y]);
			for (i = 0; i < k; i++) {
				fb_cnt_prefetch(f, pos[y][i]);
				__builtin_prefetch(&t.p[pos[y][i] * t.bits / 8], 1);
			}
		}
		for (y = 0; y < m && !rc; y++) {
			for (i = 0; i < k; i++) {
				unsigned c = fb_counting_get(f, pos[y][i]), d;

				if (c >= max)
					continue; /* saturated: never decremented */
				d = pending_get(&t, pos[y][i]);
				if (c <= d) {
					*bad = x + y;
					rc = -1;
					break;
				}
				pending_put(&t, pos[y][i], d + 1);
			}
		}
	}
	munmap(t.p, t.bytes);
	return rc;
}

/*
 * Bulk updates in block order. With the blocked layout all k positions of
 * a flow lie in one 512-bit block, so its bit word and its k counters lie
 * in that block's share of the two arrays. A batch applied in input order
 * touches them at random: at 256 MiB (1 GiB of 4-bit counters) two random
 * 4 KiB pages a flow, and the page walks, not DRAM, bound the rate
 * (docs/performance.md, docs/counting-fill.txt). Sorted by block, a
 * batch walks both arrays once, upward.
 *
 * Each flow is still applied whole under its own journal entry
 * (fb_cnt_add_at, fb_cnt_del_at), so crash recovery is unchanged; only the
 * order of whole flows differs, and it cannot change the result:
 * saturating increments commute, and so do the decrements of a checked
 * batch (a counter either stays saturated or ends at its value less its
 * decrements). A crash leaves some subset of the batch applied instead of
 * a prefix: either way exactly the flows the counters say, and a re-run
 * adds the applied ones again.
 *
 * The sorted copy carries the keys: the journal copies each flow's key,
 * and read through an index in block order they would be read at random,
 * which took 1.3-2 times as long as a batch sorted with its keys (at 10M
 * flows and at 256 MiB). It is 48 bytes a flow, so it is made a group at
 * a time: the flows of one ORDER_GROUPS-th of the buckets (the top
 * ORDER_TOP bits of the block index), which go to as much of the
 * counters. A first pass hashes the batch and lists each group's flows
 * (4-byte indices, in input order); each group then reads its keys
 * upward, prefetched, hashes them again into their buckets and sorts each
 * bucket (in cache) on the rest of the index. The entries stay where the
 * copy put them: what is sorted is an 8-byte record a flow (the rest of
 * its block index above its entry's index), a sixth of the bytes an entry
 * moves, and the flows are then applied through the records, their
 * entries read ahead (a bucket's entries lie within a few hundred KiB,
 * in cache). So a batch holds
 * 4 + 56 / ORDER_GROUPS bytes a flow while sorting (18), not 56, for one
 * more hash a flow: as fast as one copy of the whole batch (more groups
 * were slower: 8 cost about 5 % at 256 MiB), with fewer pages faulted in
 * (docs/counting-fill.txt, section 3.5). The sort is stable (the flows of
 * one block keep their input order). Too sparse a
 * batch (fewer than one flow in ORDER_SPARSE blocks), the classic layout
 * (positions spread over the array) or no memory for the copy: flows go in
 * input order.
 */
struct order_ent {
	struct fb_key key;
	__u64 h; /* its hash */
};

#define ORDER_TOP 8	    /* bits of the block index of a flow's bucket */
#define ORDER_GROUPS 4	    /* groups of buckets sorted one after the other */
#define ORDER_DIGIT 8	    /* at most this many bits per pass inside a bucket */
#define ORDER_SPARSE 64	    /* sort a batch of at least nblocks / this flows */
#define ORDER_AHEAD 16	    /* flows read ahead of the one applied (entries 2x) */
#define ORDER_KEYS_AHEAD 64 /* keys read ahead by the first pass (2.5 KiB) */
/* Flows sorted at once: 18 bytes each while sorting (288 MiB at most). A
 * longer batch is applied a chunk at a time, and a longer delete batch is
 * checked in input order (check_dels_inorder). */
#define ORDER_CHUNK ((size_t)1 << 24)

/* ORDER_CHUNK, or less under the test hook FLOWBLOOM_TEST_ORDER_CHUNK=N
 * (not for use; read at each call), so that tests reach the chunked paths
 * without batches of 16M flows (tests/unit/test_counting_bulk.c). */
static size_t order_chunk(void)
{
	const char *v = getenv("FLOWBLOOM_TEST_ORDER_CHUNK");
	long n = v ? atol(v) : 0;

	return n > 0 && (size_t)n < ORDER_CHUNK ? (size_t)n : ORDER_CHUNK;
}

static __u32 ent_block(const struct fb_store *f, const struct order_ent *e)
{
	return fb_blocked_index(e->h, f->hdr->nblocks);
}

/* A flow's hash; kw: the filter's NH words (fb_hash_with()), looked up
 * once a batch. */
static __always_inline __u64 order_hash(const struct fb_header *h, const __u64 *kw,
					const struct fb_key *k)
{
	return fb_hash_with(k, h->hash, h->key, kw);
}

static const __u64 *order_kw(const struct fb_header *h)
{
	return h->hash == FB_HASH_NHK ? fb_nhk_cached(h->key) : NULL;
}

/* The sort's arrays: anonymous memory, returned whole by munmap. Every
 * page of them is written, so they are faulted in at once (MAP_POPULATE):
 * a page fault each cost a quarter of the copy into buckets (100 against
 * 75 ms for 4M flows). Not in transparent huge pages (MADV_HUGEPAGE): that
 * made the fill at 256 MiB faster still (12-13 against 10 M flows/s), but
 * `add -f` of 10M flows slower (1.8-2.0 s against 1.1 s), zeroing huge
 * pages of guest memory never touched before (docs/counting-fill.txt). */
static void *order_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void order_release(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

/* Stable counting sort of the records a[0..n) on bits [shift, shift +
 * width) of their upper half, into b; cnt: that digit's count a value. */
static void order_pass(const __u64 *a, __u64 *b, size_t n, unsigned shift, unsigned width,
		       size_t *cnt)
{
	__u32 mask = (1U << width) - 1, v;
	size_t sum = 0, c, y;

	for (v = 0; v <= mask; v++) {
		c = cnt[v];
		cnt[v] = sum;
		sum += c;
	}
	for (y = 0; y < n; y++)
		b[cnt[a[y] >> (32 + shift) & mask]++] = a[y];
}

/* A batch in block order, a group at a time (order_open, order_group). */
struct order {
	const struct fb_key *keys;
	size_t n;
	__u32 *idx; /* the flows' indices in keys, a group after the other */
	/* Bucket b's flows are [start[b], start[b + 1]) of the whole order. */
	size_t start[(1U << ORDER_TOP) + 1];
	unsigned low;	 /* bits of the block index below a bucket's */
	unsigned groups; /* how many */
	/* Group g is buckets [first[g], first[g + 1]). */
	unsigned first[ORDER_GROUPS + 1];
	size_t gmost, bmost; /* flows in the largest group, bucket */
	struct order_ent *e; /* a group's flows by bucket, gmost entries */
	/* The group in block order: a record a flow, the bits of its block
	 * index below its bucket's above (32 up) its entry's index in e. */
	__u64 *r;
	__u64 *s; /* scratch for the largest bucket's records */
};

/* The y-th flow of the group in block order. */
static const struct order_ent *order_at(const struct order *o, size_t y)
{
	return &o->e[(__u32)o->r[y]];
}

static void order_close(struct order *o)
{
	order_release(o->idx, o->n * sizeof(*o->idx));
	order_release(o->e, o->gmost * sizeof(*o->e));
	order_release(o->r, o->gmost * sizeof(*o->r));
	free(o->s);
}

/* Hash keys[0..n) into their buckets, list each group's flows; false: not
 * worth sorting, or out of memory (nothing is allocated then). */
static bool order_open(const struct fb_store *f, const struct fb_key *keys, size_t n,
		       struct order *o)
{
	const struct fb_header *h = f->hdr;
	const __u64 *kw = order_kw(h);
	size_t at[ORDER_GROUPS], y;
	unsigned bits = 0, top, g, b, used, per;
	__u8 *bucket, group[1U << ORDER_TOP];

	if (h->layout == FB_LAYOUT_CLASSIC || !n || n > UINT32_MAX ||
	    (__u64)n * ORDER_SPARSE < h->nblocks)
		return false;
	memset(o, 0, sizeof(*o));
	o->keys = keys;
	o->n = n;
	while (bits < 32 && (1ULL << bits) < h->nblocks)
		bits++;
	top = bits < ORDER_TOP ? bits : ORDER_TOP;
	o->low = bits - top;
	/* The buckets in use (nblocks need not be a power of 2), in groups
	 * of as many, so that the groups hold about as many flows. */
	used = ((h->nblocks - 1) >> o->low) + 1;
	o->groups = used < ORDER_GROUPS ? used : ORDER_GROUPS;
	per = (used + o->groups - 1) / o->groups;
	for (g = 0; g <= o->groups; g++)
		o->first[g] = g * per < used ? g * per : used;
	for (b = 0; b < used; b++)
		group[b] = b / per;
	bucket = order_alloc(n);
	o->idx = bucket ? order_alloc(n * sizeof(*o->idx)) : NULL;
	if (!o->idx) {
		order_release(bucket, n);
		return false;
	}
	/* The keys are read upward, but the hardware's prefetch stops at
	 * each 4 KiB page: they are read ahead across pages (the pass took
	 * 28 instead of 35 ms for 4M flows). */
	for (y = 0; y < n; y++) {
		if (y + ORDER_KEYS_AHEAD < n)
			__builtin_prefetch(&keys[y + ORDER_KEYS_AHEAD]);
		b = fb_blocked_index(order_hash(h, kw, &keys[y]), h->nblocks) >> o->low;
		bucket[y] = b;
		o->start[b + 1]++;
	}
	for (g = 0; g < o->groups; g++) {
		at[g] = o->start[o->first[g]];
		for (b = o->first[g]; b < o->first[g + 1]; b++) {
			o->bmost = o->start[b + 1] > o->bmost ? o->start[b + 1] : o->bmost;
			o->start[b + 1] += o->start[b];
		}
		y = o->start[o->first[g + 1]] - at[g];
		o->gmost = y > o->gmost ? y : o->gmost;
	}
	/* Each group's flows, in input order. */
	for (y = 0; y < n; y++)
		o->idx[at[group[bucket[y]]]++] = y;
	order_release(bucket, n);
	o->e = order_alloc(o->gmost * sizeof(*o->e));
	o->r = order_alloc(o->gmost * sizeof(*o->r));
	o->s = o->low ? malloc(o->bmost * sizeof(*o->s)) : NULL;
	if (!o->e || !o->r || (o->low && !o->s)) {
		order_close(o);
		return false;
	}
	return true;
}

/* A bucket's records, o->r[at, at + m) (made by order_group), sorted on
 * the low bits of the block index, LSD, at most ORDER_DIGIT bits a pass,
 * through the scratch. */
static void order_bucket(struct order *o, size_t at, size_t m)
{
	unsigned passes = (o->low + ORDER_DIGIT - 1) / ORDER_DIGIT, width, p;
	size_t cnt[(32 + ORDER_DIGIT - 1) / ORDER_DIGIT][1U << ORDER_DIGIT], y;
	__u64 *r = o->r + at, *src = r, *dst = o->s, *t;
	__u32 mask, v;

	if (!o->low || m < 2)
		return;
	width = (o->low + passes - 1) / passes;
	mask = (1U << width) - 1;
	memset(cnt, 0, passes * sizeof(cnt[0]));
	for (y = 0; y < m; y++) {
		v = r[y] >> 32;
		for (p = 0; p < passes; p++)
			cnt[p][v >> (p * width) & mask]++;
	}
	for (p = 0; p < passes; p++) {
		order_pass(src, dst, m, p * width, width, cnt[p]);
		t = src;
		src = dst;
		dst = t;
	}
	if (src != r)
		memcpy(r, src, m * sizeof(*r));
}

/* Group g's flows, with their hashes, into o->e by bucket, and in block
 * order in o->r, stable; returns how many. */
static size_t order_group(const struct fb_store *f, struct order *o, unsigned g)
{
	const struct fb_header *h = f->hdr;
	const __u64 *kw = order_kw(h);
	unsigned b0 = o->first[g], b1 = o->first[g + 1], b;
	size_t at[1U << ORDER_TOP], base = o->start[b0], end = o->start[b1], j, y;
	__u32 lowmask = (1U << o->low) - 1, blk;
	struct order_ent *e = o->e;
	const struct fb_key *k;
	__u64 v;

	for (b = b0; b < b1; b++)
		at[b] = o->start[b] - base;
	/* The group's flows, hashed again, into their buckets in input
	 * order: the keys read upward through the group's list, prefetched.
	 * Each flow's record goes where its entry does. */
	for (j = base; j < end; j++) {
		if (j + ORDER_AHEAD < end) {
			k = &o->keys[o->idx[j + ORDER_AHEAD]];
			__builtin_prefetch(k);
			__builtin_prefetch((const char *)(k + 1) - 1);
		}
		k = &o->keys[o->idx[j]];
		v = order_hash(h, kw, k);
		blk = fb_blocked_index(v, h->nblocks);
		y = at[blk >> o->low]++;
		e[y].key = *k;
		e[y].h = v;
		o->r[y] = (__u64)(blk & lowmask) << 32 | y;
	}
	for (b = b0; b < b1; b++)
		order_bucket(o, o->start[b] - base, o->start[b + 1] - o->start[b]);
	return end - base;
}

/* Flow y of the group's n in block order: its bit line and its counters
 * read ahead of their use, and the entry of flow y + ORDER_AHEAD read
 * ahead of this. Inline: a function that only prefetches has no effect
 * the compiler is bound to keep. */
static __always_inline void order_ahead(const struct fb_store *f, const struct order *o, size_t y,
					size_t n)
{
	unsigned bytes = FB_BLOCK_BITS / 8 * f->cnt_hdr->bits, i;
	const struct order_ent *a;
	const __u8 *c;
	__u32 blk;

	if (y >= n)
		return;
	if (y + ORDER_AHEAD < n) {
		a = order_at(o, y + ORDER_AHEAD);
		__builtin_prefetch(a);
		__builtin_prefetch((const char *)(a + 1) - 1);
	}
	blk = ent_block(f, order_at(o, y));
	__builtin_prefetch(&f->blocks[FB_HDR_BLOCKS + blk], 1);
	/* The block's counters, whole: 4 or 8 lines, whichever positions. */
	c = f->cnt + (__u64)blk * bytes;
	for (i = 0; i < bytes; i += 64)
		__builtin_prefetch(c + i, 1);
}

/* Flow y's entry and positions, its memory read ahead ORDER_AHEAD flows
 * before (order_ahead(), run for flows 0..ORDER_AHEAD-1 first). */
static __always_inline const struct order_ent *
order_next(const struct fb_store *f, const struct order *o, size_t y, size_t n, __u64 pos[FB_MAX_K])
{
	const struct fb_header *h = f->hdr;
	const struct order_ent *e = order_at(o, y);

	order_ahead(f, o, y + ORDER_AHEAD, n);
	fb_positions(e->h, h->layout, h->nblocks, h->k, pos);
	return e;
}

/* fb_cnt_add_at or fb_cnt_del_at for each of the group's n flows, in
 * block order. */
static void apply_ordered(struct fb_store *f, const struct order *o, size_t n, bool del)
{
	const struct order_ent *e;
	unsigned k = f->hdr->k;
	__u64 pos[FB_MAX_K];
	size_t y;

	for (y = 0; y < ORDER_AHEAD; y++)
		order_ahead(f, o, y, n);
	for (y = 0; y < n; y++) {
		e = order_next(f, o, y, n, pos);
		if (del)
			fb_cnt_del_at(f, &e->key, pos, k);
		else
			fb_cnt_add_at(f, &e->key, pos, k);
	}
}

/* Flows sorted and applied at once: ORDER_CHUNK, and no more than a part
 * of the batch journal holds (counting_log.h), if f has one. */
static size_t chunk_of(const struct fb_store *f)
{
	size_t chunk = order_chunk(), part = fb_cntlog_part_flows(f);

	return part && part < chunk ? part : chunk;
}

/* fb_cnt_add_at or fb_cnt_del_at for each flow of keys[0..n): a chunk at
 * a time, in input order, each chunk a part of the batch journal (all or
 * nothing across a kill) and in block order, else in input order. */
static void apply_many(struct fb_store *f, const struct fb_key *keys, size_t n, bool del)
{
	size_t x, m, chunk = chunk_of(f);
	struct fb_cntlog l;
	struct order o;
	bool logged;
	unsigned g;

	for (x = 0; x < n; x += m) {
		m = n - x < chunk ? n - x : chunk;
		logged = fb_cntlog_begin(f, &l, del ? FB_JOURNAL_DEL : FB_JOURNAL_ADD, n, x);
		if (!order_open(f, keys + x, m, &o)) {
			apply_many_inorder(f, keys + x, m, del);
		} else {
			for (g = 0; g < o.groups; g++)
				apply_ordered(f, &o, order_group(f, &o, g), del);
			order_close(&o);
		}
		if (logged)
			fb_cntlog_end(&l);
	}
}

void fb_counting_add_many(struct fb_store *f, const struct fb_key *keys, size_t n)
{
	apply_many(f, keys, n, false);
}

void fb_counting_del_many(struct fb_store *f, const struct fb_key *keys, size_t n)
{
	apply_many(f, keys, n, true);
}

/*
 * Would deleting the group's n flows fail? As check_dels_inorder() in
 * input order: two flows share a counter only if they share a block, and
 * the flows of a block are consecutive here, in input order, so each flow
 * sees the same pending decrements as in input order, and one fails here
 * if and only if one fails there (by induction on the input index: every
 * flow before the first failing one sees all its predecessors' decrements
 * in both orders). The pending decrements fit in one block's worth of
 * counters, never cleared: pend[off] counts only while tag[off] names the
 * current block.
 */
static bool check_ordered(const struct fb_store *f, const struct order *o, size_t n)
{
	__u32 tag[FB_BLOCK_BITS] = { 0 }, group = 0, blk = 0;
	unsigned max = fb_counting_max(f), k = f->hdr->k, i;
	__u64 pos[FB_MAX_K], base = 0;
	__u16 pend[FB_BLOCK_BITS];
	size_t y;

	for (y = 0; y < ORDER_AHEAD; y++)
		order_ahead(f, o, y, n);
	for (y = 0; y < n; y++) {
		const struct order_ent *e = order_next(f, o, y, n, pos);

		if (!group || ent_block(f, e) != blk) {
			blk = ent_block(f, e);
			base = (__u64)blk * FB_BLOCK_BITS;
			group++;
		}
		for (i = 0; i < k; i++) {
			unsigned c = fb_counting_get(f, pos[i]), off = pos[i] - base, d;

			if (c >= max)
				continue; /* saturated: never decremented */
			d = tag[off] == group ? pend[off] : 0;
			if (c <= d)
				return true;
			tag[off] = group;
			pend[off] = d + 1;
		}
	}
	return false;
}

int fb_counting_check_dels(const struct fb_store *f, const struct fb_key *keys, size_t n,
			   size_t *bad)
{
	bool fails = false;
	struct order o;
	unsigned g;

	*bad = 0;
	if (n > order_chunk() || !order_open(f, keys, n, &o))
		return n ? check_dels_inorder(f, keys, n, bad) : 0;
	/* Two flows share a counter only if they share a block: a group. */
	for (g = 0; g < o.groups && !fails; g++)
		fails = check_ordered(f, &o, order_group(f, &o, g));
	order_close(&o);
	return fails ? check_dels_inorder(f, keys, n, bad) : 0; /* names the first */
}

/*
 * The deletes of e[0..n) in block order, each checked as it comes: its
 * counters already carry the decrements of every flow before it, which is
 * what check_ordered() would have counted apart, so one pass over the
 * counters does both (a separate check made `del -f` slower than `add -f`
 * by the pass). Returns how many were applied: n, or the index of the
 * first that fails, the flows before it already deleted.
 */
static size_t del_ordered_checked(struct fb_store *f, const struct order *o, size_t n)
{
	const struct order_ent *e;
	unsigned k = f->hdr->k;
	__u64 pos[FB_MAX_K];
	size_t y;

	for (y = 0; y < ORDER_AHEAD; y++)
		order_ahead(f, o, y, n);
	for (y = 0; y < n; y++) {
		e = order_next(f, o, y, n, pos);
		if (!fb_cnt_del_checked_at(f, &e->key, pos, k))
			return y;
	}
	return n;
}

/* One part of a delete batch: keys[0..n), flows x.. of the batch's total,
 * sorted and checked as they are deleted, all or nothing (a refusal's
 * putting back included: a kill then rolls back to the counters before
 * the part). 0; -1 with *bad (in the part) if a flow is not there once
 * the parts before are out, this part's flows put back; -2; 1 if the
 * sort's memory is not available (nothing done). */
static int del_part(struct fb_store *f, const struct fb_key *keys, size_t n, size_t total, size_t x,
		    size_t *bad)
{
	struct fb_journal journal;
	struct fb_cntlog l;
	bool logged;
	__u64 pos[FB_MAX_K];
	size_t done, m;
	struct order o;
	unsigned g;

	if (!order_open(f, keys, n, &o))
		return 1;
	journal = f->cnt_hdr->journal;
	logged = fb_cntlog_begin(f, &l, FB_JOURNAL_DEL, total, x);
	for (g = 0; g < o.groups; g++) {
		m = order_group(f, &o, g);
		done = del_ordered_checked(f, &o, m);
		if (done == m)
			continue;
		/* Refused: the flows deleted so far go back (an add undoes a
		 * delete exactly: both leave a saturated counter alone), this
		 * group's newest first, then the groups before, sorted again.
		 * Only flows the batch named were out meanwhile. Then the input
		 * order names the first flow that fails. The journal has
		 * every word they change saved already. */
		l.off = true;
		while (done-- > 0) {
			const struct order_ent *e = order_at(&o, done);

			fb_positions(e->h, f->hdr->layout, f->hdr->nblocks, f->hdr->k, pos);
			fb_cnt_add_at(f, &e->key, pos, f->hdr->k);
		}
		while (g-- > 0)
			apply_ordered(f, &o, order_group(f, &o, g), false);
		/* The journal as it was too (idle before and after): not a
		 * byte of the filter differs from before the part. */
		f->cnt_hdr->journal = journal;
		if (logged)
			fb_cntlog_end(&l);
		order_close(&o);
		return check_dels_inorder(f, keys, n, bad);
	}
	if (logged)
		fb_cntlog_end(&l);
	order_close(&o);
	return 0;
}

int fb_counting_del_batch(struct fb_store *f, const struct fb_key *keys, size_t n, size_t *bad)
{
	size_t x, m, chunk = chunk_of(f);
	int rc = 0;

	*bad = 0;
	/* A part at a time, each checked as it is deleted (one pass over
	 * the counters). A part refused: the parts before go back in, so
	 * the batch changes nothing (a kill while they go back leaves the
	 * first of them back in: counting_log.h). */
	for (x = 0; x < n && !rc; x += m) {
		m = n - x < chunk ? n - x : chunk;
		rc = del_part(f, keys + x, m, n, x, bad);
		if (rc == 1) {
			/* No memory to sort: the rest checked whole first,
			 * then deleted in input order. */
			rc = fb_counting_check_dels(f, keys + x, n - x, bad);
			if (!rc)
				apply_many(f, keys + x, n - x, true);
			m = n - x;
		}
		if (rc) {
			*bad += x;
			if (x)
				apply_many(f, keys, x, false);
		}
	}
	return rc;
}
