/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How many more rules a filter takes before its capacity: the bound guard
 * holds its bans to and bgp a peer's routes (capacity.c).
 */
#ifndef FLOWBLOOM_USER_CAPACITY_H
#define FLOWBLOOM_USER_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "store/gens.h"
#include "store/store.h"

/*
 * A filter is built for a number of flows (its capacity); past it the
 * false-positive rate climbs and traffic never seen is dropped. What adds
 * rules on someone else's say holds them to it: guard's bans (a flood from
 * many spoofed sources, each really above the threshold, would otherwise
 * add a ban per source per interval, the attacker choosing how full the
 * filter gets; with --max-bans N, also at most N bans in force; an
 * extension is not a new ban) and a BGP peer's routes (bgpfilter.c).
 *
 * The capacity: the one f was created with (--capacity); for an explicit
 * geometry (--bits M --hashes K), M ln 2 / K, the load for which K is the
 * optimal number of hashes (k = (m/n) ln 2; Broder and Mitzenmacher,
 * "Network applications of Bloom filters: a survey", 2004): half the bits
 * set, past which each flow raises the rate faster than at the optimum.
 * *derived says which (may be NULL). At least 1.
 */
__u64 fb_capacity_of(const struct fb_header *h, bool *derived);
/* The flows f holds at jiffies now, as `info` counts them: its permanent
 * rules plus those of every generation still live then (an address added
 * to two generations counts twice). 0, or -1 reported. */
int fb_capacity_held(const struct fb_store *f, __u64 now, __u64 *flows);

/* One guard's limit, and what it wrote: an extension writes its address
 * again, to a later generation (store/gens.h), and the filter holds it
 * twice until the older one ends; it is one ban all the same. */
struct fb_capacity_limit {
	__u64 max_bans; /* --max-bans (0: none) */
	__u64 others;	/* bans in force an earlier guard left: against max_bans */
	struct {
		__u64 expires, n;
	} wrote[FB_GEN_SLOTS]; /* rules written, by generation */
	/* The limit fb_capacity_room() last applied: n, and what is held
	 * against it (bans in force with by_bans, else f's flows); derived:
	 * n is m ln 2 / k. */
	__u64 n, held;
	bool by_bans, derived;
};
/* A batch of n rules written to generation where. */
void fb_capacity_wrote(struct fb_capacity_limit *l, const struct fb_gen *where, size_t n);
/* Room for new bans in f now, the guard having active bans in force (and
 * for a dry_run, written none of them): the lower of f's capacity less the
 * flows it holds, each address once, and max_bans less active and
 * l->others (bans in force it knows of: its own and an earlier guard's).
 * 0, or -1 reported. Call it under f's lock, but for a dry run. `bgp` holds a
 * line's new rules to it too (active: the rules it has in f; bgpfilter.c). */
int fb_capacity_room(struct fb_capacity_limit *l, const struct fb_store *f, __u64 active,
		     bool dry_run, __u64 *room);

/*
 * The most different rules a list read for a filter of header h can hold
 * and still load (replace: as its new content; else added to it): what
 * `load`, `apply`, `add -f` and `del -f` hold their input to as they read
 * it, so that input without end (`yes ADDR | flowbloom load NAME -`, a
 * download streaming forever) is refused naming the line where it passed
 * the bound instead of growing until the OOM killer stops it. A filter
 * re-sized on replace, or one that grows, can take what the largest
 * filter of its type holds at its rate (per probe: the loosest a list can
 * get; load.c then refuses past it anyway); any other holds no more rules
 * than it has bits (one per bit, a Bloom filter matches nearly every
 * packet; a table has fewer slots than bits). why: the bound's reason,
 * for the error line.
 */
__u64 fb_capacity_input(const struct fb_header *h, bool replace, char *why, size_t len);
/* The most flows a filter of type (enum fb_type; layout, for Bloom) holds
 * at rate p per probe: the largest that create or `load --replace` can
 * size. */
__u64 fb_capacity_largest(unsigned type, __u8 layout, double p);

#endif
