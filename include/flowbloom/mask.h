/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rule shapes (tuple space search: Srinivasan, Suri, Varghese 1999): a rule
 * fixes any combination of the flow key's fields, a "mask" (which fields,
 * and how many leading bits of each) plus the values under it. The filter
 * keeps the masks its rules use in a small table (block 1, struct
 * fb_prefixes), and the data path probes the Bloom filter once per mask
 * the table holds for the packet's family, the packet's key cut to that
 * mask: the per-length probes of prefix.h (Dharmapurikar et al. 2003)
 * generalised to every field.
 *
 * The three historical shapes keep their own kinds and keys (a 5-tuple:
 * FB_KIND_FLOW; a source or destination prefix alone: FB_KIND_SRC/DST);
 * every other shape is FB_KIND_MASK, and its mask is part of the hashed
 * key, so two rules of different masks never have the same key (set
 * algebra between filters stays sound: a key means one rule everywhere):
 *  - an address cut to L < 128 bits keeps a marker bit at position L (the
 *    first bit below the prefix): (a & mask(L)) | bit(L); a field not in
 *    the mask is L = 0, the marker alone. A port cut to L < 16 likewise.
 *  - a full-length field (address /128, port /16) has no room for the
 *    marker: a flag in the key's plen byte says so (FB_MASKF_*), as does
 *    "protocol fixed" (else the protocol byte is 0).
 * So the lengths are recoverable from the key alone: the key is an
 * injective function of (family, mask, values).
 *
 * A mask is a 28-bit descriptor; the table packs FB_MAX_MASKS of them into
 * the 28 bytes at the end of block 1. An all-zero descriptor (IPv4, nothing
 * fixed) is never a rule's mask, so it ends the table.
 */
#ifndef FLOWBLOOM_MASK_H
#define FLOWBLOOM_MASK_H

#include <linux/types.h>
#include "key.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Most masks (rule shapes) one filter holds, both families together: the
 * bound on the data path's extra probes per packet. */
#define FB_MAX_MASKS 8
#define FB_MASK_BITS 28
#define FB_MASK_TABLE_BYTES (FB_MAX_MASKS * FB_MASK_BITS / 8)

/* Descriptor fields. Address lengths are in the 128-bit space (an IPv4
 * /n is 96 + n); 0: the field is not in the mask. */
#define FB_MASK_SLEN(d) ((d)&0xff)
#define FB_MASK_DLEN(d) (((d) >> 8) & 0xff)
#define FB_MASK_SPLEN(d) (((d) >> 16) & 0x1f)
#define FB_MASK_DPLEN(d) (((d) >> 21) & 0x1f)
#define FB_MASK_PROTO(d) (((d) >> 26) & 1)
#define FB_MASK_FAMILY(d) (((d) >> 27) & 1)
#define FB_MASK_PORTS(d) ((d) & (0x3ffU << 16)) /* fixes a port */

static __always_inline __u32 fb_mask_desc(__u32 slen, __u32 dlen, __u32 splen, __u32 dplen,
					  __u32 proto, __u32 family)
{
	return (slen & 0xff) | (dlen & 0xff) << 8 | (splen & 0x1f) << 16 | (dplen & 0x1f) << 21 |
	       (proto & 1) << 26 | (family & 1) << 27;
}

/* Is d a descriptor a rule can have (lengths in range, the family's
 * address space, something besides the family fixed)? */
static inline int fb_mask_valid(__u32 d)
{
	__u32 s = FB_MASK_SLEN(d), t = FB_MASK_DLEN(d);

	if (d >> FB_MASK_BITS || s > 128 || t > 128 || FB_MASK_SPLEN(d) > 16 ||
	    FB_MASK_DPLEN(d) > 16)
		return 0;
	if (!FB_MASK_FAMILY(d) && ((s && s < 97) || (t && t < 97)))
		return 0; /* IPv4: /1../32 are 97..128; /0 is "not in the mask" */
	return (d & ~(1U << 27)) != 0;
}

/* Flags in the plen byte of a FB_KIND_MASK key. */
#define FB_MASKF_SFULL 1  /* source address /128: no marker */
#define FB_MASKF_DFULL 2  /* destination /128 */
#define FB_MASKF_SPFULL 4 /* source port /16 */
#define FB_MASKF_DPFULL 8 /* destination port /16 */
#define FB_MASKF_PROTO 16 /* protocol fixed */

/* Descriptor i of the packed table (28 bits at bit 28 * i, little-endian).
 * Byte by byte: the verifier and every host read it the same way. */
static __always_inline __u32 fb_mask_get(const __u8 *t, int i)
{
	int b = (7 * i) >> 1, s = (i & 1) * 4;
	__u32 v =
		(__u32)t[b] | (__u32)t[b + 1] << 8 | (__u32)t[b + 2] << 16 | (__u32)t[b + 3] << 24;

	return (v >> s) & ((1U << FB_MASK_BITS) - 1);
}

#ifndef __bpf__
/* Write descriptor i (user space, under the filter's lock). Its bytes are
 * written before a later descriptor can make them reachable; a data path
 * reading a half-written descriptor probes some other mask's key, which
 * no rule has yet: at most a false positive at the filter's rate. */
static inline void fb_mask_put(__u8 *t, int i, __u32 d)
{
	int b = (7 * i) >> 1, s = (i & 1) * 4, j;
	__u64 v = 0, keep = ~((__u64)((1U << FB_MASK_BITS) - 1) << s);

	for (j = 0; j < 4; j++)
		v |= (__u64)t[b + j] << (8 * j);
	v = (v & keep) | (__u64)d << s;
	for (j = 0; j < 4; j++)
		__atomic_store_n(&t[b + j], (__u8)(v >> (8 * j)), __ATOMIC_RELEASE);
}
#endif

/* Address word (0: bits 0..63, 1: 64..127; big-endian in memory, as the
 * key holds it) cut to len bits, with the marker bit at len (none at 128). */
static __always_inline __u64 fb_mask_addr_word(__u64 a, int len, int word)
{
	int bits = len - 64 * word;
	__u64 m, mk;

	if (bits >= 64)
		return a;
	if (bits < 0)
		return 0;
	m = bits ? ~0ULL << (64 - bits) : 0;
	mk = 1ULL << (63 - bits);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (a & m) | mk;
#else
	return (a & __builtin_bswap64(m)) | __builtin_bswap64(mk);
#endif
}

/* A port as the key holds it (network order) cut to len bits, marker at len. */
static __always_inline __u32 fb_mask_port(__u32 p, int len)
{
	__u32 m = (0xffff0000U >> len) & 0xffff, mk = 0x8000U >> len;

	if (len >= 16)
		return p;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (p & m) | mk;
#else
	return (p & __builtin_bswap16((__u16)m)) | __builtin_bswap16((__u16)mk);
#endif
}

/* Mask d as AND and OR words over a packet key's five words: the probed
 * key is (w[i] & and[i]) | or[i]. A packet key has kind FB_KIND_FLOW and
 * plen 0 in word 4; both bytes are replaced, the family byte kept. */
static __always_inline void fb_mask_andor(__u32 d, __u64 and_[5], __u64 or_[5])
{
	int sl = FB_MASK_SLEN(d), dl = FB_MASK_DLEN(d), spl = FB_MASK_SPLEN(d),
	    dpl = FB_MASK_DPLEN(d), i;
	__u32 fl = (sl == 128 ? FB_MASKF_SFULL : 0) | (dl == 128 ? FB_MASKF_DFULL : 0) |
		   (spl == 16 ? FB_MASKF_SPFULL : 0) | (dpl == 16 ? FB_MASKF_DPFULL : 0) |
		   (FB_MASK_PROTO(d) ? FB_MASKF_PROTO : 0);

	for (i = 0; i < 2; i++) {
		and_[i] = fb_mask_addr_word(~0ULL, sl, i) & ~fb_mask_addr_word(0, sl, i);
		or_[i] = fb_mask_addr_word(0, sl, i);
		and_[2 + i] = fb_mask_addr_word(~0ULL, dl, i) & ~fb_mask_addr_word(0, dl, i);
		or_[2 + i] = fb_mask_addr_word(0, dl, i);
	}
	and_[4] = fb_key_word_tail(fb_mask_port(0xffff, spl) & ~fb_mask_port(0, spl),
				   fb_mask_port(0xffff, dpl) & ~fb_mask_port(0, dpl),
				   FB_MASK_PROTO(d) ? 0xff : 0, 0, 0, 0xff);
	or_[4] = fb_key_word_tail(fb_mask_port(0, spl), fb_mask_port(0, dpl), 0, FB_KIND_MASK, fl,
				  0);
}

/* The key of mask d over the fields of p (a packet's key, or a rule's
 * values written as one): what a rule is stored as and what the data
 * path probes; the same as (p->w[i] & and[i]) | or[i] of fb_mask_andor()
 * (tests/unit checks it), in registers. The family is p's. */
static __always_inline void fb_mask_key(struct fb_key *k, const struct fb_key *p, __u32 d)
{
	int sl = FB_MASK_SLEN(d), dl = FB_MASK_DLEN(d), spl = FB_MASK_SPLEN(d),
	    dpl = FB_MASK_DPLEN(d);
	__u32 fl = (sl == 128 ? FB_MASKF_SFULL : 0) | (dl == 128 ? FB_MASKF_DFULL : 0) |
		   (spl == 16 ? FB_MASKF_SPFULL : 0) | (dpl == 16 ? FB_MASKF_DPFULL : 0) |
		   (FB_MASK_PROTO(d) ? FB_MASKF_PROTO : 0);
	__u64 w4 = fb_key_word_tail(fb_mask_port(p->sport, spl), fb_mask_port(p->dport, dpl),
				    FB_MASK_PROTO(d) ? p->proto : 0, FB_KIND_MASK, fl, p->family);

	k->w[0] = fb_mask_addr_word(p->w[0], sl, 0);
	k->w[1] = fb_mask_addr_word(p->w[1], sl, 1);
	k->w[2] = fb_mask_addr_word(p->w[2], dl, 0);
	k->w[3] = fb_mask_addr_word(p->w[3], dl, 1);
	k->w[4] = w4;
}

#endif
