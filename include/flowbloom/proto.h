/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * IP protocol numbers as the flow key sees them, shared by the XDP parser
 * (bpf/parsing.bpf.h) and the CLI's FLOW parser (user/), so a rule is
 * keyed exactly as the packets it is meant for: which protocols carry
 * ports (and how much header the parser needs to read them), and which
 * IPv6 next-header values are extension headers the parser walks past
 * (RFC 8200 section 4; AH, RFC 4302, too, since the ports follow it).
 */
#ifndef FLOWBLOOM_PROTO_H
#define FLOWBLOOM_PROTO_H

#include <linux/types.h>

#define FB_IPPROTO_HOPOPTS 0
#define FB_IPPROTO_TCP 6
#define FB_IPPROTO_UDP 17
#define FB_IPPROTO_ROUTING 43
#define FB_IPPROTO_FRAGMENT 44
#define FB_IPPROTO_AH 51
#define FB_IPPROTO_DSTOPTS 60
#define FB_IPPROTO_SCTP 132
#define FB_IPPROTO_UDPLITE 136

/* Bytes of the upper-layer header that must be in the frame before its
 * ports are read (the fixed header), or 0 for a protocol without ports
 * (ICMP, ICMPv6, GRE, ...: its key has port 0). Tests, not a switch:
 * clang copied the parser's tail into each case of one (+150 BPF
 * instructions). */
static inline __u32 fb_proto_ports_hdr(__u8 proto)
{
	if (proto == FB_IPPROTO_TCP)
		return 20; /* the fixed TCP header */
	if (proto == FB_IPPROTO_UDP || proto == FB_IPPROTO_UDPLITE)
		return 8;
	if (proto == FB_IPPROTO_SCTP)
		return 12; /* SCTP common header */
	return 0;
}

/* Does the key of a proto packet carry its ports? */
static inline int fb_proto_has_ports(int proto)
{
	return proto >= 0 && proto <= 255 && fb_proto_ports_hdr((__u8)proto) != 0;
}

/* An IPv6 extension header the parser follows (it keys the protocol after
 * the chain): hop-by-hop, routing, fragment, AH, destination options. */
static inline int fb_proto_ipv6_ext(int proto)
{
	return proto == FB_IPPROTO_HOPOPTS || proto == FB_IPPROTO_ROUTING ||
	       proto == FB_IPPROTO_FRAGMENT || proto == FB_IPPROTO_AH ||
	       proto == FB_IPPROTO_DSTOPTS;
}

#endif
