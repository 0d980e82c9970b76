// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Sizing formulas (see sizing.h for the sources). */
#include <math.h>
#include "flowbloom/geometry.h"
#include "types/sizing.h"

double fb_fpr_classic(double n, double mbits, unsigned k)
{
	if (n <= 0)
		return 0;
	return pow(1.0 - exp(-(double)k * n / mbits), k);
}

/* Rate of one 512-bit block holding i flows: word w holds c_w of the k
 * bits (k/8, one more for the first k%8 words). */
static double block_fpr(double i, unsigned k)
{
	/* q: a given bit of a word is still clear after i flows set one bit
	 * in it; a word holding c of the k bits needs all c set. */
	double q = exp(i * log1p(-1.0 / 64)), r = 1.0, one = 1.0 - q, two = 1.0 - q * q;
	unsigned w;

	for (w = 0; w < FB_BLOCK_WORDS; w++) {
		unsigned c = k / FB_BLOCK_WORDS + (w < k % FB_BLOCK_WORDS);

		if (c == 1)
			r *= one;
		else if (c == 2)
			r *= two * two;
	}
	return r;
}

double fb_fpr_blocked(double n, double nblocks, unsigned k)
{
	double lambda = n / nblocks, sum = 0, sd, lo, hi, i;

	if (!(n > 0) || !(nblocks > 0))
		return 0;
	/* Past 2,400 flows per block every word is full with probability
	 * 1 - (63/64)^2400 = 1 - 4e-17, beyond double precision: the rate is
	 * block_fpr(lambda), which is 1. This also bounds the sum below to
	 * a few thousand terms (and a counter in doubles that would stop
	 * incrementing near 2^53 never runs). */
	if (!(lambda <= 2400))
		return block_fpr(lambda, k);
	/* Poisson(lambda) flows per block; sum over +-12 standard deviations,
	 * in log space so large lambda does not underflow e^-lambda. */
	sd = sqrt(lambda);
	lo = floor(lambda - 12 * sd - 20);
	hi = ceil(lambda + 12 * sd + 40);
	if (lo < 0)
		lo = 0;
	for (i = lo; i <= hi; i++)
		sum += exp(-lambda + i * log(lambda) - lgamma(i + 1)) * block_fpr(i, k);
	return sum;
}

double fb_fpr(__u8 layout, double n, __u32 nblocks, unsigned k)
{
	if (layout == FB_LAYOUT_CLASSIC)
		return fb_fpr_classic(n, (double)nblocks * FB_BLOCK_BITS, k);
	return fb_fpr_blocked(n, nblocks, k);
}

double fb_classic_mbits(double n, double p)
{
	return -n * log(p) / (M_LN2 * M_LN2);
}

unsigned fb_classic_k(double mbits, double n)
{
	double k = round(mbits / n * M_LN2);

	if (k < 1)
		k = 1;
	if (k > FB_MAX_K)
		k = FB_MAX_K;
	return (unsigned)k;
}

/* Best integer k for a classic filter of mbits bits: the optimum
 * (m/n) ln 2 rounded down or up, whichever gives the lower rate. */
static unsigned best_classic_k(double n, double mbits, double *rate)
{
	double kopt = mbits / n * M_LN2;
	unsigned lo = kopt < 1 ? 1 : kopt > FB_MAX_K ? FB_MAX_K : (unsigned)kopt;
	unsigned hi = lo < FB_MAX_K ? lo + 1 : lo;
	double rlo = fb_fpr_classic(n, mbits, lo), rhi = fb_fpr_classic(n, mbits, hi);

	*rate = rlo <= rhi ? rlo : rhi;
	return rlo <= rhi ? lo : hi;
}

int fb_size_classic(double n, double p, __u32 *nblocks, __u8 *k)
{
	double m = fb_classic_mbits(n, p), rate;
	double lo = ceil(m / FB_BLOCK_BITS), hi;

	if (lo < 1)
		lo = 1;
	/* The formula's m with an integer k and whole blocks can miss p by a
	 * hair (k is rounded): take the fewest blocks from there that reach p.
	 * The rate falls as blocks grow, so bisect. */
	hi = lo;
	while (best_classic_k(n, hi * FB_BLOCK_BITS, &rate), rate > p) {
		hi = ceil(hi * 1.01) + 1;
		if (hi > FB_MAX_BLOCKS)
			return -1;
	}
	while (lo < hi) {
		double mid = floor((lo + hi) / 2);

		best_classic_k(n, mid * FB_BLOCK_BITS, &rate);
		if (rate <= p)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo > FB_MAX_BLOCKS)
		return -1;
	*nblocks = (__u32)lo;
	*k = (__u8)best_classic_k(n, lo * FB_BLOCK_BITS, &rate);
	return 0;
}

int fb_size_blocked(double n, double p, __u32 *nblocks, __u8 *k)
{
	__u32 best_blocks = 0;
	unsigned kk, best_k = 0;

	/* For each k, the fewest blocks that reach p (the rate falls as blocks
	 * grow, so bisect); keep the smallest filter. The bisection starts
	 * bracketed near the classic size (blocked needs a little more):
	 * evaluating absurd geometries costs more than the search itself. */
	double guess = ceil(fb_classic_mbits(n, p) / FB_BLOCK_BITS);
	/* Clamped before the conversion: past 2^32 blocks it is undefined. */
	__u32 lo0 = guess / 2 >= FB_MAX_BLOCKS ? FB_MAX_BLOCKS
		    : guess / 2 > 1	       ? (__u32)(guess / 2)
					       : 1;
	__u32 hi0 = guess * 4 < FB_MAX_BLOCKS ? (__u32)(guess * 4) + 1 : FB_MAX_BLOCKS;

	for (kk = 1; kk <= FB_MAX_K; kk++) {
		__u32 lo = lo0, hi = hi0;

		if (fb_fpr_blocked(n, hi, kk) > p) {
			if (fb_fpr_blocked(n, FB_MAX_BLOCKS, kk) > p)
				continue;
			hi = FB_MAX_BLOCKS;
		}
		if (fb_fpr_blocked(n, lo, kk) <= p)
			lo = 1;
		lo = fb_size_fixed_k(FB_LAYOUT_BLOCKED, kk, n, p, lo, hi);
		if (!best_blocks || lo < best_blocks) {
			best_blocks = lo;
			best_k = kk;
		}
	}
	if (!best_blocks)
		return -1;
	*nblocks = best_blocks;
	*k = (__u8)best_k;
	return 0;
}

unsigned fb_blocked_fast_k(double n, double p, __u32 nblocks, unsigned k)
{
	if (fb_fpr_blocked(n, nblocks, FB_FAST_K_LO) <= p)
		return FB_FAST_K_LO;
	if (fb_fpr_blocked(n, nblocks, FB_FAST_K_HI) <= p)
		return FB_FAST_K_HI;
	return k;
}

void fb_bloom_fit(__u8 layout, bool compact, double n, double p, __u32 *nblocks, __u8 *k)
{
	bool blocked = layout == FB_LAYOUT_BLOCKED, rated = n > 0;

	if (compact && blocked && rated) {
		__u32 lo = fb_whole_pages(fb_size_fixed_k(FB_LAYOUT_BLOCKED, FB_FAST_K_LO, n, p,
							  *nblocks, FB_MAX_BLOCKS));

		if (fb_fpr_blocked(n, lo, FB_FAST_K_LO) <= p &&
		    fb_chunks_for(lo) <= fb_chunks_for(*nblocks)) {
			*nblocks = lo;
			*k = FB_FAST_K_LO;
			return;
		}
	}
	*nblocks = compact ? fb_whole_pages(*nblocks) : fb_whole_chunks(*nblocks);
	if (blocked && rated)
		*k = fb_blocked_fast_k(n, p, *nblocks, *k);
}

unsigned fb_probes_per_packet(__u32 kinds, const struct fb_prefixes *px)
{
	unsigned v4 = 0, v6 = 0, flow = !!(kinds & FB_KINDF(FB_KIND_FLOW));

	if (kinds & FB_KINDF(FB_KIND_SRC)) {
		v4 += px->list[FB_PFX_SRC4].n;
		v6 += px->list[FB_PFX_SRC6].n;
	}
	if (kinds & FB_KINDF(FB_KIND_DST)) {
		v4 += px->list[FB_PFX_DST4].n;
		v6 += px->list[FB_PFX_DST6].n;
	}
	if (kinds & FB_KINDF(FB_KIND_MASK)) {
		int i;

		/* A packet probes the masks of its family (mask.h). */
		for (i = 0; i < FB_MAX_MASKS; i++) {
			__u32 d = fb_mask_get(px->masks, i);

			if (!d)
				break;
			if (FB_MASK_FAMILY(d))
				v6++;
			else
				v4++;
		}
	}
	return flow + (v4 > v6 ? v4 : v6);
}

/* 1 - (1 - r)^n through log1p/expm1: the plain form rounds every rate
 * below about 1e-16 to 0 (1 - r is 1 in a double), so `info` would print
 * a per-packet rate of 0 under a per-probe one above it. */
double fb_packet_rate(double per_probe, unsigned probes)
{
	return probes ? -expm1(probes * log1p(-per_probe)) : 0;
}

double fb_probe_target(double per_packet, unsigned probes)
{
	return probes > 1 ? -expm1(log1p(-per_packet) / probes) : per_packet;
}

double fb_replace_bytes(void *hdr, double entries, unsigned probes)
{
	const struct fb_header *h = hdr;
	double n = entries > h->capacity ? entries : (double)h->capacity;
	double q = fb_probe_target(h->fp_ppb / 1e9, probes ? probes : 1);
	__u32 nblocks;
	__u8 k;

	if (h->layout == FB_LAYOUT_CLASSIC ? fb_size_classic(n, q, &nblocks, &k)
					   : fb_size_blocked(n, q, &nblocks, &k))
		return INFINITY;
	fb_bloom_fit(h->layout, h->flags & FB_HDRF_COMPACT, n, q, &nblocks, &k);
	return (double)fb_chunks_for(nblocks) * FB_CHUNK_BYTES;
}

__u32 fb_size_fixed_k(__u8 layout, unsigned k, double n, double q, __u32 lo, __u32 hi)
{
	if (lo >= hi || fb_fpr(layout, n, lo, k) <= q)
		return lo < hi ? lo : hi;
	if (fb_fpr(layout, n, hi, k) > q)
		return hi;
	/* Invariant: the rate at lo is above q, at hi within it. */
	while (lo + 1 < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (fb_fpr(layout, n, mid, k) <= q)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

double fb_capacity_at(__u8 layout, unsigned k, __u32 nblocks, double q)
{
	double lo = 0, hi = 1, max = (double)fb_flows_max(nblocks);

	while (hi < max && fb_fpr(layout, hi, nblocks, k) <= q) {
		lo = hi;
		hi *= 2;
	}
	if (hi >= max && fb_fpr(layout, max, nblocks, k) <= q)
		return max;
	/* Invariant: lo flows within q, hi past it. */
	while (hi - lo > 1) {
		double mid = floor((lo + hi) / 2);

		if (fb_fpr(layout, mid, nblocks, k) <= q)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
