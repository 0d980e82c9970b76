// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The capacity bound (capacity.h): a filter's capacity, the flows it
 * holds, and the room left for a writer's new rules.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "rules/capacity.h"
#include "store/gens.h"
#include "store/jiffies.h"
#include "types/ftype.h"
#include "types/sizing.h"

__u64 fb_capacity_of(const struct fb_header *h, bool *derived)
{
	double n;

	if (derived)
		*derived = !h->capacity;
	if (h->capacity)
		return h->capacity;
	n = floor((double)fb_header_mbits(h) * M_LN2 / (h->k ? h->k : 1));
	return n >= 1 ? (__u64)n : 1;
}

int fb_capacity_held(const struct fb_store *f, __u64 now, __u64 *flows)
{
	struct fb_gen gl[FB_GEN_SLOTS];
	int n = f->hdr->gens ? fb_gens_list(f, gl) : 0, i;

	if (n < 0)
		return -1;
	*flows = f->hdr->nflows;
	/* A generation whose expiry passed matches nothing (the data path
	 * skips it) though its slot waits for the next writer. */
	for (i = 0; i < n; i++)
		if (gl[i].expires > now)
			*flows += gl[i].nflows;
	return 0;
}

void fb_capacity_wrote(struct fb_capacity_limit *l, const struct fb_gen *where, size_t n)
{
	/* A slot reused holds another generation: what was written to the
	 * old one ended with it. */
	if (l->wrote[where->g].expires != where->expires) {
		l->wrote[where->g].expires = where->expires;
		l->wrote[where->g].n = 0;
	}
	l->wrote[where->g].n += n;
}

int fb_capacity_room(struct fb_capacity_limit *l, const struct fb_store *f, __u64 active,
		     bool dry_run, __u64 *room)
{
	__u64 now = fb_jiffies_now(), held, mine = 0, cap;
	unsigned s;

	if (fb_capacity_held(f, now, &held))
		return -1;
	cap = fb_capacity_of(f->hdr, &l->derived);
	for (s = 0; s < FB_GEN_SLOTS; s++)
		if (l->wrote[s].expires > now)
			mine += l->wrote[s].n;
	/* Copies beyond one per ban in force are extensions. A dry run
	 * counts what it would have written. */
	if (mine > active)
		held -= mine - active < held ? mine - active : held;
	if (dry_run)
		held += active;
	*room = held < cap ? cap - held : 0;
	l->n = cap;
	l->held = held;
	/* max_bans caps the bans in force, not those of one process. */
	active += l->others;
	l->by_bans = l->max_bans && l->max_bans < active + *room;
	if (l->by_bans) {
		*room = active < l->max_bans ? l->max_bans - active : 0;
		l->n = l->max_bans;
		l->held = active;
	}
	return 0;
}

/* Can a filter of type hold n flows at rate p? */
static bool holds(unsigned type, __u8 layout, double n, double p)
{
	const struct fb_ftype_ops *o = fb_ftype(type);
	struct fb_block geom[5];
	__u32 nblocks;
	__u8 k;

	memset(geom, 0, sizeof(geom));
	if (o && (o->flags & FB_FTYPE_TABLE))
		return !fb_ftype_size(type, n, p, geom, &nblocks);
	return !(layout == FB_LAYOUT_CLASSIC ? fb_size_classic(n, p, &nblocks, &k)
					     : fb_size_blocked(n, p, &nblocks, &k));
}

__u64 fb_capacity_largest(unsigned type, __u8 layout, double p)
{
	/* No filter of 2^32 bits holds 2^33 flows: a bisection of 33 steps. */
	__u64 lo = 0, hi = 1ULL << 33, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (holds(type, layout, (double)mid, p))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

__u64 fb_capacity_input(const struct fb_header *h, bool replace, char *why, size_t len)
{
	const struct fb_ftype_ops *o = fb_ftype(h->type);
	bool table = o && (o->flags & FB_FTYPE_TABLE);
	bool grows = o && (o->flags & FB_FTYPE_GROWS);
	double p = h->fp_ppb / 1e9;
	__u64 n;

	if (p > 0 && (grows || (replace && (table || h->capacity)))) {
		n = fb_capacity_largest(h->type, h->layout, p);
		snprintf(why, len, "the most the largest %s filter holds at the filter's rate %g",
			 fb_ftype_name(h->type), p);
		return n ? n : 1;
	}
	n = fb_header_mbits(h);
	snprintf(why, len, "one per bit of the filter: past that it matches nearly every packet");
	return n;
}
