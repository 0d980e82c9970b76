// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom destroy`'s part of the store: a filter taken away whole. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "store/discover.h"
#include "report.h"
#include "store/pintree.h"
#include "store/store.h"
#include "util.h"

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
	f.outer_fd = fb_pin_get(f.dir_fd, "filter");
	f.stats_fd = fb_pin_get(f.dir_fd, "stats");
	f.outer_id = f.outer_fd >= 0 ? fb_map_id(f.outer_fd) : 0;
	f.stats_id = f.stats_fd >= 0 ? fb_map_id(f.stats_fd) : 0;
	if ((f.outer_id || f.stats_id) && fb_discover_busy(&f))
		goto fail;
	if (!strcmp(name, FB_IPROUTE_FILTER))
		fb_pin_iproute_remove(&f);
	fb_pin_stage_name(gone, sizeof(gone), FB_STAGE_OLD, name);
	for (tries = 0; fb_pin_rename(f.root_fd, name, gone); tries++) {
		/* A leftover of an earlier destroy of this name: remove it
		 * (no stage lock: a "~~" directory is born locked, renamed
		 * from the filter its destroyer holds). */
		if (tries || (errno != EEXIST && errno != ENOTEMPTY) ||
		    !fb_pin_remove_stale(f.root_fd, gone)) {
			fb_report_err("cannot remove filter '%s': %s", name, strerror(errno));
			goto fail;
		}
	}
	fb_pin_remove_tree(f.root_fd, gone, 0);
	fb_store_close(&f);
	rmdir(fb_pin_root()); /* only succeeds once the last filter is gone */
	return 0;
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
