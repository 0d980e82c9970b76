// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_unit, the frame of one packet of a flow (user/lib/prog/frame.c, what
 * `query --packet` runs through the program): for each protocol and
 * family, the Ethernet type, the IP lengths and header checksum, the ports,
 * and the upper layer's checksum verified here independently (the Internet
 * checksum of the segment with its pseudo-header sums to 0xffff; SCTP's
 * CRC32c recomputed by a table built here, itself checked against the
 * standard check value of "123456789").
 */
#include "unit.h"
#include "prog/frame.h"

static __u32 sum(const __u8 *q, size_t n, __u32 s)
{
	size_t i;

	for (i = 0; i < n; i++)
		s += i & 1 ? q[i] : q[i] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

static __u32 crc32c_table(const __u8 *q, size_t n)
{
	static __u32 t[256];
	static bool made;
	__u32 c;
	size_t i;
	int b;

	for (i = 0; !made && i < 256; i++) {
		for (c = i, b = 0; b < 8; b++)
			c = c & 1 ? c >> 1 ^ 0x82f63b78U : c >> 1;
		t[i] = c;
	}
	made = true;
	for (c = ~0U, i = 0; i < n; i++)
		c = t[(c ^ q[i]) & 0xff] ^ c >> 8;
	return ~c;
}

static void check_frame(const char *text)
{
	char buf[256], *w[FB_FLOW_WORDS], err[256], label[300];
	__u8 f[FB_FRAME_MAX], pseudo[40], *ip = f + 14, *l4;
	struct fb_key k;
	int n = 0;
	size_t len, iph, l4len;
	bool v6;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *s = NULL, *t = strtok_r(buf, " ", &s); t; t = strtok_r(NULL, " ", &s))
		w[n++] = t;
	if (!ASSERT_TRUE(fb_flow_parse(n, w, &k, err, sizeof(err)) == n, text))
		return;
	len = fb_frame_of_flow(&k, f);
	v6 = k.family == FB_FAMILY_IPV6;
	iph = v6 ? 40 : 20;
	l4 = ip + iph;
	l4len = len - 14 - iph;
	snprintf(label, sizeof(label), "frame of '%s': ethertype", text);
	ASSERT_EQ(f[12] << 8 | f[13], v6 ? 0x86dd : 0x0800, label);
	snprintf(label, sizeof(label), "frame of '%s': IP length", text);
	ASSERT_EQ(v6 ? (size_t)(ip[4] << 8 | ip[5]) : (size_t)(ip[2] << 8 | ip[3]),
		  v6 ? l4len : len - 14, label);
	snprintf(label, sizeof(label), "frame of '%s': protocol", text);
	ASSERT_EQ(ip[v6 ? 6 : 9], k.proto, label);
	if (!v6) {
		snprintf(label, sizeof(label), "frame of '%s': IPv4 header checksum", text);
		ASSERT_EQ(sum(ip, 20, 0), 0xffff, label);
	}
	if (fb_proto_has_ports(k.proto)) {
		snprintf(label, sizeof(label), "frame of '%s': ports", text);
		ASSERT_TRUE(!memcmp(l4, &k.sport, 2) && !memcmp(l4 + 2, &k.dport, 2), label);
	}
	/* The pseudo-header: addresses, then length and protocol. */
	memset(pseudo, 0, sizeof(pseudo));
	memcpy(pseudo, v6 ? ip + 8 : ip + 12, v6 ? 32 : 8);
	pseudo[v6 ? 34 : 10] = l4len >> 8;
	pseudo[v6 ? 35 : 11] = l4len;
	pseudo[v6 ? 39 : 9] = k.proto;
	snprintf(label, sizeof(label), "frame of '%s': upper-layer checksum", text);
	switch (k.proto) {
	case 1:
		ASSERT_EQ(sum(l4, l4len, 0), 0xffff, label);
		ASSERT_EQ(l4[0], 8, "ICMP: an echo request");
		break;
	case 6:
	case 17:
	case 58:
	case 136:
		ASSERT_EQ(sum(l4, l4len, sum(pseudo, v6 ? 40 : 12, 0)), 0xffff, label);
		if (k.proto == 6)
			ASSERT_EQ(l4[13], 0x02, "TCP: a SYN");
		if (k.proto == 17)
			ASSERT_EQ((size_t)(l4[4] << 8 | l4[5]), l4len, "UDP: its length");
		if (k.proto == 58)
			ASSERT_EQ(l4[0], 128, "ICMPv6: an echo request");
		break;
	case 132: {
		__u32 want = l4[8] | l4[9] << 8 | l4[10] << 16 | (__u32)l4[11] << 24;

		memset(l4 + 8, 0, 4);
		ASSERT_EQ(crc32c_table(l4, l4len), want, label);
		break;
	}
	default:
		ASSERT_EQ(l4len, 8, "another protocol: 8 bytes of payload");
	}
}

void test_frame(void)
{
	static const char *const flows[] = {
		"tcp 198.51.100.1:1234 203.0.113.7:80",
		"tcp [2001:db8::1]:443 [2001:db8::2]:51000",
		"udp 198.51.100.1:53 203.0.113.7:4000",
		"udp [2001:db8::1]:53 [2001:db8::2]:65535",
		"udplite 198.51.100.1:5 203.0.113.7:6",
		"sctp 198.51.100.1:36412 203.0.113.7:36412",
		"sctp [2001:db8::1]:1 [2001:db8::2]:2",
		"icmp src 198.51.100.1 dst 203.0.113.7",
		"icmpv6 src 2001:db8::1 dst 2001:db8::2",
		"gre src 198.51.100.1 dst 203.0.113.7",
		"253 src 2001:db8::1 dst 2001:db8::2",
		/* an IPv6 flow between v4-mapped addresses: an IPv6 frame */
		"udp [::ffff:c633:6401]:1 [::ffff:cb00:7107]:2",
	};
	size_t i;

	ASSERT_EQ(crc32c_table((const __u8 *)"123456789", 9), 0xe3069283U,
		  "CRC32c: the check value");
	for (i = 0; i < sizeof(flows) / sizeof(flows[0]); i++)
		check_frame(flows[i]);
}
