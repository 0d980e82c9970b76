// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Bit operations on the mmap'd filter array: set, test (every type's, the
 * data path's probe: include/flowbloom/probe.h), query, popcount. */
#define _GNU_SOURCE
#include "types/bits.h"
#include "types/probe_mem.h"
#include <math.h>
#include "store/store.h"

void fb_bits_set(struct fb_store *f, const struct fb_key *key)
{
	const struct fb_header *hdr = f->hdr;
	__u64 h = fb_hash_key(key, hdr->hash, hdr->key);
	__u32 i;

	/* The bit test and set the data path uses (geometry.h). */
	if (hdr->layout == FB_LAYOUT_CLASSIC) {
		__u64 mbits = fb_header_mbits(hdr);

		for (i = 0; i < hdr->k; i++) {
			__u64 p = fb_classic_bit(h, i, mbits);

			fb_block_set_bit(&f->blocks[fb_bit_block(p)], p);
		}
	} else {
		fb_block_set(&f->blocks[fb_blocked_block(h, hdr->nblocks)], h, hdr->k);
	}
}

void fb_bits_set_many(struct fb_store *f, const struct fb_key *keys, size_t n)
{
	/* At 256 MiB nearly every flow's block is a DRAM miss (~130 ns). Hash a
	 * batch first and prefetch its blocks, so the misses overlap instead
	 * of queueing one after another. */
	enum { BATCH = 16 };
	const struct fb_header *hdr = f->hdr;
	__u64 h[BATCH];
	size_t i, j, m;

	if (hdr->layout == FB_LAYOUT_CLASSIC) {
		for (i = 0; i < n; i++)
			fb_bits_set(f, &keys[i]);
		return;
	}
	for (i = 0; i < n; i += m) {
		m = n - i < BATCH ? n - i : BATCH;
		for (j = 0; j < m; j++) {
			h[j] = fb_hash_key(&keys[i + j], hdr->hash, hdr->key);
			__builtin_prefetch(&f->blocks[fb_blocked_block(h[j], hdr->nblocks)], 1);
		}
		for (j = 0; j < m; j++)
			fb_block_set(&f->blocks[fb_blocked_block(h[j], hdr->nblocks)], h[j],
				     hdr->k);
	}
}

bool fb_bits_test(const struct fb_store *f, const struct fb_key *key)
{
	return fb_probe_array(f->blocks, fb_store_nblocks(f),
			      fb_hash_key(key, f->hdr->hash, f->hdr->key));
}

bool fb_probe_array(const struct fb_block *blocks, __u64 nblocks, __u64 h)
{
	struct fb_tbl t = { blocks, nblocks };
	const struct fb_header *hdr = (const struct fb_header *)blocks;

	/* The type's geometry blocks are read whole once the first is there
	 * (probe.h): here, that is when they all are. */
	if (nblocks < FB_HDR_BLOCKS ||
	    nblocks < FB_TYPE_GEOM_BLOCK + fb_type_geom_blocks(hdr->type))
		return false;
	return fb_filter_probe(&t, hdr, h);
}

bool fb_bits_query(const struct fb_store *f, const struct fb_key *k)
{
	const struct fb_prefixes *px = fb_store_prefixes(f);
	const struct fb_lengths *l;
	int i, w = k->kind == FB_KIND_DST ? 2 : 0;

	if (k->kind == FB_KIND_FLOW || k->kind == FB_KIND_MASK || k->plen != 128)
		return fb_bits_test(f, k);
	/* An address: as the data path does (include/flowbloom/prefix.h),
	 * its prefix at each length of its list. */
	l = &px->list[fb_prefix_list(k->kind, k->family)];
	for (i = 0; i < l->n && i < FB_MAX_LENGTHS; i++) {
		struct fb_key m;

		fb_prefix_key(&m, k->kind, k->w[w], k->w[w + 1], l->len[i],
			      fb_key_word_family(k->w[4]));
		if (fb_bits_test(f, &m))
			return true;
	}
	return false;
}

__u64 fb_bits_popcount(const struct fb_store *f)
{
	__u64 n = 0, b;
	int w;

	for (b = FB_HDR_BLOCKS; b < (__u64)f->hdr->nblocks + FB_HDR_BLOCKS; b++)
		for (w = 0; w < FB_BLOCK_WORDS; w++)
			n += __builtin_popcountll(f->blocks[b].w[w]);
	return n;
}

double fb_bits_fpr(const struct fb_store *f)
{
	const struct fb_header *hdr = f->hdr;
	double pw[FB_BLOCK_WORDS][FB_BLOCK_BITS / FB_BLOCK_WORDS + 1], sum = 0, r;
	unsigned k = hdr->k, c, i;
	__u64 b, end = (__u64)hdr->nblocks + FB_HDR_BLOCKS;
	int w;

	if (!hdr->nblocks || !k)
		return 0;
	if (hdr->layout == FB_LAYOUT_CLASSIC)
		return pow((double)fb_bits_popcount(f) / fb_header_mbits(hdr), k);
	/* Word w holds c = k/8 (one more for the first k%8 words) of the
	 * probe's bits, each anywhere in its 64: a key finds them set with
	 * probability (bits set / 64)^c. A table of those powers, per word. */
	for (w = 0; w < FB_BLOCK_WORDS; w++) {
		c = k / FB_BLOCK_WORDS + ((unsigned)w < k % FB_BLOCK_WORDS);
		for (i = 0; i <= 64; i++)
			pw[w][i] = pow(i / 64.0, c);
	}
	for (b = FB_HDR_BLOCKS; b < end; b++) {
		/* Word 0 holds at least one of the bits: a block with it
		 * empty (most of a large filter's, sparsely filled) adds 0. */
		if (!f->blocks[b].w[0])
			continue;
		r = 1;
		for (w = 0; w < FB_BLOCK_WORDS; w++)
			r *= pw[w][__builtin_popcountll(f->blocks[b].w[w])];
		sum += r;
	}
	return sum / hdr->nblocks;
}

bool fb_bits_query_gens(const struct fb_store *f, const struct fb_gen_views *gv,
			const struct fb_key *k, __u64 until)
{
	int i;

	if (fb_bits_query(f, k))
		return true;
	for (i = 0; i < gv->n; i++)
		if (gv->v[i].hdr->expires >= until && fb_bits_query(&gv->v[i], k))
			return true;
	return false;
}
