// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Flow monitoring maps shared between attachments: `attach` shares the
 * maps a program feeds already, or makes them anew where none does
 * (fb_monitor_prepare(), monmaps.h); creating and opening them is
 * monmaps.c. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "monitor/monmaps.h"
#include "report.h"
#include "store/discover.h"
#include "store/pintree.h"
#include "util.h"

/* Is any loaded program but program skip (0: none; the one `attach
 * --replace` puts its program in place of) using m's maps, attached
 * anywhere, in any network namespace, or held by a process? (Attachments
 * are only visible from their own namespace.) 1 (the program's id in *prog
 * if prog is not NULL), 0, or -1 (reported) if a map or program cannot be
 * read now: never taken for unused. */
static int in_use(const struct fb_monitor *m, __u32 skip, __u32 *prog)
{
	int fds[3] = { m->sketch_fd, m->seen_fd, m->flows_fd }, used = 0, fd;
	__u32 want[3], id = 0, ids[64], i, j;

	for (j = 0; j < 3; j++)
		if (!(want[j] = fb_map_id(fds[j])) && fds[j] >= 0)
			goto err;
	while (!used && !bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (id == skip)
			continue;
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0 && errno == ENOENT) /* unloaded meanwhile */
			continue;
		info.nr_map_ids = 64;
		info.map_ids = (__u64)(unsigned long)ids;
		if (fd < 0)
			goto err;
		i = bpf_obj_get_info_by_fd(fd, &info, &len);
		close(fd);
		if (i)
			goto err;
		for (i = 0; i < info.nr_map_ids && i < 64; i++)
			for (j = 0; j < 3; j++)
				used |= want[j] && ids[i] == want[j];
	}
	if (used && prog)
		*prog = id;
	if (used || errno == ENOENT)
		return used;
err:
	fb_report_err("cannot tell whether a program uses the monitoring maps: %s",
		      strerror(errno));
	return -1;
}

/* How long a program found using the maps, and attached nowhere found, may
 * take to go before it counts as an attachment. A program detached
 * everywhere lives on while any process holds it: `status`'s walk,
 * another attach's in_use(), destroy, `bpftool prog show` each open every
 * loaded program in turn, for a moment that a loaded machine stretches to
 * tens of milliseconds. Such a program feeds nothing; taken for an
 * attachment, it refused an `attach --sketch-by src` right after a
 * `detach` ("attached elsewhere with other monitoring"). destroy waits
 * the same (destroy.c's busy()). */
#define SETTLE_S 2.0

/* in_use(), a yes confirmed at once if the program is found attached in
 * any namespace (fb_discover_find()), else only once it has held SETTLE_S
 * (checked every 20 ms: a program gone meanwhile answers no at once). */
static int in_use_settled(const struct fb_monitor *m, __u32 skip)
{
	double end = fb_now() + SETTLE_S;
	struct fb_att att;
	__u32 prog = 0;
	int used, tries;

	for (tries = 0; (used = in_use(m, skip, &prog)) > 0 && fb_now() < end; tries++) {
		if (!tries && fb_discover_find(prog, 0, &att) > 0)
			break;
		usleep(20000);
	}
	return used;
}

/* Does the existing config c satisfy what o asks for? */
static int compatible(const struct fb_mon_config *c, const struct fb_mon_opts *o)
{
	__u32 shift, depth, slots, k;

#define GIVEN(opt) (o->given & (1U << ((opt)-FB_OPT_MONITOR)))
	if (o->sketch && !(c->flags & FB_MON_SKETCH))
		return 0;
	if (o->newflows && !(c->flags & FB_MON_NEWFLOWS))
		return 0;
	if (o->acct && !(c->flags & FB_MON_ACCT))
		return 0;
	if (GIVEN(FB_OPT_MAXFLOWS) && fb_monitor_acct_buckets(o->max_flows) != c->acct_buckets)
		return 0;
	if ((GIVEN(FB_OPT_EPSILON) || GIVEN(FB_OPT_DELTA)) &&
	    (fb_monitor_geometry(o->epsilon, o->delta, &shift, &depth) || shift != c->shift ||
	     depth != c->depth))
		return 0;
	if (GIVEN(FB_OPT_AGE) && (__u64)(o->age * 1e9 + 0.5) != c->age_ns)
		return 0;
	if (GIVEN(FB_OPT_EXPECT)) {
		fb_monitor_seen_size(o->expect, &slots, &k);
		if (slots != c->seen_slots)
			return 0;
	}
	if (GIVEN(FB_OPT_RING) && o->ring_bytes != c->ring_bytes)
		return 0;
	/* Maps keyed otherwise would mix two attachments' keys, or give
	 * this one a sketch it did not ask for. */
	if (GIVEN(FB_OPT_SKETCHBY) && (c->flags & FB_MON_BY_ADDR) != o->sketch_by)
		return 0;
#undef GIVEN
	return 1;
}

/* Does a program use f's pinned monitoring maps, whatever their layout
 * (the sketch, seen-set or accounting table)? As in_use(). */
static int pins_in_use(const struct fb_store *f, __u32 skip)
{
	struct fb_monitor p;
	int used = -1;

	memset(&p, 0, sizeof(p));
	p.config_fd = p.sketch_fd = p.top_fd = p.keys_fd = p.seen_fd = p.events_fd = p.stats_fd =
		p.flows_fd = -1;
	p.dir_fd = fb_monitor_dir(f);
	if (p.dir_fd < 0)
		return p.dir_fd == -2 ? 0 : -1;
	p.sketch_fd = fb_pin_get(p.dir_fd, "sketch");
	p.seen_fd = p.sketch_fd >= 0 || errno == ENOENT ? fb_pin_get(p.dir_fd, "seen") : -1;
	p.flows_fd = p.seen_fd >= 0 || errno == ENOENT ? fb_pin_get(p.dir_fd, "flows") : -1;
	if (p.flows_fd >= 0 || errno == ENOENT)
		used = in_use_settled(&p, skip);
	else
		fb_report_err("cannot open the monitoring maps of '%s': %s", f->name,
			      strerror(errno));
	fb_monitor_close(&p);
	return used;
}

int fb_monitor_prepare(const struct fb_store *f, const struct fb_mon_opts *o, __u32 replacing,
		       struct fb_monitor *m)
{
	bool quiet = fb_report_quiet;
	int rc, used;

	/* Maps another flowbloom version made, which no program uses any
	 * more, are made anew as absent ones are. */
	fb_report_quiet = true;
	rc = fb_monitor_open(f, m);
	fb_report_quiet = quiet;
	if (rc == -3 && (used = pins_in_use(f, replacing)) <= 0)
		rc = used ? -1 : 1;
	else if (rc < 0 && fb_report_last[0])
		fb_report_err("%s", fb_report_last);
	if (rc < 0)
		return -1;
	if (rc == 0 && (used = in_use(m, 0, NULL))) {
		/* Another attachment feeds these maps, or the program attach
		 * --replace swaps out: share them (readers such as top and
		 * guard go on with them). */
		if (used > 0 && compatible(&m->cfg, o))
			return 0;
		/* Only the program swapped out feeds them (or a program
		 * detached everywhere a moment ago, held a moment longer by
		 * some reader): made anew below. */
		if (used < 0 || (used = in_use_settled(m, replacing))) {
			fb_monitor_close(m);
			if (used > 0)
				fb_report_err(
					"filter '%s' is attached elsewhere with other monitoring: "
					"use the same options, or detach it everywhere first",
					f->name);
			return -1;
		}
	}
	if (rc == 0)
		fb_monitor_close(m);
	if (fb_monitor_create(f, o))
		return -1;
	rc = fb_monitor_open(f, m);
	if (rc > 0)
		fb_report_err("the monitoring maps of '%s' vanished", f->name);
	return rc ? -1 : 0;
}
