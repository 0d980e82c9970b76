/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `flowbloom guard` (guard.c): from the sketch of one interval to the
 * addresses to ban, and the counters `metrics` shows.
 *
 * The sketch counts flows (5-tuples), or addresses (attach --sketch-by src
 * or dst: a flood spread over ever new ports is one heavy key, where as
 * flows none of them would rise among the candidates). An address's
 * traffic is the sum over its flows among the top-talker candidates (the
 * flows that can be heavy: monitor.h; with a sketch by address, its one
 * candidate), each estimate lowered by the count-min bound eps' N. A
 * count-min estimate is never below the truth and above truth + eps' N with
 * probability at most delta' (Cormode and Muthukrishnan 2005), so
 * sum(max(0, est - eps' N)) is below the address's true count unless one of
 * its m flows' bounds failed: probability at most m delta'. An address is
 * banned only when that lower limit is above the threshold; flows outside
 * the candidate table only add to the truth. Sketch error can thus delay a
 * ban, and never cause one.
 *
 *   <root>/<BAN>/guard          struct fb_guard_stats, pinned by guard (metrics)
 *   <root>/<BAN>/guard_bans     the bans in force in BAN, whichever guard placed
 *                               them: address rule -> jiffies at which the data
 *                               path stops matching it (written under BAN's
 *                               lock; metrics counts it)
 *   <root>/<BAN>/guard_routes   the routes guards announced for their bans in
 *                               BAN: route -> the guards holding it, each until
 *                               its ban's end (written under BAN's lock)
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
#include "store/store.h"

#define FB_GUARD_PIN "guard"
#define FB_GUARD_EVENTS_PIN "guard_events"
#define FB_GUARD_BANS_PIN "guard_bans"
/* The bans in force one BAN records at most (the room for new bans stops
 * there): a hash map's buckets are made with it, 16 bytes each. */
#define FB_GUARD_BANS_MAX (1u << 20)
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
	__u64 bans;	    /* addresses banned (a new ban) */
	__u64 extended;	    /* bans extended: still above at the end of an interval */
	__u64 unbans;	    /* bans that ended (their lifetime ran out) */
	__u64 active;	    /* bans in force, as the last guard to write saw them
			     * (the guard_bans pin's count, when there is one) */
	__u64 intervals;    /* intervals evaluated */
	__u64 refused;	    /* bans the filter refused (no room: reported) */
	__u64 limited;	    /* new bans not made, the ban limit reached: one per
			     * address and interval (fb_capacity_room, rules/capacity.h) */
	__u64 active_until; /* fb_jiffies_now() at which the last of them ends:
			     * none is in force past it, guard running or not
			     * (0: not said, an older guard) */
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
 * first; *out malloc'd. How many, or -1 reported (also for by_dst against
 * a sketch by source address, or the reverse). */
int fb_guard_addresses(const struct fb_monitor *m, const struct fb_mon_snap *s,
		       const struct fb_mon_snap *base, bool by_dst, struct fb_guard_addr **out);

/* Prefixes never banned (--never FILE): addresses and prefixes, one a
 * line, '#' and ';' comments. At most FB_NEVER_MAX different ones (the
 * same one again is taken once): whom to protect is a short list, and
 * each new address above the threshold is looked up in all of it. */
#define FB_NEVER_MAX 65536
struct fb_never_list {
	struct fb_key *p; /* kind SRC, saddr masked, plen in the 128-bit space */
	size_t n;
};
int fb_never_read(const char *file, struct fb_never_list *l);
void fb_never_free(struct fb_never_list *l);
/* Does an address key (fb_guard_addr.key) fall in one of them? */
bool fb_never_has(const struct fb_never_list *l, const struct fb_key *addr);

/* The stats map of filter f: opened, or created and pinned (create). -1
 * reported; with create false and none there, -1 with errno ENOENT and
 * nothing reported. */
int fb_guard_stats_open(const struct fb_store *f, bool create);
int fb_guard_stats_read(int fd, struct fb_guard_stats *s);
int fb_guard_stats_write(int fd, const struct fb_guard_stats *s);
/* s's counters plus d's (active and active_until left as they are). */
void fb_guard_stats_add(struct fb_guard_stats *s, const struct fb_guard_stats *d);
/* The bans an earlier guard left in force at now (jiffies), as its last
 * write said: how many, and when the last of them ends (0, 0: none, no
 * pin (fd -1), or an older guard's, which does not say). A guard counts
 * them in `active` and against its --max-bans with its own until then,
 * less those it bans again (they are its own from then on: taken over,
 * not new, they need no room under the ban limit). */
void fb_guard_stats_left(int fd, __u64 now, __u64 *active, __u64 *until);
/* The bans in force in filter f, whichever guard placed them (guard_bans):
 * opened, or created with room for `entries` and pinned (create); -1 as
 * fb_guard_stats_open(). Max: the room it was made with (0: unknown).
 * Count: those in force at now (jiffies) and the last end among them (0:
 * none), the ended deleted with sweep (under f's lock); 0, or -1 reported.
 * Has: is k in force at now (fd -1: no). In force: before its end, and in
 * one of f's live generations gv (a ban taken away, by `load --replace
 * --ttl` or `del --with-lifetime`, has ended; gv NULL: not known, all
 * count). Put: k[0..n) in force until expires (a later end recorded
 * stays); 0, or -1 reported. */
struct fb_gen_views;
int fb_guard_bans_open(const struct fb_store *f, bool create, __u32 entries);
__u32 fb_guard_bans_max(int fd);
int fb_guard_bans_count(int fd, const struct fb_gen_views *gv, __u64 now, bool sweep, __u64 *live,
			__u64 *last);
bool fb_guard_bans_has(int fd, const struct fb_gen_views *gv, const struct fb_key *k, __u64 now);
int fb_guard_bans_put(int fd, const struct fb_key *k, size_t n, __u64 expires);
/* Does one of the live generations gv (at now, jiffies) hold k? */
bool fb_guard_gens_hold(const struct fb_gen_views *gv, const struct fb_key *k, __u64 now);
/* The routes guards announced (--announce) for their bans in filter f
 * (guard_routes), so that a route is withdrawn only once no announcing
 * guard's ban of it is in force: guards banning into one BAN announce to
 * the same peers (processes of one ExaBGP), and one guard's withdrawal
 * ends the route for all of them. A route (an address, and which: a
 * blackhole, the same for --by src and dst, or a FlowSpec match on the
 * source or the destination) -> up to FB_GUARD_HOLDERS guards holding it,
 * each with its ban's end (jiffies). A guard is a BPF map it holds open
 * while it runs, by the map's id: ids are the kernel's, the same in every
 * PID namespace (a guard in a container and one on the host see each
 * other), and freed when the guard's descriptors close, at its death
 * (SIGKILL too); the map says the guard's pid and start, so an id given to
 * a later map is another guard's. An older guard's entry (no such map) is
 * its pid and the start time the kernel gives that process (/proc/PID/stat
 * field 22), judged in this guard's /proc. Eight guards hold a route at
 * most: those whose bans end last (a guard whose ban ends before theirs
 * needs no entry: at its end, theirs still hold the route).
 */
#define FB_GUARD_ROUTES_PIN "guard_routes"
#define FB_GUARD_HOLDERS 8

enum { FB_ROUTE_BLACKHOLE = 1, FB_ROUTE_FLOW_SRC, FB_ROUTE_FLOW_DST };

struct fb_guard_route {
	__u8 addr[16]; /* IPv6, or IPv4 as ::ffff:a.b.c.d */
	__u8 family;   /* enum fb_family */
	__u8 kind;     /* FB_ROUTE_* */
	__u8 pad[6];
};

struct fb_guard_holder {
	__u32 pid;   /* as the guard's own PID namespace numbers it */
	__u32 token; /* the id of the map the guard holds open (0: an older
		      * guard's entry: its pid and start are all there is) */
	__u64 start; /* the process's start, clock ticks after boot */
	__u64 end;   /* jiffies: its ban ends then (0: a free slot) */
};

struct fb_guard_holders {
	struct fb_guard_holder h[FB_GUARD_HOLDERS];
};

_Static_assert(sizeof(struct fb_guard_route) == 24, "no hole");
_Static_assert(sizeof(struct fb_guard_holders) == 24 * FB_GUARD_HOLDERS, "no hole");

/* Open (or create, with room for `entries` routes, and pin) f's record;
 * -1 as fb_guard_stats_open(). Self: this process as a holder (end 0);
 * -1 reported. Hold (under f's lock): r held by me until me->end, or
 * my later end recorded (r's slots full of running guards: the one whose
 * end is the earliest, if before mine, gives its slot; the record full:
 * the routes no running guard holds forgotten first, but orphans); 0, 1 not recorded
 * (FB_GUARD_HOLDERS other running guards hold r to my end or later), or
 * -1 reported (but errno E2BIG, unsaid: full of routes in force or
 * orphans, below). Release:
 * does another guard, alive, hold r at now (1), or none (0: with
 * `locked`, f's lock held, my slot cleared and r's
 * entry deleted when no guard holds it), or -1 reported (not known). */
int fb_guard_routes_open(const struct fb_store *f, bool create, __u32 entries);
int fb_guard_holder_self(struct fb_guard_holder *me);
int fb_guard_routes_hold(int fd, const struct fb_guard_route *r, const struct fb_guard_holder *me,
			 __u64 now);
int fb_guard_routes_release(int fd, const struct fb_guard_route *r,
			    const struct fb_guard_holder *me, __u64 now, bool locked);
/* Orphans (under f's lock): the routes whose guards were all killed (a
 * killed guard withdraws nothing, and no other guard's end would: none
 * holds them), each handed to fn with the last end they recorded; fn
 * says what becomes of it: 1 mine (me its holder until that end), 0
 * withdrawn (forgotten), -1 left as it is. How many fn was given, or -1
 * reported. Hold makes room in a full record with the routes whose
 * guards' bans ended, never with orphans: run this, then hold again. */
int fb_guard_routes_orphans(int fd, const struct fb_guard_holder *me,
			    int (*fn)(void *ctx, const struct fb_guard_route *r, __u64 end),
			    void *ctx);
/* The event queue beside filter f: opened, or created and pinned (create);
 * -1 as fb_guard_stats_open(). Push: the oldest event makes room. Pop: 1
 * an event, 0 none. */
int fb_guard_events_open(const struct fb_store *f, bool create);
int fb_guard_events_push(int fd, const struct fb_guard_event *e);
int fb_guard_events_pop(int fd, struct fb_guard_event *e);

#endif
