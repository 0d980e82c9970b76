/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Prefix rules, one definition for both sides: which length list a rule or
 * a packet's address uses, the masks, and the key probed at each length.
 * The XDP program (bpf/flowbloom.bpf.c) probes a packet's addresses with
 * these, the CLI stores rules and answers queries with the same, so a rule
 * and the packets it covers hash the same key by construction.
 *
 * Prefix lengths (Dharmapurikar, Krishnamurthy, Taylor 2003: longest prefix
 * match with Bloom filters): a source or destination rule is stored as the
 * key (address masked to plen, plen, kind), and the data path probes the
 * packet's masked address once per length the filter holds for that
 * direction and family (one probe descriptor each, include/flowbloom/
 * head.h). At most FB_MAX_LENGTHS lengths per list bound the probes per
 * packet; `flowbloom load` expands rarer lengths into longer ones to fit.
 */
#ifndef FLOWBLOOM_PREFIX_H
#define FLOWBLOOM_PREFIX_H

#include <linux/types.h>
#include "hash.h"
#include "key.h"

/* A miss pays one probe per length: at most 4 per list, a choice of cost
 * (`load` expands rarer lengths into longer ones to fit; rules/prefixes.c).
 * The table keeps room for 8, its layout in exports since 8 were allowed;
 * a table of more than FB_MAX_LENGTHS is refused where it is read. */
#define FB_MAX_LENGTHS 4
#define FB_LENGTH_SLOTS 8

/* One list of lengths; block 1 of a filter holds FB_PFX_NR of them
 * (struct fb_prefixes, geometry.h). */
struct fb_lengths {
	__u8 n;			   /* lengths in use */
	__u8 len[FB_LENGTH_SLOTS]; /* 128-bit-space lengths, in the order added */
};

enum fb_prefix_list {
	FB_PFX_SRC4 = 0,
	FB_PFX_SRC6,
	FB_PFX_DST4,
	FB_PFX_DST6,
	FB_PFX_NR,
};

_Static_assert(FB_PFX_SRC6 == FB_PFX_SRC4 + 1 && FB_PFX_DST6 == FB_PFX_DST4 + 1,
	       "a direction's IPv6 list follows its IPv4 list (fb_prefix_list)");

/* The list of a rule kind and family: by the family (from the IP header
 * on the data path, from how the rule was written in the CLI), never by
 * the address: an IPv6 prefix inside ::ffff:0:0/96 stays an IPv6 rule and
 * an IPv6 packet from ::ffff:a.b.c.d meets IPv6 rules. -1 for 5-tuples. */
static __always_inline int fb_prefix_list(__u32 kind, __u8 family)
{
	if (kind != FB_KIND_SRC && kind != FB_KIND_DST)
		return -1;
	/* Without a branch on the family: the verifier would otherwise walk
	 * every probe after it twice (+50 % processed instructions). */
	return (kind == FB_KIND_DST ? FB_PFX_DST4 : FB_PFX_SRC4) + (family == FB_FAMILY_IPV6);
}

/* The family of list l (IPv4 lists count lengths from 96, ::ffff:0:0/96). */
static __always_inline __u8 fb_prefix_list_family(int l)
{
	return l == FB_PFX_SRC4 || l == FB_PFX_DST4 ? FB_FAMILY_IPV4 : FB_FAMILY_IPV6;
}

/* Length len of list l as an operator writes it: IPv4 lists hold 96 + n
 * for a.b.c.d/n. */
static __always_inline int fb_prefix_list_written(int l, int len)
{
	return fb_prefix_list_family(l) == FB_FAMILY_IPV4 ? len - 96 : len;
}

/* Address words (w[0..1] or w[2..3]) masked to a prefix of plen bits of
 * the 128-bit address. Addresses are big-endian in memory, so the mask is
 * built in host order and byte-swapped. */
static inline __u64 fb_prefix_mask(int plen, int word)
{
	int bits = plen - 64 * word;
	__u64 m;

	if (bits <= 0)
		return 0;
	if (bits >= 64)
		return ~0ULL;
	m = ~0ULL << (64 - bits);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return m;
#else
	return __builtin_bswap64(m);
#endif
}

/* The key a rule of kind (FB_KIND_SRC or FB_KIND_DST) for the address in
 * words (a0, a1) masked to plen is stored and probed as: the other
 * address, ports and protocol zero. famw: the family as it sits in word 4
 * (fb_key_word_family()), so the data path builds the key in registers. */
static __always_inline void fb_prefix_key(struct fb_key *k, __u32 kind, __u64 a0, __u64 a1,
					  __u8 plen, __u64 famw)
{
	__u64 m0 = a0 & fb_prefix_mask(plen, 0), m1 = a1 & fb_prefix_mask(plen, 1);
	int dst = kind == FB_KIND_DST;

	k->w[0] = dst ? 0 : m0;
	k->w[1] = dst ? 0 : m1;
	k->w[2] = dst ? m0 : 0;
	k->w[3] = dst ? m1 : 0;
	k->w[4] = fb_key_word_tail(0, 0, 0, kind, plen, 0) | famw;
}

#endif
