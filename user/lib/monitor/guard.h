/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `flowbloom guard` (guard.c): from the sketch of one interval to the
 * addresses to ban, and the counters `metrics` shows.
 *
 * The sketch counts flows (5-tuples). An address's traffic is the sum over
 * its flows among the top-talker candidates (the flows that can be heavy:
 * monitor.h), each estimate lowered by the count-min bound eps' N. A
 * count-min estimate is never below the truth and above truth + eps' N with
 * probability at most delta' (Cormode and Muthukrishnan 2005), so
 * sum(max(0, est - eps' N)) is below the address's true count unless one of
 * its m flows' bounds failed: probability at most m delta'. An address is
 * banned only when that lower limit is above the threshold; flows outside
 * the candidate table only add to the truth. Sketch error can thus delay a
 * ban, and never cause one.
 *
 *   <root>/<BAN>/guard          struct fb_guard_stats, pinned by guard (metrics)
 *   <root>/<NAME>/guard_events  queue of struct fb_guard_event: each ban and
 *                               unban, for `ipfix NAME` (the oldest dropped
 *                               when full)
 */
#ifndef FLOWBLOOM_USER_GUARD_H
#define FLOWBLOOM_USER_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/key.h"
#include "monitor/monmaps.h"
#include "store/gens.h"
#include "store/store.h"

#define FB_GUARD_PIN "guard"
#define FB_GUARD_EVENTS_PIN "guard_events"
#define FB_GUARD_EVENTS_MAX 1024

/* One ban or unban, as `ipfix` exports it. */
struct fb_guard_event {
	__u64 start_ns;	   /* CLOCK_REALTIME: when the ban began */
	__u64 end_ns;	   /* when it ends (ban: expected; unban: as it did) */
	struct fb_key key; /* the address rule */
	__u8 event;	   /* 1: ban, 2: unban (IPFIX firewallEvent) */
	__u8 pad[7];
};

_Static_assert(sizeof(struct fb_guard_event) == 64, "one block");

/* Cumulative, for every guard that banned into the filter. */
struct fb_guard_stats {
	__u64 bans;	 /* addresses banned (a new ban) */
	__u64 extended;	 /* bans extended: still above at the end of an interval */
	__u64 unbans;	 /* bans that ended (their lifetime ran out) */
	__u64 active;	 /* bans in force, as the last guard to write saw them */
	__u64 intervals; /* intervals evaluated */
	__u64 refused;	 /* bans the filter refused (no room: reported) */
	__u64 limited;	 /* new bans not made, the ban limit reached: one per
			  * address and interval (fb_guard_room) */
	__u64 reserved;
};

_Static_assert(sizeof(struct fb_guard_stats) == 64, "one block");

/* An address and its traffic in the interval. */
struct fb_guard_addr {
	struct fb_key key;	    /* an address rule: kind SRC or DST, plen 128 */
	__u64 packets, bytes;	    /* sum of the estimates (upper side) */
	__u64 lo_packets, lo_bytes; /* sum of the lower limits */
	unsigned flows;		    /* candidate flows summed */
};

/* The addresses (by source, or destination with by_dst) of every top-talker
 * candidate, estimates taken from s minus base, heaviest lower limit
 * first; *out malloc'd. How many, or -1 reported. */
int fb_guard_addresses(const struct fb_monitor *m, const struct fb_mon_snap *s,
		       const struct fb_mon_snap *base, bool by_dst, struct fb_guard_addr **out);

/* Prefixes never banned (--never FILE): addresses and prefixes, one a
 * line, '#' and ';' comments. */
struct fb_never_list {
	struct fb_key *p; /* kind SRC, saddr masked, plen in the 128-bit space */
	size_t n;
};
int fb_never_read(const char *file, struct fb_never_list *l);
void fb_never_free(struct fb_never_list *l);
/* Does an address key (fb_guard_addr.key) fall in one of them? */
bool fb_never_has(const struct fb_never_list *l, const struct fb_key *addr);

/*
 * The ban limit. A filter is built for a number of flows (its capacity); past
 * it the false-positive rate climbs and traffic never seen is dropped. A
 * flood from many spoofed sources, each really above the threshold, would
 * otherwise add a ban per source per interval, and the attacker would choose
 * how full the filter gets. So guard adds a new ban only while the filter
 * holds fewer flows than its capacity (and, with --max-bans N, while it has
 * fewer than N bans in force); an extension is not a new ban.
 *
 * The capacity: the one f was created with (--capacity); for an explicit
 * geometry (--bits M --hashes K), M ln 2 / K, the load for which K is the
 * optimal number of hashes (k = (m/n) ln 2; Broder and Mitzenmacher,
 * "Network applications of Bloom filters: a survey", 2004): half the bits
 * set, past which each flow raises the rate faster than at the optimum.
 * *derived says which (may be NULL). At least 1.
 */
__u64 fb_guard_capacity(const struct fb_header *h, bool *derived);
/* The flows f holds at jiffies now, as `info` counts them: its permanent
 * rules plus those of every generation still live then (an address added
 * to two generations counts twice). 0, or -1 reported. */
int fb_guard_held(const struct fb_store *f, __u64 now, __u64 *flows);

/* One guard's limit, and what it wrote: an extension writes its address
 * again, to a later generation (store/gens.h), and the filter holds it
 * twice until the older one ends; it is one ban all the same. */
struct fb_guard_limit {
	__u64 max_bans; /* --max-bans (0: none) */
	struct {
		__u64 expires, n;
	} wrote[FB_GEN_SLOTS]; /* rules written, by generation */
	/* The limit fb_guard_room() last applied: n, and what is held
	 * against it (bans in force with by_bans, else f's flows); derived:
	 * n is m ln 2 / k. */
	__u64 n, held;
	bool by_bans, derived;
};
/* A batch of n rules written to generation where. */
void fb_guard_wrote(struct fb_guard_limit *l, const struct fb_gen *where, size_t n);
/* Room for new bans in f now, the guard having active bans in force (and
 * for a dry_run, written none of them): the lower of f's capacity less the
 * flows it holds, each address once, and max_bans less active. 0, or -1
 * reported. Call it under f's lock, but for a dry run. `bgp` holds a
 * line's new rules to it too (active: the rules it has in f; bgpfilter.c). */
int fb_guard_room(struct fb_guard_limit *l, const struct fb_store *f, __u64 active, bool dry_run,
		  __u64 *room);

/* The stats map of filter f: opened, or created and pinned (create). -1
 * reported; with create false and none there, -1 with errno ENOENT and
 * nothing reported. */
int fb_guard_stats_open(const struct fb_store *f, bool create);
int fb_guard_stats_read(int fd, struct fb_guard_stats *s);
int fb_guard_stats_write(int fd, const struct fb_guard_stats *s);
/* The event queue beside filter f: opened, or created and pinned (create);
 * -1 as fb_guard_stats_open(). Push: the oldest event makes room. Pop: 1
 * an event, 0 none. */
int fb_guard_events_open(const struct fb_store *f, bool create);
int fb_guard_events_push(int fd, const struct fb_guard_event *e);
int fb_guard_events_pop(int fd, struct fb_guard_event *e);

#endif
