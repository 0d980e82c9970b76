// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The pin tree's half states (pintree.h): the staging directories a
 * create or replace builds in, their lock and names, removing a filter's
 * directory whole, and check --repair's removal of the staging
 * directories an interrupted command left. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "report.h"
#include "store/pintree.h"

/* Remove directory `name` in dfd with everything in it (pins, monitor/),
 * never following a link. */
int fb_pin_remove_tree(int dfd, const char *name, int depth)
{
	int fd, pass, found = 1;
	struct dirent *de;
	DIR *d;

	/* An empty one (a staging directory whose maker failed before its
	 * first pin: no memory for a chunk) goes without being read. Reading
	 * takes a DIR buffer, new heap pages: in a memory cgroup at its limit
	 * (the chunks' memory is given back later, by the kernel's workqueue)
	 * such a page can get the process OOM-killed, leaving the directory
	 * after the error said nothing was made. */
	if (!unlinkat(dfd, name, AT_REMOVEDIR) || errno == ENOENT)
		return 0;
	fd = fb_pin_open_dir(dfd, name);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	/* Removing entries while reading the directory may skip some:
	 * read it again until a pass finds nothing. */
	for (pass = 0; found && pass < 8; pass++) {
		found = 0;
		rewinddir(d);
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			found = 1;
			if (de->d_type == DT_DIR) {
				if (depth < 4)
					fb_pin_remove_tree(fd, de->d_name, depth + 1);
			} else {
				unlinkat(fd, de->d_name, 0);
			}
		}
	}
	closedir(d);
	return unlinkat(dfd, name, AT_REMOVEDIR);
}

/* A staging directory nobody works in any more: its maker holds a flock on
 * it while it builds, which the kernel drops if the maker dies. Removes it
 * then (1); 0 if absent or in use; -1 (errno, nothing printed) if it could
 * not be opened, locked or removed (descriptors, memory): still there. */
int fb_pin_remove_stale(int root, const char *stage)
{
	int fd = fb_pin_open_dir(root, stage), e;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		e = errno;
		close(fd);
		errno = e;
		return e == EWOULDBLOCK ? 0 : -1;
	}
	e = fb_pin_remove_tree(root, stage, 0) ? errno : 0;
	close(fd);
	errno = e;
	return e ? -1 : 1;
}

int fb_pin_stage_lock(int root)
{
	if (flock(root, LOCK_EX)) {
		fb_report_err("cannot lock %s: %s", fb_pin_root(), strerror(errno));
		return -1;
	}
	return 0;
}

void fb_pin_stage_unlock(int root)
{
	flock(root, LOCK_UN);
}

void fb_pin_stage_name(char *buf, size_t len, const char *prefix, const char *name)
{
	snprintf(buf, len, "%s%s", prefix, name);
}

int fb_pin_rename(int dfd, const char *from, const char *to)
{
	return syscall(SYS_renameat2, dfd, from, dfd, to, 1 /* RENAME_NOREPLACE */);
}

int fb_pin_clean_stale(const char *name)
{
	char stage[FB_NAME_MAX + 4];
	int root, n = 0, i, r;

	root = fb_pin_open_root_of(name);
	if (root < 0)
		return root == -2 ? 0 : -1;
	if (fb_pin_stage_lock(root)) {
		close(root);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		fb_pin_stage_name(stage, sizeof(stage), i ? FB_STAGE_OLD : FB_STAGE_NEW, name);
		r = fb_pin_remove_stale(root, stage);
		if (r < 0) {
			fb_report_err("cannot remove %s/%s: %s", fb_pin_root(), stage,
				      strerror(errno));
			n = -1;
			break;
		}
		n += r;
	}
	fb_pin_stage_unlock(root);
	close(root);
	return n;
}
