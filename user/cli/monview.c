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
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flowbloom/prefix.h"
#include "clock.h"
#include "rules/flow.h"
#include "monview.h"
#include "output.h"
#include "report.h"
#include "util.h"

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

#define GONE_POLL_S 0.5

int fb_monview_sleep_until(const struct fb_store *f, const struct fb_monitor *m, double until)
{
	double t;

	for (;;) {
		t = fb_now() + GONE_POLL_S;
		if (!fb_clock_sleep_until(t < until ? t : until))
			return 0;
		if (m ? fb_monview_gone(f, m) : fb_store_gone(f) && fb_monview_report_gone(f))
			return -1;
		if (fb_now() >= until)
			return 1;
	}
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

#define DEVS_FRESH_S 5 /* the attachments found are used this long */
#define DEVS_MISS_S 1  /* an ifindex none has: looked again after this */

void fb_monview_devs_init(struct fb_monview_devs *d, const struct fb_store *f)
{
	memset(d, 0, sizeof(*d));
	d->outer_id = f->outer_id;
}

void fb_monview_devs_free(struct fb_monview_devs *d)
{
	free(d->att);
	d->att = NULL;
	d->n = 0;
}

/* The filter's attachments, in every namespace (quietly: a namespace that
 * cannot be entered leaves its devices unnamed, not the reader stopped). */
static void devs_look(struct fb_monview_devs *d)
{
	bool quiet = fb_report_quiet;
	struct fb_att *a = NULL;
	int n, i, k = 0;

	fb_report_quiet = true;
	n = fb_discover(&a, false);
	fb_report_quiet = quiet;
	for (i = 0; i < n; i++)
		if (a[i].filter_map_id == d->outer_id)
			a[k++] = a[i];
	fb_monview_devs_free(d);
	d->att = n > 0 ? a : NULL;
	d->n = k;
	if (n <= 0)
		free(a);
	d->when = fb_now();
}

/* The attachments with ifindex, one per namespace (a device attached in
 * both modes is one): up to max indices into hit; returns how many. */
static int devs_find(const struct fb_monview_devs *d, __u32 ifindex, int *hit, int max)
{
	int i, j, n = 0;

	for (i = 0; i < d->n; i++) {
		if (d->att[i].ifindex != ifindex)
			continue;
		for (j = 0; j < n; j++)
			if (!strcmp(d->att[hit[j]].netns, d->att[i].netns))
				break;
		if (j == n && n < max)
			hit[n++] = i;
	}
	return n;
}

static int devs_lookup(struct fb_monview_devs *d, __u32 ifindex, int *hit, int max)
{
	double now = fb_now();
	int n;

	if (!d->att || now - d->when >= DEVS_FRESH_S)
		devs_look(d);
	n = devs_find(d, ifindex, hit, max);
	if (!n && now - d->when >= DEVS_MISS_S) {
		devs_look(d); /* attached since */
		n = devs_find(d, ifindex, hit, max);
	}
	return n;
}

/* Is attachment a in this namespace? Its program (ids are the machine's)
 * is on the device with its ifindex here. */
static bool att_here(const struct fb_att *a)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	return !bpf_xdp_query(a->ifindex, 0, &q) &&
	       (q.drv_prog_id == a->prog_id || q.skb_prog_id == a->prog_id ||
		q.hw_prog_id == a->prog_id);
}

void fb_monview_dev(struct fb_monview_devs *d, __u32 ifindex, struct fb_monview_dev *out)
{
	int hit[2];

	memset(out, 0, sizeof(*out));
	if (devs_lookup(d, ifindex, hit, 2) != 1) {
		snprintf(out->name, sizeof(out->name), "ifindex %u", ifindex);
		return;
	}
	snprintf(out->name, sizeof(out->name), "%s", d->att[hit[0]].ifname);
	snprintf(out->netns, sizeof(out->netns), "%s", d->att[hit[0]].netns);
	out->here = att_here(&d->att[hit[0]]);
}

void fb_monview_dev_text(struct fb_monview_devs *d, __u32 ifindex, char *buf, size_t len)
{
	struct fb_monview_dev dev;
	char ns[FB_ESCAPED_SIZE(NAME_MAX + 1)], name[FB_ESCAPED_SIZE(sizeof(dev.name))];
	int hit[4], n, i;
	size_t at;

	fb_monview_dev(d, ifindex, &dev);
	fb_printable(dev.name, name, sizeof(name));
	if (dev.here) {
		snprintf(buf, len, "%s", name);
		return;
	}
	if (dev.netns[0]) {
		snprintf(buf, len, "%s (netns %s)", name, fb_printable(dev.netns, ns, sizeof(ns)));
		return;
	}
	at = (size_t)snprintf(buf, len, "%s", name);
	n = devs_find(d, ifindex, hit, 4);
	for (i = 0; i < n && i < 3 && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? " or " : " (netns ",
				       fb_printable(d->att[hit[i]].netns, ns, sizeof(ns)));
	if (n && at < len)
		snprintf(buf + at, len - at, "%s)", n > 3 ? " or more" : "");
}
