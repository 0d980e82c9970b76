/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Loading the XDP program (embedded as a skeleton) against a filter:
 * open -> set per-attachment read-only data -> hand over the filter's maps
 * -> load. Used by attach, replay, the tests and the benchmarks.
 */
#ifndef FLOWBLOOM_USER_LOADER_H
#define FLOWBLOOM_USER_LOADER_H

#include <stdbool.h>
#include <linux/types.h>
#include "store/store.h"

struct fb_monitor;
/* The skeleton (build/flowbloom.skel.h): only loader.c looks inside; the
 * tests that drive the program include it themselves. */
struct flowbloom_bpf;

struct fb_load_opts {
	__u8 action;	    /* enum fb_action; FB_ACTION_DEFAULT: the filter's own */
	__u8 malformed;	    /* enum fb_malformed: what no rule decides of a malformed packet */
	bool trace;	    /* record struct fb_trace per packet (replay --explain) */
	bool frags;	    /* multi-buffer (BPF_F_XDP_HAS_FRAGS): native XDP above a page's MTU */
	bool private_stats; /* count into the object's own stats map, not the filter's */
	__u32 bench;	    /* benchmarks: see include/flowbloom/bench.h */
	bool bench_v6;
	bool bench_no_ttl; /* benchmarks: the program without rules with a lifetime */
	const struct fb_monitor *monitor; /* flow monitoring maps (monitor.h); NULL: off */
};

/* Returns a loaded skeleton or NULL (error printed). f may be NULL: the
 * program then runs with an empty outer map (no filter). */
struct flowbloom_bpf *fb_load(const struct fb_store *f, const struct fb_load_opts *o);
/* What fb_load does for o->monitor before loading: the monitoring
 * read-only data and map fds (for loads made another way: the bench's
 * verifier statistics). 0, or -1 with the error reported. */
int fb_load_setup_monitor(struct flowbloom_bpf *skel, const struct fb_monitor *m);

/* The per-attachment settings a loaded program (prog_id, flowbloom's
 * program of this build) runs with, from its read-only data: 0, or -1 if
 * they cannot be read (gone, or another build's data). */
struct fb_load_seen {
	__u8 action;	/* enum fb_action; FB_ACTION_DEFAULT: the filter's own */
	__u8 malformed; /* enum fb_malformed */
	__u32 mon;	/* FB_MON_*; 0: no monitoring (a sketch by address:
			 * FB_MON_BY_SRC or _DST without FB_MON_SKETCH) */
	bool frags;	/* loaded multi-buffer */
};
int fb_load_seen(__u32 prog_id, struct fb_load_seen *out);
/* What that program decides with on a filter whose own action is own: its
 * action, and whether the malformed packets no rule decides are dropped. */
static inline __u8 fb_seen_action(const struct fb_load_seen *s, __u8 own)
{
	return s->action ? s->action : own;
}

static inline bool fb_seen_malformed_drop(const struct fb_load_seen *s, __u8 own)
{
	return fb_malformed_drop(s->malformed, fb_seen_action(s, own));
}

/* The loaded program's fd; the fb_trace map's (replay --explain). */
int fb_load_prog_fd(const struct flowbloom_bpf *skel);
int fb_load_trace_fd(const struct flowbloom_bpf *skel);
/* Unload (detaching nothing: an attachment holds its own reference). */
void fb_load_close(struct flowbloom_bpf *skel);

/* Route libbpf's messages through our printer; debug ones only if verbose. */
void fb_libbpf_logging(bool verbose);

#endif
