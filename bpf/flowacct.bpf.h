/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-flow accounting on the data path (attach --accounting): every packet
 * the filter decided on adds to its flow's entry in this CPU's plane of
 * the flow table, or, when neither of the flow's two buckets has room, to
 * the overflow counters and the overflow sketch. Layout, fingerprints and
 * the reader's protocol are in include/flowbloom/flowacct.h.
 *
 * Reached from fb_monitor_verdict() (bpf/monitor.bpf.h) under
 * cfg_mon & FB_MON_ACCT, read-only data: without it the verifier removes
 * the call. The headers the filter does not need (MAC addresses, VLAN id,
 * ToS, the IP length, TCP flags, ICMP type and code) are read here, from
 * the frame the parser has already found well formed, so the filter's own
 * path reads nothing more.
 *
 * One global function, verified once on its own; the call is paid only by
 * monitored attachments.
 */
#ifndef FLOWBLOOM_FLOWACCT_BPF_H
#define FLOWBLOOM_FLOWACCT_BPF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "flowbloom/flowacct.h"
#include "flowbloom/monitor.h"
#include "config.bpf.h"
#include "maps.bpf.h"
#include "parsing.bpf.h"

#ifndef FB_READ_ONCE
#define FB_READ_ONCE(x) (*(const volatile __u64 *)&(x))
#define FB_WRITE_ONCE(x, v) (*(volatile __u64 *)&(x) = (v))
#endif

/* What a packet adds to its flow, beyond the key. */
struct fb_acct_pkt {
	__u64 ip_len;
	__u16 tcp_flags;
	__u16 icmp;
	__u16 vlan;
	__u8 tos;
};

/*
 * A header offset, through memory: the verifier does not follow values
 * through a map, so what comes back is a number it knows only by the
 * bounds the caller then checks. The paths that reached here with
 * different offsets (0, 1 or 2 VLAN tags; IPv4 or IPv6; extension headers)
 * then look alike and are verified once: the parse below costs a few
 * hundred verifier steps instead of tens of thousands.
 */
static __always_inline __u64 fb_acct_launder(struct fb_acct_hdr *hdr, __u64 v)
{
	FB_WRITE_ONCE(hdr->scratch, v);
	return FB_READ_ONCE(hdr->scratch);
}

/* Offsets beyond this are not followed (a packet's data ends sooner). */
#define FB_ACCT_MAX_OFF 0x3fff

/* The offset of the upper-layer header of a well-formed IPv6 packet whose
 * first next header is not the key's protocol: the parser's walk again
 * (parsing.bpf.h, fb_parse_ipv6), keeping only the position. 0 when there
 * is none (a later fragment) or it is out of reach. */
static __always_inline __u64 fb_acct_ipv6_l4(struct fb_acct_hdr *hdr, void *data, void *end,
					     __u64 off, __u8 nexthdr)
{
	int i;

#pragma unroll
	for (i = 0; i < FB_MAX_EXTHDRS; i++) {
		struct fb_exthdr *eh;
		struct fb_frag_hdr *fh;

		if (nexthdr != FB_IPPROTO_HOPOPTS && nexthdr != FB_IPPROTO_ROUTING &&
		    nexthdr != FB_IPPROTO_DSTOPTS && nexthdr != FB_IPPROTO_AH &&
		    nexthdr != FB_IPPROTO_FRAGMENT)
			return off;
		off = fb_acct_launder(hdr, off);
		if (off > FB_ACCT_MAX_OFF)
			return 0;
		eh = data + off;
		fh = data + off;
		if ((void *)(fh + 1) > end)
			return 0;
		if (nexthdr == FB_IPPROTO_FRAGMENT) {
			if (fh->frag_off & bpf_htons(0xfff8))
				return 0;
			off += sizeof(*fh);
		} else if (nexthdr == FB_IPPROTO_AH) {
			off += ((__u32)eh->len + 2) * 4;
		} else {
			off += ((__u32)eh->len + 1) * 8;
		}
		nexthdr = eh->nexthdr;
	}
	return 0;
}

/* The fields of a packet the parser passed (0 ok, -1: cannot happen for
 * such a packet, but the verifier wants every read checked). */
static __always_inline int fb_acct_parse(struct xdp_md *ctx, const struct fb_key *key,
					 struct fb_acct_hdr *hdr, struct fb_acct_pkt *p,
					 __u64 bytes)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end, *pos;
	struct ethhdr *eth = data;
	__u64 off = sizeof(*eth), l4 = 0;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > end)
		return -1;
	proto = eth->h_proto;
#pragma unroll
	for (i = 0; i < FB_MAX_VLANS; i++) {
		struct fb_vlan_hdr *vh = data + off;

		if (proto != bpf_htons(FB_ETH_P_8021Q) && proto != bpf_htons(FB_ETH_P_8021AD))
			break;
		if ((void *)(vh + 1) > end)
			return -1;
		if (!i)
			p->vlan = bpf_ntohs(vh->tci) & 0xfff;
		proto = vh->proto;
		off += sizeof(*vh);
	}
	off = fb_acct_launder(hdr, off);
	if (off > FB_ACCT_MAX_OFF)
		return -1;
	pos = data + off;
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = pos;
		__u16 tot;

		if ((void *)(iph + 1) > end)
			return -1;
		p->tos = iph->tos;
		/* tot_len 0: a GSO packet longer than the field (parsing.bpf.h):
		 * the frame's length past its L2 header, every buffer of it
		 * (bytes), not the first buffer's end. */
		tot = bpf_ntohs(iph->tot_len);
		p->ip_len = tot ? tot : bytes - off;
		if (!(iph->frag_off & bpf_htons(0x1fff)))
			l4 = off + iph->ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = pos;
		__u16 plen;

		if ((void *)(ip6h + 1) > end)
			return -1;
		p->tos = (ip6h->priority << 4) | (ip6h->flow_lbl[0] >> 4);
		/* Payload length 0: a jumbogram (RFC 2675) or a GSO packet. */
		plen = bpf_ntohs(ip6h->payload_len);
		p->ip_len = plen ? (__u64)plen + sizeof(*ip6h) : bytes - off;
		l4 = off + sizeof(*ip6h);
		if (ip6h->nexthdr != key->proto)
			l4 = fb_acct_ipv6_l4(hdr, data, end, l4, ip6h->nexthdr);
	} else {
		return -1;
	}
	l4 = fb_acct_launder(hdr, l4);
	if (!l4 || l4 > FB_ACCT_MAX_OFF)
		return 0;
	pos = data + l4;
	if (key->proto == FB_IPPROTO_TCP) {
		__be16 *w = pos + 12; /* data offset, reserved, NS; then CWR ... FIN */

		if ((void *)(w + 1) > end)
			return 0;
		p->tcp_flags = bpf_ntohs(*w) & 0x1ff;
	} else if (key->proto == FB_ACCT_ICMP || key->proto == FB_ACCT_ICMPV6) {
		__u8 *tc = pos;

		if ((void *)(tc + 2) > end)
			return 0;
		p->icmp = (__u16)tc[0] << 8 | tc[1];
	}
	return 0;
}

/* The way of bucket b holding v (a fingerprint, or FB_ACCT_FREE), or
 * FB_ACCT_WAYS. One question per walk, each path leaving with its own way:
 * the verifier follows a handful of paths, not every combination. */
static __always_inline __u32 fb_acct_find(const struct fb_acct_bucket *b, __u64 v)
{
	__u32 w;

	for (w = 0; w < FB_ACCT_WAYS; w++)
		if (FB_READ_ONCE(b->fp[w]) == v)
			break;
	return w;
}

/* Free ways of bucket b. clang tests each way with a branch; the count
 * goes through memory (fb_acct_launder) so the verifier, which would
 * otherwise know it exactly on each of 2^8 paths and compare two such
 * counts, sees those paths as one. */
static __always_inline __u64 fb_acct_free_ways(struct fb_acct_hdr *hdr,
					       const struct fb_acct_bucket *b)
{
	__u64 w, n = 0;

#pragma unroll
	for (w = 0; w < FB_ACCT_WAYS; w++)
		n += FB_READ_ONCE(b->fp[w]) == FB_ACCT_FREE;
	return fb_acct_launder(hdr, n);
}

static __always_inline int fb_acct_same_key(const struct fb_acct_flow *e, const struct fb_key *k)
{
	return e->key.w[0] == k->w[0] && e->key.w[1] == k->w[1] && e->key.w[2] == k->w[2] &&
	       e->key.w[3] == k->w[3] && e->key.w[4] == k->w[4];
}

/* Take the free way w of bucket b for a new flow: the entry first, the
 * fingerprint that publishes it last (the reader checks the fingerprint
 * before it reads the entry; x86 keeps stores in order). */
static __always_inline void fb_acct_take(struct xdp_md *ctx, struct fb_acct_bucket *b, __u32 w,
					 __u64 fp, const struct fb_key *key,
					 const struct fb_acct_pkt *p, __u64 j, int verdict)
{
	struct fb_acct_flow *e = &b->flow[w & (FB_ACCT_WAYS - 1)];
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u64 now = bpf_ktime_get_ns();

	e->key.w[0] = key->w[0];
	e->key.w[1] = key->w[1];
	e->key.w[2] = key->w[2];
	e->key.w[3] = key->w[3];
	e->key.w[4] = key->w[4];
	e->packets = 1;
	e->bytes = p->ip_len;
	e->last_j = (__u32)j;
	e->tcp_flags = p->tcp_flags;
	e->mark = 0;
	e->first_ns = now;
	e->first_j = j;
	e->done_packets = 0;
	e->done_bytes = 0;
	e->done_ns = now;
	if ((void *)(eth + 1) <= end) {
		__builtin_memcpy(e->smac, eth->h_source, ETH_ALEN);
		__builtin_memcpy(e->dmac, eth->h_dest, ETH_ALEN);
	}
	e->vlan = p->vlan;
	e->icmp = p->icmp;
	e->ifindex = ctx->ingress_ifindex;
	e->tos = p->tos;
	e->verdict = verdict;
	e->end_reason = 0;
	e->pad1 = 0;
	__asm__ __volatile__("" ::: "memory");
	FB_WRITE_ONCE(b->fp[w & (FB_ACCT_WAYS - 1)], fp);
}

/* Add the packet to the overflow sketch: rows as fb_mon_sketch()'s, by the
 * flow's plain hash h (the reader estimates 5-tuples), without the top
 * table (the main sketch's candidates serve). Not with a sketch by address
 * (cfg_mon has no FB_MON_SKETCH then): its candidates are addresses, whose
 * flows this sketch cannot name. */
static __always_inline void fb_acct_overflow(struct fb_acct_hdr *hdr, __u64 h, __u64 ip_len)
{
	__u32 shift = cfg_mon_shift, depth = cfg_mon_depth, i;
	__u64 g = h << 32, step = (h & 0xffffffff00000000ULL) | (1ULL << 32);
	__u64 width = 1ULL << shift, right = 64 - shift;
	struct fb_mon_cell *row;

	hdr->overflow_packets++;
	hdr->overflow_bytes += ip_len;
	if (!(cfg_mon & FB_MON_SKETCH))
		return;
	row = (void *)hdr + fb_acct_osketch_off(cfg_acct_buckets);
#pragma unroll
	for (i = 0; i < FB_MON_MAX_DEPTH; i++) {
		if (i >= depth)
			continue;
		row[g >> right].packets++;
		row[g >> right].bytes += ip_len;
		row += width;
		g += step;
	}
}

/* Count the packet in entry e of its flow. */
static __always_inline void fb_acct_add(struct fb_acct_flow *e, const struct fb_acct_pkt *p,
					__u64 j)
{
	e->packets++;
	e->bytes += p->ip_len;
	e->last_j = (__u32)j;
	if (p->tcp_flags)
		e->tcp_flags |= p->tcp_flags;
	/* The first packet after a record of the flow going on: its time
	 * starts the next record (a clock read once a record). */
	if (e->mark) {
		e->done_ns = bpf_ktime_get_ns();
		e->mark = 0;
	}
}

__noinline int fb_flowacct(struct xdp_md *ctx, const struct fb_key *key, int verdict, __u64 bytes)
{
	__u64 kw[FB_MON_NH_WORDS] = { cfg_mon_nh[0], cfg_mon_nh[1], cfg_mon_nh[2],
				      cfg_mon_nh[3], cfg_mon_nh[4], cfg_mon_nh[5] };
	__u32 cpu = bpf_get_smp_processor_id(), nb = cfg_acct_buckets, w;
	struct fb_acct_pkt p = {};
	struct fb_acct_bucket *b1, *b2, *b;
	struct fb_acct_flow *e;
	struct fb_acct_hdr *hdr;
	__u64 h, fp, j;

	if (!ctx || !key)
		return 0;
	hdr = bpf_map_lookup_elem(&fb_flows, &cpu);
	if (!hdr || fb_acct_parse(ctx, key, hdr, &p, bytes))
		return 0;
	h = fb_mon_hash(key, kw);
	fp = fb_acct_fp(h, p.icmp, (__u8)verdict);
	j = bpf_jiffies64();
	b1 = (struct fb_acct_bucket *)(hdr + 1) + fb_acct_bucket1(h, nb);
	b2 = (struct fb_acct_bucket *)(hdr + 1) + fb_acct_bucket2(h, nb);
	/* Known flows first (a fingerprint in either bucket), then a free way,
	 * then overflow. */
	w = fb_acct_find(b1, fp);
	e = w < FB_ACCT_WAYS ? &b1->flow[w] : NULL;
	if (!e) {
		w = fb_acct_find(b2, fp);
		e = w < FB_ACCT_WAYS ? &b2->flow[w] : NULL;
	}
	if (e) {
		if (fb_acct_same_key(e, key)) {
			fb_acct_add(e, &p, j);
			return 0;
		}
		/* Another flow with this fingerprint (1 in 2^62 or so): never
		 * mixed into its counts. */
		hdr->collisions++;
		fb_acct_overflow(hdr, h, p.ip_len);
		return 0;
	}
	/* A new flow goes to the bucket with more free ways (ties: the
	 * first): the greedy "two choices" that keeps the fullest bucket
	 * near the mean (Azar et al. 1999), so the table overflows only
	 * when it is nearly full. */
	b = fb_acct_free_ways(hdr, b2) > fb_acct_free_ways(hdr, b1) ? b2 : b1;
	w = fb_acct_find(b, FB_ACCT_FREE);
	if (w < FB_ACCT_WAYS) {
		fb_acct_take(ctx, b, w, fp, key, &p, j, verdict);
		hdr->taken++;
		return 0;
	}
	fb_acct_overflow(hdr, h, p.ip_len);
	return 0;
}

#endif
