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
#include <string.h>
#include "guard.h"
#include "output.h"
#include "rules/capacity.h"
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

/* The route k's ban is announced as (fb_guard_announce): a blackhole is
 * one route whichever side the address is. */
static void route_of(const struct guard *g, const struct fb_key *k, struct fb_guard_route *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->addr, k->kind == FB_KIND_DST ? k->daddr : k->saddr, sizeof(r->addr));
	r->family = k->family;
	r->kind = g->announce == ANN_RTBH ? FB_ROUTE_BLACKHOLE
		  : g->by_dst		  ? FB_ROUTE_FLOW_DST
					  : FB_ROUTE_FLOW_SRC;
}

void fb_guard_hold(struct guard *g, const struct fb_key *k, size_t n, __u64 end)
{
	struct fb_guard_route r;
	__u64 now = fb_jiffies_now();
	size_t i;
	int rc;

	g->me.end = end;
	for (i = 0; g->rfd >= 0 && i < n; i++) {
		route_of(g, &k[i], &r);
		/* Not recorded (1): FB_GUARD_HOLDERS other running guards
		 * hold it to this ban's end or later; at its end, they still
		 * do. */
		rc = fb_guard_routes_hold(g->rfd, &r, &g->me, now);
		/* The record full of routes in force (said): the batch's
		 * others would find it so too. */
		if (rc < 0 && errno == E2BIG)
			break;
	}
}

void fb_guard_withdraw(struct guard *g, const struct fb_key *k, bool locked)
{
	struct fb_guard_route r;

	if (g->announce == ANN_NONE || g->dry_run || g->q.broken)
		return;
	if (g->rfd >= 0) {
		route_of(g, k, &r);
		/* Not known (-1, said): withdrawn, as a route left upstream
		 * for good would be the worse. */
		if (fb_guard_routes_release(g->rfd, &r, &g->me, fb_jiffies_now(), locked) == 1)
			return;
	}
	fb_guard_announce(g, k, true);
}
