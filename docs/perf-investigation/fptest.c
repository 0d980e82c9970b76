// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 10 PoC: false-positive rate of each hash against the blocked
 * formula, in user space with the same code the BPF side runs. n flows in,
 * 1M other flows probed; random flows and the benchmark's sequential ones.
 *   build/fptest
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "flowbloom/bench.h"
#include "flowbloom/geometry.h"
#include "packet.h"
#include "perf_hash.h"

static double fp_formula(double n, double nb)
{
	double lam = n / nb, p = exp(-lam), sum = 0;
	int x;

	for (x = 0; x < 400; x++) {
		sum += p * pow(1 - pow(63.0 / 64, x), 8);
		p *= lam / (x + 1);
	}
	return sum;
}

static void pos(int alg, const struct fb_key *k, const __u64 *K, const __u64 *sk, __u32 nb,
		__u32 *blk, __u64 m[8])
{
	int w;

	if (alg == PH_ML2_SHIFT) {
		__u64 s1, s2;

		ph_ml2_pair(k->w, K, &s1, &s2);
		*blk = fb_reduce32(s1 >> 32, nb);
		for (w = 0; w < 8; w++)
			m[w] = ph_mask_shift(s2, w);
		return;
	}
	{
		__u64 h = ph_hash(alg, k->w, K, sk);

		*blk = fb_reduce32(h >> 32, nb);
		for (w = 0; w < 8; w++)
			m[w] = ph_mask8((__u32)h, w);
	}
}

int main(void)
{
	static const char *names[] = { "sip13",	  "nh",	       "ml2+fmix",
				       "ml2 raw", "ml2+sip1w", "ml2 shift-masks" };
	__u32 nb = 1U << 14, n = 1U << 19, probes = 1000000, i, b;
	__u64 sk[2], K[PH_KEYWORDS], *bits = malloc((size_t)nb * 64), m[8];
	int alg, seq, w;

	if (getrandom(sk, sizeof(sk), 0) != sizeof(sk) || getrandom(K, sizeof(K), 0) != sizeof(K))
		return 1;
	printf("blocked k=8, %u blocks, %u flows, %u probes; formula %.3e\n", nb, n, probes,
	       fp_formula(n, nb));
	for (seq = 0; seq < 2; seq++)
		for (alg = 0; alg < PH_NALG; alg++) {
			uint64_t seed = 1;
			__u32 fp = 0;
			struct fb_key k;

			memset(bits, 0, (size_t)nb * 64);
			for (i = 0; i < n; i++) {
				if (seq)
					fb_bench_flow(i, 0, &k);
				else
					test_random_flow(&seed, &k, i & 1);
				pos(alg, &k, K, sk, nb, &b, m);
				for (w = 0; w < 8; w++)
					bits[8 * b + w] |= m[w];
			}
			for (i = 0; i < probes; i++) {
				__u64 miss = 0;

				if (seq)
					fb_bench_flow(i | FB_BENCH_MISS | 0x8000, 0, &k);
				else
					test_random_flow(&seed, &k, i & 1);
				pos(alg, &k, K, sk, nb, &b, m);
				for (w = 0; w < 8; w++)
					miss |= (bits[8 * b + w] & m[w]) ^ m[w];
				fp += !miss;
			}
			printf("  %-10s %-16s FP %.3e  (%.2fx formula)\n",
			       seq ? "sequential" : "random", names[alg], (double)fp / probes,
			       (double)fp / probes / fp_formula(n, nb));
		}
	return 0;
}
