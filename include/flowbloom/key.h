/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The flow key: what the XDP program extracts from a packet and what the CLI
 * builds from a FLOW argument. One layout for IPv4 and IPv6 (IPv4 addresses
 * are stored v4-mapped, ::ffff:a.b.c.d), so one hash and one filter serve
 * both families. The key is hashed as five little-endian 64-bit words, so
 * its size and padding are fixed here and asserted.
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
	FB_KIND_MAX = 4,
};

#define FB_KINDF(kind) (1U << (kind))

struct fb_key {
	__u8 saddr[16]; /* IPv6, or IPv4 as ::ffff:a.b.c.d */
	__u8 daddr[16];
	__be16 sport; /* network byte order; 0 when the protocol has no ports */
	__be16 dport;
	__u8 proto; /* IP protocol number (IPv6: the upper-layer next header) */
	__u8 kind;  /* enum fb_kind */
	__u8 plen;  /* prefix length for prefix rules; 0 = whole address */
	__u8 pad;   /* always 0 */
};

_Static_assert(sizeof(struct fb_key) == 40, "fb_key is hashed as five 64-bit words");

#endif
