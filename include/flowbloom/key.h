/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The flow key: what the XDP program extracts from a packet and what the CLI
 * builds from a FLOW argument. One layout for IPv4 and IPv6 (IPv4 addresses
 * are stored v4-mapped, ::ffff:a.b.c.d), so one hash and one filter serve
 * both families. The family itself is a field of the key, taken from the IP
 * header (data path) or from how a rule was written (CLI), never guessed
 * from the address: an IPv6 packet may carry ::ffff:a.b.c.d addresses, and
 * it must meet IPv6 rules and never an IPv4 rule's bits. The key is hashed
 * as five little-endian 64-bit words, so its size and padding are fixed
 * here and asserted.
 */
#ifndef FLOWBLOOM_KEY_H
#define FLOWBLOOM_KEY_H

#include <linux/types.h>

/* Rule kinds. The kind is part of the hashed key, so a source-address rule
 * and a 5-tuple rule never share bits by construction. */
enum fb_kind {
	FB_KIND_FLOW = 1, /* full 5-tuple */
	FB_KIND_SRC = 2,  /* source address only */
	FB_KIND_DST = 3,  /* destination address only */
	FB_KIND_MASK = 4, /* any other combination of fields (mask.h) */
	FB_KIND_MAX = 5,
};

#define FB_KINDF(kind) (1U << (kind))

/* Address families. IPv4 is 0 so that IPv4 keys hash as they did before
 * the family had a byte of its own. */
enum fb_family {
	FB_FAMILY_IPV4 = 0,
	FB_FAMILY_IPV6 = 1,
};

/*
 * The data path writes the key one whole 64-bit word at a time (w[]): the
 * hash reads it as words, and a word load that has to gather several
 * narrower stores still in flight stalls (failed store-to-load forwarding
 * cost ~30 ns per packet before the parser was written this way).
 */
struct fb_key {
	union {
		struct {
			__u8 saddr[16]; /* IPv6, or IPv4 as ::ffff:a.b.c.d */
			__u8 daddr[16];
			__be16 sport; /* network byte order; 0 when no ports */
			__be16 dport;
			__u8 proto;  /* IP protocol (IPv6: the upper-layer header) */
			__u8 kind;   /* enum fb_kind */
			__u8 plen;   /* src/dst rules: prefix length in the 128-bit
				     * space (IPv4 /n is 96+n; an address is 128);
				     * mask rules: FB_MASKF_* (mask.h) */
			__u8 family; /* enum fb_family */
		};
		__u64 w[5];
	};
};

_Static_assert(sizeof(struct fb_key) == 40, "fb_key is hashed as five 64-bit words");

/* Is the address (16 bytes, network order) in ::ffff:0:0/96, the form
 * IPv4 addresses take in the key? Says nothing about a packet's family
 * (see struct fb_key): only for reading and printing addresses. The one
 * test, for the CLI's parser and printers and the tests alike. */
static inline int fb_addr_v4mapped(const __u8 a[16])
{
	int i;

	for (i = 0; i < 10; i++)
		if (a[i])
			return 0;
	return a[10] == 0xff && a[11] == 0xff;
}

/* Words of the key built in registers, for either byte order. */
static inline __u64 fb_key_word_v4mapped(__be32 addr)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return 0xffff00000000ULL | addr;
#else
	return 0xffff0000ULL | (__u64)addr << 32;
#endif
}

/* Two 32-bit halves in memory order. */
static inline __u64 fb_key_word_pair(__u32 first, __u32 second)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (__u64)first << 32 | second;
#else
	return (__u64)second << 32 | first;
#endif
}

/* Word 4: ports, protocol, kind, prefix length, family. */
static inline __u64 fb_key_word_tail(__be16 sport, __be16 dport, __u8 proto, __u8 kind, __u8 plen,
				     __u8 family)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (__u64)sport << 48 | (__u64)dport << 32 | (__u64)proto << 24 | (__u64)kind << 16 |
	       (__u64)plen << 8 | family;
#else
	return (__u64)sport | (__u64)dport << 16 | (__u64)proto << 32 | (__u64)kind << 40 |
	       (__u64)plen << 48 | (__u64)family << 56;
#endif
}

/* Word 4 with everything but the family cleared (or: the family of a key
 * already in word 4), for building probes in registers. */
static inline __u64 fb_key_word_family(__u64 w4)
{
	return w4 & fb_key_word_tail(0, 0, 0, 0, 0, 0xff);
}

#endif
