/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The keyed hash, compiled into both the XDP program and the CLI.
 *
 * SipHash (Aumasson and Bernstein, 2012) with a 128-bit secret key drawn by
 * `flowbloom create` from getrandom(). A keyed PRF means an attacker who
 * does not know the key cannot choose flows that collide in the filter
 * (Gerbet et al., DSN 2015, "The power of evil choices in Bloom filters").
 * SipHash-1-3 is the default (9 rounds for a 40-byte key); SipHash-2-4 is
 * available for those who want the paper's conservative parameters.
 *
 * FB_HASH_NHK ("nh", the default for block-lists and monitoring) is the
 * fast one: NH, the universal hash of UMAC (Black, Halevi, Krawczyk,
 * Krovetz, Rogaway 1999), over the key's ten 32-bit halves, then murmur3's
 * fmix64 (a public bijection) to spread the sum over all 64 bits. Its five
 * 64-bit key words are SipHash-1-3 of their index under the filter's
 * secret (fb_nhk_words), so they are as good as independent and uniform
 * (a PRF), which is what NH's bound needs: two distinct flows chosen
 * without the key collide with probability at most 2^-32. Five independent
 * multiplies instead of 9 SipHash rounds. It is universal, not a PRF: an
 * attacker who watches many verdicts may learn relations between key
 * words, so allow-lists default to SipHash-1-3 (docs/design.md, "Choosing the
 * hash"). User space derives the words: once per secret and thread to
 * hash (fb_nhk_cached), and into the head of a filter's array (head.h,
 * fb_head_keys and the probe descriptors), which is what the data path
 * reads: it never derives them.
 *
 * FB_HASH_NH ("nh-v1") is the same NH with its key words derived linearly
 * from the secret (key0 * c_i + key1). That breaks NH's proof (the words
 * are not independent); it is kept so that filters made with it still
 * probe the bits they set, and is no longer offered to create.
 *
 * Words are read little-endian as the specification says, so a filter built
 * on one host probes the same bits on any other.
 */
#ifndef FLOWBLOOM_HASH_H
#define FLOWBLOOM_HASH_H

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

enum fb_hash_alg {
	FB_HASH_SIPHASH13 = 1,
	FB_HASH_SIPHASH24 = 2,
	FB_HASH_NH = 3,	 /* "nh-v1": key words derived linearly (kept for old filters) */
	FB_HASH_NHK = 4, /* "nh": key words from SipHash-1-3 of the secret */
};

#define FB_NHK_WORDS 5

/* NH's key words for a filter secret, with the secret they came from:
 * user space's per-thread cache (fb_nhk_cached). */
struct fb_hkey {
	__u64 valid; /* 1 once kw holds the words of key */
	__u64 key[2];
	__u64 kw[FB_NHK_WORDS];
};

static __always_inline __u64 fb_rotl64(__u64 x, int b)
{
	/* BPF has no rotate instruction: this costs three ALU ops there. */
	return (x << b) | (x >> (64 - b));
}

static __always_inline __u64 fb_le64(__u64 x)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(x);
#else
	return x;
#endif
}

#define FB_SIPROUND(v0, v1, v2, v3)                                                                \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = fb_rotl64(v1, 13);                                                            \
		v1 ^= v0;                                                                          \
		v0 = fb_rotl64(v0, 32);                                                            \
		v2 += v3;                                                                          \
		v3 = fb_rotl64(v3, 16);                                                            \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = fb_rotl64(v3, 21);                                                            \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = fb_rotl64(v1, 17);                                                            \
		v1 ^= v2;                                                                          \
		v2 = fb_rotl64(v2, 32);                                                            \
	} while (0)

/*
 * SipHash-c-d of len bytes. Always inlined with constant c, d (and, on the
 * data path, constant len) so the compiler unrolls every loop: the BPF
 * verifier then sees straight-line code.
 */
static __always_inline __u64 fb_siphash(const void *data, __u32 len, const __u64 key[2], int c,
					int d)
{
	const unsigned char *p = (const unsigned char *)data;
	__u64 k0 = key[0], k1 = key[1];
	__u64 v0 = k0 ^ 0x736f6d6570736575ULL;
	__u64 v1 = k1 ^ 0x646f72616e646f6dULL;
	__u64 v2 = k0 ^ 0x6c7967656e657261ULL;
	__u64 v3 = k1 ^ 0x7465646279746573ULL;
	__u32 words = len / 8, i;
	__u64 m, b = (__u64)len << 56;
	int r;

	for (i = 0; i < words; i++) {
		__builtin_memcpy(&m, p + 8 * i, 8);
		m = fb_le64(m);
		v3 ^= m;
		for (r = 0; r < c; r++)
			FB_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	p += 8 * words;
	switch (len & 7) {
	case 7:
		b |= (__u64)p[6] << 48;
		/* fallthrough */
	case 6:
		b |= (__u64)p[5] << 40;
		/* fallthrough */
	case 5:
		b |= (__u64)p[4] << 32;
		/* fallthrough */
	case 4:
		b |= (__u64)p[3] << 24;
		/* fallthrough */
	case 3:
		b |= (__u64)p[2] << 16;
		/* fallthrough */
	case 2:
		b |= (__u64)p[1] << 8;
		/* fallthrough */
	case 1:
		b |= (__u64)p[0];
		break;
	case 0:
		break;
	}
	v3 ^= b;
	for (r = 0; r < c; r++)
		FB_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (r = 0; r < d; r++)
		FB_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* Eight odd 64-bit multipliers (splitmix64's, murmur3's, and one of
 * xorshift*'s), one table for every use: NH's key words, d-left's
 * permutations (dleft.h). */
static __always_inline __u64 fb_odd64(int i)
{
	switch (i & 7) {
	case 0:
		return 0x9e3779b97f4a7c15ULL;
	case 1:
		return 0xbf58476d1ce4e5b9ULL;
	case 2:
		return 0x94d049bb133111ebULL;
	case 3:
		return 0xd6e8feb86659fd93ULL;
	case 4:
		return 0xc2b2ae3d27d4eb4fULL;
	case 5:
		return 0xff51afd7ed558ccdULL;
	case 6:
		return 0xc4ceb9fe1a85ec53ULL;
	default:
		return 0x2545f4914f6cdd1dULL;
	}
}

/* NH's key word for word i (0..4) of the flow key, from the secret. */
static __always_inline __u64 fb_nh_key_word(const __u64 key[2], int i)
{
	return key[0] * fb_odd64(i) + key[1];
}

/* One NH step: message word m under key word k (its halves a pair). */
static __always_inline __u64 fb_nh_step(__u64 m, __u64 k)
{
	return (__u64)(__u32)((__u32)m + (__u32)k) * (__u32)((__u32)(m >> 32) + (__u32)(k >> 32));
}

/* murmur3's 64-bit finaliser: every input bit reaches every output bit. */
static __always_inline __u64 fb_fmix64(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* NH over five 64-bit words (each word's halves are NH's message pair),
 * then murmur3's fmix64. */
static __always_inline __u64 fb_nh(const void *key40, const __u64 key[2])
{
	const unsigned char *p = (const unsigned char *)key40;
	__u64 sum = 0, m;
	int i;

	for (i = 0; i < 5; i++) {
		__builtin_memcpy(&m, p + 8 * i, 8);
		m = fb_le64(m);
		sum += fb_nh_step(m, fb_nh_key_word(key, i));
	}
	return fb_fmix64(sum ^ key[1]);
}

/* NH with explicit key words: the sum before the finaliser. */
static __always_inline __u64 fb_nh_step_sum(const void *key40, const __u64 *kw)
{
	const unsigned char *p = (const unsigned char *)key40;
	__u64 sum = 0, m;
	int i;

	for (i = 0; i < FB_NHK_WORDS; i++) {
		__builtin_memcpy(&m, p + 8 * i, 8);
		sum += fb_nh_step(fb_le64(m), kw[i]);
	}
	return sum;
}

/* FB_HASH_NHK's key word i: SipHash-1-3 of the little-endian index, with
 * a domain tag so that no key word is the hash of a flow key. */
static __always_inline __u64 fb_nhk_word(const __u64 key[2], __u64 i)
{
	__u64 m = fb_le64(0x6e686b7700000000ULL | i); /* "nhkw" */

	return fb_siphash(&m, 8, key, 1, 3);
}

static __always_inline void fb_nhk_words(const __u64 key[2], __u64 *kw)
{
	int i;

	for (i = 0; i < FB_NHK_WORDS; i++)
		kw[i] = fb_nhk_word(key, i);
}

/* FB_HASH_NHK of a 40-byte flow key under its derived words. */
static __always_inline __u64 fb_nhk(const void *key40, const __u64 *kw)
{
	return fb_fmix64(fb_nh_step_sum(key40, kw));
}

/* The one hash of a flow key under a filter's algorithm and key; kw: the
 * FB_HASH_NHK words of key (the data path's per-CPU copy, or user space's
 * fb_nhk_cached), read only for that algorithm. */
static __always_inline __u64 fb_hash_with(const void *key40, __u8 alg, const __u64 key[2],
					  const __u64 *kw)
{
	if (alg == FB_HASH_NHK)
		return fb_nhk(key40, kw);
	if (alg == FB_HASH_NH)
		return fb_nh(key40, key);
	if (alg == FB_HASH_SIPHASH24)
		return fb_siphash(key40, 40, key, 2, 4);
	return fb_siphash(key40, 40, key, 1, 3);
}

#ifndef __bpf__
/* User space: the words of the last secret this thread hashed under. */
static inline const __u64 *fb_nhk_cached(const __u64 key[2])
{
	static __thread struct fb_hkey c;

	if (!c.valid || c.key[0] != key[0] || c.key[1] != key[1]) {
		fb_nhk_words(key, c.kw);
		c.key[0] = key[0];
		c.key[1] = key[1];
		c.valid = 1;
	}
	return c.kw;
}

/* fb_hash_with() in user space, the words from this thread's cache. */
static inline __u64 fb_hash_key(const void *key40, __u8 alg, const __u64 key[2])
{
	return fb_hash_with(key40, alg, key, alg == FB_HASH_NHK ? fb_nhk_cached(key) : 0);
}
#endif

#endif
