/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live benchmark at scale (bench_scale.c, bench.bpf.c's xdp_gen_scale):
 * blocked source i, one formula on both sides. Sources are IPv6 addresses
 * in 2001:db8::/32 (documentation space: the only addresses these tests
 * may put in a frame), 2001:db8:XXXX:YYYY::1 with XXXXYYYY a bijection of
 * i (an odd multiplier mod 2^32), so consecutive sources are far apart in
 * every structure that holds them.
 */
#ifndef FLOWBLOOM_BENCH_SCALE_H
#define FLOWBLOOM_BENCH_SCALE_H

#include <linux/types.h>

#define SCALE_MUL 0x9e3779b1U

static inline void scale_host(__u32 i, __u8 a[16])
{
	__u32 s = i * SCALE_MUL;
	int b;

	a[0] = 0x20, a[1] = 0x01, a[2] = 0x0d, a[3] = 0xb8;
	a[4] = s >> 24, a[5] = s >> 16, a[6] = s >> 8, a[7] = s;
	for (b = 8; b < 15; b++)
		a[b] = 0;
	a[15] = 1;
}

#endif
