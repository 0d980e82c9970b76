/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Frames for tests and benchmarks: an Ethernet + IPv4/IPv6 + TCP/UDP/ICMP
 * frame whose flow key is a given struct fb_key, and random flows drawn
 * from the documentation ranges (198.51.100.0/24, 203.0.113.0/24,
 * 2001:db8::/32).
 */
#ifndef FLOWBLOOM_TEST_PACKET_H
#define FLOWBLOOM_TEST_PACKET_H

#include <arpa/inet.h>
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

/* Write a frame carrying key's flow into buf (>= 128 bytes); returns its
 * length. The key's family picks the IP version (an IPv6 frame may carry
 * ::ffff:a.b.c.d addresses). Checksums are left zero: the program does not
 * read them. */
static inline size_t test_build_frame(const struct fb_key *k, uint8_t *buf)
{
	size_t l3, l4len = k->proto == 6 ? 20 : k->proto == 17 ? 8 : 8;
	uint8_t *p;

	memset(buf, 0, 128);
	buf[0] = 0x02, buf[5] = 0x02; /* dst MAC 02:00:00:00:00:02 */
	buf[6] = 0x02, buf[11] = 0x01;
	if (k->family == FB_FAMILY_IPV4) {
		uint16_t tot = htons(20 + l4len);

		buf[12] = 0x08, buf[13] = 0x00;
		p = buf + 14;
		p[0] = 0x45;
		memcpy(p + 2, &tot, 2);
		p[8] = 64;
		p[9] = k->proto;
		memcpy(p + 12, &k->saddr[12], 4);
		memcpy(p + 16, &k->daddr[12], 4);
		l3 = 20;
	} else {
		uint16_t plen = htons(l4len);

		buf[12] = 0x86, buf[13] = 0xdd;
		p = buf + 14;
		p[0] = 0x60;
		memcpy(p + 4, &plen, 2);
		p[6] = k->proto;
		p[7] = 64;
		memcpy(p + 8, k->saddr, 16);
		memcpy(p + 24, k->daddr, 16);
		l3 = 40;
	}
	p += l3;
	memcpy(p, &k->sport, 2);
	memcpy(p + 2, &k->dport, 2);
	if (k->proto == 6)
		p[12] = 0x50; /* data offset 5 */
	else if (k->proto == 17) {
		uint16_t ulen = htons(8);

		memcpy(p + 4, &ulen, 2);
	}
	return 14 + l3 + l4len;
}

/* Run key's frame through a program loaded with .trace = true. Returns
 * the verdict (-1 on error); *matched: the trace says the flow rule
 * matched. */
static inline int test_probe_flow(int prog_fd, int trace_fd, const struct fb_key *k, int *matched)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .repeat = 1);
	uint8_t frame[128];
	struct fb_trace tr;
	__u32 zero = 0;

	t.data_in = frame;
	t.data_size_in = test_build_frame(k, frame);
	if (bpf_prog_test_run_opts(prog_fd, &t) || bpf_map_lookup_elem(trace_fd, &zero, &tr))
		return -1;
	*matched = tr.kind == FB_KIND_FLOW;
	return (int)t.retval;
}

#endif
