// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Filter types behind one interface: dispatch to cuckoo_table.c, dleft_table.c and
 * scalable_table.c on the mmap of a filter (see ftype.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "types/cuckoo_table.h"
#include "types/dleft_table.h"
#include "types/ftype.h"
#include "store/replace.h"
#include "types/scalable_table.h"
#include "util.h"

const char *fb_ftype_name(unsigned type)
{
	return FB_NAME(fb_type_names, type);
}

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

int fb_ftype_size(unsigned type, double capacity, double p, struct fb_block *geom, __u32 *nblocks)
{
	__u32 first = FB_TYPE_GEOM_BLOCK + fb_type_geom_blocks(type);
	__u64 end;

	memset(geom, 0, fb_type_geom_blocks(type) * FB_BLOCK_BYTES);
	if (type == FB_TYPE_CUCKOO) {
		struct fb_cuckoo_geom *g = (void *)geom;

		if (fb_cuckoo_size(capacity, p, g))
			return -1;
		g->first_block = first;
		end = first + fb_cuckoo_blocks(g);
	} else if (type == FB_TYPE_DLEFT) {
		struct fb_dleft_geom *g = (void *)geom;

		if (fb_dleft_size(capacity, p, g))
			return -1;
		g->first_block = first;
		end = first + fb_dleft_blocks(g);
	} else if (type == FB_TYPE_SCALABLE) {
		struct fb_sbf_geom *g = (void *)geom;

		if (fb_sbf_init(g, capacity, p, first))
			return -1;
		end = fb_sbf_end_block(g);
	} else {
		return -1;
	}
	if (end - FB_HDR_BLOCKS > FB_MAX_BLOCKS)
		return -1;
	*nblocks = (__u32)(end - FB_HDR_BLOCKS);
	return 0;
}

int fb_ftype_check(const struct fb_header *hdr, const struct fb_block *blocks, char *why,
		   size_t len)
{
	const void *g = &blocks[FB_TYPE_GEOM_BLOCK];
	__u64 avail = (__u64)hdr->nblocks + FB_HDR_BLOCKS;

	if (hdr->type >= FB_TYPE_MAX) {
		snprintf(why, len, "unknown filter type %u", hdr->type);
		return -1;
	}
	if (hdr->nblocks < fb_type_geom_blocks(hdr->type)) {
		snprintf(why, len, "%s geometry beyond the array", fb_ftype_name(hdr->type));
		return -1;
	}
	if (hdr->type == FB_TYPE_CUCKOO) {
		const struct fb_cuckoo_geom *c = g;

		if (c->first_block < FB_TYPE_GEOM_BLOCK + 1) {
			snprintf(why, len, "cuckoo table overlaps the header");
			return -1;
		}
		return fb_cuckoo_check(c, avail, why, len);
	}
	if (hdr->type == FB_TYPE_DLEFT) {
		const struct fb_dleft_geom *d = g;

		if (d->first_block < FB_TYPE_GEOM_BLOCK + 1) {
			snprintf(why, len, "d-left table overlaps the header");
			return -1;
		}
		return fb_dleft_check(d, avail, why, len);
	}
	if (hdr->type == FB_TYPE_SCALABLE) {
		const struct fb_sbf_geom *s = g;

		if (s->nstages && s->stage[0].first_block < FB_TYPE_GEOM_BLOCK + 5) {
			snprintf(why, len, "scalable stage 0 overlaps the header");
			return -1;
		}
		return fb_sbf_check(s, avail, why, len);
	}
	return 0;
}

bool fb_ftype_seq_odd(const struct fb_store *f)
{
	return f->hdr->type == FB_TYPE_CUCKOO &&
	       (__atomic_load_n(&cuckoo_of(f)->seq, __ATOMIC_ACQUIRE) & 1);
}

void fb_ftype_seq_end(struct fb_store *f)
{
	struct fb_cuckoo_geom *g = cuckoo_of(f);

	__atomic_store_n(&g->seq, g->seq + 1, __ATOMIC_RELEASE);
}

static __u64 hash_of(const struct fb_store *f, const struct fb_key *key)
{
	return fb_hash_key(key, f->hdr->hash, f->hdr->key);
}

bool fb_ftype_test(const struct fb_store *f, const struct fb_key *key)
{
	__u64 h = hash_of(f, key);

	switch (f->hdr->type) {
	case FB_TYPE_CUCKOO:
		return fb_cuckoo_lookup(f->blocks, cuckoo_of(f), h);
	case FB_TYPE_DLEFT:
		return fb_dleft_lookup(f->blocks, dleft_of(f), h) != 0;
	case FB_TYPE_SCALABLE:
		return fb_sbf_lookup(f->blocks, sbf_of(f), h);
	}
	return false;
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

unsigned fb_ftype_count(const struct fb_store *f, const struct fb_key *key)
{
	__u64 h = hash_of(f, key);

	switch (f->hdr->type) {
	case FB_TYPE_CUCKOO: {
		const struct fb_cuckoo_geom *g = cuckoo_of(f);
		__u32 fp = fb_cuckoo_fp(h, g->fp_bits), i1 = fb_cuckoo_index(h, g->nbuckets);
		__u32 i2 = fb_cuckoo_alt(i1, fp, g->nbuckets);

		return cuckoo_copies(f, i1, fp) + (i2 != i1 ? cuckoo_copies(f, i2, fp) : 0);
	}
	case FB_TYPE_DLEFT:
		return fb_dleft_lookup(f->blocks, dleft_of(f), h);
	case FB_TYPE_SCALABLE:
		return fb_sbf_lookup(f->blocks, sbf_of(f), h);
	}
	return 0;
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
	__u64 *h = hashes(f, keys, n), need;
	int e = -1;

	if (!h)
		return -2;
	switch (f->hdr->type) {
	case FB_TYPE_CUCKOO:
		/* We hold the lock: an odd seq is a writer killed inside a
		 * relocation chain. Its moves only ever copy before they
		 * overwrite, so the table holds every flow (one maybe twice);
		 * ending the chain makes probes exact again. */
		if (fb_ftype_seq_odd(f))
			fb_ftype_seq_end(f);
		e = fb_cuckoo_add(f->blocks, cuckoo_of(f), h, n, err);
		break;
	case FB_TYPE_DLEFT:
		e = fb_dleft_add(f->blocks, dleft_of(f), h, n, err);
		break;
	case FB_TYPE_SCALABLE:
		e = fb_sbf_add(f->blocks, (__u64)f->hdr->nblocks + FB_HDR_BLOCKS, sbf_of(f), h, n,
			       &need, err);
		if (e == -3) {
			/* Room for the new stages first (a copy swapped in:
			 * the data path sees the old array or the new one,
			 * whole), then the same add, which now fits. */
			if (fb_replace_grow(f, (__u32)(need - FB_HDR_BLOCKS))) {
				e = -4;
				break;
			}
			e = fb_sbf_add(f->blocks, (__u64)f->hdr->nblocks + FB_HDR_BLOCKS, sbf_of(f),
				       h, n, &need, err);
		}
		break;
	}
	free(h);
	return e;
}

int fb_ftype_del(struct fb_store *f, const struct fb_key *keys, size_t n, struct fb_batch_err *err)
{
	__u64 *h;
	int e = -3;

	if (f->hdr->type != FB_TYPE_CUCKOO && f->hdr->type != FB_TYPE_DLEFT)
		return -3;
	h = hashes(f, keys, n);
	if (!h)
		return -2;
	if (f->hdr->type == FB_TYPE_CUCKOO)
		e = fb_cuckoo_del(f->blocks, cuckoo_of(f), h, n, err);
	else
		e = fb_dleft_del(f->blocks, dleft_of(f), h, n, err);
	free(h);
	return e;
}

__u64 fb_ftype_items(const struct fb_store *f)
{
	struct fb_dleft_stats st;

	switch (f->hdr->type) {
	case FB_TYPE_CUCKOO:
		return fb_cuckoo_occupied(f->blocks, cuckoo_of(f));
	case FB_TYPE_DLEFT:
		fb_dleft_stats(f->blocks, dleft_of(f), &st);
		return st.used;
	case FB_TYPE_SCALABLE:
		return fb_sbf_count(sbf_of(f));
	}
	return 0;
}

double fb_ftype_load(const struct fb_store *f)
{
	const struct fb_sbf_geom *s = sbf_of(f);
	double cap = 0;
	unsigned i;

	switch (f->hdr->type) {
	case FB_TYPE_CUCKOO:
		return (double)fb_ftype_items(f) /
		       ((double)FB_CUCKOO_SLOTS * cuckoo_of(f)->nbuckets);
	case FB_TYPE_DLEFT:
		return (double)fb_ftype_items(f) /
		       ((double)FB_DLEFT_D * FB_DLEFT_CELLS * (1ULL << dleft_of(f)->bucket_bits));
	case FB_TYPE_SCALABLE:
		for (i = 0; i < s->nstages && i < FB_SBF_MAX_STAGES; i++)
			cap += (double)s->stage[i].capacity;
		return cap ? (double)fb_sbf_count(s) / cap : 0;
	}
	return 0;
}

double fb_ftype_fpr(const struct fb_store *f)
{
	switch (f->hdr->type) {
	case FB_TYPE_CUCKOO:
		return fb_cuckoo_fpr(cuckoo_of(f), (double)fb_ftype_items(f));
	case FB_TYPE_DLEFT:
		return fb_dleft_fpr(dleft_of(f), (double)fb_ftype_items(f));
	case FB_TYPE_SCALABLE:
		return fb_sbf_fpr(sbf_of(f));
	}
	return 0;
}
