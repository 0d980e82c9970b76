// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the export file reader (fbx_read.c) accepts as content: the checks
 * `check` would make on a filter, on what was just read, so a file is
 * refused unless it would come out clean (fbx.h lists them): prefix-length
 * lists, the rule-shape table, counters against bits, a cuckoo table's
 * count and sequence, and the exact-set rules (each once, of a kind, prefix
 * length and shape the filter probes, each a hit of the filter held as
 * often as the filter can show, and for a counting filter their copies
 * adding up to its flows: rules/exactcheck.h).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "fleet/fbx.h"
#include "rules/rules.h"
#include "rules/flow.h"
#include "store/store.h"
#include "types/counting.h"
#include "types/ftype.h"
#include "types/probe_mem.h"
#include "types/sizing.h"

/* The prefix-length lists: at most FB_MAX_LENGTHS each, each length one
 * of its family (IPv4 lists count from 96), none twice. */
int fb_fbx_check_lengths(struct fb_fbx_in *in, const struct fb_prefixes *px)
{
	int l, i, j;

	for (l = 0; l < FB_PFX_NR; l++) {
		const struct fb_lengths *ls = &px->list[l];
		int lo = fb_prefix_list_family(l) == FB_FAMILY_IPV4 ? 96 : 0;

		if (ls->n > FB_MAX_LENGTHS)
			return fb_fbx_bad(
				in, "bad prefix-length table (%u lengths in a list, at most %d)",
				ls->n, FB_MAX_LENGTHS);
		for (i = 0; i < ls->n; i++) {
			if (ls->len[i] < lo || ls->len[i] > 128)
				return fb_fbx_bad(in, "bad prefix length %d in the %s list",
						  fb_prefix_list_written(l, ls->len[i]),
						  fb_rules_prefix_list_name(l));
			for (j = 0; j < i; j++)
				if (ls->len[j] == ls->len[i])
					return fb_fbx_bad(in, "prefix length listed twice");
		}
	}
	return 0;
}

/* The rule shapes (flowbloom/mask.h): valid, distinct, zero-terminated
 * with zeros after, and there exactly when the kinds say so. */
int fb_fbx_check_masks(struct fb_fbx_in *in, const struct fb_prefixes *px, __u32 kinds)
{
	int i, j;

	for (i = 0; i < FB_MAX_MASKS; i++) {
		__u32 d = fb_mask_get(px->masks, i);

		if (!d)
			break;
		if (!fb_mask_valid(d))
			return fb_fbx_bad(in, "bad rule shape %d in the shape table", i + 1);
		for (j = 0; j < i; j++)
			if (fb_mask_get(px->masks, j) == d)
				return fb_fbx_bad(in, "a rule shape listed twice");
	}
	for (j = i; j < FB_MAX_MASKS; j++)
		if (fb_mask_get(px->masks, j))
			return fb_fbx_bad(in, "bad rule-shape table (an entry after its end)");
	if (!!(kinds & FB_KINDF(FB_KIND_MASK)) != (i > 0))
		return fb_fbx_bad(in, "the rule-shape table and the rule kinds disagree");
	return 0;
}

/* A view of memory as a filter, for the type's own checks. */
static void view(struct fb_store *v, struct fb_header *h, struct fb_block *blocks)
{
	fb_store_init(v);
	v->hdr = h;
	v->blocks = blocks;
	/* As a mapped filter's: its head page before the header, so the
	 * blocks it holds (fb_store_nblocks()) are the header's and the
	 * filter's, which a type's lookups stay within. */
	v->map_bytes = ((size_t)h->nblocks + FB_HDR_BLOCKS + FB_HEAD_SHIFT) * FB_BLOCK_BYTES;
}

/* As fb_counting_check(): a bit set exactly where its counter is
 * non-zero, and k x flows the counters' sum unless one saturated (or the
 * count is an estimate). */
int fb_fbx_check_counters(struct fb_fbx_in *in, const struct fb_header *h,
			  const struct fb_block *blocks, const __u8 *cnt)
{
	__u64 m = fb_header_mbits(h), p, sum = 0, sat = 0, wrong = 0;
	unsigned max = h->counter_bits == 8 ? 255 : 15;

	for (p = 0; p < m; p++) {
		unsigned c = h->counter_bits == 8 ? cnt[p] : (cnt[p / 2] >> ((p & 1) * 4)) & 0xf;

		sum += c;
		sat += c == max;
		wrong += !c != !fb_block_test_bit(&blocks[fb_bit_block(p)], p);
	}
	if (wrong)
		return fb_fbx_bad(in, "%llu bits contradict their counters",
				  (unsigned long long)wrong);
	if (!sat && !(h->flags & FB_HDRF_NFLOWS_ESTIMATE) && sum != h->nflows * h->k)
		return fb_fbx_bad(in, "counters sum %llu, not k x flows = %llu",
				  (unsigned long long)sum, (unsigned long long)(h->nflows * h->k));
	return 0;
}

static int rule_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct fb_fbx_rule *)a)->key, &((const struct fb_fbx_rule *)b)->key,
		      sizeof(struct fb_key));
}

static unsigned cnt_at(const struct fb_header *h, const __u8 *cnt, __u64 p)
{
	return h->counter_bits == 8 ? cnt[p] : (cnt[p / 2] >> ((p & 1) * 4)) & 0xf;
}

/* Copies of k the file's filter holds, as check counts them (exactcheck.c):
 * 0 if it is no hit (the data path's probe), else the smallest counter or
 * the copies in its buckets, ~0U where they show none (saturated, or a
 * type that keeps no count). */
static unsigned held(const struct fb_fbx_in *in, const struct fb_block *blocks, const __u8 *cnt,
		     const struct fb_key *k)
{
	const struct fb_header *h = &in->h;
	const struct fb_ftype_ops *o = fb_ftype(h->type);
	struct fb_tbl t = { blocks, (__u64)h->nblocks + FB_HDR_BLOCKS };
	__u64 hash = fb_hash_key(k, h->hash, h->key), pos[FB_MAX_K];
	unsigned max = h->counter_bits == 8 ? 255 : 15, m = ~0U, c, i;
	struct fb_store v;

	if (!fb_filter_probe(&t, h, hash))
		return 0;
	if (in->cnt_bytes) {
		fb_positions(hash, h->layout, h->nblocks, h->k, pos);
		for (i = 0; i < h->k && i < FB_MAX_K; i++)
			if ((c = cnt_at(h, cnt, pos[i])) < m)
				m = c;
		return m >= max ? ~0U : m;
	}
	if (o && (o->flags & FB_FTYPE_DELETES)) {
		view(&v, (struct fb_header *)h, (struct fb_block *)blocks);
		c = fb_ftype_count(&v, k);
		return o->count_max && c >= o->count_max ? ~0U : c;
	}
	return ~0U;
}

/* The rules against the filter they came with, as `check` holds the exact
 * sets against a filter. */
static int check_held(struct fb_fbx_in *in, const struct fb_block *blocks, const __u8 *cnt)
{
	const struct fb_header *h = &in->h;
	__u64 copies = 0;
	size_t i;

	for (i = 0; i < in->nrules; i++) {
		unsigned c = held(in, blocks, cnt, &in->rules[i].key);

		if (!c)
			return fb_fbx_bad(in, "an exact-set rule the filter does not hold");
		if (c < in->rules[i].count)
			return fb_fbx_bad(
				in,
				"an exact-set rule counted %u times, held %u times by the "
				"filter",
				in->rules[i].count, c);
		copies += in->rules[i].count;
	}
	if (in->cnt_bytes && !h->type && !(h->flags & FB_HDRF_NFLOWS_ESTIMATE) &&
	    h->nflows < fb_flows_max(h->nblocks) && copies != h->nflows)
		return fb_fbx_bad(in, "the exact sets count %llu copies for %llu flows",
				  (unsigned long long)copies, (unsigned long long)h->nflows);
	return 0;
}

/* What `check` finds in a filter, on the content just read: the file is
 * refused unless it would say clean. */
int fb_fbx_check_content(struct fb_fbx_in *in, struct fb_block *blocks, const __u8 *cnt)
{
	const struct fb_header *h = &in->h;
	char why[200];

	if (h->type) {
		struct fb_store v;

		if (fb_ftype_check(h, blocks, why, sizeof(why)))
			return fb_fbx_bad(in, "%s", why);
		view(&v, &in->h, blocks);
		if (fb_ftype_seq_odd(&v))
			return fb_fbx_bad(in, "cuckoo relocation sequence is odd");
		if (h->type == FB_TYPE_CUCKOO &&
		    ((const struct fb_cuckoo_geom *)&blocks[FB_TYPE_GEOM_BLOCK])->count !=
			    fb_ftype_items(&v))
			return fb_fbx_bad(in, "cuckoo count does not match its table");
	}
	if (in->cnt_bytes && fb_fbx_check_counters(in, h, blocks, cnt))
		return -1;
	if (fb_fbx_check_rules(in))
		return -1;
	return h->confirm ? check_held(in, blocks, cnt) : 0;
}

/* Each rule once, of a kind and prefix length the filter probes. */
int fb_fbx_check_rules(struct fb_fbx_in *in)
{
	const struct fb_header *h = &in->h;
	size_t i;

	if (in->nrules)
		qsort(in->rules, in->nrules, sizeof(*in->rules), rule_cmp);
	for (i = 0; i < in->nrules; i++) {
		const struct fb_key *k = &in->rules[i].key;
		int l = fb_rules_prefix_list(k), j;

		if (i && !rule_cmp(&in->rules[i - 1], &in->rules[i]))
			return fb_fbx_bad(in, "an exact-set rule is listed twice");
		if (!(h->kinds & FB_KINDF(k->kind)))
			return fb_fbx_bad(in,
					  "an exact-set rule of a kind the filter does not hold");
		for (j = 0; l >= 0 && j < in->px.list[l].n; j++)
			if (in->px.list[l].len[j] == k->plen)
				break;
		if (l >= 0 && j == in->px.list[l].n)
			return fb_fbx_bad(
				in, "an exact-set rule of a prefix length the filter does not "
				    "probe");
		if (k->kind == FB_KIND_MASK) {
			__u32 d = fb_mask_of_key(k, NULL);

			for (j = 0; j < FB_MAX_MASKS && fb_mask_get(in->px.masks, j) != d; j++)
				;
			if (j == FB_MAX_MASKS)
				return fb_fbx_bad(
					in,
					"an exact-set rule of a shape the filter does not probe");
		}
	}
	return 0;
}
