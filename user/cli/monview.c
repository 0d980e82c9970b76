// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the monitoring verbs share (see monview.h): opening a filter with
 * its monitoring maps, noticing it was destroyed, printing keys.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "flowbloom/prefix.h"
#include "rules/flow.h"
#include "monview.h"
#include "output.h"

/* Open filter NAME and its monitoring maps, which must include `need`. */
int fb_monview_open(const char *name, __u32 need, struct fb_store *f, struct fb_monitor *m)
{
	int rc;

	if (fb_store_open(name, f))
		return -1;
	rc = fb_monitor_open(f, m);
	if (rc < 0) {
		fb_store_close(f);
		return -1;
	}
	if (rc > 0 || (m->cfg.flags & need) != need) {
		fb_err("filter '%s' has no %s (attach it with %s)", name,
		       need & FB_MON_SKETCH ? "traffic sketch" : "new-flow detection",
		       need & FB_MON_SKETCH ? "--monitor" : "--new-flows");
		if (!rc)
			fb_monitor_close(m);
		fb_store_close(f);
		return -1;
	}
	return 0;
}

int fb_monview_report_gone(const struct fb_store *f)
{
	fb_err("filter '%s' is gone (destroyed)", f->name);
	return 1;
}

bool fb_monview_gone(const struct fb_store *f, const struct fb_monitor *m)
{
	if (fb_store_gone(f)) {
		fb_monview_report_gone(f);
		return true;
	}
	if (!fb_monitor_remade(f, m))
		return false;
	fb_err("the monitoring maps of '%s' were made anew (detached, then attached again): "
	       "these are fed no more; run this again to read the new ones",
	       f->name);
	return true;
}

void fb_monview_close(struct fb_store *f, struct fb_monitor *m)
{
	fb_monitor_close(m);
	fb_store_close(f);
}

/* The bound eps' * N on any estimate's excess, rounded up. */
__u64 fb_monview_max_error(const struct fb_monitor *m, __u64 total)
{
	return (__u64)ceil(fb_monitor_epsilon(m) * (double)total);
}

void fb_monview_flow_text(const struct fb_key *k, char *buf, size_t len)
{
	struct fb_key c = *k;

	/* The program's keys are 5-tuple keys; print them as FLOW syntax. */
	c.kind = FB_KIND_FLOW;
	c.plen = 0;
	fb_flow_format(&c, buf, len);
}

void fb_monview_key_text(const struct fb_monitor *m, const struct fb_key *k, char *buf, size_t len)
{
	bool dst = m->cfg.flags & FB_MON_BY_DST;
	struct fb_key a;

	if (!(m->cfg.flags & FB_MON_BY_ADDR)) {
		fb_monview_flow_text(k, buf, len);
		return;
	}
	fb_prefix_key(&a, dst ? FB_KIND_DST : FB_KIND_SRC, k->w[dst ? 2 : 0], k->w[dst ? 3 : 1],
		      128, fb_key_word_family(k->w[4]));
	fb_flow_format(&a, buf, len);
}

const char *fb_monview_key_noun(const struct fb_monitor *m)
{
	return m->cfg.flags & FB_MON_BY_SRC   ? "source"
	       : m->cfg.flags & FB_MON_BY_DST ? "destination"
					      : "flow";
}

int fb_monview_lock_events(const struct fb_store *f, const struct fb_monitor *m)
{
	/* A descriptor of its own (flock holds per open file), of the
	 * directory already verified. */
	int fd = openat(m->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB)) {
		fb_err("another reader (flows --follow, ipfix) is taking the new-flow events "
		       "or flow records of '%s'%s%s",
		       f->name, errno == EWOULDBLOCK ? "" : ": ",
		       errno == EWOULDBLOCK ? "" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}
