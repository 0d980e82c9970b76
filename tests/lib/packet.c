// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The frame builder of every test and benchmark (see packet.h): headers
 * appended one by one, as test_verdict's table needs them, and the frame of
 * a flow key made of the same pieces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include "packet.h"

void pkt_init(struct pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->l3 = p->l4 = -1;
}

/* Append n zero bytes; parsed: the parser reads them (moves p->need). */
__u8 *pkt_put(struct pkt *p, size_t n, bool parsed)
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

void pkt_wr16(__u8 *q, unsigned int v)
{
	q[0] = v >> 8;
	q[1] = v;
}

void pkt_wr32(__u8 *q, unsigned int v)
{
	pkt_wr16(q, v >> 16);
	pkt_wr16(q + 2, v);
}

void pkt_eth(struct pkt *p, __u16 type)
{
	static const __u8 dst[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x02 };
	static const __u8 src[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01 };
	__u8 *q = pkt_put(p, 14, true);

	memcpy(q, dst, 6);
	memcpy(q + 6, src, 6);
	pkt_wr16(q + 12, type);
}

void pkt_vlan(struct pkt *p, __u16 vid, __u16 next)
{
	__u8 *q = pkt_put(p, 4, true);

	pkt_wr16(q, vid);
	pkt_wr16(q + 2, next);
}

/* IPv4 header of ihl 32-bit words; options are NOPs ending in EOL. */
void pkt_ipv4(struct pkt *p, __u8 proto, int ihl, __u16 frag_off, const __u8 src[4],
	      const __u8 dst[4])
{
	__u8 *q;
	int i;

	p->l3 = p->len;
	q = pkt_put(p, ihl * 4, true);
	q[0] = 0x40 | ihl;
	pkt_wr16(q + 4, 0x1234);
	pkt_wr16(q + 6, frag_off);
	q[8] = 64;
	q[9] = proto;
	memcpy(q + 12, src, 4);
	memcpy(q + 16, dst, 4);
	for (i = 20; i < ihl * 4; i++)
		q[i] = i == ihl * 4 - 1 ? 0 : 1;
}

void pkt_ipv6(struct pkt *p, __u8 next, const __u8 src[16], const __u8 dst[16])
{
	__u8 *q;

	p->l3 = p->len;
	p->v6 = 1;
	q = pkt_put(p, 40, true);
	q[0] = 0x60;
	q[6] = next;
	q[7] = 64;
	memcpy(q + 8, src, 16);
	memcpy(q + 24, dst, 16);
}

/* An IPv6 extension header of type self with length field hlen. */
void pkt_ext6(struct pkt *p, __u8 self, __u8 next, __u8 hlen)
{
	size_t n = self == IPPROTO_AH ? (hlen + 2) * 4u : (hlen + 1) * 8u;
	__u8 *q = pkt_put(p, n, true);

	q[0] = next;
	q[1] = hlen;
	if (self == IPPROTO_ROUTING) {
		q[2] = 253; /* experimental routing type (RFC 4727) */
		q[3] = 0;   /* segments left: ignored by every node */
	} else if (self == IPPROTO_AH) {
		pkt_wr32(q + 4, 0x100); /* SPI; sequence number, then a zero ICV */
		pkt_wr32(q + 8, 1);
	} else {
		q[2] = 1; /* one PadN option fills the header */
		q[3] = n - 4;
	}
}

/* field: fragment offset << 3 | M. */
void pkt_frag6(struct pkt *p, __u8 next, __u16 field)
{
	__u8 *q = pkt_put(p, 8, true);

	q[0] = next;
	pkt_wr16(q + 2, field);
	pkt_wr32(q + 4, 0xdb8);
}

void pkt_payload(struct pkt *p, size_t n)
{
	__u8 *q = pkt_put(p, n, false);
	size_t i;

	for (i = 0; i < n; i++)
		q[i] = 0xa0 + i;
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

void pkt_ip4_csum(struct pkt *p)
{
	__u8 *ip = p->d + p->l3;
	size_t n = (ip[0] & 15) * 4u;

	if (n > p->len - p->l3)
		n = p->len - p->l3;
	ip[10] = ip[11] = 0;
	pkt_wr16(ip + 10, fold(sum16(ip, n, 0)));
}

/* Lengths and checksums, once the frame is complete. */
void pkt_finish(struct pkt *p)
{
	__u8 *ip = p->d + p->l3, *q = p->d + p->l4;
	size_t n = p->len - p->l4;
	__u32 s;
	__u16 c;
	int off;

	if (p->l3 < 0)
		return;
	if (p->v6) {
		pkt_wr16(ip + 4, p->len - p->l3 - 40);
	} else {
		pkt_wr16(ip + 2, p->len - p->l3);
		pkt_ip4_csum(p);
	}
	if (p->l4 < 0)
		return;
	switch (p->l4proto) {
	case IPPROTO_UDP:
		pkt_wr16(q + 4, n);
		off = 6;
		break;
	case IPPROTO_UDPLITE:
		off = 6;
		break;
	case IPPROTO_TCP:
		off = 16;
		break;
	case IPPROTO_ICMPV6:
		off = 2;
		break;
	case IPPROTO_ICMP:
		pkt_wr16(q + 2, fold(sum16(q, n, 0)));
		return;
	default:
		return; /* SCTP (CRC32c), GRE (optional): left 0 */
	}
	if (p->v6)
		s = sum16(ip + 8, 32, 0) + (n >> 16) + (n & 0xffff) + p->l4proto;
	else
		s = sum16(ip + 12, 8, 0) + n + p->l4proto;
	c = fold(sum16(q, n, s));
	pkt_wr16(q + off, c || p->l4proto != IPPROTO_UDP ? c : 0xffff);
}

void pkt_l4(struct pkt *p, __u8 proto, __be16 sport, __be16 dport)
{
	__u8 *q;

	p->l4 = p->len;
	p->l4proto = proto;
	q = pkt_put(p, proto == IPPROTO_TCP ? 20 : 8, true);
	memcpy(q, &sport, 2);
	memcpy(q + 2, &dport, 2);
	if (proto == IPPROTO_TCP)
		q[12] = 5 << 4; /* data offset 5 */
}

size_t test_build_frame(const struct fb_key *k, uint8_t *buf)
{
	struct pkt p;

	pkt_init(&p);
	if (k->family == FB_FAMILY_IPV4) {
		pkt_eth(&p, ETH_P_IP);
		pkt_ipv4(&p, k->proto, 5, 0, &k->saddr[12], &k->daddr[12]);
	} else {
		pkt_eth(&p, ETH_P_IPV6);
		pkt_ipv6(&p, k->proto, k->saddr, k->daddr);
	}
	pkt_l4(&p, k->proto, k->sport, k->dport);
	/* Checksums only where they do not overwrite the ports (ICMP keeps its
	 * checksum at offset 2). */
	if (k->proto != IPPROTO_TCP && k->proto != IPPROTO_UDP)
		p.l4 = -1;
	pkt_finish(&p);
	memcpy(buf, p.d, p.len);
	return p.len;
}

int test_probe_flow(int prog_fd, int trace_fd, const struct fb_key *k, int *matched)
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
