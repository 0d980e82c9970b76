// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom bgp`'s state writes, paced (bgprun.h). Each commit writes the
 * state file whole, O(paths held): 0.24 s of CPU for 500,000 paths on the
 * test machine, 0.42 s with --ttl (each rule's copies too; 0.5 and 0.9 s
 * with stdio per field). Written each
 * time the input pauses, a peer flapping one route a second took half a
 * core, one flapping ten times a second a whole one: what a peer sends
 * steered our CPU. So a write is not started before BGP_PACE_K times the
 * CPU time the last one took has passed since it ended: writes take at
 * most 1 / (BGP_PACE_K + 1) of a core, whatever the peer sends. Its CPU
 * time is the process's (the kernel's copy and sync included), from the
 * file's first byte to its rename: wall time would count the waits of a
 * busy machine too, and hold withdrawals back for them (a write of 0.5 s
 * of CPU took 3 s of wall time beside other work). Not the deletions it
 * allows: they cost a withdrawal's work once, however the writes are
 * paced, and counted in they made a feedback loop: a peer flapping fresh
 * routes faster than about 15,000 a second had each write's deletions
 * pace the next one longer, so more waited for it (writes 0.5, 0.9, 2.2,
 * 6.8, 7.6 s apart), their rules in the filter all the while. A small
 * table's write takes a few milliseconds, and waits no longer than it
 * did; a large one's withdrawals wait longer (1.7 s at 500,000 paths),
 * and the filter's lock is let go in between (cmd_bgp.c).
 *
 * The deletions waiting for the write are here too: found by their key
 * when their route is announced again (bgp_pend_cancel), and the room in
 * the filter they free for other peers (bgp_bound).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bgprun.h"
#include "flowbloom/hash.h"
#include "rules/flow.h"
#include "store/jiffies.h"

#define BGP_PACE_K 6

double bgp_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds until a state write may start: 0 now. */
double bgp_pace_left(const struct bgp_run *rn)
{
	double left = rn->pace_until - bgp_mono();

	return left > 0 ? left : 0;
}

/* The process's CPU time in seconds. */
double bgp_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A state write started at CPU time cpu0 has ended: the file renamed, its
 * deletions not yet applied. */
void bgp_paced(struct bgp_run *rn, double cpu0)
{
	double now = bgp_mono(), took = bgp_cpu() - cpu0;

	rn->committed = now;
	rn->pace_until = now + BGP_PACE_K * (took > 0 ? took : 0);
}

/* The poll timeout of an idle loop that would wait `wait` seconds (at most
 * one: a replaced filter is found within a second): sooner if a write
 * waits for its pace. */
int bgp_pace_poll_ms(const struct bgp_run *rn, double wait)
{
	double left;

	if (rn->dirty || rn->npend) {
		left = bgp_pace_left(rn);
		if (left < wait)
			wait = left;
	}
	return wait >= 1 ? 1000 : wait > 0 ? (int)(wait * 1000) + 1 : 0;
}

/*
 * A route withdrawn and announced again while its deletion waits for the
 * next write: each announcement added its rule again, a count more per
 * flap, so a peer flapping a route 15 times between two writes saturated
 * its 4-bit counters, and the final withdrawal left the rule in the
 * filter for good (with --ttl, until its generation ended). Pacing the
 * writes makes that window seconds long. So an announcement whose rule
 * waits for its deletion takes that deletion back instead: the copy in the
 * filter is the route's again, and the file says so at the next write. A
 * kill before it leaves the file as it was, naming the rule if it did
 * before (it is in the filter), or STATE.added naming the copy if it did
 * not (deleted at start). With --ttl only while the copies last past the
 * next refresh (a withdrawn rule missed it): else the announcement writes
 * a new copy, and the write trims them to one (bgp_trim_pending).
 *
 * The deletions waiting are found by their key in a table of their
 * indexes (open addressing, keyed hash: a peer chooses the keys), built
 * as they are queued and emptied when they are applied.
 */
static size_t pend_slot(const struct bgp_run *rn, const struct fb_key *k)
{
	return fb_siphash(k, sizeof(*k), rn->b.hkey, 1, 3) & (rn->pix_cap - 1);
}

static int pend_index(struct bgp_run *rn)
{
	size_t i, s, cap;

	if (rn->pix_cap < 2 * rn->npend + 2) {
		size_t *t;

		for (cap = rn->pix_cap ? rn->pix_cap : 64; cap < 2 * rn->npend + 2; cap *= 2)
			;
		if (!(t = calloc(cap, sizeof(*t))))
			return -1;
		free(rn->pix);
		rn->pix = t;
		rn->pix_cap = cap;
		rn->pix_n = 0;
	}
	for (i = rn->pix_n; i < rn->npend; i++) {
		for (s = pend_slot(rn, &rn->pend[i].key); rn->pix[s];
		     s = (s + 1) & (rn->pix_cap - 1))
			;
		rn->pix[s] = i + 1;
	}
	rn->pix_n = rn->npend;
	return 0;
}

void bgp_pend_count(struct bgp_run *rn, unsigned talker, int d)
{
	if (talker >= FB_BGP_PEERS + 2)
		talker = FB_BGP_MORE_PEERS;
	rn->pend_live += (size_t)d;
	rn->pend_by[talker] += (size_t)d;
}

/* The counts kept as deletions are queued and taken back, against a
 * recount: a drift would free room for other peers that is not free (the
 * filter past its capacity) or hold room that is. Said (once the
 * deletions are applied they are counted afresh: bgp_pend_reset). */
void bgp_pend_verify(const struct bgp_run *rn)
{
	size_t i, live = 0, gone = 0, by[FB_BGP_PEERS + 2] = { 0 };
	unsigned t;

	for (i = 0; i < rn->npend; i++) {
		t = rn->pend[i].talker < FB_BGP_PEERS + 2 ? rn->pend[i].talker : FB_BGP_MORE_PEERS;
		gone += rn->pend[i].gone;
		live += !rn->pend[i].gone;
		by[t] += !rn->pend[i].gone;
	}
	if (live != rn->pend_live || gone != rn->ngone || memcmp(by, rn->pend_by, sizeof(by)))
		bgp_say("internal error: %zu deletions waiting (%zu taken back) counted %zu (%zu); "
			"recounted",
			live, gone, rn->pend_live, rn->ngone);
}

/* The deletions waiting were applied or dropped: those left (failed, to
 * try again) counted afresh. */
void bgp_pend_reset(struct bgp_run *rn)
{
	size_t i;

	if (rn->pix_n)
		memset(rn->pix, 0, rn->pix_cap * sizeof(*rn->pix));
	rn->pix_n = 0;
	rn->ngone = 0;
	rn->pend_live = 0;
	memset(rn->pend_by, 0, sizeof(rn->pend_by));
	for (i = 0; i < rn->npend; i++)
		if (!rn->pend[i].gone)
			bgp_pend_count(rn, rn->pend[i].talker, 1);
}

/* Does k's copy with a lifetime outlive the next refresh? */
static bool lasts(struct bgp_run *rn, struct fb_gen_views *gv, const struct fb_key *k)
{
	return bgp_copies_until(&rn->copies, gv, k) >= fb_jiffies_after(rn->ttl / 2 + 1);
}

size_t bgp_pend_cancel(struct bgp_run *rn, struct fb_key *keys, size_t n)
{
	struct fb_gen_views gv;
	bool gens = rn->ttl > 0;
	size_t i, j, s, x;

	if (!rn->npend || !n || pend_index(rn) || (gens && fb_gens_views_open(&rn->f, &gv) < 0))
		return n; /* out of memory: added again, as a new rule */
	for (i = j = 0; i < n; i++) {
		for (s = pend_slot(rn, &keys[i]); (x = rn->pix[s]);
		     s = (s + 1) & (rn->pix_cap - 1)) {
			struct bgp_pending *p = &rn->pend[x - 1];

			if (!p->gone && !p->moved && p->gens == gens &&
			    !memcmp(&p->key, &keys[i], sizeof(keys[i])))
				break;
		}
		if (x && (!gens || lasts(rn, &gv, &keys[i]))) {
			rn->pend[x - 1].gone = true;
			rn->pend[x - 1].again = false;
			rn->ngone++;
			bgp_pend_count(rn, rn->pend[x - 1].talker, -1);
			fb_bgp_added(&rn->b, &keys[i], 1); /* in the filter: held */
		} else {
			keys[j++] = keys[i];
		}
	}
	if (gens)
		fb_gens_views_close(&gv);
	return j;
}

/*
 * The filter's capacity bounds what peers add: a rule past it would raise
 * the false-positive rate for all traffic, so a hostile or broken peer
 * announcing without end would have traffic that no route names dropped.
 * The bound is guard's (rules/capacity.h: the capacity the filter was
 * created with, or m ln 2 / k for an explicit geometry; held: its
 * permanent rules and those of its live generations, the operator's
 * included, our refresh copies of a rule counted once). Only a line's new
 * rules meet it: one another path holds already is not in keys, and
 * refreshes and the rules added again to a new filter array are rules we
 * hold. The first rules of the line fit, the last are refused, a route
 * whole (fb_bgp_refused: its other parts leave the batch, which may leave
 * room for more).
 *
 * A withdrawal's rule stays in the filter until the next state write
 * (crash order: the file stops naming it first). Counted against every
 * peer, a peer announcing fresh routes and withdrawing them as fast as it
 * could, never holding more than 20, filled a filter of 100,000 with
 * deletions waiting, and every other peer's blackholes were refused while
 * it did (RTBH off for all). So the room a deletion waiting holds is its
 * own peer's until it is applied (that peer's new routes wait for it, a
 * flapping peer meets its own flaps), and free for the others: their
 * routes are held to the rules the filter keeps once the write is done.
 * The filter may then hold, until that write, the rules other peers
 * withdrew since the last beside the new ones: past its capacity by at
 * most those, for the half second (a small table) to few seconds (a large
 * one) a deletion waits.
 */
size_t bgp_bound(struct bgp_run *rn, struct fb_store *f, struct fb_key *keys, size_t *n)
{
	char text[FB_FLOW_STR], why[900];
	size_t i, j, gone, n0 = *n, active, freed;
	unsigned t = rn->b.talker < FB_BGP_PEERS + 2 ? rn->b.talker : FB_BGP_MORE_PEERS;
	__u64 room;

	/* Ours in the filter: held before this line, and withdrawn ones
	 * whose deletions wait (their copies count once). */
	active = (rn->b.nrules > *n ? rn->b.nrules - *n : 0) + rn->npend - rn->ngone;
	if (!*n || fb_capacity_room(&rn->lim, f, active, false, &room))
		return 0; /* -1 reported; the addition meets the same error */
	freed = rn->pend_live - rn->pend_by[t];
	if (!rn->lim.by_bans && freed) {
		rn->lim.held -= freed < rn->lim.held ? freed : rn->lim.held;
		room = rn->lim.held < rn->lim.n ? rn->lim.n - rn->lim.held : 0;
	}
	while (*n > room) {
		fb_flow_format(&keys[*n - 1], text, sizeof(text));
		snprintf(why, sizeof(why),
			 "'%s' would be flow %llu of filter '%s', past its capacity of %llu "
			 "flows%s",
			 text, (unsigned long long)(rn->lim.held + *n), f->name,
			 (unsigned long long)rn->lim.n, rn->lim.derived ? " (m ln 2 / k)" : "");
		gone = fb_bgp_refused(&rn->b, &keys[*n - 1], why, NULL);
		--*n;
		for (i = j = 0; gone && i < *n; i++)
			if (fb_bgp_refs(&rn->b, &keys[i]))
				keys[j++] = keys[i];
		if (gone)
			*n = j;
	}
	return n0 - *n;
}
