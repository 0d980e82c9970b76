// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A new filter's settings from create's parameters (create.h): which
 * combinations go together, and the one sizing rule `create` and `apply`
 * (and `apply --check`) use.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "store/exact.h"
#include "types/counting.h"
#include "types/create.h"
#include "types/ftype.h"
#include "types/sizing.h"
#include "util.h"

static int say(int rc, char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int say(int rc, char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return rc;
}

#define MAX_MIB (FB_MAX_BLOCKS / (1024 * 1024 / FB_BLOCK_BYTES))

/* Another filter type: sized from capacity and rate only, taking what its
 * flags say of a Bloom layout and counters. */
static int make_typed(const struct fb_create_req *r, int type, struct fb_create_opts *o, char *why,
		      size_t len)
{
	const struct fb_ftype_ops *ops = fb_ftype(type);
	const char *by = r->grow ? "grow" : "type";

	if (r->have_bits || r->have_hashes)
		return say(FB_CREATE_USAGE, why, len,
			   "--%s takes --capacity and --fp-rate, not --bits/--hashes", by);
	if ((r->counter_bits && !(ops->flags & FB_FTYPE_COUNTING)) ||
	    (r->layout && !(ops->flags & FB_FTYPE_LAYOUT)))
		return say(FB_CREATE_USAGE, why, len, "--%s and --%s do not go together",
			   r->counter_bits ? "counting" : "layout", by);
	if (r->compact)
		return say(FB_CREATE_USAGE, why, len,
			   "--compact is for Bloom filters (a %s filter's geometry is its size)",
			   fb_ftype_name(type));
	if (r->layout && r->layout != FB_LAYOUT_BLOCKED && !(ops->flags & FB_FTYPE_LAYOUTS))
		return say(FB_CREATE_USAGE, why, len, "--grow stages use the blocked layout");
	if (!r->have_capacity || !r->have_fp_rate)
		return say(FB_CREATE_USAGE, why, len, "--%s needs --capacity N --fp-rate P", by);
	if (!r->capacity)
		return say(FB_CREATE_USAGE, why, len, "--capacity must be at least 1");
	o->type = type;
	o->layout = 0;
	o->k = 0;
	o->capacity = r->capacity;
	o->fp_rate = r->fp_rate;
	if (fb_ftype_size(type, r->capacity, r->fp_rate, o->geom, &o->nblocks))
		return say(FB_CREATE_TOO_BIG, why, len,
			   "a %s filter for %llu flows at rate %g is not possible (at most %u "
			   "MiB; rates down to about 1e-9)",
			   fb_ftype_name(type), r->capacity, r->fp_rate, MAX_MIB);
	return 0;
}

/* A Bloom filter: capacity and rate through the layout's formula, or bits
 * and hashes as given. */
static int make_bloom(const struct fb_create_req *r, struct fb_create_opts *o, char *why,
		      size_t len)
{
	bool by_rate = r->have_capacity || r->have_fp_rate;
	bool by_bits = r->have_bits || r->have_hashes;
	const unsigned long long max_bits = (unsigned long long)FB_MAX_BLOCKS * FB_BLOCK_BITS;
	int err;

	if (by_rate && by_bits)
		return say(FB_CREATE_USAGE, why, len,
			   "give --capacity/--fp-rate or --bits/--hashes, not both");
	if (by_rate) {
		if (!r->have_capacity || !r->have_fp_rate)
			return say(FB_CREATE_USAGE, why, len,
				   "--capacity and --fp-rate go together");
		if (!r->capacity)
			return say(FB_CREATE_USAGE, why, len, "--capacity must be at least 1");
		err = o->layout == FB_LAYOUT_CLASSIC
			      ? fb_size_classic(r->capacity, r->fp_rate, &o->nblocks, &o->k)
			      : fb_size_blocked(r->capacity, r->fp_rate, &o->nblocks, &o->k);
		if (err)
			return say(FB_CREATE_TOO_BIG, why, len,
				   "capacity %llu at rate %g needs more than %u MiB", r->capacity,
				   r->fp_rate, MAX_MIB);
		o->capacity = r->capacity;
		o->fp_rate = r->fp_rate;
		return 0;
	}
	if (by_bits) {
		if (!r->have_bits || !r->have_hashes)
			return say(FB_CREATE_USAGE, why, len, "--bits and --hashes go together");
		if (!r->bits || r->bits > max_bits)
			return say(FB_CREATE_USAGE, why, len, "--bits must be 1..%llu", max_bits);
		if (!r->hashes || r->hashes > FB_MAX_K)
			return say(FB_CREATE_USAGE, why, len, "--hashes must be 1..%d", FB_MAX_K);
		o->nblocks = (r->bits + FB_BLOCK_BITS - 1) / FB_BLOCK_BITS;
		o->k = r->hashes;
		return 0;
	}
	return say(FB_CREATE_USAGE, why, len,
		   "give --capacity N --fp-rate P, or --bits M --hashes K");
}

int fb_create_opts_make(const struct fb_create_req *r, struct fb_create_opts *o, char *why,
			size_t len)
{
	int type = r->type, err;

	memset(o, 0, sizeof(*o));
	o->layout = r->layout ? r->layout : FB_LAYOUT_BLOCKED;
	o->action = r->action ? r->action : FB_ACTION_DROP;
	o->hash = r->hash;
	o->counter_bits = r->counter_bits;
	o->confirm = r->confirm;
	o->compact = r->compact;
	if (r->have_fp_rate && !fb_fp_rate_ok(r->fp_rate))
		return say(FB_CREATE_USAGE, why, len,
			   "--fp-rate must be a number " FB_FP_RATE_RANGE);
	if (r->counter_bits && r->counter_bits != 4 && r->counter_bits != 8)
		return say(FB_CREATE_USAGE, why, len, "--counter-bits must be 4 or 8");
	if (r->grow) {
		if (type >= 0 && (fb_ftype(type)->flags & FB_FTYPE_TABLE))
			return say(FB_CREATE_USAGE, why, len,
				   "--grow makes a scalable Bloom filter: not with --type %s",
				   fb_ftype_name(type));
		type = fb_ftype_by_name("scalable");
	} else if (type < 0) {
		type = fb_ftype_by_name("bloom");
	}
	if (!fb_ftype(type))
		return say(FB_CREATE_USAGE, why, len, "no filter type %d", type);
	err = fb_ftype(type)->flags & FB_FTYPE_TABLE ? make_typed(r, type, o, why, len)
						     : make_bloom(r, o, why, len);
	if (err)
		return err;
	if (o->confirm && r->name && !strcmp(r->name, FB_IPROUTE_FILTER))
		/* An `ip link`-loaded program cannot be handed the exact sets:
		 * it would confirm nothing and let every listed flow through. */
		return say(FB_CREATE_REFUSED, why, len,
			   "--confirm exact is not available for '%s', the filter `ip link` "
			   "uses (attach another filter with flowbloom attach)",
			   FB_IPROUTE_FILTER);
	if (o->confirm && o->capacity > FB_EXACT_MAX_RULES)
		/* The exact sets could not hold the capacity: the kernel's hash
		 * map stops at 2^28 - 1 buckets. */
		return say(FB_CREATE_TOO_BIG, why, len,
			   "--confirm exact holds at most %u rules (its hash table alone then "
			   "takes 2 GiB of kernel memory): --capacity %llu is too large",
			   FB_EXACT_MAX_RULES, (unsigned long long)o->capacity);
	if (!o->hash)
		o->hash = fb_hash_default(o->action);
	/* A filter takes whole chunks of 256 KiB (include/flowbloom/
	 * geometry.h): a Bloom filter gets all of their bits, so its
	 * false-positive rate is the size's or lower; a compact one its
	 * size in whole pages. Sized by rate: the cheapest probe that still
	 * meets it in the bits the filter gets (fb_bloom_fit()). */
	if (!o->type) {
		o->bits_asked = (__u64)o->nblocks * FB_BLOCK_BITS;
		fb_bloom_fit(o->layout, o->compact, o->capacity, o->fp_rate, &o->nblocks, &o->k);
	}
	return 0;
}

unsigned long long fb_create_bytes(const struct fb_create_opts *o)
{
	unsigned long long bytes = (unsigned long long)fb_chunks_for(o->nblocks) * FB_CHUNK_BYTES;

	if (o->counter_bits)
		bytes += fb_counting_map_bytes((__u64)o->nblocks * FB_BLOCK_BITS, o->counter_bits);
	return bytes;
}
