/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every per-attachment setting of the XDP program, in one place: read-only
 * data (`const volatile`, the skeleton's rodata) that the loader,
 * user/lib/prog/loader.c, writes before load (the monitoring settings from
 * the maps' configuration, user/lib/monitor/monmaps.c). The verifier knows
 * their values, so a branch on one is decided at load and the code it
 * skips is removed.
 *
 * An object loaded unchanged by `ip link` keeps the defaults below: the
 * filter's own action, the safe malformed policy, no trace, no monitoring.
 */
#ifndef FLOWBLOOM_CONFIG_BPF_H
#define FLOWBLOOM_CONFIG_BPF_H

#include <linux/types.h>
#include "flowbloom/geometry.h"
#include "flowbloom/maps.h"
#include "flowbloom/monitor.h"

/* Verdict (bpf/flowbloom.bpf.c). */
const volatile __u8 cfg_action = FB_ACTION_DEFAULT;	  /* enum fb_action */
const volatile __u8 cfg_malformed = FB_MALFORMED_DEFAULT; /* enum fb_malformed */
const volatile __u8 cfg_trace = 0;			  /* 1: record fb_trace (replay) */
/* 1: loaded multi-buffer (BPF_F_XDP_HAS_FRAGS, for a device whose MTU
 * exceeds a page in native mode): the headers are in the first buffer,
 * and a frame's length is all its buffers'. */
const volatile __u8 cfg_frags = 0;

/* Benchmarks only (include/flowbloom/bench.h): flow mask, FB_BENCH_MISS bit. */
const volatile __u32 cfg_bench = 0;
const volatile __u8 cfg_bench_v6 = 0;
/* Benchmarks only: 1 removes the rules-with-a-lifetime code (the baseline
 * `bench ttl` compares against). */
const volatile __u8 cfg_bench_no_ttl = 0;
/* Benchmarks only, in build/flowbloom_stages.bpf.o (the Makefile builds it
 * with FB_BENCH_STAGES; the program itself has no such code):
 * FB_BENCH_STAGE_*, the program ends after that stage with verdict v. */
#ifdef FB_BENCH_STAGES
const volatile __u8 cfg_bench_stage = 0;
#define FB_BENCH_CUT(stage, v)                                                                     \
	do {                                                                                       \
		if (cfg_bench_stage == (stage))                                                    \
			return (v);                                                                \
	} while (0)
/* The parser's cut: a verdict from the key's words (the parser's work). */
#define FB_BENCH_KEYED(parse, key)                                                                 \
	((parse) == FB_PARSE_OK && ((key).w[1] | (key).w[3] | (key).w[4]))
#else
#define FB_BENCH_CUT(stage, v)                                                                     \
	do {                                                                                       \
	} while (0)
#endif

/* Flow monitoring (bpf/monitor.bpf.h, include/flowbloom/monitor.h). */
/* FB_MON_*; 0: no monitoring. A sketch by address has FB_MON_BY_SRC or
 * FB_MON_BY_DST in place of FB_MON_SKETCH (loader.c). */
const volatile __u32 cfg_mon = 0;
const volatile __u32 cfg_mon_shift = 2;
const volatile __u32 cfg_mon_depth = 1;
const volatile __u64 cfg_mon_nh[FB_MON_NH_WORDS] = { 0 };
const volatile __u32 cfg_seen_slots = 2;
const volatile __u64 cfg_seen_age_jiffies = 1;
const volatile __u64 cfg_ring_wake = 0; /* bytes waiting that wake the reader */
/* The top table's epoch (FB_TOP_EPOCH_S) in jiffies. */
const volatile __u64 cfg_top_epoch_jiffies = 1000;

/* Per-flow accounting (bpf/flowacct.bpf.h): the table's buckets per CPU. */
const volatile __u32 cfg_acct_buckets = 1;

#endif
