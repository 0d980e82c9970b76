/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Proof-of-concept hashes for issue 10, compiled into BPF and user space.
 *
 * PH_ML2: two independent multilinear sums over the key's ten 32-bit
 * chunks, s = K[0] + sum K[i+1] * m_i (mod 2^64), taking the top 32 bits of
 * each (Lemire & Kaser 2018, "Strongly universal string hashing is fast":
 * the top half of a multilinear sum mod 2^64 is strongly universal).
 * Two independent halves give a 64-bit value whose collision probability
 * for two fixed distinct keys is 2^-64 over the key. No rotates: 20 64x32
 * multiplies, all independent.
 * Masking an address suffix only changes the terms of the masked chunks,
 * so every prefix length of an address reuses the sums of its unmasked
 * chunks (ph_prefix_*).
 */
#ifndef PERF_HASH_H
#define PERF_HASH_H

#include <linux/types.h>
#include "flowbloom/hash.h"

enum ph_alg {
	PH_SIP13 = 0,	  /* today's default */
	PH_NH = 1,	  /* today's --hash nh */
	PH_ML2_FMIX = 2,  /* ML2, then fmix64 on the 64-bit value */
	PH_ML2_RAW = 3,	  /* ML2's two top halves as is */
	PH_ML2_SIP1W = 4, /* ML2, then SipHash-1-3 of the one 64-bit word (hash-then-PRF) */
	PH_ML2_SHIFT = 5, /* ML2 sums whole: block from s1's top half, the 8 bit
			   * positions from 6-bit fields of s2's top 48 bits
			   * (shifts, no multiplies) */
	PH_NALG
};

#define PH_KEYWORDS 24 /* K[0..10] first sum, K[11..21] second, 2 spare */

/* 32-bit chunk i (0..9) of the 40-byte key, as the key's words hold it. */
static __always_inline __u64 ph_chunk(const __u64 *w, int i)
{
	return (__u32)(w[i / 2] >> (32 * (i & 1)));
}

static __always_inline __u64 ph_ml2(const __u64 *w, const __u64 *K)
{
	__u64 s1 = K[0], s2 = K[11];
	int i;

#pragma unroll
	for (i = 0; i < 10; i++) {
		__u64 m = ph_chunk(w, i);

		s1 += K[1 + i] * m;
		s2 += K[12 + i] * m;
	}
	return (s1 >> 32) << 32 | (s2 >> 32);
}

/* Both ML2 sums, whole. */
static __always_inline void ph_ml2_pair(const __u64 *w, const __u64 *K, __u64 *s1, __u64 *s2)
{
	__u64 a = K[0], b = K[11];
	int i;

#pragma unroll
	for (i = 0; i < 10; i++) {
		__u64 m = ph_chunk(w, i);

		a += K[1 + i] * m;
		b += K[12 + i] * m;
	}
	*s1 = a;
	*s2 = b;
}

/* PH_ML2_SHIFT's mask of word w: bit (s2 >> (16 + 6w)) & 63. */
static __always_inline __u64 ph_mask_shift(__u64 s2, int w)
{
	return 1ULL << ((s2 >> (16 + 6 * w)) & 63);
}

/* SipHash-1-3 of one 64-bit word (8-byte message). */
static __always_inline __u64 ph_sip_word(__u64 m, const __u64 key[2])
{
	return fb_siphash(&m, 8, key, 1, 3);
}

static __always_inline __u64 ph_hash(int alg, const __u64 *w, const __u64 *K, const __u64 sk[2])
{
	switch (alg) {
	case PH_NH:
		return fb_nh(w, sk);
	case PH_ML2_FMIX:
		return fb_fmix64(ph_ml2(w, K));
	case PH_ML2_RAW:
		return ph_ml2(w, K);
	case PH_ML2_SIP1W:
		return ph_sip_word(ph_ml2(w, K), sk);
	default:
		return fb_siphash(w, 40, sk, 1, 3);
	}
}

/* The 8 word masks of the blocked layout with k = 8 known at compile time. */
static __always_inline __u64 ph_mask8(__u32 lo, int word)
{
	return 1ULL << ((lo * fb_salt(word)) >> 26);
}

#endif
