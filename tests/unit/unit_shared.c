// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_unit, part: the logic the XDP program and the CLI share. */
#include "flowbloom/maps.h"
#include "flowbloom/prefix.h"
#include "unit.h"

/* ---------------------------------------------------------------------- */
/* Logic both sides share (include/flowbloom/prefix.h, geometry.h, key.h,  */
/* maps.h): the XDP program and the CLI call these very functions, so     */
/* here they are checked against references written independently.       */

/* The rule the CLI parser builds for ADDR/plen, byte by byte as flow.c
 * masks it: the stored key that the program's probe must equal. */
static void ref_prefix_rule(struct fb_key *r, __u32 kind, const __u8 a[16], int plen, __u8 fam)
{
	__u8 *out = kind == FB_KIND_DST ? r->daddr : r->saddr;
	int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < 16; i++) {
		int keep = plen - 8 * i;

		out[i] = keep <= 0 ? 0 : keep < 8 ? a[i] & (__u8)(0xff << (8 - keep)) : a[i];
	}
	r->kind = kind;
	r->plen = plen;
	r->family = fam;
}

void test_shared_logic(void)
{
	static const __u8 v4m[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 51, 100, 7 };
	uint64_t seed = 13;
	__u64 pos[FB_MAX_K];
	unsigned n, bad_key = 0, bad_set = 0, bad_has = 0, bad_bit = 0, bad_lpm = 0;
	__u8 a[16];
	int i;

	/* The length list: by kind and family, never by the address. */
	ASSERT_EQ(fb_prefix_list(FB_KIND_SRC, FB_FAMILY_IPV4), FB_PFX_SRC4, "list: src v4");
	ASSERT_EQ(fb_prefix_list(FB_KIND_SRC, FB_FAMILY_IPV6), FB_PFX_SRC6, "list: src v6");
	ASSERT_EQ(fb_prefix_list(FB_KIND_DST, FB_FAMILY_IPV4), FB_PFX_DST4, "list: dst v4");
	ASSERT_EQ(fb_prefix_list(FB_KIND_DST, FB_FAMILY_IPV6), FB_PFX_DST6, "list: dst v6");
	ASSERT_EQ(fb_prefix_list(FB_KIND_FLOW, FB_FAMILY_IPV4), -1, "list: 5-tuples have none");
	for (i = 0; i < FB_PFX_NR; i++)
		ASSERT_EQ(fb_prefix_list(i >= FB_PFX_DST4 ? FB_KIND_DST : FB_KIND_SRC,
					 fb_prefix_list_family(i)),
			  i, "list: fb_prefix_list_family inverts fb_prefix_list");

	/* v4-mapped: exactly ::ffff:0:0/96. */
	ASSERT_TRUE(fb_addr_v4mapped(v4m), "v4mapped: ::ffff:198.51.100.7");
	memcpy(a, v4m, 16);
	a[9] = 1;
	ASSERT_TRUE(!fb_addr_v4mapped(a), "v4mapped: ::1:ffff:c633:6407 is not");
	memcpy(a, v4m, 16);
	a[11] = 0xfe;
	ASSERT_TRUE(!fb_addr_v4mapped(a), "v4mapped: ::fffe:c633:6407 is not");
	memset(a, 0, 16);
	ASSERT_TRUE(!fb_addr_v4mapped(a), "v4mapped: :: is not");

	for (n = 0; n < 20000; n++) {
		__u32 kind = n & 1 ? FB_KIND_DST : FB_KIND_SRC, k = 1 + n % FB_MAX_K, j;
		__u8 fam = n & 2 ? FB_FAMILY_IPV6 : FB_FAMILY_IPV4;
		int plen = n % 129;
		struct fb_key pkt = { 0 }, ref, got;
		struct fb_block blk = { 0 }, want = { 0 };
		struct fb_lpm_key l1, l2;
		__u64 h = test_rand64(&seed), w0, w1;

		for (i = 0; i < 16; i += 8) {
			__u64 r = test_rand64(&seed);

			memcpy(a + i, &r, 8);
		}
		/* The probe key of a packet's address at plen (what the program
		 * builds in registers) is the rule the CLI stores. */
		memcpy(kind == FB_KIND_DST ? pkt.daddr : pkt.saddr, a, 16);
		pkt.family = fam;
		w0 = pkt.w[kind == FB_KIND_DST ? 2 : 0];
		w1 = pkt.w[kind == FB_KIND_DST ? 3 : 1];
		fb_prefix_key(&got, kind, w0, w1, plen, fb_key_word_family(pkt.w[4]));
		ref_prefix_rule(&ref, kind, a, plen, fam);
		bad_key += memcmp(&got, &ref, sizeof(got)) != 0;

		/* Blocked set and test against the positions, one by one. */
		fb_block_set(&blk, h, k);
		fb_positions(h, FB_LAYOUT_BLOCKED, 1, k, pos); /* one block: positions 0..511 */
		for (j = 0; j < k; j++)
			want.w[pos[j] / 64] |= 1ULL << (pos[j] % 64);
		bad_set += memcmp(&blk, &want, sizeof(blk)) != 0;
		bad_has += !fb_block_has(&blk, h, k);
		want.w[pos[n % k] / 64] &= ~(1ULL << (pos[n % k] % 64));
		bad_has += fb_block_has(&want, h, k);

		/* Classic bits: set then test, and only that bit. */
		memset(&blk, 0, sizeof(blk));
		fb_block_set_bit(&blk, h % FB_BLOCK_BITS);
		bad_bit += !fb_block_test_bit(&blk, h % FB_BLOCK_BITS + (__u64)FB_BLOCK_BITS * n) ||
			   fb_block_test_bit(&blk, (h + 1) % FB_BLOCK_BITS) ||
			   __builtin_popcountll(blk.w[h % FB_BLOCK_BITS / 64]) != 1;

		/* The trie key: the rule's address of its direction. */
		fb_lpm_key_of(&l1, &ref, kind, plen);
		fb_lpm_key_set(&l2, fam, kind == FB_KIND_DST ? ref.daddr : ref.saddr, plen);
		bad_lpm += memcmp(&l1, &l2, sizeof(l1)) != 0;
	}
	ASSERT_EQ(fb_prefix_list_written(FB_PFX_SRC4, 96 + 24), 24, "list: IPv4 /24 as written");
	ASSERT_EQ(fb_prefix_list_written(FB_PFX_DST6, 48), 48, "list: IPv6 /48 as written");

	/* Protocols: the header the XDP parser reads ports from (proto.h) and
	 * the CLI's FLOW parser agree on which protocols have ports, and the
	 * CLI refuses exactly the IPv6 extension headers the parser walks. */
	{
		unsigned bad_ports = 0, bad_ext = 0, p;
		char pr[8], e[160];

		for (p = 0; p < 256; p++) {
			char *v6[3] = { pr, "[2001:db8::1]:1", "[2001:db8::2]:2" };
			char *v6np[3] = { pr, "2001:db8::1", "2001:db8::2" };
			struct fb_key key;
			int ports = p == 6 || p == 17 || p == 132 || p == 136;
			int ext = p == 0 || p == 43 || p == 44 || p == 51 || p == 60;

			snprintf(pr, sizeof(pr), "%u", p);
			bad_ports += fb_proto_has_ports((int)p) != ports ||
				     (fb_proto_ports_hdr((__u8)p) != 0) != ports;
			bad_ext += fb_proto_ipv6_ext((int)p) != ext;
			/* The CLI parser: ports given parse only for protocols with
			 * ports, none given only for the others; extension headers
			 * never parse as an IPv6 FLOW. */
			bad_ports +=
				(fb_flow_parse(3, v6, &key, e, sizeof(e)) == 3) != (ports && !ext);
			bad_ext += (fb_flow_parse(3, v6np, &key, e, sizeof(e)) == 3) !=
				   (!ports && !ext);
		}
		ASSERT_EQ(bad_ports, 0,
			  "proto: TCP, UDP, SCTP, UDP-Lite carry ports, on both sides");
		ASSERT_EQ(bad_ext, 0,
			  "proto: IPv6 extension headers 0, 43, 44, 51, 60, on both sides");
		ASSERT_EQ(fb_proto_ports_hdr(6), 20,
			  "proto: TCP ports need the fixed 20-byte header");
		ASSERT_EQ(fb_proto_ports_hdr(132), 12,
			  "proto: SCTP ports need the 12-byte common header");
	}

	ASSERT_EQ(bad_key, 0, "fb_prefix_key: the probe at each length is the rule as parsed");
	ASSERT_EQ(bad_set, 0, "fb_block_set: sets the k positions fb_positions names");
	ASSERT_EQ(bad_has, 0, "fb_block_has: all k bits, and not one fewer");
	ASSERT_EQ(bad_bit, 0, "fb_block_set_bit/test_bit: one bit, the one asked");
	ASSERT_EQ(bad_lpm, 0, "fb_lpm_key_of: the address of the rule's direction");
}
