// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom bgp`'s STATE.deleted (bgprun.h): the deletions a state write
 * allowed, noted as each is started, so that a run killed among them has
 * the next one apply the others, and none twice.
 *
 * A withdrawn route's rule leaves the filter once the state file no longer
 * names its path (a kill before leaves the file naming a rule in the
 * filter, never the other way round). Then the file is written, STATE.added
 * and the journal emptied, and the deletions applied: a run killed in
 * between left the withdrawn routes' rules in the filter, named in no file
 * (ExaBGP does not send the withdrawal again): blackholes for good. So the
 * state file lists them ("# delete" lines, bgp_save_deleting), and each is
 * noted here, "COMMIT<TAB>INDEX" (the state file's commit, the line's place
 * among them), before it is applied: none is applied twice (a second
 * deletion on a counting filter takes counts from other rules' bits: their
 * flows pass). One that failed and deleted nothing (an exact set's error)
 * is noted "COMMIT<TAB>INDEX<TAB>again". Emptied at each state write (a
 * kill before leaves notes of an older commit, skipped).
 *
 * Noted only before, a kill between the note and the deletion left that
 * rule in the filter, named nowhere: a withdrawn route's blackhole for
 * good (a peer flapping fresh routes had its deletions noted and applied
 * by the thousand, and a SIGKILL in the middle left one). So a permanent
 * copy's note also says the smallest of the rule's counters then,
 * "COMMIT<TAB>INDEX<TAB>~MIN", as STATE.added's notes do (bgpadded.c). Only
 * the last note can be of a deletion a kill cut off: the others are
 * followed by the next one's note, or the run went on to add the next
 * lines' rules (STATE.added names rules of the next commit). For it, the
 * next run reads the counters: a deletion applied lowered each one (one
 * a kill cut half way is rolled back when the filter is locked,
 * types/counting.h), so its smallest is below MIN (MIN saturated, or 0:
 * the deletion changes nothing). Not applied, it is applied then, before
 * the others. Copies with a lifetime are noted without: a copy a kill
 * left ends with its lifetime.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bgprun.h"
#include "output.h"
#include "rules/flow.h"
#include "safefile.h"
#include "store/gens.h"
#include "store/store.h"
#include "types/counting.h"

#define DELETE_LINE "# delete\t"

int bgp_open_deleted(struct bgp_run *rn)
{
	char label[PATH_MAX + 16];
	int fd = bgp_open_beside(rn, "deleted", label, sizeof(label));

	if (fd < 0)
		return -1;
	rn->done_fd = fd;
	return 0;
}

int bgp_note_deleting(struct bgp_run *rn, long ix, bool again, long min)
{
	char line[80];
	int n = again	   ? snprintf(line, sizeof(line), "%llu\t%ld\tagain\n", rn->commits, ix)
		: min >= 0 ? snprintf(line, sizeof(line), "%llu\t%ld\t~%ld\n", rn->commits, ix, min)
			   : snprintf(line, sizeof(line), "%llu\t%ld\n", rn->commits, ix);
	struct stat st;
	ssize_t w;

	if (rn->done_fd < 0)
		return 0;
	do
		w = write(rn->done_fd, line, (size_t)n);
	while (w < 0 && errno == EINTR);
	if (w == n)
		return 0;
	/* A full disk: a part written goes (the next note would run into
	 * it), and the deletion is not started. */
	n = w < 0 ? errno : ENOSPC;
	if (w > 0 && !fstat(rn->done_fd, &st) && st.st_size >= w)
		(void)!ftruncate(rn->done_fd, st.st_size - w);
	if (!rn->done_said && !again)
		bgp_say("cannot write %s.deleted: %s: the deletions the last write of %s allows "
			"wait for the next commit",
			rn->state, strerror(n), rn->state);
	rn->done_said = true;
	return -1;
}

void bgp_deleted_empty(struct bgp_run *rn)
{
	if (rn->done_fd >= 0 && ftruncate(rn->done_fd, 0))
		bgp_say("cannot empty %s.deleted: %s", rn->state, strerror(errno));
}

/* The notes of the state file's commit into started[0..n) (1: started, 0:
 * not, or failed); a last line a kill cut short goes. *last: the index of
 * the last note if it says a permanent copy's smallest counter (*min), its
 * deletion maybe cut off by a kill; else -1. 0, or -1 reported. */
static int read_notes(struct bgp_run *rn, unsigned char *started, size_t n, long *last,
		      unsigned long *min)
{
	char *line = NULL;
	unsigned long long c;
	size_t cap = 0, lineno = 0;
	off_t whole = 0;
	ssize_t len;
	bool torn = false;
	unsigned long m = 0;
	long ix;
	int fd = dup(rn->done_fd), used, used2;
	FILE *fp = fd < 0 ? NULL : fdopen(fd, "r");

	*last = -1;

	if (!fp) {
		fb_err("%s.deleted: %s", rn->state, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewind(fp);
	while ((len = getline(&line, &cap, fp)) > 0) {
		if (line[len - 1] != '\n') {
			torn = true; /* cut short: not written, so not started */
			break;
		}
		whole += len;
		lineno++;
		line[len - 1] = 0;
		used = used2 = 0;
		if (sscanf(line, "%llu\t%ld%n", &c, &ix, &used) != 2 || ix < 0 ||
		    (line[used] && strcmp(line + used, "\tagain") &&
		     (line[used] != '\t' || line[used + 1] != '~' ||
		      sscanf(line + used + 2, "%lu%n", &m, &used2) != 1 ||
		      line[used + 2 + used2]))) {
			bgp_say("%s.deleted:%zu: not COMMIT<TAB>INDEX; skipped", rn->state, lineno);
			continue;
		}
		if (c != rn->commits)
			continue;
		if ((size_t)ix < n)
			started[ix] = !line[used] || used2;
		*last = used2 && (size_t)ix < n ? ix : -1;
		*min = m;
	}
	free(line);
	fclose(fp);
	/* The notes go on after the whole lines. */
	if (torn && ftruncate(rn->done_fd, whole))
		bgp_say("cannot cut %s.deleted back: %s", rn->state, strerror(errno));
	return 0;
}

/* "G:EXPIRES:N,...": the copies out of the live generations of those
 * identities, N at most each (fewer if fewer are left): how many deleted;
 * -1 malformed. */
static int del_copies(struct fb_store *f, struct fb_gen_views *gv, bool *views,
		      const struct fb_key *k, const char *s)
{
	unsigned long long e;
	unsigned g, c, j;
	int n = 0, used, v, pass;
	const char *p;

	if (!*views) {
		if (fb_gens_views_open(f, gv) < 0)
			return 0; /* reported: left to end with their lifetime */
		*views = true;
	}
	/* Read whole first: a malformed list deletes nothing. */
	for (pass = 0; pass < 2; pass++)
		for (p = s; *p; p += used + (p[used] == ',')) {
			if (sscanf(p, "%u:%llu:%u%n", &g, &e, &c, &used) != 3 ||
			    g >= FB_GEN_SLOTS || (p[used] && p[used] != ','))
				return -1;
			for (v = 0; pass && v < gv->n; v++)
				if (gv->g[v].g == g && gv->g[v].expires == e)
					for (j = 0; j < c && !fb_counting_del(&gv->v[v], k); j++)
						n++;
		}
	return n;
}

/* One "# delete" line's text after DELETE_LINE: its rule into k, what to
 * delete (*copies: NULL, one permanent copy; else the copies in the
 * generations), *said: a deletion to show. 0, or -1 malformed. */
static int parse(char *s, struct fb_key *k, char **copies, bool *said)
{
	char *rule = strchr(s, '\t'), err[256];
	int blank;

	if (!rule)
		return -1;
	*rule++ = 0;
	*copies = strchr(rule, '\t');
	if (*copies)
		*(*copies)++ = 0;
	if (fb_flow_parse_line(rule, k, &blank, err, sizeof(err)) || blank)
		return -1;
	*said = !strcmp(s, "rule") || !strcmp(s, "copies");
	if (!*copies)
		return strcmp(s, "rule") && strcmp(s, "moved") ? -1 : 0;
	return strcmp(s, "copies") && strcmp(s, "moved-copies") ? -1 : 0;
}

/* Apply it: 0 deleted, 1 nothing to delete, -2 failed (nothing deleted),
 * -1 malformed. A permanent copy only in the permanent rules the state
 * file names (perm_id: another array's went with the one it was in, unless
 * load --replace --ttl carried them over). */
static int apply(struct bgp_run *rn, struct fb_store *f, struct fb_gen_views *gv, bool *views,
		 const struct fb_key *k, const char *copies)
{
	int r;

	if (copies) {
		r = del_copies(f, gv, views, k, copies);
		return r < 0 ? -1 : !r;
	}
	if (f->perm_id != rn->perm_id)
		return 1;
	r = bgp_del_permanent(f, k);
	return r == -1 ? 1 : r;
}

/* The state file for reading: only our own (fb_safe_openat: root's, in
 * the trusted directory, no link). 1 and *fp; 0 if there is none; -1
 * said. */
int bgp_state_fopen(struct bgp_run *rn, FILE **fp)
{
	int fd = fb_safe_openat(rn->state_dir, rn->state_base, rn->state, O_RDONLY, 0);

	if (fd == -2)
		return 0;
	if (fd < 0 || !(*fp = fdopen(fd, "r"))) {
		if (fd >= 0) {
			fb_err("cannot read %s: %s", rn->state, strerror(errno));
			close(fd);
		}
		return -1;
	}
	return 1;
}

int bgp_state_head_read(FILE *fp, struct bgp_state_head *h)
{
	char line[256];

	memset(h, 0, sizeof(*h));
	if (!fgets(line, sizeof(line), fp) ||
	    sscanf(line, "# filter %64s array-id %u", h->name, &h->array_id) != 2)
		return 0;
	if (sscanf(line, "# filter %*s array-id %*u rules %*s commit %llu", &h->commits) != 1)
		h->commits = 0;
	if (sscanf(line, "# filter %*s array-id %*u rules %15s", h->part) != 1)
		h->part[0] = 0;
	h->has_perm = fgets(line, sizeof(line), fp) &&
		      sscanf(line, "# permanent-id %u", &h->perm_id) == 1;
	return 1;
}

/* The state file's deletion ix, the last noted (min: its smallest counter
 * then), maybe cut off by a kill: was it applied? Yes if the run went on
 * to add rules (STATE.added names some of the next commit), if the filter's
 * permanent rules are others now (it went with them), or if the counters
 * say so (bgpdeleted.c's head). fp: the state file, f open and locked. */
static bool applied(struct bgp_run *rn, FILE *fp, struct fb_store *f, long ix, unsigned long min)
{
	char *line = NULL, *copies;
	size_t cap = 0;
	long i = 0;
	bool said, yes = true;
	struct fb_key k;

	if (bgp_added_since(rn) || f->perm_id != rn->perm_id || !min || min >= fb_counting_max(f))
		return true;
	rewind(fp);
	while (getline(&line, &cap, fp) > 0) {
		if (strncmp(line, DELETE_LINE, strlen(DELETE_LINE)) || i++ != ix)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (!parse(line + strlen(DELETE_LINE), &k, &copies, &said) && !copies)
			yes = fb_counting_min(f, &k) < min;
		break;
	}
	free(line);
	return yes;
}

int bgp_recover_deleting(struct bgp_run *rn)
{
	struct fb_gen_views gv;
	unsigned char *started = NULL;
	char *line = NULL;
	size_t cap = 0, n = 0, i = 0, lineno = 0, napplied = 0;
	unsigned long min = 0;
	long last;
	bool views = false, said, unnoted = false;
	char *copies;
	struct fb_store f;
	struct fb_key k;
	ssize_t len;
	FILE *fp;
	int r, rc = -1;

	r = bgp_state_fopen(rn, &fp);
	if (r <= 0)
		return r;
	while (getline(&line, &cap, fp) > 0)
		n += !strncmp(line, DELETE_LINE, strlen(DELETE_LINE));
	if (!n) {
		rc = 0;
		goto out;
	}
	if (!(started = calloc(n, 1))) {
		fb_err("out of memory");
		goto out;
	}
	if (read_notes(rn, started, n, &last, &min))
		goto out;
	for (i = 0; i < n && started[i]; i++)
		;
	if (i == n && (last < 0 || bgp_added_since(rn))) {
		rc = 0; /* all of them started and applied: the run that wrote it went on */
		goto out;
	}
	if (fb_store_open(rn->name, &f))
		goto out;
	if (fb_store_lock(&f)) {
		fb_store_close(&f);
		goto out;
	}
	/* The last one noted, first: before others lower its counters. */
	if (last >= 0 && !applied(rn, fp, &f, last, min))
		started[last] = 0;
	rewind(fp);
	i = 0;
	rc = -2; /* 0 at the end, unless out of memory */
	while ((len = getline(&line, &cap, fp)) > 0) {
		lineno++;
		if (strncmp(line, DELETE_LINE, strlen(DELETE_LINE)))
			continue;
		if (started[i++])
			continue;
		line[strcspn(line, "\n")] = 0;
		if (parse(line + strlen(DELETE_LINE), &k, &copies, &said)) {
			bgp_say("%s:%zu: malformed deletion; skipped", rn->state, lineno);
			continue;
		}
		/* Noted first: a kill before it is applied leaves it over. Not
		 * noted (said): a permanent copy's deletion waits for the next
		 * commit, listed and noted then; copies end with their
		 * lifetime. */
		if (unnoted || (unnoted = bgp_note_deleting(rn, (long)(i - 1), false,
							    !copies && f.perm_id == rn->perm_id
								    ? (long)fb_counting_min(&f, &k)
								    : -1))) {
			if (!copies && f.perm_id == rn->perm_id && bgp_queue_del(rn, &k)) {
				rc = -1;
				break;
			}
			continue;
		}
		r = apply(rn, &f, &gv, &views, &k, copies);
		if (r == -1) {
			bgp_say("%s:%zu: malformed deletion; skipped", rn->state, lineno);
			continue;
		}
		if (r == -2) {
			/* Nothing deleted: tried again at the next commit. */
			bgp_note_deleting(rn, (long)(i - 1), true, -1);
			bgp_show(0, '?', &k,
				 ": could not be deleted now; tried again at the next "
				 "commit");
			if (bgp_queue_del(rn, &k)) {
				rc = -1;
				break;
			}
			continue;
		}
		napplied += !r;
		if (!r && said) {
			bgp_change(rn, FB_BGP_NO_PEER, 0, '-', &k);
			rn->deleted++;
		}
	}
	if (views)
		fb_gens_views_close(&gv);
	fb_store_unlock(&f);
	fb_store_close(&f);
	if (napplied)
		bgp_say("%zu deletion%s due after the last write of %s, not applied by the run "
			"that wrote it: applied",
			napplied, napplied == 1 ? "" : "s", rn->state);
	rc = rc == -2 ? 0 : rc;
out:
	free(started);
	free(line);
	fclose(fp);
	return rc;
}
