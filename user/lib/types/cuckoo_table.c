// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Cuckoo filters on plain memory (see cuckoo_table.h and
 * include/flowbloom/cuckoo.h): sizing, lookup, all-or-nothing add with
 * bounded breadth-first relocation, delete.
 *
 * Relocation follows libcuckoo (Li, Andersen, Kaminsky, Freedman 2014)
 * rather than the paper's random walk: a breadth-first search from the
 * flow's two buckets finds the shortest chain of moves ending at a free
 * slot, visiting at most FB_CUCKOO_MAX_KICKS buckets, and the chain is then
 * executed from its free end backwards. Each move thus copies a
 * fingerprint into a slot that is free (or whose fingerprint has already
 * been copied on), and only then is its old slot overwritten by the next
 * move: every stored fingerprint is in the table at every moment. A random
 * walk cannot promise that: it holds the evicted fingerprint outside the
 * table until it lands, and its chain may cycle through a slot it already
 * wrote.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "types/cuckoo_table.h"
#include "types/probe_mem.h"

static const unsigned fp_choices[] = { 8, 12, 16, 32 };

static double fpr_at(unsigned fp_bits, double alpha)
{
	double values = ldexp(1.0, (int)fp_bits) - 1;

	/* 2b slots probed, alpha of them full, each matching with 1/values. */
	return -expm1(2.0 * FB_CUCKOO_SLOTS * alpha * log1p(-1.0 / values));
}

unsigned fb_cuckoo_fp_bits_for(double p)
{
	size_t i;

	for (i = 0; i < sizeof(fp_choices) / sizeof(fp_choices[0]); i++)
		if (fpr_at(fp_choices[i], FB_CUCKOO_DESIGN_LOAD) <= p)
			return fp_choices[i];
	return 0;
}

/* A small table refuses below the design load far more often than a
 * large one: a flow's second bucket is its first one time in nbuckets,
 * and a few crowded buckets are a large part of a small table. Filled to
 * 0.95 at its capacity (measured with a search reach of 500), 2 to 4 % of
 * 16-, 32- and 64-bucket tables and 0.05 % of 512-bucket ones refuse a
 * flow before it; at 0.75, none of 20,000 of 32 to 1024 buckets does. So tables under SMALL_BUCKETS (at
 * most 32 KiB, inside the filter's first 256 KiB chunk either way: the
 * room costs no memory) are sized for SMALL_LOAD, and 16-bucket tables
 * are not made (they refuse now and then even at load 0.5). */
#define SMALL_BUCKETS 2048
#define SMALL_LOAD 0.75

double fb_cuckoo_design_load(__u32 nbuckets)
{
	return nbuckets < SMALL_BUCKETS ? SMALL_LOAD : FB_CUCKOO_DESIGN_LOAD;
}

int fb_cuckoo_size(double capacity, double p, struct fb_cuckoo_geom *g)
{
	__u32 nb = 2 * FB_CUCKOO_MIN_BUCKETS;
	unsigned f = fb_cuckoo_fp_bits_for(p);

	if (!f || !(capacity >= 0))
		return -1;
	while (capacity > FB_CUCKOO_SLOTS * (double)nb * fb_cuckoo_design_load(nb)) {
		if (nb >= FB_CUCKOO_MAX_BUCKETS)
			return -1;
		nb *= 2;
	}
	memset(g, 0, sizeof(*g));
	g->nbuckets = nb;
	g->fp_bits = f;
	return 0;
}

int fb_cuckoo_check(const struct fb_cuckoo_geom *g, __u64 avail_blocks, char *why, size_t len)
{
	__u32 nb = g->nbuckets;

	if (g->fp_bits != 8 && g->fp_bits != 12 && g->fp_bits != 16 && g->fp_bits != 32)
		snprintf(why, len, "cuckoo fingerprint bits %u (8, 12, 16 or 32)", g->fp_bits);
	else if (nb < FB_CUCKOO_MIN_BUCKETS || nb > FB_CUCKOO_MAX_BUCKETS || (nb & (nb - 1)))
		snprintf(why, len, "cuckoo bucket count %u (a power of two, %u to %u)", nb,
			 FB_CUCKOO_MIN_BUCKETS, FB_CUCKOO_MAX_BUCKETS);
	else if ((__u64)g->first_block + fb_cuckoo_blocks(g) > avail_blocks)
		snprintf(why, len, "cuckoo table (blocks %u..%llu) beyond the array (%llu blocks)",
			 g->first_block, (unsigned long long)(g->first_block + fb_cuckoo_blocks(g)),
			 (unsigned long long)avail_blocks);
	else
		return 0;
	return -1;
}

__u64 fb_cuckoo_blocks(const struct fb_cuckoo_geom *g)
{
	return ((__u64)g->nbuckets << fb_cuckoo_bucket_shift(g->fp_bits)) / FB_BLOCK_BYTES;
}

double fb_cuckoo_fpr(const struct fb_cuckoo_geom *g, double n)
{
	return fpr_at(g->fp_bits, n / ((double)FB_CUCKOO_SLOTS * g->nbuckets));
}

double fb_cuckoo_load(const struct fb_cuckoo_geom *g)
{
	return (double)g->count / ((double)FB_CUCKOO_SLOTS * g->nbuckets);
}

bool fb_cuckoo_lookup(const struct fb_block *blocks, const struct fb_cuckoo_geom *g, __u64 h)
{
	struct fb_tbl t = { blocks, g->first_block + fb_cuckoo_blocks(g) };

	return fb_cuckoo_probe(&t, g, h);
}

/* Byte offset of bucket i's slot s from block 0. */
static __u64 slot_off(const struct fb_cuckoo_geom *g, __u32 i, unsigned s)
{
	return (__u64)g->first_block * FB_BLOCK_BYTES +
	       ((__u64)i << fb_cuckoo_bucket_shift(g->fp_bits)) +
	       s * fb_cuckoo_slot_bytes(g->fp_bits);
}

static __u32 slot_get(struct fb_plan *p, const struct fb_cuckoo_geom *g, __u32 i, unsigned s)
{
	__u64 off = slot_off(g, i, s);
	const unsigned char *b = fb_plan_bucket(p, off & ~(__u64)((1U << p->bucket_shift) - 1));
	unsigned sb = fb_cuckoo_slot_bytes(g->fp_bits);
	__u8 v8;
	__u16 v16;
	__u32 v32;

	b += s * sb;
	if (sb == 1)
		return memcpy(&v8, b, 1), v8;
	if (sb == 2)
		return memcpy(&v16, b, 2), v16;
	return memcpy(&v32, b, 4), v32;
}

static int slot_set(struct fb_plan *p, const struct fb_cuckoo_geom *g, __u32 i, unsigned s,
		    __u32 fp)
{
	return fb_plan_set(p, slot_off(g, i, s), fb_cuckoo_slot_bytes(g->fp_bits), fp);
}

static int free_slot(struct fb_plan *p, const struct fb_cuckoo_geom *g, __u32 i)
{
	unsigned s;

	for (s = 0; s < FB_CUCKOO_SLOTS; s++)
		if (!slot_get(p, g, i, s))
			return (int)s;
	return -1;
}

struct node {
	__u32 bucket;
	int parent;    /* node whose bucket's fingerprint moves here; -1: root */
	unsigned slot; /* that fingerprint's slot in the parent's bucket */
};

static bool on_path(const struct node *nodes, int x, __u32 bucket)
{
	for (; x >= 0; x = nodes[x].parent)
		if (nodes[x].bucket == bucket)
			return true;
	return false;
}

/* Before each store of a chain: the slot it writes (g->reloc). */
static int note_slot(struct fb_plan *p, struct fb_cuckoo_geom *g, __u32 seq, __u32 i, unsigned s)
{
	return fb_plan_set_ext(p, &g->reloc, 8,
			       (__u64)seq << 32 | ((__u64)i * FB_CUCKOO_SLOTS + s));
}

/* Move fingerprints along the chain ending at node t (free slot e), from
 * the free end back to the root, then store fp in the root's freed slot.
 * The chain is bracketed by seq odd/even for the data path's probe, and
 * each store is preceded by a note of the slot it writes: that slot holds
 * the chain's one fingerprint in two slots (the free slot before the
 * first copy holds none), which fb_cuckoo_end_chain() clears if the
 * writer dies inside the chain. */
static int execute(struct fb_plan *p, struct fb_cuckoo_geom *g, const struct node *nodes, int t,
		   int e, __u32 fp, __u32 *seq)
{
	__u32 dst = nodes[t].bucket;
	unsigned dslot = (unsigned)e;
	int x = t;

	if (fb_plan_set_ext(p, &g->seq, 4, ++*seq))
		return -2;
	for (; nodes[x].parent >= 0; x = nodes[x].parent) {
		__u32 src = nodes[nodes[x].parent].bucket;
		unsigned sslot = nodes[x].slot;

		if (note_slot(p, g, *seq, dst, dslot) ||
		    slot_set(p, g, dst, dslot, slot_get(p, g, src, sslot)))
			return -2;
		dst = src;
		dslot = sslot;
	}
	if (note_slot(p, g, *seq, dst, dslot) || slot_set(p, g, dst, dslot, fp) ||
	    fb_plan_set_ext(p, &g->seq, 4, ++*seq))
		return -2;
	return 0;
}

static int insert_fp(struct fb_plan *p, struct fb_cuckoo_geom *g, __u32 fp, __u32 i1, __u32 *seq)
{
	struct node nodes[FB_CUCKOO_MAX_KICKS + FB_CUCKOO_SLOTS];
	__u32 i2 = fb_cuckoo_alt(i1, fp, g->nbuckets);
	int n = 0, head, e;
	unsigned s;

	/* A free slot in either bucket: one store, nothing moves. */
	if ((e = free_slot(p, g, i1)) >= 0)
		return slot_set(p, g, i1, e, fp) ? -2 : 0;
	if ((e = free_slot(p, g, i2)) >= 0)
		return slot_set(p, g, i2, e, fp) ? -2 : 0;
	nodes[n++] = (struct node){ .bucket = i1, .parent = -1 };
	if (i2 != i1)
		nodes[n++] = (struct node){ .bucket = i2, .parent = -1 };
	for (head = 0; head < n; head++) {
		__u32 u = nodes[head].bucket;

		for (s = 0; s < FB_CUCKOO_SLOTS; s++) {
			__u32 v = fb_cuckoo_alt(u, slot_get(p, g, u, s), g->nbuckets);

			if (n >= FB_CUCKOO_MAX_KICKS)
				return -1;
			if (v == u || on_path(nodes, head, v))
				continue;
			nodes[n] = (struct node){ .bucket = v, .parent = head, .slot = s };
			if ((e = free_slot(p, g, v)) >= 0)
				return execute(p, g, nodes, n, e, fp, seq);
			n++;
		}
	}
	return -1;
}

int fb_cuckoo_plan_add(struct fb_plan *p, struct fb_cuckoo_geom *g, const __u64 *h, size_t n,
		       struct fb_batch_err *err)
{
	__u32 seq = g->seq;
	size_t i;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		if (p->marks)
			p->marks[i] = p->nlog;
		rc = insert_fp(p, g, fb_cuckoo_fp(h[i], g->fp_bits),
			       fb_cuckoo_index(h[i], g->nbuckets), &seq);
		if (rc && err) {
			err->bad = i;
			err->load =
				(double)(g->count + i) / ((double)FB_CUCKOO_SLOTS * g->nbuckets);
		}
	}
	if (!rc && fb_plan_set_ext(p, &g->count, 8, g->count + n))
		rc = -2;
	return rc;
}

int fb_cuckoo_add(struct fb_block *blocks, struct fb_cuckoo_geom *g, const __u64 *h, size_t n,
		  struct fb_batch_err *err)
{
	struct fb_plan p;
	int rc;

	fb_plan_init(&p, blocks, fb_cuckoo_bucket_shift(g->fp_bits));
	rc = fb_cuckoo_plan_add(&p, g, h, n, err);
	if (!rc)
		fb_plan_apply_paced(&p, fb_plan_test_pace());
	fb_plan_free(&p);
	return rc;
}

int fb_cuckoo_plan_del(struct fb_plan *p, struct fb_cuckoo_geom *g, const __u64 *h, size_t n,
		       struct fb_batch_err *err)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		if (p->marks)
			p->marks[i] = p->nlog;
		__u32 fp = fb_cuckoo_fp(h[i], g->fp_bits), i1 = fb_cuckoo_index(h[i], g->nbuckets);
		__u32 b[2] = { i1, fb_cuckoo_alt(i1, fp, g->nbuckets) };
		int j, s, done = 0;

		for (j = 0; j < 2 && !done; j++)
			for (s = 0; s < FB_CUCKOO_SLOTS && !done; s++)
				if (slot_get(p, g, b[j], s) == fp) {
					if (slot_set(p, g, b[j], s, 0))
						rc = -2;
					done = 1;
				}
		if (!done && !rc) {
			rc = -1;
			if (err) {
				err->bad = i;
				err->load = fb_cuckoo_load(g);
			}
		}
	}
	if (!rc && fb_plan_set_ext(p, &g->count, 8, g->count >= n ? g->count - n : 0))
		rc = -2;
	return rc;
}

int fb_cuckoo_del(struct fb_block *blocks, struct fb_cuckoo_geom *g, const __u64 *h, size_t n,
		  struct fb_batch_err *err)
{
	struct fb_plan p;
	int rc;

	fb_plan_init(&p, blocks, fb_cuckoo_bucket_shift(g->fp_bits));
	rc = fb_cuckoo_plan_del(&p, g, h, n, err);
	if (!rc)
		fb_plan_apply(&p);
	fb_plan_free(&p);
	return rc;
}

/*
 * The chain stores fingerprints from its free end back: copy a into the
 * free slot, then b over a's old slot, ..., then the new fingerprint over
 * the last one's. Between a copy and the next store, the copied
 * fingerprint is in two slots: its new one and the old one the next store
 * overwrites. The note (g->reloc) names the slot of the next store, made
 * before it: before the store that slot holds the copied fingerprint
 * (its other copy is in the slot just written), after it the fingerprint
 * just copied there (its other copy is in its old slot, not yet
 * overwritten), or the new flow's (the root store: that flow was being
 * added when the writer died). Either way, clearing it leaves every
 * other stored fingerprint exactly once. A note of another chain (its
 * seq differs: the writer died before this chain's first note) names no
 * such slot: nothing was copied yet.
 */
void fb_cuckoo_end_chain(struct fb_block *blocks, struct fb_cuckoo_geom *g)
{
	__u32 seq = __atomic_load_n(&g->seq, __ATOMIC_ACQUIRE);
	__u64 note = g->reloc, at = note & 0xffffffffULL;
	unsigned sb = fb_cuckoo_slot_bytes(g->fp_bits);
	unsigned char *slot = (unsigned char *)&blocks[g->first_block] + at * sb;

	if (!(seq & 1))
		return;
	/* One aligned store of the slot's width, as a chain's own. */
	if ((__u32)(note >> 32) == seq && at < (__u64)g->nbuckets * FB_CUCKOO_SLOTS) {
		if (sb == 1)
			__atomic_store_n((__u8 *)slot, 0, __ATOMIC_RELEASE);
		else if (sb == 2)
			__atomic_store_n((__u16 *)slot, 0, __ATOMIC_RELEASE);
		else
			__atomic_store_n((__u32 *)slot, 0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&g->seq, seq + 1, __ATOMIC_RELEASE);
}

__u64 fb_cuckoo_occupied(const struct fb_block *blocks, const struct fb_cuckoo_geom *g)
{
	const unsigned char *base = (const unsigned char *)&blocks[g->first_block];
	unsigned sb = fb_cuckoo_slot_bytes(g->fp_bits);
	__u64 n = 0, i, slots = (__u64)g->nbuckets * FB_CUCKOO_SLOTS;

	for (i = 0; i < slots; i++) {
		__u32 v = 0;

		memcpy(&v, base + i * sb, sb); /* little- or big-endian: zero is zero */
		n += v != 0;
	}
	return n;
}

int fb_cuckoo_union(struct fb_block *blocks, struct fb_cuckoo_geom *g,
		    const struct fb_block *src_blocks, const struct fb_cuckoo_geom *src, char *why,
		    size_t len, struct fb_batch_err *err)
{
	const unsigned char *base = (const unsigned char *)&src_blocks[src->first_block];
	unsigned sb = fb_cuckoo_slot_bytes(src->fp_bits);
	__u64 slots = (__u64)src->nbuckets * FB_CUCKOO_SLOTS, i, added = 0;
	struct fb_plan p;
	__u32 seq = g->seq;
	int rc = 0;

	if (g->nbuckets != src->nbuckets || g->fp_bits != src->fp_bits) {
		snprintf(why, len,
			 "cuckoo geometries differ (%u buckets of %u-bit fingerprints, %u "
			 "of %u-bit)",
			 g->nbuckets, g->fp_bits, src->nbuckets, src->fp_bits);
		return -3;
	}
	/* A stored fingerprint's bucket is one of its two: inserting it from
	 * there gives the same pair of candidates the flow had. */
	fb_plan_init(&p, blocks, fb_cuckoo_bucket_shift(g->fp_bits));
	for (i = 0; i < slots && !rc; i++) {
		__u32 fp = 0;

		memcpy(&fp, base + i * sb, sb);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		fp >>= 8 * (4 - sb);
#endif
		if (!fp)
			continue;
		rc = insert_fp(&p, g, fp, (__u32)(i / FB_CUCKOO_SLOTS), &seq);
		if (rc && err) {
			err->bad = added;
			err->load = (double)(g->count + added) /
				    ((double)FB_CUCKOO_SLOTS * g->nbuckets);
		}
		added++;
	}
	if (!rc && fb_plan_set_ext(&p, &g->count, 8, g->count + added))
		rc = -2;
	if (!rc)
		fb_plan_apply(&p);
	fb_plan_free(&p);
	return rc;
}
