/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Filter sizing and expected false-positive rates.
 *
 * Classic layout (Bloom 1970; Broder and Mitzenmacher 2004):
 *   p(n, m, k) = (1 - e^(-kn/m))^k,  m = -n ln p / (ln 2)^2,  k = (m/n) ln 2.
 * Blocked layout (Putze, Sanders, Singler 2007): a block of B = 512 bits
 * receives a Poisson(n / blocks) number of flows, and the rate is the
 * classic rate of that block averaged over the Poisson distribution; here
 * each of the k bits lives in its own 64-bit word (bit i in word i mod 8),
 * so a word with c of the k bits is full with probability
 * (1 - (1 - 1/64)^(i*c))^c after i flows in its block.
 */
#ifndef FLOWBLOOM_USER_SIZING_H
#define FLOWBLOOM_USER_SIZING_H

#include <stdbool.h>
#include <linux/types.h>
#include "flowbloom/geometry.h"

/*
 * The most flows a filter counts: FB_FLOWS_PER_BIT per bit of its array
 * (nblocks x 512 bits). The bound is where the count stops carrying
 * information: a counting filter's counters (at most 255) hold at most
 * 255 m / k flows before one saturates, and a plain filter is full long
 * before (its expected rate is 1 in double precision past 37 m / k flows,
 * classic layout, or 4.6 m, blocked). Counts saturate there (adds, merges),
 * and an export claiming more is refused: no filter of that size holds it.
 * At most 2^40 (m <= 2^32), so k x flows never overflows.
 */
#define FB_FLOWS_PER_BIT 256
static inline __u64 fb_flows_max(__u32 nblocks)
{
	return (__u64)nblocks * FB_BLOCK_BITS * FB_FLOWS_PER_BIT;
}
/* a + b flows, saturating at fb_flows_max(nblocks). */
static inline __u64 fb_flows_add(__u64 a, __u64 b, __u32 nblocks)
{
	__u64 max = fb_flows_max(nblocks);

	return a >= max || b >= max - a ? max : a + b;
}

double fb_fpr_classic(double n, double mbits, unsigned k);
double fb_fpr_blocked(double n, double nblocks, unsigned k);
double fb_fpr(__u8 layout, double n, __u32 nblocks, unsigned k);

/*
 * Probes per packet: one for the 5-tuple if the filter holds flows, plus
 * one per source and destination prefix length of the packet's family (the
 * larger family counts). A packet is a false positive if any probe is, so
 * its rate is 1 - (1 - r)^probes for a per-probe rate r, and meeting a
 * per-packet target p needs r = 1 - (1 - p)^(1/probes).
 */
unsigned fb_probes_per_packet(__u32 kinds, const struct fb_prefixes *px);
double fb_packet_rate(double per_probe, unsigned probes);
double fb_probe_target(double per_packet, unsigned probes);

/* Smallest geometry with rate <= p for n flows. 0 ok, -1 if it would exceed
 * FB_MAX_BLOCKS. */
int fb_size_classic(double n, double p, __u32 *nblocks, __u8 *k);
int fb_size_blocked(double n, double p, __u32 *nblocks, __u8 *k);
/* The k a blocked filter of nblocks blocks (sized for n flows at rate p,
 * then rounded up to whole chunks) is made with: the smaller of the data
 * path's two fast k (FB_FAST_K_LO, FB_FAST_K_HI, geometry.h) that keeps
 * the rate at n flows <= p in those blocks, else the sized k. The larger
 * array holds the flows at a lower rate than asked; a fast k spends part of
 * that margin on a cheaper probe (four bits to test rather than eight)
 * and the rest still lowers the rate. */
unsigned fb_blocked_fast_k(double n, double p, __u32 nblocks, unsigned k);
/* The one rule create and `load --replace` size a Bloom filter's array by,
 * from the fewest blocks and the k the sizing found (*nblocks, *k) for n
 * flows at rate p (n = 0: bits and hashes given, nothing to re-size for):
 * - by default, whole chunks (fb_whole_chunks()), then a fast k if it
 *   still meets p there (fb_blocked_fast_k());
 * - compact (FB_HDRF_COMPACT), whole pages (fb_whole_pages()): for a
 *   blocked filter the blocks the cheapest probe (k = FB_FAST_K_LO) needs
 *   to meet p, if that takes no more chunks than the default would; else
 *   the sizing's blocks, and a fast k if it meets p in them. */
void fb_bloom_fit(__u8 layout, bool compact, double n, double p, __u32 *nblocks, __u8 *k);
/* With k fixed (a generation keeps its filter's, ttl.h): the fewest blocks
 * in [lo, hi] whose rate at n flows is <= q (hi if none is), and the most
 * flows nblocks blocks hold at a rate <= q. */
__u32 fb_size_fixed_k(__u8 layout, unsigned k, double n, double q, __u32 lo, __u32 hi);
double fb_capacity_at(__u8 layout, unsigned k, __u32 nblocks, double q);
/* The classic formulas before rounding m up to whole blocks. */
double fb_classic_mbits(double n, double p);
unsigned fb_classic_k(double mbits, double n);

/* The memory (bytes, whole chunks) of a Bloom filter with header hdr (a
 * const struct fb_header *, sized by capacity and rate) once `load
 * --replace` re-sizes it for `entries` rules probed `probes` times a
 * packet; INFINITY if too large. The budget of fb_prefixes_expand(). */
double fb_replace_bytes(void *hdr, double entries, unsigned probes);

#endif
