// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The counting suites' host side: a counting filter on anonymous memory (the
 * arrays user/lib/types/counting.c writes, without the kernel), snapshots of it, and an
 * exact model with one saturating counter per position.
 */
#include "counting_test.h"

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------------- */
/* A counting filter on anonymous memory, for the unit tests              */

static size_t page_round(size_t n)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);

	return (n + ps - 1) / ps * ps;
}

void fake_init(struct fake *x, __u8 layout, __u8 k, __u32 nblocks, unsigned bits, uint64_t *seed)
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
	/* Counted as a real filter's map is, from the head's first page
	 * (geometry.h "Physical layout"): blocks then spans bmem. */
	x->f.map_bytes = (size_t)(FB_HEAD_SHIFT + nblocks + FB_HDR_BLOCKS) * FB_BLOCK_BYTES;
	fb_counting_init(x->cmem, bits);
	x->f.cnt_hdr = x->cmem;
	x->f.cnt = (__u8 *)x->cmem + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
	x->f.cnt_bytes = fb_counting_map_bytes(m, bits);
}

void fake_free(struct fake *x)
{
	munmap(x->bmem, x->blen);
	munmap(x->cmem, x->clen);
}

__u64 mbits(const struct fb_store *f)
{
	return fb_header_mbits(f->hdr);
}

unsigned key_pos(const struct fb_store *f, const struct fb_key *key, __u64 pos[FB_MAX_K])
{
	const struct fb_header *h = f->hdr;

	fb_positions(fb_hash_key(key, h->hash, h->key), h->layout, h->nblocks, h->k, pos);
	return h->k;
}

bool bit_at(const struct fb_store *f, __u64 p)
{
	return f->blocks[fb_bit_block(p)].w[fb_bit_word(p)] & fb_bit_mask(p);
}

void bit_put(struct fb_store *f, __u64 p, bool on)
{
	__u64 *w = &f->blocks[fb_bit_block(p)].w[fb_bit_word(p)];

	*w = on ? *w | fb_bit_mask(p) : *w & ~fb_bit_mask(p);
}

void cnt_set(struct fb_store *f, __u64 p, unsigned v)
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

void snap_take(const struct fake *x, struct snap *s)
{
	s->blen = x->blen;
	s->clen = x->clen;
	s->b = malloc(s->blen);
	s->c = malloc(s->clen);
	memcpy(s->b, x->bmem, s->blen);
	memcpy(s->c, x->cmem, s->clen);
}

void snap_restore(struct fake *x, const struct snap *s)
{
	memcpy(x->bmem, s->b, s->blen);
	memcpy(x->cmem, s->c, s->clen);
}

void snap_free(struct snap *s)
{
	free(s->b);
	free(s->c);
}

/* A counter's value in a snapshot. */
unsigned cnt_in_snap(const struct fake *x, const struct snap *s, __u64 p)
{
	struct fb_store g = x->f;

	g.cnt_hdr = s->c;
	g.cnt = (__u8 *)s->c + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
	return fb_counting_get(&g, p);
}

/* Every byte the same, journal included. */
bool snap_same_all(const struct fake *x, const struct snap *s)
{
	return !memcmp(x->bmem, s->b, s->blen) && !memcmp(x->cmem, s->c, s->clen);
}

/* The same contents: flow count, bits and counters (not the journals:
 * the per-flow one in the counters' header, the batch one after them). */
bool snap_same_content(const struct fake *x, const struct snap *s)
{
	const struct fb_header *h = s->b;
	size_t bo = FB_HDR_BLOCKS * FB_BLOCK_BYTES, co = FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;

	return x->f.hdr->nflows == h->nflows &&
	       !memcmp((__u8 *)x->bmem + bo, (__u8 *)s->b + bo,
		       fb_store_nblocks(&x->f) * FB_BLOCK_BYTES - bo) &&
	       !memcmp((__u8 *)x->cmem + co, (__u8 *)s->c + co,
		       fb_counting_data_bytes(fb_header_mbits(x->f.hdr), x->f.hdr->counter_bits));
}

/* ---------------------------------------------------------------------- */
/* Exact model: one counter per position, saturating like the real ones    */

void model_init(struct model *md, const struct fb_store *f)
{
	md->m = mbits(f);
	md->max = fb_counting_max(f);
	md->c = calloc(md->m, sizeof(*md->c));
}

/* Would deleting this flow find a zero counter (a position repeated within
 * the flow needs that many counts)? Saturated counters do not count. */
bool model_can_del(const struct model *md, const __u64 *pos, unsigned k, unsigned *c)
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

void model_add(struct model *md, const __u64 *pos, unsigned k)
{
	unsigned i;

	for (i = 0; i < k; i++)
		if (md->c[pos[i]] < md->max)
			md->c[pos[i]]++;
}

void model_del(unsigned *c, unsigned max, const __u64 *pos, unsigned k)
{
	unsigned i;

	for (i = 0; i < k; i++)
		if (c[pos[i]] && c[pos[i]] < max)
			c[pos[i]]--;
}

/* Counters of flows keys[i] present mult[i] times, not capped. */
__u32 *recount(const struct fb_store *f, const struct fb_key *keys, const unsigned *mult, size_t n)
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
__u64 bits_vs_counters(const struct fb_store *f)
{
	__u64 m = mbits(f), p, bad = 0;

	for (p = 0; p < m; p++)
		bad += bit_at(f, p) != (fb_counting_get(f, p) > 0);
	return bad;
}
