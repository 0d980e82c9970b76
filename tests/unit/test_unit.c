// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the pure user-space pieces, no kernel involved: the sizing
 * formulas (user/lib/types/sizing.c) and a new filter's settings
 * (user/lib/types/create.c), SipHash against the reference known-answer
 * vectors and its use on a flow key (include/flowbloom/hash.h), the bit
 * geometry shared by the XDP program and the CLI (include/flowbloom/
 * geometry.h), and the FLOW text parser and formatter (user/lib/rules/flow.c).
 *
 * Random inputs come from a fixed-seed splitmix64 (test_rand64), so every run checks the
 * same values and a failure is reproducible.
 */
#include <unistd.h>
#include "unit.h"

/* ASSERT_EQ prints signed decimals; hashes read better in hex. */
bool check_u64(__u64 got, __u64 want, const char *label)
{
	char d[80];

	snprintf(d, sizeof(d), "got 0x%016llx, want 0x%016llx", (unsigned long long)got,
		 (unsigned long long)want);
	return test_check(got == want, label, d);
}

/* ---------------------------------------------------------------------- */
/* Sizing                                                                 */

/* Smallest rate any k reaches with this many blocks. */
static double best_fpr_classic(double n, __u32 nblocks)
{
	double best = 1;
	unsigned k;

	for (k = 1; k <= FB_MAX_K; k++)
		best = fmin(best, fb_fpr_classic(n, (double)nblocks * FB_BLOCK_BITS, k));
	return best;
}

static double best_fpr_blocked(double n, __u32 nblocks)
{
	double best = 1;
	unsigned k;

	for (k = 1; k <= FB_MAX_K; k++)
		best = fmin(best, fb_fpr_blocked(n, nblocks, k));
	return best;
}

static void check_classic_sizing(double n, double p, double want_m, unsigned want_k)
{
	double m = fb_classic_mbits(n, p), ceil_blocks = ceil(want_m / FB_BLOCK_BITS), rate;
	char label[160];
	__u32 nblocks = 0;
	__u8 k = 0;

	snprintf(label, sizeof(label), "classic n=%g p=%g: m = -n ln p / ln^2 2", n, p);
	ASSERT_RANGE(m, want_m - 1, want_m + 1, label);
	snprintf(label, sizeof(label), "classic n=%g p=%g: k = round(m/n ln 2)", n, p);
	ASSERT_EQ(fb_classic_k(m, n), want_k, label);

	snprintf(label, sizeof(label), "classic n=%g p=%g: fb_size_classic succeeds", n, p);
	ASSERT_EQ(fb_size_classic(n, p, &nblocks, &k), 0, label);
	snprintf(label, sizeof(label), "classic n=%g p=%g: sized k", n, p);
	ASSERT_EQ(k, want_k, label);
	/* At least ceil(m/512) blocks; a few more are fine if rounding k to an
	 * integer needs them to stay under p, but not more than 1%. */
	snprintf(label, sizeof(label), "classic n=%g p=%g: nblocks in [ceil(m/512), +1%%]", n, p);
	ASSERT_RANGE(nblocks, ceil_blocks, ceil_blocks * 1.01, label);

	rate = fb_fpr_classic(n, (double)nblocks * FB_BLOCK_BITS, k);
	snprintf(label, sizeof(label), "classic n=%g p=%g: rate of sized geometry <= p", n, p);
	ASSERT_RANGE(rate, 0, p, label);
	snprintf(label, sizeof(label), "classic n=%g p=%g: rate of sized geometry within 1%% of p",
		 n, p);
	ASSERT_RANGE(rate, 0.99 * p, 1.01 * p, label);
	snprintf(label, sizeof(label), "classic n=%g p=%g: one block fewer exceeds p for every k",
		 n, p);
	ASSERT_TRUE(best_fpr_classic(n, nblocks - 1) > p, label);
}

static void test_sizing(void)
{
	__u32 nblocks = 0, cblocks = 0;
	__u8 k = 0, ck = 0;
	double prev, f, n;
	int mono;

	check_classic_sizing(1e6, 0.01, 9585058.38, 7);
	check_classic_sizing(1e5, 0.001, 1437758.76, 10);
	check_classic_sizing(1e7, 0.001, 143775875.66, 10);

	ASSERT_EQ(fb_classic_k(1, 1e6), 1, "fb_classic_k clamps to at least 1");
	ASSERT_EQ(fb_classic_k(1e9, 1), FB_MAX_K, "fb_classic_k clamps to at most FB_MAX_K");
	ASSERT_EQ(fb_fpr_classic(0, 512, 7), 0, "fb_fpr_classic of an empty filter is 0");
	ASSERT_EQ(fb_size_classic(1e9, 1e-6, &cblocks, &ck), -1,
		  "fb_size_classic refuses more than FB_MAX_BLOCKS");
	ASSERT_EQ(fb_size_blocked(1e9, 1e-6, &nblocks, &k), -1,
		  "fb_size_blocked refuses more than FB_MAX_BLOCKS");

	/* Blocked: a bit more space than classic for the same rate (Putze,
	 * Sanders, Singler 2007), and the fewest blocks that reach p. */
	ASSERT_EQ(fb_size_blocked(1e6, 0.01, &nblocks, &k), 0,
		  "fb_size_blocked(1e6, 0.01) succeeds");
	ASSERT_RANGE(k, 1, FB_MAX_K, "fb_size_blocked(1e6, 0.01): k in 1..FB_MAX_K");
	ASSERT_RANGE(fb_fpr_blocked(1e6, nblocks, k), 0, 0.01,
		     "fb_size_blocked(1e6, 0.01): blocked rate of the geometry <= p");
	ASSERT_TRUE((double)nblocks * FB_BLOCK_BITS > fb_classic_mbits(1e6, 0.01),
		    "fb_size_blocked(1e6, 0.01): more bits than classic needs");
	ASSERT_TRUE((double)nblocks * FB_BLOCK_BITS < 1.5 * fb_classic_mbits(1e6, 0.01),
		    "fb_size_blocked(1e6, 0.01): less than 1.5x the bits classic needs");
	ASSERT_TRUE(best_fpr_blocked(1e6, nblocks - 1) > 0.01,
		    "fb_size_blocked(1e6, 0.01): one block fewer exceeds p for every k");
	ASSERT_EQ(fb_fpr(FB_LAYOUT_BLOCKED, 1e6, nblocks, k) == fb_fpr_blocked(1e6, nblocks, k), 1,
		  "fb_fpr(BLOCKED) is fb_fpr_blocked");

	ASSERT_EQ(fb_size_blocked(1e5, 0.001, &nblocks, &k), 0,
		  "fb_size_blocked(1e5, 0.001) succeeds");
	ASSERT_RANGE(fb_fpr_blocked(1e5, nblocks, k), 0, 0.001,
		     "fb_size_blocked(1e5, 0.001): blocked rate of the geometry <= p");
	ASSERT_TRUE(best_fpr_blocked(1e5, nblocks - 1) > 0.001,
		    "fb_size_blocked(1e5, 0.001): one block fewer exceeds p for every k");

	ASSERT_EQ(fb_fpr_blocked(0, 19726, 8), 0, "fb_fpr_blocked of an empty filter is 0");

	/* With k fixed (a generation's sizing): the fewest blocks, and the
	 * most flows, at the rate, for both layouts; the bounds hold. */
	for (k = 4; k <= 8; k += 4) {
		__u8 lay;

		for (lay = 0; lay < 2; lay++) {
			__u8 layout = lay ? FB_LAYOUT_CLASSIC : FB_LAYOUT_BLOCKED;
			__u32 b = fb_size_fixed_k(layout, k, 4000, 1e-5, 1, 1u << 20);
			double cap = fb_capacity_at(layout, k, b, 1e-5);

			ASSERT_TRUE(fb_fpr(layout, 4000, b, k) <= 1e-5 &&
					    fb_fpr(layout, 4000, b - 1, k) > 1e-5,
				    "fb_size_fixed_k: the fewest blocks within the rate");
			ASSERT_TRUE(cap >= 4000 && fb_fpr(layout, cap, b, k) <= 1e-5 &&
					    fb_fpr(layout, cap + 1, b, k) > 1e-5,
				    "fb_capacity_at: the most flows within the rate");
		}
	}
	ASSERT_EQ(fb_size_fixed_k(FB_LAYOUT_BLOCKED, 8, 1, 1e-5, 64, 1973), 64,
		  "fb_size_fixed_k: no fewer than the lower bound");
	ASSERT_EQ(fb_size_fixed_k(FB_LAYOUT_BLOCKED, 8, 1e9, 1e-5, 64, 1973), 1973,
		  "fb_size_fixed_k: the upper bound when no size reaches the rate");
	ASSERT_EQ(fb_capacity_at(FB_LAYOUT_BLOCKED, 8, 64, 1e-30), 0,
		  "fb_capacity_at: 0 when not one flow is within the rate");

	/* More flows in the same filter can only raise the rate. Near 1 the
	 * Poisson sum carries ~1e-12 of rounding, hence the tolerance. */
	mono = 1;
	prev = 0;
	for (n = 1; n <= 1e8; n *= 1.25) {
		f = fb_fpr_blocked(n, 19726, 8);
		if (f < prev - 1e-9 || f < 0 || f > 1 + 1e-9)
			mono = 0;
		prev = f;
	}
	ASSERT_TRUE(mono, "fb_fpr_blocked(n, 19726, 8) in [0,1] and non-decreasing in n");
	ASSERT_RANGE(prev, 0.99, 1 + 1e-9, "fb_fpr_blocked approaches 1 for an overfull filter");
	mono = 1;
	prev = 0;
	for (n = 1; n <= 2000; n++) {
		f = fb_fpr_blocked(n, 1, 3);
		if (f < prev - 1e-9)
			mono = 0;
		prev = f;
	}
	ASSERT_TRUE(mono, "fb_fpr_blocked(n, 1 block, k=3) non-decreasing in n");

	/* Counts no filter holds: the formula ends (a double that stops
	 * incrementing once looped forever: `info` on flows = 2^64 - 1) and
	 * says 1. The alarm turns a hang into a failed run. */
	alarm(10);
	ASSERT_RANGE(fb_fpr_blocked(18446744073709551615.0, 8, 7), 1 - 1e-9, 1,
		     "fb_fpr_blocked(2^64 - 1 flows, 8 blocks) ends, at 1");
	ASSERT_RANGE(fb_fpr_blocked(1152921504606846976.0, 1, 16), 1 - 1e-9, 1,
		     "fb_fpr_blocked(2^60 flows, 1 block) ends, at 1");
	ASSERT_RANGE(fb_fpr_blocked(2400.0 * 64, 64, 8), 1 - 1e-9, 1 + 1e-9,
		     "fb_fpr_blocked at 2,400 flows per block: 1");
	ASSERT_RANGE(fb_fpr_blocked(2401.0 * 64, 64, 8), 1 - 1e-9, 1,
		     "fb_fpr_blocked past 2,400 flows per block: 1");
	alarm(0);
	ASSERT_EQ(fb_flows_max(1), 512 * FB_FLOWS_PER_BIT,
		  "fb_flows_max: FB_FLOWS_PER_BIT per bit");
	ASSERT_EQ(fb_flows_add(5, 7, 1), 12, "fb_flows_add below the bound adds");
	ASSERT_EQ(fb_flows_add(fb_flows_max(1) - 1, 7, 1), fb_flows_max(1),
		  "fb_flows_add saturates at the bound");
	ASSERT_EQ(fb_flows_add(~0ULL, ~0ULL, 1), fb_flows_max(1),
		  "fb_flows_add of two huge counts: the bound, no wrap");

	/* Per-packet rates: 1 - (1 - r)^n, without rounding a tiny r away
	 * (info printed "2e-17 per probe, 0 per packet"). */
	ASSERT_RANGE(fb_packet_rate(2e-17, 2), 3.999e-17, 4.001e-17,
		     "fb_packet_rate(2e-17, 2 probes) is 4e-17, not rounded to 0");
	ASSERT_RANGE(fb_packet_rate(0.01, 4), 0.0394, 0.0395,
		     "fb_packet_rate(0.01, 4 probes) is 1 - 0.99^4");
	ASSERT_EQ(fb_packet_rate(1, 3) == 1 && fb_packet_rate(0.5, 0) == 0, 1,
		  "fb_packet_rate: a certain probe is a certain packet; no probe, no rate");
	ASSERT_RANGE(fb_probe_target(4e-17, 2), 1.999e-17, 2.001e-17,
		     "fb_probe_target(4e-17, 2 probes) is 2e-17, not rounded to 0");
	ASSERT_RANGE(fb_probe_target(fb_packet_rate(0.001, 5), 5), 0.000999999, 0.001000001,
		     "fb_probe_target inverts fb_packet_rate");
}

int main(void)
{
	test_sizing();
	test_create_opts();
	test_siphash_vectors();
	test_hash_key();
	test_nh_keyed();
	test_nh_structured();
	test_geometry();
	test_flow_parse();
	test_ntop();
	test_flow_format_prefix();
	test_rule_parse();
	test_list_line();
	test_keysort();
	test_shared_logic();
	test_text_input();
	test_quote();
	test_real_input();
	test_frame();
	return test_summary();
}
