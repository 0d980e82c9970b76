// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Safe, atomic file creation for everything the CLI writes (see
 * safefile.h for the rules and why).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "report.h"
#include "safefile.h"

/* Names drawn before giving up: each planted name costs an attacker a
 * file, and 48 random bits cannot be guessed, so only a directory full
 * of other files could make every draw fail. */
#define TMP_TRIES 64

int fb_safefile_parse_mode(const char *s, mode_t *mode)
{
	unsigned long v = 0;
	const char *p;

	if (!*s || strlen(s) > 4)
		return -1;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '7')
			return -1;
		v = v * 8 + (*p - '0');
	}
	/* No set-id or sticky bits: nothing here is meant to run. */
	if (v > 0777)
		return -1;
	*mode = v;
	return 0;
}

int fb_safefile_open(struct fb_safefile *sf, const char *path, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	unsigned long long rnd;
	int i;

	memset(sf, 0, sizeof(*sf));
	sf->fd = sf->dir_fd = -1;
	sf->path = path;
	sf->mode = mode;
	if (slash) {
		size_t n = slash == path ? 1 : (size_t)(slash - path);

		if (n >= sizeof(dir)) {
			fb_report_err("%s: path too long", path);
			return -1;
		}
		memcpy(dir, path, n);
		dir[n] = 0;
	} else {
		strcpy(dir, ".");
	}
	snprintf(sf->base, sizeof(sf->base), "%s", slash ? slash + 1 : path);
	if (!sf->base[0] || !strcmp(sf->base, ".") || !strcmp(sf->base, "..") ||
	    strlen(slash ? slash + 1 : path) >= sizeof(sf->base)) {
		fb_report_err("%s: not a file name", path);
		return -1;
	}
	sf->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sf->dir_fd < 0) {
		fb_report_err("%s: directory %s: %s", path, dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < TMP_TRIES; i++) {
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			fb_report_err("getrandom: %s", strerror(errno));
			break;
		}
		/* Hidden, and not ending like the target (node_exporter reads
		 * only *.prom): nothing picks up a half-written file. */
		snprintf(sf->tmp, sizeof(sf->tmp), ".%.200s.%012llx", sf->base,
			 rnd & 0xffffffffffffULL);
		/* O_EXCL: fail on anything already there, a symlink included
		 * (never followed, even dangling); O_NOFOLLOW says so twice. */
		sf->fd = openat(sf->dir_fd, sf->tmp,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (sf->fd >= 0 || errno != EEXIST)
			break;
	}
	if (sf->fd < 0) {
		fb_report_err("%s: cannot create a temporary file in %s: %s", path, dir,
			      strerror(i == TMP_TRIES ? EEXIST : errno));
		close(sf->dir_fd);
		sf->dir_fd = -1;
		return -1;
	}
	sf->out = fdopen(sf->fd, "wb");
	if (!sf->out) {
		fb_report_err("%s: %s", path, strerror(errno));
		fb_safefile_abort(sf);
		return -1;
	}
	return 0;
}

void fb_safefile_abort(struct fb_safefile *sf)
{
	if (sf->out)
		fclose(sf->out);
	else if (sf->fd >= 0)
		close(sf->fd);
	if (sf->fd >= 0)
		unlinkat(sf->dir_fd, sf->tmp, 0);
	if (sf->dir_fd >= 0)
		close(sf->dir_fd);
	sf->out = NULL;
	sf->fd = sf->dir_fd = -1;
}

int fb_safefile_commit(struct fb_safefile *sf)
{
	int err = 0;

	/* A full disk shows at the flush, the fsync or the close (delayed
	 * allocation): check all three before the file replaces anything. */
	if (fflush(sf->out) || ferror(sf->out))
		err = errno ? errno : EIO;
	else if (fsync(sf->fd))
		err = errno;
	/* After creation, so the umask changes nothing. */
	else if (fchmod(sf->fd, sf->mode))
		err = errno;
	if (fclose(sf->out) && !err)
		err = errno;
	sf->out = NULL;
	if (!err && renameat(sf->dir_fd, sf->tmp, sf->dir_fd, sf->base))
		err = errno;
	if (err) {
		fb_report_err("%s: write failed: %s", sf->path, strerror(err));
		unlinkat(sf->dir_fd, sf->tmp, 0);
		close(sf->dir_fd);
		sf->fd = sf->dir_fd = -1;
		return -1;
	}
	/* The rename itself on disk too; failure here loses nothing. */
	fsync(sf->dir_fd);
	close(sf->dir_fd);
	sf->fd = sf->dir_fd = -1;
	return 0;
}
