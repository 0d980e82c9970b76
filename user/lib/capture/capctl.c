// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Capture control (capctl.h): control blocks found by map name among an
 * attached program's maps, held under a lease, armed and disarmed by
 * writes the running program sees at once.
 *
 * The lease word is the lock. Taking a block is a compare-and-swap of a
 * lease that ran out (or 0) for a new one, so of two captures starting
 * at once one wins; renewing is a compare-and-swap of the value this
 * capture wrote last, so a capture that lost its block (stopped past its
 * lease, then taken over) notices. The program only reads the lease, and
 * clears `on` when it finds it run out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/capctl.h"
#include "store/discover.h"
#include "report.h"

__u64 fb_capture_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void prog_init(struct fb_cap_prog *p)
{
	memset(p, 0, sizeof(*p));
	p->ctl_fd = p->rings_fd = p->buf_fd = -1;
}

static void prog_close(struct fb_cap_prog *p)
{
	if (p->ctl)
		munmap(p->ctl, sysconf(_SC_PAGESIZE));
	if (p->ctl_fd >= 0)
		close(p->ctl_fd);
	if (p->rings_fd >= 0)
		close(p->rings_fd);
	if (p->buf_fd >= 0)
		close(p->buf_fd);
	prog_init(p);
}

/* The program's capture maps, by name (include/flowbloom/capture.h), each
 * checked for the layout this build writes, into p's fds (-1: absent). -1
 * with errno if the program is gone, or it or a map of its cannot be read
 * now (memory): never taken for a program without them. */
static int find_maps(struct fb_cap_prog *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[64], i;
	int fd = bpf_prog_get_fd_by_id(p->prog_id);

	if (fd < 0)
		return -1;
	info.nr_map_ids = 64;
	info.map_ids = (__u64)(unsigned long)ids;
	i = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (i)
		return -1;
	for (i = 0; i < info.nr_map_ids && i < 64; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int mfd = bpf_map_get_fd_by_id(ids[i]);
		int *slot = NULL;

		if (mfd < 0)
			return -1;
		if (bpf_obj_get_info_by_fd(mfd, &mi, &mlen)) {
			close(mfd);
			return -1;
		}
		if (!strcmp(mi.name, FB_CAP_SECTION) && mi.type == BPF_MAP_TYPE_ARRAY &&
		    mi.value_size == sizeof(struct fb_cap_ctl) && (mi.map_flags & BPF_F_MMAPABLE))
			slot = &p->ctl_fd;
		else if (!strcmp(mi.name, FB_CAP_RINGS) && mi.type == BPF_MAP_TYPE_ARRAY_OF_MAPS)
			slot = &p->rings_fd;
		else if (!strcmp(mi.name, FB_CAP_BUF) && mi.type == BPF_MAP_TYPE_PERCPU_ARRAY &&
			 mi.value_size == sizeof(struct fb_cap_buf))
			slot = &p->buf_fd;
		if (slot && *slot < 0)
			*slot = mfd;
		else
			close(mfd);
	}
	return 0;
}

/* find_maps(), all three required, and the control block mapped. */
static int prog_maps(struct fb_cap_prog *p)
{
	if (find_maps(p)) {
		fb_report_err("program %u on %s: %s", p->prog_id, p->ifname, strerror(errno));
		return -1;
	}
	if (p->ctl_fd < 0 || p->rings_fd < 0 || p->buf_fd < 0) {
		fb_report_err("the XDP program on %s (id %u) has no capture maps of this version: "
			      "attached by another flowbloom build? detach and attach again",
			      p->ifname, p->prog_id);
		return -1;
	}
	p->ctl =
		mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED, p->ctl_fd, 0);
	if (p->ctl == MAP_FAILED) {
		p->ctl = NULL;
		fb_report_err("cannot map the capture control of %s: %s", p->ifname,
			      strerror(errno));
		return -1;
	}
	return 0;
}

int fb_capture_held(__u32 prog_id, __u64 *ring_bytes, bool *running)
{
	struct bpf_map_info ri = {};
	__u32 rlen = sizeof(ri), zero = 0, rid;
	struct fb_cap_prog p;
	struct fb_cap_ctl ctl;
	int rfd, rc = -1, err = 0;

	*ring_bytes = 0;
	*running = false;
	prog_init(&p);
	p.prog_id = prog_id;
	/* The control not read: not known to be idle (a ring is noted as
	 * left by a killed capture only when it is). An empty ring slot
	 * reads ENOENT: no ring; any other failure leaves it unknown. */
	if (find_maps(&p)) {
		err = errno;
	} else if (p.ctl_fd < 0 || p.rings_fd < 0) {
		rc = 1;
	} else if (bpf_map_lookup_elem(p.ctl_fd, &zero, &ctl)) {
		err = errno;
	} else {
		*running = ctl.lease > fb_capture_clock();
		if (bpf_map_lookup_elem(p.rings_fd, &zero, &rid)) {
			err = errno;
			rc = err == ENOENT ? 0 : -2;
		} else if ((rfd = bpf_map_get_fd_by_id(rid)) < 0) {
			err = errno;
			rc = -2;
		} else {
			if (bpf_obj_get_info_by_fd(rfd, &ri, &rlen)) {
				err = errno;
				rc = -2;
			} else {
				*ring_bytes = ri.max_entries;
				rc = 0;
			}
			close(rfd);
		}
	}
	prog_close(&p);
	errno = err;
	return rc;
}

void fb_capture_init(struct fb_capture *c)
{
	memset(c, 0, sizeof(*c));
	c->ring_fd = -1;
}

int fb_capture_add(struct fb_capture *c, __u32 prog_id, const char *ifname, const char *mode)
{
	struct fb_cap_prog *p;

	if (c->nprogs == FB_CAP_MAX_PROGS) {
		fb_report_err("more than %d programs to capture from: name a device (--dev)",
			      FB_CAP_MAX_PROGS);
		return -1;
	}
	p = &c->prog[c->nprogs++];
	prog_init(p);
	p->prog_id = prog_id;
	snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	snprintf(p->mode, sizeof(p->mode), "%s", mode);
	return prog_maps(p);
}

struct collect {
	struct fb_capture *c;
	const char *dev;
	int err;
};

static void collect(const char *ifname, const char *mode, __u32 prog_id, void *ctx)
{
	struct collect *co = ctx;

	if (co->err || (co->dev && strcmp(co->dev, ifname)))
		return;
	co->err = fb_capture_add(co->c, prog_id, ifname, mode);
}

int fb_capture_open(const struct fb_store *f, const char *dev, struct fb_capture *c)
{
	struct collect co = { c, dev, 0 };

	fb_capture_init(c);
	/* Where it is attached not read (said): not "not attached". */
	if (fb_discover_attachments(f, collect, &co) < 0 || co.err)
		goto fail;
	if (!c->nprogs) {
		if (dev)
			fb_report_err("filter '%s' is not attached to %s", f->name, dev);
		else
			fb_report_err("filter '%s' is not attached to any device in this network "
				      "namespace (-n NETNS for another)",
				      f->name);
		goto fail;
	}
	return 0;
fail:
	fb_capture_close(c);
	return -1;
}

/* Take p's block: a lease that ran out (or 0). A holder whose process
 * seems gone has its lease waited out, never cut short: a pid is only
 * meaningful in its own pid namespace, and a capture running in another
 * one must keep its block. */
static int take(struct fb_capture *c, struct fb_cap_prog *p)
{
	__u64 old, owner, now;
	int tries;
	pid_t pid;

	for (tries = 0;; tries++) {
		now = fb_capture_clock();
		old = __atomic_load_n(&p->ctl->lease, __ATOMIC_ACQUIRE);
		owner = __atomic_load_n(&p->ctl->owner, __ATOMIC_ACQUIRE);
		pid = owner >> 32;
		if (old <= now)
			break;
		if (tries || !(pid > 0 && kill(pid, 0) && errno == ESRCH) ||
		    old - now > FB_CAP_LEASE_NS) {
			fb_report_err("a capture (pid %d) is running on %s: one capture at a time",
				      (int)pid, p->ifname);
			return -1;
		}
		fb_report(FB_REPORT_NOTE,
			  "the capture on %s was left by pid %d, which is gone: its lease ends "
			  "within %.1f s",
			  p->ifname, (int)pid, (old - now) / 1e9);
		usleep((old - now) / 1000 + 20000);
	}
	if (!__atomic_compare_exchange_n(&p->ctl->lease, &old, now + FB_CAP_LEASE_NS, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		fb_report_err("another capture started on %s just now: one capture at a time",
			      p->ifname);
		return -1;
	}
	p->lease = now + FB_CAP_LEASE_NS;
	__atomic_store_n(&p->ctl->owner, c->owner, __ATOMIC_RELEASE);
	return 0;
}

/* Give p's block back, if this capture still holds it. */
static void release(struct fb_capture *c, struct fb_cap_prog *p)
{
	__u64 old = p->lease;

	if (!p->lease)
		return;
	if (__atomic_load_n(&p->ctl->owner, __ATOMIC_ACQUIRE) == c->owner)
		__atomic_store_n(&p->ctl->owner, 0, __ATOMIC_RELEASE);
	__atomic_compare_exchange_n(&p->ctl->lease, &old, 0, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	p->lease = 0;
}

static int reset_counters(const struct fb_cap_prog *p)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 zero = 0;
	void *z;
	int err;

	if (ncpu < 1)
		return -1;
	z = calloc(ncpu, sizeof(struct fb_cap_buf));
	if (!z)
		return -1;
	err = bpf_map_update_elem(p->buf_fd, &zero, z, BPF_ANY);
	free(z);
	return err;
}

int fb_capture_start(struct fb_capture *c, const struct fb_cap_opts *o)
{
	__u64 now = fb_capture_clock();
	__u32 nonce = 0, zero = 0;
	unsigned i;

	if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
		nonce = (__u32)now;
	c->owner = (__u64)getpid() << 32 | nonce;
	for (i = 0; i < c->nprogs; i++)
		if (take(c, &c->prog[i]))
			goto fail;
	c->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "fb_cap_ring", 0, 0, o->ring_bytes, NULL);
	if (c->ring_fd < 0) {
		fb_report_err("cannot create a ring buffer of %llu bytes: %s",
			      (unsigned long long)o->ring_bytes, strerror(errno));
		goto fail;
	}
	for (i = 0; i < c->nprogs; i++) {
		struct fb_cap_prog *p = &c->prog[i];
		struct fb_cap_ctl *ctl = p->ctl;

		/* Nothing writes the counters while on is 0 (ours to set). */
		if (reset_counters(p) ||
		    bpf_map_update_elem(p->rings_fd, &zero, &c->ring_fd, BPF_ANY)) {
			fb_report_err("cannot set up capture on %s: %s", p->ifname,
				      strerror(errno));
			goto fail;
		}
		ctl->verdicts = o->verdicts;
		ctl->sample = o->sample;
		ctl->snaplen = o->snaplen;
		ctl->tag = i;
		/* Last, with release order: a packet that sees on sees the rest. */
		__atomic_store_n(&ctl->on, 1, __ATOMIC_RELEASE);
		p->armed = true;
	}
	return c->ring_fd;
fail:
	fb_capture_stop(c);
	return -1;
}

int fb_capture_renew(struct fb_capture *c, unsigned *lapsed)
{
	__u64 lease = fb_capture_clock() + FB_CAP_LEASE_NS;
	unsigned i;

	for (i = 0; i < c->nprogs; i++) {
		struct fb_cap_prog *p = &c->prog[i];
		__u64 old = p->lease;

		if (!p->armed)
			continue;
		if (!__atomic_compare_exchange_n(&p->ctl->lease, &old, lease, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			fb_report_err("the capture on %s was taken over by pid %d after this one "
				      "stopped past its lease",
				      p->ifname, (int)(p->ctl->owner >> 32));
			p->lease = 0; /* not ours to release */
			p->armed = false;
			return -1;
		}
		p->lease = lease;
		/* The program found the lease run out and turned capture off. */
		if (!__atomic_load_n(&p->ctl->on, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&p->ctl->on, 1, __ATOMIC_RELEASE);
			if (lapsed)
				(*lapsed)++;
		}
	}
	return 0;
}

int fb_capture_stats(const struct fb_capture *c, __u64 stat[FB_CAP_STAT_NR])
{
	int ncpu = libbpf_num_possible_cpus(), cpu, s;
	struct fb_cap_buf *v;
	__u32 zero = 0;
	unsigned i;

	memset(stat, 0, FB_CAP_STAT_NR * sizeof(stat[0]));
	if (ncpu < 1)
		return -1;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < c->nprogs; i++) {
		if (bpf_map_lookup_elem(c->prog[i].buf_fd, &zero, v)) {
			fb_report_err("cannot read the capture counters of %s: %s",
				      c->prog[i].ifname, strerror(errno));
			free(v);
			return -1;
		}
		for (cpu = 0; cpu < ncpu; cpu++)
			for (s = 0; s < FB_CAP_STAT_NR; s++)
				stat[s] += v[cpu].stat[s];
	}
	free(v);
	return 0;
}

void fb_capture_stop(struct fb_capture *c)
{
	__u32 zero = 0;
	unsigned i;

	for (i = 0; i < c->nprogs; i++) {
		struct fb_cap_prog *p = &c->prog[i];

		if (p->armed) {
			__atomic_store_n(&p->ctl->on, 0, __ATOMIC_RELEASE);
			/* The ring goes when the last program lets go of it; a
			 * packet already past the check finishes its write. */
			bpf_map_delete_elem(p->rings_fd, &zero);
			p->armed = false;
		}
		release(c, p);
	}
}

void fb_capture_close(struct fb_capture *c)
{
	unsigned i;

	fb_capture_stop(c);
	for (i = 0; i < c->nprogs; i++)
		prog_close(&c->prog[i]);
	c->nprogs = 0;
	if (c->ring_fd >= 0)
		close(c->ring_fd);
	c->ring_fd = -1;
}
