// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The network namespaces discovery visits: /proc/1's (or kthreadd's), the
 * names in /run/netns, nsfs bind mounts, each process's own, and, while a
 * flowbloom program is still not found, those only an open file or a
 * bind mount in another mount namespace holds. What it could not look
 * into is kept (fb_walk_err()): a list or a namespace not read fails the
 * walk; a process whose own entries are refused is named (struct
 * refused), for the caller to say its answer may be partial.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "store/discover_walk.h"

void *fb_walk_grow(void *p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n < *cap)
		return p;
	q = realloc(p, (*cap = *cap ? *cap * 2 : 16) * size);
	if (!q)
		free(p);
	return q;
}

/* A process's name (/proc/PID/comm) in buf; false if it cannot be read. */
static bool read_comm(const char *path, char *buf, size_t len)
{
	FILE *c = fopen(path, "r");
	bool ok = false;

	buf[0] = 0;
	if (c) {
		ok = fgets(buf, (int)len, c) != NULL;
		buf[strcspn(buf, "\n")] = 0;
		fclose(c);
	}
	return ok;
}

/* A process's own entry (path under /proc/PID) refused: kept, each
 * process and what once, with its name. */
static void refused(struct found *f, const char *path, int e)
{
	char comm[64];
	const char *rest = strchr(path + strlen("/proc/"), '/'), *what;
	int pid = atoi(path + strlen("/proc/"));
	size_t i;

	if (strncmp(path, "/proc/", 6) || pid <= 0 || !rest)
		return;
	what = !strcmp(rest, "/ns/net")	  ? "network namespace"
	       : !strncmp(rest, "/fd", 3) ? "open files"
					  : "mounts";
	for (i = 0; i < f->nrefused; i++)
		if (f->refused[i].pid == pid && f->refused[i].what == what)
			return;
	f->refused = fb_walk_grow(f->refused, &f->caprefused, f->nrefused, sizeof(*f->refused));
	if (!f->refused) {
		f->nrefused = f->caprefused = 0;
		fb_walk_err(f, path, ENOMEM, false);
		return;
	}
	snprintf(comm, sizeof(comm), "/proc/%d/comm", pid);
	read_comm(comm, f->refused[f->nrefused].comm, sizeof(f->refused[0].comm));
	f->refused[f->nrefused].pid = pid;
	f->refused[f->nrefused].err = e;
	f->refused[f->nrefused++].what = what;
}

/* path (a namespace, or a list of them) not read, for e: gone meanwhile
 * (ENOENT, ESRCH: its process exited, its mount went; EINVAL: the
 * mountinfo of a process exiting) is no namespace; anything else
 * (descriptors, memory, a refusal) is one the walk cannot tell about: its
 * attachments would pass for none. The first is kept. A process's own
 * entries (proc) refused are a process flowbloom may not look into (a
 * sandbox's init, or flowbloom without CAP_SYS_PTRACE): kept apart
 * (refused()), the caller says what its answer then lacks. */
void fb_walk_err(struct found *f, const char *path, int e, bool proc)
{
	if (proc && (e == EACCES || e == EPERM)) {
		refused(f, path, e);
		return;
	}
	if (e == ENOENT || e == ESRCH || (proc && e == EINVAL) || f->err)
		return;
	f->err = e;
	snprintf(f->err_path, sizeof(f->err_path), "%s", path);
}

/*
 * A mount point that another mount namespace lists is reached through
 * /proc/PID/root, and what its path reaches there is for whoever made that
 * namespace to say: any user, in a user namespace of theirs, may list a
 * network namespace's mount, then hide it under a tmpfs holding a FIFO, a
 * symbolic link loop or a link to a file of ours. Where the path reaches no
 * namespace file, the mount is as gone (it would be, unmounted): never a
 * walk that cannot tell (status exit 1 at any user's say-so). A program
 * attached only in a namespace so hidden is still found attached nowhere,
 * and said so. A process whose /proc entries we may not read (EACCES,
 * EPERM) is still one not looked into.
 */
void fb_walk_ns_err(struct found *f, const struct ns *ns, int e)
{
	if (ns->theirs && e != EACCES && e != EPERM)
		return;
	fb_walk_err(f, ns->path, e, ns->proc);
}

/* Entry n of the list: path, label, hold (a new one, or one whose path
 * went away, reached again). */
static void set_ns(struct found *f, size_t n, const char *path, const char *label, bool proc,
		   int hold)
{
	struct ns *ns = &f->ns[n];

	if (ns->state == NS_GONE && ns->hold >= 0)
		close(ns->hold);
	snprintf(ns->path, sizeof(ns->path), "%s", path);
	snprintf(ns->label, sizeof(ns->label), "%s", label);
	ns->proc = proc;
	ns->theirs = hold >= 0;
	ns->hold = hold;
	ns->state = NS_NEW;
}

/* hold: -1, or the namespace file at path, opened O_PATH (by
 * discover_theirs.c, or from a process's open files), kept for scan_ns()
 * or closed here. A namespace is listed once, by the first path to it; a
 * later one is kept only while that path has gone (NS_GONE): a namespace
 * two processes are in is still visited when the first of them exits
 * between the listing and the visit. */
static void add_ns(struct found *f, const char *path, const char *label, bool proc, int hold)
{
	struct stat st;
	size_t i;

	/* One cut to fit would be opened as another file. */
	if (strlen(path) >= sizeof(f->ns[0].path)) {
		if (hold >= 0)
			close(hold);
		return;
	}
	if (hold >= 0 ? fstat(hold, &st) : stat(path, &st)) {
		fb_walk_err(f, path, errno, proc);
		if (hold >= 0)
			close(hold);
		return;
	}
	for (i = 0; i < f->nns; i++)
		if (f->ns[i].dev == st.st_dev && f->ns[i].ino == st.st_ino) {
			if (f->ns[i].state == NS_GONE)
				set_ns(f, i, path, label, proc, hold);
			else if (hold >= 0)
				close(hold);
			return; /* one visit per namespace: the first name wins */
		}
	f->ns = fb_walk_grow(f->ns, &f->capns, f->nns, sizeof(*f->ns));
	if (!f->ns) {
		f->nns = f->capns = 0;
		fb_walk_err(f, path, ENOMEM, false);
		if (hold >= 0)
			close(hold);
		return;
	}
	memset(&f->ns[f->nns], 0, sizeof(f->ns[0]));
	f->ns[f->nns].dev = st.st_dev;
	f->ns[f->nns].ino = st.st_ino;
	set_ns(f, f->nns++, path, label, proc, hold);
}

void fb_walk_add_held(struct found *f, const char *path, const char *label, int hold)
{
	add_ns(f, path, label, true, hold);
}

/* Namespaces kept alive by a bind mount elsewhere than /run/netns (as
 * container runtimes do): nsfs mounts whose root is net:[INODE]. Those of
 * our mount namespace (pid NULL), or of process pid's, reached through
 * /proc/PID/root. */
static void mounted_ns(struct found *f, const char *pid, struct fb_theirs *t)
{
	char line[4096], root[256], mnt[2048], path[300], label[128], *dash, *r, *w;
	FILE *in;

	snprintf(path, sizeof(path), "/proc/%s/mountinfo", pid ? pid : "self");
	in = fopen(path, "r");
	if (!in) {
		fb_walk_err(f, path, errno, pid);
		return;
	}
	while (fgets(line, sizeof(line), in)) {
		dash = strstr(line, " - nsfs ");
		if (!dash || sscanf(line, "%*s %*s %*s %255s %2047s", root, mnt) != 2 ||
		    strncmp(root, "net:[", 5))
			continue;
		/* mountinfo escapes space, tab, newline, backslash as \ooo */
		for (r = w = mnt; *r; w++) {
			if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] && r[3]) {
				*w = (r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0');
				r += 4;
			} else {
				*w = *r++;
			}
		}
		*w = 0;
		if (!pid) {
			add_ns(f, mnt, mnt, false, -1);
			continue;
		}
		if (snprintf(path, sizeof(path), "/proc/%s/root%s", pid, mnt) >= (int)sizeof(path))
			continue;
		snprintf(label, sizeof(label), "%.80s (mounts of pid %s)", mnt, pid);
		/* Looked up later, where its maker cannot stall the walk. */
		if (fb_theirs_add(t, path, label))
			fb_walk_err(f, path, ENOMEM, false);
	}
	fclose(in);
}

/* Are paths a and b (net/dev under /proc) of one network namespace? */
static bool same_netdev(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void fb_walk_collect(struct found *f)
{
	char path[300], label[128], comm[64];
	struct dirent *de;
	DIR *d;

	add_ns(f, "/proc/1/ns/net", "root", true, -1);
	/* Where PID 1's link cannot be read (a sandbox's own init), kthreadd:
	 * a kernel thread, always in the initial namespace. */
	if (read_comm("/proc/2/comm", comm, sizeof(comm)) && !strcmp(comm, "kthreadd"))
		add_ns(f, "/proc/2/ns/net", "root", true, -1);
	/* Both refused (flowbloom without CAP_SYS_PTRACE): ours is still the
	 * initial one when /proc/1/net is ours (no ptrace right asked). */
	if (!f->nns && same_netdev("/proc/1/net/dev", "/proc/self/net/dev"))
		add_ns(f, f->self_path, "root", false, -1);
	/* A list not read, or read in part: never taken for no more. */
	d = opendir("/run/netns");
	if (!d)
		fb_walk_err(f, "/run/netns", errno, false);
	while (d && (errno = 0, de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		add_ns(f, path, de->d_name, false, -1);
	}
	if (d && errno)
		fb_walk_err(f, "/run/netns", errno, false);
	if (d)
		closedir(d);
	mounted_ns(f, NULL, NULL);
	/* Namespaces only a process holds (unshare -n, containers). */
	d = opendir("/proc");
	if (!d)
		fb_walk_err(f, "/proc", errno, false);
	while (d && (errno = 0, de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		read_comm(path, comm, sizeof(comm));
		snprintf(label, sizeof(label), "pid %.12s (%.32s)", de->d_name, comm);
		snprintf(path, sizeof(path), "/proc/%s/ns/net", de->d_name);
		/* Ours by the descriptor walk_ns() holds: our /proc entry
		 * names whichever namespace the walk is in by then. */
		add_ns(f, atoi(de->d_name) == getpid() ? f->self_path : path, label,
		       atoi(de->d_name) != getpid(), -1);
	}
	if (d && errno)
		fb_walk_err(f, "/proc", errno, false);
	if (d)
		closedir(d);
}

/* Namespaces a process holds without being in them: an open file (a
 * runtime's handle, `exec 3</run/netns/NS` before `ip netns del NS`), or
 * a bind mount in a mount namespace of its own (`ip netns add` where
 * /run/netns does not propagate back). Looked for only when some
 * flowbloom program is not found in the namespaces collect_ns() lists:
 * reading every open file of every process costs more. */
void fb_walk_held(struct found *f)
{
	char path[300], link[64], label[128], comm[64];
	struct stat st, *mnts = NULL;
	size_t nmnts = 0, capmnts = 0, i;
	struct fb_theirs t = { 0 };
	struct dirent *de, *fe;
	struct statx sx;
	DIR *d, *fds;
	dev_t nsfs;
	int pfd;

	if (stat("/proc/self/ns/net", &st)) {
		fb_walk_err(f, "/proc/self/ns/net", errno, false);
		return;
	}
	nsfs = st.st_dev;
	if (!stat("/proc/self/ns/mnt", &st) && (mnts = fb_walk_grow(mnts, &capmnts, 0, sizeof(st))))
		mnts[nmnts++] = st;
	else
		fb_walk_err(f, "/proc/self/ns/mnt", errno, false);
	d = opendir("/proc");
	if (!d)
		fb_walk_err(f, "/proc", errno, false);
	while (d && (errno = 0, de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		read_comm(path, comm, sizeof(comm));
		snprintf(path, sizeof(path), "/proc/%s/fd", de->d_name);
		fds = opendir(path);
		if (!fds)
			fb_walk_err(f, path, errno, true);
		while (fds && (fe = readdir(fds))) {
			ssize_t n;

			if (fe->d_name[0] == '.' ||
			    snprintf(path, sizeof(path), "/proc/%.12s/fd/%.12s", de->d_name,
				     fe->d_name) < 0)
				continue;
			n = readlink(path, link, sizeof(link) - 1);
			if (n < 0)
				fb_walk_err(f, path, errno, true); /* ENOENT: closed since */
			/* An open namespace file reads as net:[INODE], or as
			 * "/" once its bind mount is gone (ip netns del):
			 * then its device tells (nsfs is one file system). */
			if (n < 1 || (strncmp(link, "net:[", 5) && (n != 1 || link[0] != '/')))
				continue;
			/* Looked at without asking its file system anything:
			 * O_PATH opens nothing, and a stat that does not sync
			 * sends a FUSE server no request (a process whose root
			 * is a FUSE mount, its server stopped, holds "/" too:
			 * a plain stat waited for ever). */
			pfd = open(path, O_PATH | O_CLOEXEC);
			if (pfd < 0) {
				fb_walk_err(f, path, errno, true);
				continue;
			}
			if (statx(pfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO, &sx)) {
				fb_walk_err(f, path, errno, true);
				close(pfd);
				continue;
			}
			if (makedev(sx.stx_dev_major, sx.stx_dev_minor) != nsfs) {
				close(pfd);
				continue;
			}
			snprintf(label, sizeof(label), "pid %.12s (%.32s) fd %.12s", de->d_name,
				 comm, fe->d_name);
			add_ns(f, path, label, true, pfd);
		}
		if (fds)
			closedir(fds);
		snprintf(path, sizeof(path), "/proc/%s/ns/mnt", de->d_name);
		if (stat(path, &st)) {
			fb_walk_err(f, path, errno, true);
			continue;
		}
		for (i = 0; i < nmnts; i++)
			if (mnts[i].st_dev == st.st_dev && mnts[i].st_ino == st.st_ino)
				break;
		if (i < nmnts)
			continue;
		mnts = fb_walk_grow(mnts, &capmnts, nmnts, sizeof(st));
		if (!mnts) {
			nmnts = capmnts = 0;
			fb_walk_err(f, path, ENOMEM, false);
			continue;
		}
		mnts[nmnts++] = st;
		mounted_ns(f, de->d_name, &t);
	}
	if (d && errno)
		fb_walk_err(f, "/proc", errno, false);
	if (d)
		closedir(d);
	free(mnts);
	fb_theirs_resolve(f, &t);
}
