// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of any shape (include/flowbloom/mask.h, user/lib/rules/rule.c): the
 * clause grammar, its normalisation to the historical kinds, port ranges as
 * exact covers of port prefixes, the mask key's injectivity (decoded back
 * to the same mask and values) and coverage (a packet inside a rule's mask
 * builds the rule's key, one outside does not), and the packed table.
 */
#include "unit.h"
#include "flowbloom/mask.h"

static int parse_text(const char *text, struct fb_key *keys, size_t *n, char *err, size_t errlen)
{
	char buf[256], *words[FB_FLOW_WORDS + 2], *save = NULL, *w;
	int nw = 0, used;

	snprintf(buf, sizeof(buf), "%s", text);
	for (w = strtok_r(buf, " ", &save); w && nw < FB_FLOW_WORDS + 2;
	     w = strtok_r(NULL, " ", &save))
		words[nw++] = w;
	used = fb_flow_parse_keys(nw, words, keys, n, err, errlen);
	return used == nw ? 0 : used < 0 ? -1 : -2;
}

/* Parses to n keys, the first of descriptor want (0: a historical kind),
 * and every key's text parses back to that key alone. */
static void accept_rule(const char *text, size_t want_n, __u32 want_desc, int want_kind)
{
	struct fb_key keys[FB_RULE_KEYS_MAX], again[FB_RULE_KEYS_MAX];
	char err[256], label[400], fbuf[FB_FLOW_STR];
	size_t n = 0, m, i;
	int rc = parse_text(text, keys, &n, err, sizeof(err));

	snprintf(label, sizeof(label), "rule '%s': parses (%s)", text, rc ? err : "ok");
	if (!ASSERT_EQ(rc, 0, label))
		return;
	snprintf(label, sizeof(label), "rule '%s': %zu keys", text, want_n);
	ASSERT_EQ(n, want_n, label);
	snprintf(label, sizeof(label), "rule '%s': kind %d", text, want_kind);
	ASSERT_EQ(keys[0].kind, want_kind, label);
	if (want_kind == FB_KIND_MASK) {
		snprintf(label, sizeof(label), "rule '%s': shape descriptor", text);
		ASSERT_EQ(fb_mask_of_key(&keys[0], NULL), want_desc, label);
	}
	for (i = 0; i < n; i++) {
		fb_flow_format(&keys[i], fbuf, sizeof(fbuf));
		rc = parse_text(fbuf, again, &m, err, sizeof(err));
		snprintf(label, sizeof(label), "rule '%s' key %zu: '%s' parses back to it alone",
			 text, i, fbuf);
		ASSERT_TRUE(!rc && m == 1 && !memcmp(&again[0], &keys[i], sizeof(keys[i])), label);
	}
}

static void refuse(const char *text, const char *why)
{
	struct fb_key keys[FB_RULE_KEYS_MAX];
	char err[256] = "", label[400];
	size_t n;
	int rc = parse_text(text, keys, &n, err, sizeof(err));

	snprintf(label, sizeof(label), "refuse '%s' (%s): %s", text, why, err);
	ASSERT_TRUE(rc != 0 && err[0], label);
}

static void same_key(const char *a, const char *b)
{
	struct fb_key ka[FB_RULE_KEYS_MAX], kb[FB_RULE_KEYS_MAX];
	char err[256], label[600];
	size_t na = 0, nb = 0;
	int ra = parse_text(a, ka, &na, err, sizeof(err)),
	    rb = parse_text(b, kb, &nb, err, sizeof(err));

	snprintf(label, sizeof(label), "'%s' is the same rule as '%s'", a, b);
	ASSERT_TRUE(!ra && !rb && na == 1 && nb == 1 && !memcmp(&ka[0], &kb[0], sizeof(ka[0])),
		    label);
}

/* The keys of text decoded: its ports' covers, checked exact against [lo, hi]. */
static void port_cover(unsigned lo, unsigned hi)
{
	struct fb_key keys[FB_RULE_KEYS_MAX];
	char text[128], err[256], label[600];
	unsigned long long total = 0;
	unsigned prev_end = 0, lens = 0;
	size_t n = 0, i;
	int ok = 1;

	snprintf(text, sizeof(text), "tcp dst 203.0.113.7 dport %u-%u", lo, hi);
	if (parse_text(text, keys, &n, err, sizeof(err))) {
		snprintf(label, sizeof(label), "'%s' parses (%s)", text, err);
		ASSERT_TRUE(0, label);
		return;
	}
	for (i = 0; i < n; i++) {
		struct fb_key v;
		__u32 d = fb_mask_of_key(&keys[i], &v);
		unsigned l = keys[i].kind == FB_KIND_FLOW ? 16 : FB_MASK_DPLEN(d);
		unsigned p = ntohs(keys[i].kind == FB_KIND_FLOW ? keys[i].dport : v.dport);
		unsigned size = 1U << (16 - l);

		lens |= 1U << l;
		/* In order, disjoint, aligned, inside the range. */
		ok &= p % size == 0 && p >= lo && p + size - 1 <= hi && (!i || p >= prev_end);
		prev_end = p + size;
		total += size;
	}
	snprintf(label, sizeof(label), "'%s': %zu port prefixes cover exactly the range", text, n);
	ASSERT_TRUE(ok && total == hi - lo + 1ULL, label);
	snprintf(label, sizeof(label), "'%s': at most %d rules", text, FB_RULE_KEYS_MAX);
	ASSERT_TRUE(n <= FB_RULE_KEYS_MAX, label);
	/* One length when that fits (one shape), else the fewest prefixes. */
	if (__builtin_popcount(lens) > 1) {
		unsigned longest = 31 - __builtin_clz(lens), step = 1U << (16 - longest);

		snprintf(label, sizeof(label), "'%s': several lengths only when one would not fit",
			 text);
		ASSERT_TRUE((hi - lo + 1) / step > FB_RULE_KEYS_MAX, label);
	}
}

/* The fewest aligned port prefixes covering [lo, hi], counted here. */
static unsigned min_prefixes(unsigned lo, unsigned hi)
{
	unsigned n = 0, a = lo, size;

	while (a <= hi) {
		for (size = 65536; a % size || a + size - 1 > hi; size /= 2)
			;
		a += size;
		n++;
	}
	return n;
}

/* A rule of a source and a destination port range (one family, so at most
 * FB_RULE_KEYS_MAX keys): refused exactly when the fewest prefixes of the
 * two ranges multiply past the cap, and else its keys cover exactly the
 * pairs of the two ranges (each once). */
static void port_pair(unsigned slo, unsigned shi, unsigned dlo, unsigned dhi)
{
	struct fb_key keys[FB_RULE_KEYS_MAX];
	char text[128], err[256] = "", label[600];
	unsigned long long total = 0;
	unsigned want = min_prefixes(slo, shi) * min_prefixes(dlo, dhi);
	size_t n = 0, i;
	int rc, ok = 1;

	snprintf(text, sizeof(text), "udp dst 203.0.113.0/24 sport %u-%u dport %u-%u", slo, shi,
		 dlo, dhi);
	rc = parse_text(text, keys, &n, err, sizeof(err));
	snprintf(label, sizeof(label), "'%s': %s (fewest prefixes: %u keys) (%s)", text,
		 want <= FB_RULE_KEYS_MAX ? "taken" : "refused", want, rc ? err : "ok");
	if (!ASSERT_EQ(!rc, want <= FB_RULE_KEYS_MAX, label) || rc)
		return;
	for (i = 0; i < n; i++) {
		struct fb_key v;
		__u32 d = fb_mask_of_key(&keys[i], &v);
		unsigned sl = FB_MASK_SPLEN(d), dl = FB_MASK_DPLEN(d);
		unsigned sp = ntohs(v.sport), dp = ntohs(v.dport);
		unsigned ss = 1U << (16 - sl), ds = 1U << (16 - dl);

		ok &= sl && dl && sp % ss == 0 && dp % ds == 0 && sp >= slo && sp + ss - 1 <= shi &&
		      dp >= dlo && dp + ds - 1 <= dhi;
		total += (unsigned long long)ss * ds;
	}
	/* Disjoint blocks inside the product whose sizes add up to it. */
	for (i = 0; i < n && ok; i++)
		for (size_t j = i + 1; j < n; j++) {
			struct fb_key a, b;
			__u32 da = fb_mask_of_key(&keys[i], &a), db = fb_mask_of_key(&keys[j], &b);
			unsigned as = ntohs(a.sport), ae = as + (1U << (16 - FB_MASK_SPLEN(da))),
				 bs = ntohs(b.sport), be = bs + (1U << (16 - FB_MASK_SPLEN(db)));
			unsigned ad = ntohs(a.dport), af = ad + (1U << (16 - FB_MASK_DPLEN(da))),
				 bd = ntohs(b.dport), bf = bd + (1U << (16 - FB_MASK_DPLEN(db)));

			ok &= !(as < be && bs < ae && ad < bf && bd < af);
		}
	snprintf(label, sizeof(label), "'%s': %zu keys cover exactly the pairs", text, n);
	ASSERT_TRUE(ok && total == (shi - slo + 1ULL) * (dhi - dlo + 1ULL), label);
}

static __u32 random_desc(uint64_t *seed, int family)
{
	uint64_t r = test_rand64(seed);
	__u32 s = r % 3 ? (__u32)(r >> 8) % 129 : 0, t = (r >> 20) % 3 ? (__u32)(r >> 24) % 129 : 0;
	__u32 sp = (r >> 32) % 3 ? (__u32)(r >> 36) % 17 : 0;
	__u32 dp = (r >> 40) % 3 ? (__u32)(r >> 44) % 17 : 0, pr = (r >> 50) & 1;

	if (!family) {
		s = s ? 97 + s % 32 : 0;
		t = t ? 97 + t % 32 : 0;
	}
	if (!s && !t && !sp && !dp)
		pr = 1;
	return fb_mask_desc(s, t, sp, dp, pr, family);
}

static void random_packet(uint64_t *seed, struct fb_key *p, int family)
{
	test_random_flow(seed, p, family);
	p->kind = FB_KIND_FLOW;
	p->plen = 0;
	p->family = family;
}

/* Injectivity and coverage over random masks and packets. */
static void mask_properties(void)
{
	uint64_t seed = 0x5eed19;
	int i, bad_decode = 0, bad_cover = 0, bad_outside = 0, bad_valid = 0;

	for (i = 0; i < 20000; i++) {
		int fam = i & 1, f;
		__u32 d = random_desc(&seed, fam), got;
		struct fb_key p, k, v, k2, q;

		random_packet(&seed, &p, fam);
		bad_valid += !fb_mask_valid(d);
		fb_mask_key(&k, &p, d);
		/* Decoding gives the mask back and values that build the same key. */
		got = fb_mask_of_key(&k, &v);
		v.kind = FB_KIND_FLOW;
		fb_mask_key(&k2, &v, d);
		bad_decode += got != d || memcmp(&k, &k2, sizeof(k));
		/* Another packet equal under the mask: same key. */
		q = p;
		if (FB_MASK_SLEN(d) < 128)
			q.saddr[15] ^= 1;
		if (FB_MASK_DPLEN(d) < 16)
			q.dport ^= htons(1);
		if (!FB_MASK_PROTO(d))
			q.proto ^= 0x40;
		fb_mask_key(&k2, &q, d);
		bad_cover += !!memcmp(&k, &k2, sizeof(k));
		/* One bit flipped inside a masked field: another key. */
		q = p;
		f = (int)(test_rand64(&seed) % 5);
		if (f == 0 && FB_MASK_SLEN(d))
			q.saddr[(FB_MASK_SLEN(d) - 1) / 8] ^= 0x80 >> ((FB_MASK_SLEN(d) - 1) % 8);
		else if (f == 1 && FB_MASK_DLEN(d))
			q.daddr[(FB_MASK_DLEN(d) - 1) / 8] ^= 0x80 >> ((FB_MASK_DLEN(d) - 1) % 8);
		else if (f == 2 && FB_MASK_SPLEN(d))
			q.sport ^= htons(0x8000 >> (FB_MASK_SPLEN(d) - 1));
		else if (f == 3 && FB_MASK_DPLEN(d))
			q.dport ^= htons(0x8000 >> (FB_MASK_DPLEN(d) - 1));
		else if (FB_MASK_PROTO(d))
			q.proto ^= 1;
		else
			q.family ^= 1; /* the family is always in the key */
		fb_mask_key(&k2, &q, d);
		bad_outside += !memcmp(&k, &k2, sizeof(k));
	}
	ASSERT_EQ(bad_valid, 0, "mask: random descriptors are valid");
	ASSERT_EQ(bad_decode, 0, "mask: a key decodes to its mask and values (injective)");
	ASSERT_EQ(bad_cover, 0, "mask: packets equal under the mask build the same key");
	ASSERT_EQ(bad_outside, 0, "mask: a packet differing inside the mask builds another key");

	/* Two different masks over the same packet: different keys. */
	{
		int clash = 0;

		for (i = 0; i < 2000; i++) {
			__u32 a = random_desc(&seed, 0), b = random_desc(&seed, 0);
			struct fb_key p, ka, kb;

			if (a == b)
				continue;
			random_packet(&seed, &p, 0);
			fb_mask_key(&ka, &p, a);
			fb_mask_key(&kb, &p, b);
			clash += !memcmp(&ka, &kb, sizeof(ka));
		}
		ASSERT_EQ(clash, 0, "mask: two masks never give one key");
	}
}

static void table(void)
{
	struct fb_prefixes px;
	uint64_t seed = 77;
	__u32 d[FB_MAX_MASKS];
	int i, ok = 1, round;

	for (round = 0; round < 100; round++) {
		memset(&px, 0, sizeof(px));
		for (i = 0; i < FB_MAX_MASKS; i++) {
			d[i] = random_desc(&seed, i & 1);
			fb_mask_put(px.masks, i, d[i]);
		}
		/* Rewriting one leaves its neighbours. */
		d[3] = random_desc(&seed, 1);
		fb_mask_put(px.masks, 3, d[3]);
		for (i = 0; i < FB_MAX_MASKS; i++)
			ok &= fb_mask_get(px.masks, i) == d[i];
		for (i = 0; i < FB_PFX_NR; i++)
			ok &= px.list[i].n == 0;
	}
	ASSERT_TRUE(ok, "mask table: 8 packed descriptors read back, the prefix lists untouched");
	ASSERT_EQ(fb_mask_valid(0), 0,
		  "mask table: the all-zero descriptor is no rule's (ends the table)");
}

void test_rule_parse(void)
{
	struct fb_key keys[FB_RULE_KEYS_MAX];
	char err[256];
	size_t n;
	int used;
	char *legacy[] = { "src", "198.51.100.0/24", "dst", "203.0.113.0/24" };

	accept_rule("udp dst 203.0.113.0/24 dport 53", 1, fb_mask_desc(0, 120, 0, 16, 1, 0),
		    FB_KIND_MASK);
	accept_rule("udp sport 123 dst 198.51.100.0/24", 1, fb_mask_desc(0, 120, 16, 0, 1, 0),
		    FB_KIND_MASK);
	accept_rule("tcp dst 203.0.113.7 dport 443", 1, fb_mask_desc(0, 128, 0, 16, 1, 0),
		    FB_KIND_MASK);
	accept_rule("src 198.51.100.0/24 proto 6", 1, fb_mask_desc(120, 0, 0, 0, 1, 0),
		    FB_KIND_MASK);
	accept_rule("tcp dst 203.0.113.0/24 dport 1024-2047", 1, fb_mask_desc(0, 120, 0, 6, 1, 0),
		    FB_KIND_MASK);
	accept_rule("udp dst 2001:db8::/32 sport 53", 1, fb_mask_desc(0, 32, 16, 0, 1, 1),
		    FB_KIND_MASK);
	accept_rule("any src 198.51.100.0/24 dst 203.0.113.0/24", 1,
		    fb_mask_desc(120, 120, 0, 0, 0, 0), FB_KIND_MASK);
	accept_rule("dport 22 dst 198.51.100.0/24", 1, fb_mask_desc(0, 120, 0, 16, 0, 0),
		    FB_KIND_MASK);
	/* No address: both families, one key each. */
	accept_rule("udp dport 53", 2, fb_mask_desc(0, 0, 0, 16, 1, 0), FB_KIND_MASK);
	accept_rule("proto icmp", 2, fb_mask_desc(0, 0, 0, 0, 1, 0), FB_KIND_MASK);
	accept_rule("udp dst 0.0.0.0/0 dport 53", 1, fb_mask_desc(0, 0, 0, 16, 1, 0), FB_KIND_MASK);
	accept_rule("udp dst ::/0 dport 53", 1, fb_mask_desc(0, 0, 0, 16, 1, 1), FB_KIND_MASK);
	/* A range of several lengths: one length when that fits. */
	accept_rule("tcp dst 203.0.113.0/24 dport 1024-65535", 63, fb_mask_desc(0, 120, 0, 6, 1, 0),
		    FB_KIND_MASK);
	/* Every port but 0: four lengths (15 prefixes each of /16, /12, /8,
	 * /4) rather than the minimal cover's 16 lengths, over the bound. */
	accept_rule("udp dst 203.0.113.9 dport 1-65535", 60, fb_mask_desc(0, 128, 0, 16, 1, 0),
		    FB_KIND_MASK);
	/* The historical shapes stay what they were. */
	accept_rule("any src 198.51.100.0/24", 1, 0, FB_KIND_SRC);
	accept_rule("any dst 2001:db8::/48", 1, 0, FB_KIND_DST);
	accept_rule("tcp src 198.51.100.1 sport 1 dst 203.0.113.7 dport 2", 1, 0, FB_KIND_FLOW);
	accept_rule("icmp src 198.51.100.1 dst 203.0.113.7", 1, 0, FB_KIND_FLOW);
	same_key("tcp src 198.51.100.1 sport 1 dst 203.0.113.7 dport 2",
		 "tcp 198.51.100.1:1 203.0.113.7:2");
	same_key("tcp dport 2 dst 203.0.113.7 sport 1 src 198.51.100.1",
		 "tcp 198.51.100.1:1 203.0.113.7:2");
	same_key("icmp dst 203.0.113.7 src 198.51.100.1", "icmp 198.51.100.1 203.0.113.7");
	same_key("any src 198.51.100.0/24", "src 198.51.100.0/24");
	same_key("src 198.51.100.0/24 proto tcp", "tcp src 198.51.100.0/24");
	same_key("udp dst 203.0.113.0/24 dport 53-53", "udp dst 203.0.113.0/24 dport 53");
	same_key("udp dst 203.0.113.0/24 dport 0-65535", "udp dst 203.0.113.0/24");
	same_key("any dst 203.0.113.0/24 sport 0-65535", "dst 203.0.113.0/24");
	/* So is an address /0 (it fixes no bit): the other address alone is that
	 * address's rule, as `flows` prints it and `del` reads it back. */
	same_key("any dst 203.0.113.7 src 0.0.0.0/0", "dst 203.0.113.7");
	same_key("any src 2001:db8::/32 dst ::/0", "src 2001:db8::/32");
	accept_rule("any dst 203.0.113.7 src 0.0.0.0/0", 1, 0, FB_KIND_DST);

	/* `src A dst B` is still two rules (what it always was). */
	used = fb_flow_parse_keys(4, legacy, keys, &n, err, sizeof(err));
	ASSERT_TRUE(used == 2 && n == 1 && keys[0].kind == FB_KIND_SRC,
		    "rule: 'src A dst B' is still two one-address rules");

	refuse("icmp dst 203.0.113.7 dport 5", "icmp has no ports");
	refuse("any", "no field");
	refuse("any dst 0.0.0.0/0 src 0.0.0.0/0", "fixes nothing");
	refuse("udp src 198.51.100.1 dst 2001:db8::1", "families differ");
	refuse("proto 0 dst 2001:db8::/32", "an IPv6 extension header");
	refuse("tcp dst 203.0.113.7 dport 5-3", "range backwards");
	refuse("tcp dst 203.0.113.7 dport 70000", "port above 65535");
	refuse("tcp dst 203.0.113.7 dport", "missing value");
	refuse("tcp dst 203.0.113.7 dport 1-2-3", "bad range");
	refuse("udp dst 203.0.113.0/24 sport 1-65534 dport 1-65534", "more than the cap");
	refuse("proto frob dst 203.0.113.7", "unknown protocol");
	refuse("udp dst 203.0.113.300", "bad address");

	port_cover(0, 65535);
	port_cover(53, 53);
	port_cover(1024, 65535);
	port_cover(1, 65535);
	port_cover(1, 65534);
	port_cover(8000, 8080);
	port_cover(6881, 6999);
	{
		uint64_t seed = 1999;
		int i;

		for (i = 0; i < 40; i++) {
			unsigned a = test_rand64(&seed) % 65536, b = test_rand64(&seed) % 65536;

			if ((a > b ? a - b : b - a) > 2000 && i & 1)
				b = a + (unsigned)(test_rand64(&seed) % 300);
			if (b > 65535)
				b = 65535;
			if (a > b) {
				unsigned t = a;

				a = b;
				b = t;
			}
			/* Random wide ranges may need more than the cap: skip those. */
			{
				struct fb_key k[FB_RULE_KEYS_MAX];
				char text[80], e[256];
				size_t m;

				snprintf(text, sizeof(text), "tcp dst 203.0.113.7 dport %u-%u", a,
					 b);
				if (parse_text(text, k, &m, e, sizeof(e)))
					continue;
			}
			port_cover(a, b);
		}
	}
	/* Two ranges share the cap: high source ports to two ports fit as
	 * 14 x 2 keys, though the source range alone fits 63 of one length. */
	port_pair(1024, 65535, 53, 54);
	port_pair(1024, 65535, 135, 139);
	port_pair(1, 65535, 80, 80);
	port_pair(53, 54, 1024, 65535);
	port_pair(1, 65534, 1, 65534);
	{
		uint64_t seed = 2024;
		int i;

		for (i = 0; i < 300; i++) {
			unsigned r[4], j;

			for (j = 0; j < 4; j++)
				r[j] = (unsigned)(test_rand64(&seed) % 65536);
			/* Short ranges at times, so that pairs fit. */
			if (i % 3 == 0)
				r[1] = r[0] + (unsigned)(test_rand64(&seed) % 40);
			if (i % 2 == 0)
				r[3] = r[2] + (unsigned)(test_rand64(&seed) % 40);
			for (j = 0; j < 4; j++)
				r[j] = r[j] > 65535 ? 65535 : r[j];
			port_pair(r[0] < r[1] ? r[0] : r[1], r[0] < r[1] ? r[1] : r[0],
				  r[2] < r[3] ? r[2] : r[3], r[2] < r[3] ? r[3] : r[2]);
		}
	}
	mask_properties();
	table();
}
