// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the pure user-space pieces, no kernel involved: the sizing
 * formulas (user/sizing.c), SipHash against the reference known-answer
 * vectors and its use on a flow key (include/flowbloom/hash.h), the bit
 * geometry shared by the XDP program and the CLI (include/flowbloom/
 * geometry.h), and the FLOW text parser and formatter (user/flow.c).
 *
 * Random inputs come from a fixed-seed splitmix64, so every run checks the
 * same values and a failure is reproducible.
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "flowbloom/geometry.h"
#include "flowbloom/hash.h"
#include "flowbloom/key.h"
#include "flowbloom/maps.h"
#include "flowbloom/prefix.h"
#include "sizing.h"
#include "flow.h"
#include "testlib.h"

static __u64 splitmix64(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ASSERT_EQ prints signed decimals; hashes read better in hex. */
static bool check_u64(__u64 got, __u64 want, const char *label)
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
}

/* ---------------------------------------------------------------------- */
/* SipHash known answers                                                  */

/*
 * Key 00 01 .. 0f, message 00 01 .. (len-1), len 0..63. SipHash-2-4: the
 * reference implementation's vectors (github.com/veorq/SipHash vectors.h,
 * read as little-endian 64-bit words); SipHash-1-3: the same inputs, as
 * published with other SipHash-1-3 implementations. Both tables were also
 * recomputed with an independent implementation written from the paper.
 */
static const __u64 sip24_vectors[64] = {
	0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL, 0x85676696d7fb7e2dULL,
	0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL, 0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL,
	0x93f5f5799a932462ULL, 0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
	0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL, 0xa129ca6149be45e5ULL,
	0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL, 0x4bc1b3f0968dd39cULL, 0xbb6dc91da77961bdULL,
	0xbed65cf21aa2ee98ULL, 0xd0f2cbb02e3b67c7ULL, 0x93536795e3a33e88ULL, 0xa80c038ccd5ccec8ULL,
	0xb8ad50c6f649af94ULL, 0xbce192de8a85b8eaULL, 0x17d835b85bbb15f3ULL, 0x2f2e6163076bcfadULL,
	0xde4daaaca71dc9a5ULL, 0xa6a2506687956571ULL, 0xad87a3535c49ef28ULL, 0x32d892fad841c342ULL,
	0x7127512f72f27cceULL, 0xa7f32346f95978e3ULL, 0x12e0b01abb051238ULL, 0x15e034d40fa197aeULL,
	0x314dffbe0815a3b4ULL, 0x027990f029623981ULL, 0xcadcd4e59ef40c4dULL, 0x9abfd8766a33735cULL,
	0x0e3ea96b5304a7d0ULL, 0xad0c42d6fc585992ULL, 0x187306c89bc215a9ULL, 0xd4a60abcf3792b95ULL,
	0xf935451de4f21df2ULL, 0xa9538f0419755787ULL, 0xdb9acddff56ca510ULL, 0xd06c98cd5c0975ebULL,
	0xe612a3cb9ecba951ULL, 0xc766e62cfcadaf96ULL, 0xee64435a9752fe72ULL, 0xa192d576b245165aULL,
	0x0a8787bf8ecb74b2ULL, 0x81b3e73d20b49b6fULL, 0x7fa8220ba3b2eceaULL, 0x245731c13ca42499ULL,
	0xb78dbfaf3a8d83bdULL, 0xea1ad565322a1a0bULL, 0x60e61c23a3795013ULL, 0x6606d7e446282b93ULL,
	0x6ca4ecb15c5f91e1ULL, 0x9f626da15c9625f3ULL, 0xe51b38608ef25f57ULL, 0x958a324ceb064572ULL,
};

static const __u64 sip13_vectors[64] = {
	0xabac0158050fc4dcULL, 0xc9f49bf37d57ca93ULL, 0x82cb9b024dc7d44dULL, 0x8bf80ab8e7ddf7fbULL,
	0xcf75576088d38328ULL, 0xdef9d52f49533b67ULL, 0xc50d2b50c59f22a7ULL, 0xd3927d989bb11140ULL,
	0x369095118d299a8eULL, 0x25a48eb36c063de4ULL, 0x79de85ee92ff097fULL, 0x70c118c1f94dc352ULL,
	0x78a384b157b4d9a2ULL, 0x306f760c1229ffa7ULL, 0x605aa111c0f95d34ULL, 0xd320d86d2a519956ULL,
	0xcc4fdd1a7d908b66ULL, 0x9cf2689063dbd80cULL, 0x8ffc389cb473e63eULL, 0xf21f9de58d297d1cULL,
	0xc0dc2f46a6cce040ULL, 0xb992abfe2b45f844ULL, 0x7ffe7b9ba320872eULL, 0x525a0e7fdae6c123ULL,
	0xf464aeb267349c8cULL, 0x45cd5928705b0979ULL, 0x3a3e35e3ca9913a5ULL, 0xa91dc74e4ade3b35ULL,
	0xfb0bed02ef6cd00dULL, 0x88d93cb44ab1e1f4ULL, 0x540f11d643c5e663ULL, 0x2370dd1f8c21d1bcULL,
	0x81157b6c16a7b60dULL, 0x4d54b9e57a8ff9bfULL, 0x759f12781f2a753eULL, 0xcea1a3bebf186b91ULL,
	0x2cf508d3ada26206ULL, 0xb6101c2da3c33057ULL, 0xb3f47496ae3a36a1ULL, 0x626b57547b108392ULL,
	0xc1d2363299e41531ULL, 0x667cc1923f1ad944ULL, 0x65704ffec8138825ULL, 0x24f280d1c28949a6ULL,
	0xc2ca1cedfaf8876bULL, 0xc2164bfc9f042196ULL, 0xa16e9c9368b1d623ULL, 0x49fb169c8b5114fdULL,
	0x9f3143f8df074c46ULL, 0xc6fdaf2412cc86b3ULL, 0x7eaf49d10a52098fULL, 0x1cf313559d292f9aULL,
	0xc44a30dda2f41f12ULL, 0x36fae98943a71ed0ULL, 0x318fb34c73f0bce6ULL, 0xa27abf3670a7e980ULL,
	0xb4bcc0db243c6d75ULL, 0x23f8d852fdb71513ULL, 0x8f035f4da67d8a08ULL, 0xd89cd0e5b7e8f148ULL,
	0xf6f4e6bcf7a644eeULL, 0xaec59ad80f1837f2ULL, 0xc3b2f6154b6694e0ULL, 0x9d199062b7bbb3a8ULL,
};

/* The 16 key bytes 00..0f as the two little-endian words fb_siphash takes. */
static const __u64 ref_key[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };

static void test_siphash_vectors(void)
{
	unsigned char msg[64];
	char label[80];
	int len;

	for (len = 0; len < 64; len++)
		msg[len] = (unsigned char)len;

	/* The vectors the brief and the paper (Appendix A) name explicitly. */
	check_u64(fb_siphash(msg, 0, ref_key, 2, 4), 0x726fdb47dd0e0e31ULL,
		  "SipHash-2-4 of the empty message");
	check_u64(fb_siphash(msg, 8, ref_key, 2, 4), 0x93f5f5799a932462ULL,
		  "SipHash-2-4 of 8 bytes (one whole word, empty tail)");
	check_u64(fb_siphash(msg, 15, ref_key, 2, 4), 0xa129ca6149be45e5ULL,
		  "SipHash-2-4 of 15 bytes (SipHash paper, Appendix A)");

	for (len = 0; len < 64; len++) {
		snprintf(label, sizeof(label), "SipHash-2-4 reference vector, len %d", len);
		check_u64(fb_siphash(msg, len, ref_key, 2, 4), sip24_vectors[len], label);
	}
	for (len = 0; len < 64; len++) {
		snprintf(label, sizeof(label), "SipHash-1-3 reference vector, len %d", len);
		check_u64(fb_siphash(msg, len, ref_key, 1, 3), sip13_vectors[len], label);
	}
}

/* ---------------------------------------------------------------------- */
/* Hash of a flow key                                                     */

static void test_hash_key(void)
{
	const __u64 k[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
	static __u64 seen[40 * 8 + 1];
	struct fb_key key;
	int i, j, changed, distinct, byte;
	__u64 base;

	memset(&key, 0, sizeof(key));
	key.saddr[10] = key.saddr[11] = 0xff;
	key.saddr[12] = 198, key.saddr[13] = 51, key.saddr[14] = 100, key.saddr[15] = 1;
	key.daddr[10] = key.daddr[11] = 0xff;
	key.daddr[12] = 203, key.daddr[13] = 0, key.daddr[14] = 113, key.daddr[15] = 7;
	key.sport = htons(53);
	key.dport = htons(4000);
	key.proto = 17;
	key.kind = FB_KIND_FLOW;

	check_u64(fb_hash_key(&key, FB_HASH_SIPHASH13, k), fb_siphash(&key, 40, k, 1, 3),
		  "fb_hash_key(SIPHASH13) is SipHash-1-3 of the 40-byte key");
	check_u64(fb_hash_key(&key, FB_HASH_SIPHASH24, k), fb_siphash(&key, 40, k, 2, 4),
		  "fb_hash_key(SIPHASH24) is SipHash-2-4 of the 40-byte key");
	ASSERT_TRUE(fb_hash_key(&key, FB_HASH_SIPHASH13, k) !=
			    fb_hash_key(&key, FB_HASH_SIPHASH24, k),
		    "SIPHASH13 and SIPHASH24 hash the same key differently");
	ASSERT_TRUE(fb_hash_key(&key, FB_HASH_SIPHASH13, k) !=
			    fb_hash_key(&key, FB_HASH_SIPHASH13, ref_key),
		    "a different SipHash key gives a different hash");

	/* Every byte is hashed: flipping any one bit of the 40 bytes changes
	 * the hash, and the 321 keys (base + 320 flips) all hash apart. */
	base = fb_hash_key(&key, FB_HASH_SIPHASH13, k);
	seen[0] = base;
	changed = 1;
	for (byte = 0; byte < 40; byte++) {
		for (j = 0; j < 8; j++) {
			struct fb_key t = key;
			__u64 h;

			((__u8 *)&t)[byte] ^= 1U << j;
			h = fb_hash_key(&t, FB_HASH_SIPHASH13, k);
			if (h == base || h != fb_siphash(&t, 40, k, 1, 3))
				changed = 0;
			seen[1 + byte * 8 + j] = h;
		}
	}
	ASSERT_TRUE(changed, "flipping any bit of the 40-byte key changes the SipHash-1-3 hash");
	distinct = 1;
	for (i = 0; i < 40 * 8 + 1; i++)
		for (j = i + 1; j < 40 * 8 + 1; j++)
			if (seen[i] == seen[j])
				distinct = 0;
	ASSERT_TRUE(distinct, "321 keys one bit apart have 321 distinct hashes");

	changed = 1;
	for (byte = 0; byte < 40; byte++) {
		struct fb_key t = key;

		((__u8 *)&t)[byte] += 0x5a;
		if (fb_hash_key(&t, FB_HASH_SIPHASH24, k) ==
		    fb_hash_key(&key, FB_HASH_SIPHASH24, k))
			changed = 0;
	}
	ASSERT_TRUE(changed, "changing any byte of the key changes the SipHash-2-4 hash");
}

/* ---------------------------------------------------------------------- */
/* Geometry                                                               */

static void test_geometry(void)
{
	static const __u32 nblocks_list[] = { 1, 7, 19726, FB_MAX_BLOCKS };
	static const __u64 mbits_list[] = { 512, 9585152, 1ULL << 32 };
	const __u64 k[2] = { 0x1111111111111111ULL, 0x2222222222222222ULL };
	__u64 seed = 42, h, counts[64], bcounts[64];
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

			h = n ? splitmix64(&seed) : ~0ULL;
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

	for (i = 0; i < sizeof(nblocks_list) / sizeof(nblocks_list[0]); i++) {
		range_ok = fb_blocked_index(~0ULL, nblocks_list[i]) < nblocks_list[i] &&
			   fb_blocked_index(0, nblocks_list[i]) == 0;
		for (n = 0; n < 100000; n++)
			if (fb_blocked_index(splitmix64(&seed), nblocks_list[i]) >= nblocks_list[i])
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
			h = n ? splitmix64(&seed) : ~0ULL;
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
		__u64 p = splitmix64(&seed) % (1ULL << 32);
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
		__u64 r = splitmix64(&seed);

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

/* ---------------------------------------------------------------------- */
/* FLOW parser                                                            */

/* Split text into words in buf (the argv fb_flow_parse sees). */
static int split_words(const char *text, char *buf, size_t len, char **words, int max)
{
	char *save = NULL, *w;
	int n = 0;

	snprintf(buf, len, "%s", text);
	for (w = strtok_r(buf, " ", &save); w && n < max; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	return n;
}

/* The 16 bytes an address should have in a key: IPv4 as ::ffff:a.b.c.d. */
static void want_addr(const char *text, __u8 out[16])
{
	memset(out, 0, 16);
	if (!text)
		return;
	if (strchr(text, ':')) {
		inet_pton(AF_INET6, text, out);
		return;
	}
	out[10] = out[11] = 0xff;
	inet_pton(AF_INET, text, out + 12);
}

struct accept_case {
	const char *text;
	int used;
	__u8 kind, proto;
	const char *saddr, *daddr; /* NULL: all zero */
	__u16 sport, dport;	   /* host order */
};

static const struct accept_case accept_cases[] = {
	{ "udp 198.51.100.1:53 203.0.113.7:4000", 3, FB_KIND_FLOW, 17, "198.51.100.1",
	  "203.0.113.7", 53, 4000 },
	{ "tcp [2001:db8::1]:443 [2001:db8::2]:51000", 3, FB_KIND_FLOW, 6, "2001:db8::1",
	  "2001:db8::2", 443, 51000 },
	{ "6 198.51.100.1:1 203.0.113.1:2", 3, FB_KIND_FLOW, 6, "198.51.100.1", "203.0.113.1", 1,
	  2 },
	{ "TCP 198.51.100.1:80 203.0.113.1:8080", 3, FB_KIND_FLOW, 6, "198.51.100.1", "203.0.113.1",
	  80, 8080 },
	{ "icmp 198.51.100.1 203.0.113.1", 3, FB_KIND_FLOW, 1, "198.51.100.1", "203.0.113.1", 0,
	  0 },
	{ "icmp 198.51.100.1:0 203.0.113.1:0", 3, FB_KIND_FLOW, 1, "198.51.100.1", "203.0.113.1", 0,
	  0 },
	{ "icmpv6 2001:db8::1 2001:db8::2", 3, FB_KIND_FLOW, 58, "2001:db8::1", "2001:db8::2", 0,
	  0 },
	{ "sctp 198.51.100.1:5000 203.0.113.1:5001", 3, FB_KIND_FLOW, 132, "198.51.100.1",
	  "203.0.113.1", 5000, 5001 },
	{ "udplite [2001:db8::1]:7 [2001:db8::2]:9", 3, FB_KIND_FLOW, 136, "2001:db8::1",
	  "2001:db8::2", 7, 9 },
	{ "src 198.51.100.7", 2, FB_KIND_SRC, 0, "198.51.100.7", NULL, 0, 0 },
	{ "dst 2001:db8::5", 2, FB_KIND_DST, 0, NULL, "2001:db8::5", 0, 0 },
	{ "47 198.51.100.1 203.0.113.1", 3, FB_KIND_FLOW, 47, "198.51.100.1", "203.0.113.1", 0, 0 },
	{ "ah 198.51.100.1 203.0.113.1", 3, FB_KIND_FLOW, 51, "198.51.100.1", "203.0.113.1", 0, 0 },
	{ "60 198.51.100.1 203.0.113.1", 3, FB_KIND_FLOW, 60, "198.51.100.1", "203.0.113.1", 0, 0 },
	{ "esp 2001:db8::1 2001:db8::2", 3, FB_KIND_FLOW, 50, "2001:db8::1", "2001:db8::2", 0, 0 },
	{ "udp 198.51.100.1:0 203.0.113.7:65535", 3, FB_KIND_FLOW, 17, "198.51.100.1",
	  "203.0.113.7", 0, 65535 },
	{ "tcp [2001:db8::1]:65535 [2001:db8::2]:0", 3, FB_KIND_FLOW, 6, "2001:db8::1",
	  "2001:db8::2", 65535, 0 },
	/* Families as written (README "Families"): ::ffff:a.b.c.d is IPv4,
	 * the same bits in hex IPv6. */
	{ "src ::ffff:198.51.100.7", 2, FB_KIND_SRC, 0, "::ffff:198.51.100.7", NULL, 0, 0 },
	{ "src ::ffff:c633:6407", 2, FB_KIND_SRC, 0, "::ffff:c633:6407", NULL, 0, 0 },
	{ "udp [::ffff:c633:6401]:53 [::ffff:cb00:7107]:4000", 3, FB_KIND_FLOW, 17,
	  "::ffff:c633:6401", "::ffff:cb00:7107", 53, 4000 },
};

/* The family a case's address text means: dotted IPv4, or ::ffff:a.b.c.d. */
static __u8 want_family(const struct accept_case *c)
{
	const char *a = c->saddr ? c->saddr : c->daddr;

	return strchr(a, '.') && (!strchr(a, ':') || !strncmp(a, "::ffff:", 7)) ? FB_FAMILY_IPV4
										: FB_FAMILY_IPV6;
}

static void check_accept(const struct accept_case *c)
{
	char buf[256], fbuf[FB_FLOW_STR], err[128], label[200], *words[8];
	struct fb_key key, again;
	__u8 want[16];
	int n, used;

	n = split_words(c->text, buf, sizeof(buf), words, 8);
	err[0] = 0;
	used = fb_flow_parse(n, words, &key, err, sizeof(err));
	snprintf(label, sizeof(label), "accept '%s': words used", c->text);
	if (!ASSERT_EQ(used, c->used, label)) {
		printf("  error: %s\n", err);
		return;
	}
	snprintf(label, sizeof(label), "accept '%s': kind", c->text);
	ASSERT_EQ(key.kind, c->kind, label);
	snprintf(label, sizeof(label), "accept '%s': proto", c->text);
	ASSERT_EQ(key.proto, c->proto, label);
	want_addr(c->saddr, want);
	snprintf(label, sizeof(label), "accept '%s': saddr bytes", c->text);
	ASSERT_TRUE(!memcmp(key.saddr, want, 16), label);
	want_addr(c->daddr, want);
	snprintf(label, sizeof(label), "accept '%s': daddr bytes", c->text);
	ASSERT_TRUE(!memcmp(key.daddr, want, 16), label);
	/* Network byte order: most significant byte first in memory. */
	snprintf(label, sizeof(label), "accept '%s': sport big-endian bytes", c->text);
	ASSERT_TRUE(((__u8 *)&key.sport)[0] == c->sport >> 8 &&
			    ((__u8 *)&key.sport)[1] == (c->sport & 0xff),
		    label);
	snprintf(label, sizeof(label), "accept '%s': dport big-endian bytes", c->text);
	ASSERT_TRUE(((__u8 *)&key.dport)[0] == c->dport >> 8 &&
			    ((__u8 *)&key.dport)[1] == (c->dport & 0xff),
		    label);
	snprintf(label, sizeof(label), "accept '%s': plen (128 for address rules, else 0)",
		 c->text);
	ASSERT_TRUE(key.plen == (c->kind == FB_KIND_FLOW ? 0 : 128), label);
	snprintf(label, sizeof(label), "accept '%s': family", c->text);
	ASSERT_EQ(key.family, want_family(c), label);

	fb_flow_format(&key, fbuf, sizeof(fbuf));
	n = split_words(fbuf, buf, sizeof(buf), words, 8);
	used = fb_flow_parse(n, words, &again, err, sizeof(err));
	snprintf(label, sizeof(label), "accept '%s': formatted '%s' parses, all words used",
		 c->text, fbuf);
	ASSERT_TRUE(used == n && used == c->used, label);
	snprintf(label, sizeof(label), "accept '%s': formatted '%s' gives the same 40 bytes",
		 c->text, fbuf);
	ASSERT_TRUE(used > 0 && !memcmp(&key, &again, sizeof(key)), label);
}

static const char *const reject_cases[] = {
	"udp 198.51.100.1:65536 203.0.113.7:4000", /* port out of range */
	"udp 198.51.100.1:-1 203.0.113.7:4000",
	"udp 198.51.100.1:8o 203.0.113.7:4000",
	"udp 198.51.100.1: 203.0.113.7:4000", /* empty port */
	"udp 198.51.100.300:53 203.0.113.7:4000",
	"icmp 198.51.100.300 203.0.113.7",
	"tcp 198.51.100.1 203.0.113.1", /* tcp needs ports */
	"tcp 198.51.100.1:80 203.0.113.1",
	"foo 198.51.100.1:1 203.0.113.1:2",
	"256 198.51.100.1:1 203.0.113.1:2",
	"-6 198.51.100.1:1 203.0.113.1:2",
	"icmp 198.51.100.1:5 203.0.113.1:0",	/* icmp has no ports */
	"udp 198.51.100.1:53 [2001:db8::2]:53", /* mixed families */
	"icmp 2001:db8::1 203.0.113.1",
	"src 198.51.100.1:80", /* an address rule takes no port */
	"dst [2001:db8::1]:80",
	"src",
	"dst",
	"src 198.51.100.999",
	"udp 198.51.100.1:53", /* missing DST */
	"udp",
	"tcp [2001:db8::1 [2001:db8::2]:80", /* unclosed bracket */
	"src [2001:db8::1",
	"tcp [198.51.100.1]:80 203.0.113.1:80", /* brackets are for IPv6 */
	"tcp [2001:db8::1]x80 [2001:db8::2]:80",
	/* IPv6 extension headers: the data path keys the protocol after them. */
	"0 2001:db8::1 2001:db8::2",
	"43 2001:db8::1 2001:db8::2",
	"44 2001:db8::1 2001:db8::2",
	"ah 2001:db8::1 2001:db8::2",
	"60 [2001:db8::1]:0 [2001:db8::2]:0",
};

static void test_flow_parse(void)
{
	char buf[256], err[128], label[200], *words[16], *none[1] = { NULL };
	struct fb_key key, k2;
	size_t i;
	int n, used, at, nflows;

	ASSERT_EQ(fb_proto_parse("tcp"), 6, "fb_proto_parse(tcp)");
	ASSERT_EQ(fb_proto_parse("UdP"), 17, "fb_proto_parse is case-insensitive");
	ASSERT_EQ(fb_proto_parse("ipv6-icmp"), 58, "fb_proto_parse(ipv6-icmp)");
	ASSERT_EQ(fb_proto_parse("0"), 0, "fb_proto_parse(0)");
	ASSERT_EQ(fb_proto_parse("255"), 255, "fb_proto_parse(255)");
	ASSERT_EQ(fb_proto_parse("256"), -1, "fb_proto_parse rejects 256");
	ASSERT_EQ(fb_proto_parse("6x"), -1, "fb_proto_parse rejects trailing junk");
	ASSERT_EQ(fb_proto_parse(""), -1, "fb_proto_parse rejects the empty string");
	ASSERT_EQ(fb_proto_parse("foo"), -1, "fb_proto_parse rejects an unknown name");

	for (i = 0; i < sizeof(accept_cases) / sizeof(accept_cases[0]); i++)
		check_accept(&accept_cases[i]);

	/* One explicit v4-mapped layout, not derived from inet_pton. */
	n = split_words("udp 198.51.100.1:53 203.0.113.7:4000", buf, sizeof(buf), words, 8);
	fb_flow_parse(n, words, &key, err, sizeof(err));
	{
		static const __u8 want[16] = { 0, 0, 0,	   0,	 0,   0,  0,   0,
					       0, 0, 0xff, 0xff, 198, 51, 100, 1 };

		ASSERT_TRUE(!memcmp(key.saddr, want, 16),
			    "198.51.100.1 stored as ::ffff:c633:6401");
		ASSERT_EQ(key.sport, htons(53), "sport 53 stored as htons(53)");
	}

	for (i = 0; i < sizeof(reject_cases) / sizeof(reject_cases[0]); i++) {
		n = split_words(reject_cases[i], buf, sizeof(buf), words, 8);
		err[0] = 0;
		used = fb_flow_parse(n, words, &key, err, sizeof(err));
		snprintf(label, sizeof(label), "reject '%s': returns -1", reject_cases[i]);
		ASSERT_EQ(used, -1, label);
		snprintf(label, sizeof(label), "reject '%s': error message set", reject_cases[i]);
		ASSERT_TRUE(err[0] != 0, label);
	}
	err[0] = 0;
	ASSERT_EQ(fb_flow_parse(0, none, &key, err, sizeof(err)), -1, "reject empty argv");
	ASSERT_TRUE(err[0] != 0, "reject empty argv: error message set");

	/* Several FLOWs back to back in argv, consumed by the returned counts. */
	n = split_words("udp 198.51.100.1:53 203.0.113.7:4000 src 198.51.100.7 "
			"tcp [2001:db8::1]:443 [2001:db8::2]:51000 dst 2001:db8::5",
			buf, sizeof(buf), words, 16);
	ASSERT_EQ(n, 10, "argv of 4 FLOWs has 10 words");
	{
		static const int want_used[] = { 3, 2, 3, 2 };
		static const __u8 want_kind[] = { FB_KIND_FLOW, FB_KIND_SRC, FB_KIND_FLOW,
						  FB_KIND_DST };

		for (at = 0, nflows = 0; at < n && nflows < 4; nflows++) {
			used = fb_flow_parse(n - at, words + at, &key, err, sizeof(err));
			snprintf(label, sizeof(label), "argv sequence: FLOW %d uses %d words",
				 nflows + 1, want_used[nflows]);
			if (!ASSERT_EQ(used, want_used[nflows], label))
				break;
			snprintf(label, sizeof(label), "argv sequence: FLOW %d kind", nflows + 1);
			ASSERT_EQ(key.kind, want_kind[nflows], label);
			at += used;
		}
		ASSERT_TRUE(at == n && nflows == 4, "argv sequence: 4 FLOWs consume all 10 words");
	}

	/* fb_flow_parse_line */
	{
		char line[256];
		int blank;

		memset(&key, 0xaa, sizeof(key));
		memcpy(&k2, &key, sizeof(key));
		strcpy(line, "");
		blank = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: empty line ok");
		ASSERT_EQ(blank, 1, "parse_line: empty line is blank");
		strcpy(line, "   # comment");
		blank = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: comment line ok");
		ASSERT_EQ(blank, 1, "parse_line: comment-only line is blank");
		strcpy(line, " \t\r\n");
		blank = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: whitespace-only line ok");
		ASSERT_EQ(blank, 1, "parse_line: whitespace-only line is blank");
		ASSERT_TRUE(!memcmp(&key, &k2, sizeof(key)),
			    "parse_line: blank lines leave key untouched");

		n = split_words("udp 198.51.100.1:53 203.0.113.7:4000", buf, sizeof(buf), words, 8);
		fb_flow_parse(n, words, &k2, err, sizeof(err));

		strcpy(line, "udp 198.51.100.1:53 203.0.113.7:4000 # trailing comment");
		blank = 1;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: FLOW with trailing comment ok");
		ASSERT_EQ(blank, 0, "parse_line: FLOW line is not blank");
		ASSERT_TRUE(!memcmp(&key, &k2, sizeof(key)),
			    "parse_line: trailing comment line gives the same key as argv");

		strcpy(line, "\tudp\t198.51.100.1:53  \t203.0.113.7:4000\r\n");
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: tabs and CRLF ending ok");
		ASSERT_TRUE(!memcmp(&key, &k2, sizeof(key)),
			    "parse_line: tabs and CRLF line gives the same key as argv");

		strcpy(line, "udp 198.51.100.1:53 203.0.113.7:4000 extra");
		err[0] = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), -1,
			  "parse_line: rejects a word after the FLOW");
		ASSERT_TRUE(err[0] != 0, "parse_line: word after the FLOW has an error message");

		strcpy(line, "src 198.51.100.7 dst 2001:db8::5");
		err[0] = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), -1,
			  "parse_line: rejects two FLOWs on one line");

		strcpy(line, "udp 198.51.100.1:53 203.0.113.7:65536");
		err[0] = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), -1,
			  "parse_line: rejects a bad FLOW");
		ASSERT_TRUE(err[0] != 0, "parse_line: bad FLOW has an error message");

		strcpy(line, "a b c d e f g h i");
		err[0] = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), -1,
			  "parse_line: rejects more than 8 words");
		ASSERT_TRUE(err[0] != 0, "parse_line: too many words has an error message");
	}
}

/* ---------------------------------------------------------------------- */
/* Logic both sides share (include/flowbloom/prefix.h, geometry.h, key.h,  */
/* maps.h): the XDP program and the CLI call these very functions, so     */
/* here they are checked against references written independently.       */

/* The rule the CLI parser builds for ADDR/plen, byte by byte as flow.c
 * masks it: the stored key that the program's probe must equal. */
static void ref_prefix_rule(struct fb_key *r, __u32 kind, const __u8 a[16], int plen, __u8 fam)
{
	__u8 *out = kind == FB_KIND_DST ? r->daddr : r->saddr;
	int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < 16; i++) {
		int keep = plen - 8 * i;

		out[i] = keep <= 0 ? 0 : keep < 8 ? a[i] & (__u8)(0xff << (8 - keep)) : a[i];
	}
	r->kind = kind;
	r->plen = plen;
	r->family = fam;
}

static void test_shared_logic(void)
{
	static const __u8 v4m[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 51, 100, 7 };
	__u64 seed = 13, pos[FB_MAX_K];
	unsigned n, bad_key = 0, bad_set = 0, bad_has = 0, bad_bit = 0, bad_lpm = 0;
	__u8 a[16];
	int i;

	/* The length list: by kind and family, never by the address. */
	ASSERT_EQ(fb_prefix_list(FB_KIND_SRC, FB_FAMILY_IPV4), FB_PFX_SRC4, "list: src v4");
	ASSERT_EQ(fb_prefix_list(FB_KIND_SRC, FB_FAMILY_IPV6), FB_PFX_SRC6, "list: src v6");
	ASSERT_EQ(fb_prefix_list(FB_KIND_DST, FB_FAMILY_IPV4), FB_PFX_DST4, "list: dst v4");
	ASSERT_EQ(fb_prefix_list(FB_KIND_DST, FB_FAMILY_IPV6), FB_PFX_DST6, "list: dst v6");
	ASSERT_EQ(fb_prefix_list(FB_KIND_FLOW, FB_FAMILY_IPV4), -1, "list: 5-tuples have none");
	for (i = 0; i < FB_PFX_NR; i++)
		ASSERT_EQ(fb_prefix_list(i >= FB_PFX_DST4 ? FB_KIND_DST : FB_KIND_SRC,
					 fb_prefix_list_family(i)),
			  i, "list: fb_prefix_list_family inverts fb_prefix_list");

	/* v4-mapped: exactly ::ffff:0:0/96. */
	ASSERT_TRUE(fb_addr_v4mapped(v4m), "v4mapped: ::ffff:198.51.100.7");
	memcpy(a, v4m, 16);
	a[9] = 1;
	ASSERT_TRUE(!fb_addr_v4mapped(a), "v4mapped: ::1:ffff:c633:6407 is not");
	memcpy(a, v4m, 16);
	a[11] = 0xfe;
	ASSERT_TRUE(!fb_addr_v4mapped(a), "v4mapped: ::fffe:c633:6407 is not");
	memset(a, 0, 16);
	ASSERT_TRUE(!fb_addr_v4mapped(a), "v4mapped: :: is not");

	for (n = 0; n < 20000; n++) {
		__u32 kind = n & 1 ? FB_KIND_DST : FB_KIND_SRC, k = 1 + n % FB_MAX_K, j;
		__u8 fam = n & 2 ? FB_FAMILY_IPV6 : FB_FAMILY_IPV4;
		int plen = n % 129;
		struct fb_key pkt = { 0 }, ref, got;
		struct fb_block blk = { 0 }, want = { 0 };
		struct fb_lpm_key l1, l2;
		__u64 h = splitmix64(&seed), w0, w1;

		for (i = 0; i < 16; i += 8) {
			__u64 r = splitmix64(&seed);

			memcpy(a + i, &r, 8);
		}
		/* The probe key of a packet's address at plen (what the program
		 * builds in registers) is the rule the CLI stores. */
		memcpy(kind == FB_KIND_DST ? pkt.daddr : pkt.saddr, a, 16);
		pkt.family = fam;
		w0 = pkt.w[kind == FB_KIND_DST ? 2 : 0];
		w1 = pkt.w[kind == FB_KIND_DST ? 3 : 1];
		fb_prefix_key(&got, kind, w0, w1, plen, fb_key_word_family(pkt.w[4]));
		ref_prefix_rule(&ref, kind, a, plen, fam);
		bad_key += memcmp(&got, &ref, sizeof(got)) != 0;

		/* Blocked set and test against the positions, one by one. */
		fb_block_set(&blk, h, k);
		fb_positions(h, FB_LAYOUT_BLOCKED, 1, k, pos); /* one block: positions 0..511 */
		for (j = 0; j < k; j++)
			want.w[pos[j] / 64] |= 1ULL << (pos[j] % 64);
		bad_set += memcmp(&blk, &want, sizeof(blk)) != 0;
		bad_has += !fb_block_has(&blk, h, k);
		want.w[pos[n % k] / 64] &= ~(1ULL << (pos[n % k] % 64));
		bad_has += fb_block_has(&want, h, k);

		/* Classic bits: set then test, and only that bit. */
		memset(&blk, 0, sizeof(blk));
		fb_block_set_bit(&blk, h % FB_BLOCK_BITS);
		bad_bit += !fb_block_test_bit(&blk, h % FB_BLOCK_BITS + (__u64)FB_BLOCK_BITS * n) ||
			   fb_block_test_bit(&blk, (h + 1) % FB_BLOCK_BITS) ||
			   __builtin_popcountll(blk.w[h % FB_BLOCK_BITS / 64]) != 1;

		/* The trie key: the rule's address of its direction. */
		fb_lpm_key_of(&l1, &ref, kind, plen);
		fb_lpm_key_set(&l2, fam, kind == FB_KIND_DST ? ref.daddr : ref.saddr, plen);
		bad_lpm += memcmp(&l1, &l2, sizeof(l1)) != 0;
	}
	ASSERT_EQ(fb_prefix_list_written(FB_PFX_SRC4, 96 + 24), 24, "list: IPv4 /24 as written");
	ASSERT_EQ(fb_prefix_list_written(FB_PFX_DST6, 48), 48, "list: IPv6 /48 as written");

	/* Protocols: the header the XDP parser reads ports from (proto.h) and
	 * the CLI's FLOW parser agree on which protocols have ports, and the
	 * CLI refuses exactly the IPv6 extension headers the parser walks. */
	{
		unsigned bad_ports = 0, bad_ext = 0, p;
		char pr[8], e[160];

		for (p = 0; p < 256; p++) {
			char *v6[3] = { pr, "[2001:db8::1]:1", "[2001:db8::2]:2" };
			char *v6np[3] = { pr, "2001:db8::1", "2001:db8::2" };
			struct fb_key key;
			int ports = p == 6 || p == 17 || p == 132 || p == 136;
			int ext = p == 0 || p == 43 || p == 44 || p == 51 || p == 60;

			snprintf(pr, sizeof(pr), "%u", p);
			bad_ports += fb_proto_has_ports((int)p) != ports ||
				     (fb_proto_ports_hdr((__u8)p) != 0) != ports;
			bad_ext += fb_proto_ipv6_ext((int)p) != ext;
			/* The CLI parser: ports given parse only for protocols with
			 * ports, none given only for the others; extension headers
			 * never parse as an IPv6 FLOW. */
			bad_ports +=
				(fb_flow_parse(3, v6, &key, e, sizeof(e)) == 3) != (ports && !ext);
			bad_ext += (fb_flow_parse(3, v6np, &key, e, sizeof(e)) == 3) !=
				   (!ports && !ext);
		}
		ASSERT_EQ(bad_ports, 0,
			  "proto: TCP, UDP, SCTP, UDP-Lite carry ports, on both sides");
		ASSERT_EQ(bad_ext, 0,
			  "proto: IPv6 extension headers 0, 43, 44, 51, 60, on both sides");
		ASSERT_EQ(fb_proto_ports_hdr(6), 20,
			  "proto: TCP ports need the fixed 20-byte header");
		ASSERT_EQ(fb_proto_ports_hdr(132), 12,
			  "proto: SCTP ports need the 12-byte common header");
	}

	ASSERT_EQ(bad_key, 0, "fb_prefix_key: the probe at each length is the rule as parsed");
	ASSERT_EQ(bad_set, 0, "fb_block_set: sets the k positions fb_positions names");
	ASSERT_EQ(bad_has, 0, "fb_block_has: all k bits, and not one fewer");
	ASSERT_EQ(bad_bit, 0, "fb_block_set_bit/test_bit: one bit, the one asked");
	ASSERT_EQ(bad_lpm, 0, "fb_lpm_key_of: the address of the rule's direction");
}

int main(void)
{
	test_sizing();
	test_siphash_vectors();
	test_hash_key();
	test_geometry();
	test_flow_parse();
	test_shared_logic();
	return test_summary();
}
