/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-flow accounting (attach --accounting), shared by the XDP program
 * (bpf/flowacct.bpf.h) and the reader (user/lib/monitor/flowacct.c): exact
 * packet and IP-octet counts for every flow that fits a bounded table, the
 * flows that do not fit counted in an overflow sketch.
 *
 * The table is one plane per CPU (a value of an mmapable array map, like
 * the sketch), so the data path adds with plain stores and never waits on
 * another CPU. A plane is a header, then buckets of FB_ACCT_WAYS ways:
 * one cache line of fingerprints, then the ways' entries, 128 bytes each.
 * A flow lives in one of two buckets chosen by its hash, the one with
 * more free ways when it arrives ("two choices", Azar, Broder, Karlin and
 * Upfal 1999: the fullest bucket stays near the mean, so the table takes
 * flows until it is nearly full), so a packet reads one or two
 * fingerprint lines and then its entry's first line, which holds
 * everything a packet writes.
 *
 * A way's fingerprint is the flow's 64-bit monitoring hash (monitor.h)
 * mixed with what else tells flows apart (ICMP type and code, the
 * verdict) and never 0 or 1: 0 is a free way, FB_ACCT_TOMB a way the
 * reader has ended. The key is compared too, so two flows never share an
 * entry. The reader ends a flow in two steps: it marks the way
 * FB_ACCT_TOMB (no packet matches it from then on; one that already
 * matched may still add to it), and at its next scan, long after any such
 * packet is done, it reads the final counts, exports them and frees the
 * way. Counters only ever grow while a way is held, and the reader keeps
 * what it has exported (active timeouts) in the entry itself, so a
 * restarted reader neither loses nor repeats a count.
 */
#ifndef FLOWBLOOM_FLOWACCT_H
#define FLOWBLOOM_FLOWACCT_H

#include <linux/types.h>
#include "geometry.h"
#include "key.h"
#include "monitor.h"

#define FB_ACCT_WAYS 8
#define FB_ACCT_ICMP 1
#define FB_ACCT_ICMPV6 58
#define FB_ACCT_FREE 0ULL
#define FB_ACCT_TOMB 1ULL
/* Flows per CPU: a plane (header, buckets, overflow sketch) stays below
 * the 1 GiB a monitoring map value may take. */
#define FB_ACCT_MIN_FLOWS 64
#define FB_ACCT_MAX_FLOWS (1U << 22)

/* One way. The first cache line is all a packet of a known flow writes. */
struct fb_acct_flow {
	struct fb_key key;
	__u64 packets;
	__u64 bytes;	 /* IP octets: from the IP header on (RFC 7012, octetDeltaCount) */
	__u32 last_j;	 /* low 32 bits of jiffies at the last packet */
	__u16 tcp_flags; /* OR of every packet's TCP flags (the 9 of RFC 7125) */
	/* The reader's 1 once it exported a record of the flow going on: the
	 * next packet, the first of the next record, writes its time into
	 * done_ns and clears it. */
	__u16 mark;
	/* Written when the flow takes the way. */
	__u64 first_ns; /* bpf_ktime_get_ns() (CLOCK_MONOTONIC) of the first packet */
	__u64 first_j;	/* jiffies then: last_j's reference */
	/* The reader's (zeroed when the way is taken): counts and time already
	 * exported (active timeout). */
	__u64 done_packets;
	__u64 done_bytes;
	__u64 done_ns; /* first_ns before any record; after one, its end, then the
			* next packet's time (mark) */
	__u8 smac[6];
	__u8 dmac[6];
	__u16 vlan;	 /* the outer 802.1Q/802.1ad tag's VLAN id; 0: untagged */
	__u16 icmp;	 /* ICMP or ICMPv6 type << 8 | code; 0 for other protocols */
	__u32 ifindex;	 /* ingress device */
	__u8 tos;	 /* IPv4 ToS or IPv6 traffic class of the first packet */
	__u8 verdict;	 /* XDP_* of the flow's packets (part of its identity) */
	__u8 end_reason; /* the reader's: why it ended the flow (enum fb_acct_end) */
	__u8 pad1;
};

_Static_assert(sizeof(struct fb_acct_flow) == 128, "an entry is two cache lines");
_Static_assert(__builtin_offsetof(struct fb_acct_flow, first_ns) == 64,
	       "what a packet writes fits the first line");

struct fb_acct_bucket {
	__u64 fp[FB_ACCT_WAYS];
	struct fb_acct_flow flow[FB_ACCT_WAYS];
};

/* A plane's first 64 bytes: the data path's counters for this CPU. */
struct fb_acct_hdr {
	__u64 taken;		/* ways taken by a new flow */
	__u64 overflow_packets; /* packets of flows no way could take */
	__u64 overflow_bytes;	/* their IP octets */
	__u64 collisions;	/* packets whose fingerprint matched another flow's */
	__u64 scratch;		/* the data path's (bpf/flowacct.bpf.h, fb_acct_launder) */
	__u64 pad[3];
};

/* Overflow packets are also added, per row, to a count-min sketch of the
 * main sketch's geometry that follows the buckets (with --monitor), so the
 * flows that did not fit can still be estimated, and only for the part of
 * their traffic that was not counted exactly. */
static __always_inline __u64 fb_acct_plane_size(__u32 buckets, __u32 sketch_shift,
						__u32 sketch_depth)
{
	return sizeof(struct fb_acct_hdr) + (__u64)buckets * sizeof(struct fb_acct_bucket) +
	       ((__u64)sketch_depth << sketch_shift) * sizeof(struct fb_mon_cell);
}

static __always_inline __u64 fb_acct_osketch_off(__u32 buckets)
{
	return sizeof(struct fb_acct_hdr) + (__u64)buckets * sizeof(struct fb_acct_bucket);
}

/* The flow's two candidate buckets, from bits of h the fingerprint keeps
 * but the other monitoring structures mostly do not use first. */
static __always_inline __u32 fb_acct_bucket1(__u64 h, __u32 buckets)
{
	return fb_reduce32((__u32)(h >> 32), buckets);
}

static __always_inline __u32 fb_acct_bucket2(__u64 h, __u32 buckets)
{
	return fb_reduce32((__u32)h * 0x9e3779b9U, buckets);
}

/* The way's fingerprint: h with the ICMP type/code and the verdict mixed
 * in (a multiply by an odd constant and an xor: distinct for distinct
 * values under one h), kept clear of FB_ACCT_FREE and FB_ACCT_TOMB. */
static __always_inline __u64 fb_acct_fp(__u64 h, __u16 icmp, __u8 verdict)
{
	__u64 fp = h ^ (((__u64)verdict << 16 | icmp) * 0x9e3779b97f4a7c15ULL);

	return fp > FB_ACCT_TOMB ? fp : fp + 2;
}

/* flowEndReason (IANA IPFIX registry, RFC 5102). */
enum fb_acct_end {
	FB_ACCT_END_IDLE = 1,	/* idle timeout */
	FB_ACCT_END_ACTIVE = 2, /* active timeout (the flow goes on) */
	FB_ACCT_END_FLOW = 3,	/* end of flow detected: TCP FIN or RST */
	FB_ACCT_END_FORCED = 4, /* forced end: the exporter stops */
};

#endif
