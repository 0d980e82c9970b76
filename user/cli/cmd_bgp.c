// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom bgp`: ExaBGP's JSON API on stdin, rules in a counting filter.
 * bgp.c turns each line into rules to add and delete; this file has them
 * applied (under the filter's writer lock; bgpfilter.c adds and deletes),
 * keeps the state file and runs the loop. stdout is ExaBGP's command
 * channel: nothing is written there but --flush's report (a command
 * line's, not ExaBGP's process); messages go to stderr, which ExaBGP
 * passes through to its own.
 *
 * Crash order: a line's additions go to the filter before the state file
 * is rewritten, its deletions after. Whatever kills the process, a rule in
 * the state file is in the filter; a rule in the filter and not in the
 * file is noted as added (bgpadded.c) and deleted by the next run,
 * unless the line that added it, journaled before (bgpjournal.c), is
 * applied again there: ExaBGP does not send a new process what the killed
 * one read. The deletions a write allows are listed in it and each noted
 * as started (bgpdeleted.c): the next run applies those not started, and
 * the last one's counters tell whether a kill cut it off. A kill never
 * leaves a counter lowered for a rule we did not add (which would take
 * bits from other rules).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "bgprun.h"
#include "fleet/bgp.h"
#include "clock.h"
#include "cmd.h"
#include "linein.h"
#include "output.h"
#include "safefile.h"
#include "store/gens.h"
#include "store/jiffies.h"
#include "store/store.h"
#include "parse.h"

/*
 * The longest line read: ExaBGP writes one JSON line per BGP message, and
 * a message is at most 64 KiB (RFC 8654 extended messages; 4 KiB without).
 * Its JSON grows most where the wire is densest: an IPv4 /0 NLRI is one
 * byte, printed `{ "nlri": "0.0.0.0/0" }, ` (25 bytes; with add-path 5
 * bytes and 62); a FlowSpec TCP-flags term is two bytes (operator, value),
 * printed as flag names in the component's list and again in the route's
 * "string" (about 80 bytes for all eight flags); `receive { packets; }`
 * adds the message as hex, 2 bytes per byte. So at most about 42 bytes a
 * byte: 64 KiB make at most about 2.8 MB. json-c takes about 36 bytes of
 * memory per byte of JSON it parses, more for small objects (`{ "nlri":
 * ... }`: an object's table alone is about 700 bytes): a line is held
 * under 8 MiB, about 3x the worst message, about 300 MB while parsed
 * (docs/security.md), where 64 MiB took 2.3 GB. A line of more objects
 * and arrays than ExaBGP prints for a message is refused unparsed
 * (bgpmsg.c: 2^18).
 */
#define MAX_LINE (8U << 20)

/*
 * The most paths held (--max-paths): the filter's capacity bounds the
 * rules peers add, not the paths holding them (a path per peer and add-path
 * id), each about 200 (RTBH) to 350 (FlowSpec) bytes of memory and 80 to
 * 130 of state file, which is rewritten at each commit. 500,000 by
 * default: five paths for each rule of a filter of 100,000 flows, at most
 * about 175 MB and a 65 MB state file.
 */
#define BGP_MAX_PATHS 500000
#define BGP_MAX_PATHS_MAX 100000000

/* What bgp says, per peer (fleet/bgp.h): of each kind of refusal the first
 * 10 of each 10 s in full, the rest counted, as printk_ratelimit does (5 s,
 * 10); of the filter's changes (+RULE, -RULE) the first 100. A flood past
 * --max-paths made 1 GB of log in 40 s, a peer flapping routes 2.2 MB
 * (43,000 lines) a second, past journald's 10,000 lines a unit per 30 s
 * (then it drops ExaBGP's too): now at most 11 lines a kind and 101 of
 * changes per peer per 10 s. */
#define BGP_QUIET_SECS 10.0
#define BGP_QUIET_BURST 10
#define BGP_CHANGE_BURST 100

/* Write the state file through the one safe writer (safefile.c): a new
 * file under an unpredictable name, never through a planted link, synced,
 * renamed over it; mode 0600 (it names the peers and what they block). */
static int save_state(struct bgp_run *rn)
{
	struct fb_safefile sf;

	if (fb_safefile_openat(&sf, rn->state_dir, rn->state_base, rn->state, 0600))
		return -1;
	fprintf(sf.out, "# filter %s array-id %u rules %s commit %llu\n# permanent-id %u\n",
		rn->name, rn->filter_id, rn->in_gens ? "with-lifetime" : "permanent",
		rn->commits + 1, rn->perm_id);
	if (fb_bgp_save(&rn->b, sf.out) ||
	    (rn->in_gens && bgp_copies_save(&rn->copies, &rn->b, sf.out)) ||
	    bgp_save_deleting(rn, sf.out)) {
		bgp_say("cannot write %s: %s", rn->state, strerror(errno));
		fb_safefile_abort(&sf);
		return -1;
	}
	if (fb_safefile_commit(&sf))
		return -1;
	rn->commits++;
	/* Its lines are the state file's now (commit N or before: a kill
	 * before this truncation leaves them, and the next run skips them). */
	if (rn->added_fp && ftruncate(fileno(rn->added_fp), 0))
		bgp_say("cannot empty %s.added: %s", rn->state, strerror(errno));
	bgp_journal_empty(rn); /* the same: a kill before leaves lines of commit N */
	bgp_deleted_empty(rn); /* notes of commit N - 1, skipped */
	return 0;
}

/* Read the state file back: only our own (fb_safe_openat: root's, in the
 * trusted directory, no link), and every path in it admitted as a peer's
 * would be (fb_bgp_load). Its first line says which filter array our rules
 * are in, and which part of it: "rules with-lifetime" (generations) or
 * "rules permanent"; a file written before it said so is taken to be of
 * this run's --ttl setting. With a lifetime, it says which generations
 * hold our copies of each rule (bgpcopies.c); a file written before it did
 * has them taken from the filter at the first open (seed_copies). */
static int load_state(struct bgp_run *rn)
{
	struct bgp_state_head h;
	bool found;
	FILE *fp;
	int rc = bgp_state_fopen(rn, &fp);

	if (rc <= 0)
		return rc;
	if (bgp_state_head_read(fp, &h)) {
		if (strcmp(h.name, rn->name)) {
			fb_err("%s:1: state of filter '%s', not '%s'", rn->state, h.name, rn->name);
			fclose(fp);
			return -1;
		}
		rn->filter_id = rn->perm_id = h.array_id;
		rn->commits = h.commits;
		if (h.part[0]) {
			if (strcmp(h.part, "with-lifetime") && strcmp(h.part, "permanent")) {
				fb_err("%s:1: rules '%s': want with-lifetime or permanent",
				       rn->state, h.part);
				fclose(fp);
				return -1;
			}
			rn->in_gens = !strcmp(h.part, "with-lifetime");
		}
		/* The second line: its permanent rules' identity; before it
		 * was written, the array's (bgp_perm_of_array). */
		if (h.has_perm)
			rn->perm_id = h.perm_id;
		else
			bgp_perm_of_array(rn);
	}
	rewind(fp);
	rc = fb_bgp_load(&rn->b, fp, rn->state);
	if (!rc && rn->in_gens) {
		rewind(fp);
		rc = bgp_copies_load(&rn->copies, fp, rn->state, &found);
		rn->seed_copies = !rc && !found;
	}
	fclose(fp);
	return rc;
}

/* A state file that did not say which generations hold our copies: each
 * live generation holding a rule of ours (or one whose deletion waits) is
 * taken to hold one copy of it, as a withdrawal took before. The
 * generations written from now on are recorded exactly. 0, or -1 out of
 * memory. */
static int seed_copies(struct bgp_run *rn, struct fb_store *f)
{
	struct fb_gen_views gv;
	struct fb_key *keys, *k;
	size_t n = fb_bgp_rules(&rn->b, &keys), i, np = 0;
	int rc = -1;

	if (keys && (k = realloc(keys, (n + rn->npend + 1) * sizeof(*k)))) {
		keys = k;
		for (i = 0; i < rn->npend; i++)
			if (rn->pend[i].gens && !rn->pend[i].gone)
				keys[n + np++] = rn->pend[i].key;
		if (fb_gens_views_open(f, &gv) < 0) {
			free(keys);
			return -1;
		}
		rc = bgp_copies_seed(&rn->copies, &gv, keys, n + np);
		fb_gens_views_close(&gv);
	}
	free(keys);
	if (rc)
		fb_err("out of memory finding the BGP rules' copies with a lifetime");
	else
		rn->seed_copies = false;
	return rc;
}

static int open_locked(struct bgp_run *rn, struct fb_store *f, bool in_line)
{
	if (fb_store_open(rn->name, f))
		return -1;
	if (!f->cnt_hdr) {
		fb_err("'%s' is no longer a counting filter", f->name);
		fb_store_close(f);
		return -1;
	}
	if (fb_store_lock(f)) {
		fb_store_close(f);
		return -1;
	}
	if ((rn->seed_copies && seed_copies(rn, f)) ||
	    (f->bits_id != rn->filter_id && bgp_resync(rn, f, in_line)) ||
	    (!in_line && !rn->flush && rn->in_gens != (rn->ttl > 0) && bgp_move(rn, f))) {
		fb_store_unlock(f);
		fb_store_close(f);
		return -1;
	}
	if (f->bits_id != rn->counted_id)
		bgp_count_copies(rn, f);
	return 0;
}

/*
 * One line's outcome: its additions go to the filter now; its deletions
 * wait for the next commit, which writes the state file first. Writing the
 * file for every line would cost O(paths) per route: a full table loaded
 * at session start would be quadratic.
 */
static int apply_line(struct bgp_run *rn)
{
	size_t i, j, n = rn->b.nadd;

	rn->dirty |= rn->b.changed || rn->b.stale_changed; /* the file holds the marks */
	if (n) {
		if (!rn->have_f && open_locked(rn, &rn->f, true))
			return -1;
		if (!rn->have_f)
			rn->locked = bgp_mono();
		rn->have_f = true;
		/* A route the replaced filter's new array refused (resync) may
		 * have had parts among these: they went with it. */
		for (i = j = 0; i < n; i++)
			if (fb_bgp_refs(&rn->b, &rn->b.add[i]))
				rn->b.add[j++] = rn->b.add[i];
		n = bgp_pend_cancel(rn, rn->b.add, j);
		bgp_bound(rn, &rn->f, rn->b.add, &n);
		/* Named before and after (bgpadded.c); not after: out again. */
		n = bgp_note_adding(rn, rn->b.add, n) ? 0 : n;
		bgp_add_rules(rn, &rn->f, rn->b.add, &n, "this line's rules");
		if (bgp_note_added(rn, rn->b.add, n)) {
			bgp_unadd(rn, &rn->f, rn->b.add, n,
				  "its rules could not be recorded (STATE.added)");
			n = 0;
		}
		for (i = 0; i < n; i++) {
			bgp_change(rn, rn->b.talker, rn->lineno, '+', &rn->b.add[i]);
			rn->added++;
		}
		rn->b.nadd = n;
	}
	if (bgp_queue_dels(rn, rn->lineno, rn->b.talker))
		return -1;
	fb_bgp_done(&rn->b);
	return 0;
}

/* A line of a killed run's journal, applied again as it was (rules shown
 * without a place: stdin's numbers are this run's). */
static int replay_line(void *ctx, const char *line, size_t len, size_t lineno)
{
	struct bgp_run *rn = ctx;

	rn->lineno = 0;
	return fb_bgp_line(&rn->b, line, len, lineno) ? 1 : apply_line(rn);
}

static void release(struct bgp_run *rn)
{
	if (!rn->have_f)
		return;
	fb_store_unlock(&rn->f);
	fb_store_close(&rn->f);
	rn->have_f = false;
}

/* Write the state file, then apply the deletions waiting for it, and
 * release the filter. With nothing to write, only check that the filter
 * array is still ours. Unless forced (the start, the end, --flush), a
 * write waits for its pace (bgppace.c). */
static int commit(struct bgp_run *rn, bool force)
{
	struct fb_store f;
	double cpu0;
	int rc;

	if (!rn->dirty && !rn->npend && !rn->have_f) {
		if (fb_store_open(rn->name, &f))
			return -1;
		rc = f.bits_id == rn->filter_id;
		fb_store_close(&f);
		if (rc)
			return 0; /* the common idle case: no lock needed */
	}
	if (!force && bgp_pace_left(rn) > 0)
		return 0;
	if (!rn->have_f && open_locked(rn, &rn->f, false))
		return -1;
	rn->have_f = true;
	rc = -1;
	bgp_trim_pending(rn);
	cpu0 = bgp_cpu();
	if (!save_state(rn)) {
		bgp_paced(rn, cpu0); /* by the write's CPU, not its deletions' (bgppace.c) */
		bgp_del_pending(rn, &rn->f); /* else they wait: the file still holds them */
		rn->dirty = false;
		rc = 0;
	}
	release(rn);
	return rc;
}

static int parse_opts(int argc, char **argv, struct fb_bgp_opts *o, const char **state, bool *flush,
		      double *ttl)
{
	static const struct option opts[] = {
		{ "ttl", required_argument, NULL, 't' },
		{ "community", required_argument, NULL, 'c' },
		{ "rtbh", required_argument, NULL, 'r' },
		{ "on-session-down", required_argument, NULL, 'd' },
		{ "min-length", required_argument, NULL, 'm' },
		{ "state", required_argument, NULL, 's' },
		{ "flush", no_argument, NULL, 'F' },
		{ "max-paths", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const sides[] = { "dst", "src", NULL };
	static const char *const downs[] = { "keep", "flush", NULL };
	static const int zero_one[] = { 0, 1 };
	unsigned a, v, v4, v6;
	__u64 u;
	int c, n, x;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (sscanf(optarg, "%u:%u%n", &a, &v, &n) != 2 || optarg[n] || a > 65535 ||
			    v > 65535 || optarg[0] == '-')
				return fb_usage("bad community '%s' (want ASN:VALUE, each 0-65535)",
						optarg);
			o->community = a << 16 | v;
			break;
		case 'r':
			if ((x = fb_pick("--rtbh", optarg, sides, zero_one)) < 0)
				return 2;
			o->rtbh_src = x;
			break;
		case 'd':
			if ((x = fb_pick("--on-session-down", optarg, downs, zero_one)) < 0)
				return 2;
			o->flush_on_down = x;
			break;
		case 'm':
			if (sscanf(optarg, "%u,%u%n", &v4, &v6, &n) != 2 || optarg[n] || v4 > 32 ||
			    v6 > 128 || optarg[0] == '-')
				return fb_usage("bad value '%s' for --min-length (want V4,V6: 0-32 "
						"and 0-128)",
						optarg);
			o->min_v4 = v4;
			o->min_v6 = v6;
			break;
		case 's':
			*state = optarg;
			break;
		case 'F':
			*flush = true;
			break;
		case 'p':
			if (fb_parse_u64_range("--max-paths", optarg, 1, BGP_MAX_PATHS_MAX, &u))
				return 2;
			o->max_paths = (size_t)u;
			break;
		case 't':
			if (fb_parse_duration("--ttl", optarg, 1, FB_TTL_MAX, ttl))
				return 2;
			break;
		default:
			return fb_bad_option(c, argv);
		}
	}
	if (argc - optind != 1)
		return fb_usage(argc - optind < 1 ? "missing NAME" : "too many arguments");
	return 0;
}

/* Of keys[0..n), those whose copies end before the next refresh is due
 * (half a lifetime from now, a second to spare): a run started after a
 * stop finds some ended, or ending too soon. Their number. */
static size_t ending(struct bgp_run *rn, struct fb_key *keys, size_t n)
{
	__u64 due = fb_jiffies_after(rn->ttl / 2 + 1);
	struct fb_gen_views gv;
	size_t i, j;

	if (fb_gens_views_open(&rn->f, &gv) < 0)
		return n; /* all of them: a copy too many ends with its lifetime */
	for (i = j = 0; i < n; i++)
		if (bgp_copies_until(&rn->copies, &gv, &keys[i]) < due)
			keys[j++] = keys[i];
	fb_gens_views_close(&gv);
	return j;
}

/* --ttl: every rule held gets its lifetime again, each half lifetime, so
 * it never ends while its route stands; a copy per refresh, in a newer
 * generation each (ttl / 2 > ttl / FB_GEN_DIV). A route whose refresh the
 * filter refuses is refused whole, as an announcement would be, without a
 * line (none caused it): its last copy would end while the state file
 * still said it is in the filter. Its rules' deletions wait for the next
 * state write, as a withdrawal's do, which also records the new copies.
 * only_ending: only the rules ending() keeps (at the start). */
static int refresh_rules(struct bgp_run *rn, bool only_ending)
{
	struct fb_key *keys;
	size_t n, lineno = rn->b.lineno;
	int rc = 0;

	if (!rn->have_f && open_locked(rn, &rn->f, false))
		return -1;
	rn->have_f = true;
	n = fb_bgp_rules(&rn->b, &keys);
	if (only_ending && keys)
		n = ending(rn, keys, n);
	rn->b.lineno = 0;
	rn->b.changed = false;
	bgp_add_rules(rn, &rn->f, keys, &n, "the rules refreshed");
	rn->b.lineno = lineno;
	free(keys);
	/* The state file says where the new copies are (a withdrawal after a
	 * restart deletes them too). */
	rn->dirty |= rn->b.changed || n;
	if (bgp_queue_dels(rn, 0, FB_BGP_NO_PEER))
		rc = -1;
	else
		fb_bgp_done(&rn->b);
	rn->refreshed = bgp_mono();
	release(rn);
	return rc;
}

static int refresh(struct bgp_run *rn)
{
	return refresh_rules(rn, false);
}

int cmd_bgp(int argc, char **argv)
{
	struct fb_bgp_opts o = { .community = FB_BGP_BLACKHOLE,
				 .min_v4 = 24,
				 .min_v6 = 48,
				 .max_paths = BGP_MAX_PATHS };
	char statebuf[PATH_MAX], dir[PATH_MAX], lockname[NAME_MAX + 1], lockpath[PATH_MAX + 8];
	char *slash;
	struct bgp_run rn = { .state_dir = -1, .journal_fd = -1, .done_fd = -1 };
	struct fb_linein rd = { .fd = 0, .max = MAX_LINE + 1 };
	const char *state = NULL;
	struct fb_store f;
	bool flush = false, counting, json = fb_json;
	int rc, lock_fd = -1;

	/* stdout belongs to ExaBGP: a JSON error object there would be read
	 * as a command. Errors go to stderr only; -j is for --flush's report. */
	fb_json = false;
	rc = parse_opts(argc, argv, &o, &state, &flush, &rn.ttl);
	if (rc)
		return rc;
	rn.name = argv[optind];
	if (fb_store_open(rn.name, &f))
		return 1;
	counting = f.cnt_hdr;
	if (rn.ttl > 0 && fb_gens_supported(&f)) {
		fb_store_close(&f);
		return 1;
	}
	fb_store_close(&f);
	if (!counting) {
		fb_err("'%s' is a plain Bloom filter: withdrawals need a counting filter (create "
		       "it with --counting)",
		       rn.name);
		return 1;
	}
	if (!state) {
		if (mkdir("/run/flowbloom", 0700) && errno != EEXIST) {
			fb_err("cannot create /run/flowbloom: %s", strerror(errno));
			return 1;
		}
		snprintf(statebuf, sizeof(statebuf), "/run/flowbloom/%s.bgp", rn.name);
		state = statebuf;
	}
	rn.state = state;
	/* The state file says what to add at start and what we may delete:
	 * it lives in a directory no one but root can write to, reached
	 * without untrusted links (safefile.h), and is read and written only
	 * there. */
	snprintf(dir, sizeof(dir), "%s", state);
	slash = strrchr(dir, '/');
	rn.state_base = slash ? state + (slash - dir) + 1 : state;
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	else
		strcpy(dir, ".");
	if (!*rn.state_base || strlen(rn.state_base) + 5 >= sizeof(lockname)) {
		fb_err("%s: not a file name", state);
		return 1;
	}
	rn.state_dir = fb_safe_opendir(dir);
	if (rn.state_dir < 0)
		return 1;
	/* One process per state file: two would each think they own its rules. */
	snprintf(lockname, sizeof(lockname), "%s.lock", rn.state_base);
	snprintf(lockpath, sizeof(lockpath), "%s.lock", state);
	lock_fd = fb_safe_openat(rn.state_dir, lockname, lockpath, O_RDWR | O_CREAT, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB)) {
		if (lock_fd >= 0)
			fb_err("%s: another flowbloom bgp holds it", lockpath);
		else if (lock_fd == -2)
			fb_err("%s: %s", lockpath, strerror(ENOENT));
		if (lock_fd >= 0)
			close(lock_fd);
		close(rn.state_dir);
		return 1;
	}
	/* Where our rules are recorded, before any reaches the filter: an
	 * intersection of it with another is refused while we hold some. */
	if (!flush && bgp_feeds_record(rn.name, rn.state_dir, rn.state_base)) {
		close(lock_fd);
		close(rn.state_dir);
		return 1;
	}
	rc = 1;
	if (fb_bgp_init(&rn.b, &o))
		goto out; /* said */
	/* A peer's flood of refusals or changes: counted past the first. */
	if (fb_bgp_quiet(&rn.b, BGP_QUIET_SECS, BGP_QUIET_BURST, BGP_CHANGE_BURST))
		goto out;
	rn.in_gens = rn.ttl > 0;
	rn.flush = flush;
	rn.copies.hkey = rn.b.hkey;
	/* Deletions a killed run's last write allowed, first: due since. */
	if (load_state(&rn) || bgp_open_deleted(&rn) || bgp_open_added(&rn) ||
	    bgp_recover_deleting(&rn) || bgp_recover_added(&rn) || bgp_open_journal(&rn))
		goto out;
	/* Held in the other part (--ttl changed): moved at the first commit. */
	rn.dirty |= rn.in_gens != (rn.ttl > 0);
	/* Paths the state file holds that the limits refuse now (--max-paths
	 * among them): their rules leave the filter (after the state file is
	 * rewritten without them). */
	if ((rn.b.ndel || rn.b.refused_paths) && apply_line(&rn))
		goto out;
	/* What a killed run read after its last write: applied again, so this
	 * run holds what it held (ExaBGP does not send it again). --flush
	 * deletes every rule either way, and empties the journal. */
	if (!flush && bgp_replay_journal(&rn, MAX_LINE, replay_line))
		goto out;
	if (flush) {
		fb_bgp_remove_all(&rn.b);
		if (apply_line(&rn) || commit(&rn, true) || bgp_pending_left(&rn))
			goto out;
		if (json) {
			jw_obj_open(NULL);
			jw_str("filter", rn.name);
			jw_u64("deleted", rn.deleted);
			jw_obj_close();
			jw_end();
		} else {
			printf("deleted %llu rule%s of filter '%s' that bgp had added\n",
			       (unsigned long long)rn.deleted, rn.deleted == 1 ? "" : "s", rn.name);
		}
		rc = 0;
		goto out;
	}
	/* Rules of a previous run are in the filter, unless it changed since. */
	if (commit(&rn, true))
		goto out;
	bgp_say("filter '%s': %zu rule%s held from %s; community %u:%u, RTBH %s rules, on session "
		"down %s, at most %zu paths%s",
		rn.name, rn.b.nrules, rn.b.nrules == 1 ? "" : "s", state, o.community >> 16,
		o.community & 0xffff, o.rtbh_src ? "src" : "dst",
		o.flush_on_down ? "flush" : "keep", o.max_paths,
		rn.ttl > 0 ? ", rules with a lifetime (refreshed while held)" : "");
	/* After a stop longer than the copies last, the held routes' rules
	 * get a copy now, not half a lifetime later. */
	if (rn.ttl > 0 && rn.b.nrules && refresh_rules(&rn, true))
		goto out;
	rn.refreshed = bgp_mono();
	fb_catch_interrupt();
	while (!fb_interrupted()) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		size_t used, len;
		char *line;
		int r;

		while ((line = fb_linein_next(&rd, &used, &len))) {
			rn.lineno++;
			if (rd.skip) {
				rd.skip = 0; /* the tail of an over-long line */
			} else if (!fb_bgp_line(&rn.b, line, len, rn.lineno)) {
				/* Journaled first: a kill after it reached
				 * the filter does not lose it. */
				bgp_journal_line(&rn, line, len);
				if (apply_line(&rn))
					goto out;
			}
			fb_linein_consume(&rd, used);
		}
		fb_bgp_note_due(&rn.b, false);
		if (rd.eof)
			break;
		/* Commit when the input pauses, and at least twice a second
		 * while it flows (a full table at session start), each paced. */
		r = poll(&pfd, 1, 0);
		if (r == 0 || bgp_mono() - rn.committed >= 0.5) {
			if ((rn.dirty || rn.npend) && commit(&rn, false))
				goto out;
			/* A write waiting for its pace: the filter's lock is
			 * held no longer than before, half a second at most. */
			if (rn.have_f && (r == 0 || bgp_mono() - rn.locked >= 0.5))
				release(&rn);
		}
		if (rn.ttl > 0 && bgp_mono() >= rn.refreshed + rn.ttl / 2 && refresh(&rn))
			goto out;
		if (r == 0) {
			/* A second, or until the next refresh if sooner. */
			double wait = rn.ttl > 0 ? rn.refreshed + rn.ttl / 2 - bgp_mono() : 1;

			r = poll(&pfd, 1, bgp_pace_poll_ms(&rn, wait));
		}
		if (r < 0 && errno != EINTR) {
			fb_err("poll: %s", strerror(errno));
			goto out;
		}
		if (r == 0) {
			/* Idle: a replaced filter gets our rules back within a
			 * second, not at the next route. */
			if (commit(&rn, false))
				goto out;
			continue;
		}
		if (r > 0) {
			r = fb_linein_fill(&rd);
			if (r < 0) {
				fb_err("reading stdin: %s", strerror(errno));
				goto out;
			}
			if (r > 0) {
				/* Once a line, however many buffers it fills. */
				if (!rd.skip)
					fb_bgp_note(&rn.b, FB_BGP_SKIPPED, rn.lineno + 1,
						    "line longer than %u bytes; skipped", MAX_LINE);
				rd.len = 0;
				rd.skip = 1;
			}
		}
	}
	if ((rn.dirty || rn.npend) && commit(&rn, true))
		goto out;
	bgp_pending_left(&rn);
	fb_bgp_note_due(&rn.b, true);
	bgp_say("%s; %zu rule%s held, %llu added and %llu deleted by this run, %zu path%s held, "
		"%zu route%s refused past --max-paths %zu, state in %s",
		rd.eof ? "end of input" : "stopped", rn.b.nrules, rn.b.nrules == 1 ? "" : "s",
		(unsigned long long)rn.added, (unsigned long long)rn.deleted, rn.b.npaths,
		rn.b.npaths == 1 ? "" : "s", rn.b.refused_paths, rn.b.refused_paths == 1 ? "" : "s",
		o.max_paths, state);
	rc = 0;
out:
	fb_bgp_note_due(&rn.b, true);
	release(&rn);
	free(rn.pend);
	free(rn.pix);
	bgp_copies_free(&rn.copies);
	if (rn.added_fp)
		fclose(rn.added_fp);
	if (rn.journal_fd >= 0)
		close(rn.journal_fd);
	if (rn.done_fd >= 0)
		close(rn.done_fd);
	fb_bgp_free(&rn.b);
	free(rd.buf);
	close(lock_fd);
	close(rn.state_dir);
	return rc;
}
