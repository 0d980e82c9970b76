// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Whether `flowbloom bgp` holds rules in a filter's permanent rules, for
 * the verbs that would replace them with others derived from them (bgprun.h,
 * bgp_feeds). bgp adds its rules again to a filter array whose permanent
 * rules are not the ones it wrote into (store.h, perm_id): right after a
 * load --replace, whose rules are the operator's, but after an
 * intersection of the filter with another, a rule of bgp's in both is in
 * the result already, as bgp's own copy; added again, it is counted twice,
 * and the route's withdrawal leaves it blocking. bgp cannot tell its copy
 * from one of the other filter's (a counting filter's intersection keeps
 * the smaller count), so the verb is refused instead.
 *
 * The state files looked at are bgp's default, /run/flowbloom/NAME.bgp,
 * and every one a bgp of the filter was started with (--state FILE
 * anywhere): each bgp run records its state file's absolute path in
 * /run/flowbloom/bgp-NAME.feeds (bgp-NAME-HASH.feeds under another
 * FLOWBLOOM_ROOT, HASH as apply's lock names it) before it touches the
 * filter, so a stopped bgp's file is found too. The record is root's,
 * 0600, never reached through a link, rewritten whole (safefile.h) under
 * a lock on its directory when it changes, and keeps only the files that
 * still exist.
 * It only says where to look: each file is read as bgp would read it (a
 * root-only directory, no link, root's file), its first line naming the
 * filter and where the rules are ("rules permanent"), the second their
 * permanent rules' identity; it must hold a path, or STATE.added name
 * rules added since it was written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bgprun.h"
#include "cmd.h"
#include "output.h"
#include "report.h"
#include "safefile.h"
#include "store/pintree.h"
#include "store/store.h"

#define STATE_DIR "/run/flowbloom"
#define FEEDS_MAX (1 << 20) /* bytes of the record read: 4,000 paths and more */

/* The record's name in STATE_DIR: one per filter of one pin root, as
 * apply's lock. */
static void feeds_name(const char *name, char *file, size_t len)
{
	fb_run_file("bgp", name, "feeds", file, len);
}

/* The record's text (at most FEEDS_MAX bytes), NUL-terminated, from the
 * trusted directory dir: malloc'ed, or NULL (none, or not ours). */
static char *feeds_read(int dir, const char *file)
{
	char *buf;
	ssize_t n;
	size_t len = 0;
	int fd;

	fd = fb_safe_openat(dir, file, file, O_RDONLY, 0);
	if (fd < 0)
		return NULL;
	buf = malloc(FEEDS_MAX + 1);
	while (buf && len < FEEDS_MAX && (n = read(fd, buf + len, FEEDS_MAX - len)) > 0)
		len += n;
	close(fd);
	if (buf)
		buf[len] = 0;
	return buf;
}

int bgp_feeds_record(const char *name, int state_dir, const char *base)
{
	char dirpath[PATH_MAX], path[PATH_MAX], file[FB_NAME_MAX + 40], label[sizeof(file) + 16];
	char *old = NULL, *line, *next;
	struct fb_safefile sf;
	bool found = false, stale;
	struct stat st;
	int dir = -1, rc = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", state_dir);
	n = readlink(path, dirpath, sizeof(dirpath) - 1);
	if (n <= 0 || dirpath[0] != '/') {
		fb_err("cannot tell where the state file %s is: %s", base,
		       n < 0 ? strerror(errno) : "not a path");
		return -1;
	}
	dirpath[n] = 0;
	if (snprintf(path, sizeof(path), "%s/%s", n > 1 ? dirpath : "", base) >=
		    (int)sizeof(path) ||
	    strchr(path, '\n')) {
		fb_err("%s/%s: not a path the record of bgp's state files can hold", dirpath, base);
		return -1;
	}
	feeds_name(name, file, sizeof(file));
	snprintf(label, sizeof(label), "%s/%s", STATE_DIR, file);
	if (mkdir(STATE_DIR, 0700) && errno != EEXIST) {
		fb_err("cannot create %s: %s", STATE_DIR, strerror(errno));
		return -1;
	}
	dir = fb_safe_opendir(STATE_DIR);
	if (dir < 0)
		return -1;
	/* Two bgp runs of the filter start at once: one rewrite after the other. */
	if (flock(dir, LOCK_EX)) {
		fb_err("cannot lock %s: %s", STATE_DIR, strerror(errno));
		goto out;
	}
	old = feeds_read(dir, file);
	/* Rewritten only when this file is new to it or another is gone. */
	for (line = old; line && *line; line = next + 1) {
		next = strchr(line, '\n');
		if (!next || line[0] != '/')
			break;
		*next = 0;
		stale = strcmp(line, path) ? lstat(line, &st) != 0 : !(found = true);
		*next = '\n';
		if (stale)
			break;
	}
	if (found && line && !*line) {
		rc = 0;
		goto out;
	}
	if (fb_safefile_openat(&sf, dir, file, label, 0600))
		goto out;
	fprintf(sf.out, "%s\n", path);
	for (line = old; line && *line; line = next) {
		next = strchr(line, '\n');
		if (!next)
			break; /* cut: not ours */
		*next++ = 0;
		/* Kept while the file is there (a stopped bgp's holds its rules). */
		if (line[0] == '/' && strcmp(line, path) && !lstat(line, &st))
			fprintf(sf.out, "%s\n", line);
	}
	rc = fb_safefile_commit(&sf) ? -1 : 0;
out:
	if (rc)
		fb_err("%s: cannot record %s there, where `intersect %s OTHER --into %s` looks for "
		       "bgp's rules; not started",
		       label, path, name, name);
	free(old);
	close(dir);
	return rc;
}

/* Does the state file base in directory dirpath (label: its path) say
 * that bgp holds rules in filter name's permanent rules as they are now? */
static int feeds_one(const char *name, const char *dirpath, const char *base, const char *label)
{
	struct bgp_state_head h;
	struct fb_store f;
	char line[512];
	int dir, fd, rc = 0;
	struct stat st;
	FILE *fp = NULL;
	__u32 perm;

	dir = fb_safe_opendir(dirpath);
	if (dir < 0)
		return 0;
	fd = fb_safe_openat(dir, base, label, O_RDONLY, 0);
	close(dir);
	if (fd < 0 || !(fp = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	/* Without "rules", a file of an earlier build: taken to be permanent. */
	if (!bgp_state_head_read(fp, &h) || strcmp(h.name, name) ||
	    (h.part[0] && strcmp(h.part, "permanent")))
		goto out;
	if (fb_store_open(name, &f))
		goto out;
	/* An earlier build's file: the array's identity (bgp_perm_of_array). */
	perm = h.has_perm ? h.perm_id : f.bits_id == h.array_id ? f.perm_id : h.array_id;
	rc = perm == f.perm_id;
	fb_store_close(&f);
	/* And it holds a path (--flush leaves none), or rules were added
	 * since it was written (STATE.added: a run that has not written
	 * its first path yet, or was killed before). */
	while (rc && fgets(line, sizeof(line), fp) && (line[0] == '#' || line[0] == '\n'))
		;
	if (rc && feof(fp)) {
		rc = 0;
		snprintf(line, sizeof(line), "%s.added", base);
		dir = fb_safe_opendir(dirpath);
		fd = dir < 0 ? -1 : fb_safe_openat(dir, line, line, O_RDONLY, 0);
		if (fd >= 0 && !fstat(fd, &st))
			rc = st.st_size > 0;
		if (fd >= 0)
			close(fd);
		if (dir >= 0)
			close(dir);
	}
out:
	fclose(fp);
	return rc;
}

int bgp_feeds(const char *name, char *state, size_t len)
{
	bool quiet = fb_report_quiet;
	char file[FB_NAME_MAX + 40], base[NAME_MAX + 1], *list = NULL, *line, *next, *slash;
	struct stat st;
	int dir, rc = 0;

	snprintf(state, len, "%s/%s.bgp", STATE_DIR, name);
	if (lstat(STATE_DIR, &st))
		return 0;
	fb_report_quiet = true; /* a state file bgp itself would not trust holds nothing */
	snprintf(base, sizeof(base), "%s.bgp", name);
	rc = feeds_one(name, STATE_DIR, base, state);
	dir = rc ? -1 : fb_safe_opendir(STATE_DIR);
	if (dir >= 0) {
		feeds_name(name, file, sizeof(file));
		list = feeds_read(dir, file);
		close(dir);
	}
	for (line = list; !rc && line && *line; line = next) {
		next = strchr(line, '\n');
		if (!next)
			break;
		*next++ = 0;
		slash = strrchr(line, '/');
		if (line[0] != '/' || !slash[1] || strlen(slash + 1) > NAME_MAX)
			continue;
		snprintf(base, sizeof(base), "%s", slash + 1);
		*slash = 0;
		if (feeds_one(name, line[0] ? line : "/", base, base)) {
			snprintf(state, len, "%s/%s", line, base);
			rc = 1;
		}
	}
	free(list);
	fb_report_quiet = quiet;
	return rc;
}
