/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Benchmark flows, compiled into the XDP program and the benchmarks so both
 * sides generate the same flow i. BPF_PROG_TEST_RUN with a large repeat runs
 * one packet over and over; to measure random flows (and cache misses) the
 * program, when cfg_bench is set, replaces the parsed key with flow
 * (seq++ & mask) for hits or (seq++ | FB_BENCH_MISS) for flows never
 * added. Off (cfg_bench = 0), the verifier removes the code.
 */
#ifndef FLOWBLOOM_BENCH_H
#define FLOWBLOOM_BENCH_H

#include <linux/types.h>
#include "key.h"

#define FB_BENCH_MISS (1U << 31)

/* Benchmarks only (cfg_bench_stage; tests/bench, the `stages` part): the
 * program ends after a stage of the data path, so that a live run of each
 * cut tells what each stage costs a frame. Every cut drops what the whole
 * program drops when every frame is on the list. */
enum {
	FB_BENCH_STAGE_PARSE = 1, /* after the parser (the key made) */
	FB_BENCH_STAGE_HEAD,	  /* after the filter's head is found and checked */
	FB_BENCH_STAGE_PROBE,	  /* after the probes (the filter's, its generations') */
};

/* Flow number for packet seq: hits cycle through flows 0..mask; misses
 * are flows never added, with source 198.51.128-255.y (bit 15), outside
 * the prefix benchmark's list of 198.51.0.0/17. */
static __always_inline __u32 fb_bench_index(__u32 seq, __u32 cfg)
{
	return cfg & FB_BENCH_MISS ? seq | FB_BENCH_MISS | 0x8000 : seq & cfg;
}

/* Flow i: 198.51.x.y / 2001:db8::x -> 203.0.113.1 / 2001:db8::1, UDP, its
 * 32 bits spread over the source address and port. */
static __always_inline void fb_bench_flow(__u32 i, int v6, struct fb_key *k)
{
	/* Whole-word stores, as the parser does (see key.h). */
	__u32 lo = (i & 0xff) << 8 | (i >> 8 & 0xff); /* address bytes 14, 15 */

	if (v6) {
		k->w[0] = k->w[2] = fb_key_word_pair(0xb80d0120U, 0); /* 2001:db8:: */
		k->w[1] = fb_key_word_pair(0, lo << 16);
		k->w[3] = fb_key_word_pair(0, 0x01000000U);
	} else {
		k->w[0] = k->w[2] = 0;
		k->w[1] = fb_key_word_v4mapped(0x33c6U | lo << 16); /* 198.51.x.y */
		k->w[3] = fb_key_word_v4mapped(0x017100cbU);	    /* 203.0.113.1 */
	}
	k->w[4] = fb_key_word_tail((__u16)(i >> 16), 0x3500 /* 53 */, 17, FB_KIND_FLOW, 0,
				   v6 ? FB_FAMILY_IPV6 : FB_FAMILY_IPV4);
}

#endif
