// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Finding every flowbloom XDP attachment on the machine, in every network
 * namespace, and what its maps are (see discover.h for why). The
 * namespaces to visit are listed in discover_ns.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "store/discover.h"
#include "report.h"
#include "util.h"
#include "store/discover_walk.h"
#include "store/pintree.h"

/* The walk failed: why, kept (fb_discover_walk()'s caller may say it)
 * and said unless quiet. */
__attribute__((format(printf, 2, 3))) static void walk_fail(struct found *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->why, sizeof(f->why), fmt, ap);
	va_end(ap);
	if (!f->quiet)
		fb_report_err("%s", f->why);
}

/* The names (and types) of a program's maps tell flowbloom's apart: 1,
 * 0, or -1 (errno) if a map of its cannot be read now (memory), which is
 * never taken for another tool's program, nor an empty slot for one on
 * private maps (failing open). */
static int flowbloom_maps(int prog_fd, __u32 nmaps, struct fbprog *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), i, *ids = calloc(nmaps, sizeof(*ids));
	bool stats = false, filter = false;
	int err = -1;

	if (!ids)
		return -1;
	info.nr_map_ids = nmaps;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		goto out;
	for (i = 0; i < info.nr_map_ids && i < nmaps; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi), zero = 0, inner = 0;
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			goto out;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
			close(fd);
			goto out;
		}
		if (!strcmp(mi.name, FB_MAP_STATS))
			stats = true;
		if (!strcmp(mi.name, FB_MAP_FILTER) && mi.type == BPF_MAP_TYPE_ARRAY_OF_MAPS) {
			filter = true;
			p->filter_map_id = mi.id;
			/* A map-in-map lookup from user space gives the
			 * inner map's id; ENOENT: the slot is empty. */
			if (bpf_map_lookup_elem(fd, &zero, &inner) && errno != ENOENT) {
				close(fd);
				goto out;
			}
			p->inner_id = inner;
		}
		close(fd);
	}
	err = stats && filter;
out:
	free(ids);
	return err;
}

static int find_progs(struct found *f)
{
	size_t cap = 0;
	__u32 id = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		struct fbprog p = { .id = id };
		int fd = bpf_prog_get_fd_by_id(id), is = 0;

		if (fd < 0 && errno == ENOENT)
			continue; /* gone meanwhile */
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) ||
		    (info.type == BPF_PROG_TYPE_XDP && info.nr_map_ids &&
		     (is = flowbloom_maps(fd, info.nr_map_ids, &p)) < 0)) {
			walk_fail(f, "cannot read BPF program %u: %s", id, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		if (is) {
			f->progs = fb_walk_grow(f->progs, &cap, f->nprogs, sizeof(p));
			if (!f->progs) {
				close(fd);
				return -1;
			}
			f->progs[f->nprogs++] = p;
		}
		close(fd);
	}
	if (errno != ENOENT) {
		walk_fail(f, "cannot list BPF programs: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static const struct fbprog *prog_of(const struct found *f, __u32 id)
{
	size_t i;

	for (i = 0; id && i < f->nprogs; i++)
		if (f->progs[i].id == id)
			return &f->progs[i];
	return NULL;
}

static int add_att(struct found *f, const struct ns *ns, const struct if_nameindex *ifc,
		   const char *mode, const struct fbprog *p)
{
	struct fb_att *a;

	f->atts = fb_walk_grow(f->atts, &f->capatts, f->natts, sizeof(*f->atts));
	if (!f->atts) {
		f->natts = f->capatts = 0;
		walk_fail(f, "cannot tell where flowbloom's programs are attached: %s",
			  strerror(ENOMEM));
		return -1;
	}
	a = &f->atts[f->natts++];
	memset(a, 0, sizeof(*a));
	snprintf(a->netns, sizeof(a->netns), "%s", ns->label);
	snprintf(a->ifname, sizeof(a->ifname), "%s", ifc->if_name);
	a->ifindex = ifc->if_index;
	a->mode = mode;
	a->prog_id = p->id;
	a->filter_map_id = p->filter_map_id;
	a->inner_id = p->inner_id;
	a->fails_open = !p->inner_id;
	/* Asked here: scan_devices() runs in the device's namespace. */
	a->link_type = fb_link_type(ifc->if_name);
	a->link_err = a->link_type < 0 ? errno : 0;
	return 0;
}

/* In the current network namespace: each device's XDP programs. */
static int scan_devices(struct found *f, const struct ns *ns)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	int rc = 0;

	/* Not listed, or a device's programs not read: never taken for
	 * none (a program on them would pass for attached nowhere). */
	if (!ifs) {
		walk_fail(f, "cannot list the network devices: %s", strerror(errno));
		return -1;
	}
	for (i = ifs; i->if_index && !rc; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		const struct fbprog *p;
		int e = bpf_xdp_query(i->if_index, 0, &q);

		if (e == -ENODEV) /* gone since the list */
			continue;
		if (e) {
			walk_fail(f, "cannot read the XDP programs of %s: %s", i->if_name,
				  strerror(-e));
			rc = -1;
			break;
		}
		if ((p = prog_of(f, q.drv_prog_id)))
			rc = add_att(f, ns, i, "native", p);
		if (!rc && (p = prog_of(f, q.skb_prog_id)))
			rc = add_att(f, ns, i, "generic", p);
		if (!rc && (p = prog_of(f, q.hw_prog_id)))
			rc = add_att(f, ns, i, "offload", p);
	}
	if_freenameindex(ifs);
	return rc;
}

/* The inode of a namespace's /proc net/dev (path: /proc/PID/net/dev, of
 * the namespace PID is in), one of its own while it lives: a process whose
 * namespace link is refused is told in a namespace the walk visited by
 * it (/proc/PID/net asks no ptrace right). 0 if not read. */
static ino_t proc_netdev(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

/*
 * The namespace file at path, opened for setns() only if it is one
 * (fb_ns_open(): O_PATH, which opens nothing, checked to be on nsfs, then
 * reopened through /proc/self/fd). A process's /proc/PID/fd/N can be
 * another file by the time it is opened (a FIFO dup2()ed over the
 * namespace file status saw: it waited forever), and a mount point's path
 * can lead elsewhere since it was listed. One that is no namespace file
 * (-1, ENOENT) is as a mount gone since. (Mounts of other mount namespaces
 * are looked up before, in discover_theirs.c.)
 */
static int open_ns(const char *path, const struct ns *ns)
{
	struct stat st;
	int fd = fb_ns_open(path, &st);

	if (fd < 0 && errno == EINVAL)
		errno = ENOENT;
	/* Another namespace than the one listed (its name deleted and made
	 * again, its process's pid reused): that one is as gone from there. */
	if (fd >= 0 && (st.st_dev != ns->dev || st.st_ino != ns->ino)) {
		close(fd);
		errno = ENOENT;
		fd = -1;
	}
	return fd;
}

/* Each namespace still to visit: its devices' XDP programs. */
static int scan_ns(struct found *f)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < f->nns && !rc; i++) {
		char held[32];
		int fd;

		if (f->ns[i].state != NS_NEW)
			continue;
		if (f->ns[i].hold >= 0)
			snprintf(held, sizeof(held), "/proc/self/fd/%d", f->ns[i].hold);
		fd = open_ns(f->ns[i].hold >= 0 ? held : f->ns[i].path, &f->ns[i]);

		/* ENOENT: its process exited or its mount went (or what its
		 * path reaches now is no namespace, or another): another path
		 * to it may still be there (reach_gone()). */
		f->ns[i].state = fd < 0 && (errno == ENOENT || errno == ESRCH) ? NS_GONE : NS_DONE;
		if (fd < 0) {
			fb_walk_ns_err(f, &f->ns[i], errno);
			continue;
		}
		/* netlink and if_nameindex() work in the caller's namespace:
		 * enter each in turn (a single-threaded process may). EINVAL:
		 * an open file of another kind of namespace (held_ns()). */
		if (!setns(fd, CLONE_NEWNET)) {
			rc = scan_devices(f, &f->ns[i]);
			f->ns[i].netdev = proc_netdev("/proc/thread-self/net/dev");
			/* Back home before the next open, which may wait: a
			 * process found in a namespace (`ip netns pids`) is
			 * one its owner may kill. */
			if (setns(f->self, CLONE_NEWNET)) {
				fb_report_err("cannot return to the original network "
					      "namespace: %s",
					      strerror(errno));
				exit(1);
			}
		} else if (errno != EINVAL)
			fb_walk_err(f, f->ns[i].path, errno, f->ns[i].proc);
		close(fd);
	}
	return rc;
}

/* Is some flowbloom program attached to no device found so far? */
static bool unplaced(const struct found *f)
{
	size_t i, j;

	for (i = 0; i < f->nprogs; i++) {
		for (j = 0; j < f->natts && f->atts[j].prog_id != f->progs[i].id; j++)
			;
		if (j == f->natts)
			return true;
	}
	return false;
}

/* Processes whose namespace link was refused, but whose namespace the
 * walk visited (or that exited since): no gap. */
static void resolve_refused(struct found *f)
{
	char path[64];
	size_t i, j, k;
	ino_t ino;

	for (i = k = 0; i < f->nrefused; i++) {
		struct fb_refused *r = &f->refused[i];

		if (!strcmp(r->what, "network namespace")) {
			snprintf(path, sizeof(path), "/proc/%d/net/dev", r->pid);
			ino = proc_netdev(path);
			if (!ino && (errno == ENOENT || errno == ESRCH))
				continue;
			for (j = 0; ino && j < f->nns && f->ns[j].netdev != ino; j++)
				;
			if (ino && j < f->nns)
				continue;
		}
		f->refused[k++] = *r;
	}
	f->nrefused = k;
}

static size_t count_ns(const struct found *f, enum ns_state state)
{
	size_t i, n = 0;

	for (i = 0; i < f->nns; i++)
		n += f->ns[i].state == state;
	return n;
}

/* Namespaces whose path went away between the listing and the visit:
 * another process in them, another name or mount of theirs still holds
 * them (a daemon's parent exits once its child runs; `ip netns del` of a
 * name a process is in). The lists are read again, each path to a gone
 * namespace taken (add_ns()) and visited, a few times over: each path
 * found may go too. Those still gone are so for every path the walk
 * knows; fb_walk_held() may yet find one. */
#define GONE_ROUNDS 3

static int reach_gone(struct found *f)
{
	int round, rc = 0;

	for (round = 0; !rc && round < GONE_ROUNDS && count_ns(f, NS_GONE); round++) {
		fb_walk_collect(f);
		if (!count_ns(f, NS_NEW))
			break;
		rc = scan_ns(f);
	}
	return rc;
}

static int walk_ns(struct found *f)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), rc = 0;

	if (self < 0) {
		walk_fail(f, "/proc/self/ns/net: %s", strerror(errno));
		return -1;
	}
	snprintf(f->self_path, sizeof(f->self_path), "/proc/self/fd/%d", self);
	f->self = self;
	fb_walk_collect(f);
	rc = scan_ns(f);
	if (!rc)
		rc = reach_gone(f);
	if (!rc && unplaced(f)) {
		fb_walk_held(f);
		rc = scan_ns(f);
	}
	if (!rc)
		resolve_refused(f);
	/* A namespace not read: where the programs are attached is not
	 * known (one there would pass for attached nowhere). */
	if (!rc && f->err) {
		walk_fail(f, "cannot tell where flowbloom's programs are attached: %s: %s",
			  f->err_path, strerror(f->err));
		rc = -1;
	}
	if (setns(self, CLONE_NEWNET)) {
		/* Never go on in some other namespace. */
		fb_report_err("cannot return to the original network namespace: %s",
			      strerror(errno));
		exit(1);
	}
	close(self);
	return rc;
}

/* The id of the map pinned as name in the verified directory dfd; 0 if
 * none (never through a symbolic link: fb_pin_get()), or not read (errno
 * then not ENOENT). */
static __u32 pinned_map_id(int dfd, const char *name)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	int fd = dfd < 0 ? -1 : fb_pin_get(dfd, name), e;

	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &mi, &len))
		mi.id = 0;
	e = mi.id ? 0 : errno;
	close(fd);
	errno = e;
	return mi.id;
}

/* The id of the ip-link fb_filter pin, if xdp/globals passes the checks
 * `create default` makes before pinning there: a directory another user
 * made (or a link planted for it) could name any map, so it is not
 * believed. status says why (a note); info and stats stay quiet. */
static __u32 globals_map_id(const struct found *f)
{
	bool quiet = fb_report_quiet;
	__u32 id;
	int gdir;

	fb_report_last[0] = 0;
	fb_report_quiet = true;
	gdir = fb_pin_open_iproute(false);
	fb_report_quiet = quiet;
	/* Not for a caller that asked for quiet (fb_discover_find(): destroy's
	 * refusal, --dev's), whose message is about something else. */
	if (gdir == -1 && !f->quiet && !quiet && fb_report_last[0])
		fb_report(FB_REPORT_NOTE, "%s", fb_report_last);
	id = pinned_map_id(gdir, FB_MAP_FILTER);
	if (gdir >= 0)
		close(gdir);
	return id;
}

/* Which pinned filter (if any) each attachment's fb_filter is. Read from
 * the pins, through the verified directories, without opening the
 * filters: nothing to print, nothing to lock. */
static void name_filters(struct found *f)
{
	char **names = NULL;
	__u32 globals, id;
	bool quiet;
	size_t i;
	int n, j, root = -1, err = 0;

	globals = globals_map_id(f);
	/* A name not read (the filters' directory, one's directory or pin:
	 * descriptors, memory, a refused root) cannot tell which filter an
	 * attachment holds: never "a filter not under" the root. Without
	 * bpffs no filter has a name (status says so). */
	quiet = fb_report_quiet;
	fb_report_quiet = true;
	n = fb_pin_check_bpffs() ? (errno == ENODEV ? 0 : -1) : fb_pin_list(&names);
	if (n < 0)
		err = errno;
	if (n > 0 && (root = fb_pin_open_root(false)) == -1)
		err = errno;
	fb_report_quiet = quiet;
	for (i = 0; i < f->natts; i++) {
		struct fb_att *a = &f->atts[i];

		a->maps = a->inner_id ? FB_ATT_OTHER : FB_ATT_PRIVATE;
		if (globals && a->filter_map_id == globals)
			a->maps = FB_ATT_GLOBALS;
	}
	for (j = 0; j < n; j++) {
		int dir = root < 0 ? -1 : fb_pin_open_dir(root, names[j]);

		if (root >= 0 && dir < 0 && errno != ENOENT)
			err = errno;
		id = pinned_map_id(dir, "filter");
		if (dir >= 0 && !id && errno != ENOENT)
			err = errno;
		if (dir >= 0)
			close(dir);
		for (i = 0; id && i < f->natts; i++)
			if (f->atts[i].filter_map_id == id) {
				f->atts[i].maps = FB_ATT_FILTER;
				snprintf(f->atts[i].filter, sizeof(f->atts[i].filter), "%s",
					 names[j]);
			}
		free(names[j]);
	}
	if (root >= 0)
		close(root);
	free(names);
	for (i = 0; err && i < f->natts; i++)
		if (f->atts[i].maps == FB_ATT_OTHER) {
			f->atts[i].maps = FB_ATT_UNKNOWN;
			f->atts[i].name_err = err;
		}
}

static int cmp_att(const void *a, const void *b)
{
	const struct fb_att *x = a, *y = b;
	int c = strcmp(x->netns, y->netns);

	return c ? c : strcmp(x->ifname, y->ifname);
}

bool fb_walk_partial(const struct fb_walk *w)
{
	size_t i;

	for (i = 0; w->nunplaced && i < w->nrefused; i++)
		if (!strcmp(w->refused[i].what, "network namespace"))
			return true;
	return false;
}

void fb_walk_free(struct fb_walk *w)
{
	free(w->refused);
	free(w->unplaced);
	free(w->gone);
	memset(w, 0, sizeof(*w));
}

/* What the walk could not see, into w: the refused processes, the
 * programs found attached nowhere, and the namespaces gone before they
 * were visited. false: no memory for them. */
static bool walk_report(struct found *f, struct fb_walk *w)
{
	size_t i, j;

	w->refused = f->refused;
	w->nrefused = f->nrefused;
	f->refused = NULL;
	w->unplaced = calloc(f->nprogs ? f->nprogs : 1, sizeof(*w->unplaced));
	if (!w->unplaced)
		return false;
	for (i = 0; i < f->nprogs; i++) {
		for (j = 0; j < f->natts && f->atts[j].prog_id != f->progs[i].id; j++)
			;
		if (j == f->natts)
			w->unplaced[w->nunplaced++] = f->progs[i].id;
	}
	w->gone = calloc(count_ns(f, NS_GONE) + 1, sizeof(*w->gone));
	if (!w->gone)
		return false;
	for (i = 0; i < f->nns; i++)
		if (f->ns[i].state == NS_GONE)
			memcpy(w->gone[w->ngone++], f->ns[i].label, sizeof(w->gone[0]));
	return true;
}

int fb_discover_walk(struct fb_att **atts, bool fail_open_only, struct fb_walk *w)
{
	struct found f = { .quiet = fail_open_only };
	size_t i, j;
	int rc = -1;

	*atts = NULL;
	if (w)
		memset(w, 0, sizeof(*w));
	if (find_progs(&f))
		goto out;
	if (fail_open_only) {
		/* The common case: every loaded flowbloom program holds a
		 * filter, so none can fail open: no namespace walk. */
		for (i = j = 0; i < f.nprogs; i++)
			if (!f.progs[i].inner_id)
				f.progs[j++] = f.progs[i];
		f.nprogs = j;
	}
	if (!f.nprogs) {
		rc = 0;
		goto out;
	}
	if (walk_ns(&f))
		goto out;
	if (w && !walk_report(&f, w)) {
		walk_fail(&f, "cannot tell where flowbloom's programs are attached: %s",
			  strerror(ENOMEM));
		goto out;
	}
	name_filters(&f);
	if (f.natts)
		qsort(f.atts, f.natts, sizeof(*f.atts), cmp_att);
	*atts = f.atts;
	f.atts = NULL;
	rc = f.natts;
out:
	if (w && rc < 0) {
		fb_walk_free(w);
		snprintf(w->why, sizeof(w->why), "%s", f.why[0] ? f.why : strerror(ENOMEM));
	}
	free(f.progs);
	for (i = 0; i < f.nns; i++)
		if (f.ns[i].hold >= 0)
			close(f.ns[i].hold);
	free(f.ns);
	free(f.atts);
	free(f.refused);
	return rc;
}

int fb_discover(struct fb_att **atts, bool fail_open_only)
{
	return fb_discover_walk(atts, fail_open_only, NULL);
}

int fb_discover_find(__u32 prog_id, __u32 map_id, struct fb_att *out)
{
	bool quiet = fb_report_quiet;
	struct fb_att *a = NULL;
	int n, i, hit = -1;

	fb_report_quiet = true;
	n = fb_discover(&a, false);
	fb_report_quiet = quiet;
	for (i = 0; i < n && hit < 0; i++)
		if (prog_id ? a[i].prog_id == prog_id
			    : a[i].filter_map_id && a[i].filter_map_id == map_id)
			hit = i;
	if (hit >= 0)
		*out = a[hit];
	free(a);
	return hit >= 0 ? 1 : n < 0 ? -1 : 0;
}
