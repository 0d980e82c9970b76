/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * BGP routes to filter rules: ExaBGP's JSON API (one message per line,
 * `encoder json`) in, rule additions and deletions out. No I/O and no
 * filter access here (cmd_bgp.c applies the changes), so the translation
 * is unit-tested on its own.
 *
 * A path is what one peer announces for one NLRI (and add-path id) of one
 * family; a new announcement of the same NLRI replaces it, a withdrawal
 * ends it. Each path that qualifies (an RTBH route with the community, a
 * FlowSpec route with a discard action that flowbloom can express) maps to
 * one rule; a rule stays in the filter while at least one path holds it, so
 * it is added to the counting filter once, however many peers and paths
 * announce it, and deleted once, with its last path.
 */
#ifndef FLOWBLOOM_USER_BGP_H
#define FLOWBLOOM_USER_BGP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "flowbloom/key.h"
#include "ratelimit.h"

#define FB_BGP_BLACKHOLE 0xffff029aU /* 65535:666, RFC 7999 */

struct fb_bgp_opts {
	__u32 community;    /* ASN << 16 | value */
	bool rtbh_src;	    /* blackhole routes are source rules (RFC 5635 S/RTBH) */
	bool flush_on_down; /* a session loss deletes its peer's routes */
	int min_v4, min_v6; /* shortest prefix accepted, per family */
	/* Most paths held (--max-paths; 0: no bound): an announcement that
	 * would start paths past it is refused, its route whole, and noted. */
	size_t max_paths;
};

/* What a note is about, for its rate limit (fb_bgp_quiet): a peer can
 * make those past FB_BGP_SAID once per route or line it sends. */
enum fb_bgp_kind {
	FB_BGP_SAID,	    /* always said: sessions, out of memory */
	FB_BGP_PAST_MAX,    /* a route refused past --max-paths */
	FB_BGP_INVALID,	    /* a route past the limits: --min-length, side, family */
	FB_BGP_UNSUPPORTED, /* a route or family flowbloom cannot express */
	FB_BGP_REFUSED,	    /* a route the filter refused (fb_bgp_refused) */
	FB_BGP_SKIPPED,	    /* an input line skipped: malformed, too long */
	FB_BGP_KINDS
};

/*
 * Whose notes and changes share a window (bgpquiet.c): each peer's its own,
 * so a noisy peer never hides another's first lines. Talker
 * FB_BGP_NO_PEER is what no peer's line made (the state file, a line
 * unread); the first FB_BGP_PEERS peers seen have one each, and the peers
 * after them share FB_BGP_MORE_PEERS (a bound: ExaBGP's neighbors are
 * configured, a few in practice).
 */
#define FB_BGP_NO_PEER 0
#define FB_BGP_MORE_PEERS 1
#define FB_BGP_PEERS 256
#define FB_BGP_PEER_MAX 64 /* a peer's name kept (an address: 45 at most) */
/* A change line kept for a window's summary: "<stdin>:LINE: +RULE". */
#define FB_BGP_CHANGE_STR 240

struct fb_bgp_talker {
	char peer[FB_BGP_PEER_MAX];		 /* "" for the two shared ones */
	struct fb_ratelimit quiet[FB_BGP_KINDS]; /* [FB_BGP_SAID]: unused */
	/* The filter's changes its lines made (fb_bgp_change): the first
	 * `change_burst` of a window said, the others counted, added (+) and
	 * deleted (-), with the first and last of them. */
	struct fb_ratelimit change;
	unsigned long long held_add;
	char first[FB_BGP_CHANGE_STR], last[FB_BGP_CHANGE_STR];
};

struct fb_bgp_path;
struct fb_bgp_rule;
struct fb_bgp_stale;

struct fb_bgp {
	struct fb_bgp_opts o;
	struct fb_bgp_path **paths; /* hash buckets */
	struct fb_bgp_rule **rules;
	size_t nbuckets, npaths, nrules;
	size_t refused_paths; /* routes refused past o.max_paths, in all */
	__u64 hkey[2];	      /* the tables' hash key, drawn by fb_bgp_init() */
	/* How many paths are stale, per peer and family: End-of-RIB looks
	 * at the table only when some are (a peer's repeated End-of-RIB
	 * costs nothing). stale_lost: a count could not be kept (no
	 * memory), End-of-RIB always looks. */
	struct fb_bgp_stale *stale;
	bool stale_lost;
	/* The last line's outcome: rules to add to and to delete from the
	 * filter. Valid until the next call. */
	struct fb_key *add, *del;
	size_t nadd, ndel, cap_add, cap_del;
	bool changed; /* the last line started or ended a path (state to save) */
	/* The last line marked paths stale or cleared a mark (what a later
	 * End-of-RIB ends depends on it: state to save too). */
	bool stale_changed;
	/* Messages (unsupported routes, malformed lines, sessions): "where:
	 * text", to stderr unless set. */
	void (*note)(void *ctx, const char *msg);
	void *ctx;
	const char *source; /* for messages: "<stdin>" */
	size_t lineno;	    /* the last line's number, for fb_bgp_refused()'s notes (0: none) */
	/* The last line's peer's talker (FB_BGP_NO_PEER: none): whose window
	 * its notes and changes take. Every note is said, unless
	 * fb_bgp_quiet(); then talk[0..ntalk) are the windows. */
	unsigned talker;
	struct fb_bgp_talker *talk;
	size_t ntalk, cap_talk;
	double quiet_secs;     /* the windows' length; 0: none */
	unsigned quiet_burst;  /* notes of a kind said per window and talker */
	unsigned change_burst; /* changes said per window and talker */
	double quiet_next;     /* CLOCK_MONOTONIC the first open window ends at */
};

int fb_bgp_init(struct fb_bgp *b, const struct fb_bgp_opts *o);
void fb_bgp_free(struct fb_bgp *b);
/* A note for the user, "SOURCE:LINE: text" when lineno is set, to note()
 * or stderr; of a kind past FB_BGP_SAID, said in full only burst times
 * per interval seconds and talker (b->talker: the peer of the line) once
 * fb_bgp_quiet() is called, the rest counted and said by
 * fb_bgp_note_due() ("N more routes from PEER refused past --max-paths in
 * the last 10 s"). */
void fb_bgp_note(struct fb_bgp *b, enum fb_bgp_kind kind, size_t lineno, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Windows of interval seconds: burst notes of each kind and
 * change_burst changes said in each, per talker. 0, or -1 out of memory
 * (said). */
int fb_bgp_quiet(struct fb_bgp *b, double interval, unsigned burst, unsigned change_burst);
/* The talker of peer (NULL: FB_BGP_NO_PEER), made if new while fewer
 * than FB_BGP_PEERS are (else, or out of memory, FB_BGP_MORE_PEERS);
 * FB_BGP_NO_PEER while there are no windows. */
unsigned fb_bgp_talker(struct fb_bgp *b, const char *peer);
/* A change to the filter that talker's line made, sign '+' (a rule
 * added) or '-' (deleted), said as text: true to say it in full, false
 * if it is only counted (said by fb_bgp_note_due: how many added and
 * deleted, the first and the last). */
bool fb_bgp_change(struct fb_bgp *b, unsigned talker, char sign, const char *text);
/* The counts of the windows over (all of them, if end) said. */
void fb_bgp_note_due(struct fb_bgp *b, bool end);

/* One line of ExaBGP JSON, len bytes (without its newline): exactly one
 * JSON object, nothing before or after it but blanks. 0: applied (add/del
 * say what the filter must do); -1: malformed (two messages, trailing
 * garbage, a NUL byte, ...), noted with its line number, nothing changed. */
int fb_bgp_line(struct fb_bgp *b, const char *line, size_t len, size_t lineno);
/*
 * May a path of family ("ipv4 unicast", "ipv6 flow", ...) hold rule k?
 * What every rule passes, whether a peer announced it or the state file
 * says it was announced: the AFI decides the family (an IPv6 route makes
 * IPv6 rules only, v4-mapped prefixes included), the rule is one the data
 * path can match (fb_rules_valid()), a blackhole route makes a rule of the
 * --rtbh side, and an address rule is at least --min-length long in the
 * family it has. 0, or -1 with why.
 */
int fb_bgp_admit(const struct fb_bgp *b, const char *family, const struct fb_key *k, char *why,
		 size_t len);
/*
 * After the filter refused to add rule k, one of the last line's
 * additions, a rule fb_bgp_lost() listed or one refreshed (in the filter
 * already, with a lifetime: it joins del): every route holding it is
 * refused whole. The paths of all its parts (a FlowSpec route of several
 * keys, "ID part I/N") are forgotten, so no route is ever partly in the
 * filter; each such route is noted once, "SOURCE:LINE: 'ID' from PEER:
 * WHY; not applied" ("SOURCE:LINE: " left out while lineno is 0; why NULL:
 * not noted, the caller reported it). A rule of another part that no path
 * holds any more leaves the additions (fb_bgp_refs() says 0: the caller
 * takes it out of the batch it retries) or, if it is in the filter,
 * joins del. Returns how many rules besides k left the additions (for a
 * refreshed k, those that joined del too: they leave the refresh's
 * batch); *routes (if set): how many routes were refused. A rule no path
 * holds any more (in del already) is left alone (0).
 */
size_t fb_bgp_refused(struct fb_bgp *b, const struct fb_key *k, const char *why, size_t *routes);
/* After the caller applied add/del: the added rules are in the filter,
 * the deleted ones are forgotten. */
void fb_bgp_done(struct fb_bgp *b);
/* Every path ends (--flush): del lists every rule in the filter. */
void fb_bgp_remove_all(struct fb_bgp *b);
/* Rules in the filter now (to refresh, or to add again after a replace). */
size_t fb_bgp_rules(const struct fb_bgp *b, struct fb_key **out);
/*
 * The filter lost rules keys[0..n) (a new filter array took its place):
 * they are in it no more. One no path holds (its deletion waiting in del)
 * is forgotten and leaves del: nothing is deleted that the new array never
 * got. The others stay in keys[0..returned), to be added again: those the
 * filter takes go to fb_bgp_added(), those it refuses to fb_bgp_refused(),
 * as a line's additions do, so that no rule counts as in the filter that
 * is not, and its route is refused whole (announced again, it is tried
 * again; withdrawn, nothing is deleted).
 */
size_t fb_bgp_lost(struct fb_bgp *b, struct fb_key *keys, size_t n);
/* Rules keys[0..n) are in the filter again (fb_bgp_lost()). */
void fb_bgp_added(struct fb_bgp *b, const struct fb_key *keys, size_t n);
/* How many paths hold rule k (0: not held). */
unsigned fb_bgp_refs(const struct fb_bgp *b, const struct fb_key *k);
/* How many paths of peer and family are stale (held from before its
 * session came up, until End-of-RIB); SIZE_MAX: not known. */
size_t fb_bgp_stale_count(const struct fb_bgp *b, const char *peer, const char *family);

/* State file: one path a line, "peer<TAB>family<TAB>nlri id<TAB>FLOW",
 * the first three with backslash escapes (\\, \t, \n, \r, \xHH for other
 * control bytes and '#'): whatever a peer sends, a line is one path, never
 * a comment. A path held stale (until its peer's End-of-RIB) is followed
 * by a "# stale" line (a comment to an older reader; load: -1 if no path
 * line is before it). Its "# flowbloom bgp state 2" header says the ids are as a
 * route's messages make them now (bgpid.c); those of a file without it are
 * made so as they are read (a FlowSpec id loses the next hop that ended
 * it, a unicast prefix its host bits). load: -1 on a malformed line (printed as name:LINE), nothing
 * loaded; loaded rules count as in the filter. A path fb_bgp_admit()
 * refuses now (the limits changed, or the file says what no peer could
 * make us add) is noted and dropped; its rule, unless another path holds
 * it, is in del (in the filter from before: to be deleted, as a withdrawal
 * would). So are the routes past o.max_paths (lowered since the file was
 * written): its first max_paths paths are kept, whole routes, and each
 * route after them is noted and dropped, counted in refused_paths. */
int fb_bgp_save(const struct fb_bgp *b, FILE *fp);
int fb_bgp_load(struct fb_bgp *b, FILE *fp, const char *name);

#endif
