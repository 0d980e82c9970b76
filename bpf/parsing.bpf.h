/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packet parsing for the XDP program: Ethernet, up to two VLAN tags,
 * IPv4 or IPv6 (with up to FB_MAX_EXTHDRS extension headers), then the
 * ports of TCP, UDP, UDP-Lite and SCTP. Fills a struct fb_key.
 *
 * Every helper bounds-checks against data_end before reading (the verifier
 * demands it) and the loops have fixed limits so the verifier can unroll
 * them. A packet that breaks a rule is FB_PARSE_MALFORMED, never an abort.
 *
 * The addresses and the family are written as soon as the fixed IPv4 or
 * IPv6 header is in the frame, with word 4 (kind FB_KIND_FLOW, the family):
 * a malformed packet whose key has a kind still had its addresses read, so
 * address rules can still be matched against it (a chain of nine extension
 * headers must not carry a blocked source past the filter).
 *
 * An IPv6 packet ends where its payload length says, not where the frame
 * does: what lies past it is padding the kernel trims (ipv6_rcv()) and
 * never sees as headers. A first fragment whose header chain is cut
 * inside its payload length, followed in the frame's padding by a made-up
 * rest of the chain and harmless ports, is parsed as the kernel
 * reassembles it: cut before its ports (FB_PARSE_FIRST), not as a
 * datagram to those ports (which let its real ports, in the next
 * fragment, past every port rule). IPv4 has no header chain: its ports
 * are the 4 bytes after the IHL, and a packet the kernel takes always
 * holds them within its total length (a first fragment carries at least 8
 * bytes, ip_frag_queue(); a datagram cut before them is dropped by its
 * transport), so the frame's bytes there are the kernel's. Bounding IPv4
 * by its total length as well changed nothing the kernel accepts and cost
 * the verifier 60k more instructions (bench verifier).
 */
#ifndef FLOWBLOOM_PARSING_BPF_H
#define FLOWBLOOM_PARSING_BPF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "flowbloom/key.h"
#include "flowbloom/maps.h"
#include "flowbloom/proto.h"

/* 802.1Q and 802.1ad: an operator's QinQ needs two; a third tag is treated
 * as malformed so the verifier sees a short, fixed loop. */
#define FB_MAX_VLANS 2
/* Extension headers followed before the upper layer. RFC 8200 expects a
 * handful; eight covers every legitimate chain and bounds the loop. */
#define FB_MAX_EXTHDRS 8

/* What fb_parse_packet() says besides its verdict (*info, bits). */
#define FB_PARSE_FRAGMENT 1 /* a non-first IP fragment: no transport header, key ports 0 */
#define FB_PARSE_PORTS 2    /* the key's ports were read from the transport header */
/* The key's ports are the packet's: read, or a protocol without ports
 * (not a later fragment of one with ports). */
#define FB_PARSE_TUPLE 4
/* The key's protocol is the packet's: a later fragment (but an IPv6 one
 * whose fragment header names an extension header: fb_parse_ipv6()), or
 * the parser reached the upper-layer header (every packet that parses
 * does; so does one cut short there: it is malformed, but what it says of
 * its protocol, and of its ports if they are in, is what the kernel
 * reassembles). */
#define FB_PARSE_PROTO 8
/* A first fragment (offset 0, more fragments to come). If it is cut before
 * its ports, the rest of the datagram's header chain is in a later
 * fragment, where no port rule can see it (bpf/flowbloom.bpf.c,
 * fb_split_drop()). */
#define FB_PARSE_FIRST 16

#define FB_ETH_P_8021Q 0x8100
#define FB_ETH_P_8021AD 0x88a8

struct fb_cursor {
	void *pos;
	void *end;
};

/* struct ethhdr without its packed attribute, which makes clang read the
 * ethertype a byte at a time: two bytes at offset 12 are aligned wherever
 * the frame's IP header is (NET_IP_ALIGN), so one 2-byte load. */
struct fb_eth_hdr {
	__u8 dest[ETH_ALEN];
	__u8 source[ETH_ALEN];
	__be16 proto;
};
_Static_assert(sizeof(struct fb_eth_hdr) == ETH_HLEN, "an Ethernet header");

struct fb_vlan_hdr {
	__be16 tci;
	__be16 proto;
};

struct fb_exthdr {
	__u8 nexthdr;
	__u8 len;
};

struct fb_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off; /* offset << 3 | M */
	__be32 id;
};

/*
 * Eight bytes of an address as one key word: the word, in memory order,
 * that fb_key_word_pair() makes of their two halves. Where the kernel
 * reads unaligned memory at full speed (the Makefile defines
 * FB_UNALIGNED_LOADS on x86_64, arm64, ppc64le and s390x), one load, though
 * an IPv6 address in a frame is not 8-byte aligned: the verifier allows
 * that there unless a loader asks for strict alignment, which neither
 * flowbloom's nor iproute2's does. Four instructions fewer a word than two
 * loads and their shift and or (about 1 ns an IPv6 packet). Elsewhere the
 * verifier would refuse the load, and the halves are read one by one.
 * tests/program/test_parse.c checks the two builds agree.
 */
#ifdef FB_UNALIGNED_LOADS
typedef __u64 __attribute__((may_alias)) fb_pkt_u64;

static __always_inline __u64 fb_pkt_word(const __u32 *p)
{
	return *(const fb_pkt_u64 *)p;
}
#else
static __always_inline __u64 fb_pkt_word(const __u32 *p)
{
	return fb_key_word_pair(p[0], p[1]);
}
#endif

/* A key that says nothing of the packet (kind 0: no address known): what
 * the parser leaves where it stops before an IP header's addresses. */
static __always_inline void fb_key_none(struct fb_key *key)
{
	int i;

	for (i = 0; i < 5; i++)
		key->w[i] = 0;
}

/* Returns the (host-order) ethertype after any VLAN tags, or -1. */
static __always_inline int fb_parse_eth(struct fb_cursor *c)
{
	struct fb_eth_hdr *eth = c->pos;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > c->end)
		return -1;
	proto = bpf_ntohs(eth->proto);
	c->pos = eth + 1;

#pragma unroll
	for (i = 0; i < FB_MAX_VLANS; i++) {
		struct fb_vlan_hdr *vh = c->pos;

		if (proto != FB_ETH_P_8021Q && proto != FB_ETH_P_8021AD)
			break;
		if ((void *)(vh + 1) > c->end)
			return -1;
		proto = bpf_ntohs(vh->proto);
		c->pos = vh + 1;
	}
	if (proto == FB_ETH_P_8021Q || proto == FB_ETH_P_8021AD)
		return -1;
	return proto;
}

/* Word 4 of the key from the upper-layer header at c->pos (its ports, if
 * it has any): 0 ok, -1 truncated, by the frame or by lim (where an IPv6
 * payload length says the packet ends, the frame's end for IPv4; c->pos
 * past it, the header chain ran on beyond). The limit is a packet pointer compared with
 * packet pointers, which tells the verifier nothing, so its paths do not
 * multiply (a length compared as a number did: 318k instructions
 * processed became 725k). A header cut short still gives its
 * ports if their four bytes are in: a tiny first fragment (RFC 1858: a TCP
 * header split over two fragments) is malformed, but must meet the port
 * rules its reassembled datagram would (under --malformed pass it would
 * otherwise pass them). */
static __always_inline int fb_parse_ports(struct fb_cursor *c, __u8 proto, __u8 family, void *lim,
					  struct fb_key *key, __u32 *info)
{
	__u32 need = fb_proto_ports_hdr(proto); /* include/flowbloom/proto.h */
	__be16 *ports = c->pos;

	if (c->pos > lim)
		return -1; /* the chain went on past the IP length */
	key->w[4] = fb_key_word_tail(0, 0, proto, FB_KIND_FLOW, 0, family);
	*info |= FB_PARSE_PROTO;
	if (!need) {
		*info |= FB_PARSE_TUPLE;
		return 0; /* ICMP, ICMPv6, GRE, ...: port 0 */
	}
	if (c->pos + 4 > c->end || c->pos + 4 > lim)
		return -1;
	key->w[4] = fb_key_word_tail(ports[0], ports[1], proto, FB_KIND_FLOW, 0, family);
	*info |= FB_PARSE_PORTS | FB_PARSE_TUPLE;
	return c->pos + need > c->end || c->pos + need > lim ? -1 : 0;
}

/* The bytes an IPv6 payload length says follow the fixed header: the
 * field, or 65536 for 0 (a jumbogram's, RFC 2675, or a BIG TCP packet's:
 * the frame's length, as IPv4 total length 0 is). ((len - 1) & 0xffff) +
 * 1, no branch. */
static __always_inline __u32 fb_ip_room(__u16 len)
{
	return (((__u32)len - 1) & 0xffff) + 1;
}

/* A later fragment: its key has port 0, which is all of a protocol
 * without ports (an ICMP 5-tuple meets it) and none of one with ports
 * (`udp A:0 B:0` must not meet every UDP fragment from A to B). */
static __always_inline __u32 fb_parse_later_fragment(__u8 proto)
{
	return FB_PARSE_FRAGMENT | FB_PARSE_PROTO |
	       (fb_proto_ports_hdr(proto) ? 0 : FB_PARSE_TUPLE);
}

static __always_inline int fb_parse_ipv4(struct fb_cursor *c, struct fb_key *key, __u32 *info)
{
	struct iphdr *iph = c->pos;
	__u32 hlen;

	__u16 tot;

	if ((void *)(iph + 1) > c->end) {
		fb_key_none(key);
		return FB_PARSE_MALFORMED;
	}
	key->w[0] = 0;
	key->w[1] = fb_key_word_v4mapped(iph->saddr);
	key->w[2] = 0;
	key->w[3] = fb_key_word_v4mapped(iph->daddr);
	key->w[4] = fb_key_word_tail(0, 0, iph->protocol, FB_KIND_FLOW, 0, FB_FAMILY_IPV4);
	if (iph->version != 4 || iph->ihl < 5)
		return FB_PARSE_MALFORMED;
	hlen = iph->ihl * 4;
	/* tot_len 0 is how BIG TCP / GSO packets too long for the field say
	 * "the frame's length" (the kernel's iph_totlen(); generic XDP sees
	 * them on the host). Only TCP is sent so; any other length short of
	 * the header is still bad. The frame holds hlen, checked first. */
	tot = bpf_ntohs(iph->tot_len);
	if (c->pos + hlen > c->end || (tot < hlen && (tot || iph->protocol != IPPROTO_TCP)))
		return FB_PARSE_MALFORMED;

	if (iph->frag_off & bpf_htons(0x1fff)) {
		*info |= fb_parse_later_fragment(iph->protocol); /* no L4 header here */
		return FB_PARSE_OK;
	}
	c->pos += hlen;
	/* No limit but the frame's (the file's head says why). */
	if (!fb_parse_ports(c, iph->protocol, FB_FAMILY_IPV4, c->end, key, info))
		return FB_PARSE_OK;
	/* Only a malformed packet carries the mark: a bit every packet may
	 * carry would double the states the verifier walks after parsing. */
	if (iph->frag_off & bpf_htons(0x2000)) /* MF */
		*info |= FB_PARSE_FIRST;
	return FB_PARSE_MALFORMED;
}

static __always_inline int fb_parse_ipv6(struct fb_cursor *c, struct fb_key *key, __u32 *info)
{
	struct ipv6hdr *ip6h = c->pos;
	__u32 first = 0; /* FB_PARSE_FIRST once a first fragment's header is read */
	void *lim;	 /* where the payload length says the packet ends */
	__u8 nexthdr;
	int i;

	if ((void *)(ip6h + 1) > c->end) {
		fb_key_none(key);
		return FB_PARSE_MALFORMED;
	}
	key->w[0] = fb_pkt_word(&ip6h->saddr.in6_u.u6_addr32[0]);
	key->w[1] = fb_pkt_word(&ip6h->saddr.in6_u.u6_addr32[2]);
	key->w[2] = fb_pkt_word(&ip6h->daddr.in6_u.u6_addr32[0]);
	key->w[3] = fb_pkt_word(&ip6h->daddr.in6_u.u6_addr32[2]);
	nexthdr = ip6h->nexthdr;
	key->w[4] = fb_key_word_tail(0, 0, nexthdr, FB_KIND_FLOW, 0, FB_FAMILY_IPV6);
	if (ip6h->version != 6)
		return FB_PARSE_MALFORMED;
	c->pos = ip6h + 1;
	lim = (void *)(ip6h + 1) + fb_ip_room(bpf_ntohs(ip6h->payload_len));

#pragma unroll
	for (i = 0; i < FB_MAX_EXTHDRS; i++) {
		struct fb_exthdr *eh = c->pos;
		struct fb_frag_hdr *fh = c->pos;
		__u32 hlen;

		switch (nexthdr) {
		case FB_IPPROTO_HOPOPTS:
		case FB_IPPROTO_ROUTING:
		case FB_IPPROTO_DSTOPTS:
		case FB_IPPROTO_AH:
			if ((void *)(eh + 1) > c->end)
				goto malformed;
			/* RFC 8200: length in 8-octet units less the first;
			 * RFC 4302 (AH): in 4-octet units less two. */
			if (nexthdr == FB_IPPROTO_AH)
				hlen = ((__u32)eh->len + 2) * 4;
			else
				hlen = ((__u32)eh->len + 1) * 8;
			if (c->pos + hlen > c->end)
				goto malformed;
			nexthdr = eh->nexthdr;
			c->pos += hlen;
			break;
		case FB_IPPROTO_FRAGMENT:
			if ((void *)(fh + 1) > c->end)
				goto malformed;
			nexthdr = fh->nexthdr;
			c->pos = fh + 1;
			/* Past the payload: not a fragment header the kernel reads. */
			if (c->pos > lim)
				goto malformed;
			if (fh->frag_off & bpf_htons(0xfff8)) {
				key->w[4] = fb_key_word_tail(0, 0, nexthdr, FB_KIND_FLOW, 0,
							     FB_FAMILY_IPV6);
				/* The datagram's fragmentable part starts with an
				 * extension header, which is in the first fragment
				 * with the protocol after it: this one's protocol is
				 * unknown (its key keeps the header's number, which
				 * is none), so it meets address rules only. */
				*info |= fb_proto_ipv6_ext(nexthdr)
						 ? FB_PARSE_FRAGMENT
						 : fb_parse_later_fragment(nexthdr);
				return FB_PARSE_OK;
			}
			if (fh->frag_off & bpf_htons(1)) /* M: not an atomic fragment */
				first = FB_PARSE_FIRST;
			break;
		default:
			goto upper;
		}
	}
	/* Still an extension header after the limit: refuse to guess. */
	if (fb_proto_ipv6_ext(nexthdr))
		goto malformed;
upper:
	if (!fb_parse_ports(c, nexthdr, FB_FAMILY_IPV6, lim, key, info))
		return FB_PARSE_OK;
malformed:
	/* As for IPv4: the mark on malformed packets only. */
	*info |= first;
	return FB_PARSE_MALFORMED;
}

/* Fill key from the packet, every word of it (kind 0 where no address
 * was read, so the caller need not clear it first); returns enum
 * fb_parse, and FB_PARSE_* bits in *info (zeroed by the caller). */
static __always_inline int fb_parse_packet(struct xdp_md *ctx, struct fb_key *key, __u32 *info)
{
	struct fb_cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	int proto = fb_parse_eth(&c);

	if (proto == ETH_P_IP)
		return fb_parse_ipv4(&c, key, info);
	if (proto == ETH_P_IPV6)
		return fb_parse_ipv6(&c, key, info);
	fb_key_none(key);
	return proto < 0 ? FB_PARSE_MALFORMED : FB_PARSE_NONIP;
}

#endif
