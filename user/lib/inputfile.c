// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Files the operator names for reading, opened without being steered by
 * another user's links or FIFOs (see inputfile.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>
#include "inputfile.h"

/* Symbolic links followed in one walk, at most (as the kernel's 40). */
#define MAX_LINKS 40

static bool ours(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

/* Is dir on procfs, where the magic links (/proc/self/fd/N) are? */
static bool on_proc(int dir)
{
	struct statfs sf;

	return !fstatfs(dir, &sf) && sf.f_type == PROC_SUPER_MAGIC;
}

static int fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * The last component, comp in dir (followed if a link: procfs's own, root's
 * or ours, checked by the caller). Looked at first: a FIFO is opened only
 * if root or we own it (or it is what a procfs link reaches: a pipe a
 * process holds, /dev/stdin's, whoever made it, never a name planted in a
 * directory), and then blocking, as open(2) would (it waits for its
 * writer), and only if it is still the FIFO looked at. Anything else is opened
 * O_NONBLOCK, so an entry swapped for a FIFO since cannot make us wait, and
 * refused if it is one. The fd, -1 (errno), or -2 with why.
 */
static int open_last(int dir, const char *comp, bool follow, bool regular, char *why, size_t len)
{
	int nf = follow ? 0 : O_NOFOLLOW, fd;
	struct stat pre, st;
	bool fifo;

	if (fstatat(dir, comp, &pre, follow ? 0 : AT_SYMLINK_NOFOLLOW))
		return -1;
	fifo = S_ISFIFO(pre.st_mode);
	if (fifo && regular) {
		fail(why, len, "not a regular file");
		return -2;
	}
	if (fifo && !follow && !ours(&pre)) {
		fail(why, len, "a FIFO of another user's (uid %u): refusing to wait on it",
		     (unsigned)pre.st_uid);
		return -2;
	}
	fd = openat(dir, comp, O_RDONLY | O_CLOEXEC | O_NOCTTY | nf | (fifo ? 0 : O_NONBLOCK));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	if (st.st_dev != pre.st_dev || st.st_ino != pre.st_ino) {
		close(fd);
		fail(why, len, "changed while it was opened: refusing it");
		return -2;
	}
	if (regular && !S_ISREG(st.st_mode)) {
		close(fd);
		fail(why, len, "not a regular file");
		return -2;
	}
	if (!fifo && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int fb_input_open(const char *path, bool regular, char *why, size_t len)
{
	return fb_input_open_at(path, regular, NULL, why, len);
}

int fb_input_open_at(const char *path, bool regular, int *dir_fd, char *why, size_t len)
{
	char todo[PATH_MAX], next[PATH_MAX], *comp, *rest;
	int dir, fd = -1, lfd, links = 0;
	struct stat st;
	ssize_t n;

	if (!*path)
		return fail(why, len, "%s", strerror(ENOENT));
	if (snprintf(todo, sizeof(todo), "%s", path) >= (int)sizeof(todo))
		return fail(why, len, "%s", strerror(ENAMETOOLONG));
	dir = open(todo[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return fail(why, len, "%s", strerror(errno));
	for (rest = todo;;) {
		bool last;

		while (*rest == '/')
			rest++;
		comp = *rest ? rest : (char *)".";
		rest += strcspn(rest, "/");
		if (*rest)
			*rest++ = 0;
		while (*rest == '/')
			rest++;
		last = !*rest;
		if (last) {
			struct stat l;

			if (fstatat(dir, comp, &l, AT_SYMLINK_NOFOLLOW) || !S_ISLNK(l.st_mode)) {
				fd = open_last(dir, comp, false, regular, why, len);
				break;
			}
			/* A link: its owner checked below, on the link
			 * itself (if it is one no longer, refused). */
		} else {
			fd = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0) {
				close(dir);
				dir = fd;
				continue;
			}
			if (errno != ELOOP && errno != ENOTDIR)
				break;
		}
		/* Perhaps a symbolic link: pinned (O_PATH), its owner checked,
		 * then the very link read. */
		lfd = openat(dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (lfd < 0 || fstat(lfd, &st) || !S_ISLNK(st.st_mode)) {
			if (lfd >= 0)
				close(lfd);
			errno = last ? ELOOP : ENOTDIR;
			break;
		}
		if (!ours(&st)) {
			close(lfd);
			close(dir);
			fail(why, len,
			     "a symbolic link of another user's%s%s%s: refusing to follow it",
			     last && !links ? "" : " at '", last && !links ? "" : comp,
			     last && !links ? "" : "'");
			return -2;
		}
		if (last && on_proc(dir)) {
			/* /proc/self/fd/N (/dev/stdin, /dev/fd/N, <(...)), whose
			 * target is no path: followed by the kernel. Any other
			 * link is walked as one on the way, so that its target
			 * is not reached through another user's link either
			 * (root's link to nobody's link to /etc/shadow). */
			close(lfd);
			fd = open_last(dir, comp, true, regular, why, len);
			break;
		}
		if (++links > MAX_LINKS) {
			close(lfd);
			errno = ELOOP;
			break;
		}
		n = readlinkat(lfd, "", next, sizeof(next) - 1);
		close(lfd);
		if (n <= 0) {
			errno = n ? errno : ENOENT;
			break;
		}
		next[n] = 0;
		/* The link's target, then what is left of the path (rest
		 * points into todo: joined in next first). */
		if (strlen(next) + 1 + strlen(rest) >= sizeof(next)) {
			errno = ENAMETOOLONG;
			break;
		}
		if (*rest)
			strcat(strcat(next, "/"), rest);
		strcpy(todo, next);
		rest = todo;
		if (todo[0] == '/') {
			close(dir);
			dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (dir < 0)
				return fail(why, len, "%s", strerror(errno));
		}
	}
	if (fd == -1) {
		int e = errno;

		close(dir);
		return fail(why, len, "%s", strerror(e));
	}
	if (dir_fd && fd >= 0)
		*dir_fd = dir;
	else
		close(dir);
	return fd;
}
