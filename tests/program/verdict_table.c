// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_verdict's table: one row per frame, with the parse outcome and the
 * flow key the program must extract.
 */
#include "verdict.h"

/* ---------------------------------------------------------------- table */

/* The key fields (proto, sport, dport) come last, as a list. */
// clang-format off
#define OK4(name, fn, a, b, ...) { name, fn, a, b, FB_PARSE_OK, 0, 0, __VA_ARGS__ }
#define OK6(name, fn, a, b, ...) { name, fn, a, b, FB_PARSE_OK, 0, 1, __VA_ARGS__ }
#define FRAG4(name, fn, a, b, proto) { name, fn, a, b, FB_PARSE_OK, 1, 0, proto, 0, 0 }
#define FRAG6(name, fn, a, b, proto) { name, fn, a, b, FB_PARSE_OK, 1, 1, proto, 0, 0 }
#define NONIP(name, fn, a, b) { name, fn, a, b, FB_PARSE_NONIP, 0, 0, 0, 0, 0 }
#define BAD4(name, fn, a, b, ...) { name, fn, a, b, FB_PARSE_MALFORMED, 0, 0, __VA_ARGS__ }
#define BAD6(name, fn, a, b, ...) { name, fn, a, b, FB_PARSE_MALFORMED, 0, 1, __VA_ARGS__ }
// clang-format on
#define UDP P_UDP, UDP_SP, UDP_DP
#define TCP P_TCP, TCP_SP, TCP_DP

const struct row rows[] = {
	/* IPv4 */
	OK4("IPv4 UDP", f_v4, P_UDP, 5, UDP),
	OK4("IPv4 TCP", f_v4, P_TCP, 5, TCP),
	OK4("IPv4 SCTP", f_v4, P_SCTP, 5, P_SCTP, SCTP_SP, SCTP_DP),
	OK4("IPv4 UDP-Lite", f_v4, P_LITE, 5, P_LITE, LITE_SP, LITE_DP),
	OK4("IPv4 ICMP echo (port 0)", f_v4, P_ICMP, 5, P_ICMP, 0, 0),
	OK4("IPv4 GRE (port 0)", f_v4, P_GRE, 5, P_GRE, 0, 0),
	OK4("IPv4 ESP (port 0)", f_v4, P_ESP, 5, P_ESP, 0, 0),
	OK4("IPv4 UDP, IHL 6", f_v4, P_UDP, 6, UDP),
	OK4("IPv4 UDP, IHL 7", f_v4, P_UDP, 7, UDP),
	OK4("IPv4 UDP, IHL 8", f_v4, P_UDP, 8, UDP),
	OK4("IPv4 UDP, IHL 9", f_v4, P_UDP, 9, UDP),
	OK4("IPv4 UDP, IHL 10", f_v4, P_UDP, 10, UDP),
	OK4("IPv4 UDP, IHL 11", f_v4, P_UDP, 11, UDP),
	OK4("IPv4 UDP, IHL 12", f_v4, P_UDP, 12, UDP),
	OK4("IPv4 UDP, IHL 13", f_v4, P_UDP, 13, UDP),
	OK4("IPv4 UDP, IHL 14", f_v4, P_UDP, 14, UDP),
	OK4("IPv4 UDP, IHL 15", f_v4, P_UDP, 15, UDP),
	OK4("IPv4 TCP, IHL 15", f_v4, P_TCP, 15, TCP),
	OK4("IPv4 UDP, 1514-byte frame", f_mtu, 4, P_UDP, UDP),
	OK4("IPv4 ICMP, IHL 9", f_v4, P_ICMP, 9, P_ICMP, 0, 0),
	OK4("IPv4 ICMP, no payload: tot_len = IHL*4", f_v4_bare, P_ICMP, 0, P_ICMP, 0, 0),
	OK4("IPv4 TCP, tot_len 0 (BIG TCP / GSO: the frame's length)", f_v4_tso, P_TCP, 0, TCP),
	OK4("IPv4 UDP, DF set", f_v4_frag, P_UDP, 0x4000, UDP),
	OK4("IPv4 UDP first fragment (MF, offset 0)", f_v4_frag, P_UDP, 0x2000, UDP),
	OK4("IPv4 TCP first fragment (MF, offset 0)", f_v4_frag, P_TCP, 0x2000, TCP),
	/* The reserved flag and DF beside MF: the stack ignores them. */
	OK4("IPv4 UDP, reserved flag set", f_v4_frag, P_UDP, 0x8000, UDP),
	OK4("IPv4 TCP first fragment, DF and MF set", f_v4_frag, P_TCP, 0x6000, TCP),
	FRAG4("IPv4 UDP non-first fragment (MF, offset 185)", f_v4_frag, P_UDP, 0x2000 | 185,
	      P_UDP),
	FRAG4("IPv4 TCP last fragment (offset 370, MF clear)", f_v4_frag, P_TCP, 370, P_TCP),
	FRAG4("IPv4 UDP fragment at offset 1", f_v4_frag, P_UDP, 0x2000 | 1, P_UDP),
	FRAG4("IPv4 ICMP fragment at offset 8191, all flag bits set", f_v4_frag, P_ICMP, 0xffff,
	      P_ICMP),
	/* VLAN */
	OK4("802.1Q + IPv4 UDP", f_vlan, TAGS_Q, ETH_IP, UDP),
	OK4("802.1ad + IPv4 UDP", f_vlan, TAGS_AD, ETH_IP, UDP),
	OK4("802.1Q + 802.1Q + IPv4 UDP", f_vlan, TAGS_QQ, ETH_IP, UDP),
	OK6("QinQ (0x88a8, 0x8100) + IPv6 TCP", f_vlan, TAGS_QINQ, ETH_IP6, TCP),
	NONIP("802.1Q + ARP", f_vlan, TAGS_Q, ETH_ARP),
	BAD4("three tags (0x88a8, 0x8100, 0x8100) + IPv4 UDP", f_vlan, TAGS_ADQQ, ETH_IP, UDP),
	BAD6("three 802.1Q tags + IPv6 TCP", f_vlan, TAGS_QQQ, ETH_IP6, TCP),
	BAD4("three tags + ARP", f_vlan, TAGS_ADQQ, ETH_ARP, 0, 0, 0),
	/* IPv6 */
	OK6("IPv6 UDP", f_v6, P_UDP, 0, UDP),
	OK6("IPv6 TCP", f_v6, P_TCP, 0, TCP),
	OK6("IPv6 SCTP", f_v6, P_SCTP, 0, P_SCTP, SCTP_SP, SCTP_DP),
	OK6("IPv6 UDP-Lite", f_v6, P_LITE, 0, P_LITE, LITE_SP, LITE_DP),
	OK6("IPv6 TCP, 1514-byte frame", f_mtu, 6, P_TCP, TCP),
	OK6("IPv6 ICMPv6 echo (port 0)", f_v6, P_ICMP6, 0, P_ICMP6, 0, 0),
	OK6("IPv6 GRE (port 0)", f_v6, P_GRE, 0, P_GRE, 0, 0),
	OK6("IPv6 no next header (59)", f_v6, P_NONE, 0, P_NONE, 0, 0),
	OK6("IPv6 hop-by-hop + UDP", f_v6_exts, 1, P_UDP, UDP),
	OK6("IPv6 hop-by-hop, dstopts, routing, AH + TCP", f_v6_exts, 4, P_TCP, TCP),
	OK6("IPv6 hop-by-hop, dstopts, routing, AH + ICMPv6", f_v6_exts, 4, P_ICMP6, P_ICMP6, 0, 0),
	OK6("IPv6 8 extension headers + TCP", f_v6_exts, 8, P_TCP, TCP),
	OK6("IPv6 8 extension headers + UDP", f_v6_exts, 8, P_UDP, UDP),
	BAD6("IPv6 9 extension headers + TCP", f_v6_exts, 9, P_TCP, TCP),
	BAD6("IPv6 12 extension headers + UDP", f_v6_exts, 12, P_UDP, UDP),
	OK6("IPv6 hop-by-hop 24 B, AH 32 B, dstopts 16 B + UDP", f_v6_long_exts, P_UDP, 0, UDP),
	OK6("IPv6 first fragment (M, offset 0) + UDP", f_v6_frag, P_UDP, 1, UDP),
	OK6("IPv6 atomic fragment (offset 0, M clear) + TCP", f_v6_frag, P_TCP, 0, TCP),
	OK6("IPv6 first fragment, reserved bits set + UDP", f_v6_frag, P_UDP, 7, UDP),
	OK6("IPv6 hop-by-hop + first fragment + TCP", f_v6_hop_frag, P_TCP, 1, TCP),
	FRAG6("IPv6 non-first fragment of UDP (offset 185, M)", f_v6_frag, P_UDP, 185 << 3 | 1,
	      P_UDP),
	FRAG6("IPv6 last fragment of TCP (offset 370)", f_v6_frag, P_TCP, 370 << 3, P_TCP),
	FRAG6("IPv6 fragment of SCTP at offset 1", f_v6_frag, P_SCTP, 1 << 3 | 1, P_SCTP),
	FRAG6("IPv6 hop-by-hop + non-first fragment of ICMPv6", f_v6_hop_frag, P_ICMP6,
	      185 << 3 | 1, P_ICMP6),
	OK6("IPv6 7 extension headers + first fragment (8th) + UDP", f_v6_exts_frag, 7, 1, UDP),
	FRAG6("IPv6 7 extension headers + non-first fragment (8th) of UDP", f_v6_exts_frag, 7,
	      185 << 3 | 1, P_UDP),
	BAD6("IPv6 8 extension headers + fragment header (9th)", f_v6_exts_frag, 8, 185 << 3 | 1,
	     UDP),
	/* The fragmentable part starts with an extension header: the first
	 * fragment walks it to UDP; a later one's protocol is unknown (its
	 * key keeps the fragment header's next header, and meets no rule
	 * that fixes a protocol). */
	OK6("IPv6 first fragment: dstopts + UDP", f_v6_frag_ext, X_DST, 1, UDP),
	OK6("IPv6 first fragment: AH + UDP", f_v6_frag_ext, X_AH, 1, UDP),
	OK6("IPv6 first fragment: routing + UDP", f_v6_frag_ext, X_RT, 1, UDP),
	FRAG6("IPv6 non-first fragment, next header dstopts (60)", f_v6_frag_ext, X_DST, 3 << 3,
	      X_DST),
	FRAG6("IPv6 non-first fragment, next header AH (51)", f_v6_frag_ext, X_AH, 5 << 3 | 1,
	      X_AH),
	FRAG6("IPv6 non-first fragment, next header routing (43)", f_v6_frag_ext, X_RT, 3 << 3,
	      X_RT),
	/* not IP */
	NONIP("ARP request", f_nonip, ETH_ARP, 0),
	NONIP("LLDP", f_nonip, ETH_LLDP, 0),
	NONIP("MPLS", f_nonip, ETH_MPLS, 0),
	NONIP("802.3 length field (LLC)", f_nonip, 46, 0),
	/* malformed IPv4 */
	BAD4("IPv4 IHL 4", f_v4_ihl, 4, 0, UDP),
	BAD4("IPv4 IHL 0", f_v4_ihl, 0, 0, UDP),
	BAD4("IPv4 IHL 15 beyond the frame", f_v4_ihl, 15, 0, UDP),
	BAD4("IPv4 version 5", f_v4_version, 5, 0, UDP),
	BAD4("IPv4 version 6 in an IPv4 ethertype", f_v4_version, 6, 0, UDP),
	BAD4("IPv4 version 0", f_v4_version, 0, 0, UDP),
	BAD4("IPv4 tot_len 19 < IHL*4 = 20", f_v4_totlen, 5, 19, UDP),
	BAD4("IPv4 UDP, tot_len 0 (only TCP is sent so)", f_v4_totlen, 5, 0, UDP),
	BAD4("IPv4 TCP, tot_len 19 < IHL*4 = 20", f_v4_tso, P_TCP, 19, TCP),
	BAD4("IPv4 tot_len 20 < IHL*4 = 24", f_v4_totlen, 6, 20, UDP),
	BAD4("IPv4 tot_len 56 < IHL*4 = 60", f_v4_totlen, 15, 56, UDP),
	/* malformed IPv6 */
	BAD6("IPv6 version 4 in an IPv6 ethertype", f_v6_version, 4, 0, UDP),
	BAD6("IPv6 version 0", f_v6_version, 0, 0, UDP),
	BAD6("IPv6 hop-by-hop length 255 beyond the frame", f_v6_overrun, X_HOP, 0, UDP),
	BAD6("IPv6 AH length 255 beyond the frame", f_v6_overrun, X_AH, 0, UDP),
	BAD6("IPv6 routing length 255 beyond the frame", f_v6_overrun, X_RT, 0, UDP),
};

const size_t nrows = sizeof(rows) / sizeof(rows[0]);
