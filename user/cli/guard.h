/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `flowbloom guard` (cmd_guard.c): its state, and what it says
 * (guard_events.c): an event per ban, unban, spare or refusal on stderr,
 * the IPFIX queue beside NAME, and the ExaBGP commands on stdout.
 */
#ifndef FLOWBLOOM_CLI_GUARD_H
#define FLOWBLOOM_CLI_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "cmdq.h"
#include "flowbloom/key.h"
#include "monitor/guard.h"
#include "rules/capacity.h"
#include "store/store.h"

enum announce { ANN_NONE, ANN_RTBH, ANN_FLOWSPEC };

struct ban {
	struct fb_key key;
	__u64 expires; /* jiffies: the data path stops matching then (spared:
			* when guard forgets it, a TTL after it was last above) */
	double since;  /* fb_now() of the ban */
	bool spared;   /* in --never: noted once while above, never banned */
};

struct guard {
	const char *name, *into;
	double pps, bps, ttl, interval;
	bool by_dst, dry_run;
	bool by_addr; /* the sketch counts addresses (attach --sketch-by): no flows summed */
	bool json;    /* -j: events as JSON objects (on stderr) */
	enum announce announce;
	__u64 count;		      /* intervals to run (0: until stopped) */
	struct fb_capacity_limit lim; /* the ban limit: --max-bans, BAN's capacity */
	struct fb_never_list never;
	struct ban *bans;
	size_t nbans, cap;
	struct fb_guard_stats delta; /* not yet written to the pin */
	__u64 active;		     /* this guard's bans in force */
	/* BAN's guard_bans pin (monitor/guard.h; -1: none, a dry run on a BAN
	 * no guard of this build banned into), and what it said last: the
	 * bans in force, whichever guard placed them, and the last end. */
	int bfd;
	__u64 in_force, last_end;
	bool swept; /* in_force read under BAN's lock this interval (its new
		     * bans added since): the counters need no second read */
	/* Bans an older guard left (its counters): how many, the last end. */
	__u64 legacy, legacy_until;
	/* --announce: BAN's guard_routes pin (-1: none, a dry run or no
	 * --announce), and this guard as a holder of its routes. */
	int rfd;
	struct fb_guard_holder me;
	/* Routes guards killed meanwhile announced, their bans in force:
	 * this guard holds them and withdraws them at their ends, or when
	 * it stops (fb_guard_routes_adopt). */
	struct taken {
		struct fb_guard_route r;
		__u64 end;
	} * taken;
	size_t ntaken, ctaken;
	bool stopping;	  /* withdrawing all it holds: none is kept for another */
	int evfd;	  /* NAME's event queue, for `ipfix NAME`; -1: none (dry run) */
	struct fb_cmdq q; /* --announce: commands stdout has not taken yet (broken:
			   * stdout gone, end the loop, exit 1) */
};

/* The bans in force in BAN (guard_bans.c). Start: g->bfd opened (created,
 * but for a dry run), and an older guard's bans (legacy) read from the
 * counters (sfd, or opened for a dry run); 0, or -1 reported. Others:
 * g->in_force, g->last_end, and g->lim.others (the bans in force not this
 * guard's, legacy among them) as now, gv BAN's live generations (a ban
 * they no longer hold has ended; NULL: unread, every ban counts); with
 * sweep (under BAN's lock) the ended are forgotten; 0, or -1 reported. Flush: g->delta and the bans
 * in force (read again unless swept) into the counters sfd (under BAN's
 * lock). */
int fb_guard_bans_start(struct guard *g, const struct fb_store *bf, int sfd);
int fb_guard_bans_others(struct guard *g, const struct fb_gen_views *gv, bool sweep);
void fb_guard_bans_flush(struct guard *g, const struct fb_store *bf, int sfd);

/* Announce k's ban (withdraw: its end) to ExaBGP, with --announce; the
 * same for a route r, as it was announced whatever this guard's kind. */
void fb_guard_announce(struct guard *g, const struct fb_key *k, bool withdraw);
void fb_guard_announce_route(struct guard *g, const struct fb_guard_route *r, bool withdraw);
/* The route k's ban is announced as. */
void fb_guard_route_of(const struct guard *g, const struct fb_key *k, struct fb_guard_route *r);
/* The routes announced, beside BAN (guard_routes.c). Start: g->rfd
 * opened or created (--announce, not a dry run); 0, or -1 reported.
 * Adopt (under BAN's lock; at the start, and when the record is full):
 * the routes of guards killed meanwhile withdrawn, or taken over while
 * their bans are in force (g->taken). Hold (under BAN's lock): k[0..n)'s
 * routes held by this guard until end. Withdraw: this guard's ban of k
 * ended (or guard stops): its route withdrawn unless this guard still
 * holds it for another reason or another running guard's ban of it is in
 * force (locked: BAN's lock held, this guard's hold forgotten). Expire:
 * the routes taken over whose ends came (all, g->stopping) withdrawn
 * alike. */
int fb_guard_routes_start(struct guard *g, const struct fb_store *bf);
int fb_guard_routes_adopt(struct guard *g, const struct fb_store *bf);
void fb_guard_hold(struct guard *g, const struct fb_store *bf, const struct fb_key *k, size_t n,
		   __u64 end);
void fb_guard_withdraw(struct guard *g, const struct fb_key *k, bool locked);
bool fb_guard_taken_due(const struct guard *g, __u64 now);
void fb_guard_taken_expire(struct guard *g, __u64 now, bool locked);
/* One event ("ban", "unban", "spare", "limit"): a line on stderr, or a
 * JSON object with -j; a ban or unban also to NAME's IPFIX queue. a: the
 * address's traffic over secs (NULL: none); ends_in, lasted: seconds (<0:
 * not said). */
void fb_guard_event(const struct guard *g, const char *what, const struct fb_key *k,
		    const struct fb_guard_addr *a, double secs, double ends_in, double lasted);

#endif
