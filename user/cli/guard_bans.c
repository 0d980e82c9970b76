// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The bans in force in BAN, whichever guard placed them (guard.h): each
 * guard records its bans with their ends in the guard_bans pin beside BAN
 * (monitor/guard.h), under BAN's lock, and counts that record against
 * --max-bans and in flowbloom_guard_active_bans. Two guards banning into
 * one BAN at once share the count (each wrote its own over the other's);
 * a guard started while an earlier one's bans are in force counts each of
 * them until its own end (not all of them until the last ends); a dry run
 * reads the record as the real run would (it counted none of it).
 *
 * An older guard recorded only how many bans it left and when the last of
 * them ends (the counters' active, active_until): those count, all of
 * them, until then (legacy).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "guard.h"
#include "store/gens.h"
#include "store/jiffies.h"

int fb_guard_bans_start(struct guard *g, const struct fb_store *bf, int sfd)
{
	__u64 entries = fb_capacity_of(bf->hdr, NULL);
	int fd;

	g->bfd = fb_guard_bans_open(bf, false, 0);
	if (g->bfd >= 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	/* No guard of this build banned into BAN yet: an older one's
	 * counters say what it left. A dry run reads them too. */
	fd = sfd >= 0 ? sfd : fb_guard_stats_open(bf, false);
	fb_guard_stats_left(fd, fb_jiffies_now(), &g->legacy, &g->legacy_until);
	if (fd >= 0 && fd != sfd)
		close(fd);
	if (g->dry_run)
		return 0;
	entries = entries < 1024 ? 1024 : entries > FB_GUARD_BANS_MAX ? FB_GUARD_BANS_MAX : entries;
	g->bfd = fb_guard_bans_open(bf, true, (__u32)entries);
	return g->bfd < 0 ? -1 : 0;
}

int fb_guard_bans_others(struct guard *g, const struct fb_gen_views *gv, bool sweep)
{
	__u64 now = fb_jiffies_now(), live = 0, last = 0, mine = 0;
	size_t i;

	if (g->legacy && now >= g->legacy_until)
		g->legacy = 0;
	if (g->bfd >= 0 && fb_guard_bans_count(g->bfd, gv, now, sweep, &live, &last))
		return -1;
	/* This guard's own among them: all of them (recorded with their
	 * end or a later one); a dry run's, those it would take over. */
	if (!g->dry_run)
		mine = g->active;
	for (i = 0; g->dry_run && i < g->nbans && live; i++)
		if (!g->bans[i].spared && g->bans[i].expires > now &&
		    fb_guard_bans_has(g->bfd, gv, &g->bans[i].key, now))
			mine++;
	g->in_force = live;
	g->last_end = last;
	g->swept = sweep;
	g->lim.others = live - (mine < live ? mine : live) + g->legacy;
	return 0;
}

void fb_guard_bans_flush(struct guard *g, const struct fb_store *bf, int sfd)
{
	struct fb_guard_stats s;
	struct fb_gen_views gv;
	bool known = g->swept;

	if (sfd < 0 || fb_guard_stats_read(sfd, &s))
		return;
	fb_guard_stats_add(&s, &g->delta);
	/* A walk of the record takes a syscall or two a ban (0.1 s for
	 * 100,000): once an interval. */
	if (!known) {
		bool views = fb_gens_views_open(bf, &gv) >= 0;

		known = !fb_guard_bans_others(g, views ? &gv : NULL, true);
		if (views)
			fb_gens_views_close(&gv);
	}
	if (known) {
		/* Bans outlive guard: metrics counts each until its end. */
		s.active = g->in_force + g->legacy;
		s.active_until = g->last_end;
		if (g->legacy && g->legacy_until > s.active_until)
			s.active_until = g->legacy_until;
	}
	g->swept = false;
	if (!fb_guard_stats_write(sfd, &s))
		memset(&g->delta, 0, sizeof(g->delta));
}
