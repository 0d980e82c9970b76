// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The routes guards announced, beside BAN (the guard_routes pin, see
 * monitor/guard.h; opened in guard.c with the other pins): which guards
 * hold each, whether they still run (a token map each keeps open), and
 * the routes of guards killed meanwhile. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "monitor/guard.h"
#include "report.h"

/* Field 22 of /proc/PID/stat (PID "self": this process, whichever PID
 * namespace the /proc mounted numbers it in), the process's start (0:
 * unknown, no such process with ENOENT). The name (field 2) may hold
 * spaces and ')': the fields after it follow its last ')'. */
static __u64 proc_start(const char *pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* ") S ppid ...": field 3 is the first after it, 22 the 20th. */
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p && sscanf(p + 1, "%llu", &start) != 1)
		start = 0;
	return start;
}

/* A guard's token (fb_guard_holder.token): a map of one entry, what it
 * says of its guard, open while the guard runs. */
#define TOKEN_NAME "fb_guard_live"
struct token {
	__u64 start;
	__u32 pid;
	__u32 pad;
};

/* Is the guard of token h->token still running? Its map gone (ENOENT):
 * no. One that cannot be looked at (no CAP_SYS_ADMIN) is taken as
 * running; an id the kernel gave to another map since is not. */
static bool token_alive(const struct fb_guard_holder *h)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0;
	struct token t;
	bool alive;
	int fd = bpf_map_get_fd_by_id(h->token);

	if (fd < 0)
		return errno != ENOENT;
	alive = !bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, TOKEN_NAME) &&
		info.type == BPF_MAP_TYPE_ARRAY && info.value_size == sizeof(t) &&
		!bpf_map_lookup_elem(fd, &key, &t) && t.pid == h->pid && t.start == h->start;
	close(fd);
	return alive;
}

/* Is h's guard still running? An older guard's entry (no token): by its
 * pid in this guard's /proc, one whose entry cannot be read for another
 * reason than its absence taken as running. */
static bool holder_alive(const struct fb_guard_holder *h)
{
	char pid[16], path[64];
	__u64 start;

	if (h->token)
		return token_alive(h);
	snprintf(pid, sizeof(pid), "%u", h->pid);
	start = proc_start(pid);
	if (start)
		return start == h->start;
	snprintf(path, sizeof(path), "/proc/%u", h->pid);
	return !access(path, F_OK) || errno != ENOENT;
}

int fb_guard_holder_self(struct fb_guard_holder *me)
{
	/* Open until the process ends: its id is this guard's. */
	static int token_fd = -1;
	static __u32 token_id;
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0;
	struct token t = { 0 };

	memset(me, 0, sizeof(*me));
	me->pid = (__u32)getpid();
	me->start = proc_start("self");
	if (!me->start) {
		fb_report_err("cannot read /proc/self/stat: %s", strerror(errno));
		return -1;
	}
	if (token_fd < 0) {
		t.pid = me->pid;
		t.start = me->start;
		token_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, TOKEN_NAME, sizeof(key), sizeof(t), 1,
					  &opts);
		if (token_fd < 0 || bpf_map_update_elem(token_fd, &key, &t, BPF_ANY) ||
		    bpf_obj_get_info_by_fd(token_fd, &info, &len)) {
			fb_report_err("cannot make this guard's token map: %s", strerror(errno));
			if (token_fd >= 0)
				close(token_fd);
			token_fd = -1;
			return -1;
		}
		token_id = info.id;
	}
	me->token = token_id;
	return 0;
}

/* A token's id is the kernel's to give again once its guard died: an
 * entry is mine only with my pid and start too. */
static bool is_me(const struct fb_guard_holder *h, const struct fb_guard_holder *me)
{
	return h->token == me->token && h->pid == me->pid && h->start == me->start;
}

/* Does a running guard (this one too) hold the route of v at now? */
static bool held(const struct fb_guard_holders *v, __u64 now)
{
	int i;

	for (i = 0; i < FB_GUARD_HOLDERS; i++)
		if (v->h[i].end > now && holder_alive(&v->h[i]))
			return true;
	return false;
}

/* Were all the guards that hold v killed (none running)? The last end
 * they recorded in *end. A guard whose life cannot be looked at counts
 * as running. */
static bool orphaned(const struct fb_guard_holders *v, __u64 *end)
{
	bool any = false;
	int i;

	*end = 0;
	for (i = 0; i < FB_GUARD_HOLDERS; i++) {
		if (!v->h[i].end)
			continue;
		if (holder_alive(&v->h[i]))
			return false;
		any = true;
		*end = v->h[i].end > *end ? v->h[i].end : *end;
	}
	return any;
}

/* Under f's lock: forget the routes no running guard holds (their
 * guards' bans ended: each withdraws its own at its end, finding none
 * held), but those whose guards all died (fb_guard_routes_orphans says
 * what becomes of them: still announced, nobody else would withdraw
 * them). How many were forgotten; errno kept for the caller's message
 * when none. */
static int routes_sweep(int fd, __u64 now)
{
	struct fb_guard_route key, prev;
	struct fb_guard_holders v;
	bool first = true;
	int n = 0, e = errno;
	__u32 seen;

	/* prev is always a route kept: the next after it skips one
	 * deleted. Bounded: a map is walked once. */
	for (seen = 0;
	     seen < FB_GUARD_BANS_MAX && !bpf_map_get_next_key(fd, first ? NULL : &prev, &key);
	     seen++) {
		__u64 end;

		if (!bpf_map_lookup_elem(fd, &key, &v) && !held(&v, now) && !orphaned(&v, &end) &&
		    !bpf_map_delete_elem(fd, &key)) {
			n++;
			continue;
		}
		prev = key;
		first = false;
	}
	errno = e;
	return n;
}

int fb_guard_routes_hold(int fd, const struct fb_guard_route *r, const struct fb_guard_holder *me,
			 __u64 now)
{
	struct fb_guard_holders v;
	int i, slot = -1, early;

	if (bpf_map_lookup_elem(fd, r, &v)) {
		if (errno != ENOENT) {
			fb_report_err("cannot read an announced route's guards: %s",
				      strerror(errno));
			return -1;
		}
		memset(&v, 0, sizeof(v));
	}
	/* Mine: to the later of my two ends (this guard may hold r for two
	 * reasons: its ban, and a killed guard's it took over). */
	for (i = 0; i < FB_GUARD_HOLDERS && slot < 0; i++)
		if (is_me(&v.h[i], me))
			slot = i;
	if (slot >= 0 && v.h[slot].end > me->end)
		return 0;
	for (i = 0; i < FB_GUARD_HOLDERS && slot < 0; i++)
		if (v.h[i].end <= now)
			slot = i;
	/* A dead guard's slot next: a syscall or two per slot. */
	for (i = 0; i < FB_GUARD_HOLDERS && slot < 0; i++)
		if (!holder_alive(&v.h[i]))
			slot = i;
	/* All running: the earliest end gives way to a later one. Its
	 * guard's release at that end finds the later ones holding r, as
	 * this guard's would if its end is the earliest (not recorded). */
	for (i = 0, early = -1; i < FB_GUARD_HOLDERS && slot < 0; i++)
		if (v.h[i].end < me->end && (early < 0 || v.h[i].end < v.h[early].end))
			early = i;
	if (slot < 0)
		slot = early;
	if (slot < 0)
		return 1;
	v.h[slot] = *me;
	/* Full: routes whose guards' bans ended make room, once; still
	 * full, E2BIG unsaid (the caller's orphans may make room). */
	if (!bpf_map_update_elem(fd, r, &v, BPF_ANY))
		return 0;
	if (errno == E2BIG && routes_sweep(fd, now) && !bpf_map_update_elem(fd, r, &v, BPF_ANY))
		return 0;
	if (errno != E2BIG) {
		int e = errno;

		fb_report_err("cannot record an announced route: %s", strerror(e));
		errno = e;
	}
	return -1;
}

int fb_guard_routes_release(int fd, const struct fb_guard_route *r,
			    const struct fb_guard_holder *me, __u64 now, bool locked)
{
	struct fb_guard_holders v;
	bool other = false, changed = false;
	int i;

	if (bpf_map_lookup_elem(fd, r, &v)) {
		if (errno == ENOENT)
			return 0;
		fb_report_err("cannot read an announced route's guards: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < FB_GUARD_HOLDERS; i++) {
		struct fb_guard_holder *h = &v.h[i];

		if (h->end > now && !is_me(h, me) && holder_alive(h)) {
			other = true;
		} else if (h->end) {
			/* Mine, ended, or its guard dead. */
			memset(h, 0, sizeof(*h));
			changed = true;
		}
	}
	if (!locked)
		return other;
	if (!other && bpf_map_delete_elem(fd, r) && errno != ENOENT)
		fb_report_err("cannot forget an announced route: %s", strerror(errno));
	else if (other && changed && bpf_map_update_elem(fd, r, &v, BPF_EXIST))
		fb_report_err("cannot forget a guard's route: %s", strerror(errno));
	return other;
}

int fb_guard_routes_orphans(int fd, const struct fb_guard_holder *me,
			    int (*fn)(void *ctx, const struct fb_guard_route *r, __u64 end),
			    void *ctx)
{
	struct fb_guard_route key, prev;
	struct fb_guard_holders v;
	bool first = true;
	int n = 0, rc;
	__u32 seen;
	__u64 end;

	/* prev is always a route kept, as in routes_sweep(). */
	for (seen = 0;
	     seen < FB_GUARD_BANS_MAX && !bpf_map_get_next_key(fd, first ? NULL : &prev, &key);
	     seen++) {
		if (bpf_map_lookup_elem(fd, &key, &v) || !orphaned(&v, &end)) {
			prev = key;
			first = false;
			continue;
		}
		n++;
		rc = fn(ctx, &key, end);
		if (rc == 0 && !bpf_map_delete_elem(fd, &key))
			continue;
		if (rc == 1) {
			memset(&v, 0, sizeof(v));
			v.h[0] = *me;
			v.h[0].end = end;
			if (bpf_map_update_elem(fd, &key, &v, BPF_EXIST))
				fb_report_err("cannot take over an announced route: %s",
					      strerror(errno));
		}
		prev = key;
		first = false;
	}
	if (errno != ENOENT) {
		fb_report_err("cannot read the announced routes: %s", strerror(errno));
		return -1;
	}
	return n;
}
