// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Filter types behind one interface: one table of operations per type
 * (fb_ftypes below), the table types' operations dispatching to
 * cuckoo_table.c, dleft_table.c and scalable_table.c on the mmap of a
 * filter (see ftype.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "types/batchlog.h"
#include "types/bits.h"
#include "types/counting.h"
#include "types/cuckoo_table.h"
#include "types/dleft_table.h"
#include "types/ftype.h"
#include "types/probe_mem.h"
#include "store/replace.h"
#include "types/scalable_table.h"
#include "types/sizing.h"
#include "util.h"

static struct fb_cuckoo_geom *cuckoo_of(const struct fb_store *f)
{
	return (struct fb_cuckoo_geom *)&f->blocks[FB_TYPE_GEOM_BLOCK];
}

static struct fb_dleft_geom *dleft_of(const struct fb_store *f)
{
	return (struct fb_dleft_geom *)&f->blocks[FB_TYPE_GEOM_BLOCK];
}

static struct fb_sbf_geom *sbf_of(const struct fb_store *f)
{
	return (struct fb_sbf_geom *)&f->blocks[FB_TYPE_GEOM_BLOCK];
}

/* A formatted line for out->line. */
static void out_line(const struct fb_ftype_out *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_line(const struct fb_ftype_out *out, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out->line(out->ctx, buf);
}

/* ------------------------------------------------------------ cuckoo */

static int cuckoo_size(double capacity, double p, struct fb_block *geom, __u32 first, __u64 *end)
{
	struct fb_cuckoo_geom *g = (void *)geom;

	if (fb_cuckoo_size(capacity, p, g))
		return -1;
	g->first_block = first;
	*end = first + fb_cuckoo_blocks(g);
	return 0;
}

static int cuckoo_check(const void *geom, __u64 avail, char *why, size_t len)
{
	const struct fb_cuckoo_geom *c = geom;

	if (c->first_block < FB_TYPE_GEOM_BLOCK + 1) {
		snprintf(why, len, "cuckoo table overlaps the header");
		return -1;
	}
	return fb_cuckoo_check(c, avail, why, len);
}

/* Slots of bucket i holding fp. */
static unsigned cuckoo_copies(const struct fb_store *f, __u32 i, __u32 fp)
{
	const struct fb_cuckoo_geom *g = cuckoo_of(f);
	const unsigned char *b = (const unsigned char *)&f->blocks[fb_cuckoo_block(g, i)] +
				 fb_cuckoo_offset(i, g->fp_bits);
	unsigned s, n = 0, sb = fb_cuckoo_slot_bytes(g->fp_bits);

	for (s = 0; s < FB_CUCKOO_SLOTS; s++) {
		__u32 v = 0;

		memcpy(&v, b + s * sb, sb); /* little-endian */
		n += v == fp;
	}
	return n;
}

static unsigned cuckoo_count(const struct fb_store *f, __u64 h)
{
	const struct fb_cuckoo_geom *g = cuckoo_of(f);
	__u32 fp = fb_cuckoo_fp(h, g->fp_bits), i1 = fb_cuckoo_index(h, g->nbuckets);
	__u32 i2 = fb_cuckoo_alt(i1, fp, g->nbuckets);

	return cuckoo_copies(f, i1, fp) + (i2 != i1 ? cuckoo_copies(f, i2, fp) : 0);
}

/* Slots a flow's copies can take: its two buckets', or one bucket's when
 * its alternate bucket is its first. */
static unsigned cuckoo_room(const struct fb_store *f, __u64 h)
{
	const struct fb_cuckoo_geom *g = cuckoo_of(f);
	__u32 fp = fb_cuckoo_fp(h, g->fp_bits), i1 = fb_cuckoo_index(h, g->nbuckets);

	return fb_cuckoo_alt(i1, fp, g->nbuckets) == i1 ? FB_CUCKOO_SLOTS : 2 * FB_CUCKOO_SLOTS;
}

static bool cuckoo_interrupted(const struct fb_store *f)
{
	return __atomic_load_n(&cuckoo_of(f)->seq, __ATOMIC_ACQUIRE) & 1;
}

static void cuckoo_finish(struct fb_store *f)
{
	fb_cuckoo_end_chain(f->blocks, cuckoo_of(f));
}

static bool cuckoo_recount(struct fb_store *f, bool repair)
{
	struct fb_cuckoo_geom *g = cuckoo_of(f);
	__u64 items = fb_cuckoo_occupied(f->blocks, g);

	if (g->count == items)
		return false;
	if (repair)
		__atomic_store_n(&g->count, items, __ATOMIC_RELAXED);
	return true;
}

static __u64 cuckoo_items(const struct fb_store *f)
{
	return fb_cuckoo_occupied(f->blocks, cuckoo_of(f));
}

static double cuckoo_load(const struct fb_store *f)
{
	return (double)cuckoo_items(f) / ((double)FB_CUCKOO_SLOTS * cuckoo_of(f)->nbuckets);
}

/* A chain a killed writer left open: the probe says "maybe" to all. */
static double cuckoo_fpr(const struct fb_store *f)
{
	if (cuckoo_interrupted(f))
		return 1;
	return fb_cuckoo_fpr(cuckoo_of(f), (double)cuckoo_items(f));
}

static void cuckoo_describe(const struct fb_store *f, const struct fb_ftype_out *out)
{
	const struct fb_cuckoo_geom *c = cuckoo_of(f);

	out->u64(out->ctx, "buckets", c->nbuckets);
	out->u64(out->ctx, "fingerprint_bits", c->fp_bits);
	/* seq goes odd then even around each chain. */
	out->u64(out->ctx, "relocations", c->seq / 2);
	out_line(out,
		 "  cuckoo: %u buckets x %d slots, %u-bit fingerprints; %llu stored, load factor "
		 "%.4f (built for %.2f)",
		 c->nbuckets, FB_CUCKOO_SLOTS, c->fp_bits, (unsigned long long)cuckoo_items(f),
		 cuckoo_load(f), fb_cuckoo_design_load(c->nbuckets));
}

static void cuckoo_geometry(const struct fb_block *geom, char *buf, size_t len)
{
	const struct fb_cuckoo_geom *c = (const void *)geom;

	snprintf(buf, len, "%u buckets x %d, %u-bit fingerprints", c->nbuckets, FB_CUCKOO_SLOTS,
		 c->fp_bits);
}

/* ------------------------------------------------------------- d-left */

static int dleft_size(double capacity, double p, struct fb_block *geom, __u32 first, __u64 *end)
{
	struct fb_dleft_geom *g = (void *)geom;

	if (fb_dleft_size(capacity, p, g))
		return -1;
	g->first_block = first;
	*end = first + fb_dleft_blocks(g);
	return 0;
}

static int dleft_check(const void *geom, __u64 avail, char *why, size_t len)
{
	const struct fb_dleft_geom *d = geom;

	if (d->first_block < FB_TYPE_GEOM_BLOCK + 1) {
		snprintf(why, len, "d-left table overlaps the header");
		return -1;
	}
	return fb_dleft_check(d, avail, why, len);
}

static unsigned dleft_count(const struct fb_store *f, __u64 h)
{
	struct fb_tbl t = { f->blocks, fb_store_nblocks(f) };

	return fb_dleft_probe(&t, dleft_of(f), h);
}

static __u64 dleft_items(const struct fb_store *f)
{
	struct fb_dleft_stats st;

	fb_dleft_stats(f->blocks, dleft_of(f), &st);
	return st.used;
}

static double dleft_load(const struct fb_store *f)
{
	return (double)dleft_items(f) /
	       ((double)FB_DLEFT_D * FB_DLEFT_CELLS * (1ULL << dleft_of(f)->bucket_bits));
}

static double dleft_fpr(const struct fb_store *f)
{
	return fb_dleft_fpr(dleft_of(f), (double)dleft_items(f));
}

static void dleft_describe(const struct fb_store *f, const struct fb_ftype_out *out)
{
	const struct fb_dleft_geom *d = dleft_of(f);
	struct fb_dleft_stats st;
	char loads[16 * (FB_DLEFT_CELLS + 1)];
	size_t o = 0;
	unsigned i;

	fb_dleft_stats(f->blocks, d, &st);
	out->u64(out->ctx, "subtables", FB_DLEFT_D);
	out->u64(out->ctx, "buckets_per_subtable", 1ULL << d->bucket_bits);
	out->u64(out->ctx, "remainder_bits", d->rem_bits);
	out->u64(out->ctx, "saturated", st.saturated);
	out->list(out->ctx, "bucket_loads", true);
	for (i = 0; i <= FB_DLEFT_CELLS; i++) {
		out->u64(out->ctx, NULL, st.load[i]);
		o += snprintf(loads + o, sizeof(loads) - o, " %llu",
			      (unsigned long long)st.load[i]);
	}
	out->list(out->ctx, NULL, false);
	out_line(out,
		 "  d-left: %d x %u buckets x %d cells, %u-bit remainders in %u-bit cells; %llu "
		 "fingerprints, cell load %.4f, %llu saturated",
		 FB_DLEFT_D, 1U << d->bucket_bits, FB_DLEFT_CELLS, d->rem_bits, d->cell_bits,
		 (unsigned long long)st.used, dleft_load(f), (unsigned long long)st.saturated);
	out_line(out, "  buckets holding 0..%d:%s", FB_DLEFT_CELLS, loads);
}

static void dleft_geometry(const struct fb_block *geom, char *buf, size_t len)
{
	const struct fb_dleft_geom *d = (const void *)geom;

	snprintf(buf, len, "%d x %u buckets x %d cells, %u-bit remainders", FB_DLEFT_D,
		 1U << d->bucket_bits, FB_DLEFT_CELLS, d->rem_bits);
}

/* ----------------------------------------------------------- scalable */

static int sbf_size(double capacity, double p, struct fb_block *geom, __u32 first, __u64 *end)
{
	struct fb_sbf_geom *g = (void *)geom;

	if (fb_sbf_init(g, capacity, p, first))
		return -1;
	*end = fb_sbf_end_block(g);
	return 0;
}

static int sbf_check(const void *geom, __u64 avail, char *why, size_t len)
{
	const struct fb_sbf_geom *s = geom;

	if (s->nstages && s->stage[0].first_block < FB_TYPE_GEOM_BLOCK + 5) {
		snprintf(why, len, "scalable stage 0 overlaps the header");
		return -1;
	}
	return fb_sbf_check(s, avail, why, len);
}

static unsigned sbf_count(const struct fb_store *f, __u64 h)
{
	struct fb_tbl t = { f->blocks, fb_store_nblocks(f) };

	return fb_sbf_probe(&t, sbf_of(f), h);
}

/* Then what the data path probes for (rd), as a Bloom filter's add does:
 * its bits first. */
static int sbf_add(struct fb_store *f, const __u64 *h, size_t n, struct fb_batch_err *err,
		   const struct fb_batch_ready *rd)
{
	__u64 need;
	int e;

	e = fb_sbf_add(f->blocks, (__u64)f->hdr->nblocks + FB_HDR_BLOCKS, sbf_of(f), h, n, &need,
		       err);
	/* Room for the new stages first (zeroed chunks appended to the array
	 * in use: the data path reaches them only through the stage
	 * descriptors the add writes), then the same add, which now fits. */
	if (e == -3 && fb_replace_grow(f, (__u32)(need - FB_HDR_BLOCKS)))
		return -4;
	if (e == -3)
		e = fb_sbf_add(f->blocks, (__u64)f->hdr->nblocks + FB_HDR_BLOCKS, sbf_of(f), h, n,
			       &need, err);
	if (e)
		return e;
	f->hdr->nflows = fb_flows_add(f->hdr->nflows, n, f->hdr->nblocks);
	return rd && rd->fn && rd->fn(f, rd->arg) ? -4 : 0;
}

static __u64 sbf_items(const struct fb_store *f)
{
	return fb_sbf_count(sbf_of(f));
}

static double sbf_load(const struct fb_store *f)
{
	const struct fb_sbf_geom *s = sbf_of(f);
	double cap = 0;
	unsigned i;

	for (i = 0; i < s->nstages && i < FB_SBF_MAX_STAGES; i++)
		cap += (double)s->stage[i].capacity;
	return cap ? (double)fb_sbf_count(s) / cap : 0;
}

static double sbf_fpr(const struct fb_store *f)
{
	return fb_sbf_fpr(sbf_of(f));
}

static void sbf_describe(const struct fb_store *f, const struct fb_ftype_out *out)
{
	const struct fb_sbf_geom *s = sbf_of(f);
	unsigned i;

	out->u64(out->ctx, "stages", s->nstages);
	out->dbl(out->ctx, "fp_rate_bound", fb_sbf_bound(s));
	out->list(out->ctx, "stage", true);
	for (i = 0; i < s->nstages && i < FB_SBF_MAX_STAGES; i++) {
		out->item(out->ctx, true);
		out->u64(out->ctx, "capacity", s->stage[i].capacity);
		out->u64(out->ctx, "flows", s->stage[i].count);
		out->dbl(out->ctx, "fp_rate", s->stage[i].fp_ppb / 1e9);
		out->u64(out->ctx, "blocks", s->stage[i].nblocks);
		out->u64(out->ctx, "hashes", s->stage[i].k);
		out->item(out->ctx, false);
	}
	out->list(out->ctx, NULL, false);
	out_line(out,
		 "  scalable: %u stage%s (at most %d), growth s=%u, tightening r=%.2f; bound P <= "
		 "P0/(1-r) = %g/(1-%.2f) = %g",
		 s->nstages, s->nstages == 1 ? "" : "s", FB_SBF_MAX_STAGES, s->growth,
		 s->tighten_ppm / 1e6, s->fp0_ppb / 1e9, s->tighten_ppm / 1e6, fb_sbf_bound(s));
	for (i = 0; i < s->nstages && i < FB_SBF_MAX_STAGES; i++)
		out_line(out, "    stage %u: %llu of %llu flows, rate %g, k=%u, %u blocks", i,
			 (unsigned long long)s->stage[i].count,
			 (unsigned long long)s->stage[i].capacity, s->stage[i].fp_ppb / 1e9,
			 s->stage[i].k, s->stage[i].nblocks);
}

static void sbf_geometry(const struct fb_block *geom, char *buf, size_t len)
{
	const struct fb_sbf_geom *s = (const void *)geom;

	snprintf(buf, len, "stage 0 for %llu flows at %g, k=%u, bound %g",
		 (unsigned long long)s->stage[0].capacity, s->stage[0].fp_ppb / 1e9, s->stage[0].k,
		 s->fp0_ppb / 1e9 / (1 - s->tighten_ppm / 1e6));
}

/* ------------------------------------------------------------- the table */

static const struct fb_ftype_ops fb_ftypes[FB_TYPE_MAX] = {
	[FB_TYPE_BLOOM] = {
		.name = "bloom",
		.flags = FB_FTYPE_BY_TYPE | FB_FTYPE_LAYOUT | FB_FTYPE_LAYOUTS |
			 FB_FTYPE_COUNTING | FB_FTYPE_BITS,
	},
	[FB_TYPE_CUCKOO] = {
		.name = "cuckoo",
		.flags = FB_FTYPE_BY_TYPE | FB_FTYPE_TABLE | FB_FTYPE_DELETES | FB_FTYPE_DEL_ASKS,
		.size = cuckoo_size, .check = cuckoo_check,
		.count = cuckoo_count, .add = fb_batchlog_add, .del = fb_batchlog_del,
		.items = cuckoo_items, .load = cuckoo_load, .fpr = cuckoo_fpr,
		.describe = cuckoo_describe, .geometry = cuckoo_geometry,
		.interrupted = cuckoo_interrupted, .finish = cuckoo_finish,
		.recount = cuckoo_recount,
	},
	[FB_TYPE_DLEFT] = {
		.name = "dleft",
		.flags = FB_FTYPE_BY_TYPE | FB_FTYPE_TABLE | FB_FTYPE_DELETES | FB_FTYPE_DEL_ASKS,
		.count_max = FB_DLEFT_CMAX,
		.size = dleft_size, .check = dleft_check,
		.count = dleft_count, .add = fb_batchlog_add, .del = fb_batchlog_del,
		.items = dleft_items, .load = dleft_load, .fpr = dleft_fpr,
		.describe = dleft_describe, .geometry = dleft_geometry,
	},
	[FB_TYPE_SCALABLE] = {
		.name = "scalable",
		.flags = FB_FTYPE_TABLE | FB_FTYPE_LAYOUT | FB_FTYPE_GROWS,
		.size = sbf_size, .check = sbf_check,
		.count = sbf_count, .add = sbf_add,
		.items = sbf_items, .load = sbf_load, .fpr = sbf_fpr,
		.describe = sbf_describe, .geometry = sbf_geometry,
	},
};

const char *const fb_ftype_create_names[] = { "bloom", "cuckoo", "dleft", NULL };
const int fb_ftype_create_values[] = { FB_TYPE_BLOOM, FB_TYPE_CUCKOO, FB_TYPE_DLEFT };

const struct fb_ftype_ops *fb_ftype(unsigned type)
{
	return type < FB_TYPE_MAX ? &fb_ftypes[type] : NULL;
}

int fb_ftype_by_name(const char *name)
{
	int t;

	for (t = 0; t < FB_TYPE_MAX; t++)
		if (!strcmp(fb_ftypes[t].name, name))
			return t;
	return -1;
}

const char *fb_ftype_name(unsigned type)
{
	return type < FB_TYPE_MAX ? fb_ftypes[type].name : "?";
}

/* The table operations of f's type (callers only reach here for
 * FB_FTYPE_TABLE types: store_open checks the type). */
static const struct fb_ftype_ops *ops_of(const struct fb_store *f)
{
	return fb_ftype(f->hdr->type);
}

int fb_ftype_size(unsigned type, double capacity, double p, struct fb_block *geom, __u32 *nblocks)
{
	const struct fb_ftype_ops *o = fb_ftype(type);
	__u32 first = FB_TYPE_GEOM_BLOCK + fb_type_geom_blocks(type);
	__u64 end;

	if (!o || !o->size)
		return -1;
	memset(geom, 0, fb_type_geom_blocks(type) * FB_BLOCK_BYTES);
	if (o->size(capacity, p, geom, first, &end) || end - FB_HDR_BLOCKS > FB_MAX_BLOCKS)
		return -1;
	*nblocks = (__u32)(end - FB_HDR_BLOCKS);
	return 0;
}

int fb_ftype_check(const struct fb_header *hdr, const struct fb_block *blocks, char *why,
		   size_t len)
{
	const struct fb_ftype_ops *o = fb_ftype(hdr->type);

	if (!o) {
		snprintf(why, len, "unknown filter type %u", hdr->type);
		return -1;
	}
	if (hdr->nblocks < fb_type_geom_blocks(hdr->type)) {
		snprintf(why, len, "%s geometry beyond the array", o->name);
		return -1;
	}
	return o->check ? o->check(&blocks[FB_TYPE_GEOM_BLOCK], (__u64)hdr->nblocks + FB_HDR_BLOCKS,
				   why, len)
			: 0;
}

bool fb_ftype_seq_odd(const struct fb_store *f)
{
	const struct fb_ftype_ops *o = ops_of(f);

	return o && o->interrupted && o->interrupted(f);
}

void fb_ftype_seq_end(struct fb_store *f)
{
	const struct fb_ftype_ops *o = ops_of(f);

	if (o && o->finish)
		o->finish(f);
}

bool fb_ftype_recount(struct fb_store *f, bool repair)
{
	const struct fb_ftype_ops *o = ops_of(f);

	return o && o->recount && o->recount(f, repair);
}

static __u64 hash_of(const struct fb_store *f, const struct fb_key *key)
{
	return fb_hash_key(key, f->hdr->hash, f->hdr->key);
}

unsigned fb_ftype_count(const struct fb_store *f, const struct fb_key *key)
{
	const struct fb_ftype_ops *o = ops_of(f);

	return o && o->count ? o->count(f, hash_of(f, key)) : 0;
}

unsigned fb_ftype_held(const struct fb_key *key, void *f)
{
	const struct fb_ftype_ops *o = ops_of(f);

	return o && (o->flags & FB_FTYPE_TABLE) ? fb_ftype_count(f, key) : fb_counting_min(f, key);
}

/* What the operator can do about a full table (%s: its name): a table
 * type is sized by capacity, which load --replace sizes for its list. */
#define FULL_REMEDY "`flowbloom load %s FILE --replace` with the whole list re-sizes it"

void fb_ftype_full_why(const struct fb_store *f, const struct fb_key *keys, size_t bad, char *buf,
		       size_t len)
{
	unsigned held = fb_ftype_count(f, &keys[bad]), room = 0;
	size_t i;

	/* Its copies in the table and those the batch placed before it,
	 * against the slots of its buckets: two, or one for the flow whose
	 * alternate bucket is its first (1 in nbuckets). */
	for (i = 0; i < bad; i++)
		held += !memcmp(&keys[i], &keys[bad], sizeof(keys[bad]));
	if (f->hdr->type == FB_TYPE_CUCKOO)
		room = cuckoo_room(f, hash_of(f, &keys[bad]));
	if (room && held >= room)
		snprintf(buf, len,
			 "cuckoo filter '%s' would hold it %u times, more copies of one flow than "
			 "%s (%u%s)",
			 f->name, held + 1,
			 room == FB_CUCKOO_SLOTS ? "its bucket takes" : "its two buckets take",
			 room, room == FB_CUCKOO_SLOTS ? ": its two buckets are one" : "");
	else if (f->hdr->type == FB_TYPE_SCALABLE)
		snprintf(buf, len,
			 "scalable filter '%s' is full: it would need more than %u stages "
			 "(" FULL_REMEDY ")",
			 f->name, FB_SBF_MAX_STAGES, f->name);
	else
		snprintf(buf, len, "%s filter '%s' is full at load factor %.4f (" FULL_REMEDY ")",
			 fb_ftype_name(f->hdr->type), f->name, f->refused_load, f->name);
}

static __u64 *hashes(const struct fb_store *f, const struct fb_key *keys, size_t n)
{
	__u64 *h = malloc((n ? n : 1) * sizeof(*h));
	size_t i;

	for (i = 0; h && i < n; i++)
		h[i] = hash_of(f, &keys[i]);
	return h;
}

int fb_ftype_add(struct fb_store *f, const struct fb_key *keys, size_t n, struct fb_batch_err *err)
{
	return fb_ftype_add_ready(f, keys, n, err, NULL);
}

int fb_ftype_add_ready(struct fb_store *f, const struct fb_key *keys, size_t n,
		       struct fb_batch_err *err, const struct fb_batch_ready *rd)
{
	const struct fb_ftype_ops *o = ops_of(f);
	__u64 *h;
	int e;

	if (!o || !o->add)
		return -1;
	h = hashes(f, keys, n);
	if (!h)
		return -2;
	e = o->add(f, h, n, err, rd);
	free(h);
	return e;
}

int fb_ftype_del(struct fb_store *f, const struct fb_key *keys, size_t n, struct fb_batch_err *err)
{
	const struct fb_ftype_ops *o = ops_of(f);
	__u64 *h;
	int e;

	if (!o || !o->del)
		return -3;
	h = hashes(f, keys, n);
	if (!h)
		return -2;
	e = o->del(f, h, n, err);
	free(h);
	return e;
}

__u64 fb_ftype_items(const struct fb_store *f)
{
	const struct fb_ftype_ops *o = ops_of(f);

	return o && o->items ? o->items(f) : 0;
}

double fb_ftype_load(const struct fb_store *f)
{
	const struct fb_ftype_ops *o = ops_of(f);

	return o && o->load ? o->load(f) : 0;
}

double fb_ftype_fpr(const struct fb_store *f)
{
	const struct fb_ftype_ops *o = ops_of(f);

	return o && o->fpr ? o->fpr(f) : 0;
}

double fb_ftype_fpr_now(const struct fb_store *f)
{
	const struct fb_header *h = f->hdr;
	const struct fb_ftype_ops *o = ops_of(f);

	if (o && (o->flags & FB_FTYPE_TABLE))
		return o->fpr(f);
	/* From the bits themselves when they are mapped (a filter read
	 * from an export may have only its header). */
	if (f->blocks)
		return fb_bits_fpr(f);
	return fb_fpr(h->layout, (double)h->nflows, h->nblocks, h->k);
}

int fb_ftype_resize(const struct fb_store *f, double n, double p, __u32 *nblocks, __u8 *k,
		    struct fb_block *geom)
{
	const struct fb_ftype_ops *o = ops_of(f);

	if (o && (o->flags & FB_FTYPE_TABLE))
		return fb_ftype_size(f->hdr->type, n, p, geom, nblocks);
	return f->hdr->layout == FB_LAYOUT_CLASSIC ? fb_size_classic(n, p, nblocks, k)
						   : fb_size_blocked(n, p, nblocks, k);
}

void fb_ftype_describe(const struct fb_store *f, const struct fb_ftype_out *out)
{
	const struct fb_ftype_ops *o = ops_of(f);

	if (o && o->describe)
		o->describe(f, out);
}

void fb_ftype_geometry(unsigned type, const struct fb_block *geom, char *buf, size_t len)
{
	const struct fb_ftype_ops *o = fb_ftype(type);

	if (o && o->geometry)
		o->geometry(geom, buf, len);
	else
		snprintf(buf, len, "-");
}

/* On lock: a batch a killed writer left open rolled back (a cuckoo chain
 * in it ended), else a chain an earlier build's writer left open ended;
 * a counting filter's flow rolled back (how many). */
static int recover(struct fb_store *f)
{
	int r;

	if (!f->hdr->type)
		return fb_counting_recover_all(f);
	r = fb_batchlog_recover(f, true, false);
	if (r >= 0 && fb_ftype_seq_odd(f)) {
		fb_ftype_seq_end(f);
		fb_report(FB_REPORT_NOTE,
			  "filter '%s': ended the relocation chain a killed "
			  "writer left open",
			  f->name);
	}
	return r < 0 ? -1 : 0;
}

/* What the store asks of the types (store.h): the geometry check on open,
 * the recovery above on lock. Set before main runs, in every program
 * that links the types (counting.c asks for it too). */
static const struct fb_store_types store_types = {
	.check = fb_ftype_check,
	.recover = recover,
};

void fb_ftype_register(void)
{
	fb_store_types_set(&store_types);
}

__attribute__((constructor)) static void register_types(void)
{
	fb_ftype_register();
}
