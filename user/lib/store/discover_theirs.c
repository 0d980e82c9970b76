// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Network namespaces bind-mounted in another mount namespace, looked up
 * where that namespace's maker cannot stall or steer the walk.
 *
 * Such a mount is reached through /proc/PID/root and the mount point that
 * namespace's mountinfo names, and what that path reaches is for whoever
 * made the namespace to say: any user, in a user namespace of theirs. A
 * FIFO over the mount made status wait forever on its open; a symbolic
 * link, open a file of ours they named; a FUSE file system whose server
 * they stop (or a stalled sshfs in a container), wait forever in the
 * lookup itself, in a wait no signal ends. So the lookups are made in a
 * child process: each path opened O_PATH (which opens nothing: no FIFO
 * waited on, no device's open run), kept only if it is a namespace file
 * (nsfs), and passed back; all of them within THEIRS_MS, after which the
 * child is left to the kernel (killed, not waited for) and what it did
 * not answer is as gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include "store/discover_walk.h"

/* Every lookup in other mount namespaces, together: at most this long. */
#define THEIRS_MS 2000

struct theirs_msg {
	size_t idx;
	int err; /* 0: the namespace file's O_PATH descriptor comes with it */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The child: nothing of ours held but the socket (a child stuck in a
 * lookup must not keep the caller's stdout, a pipe someone reads to its
 * end, open), each path looked up and answered in turn. */
static void __attribute__((noreturn)) child(int sock, const struct fb_theirs *t)
{
	size_t i;

	if (sock > 0)
		syscall(SYS_close_range, 0U, (unsigned)sock - 1, 0U);
	syscall(SYS_close_range, (unsigned)sock + 1, ~0U, 0U);
	for (i = 0; i < t->n; i++) {
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct theirs_msg m = { .idx = i };
		struct iovec iov = { &m, sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		int fd = open(t->p[i].path, O_PATH | O_CLOEXEC);
		struct statfs sf;

		if (fd < 0)
			m.err = errno;
		else if (fstatfs(fd, &sf))
			m.err = errno;
		else if (sf.f_type != NSFS_MAGIC)
			m.err = ENOENT; /* no namespace file: as a mount gone */
		if (!m.err) {
			struct cmsghdr *c;

			mh.msg_control = u.buf;
			mh.msg_controllen = sizeof(u.buf);
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &fd, sizeof(int));
		}
		if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
			_exit(1);
		if (fd >= 0)
			close(fd);
	}
	_exit(0);
}

int fb_theirs_add(struct fb_theirs *t, const char *path, const char *label)
{
	t->p = fb_walk_grow(t->p, &t->cap, t->n, sizeof(*t->p));
	if (!t->p) {
		t->n = t->cap = 0;
		return -1;
	}
	snprintf(t->p[t->n].path, sizeof(t->p[0].path), "%s", path);
	snprintf(t->p[t->n].label, sizeof(t->p[0].label), "%s", label);
	t->n++;
	return 0;
}

/* A child left in a lookup by an earlier walk of this process (top,
 * flows --follow walk again and again): while it is, no other is made,
 * and every mount of another namespace is as gone. */
static pid_t stuck;

void fb_theirs_resolve(struct found *f, struct fb_theirs *t)
{
	bool done = false;
	long long end;
	int sv[2];
	pid_t pid;

	if (stuck && waitpid(stuck, NULL, WNOHANG) != 0)
		stuck = 0;
	if (!t->n || stuck)
		goto out;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		fb_walk_err(f, t->p[0].path, errno, false);
		goto out;
	}
	pid = fork();
	if (!pid)
		child(sv[1], t);
	close(sv[1]);
	if (pid < 0) {
		fb_walk_err(f, t->p[0].path, errno, false);
		close(sv[0]);
		goto out;
	}
	for (end = now_ms() + THEIRS_MS; !done;) {
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct theirs_msg m;
		struct iovec iov = { &m, sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };
		struct pollfd pfd = { .fd = sv[0], .events = POLLIN };
		long long left = end - now_ms();
		struct cmsghdr *c;
		int fd = -1, r;
		ssize_t n;

		r = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* the child is stuck in a lookup */
		n = recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC);
		if (n <= 0) {
			done = !n; /* the child is done, exiting */
			break;
		}
		c = CMSG_FIRSTHDR(&mh);
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
		if (n != sizeof(m) || m.idx >= t->n) {
			if (fd >= 0)
				close(fd);
			break;
		}
		if (fd >= 0 && !m.err) {
			fb_walk_add_held(f, t->p[m.idx].path, t->p[m.idx].label, fd);
		} else {
			struct ns probe = { .proc = true, .theirs = true };

			if (fd >= 0)
				close(fd);
			snprintf(probe.path, sizeof(probe.path), "%s", t->p[m.idx].path);
			fb_walk_ns_err(f, &probe, m.err ? m.err : EPROTO);
		}
	}
	close(sv[0]);
	/* One stuck in a lookup dies when it returns (a FUSE server's answer
	 * or abort); it is not waited for, and holds nothing of ours. */
	if (!done)
		kill(pid, SIGKILL);
	if (waitpid(pid, NULL, done ? 0 : WNOHANG) == 0)
		stuck = pid;
out:
	free(t->p);
	memset(t, 0, sizeof(*t));
}
