/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rule lifetimes: time generations, shared by the XDP program and the CLI.
 *
 * Rules added with a lifetime (add --ttl) live in generations: each a
 * filter of its own (a head whose header is a copy of the filter's:
 * layout, hash, key; its own size and k, sized for the rules it is
 * expected to hold (user/lib/rules/lifetime.c); its own rule kinds,
 * prefix lengths, shapes, probe table and bits), with one expiry, in
 * chunks held by the same outer map as the filter itself (geometry.h,
 * "Physical layout"). Generation g of set s
 * has the slot range fb_gen_range(s, g), which its header's gen names; its
 * head is its range's chunk 0. The set in use is the filter header's gen
 * bit, which `load --replace` flips with the head it installs in slot 0: a
 * replace fills the other set aside and its one switch of slot 0 switches
 * the generations with it.
 *
 * The data path probes the filter, then, only if the filter's header has
 * generations (gens != 0), each generation whose expiry (in jiffies,
 * bpf_jiffies64()) is still ahead, through the same descriptor loop. A
 * filter without lifetimes pays one test of a header word it has already
 * loaded.
 *
 * A rule with lifetime T expiring at E joins a generation expiring in
 * [E, E + T / FB_GEN_DIV], so it matches until E and stops matching by
 * E + T / FB_GEN_DIV: time wheels with a relative precision, after the
 * timing-wheel idea of Varghese and Lauck (1987), but with no cascading
 * (a Bloom filter cannot move its rules): a later generation is started
 * instead.
 */
#ifndef FLOWBLOOM_TTL_H
#define FLOWBLOOM_TTL_H

#include <linux/types.h>

/* Generation slots per set; the header's gens mask has a bit for each. */
#define FB_GEN_SLOTS 16
/* Relative precision: a rule stops matching at most TTL / FB_GEN_DIV late. */
#define FB_GEN_DIV 4
/* Chunks of one generation at most (32 MiB): however many rules it is
 * sized for, a generation has at most this many, so the outer map's slots
 * for all 32 stay a small multiple of the filter's own. */
#define FB_GEN_MAX_CHUNKS 128

/* The slot range (geometry.h, fb_gen_chunk_slot()) of generation g
 * (0..FB_GEN_SLOTS-1) of set (the filter header's gen bit): after the
 * filter's own two. */
static __always_inline __u32 fb_gen_range(__u32 set, __u32 g)
{
	return 2 + (set & 1) * FB_GEN_SLOTS + (g & (FB_GEN_SLOTS - 1));
}

#endif
