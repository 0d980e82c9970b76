/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Frames for tests and benchmarks, the one builder every test uses
 * (tests/lib/packet.c): a frame assembled header by header (struct pkt:
 * Ethernet, VLAN tags, IPv4 with options, IPv6 with extension and fragment
 * headers, payload, then lengths and checksums), the frame of a given
 * struct fb_key built from those pieces, and random flows drawn from the
 * documentation ranges (198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32).
 */
#ifndef FLOWBLOOM_TEST_PACKET_H
#define FLOWBLOOM_TEST_PACKET_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <bpf/bpf.h>
#include "flowbloom/key.h"
#include "flowbloom/maps.h"

static inline uint64_t test_rand64(uint64_t *s)
{
	/* splitmix64: deterministic per seed, good enough for test data. */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline int test_is_v4(const uint8_t a[16])
{
	return fb_addr_v4mapped(a);
}

/* A random 5-tuple flow: IPv4 (198.51.100.x -> 203.0.113.y) or IPv6 in
 * 2001:db8::/32, TCP or UDP, random ports. */
static inline void test_random_flow(uint64_t *seed, struct fb_key *k, int v6)
{
	uint64_t r = test_rand64(seed), r2 = test_rand64(seed);

	memset(k, 0, sizeof(*k));
	if (!v6) {
		k->saddr[10] = k->saddr[11] = k->daddr[10] = k->daddr[11] = 0xff;
		k->saddr[12] = 198, k->saddr[13] = 51, k->saddr[14] = 100;
		k->saddr[15] = r & 0xff;
		k->daddr[12] = 203, k->daddr[13] = 0, k->daddr[14] = 113;
		k->daddr[15] = (r >> 8) & 0xff;
	} else {
		k->saddr[0] = k->daddr[0] = 0x20;
		k->saddr[1] = k->daddr[1] = 0x01;
		k->saddr[2] = k->daddr[2] = 0x0d;
		k->saddr[3] = k->daddr[3] = 0xb8;
		memcpy(&k->saddr[8], &r2, 8);
		memcpy(&k->daddr[12], &r, 4);
		k->family = FB_FAMILY_IPV6;
	}
	k->proto = (r >> 16) & 1 ? 6 : 17;
	k->sport = htons((uint16_t)(r >> 24));
	k->dport = htons((uint16_t)(r >> 40));
	k->kind = FB_KIND_FLOW;
}

/* A frame under construction; the pkt_* calls append headers in order. */
struct pkt {
	__u8 d[1600];
	size_t len;
	size_t need; /* end of the last header the parser has to read */
	int l3, l4;  /* offsets of the IP and upper-layer headers, -1: none */
	int v6;
	__u8 l4proto;
};

void pkt_init(struct pkt *p);
/* Append n zero bytes; parsed: the parser reads them (moves p->need). */
__u8 *pkt_put(struct pkt *p, size_t n, bool parsed);
void pkt_wr16(__u8 *q, unsigned int v); /* big-endian stores */
void pkt_wr32(__u8 *q, unsigned int v);
void pkt_eth(struct pkt *p, __u16 type);
void pkt_vlan(struct pkt *p, __u16 vid, __u16 next);
/* IPv4 header of ihl 32-bit words; options are NOPs ending in EOL. */
void pkt_ipv4(struct pkt *p, __u8 proto, int ihl, __u16 frag_off, const __u8 src[4],
	      const __u8 dst[4]);
void pkt_ipv6(struct pkt *p, __u8 next, const __u8 src[16], const __u8 dst[16]);
/* An IPv6 extension header of type self with length field hlen. */
void pkt_ext6(struct pkt *p, __u8 self, __u8 next, __u8 hlen);
/* An IPv6 fragment header; field: fragment offset << 3 | M. */
void pkt_frag6(struct pkt *p, __u8 next, __u16 field);
/* The upper-layer header of proto holding the ports (20 bytes of TCP, 8
 * of anything else); pkt_finish() fills its checksum where it has one. */
void pkt_l4(struct pkt *p, __u8 proto, __be16 sport, __be16 dport);
void pkt_payload(struct pkt *p, size_t n);
void pkt_ip4_csum(struct pkt *p);
/* Lengths and checksums, once the frame is complete. */
void pkt_finish(struct pkt *p);

/* Write a frame carrying key's flow into buf (>= 128 bytes); returns its
 * length: Ethernet, IPv4 (IHL 5) or IPv6 by the key's family (an IPv6 frame
 * may carry ::ffff:a.b.c.d addresses), then a 20-byte TCP or an 8-byte
 * header of any other protocol holding the key's ports first; no payload. */
size_t test_build_frame(const struct fb_key *k, uint8_t *buf);

/* Run key's frame through a program loaded with .trace = true. Returns
 * the verdict (-1 on error); *matched: the trace says the flow rule
 * matched. */
int test_probe_flow(int prog_fd, int trace_fd, const struct fb_key *k, int *matched);

#endif
