// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Set algebra on whole filters: load (filter or export file), combine,
 * store (create or switch in), fold. See algebra.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include "fleet/algebra.h"
#include "util.h"
#include "types/counting.h"
#include "types/sizing.h"
#include "store/exact.h"
#include "store/gens.h"
#include "store/head.h"
#include "fleet/fbx.h"
#include "report.h"
#include "store/pintree.h"
#include "store/replace.h"
#include "rules/rules.h"
#include "rules/flow.h"
#include "store/store.h"

bool fb_alg_is_file(const char *arg)
{
	return strchr(arg, '/') || strchr(arg, '.');
}

void fb_alg_free(struct fb_alg_img *img)
{
	free(img->blocks);
	free(img->cnt);
	free(img->rules);
	img->blocks = NULL;
	img->cnt = NULL;
	img->rules = NULL;
}

/* Memory for a filter of h's geometry; h becomes block 0. */
static int img_alloc(struct fb_alg_img *img, const struct fb_header *h)
{
	size_t bytes = ((size_t)h->nblocks + FB_HDR_BLOCKS) * FB_BLOCK_BYTES;

	img->blocks = aligned_alloc(FB_BLOCK_BYTES, bytes);
	img->cnt_bytes = fb_fbx_counter_bytes(h->nblocks, h->counter_bits);
	img->cnt = img->cnt_bytes ? calloc(1, img->cnt_bytes) : NULL;
	if (!img->blocks || (img->cnt_bytes && !img->cnt)) {
		fb_report_err("%s: out of memory", img->label);
		return -1;
	}
	memset(img->blocks, 0, bytes);
	memcpy(&img->blocks[0], h, sizeof(*h));
	img->m = (struct fb_bloom_mem){ .hdr = (struct fb_header *)img->blocks,
					.blocks = img->blocks,
					.cnt = img->cnt,
					.cnt_bits = h->counter_bits };
	return 0;
}

static int add_rule(struct fb_alg_img *img, const struct fb_key *k, __u32 count)
{
	struct fb_fbx_rule *r;

	if (!(img->nrules & (img->nrules + 1)) || !img->rules) {
		r = realloc(img->rules, (2 * img->nrules + 2) * sizeof(*r));
		if (!r) {
			fb_report_err("%s: out of memory", img->label);
			return -1;
		}
		img->rules = r;
	}
	img->rules[img->nrules].key = *k;
	img->rules[img->nrules++].count = count;
	return 0;
}

/* What a writer changes: the array (header, prefix lengths, bits) and the
 * counters. (The exact sets: rules_crc().) */
static __u32 state_crc(const struct fb_store *f)
{
	uLong crc = crc32(0, (const Bytef *)f->blocks,
			  ((size_t)f->hdr->nblocks + FB_HDR_BLOCKS) * FB_BLOCK_BYTES);

	if (f->cnt)
		crc = crc32(crc, f->cnt,
			    fb_fbx_counter_bytes(f->hdr->nblocks, f->hdr->counter_bits));
	return crc;
}

static int rule_cmp(const void *a, const void *b);

/* crc on with the exact sets' rules (--confirm exact), sorted first: a
 * writer's change to them alone (check --repair taking out the rules the
 * filter does not hold) changes the state as much as one to its bits. */
static __u32 rules_crc(__u32 crc, struct fb_fbx_rule *r, size_t n)
{
	size_t i;

	qsort(r, n, sizeof(*r), rule_cmp);
	for (i = 0; i < n; i++) {
		crc = crc32(crc, (const Bytef *)&r[i].key, sizeof(r[i].key));
		crc = crc32(crc, (const Bytef *)&r[i].count, sizeof(r[i].count));
	}
	return crc;
}

/* The set algebra works on Bloom filters (blocked or classic, plain or
 * counting): a cuckoo, d-left or scalable table ORed or folded bit by bit
 * would be garbage. */
static int bloom_only(const struct fb_store *f)
{
	if (!f->hdr->type)
		return 0;
	fb_report_err("'%s' is a %s filter: merge, intersect, fold and card work on Bloom "
		      "filters",
		      f->name, FB_NAME(fb_type_names, f->hdr->type));
	return -1;
}

/* A copy of an open filter (the caller holds a lock on it). */
static int add_each(const struct fb_key *k, __u32 copies, void *img)
{
	return copies ? add_rule(img, k, copies) : 0;
}

static int copy_filter(struct fb_store *f, struct fb_alg_img *img)
{
	if (bloom_only(f))
		return -1;
	/* As export: not a write a killed writer left half done. */
	if (fb_counting_half_done(f, NULL)) {
		fb_report_err("'%s' holds a write a killed writer left half done: flowbloom check "
			      "--repair %s first",
			      f->name, f->name);
		return -1;
	}
	if (img_alloc(img, f->hdr))
		return -1;
	if (f->hdr->gens) {
		struct fb_gen_views gv;

		if (fb_gens_views_open(f, &gv) < 0)
			return -1;
		img->gens = gv.n;
		fb_gens_views_close(&gv);
	}
	memcpy(img->blocks, f->blocks, ((size_t)f->hdr->nblocks + FB_HDR_BLOCKS) * FB_BLOCK_BYTES);
	if (img->cnt)
		memcpy(img->cnt, f->cnt, img->cnt_bytes);
	if (f->hdr->confirm && fb_exact_each(f, add_each, img))
		return -1;
	img->crc = rules_crc(state_crc(f), img->rules, img->nrules);
	return 0;
}

static int load_filter(const char *name, struct fb_alg_img *img)
{
	struct fb_store f;
	int rc = -1;

	if (fb_store_open(name, &f))
		return -1;
	/* Writers out while we copy: one consistent state (as export). */
	if (!fb_store_flock(&f, LOCK_SH)) {
		rc = copy_filter(&f, img);
		fb_store_unlock(&f);
	}
	fb_store_close(&f);
	return rc;
}

/* An export file, through the one reader (fbx.h): refused exactly when
 * import would refuse it, and then for the same reason; like import, a
 * file not known complete from its size is read whole before the memory
 * its header asks for is taken. */
static int load_file(const char *path, struct fb_alg_img *img)
{
	struct fb_fbx_in in;
	int rc = -1;

	if (fb_fbx_open_checked(&in, path, false))
		goto bad;
	if (img_alloc(img, &in.h))
		goto out;
	memcpy(&img->blocks[FB_PREFIX_BLOCK], &in.px, sizeof(in.px));
	if (fb_fbx_read_body(&in, img->blocks, img->cnt))
		goto bad;
	if (in.h.type) {
		/* A sound file, of another type: no input either. */
		fb_report_err("'%s' is a %s filter: merge, intersect, fold and card work on "
			      "Bloom filters",
			      path, FB_NAME(fb_type_names, in.h.type));
		goto out;
	}
	img->rules = in.rules;
	img->nrules = in.nrules;
	in.rules = NULL;
	rc = 0;
	goto out;
bad:
	fb_report_err("%s: %s", in.label, in.why);
out:
	fb_fbx_close(&in);
	return rc;
}

int fb_alg_load(const char *arg, struct fb_alg_img *img)
{
	int rc;

	memset(img, 0, sizeof(*img));
	snprintf(img->label, sizeof(img->label), "%s", arg);
	rc = fb_alg_is_file(arg) ? load_file(arg, img) : load_filter(arg, img);
	if (rc)
		fb_alg_free(img);
	return rc;
}

static int rule_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct fb_fbx_rule *)a)->key, &((const struct fb_fbx_rule *)b)->key,
		      sizeof(struct fb_key));
}

/* Exact sets: sorted by key, then merged. */
static int combine_rules(struct fb_alg_img *dst, const struct fb_alg_img *src, enum fb_alg_op op)
{
	struct fb_fbx_rule *out;
	size_t i = 0, j = 0, n = 0;

	qsort(dst->rules, dst->nrules, sizeof(*dst->rules), rule_cmp);
	qsort(src->rules, src->nrules, sizeof(*src->rules), rule_cmp);
	out = malloc((dst->nrules + src->nrules + 1) * sizeof(*out));
	if (!out) {
		fb_report_err("out of memory");
		return -1;
	}
	while (i < dst->nrules || j < src->nrules) {
		int c = i == dst->nrules   ? 1
			: j == src->nrules ? -1
					   : rule_cmp(&dst->rules[i], &src->rules[j]);

		if (c == 0) {
			__u32 x = dst->rules[i].count, y = src->rules[j].count;

			out[n].key = dst->rules[i].key;
			/* Counts add up to at most FB_FBX_MAX_COUNT (what a
			 * count change carries), as the reader accepts. */
			out[n++].count =
				op == FB_ALG_UNION
					? (x > FB_FBX_MAX_COUNT - y ? FB_FBX_MAX_COUNT : x + y)
				: x < y ? x
					: y;
			i++;
			j++;
		} else if (c < 0) {
			if (op == FB_ALG_UNION)
				out[n++] = dst->rules[i];
			i++;
		} else {
			if (op == FB_ALG_UNION)
				out[n++] = src->rules[j];
			j++;
		}
	}
	free(dst->rules);
	dst->rules = out;
	dst->nrules = n;
	return 0;
}

/* Prefix lengths: the union of both lists (at most FB_MAX_LENGTHS each),
 * or the lengths in both (a rule in both filters has its length in both
 * lists). */
static int combine_lengths(struct fb_prefixes *out, const struct fb_prefixes *a,
			   const struct fb_prefixes *b, enum fb_alg_op op, char *why, size_t len)
{
	int l, i, j;

	memset(out, 0, sizeof(*out));
	for (l = 0; l < FB_PFX_NR; l++) {
		const struct fb_lengths *x = &a->list[l], *y = &b->list[l];
		struct fb_lengths *o = &out->list[l];
		__u8 all[2 * FB_MAX_LENGTHS];
		int n = 0, in_y;

		for (i = 0; i < x->n; i++) {
			for (in_y = 0, j = 0; j < y->n; j++)
				in_y |= x->len[i] == y->len[j];
			if (op == FB_ALG_UNION || in_y)
				all[n++] = x->len[i];
		}
		for (j = 0; op == FB_ALG_UNION && j < y->n; j++) {
			for (in_y = 0, i = 0; i < x->n; i++)
				in_y |= x->len[i] == y->len[j];
			if (!in_y)
				all[n++] = y->len[j];
		}
		if (n > FB_MAX_LENGTHS) {
			snprintf(why, len,
				 "the %s prefix lengths of both together are %d, more than %d",
				 fb_rules_prefix_list_name(l), n, FB_MAX_LENGTHS);
			return -1;
		}
		o->n = n;
		memcpy(o->len, all, n);
	}
	/* Rule shapes likewise: a key carries its mask (mask.h), so a rule in
	 * both filters has its shape in both tables. */
	{
		__u32 x[FB_MAX_MASKS], y[FB_MAX_MASKS];
		int nx = fb_rules_masks(a, x), ny = fb_rules_masks(b, y), n = 0, in_y;
		char name[96];

		for (i = 0; i < nx; i++) {
			for (in_y = 0, j = 0; j < ny; j++)
				in_y |= x[i] == y[j];
			if (op == FB_ALG_UNION || in_y)
				fb_mask_put(out->masks, n++, x[i]);
		}
		for (j = 0; op == FB_ALG_UNION && j < ny; j++) {
			for (in_y = 0, i = 0; i < nx; i++)
				in_y |= x[i] == y[j];
			if (in_y)
				continue;
			if (n == FB_MAX_MASKS) {
				fb_mask_name(y[j], name, sizeof(name));
				snprintf(why, len,
					 "together they have more than %d rule shapes (%s is one "
					 "too many)",
					 FB_MAX_MASKS, name);
				return -1;
			}
			fb_mask_put(out->masks, n++, y[j]);
		}
	}
	return 0;
}

/* One key means one create, and only create sets the action: sources
 * whose actions differ were changed by hand (a block-list file made an
 * allow-list), and their union or intersection is neither. */
static int actions_differ(const struct fb_header *a, const struct fb_header *b, char *why,
			  size_t len)
{
	if (a->action == b->action)
		return 0;
	snprintf(why, len, "actions differ (%s, %s)", FB_NAME(fb_action_names, a->action),
		 FB_NAME(fb_action_names, b->action));
	return -1;
}

int fb_alg_combine(struct fb_alg_img *dst, const struct fb_alg_img *src, enum fb_alg_op op)
{
	struct fb_prefixes px;
	char why[200];
	int rc;

	if (fb_sa_compatible(&dst->m, &src->m, true, why, sizeof(why)))
		goto bad;
	if (dst->m.hdr->confirm != src->m.hdr->confirm) {
		snprintf(why, sizeof(why), "only one of them confirms hits (--confirm exact)");
		goto bad;
	}
	if (actions_differ(dst->m.hdr, src->m.hdr, why, sizeof(why)))
		goto bad;
	if (combine_lengths(&px, (const struct fb_prefixes *)&dst->blocks[FB_PREFIX_BLOCK],
			    (const struct fb_prefixes *)&src->blocks[FB_PREFIX_BLOCK], op, why,
			    sizeof(why)))
		goto bad;
	if (combine_rules(dst, src, op))
		return -1;
	rc = op == FB_ALG_UNION ? fb_sa_union(&dst->m, &src->m, why, sizeof(why))
				: fb_sa_intersect(&dst->m, &src->m, why, sizeof(why));
	if (rc)
		goto bad;
	memcpy(&dst->blocks[FB_PREFIX_BLOCK], &px, sizeof(px));
	/* Two filters with shapes but none in common hold no shape rule in
	 * common: the kind goes with the table (an export checks they agree). */
	if (!fb_mask_get(px.masks, 0))
		dst->m.hdr->kinds &= ~FB_KINDF(FB_KIND_MASK);
	dst->m.hdr->flags |= src->m.hdr->flags; /* an estimate stays one */
	if (op == FB_ALG_INTERSECT && dst->cnt) {
		/* A counting filter's flows are its counters' sum / k (`check`
		 * verifies that); minima of counters need not be whole flows,
		 * so round up. */
		__u64 p, sum = 0, m = (__u64)dst->m.hdr->nblocks * FB_BLOCK_BITS;

		for (p = 0; p < m; p++)
			sum += dst->m.cnt_bits == 8 ? dst->cnt[p]
						    : (dst->cnt[p / 2] >> ((p & 1) * 4)) & 0xf;
		dst->m.hdr->nflows = (sum + dst->m.hdr->k - 1) / dst->m.hdr->k;
		dst->m.hdr->flags |= FB_HDRF_NFLOWS_ESTIMATE;
	}
	return 0;
bad:
	fb_report_err("%s and %s: %s", dst->label, src->label, why);
	return -1;
}

/* The image into a new filter array (fb_replace_fill) or a staged one:
 * bits, counters, exact sets, flows, prefix lengths, the kind flags last,
 * so a data path that already sees the array probes only whole rules. */
static int fill(struct fb_store *nf, void *arg)
{
	const struct fb_alg_img *img = arg;
	const struct fb_header *h = img->m.hdr;

	memcpy(&nf->blocks[FB_HDR_BLOCKS], &img->blocks[FB_HDR_BLOCKS],
	       (size_t)h->nblocks * FB_BLOCK_BYTES);
	if (img->cnt)
		memcpy(nf->cnt, img->cnt, img->cnt_bytes);
	if (fb_fbx_rules_into(nf, img->rules, img->nrules))
		return -1;
	nf->hdr->nflows = h->nflows;
	nf->hdr->flags = h->flags;
	fb_store_head(nf)->keys.perm_id = img->perm_id;
	memcpy(&nf->blocks[FB_PREFIX_BLOCK], &img->blocks[FB_PREFIX_BLOCK], FB_BLOCK_BYTES);
	__atomic_store_n(&nf->hdr->kinds, h->kinds, __ATOMIC_RELEASE);
	return 0;
}

static int store_new(const char *name, const struct fb_alg_img *img)
{
	const struct fb_header *h = img->m.hdr;
	struct fb_create_opts o = {
		.nblocks = h->nblocks,
		.k = h->k,
		.layout = h->layout,
		.hash = h->hash,
		.action = h->action,
		.counter_bits = h->counter_bits,
		.confirm = h->confirm,
		.capacity = h->capacity,
		.fp_rate = h->fp_ppb / 1e9,
	};
	struct fb_store f;

	if (o.confirm && !strcmp(name, FB_IPROUTE_FILTER)) {
		/* An ip-link-loaded program cannot confirm: it would fail open. */
		fb_report_err("the result confirms hits (--confirm exact), which '%s', the filter "
			      "`ip link` uses, cannot; nothing created",
			      name);
		return -1;
	}
	/* The exact sets are sized from the capacity (a filter sized by bits:
	 * from its bits): enough for the rules. Raised only when they would
	 * not hold them, so a filter sized by bits stays so. */
	if (o.confirm && fb_exact_sets_for(o.capacity, o.nblocks) < img->nrules)
		o.capacity = img->nrules;
	if (fb_store_create_staged(name, &o, &f))
		return -1;
	f.hdr->key[0] = h->key[0];
	f.hdr->key[1] = h->key[1];
	if (fill(&f, (void *)img)) {
		fb_store_abort(&f);
		return -1;
	}
	if (fb_store_publish(&f)) {
		if (f.staged)
			fb_store_abort(&f);
		else
			fb_store_close(&f);
		return -1;
	}
	fb_store_close(&f);
	return 0;
}

static struct fb_bloom_mem store_mem(struct fb_store *f)
{
	return (struct fb_bloom_mem){
		.hdr = f->hdr, .blocks = f->blocks, .cnt = f->cnt, .cnt_bits = f->hdr->counter_bits
	};
}

/* The crc of f as copy_filter() takes it, f locked: 0, or -1 (printed). */
static int now_crc(struct fb_store *f, __u32 *crc)
{
	struct fb_alg_img tmp = { .blocks = NULL };

	snprintf(tmp.label, sizeof(tmp.label), "%s", f->name);
	if (f->hdr->confirm && fb_exact_each(f, add_each, &tmp)) {
		fb_alg_free(&tmp);
		return -1;
	}
	*crc = rules_crc(state_crc(f), tmp.rules, tmp.nrules);
	fb_alg_free(&tmp);
	return 0;
}

int fb_alg_store(const char *name, struct fb_alg_img *img, const __u32 *expect_crc, bool carry,
		 bool *replaced)
{
	struct fb_bloom_mem cm;
	struct fb_store f;
	char why[200];
	__u32 crc;
	int rc = -1;

	*replaced = false;
	if (fb_pin_check_name(name))
		return -1;
	if (!fb_pin_exists(name)) {
		if (expect_crc) {
			fb_report_err(
				"'%s' was destroyed while it was being merged; nothing created",
				name);
			return -1;
		}
		return store_new(name, img);
	}
	if (fb_store_open(name, &f))
		return -1;
	if (bloom_only(&f) || fb_store_lock(&f))
		goto out;
	if (expect_crc && now_crc(&f, &crc))
		goto unlock;
	if (expect_crc && crc != *expect_crc) {
		fb_report_err(
			"'%s' changed while it was being merged (a concurrent writer); nothing "
			"changed, run it again",
			name);
		goto unlock;
	}
	cm = store_mem(&f);
	if (fb_sa_compatible(&cm, &img->m, true, why, sizeof(why)) ||
	    (f.hdr->confirm != img->m.hdr->confirm &&
	     snprintf(why, sizeof(why), "only one of them confirms hits (--confirm exact)")) ||
	    actions_differ(f.hdr, img->m.hdr, why, sizeof(why))) {
		fb_report_err("cannot replace '%s' with the result: %s; nothing changed", name,
			      why);
		goto unlock;
	}
	/* Checked unchanged since it was loaded (expect_crc), under the lock. */
	img->perm_id = carry && expect_crc ? f.perm_id : 0;
	rc = fb_replace_fill(&f, img->m.hdr->nblocks, img->m.hdr->k, img->nrules, fill, img);
	img->perm_id = 0;
	*replaced = !rc;
unlock:
	fb_store_unlock(&f);
out:
	fb_store_close(&f);
	return rc;
}

/* Fold halves the bits, not the flows they hold at the filter's rate: a
 * filter sized by --capacity and --fp-rate takes as its capacity what the
 * folded size holds at that rate, never more than before. The capacity is
 * what `info` says it is sized for and the bound bgp and guard keep. */
static int fold_fill(struct fb_store *nf, void *arg)
{
	const struct fb_header *h = ((const struct fb_alg_img *)arg)->m.hdr;
	double cap;

	if (fill(nf, arg))
		return -1;
	if (h->capacity && h->fp_ppb) {
		cap = fb_capacity_at(h->layout, h->k, h->nblocks, h->fp_ppb / 1e9);
		if (cap < 1)
			cap = 1;
		if (cap < (double)h->capacity)
			nf->hdr->capacity = (__u64)cap;
	}
	return 0;
}

int fb_alg_fold(const char *name, __u32 *nblocks)
{
	struct fb_alg_img img = { .blocks = NULL };
	struct fb_store f;
	char why[200];
	int rc = -1;

	snprintf(img.label, sizeof(img.label), "%s", name);
	if (fb_store_open(name, &f))
		return -1;
	if (fb_store_lock(&f))
		goto out;
	if (copy_filter(&f, &img))
		goto unlock;
	/* On the copy: fold clears bits, the live filter must not see it. */
	if (fb_sa_fold(&img.m, why, sizeof(why))) {
		fb_report_err("cannot fold '%s': %s", name, why);
		goto unlock;
	}
	img.cnt_bytes = fb_fbx_counter_bytes(img.m.hdr->nblocks, img.m.hdr->counter_bits);
	/* Its rules, folded: still the permanent rules they were (head.h). */
	img.perm_id = f.perm_id;
	rc = fb_replace_fill(&f, img.m.hdr->nblocks, img.m.hdr->k, img.nrules, fold_fill, &img);
	*nblocks = img.m.hdr->nblocks;
unlock:
	fb_store_unlock(&f);
out:
	fb_store_close(&f);
	fb_alg_free(&img);
	return rc;
}
