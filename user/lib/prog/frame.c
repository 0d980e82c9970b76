// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One packet of a flow as a frame (see frame.h). Checksums: the Internet
 * checksum of RFC 1071 (TCP, UDP, UDP-Lite and ICMPv6 over the pseudo-header
 * of RFC 793 / RFC 8200 section 8.1; ICMP over its message alone); SCTP's
 * CRC32c (RFC 9260 appendix A: reflected Castagnoli polynomial, stored in
 * the byte order the RFC's sample code gives).
 */
#include <stdbool.h>
#include <string.h>
#include "flowbloom/proto.h"
#include "prog/frame.h"

#define ETH_HLEN 14
#define IPPROTO_ICMP_ 1
#define IPPROTO_ICMPV6_ 58

static void wr16(__u8 *q, unsigned v)
{
	q[0] = v >> 8;
	q[1] = v;
}

static void wr32(__u8 *q, __u32 v)
{
	wr16(q, v >> 16);
	wr16(q + 2, v);
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

static __u32 crc32c(const __u8 *q, size_t n)
{
	__u32 c = ~0U;
	size_t i;
	int b;

	for (i = 0; i < n; i++) {
		c ^= q[i];
		for (b = 0; b < 8; b++)
			c = c >> 1 ^ (0x82f63b78U & -(c & 1));
	}
	return ~c;
}

/* The upper-layer header and payload at q; its length. */
static size_t l4(const struct fb_key *k, __u8 *q)
{
	size_t i;

	switch (k->proto) {
	case FB_IPPROTO_TCP:
		memcpy(q, &k->sport, 2);
		memcpy(q + 2, &k->dport, 2);
		wr32(q + 4, 0x0db80001); /* sequence number */
		q[12] = 5 << 4;		 /* data offset: 20 bytes, no options */
		q[13] = 0x02;		 /* SYN */
		wr16(q + 14, 64240);	 /* window */
		return 20;
	case FB_IPPROTO_UDP:
	case FB_IPPROTO_UDPLITE:
		memcpy(q, &k->sport, 2);
		memcpy(q + 2, &k->dport, 2);
		/* UDP: the length; UDP-Lite: checksum coverage 16, all of it. */
		wr16(q + 4, 16);
		for (i = 8; i < 16; i++)
			q[i] = 0xa0 + i;
		return 16;
	case FB_IPPROTO_SCTP:
		memcpy(q, &k->sport, 2);
		memcpy(q + 2, &k->dport, 2);
		/* verification tag 0 (an INIT's), then the INIT chunk */
		q[12] = 1;
		wr16(q + 14, 20);
		wr32(q + 16, 0x0db80001); /* initiate tag */
		wr32(q + 20, 65536);	  /* a_rwnd */
		wr16(q + 24, 1);	  /* outbound streams */
		wr16(q + 26, 1);	  /* inbound streams */
		wr32(q + 28, 1);	  /* initial TSN */
		return 32;
	case IPPROTO_ICMP_:
	case IPPROTO_ICMPV6_:
		q[0] = k->proto == IPPROTO_ICMP_ ? 8 : 128; /* echo request */
		wr16(q + 4, 0x0db8);			    /* identifier */
		wr16(q + 6, 1);				    /* sequence */
		for (i = 8; i < 16; i++)
			q[i] = 0xa0 + i;
		return 16;
	default:
		for (i = 0; i < 8; i++)
			q[i] = 0xa0 + i;
		return 8;
	}
}

/* Where the upper layer keeps its Internet checksum; -1: none of that kind. */
static int csum_at(__u8 proto)
{
	switch (proto) {
	case FB_IPPROTO_TCP:
		return 16;
	case FB_IPPROTO_UDP:
	case FB_IPPROTO_UDPLITE:
		return 6;
	case IPPROTO_ICMP_:
	case IPPROTO_ICMPV6_:
		return 2;
	default:
		return -1;
	}
}

size_t fb_frame_of_flow(const struct fb_key *k, __u8 buf[FB_FRAME_MAX])
{
	/* Documentation MAC addresses (RFC 7042 section 2.1.2). */
	static const __u8 mac[12] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x02,
				      0x00, 0x00, 0x5e, 0x00, 0x53, 0x01 };
	bool v6 = k->family == FB_FAMILY_IPV6;
	size_t iph = v6 ? 40 : 20, n;
	__u8 *ip = buf + ETH_HLEN, *q = ip + iph;
	__u32 s;
	int at;

	memset(buf, 0, FB_FRAME_MAX);
	memcpy(buf, mac, sizeof(mac));
	wr16(buf + 12, v6 ? 0x86dd : 0x0800);
	n = l4(k, q);
	if (v6) {
		ip[0] = 0x60;
		wr16(ip + 4, n);
		ip[6] = k->proto;
		ip[7] = 64; /* hop limit */
		memcpy(ip + 8, k->saddr, 16);
		memcpy(ip + 24, k->daddr, 16);
		s = sum16(ip + 8, 32, 0);
	} else {
		ip[0] = 0x45;
		wr16(ip + 2, iph + n);
		wr16(ip + 4, 0x0db8); /* identification */
		wr16(ip + 6, 0x4000); /* don't fragment */
		ip[8] = 64;	      /* time to live */
		ip[9] = k->proto;
		memcpy(ip + 12, k->saddr + 12, 4);
		memcpy(ip + 16, k->daddr + 12, 4);
		wr16(ip + 10, fold(sum16(ip, 20, 0)));
		s = sum16(ip + 12, 8, 0);
	}
	at = csum_at(k->proto);
	if (at >= 0) {
		__u16 c;

		/* ICMP for IPv4 sums its message alone; the others add the
		 * pseudo-header: addresses, protocol, upper-layer length. */
		s = k->proto == IPPROTO_ICMP_ ? 0 : s + k->proto + n;
		c = fold(sum16(q, n, s));
		/* A UDP checksum of 0 means none: 0xffff is the same sum. */
		wr16(q + at, c || k->proto != FB_IPPROTO_UDP ? c : 0xffff);
	} else if (k->proto == FB_IPPROTO_SCTP) {
		__u32 c = crc32c(q, n);

		q[8] = c;
		q[9] = c >> 8;
		q[10] = c >> 16;
		q[11] = c >> 24;
	}
	return ETH_HLEN + iph + n;
}
