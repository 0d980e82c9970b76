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

/* Flags of every chunk (the inner maps, geometry.h "Physical layout"):
 * BPF_F_MMAPABLE lets the CLI fill them through mmap instead of a syscall
 * per word. Not BPF_F_INNER_MAP: it would let chunks of any size in, and
 * turn every lookup into a helper call. Numeric value from <linux/bpf.h>,
 * spelled out so both sides agree without extra includes. */
#define FB_CHUNK_MAP_FLAGS (1U << 10) /* BPF_F_MMAPABLE */

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

/* The statistics as readers see them (fb_stats_fold()). */
struct fb_stats {
	struct fb_counter c[FB_STAT_SLOTS];
};

/*
 * What the data path keeps: one counter pair per packet outcome, so a
 * packet makes one update (two adds to one cache line), not one per
 * statistic it counts in (seen, matched, hit by kind, dropped: four).
 * The outcome is the verdict, the kind that matched (3 bits: room for
 * more kinds), whether it was a later fragment, and what the parser and
 * the filter made of it; every statistic is a sum of outcomes.
 */
enum fb_stat_cond {
	FB_COND_OK = 0,	   /* parsed, a filter decided */
	FB_COND_MALFORMED, /* truncated or invalid headers */
	FB_COND_NONIP,	   /* not IPv4/IPv6 */
	FB_COND_NOFILTER,  /* parsed, but no filter installed */
};

#define FB_STAT_OUTCOMES 128
#define FB_STAT_UNCONFIRMED_CELL FB_STAT_OUTCOMES /* and one more: refused Bloom hits */
/* Not a counter: the data path's per-packet scratch (bpf/flowbloom.bpf.c). */
#define FB_STAT_SCRATCH_CELL (FB_STAT_OUTCOMES + 1)
#define FB_STAT_CELLS (FB_STAT_OUTCOMES + 8)

struct fb_stat_cells {
	struct fb_counter cell[FB_STAT_CELLS];
};

static __always_inline __u32 fb_stat_cell(__u32 drop, __u32 kind, __u32 frag, __u32 cond)
{
	return ((cond & 3) << 5 | (frag & 1) << 4 | (kind & 7) << 1 | (drop & 1)) &
	       (FB_STAT_OUTCOMES - 1);
}

/* Add one CPU's cells into the readers' statistics. */
static inline void fb_stats_fold(const struct fb_stat_cells *in, struct fb_stats *out)
{
	__u32 i;

	for (i = 0; i < FB_STAT_OUTCOMES; i++) {
		const struct fb_counter *x = &in->cell[i];
		__u32 drop = i & 1, kind = i >> 1 & 7, frag = i >> 4 & 1, cond = i >> 5 & 3;
		int st[4] = { FB_STAT_SEEN, drop ? FB_STAT_DROPPED : FB_STAT_PASSED, -1, -1 };
		int j;

		if (!x->packets && !x->bytes)
			continue;
		if (kind >= FB_KIND_FLOW && kind <= FB_KIND_DST)
			st[2] = FB_STAT_HIT_FLOW + kind - FB_KIND_FLOW;
		else if (kind == FB_KIND_MASK)
			st[2] = FB_STAT_HIT_MASK;
		if (cond == FB_COND_MALFORMED)
			st[3] = FB_STAT_MALFORMED;
		else if (cond == FB_COND_NONIP)
			st[3] = FB_STAT_NONIP;
		else if (cond == FB_COND_NOFILTER)
			st[3] = FB_STAT_NOFILTER;
		for (j = 0; j < 4; j++) {
			if (st[j] < 0)
				continue;
			out->c[st[j]].packets += x->packets;
			out->c[st[j]].bytes += x->bytes;
		}
		if (kind) {
			out->c[FB_STAT_MATCHED].packets += x->packets;
			out->c[FB_STAT_MATCHED].bytes += x->bytes;
		}
		if (frag) {
			out->c[FB_STAT_FRAGMENT].packets += x->packets;
			out->c[FB_STAT_FRAGMENT].bytes += x->bytes;
		}
	}
	out->c[FB_STAT_UNCONFIRMED].packets += in->cell[FB_STAT_UNCONFIRMED_CELL].packets;
	out->c[FB_STAT_UNCONFIRMED].bytes += in->cell[FB_STAT_UNCONFIRMED_CELL].bytes;
}

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

/* Where the rule that decided is (fb_trace.gen); any other value is the
 * slot range of the generation that held it (ttl.h, fb_gen_range(): set
 * (gen - 2) / FB_GEN_SLOTS, generation (gen - 2) % FB_GEN_SLOTS). */
enum fb_trace_source {
	FB_TRACE_OWN = 0,     /* the filter's own chunks: a permanent rule (or no rule) */
	FB_TRACE_UNKNOWN = 1, /* in neither: the filter changed during the run */
};

/* What the program decided about the last packet (replay --explain and
 * query --packet only). */
struct fb_trace {
	struct fb_key key;
	__u32 parse;	/* enum fb_parse */
	__u32 fragment; /* 1: non-first fragment */
	__u32 kind;	/* enum fb_kind that matched, 0: none */
	__u32 verdict;	/* XDP_* */
	__u32 mask;	/* FB_KIND_MASK: the descriptor of the shape that matched */
	__u32 gen;	/* enum fb_trace_source, or a generation's slot range */
};

#endif
