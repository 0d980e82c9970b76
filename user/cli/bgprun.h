/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `flowbloom bgp`'s run, shared by cmd_bgp.c (options, the state file, the
 * loop, committing) and bgpfilter.c (what reaches the filter: a line's
 * rules added, deletions applied after the state file is written, the
 * rules added again to a replaced filter).
 */
#ifndef FLOWBLOOM_USER_BGPRUN_H
#define FLOWBLOOM_USER_BGPRUN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "fleet/bgp.h"
#include "rules/capacity.h"
#include "store/gens.h"
#include "store/store.h"

/* A deletion waiting for the state file to be written: of the copy in
 * the permanent rules, or (gens) of the copies in the generations; moved:
 * the old copy of a rule still held, now in the other part (bgp_move);
 * again: one the filter failed (an exact set's error), said once and
 * tried again at the next commit. */
struct bgp_pending {
	struct fb_key key;
	size_t lineno;
	bool gens, moved, again;
	bool gone;	 /* taken back: the rule announced again (bgp_pend_cancel) */
	bool added;	 /* of a killed run's STATE.added (bgp_recover_added) */
	long ix;	 /* its "# delete" line in the state file written last; -1: none */
	unsigned talker; /* whose line ended its last path (fb_bgp_talker), for the log */
};

/*
 * Where our rules' copies with a lifetime are (bgpcopies.c): how many of
 * each rule we wrote into each generation slot g, of the generation ending
 * at expires[g] (its identity: a slot reused by another generation counts
 * afresh). A withdrawal deletes exactly those copies still live, never one
 * from a generation we did not write the rule into (where it is a false
 * positive, or the operator's). The state file carries it.
 */
struct bgp_copy {
	struct fb_key key;
	__u8 n[FB_GEN_SLOTS];	  /* at most 255: a copy past it ends with its lifetime */
	__u8 extra[FB_GEN_SLOTS]; /* copies off the record, to delete (bgp_copies_trim) */
	bool used;
};

struct bgp_copies {
	struct bgp_copy *t; /* open addressing: cap slots, a power of 2, n used */
	size_t cap, n;
	const __u64 *hkey;	     /* the hash's key: the table's (fb_bgp.hkey) */
	__u64 expires[FB_GEN_SLOTS]; /* 0: no generation */
};

struct bgp_run {
	struct fb_bgp b;
	const char *name, *state;
	int state_dir;		/* the state file's directory (fb_safe_opendir) */
	const char *state_base; /* its name there */
	__u32 filter_id;	/* the filter array our rules are in; 0: unknown */
	__u32 perm_id;		/* its permanent rules' identity (store.h); 0: unknown */
	size_t lineno;
	__u64 added, deleted;
	struct bgp_pending *pend; /* deletions after the next state write */
	size_t npend, cap_pend;
	size_t ngone; /* of them taken back (gone) */
	/* Of them not taken back, how many in all and of each talker's
	 * lines (fb_bgp_talker; FB_BGP_NO_PEER: none made them): the room
	 * they free for other peers (bgp_bound). */
	size_t pend_live, pend_by[FB_BGP_PEERS + 2];
	size_t *pix, pix_cap, pix_n; /* their index by key: pend[0..pix_n) (bgppace.c) */
	bool dirty;		     /* paths changed since the state file was written */
	/* The state file's writes, counted (its first line says how many),
	 * and the rules added since the last one (bgpadded.c). */
	unsigned long long commits;
	FILE *added_fp;
	/* The input lines since it (bgpjournal.c): its descriptor (-1:
	 * none), size and name; off: a write failed, none until the next
	 * state write (said once a run). */
	int journal_fd;
	off_t journal_size;
	bool journal_off, journal_said;
	char journal[PATH_MAX + 16];
	/* STATE.deleted (bgpdeleted.c): the deletions the state file lists
	 * ("# delete" lines) noted there as each is started; -1: none. */
	int done_fd;
	bool done_said;
	/* Open and locked from a batch's first addition to its commit: one
	 * open per batch, not per route (310 us each at 200k flows). */
	struct fb_store f;
	bool have_f;
	double locked;	   /* CLOCK_MONOTONIC of the lock's taking */
	double committed;  /* CLOCK_MONOTONIC of the last write */
	double pace_until; /* no write before (bgppace.c), but the first and last */
	double ttl;	   /* --ttl: rules live this long unless refreshed; 0: forever */
	double refreshed;  /* CLOCK_MONOTONIC of the last refresh */
	/* Where our rules are: in the generations (rules with a lifetime,
	 * --ttl), else in the permanent rules. Only there are they deleted
	 * (a copy elsewhere is someone else's, or a false positive whose
	 * deletion would take bits from other rules). The state file says
	 * where a previous run put them; a run with the other --ttl setting
	 * moves them (bgp_move), --flush deletes them where they are. */
	bool in_gens;
	bool flush;
	/* The filter's capacity (bgp_bound): what we wrote to each
	 * generation (refreshes put a copy of every rule in a new one),
	 * counted afresh for each filter array (counted_id). */
	struct fb_capacity_limit lim;
	__u32 counted_id;
	struct bgp_copies copies;
	/* The state file did not say where the copies are (written before it
	 * did): at the first open, each live generation holding a rule is
	 * taken to hold one copy of it. */
	bool seed_copies;
};

/* bgppace.c: CLOCK_MONOTONIC and the process's CPU time in seconds; the
 * seconds until a state write may start (0: now); a write started at CPU
 * time cpu0 done, before its deletions (the next one paced by the CPU it
 * took); the poll
 * timeout (ms) of a loop idle for at most wait seconds, sooner when a
 * write waits for its pace. */
double bgp_mono(void);
double bgp_cpu(void);
double bgp_pace_left(const struct bgp_run *rn);
void bgp_paced(struct bgp_run *rn, double cpu0);
int bgp_pace_poll_ms(const struct bgp_run *rn, double wait);
/* Of keys[0..n), a line's new rules with the filter open and locked, those
 * whose deletion waits take it back (marked gone) and leave keys: how many
 * are left. The deletions applied or dropped: their index emptied. */
size_t bgp_pend_cancel(struct bgp_run *rn, struct fb_key *keys, size_t n);
void bgp_pend_reset(struct bgp_run *rn);
/* Their counts against a recount: a drift said (an internal error). */
void bgp_pend_verify(const struct bgp_run *rn);
/* A deletion of talker's lines queued (d 1) or taken back (d -1). */
void bgp_pend_count(struct bgp_run *rn, unsigned talker, int d);

/* A message on stderr, "flowbloom: bgp: ..." (stdout is ExaBGP's). */
void bgp_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A rule added ('+'), deleted ('-') or not ('?'), with its input line (0:
 * none) and tail. */
void bgp_show(size_t lineno, char sign, const struct fb_key *k, const char *tail);
/* A change to the filter ('+' or '-', as bgp_show) that a line of talker
 * made (fb_bgp_talker; FB_BGP_NO_PEER: none did): said in full while the
 * talker's window allows, else counted (fb_bgp_change). */
void bgp_change(struct bgp_run *rn, unsigned talker, size_t lineno, char sign,
		const struct fb_key *k);
/* bgpfilter.c, each with the filter f open and locked. Add keys[0..*n)
 * (refusals handled; what: the batch, for a message): how many refused,
 * *n how many added. */
size_t bgp_add_rules(struct bgp_run *rn, struct fb_store *f, struct fb_key *keys, size_t *n,
		     const char *what);
/* The line's new rules keys[0..*n) held to the filter's capacity: those
 * past it refused, their routes whole (bgppace.c); how many refused. */
size_t bgp_bound(struct bgp_run *rn, struct fb_store *f, struct fb_key *keys, size_t *n);
/* With --ttl: the copies of our rules in each generation of f, counted. */
void bgp_count_copies(struct bgp_run *rn, struct fb_store *f);
/* Before the state file is written: a rule withdrawn and announced again
 * keeps one copy on its record, the others marked for bgp_del_pending. */
void bgp_trim_pending(struct bgp_run *rn);
/* The deletions waiting for the state file, now that it is written;
 * those the filter failed (said) wait for the next commit. */
void bgp_del_pending(struct bgp_run *rn, struct fb_store *f);
/* In the state file being written (fp): the deletions due once it is,
 * a "# delete" line each, their place in pend[].ix. 0, or -1 write error. */
int bgp_save_deleting(struct bgp_run *rn, FILE *fp);
/* One permanent copy of k out of f: 0, -1 if the counters do not hold it
 * (nothing deleted), -2 if the exact set failed (said; nothing deleted). */
int bgp_del_permanent(struct fb_store *f, const struct fb_key *k);
/* At the run's end, after its last commit: each deletion still waiting,
 * said (its rule stays in the filter); how many. */
size_t bgp_pending_left(const struct bgp_run *rn);
/* b.del onto the deletions waiting (lineno: their line, talker: whose it
 * is): 0, or -1 out of memory. */
int bgp_queue_dels(struct bgp_run *rn, size_t lineno, unsigned talker);
/* One copy of k out of the permanent rules once the state file is
 * written (a rule a killed run added): 0, or -1 out of memory. */
int bgp_queue_del(struct bgp_run *rn, const struct fb_key *k);

/* STATE.SUFFIX, a file of ours beside the state file (bgpadded.c): root's,
 * in its directory, no link followed (fb_safe_openat), made 0600, opened
 * to read and append; label (len bytes) names it for messages. Its fd, or
 * -1 said. */
int bgp_open_beside(struct bgp_run *rn, const char *suffix, char *label, size_t len);
/* STATE.added (bgpadded.c): open it beside the state file (root's, in its
 * directory), 0 or -1 reported; note keys[0..n), now in the filter; at
 * the start, queue the deletion of those a killed run added after its
 * last state write (0, or -1 out of memory). */
int bgp_open_added(struct bgp_run *rn);
/* keys[0..n), just added as permanent rules, named in STATE.added: 0, or
 * -1 said (not written: the caller takes them out, bgp_unadd). */
/* keys[0..n), about to be added as permanent rules (the filter open and
 * locked), named in STATE.added first: 0, or -1 said (not written: their
 * routes refused, the caller adds none). */
int bgp_note_adding(struct bgp_run *rn, const struct fb_key *keys, size_t n);
int bgp_note_added(struct bgp_run *rn, const struct fb_key *keys, size_t n);
/* Take keys[0..n), the line's rules just added, out of the filter again
 * and refuse their routes, why said once each. */
void bgp_unadd(struct bgp_run *rn, struct fb_store *f, const struct fb_key *keys, size_t n,
	       const char *why);
int bgp_recover_added(struct bgp_run *rn);
/* Does STATE.added name rules of a commit past the state file's (a run
 * went on past the deletions the state file allows, to add rules)? */
bool bgp_added_since(struct bgp_run *rn);
/* The state file opened for reading, only our own (bgpdeleted.c): 1 and
 * *fp; 0: there is none; -1 said. */
int bgp_state_fopen(struct bgp_run *rn, FILE **fp);
/* The state file's first two lines, as cmd_bgp.c writes them: the
 * filter, its array's identity, where the rules are ("" in a file written
 * before it said), the commit (0 before it was counted) and the permanent
 * rules' identity (has_perm false before it was written). */
struct bgp_state_head {
	char name[FB_NAME_MAX + 1];
	unsigned array_id;
	char part[16];
	unsigned long long commits;
	bool has_perm;
	__u32 perm_id;
};
/* 1 and *h from fp's first lines (bgpdeleted.c); 0 if the first is no
 * such header. */
int bgp_state_head_read(FILE *fp, struct bgp_state_head *h);
/* An earlier build's state file, which names no permanent rules' identity:
 * the filter head's if the array it names is the filter's, else that
 * array's (bgpadded.c). */
void bgp_perm_of_array(struct bgp_run *rn);
/* STATE.journal (bgpjournal.c): open it beside the state file (root's,
 * in its directory), 0 or -1 reported; write the line just read (len
 * bytes, its outcome in rn->b) before it reaches the filter, if it changed
 * something (a failure said once, the line applied all the same); empty
 * it, the state file just written. */
int bgp_open_journal(struct bgp_run *rn);
void bgp_journal_line(struct bgp_run *rn, const char *line, size_t len);
void bgp_journal_empty(struct bgp_run *rn);
/* A journal line of a commit past the state file's (LINE, len bytes, NUL
 * after them; lineno: its place in the journal): 0 applied, 1 refused
 * (said), -1 to stop. */
typedef int (*bgp_journal_fn)(void *ctx, const char *line, size_t len, size_t lineno);
/* Read the journal fd (name for messages; lines up to max bytes): fn on
 * each line of a commit past `after`, a malformed or over-long line said
 * (name:LINE: why; skipped), a last line without a newline (cut short by a
 * kill) ignored. *whole: the bytes of whole lines. How many lines fn
 * applied, or -1 (a read error reported, or fn's). */
long bgp_journal_read(int fd, const char *name, size_t max, unsigned long long after,
		      bgp_journal_fn fn, void *ctx, off_t *whole);
/* At start: the journal's lines of the commit past the state file's,
 * each through apply (fb_bgp_line and the filter), said once. 0, or -1. */
int bgp_replay_journal(struct bgp_run *rn, size_t max, bgp_journal_fn apply);
/* STATE.deleted (bgpdeleted.c): open it beside the state file (root's,
 * in its directory), 0 or -1 reported; note the state file's deletion ix
 * started (again: failed, nothing deleted; min >= 0: a permanent copy's,
 * the smallest of its counters now), before it is: 0, or -1 (said once;
 * then it is not started); empty it, the state file just written. At the
 * start (STATE.added open), the deletions the state file lists that no run
 * started, or whose start a kill cut off, applied: 0, or -1 out of memory
 * or the filter unreadable. */
int bgp_open_deleted(struct bgp_run *rn);
int bgp_note_deleting(struct bgp_run *rn, long ix, bool again, long min);
void bgp_deleted_empty(struct bgp_run *rn);
int bgp_recover_deleting(struct bgp_run *rn);
/* f is a new filter array: our rules added again (see bgpfilter.c). 0, or
 * -1 out of memory. */
int bgp_resync(struct bgp_run *rn, struct fb_store *f, bool in_line);
/* Our rules are in the other part than this run puts them (in_gens is not
 * ttl > 0): added where it puts them, their old copies' deletions queued
 * (bgpfilter.c). Not within a line. 0, or -1 out of memory. */
int bgp_move(struct bgp_run *rn, struct fb_store *f);

/* bgpfeeds.c: does a bgp state file, in the default place or one a bgp
 * run of the filter recorded (its name in state[0..len)), say that bgp holds rules in filter name's permanent rules
 * as they are now? 1 or 0 (a file bgp would not trust, or none: 0). */
int bgp_feeds(const char *name, char *state, size_t len);
/* Record the state file (base in the open directory state_dir) as one of
 * filter name's, for bgp_feeds to look at: 0, or -1 said. */
int bgp_feeds_record(const char *name, int state_dir, const char *base);

/* bgpcopies.c. The record of rule k (NULL: none), and forgetting one. */
struct bgp_copy *bgp_copies_find(const struct bgp_copies *c, const struct fb_key *k);
void bgp_copies_forget(struct bgp_copies *c, struct bgp_copy *r);
/* keys[0..n) each got a copy in generation where: 0, or -1 out of memory
 * (the copies not recorded stay when their route is withdrawn, to end with
 * their lifetime). */
int bgp_copies_wrote(struct bgp_copies *c, const struct fb_gen *where, const struct fb_key *keys,
		     size_t n);
/* How many rules have a copy in generation w. */
size_t bgp_copies_in(const struct bgp_copies *c, const struct fb_gen *w);
/* When the last of rule k's copies in a live generation of gv ends, in
 * jiffies; 0: none is left. */
__u64 bgp_copies_until(const struct bgp_copies *c, const struct fb_gen_views *gv,
		       const struct fb_key *k);
/* A new filter array: only the copies in a live generation of gv of the
 * same identity that holds the rule are kept (the others went with a
 * destroy and create, or load --replace --ttl). */
void bgp_copies_verify(struct bgp_copies *c, const struct fb_gen_views *gv);
/* No record (an older state file): one copy of keys[i] in each live
 * generation holding it. 0, or -1 out of memory. */
int bgp_copies_seed(struct bgp_copies *c, const struct fb_gen_views *gv, const struct fb_key *keys,
		    size_t n);
/* k's copies out of the live generations we wrote them into, its record
 * forgotten (lim: our copies per generation, bgp_bound): how many deleted. */
int bgp_copies_del(struct bgp_copies *c, struct fb_gen_views *gv, const struct fb_key *k,
		   struct fb_capacity_limit *lim);
/* The state file's lines for the rules b holds: 0, or -1 write error. */
/* A re-announced rule's copies but one (in the generation ending last)
 * off its record (before the state file is written), then out of the
 * filter (after): how many. */
void bgp_copies_trim_plan(struct bgp_copies *c, const struct fb_key *k);
int bgp_copies_trim(struct bgp_copies *c, struct fb_gen_views *gv, const struct fb_key *k,
		    struct fb_capacity_limit *lim);
int bgp_copies_save(const struct bgp_copies *c, const struct fb_bgp *b, FILE *fp);
/* Read them back from the state file fp (name for messages): 0, or -1
 * reported; *found: the file has them. */
int bgp_copies_load(struct bgp_copies *c, FILE *fp, const char *name, bool *found);
void bgp_copies_free(struct bgp_copies *c);

#endif
