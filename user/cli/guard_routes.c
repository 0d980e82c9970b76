// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The routes `flowbloom guard --announce` holds (guard.h): each guard
 * records the routes of its bans, with their ends, beside BAN (the
 * guard_routes pin, monitor/guard.h), so that the end of one guard's ban,
 * or of the guard, withdraws a route only when no other running guard's
 * ban of it is in force: guards banning into one BAN announce to the same
 * peers, and a withdrawal by one ends the route for all of them. The last
 * guard whose ban of it ends withdraws it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flowbloom/prefix.h"
#include "guard.h"
#include "output.h"
#include "rules/capacity.h"
#include "store/gens.h"
#include "store/jiffies.h"

int fb_guard_routes_start(struct guard *g, const struct fb_store *bf)
{
	/* Room for as many routes as the record of bans in force. */
	__u64 entries = fb_capacity_of(bf->hdr, NULL);

	if (g->announce == ANN_NONE || g->dry_run)
		return 0;
	entries = entries < 1024 ? 1024 : entries > FB_GUARD_BANS_MAX ? FB_GUARD_BANS_MAX : entries;
	if (fb_guard_holder_self(&g->me))
		return -1;
	g->rfd = fb_guard_routes_open(bf, true, (__u32)entries);
	return g->rfd < 0 ? -1 : 0;
}

void fb_guard_route_of(const struct guard *g, const struct fb_key *k, struct fb_guard_route *r)
{
	/* A blackhole is one route whichever side the address is. */
	memset(r, 0, sizeof(*r));
	memcpy(r->addr, k->kind == FB_KIND_DST ? k->daddr : k->saddr, sizeof(r->addr));
	r->family = k->family;
	r->kind = g->announce == ANN_RTBH ? FB_ROUTE_BLACKHOLE
		  : g->by_dst		  ? FB_ROUTE_FLOW_DST
					  : FB_ROUTE_FLOW_SRC;
}

/* Does this guard hold r for a reason in force at now: a ban of its own,
 * or a killed guard's it took over? None once it stops. */
static bool needed(const struct guard *g, const struct fb_guard_route *r, __u64 now)
{
	struct fb_guard_route o;
	size_t i;

	for (i = 0; !g->stopping && i < g->nbans; i++) {
		if (g->bans[i].spared || g->bans[i].expires <= now)
			continue;
		fb_guard_route_of(g, &g->bans[i].key, &o);
		if (!memcmp(&o, r, sizeof(o)))
			return true;
	}
	for (i = 0; !g->stopping && i < g->ntaken; i++)
		if (g->taken[i].end > now && !memcmp(&g->taken[i].r, r, sizeof(*r)))
			return true;
	return false;
}

/* r's end: withdrawn unless held as needed() or by another running guard. */
static void release(struct guard *g, const struct fb_guard_route *r, bool locked)
{
	__u64 now = fb_jiffies_now();

	if (needed(g, r, now))
		return;
	/* Not known (-1, said): withdrawn, as a route left upstream for
	 * good would be the worse. */
	if (g->rfd >= 0 && fb_guard_routes_release(g->rfd, r, &g->me, now, locked) == 1)
		return;
	fb_guard_announce_route(g, r, true);
}

struct adopt {
	struct guard *g;
	const struct fb_gen_views *gv; /* NULL: not known, every recorded ban counts */
	__u64 now;
	size_t withdrawn, kept;
};

/* A killed guard's route: its ban still in force in BAN (recorded, not
 * taken away by a `load --replace --ttl`), to its guard's end: taken
 * over (1); else withdrawn now (0). */
static int adopt_one(void *ctx, const struct fb_guard_route *r, __u64 end)
{
	struct adopt *a = ctx;
	struct guard *g = a->g;
	struct taken *t;
	struct fb_key k;
	__u64 w[2];
	bool in_force = false;
	int kind;

	memcpy(w, r->addr, sizeof(w));
	for (kind = FB_KIND_SRC; end > a->now && !in_force && kind <= FB_KIND_DST; kind++) {
		if ((kind == FB_KIND_SRC && r->kind == FB_ROUTE_FLOW_DST) ||
		    (kind == FB_KIND_DST && r->kind == FB_ROUTE_FLOW_SRC))
			continue;
		fb_prefix_key(&k, kind, w[0], w[1], 128, r->family);
		in_force = fb_guard_bans_has(g->bfd, a->gv, &k, a->now);
	}
	if (in_force && g->ntaken == g->ctaken) {
		size_t cap = g->ctaken ? 2 * g->ctaken : 16;

		t = realloc(g->taken, cap * sizeof(*t));
		if (!t) {
			fb_err("out of memory");
			return -1;
		}
		g->taken = t;
		g->ctaken = cap;
	}
	if (in_force) {
		g->taken[g->ntaken].r = *r;
		g->taken[g->ntaken++].end = end;
		a->kept++;
		return 1;
	}
	fb_guard_announce_route(g, r, true);
	a->withdrawn++;
	return 0;
}

int fb_guard_routes_adopt(struct guard *g, const struct fb_store *bf)
{
	struct adopt a = { .g = g, .now = fb_jiffies_now() };
	struct fb_gen_views gv;
	bool views;
	int n;

	if (g->rfd < 0 || g->q.broken)
		return 0;
	views = fb_gens_views_open(bf, &gv) >= 0;
	a.gv = views ? &gv : NULL;
	n = fb_guard_routes_orphans(g->rfd, &g->me, adopt_one, &a);
	if (views)
		fb_gens_views_close(&gv);
	if (a.withdrawn || a.kept)
		fprintf(stderr,
			"flowbloom: note: guard: %zu route%s announced by guards no longer "
			"running: %zu withdrawn (%s ban%s ended), %zu held until %s ban%s end\n",
			a.withdrawn + a.kept, a.withdrawn + a.kept == 1 ? "" : "s", a.withdrawn,
			a.withdrawn == 1 ? "its" : "their", a.withdrawn == 1 ? "" : "s", a.kept,
			a.kept == 1 ? "its" : "their", a.kept == 1 ? "" : "s");
	return n < 0 ? -1 : 0;
}

void fb_guard_hold(struct guard *g, const struct fb_store *bf, const struct fb_key *k, size_t n,
		   __u64 end)
{
	struct fb_guard_route r;
	__u64 now = fb_jiffies_now();
	bool adopted = false;
	size_t i;
	int rc;

	g->me.end = end;
	for (i = 0; g->rfd >= 0 && i < n; i++) {
		fb_guard_route_of(g, &k[i], &r);
		/* Not recorded (1): FB_GUARD_HOLDERS other running guards
		 * hold it to this ban's end or later; at its end, they still
		 * do. */
		rc = fb_guard_routes_hold(g->rfd, &r, &g->me, now);
		/* The record full of routes in force: killed guards' among
		 * them are withdrawn or taken over, once, and the hold
		 * tried again. */
		if (rc < 0 && errno == E2BIG && !adopted) {
			adopted = true;
			if (!fb_guard_routes_adopt(g, bf))
				rc = fb_guard_routes_hold(g->rfd, &r, &g->me, now);
		}
		/* Still full: the batch's others would find it so too. */
		if (rc < 0 && errno == E2BIG) {
			fb_err("cannot record an announced route: the record beside '%s' is "
			       "full of routes in force",
			       g->into);
			break;
		}
	}
}

void fb_guard_withdraw(struct guard *g, const struct fb_key *k, bool locked)
{
	struct fb_guard_route r;

	if (g->announce == ANN_NONE || g->dry_run || g->q.broken)
		return;
	fb_guard_route_of(g, k, &r);
	release(g, &r, locked);
}

bool fb_guard_taken_due(const struct guard *g, __u64 now)
{
	size_t i;

	for (i = 0; i < g->ntaken; i++)
		if (g->stopping || g->taken[i].end <= now)
			return true;
	return false;
}

void fb_guard_taken_expire(struct guard *g, __u64 now, bool locked)
{
	struct fb_guard_route o;
	size_t i, j, b;
	bool own;

	for (i = j = 0; i < g->ntaken; i++) {
		struct taken *t = &g->taken[i];

		if (!g->stopping && t->end > now) {
			g->taken[j++] = *t;
			continue;
		}
		/* A ban of this guard's own with its route, ending now too
		 * (or stopping), withdraws it (the one withdrawal). */
		for (b = 0, own = false; !own && b < g->nbans; b++) {
			fb_guard_route_of(g, &g->bans[b].key, &o);
			own = !g->bans[b].spared && (g->stopping || g->bans[b].expires <= now) &&
			      !memcmp(&o, &t->r, sizeof(o));
		}
		if (!own && !g->q.broken)
			release(g, &t->r, locked);
	}
	g->ntaken = j;
}
