// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom destroy`'s part of the store: a filter taken away whole; and
 * whether a filter opened is gone (destroyed, or made anew) since. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store/discover.h"
#include "report.h"
#include "store/pintree.h"
#include "store/store.h"
#include "util.h"

bool fb_store_still_named(const struct fb_store *f, const char *pin_name)
{
	struct stat a, b;

	return !fstat(f->dir_fd, &a) && !fstatat(f->root_fd, pin_name, &b, AT_SYMLINK_NOFOLLOW) &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

struct first_attach {
	char ifname[IF_NAMESIZE];
};

static void note_first(const char *ifname, const char *mode, __u32 prog_id, void *ctx)
{
	struct first_attach *fa = ctx;

	(void)mode;
	(void)prog_id;
	if (!fa->ifname[0])
		snprintf(fa->ifname, sizeof(fa->ifname), "%s", ifname);
}

/* fb_discover_users, its error kept in fb_report_last. */
static int users_quietly(const struct fb_store *f, __u32 *prog)
{
	bool quiet = fb_report_quiet;
	int n;

	fb_report_quiet = true;
	n = fb_discover_users(f, prog);
	fb_report_quiet = quiet;
	return n;
}

/* fb_discover_find() of f's attachment into *a; on -1, why the walk
 * failed into why (fb_report_last, which later calls overwrite). */
static int find_quietly(const struct fb_store *f, struct fb_att *a, char *why, size_t len)
{
	int rc;

	fb_report_last[0] = 0;
	rc = fb_discover_find(0, f->outer_id, a);
	if (rc < 0)
		snprintf(why, len, "%s", fb_report_last[0] ? fb_report_last : strerror(errno));
	return rc;
}

/* -1 (printed) if the filter is attached anywhere, a loaded program uses
 * it, or that cannot be told. */
static int busy(const struct fb_store *f)
{
	struct first_attach fa = { "" };
	struct fb_att a;
	char why[sizeof(fb_report_last)] = "";
	int where = 0;
	__u32 prog = 0;
	bool quiet = fb_report_quiet;
	int users, tries;

	/* A program that cannot be read is never taken for one that does
	 * not use the filter: said in one line below. */
	fb_report_quiet = true;
	users = fb_discover_attachments(f, note_first, &fa);
	fb_report_quiet = quiet;
	if (users < 0)
		goto unknown;
	if (fa.ifname[0]) {
		fb_report_err("filter '%s' is attached to %s: detach it first", f->name, fa.ifname);
		return -1;
	}
	/* A program that is attached nowhere here is either attached in
	 * another namespace or on its way out: the last close of a program
	 * frees it, and that close may be another process's that only
	 * looked at it (every destroy, status and info opens each loaded
	 * program by id to read its maps). Such a look lasts microseconds;
	 * an attachment stays: one found in any namespace is refused at
	 * once, without waiting out the 2 s. */
	for (tries = 0; (users = users_quietly(f, &prog)) > 0 && tries < 100; tries++) {
		if (!tries && (where = find_quietly(f, &a, why, sizeof(why))) > 0)
			break;
		usleep(20000); /* 2 s at most */
	}
	if (users < 0)
		goto unknown;
	if (users) {
		/* Where, for an operator who cannot tell which program or
		 * namespace the id means (an `ip link` attachment in a
		 * namespace; one in generic mode, which `ip link set dev DEV
		 * xdp off` leaves). */
		if (where <= 0)
			where = find_quietly(f, &a, why, sizeof(why));
		if (where > 0)
			fb_report_err("filter '%s' is attached to %s (netns %s, %s, XDP program "
				      "%u): detach it first",
				      f->name, a.ifname, a.netns, a.mode, a.prog_id);
		else if (where < 0)
			/* Where is not known: never a guess. */
			fb_report_err("filter '%s' is in use by XDP program %u, attached where is "
				      "not known (%s): detach it first",
				      f->name, prog, why);
		else
			fb_report_err("filter '%s' is in use by XDP program %u (attached in "
				      "another network namespace?): detach it first",
				      f->name, prog);
		return -1;
	}
	return 0;
unknown:
	fb_report_err("cannot tell whether filter '%s' is in use (%s): nothing removed", f->name,
		      fb_report_last);
	return -1;
}

/*
 * Destroy: wait for the filter's writers (its lock), refuse if a program
 * uses it, remove the ip-link pins if they are its own, then take the
 * name away in one step (rename to FB_STAGE_OLD NAME) and remove the pins
 * from there. A kill at any point leaves the filter whole or gone (plus a
 * stale directory that the next destroy, or check --repair, removes).
 * Works on broken filters: it needs only the directory.
 */
int fb_store_destroy(const char *name)
{
	char gone[FB_NAME_MAX + 4];
	struct fb_store f;
	int cleaned, tries;

	cleaned = fb_pin_clean_stale(name);
	if (cleaned < 0)
		return -1;
	fb_store_init(&f);
	snprintf(f.name, sizeof(f.name), "%s", name);
	snprintf(f.dir, sizeof(f.dir), "%s/%s", fb_pin_root(), name);
	f.root_fd = fb_pin_open_root(false);
	if (f.root_fd == -1)
		return -1;
	if (f.root_fd == -2) {
		f.root_fd = -1;
		goto missing;
	}
	f.dir_fd = fb_pin_open_dir(f.root_fd, name);
	if (f.dir_fd < 0) {
		if (errno == ENOENT)
			goto missing;
		fb_report_err("cannot open %s: %s", f.dir, strerror(errno));
		goto fail;
	}
	if (fb_pin_trusted(f.dir_fd, f.dir, false) ||
	    fb_store_flock(&f, LOCK_EX | FB_LOCK_NOREFRESH))
		goto fail;
	/* Another destroy took the name while this one waited for the lock:
	 * as if this one came after it, no filter of that name (or a new
	 * one, created since, that this command never saw). */
	if (!fb_store_still_named(&f, name)) {
		cleaned = 0;
		goto missing;
	}
	/* What programs could use: its outer and stats maps, if pinned. */
	/* (Memory or descriptors short: not read now; a pin that is
	 * damaged, or none, holds nothing a program could use.) */
	f.outer_fd = fb_pin_get(f.dir_fd, "filter");
	if (f.outer_fd < 0 && fb_store_err_now(errno))
		goto unread;
	f.stats_fd = fb_pin_get(f.dir_fd, "stats");
	if (f.stats_fd < 0 && fb_store_err_now(errno))
		goto unread;
	/* A pin whose id cannot be read is never taken for none: the
	 * programs using the filter are found by these ids. */
	f.outer_id = f.outer_fd >= 0 ? fb_map_id(f.outer_fd) : 0;
	if (f.outer_fd >= 0 && !f.outer_id)
		goto unread;
	f.stats_id = f.stats_fd >= 0 ? fb_map_id(f.stats_fd) : 0;
	if (f.stats_fd >= 0 && !f.stats_id)
		goto unread;
	if ((f.outer_id || f.stats_id) && busy(&f))
		goto fail;
	if (!strcmp(name, FB_IPROUTE_FILTER))
		fb_pin_iproute_remove(&f);
	fb_pin_stage_name(gone, sizeof(gone), FB_STAGE_OLD, name);
	for (tries = 0; fb_pin_rename(f.root_fd, name, gone); tries++) {
		/* A leftover of an earlier destroy of this name: remove it
		 * (no stage lock: a "~~" directory is born locked, renamed
		 * from the filter its destroyer holds). */
		if (tries || (errno != EEXIST && errno != ENOTEMPTY) ||
		    fb_pin_remove_stale(f.root_fd, gone) <= 0) {
			fb_report_err("cannot remove filter '%s': %s", name, strerror(errno));
			goto fail;
		}
	}
	fb_pin_remove_tree(f.root_fd, gone, 0);
	fb_store_close(&f);
	rmdir(fb_pin_root()); /* only succeeds once the last filter is gone */
	return 0;
unread:
	fb_report_err("cannot tell whether filter '%s' is in use (%s): nothing removed", name,
		      strerror(errno));
fail:
	fb_store_close(&f);
	return -1;
missing:
	fb_store_close(&f);
	if (cleaned > 0) {
		rmdir(fb_pin_root()); /* only succeeds once the last filter is gone */
		return 0;	      /* only what an interrupted command left */
	}
	fb_report_err("no filter named '%s' (see flowbloom list)", name);
	return -1;
}

bool fb_store_gone(const struct fb_store *f)
{
	int root = fb_pin_open_root(false), dir = -1, st = -1;
	bool gone;

	if (root >= 0)
		dir = fb_pin_open_dir(root, f->name);
	if (dir >= 0)
		st = fb_pin_get(dir, "stats");
	/* Missing at any step: gone. Another failure (a transient error)
	 * cannot tell: not gone, so a loop carries on. */
	gone = st < 0 && errno == ENOENT;
	/* Its id not read (memory short) cannot tell either: only an id
	 * read and another says the filter was made anew. */
	if (st >= 0) {
		__u32 id = fb_map_id(st);

		gone = id && id != f->stats_id;
		close(st);
	}
	if (dir >= 0)
		close(dir);
	if (root >= 0)
		close(root);
	return gone;
}
