// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The capacity bound (capacity.h): a filter's capacity, the flows it
 * holds, and the room left for a writer's new rules.
 */
#include <math.h>
#include "rules/capacity.h"
#include "store/gens.h"
#include "store/jiffies.h"

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
