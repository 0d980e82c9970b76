// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A verb's options from a file (see optfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "optfile.h"
#include "rules/flow.h"
#include "output.h"
#include "util.h"
#include "inputfile.h"

#define LINE_MAX_LEN 1024
#define OPTS_MAX 64 /* options of a table that one file may set (each once) */

/* The slot of option o in seen[]: its own index, or that of the first
 * option of its group (options that set one thing, as tcp and udp); the
 * group, or NULL. */
static int slot_of(const struct option *opts, const struct option *o,
		   const struct fb_optfile_group *groups, const struct fb_optfile_group **g)
{
	const struct option *p;

	*g = NULL;
	for (; groups && groups->codes; groups++)
		if (o->val > 0 && o->val < 256 && strchr(groups->codes, o->val))
			break;
	if (!groups || !groups->codes)
		return (int)(o - opts);
	*g = groups;
	for (p = opts; p->name; p++)
		if (p->val > 0 && p->val < 256 && strchr(groups->codes, p->val))
			break;
	return (int)(p - opts);
}

/* One line, "name" or "name = value": 0 or -1 (printed). */
/* seen[i]: the line that set slot i, 0: none yet; by[i]: its option. */
static int line_of(const char *file, int n, char *s, const struct option *opts, const char *skip,
		   const struct fb_optfile_group *groups, int *seen, const struct option **by,
		   fb_optfile_fn set, void *ctx)
{
	const struct fb_optfile_group *g;
	int slot;
	char *eq = strchr(s, '='), *name = s, *val = NULL;
	const struct option *o;
	const char *why;

	if (eq) {
		*eq = 0;
		val = fb_trim(eq + 1);
	}
	name = fb_trim(name);
	for (o = opts; o->name; o++)
		if (!strcmp(o->name, name) && (!skip || strcmp(name, skip)))
			break;
	if (!o->name) {
		fb_err("%s:%d: unknown option '%s'", file, n, fb_quote(name));
		return -1;
	}
	if (o->has_arg == required_argument && (!val || !*val)) {
		fb_err("%s:%d: %s needs a value (%s = VALUE)", file, n, name, name);
		return -1;
	}
	if (o->has_arg == no_argument && val) {
		fb_err("%s:%d: %s takes no value", file, n, name);
		return -1;
	}
	/* Twice in one file is a mistake to say, not a value to drop: two
	 * collector lines would otherwise export to the last alone; so are
	 * two options of one group (tcp, then udp). */
	slot = slot_of(opts, o, groups, &g);
	if (slot < OPTS_MAX && seen[slot]) {
		if (by[slot] == o)
			fb_err("%s:%d: %s given again (line %d): once per file", file, n, name,
			       seen[slot]);
		else
			fb_err("%s:%d: %s given after %s (line %d): %s once per file", file, n,
			       name, by[slot]->name, seen[slot], g ? g->what : "");
		return -1;
	}
	if (slot < OPTS_MAX) {
		seen[slot] = n;
		by[slot] = o;
	}
	why = set(o->val, val, ctx);
	if (why) {
		fb_err("%s:%d: %s", file, n, why);
		return -1;
	}
	return 0;
}

int fb_conf_file_open(const char *file, const char *says)
{
	char why[300];
	struct stat st;
	bool bad = false;
	int fd, dir;

	/* Never through another user's symbolic link (it would make root read
	 * a file of the link maker's choice, and print its first line in an
	 * error), and never waiting on a FIFO someone planted: only a regular
	 * file is read (inputfile.h). */
	fd = fb_input_open_at(file, true, &dir, why, sizeof(why));
	if (fd < 0) {
		if (fd == -2)
			fb_err("%s: %s", file, why);
		else
			fb_err("cannot open %s: %s", file, why);
		return -1;
	}
	if (fstat(fd, &st)) {
		fb_err("%s: %s", file, strerror(errno));
		bad = true;
	} else if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
		   (st.st_mode & (S_IWGRP | S_IWOTH))) {
		fb_err("%s: refusing a file that %s may write (it says %s): chown root and "
		       "chmod go-w",
		       file, st.st_mode & (S_IWGRP | S_IWOTH) ? "others" : "another user", says);
		bad = true;
	}
	/* Nor in a directory where another user may rename files: there,
	 * root's other configuration (b.conf, action allow) could be moved
	 * over this one's name (a.conf) and applied as it. The directory's
	 * owner may; so may everyone where others may write, unless it is
	 * sticky (/tmp), where only a file's owner may. */
	else if (fstat(dir, &st)) {
		fb_err("%s: %s", file, strerror(errno));
		bad = true;
	} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
		fb_err("%s: refusing a file in a directory of uid %u, who may put another file "
		       "in its place (it says %s)",
		       file, (unsigned)st.st_uid, says);
		bad = true;
	} else if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		fb_err("%s: refusing a file in a directory others may write to, who may put "
		       "another file in its place (it says %s): chmod go-w or +t",
		       file, says);
		bad = true;
	}
	close(dir);
	if (bad) {
		close(fd);
		return -1;
	}
	return fd;
}

int fb_optfile_read(const char *file, const struct option *opts, const char *skip,
		    const struct fb_optfile_group *groups, fb_optfile_fn set, void *ctx)
{
	const struct option *by[OPTS_MAX] = { 0 };
	int seen[OPTS_MAX] = { 0 };
	struct fb_lines r;
	size_t len;
	char *s;
	int fd, got, rc = 0;

	fd = fb_conf_file_open(file, "where records go");
	if (fd < 0)
		return 1;
	/* The line reader every file input uses (a NUL anywhere, the last
	 * line's too, named FILE:LINE), on the file checked above. */
	if (fb_lines_fdopen(&r, fd, file))
		return 1;
	while ((got = fb_lines_next(&r, &s, &len)) > 0) {
		int n = (int)r.lineno;

		if (len > LINE_MAX_LEN) {
			fb_err("%s:%d: line longer than %d bytes", file, n, LINE_MAX_LEN);
			rc = 1;
			break;
		}
		s = fb_conf_text(s, n);
		if (!*s)
			continue;
		if (line_of(file, n, s, opts, skip, groups, seen, by, set, ctx)) {
			rc = 1;
			break;
		}
	}
	if (got < 0)
		rc = 1; /* said by fb_lines_next() */
	fb_lines_close(&r);
	return rc;
}
