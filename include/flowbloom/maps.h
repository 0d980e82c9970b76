/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Map layouts and value structs shared by the XDP program and the CLI:
 * names that `ip link` pins by, flags that inner maps must carry to be
 * swapped into the outer map, the per-CPU statistics record, and the trace
 * record `replay --explain` reads.
 */
#ifndef FLOWBLOOM_MAPS_H
#define FLOWBLOOM_MAPS_H

#include <linux/types.h>
#include "geometry.h"
#include "key.h"

/* Flags of every filter array (the inner map). BPF_F_INNER_MAP lets inner
 * maps of any size sit in one outer map; BPF_F_MMAPABLE lets the CLI fill
 * them through mmap instead of a syscall per word. Numeric values from
 * <linux/bpf.h>, spelled out so both sides agree without extra includes. */
#define FB_INNER_MAP_FLAGS ((1U << 12) /* BPF_F_INNER_MAP */ | (1U << 10) /* BPF_F_MMAPABLE */)

/* Map names: also the file names `ip link` pins by (LIBBPF_PIN_BY_NAME). */
#define FB_MAP_FILTER "fb_filter"
#define FB_MAP_STATS "fb_stats"

/* Where `ip link` (iproute2's libbpf loader) pins and looks for them. */
#define FB_IPROUTE_PIN_DIR "/sys/fs/bpf/xdp/globals"
/* The filter an `ip link`-loaded object works on. */
#define FB_IPROUTE_FILTER "default"

enum fb_stat {
	FB_STAT_SEEN = 0,  /* every packet */
	FB_STAT_MATCHED,   /* the filter said "maybe" for some rule kind */
	FB_STAT_DROPPED,   /* verdict XDP_DROP */
	FB_STAT_PASSED,	   /* verdict XDP_PASS */
	FB_STAT_NONIP,	   /* not IPv4/IPv6 (ARP, LLDP, ...): passed */
	FB_STAT_FRAGMENT,  /* non-first IP fragments (key has port 0) */
	FB_STAT_MALFORMED, /* truncated or invalid headers */
	FB_STAT_HIT_FLOW,  /* matches by kind */
	FB_STAT_HIT_SRC,
	FB_STAT_HIT_DST,
	FB_STAT_NOFILTER,    /* no filter in the outer map: passed */
	FB_STAT_UNCONFIRMED, /* Bloom hits the exact sets refused (false positives) */
	FB_STAT_HIT_MASK,    /* matches of the other rule shapes (mask.h) */
	FB_STAT_NR,
};

#define FB_STAT_SLOTS 16 /* room for later counters without a layout change */
_Static_assert(FB_STAT_NR <= FB_STAT_SLOTS, "stat slots");

struct fb_counter {
	__u64 packets;
	__u64 bytes;
};

struct fb_stats {
	struct fb_counter c[FB_STAT_SLOTS];
};

/*
 * Exact confirmation (create --confirm exact): a Bloom hit is checked
 * against an exact set before it counts, a hash map of 5-tuples and an LPM
 * trie per direction for address rules. Values count how often the rule
 * was added (deletes of counting filters). Each outer ARRAY_OF_MAPS has a
 * slot per generation (header gen), so `load --replace` fills the other
 * generation aside and the filter swap switches both at once.
 */
#define FB_MAP_EXACT "fb_exact" /* slot gen: hash, key struct fb_key */
#define FB_MAP_LPM "fb_lpm"	/* slot gen * 2 + (dst ? 1 : 0): LPM trie */

/* The family leads the trie's data, so an IPv4 rule (::ffff:a.b.c.d/96+n)
 * and an IPv6 rule over the same bits never confirm each other's hits. */
struct fb_lpm_key {
	__u32 prefixlen; /* 8 (the family) + 0..128 (the address, 128-bit space) */
	__u8 family;	 /* enum fb_family */
	__u8 addr[16];
	__u8 pad[3]; /* never compared: beyond any prefixlen */
};

/* One definition for both sides: the CLI's inserts and the program's
 * lookups (plen 128). */
static inline void fb_lpm_key_set(struct fb_lpm_key *lk, __u8 family, const __u8 addr[16], int plen)
{
	lk->prefixlen = 8 + plen;
	lk->family = family;
	__builtin_memcpy(lk->addr, addr, 16);
	lk->pad[0] = lk->pad[1] = lk->pad[2] = 0;
}

/* The trie key of key's address of kind (FB_KIND_SRC: the source, else
 * the destination) at plen: the CLI inserts a rule at its own length, the
 * program looks a packet's whole address up (128). */
static inline void fb_lpm_key_of(struct fb_lpm_key *lk, const struct fb_key *key, __u32 kind,
				 int plen)
{
	fb_lpm_key_set(lk, key->family, kind == FB_KIND_DST ? key->daddr : key->saddr, plen);
}

/* What a malformed packet that no address rule decides gets. Zero is what
 * an `ip link`-loaded object keeps: the safe default. */
enum fb_malformed {
	FB_MALFORMED_DEFAULT = 0, /* drop, unless the action is monitor */
	FB_MALFORMED_PASS = 1,
	FB_MALFORMED_DROP = 2,
};

/* action: enum fb_action in force. */
static inline int fb_malformed_drop(__u8 policy, __u8 action)
{
	if (policy != FB_MALFORMED_DEFAULT)
		return policy == FB_MALFORMED_DROP;
	return action == FB_ACTION_DROP || action == FB_ACTION_ALLOW;
}

/* Parse outcome, as the trace record reports it. */
enum fb_parse {
	FB_PARSE_OK = 0,
	FB_PARSE_NONIP = 1,
	FB_PARSE_MALFORMED = 2,
};

/* What the program decided about the last packet (replay --explain only). */
struct fb_trace {
	struct fb_key key;
	__u32 parse;	/* enum fb_parse */
	__u32 fragment; /* 1: non-first fragment */
	__u32 kind;	/* enum fb_kind that matched, 0: none */
	__u32 verdict;	/* XDP_* */
	__u32 mask;	/* FB_KIND_MASK: the descriptor of the shape that matched */
	__u32 pad;
};

#endif
