// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_verdict: the real XDP program, run through BPF_PROG_TEST_RUN on
 * hand-built frames. A katran-style table of rows {description, frame
 * builder, expected parse outcome and flow key} covers IPv4 (options up to
 * IHL 15, first and non-first fragments, every upper layer we take ports
 * from and some we do not), IPv6 (extension header chains up to the limit of
 * 8 and past it, fragment headers), VLAN tags (one, two, one too many),
 * non-IP ethertypes and malformed IPv4/IPv6 headers.
 *
 * Every row runs against a blocked and a classic filter holding nothing, the
 * row's 5-tuple, its source, its destination, rules of the reverse direction
 * only, or several kinds at once; under each action (drop, allow, monitor)
 * with the default malformed policy, with malformed packets dropped or
 * passed explicitly, and under the filter's default action with the trace
 * record on. A malformed frame whose fixed IP header is complete is still
 * matched on its addresses (source and destination rules); what no rule
 * decides gets the malformed verdict (default: drop, pass under monitor).
 * Each run checks the verdict (never XDP_ABORTED), the per-CPU counter
 * deltas (packets and bytes, every slot) and, when traced, the parse
 * outcome, fragment flag, matched kind and the flow key the program
 * extracted (for malformed frames, its addresses and family). Every frame
 * that parses is then cut short, against its 5-tuple and source rules:
 * below 14 bytes test_run refuses it (EINVAL), every cut inside a header is
 * malformed (and still matches its source once the addresses are in), cuts
 * in the payload change nothing. Last, the shared stats map (private_stats
 * = false) and a program loaded without a filter (fail open).
 *
 * Filters live under /sys/fs/bpf/fbtest_verdict_<pid> (bpffs refuses names
 * with dots) and are destroyed at the end, failures or not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flow.h"
#include "flowbloom.skel.h"
#include "loader.h"
#include "rules.h"
#include "stats.h"
#include "store.h"
#include "testlib.h"

/* Protocol numbers and ethertypes, spelled out. */
#define P_ICMP 1
#define P_TCP 6
#define P_UDP 17
#define P_GRE 47
#define P_ESP 50
#define P_ICMP6 58
#define P_NONE 59
#define P_SCTP 132
#define P_LITE 136
#define X_HOP 0
#define X_RT 43
#define X_FRAG 44
#define X_AH 51
#define X_DST 60
#define ETH_IP 0x0800
#define ETH_IP6 0x86dd
#define ETH_ARP 0x0806
#define ETH_LLDP 0x88cc
#define ETH_MPLS 0x8847

/* Ports every builder uses, per upper-layer protocol (host order). */
#define TCP_SP 51000
#define TCP_DP 443
#define UDP_SP 40000
#define UDP_DP 53
#define SCTP_SP 36412
#define SCTP_DP 38412
#define LITE_SP 5004
#define LITE_DP 5005

/* Documentation addresses only. */
static const __u8 V4_SRC[4] = { 198, 51, 100, 1 };
static const __u8 V4_DST[4] = { 203, 0, 113, 7 };
static const __u8 V6_SRC[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
static const __u8 V6_DST[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2 };

/* ---------------------------------------------------------------- frames */

struct pkt {
	__u8 d[1600];
	size_t len;
	size_t need; /* end of the last header the parser has to read */
	int l3, l4;  /* offsets of the IP and upper-layer headers, -1: none */
	int v6;
	__u8 l4proto;
};

static void pkt_init(struct pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->l3 = p->l4 = -1;
}

/* Append n zero bytes; parsed: the parser reads them (moves p->need). */
static __u8 *put(struct pkt *p, size_t n, bool parsed)
{
	__u8 *q = p->d + p->len;

	if (p->len + n > sizeof(p->d)) {
		fprintf(stderr, "test bug: frame longer than %zu bytes\n", sizeof(p->d));
		abort();
	}
	memset(q, 0, n);
	p->len += n;
	if (parsed)
		p->need = p->len;
	return q;
}

static void wr16(__u8 *q, unsigned int v)
{
	q[0] = v >> 8;
	q[1] = v;
}

static void wr32(__u8 *q, unsigned int v)
{
	wr16(q, v >> 16);
	wr16(q + 2, v);
}

static void eth(struct pkt *p, __u16 type)
{
	static const __u8 dst[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x02 };
	static const __u8 src[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01 };
	__u8 *q = put(p, 14, true);

	memcpy(q, dst, 6);
	memcpy(q + 6, src, 6);
	wr16(q + 12, type);
}

static void vlan(struct pkt *p, __u16 vid, __u16 next)
{
	__u8 *q = put(p, 4, true);

	wr16(q, vid);
	wr16(q + 2, next);
}

/* IPv4 header of ihl 32-bit words; options are NOPs ending in EOL. */
static void ipv4(struct pkt *p, __u8 proto, int ihl, __u16 frag_off)
{
	__u8 *q;
	int i;

	p->l3 = p->len;
	q = put(p, ihl * 4, true);
	q[0] = 0x40 | ihl;
	wr16(q + 4, 0x1234);
	wr16(q + 6, frag_off);
	q[8] = 64;
	q[9] = proto;
	memcpy(q + 12, V4_SRC, 4);
	memcpy(q + 16, V4_DST, 4);
	for (i = 20; i < ihl * 4; i++)
		q[i] = i == ihl * 4 - 1 ? 0 : 1;
}

static void ipv6(struct pkt *p, __u8 next)
{
	__u8 *q;

	p->l3 = p->len;
	p->v6 = 1;
	q = put(p, 40, true);
	q[0] = 0x60;
	q[6] = next;
	q[7] = 64;
	memcpy(q + 8, V6_SRC, 16);
	memcpy(q + 24, V6_DST, 16);
}

/* An IPv6 extension header of type self with length field hlen. */
static void ext6(struct pkt *p, __u8 self, __u8 next, __u8 hlen)
{
	size_t n = self == X_AH ? (hlen + 2) * 4u : (hlen + 1) * 8u;
	__u8 *q = put(p, n, true);

	q[0] = next;
	q[1] = hlen;
	if (self == X_RT) {
		q[2] = 253; /* experimental routing type (RFC 4727) */
		q[3] = 0;   /* segments left: ignored by every node */
	} else if (self == X_AH) {
		wr32(q + 4, 0x100); /* SPI; sequence number, then a zero ICV */
		wr32(q + 8, 1);
	} else {
		q[2] = 1; /* one PadN option fills the header */
		q[3] = n - 4;
	}
}

/* field: fragment offset << 3 | M. */
static void frag6(struct pkt *p, __u8 next, __u16 field)
{
	__u8 *q = put(p, 8, true);

	q[0] = next;
	wr16(q + 2, field);
	wr32(q + 4, 0xdb8);
}

static void payload(struct pkt *p, size_t n)
{
	__u8 *q = put(p, n, false);
	size_t i;

	for (i = 0; i < n; i++)
		q[i] = 0xa0 + i;
}

/* The upper-layer header of proto (only the ported ones are parsed), then
 * 16 bytes of payload. */
static void l4(struct pkt *p, __u8 proto)
{
	__u8 *q;

	p->l4 = p->len;
	p->l4proto = proto;
	switch (proto) {
	case P_TCP:
		q = put(p, 20, true);
		wr16(q, TCP_SP);
		wr16(q + 2, TCP_DP);
		wr32(q + 4, 1000);
		wr32(q + 8, 2000);
		q[12] = 5 << 4;
		q[13] = 0x18; /* PSH, ACK */
		wr16(q + 14, 65535);
		break;
	case P_UDP:
		q = put(p, 8, true);
		wr16(q, UDP_SP);
		wr16(q + 2, UDP_DP);
		break;
	case P_LITE:
		q = put(p, 8, true); /* checksum coverage 0: the whole datagram */
		wr16(q, LITE_SP);
		wr16(q + 2, LITE_DP);
		break;
	case P_SCTP:
		q = put(p, 12, true); /* CRC32c left 0: nobody checks it here */
		wr16(q, SCTP_SP);
		wr16(q + 2, SCTP_DP);
		wr32(q + 4, 0xc0ffee);
		break;
	case P_ICMP:
	case P_ICMP6:
		q = put(p, 8, false);
		q[0] = proto == P_ICMP ? 8 : 128; /* echo request */
		wr16(q + 4, 1);
		wr16(q + 6, 1);
		break;
	case P_GRE:
		q = put(p, 4, false);
		wr16(q + 2, ETH_IP);
		break;
	default:
		p->l4 = -1; /* ESP, no next header: payload only */
		break;
	}
	payload(p, 16);
}

static __u32 sum16(const __u8 *q, size_t n, __u32 s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += q[i] << 8 | q[i + 1];
	if (n & 1)
		s += q[n - 1] << 8;
	return s;
}

static __u16 fold(__u32 s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

static void ip4_csum(struct pkt *p)
{
	__u8 *ip = p->d + p->l3;
	size_t n = (ip[0] & 15) * 4u;

	if (n > p->len - p->l3)
		n = p->len - p->l3;
	ip[10] = ip[11] = 0;
	wr16(ip + 10, fold(sum16(ip, n, 0)));
}

/* Lengths and checksums, once the frame is complete. */
static void finish(struct pkt *p)
{
	__u8 *ip = p->d + p->l3, *q = p->d + p->l4;
	size_t n = p->len - p->l4;
	__u32 s;
	__u16 c;
	int off;

	if (p->l3 < 0)
		return;
	if (p->v6) {
		wr16(ip + 4, p->len - p->l3 - 40);
	} else {
		wr16(ip + 2, p->len - p->l3);
		ip4_csum(p);
	}
	if (p->l4 < 0)
		return;
	switch (p->l4proto) {
	case P_UDP:
		wr16(q + 4, n);
		off = 6;
		break;
	case P_LITE:
		off = 6;
		break;
	case P_TCP:
		off = 16;
		break;
	case P_ICMP6:
		off = 2;
		break;
	case P_ICMP:
		wr16(q + 2, fold(sum16(q, n, 0)));
		return;
	default:
		return; /* SCTP (CRC32c), GRE (optional): left 0 */
	}
	if (p->v6)
		s = sum16(ip + 8, 32, 0) + (n >> 16) + (n & 0xffff) + p->l4proto;
	else
		s = sum16(ip + 12, 8, 0) + n + p->l4proto;
	c = fold(sum16(q, n, s));
	wr16(q + off, c || p->l4proto != P_UDP ? c : 0xffff);
}

/* After a fragment header: the upper layer for offset 0, data otherwise. */
static void after_frag(struct pkt *p, __u8 proto, int field)
{
	if (field & 0xfff8)
		payload(p, 32);
	else
		l4(p, proto);
}

/* Extension headers in the order a chain of n uses them. */
static const __u8 chain[] = { X_HOP, X_DST, X_RT, X_AH, X_DST, X_RT,
			      X_AH,  X_DST, X_RT, X_AH, X_DST, X_RT };

static void exts(struct pkt *p, int n, __u8 last)
{
	int i;

	for (i = 0; i < n; i++)
		ext6(p, chain[i], i + 1 < n ? chain[i + 1] : last, chain[i] == X_AH ? 4 : 0);
}

static void arp_body(struct pkt *p)
{
	__u8 *q = put(p, 28, false);

	wr16(q, 1);
	wr16(q + 2, ETH_IP);
	q[4] = 6;
	q[5] = 4;
	wr16(q + 6, 1); /* request */
	memcpy(q + 8, (const __u8[]){ 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01 }, 6);
	memcpy(q + 14, V4_SRC, 4);
	memcpy(q + 24, V4_DST, 4);
}

/* --- row builders: (frame, a, b) */

typedef void (*build_fn)(struct pkt *p, int a, int b);

/* IPv4, IHL b (0: 5), upper layer a. */
static void f_v4(struct pkt *p, int proto, int ihl)
{
	eth(p, ETH_IP);
	ipv4(p, proto, ihl ? ihl : 5, 0);
	l4(p, proto);
	finish(p);
}

/* An IPv4 header of protocol a and nothing after it. */
static void f_v4_bare(struct pkt *p, int proto, int unused)
{
	(void)unused;
	eth(p, ETH_IP);
	ipv4(p, proto, 5, 0);
	finish(p);
}

/* A full 1514-byte frame (MTU 1500): IPv4 (a = 4) or IPv6, upper layer b. */
static void f_mtu(struct pkt *p, int family, int proto)
{
	eth(p, family == 4 ? ETH_IP : ETH_IP6);
	if (family == 4)
		ipv4(p, proto, 5, 0);
	else
		ipv6(p, proto);
	l4(p, proto);
	payload(p, 1514 - p->len);
	finish(p);
}

/* IPv4 with the flags/fragment offset field b. */
static void f_v4_frag(struct pkt *p, int proto, int frag_off)
{
	eth(p, ETH_IP);
	ipv4(p, proto, 5, frag_off);
	if (frag_off & 0x1fff)
		payload(p, 32); /* a later piece: no upper-layer header */
	else
		l4(p, proto);
	finish(p);
}

static void f_v6(struct pkt *p, int proto, int unused)
{
	(void)unused;
	eth(p, ETH_IP6);
	ipv6(p, proto);
	l4(p, proto);
	finish(p);
}

/* IPv6, a fragment header (field b), upper layer a. */
static void f_v6_frag(struct pkt *p, int proto, int field)
{
	eth(p, ETH_IP6);
	ipv6(p, X_FRAG);
	frag6(p, proto, field);
	after_frag(p, proto, field);
	finish(p);
}

/* IPv6, hop-by-hop, a fragment header (field b), upper layer a. */
static void f_v6_hop_frag(struct pkt *p, int proto, int field)
{
	eth(p, ETH_IP6);
	ipv6(p, X_HOP);
	ext6(p, X_HOP, X_FRAG, 0);
	frag6(p, proto, field);
	after_frag(p, proto, field);
	finish(p);
}

/* IPv6, n extension headers, upper layer b. */
static void f_v6_exts(struct pkt *p, int n, int proto)
{
	eth(p, ETH_IP6);
	ipv6(p, n ? chain[0] : proto);
	exts(p, n, proto);
	l4(p, proto);
	finish(p);
}

/* IPv6, n extension headers, then a fragment header (field b) of UDP. */
static void f_v6_exts_frag(struct pkt *p, int n, int field)
{
	eth(p, ETH_IP6);
	ipv6(p, n ? chain[0] : X_FRAG);
	exts(p, n, X_FRAG);
	frag6(p, P_UDP, field);
	after_frag(p, P_UDP, field);
	finish(p);
}

/* IPv6 with longer extension headers: hop-by-hop 24 B, AH 32 B, dstopts 16 B. */
static void f_v6_long_exts(struct pkt *p, int proto, int unused)
{
	(void)unused;
	eth(p, ETH_IP6);
	ipv6(p, X_HOP);
	ext6(p, X_HOP, X_AH, 2);
	ext6(p, X_AH, X_DST, 6);
	ext6(p, X_DST, proto, 1);
	l4(p, proto);
	finish(p);
}

/* VLAN tag sets, outermost first. */
enum { TAGS_Q, TAGS_AD, TAGS_QINQ, TAGS_QQ, TAGS_ADQQ, TAGS_QQQ };
static const __u16 tagsets[][4] = {
	[TAGS_Q] = { 0x8100 },
	[TAGS_AD] = { 0x88a8 },
	[TAGS_QINQ] = { 0x88a8, 0x8100 },
	[TAGS_QQ] = { 0x8100, 0x8100 },
	[TAGS_ADQQ] = { 0x88a8, 0x8100, 0x8100 },
	[TAGS_QQQ] = { 0x8100, 0x8100, 0x8100 },
};

/* Tags a, then: ETH_IP -> IPv4 UDP, ETH_IP6 -> IPv6 TCP, ETH_ARP -> ARP. */
static void f_vlan(struct pkt *p, int set, int inner)
{
	const __u16 *tags = tagsets[set];
	int n = 0, i;

	while (n < 4 && tags[n])
		n++;
	eth(p, tags[0]);
	for (i = 0; i < n; i++)
		vlan(p, 100 + i, i + 1 < n ? tags[i + 1] : inner);
	if (inner == ETH_IP) {
		ipv4(p, P_UDP, 5, 0);
		l4(p, P_UDP);
	} else if (inner == ETH_IP6) {
		ipv6(p, P_TCP);
		l4(p, P_TCP);
	} else {
		arp_body(p);
	}
	finish(p);
}

static void f_nonip(struct pkt *p, int type, int unused)
{
	static const __u8 lldp[] = {
		0x02, 0x07, 0x04, 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01, /* chassis id */
		0x04, 0x03, 0x07, 'p',	'1',			      /* port id */
		0x06, 0x02, 0x00, 0x78,				      /* ttl 120 */
		0x00, 0x00,					      /* end */
	};
	(void)unused;
	eth(p, type);
	if (type == ETH_ARP)
		arp_body(p);
	else if (type == ETH_LLDP)
		memcpy(put(p, sizeof(lldp), false), lldp, sizeof(lldp));
	else
		payload(p, 46);
}

/* --- broken frames: a valid one, then one field poked */

/* IPv4 UDP with the IHL field set to a (tot_len raised to cover it). */
static void f_v4_ihl(struct pkt *p, int ihl, int unused)
{
	__u8 *ip;

	(void)unused;
	f_v4(p, P_UDP, 5);
	ip = p->d + p->l3;
	ip[0] = 0x40 | ihl;
	if (ihl * 4 > (ip[2] << 8 | ip[3]))
		wr16(ip + 2, ihl * 4);
	ip4_csum(p);
}

/* IPv4 UDP with version a in the IPv4 ethertype. */
static void f_v4_version(struct pkt *p, int version, int unused)
{
	(void)unused;
	f_v4(p, P_UDP, 5);
	p->d[p->l3] = version << 4 | 5;
	ip4_csum(p);
}

/* IPv4 with upper layer a, tot_len b: TCP with 0 is what BIG TCP / GSO
 * packets carry when generic XDP sees them on the host. */
static void f_v4_tso(struct pkt *p, int proto, int tot_len)
{
	f_v4(p, proto, 5);
	wr16(p->d + p->l3 + 2, tot_len);
	ip4_csum(p);
}

/* IPv4 UDP with IHL a and tot_len b. */
static void f_v4_totlen(struct pkt *p, int ihl, int tot_len)
{
	f_v4(p, P_UDP, ihl);
	wr16(p->d + p->l3 + 2, tot_len);
	ip4_csum(p);
}

/* IPv6 UDP with version a in the IPv6 ethertype. */
static void f_v6_version(struct pkt *p, int version, int unused)
{
	(void)unused;
	f_v6(p, P_UDP, 0);
	p->d[p->l3] = version << 4;
}

/* IPv6, one extension header of type a whose length field says 255, UDP. */
static void f_v6_overrun(struct pkt *p, int type, int unused)
{
	(void)unused;
	eth(p, ETH_IP6);
	ipv6(p, type);
	ext6(p, type, P_UDP, type == X_AH ? 4 : 0);
	l4(p, P_UDP);
	finish(p);
	p->d[p->l3 + 40 + 1] = 255;
}

/* ---------------------------------------------------------------- table */

struct row {
	const char *name;
	build_fn build;
	int a, b;
	int parse;	    /* FB_PARSE_* expected */
	int frag;	    /* 1: a non-first fragment (FRAGMENT counted, ports 0) */
	int v6;		    /* the key's address family */
	__u8 proto;	    /* the key's protocol and ports (host order); for malformed */
	__u16 sport, dport; /* rows, what the key would be if they parsed */
};

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

static const struct row rows[] = {
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

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* ---------------------------------------------------------------- keys */

static void v4mapped(__u8 out[16], const __u8 a[4])
{
	memset(out, 0, 16);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, a, 4);
}

/* The 5-tuple key the program should extract from the row's frame. */
static void row_key(const struct row *r, struct fb_key *k)
{
	memset(k, 0, sizeof(*k));
	if (r->v6) {
		memcpy(k->saddr, V6_SRC, 16);
		memcpy(k->daddr, V6_DST, 16);
		k->family = FB_FAMILY_IPV6;
	} else {
		v4mapped(k->saddr, V4_SRC);
		v4mapped(k->daddr, V4_DST);
	}
	k->sport = htons(r->sport);
	k->dport = htons(r->dport);
	k->proto = r->proto;
	k->kind = FB_KIND_FLOW;
}

/* Rules a filter can hold for a row: its 5-tuple, source, destination, or
 * the same of the reverse direction (which must never match). */
enum { R_FLOW = 1, R_SRC = 2, R_DST = 4, R_RFLOW = 8, R_RSRC = 16, R_RDST = 32 };

/* Filter contents each row is run against, the kind that should match a
 * frame that parses (the program probes flow, then src, then dst), and the
 * kind that should match a malformed frame whose addresses were read (no
 * 5-tuple: its ports may be missing). */
static const struct mode {
	const char *name;
	int rules;
	int hit, addr_hit;
} modes[] = {
	{ "empty", 0, 0, 0 },
	{ "flow", R_FLOW, FB_KIND_FLOW, 0 },
	{ "src", R_SRC, FB_KIND_SRC, FB_KIND_SRC },
	{ "dst", R_DST, FB_KIND_DST, FB_KIND_DST },
	{ "reverse flow+src+dst", R_RFLOW | R_RSRC | R_RDST, 0, 0 },
	{ "src+dst", R_SRC | R_DST, FB_KIND_SRC, FB_KIND_SRC },
	{ "flow+src+dst", R_FLOW | R_SRC | R_DST, FB_KIND_FLOW, FB_KIND_SRC },
	{ "reverse flow, src", R_RFLOW | R_SRC, FB_KIND_SRC, FB_KIND_SRC },
	{ "reverse flow+src, dst", R_RFLOW | R_RSRC | R_DST, FB_KIND_DST, FB_KIND_DST },
};

#define NMODES (sizeof(modes) / sizeof(modes[0]))

/* As `flowbloom add` does it: bits, prefix lengths, then the kind flag. */
static void add(struct fb_store *f, const struct fb_key *k)
{
	size_t bad;

	ASSERT_EQ(fb_rules_add(f, k, 1, &bad), 0, "rule added");
}

/* A `src ADDR` or `dst ADDR` rule: the whole address, /128. */
static void addr_key(struct fb_key *k, int kind, const __u8 addr[16], __u8 family)
{
	memset(k, 0, sizeof(*k));
	memcpy(kind == FB_KIND_SRC ? k->saddr : k->daddr, addr, 16);
	k->kind = kind;
	k->plen = 128;
	k->family = family;
}

static void add_addr(struct fb_store *f, int kind, const __u8 addr[16], __u8 family)
{
	struct fb_key k;

	addr_key(&k, kind, addr, family);
	add(f, &k);
}

static void fill_filter(struct fb_store *f, const struct fb_key *flow, int rules)
{
	struct fb_key rev = *flow;

	/* Empty: bits, prefix lengths (block 1) and kinds. */
	memset(&f->blocks[1], 0, ((size_t)f->hdr->nblocks + 1) * FB_BLOCK_BYTES);
	f->hdr->kinds = 0;
	memcpy(rev.saddr, flow->daddr, 16);
	memcpy(rev.daddr, flow->saddr, 16);
	rev.sport = flow->dport;
	rev.dport = flow->sport;
	if (rules & R_FLOW)
		add(f, flow);
	if (rules & R_SRC)
		add_addr(f, FB_KIND_SRC, flow->saddr, flow->family);
	if (rules & R_DST)
		add_addr(f, FB_KIND_DST, flow->daddr, flow->family);
	if (rules & R_RFLOW)
		add(f, &rev);
	if (rules & R_RSRC)
		add_addr(f, FB_KIND_SRC, flow->daddr, flow->family);
	if (rules & R_RDST)
		add_addr(f, FB_KIND_DST, flow->saddr, flow->family);
}

/* ---------------------------------------------------------------- runs */

/* Loaded programs: one per (action, malformed policy, trace) setting. */
struct cfg {
	const char *name;
	__u8 action;
	__u8 malformed; /* enum fb_malformed */
	bool trace;
};

static const struct cfg cfgs[] = {
	{ "drop", FB_ACTION_DROP, FB_MALFORMED_DEFAULT, false },
	{ "allow", FB_ACTION_ALLOW, FB_MALFORMED_DEFAULT, false },
	{ "monitor", FB_ACTION_MONITOR, FB_MALFORMED_DEFAULT, false },
	{ "drop+mpass", FB_ACTION_DROP, FB_MALFORMED_PASS, false },
	{ "allow+mpass", FB_ACTION_ALLOW, FB_MALFORMED_PASS, false },
	{ "monitor+mdrop", FB_ACTION_MONITOR, FB_MALFORMED_DROP, false },
	{ "drop+mdrop", FB_ACTION_DROP, FB_MALFORMED_DROP, false },
	/* The filter's own action (created with drop), trace record on: the
	 * defaults an `ip link`-loaded object has. */
	{ "default+trace", FB_ACTION_DEFAULT, FB_MALFORMED_DEFAULT, true },
};

#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))
enum { C_DROP = 0, C_DROP_MPASS = 3, C_TRACE = 7 };

struct expect {
	int parse, frag;
	int addrs;	   /* malformed, but the fixed IP header (addresses) was read */
	int kind;	   /* the rule kind that matches, 0: none */
	struct fb_key key; /* what the trace record must hold when parse is OK */
};

static const char *const stat_name[FB_STAT_SLOTS] = {
	"SEEN",	     "MATCHED",	 "DROPPED", "PASSED",  "NONIP",	   "FRAGMENT",
	"MALFORMED", "HIT_FLOW", "HIT_SRC", "HIT_DST", "NOFILTER",
};

static int aborted_runs;

static int read_stats(int fd, struct fb_stats *out)
{
	int ncpu = libbpf_num_possible_cpus(), c, i, err;
	struct fb_stats *per = calloc(ncpu > 0 ? ncpu : 1, sizeof(*per));
	__u32 zero = 0;

	memset(out, 0, sizeof(*out));
	if (!per || ncpu < 1) {
		free(per);
		return -1;
	}
	err = bpf_map_lookup_elem(fd, &zero, per);
	for (c = 0; !err && c < ncpu; c++)
		for (i = 0; i < FB_STAT_SLOTS; i++) {
			out->c[i].packets += per[c].c[i].packets;
			out->c[i].bytes += per[c].c[i].bytes;
		}
	free(per);
	return err;
}

static void bump(struct fb_stats *s, int stat, __u64 bytes)
{
	s->c[stat].packets++;
	s->c[stat].bytes += bytes;
}

/* The documented policy, spelled out here rather than taken from the
 * program's header: what no rule decides of a malformed frame is dropped
 * unless said otherwise, or the action is monitor. */
static __u32 want_verdict(const struct expect *e, __u8 action, __u8 malformed)
{
	if (e->parse == FB_PARSE_NONIP)
		return XDP_PASS;
	if (e->parse == FB_PARSE_MALFORMED && !e->kind) {
		if (malformed == FB_MALFORMED_PASS)
			return XDP_PASS;
		if (malformed == FB_MALFORMED_DROP)
			return XDP_DROP;
		return action == FB_ACTION_MONITOR ? XDP_PASS : XDP_DROP;
	}
	if (action == FB_ACTION_MONITOR)
		return XDP_PASS;
	if (action == FB_ACTION_ALLOW)
		return e->kind ? XDP_PASS : XDP_DROP;
	return e->kind ? XDP_DROP : XDP_PASS;
}

static void want_stats(const struct expect *e, __u32 verdict, __u64 bytes, struct fb_stats *w)
{
	memset(w, 0, sizeof(*w));
	bump(w, FB_STAT_SEEN, bytes);
	if (e->parse == FB_PARSE_NONIP) {
		bump(w, FB_STAT_NONIP, bytes);
	} else if (e->parse == FB_PARSE_MALFORMED) {
		bump(w, FB_STAT_MALFORMED, bytes);
		if (e->kind) {
			bump(w, FB_STAT_MATCHED, bytes);
			bump(w, FB_STAT_HIT_FLOW + e->kind - FB_KIND_FLOW, bytes);
		}
	} else {
		if (e->frag)
			bump(w, FB_STAT_FRAGMENT, bytes);
		if (e->kind) {
			bump(w, FB_STAT_MATCHED, bytes);
			bump(w, FB_STAT_HIT_FLOW + e->kind - FB_KIND_FLOW, bytes);
		}
	}
	bump(w, verdict == XDP_DROP ? FB_STAT_DROPPED : FB_STAT_PASSED, bytes);
}

/* after - before must equal want, every slot, packets and bytes. */
static void check_stats(const char *label, const struct fb_stats *before,
			const struct fb_stats *after, const struct fb_stats *want)
{
	char detail[512] = "";
	size_t n = 0;
	int i;

	for (i = 0; i < FB_STAT_SLOTS; i++) {
		__u64 dp = after->c[i].packets - before->c[i].packets;
		__u64 db = after->c[i].bytes - before->c[i].bytes;

		if (dp == want->c[i].packets && db == want->c[i].bytes)
			continue;
		if (n < sizeof(detail))
			n += snprintf(detail + n, sizeof(detail) - n,
				      "%s%s +%llu pkts/+%llu B, want +%llu/+%llu", n ? "; " : "",
				      stat_name[i] ? stat_name[i] : "slot", (unsigned long long)dp,
				      (unsigned long long)db,
				      (unsigned long long)want->c[i].packets,
				      (unsigned long long)want->c[i].bytes);
	}
	test_check(!n, label, detail);
}

static const char *lab(char *buf, size_t len, const char *base, const char *what)
{
	snprintf(buf, len, "%s: %s", base, what);
	return buf;
}

/* A traced key: its 5-tuple as FLOW text (whatever kind matched), then the rest. */
static void key_text(const struct fb_key *k, char *buf, size_t len)
{
	struct fb_key tuple = *k;
	char flow[FB_FLOW_STR];

	tuple.kind = FB_KIND_FLOW;
	fb_flow_format(&tuple, flow, sizeof(flow));
	snprintf(buf, len, "'%s' kind %u plen %u family %u", flow, k->kind, k->plen, k->family);
}

/* Run one frame through one loaded program and check everything observable. */
static void check_run(const char *base, struct flowbloom_bpf *s, const struct cfg *c,
		      const __u8 *data, size_t len, const struct expect *e)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = data, .data_size_in = len, .repeat = 1);
	__u8 action = c->action ? c->action : FB_ACTION_DROP; /* the filter's own */
	int stats_fd = bpf_map__fd(s->maps.fb_stats), trace_fd = bpf_map__fd(s->maps.fb_trace);
	struct fb_stats before, after, want;
	struct fb_trace tr;
	__u32 zero = 0, verdict = want_verdict(e, action, c->malformed);
	char l[512], d[384];
	int err;

	ASSERT_EQ(read_stats(stats_fd, &before), 0, lab(l, sizeof(l), base, "read stats"));
	if (c->trace) {
		memset(&tr, 0xa5, sizeof(tr)); /* a stale record cannot pass */
		bpf_map_update_elem(trace_fd, &zero, &tr, BPF_ANY);
	}
	err = bpf_prog_test_run_opts(bpf_program__fd(s->progs.flowbloom), &t);
	if (!ASSERT_EQ(err, 0, lab(l, sizeof(l), base, "test_run")))
		return;
	if (t.retval == XDP_ABORTED)
		aborted_runs++;
	ASSERT_EQ(t.retval, verdict, lab(l, sizeof(l), base, "verdict"));

	read_stats(stats_fd, &after);
	want_stats(e, verdict, len, &want);
	check_stats(lab(l, sizeof(l), base, "counters"), &before, &after, &want);

	if (!c->trace)
		return;
	ASSERT_EQ(bpf_map_lookup_elem(trace_fd, &zero, &tr), 0,
		  lab(l, sizeof(l), base, "read trace"));
	snprintf(d, sizeof(d), "parse %u fragment %u kind %u verdict %u, want %d %d %d %u",
		 tr.parse, tr.fragment, tr.kind, tr.verdict, e->parse, e->frag, e->kind, t.retval);
	test_check(tr.parse == (__u32)e->parse && tr.fragment == (__u32)e->frag &&
			   tr.kind == (__u32)e->kind && tr.verdict == t.retval,
		   lab(l, sizeof(l), base, "trace record"), d);
	if (e->parse == FB_PARSE_OK) {
		struct fb_key k = e->key;
		char got[160], wnt[160];

		k.kind = e->kind ? e->kind : FB_KIND_FLOW;
		key_text(&tr.key, got, sizeof(got));
		key_text(&k, wnt, sizeof(wnt));
		snprintf(d, sizeof(d), "got %s, want %s", got, wnt);
		test_check(!memcmp(&tr.key, &k, sizeof(k)), lab(l, sizeof(l), base, "trace key"),
			   d);
	} else if (e->parse == FB_PARSE_NONIP || !e->addrs) {
		static const struct fb_key none;

		test_check(!memcmp(&tr.key, &none, sizeof(none)),
			   lab(l, sizeof(l), base, "trace key all zero"), NULL);
	} else {
		char got[160], wnt[160];

		/* Malformed with its addresses read: those and the family. */
		key_text(&tr.key, got, sizeof(got));
		key_text(&e->key, wnt, sizeof(wnt));
		snprintf(d, sizeof(d), "got %s, want its addresses from %s", got, wnt);
		test_check(!memcmp(tr.key.saddr, e->key.saddr, 32) &&
				   tr.key.family == e->key.family,
			   lab(l, sizeof(l), base, "trace key addresses"), d);
	}
}

/* Frames below the Ethernet header: test_run must refuse them. */
static void check_too_short(const char *base, struct flowbloom_bpf *s, const __u8 *data)
{
	char l[512], d[160] = "";
	size_t len;
	int bad = 0;

	for (len = 0; len < 14; len++) {
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = data, .data_size_in = len,
			    .repeat = 1);
		int err = bpf_prog_test_run_opts(bpf_program__fd(s->progs.flowbloom), &t);

		if (err != -EINVAL && !bad++)
			snprintf(d, sizeof(d), "%zu bytes: err %d retval %u, want -EINVAL", len,
				 err, t.retval);
	}
	test_check(!bad, lab(l, sizeof(l), base, "0..13 bytes refused with EINVAL"), d);
}

/* ---------------------------------------------------------------- main */

/* Flows of the plain rows, for checks outside the table. */
static const struct row udp4 = { .v6 = 0, .proto = P_UDP, .sport = UDP_SP, .dport = UDP_DP };
static const struct row tcp6 = { .v6 = 1, .proto = P_TCP, .sport = TCP_SP, .dport = TCP_DP };

/* The keys this test puts in filters are the ones `flowbloom add` builds. */
static void check_key_syntax(void)
{
	char *flow4[] = { "udp", "198.51.100.1:40000", "203.0.113.7:53" };
	char *flow6[] = { "tcp", "[2001:db8::1]:51000", "[2001:db8:0:1::2]:443" };
	char *src4[] = { "src", "198.51.100.1" }, *dst6[] = { "dst", "2001:db8:0:1::2" };
	struct fb_key got, want, v4;
	char err[128];

	row_key(&udp4, &want);
	ASSERT_EQ(fb_flow_parse(3, flow4, &got, err, sizeof(err)), 3, "parse udp flow text");
	ASSERT_TRUE(!memcmp(&got, &want, sizeof(got)), "IPv4 5-tuple key as `add` builds it");
	row_key(&tcp6, &want);
	ASSERT_EQ(fb_flow_parse(3, flow6, &got, err, sizeof(err)), 3, "parse tcp flow text");
	ASSERT_TRUE(!memcmp(&got, &want, sizeof(got)), "IPv6 5-tuple key as `add` builds it");
	row_key(&udp4, &v4);
	addr_key(&want, FB_KIND_SRC, v4.saddr, FB_FAMILY_IPV4);
	ASSERT_EQ(fb_flow_parse(2, src4, &got, err, sizeof(err)), 2, "parse src rule text");
	ASSERT_TRUE(!memcmp(&got, &want, sizeof(got)), "src key as `add` builds it");
	addr_key(&want, FB_KIND_DST, V6_DST, FB_FAMILY_IPV6);
	ASSERT_EQ(fb_flow_parse(2, dst6, &got, err, sizeof(err)), 2, "parse dst rule text");
	ASSERT_TRUE(!memcmp(&got, &want, sizeof(got)), "dst key as `add` builds it");
}

/* Did the parser read the addresses of the first len bytes of the row's
 * frame? Once the fixed IPv4 or IPv6 header is in, yes; never past a third
 * VLAN tag (the IP header is not found). */
static int addrs_read(const struct row *r, const struct pkt *p, size_t len)
{
	if (r->build == f_vlan && (r->a == TAGS_ADQQ || r->a == TAGS_QQQ))
		return 0;
	return p->l3 >= 0 && len >= (size_t)p->l3 + (p->v6 ? 40 : 20);
}

static void run_table(const char *layout, struct fb_store *f, struct flowbloom_bpf **skel)
{
	char base[256];
	size_t i, c, m, len;

	for (i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		struct expect e = { .parse = r->parse, .frag = r->frag };
		struct pkt p;

		pkt_init(&p);
		r->build(&p, r->a, r->b);
		row_key(r, &e.key);
		e.addrs = r->parse == FB_PARSE_MALFORMED && addrs_read(r, &p, p.len);
		for (m = 0; m < NMODES; m++) {
			fill_filter(f, &e.key, modes[m].rules);
			e.kind = r->parse == FB_PARSE_OK ? modes[m].hit
				 : e.addrs		 ? modes[m].addr_hit
							 : 0;
			for (c = 0; c < NCFG; c++) {
				snprintf(base, sizeof(base), "%s %s filter=%s: %s (%zu B)", layout,
					 cfgs[c].name, modes[m].name, r->name, p.len);
				check_run(base, skel[c], &cfgs[c], p.d, p.len, &e);
			}
		}
	}

	/* Every frame that parses, cut at every length inside its headers and at
	 * a few in its payload, against a filter holding its own 5-tuple and
	 * its source: a frame cut after its IP header still meets the source
	 * rule (a truncated TCP header must not carry a blocked source past). */
	for (i = 0; i < NROWS; i++) {
		static const int cut_cfgs[] = { C_DROP, C_DROP_MPASS, C_TRACE };
		const struct row *r = &rows[i];
		struct expect e;
		struct pkt p;

		if (r->parse == FB_PARSE_MALFORMED)
			continue;
		pkt_init(&p);
		r->build(&p, r->a, r->b);
		row_key(r, &e.key);
		fill_filter(f, &e.key, R_FLOW | R_SRC);
		snprintf(base, sizeof(base), "%s: %s", layout, r->name);
		check_too_short(base, skel[C_DROP], p.d);
		for (len = 14; len < p.len; len++) {
			if (len > p.need + 8 && len != p.len - 1)
				continue; /* enough payload cuts */
			e.parse = len < p.need ? FB_PARSE_MALFORMED : r->parse;
			e.frag = e.parse == FB_PARSE_OK ? r->frag : 0;
			e.addrs = e.parse == FB_PARSE_MALFORMED && addrs_read(r, &p, len);
			e.kind = e.parse == FB_PARSE_OK ? FB_KIND_FLOW : e.addrs ? FB_KIND_SRC : 0;
			for (c = 0; c < sizeof(cut_cfgs) / sizeof(cut_cfgs[0]); c++) {
				snprintf(base, sizeof(base), "%s %s cut %zu/%zu (%s): %s", layout,
					 cfgs[cut_cfgs[c]].name, len, p.len,
					 len < p.need ? "header" : "payload", r->name);
				check_run(base, skel[cut_cfgs[c]], &cfgs[cut_cfgs[c]], p.d, len,
					  &e);
			}
		}
	}
}

/* Stats: private maps leave the filter's alone; shared ones count there. */
static void check_shared_stats(const char *layout, struct fb_store *f)
{
	struct fb_load_opts o = { .action = FB_ACTION_DROP };
	struct expect e = { .parse = FB_PARSE_OK, .kind = FB_KIND_FLOW };
	struct fb_stats before, after, want, zero = {};
	LIBBPF_OPTS(bpf_test_run_opts, t, .repeat = 1);
	struct flowbloom_bpf *s;
	char l[256];
	struct pkt p;

	pkt_init(&p);
	f_v4(&p, P_UDP, 5);
	row_key(&udp4, &e.key);
	fill_filter(f, &e.key, R_FLOW);
	ASSERT_EQ(fb_stats_read(f, &before), 0, "read the filter's stats");
	snprintf(l, sizeof(l), "%s: private-stats programs left the filter's counters at 0",
		 layout);
	check_stats(l, &zero, &before, &zero);

	s = fb_load(f, &o);
	snprintf(l, sizeof(l), "%s: load with the filter's stats map", layout);
	if (!ASSERT_TRUE(s, l))
		return;
	t.data_in = p.d;
	t.data_size_in = p.len;
	ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(s->progs.flowbloom), &t), 0,
		  "test_run (shared stats)");
	snprintf(l, sizeof(l), "%s shared stats: verdict", layout);
	ASSERT_EQ(t.retval, XDP_DROP, l);
	fb_stats_read(f, &after);
	want_stats(&e, XDP_DROP, p.len, &want);
	snprintf(l, sizeof(l), "%s shared stats: the filter's counters", layout);
	check_stats(l, &before, &after, &want);
	flowbloom_bpf__destroy(s);
}

static void run_layout(const char *name, __u8 layout)
{
	struct fb_create_opts co = {
		.nblocks = 1024,
		.k = 7,
		.layout = layout,
		.hash = FB_HASH_SIPHASH13,
		.action = FB_ACTION_DROP,
	};
	struct flowbloom_bpf *skel[NCFG] = {};
	struct fb_store f = { .dir_fd = -1, .outer_fd = -1, .bits_fd = -1, .stats_fd = -1 };
	char l[256];
	bool ok = true;
	size_t c;

	snprintf(l, sizeof(l), "create the %s filter", name);
	if (!ASSERT_EQ(fb_store_create(name, &co), 0, l))
		return;
	snprintf(l, sizeof(l), "open the %s filter", name);
	if (!ASSERT_EQ(fb_store_open(name, &f), 0, l))
		goto destroy;
	for (c = 0; c < NCFG; c++) {
		struct fb_load_opts o = {
			.action = cfgs[c].action,
			.malformed = cfgs[c].malformed,
			.trace = cfgs[c].trace,
			.private_stats = true,
		};

		skel[c] = fb_load(&f, &o);
		snprintf(l, sizeof(l), "%s: load the %s program", name, cfgs[c].name);
		ok &= ASSERT_TRUE(skel[c], l);
	}
	if (ok) {
		run_table(name, &f, skel);
		check_shared_stats(name, &f);
	}
	for (c = 0; c < NCFG; c++)
		if (skel[c])
			flowbloom_bpf__destroy(skel[c]);
	fb_store_close(&f);
destroy:
	snprintf(l, sizeof(l), "destroy the %s filter", name);
	ASSERT_EQ(fb_store_destroy(name), 0, l);
}

/* No filter in the outer map: fail open, malformed packets too unless the
 * attachment says --malformed drop (whatever its action). */
static void check_no_filter(__u8 malformed)
{
	struct fb_load_opts o = { .action = FB_ACTION_ALLOW, .malformed = malformed };
	struct flowbloom_bpf *s = fb_load(NULL, &o);
	struct fb_stats before, after, want;
	__u32 mverdict = malformed == FB_MALFORMED_DROP ? XDP_DROP : XDP_PASS;
	struct pkt good, bad;
	char l[128];
	int fd;

	if (!ASSERT_TRUE(s, "load without a filter"))
		return;
	fd = bpf_map__fd(s->maps.fb_stats);
	pkt_init(&good);
	f_v4(&good, P_UDP, 5);
	pkt_init(&bad);
	f_v4_ihl(&bad, 4, 0);
	{
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = good.d, .data_size_in = good.len,
			    .repeat = 1);

		read_stats(fd, &before);
		ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(s->progs.flowbloom), &t), 0,
			  "no filter: test_run");
		ASSERT_EQ(t.retval, XDP_PASS, "no filter, action allow: IPv4 UDP passes");
		read_stats(fd, &after);
		memset(&want, 0, sizeof(want));
		bump(&want, FB_STAT_SEEN, good.len);
		bump(&want, FB_STAT_NOFILTER, good.len);
		bump(&want, FB_STAT_PASSED, good.len);
		check_stats("no filter: counters (NOFILTER)", &before, &after, &want);
	}
	{
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = bad.d, .data_size_in = bad.len,
			    .repeat = 1);

		read_stats(fd, &before);
		ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(s->progs.flowbloom), &t), 0,
			  "no filter: test_run malformed");
		snprintf(l, sizeof(l), "no filter, action allow, --malformed %s: IHL 4 %s",
			 malformed == FB_MALFORMED_DROP ? "drop" : "(default)",
			 mverdict == XDP_DROP ? "dropped" : "passes");
		ASSERT_EQ(t.retval, mverdict, l);
		read_stats(fd, &after);
		memset(&want, 0, sizeof(want));
		bump(&want, FB_STAT_SEEN, bad.len);
		bump(&want, FB_STAT_MALFORMED, bad.len);
		bump(&want, mverdict == XDP_DROP ? FB_STAT_DROPPED : FB_STAT_PASSED, bad.len);
		check_stats("no filter: counters (MALFORMED)", &before, &after, &want);
	}
	flowbloom_bpf__destroy(s);
}

int main(void)
{
	char root[128];

	snprintf(root, sizeof(root), "/sys/fs/bpf/fbtest_verdict_%d", (int)getpid());
	setenv("FLOWBLOOM_ROOT", root, 1);
	fb_libbpf_logging(false);

	check_key_syntax();
	run_layout("verdict-blocked", FB_LAYOUT_BLOCKED);
	run_layout("verdict-classic", FB_LAYOUT_CLASSIC);
	check_no_filter(FB_MALFORMED_DROP);
	check_no_filter(FB_MALFORMED_DEFAULT);

	ASSERT_EQ(aborted_runs, 0, "no frame ever got XDP_ABORTED");
	ASSERT_TRUE(access(root, F_OK) != 0, "nothing left under FLOWBLOOM_ROOT");
	return test_summary();
}
