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

/* Flow i: 198.51.x.y / 2001:db8::x -> 203.0.113.1 / 2001:db8::1, UDP, its
 * 32 bits spread over the source address and port. */
static __always_inline void fb_bench_flow(__u32 i, int v6, struct fb_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	if (v6) {
		k->saddr[0] = k->daddr[0] = 0x20;
		k->saddr[1] = k->daddr[1] = 0x01;
		k->saddr[2] = k->daddr[2] = 0x0d;
		k->saddr[3] = k->daddr[3] = 0xb8;
		k->daddr[15] = 1;
	} else {
		k->saddr[10] = k->saddr[11] = k->daddr[10] = k->daddr[11] = 0xff;
		k->saddr[12] = 198;
		k->saddr[13] = 51;
		k->daddr[12] = 203;
		k->daddr[14] = 113;
		k->daddr[15] = 1;
	}
	k->saddr[14] = i >> 8;
	k->saddr[15] = i;
	k->sport = (__u16)(i >> 16);
	k->dport = 0x3500; /* 53, network order on little-endian */
	k->proto = 17;
	k->kind = FB_KIND_FLOW;
}

#endif
