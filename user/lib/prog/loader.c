// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Skeleton lifecycle against a filter's pinned maps (see loader.h): the
 * only file that touches the skeleton and writes its read-only data. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flowbloom.skel.h"
#include "prog/loader.h"
#include "monitor/monmaps.h"
#include "store/jiffies.h"
#include "report.h"

static bool libbpf_verbose;

/* libbpf's own lines (they start with "libbpf: ") only with -v: every
 * failure already gets one line of ours, and the verifier log is long. */
static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (!libbpf_verbose)
		return 0;
	fb_vreport(FB_REPORT_LIBBPF, fmt, ap);
	return 0;
}

void fb_libbpf_logging(bool verbose)
{
	libbpf_verbose = verbose;
	libbpf_set_print(print_libbpf);
}

/* The top table's epoch in jiffies (FB_TOP_EPOCH_S; a test may shorten
 * it with FLOWBLOOM_TEST_TOP_EPOCH_MS, read at each load). A clock that
 * cannot be read counts HZ=1000. */
static __u64 top_epoch_jiffies(void)
{
	const char *v = getenv("FLOWBLOOM_TEST_TOP_EPOCH_MS");
	double tick = fb_jiffies_tick(), secs = v ? atof(v) / 1000 : FB_TOP_EPOCH_S;
	__u64 j = (__u64)(secs / (tick > 0 ? tick : 1e-3));

	return j ? j : 1;
}

/* Before load: the monitoring read-only data, and its maps. */
int fb_load_setup_monitor(struct flowbloom_bpf *skel, const struct fb_monitor *m)
{
	const struct fb_mon_config *c = &m->cfg;
	int err = 0, i;

	/* A sketch by address: its bit in place of FB_MON_SKETCH, so that a
	 * sketch by flow meets the one test it always met (monitor.bpf.h). */
	skel->rodata->cfg_mon = c->flags & FB_MON_BY_ADDR ? (c->flags & ~FB_MON_SKETCH) : c->flags;
	skel->rodata->cfg_mon_shift = c->shift;
	skel->rodata->cfg_mon_depth = c->depth;
	for (i = 0; i < FB_MON_NH_WORDS; i++)
		skel->rodata->cfg_mon_nh[i] = m->kw[i];
	skel->rodata->cfg_seen_slots = c->seen_slots;
	skel->rodata->cfg_seen_age_jiffies = c->age_jiffies;
	skel->rodata->cfg_ring_wake = c->ring_bytes / 4;
	skel->rodata->cfg_top_epoch_jiffies = top_epoch_jiffies();
	skel->rodata->cfg_acct_buckets = c->flags & FB_MON_ACCT ? c->acct_buckets : 1;
	if (c->flags & FB_MON_SKETCH) {
		err = err ?: bpf_map__reuse_fd(skel->maps.fb_sketch, m->sketch_fd);
		err = err ?: bpf_map__reuse_fd(skel->maps.fb_top, m->top_fd);
		err = err ?: bpf_map__reuse_fd(skel->maps.fb_top_keys, m->keys_fd);
	}
	if (c->flags & FB_MON_NEWFLOWS) {
		err = err ?: bpf_map__reuse_fd(skel->maps.fb_seen, m->seen_fd);
		err = err ?: bpf_map__reuse_fd(skel->maps.fb_newflows, m->events_fd);
		err = err ?: bpf_map__reuse_fd(skel->maps.fb_mon_stats, m->stats_fd);
	}
	if (c->flags & FB_MON_ACCT)
		err = err ?: bpf_map__reuse_fd(skel->maps.fb_flows, m->flows_fd);
	if (err)
		fb_report_err("cannot reuse the monitoring maps in %s: %s", m->dir, strerror(-err));
	return err ? -1 : 0;
}

struct flowbloom_bpf *fb_load(const struct fb_store *f, const struct fb_load_opts *o)
{
	struct flowbloom_bpf *skel = flowbloom_bpf__open();
	int err;

	if (!skel) {
		fb_report_err("cannot open the BPF object: %s", strerror(errno));
		return NULL;
	}
	skel->rodata->cfg_action = o->action;
	skel->rodata->cfg_malformed = o->malformed;
	skel->rodata->cfg_trace = o->trace;
	skel->rodata->cfg_frags = o->frags;
	if (o->frags)
		bpf_program__set_flags(skel->progs.flowbloom,
				       bpf_program__flags(skel->progs.flowbloom) |
					       BPF_F_XDP_HAS_FRAGS);
	skel->rodata->cfg_bench = o->bench;
	skel->rodata->cfg_bench_v6 = o->bench_v6;
	skel->rodata->cfg_bench_no_ttl = o->bench_no_ttl;

	/* The object pins by name for `ip link`; here we bring our own maps,
	 * and nothing may be pinned (or reused) under /sys/fs/bpf/. */
	bpf_map__set_pin_path(skel->maps.fb_filter, NULL);
	bpf_map__set_pin_path(skel->maps.fb_stats, NULL);
	err = 0;
	if (f) {
		err = bpf_map__reuse_fd(skel->maps.fb_filter, f->outer_fd);
		if (!err && !o->private_stats)
			err = bpf_map__reuse_fd(skel->maps.fb_stats, f->stats_fd);
		if (!err && f->exact_fd >= 0)
			err = bpf_map__reuse_fd(skel->maps.fb_exact, f->exact_fd);
		if (!err && f->lpm_fd >= 0)
			err = bpf_map__reuse_fd(skel->maps.fb_lpm, f->lpm_fd);
	}
	if (err) {
		fb_report_err("cannot reuse the maps of '%s': %s", f->name, strerror(-err));
		goto fail;
	}
	if (o->monitor && fb_load_setup_monitor(skel, o->monitor))
		goto fail;
	err = flowbloom_bpf__load(skel);
	if (err) {
		fb_report_err("cannot load the XDP program: %s (run with -v for the verifier log)",
			      strerror(-err));
		goto fail;
	}
	return skel;
fail:
	flowbloom_bpf__destroy(skel);
	return NULL;
}

int fb_load_prog_fd(const struct flowbloom_bpf *skel)
{
	return bpf_program__fd(skel->progs.flowbloom);
}

int fb_load_trace_fd(const struct flowbloom_bpf *skel)
{
	return bpf_map__fd(skel->maps.fb_trace);
}

void fb_load_close(struct flowbloom_bpf *skel)
{
	flowbloom_bpf__destroy(skel);
}

/* Its read-only data map (libbpf names it OBJ.rodata) into ro. */
static int read_rodata(int map_fd, struct flowbloom_bpf__rodata *ro)
{
	struct bpf_map_info mi = { 0 };
	__u32 len = sizeof(mi), zero = 0;
	size_t n;

	if (bpf_obj_get_info_by_fd(map_fd, &mi, &len))
		return -1;
	n = strlen(mi.name);
	/* This build's: its size, but for the struct's padding at the end. */
	if (n < 7 || strcmp(mi.name + n - 7, ".rodata") || mi.value_size > sizeof(*ro) ||
	    mi.value_size + 8 <= sizeof(*ro))
		return -1;
	memset(ro, 0, sizeof(*ro));
	return bpf_map_lookup_elem(map_fd, &zero, ro) ? -1 : 0;
}

int fb_load_seen(__u32 prog_id, struct fb_load_seen *out)
{
	struct flowbloom_bpf__rodata ro;
	struct bpf_prog_info pi = { 0 };
	__u32 ids[64], len = sizeof(pi), i;
	int fd = bpf_prog_get_fd_by_id(prog_id), rc = -1;

	if (fd < 0)
		return -1;
	pi.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pi.map_ids = (__u64)(unsigned long)ids;
	if (!bpf_obj_get_info_by_fd(fd, &pi, &len)) {
		for (i = 0; rc && i < pi.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++) {
			int m = bpf_map_get_fd_by_id(ids[i]);

			if (m < 0)
				continue;
			rc = read_rodata(m, &ro);
			close(m);
		}
	}
	close(fd);
	if (rc)
		return -1;
	out->action = ro.cfg_action;
	out->malformed = ro.cfg_malformed;
	out->mon = ro.cfg_mon;
	out->frags = ro.cfg_frags;
	return 0;
}
