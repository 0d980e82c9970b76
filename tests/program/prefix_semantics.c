// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_prefix, 1: the semantics table (every rule shape against addresses
 * on both sides of each edge), IPv6 packets with v4-mapped addresses and
 * `query` on them.
 */
#include "prefix_test.h"

/* -------------------------------------------------- 1. semantics table */

struct row {
	const char *rule;
	const char *in[6];
	const char *out[7];
};

static const struct row table[] = {
	{ "198.51.100.0/24",
	  { "198.51.100.0", "198.51.100.255", "198.51.100.128" },
	  { "198.51.99.255", "198.51.101.0", "203.0.113.0", "2001:db8::c633:6400" } },
	{ "198.51.100.7/24", /* host bits set: behaves as /24 */
	  { "198.51.100.0", "198.51.100.255", "198.51.100.7" },
	  { "198.51.99.255", "198.51.101.0" } },
	{ "::ffff:198.51.100.0/120", /* the same rule, spelled v4-mapped */
	  { "198.51.100.0", "198.51.100.255", "198.51.100.77" },
	  { "198.51.99.255", "198.51.101.0", "2001:db8::c633:6400" } },
	{ "198.51.100.7",
	  { "198.51.100.7" },
	  { "198.51.100.6", "198.51.100.8", "2001:db8::c633:6407" } },
	{ "198.51.100.7/32", { "198.51.100.7" }, { "198.51.100.6", "198.51.100.8" } },
	{ "0.0.0.0/0",
	  { "0.0.0.0", "255.255.255.255", "198.51.100.1", "203.0.113.254" },
	  { "2001:db8::1", "::", "::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" } },
	{ "::ffff:0.0.0.0/96", /* 0.0.0.0/0 spelled v4-mapped */
	  { "0.0.0.0", "255.255.255.255", "198.51.100.1" },
	  { "2001:db8::1", "::" } },
	{ "::/0", /* every IPv6 packet, no IPv4 packet */
	  { "2001:db8::1", "::", "::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" },
	  { "198.51.100.1", "0.0.0.0", "255.255.255.255", "203.0.113.1" } },
	{ "::/80", /* covers ::ffff:0:0/96 numerically, but IPv4 is its own list */
	  { "::1", "::fffe:0:1" },
	  { "198.51.100.1", "0:0:0:0:1::", "2001:db8::1" } },
	{ "128.0.0.0/1",
	  { "128.0.0.0", "255.255.255.255", "198.51.100.1", "203.0.113.1" },
	  { "127.255.255.255", "0.0.0.0", "8000::1" } },
	{ "0.0.0.0/1", { "0.0.0.0", "127.255.255.255" }, { "128.0.0.0", "198.51.100.1", "::1" } },
	{ "198.0.0.0/7",
	  { "198.0.0.0", "199.255.255.255", "198.51.100.1" },
	  { "197.255.255.255", "200.0.0.0", "203.0.113.1" } },
	{ "198.51.100.6/31",
	  { "198.51.100.6", "198.51.100.7" },
	  { "198.51.100.5", "198.51.100.8" } },
	{ "198.51.100.128/25",
	  { "198.51.100.128", "198.51.100.255" },
	  { "198.51.100.127", "198.51.101.0" } },
	{ "2001:db8::/32",
	  { "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8:1234::1" },
	  { "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::", "32.1.13.184" } },
	{ "2001:db8:8000::/33",
	  { "2001:db8:8000::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff" },
	  { "2001:db8:7fff:ffff:ffff:ffff:ffff:ffff", "2001:db9::" } },
	{ "2001:db8:0:1::/64",
	  { "2001:db8:0:1::", "2001:db8:0:1:ffff:ffff:ffff:ffff" },
	  { "2001:db8:0:0:ffff:ffff:ffff:ffff", "2001:db8:0:2::" } },
	{ "2001:db8::c633:6400/120",
	  { "2001:db8::c633:6400", "2001:db8::c633:64ff" },
	  { "2001:db8::c633:63ff", "2001:db8::c633:6500", "198.51.100.0" } },
	{ "2001:db8::2/127", { "2001:db8::2", "2001:db8::3" }, { "2001:db8::1", "2001:db8::4" } },
	{ "2001:db8::1/128", { "2001:db8::1" }, { "2001:db8::", "2001:db8::2", "2001:db8::1:0" } },
	{ "2001:db8::1", { "2001:db8::1" }, { "2001:db8::", "2001:db8::2" } },
	{ "8000::/1",
	  { "8000::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" },
	  { "7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::1", "198.51.100.1" } },
	{ "::/1",
	  { "::", "2001:db8::1", "7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" },
	  { "8000::", "198.51.100.1" } },
	{ "2001:db8:1:2:3:4:5:6/32", /* host bits set */
	  { "2001:db8::", "2001:db8:ffff::1" },
	  { "2001:db9::", "2001:db7::" } },
};

static void one_rule(struct fb_store *f, const struct prog *pg, const struct row *r, int dst)
{
	char rule[96], *argv[2] = { dst ? "dst" : "src", rule }, err[256], l[256];
	struct fb_key key;
	struct pfx p;
	size_t bad;
	int i, v, in;
	__u32 kind, want_kind = dst ? FB_KIND_DST : FB_KIND_SRC;

	snprintf(rule, sizeof(rule), "%s", r->rule);
	if (!ASSERT_EQ(fb_flow_parse(2, argv, &key, err, sizeof(err)), 2, "parse the rule"))
		return;
	memcpy(p.a, dst ? key.daddr : key.saddr, 16);
	p.plen = key.plen;
	p.fam = key.family;
	fb_store_lock(f);
	v = fb_rules_replace(f, f->hdr->nblocks, f->hdr->k, &key, 1, &bad);
	fb_store_unlock(f);
	snprintf(l, sizeof(l), "%s %s: replace the filter with the one rule", argv[0], r->rule);
	if (!ASSERT_EQ(v, 0, l))
		return;
	for (in = 1; in >= 0; in--) {
		const char *const *list = in ? r->in : r->out;
		int n = in ? 6 : 7;

		for (i = 0; i < n && list[i]; i++) {
			__u8 a[16];
			const __u8 *o;
			char d[160];
			int verdict;

			addr(list[i], a);
			o = other_of(a);
			/* The table itself against the reference semantics. */
			if (ref_inside(&p, a) != in) {
				snprintf(d, sizeof(d), "test table: %s %s listed as %s", r->rule,
					 list[i], in ? "inside" : "outside");
				test_check(false, d, NULL);
			}
			verdict = dst ? send_pkt(pg, o, a, &kind) : send_pkt(pg, a, o, &kind);
			snprintf(l, sizeof(l), "%s %s: packet %s %s %s", argv[0], r->rule,
				 dst ? "to" : "from", list[i], in ? "matches" : "does not match");
			snprintf(d, sizeof(d), "verdict %d kind %u, want verdict %d kind %u",
				 verdict, kind, in ? XDP_DROP : XDP_PASS, in ? want_kind : 0);
			test_check(verdict == (in ? XDP_DROP : XDP_PASS) &&
					   kind == (in ? want_kind : 0),
				   l, d);
			/* The same address on the other side of the packet: a
			 * source rule never matches a destination and back. */
			if (!ref_inside(&p, o)) {
				verdict =
					dst ? send_pkt(pg, a, o, &kind) : send_pkt(pg, o, a, &kind);
				snprintf(l, sizeof(l),
					 "%s %s: packet %s %s (other side) does not match", argv[0],
					 r->rule, dst ? "from" : "to", list[i]);
				snprintf(d, sizeof(d), "verdict %d kind %u", verdict, kind);
				test_check(verdict == XDP_PASS && kind == 0, l, d);
			}
		}
	}
}

/*
 * v4-mapped addresses in IPv6 packets (::ffff:a.b.c.d is not valid on the
 * wire, so only an attacker sends it): the family comes from the IP
 * header, so such a packet meets IPv6 rules (::/0, a blocked destination
 * /48) and never an IPv4 rule, 5-tuples included; `query` answers as the
 * data path does. Before the family was in the key, the program took these
 * packets for IPv4 ones and let them past every IPv6 rule.
 */
static const struct mcase {
	const char *rule;
	const char *pkt;   /* "4": IPv4 198.51.100.5 -> 203.0.113.77; "6m": IPv6
			    * ::ffff:198.51.100.5 -> 2001:db8:ffff::1; "6mm": IPv6
			    * ::ffff:198.51.100.5 -> ::ffff:203.0.113.77 */
	const char *query; /* the same packet's question, as `query` takes it */
	__u32 kind;	   /* what matches, 0: nothing */
} mcases[] = {
	{ "dst 2001:db8:ffff::/48", "6m", "dst 2001:db8:ffff::1", FB_KIND_DST },
	{ "dst ::/0", "6m", "dst 2001:db8:ffff::1", FB_KIND_DST },
	{ "dst ::/0", "4", "dst 203.0.113.77", 0 },
	{ "src ::/0", "6m", "src ::ffff:c633:6405", FB_KIND_SRC },
	{ "src ::/0", "6mm", "src ::ffff:c633:6405", FB_KIND_SRC },
	{ "src ::/0", "4", "src 198.51.100.5", 0 },
	{ "src ::/80", "6m", "src ::ffff:c633:6405", FB_KIND_SRC },
	{ "src ::/80", "4", "src 198.51.100.5", 0 },
	{ "src 198.51.100.0/24", "6m", "src ::ffff:c633:6405", 0 },
	{ "src 198.51.100.0/24", "4", "src 198.51.100.5", FB_KIND_SRC },
	{ "src 198.51.100.0/24", "4", "src ::ffff:198.51.100.5", FB_KIND_SRC },
	{ "src ::ffff:198.51.100.5", "6m", "src ::ffff:c633:6405", 0 },
	{ "src ::ffff:198.51.100.5", "4", "src 198.51.100.5", FB_KIND_SRC },
	{ "src ::ffff:c633:6405", "6m", "src ::ffff:c633:6405", FB_KIND_SRC },
	{ "src ::ffff:c633:6405", "4", "src 198.51.100.5", 0 },
	{ "src ::ffff:0:0/96", "6m", "src ::ffff:c633:6405", FB_KIND_SRC },
	{ "src ::ffff:0:0/96", "4", "src 198.51.100.5", 0 },
	{ "src ::ffff:0.0.0.0/96", "6m", "src ::ffff:c633:6405", 0 },
	{ "src ::ffff:0.0.0.0/96", "4", "src 198.51.100.5", FB_KIND_SRC },
	{ "dst ::ffff:203.0.113.0/120", "6mm", "dst ::ffff:cb00:714d", 0 },
	{ "dst ::ffff:cb00:7100/120", "6mm", "dst ::ffff:cb00:714d", FB_KIND_DST },
	{ "udp 198.51.100.5:40000 203.0.113.77:53", "4", "udp 198.51.100.5:40000 203.0.113.77:53",
	  FB_KIND_FLOW },
	{ "udp 198.51.100.5:40000 203.0.113.77:53", "6mm",
	  "udp [::ffff:c633:6405]:40000 [::ffff:cb00:714d]:53", 0 },
	{ "udp [::ffff:c633:6405]:40000 [::ffff:cb00:714d]:53", "6mm",
	  "udp [::ffff:c633:6405]:40000 [::ffff:cb00:714d]:53", FB_KIND_FLOW },
	{ "udp [::ffff:c633:6405]:40000 [::ffff:cb00:714d]:53", "4",
	  "udp 198.51.100.5:40000 203.0.113.77:53", 0 },
};

/* FLOW text into a key; aborts on a bad one (a bug in the table). */
static void flow_of(const char *text, struct fb_key *k)
{
	char buf[128], *w[4], *save = NULL, err[128];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &save); t && n < 4; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	if (fb_flow_parse(n, w, k, err, sizeof(err)) != n) {
		fprintf(stderr, "test bug: '%s': %s\n", text, err);
		abort();
	}
}

static void v4mapped_packets(struct fb_store *f, const struct prog *pg)
{
	__u8 m5[16], m77[16], v4s[16], v4d[16], d6[16];
	size_t i, bad;

	addr("::ffff:c633:6405", m5);  /* 198.51.100.5's bits */
	addr("::ffff:cb00:714d", m77); /* 203.0.113.77's bits */
	addr("198.51.100.5", v4s);
	addr("203.0.113.77", v4d);
	addr("2001:db8:ffff::1", d6);
	for (i = 0; i < sizeof(mcases) / sizeof(mcases[0]); i++) {
		const struct mcase *c = &mcases[i];
		struct fb_key rule, q;
		char l[256], d[128];
		__u32 kind;
		int v, want = c->kind ? XDP_DROP : XDP_PASS;

		flow_of(c->rule, &rule);
		fb_store_lock(f);
		v = fb_rules_replace(f, f->hdr->nblocks, f->hdr->k, &rule, 1, &bad);
		fb_store_unlock(f);
		snprintf(l, sizeof(l), "v4-mapped: %s: the rule alone in the filter", c->rule);
		if (!ASSERT_EQ(v, 0, l))
			continue;
		if (!strcmp(c->pkt, "4"))
			v = send_pkt_fam(pg, v4s, v4d, FB_FAMILY_IPV4, &kind);
		else
			v = send_pkt_fam(pg, m5, strcmp(c->pkt, "6m") ? m77 : d6, FB_FAMILY_IPV6,
					 &kind);
		snprintf(l, sizeof(l), "v4-mapped: rule '%s', %s packet (%s): %s", c->rule,
			 c->pkt[0] == '4' ? "IPv4" : "IPv6", c->query,
			 c->kind ? "matches" : "does not match");
		snprintf(d, sizeof(d), "verdict %d kind %u, want %d kind %u", v, kind, want,
			 c->kind);
		test_check(v == want && kind == c->kind, l, d);
		flow_of(c->query, &q);
		snprintf(l, sizeof(l), "v4-mapped: rule '%s': query %s answers %s", c->rule,
			 c->query, c->kind ? "maybe" : "no");
		test_check(fb_bits_query(f, &q) == (c->kind != 0), l, NULL);
	}
}

/* Once per way the data path hashes a prefix key: SipHash of the whole
 * key, and NH's per-length increment (include/flowbloom/prefix.h). */
static void semantics_with(int hash)
{
	struct fb_create_opts co = {
		.nblocks = 16384, /* 1 MiB */
		.k = 8,
		.layout = FB_LAYOUT_BLOCKED,
		.hash = hash,
		.action = FB_ACTION_DROP,
	};
	struct fb_store f;
	struct prog pg = { 0 };
	size_t i;
	double t0 = now();

	if (!ASSERT_EQ(fb_store_create("sem", &co), 0, "semantics: create a 1 MiB filter"))
		return;
	if (!ASSERT_EQ(fb_store_open("sem", &f), 0, "semantics: open it"))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "semantics: load the program"))
		goto close;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		one_rule(&f, &pg, &table[i], 0);
		one_rule(&f, &pg, &table[i], 1);
	}

	/* Both kinds at once: a source /24 and a destination /120 rule of
	 * another family; each matches on its own side only. */
	{
		char s1[] = "src", s2[] = "198.51.100.0/24", d1[] = "dst",
		     d2[] = "2001:db8::100/120";
		char *a1[2] = { s1, s2 }, *a2[2] = { d1, d2 }, err[128];
		struct fb_key keys[2];
		__u8 x[16], y[16];
		size_t bad;
		__u32 kind;
		int v;

		fb_flow_parse(2, a1, &keys[0], err, sizeof(err));
		fb_flow_parse(2, a2, &keys[1], err, sizeof(err));
		fb_store_lock(&f);
		ASSERT_EQ(fb_rules_replace(&f, f.hdr->nblocks, f.hdr->k, keys, 2, &bad), 0,
			  "semantics: src and dst rules together");
		fb_store_unlock(&f);
		addr("198.51.100.9", x);
		addr("203.0.113.9", y);
		v = send_pkt(&pg, x, y, &kind);
		ASSERT_TRUE(v == XDP_DROP && kind == FB_KIND_SRC,
			    "src /24 + dst v6 /120: IPv4 packet from inside matches as src");
		v = send_pkt(&pg, y, x, &kind);
		ASSERT_TRUE(v == XDP_PASS && kind == 0,
			    "src /24 + dst v6 /120: IPv4 packet to inside does not match");
		addr("2001:db8::1ff", x);
		addr("2001:db8::5", y);
		v = send_pkt(&pg, y, x, &kind);
		ASSERT_TRUE(v == XDP_DROP && kind == FB_KIND_DST,
			    "src /24 + dst v6 /120: IPv6 packet to inside matches as dst");
		v = send_pkt(&pg, x, y, &kind);
		ASSERT_TRUE(v == XDP_PASS && kind == 0,
			    "src /24 + dst v6 /120: IPv6 packet from inside does not match");
	}

	v4mapped_packets(&f, &pg);
	printf("semantics: %zu rules x {src, dst} in %.2f s\n", sizeof(table) / sizeof(table[0]),
	       now() - t0);
	prog_unload(&pg);
close:
	fb_store_close(&f);
destroy:
	ASSERT_EQ(fb_store_destroy("sem"), 0, "semantics: destroy the filter");
}

void semantics(void)
{
	printf("# prefix semantics, SipHash-1-3\n");
	semantics_with(FB_HASH_SIPHASH13);
	printf("# prefix semantics, NH (incremental per length)\n");
	semantics_with(FB_HASH_NHK);
}
