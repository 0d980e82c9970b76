// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_unit, the bit geometry shared by the XDP program and the CLI
 * (include/flowbloom/geometry.h).
 */
#include "unit.h"

/* ---------------------------------------------------------------------- */
/* Geometry                                                               */

void test_geometry(void)
{
	static const __u32 nblocks_list[] = { 1, 7, 19726, FB_MAX_BLOCKS };
	static const __u64 mbits_list[] = { 512, 9585152, 1ULL << 32 };
	const __u64 k[2] = { 0x1111111111111111ULL, 0x2222222222222222ULL };
	uint64_t seed = 42;
	__u64 h, counts[64], bcounts[64];
	unsigned kk, pop_ok, range_ok, empty_ok, n, i, w, t;
	char label[120];
	double chi2;

	/* Blocked mask: bit i goes to word i % 8, so k <= 8 bits never
	 * collide; for k 9..16 bits i and i+8 share a word and may. */
	for (kk = 1; kk <= FB_MAX_K; kk++) {
		pop_ok = 1;
		empty_ok = 1;
		for (n = 0; n < 20000; n++) {
			int pop = 0;

			h = n ? test_rand64(&seed) : ~0ULL;
			for (w = 0; w < FB_BLOCK_WORDS; w++) {
				__u64 m = fb_blocked_word_mask(h, kk, w);

				pop += __builtin_popcountll(m);
				if (w >= kk && m)
					empty_ok = 0;
			}
			if (kk <= 8 ? pop != (int)kk : pop < 8 || pop > (int)kk)
				pop_ok = 0;
		}
		if (kk <= 8)
			snprintf(label, sizeof(label),
				 "blocked mask k=%u: exactly k bits set over the 8 words", kk);
		else
			snprintf(label, sizeof(label),
				 "blocked mask k=%u: between 8 and k bits set over the 8 words",
				 kk);
		ASSERT_TRUE(pop_ok, label);
		snprintf(label, sizeof(label), "blocked mask k=%u: words >= k hold no bit", kk);
		ASSERT_TRUE(empty_ok, label);
	}

	/* fb_block_has(): its unmasked cases (k = 4 and 8) and the masks
	 * answer alike: on blocks from half full to nearly full, for
	 * every k, the answer is "all of the mask's bits are set"; and a
	 * block that fb_block_set() wrote holds its hash. */
	for (kk = 1; kk <= FB_MAX_K; kk++) {
		unsigned agree = 1, holds = 1;

		for (n = 0; n < 40000; n++) {
			struct fb_block blk;
			int want = 1;

			h = test_rand64(&seed);
			for (w = 0; w < FB_BLOCK_WORDS; w++) {
				/* n % 4 decides the fill: the OR of 1 to 4 random
				 * words, half full to nearly full (both answers
				 * come up for every k). */
				blk.w[w] = test_rand64(&seed);
				for (t = 0; t < n % 4; t++)
					blk.w[w] |= test_rand64(&seed);
				want &= (blk.w[w] & fb_blocked_word_mask(h, kk, w)) ==
					fb_blocked_word_mask(h, kk, w);
			}
			if (fb_block_has(&blk, h, kk) != want)
				agree = 0;
			memset(&blk, 0, sizeof(blk));
			fb_block_set(&blk, h, kk);
			if (!fb_block_has(&blk, h, kk))
				holds = 0;
		}
		snprintf(label, sizeof(label),
			 "fb_block_has k=%u: the mask's bits, on blocks of every fill", kk);
		ASSERT_TRUE(agree, label);
		snprintf(label, sizeof(label), "fb_block_has k=%u: a block set for h holds h", kk);
		ASSERT_TRUE(holds, label);
	}

	for (i = 0; i < sizeof(nblocks_list) / sizeof(nblocks_list[0]); i++) {
		range_ok = fb_blocked_index(~0ULL, nblocks_list[i]) < nblocks_list[i] &&
			   fb_blocked_index(0, nblocks_list[i]) == 0;
		for (n = 0; n < 100000; n++)
			if (fb_blocked_index(test_rand64(&seed), nblocks_list[i]) >=
			    nblocks_list[i])
				range_ok = 0;
		snprintf(label, sizeof(label), "fb_blocked_index(h, %u) < %u (random h, 0, ~0)",
			 nblocks_list[i], nblocks_list[i]);
		ASSERT_TRUE(range_ok, label);
	}
	ASSERT_EQ(fb_blocked_index(~0ULL, 19726), 19725,
		  "fb_blocked_index(~0, n) is the last block");

	for (i = 0; i < sizeof(mbits_list) / sizeof(mbits_list[0]); i++) {
		range_ok = 1;
		for (n = 0; n < 100000; n++) {
			h = n ? test_rand64(&seed) : ~0ULL;
			for (t = 0; t < FB_MAX_K; t++)
				if (fb_classic_bit(h, t, mbits_list[i]) >= mbits_list[i])
					range_ok = 0;
		}
		snprintf(label, sizeof(label), "fb_classic_bit(h, i, %llu) < m (random h and ~0)",
			 (unsigned long long)mbits_list[i]);
		ASSERT_TRUE(range_ok, label);
	}

	/* Where a bit position lives: block after the 2 header blocks, word
	 * within the block, bit within the word. */
	ASSERT_EQ(fb_bit_block(0), FB_HDR_BLOCKS, "bit 0 is in the first block after the header");
	ASSERT_EQ(fb_bit_word(0), 0, "bit 0 is in word 0");
	check_u64(fb_bit_mask(0), 1, "bit 0 has mask 1");
	ASSERT_EQ(fb_bit_word(64), 1, "bit 64 is in word 1");
	check_u64(fb_bit_mask(63), 1ULL << 63, "bit 63 has mask 1<<63");
	ASSERT_EQ(fb_bit_block(511), FB_HDR_BLOCKS, "bit 511 is still in the first bit block");
	ASSERT_EQ(fb_bit_word(511), 7, "bit 511 is in word 7");
	ASSERT_EQ(fb_bit_block(512), FB_HDR_BLOCKS + 1, "bit 512 starts the second bit block");
	ASSERT_EQ(fb_bit_word(512), 0, "bit 512 is in word 0 of its block");
	range_ok = 1;
	for (n = 0; n < 100000; n++) {
		__u64 p = test_rand64(&seed) % (1ULL << 32);
		__u64 back = (__u64)(fb_bit_block(p) - FB_HDR_BLOCKS) * FB_BLOCK_BITS +
			     fb_bit_word(p) * 64 + __builtin_ctzll(fb_bit_mask(p));

		if (back != p || __builtin_popcountll(fb_bit_mask(p)) != 1)
			range_ok = 0;
	}
	ASSERT_TRUE(range_ok, "block/word/mask of a bit position decompose it exactly");

	/* Uniformity: 1M classic probe positions (125000 random flow keys x
	 * k=8) and 1M blocked indexes, each in 64 equal buckets. Expected 15625
	 * per bucket, standard deviation ~125, so +-10% is a loose bound; the
	 * chi-square bound 110 is the 99.98th percentile for 63 degrees. */
	memset(counts, 0, sizeof(counts));
	memset(bcounts, 0, sizeof(bcounts));
	for (n = 0; n < 125000; n++) {
		struct fb_key key;
		__u64 r = test_rand64(&seed);

		memset(&key, 0, sizeof(key));
		key.saddr[10] = key.saddr[11] = key.daddr[10] = key.daddr[11] = 0xff;
		memcpy(key.saddr + 12, &r, 4);
		memcpy(key.daddr + 12, (char *)&r + 4, 4);
		key.sport = htons(n & 0xffff);
		key.dport = htons(443);
		key.proto = 6;
		key.kind = FB_KIND_FLOW;
		h = fb_hash_key(&key, FB_HASH_SIPHASH13, k);
		for (t = 0; t < 8; t++)
			counts[fb_classic_bit(h, t, 9585152) * 64 / 9585152]++;
		for (t = 0; t < 8; t++) {
			key.dport = htons(t);
			h = fb_hash_key(&key, FB_HASH_SIPHASH13, k);
			bcounts[fb_blocked_index(h, 1U << 16) >> 10]++;
		}
	}
	range_ok = 1;
	chi2 = 0;
	for (i = 0; i < 64; i++) {
		if (counts[i] < 15625 * 0.9 || counts[i] > 15625 * 1.1)
			range_ok = 0;
		chi2 += (counts[i] - 15625.0) * (counts[i] - 15625.0) / 15625.0;
	}
	ASSERT_TRUE(range_ok, "classic probe positions: each of 64 buckets within 10% of 1M/64");
	ASSERT_RANGE(chi2, 0, 110, "classic probe positions: chi-square over 64 buckets");
	range_ok = 1;
	chi2 = 0;
	for (i = 0; i < 64; i++) {
		if (bcounts[i] < 15625 * 0.9 || bcounts[i] > 15625 * 1.1)
			range_ok = 0;
		chi2 += (bcounts[i] - 15625.0) * (bcounts[i] - 15625.0) / 15625.0;
	}
	ASSERT_TRUE(range_ok, "blocked indexes: each of 64 buckets within 10% of 1M/64");
	ASSERT_RANGE(chi2, 0, 110, "blocked indexes: chi-square over 64 buckets");
}
