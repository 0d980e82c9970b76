// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom bgp`'s STATE.added (bgprun.h): the permanent rules a run
 * added since its last state write, deleted by the next run if this one
 * was killed before it wrote the state file again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bgprun.h"
#include "output.h"
#include "rules/flow.h"
#include "report.h"
#include "safefile.h"
#include "types/counting.h"

/*
 * STATE.added: the permanent rules added to the filter since the state
 * file was last written, named twice, "COMMIT<TAB>ARRAY-ID<TAB>~AT:MIN<TAB>RULE"
 * before the line's rules reach the filter (AT: where the line's first
 * is in the file, MIN: the smallest of the rule's counters then) and "COMMIT<TAB>ARRAY-ID<TAB>RULE" once they are in it
 * (COMMIT: the state write that will name them; ARRAY-ID: the identity of
 * the permanent rules they are in, the filter array's or the one load
 * --replace --ttl carried over, store.h perm_id), emptied once the state
 * file names them. Additions reach the filter as their line is read and
 * the state file is written at most every half second: a run killed in
 * between (SIGKILL, a crash: ExaBGP starts another) left up to half a
 * second of a full table in the filter, named nowhere, and a withdrawal of
 * their routes to the next run deleted nothing: blackholes for good.
 * Rules with a lifetime end by themselves.
 *
 * Named only after the addition, a kill between the two left the line's
 * rules in the filter and named nowhere: the journal's line, applied
 * again, added them a second time (count 2) and their route's withdrawal
 * deleted one, the blackhole kept dropping. Named only before, a kill
 * between would have the next run delete a rule that was not added (its
 * counters someone else's). So the next run tells the last line's rules
 * named before and not after by their counters: a rule added raised each
 * of them (an addition a kill cut half way is rolled back when the filter
 * is locked, types/counting.h), so its smallest counter is past MIN (or
 * MIN saturated: it never moves, and a deletion leaves it so).
 */
static int note(struct bgp_run *rn, const struct fb_key *keys, size_t n, bool before)
{
	char text[FB_FLOW_STR], min[48];
	int fd, err;
	off_t at;
	size_t i;

	if (!rn->added_fp || rn->ttl > 0 || !n)
		return 0;
	fd = fileno(rn->added_fp);
	at = lseek(fd, 0, SEEK_END);
	err = 0;
	for (i = 0; i < n; i++) {
		fb_flow_format(&keys[i], text, sizeof(text));
		min[0] = 0;
		if (before)
			snprintf(min, sizeof(min), "~%lld:%u\t", (long long)at,
				 fb_counting_min(&rn->f, &keys[i]));
		if (fprintf(rn->added_fp, "%llu\t%u\t%s%s\n", rn->commits + 1, rn->f.perm_id, min,
			    text) < 0 &&
		    !err)
			err = errno;
	}
	/* A write that failed while the lines were put (the buffer filled)
	 * had stdio drop what it held, though the flush of the rest may
	 * succeed: the file would name the line's last rules only. */
	if (!fflush(rn->added_fp) && !err && !ferror(rn->added_fp))
		return 0;
	/* Not named (a full disk): what did not reach the file never will
	 * (a later write would name rules the caller takes out again), and a
	 * line cut short goes. */
	if (!err)
		err = errno ? errno : EIO;
	__fpurge(rn->added_fp);
	clearerr(rn->added_fp);
	if (at >= 0 && ftruncate(fd, at))
		bgp_say("cannot cut %s.added back: %s", rn->state, strerror(errno));
	bgp_say("cannot write %s.added: %s: the line's rules are %s", rn->state, strerror(err),
		before ? "not added" : "taken out again");
	return -1;
}

int bgp_note_adding(struct bgp_run *rn, const struct fb_key *keys, size_t n)
{
	size_t i;

	if (!note(rn, keys, n, true))
		return 0;
	for (i = 0; i < n; i++)
		fb_bgp_refused(&rn->b, &keys[i], "its rules could not be recorded (STATE.added)",
			       NULL);
	return -1;
}

int bgp_note_added(struct bgp_run *rn, const struct fb_key *keys, size_t n)
{
	return note(rn, keys, n, false);
}

/* The last line's rules named before their addition (maybe[0..n), with
 * their smallest counter then) and not after: those its counters say were
 * added join the others. 0, or -1 out of memory. */
static int recover_maybe(struct bgp_run *rn, const struct fb_key *maybe, const unsigned *min,
			 size_t n)
{
	struct fb_store f;
	size_t i;
	int rc = 0;

	if (!n || fb_store_open(rn->name, &f))
		return 0; /* not opened (said): the first commit says it again */
	if (fb_store_lock(&f)) {
		fb_store_close(&f);
		return 0;
	}
	for (i = 0; i < n && !rc; i++) {
		if (!f.cnt_hdr || f.perm_id != rn->perm_id ||
		    (fb_counting_min(&f, &maybe[i]) <= min[i] && min[i] < fb_counting_max(&f)))
			continue;
		rc = bgp_queue_del(rn, &maybe[i]);
		if (!rc)
			rn->pend[rn->npend - 1].added = true;
	}
	fb_store_unlock(&f);
	fb_store_close(&f);
	return rc;
}

/* At start: the rules a killed run added after its last state write
 * (COMMIT past the state file's), into the permanent rules the state file
 * names, are deleted from them once the state file is written again, as
 * withdrawn rules are (a path the state file holds keeps its own copy: a
 * rule is added only while no path holds it). In other permanent rules
 * (another array's not carried over) they went with the ones they were
 * added to. Said once deleted (bgp_del_pending): a line of the journal
 * may announce one again, or the filter array have changed since. */
int bgp_recover_added(struct bgp_run *rn)
{
	char *line = NULL, err[256];
	unsigned long long c;
	size_t cap = 0, i, nmaybe = 0, capmaybe = 0;
	struct fb_key k, *maybe = NULL;
	unsigned id, min = 0, *mins = NULL;
	long long at, group = -1;
	int used, blank, rc = 0;

	rewind(rn->added_fp);
	while (getline(&line, &cap, rn->added_fp) > 0) {
		bool before;

		/* A line a kill cut short was not ended: not applied (the
		 * rules are written once added), skipped. */
		if (!strchr(line, '\n'))
			break;
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%llu\t%u\t%n", &c, &id, &used) != 2 || c <= rn->commits ||
		    !rn->perm_id || id != rn->perm_id)
			continue;
		before = line[used] == '~';
		if (before) {
			char *tab;

			at = strtoll(line + used + 1, &tab, 10);
			if (*tab == ':')
				min = (unsigned)strtoul(tab + 1, &tab, 10);
			if (*tab != '\t')
				continue;
			used = (int)(tab + 1 - line);
		}
		if (fb_flow_parse_line(line + used, &k, &blank, err, sizeof(err)) || blank)
			continue;
		if (before) {
			/* A line's rules named before: those of the last
			 * line that named some are the only ones a kill can
			 * have left unnamed after; the others' were refused or
			 * taken out again. */
			if (at != group)
				nmaybe = 0;
			group = at;
			if (nmaybe == capmaybe) {
				size_t nc = capmaybe ? 2 * capmaybe : 64;
				struct fb_key *m = realloc(maybe, nc * sizeof(*m));
				unsigned *mm = m ? realloc(mins, nc * sizeof(*mm)) : NULL;

				if (m)
					maybe = m;
				if (!mm) {
					fb_err("out of memory");
					rc = -1;
					break;
				}
				mins = mm;
				capmaybe = nc;
			}
			maybe[nmaybe] = k;
			mins[nmaybe++] = min;
			continue;
		}
		/* Named after: added. Not among the maybes any more. */
		for (i = 0; i < nmaybe; i++)
			if (!memcmp(&maybe[i], &k, sizeof(k))) {
				maybe[i] = maybe[--nmaybe];
				mins[i] = mins[nmaybe];
				break;
			}
		if (bgp_queue_del(rn, &k)) {
			rc = -1;
			break;
		}
		rn->pend[rn->npend - 1].added = true;
	}
	/* The last line's named before and not after: a kill between, or
	 * refused (the counters tell). */
	if (!rc && recover_maybe(rn, maybe, mins, nmaybe))
		rc = -1;
	free(maybe);
	free(mins);
	free(line);
	fseek(rn->added_fp, 0, SEEK_END); /* from reading to appending */
	return rc;
}

bool bgp_added_since(struct bgp_run *rn)
{
	unsigned long long c;
	char *line = NULL, *end;
	size_t cap = 0;
	bool any = false;

	if (!rn->added_fp)
		return false;
	rewind(rn->added_fp);
	while (!any && getline(&line, &cap, rn->added_fp) > 0) {
		c = strtoull(line, &end, 10);
		any = end != line && *end == '\t' && c > rn->commits;
	}
	free(line);
	fseek(rn->added_fp, 0, SEEK_END); /* from reading to appending */
	return any;
}

/* A state file of an earlier build names no permanent rules' identity:
 * that of the array it names. But an earlier bgp's writes leave the head as
 * they find it, so that array's permanent rules may carry an older one
 * (load --replace --ttl before it ran): if it is the filter's array, they
 * are the permanent rules it holds, whatever identity they carry (a later
 * load --replace --ttl keeps it: taken for other rules, ours were added
 * again beside themselves, and a withdrawal left the route blocked). */
void bgp_perm_of_array(struct bgp_run *rn)
{
	struct fb_store f;
	bool quiet = fb_report_quiet;

	fb_report_quiet = true; /* not opened: the first open says why */
	if (!fb_store_open(rn->name, &f)) {
		if (f.bits_id == rn->filter_id)
			rn->perm_id = f.perm_id;
		fb_store_close(&f);
	}
	fb_report_quiet = quiet;
}

int bgp_open_beside(struct bgp_run *rn, const char *suffix, char *label, size_t len)
{
	char name[NAME_MAX + 1];
	int fd;

	if (snprintf(name, sizeof(name), "%s.%s", rn->state_base, suffix) >= (int)sizeof(name)) {
		fb_err("%s: name too long for %s.%s beside it", rn->state, rn->state, suffix);
		return -1;
	}
	snprintf(label, len, "%s.%s", rn->state, suffix);
	fd = fb_safe_openat(rn->state_dir, name, label, O_RDWR | O_CREAT | O_APPEND, 0600);
	if (fd == -2)
		fb_err("%s: %s", label, strerror(ENOENT));
	return fd < 0 ? -1 : fd;
}

int bgp_open_added(struct bgp_run *rn)
{
	char label[PATH_MAX + 16];
	int fd = bgp_open_beside(rn, "added", label, sizeof(label));

	if (fd < 0)
		return -1;
	rn->added_fp = fdopen(fd, "a+");
	if (!rn->added_fp) {
		fb_err("%s: %s", label, strerror(errno));
		close(fd);
		return -1;
	}
	return 0;
}
