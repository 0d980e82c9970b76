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
#include "store/store.h"

/* In input order: the classic layout's path, and the fallback when the
 * sort's memory is not available. As fb_bits_set_many(): positions for a
 * batch first, prefetch the bit words and counters they touch, then apply
 * flow by flow (each under its own journal entry). A delete batch was
 * checked whole first (fb_counting_check_dels), so no flow here is
 * refused. */
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
				__builtin_prefetch(fb_cnt_bit_word(f, pos[y][i]), 1);
			}
		}
		for (y = 0; y < m; y++)
			(del ? fb_cnt_del_at : fb_cnt_add_at)(f, &keys[x + y], pos[y], k);
	}
}

/*
 * Pending decrements per position while checking a batch of deletes: an
 * array shaped like the counters (same width), so checking costs one
 * access per position, as deleting does. It is anonymous memory the kernel
 * zeroes on first touch: a batch backs at most the pages it touches (at
 * most the counter map's size), whatever the filter's size. A pending
 * count never needs more than the counter's width: it stops at the
 * counter's value, below its maximum.
 */
struct pending {
	__u8 *p;
	size_t bytes;
	unsigned bits;
};

static unsigned pending_get(const struct pending *t, __u64 p)
{
	if (t->bits == 8)
		return t->p[p];
	return (t->p[p / 2] >> ((p & 1) * 4)) & 0xf;
}

static void pending_put(struct pending *t, __u64 p, unsigned v)
{
	if (t->bits == 8) {
		t->p[p] = v;
		return;
	}
	__u8 *b = &t->p[p / 2];
	unsigned shift = (p & 1) * 4;

	*b = (*b & ~(0xf << shift)) | (v << shift);
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

	t.bits = f->cnt_hdr->bits;
	t.bytes = (fb_header_mbits(f->hdr) * t.bits + 7) / 8;
	t.p = mmap(NULL, t.bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t.p == MAP_FAILED)
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
 * (fb_cnt_add_at, fb_cnt_del_at), so crash recovery is unchanged; only the order of whole flows
 * differs, and it cannot change the result: saturating increments commute,
 * and so do the decrements of a checked batch (a counter either stays
 * saturated or ends at its value less its decrements). A crash leaves some
 * subset of the batch applied instead of a prefix: either way exactly the
 * flows the counters say, and a re-run adds the applied ones again.
 *
 * The sorted copy carries the keys (the journal copies each flow's key:
 * read through an index they would be read at random, which measured as
 * slow as the counters were), 48 bytes a flow plus 8 while sorting, up to
 * ORDER_CHUNK flows at once. The sort is stable (the flows of one block
 * keep their input order): one scatter pass on the top ORDER_TOP bits of
 * the block index, then each bucket (in cache) sorted on the rest. Too
 * sparse a batch (fewer than one flow in ORDER_SPARSE blocks), the classic
 * layout (positions spread over the array) or no memory for the copy:
 * flows go in input order.
 */
struct order_ent {
	struct fb_key key;
	__u64 h; /* its hash */
};

#define ORDER_TOP 8	/* bits of the block index the first pass sorts on */
#define ORDER_DIGIT 8	/* at most this many bits per pass inside a bucket */
#define ORDER_SPARSE 64 /* sort a batch of at least nblocks / this flows */
#define ORDER_AHEAD 16	/* flows prefetched ahead of the one applied */
/* Flows sorted at once: 56 bytes each while sorting (896 MiB at most). A
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

/* The sort's arrays: anonymous memory, returned whole by munmap. Not in
 * transparent huge pages (MADV_HUGEPAGE): that made the fill at 256 MiB
 * faster still (12-13 against 10 M flows/s), but `add -f` of 10M flows
 * slower (1.8-2.0 s against 1.1 s), zeroing huge pages of guest memory
 * never touched before (docs/counting-fill.txt). */
static void *order_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void order_release(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

/* Stable counting sort of a[0..n) on bits [shift, shift + width) of the
 * block index, into b. */
static void order_pass(const struct fb_store *f, const struct order_ent *a, struct order_ent *b,
		       size_t n, unsigned shift, unsigned width)
{
	size_t cnt[1U << ORDER_DIGIT] = { 0 }, sum = 0, c, y;
	__u32 mask = (1U << width) - 1, v;

	for (y = 0; y < n; y++)
		cnt[ent_block(f, &a[y]) >> shift & mask]++;
	for (v = 0; v <= mask; v++) {
		c = cnt[v];
		cnt[v] = sum;
		sum += c;
	}
	for (y = 0; y < n; y++)
		b[cnt[ent_block(f, &a[y]) >> shift & mask]++] = a[y];
}

/* keys[0..n) with their hashes, sorted by block, stable; order_release()
 * it (n entries). NULL: not worth it, or out of memory (nothing is
 * allocated then). */
static struct order_ent *order_batch(const struct fb_store *f, const struct fb_key *keys, size_t n)
{
	const struct fb_header *h = f->hdr;
	size_t start[(1U << ORDER_TOP) + 1] = { 0 }, at[1U << ORDER_TOP], most = 0, y;
	unsigned bits = 0, top, low, b, passes, width, p;
	struct order_ent *e, *s, *src, *dst, *t;
	__u64 *hs;

	if (h->layout == FB_LAYOUT_CLASSIC || !n || n > SIZE_MAX / sizeof(*e) ||
	    (__u64)n * ORDER_SPARSE < h->nblocks)
		return NULL;
	while (bits < 32 && (1ULL << bits) < h->nblocks)
		bits++;
	top = bits < ORDER_TOP ? bits : ORDER_TOP;
	low = bits - top;
	hs = order_alloc(n * sizeof(*hs));
	e = order_alloc(n * sizeof(*e));
	if (!hs || !e)
		goto fail;
	/* Hash in input order, counting each bucket's flows... */
	for (y = 0; y < n; y++) {
		hs[y] = fb_hash_key(&keys[y], h->hash, h->key);
		start[(fb_blocked_index(hs[y], h->nblocks) >> low) + 1]++;
	}
	for (b = 0; b < 1U << top; b++) {
		most = start[b + 1] > most ? start[b + 1] : most;
		start[b + 1] += start[b];
		at[b] = start[b];
	}
	/* ...then copy keys and hashes into their buckets, reading both in
	 * order. */
	for (y = 0; y < n; y++) {
		b = fb_blocked_index(hs[y], h->nblocks) >> low;
		e[at[b]].key = keys[y];
		e[at[b]++].h = hs[y];
	}
	order_release(hs, n * sizeof(*hs));
	hs = NULL;
	if (!low)
		return e;
	/* Each bucket on the low bits, LSD, through a scratch the size of the
	 * largest bucket; a bucket's result is copied back if it ends there. */
	s = malloc(most * sizeof(*s));
	if (!s)
		goto fail;
	passes = (low + ORDER_DIGIT - 1) / ORDER_DIGIT;
	width = (low + passes - 1) / passes;
	for (b = 0; b < 1U << top; b++) {
		size_t m = start[b + 1] - start[b];

		if (m < 2)
			continue;
		src = e + start[b];
		dst = s;
		for (p = 0; p * width < low; p++) {
			order_pass(f, src, dst, m, p * width,
				   low - p * width < width ? low - p * width : width);
			t = src;
			src = dst;
			dst = t;
		}
		if (src == s)
			memcpy(e + start[b], s, m * sizeof(*s));
	}
	free(s);
	return e;
fail:
	order_release(hs, n * sizeof(*hs));
	order_release(e, n * sizeof(*e));
	return NULL;
}

/* Flow e's positions, its bits and counters read ahead of their use. */
static void order_prefetch(const struct fb_store *f, const struct order_ent *e, __u64 pos[FB_MAX_K])
{
	const struct fb_header *h = f->hdr;
	unsigned bytes = FB_BLOCK_BITS / 8 * f->cnt_hdr->bits, i;
	const __u8 *c = f->cnt + (__u64)fb_blocked_index(e->h, h->nblocks) * bytes;

	fb_positions(e->h, h->layout, h->nblocks, h->k, pos);
	__builtin_prefetch(fb_cnt_bit_word((struct fb_store *)f, pos[0]), 1);
	/* The block's counters, whole: 4 or 8 lines, whichever positions. */
	for (i = 0; i < bytes; i += 64)
		__builtin_prefetch(c + i, 1);
}

/* fb_cnt_add_at or fb_cnt_del_at for each of e[0..n), in that order. */
static void apply_ordered(struct fb_store *f, const struct order_ent *e, size_t n, bool del)
{
	__u64 pos[ORDER_AHEAD][FB_MAX_K];
	unsigned k = f->hdr->k;
	size_t y, z;

	/* Flow y's positions go where flow y - ORDER_AHEAD's were, once that
	 * one is applied. */
	for (y = 0; y < n + ORDER_AHEAD; y++) {
		if (y >= ORDER_AHEAD) {
			z = y - ORDER_AHEAD;
			if (del)
				fb_cnt_del_at(f, &e[z].key, pos[z % ORDER_AHEAD], k);
			else
				fb_cnt_add_at(f, &e[z].key, pos[z % ORDER_AHEAD], k);
		}
		if (y < n)
			order_prefetch(f, &e[y], pos[y % ORDER_AHEAD]);
	}
}

/* fb_cnt_add_at or fb_cnt_del_at for each flow of keys[0..n): in block order, a chunk of
 * up to ORDER_CHUNK flows at a time, else in input order. */
static void apply_many(struct fb_store *f, const struct fb_key *keys, size_t n, bool del)
{
	size_t x, m, chunk = order_chunk();

	for (x = 0; x < n; x += m) {
		struct order_ent *e;

		m = n - x < chunk ? n - x : chunk;
		e = order_batch(f, keys + x, m);
		if (e)
			apply_ordered(f, e, m, del);
		else
			apply_many_inorder(f, keys + x, m, del);
		order_release(e, m * sizeof(*e));
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
 * Would deleting e[0..n) fail? As check_dels_inorder() in input order: two
 * flows share a counter only if they share a block, and the flows of a
 * block are consecutive here, in input order, so each flow sees the same
 * pending decrements as in input order, and one fails here if and only if
 * one fails there (by induction on the input index: every flow before the
 * first failing one sees all its predecessors' decrements in both orders).
 * The pending decrements fit in one block's worth of counters, never
 * cleared: pend[o] counts only while tag[o] names the current block.
 */
static bool check_ordered(const struct fb_store *f, const struct order_ent *e, size_t n)
{
	__u32 tag[FB_BLOCK_BITS] = { 0 }, group = 0, blk = 0;
	unsigned max = fb_counting_max(f), k = f->hdr->k, i;
	__u64 pos[ORDER_AHEAD][FB_MAX_K], base = 0;
	__u16 pend[FB_BLOCK_BITS];
	size_t y, z;

	for (y = 0; y < n + ORDER_AHEAD; y++) {
		if (y >= ORDER_AHEAD) {
			const __u64 *q = pos[(z = y - ORDER_AHEAD) % ORDER_AHEAD];

			if (!group || ent_block(f, &e[z]) != blk) {
				blk = ent_block(f, &e[z]);
				base = (__u64)blk * FB_BLOCK_BITS;
				group++;
			}
			for (i = 0; i < k; i++) {
				unsigned c = fb_counting_get(f, q[i]), o = q[i] - base, d;

				if (c >= max)
					continue; /* saturated: never decremented */
				d = tag[o] == group ? pend[o] : 0;
				if (c <= d)
					return true;
				tag[o] = group;
				pend[o] = d + 1;
			}
		}
		if (y < n)
			order_prefetch(f, &e[y], pos[y % ORDER_AHEAD]);
	}
	return false;
}

int fb_counting_check_dels(const struct fb_store *f, const struct fb_key *keys, size_t n,
			   size_t *bad)
{
	struct order_ent *e = n <= order_chunk() ? order_batch(f, keys, n) : NULL;
	bool fails;

	*bad = 0;
	if (!e)
		return n ? check_dels_inorder(f, keys, n, bad) : 0;
	fails = check_ordered(f, e, n);
	order_release(e, n * sizeof(*e));
	/* Refused: the input order names the first flow that fails. */
	return fails ? check_dels_inorder(f, keys, n, bad) : 0;
}

/*
 * The deletes of e[0..n) in block order, each checked as it comes: its
 * counters already carry the decrements of every flow before it, which is
 * what check_ordered() would have counted apart, so one pass over the
 * counters does both (a separate check made `del -f` slower than `add -f`
 * by the pass). Returns how many were applied: n, or the index of the
 * first that fails, the flows before it already deleted.
 */
static size_t del_ordered_checked(struct fb_store *f, const struct order_ent *e, size_t n)
{
	__u64 pos[ORDER_AHEAD][FB_MAX_K];
	unsigned k = f->hdr->k;
	size_t y, z;

	for (y = 0; y < n + ORDER_AHEAD; y++) {
		if (y >= ORDER_AHEAD) {
			z = y - ORDER_AHEAD;
			if (!fb_cnt_del_checked_at(f, &e[z].key, pos[z % ORDER_AHEAD], k))
				return z;
		}
		if (y < n)
			order_prefetch(f, &e[y], pos[y % ORDER_AHEAD]);
	}
	return n;
}

int fb_counting_del_batch(struct fb_store *f, const struct fb_key *keys, size_t n, size_t *bad)
{
	struct order_ent *e = n <= order_chunk() ? order_batch(f, keys, n) : NULL;
	struct fb_journal journal;
	__u64 pos[FB_MAX_K];
	size_t done;
	int rc;

	*bad = 0;
	if (!e) {
		/* Input order, or a batch sorted a chunk at a time. */
		rc = n ? check_dels_inorder(f, keys, n, bad) : 0;
		if (!rc)
			apply_many(f, keys, n, true);
		return rc;
	}
	journal = f->cnt_hdr->journal;
	done = del_ordered_checked(f, e, n);
	if (done < n) {
		/* Refused: the flows deleted so far go back, newest first (an
		 * add undoes a delete exactly: both leave a saturated counter
		 * alone). Only flows the batch named were out meanwhile. Then
		 * the input order names the first flow that fails. */
		while (done-- > 0) {
			fb_positions(e[done].h, f->hdr->layout, f->hdr->nblocks, f->hdr->k, pos);
			fb_cnt_add_at(f, &e[done].key, pos, f->hdr->k);
		}
		/* The journal as it was too (idle before and after): not a
		 * byte of the filter differs from before the batch. */
		f->cnt_hdr->journal = journal;
		order_release(e, n * sizeof(*e));
		return check_dels_inorder(f, keys, n, bad);
	}
	order_release(e, n * sizeof(*e));
	return 0;
}
