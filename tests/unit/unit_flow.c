// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_unit, the FLOW text parser and formatter (user/lib/rules/flow.c): a table of
 * accepted texts with the key each makes, and a table of rejected ones.
 */
#include "unit.h"
#include "rules/rules.h"

/* ---------------------------------------------------------------------- */
/* FLOW parser                                                            */

/* Split text into words in buf (the argv fb_flow_parse sees). */
static int split_words(const char *text, char *buf, size_t len, char **words, int max)
{
	char *save = NULL, *w;
	int n = 0;

	snprintf(buf, len, "%s", text);
	for (w = strtok_r(buf, " ", &save); w && n < max; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	return n;
}

/* The 16 bytes an address should have in a key: IPv4 as ::ffff:a.b.c.d. */
static void want_addr(const char *text, __u8 out[16])
{
	memset(out, 0, 16);
	if (!text)
		return;
	if (strchr(text, ':')) {
		inet_pton(AF_INET6, text, out);
		return;
	}
	out[10] = out[11] = 0xff;
	inet_pton(AF_INET, text, out + 12);
}

struct accept_case {
	const char *text;
	int used;
	__u8 kind, proto;
	const char *saddr, *daddr; /* NULL: all zero */
	__u16 sport, dport;	   /* host order */
};

static const struct accept_case accept_cases[] = {
	{ "udp 198.51.100.1:53 203.0.113.7:4000", 3, FB_KIND_FLOW, 17, "198.51.100.1",
	  "203.0.113.7", 53, 4000 },
	{ "tcp [2001:db8::1]:443 [2001:db8::2]:51000", 3, FB_KIND_FLOW, 6, "2001:db8::1",
	  "2001:db8::2", 443, 51000 },
	{ "6 198.51.100.1:1 203.0.113.1:2", 3, FB_KIND_FLOW, 6, "198.51.100.1", "203.0.113.1", 1,
	  2 },
	{ "TCP 198.51.100.1:80 203.0.113.1:8080", 3, FB_KIND_FLOW, 6, "198.51.100.1", "203.0.113.1",
	  80, 8080 },
	{ "icmp 198.51.100.1 203.0.113.1", 3, FB_KIND_FLOW, 1, "198.51.100.1", "203.0.113.1", 0,
	  0 },
	{ "icmp 198.51.100.1:0 203.0.113.1:0", 3, FB_KIND_FLOW, 1, "198.51.100.1", "203.0.113.1", 0,
	  0 },
	{ "icmpv6 2001:db8::1 2001:db8::2", 3, FB_KIND_FLOW, 58, "2001:db8::1", "2001:db8::2", 0,
	  0 },
	{ "sctp 198.51.100.1:5000 203.0.113.1:5001", 3, FB_KIND_FLOW, 132, "198.51.100.1",
	  "203.0.113.1", 5000, 5001 },
	{ "udplite [2001:db8::1]:7 [2001:db8::2]:9", 3, FB_KIND_FLOW, 136, "2001:db8::1",
	  "2001:db8::2", 7, 9 },
	{ "src 198.51.100.7", 2, FB_KIND_SRC, 0, "198.51.100.7", NULL, 0, 0 },
	{ "dst 2001:db8::5", 2, FB_KIND_DST, 0, NULL, "2001:db8::5", 0, 0 },
	{ "47 198.51.100.1 203.0.113.1", 3, FB_KIND_FLOW, 47, "198.51.100.1", "203.0.113.1", 0, 0 },
	{ "ah 198.51.100.1 203.0.113.1", 3, FB_KIND_FLOW, 51, "198.51.100.1", "203.0.113.1", 0, 0 },
	{ "60 198.51.100.1 203.0.113.1", 3, FB_KIND_FLOW, 60, "198.51.100.1", "203.0.113.1", 0, 0 },
	{ "esp 2001:db8::1 2001:db8::2", 3, FB_KIND_FLOW, 50, "2001:db8::1", "2001:db8::2", 0, 0 },
	{ "udp 198.51.100.1:0 203.0.113.7:65535", 3, FB_KIND_FLOW, 17, "198.51.100.1",
	  "203.0.113.7", 0, 65535 },
	{ "tcp [2001:db8::1]:65535 [2001:db8::2]:0", 3, FB_KIND_FLOW, 6, "2001:db8::1",
	  "2001:db8::2", 65535, 0 },
	/* Families as written (docs/cli.md, "Families"): ::ffff:a.b.c.d is IPv4,
	 * the same bits in hex IPv6. */
	{ "src ::ffff:198.51.100.7", 2, FB_KIND_SRC, 0, "::ffff:198.51.100.7", NULL, 0, 0 },
	{ "src ::ffff:c633:6407", 2, FB_KIND_SRC, 0, "::ffff:c633:6407", NULL, 0, 0 },
	{ "udp [::ffff:c633:6401]:53 [::ffff:cb00:7107]:4000", 3, FB_KIND_FLOW, 17,
	  "::ffff:c633:6401", "::ffff:cb00:7107", 53, 4000 },
};

/* The family a case's address text means: dotted IPv4, or ::ffff:a.b.c.d. */
static __u8 want_family(const struct accept_case *c)
{
	const char *a = c->saddr ? c->saddr : c->daddr;

	return strchr(a, '.') && (!strchr(a, ':') || !strncmp(a, "::ffff:", 7)) ? FB_FAMILY_IPV4
										: FB_FAMILY_IPV6;
}

static void check_accept(const struct accept_case *c)
{
	char buf[256], fbuf[FB_FLOW_STR], err[128], label[400], *words[8];
	struct fb_key key, again;
	__u8 want[16];
	int n, used;

	n = split_words(c->text, buf, sizeof(buf), words, 8);
	err[0] = 0;
	used = fb_flow_parse(n, words, &key, err, sizeof(err));
	snprintf(label, sizeof(label), "accept '%s': words used", c->text);
	if (!ASSERT_EQ(used, c->used, label)) {
		printf("  error: %s\n", err);
		return;
	}
	snprintf(label, sizeof(label), "accept '%s': kind", c->text);
	ASSERT_EQ(key.kind, c->kind, label);
	snprintf(label, sizeof(label), "accept '%s': proto", c->text);
	ASSERT_EQ(key.proto, c->proto, label);
	want_addr(c->saddr, want);
	snprintf(label, sizeof(label), "accept '%s': saddr bytes", c->text);
	ASSERT_TRUE(!memcmp(key.saddr, want, 16), label);
	want_addr(c->daddr, want);
	snprintf(label, sizeof(label), "accept '%s': daddr bytes", c->text);
	ASSERT_TRUE(!memcmp(key.daddr, want, 16), label);
	/* Network byte order: most significant byte first in memory. */
	snprintf(label, sizeof(label), "accept '%s': sport big-endian bytes", c->text);
	ASSERT_TRUE(((__u8 *)&key.sport)[0] == c->sport >> 8 &&
			    ((__u8 *)&key.sport)[1] == (c->sport & 0xff),
		    label);
	snprintf(label, sizeof(label), "accept '%s': dport big-endian bytes", c->text);
	ASSERT_TRUE(((__u8 *)&key.dport)[0] == c->dport >> 8 &&
			    ((__u8 *)&key.dport)[1] == (c->dport & 0xff),
		    label);
	snprintf(label, sizeof(label), "accept '%s': plen (128 for address rules, else 0)",
		 c->text);
	ASSERT_TRUE(key.plen == (c->kind == FB_KIND_FLOW ? 0 : 128), label);
	snprintf(label, sizeof(label), "accept '%s': family", c->text);
	ASSERT_EQ(key.family, want_family(c), label);

	fb_flow_format(&key, fbuf, sizeof(fbuf));
	n = split_words(fbuf, buf, sizeof(buf), words, 8);
	used = fb_flow_parse(n, words, &again, err, sizeof(err));
	snprintf(label, sizeof(label), "accept '%s': formatted '%s' parses, all words used",
		 c->text, fbuf);
	ASSERT_TRUE(used == n && used == c->used, label);
	snprintf(label, sizeof(label), "accept '%s': formatted '%s' gives the same 40 bytes",
		 c->text, fbuf);
	ASSERT_TRUE(used > 0 && !memcmp(&key, &again, sizeof(key)), label);
	snprintf(label, sizeof(label), "accept '%s': a valid rule (fb_rules_valid)", c->text);
	ASSERT_EQ(fb_rules_valid(&key, err, sizeof(err)), 0, label);
}

static const char *const reject_cases[] = {
	"udp 198.51.100.1:65536 203.0.113.7:4000", /* port out of range */
	"udp 198.51.100.1:-1 203.0.113.7:4000",
	"udp 198.51.100.1:8o 203.0.113.7:4000",
	"udp 198.51.100.1: 203.0.113.7:4000", /* empty port */
	"udp 198.51.100.300:53 203.0.113.7:4000",
	"icmp 198.51.100.300 203.0.113.7",
	"tcp 198.51.100.1 203.0.113.1", /* tcp needs ports */
	"tcp 198.51.100.1:80 203.0.113.1",
	"foo 198.51.100.1:1 203.0.113.1:2",
	"256 198.51.100.1:1 203.0.113.1:2",
	"-6 198.51.100.1:1 203.0.113.1:2",
	"icmp 198.51.100.1:5 203.0.113.1:0",	/* icmp has no ports */
	"udp 198.51.100.1:53 [2001:db8::2]:53", /* mixed families */
	"icmp 2001:db8::1 203.0.113.1",
	/* ICMP of the other family: such a rule matches no ICMP packet */
	"icmp 2001:db8::1 2001:db8::2",
	"icmp dst 2001:db8::/32",
	"icmpv6 198.51.100.1 203.0.113.1",
	"ipv6-icmp src 198.51.100.0/24",
	"src 198.51.100.1:80", /* an address rule takes no port */
	"dst [2001:db8::1]:80",
	"src",
	"dst",
	"src 198.51.100.999",
	"udp 198.51.100.1:53", /* missing DST */
	"udp",
	"tcp [2001:db8::1 [2001:db8::2]:80", /* unclosed bracket */
	"src [2001:db8::1",
	"tcp [198.51.100.1]:80 203.0.113.1:80", /* brackets are for IPv6 */
	"tcp [2001:db8::1]x80 [2001:db8::2]:80",
	/* IPv6 extension headers: the data path keys the protocol after them. */
	"0 2001:db8::1 2001:db8::2",
	"43 2001:db8::1 2001:db8::2",
	"44 2001:db8::1 2001:db8::2",
	"ah 2001:db8::1 2001:db8::2",
	"60 [2001:db8::1]:0 [2001:db8::2]:0",
	/* ... by the family, not the address: hex ::ffff:a.b.c.d is IPv6. */
	"ah ::ffff:c633:6401 ::ffff:cb00:7107",
	"44 [::ffff:c633:6401]:0 [::ffff:cb00:7107]:0",
};

/* Keys that are no rule (what an export's exact sets or the BGP state
 * file could hold): fb_rules_valid() refuses each, and takes every key
 * the parser makes (check_accept). */
static void test_rules_valid(void)
{
	static const struct {
		const char *text; /* a valid start */
		int field;	  /* byte to change */
		__u8 value;
		const char *label;
	} bad[] = {
		{ "src 198.51.100.0/24", 37, 0, "kind 0" },
		{ "src 198.51.100.0/24", 37, 4, "kind 4" },
		{ "src 198.51.100.0/24", 39, 2, "family 2" },
		{ "src 198.51.100.0/24", 38, 95, "IPv4 rule shorter than /0 (plen 95)" },
		{ "src 198.51.100.0/24", 38, 129, "plen 129" },
		{ "src 198.51.100.0/24", 15, 1, "address bits beyond the length" },
		{ "src 198.51.100.0/24", 16, 1, "the other address set" },
		{ "dst 2001:db8::/32", 33, 1, "a port on an address rule" },
		{ "dst 2001:db8::/32", 36, 6, "a protocol on an address rule" },
		{ "src 198.51.100.7", 10, 0, "IPv4 rule outside ::ffff:0:0/96" },
		{ "src 2001:db8::1", 39, 0, "IPv4 family of an IPv6 address" },
		{ "icmp 198.51.100.1 203.0.113.1", 33, 1, "a port for a protocol without" },
		{ "udp 198.51.100.1:1 203.0.113.1:2", 38, 128, "a 5-tuple with a length" },
		{ "udp 198.51.100.1:1 203.0.113.1:2", 26, 0, "IPv4 5-tuple, IPv6 destination" },
		{ "esp 2001:db8::1 2001:db8::2", 36, 44,
		  "IPv6 5-tuple keyed by an extension header" },
	};
	char buf[256], err[128], label[200], *words[8];
	struct fb_key key;
	size_t i;
	int n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = split_words(bad[i].text, buf, sizeof(buf), words, 8);
		if (fb_flow_parse(n, words, &key, err, sizeof(err)) != n)
			continue;
		snprintf(label, sizeof(label), "fb_rules_valid takes '%s'", bad[i].text);
		ASSERT_EQ(fb_rules_valid(&key, err, sizeof(err)), 0, label);
		((__u8 *)&key)[bad[i].field] = bad[i].value;
		snprintf(label, sizeof(label), "fb_rules_valid refuses '%s' with %s", bad[i].text,
			 bad[i].label);
		ASSERT_EQ(fb_rules_valid(&key, err, sizeof(err)), -1, label);
	}
}

void test_flow_parse(void)
{
	char buf[256], err[128], label[200], *words[16], *none[1] = { NULL };
	struct fb_key key, k2;
	size_t i;
	int n, used, at, nflows;

	/* Protocol 1 over IPv6 (58 over IPv4) by number: taken. */
	n = split_words("1 2001:db8::1 2001:db8::2", buf, sizeof(buf), words, 16);
	ASSERT_EQ(fb_flow_parse(n, words, &key, err, sizeof(err)), 3,
		  "'1 2001:db8::1 2001:db8::2' (protocol 1 over IPv6 by number) parses");
	n = split_words("proto 58 src 198.51.100.0/24", buf, sizeof(buf), words, 16);
	ASSERT_EQ(fb_flow_parse(n, words, &key, err, sizeof(err)), 4,
		  "'proto 58 src 198.51.100.0/24' parses");
	n = split_words("icmp dport 0", buf, sizeof(buf), words, 16);
	ASSERT_TRUE(fb_flow_parse(n, words, &key, err, sizeof(err)) < 0,
		    "'icmp dport 0' refused (icmp has no ports)");
	ASSERT_EQ(fb_proto_parse("tcp"), 6, "fb_proto_parse(tcp)");
	ASSERT_EQ(fb_proto_parse("UdP"), 17, "fb_proto_parse is case-insensitive");
	ASSERT_EQ(fb_proto_parse("ipv6-icmp"), 58, "fb_proto_parse(ipv6-icmp)");
	ASSERT_EQ(fb_proto_parse("0"), 0, "fb_proto_parse(0)");
	ASSERT_EQ(fb_proto_parse("255"), 255, "fb_proto_parse(255)");
	ASSERT_EQ(fb_proto_parse("256"), -1, "fb_proto_parse rejects 256");
	ASSERT_EQ(fb_proto_parse("6x"), -1, "fb_proto_parse rejects trailing junk");
	ASSERT_EQ(fb_proto_parse(""), -1, "fb_proto_parse rejects the empty string");
	ASSERT_EQ(fb_proto_parse("foo"), -1, "fb_proto_parse rejects an unknown name");

	for (i = 0; i < sizeof(accept_cases) / sizeof(accept_cases[0]); i++)
		check_accept(&accept_cases[i]);
	test_rules_valid();

	/* One explicit v4-mapped layout, not derived from inet_pton. */
	n = split_words("udp 198.51.100.1:53 203.0.113.7:4000", buf, sizeof(buf), words, 8);
	fb_flow_parse(n, words, &key, err, sizeof(err));
	{
		static const __u8 want[16] = { 0, 0, 0,	   0,	 0,   0,  0,   0,
					       0, 0, 0xff, 0xff, 198, 51, 100, 1 };

		ASSERT_TRUE(!memcmp(key.saddr, want, 16),
			    "198.51.100.1 stored as ::ffff:c633:6401");
		ASSERT_EQ(key.sport, htons(53), "sport 53 stored as htons(53)");
	}

	for (i = 0; i < sizeof(reject_cases) / sizeof(reject_cases[0]); i++) {
		n = split_words(reject_cases[i], buf, sizeof(buf), words, 8);
		err[0] = 0;
		used = fb_flow_parse(n, words, &key, err, sizeof(err));
		snprintf(label, sizeof(label), "reject '%s': returns -1", reject_cases[i]);
		ASSERT_EQ(used, -1, label);
		snprintf(label, sizeof(label), "reject '%s': error message set", reject_cases[i]);
		ASSERT_TRUE(err[0] != 0, label);
	}
	err[0] = 0;
	ASSERT_EQ(fb_flow_parse(0, none, &key, err, sizeof(err)), -1, "reject empty argv");
	ASSERT_TRUE(err[0] != 0, "reject empty argv: error message set");

	/* Several FLOWs back to back in argv, consumed by the returned counts. */
	n = split_words("udp 198.51.100.1:53 203.0.113.7:4000 src 198.51.100.7 "
			"tcp [2001:db8::1]:443 [2001:db8::2]:51000 dst 2001:db8::5",
			buf, sizeof(buf), words, 16);
	ASSERT_EQ(n, 10, "argv of 4 FLOWs has 10 words");
	{
		static const int want_used[] = { 3, 2, 3, 2 };
		static const __u8 want_kind[] = { FB_KIND_FLOW, FB_KIND_SRC, FB_KIND_FLOW,
						  FB_KIND_DST };

		for (at = 0, nflows = 0; at < n && nflows < 4; nflows++) {
			used = fb_flow_parse(n - at, words + at, &key, err, sizeof(err));
			snprintf(label, sizeof(label), "argv sequence: FLOW %d uses %d words",
				 nflows + 1, want_used[nflows]);
			if (!ASSERT_EQ(used, want_used[nflows], label))
				break;
			snprintf(label, sizeof(label), "argv sequence: FLOW %d kind", nflows + 1);
			ASSERT_EQ(key.kind, want_kind[nflows], label);
			at += used;
		}
		ASSERT_TRUE(at == n && nflows == 4, "argv sequence: 4 FLOWs consume all 10 words");
	}

	/* fb_flow_parse_line */
	{
		char line[256];
		int blank;

		memset(&key, 0xaa, sizeof(key));
		memcpy(&k2, &key, sizeof(key));
		strcpy(line, "");
		blank = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: empty line ok");
		ASSERT_EQ(blank, 1, "parse_line: empty line is blank");
		strcpy(line, "   # comment");
		blank = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: comment line ok");
		ASSERT_EQ(blank, 1, "parse_line: comment-only line is blank");
		strcpy(line, " \t\r\n");
		blank = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: whitespace-only line ok");
		ASSERT_EQ(blank, 1, "parse_line: whitespace-only line is blank");
		ASSERT_TRUE(!memcmp(&key, &k2, sizeof(key)),
			    "parse_line: blank lines leave key untouched");

		n = split_words("udp 198.51.100.1:53 203.0.113.7:4000", buf, sizeof(buf), words, 8);
		fb_flow_parse(n, words, &k2, err, sizeof(err));

		strcpy(line, "udp 198.51.100.1:53 203.0.113.7:4000 # trailing comment");
		blank = 1;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: FLOW with trailing comment ok");
		ASSERT_EQ(blank, 0, "parse_line: FLOW line is not blank");
		ASSERT_TRUE(!memcmp(&key, &k2, sizeof(key)),
			    "parse_line: trailing comment line gives the same key as argv");

		strcpy(line, "\tudp\t198.51.100.1:53  \t203.0.113.7:4000\r\n");
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: tabs and CRLF ending ok");
		ASSERT_TRUE(!memcmp(&key, &k2, sizeof(key)),
			    "parse_line: tabs and CRLF line gives the same key as argv");

		/* What an older build wrote of protocol 1 over IPv6 (bgp's
		 * state files): read back as that key, not refused as an
		 * operator's icmp-for-icmpv6 slip is. */
		strcpy(line, "icmp dst 2001:db8::/32");
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), 0,
			  "parse_line: an older build's 'icmp dst 2001:db8::/32' read back");
		ASSERT_TRUE(key.family == FB_FAMILY_IPV6 && key.proto == 1,
			    "parse_line: ... as protocol 1 over IPv6");
		n = split_words("icmp dst 2001:db8::/32", buf, sizeof(buf), words, 8);
		ASSERT_EQ(fb_flow_parse(n, words, &k2, err, sizeof(err)), -1,
			  "... the same words on a command line refused");
		strcpy(line, "udp 198.51.100.1:53 203.0.113.7:4000 extra");
		err[0] = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), -1,
			  "parse_line: rejects a word after the FLOW");
		ASSERT_TRUE(err[0] != 0, "parse_line: word after the FLOW has an error message");

		strcpy(line, "src 198.51.100.7 dst 2001:db8::5");
		err[0] = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), -1,
			  "parse_line: rejects two FLOWs on one line");

		strcpy(line, "udp 198.51.100.1:53 203.0.113.7:65536");
		err[0] = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), -1,
			  "parse_line: rejects a bad FLOW");
		ASSERT_TRUE(err[0] != 0, "parse_line: bad FLOW has an error message");

		strcpy(line, "a b c d e f g h i");
		err[0] = 0;
		ASSERT_EQ(fb_flow_parse_line(line, &key, &blank, err, sizeof(err)), -1,
			  "parse_line: rejects more than 8 words");
		ASSERT_TRUE(err[0] != 0, "parse_line: too many words has an error message");
	}
}

/* ---------------------------------------------------------------------- */
/* Addresses as text (rules/ntop.c): inet_ntop's own text                  */

#include <arpa/inet.h>
#include "rules/ntop.h"

/* Every pattern of zero and non-zero groups (the "::" run, its ties,
 * the IPv4-compatible and v4-mapped forms), each non-zero group of 1 to 4
 * hex digits, and 20,000 random addresses; every IPv4 octet value. */
void test_ntop(void)
{
	static const unsigned vals[] = { 1, 0xf, 0x10, 0xab, 0x100, 0xfff, 0x1000, 0xffff, 0x2001 };
	char want[INET6_ADDRSTRLEN], got[INET6_ADDRSTRLEN];
	unsigned seed = 7, bad = 0, n = 0, m, v, i;
	__u8 a[16];

	for (m = 0; m < 256; m++)
		for (v = 0; v < sizeof(vals) / sizeof(vals[0]) + 1; v++) {
			for (i = 0; i < 8; i++) {
				unsigned w = 0;

				if (m >> i & 1) {
					seed = seed * 1103515245 + 12345;
					w = v < sizeof(vals) / sizeof(vals[0])
						    ? vals[v]
						    : (seed >> 8 & 0xffff) | 1;
				}
				/* the v4-mapped word, and ::1 */
				if (v == 3 && i == 5 && m == 0xc0)
					w = 0xffff;
				a[2 * i] = w >> 8;
				a[2 * i + 1] = w;
			}
			inet_ntop(AF_INET6, a, want, sizeof(want));
			bad += fb_ntop6(a, got) != strlen(want) || strcmp(got, want);
			n++;
		}
	for (i = 0; i < 20000; i++) {
		for (v = 0; v < 16; v++) {
			seed = seed * 1103515245 + 12345;
			/* mostly zero bytes: runs of zero groups */
			a[v] = seed >> 24 < 100 ? seed >> 8 : 0;
		}
		inet_ntop(AF_INET6, a, want, sizeof(want));
		bad += fb_ntop6(a, got) != strlen(want) || strcmp(got, want);
		n++;
	}
	memset(a, 0, 16);
	a[10] = a[11] = 0xff;
	for (v = 0; v < 256; v++) {
		a[12] = v;
		a[13] = 255 - v;
		a[14] = v / 10;
		a[15] = v % 3 ? v : 0;
		inet_ntop(AF_INET6, a, want, sizeof(want));
		bad += fb_ntop6(a, got) != strlen(want) || strcmp(got, want);
		inet_ntop(AF_INET, a + 12, want, sizeof(want));
		bad += fb_ntop4(a + 12, got) != strlen(want) || strcmp(got, want);
		n += 2;
	}
	printf("# ntop: %u addresses against inet_ntop, %u differ\n", n, bad);
	ASSERT_EQ(bad, 0, "fb_ntop4/fb_ntop6 write inet_ntop's text");
}

/* fb_flow_format of prefix rules, by hand now: the text the snprintf
 * formatter wrote (dst/src, IPv4, IPv6, v4-mapped, every length). */
void test_flow_format_prefix(void)
{
	static const char *const addrs[] = { "203.0.113.7",  "0.0.0.0",	   "2001:db8::1",
					     "::",	     "::ffff:0:0", "2001:db8:1:2:3:4:5:6",
					     "::203.0.113.8" };
	char text[FB_FLOW_STR], want[FB_FLOW_STR], in[200], a6[INET6_ADDRSTRLEN], err[200];
	struct fb_key k;
	unsigned i, l, bad = 0, n = 0, kind;
	int blank;

	for (kind = 0; kind < 2; kind++)
		for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++)
			for (l = 0; l <= 128; l++) {
				bool v4 = !strchr(addrs[i], ':');

				if (v4 && l > 32)
					break;
				snprintf(in, sizeof(in), "%s %s/%u", kind ? "src" : "dst", addrs[i],
					 l);
				if (fb_flow_parse_line(in, &k, &blank, err, sizeof(err)) || blank)
					continue;
				fb_flow_format(&k, text, sizeof(text));
				/* The old formatter's text. */
				if (v4)
					inet_ntop(AF_INET, (kind ? k.saddr : k.daddr) + 12, a6,
						  sizeof(a6));
				else if (fb_addr_v4mapped(kind ? k.saddr : k.daddr))
					snprintf(a6, sizeof(a6), "::ffff:%x:%x",
						 (kind ? k.saddr : k.daddr)[12] << 8 |
							 (kind ? k.saddr : k.daddr)[13],
						 (kind ? k.saddr : k.daddr)[14] << 8 |
							 (kind ? k.saddr : k.daddr)[15]);
				else
					inet_ntop(AF_INET6, kind ? k.saddr : k.daddr, a6,
						  sizeof(a6));
				if (k.plen == 128)
					snprintf(want, sizeof(want), "%s %s", kind ? "src" : "dst",
						 a6);
				else
					snprintf(want, sizeof(want), "%s %s/%d",
						 kind ? "src" : "dst", a6,
						 v4 ? k.plen - 96 : k.plen);
				bad += strcmp(text, want) != 0;
				if (strcmp(text, want))
					printf("# '%s': '%s', want '%s'\n", in, text, want);
				n++;
			}
	printf("# flow format: %u prefix rules, %u differ\n", n, bad);
	ASSERT_TRUE(n > 1000 && !bad, "fb_flow_format of prefix rules: the snprintf text");
}
