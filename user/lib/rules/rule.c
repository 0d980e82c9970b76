// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of any shape (include/flowbloom/mask.h): the clause form of the
 * FLOW grammar, port ranges as port prefixes, and the text of a shape.
 *
 *   [PROTO|any|proto P] [src ADDR[/LEN]] [dst ADDR[/LEN]] [sport P[-Q]] [dport P[-Q]]
 *
 * in any order after the first word. A rule whose fields are exactly a
 * 5-tuple, a source prefix or a destination prefix is stored as that
 * (historical) kind, so it hashes as it always did; every other
 * combination is a FB_KIND_MASK rule. A rule without an address holds for
 * both families (one key each); `dst 0.0.0.0/0` or `dst ::/0` keeps it to
 * one.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "flowbloom/mask.h"
#include "rules/flow.h"
#include "report.h"
#include "util.h"

int fb_rule_keyword(const char *w)
{
	/* By the first letter first: most words are none of them. */
	switch (w[0]) {
	case 's':
		return !strcmp(w, "src") || !strcmp(w, "sport");
	case 'd':
		return !strcmp(w, "dst") || !strcmp(w, "dport");
	case 'p':
		return !strcmp(w, "proto");
	default:
		return 0;
	}
}

/* Cover [lo, hi] with aligned port blocks whose lengths are in the set
 * lens (bit l: length l), greedily (the largest allowed block that fits at
 * each step: blocks nest, so this is the fewest of those lengths). Writes
 * at most max; returns the count, or -1 if it would pass max or cannot
 * cover (a length needed for the range's ends is missing). */
static int cover(unsigned lo, unsigned hi, unsigned lens, int max, __u16 *val, __u8 *len)
{
	unsigned a = lo;
	int n = 0, l;

	while (a <= hi) {
		for (l = 0; l <= 16; l++) {
			unsigned size = 1U << (16 - l);

			if ((lens & 1U << l) && !(a & (size - 1)) && a + size - 1 <= hi)
				break;
		}
		if (l > 16 || n == max)
			return -1;
		if (val) {
			val[n] = (__u16)a;
			len[n] = (__u8)l;
		}
		n++;
		a += 1U << (16 - l);
	}
	return n;
}

/* The next larger number with as many bits set as x (x > 0): Gosper's
 * hack (HAKMEM item 175), every k-subset of the low bits in increasing
 * order. Past 1 << 31 it would overflow; port lengths stop at 16. */
static unsigned next_same_bits(unsigned x)
{
	unsigned low = x & -x, ripple = x + low;

	return (((ripple ^ x) >> 2) / low) | ripple;
}

/*
 * A port range as port prefixes. Each distinct prefix length is a rule
 * shape, one probe per packet, while a prefix is only a key (a few bits):
 * so the fewest lengths whose cover stays within budget prefixes, and among
 * covers of that many lengths the fewest prefixes. Every cover needs the
 * longest length of the minimal cover (the range's ends are aligned to no
 * more); up to FB_PORT_LENGTHS lengths are tried (1-65535 takes four: 15
 * prefixes each of /16, /12, /8 and /4), then the minimal cover (fewest
 * prefixes, any lengths). Returns the count or -1 above budget.
 */
#define FB_PORT_LENGTHS 4
static int port_prefixes(unsigned lo, unsigned hi, int budget, __u16 *val, __u8 *len)
{
	unsigned f = 0, best = 0, others;
	int n, bestn = -1, k;

	/* The finest length the ends need. */
	while (f < 16 && ((lo | (hi + 1)) & ((1U << (16 - f)) - 1)))
		f++;
	/* Every set of k - 1 coarser lengths beside f, fewest lengths first,
	 * each k's sets in increasing order (the first of the fewest
	 * prefixes wins): only those sets, not every subset of the f
	 * lengths filtered by size (a single port, f = 16, made that 65,536
	 * tries for the one set of k = 1; a peer's FlowSpec table of single
	 * ports cost seconds). */
	for (k = 1; k <= FB_PORT_LENGTHS && k - 1 <= (int)f && bestn < 0; k++) {
		for (others = (1U << (k - 1)) - 1; others < 1U << f;
		     others = next_same_bits(others)) {
			n = cover(lo, hi, others | 1U << f, budget, NULL, NULL);
			if (n > 0 && (bestn < 0 || n < bestn)) {
				bestn = n;
				best = others | 1U << f;
			}
			if (!others)
				break; /* the one empty set */
		}
	}
	if (bestn < 0)
		best = 0x1ffff; /* every length: the minimal cover */
	return cover(lo, hi, best, budget, val, len);
}

static int parse_ports(const char *s, unsigned *lo, unsigned *hi)
{
	const char *dash = strchr(s, '-');
	unsigned long v[2] = { 0, 0 };
	int i;

	for (i = 0; i < (dash ? 2 : 1); i++) {
		const char *p = i ? dash + 1 : s, *end = i || !dash ? p + strlen(p) : dash;

		if (fb_parse_dec(p, (size_t)(end - p), 65535, &v[i]))
			return -1;
	}
	*lo = v[0];
	*hi = dash ? v[1] : v[0];
	return *lo <= *hi ? 0 : -1;
}

struct clauses {
	int proto; /* -1: any */
	int has_src, has_dst, has_sport, has_dport;
	__u8 saddr[16], daddr[16], slen, dlen, sfam, dfam;
	unsigned splo, sphi, dplo, dphi;
};

/* Set one clause; 1: the field was already set (the FLOW ends before it). */
static int clause(struct clauses *c, const char *kw, const char *arg, char *err, size_t errlen)
{
	if (!strcmp(kw, "proto")) {
		if (c->proto >= 0)
			return 1;
		c->proto = fb_proto_parse(arg);
		if (c->proto < 0) {
			snprintf(err, errlen, "unknown protocol '%s' (a name like tcp, or 0-255)",
				 fb_quote(arg));
			return -1;
		}
		return 0;
	}
	if (!strcmp(kw, "src") || !strcmp(kw, "dst")) {
		int s = kw[0] == 's';

		if (s ? c->has_src : c->has_dst)
			return 1;
		if (fb_prefix_parse_field(kw, arg, s ? c->saddr : c->daddr, s ? &c->slen : &c->dlen,
					  s ? &c->sfam : &c->dfam, err, errlen))
			return -1;
		*(s ? &c->has_src : &c->has_dst) = 1;
		return 0;
	}
	if (!strcmp(kw, "sport") ? c->has_sport : c->has_dport)
		return 1;
	if (parse_ports(arg, !strcmp(kw, "sport") ? &c->splo : &c->dplo,
			!strcmp(kw, "sport") ? &c->sphi : &c->dphi)) {
		snprintf(err, errlen,
			 "bad %s '%s' (want PORT or LOW-HIGH, 0-65535, without a leading zero)", kw,
			 fb_quote(arg));
		return -1;
	}
	*(!strcmp(kw, "sport") ? &c->has_sport : &c->has_dport) = 1;
	return 0;
}

/* The key of one rule: a historical kind when the fields are exactly one,
 * else the mask key. p holds the values (addresses masked, ports in
 * network order, proto, family). */
static void rule_key(struct fb_key *k, const struct fb_key *p, __u32 slen, __u32 dlen, __u32 splen,
		     __u32 dplen, int proto)
{
	int portless = proto >= 0 && !fb_proto_has_ports(proto);

	memset(k, 0, sizeof(*k));
	if (proto >= 0 && slen == 128 && dlen == 128 &&
	    ((splen == 16 && dplen == 16) || (portless && !splen && !dplen))) {
		*k = *p;
		k->proto = (__u8)proto;
		k->kind = FB_KIND_FLOW;
		k->plen = 0;
		return;
	}
	fb_mask_key(k, p, fb_mask_desc(slen, dlen, splen, dplen, proto >= 0, p->family));
}

int fb_rule_parse_max(int argc, char **argv, int proto, size_t max, struct fb_key *keys,
		      size_t *nkeys, char *err, size_t errlen)
{
	__u16 sv[FB_RULE_KEYS_MAX], dv[FB_RULE_KEYS_MAX];
	__u8 sl[FB_RULE_KEYS_MAX], dl[FB_RULE_KEYS_MAX];
	struct clauses c;
	int i = 0, r, ns = 1, nd = 1, md = 1, fams, f, a, b;
	__u32 slen, dlen;
	size_t n = 0;

	memset(&c, 0, sizeof(c));
	c.proto = proto;
	while (i < argc && fb_rule_keyword(argv[i])) {
		if (i + 1 >= argc) {
			snprintf(err, errlen, "'%s' needs a value", argv[i]);
			return -1;
		}
		r = clause(&c, argv[i], argv[i + 1], err, errlen);
		if (r < 0)
			return -1;
		if (r > 0)
			break; /* a field again: the next FLOW */
		i += 2;
	}
	/* Every port is no port clause: one rule, one key, whatever the spelling. */
	if (c.has_sport && !c.splo && c.sphi == 65535)
		c.has_sport = 0;
	if (c.has_dport && !c.dplo && c.dphi == 65535)
		c.has_dport = 0;
	if (c.has_src && c.has_dst && c.sfam != c.dfam) {
		snprintf(err, errlen, "src and dst must be the same address family");
		return -1;
	}
	if (c.proto >= 0 && !fb_proto_has_ports(c.proto) && (c.has_sport || c.has_dport)) {
		snprintf(err, errlen, "protocol %d has no ports: sport and dport cannot match it",
			 c.proto);
		return -1;
	}
	/* Rules of the 128-bit space: an IPv4 /0 (96) keeps the family and
	 * fixes no bit; so does an IPv6 /0. */
	slen = c.has_src && c.slen != 96 * (c.sfam == FB_FAMILY_IPV4) ? c.slen : 0;
	dlen = c.has_dst && c.dlen != 96 * (c.dfam == FB_FAMILY_IPV4) ? c.dlen : 0;
	fams = c.has_src || c.has_dst ? 1 : 2;
	if (c.proto >= 0 && fb_proto_ipv6_ext(c.proto) &&
	    (fams == 2 || (c.has_src ? c.sfam : c.dfam) == FB_FAMILY_IPV6)) {
		snprintf(err, errlen,
			 "IPv6 protocol %d is an extension header (hop-by-hop 0, routing 43, "
			 "fragment 44, ah 51, dst-opts 60): packets are keyed by the protocol "
			 "after it, so the rule would never match",
			 c.proto);
		return -1;
	}
	/* A rule of one address alone is that address's historical kind; so
	 * is one whose other address is a /0 (it fixes no bit: `any dst A
	 * src 0.0.0.0/0` is `dst A`, one key whatever the spelling). */
	if (c.proto < 0 && !c.has_sport && !c.has_dport &&
	    (c.has_src != c.has_dst || !slen != !dlen)) {
		int s = c.has_src != c.has_dst ? c.has_src : slen != 0;

		memset(&keys[0], 0, sizeof(keys[0]));
		if (s)
			memcpy(keys[0].saddr, c.saddr, 16);
		else
			memcpy(keys[0].daddr, c.daddr, 16);
		keys[0].kind = s ? FB_KIND_SRC : FB_KIND_DST;
		keys[0].plen = s ? c.slen : c.dlen;
		keys[0].family = s ? c.sfam : c.dfam;
		*nkeys = 1;
		return i;
	}
	if (c.proto < 0 && !slen && !dlen && !c.has_sport && !c.has_dport) {
		snprintf(err, errlen, "the rule fixes no field: it would match every packet");
		return -1;
	}
	if (max > FB_RULE_KEYS_MAX)
		max = FB_RULE_KEYS_MAX;
	/* The source range's cover leaves room for the destination range's
	 * fewest prefixes (md): with both ranges, the fewest lengths for the
	 * source range alone (63 /6 for 1024-65535) left the destination
	 * range one key and refused rules well within the cap. A cover that
	 * fitted before is the one chosen still (a smaller budget that holds
	 * it picks it again), so `del` finds the keys an earlier `add` made. */
	if (c.has_sport && c.has_dport)
		md = cover(c.dplo, c.dphi, 0x1ffff, 1 << 17, NULL, NULL);
	if (c.has_sport)
		ns = port_prefixes(c.splo, c.sphi, (int)max / fams / md, sv, sl);
	if (ns > 0 && c.has_dport)
		nd = port_prefixes(c.dplo, c.dphi, (int)max / fams / ns, dv, dl);
	if (ns < 0 || nd < 0 || (size_t)ns * nd * fams > max) {
		snprintf(err, errlen,
			 "the port ranges make more than %zu rules (each range becomes port "
			 "prefixes; sport x dport multiply)",
			 max);
		return -1;
	}
	for (f = 0; f < fams; f++) {
		for (a = 0; a < ns; a++) {
			for (b = 0; b < nd; b++) {
				struct fb_key p;

				memset(&p, 0, sizeof(p));
				memcpy(p.saddr, c.saddr, 16);
				memcpy(p.daddr, c.daddr, 16);
				p.family = fams == 2 ? f : c.has_src ? c.sfam : c.dfam;
				if (c.has_sport)
					p.sport = htons(sv[a]);
				if (c.has_dport)
					p.dport = htons(dv[b]);
				p.proto = c.proto >= 0 ? (__u8)c.proto : 0;
				rule_key(&keys[n++], &p, slen, dlen, c.has_sport ? sl[a] : 0,
					 c.has_dport ? dl[b] : 0, c.proto);
			}
		}
	}
	*nkeys = n;
	return i;
}

/* Lowest set bit of a 16-byte big-endian value, as a position from the
 * top (0..127); -1 if zero. */
static int marker16(const __u8 a[16])
{
	int i;

	for (i = 15; i >= 0; i--)
		if (a[i])
			return 8 * i + 7 - __builtin_ctz(a[i]);
	return -1;
}

__u32 fb_mask_of_key(const struct fb_key *k, struct fb_key *values)
{
	__u32 fl = k->plen, slen, dlen, splen, dplen;
	__u16 sp = ntohs(k->sport), dp = ntohs(k->dport);
	struct fb_key v = *k;
	int m;

	if (k->kind != FB_KIND_MASK)
		return 0;
	slen = fl & FB_MASKF_SFULL ? 128 : (m = marker16(k->saddr)) < 0 ? 0 : (__u32)m;
	dlen = fl & FB_MASKF_DFULL ? 128 : (m = marker16(k->daddr)) < 0 ? 0 : (__u32)m;
	splen = fl & FB_MASKF_SPFULL ? 16 : sp ? 15 - __builtin_ctz(sp) : 0;
	dplen = fl & FB_MASKF_DPFULL ? 16 : dp ? 15 - __builtin_ctz(dp) : 0;
	if (slen < 128)
		v.saddr[slen / 8] &= (__u8) ~(0x80 >> (slen % 8));
	if (dlen < 128)
		v.daddr[dlen / 8] &= (__u8) ~(0x80 >> (dlen % 8));
	if (splen < 16)
		sp &= (__u16) ~(0x8000 >> splen);
	if (dplen < 16)
		dp &= (__u16) ~(0x8000 >> dplen);
	v.sport = htons(sp);
	v.dport = htons(dp);
	v.kind = 0;
	v.plen = 0;
	if (values)
		*values = v;
	return fb_mask_desc(slen, dlen, splen, dplen, !!(fl & FB_MASKF_PROTO), k->family);
}

static void fmt_addr(char *buf, size_t len, const __u8 a[16], int plen, int family)
{
	char t[INET6_ADDRSTRLEN];

	if (family == FB_FAMILY_IPV4) {
		inet_ntop(AF_INET, a + 12, t, sizeof(t));
		plen = plen ? plen - 96 : 0;
		if (plen == 32)
			snprintf(buf, len, "%s", t);
		else
			snprintf(buf, len, "%s/%d", t, plen);
		return;
	}
	if (fb_addr_v4mapped(a))
		snprintf(t, sizeof(t), "::ffff:%x:%x", a[12] << 8 | a[13], a[14] << 8 | a[15]);
	else
		inet_ntop(AF_INET6, a, t, sizeof(t));
	if (plen == 128)
		snprintf(buf, len, "%s", t);
	else
		snprintf(buf, len, "%s/%d", t, plen);
}

static void fmt_port(char *buf, size_t len, const char *kw, unsigned p, unsigned plen)
{
	if (plen == 16)
		snprintf(buf, len, " %s %u", kw, p);
	else
		snprintf(buf, len, " %s %u-%u", kw, p, p + (1U << (16 - plen)) - 1);
}

void fb_mask_format(const struct fb_key *k, char *buf, size_t len)
{
	struct fb_key v;
	__u32 d = fb_mask_of_key(k, &v);
	char a[INET6_ADDRSTRLEN + 8], pn[12];
	const char *name = fb_proto_name_fam(v.proto, v.family);
	size_t o;

	if (!FB_MASK_PROTO(d))
		name = "any";
	else if (!name) {
		snprintf(pn, sizeof(pn), "proto %u", v.proto);
		name = pn;
	}
	snprintf(buf, len, "%s", name);
	o = strlen(buf);
	if (FB_MASK_SLEN(d) && o < len) {
		fmt_addr(a, sizeof(a), v.saddr, FB_MASK_SLEN(d), v.family);
		o += snprintf(buf + o, len - o, " src %s", a);
	}
	if ((FB_MASK_DLEN(d) || !FB_MASK_SLEN(d)) && o < len) {
		/* No address at all: `dst 0.0.0.0/0` or `dst ::/0` says the family. */
		fmt_addr(a, sizeof(a), v.daddr, FB_MASK_DLEN(d), v.family);
		o += snprintf(buf + o, len - o, " dst %s", a);
	}
	if (FB_MASK_SPLEN(d) && o < len) {
		fmt_port(buf + o, len - o, "sport", ntohs(v.sport), FB_MASK_SPLEN(d));
		o = strlen(buf);
	}
	if (FB_MASK_DPLEN(d) && o < len)
		fmt_port(buf + o, len - o, "dport", ntohs(v.dport), FB_MASK_DPLEN(d));
}

void fb_mask_name(__u32 d, char *buf, size_t len)
{
	int s = FB_MASK_SLEN(d), t = FB_MASK_DLEN(d), v4 = !FB_MASK_FAMILY(d);
	size_t o;

	snprintf(buf, len, "%s%s", v4 ? "ipv4" : "ipv6", FB_MASK_PROTO(d) ? " proto" : "");
	o = strlen(buf);
	if (s && o < len)
		o += snprintf(buf + o, len - o, " src/%d", v4 ? s - 96 : s);
	if (t && o < len)
		o += snprintf(buf + o, len - o, " dst/%d", v4 ? t - 96 : t);
	if (FB_MASK_SPLEN(d) && o < len)
		o += snprintf(buf + o, len - o, " sport/%d", (int)FB_MASK_SPLEN(d));
	if (FB_MASK_DPLEN(d) && o < len)
		snprintf(buf + o, len - o, " dport/%d", (int)FB_MASK_DPLEN(d));
}
