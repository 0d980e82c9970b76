// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_verdict's frames: the addresses, upper layers and extension-header
 * chains of the table's rows, one builder per row shape, and the broken frames
 * (a valid one, one field poked).
 */
#include "verdict.h"

const __u8 V4_SRC[4] = { 198, 51, 100, 1 };
const __u8 V4_DST[4] = { 203, 0, 113, 7 };
const __u8 V6_SRC[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
const __u8 V6_DST[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2 };

/* ---------------------------------------------------------------- frames */

/* The frame pieces are tests/lib/packet.c's; what follows is this table's:
 * its ports, the extension-header chains, the row builders. */

/* The upper-layer header of proto (only the ported ones are parsed), then
 * 16 bytes of payload. */
static void l4(struct pkt *p, __u8 proto)
{
	__u8 *q;

	p->l4 = p->len;
	p->l4proto = proto;
	switch (proto) {
	case P_TCP:
		q = pkt_put(p, 20, true);
		pkt_wr16(q, TCP_SP);
		pkt_wr16(q + 2, TCP_DP);
		pkt_wr32(q + 4, 1000);
		pkt_wr32(q + 8, 2000);
		q[12] = 5 << 4;
		q[13] = 0x18; /* PSH, ACK */
		pkt_wr16(q + 14, 65535);
		break;
	case P_UDP:
		q = pkt_put(p, 8, true);
		pkt_wr16(q, UDP_SP);
		pkt_wr16(q + 2, UDP_DP);
		break;
	case P_LITE:
		q = pkt_put(p, 8, true); /* checksum coverage 0: the whole datagram */
		pkt_wr16(q, LITE_SP);
		pkt_wr16(q + 2, LITE_DP);
		break;
	case P_SCTP:
		q = pkt_put(p, 12, true); /* CRC32c left 0: nobody checks it here */
		pkt_wr16(q, SCTP_SP);
		pkt_wr16(q + 2, SCTP_DP);
		pkt_wr32(q + 4, 0xc0ffee);
		break;
	case P_ICMP:
	case P_ICMP6:
		q = pkt_put(p, 8, false);
		q[0] = proto == P_ICMP ? 8 : 128; /* echo request */
		pkt_wr16(q + 4, 1);
		pkt_wr16(q + 6, 1);
		break;
	case P_GRE:
		q = pkt_put(p, 4, false);
		pkt_wr16(q + 2, ETH_IP);
		break;
	default:
		p->l4 = -1; /* ESP, no next header: payload only */
		break;
	}
	pkt_payload(p, 16);
}

/* After a fragment header: the upper layer for offset 0, data otherwise. */
static void after_frag(struct pkt *p, __u8 proto, int field)
{
	if (field & 0xfff8)
		pkt_payload(p, 32);
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
		pkt_ext6(p, chain[i], i + 1 < n ? chain[i + 1] : last, chain[i] == X_AH ? 4 : 0);
}

static void arp_body(struct pkt *p)
{
	__u8 *q = pkt_put(p, 28, false);

	pkt_wr16(q, 1);
	pkt_wr16(q + 2, ETH_IP);
	q[4] = 6;
	q[5] = 4;
	pkt_wr16(q + 6, 1); /* request */
	memcpy(q + 8, (const __u8[]){ 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01 }, 6);
	memcpy(q + 14, V4_SRC, 4);
	memcpy(q + 24, V4_DST, 4);
}

/* --- row builders: (frame, a, b) */

/* IPv4, IHL b (0: 5), upper layer a. */
void f_v4(struct pkt *p, int proto, int ihl)
{
	pkt_eth(p, ETH_IP);
	pkt_ipv4(p, proto, ihl ? ihl : 5, 0, V4_SRC, V4_DST);
	l4(p, proto);
	pkt_finish(p);
}

/* An IPv4 header of protocol a and nothing after it. */
void f_v4_bare(struct pkt *p, int proto, int unused)
{
	(void)unused;
	pkt_eth(p, ETH_IP);
	pkt_ipv4(p, proto, 5, 0, V4_SRC, V4_DST);
	pkt_finish(p);
}

/* A full 1514-byte frame (MTU 1500): IPv4 (a = 4) or IPv6, upper layer b. */
void f_mtu(struct pkt *p, int family, int proto)
{
	pkt_eth(p, family == 4 ? ETH_IP : ETH_IP6);
	if (family == 4)
		pkt_ipv4(p, proto, 5, 0, V4_SRC, V4_DST);
	else
		pkt_ipv6(p, proto, V6_SRC, V6_DST);
	l4(p, proto);
	pkt_payload(p, 1514 - p->len);
	pkt_finish(p);
}

/* IPv4 with the flags/fragment offset field b. */
void f_v4_frag(struct pkt *p, int proto, int frag_off)
{
	pkt_eth(p, ETH_IP);
	pkt_ipv4(p, proto, 5, frag_off, V4_SRC, V4_DST);
	if (frag_off & 0x1fff)
		pkt_payload(p, 32); /* a later piece: no upper-layer header */
	else
		l4(p, proto);
	pkt_finish(p);
}

void f_v6(struct pkt *p, int proto, int unused)
{
	(void)unused;
	pkt_eth(p, ETH_IP6);
	pkt_ipv6(p, proto, V6_SRC, V6_DST);
	l4(p, proto);
	pkt_finish(p);
}

/* IPv6, a fragment header (field b), upper layer a. */
void f_v6_frag(struct pkt *p, int proto, int field)
{
	pkt_eth(p, ETH_IP6);
	pkt_ipv6(p, X_FRAG, V6_SRC, V6_DST);
	pkt_frag6(p, proto, field);
	after_frag(p, proto, field);
	pkt_finish(p);
}

/* IPv6, hop-by-hop, a fragment header (field b), upper layer a. */
void f_v6_hop_frag(struct pkt *p, int proto, int field)
{
	pkt_eth(p, ETH_IP6);
	pkt_ipv6(p, X_HOP, V6_SRC, V6_DST);
	pkt_ext6(p, X_HOP, X_FRAG, 0);
	pkt_frag6(p, proto, field);
	after_frag(p, proto, field);
	pkt_finish(p);
}

/* IPv6, n extension headers, upper layer b. */
void f_v6_exts(struct pkt *p, int n, int proto)
{
	pkt_eth(p, ETH_IP6);
	pkt_ipv6(p, n ? chain[0] : proto, V6_SRC, V6_DST);
	exts(p, n, proto);
	l4(p, proto);
	pkt_finish(p);
}

/* IPv6, n extension headers, then a fragment header (field b) of UDP. */
void f_v6_exts_frag(struct pkt *p, int n, int field)
{
	pkt_eth(p, ETH_IP6);
	pkt_ipv6(p, n ? chain[0] : X_FRAG, V6_SRC, V6_DST);
	exts(p, n, X_FRAG);
	pkt_frag6(p, P_UDP, field);
	after_frag(p, P_UDP, field);
	pkt_finish(p);
}

/* IPv6, a fragment header (field b) whose next header is extension header
 * a: the datagram's fragmentable part starts with it, then UDP. A later
 * fragment holds neither: its protocol is in the first. */
void f_v6_frag_ext(struct pkt *p, int ext, int field)
{
	pkt_eth(p, ETH_IP6);
	pkt_ipv6(p, X_FRAG, V6_SRC, V6_DST);
	pkt_frag6(p, ext, field);
	if (!(field & 0xfff8))
		pkt_ext6(p, ext, P_UDP, ext == X_AH ? 4 : 0);
	after_frag(p, P_UDP, field);
	pkt_finish(p);
}

/* IPv6 with longer extension headers: hop-by-hop 24 B, AH 32 B, dstopts 16 B. */
void f_v6_long_exts(struct pkt *p, int proto, int unused)
{
	(void)unused;
	pkt_eth(p, ETH_IP6);
	pkt_ipv6(p, X_HOP, V6_SRC, V6_DST);
	pkt_ext6(p, X_HOP, X_AH, 2);
	pkt_ext6(p, X_AH, X_DST, 6);
	pkt_ext6(p, X_DST, proto, 1);
	l4(p, proto);
	pkt_finish(p);
}

static const __u16 tagsets[][4] = {
	[TAGS_Q] = { 0x8100 },
	[TAGS_AD] = { 0x88a8 },
	[TAGS_QINQ] = { 0x88a8, 0x8100 },
	[TAGS_QQ] = { 0x8100, 0x8100 },
	[TAGS_ADQQ] = { 0x88a8, 0x8100, 0x8100 },
	[TAGS_QQQ] = { 0x8100, 0x8100, 0x8100 },
};

/* Tags a, then: ETH_IP -> IPv4 UDP, ETH_IP6 -> IPv6 TCP, ETH_ARP -> ARP. */
void f_vlan(struct pkt *p, int set, int inner)
{
	const __u16 *tags = tagsets[set];
	int n = 0, i;

	while (n < 4 && tags[n])
		n++;
	pkt_eth(p, tags[0]);
	for (i = 0; i < n; i++)
		pkt_vlan(p, 100 + i, i + 1 < n ? tags[i + 1] : inner);
	if (inner == ETH_IP) {
		pkt_ipv4(p, P_UDP, 5, 0, V4_SRC, V4_DST);
		l4(p, P_UDP);
	} else if (inner == ETH_IP6) {
		pkt_ipv6(p, P_TCP, V6_SRC, V6_DST);
		l4(p, P_TCP);
	} else {
		arp_body(p);
	}
	pkt_finish(p);
}

void f_nonip(struct pkt *p, int type, int unused)
{
	static const __u8 lldp[] = {
		0x02, 0x07, 0x04, 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01, /* chassis id */
		0x04, 0x03, 0x07, 'p',	'1',			      /* port id */
		0x06, 0x02, 0x00, 0x78,				      /* ttl 120 */
		0x00, 0x00,					      /* end */
	};
	(void)unused;
	pkt_eth(p, type);
	if (type == ETH_ARP)
		arp_body(p);
	else if (type == ETH_LLDP)
		memcpy(pkt_put(p, sizeof(lldp), false), lldp, sizeof(lldp));
	else
		pkt_payload(p, 46);
}

/* --- broken frames: a valid one, then one field poked */

/* IPv4 UDP with the IHL field set to a (tot_len raised to cover it). */
void f_v4_ihl(struct pkt *p, int ihl, int unused)
{
	__u8 *ip;

	(void)unused;
	f_v4(p, P_UDP, 5);
	ip = p->d + p->l3;
	ip[0] = 0x40 | ihl;
	if (ihl * 4 > (ip[2] << 8 | ip[3]))
		pkt_wr16(ip + 2, ihl * 4);
	pkt_ip4_csum(p);
}

/* IPv4 UDP with version a in the IPv4 ethertype. */
void f_v4_version(struct pkt *p, int version, int unused)
{
	(void)unused;
	f_v4(p, P_UDP, 5);
	p->d[p->l3] = version << 4 | 5;
	pkt_ip4_csum(p);
}

/* IPv4 with upper layer a, tot_len b: TCP with 0 is what BIG TCP / GSO
 * packets carry when generic XDP sees them on the host. */
void f_v4_tso(struct pkt *p, int proto, int tot_len)
{
	f_v4(p, proto, 5);
	pkt_wr16(p->d + p->l3 + 2, tot_len);
	pkt_ip4_csum(p);
}

/* IPv4 UDP with IHL a and tot_len b. */
void f_v4_totlen(struct pkt *p, int ihl, int tot_len)
{
	f_v4(p, P_UDP, ihl);
	pkt_wr16(p->d + p->l3 + 2, tot_len);
	pkt_ip4_csum(p);
}

/* IPv6 UDP with version a in the IPv6 ethertype. */
void f_v6_version(struct pkt *p, int version, int unused)
{
	(void)unused;
	f_v6(p, P_UDP, 0);
	p->d[p->l3] = version << 4;
}

/* IPv6, one extension header of type a whose length field says 255, UDP. */
void f_v6_overrun(struct pkt *p, int type, int unused)
{
	(void)unused;
	pkt_eth(p, ETH_IP6);
	pkt_ipv6(p, type, V6_SRC, V6_DST);
	pkt_ext6(p, type, P_UDP, type == X_AH ? 4 : 0);
	l4(p, P_UDP);
	pkt_finish(p);
	p->d[p->l3 + 40 + 1] = 255;
}
