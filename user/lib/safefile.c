// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Safe, atomic file creation for everything the CLI writes (see
 * safefile.h for the rules and why).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>
#include "inputfile.h"
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

/*
 * A signal that ends the process (SIGINT at a terminal, SIGTERM from
 * systemd, SIGHUP) while a file is being written would leave its hidden
 * temporary file behind, an export's filter key in it. While one is open,
 * such a signal first removes it: unlinkat() is async-signal-safe, and
 * the directory's descriptor and the name are set before the handler is.
 * Only signals whose disposition is the default (death) are taken over; a
 * command that catches them itself (bgp, guard, ipfix: a flag, then a
 * clean stop) keeps its handler and ends its write as usual.
 */
static const int kill_sigs[] = { SIGINT, SIGTERM, SIGHUP };
#define NKILL (sizeof(kill_sigs) / sizeof(kill_sigs[0]))
static volatile sig_atomic_t pending_dir = -1;
static char pending_tmp[sizeof(((struct fb_safefile *)0)->tmp)];
static bool taken[NKILL];

static void on_kill(int sig)
{
	int saved = errno;

	if (pending_dir >= 0)
		unlinkat(pending_dir, pending_tmp, 0);
	errno = saved;
	signal(sig, SIG_DFL);
	raise(sig);
}

/* sf's temporary file is the one to remove on such a signal (one at a
 * time: a second file written meanwhile is not covered). */
static void cleanup_on(const struct fb_safefile *sf)
{
	struct sigaction sa = { .sa_handler = on_kill }, old;
	size_t i;

	if (pending_dir >= 0)
		return;
	memcpy(pending_tmp, sf->tmp, sizeof(pending_tmp));
	pending_dir = sf->dir_fd;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NKILL; i++)
		if (!sigaction(kill_sigs[i], NULL, &old) && old.sa_handler == SIG_DFL)
			taken[i] = !sigaction(kill_sigs[i], &sa, NULL);
}

static void cleanup_off(const struct fb_safefile *sf)
{
	size_t i;

	if (pending_dir < 0 || pending_dir != sf->dir_fd || strcmp(pending_tmp, sf->tmp))
		return;
	for (i = 0; i < NKILL; i++) {
		struct sigaction cur;

		/* Back to the default unless the command installed a handler
		 * of its own meanwhile (capture: Ctrl-C ends it cleanly). */
		if (taken[i] && !sigaction(kill_sigs[i], NULL, &cur) && cur.sa_handler == on_kill)
			signal(kill_sigs[i], SIG_DFL);
		taken[i] = false;
	}
	pending_dir = -1;
}

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
			     : "of another type";
}

/*
 * What is at the target's name now. Nothing, a regular file, or a
 * symbolic link of another user's (replaced by the rename, never followed)
 * will do. A device, a FIFO or a socket would be replaced by a regular
 * file holding what is written (`export f /dev/null` took /dev/null away
 * from every program, a FIFO's reader waited forever), and so would a link
 * of root's or the caller's to one (`/dev/stdout`): refused, as is a
 * directory. An attacker who swaps the name after this check swaps it in
 * a directory they can write, for their own file: the rename replaces it.
 */
/* Does the symbolic link base in dir_fd name a file of /proc, such as a
 * process's file descriptor (/dev/stdout -> /proc/self/fd/1)? What it
 * resolves to then depends on who looks, and the link is the system's. */
static bool links_into_proc(int dir_fd, const char *base)
{
	char target[4096];
	ssize_t n = readlinkat(dir_fd, base, target, sizeof(target) - 1);
	struct statfs fs;
	bool proc;
	int fd;

	if (n <= 0)
		return false;
	target[n] = 0;
	fd = openat(dir_fd, target, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return !strncmp(target, "/proc/", 6);
	proc = !fstatfs(fd, &fs) && fs.f_type == PROC_SUPER_MAGIC;
	close(fd);
	return proc;
}

static int check_target(const struct fb_safefile *sf)
{
	struct stat st;
	bool link = false;

	if (fstatat(sf->dir_fd, sf->base, &st, AT_SYMLINK_NOFOLLOW))
		return 0; /* nothing there yet (other errors show at the rename) */
	if (S_ISLNK(st.st_mode)) {
		if (st.st_uid != 0 && st.st_uid != geteuid())
			return 0;
		/* /dev/stdout with standard output a regular file (a cron
		 * job's): the rename would replace the system's link. */
		if (links_into_proc(sf->dir_fd, sf->base)) {
			fb_report_err(
				"%s: a symbolic link into /proc (a process's file descriptor), "
				"not a regular file: refusing to replace it",
				sf->path);
			return -1;
		}
		if (fstatat(sf->dir_fd, sf->base, &st, 0))
			return 0; /* dangling */
		link = true;
	}
	if (S_ISREG(st.st_mode))
		return 0;
	fb_report_err("%s: %s%s, not a regular file: refusing to replace it", sf->path,
		      link ? "a symbolic link to " : "", file_kind(st.st_mode));
	return -1;
}

/* Does the file on sf->fd keep to what was asked: no read or write bit
 * outside `allowed`, and the caller's, unless everyone may read it anyway? A file
 * system that does not keep modes (FAT with `quiet`, a FUSE mount, NFS
 * squashing root) would make an export, the filter's key in it,
 * everybody's: refused, named, before anything is written. */
static int kept(const struct fb_safefile *sf, mode_t allowed)
{
	struct stat st;

	if (fstat(sf->fd, &st)) {
		fb_report_err("%s: %s", sf->path, strerror(errno));
		return -1;
	}
	/* Read and write bits only: an execute bit (FAT shows files 0755
	 * with its usual fmask) lets no one read or change it. */
	if (st.st_mode & 0666 & ~allowed) {
		fb_report_err("%s: its file system makes it mode %03o where %03o was asked (it "
			      "does not keep file modes): refusing to write it there",
			      sf->path, (unsigned)(st.st_mode & 0777), (unsigned)sf->mode);
		return -1;
	}
	if (st.st_uid != geteuid() && !(sf->mode & S_IROTH)) {
		fb_report_err("%s: its file system gives it to uid %u (root squashed?), where "
			      "mode %03o was asked: refusing to write it there",
			      sf->path, (unsigned)st.st_uid, (unsigned)sf->mode);
		return -1;
	}
	return 0;
}

/* The temporary file in sf->dir_fd for sf->base. */
static int open_tmp(struct fb_safefile *sf, const char *dir)
{
	unsigned long long rnd;
	int i;

	if (check_target(sf)) {
		close(sf->dir_fd);
		sf->dir_fd = -1;
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
		fb_report_err("%s: cannot create a temporary file in %s: %s", sf->path, dir,
			      strerror(i == TMP_TRIES ? EEXIST : errno));
		close(sf->dir_fd);
		sf->dir_fd = -1;
		return -1;
	}
	cleanup_on(sf);
	/* Created 0600: more (or another owner) is the file system's. */
	if (kept(sf, sf->mode | 0600)) {
		fb_safefile_abort(sf);
		return -1;
	}
	sf->out = fdopen(sf->fd, "wb");
	if (!sf->out) {
		fb_report_err("%s: %s", sf->path, strerror(errno));
		fb_safefile_abort(sf);
		return -1;
	}
	return 0;
}

static int set_name(struct fb_safefile *sf, const char *name, const char *label, mode_t mode)
{
	memset(sf, 0, sizeof(*sf));
	sf->fd = sf->dir_fd = -1;
	sf->path = label;
	sf->mode = mode;
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/') ||
	    strlen(name) >= sizeof(sf->base)) {
		fb_report_err("%s: not a file name", label);
		return -1;
	}
	snprintf(sf->base, sizeof(sf->base), "%s", name);
	return 0;
}

int fb_safefile_open(struct fb_safefile *sf, const char *path, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	char dir[4096], dot[4100], why[256];
	struct stat st;

	if (set_name(sf, slash ? slash + 1 : path, path, mode))
		return -1;
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
	/* Reached as a file named for reading is (inputfile.h): a symbolic
	 * link another user planted on the way (`/tmp/out -> /etc`, where
	 * fs.protected_symlinks is off, or in a directory of theirs) would
	 * put the file where they chose. "DIR/.": DIR is walked as a
	 * directory, never opened as a device that is not one. */
	snprintf(dot, sizeof(dot), "%s/.", dir);
	sf->dir_fd = fb_input_open(dot, false, why, sizeof(why));
	if (sf->dir_fd < 0) {
		fb_report_err("%s: directory %s: %s", path, dir, why);
		return -1;
	}
	if (fstat(sf->dir_fd, &st) || !S_ISDIR(st.st_mode)) {
		fb_report_err("%s: directory %s: %s", path, dir, strerror(ENOTDIR));
		close(sf->dir_fd);
		sf->dir_fd = -1;
		return -1;
	}
	return open_tmp(sf, dir);
}

int fb_safefile_openat(struct fb_safefile *sf, int dir_fd, const char *name, const char *label,
		       mode_t mode)
{
	if (set_name(sf, name, label, mode))
		return -1;
	sf->dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
	if (sf->dir_fd < 0) {
		fb_report_err("%s: %s", label, strerror(errno));
		return -1;
	}
	return open_tmp(sf, "its directory");
}

/* Owned by root or the caller, and (unless a root-owned sticky directory
 * on the way) writable by no one else. */
static int trusted(const struct stat *st, const char *what, bool on_the_way)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		fb_report_err("%s belongs to uid %u, not root: refusing to use it", what,
			      (unsigned)st->st_uid);
		return -1;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(on_the_way && st->st_uid == 0 && (st->st_mode & S_ISVTX))) {
		fb_report_err("%s is writable by other users (mode %04o): refusing to use it", what,
			      (unsigned)(st->st_mode & 07777));
		return -1;
	}
	return 0;
}

/* dir "/" name into out (dir may be out), cut to len. */
static void join(char *out, size_t len, const char *dir, const char *name)
{
	size_t d = strlen(dir), n = strlen(name);

	if (out != dir) {
		d = d < len - 1 ? d : len - 1;
		memmove(out, dir, d);
	}
	if (d && out[d - 1] != '/' && d < len - 1)
		out[d++] = '/';
	n = n < len - 1 - d ? n : len - 1 - d;
	memcpy(out + d, name, n);
	out[d + n] = 0;
}

/* Symbolic links followed in one walk, at most (as the kernel's 40). */
#define MAX_LINKS 40

int fb_safe_opendir(const char *path)
{
	char todo[4096], sofar[4096], link[4096], *comp, *rest;
	int fd = -1, nfd, links = 0;
	struct stat st;

	char cwd[4096];

	/* Relative: from the working directory, itself walked. */
	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd))) {
		fb_report_err("%s: %s", path, strerror(errno));
		return -1;
	}
	if (snprintf(todo, sizeof(todo), "%s%s%s", path[0] == '/' ? "" : cwd,
		     path[0] == '/' ? "" : "/", path) >= (int)sizeof(todo)) {
		fb_report_err("%s: path too long", path);
		return -1;
	}
restart:
	if (fd >= 0)
		close(fd);
	strcpy(sofar, "/");
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		fb_report_err("cannot open /: %s", strerror(errno));
		goto fail;
	}
	if (trusted(&st, "/", true))
		goto fail;
	for (rest = todo; *rest;) {
		bool last;

		while (*rest == '/')
			rest++;
		if (!*rest)
			break;
		comp = rest;
		rest += strcspn(rest, "/");
		if (*rest)
			*rest++ = 0;
		while (*rest == '/')
			rest++;
		last = !*rest;
		if (!strcmp(comp, "."))
			continue;
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW)) {
			fb_report_err("%s%s%s: %s", sofar, strcmp(sofar, "/") ? "/" : "", comp,
				      strerror(errno));
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t n;
			char next[4096];

			/* Only root (or we) made it: follow it, from / or from
			 * here, then the rest of the path. */
			join(link, sizeof(link), sofar, comp);
			if (trusted(&st, link, true) || ++links > MAX_LINKS)
				goto badlink;
			n = readlinkat(fd, comp, next, sizeof(next) - 1);
			if (n <= 0)
				goto badlink;
			next[n] = 0;
			if (snprintf(link, sizeof(link), "%s%s%s/%s", next[0] == '/' ? "" : sofar,
				     next[0] == '/' ? "" : "/", next, rest) >= (int)sizeof(link))
				goto badlink;
			strcpy(todo, link);
			goto restart;
		}
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			fb_report_err("%s%s%s: %s", sofar, strcmp(sofar, "/") ? "/" : "", comp,
				      strerror(errno));
			goto fail;
		}
		close(fd);
		fd = nfd;
		if (!strcmp(comp, "..")) {
			char *s = strrchr(sofar, '/');

			if (s && s != sofar)
				*s = 0;
			else
				strcpy(sofar, "/");
		} else {
			join(sofar, sizeof(sofar), sofar, comp);
		}
		if (fstat(fd, &st) || trusted(&st, sofar, !last))
			goto fail;
	}
	/* The directory itself, even when it is / or reached by "..". */
	if (fstat(fd, &st) || trusted(&st, sofar, false))
		goto fail;
	return fd;
badlink:
	fb_report_err("%s: a symbolic link flowbloom does not follow (not root's, or a loop)",
		      link);
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int fb_safe_openat(int dir_fd, const char *name, const char *label, int flags, mode_t mode)
{
	struct stat st;
	/* O_NONBLOCK: a FIFO there (root's own: nobody else can write the
	 * directory) is refused below rather than waited on for ever. */
	int fd = openat(dir_fd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);

	if (fd < 0) {
		if (errno == ENOENT)
			return -2;
		fb_report_err("%s: %s", label,
			      errno == ELOOP ? "a symbolic link: refusing to follow it"
					     : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		fb_report_err("%s: not a regular file: refusing to use it", label);
		close(fd);
		return -1;
	}
	if (trusted(&st, label, false)) {
		close(fd);
		return -1;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		fb_report_err("%s: %s", label, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void fb_safefile_abort(struct fb_safefile *sf)
{
	if (sf->out)
		fclose(sf->out);
	else if (sf->fd >= 0)
		close(sf->fd);
	if (sf->fd >= 0)
		unlinkat(sf->dir_fd, sf->tmp, 0);
	cleanup_off(sf);
	if (sf->dir_fd >= 0)
		close(sf->dir_fd);
	sf->out = NULL;
	sf->fd = sf->dir_fd = -1;
}

int fb_safefile_commit(struct fb_safefile *sf)
{
	int err = 0, told = 0;

	/* A full disk shows at the flush, the fsync or the close (delayed
	 * allocation): check all three before the file replaces anything. */
	if (fflush(sf->out) || ferror(sf->out))
		err = errno ? errno : EIO;
	else if (fsync(sf->fd))
		err = errno;
	/* After creation, so the umask changes nothing. */
	else if (fchmod(sf->fd, sf->mode))
		err = errno;
	else if (kept(sf, sf->mode))
		err = told = EPERM;
	if (fclose(sf->out) && !err)
		err = errno;
	sf->out = NULL;
	if (!err && renameat(sf->dir_fd, sf->tmp, sf->dir_fd, sf->base))
		err = errno;
	if (err) {
		if (!told)
			fb_report_err("%s: write failed: %s", sf->path, strerror(err));
		unlinkat(sf->dir_fd, sf->tmp, 0);
		cleanup_off(sf);
		close(sf->dir_fd);
		sf->fd = sf->dir_fd = -1;
		return -1;
	}
	/* Renamed: nothing left to remove on a signal. */
	cleanup_off(sf);
	/* The rename itself on disk too; failure here loses nothing. */
	fsync(sf->dir_fd);
	close(sf->dir_fd);
	sf->fd = sf->dir_fd = -1;
	return 0;
}
