// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A FlowSpec NLRI (RFC 8955) as flowbloom rules: its components, as
 * ExaBGP 4.2 prints them, checked and written in the CLI's clause form
 * (rules/rule.c), so a route becomes the keys `add` would make of the same
 * rule, or is refused whole; and the prefix check unicast routes share.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/bgp.h"
#include "fleet/bgp_int.h"
#include "report.h"
#include "rules/flow.h"

/* "PFX/LEN" of family fam ("ipv4"/"ipv6"), as a route of that family
 * writes it (the length limits apply to the rule it makes: fb_bgp_admit).
 * 0 ok, -1 with why. */
int fb_bgp_check_prefix(const char *pfx, bool v6, char *why, size_t len)
{
	const char *slash = strchr(pfx, '/');
	char *end;
	long l;

	if (!slash) {
		snprintf(why, len, "prefix '%s' has no length", fb_quote(pfx));
		return -1;
	}
	errno = 0;
	l = strtol(slash + 1, &end, 10);
	if (errno || *end || end == slash + 1 || l < 0 || l > (v6 ? 128 : 32) ||
	    (v6 != !!strchr(pfx, ':'))) {
		snprintf(why, len, "bad %s prefix '%s'", v6 ? "IPv6" : "IPv4", fb_quote(pfx));
		return -1;
	}
	return 0;
}

/* The one value of a FlowSpec numeric component, "=V" alone; NULL if it is
 * anything else (a range, several values, a negation). */
static const char *single_value(json_object *v)
{
	const char *s;

	if (!v || !json_object_is_type(v, json_type_array) || json_object_array_length(v) != 1)
		return NULL;
	s = json_object_get_string(json_object_array_get_idx(v, 0));
	if (!s || s[0] != '=' || !s[1] || strchr(s, '&'))
		return NULL;
	return s + 1;
}

/*
 * A protocol as ExaBGP 4.2's FlowSpec decoder prints it: a name of its own
 * table (class Protocol, exabgp/protocol/__init__.py), which names these
 * 13 and no other, and "unknown protocol type N" (its Resource's text) for
 * every other number. A number, or a name of flowbloom's own table
 * (rules/flow.c), is read as the CLI reads it. -1 if none of those.
 */
static int flow_proto(const char *s)
{
	static const struct {
		const char *name;
		int proto;
	} exabgp[] = {
		{ "icmp", 1 },	{ "igmp", 2 },	{ "tcp", 6 },	 { "egp", 8 }, { "udp", 17 },
		{ "rsvp", 46 }, { "gre", 47 },	{ "esp", 50 },	 { "ah", 51 }, { "ospf", 89 },
		{ "ipip", 94 }, { "pim", 103 }, { "sctp", 132 },
	};
	static const char unknown[] = "unknown protocol type ";
	size_t i, n = strlen(unknown);
	const char *d;
	int v = 0;

	for (i = 0; i < sizeof(exabgp) / sizeof(exabgp[0]); i++)
		if (!strcmp(s, exabgp[i].name))
			return exabgp[i].proto;
	if (strncmp(s, unknown, n))
		return fb_proto_parse(s);
	/* Decimal as Python's %d writes it: no sign, no leading zero. */
	for (d = s + n; *d >= '0' && *d <= '9' && d - (s + n) < 3; d++)
		v = 10 * v + (*d - '0');
	if (d == s + n || *d || (s[n] == '0' && d - (s + n) > 1) || v > 255)
		return -1;
	return v;
}

#define FB_BGP_TERMS 8 /* most ORed terms of one port component */

/* One term of a port component (RFC 8955 4.2.2.4-6, as ExaBGP prints it:
 * "&" joining comparisons) as a range "LO-HI": =V, >=A, >A, <=B, <B, or
 * several of those ANDed (">=1024&<=2047"). != and the rest: -1 (a rule
 * could not hold it without widening). */
static int port_term(const char *s, char *out, size_t len)
{
	long lo = 0, hi = 65535, n;
	const char *p;
	char *end;

	if (!s || !*s)
		return -1;
	for (p = s; *p;) {
		int ge = p[0] == '>' && p[1] == '=', le = p[0] == '<' && p[1] == '=';
		int gt = p[0] == '>' && !ge, lt = p[0] == '<' && !le, eq = p[0] == '=';

		if (!ge && !le && !gt && !lt && !eq)
			return -1;
		p += ge || le ? 2 : 1;
		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		n = strtol(p, &end, 10);
		if (errno || n < 0 || n > 65535)
			return -1;
		p = end;
		if (*p && *p++ != '&')
			return -1;
		if (eq || ge || gt)
			lo = n + gt > lo ? n + gt : lo;
		if (eq || le || lt)
			hi = n - lt < hi ? n - lt : hi;
	}
	if (lo > hi)
		return -1; /* matches nothing: not a rule to make */
	snprintf(out, len, "%ld-%ld", lo, hi);
	return 0;
}

/* A port component: its terms (ORed, at most FB_BGP_TERMS) as ranges in
 * out[0..n); returns n or -1. One covering every port is the two halves
 * 0-32767 and 32768-65535: a port component matches only packets that
 * have ports (RFC 8955), and so do port prefixes (the data path meets
 * them with ports read from the transport header only: never ICMP, GRE
 * or a later fragment), where 0-65535 is the CLI's "no port clause",
 * which matches every packet. */
static int port_ranges(json_object *v, char out[][16])
{
	size_t i, n;

	if (!v || !json_object_is_type(v, json_type_array))
		return -1;
	n = json_object_array_length(v);
	if (!n || n > FB_BGP_TERMS)
		return -1;
	for (i = 0; i < n; i++)
		if (port_term(json_object_get_string(json_object_array_get_idx(v, i)), out[i], 16))
			return -1;
	for (i = 0; i < n; i++) {
		if (!strcmp(out[i], "0-65535")) {
			strcpy(out[0], "0-32767");
			strcpy(out[1], "32768-65535");
			return 2;
		}
	}
	return (int)n;
}

/* The keys of FLOW words w[0..nw) followed by each source range of
 * sp[0..nsp) with each destination range of dp[0..ndp) (one FLOW each,
 * its ranges covered within max keys), onto keys[0..*nk) without repeats,
 * at most FB_RULE_KEYS_MAX in all. 0, or -1 with why. */
static int add_flows(const char **w, int nw, char sp[][16], int nsp, char dp[][16], int ndp,
		     size_t max, struct fb_key *keys, size_t *nk, char *why, size_t len)
{
	struct fb_key part[FB_RULE_KEYS_MAX];
	int a, b, n;
	size_t i, j, m;

	for (a = 0; a < (nsp ? nsp : 1); a++) {
		for (b = 0; b < (ndp ? ndp : 1); b++) {
			n = nw;
			if (nsp) {
				w[n++] = "sport";
				w[n++] = sp[a];
			}
			if (ndp) {
				w[n++] = "dport";
				w[n++] = dp[b];
			}
			if (fb_flow_parse_keys_max(n, (char **)w, max, part, &m, why, len) != n)
				return -1;
			for (j = 0; j < m; j++) {
				for (i = 0; i < *nk && memcmp(&keys[i], &part[j], sizeof(part[j]));
				     i++)
					;
				if (i < *nk)
					continue;
				if (*nk == FB_RULE_KEYS_MAX) {
					snprintf(why, len,
						 "its port values make more than %d rules",
						 FB_RULE_KEYS_MAX);
					return -1;
				}
				keys[(*nk)++] = part[j];
			}
		}
	}
	return 0;
}

/*
 * An IPv6 prefix "ADDR[/LEN]" in out[0..len), its address written in hex
 * if it was dotted: ExaBGP prints v4-mapped addresses so
 * (::ffff:203.0.113.7), and the FLOW grammar reads a dotted address as
 * IPv4 (its length counted from 96: ::ffff:0.0.0.0/96 would be the IPv4
 * /0, no address at all). Text that is no IPv6 address is left as it is,
 * for the rule's parser to refuse.
 */
static void v6_hex(char *out, size_t len)
{
	char *slash = strchr(out, '/'), a[INET6_ADDRSTRLEN + 1], tail[8];
	size_t n = slash ? (size_t)(slash - out) : strlen(out);
	unsigned char b[16];

	if (!memchr(out, '.', n) || n >= sizeof(a) || strlen(out + n) >= sizeof(tail))
		return;
	memcpy(a, out, n);
	a[n] = 0;
	strcpy(tail, out + n);
	if (inet_pton(AF_INET6, a, b) != 1)
		return;
	snprintf(out, len, "%x:%x:%x:%x:%x:%x:%x:%x%s", b[0] << 8 | b[1], b[2] << 8 | b[3],
		 b[4] << 8 | b[5], b[6] << 8 | b[7], b[8] << 8 | b[9], b[10] << 8 | b[11],
		 b[12] << 8 | b[13], b[14] << 8 | b[15], tail);
}

/* A prefix component: ["PFX"] (IPv4) or ["PFX/OFFSET"] (IPv6, offset 0
 * only; written in hex, v6_hex). */
static int flow_prefix(json_object *v, bool v6, char *out, size_t len)
{
	const char *s, *slash;

	if (!v || !json_object_is_type(v, json_type_array) || json_object_array_length(v) != 1)
		return -1;
	s = json_object_get_string(json_object_array_get_idx(v, 0));
	if (!s || strlen(s) >= len)
		return -1;
	strcpy(out, s);
	if (v6) {
		slash = strrchr(out, '/');
		if (!slash || slash == strchr(out, '/')) {
			v6_hex(out, len); /* no offset given */
			return 0;
		}
		if (strcmp(slash, "/0"))
			return -1;
		*strrchr(out, '/') = 0;
		v6_hex(out, len);
	}
	return 0;
}

/* A FlowSpec NLRI as one flowbloom rule of its shape (rule.c's clause
 * form): at most one destination and one source prefix, one protocol
 * (=V), one source and one destination port or port range, in the route's
 * family (an IPv4 flow route without a prefix is `dst 0.0.0.0/0`, an IPv6
 * one `dst ::/0`). A range is port prefixes, so the rule is one key or
 * several (at most FB_RULE_KEYS_MAX, in keys[0..*nk)); a port component
 * without a protocol one is TCP's and UDP's ports (RFC 8955), a rule for
 * each, within half the cap each. 0, or -1 with why: everything else (TCP
 * flags, packet length, DSCP, fragment, ICMP type and code, several
 * values), which a rule could only widen. */
int fb_bgp_flow_rule(json_object *nlri, bool v6, struct fb_key *keys, size_t *nk, char *why,
		     size_t len)
{
	static const int tcp_udp[] = { 6, 17 };
	char dst[80] = "", src[80] = "", sp[FB_BGP_TERMS][16], dp[FB_BGP_TERMS][16], pb[16];
	const char *proto = NULL, *w[FB_FLOW_WORDS];
	bool have_dst = false, have_src = false;
	int nsp = 0, ndp = 0, np = 1, p = -1, k;
	const char *dname = v6 ? "destination-ipv6" : "destination-ipv4";
	const char *sname = v6 ? "source-ipv6" : "source-ipv4";
	const char *pname = v6 ? "next-header" : "protocol";
	size_t i;

	json_object_object_foreach(nlri, key, val)
	{
		if (!strcmp(key, "string") || !strcmp(key, "next-hop"))
			continue;
		/* A component given twice (under either of its names) asks
		 * for packets that match both: one rule could only widen it. */
		if (!strcmp(key, dname) || !strcmp(key, "destination")) {
			if (have_dst)
				goto twice;
			have_dst = true;
			if (flow_prefix(val, v6, dst, sizeof(dst)))
				goto comp;
		} else if (!strcmp(key, sname) || !strcmp(key, "source")) {
			if (have_src)
				goto twice;
			have_src = true;
			if (flow_prefix(val, v6, src, sizeof(src)))
				goto comp;
		} else if (!strcmp(key, pname) || !strcmp(key, "protocol")) {
			if (proto)
				goto twice;
			if (!(proto = single_value(val)))
				goto comp;
		} else if (!strcmp(key, "destination-port")) {
			if (ndp)
				goto twice;
			if ((ndp = port_ranges(val, dp)) < 0)
				goto comp;
		} else if (!strcmp(key, "source-port")) {
			if (nsp)
				goto twice;
			if ((nsp = port_ranges(val, sp)) < 0)
				goto comp;
		} else {
			/* "port" (either port) would be two rules; tcp-flags,
			 * packet-length, dscp, fragment, icmp-type, icmp-code,
			 * flow-label: no field of the flow key holds them. */
			snprintf(why, len, "component '%s' is not supported", fb_quote(key));
			return -1;
		}
		continue;
	comp:
		snprintf(why, len,
			 "component '%s' is not one value, range or prefix (or up to %d ORed)",
			 fb_quote(key), FB_BGP_TERMS);
		return -1;
	twice:
		snprintf(why, len, "component '%s' is given twice", fb_quote(key));
		return -1;
	}
	if ((dst[0] && fb_bgp_check_prefix(dst, v6, why, len)) ||
	    (src[0] && fb_bgp_check_prefix(src, v6, why, len)))
		return -1;
	if (proto) {
		p = flow_proto(proto);
		if (p < 0) {
			snprintf(why, len, "protocol '%s' is not known", fb_quote(proto));
			return -1;
		}
	} else if (nsp || ndp) {
		np = 2; /* TCP's ports and UDP's */
	}
	/* The clause form, as the CLI reads it (the same keys), once per
	 * protocol: "any [proto P] [src S] dst D", then the ports. */
	*nk = 0;
	for (k = 0; k < np; k++) {
		int nw = 0;

		w[nw++] = "any";
		if (np == 2 || p >= 0) {
			snprintf(pb, sizeof(pb), "%d", np == 2 ? tcp_udp[k] : p);
			w[nw++] = "proto";
			w[nw++] = pb;
		}
		if (src[0]) {
			w[nw++] = "src";
			w[nw++] = src;
		}
		if (dst[0] || !src[0]) {
			w[nw++] = "dst";
			w[nw++] = dst[0] ? dst : v6 ? "::/0" : "0.0.0.0/0";
		}
		if (add_flows(w, nw, sp, nsp, dp, ndp, FB_RULE_KEYS_MAX / np, keys, nk, why, len)) {
			if (np == 2) {
				char e[256];

				snprintf(e, sizeof(e), "%s", why);
				snprintf(why, len,
					 "as TCP and as UDP ports (no protocol given): %s", e);
			}
			return -1;
		}
	}
	/* The route's AFI decides the family (as for unicast, bgpmsg.c). */
	for (i = 0; v6 && i < *nk; i++)
		keys[i].family = FB_FAMILY_IPV6;
	return 0;
}
