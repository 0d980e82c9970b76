// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* FLOW text <-> struct fb_key (see flow.h); the line reader every file
 * input goes through is in lines.c. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rules/flow.h"
#include "rules/ntop.h"
#include "util.h"
#include "report.h"

static const struct {
	const char *name;
	int proto;
} protos[] = {
	{ "icmp", 1 },	{ "igmp", 2 },	 { "tcp", 6 },	   { "udp", 17 },	{ "gre", 47 },
	{ "esp", 50 },	{ "ah", 51 },	 { "icmpv6", 58 }, { "ipv6-icmp", 58 }, { "ospf", 89 },
	{ "pim", 103 }, { "vrrp", 112 }, { "sctp", 132 },  { "udplite", 136 },
};

int fb_proto_parse(const char *s)
{
	unsigned long v;
	size_t i;

	/* The first letter first (| 0x20: its lower case, as strcasecmp's
	 * for a letter): the common protocols are found without a call. */
	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if ((s[0] | 0x20) == protos[i].name[0] && !strcasecmp(s, protos[i].name))
			return protos[i].proto;
	return fb_parse_dec(s, strlen(s), 255, &v) ? -1 : (int)v;
}

const char *fb_proto_name(int proto)
{
	size_t i;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	return NULL;
}

const char *fb_proto_name_fam(int proto, int family)
{
	if ((proto == 1 && family == FB_FAMILY_IPV6) || (proto == 58 && family == FB_FAMILY_IPV4))
		return NULL;
	return fb_proto_name(proto);
}

static int parse_addr(const char *s, __u8 out[16], __u8 *family);

/* Where host bits cleared are noted (fb_hostbits_watch()), per thread. */
static __thread struct fb_hostbits *hostbits;

struct fb_hostbits *fb_hostbits_watch(struct fb_hostbits *hb)
{
	struct fb_hostbits *old = hostbits;

	hostbits = hb;
	return old;
}

/* s, written as field, lost host bits: addr/len is what it was taken as. */
static void note_hostbits(const char *field, const char *s, const __u8 addr[16], unsigned long len,
			  int v4)
{
	char a[INET6_ADDRSTRLEN];
	unsigned long i = hostbits->n++;

	if (i >= FB_HOSTBITS_KEEP)
		return;
	if (v4)
		inet_ntop(AF_INET, addr + 12, a, sizeof(a));
	else
		inet_ntop(AF_INET6, addr, a, sizeof(a));
	snprintf(hostbits->first[i].written, sizeof(hostbits->first[i].written), "%s %s", field, s);
	snprintf(hostbits->first[i].taken, sizeof(hostbits->first[i].taken), "%s/%lu", a,
		 v4 ? len - 96 : len);
}

/* ADDR or ADDR/LEN: the address masked to the prefix, the prefix length in
 * the 128-bit space (IPv4 /n is 96 + n, an address is 128) and the rule's
 * family (see parse_addr; a prefix shorter than /96 reaches beyond
 * ::ffff:0:0/96 and is IPv6 however written). Host bits below the prefix
 * are cleared, as list publishers expect. */
int fb_prefix_parse(const char *s, __u8 addr[16], __u8 *plen, __u8 *family, char *err,
		    size_t errlen)
{
	return fb_prefix_parse_field(NULL, s, addr, plen, family, err, errlen);
}

int fb_prefix_parse_field(const char *field, const char *s, __u8 addr[16], __u8 *plen, __u8 *family,
			  char *err, size_t errlen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	unsigned long len = 128;
	size_t n = strlen(s);
	int i, v4, lost = 0;

	if (n >= sizeof(buf))
		goto bad;
	memcpy(buf, s, n + 1);
	if (slash)
		buf[slash - s] = 0;
	if (parse_addr(buf, addr, family))
		goto bad;
	/* Dotted IPv4 counts /0-32; anything written with colons, even
	 * ::ffff:a.b.c.d, counts in the 128-bit space. */
	v4 = !strchr(buf, ':');
	if (slash) {
		if (fb_parse_dec(slash + 1, strlen(slash + 1), v4 ? 32 : 128, &len))
			goto badlen;
		if (v4)
			len += 96;
	}
	for (i = 0; i < 16; i++) {
		int keep = (int)len - 8 * i;

		__u8 was = addr[i];

		if (keep <= 0)
			addr[i] = 0;
		else if (keep < 8)
			addr[i] &= (__u8)(0xff << (8 - keep));
		lost |= was != addr[i];
	}
	if (lost && field && hostbits)
		note_hostbits(field, s, addr, len, v4);
	*plen = (__u8)len;
	if (len < 96)
		*family = FB_FAMILY_IPV6;
	return 0;
bad:
	snprintf(err, errlen, "bad address or prefix '%s' (want ADDR or ADDR/LEN)", fb_quote(s));
	return -1;
badlen:
	snprintf(err, errlen, "bad prefix length in '%s' (%s, decimal without a leading zero)",
		 fb_quote(s), v4 ? "0 to 32 for IPv4" : "0 to 128 for IPv6");
	return -1;
}

/* A word where a protocol belongs: an address there is a rule written
 * without its src or dst, which the message says. */
static void proto_error(const char *w, char *err, size_t errlen)
{
	__u8 a[16], plen, fam;
	char e[8];

	if (!fb_prefix_parse(w, a, &plen, &fam, e, sizeof(e)))
		snprintf(err, errlen,
			 "'%s' is an address, not a protocol: write src %s or dst %s (a file, "
			 "of load or -f, also takes bare addresses, one a line)",
			 w, w, w);
	else if (!strcmp(w, "create") || !strcmp(w, "add"))
		snprintf(err, errlen,
			 "unknown protocol '%s': `ipset save` output? a list holds one address "
			 "or prefix a line (ipset list NAME prints them under Members:)",
			 fb_quote(w));
	else
		snprintf(err, errlen, "unknown protocol '%s' (a name like tcp, or 0-255)",
			 fb_quote(w));
}

int fb_ipv4_parse(const char *s, __u8 out[4])
{
	unsigned v = 0;
	int parts = 0, digits = 0;

	for (;; s++) {
		if (*s >= '0' && *s <= '9') {
			if (digits && !v)
				return -1; /* a leading zero */
			v = v * 10 + (unsigned)(*s - '0');
			if (v > 255)
				return -1;
			digits = 1;
		} else if (*s == '.' && digits && parts < 3) {
			out[parts++] = (__u8)v;
			v = 0;
			digits = 0;
		} else if (!*s && digits && parts == 3) {
			out[3] = (__u8)v;
			return 0;
		} else {
			return -1;
		}
	}
}

/*
 * An address alone: IPv4 becomes ::ffff:a.b.c.d. The family is how it is
 * written: a.b.c.d is IPv4, and so is ::ffff:a.b.c.d, the form sockets and
 * server logs print IPv4 peers in; an address written all in hex is IPv6,
 * even inside ::ffff:0:0/96 (::ffff:c633:6405 is an IPv6 packet's address
 * that looks like 198.51.100.5, and only IPv6 packets carry it).
 */
static int parse_addr(const char *s, __u8 out[16], __u8 *family)
{
	__u8 a4[4];

	if (!fb_ipv4_parse(s, a4)) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, a4, 4);
		*family = FB_FAMILY_IPV4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, out) != 1)
		return -1;
	*family = strchr(s, '.') && fb_addr_v4mapped(out) ? FB_FAMILY_IPV4 : FB_FAMILY_IPV6;
	return 0;
}

static int parse_port(const char *s, __be16 *port)
{
	unsigned long v;

	if (fb_parse_dec(s, strlen(s), 65535, &v))
		return -1;
	*port = htons((__u16)v);
	return 0;
}

/* ADDR, ADDR:PORT, [V6], [V6]:PORT; has_port says whether a port was given. */
static int parse_endpoint(const char *s, __u8 addr[16], __u8 *family, __be16 *port, int *has_port,
			  char *err, size_t errlen)
{
	char buf[80];
	const char *colon = NULL, *p;
	int colons = 0, dot = 0;

	*port = 0;
	*has_port = 0;
	/* Its colons, and a dot before the first, in one pass. */
	for (p = s; *p; p++) {
		if (*p == ':' && !colons++)
			colon = p;
		else if (*p == '.' && !colons)
			dot = 1;
	}
	if ((size_t)(p - s) >= sizeof(buf))
		goto bad;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close)
			goto bad;
		memcpy(buf, s + 1, close - s - 1);
		buf[close - s - 1] = 0;
		if (!strchr(buf, ':') || parse_addr(buf, addr, family))
			goto bad;
		if (close[1] == 0)
			return 0;
		if (close[1] != ':')
			goto bad;
		if (parse_port(close + 2, port))
			goto badport;
		*has_port = 1;
		return 0;
	}
	if (colons > 1) {
		/* Two or more colons: a bare IPv6 address, no port. */
		if (parse_addr(s, addr, family))
			goto bad;
		return 0;
	}
	if (!colon)
		return parse_addr(s, addr, family)
			       ? (snprintf(err, errlen, "bad address '%s'", fb_quote(s)), -1)
			       : 0;
	memcpy(buf, s, colon - s);
	buf[colon - s] = 0;
	if (!dot || parse_addr(buf, addr, family))
		goto bad;
	if (parse_port(colon + 1, port))
		goto badport;
	*has_port = 1;
	return 0;
bad:
	snprintf(err, errlen, "bad address '%s' (want ADDR, ADDR:PORT or [IPV6]:PORT)",
		 fb_quote(s));
	return -1;
badport:
	snprintf(err, errlen, "bad port in '%s' (want 0-65535, without a leading zero)",
		 fb_quote(s));
	return -1;
}

/* Is word w keyword kw? The first letter first: most words differ there. */
static bool is(const char *w, const char *kw)
{
	return w[0] == kw[0] && !strcmp(w, kw);
}

/* The positional forms: PROTO SRC DST, and src/dst ADDR alone. */
static int parse_positional(int argc, char **argv, struct fb_key *key, char *err, size_t errlen)
{
	int proto, hp_src, hp_dst;
	__u8 dfam;

	memset(key, 0, sizeof(*key));
	if (argc < 1) {
		snprintf(err, errlen, "missing FLOW");
		return -1;
	}
	if (is(argv[0], "src") || is(argv[0], "dst")) {
		int is_src = argv[0][0] == 's';

		if (argc < 2) {
			snprintf(err, errlen, "'%s' needs an address or prefix", argv[0]);
			return -1;
		}
		if (fb_prefix_parse_field(argv[0], argv[1], is_src ? key->saddr : key->daddr,
					  &key->plen, &key->family, err, errlen))
			return -1;
		key->kind = is_src ? FB_KIND_SRC : FB_KIND_DST;
		return 2;
	}
	proto = fb_proto_parse(argv[0]);
	if (proto < 0) {
		proto_error(argv[0], err, errlen);
		return -1;
	}
	if (argc < 3) {
		snprintf(err, errlen, "'%s' needs SRC and DST (PROTO SRC:PORT DST:PORT)", argv[0]);
		return -1;
	}
	if (parse_endpoint(argv[1], key->saddr, &key->family, &key->sport, &hp_src, err, errlen) ||
	    parse_endpoint(argv[2], key->daddr, &dfam, &key->dport, &hp_dst, err, errlen))
		return -1;
	if (fb_proto_has_ports(proto) && (!hp_src || !hp_dst)) {
		snprintf(err, errlen, "%s flows need ports: SRC:PORT DST:PORT", argv[0]);
		return -1;
	}
	if (!fb_proto_has_ports(proto) && (key->sport || key->dport)) {
		snprintf(err, errlen, "protocol %s has no ports (use port 0 or none)", argv[0]);
		return -1;
	}
	if (key->family != dfam) {
		snprintf(err, errlen, "SRC and DST must be the same address family");
		return -1;
	}
	/* The data path walks past IPv6 extension headers and keys the
	 * protocol after them: a rule for one of them could only ever match a
	 * non-first fragment whose fragment header names it. IPv4 skips
	 * nothing, so there every number (ah included) is a real protocol.
	 * By the family, not the address: an IPv6 rule between v4-mapped
	 * addresses (written in hex) meets IPv6 packets only. */
	if (key->family == FB_FAMILY_IPV6 && fb_proto_ipv6_ext(proto)) {
		snprintf(err, errlen,
			 "IPv6 protocol %d is an extension header (hop-by-hop 0, routing 43, "
			 "fragment 44, ah 51, dst-opts 60): packets are keyed by the protocol "
			 "after it, so the rule would never match",
			 proto);
		return -1;
	}
	key->proto = (__u8)proto;
	key->kind = FB_KIND_FLOW;
	return 3;
}

int fb_flow_parse_keys(int argc, char **argv, struct fb_key *keys, size_t *n, char *err,
		       size_t errlen)
{
	return fb_flow_parse_keys_max(argc, argv, FB_RULE_KEYS_MAX, keys, n, err, errlen);
}

/* `icmp` of IPv6 addresses (or `icmpv6` of IPv4 ones) is a rule no ICMP
 * packet meets: ICMP for IPv6 is protocol 58, and the program keys a
 * packet by the protocol in its header. Refused by name; a number (`1`,
 * `proto 1`) still means exactly that protocol. */
static int icmp_family(const char *word, const struct fb_key *keys, size_t n, char *err,
		       size_t errlen)
{
	bool v4;
	size_t i;

	if ((word[0] | 0x20) != 'i')
		return 0; /* not one of the three names: a call saved a line */
	v4 = !strcasecmp(word, "icmp");
	if (!v4 && strcasecmp(word, "icmpv6") && strcasecmp(word, "ipv6-icmp"))
		return 0;
	for (i = 0; i < n; i++)
		if (keys[i].family != (v4 ? FB_FAMILY_IPV6 : FB_FAMILY_IPV4))
			return 0;
	if (!n)
		return 0;
	snprintf(err, errlen,
		 v4 ? "'%s' is IPv4's ICMP (protocol 1), and these addresses are IPv6: write "
		      "icmpv6 (58), or proto 1 for protocol 1 itself"
		    : "'%s' is ICMP for IPv6 (protocol 58), and these addresses are IPv4: write "
		      "icmp (1), or proto 58 for protocol 58 itself",
		 word);
	return -1;
}

/* strict: an operator's FLOW (icmp_family() refusals); else one we wrote,
 * maybe an older build (fb_flow_parse_line). */
static int parse_keys(int argc, char **argv, size_t max, struct fb_key *keys, size_t *n, char *err,
		      size_t errlen, bool strict)
{
	int proto, used;

	*n = 0;
	if (argc < 1) {
		snprintf(err, errlen, "missing FLOW");
		return -1;
	}
	/* The clause form (rule.c): after a protocol (or any) followed by a
	 * clause, or from a first clause; `src A` alone (or before another
	 * src or dst) stays the one-address rule it always was, so `src A
	 * dst B` is still two rules: a pair is written `any src A dst B`. */
	if (is(argv[0], "any") || is(argv[0], "proto") || is(argv[0], "sport") ||
	    is(argv[0], "dport") ||
	    ((is(argv[0], "src") || is(argv[0], "dst")) && argc >= 3 && fb_rule_keyword(argv[2]) &&
	     !is(argv[2], "src") && !is(argv[2], "dst"))) {
		int skip = is(argv[0], "any");

		if (skip && (argc < 2 || !fb_rule_keyword(argv[1]))) {
			snprintf(err, errlen, "'any' needs a field: src, dst, sport or dport");
			return -1;
		}
		used = fb_rule_parse_max(argc - skip, argv + skip, -1, max, keys, n, err, errlen);
		return used < 0 ? -1 : used + skip;
	}
	if (!is(argv[0], "src") && !is(argv[0], "dst") && argc >= 2 && fb_rule_keyword(argv[1]) &&
	    !is(argv[1], "proto")) {
		proto = fb_proto_parse(argv[0]);
		if (proto < 0) {
			proto_error(argv[0], err, errlen);
			return -1;
		}
		used = fb_rule_parse_max(argc - 1, argv + 1, proto, max, keys, n, err, errlen);
		if (used >= 0 && strict && icmp_family(argv[0], keys, *n, err, errlen))
			return -1;
		return used < 0 ? -1 : used + 1;
	}
	used = parse_positional(argc, argv, &keys[0], err, errlen);
	if (used > 0)
		*n = 1;
	if (used > 0 && strict && icmp_family(argv[0], keys, *n, err, errlen))
		return -1;
	return used;
}

int fb_flow_parse_keys_max(int argc, char **argv, size_t max, struct fb_key *keys, size_t *n,
			   char *err, size_t errlen)
{
	return parse_keys(argc, argv, max, keys, n, err, errlen, true);
}

/* Whether the FLOW of fields argv[0..) gives its own `proto P` (before a
 * field given again ends it). */
static bool next_has_proto(int argc, char **argv)
{
	int k, j;

	for (k = 0; k + 1 < argc && fb_rule_keyword(argv[k]); k += 2) {
		for (j = 0; j < k; j += 2)
			if (!strcmp(argv[j], argv[k]))
				return false;
		if (!strcmp(argv[k], "proto"))
			return true;
	}
	return false;
}

int fb_flow_next_check(int argc, char **argv, int used, char *err, size_t errlen)
{
	const char *proto = NULL, *kw = "";
	int k;

	if (used >= argc || used < 2 || !fb_rule_keyword(argv[used]) ||
	    next_has_proto(argc - used, argv + used))
		return 0;
	/* Its protocol: the first word of the fields form (`udp dport 53`),
	 * or a `proto P` field; `any` and the address rules have none. */
	if (!fb_rule_keyword(argv[0]) && strcmp(argv[0], "any") && fb_rule_keyword(argv[1]))
		proto = argv[0];
	for (k = !strcmp(argv[0], "any"); !proto && k + 1 < used; k += 2)
		if (!strcmp(argv[k], "proto")) {
			proto = argv[k + 1];
			kw = "proto ";
		}
	if (!proto)
		return 0;
	snprintf(err, errlen,
		 "'%s' again starts the next FLOW, which would hold for every protocol, not %s%s "
		 "alone: write '%s%s %s%s%s' (or 'any %s ...' for every protocol)",
		 argv[used], kw, proto, kw, proto, argv[used], used + 1 < argc ? " " : "",
		 used + 1 < argc ? fb_quote(argv[used + 1]) : "", argv[used]);
	return -1;
}

/* The one key a FLOW that must be one rule made (keys[0..n)). */
static int one_key(const struct fb_key *keys, size_t n, struct fb_key *key, char *err,
		   size_t errlen)
{
	if (n != 1) {
		snprintf(err, errlen,
			 "this FLOW is %zu rules (a port range, or no address: both families); "
			 "one is wanted here",
			 n);
		return -1;
	}
	*key = keys[0];
	return 0;
}

int fb_flow_parse(int argc, char **argv, struct fb_key *key, char *err, size_t errlen)
{
	struct fb_key keys[FB_RULE_KEYS_MAX];
	size_t n;
	int used = fb_flow_parse_keys(argc, argv, keys, &n, err, errlen);

	if (used < 0)
		return -1;
	if (one_key(keys, n, key, err, errlen))
		return -1;
	return used;
}

static int line_keys(char *line, struct fb_key *keys, size_t *nkeys, int *blank, char *err,
		     size_t errlen, bool strict)
{
	char *words[FB_FLOW_WORDS], *save = NULL, *w, *hash = strchr(line, '#');
	int n = 0, used;

	if (hash)
		*hash = 0;
	*blank = 0;
	*nkeys = 0;
	for (w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == FB_FLOW_WORDS) {
			snprintf(err, errlen, "too many words for one FLOW");
			return -1;
		}
		words[n++] = w;
	}
	if (!n) {
		*blank = 1;
		return 0;
	}
	used = parse_keys(n, words, FB_RULE_KEYS_MAX, keys, nkeys, err, errlen, strict);
	if (used < 0)
		return -1;
	if (used != n) {
		snprintf(err, errlen, "unexpected '%s' after the FLOW", fb_quote(words[used]));
		return -1;
	}
	return 0;
}

int fb_flow_parse_line_keys(char *line, struct fb_key *keys, size_t *nkeys, int *blank, char *err,
			    size_t errlen)
{
	return line_keys(line, keys, nkeys, blank, err, errlen, true);
}

int fb_flow_parse_line(char *line, struct fb_key *key, int *blank, char *err, size_t errlen)
{
	struct fb_key keys[FB_RULE_KEYS_MAX];
	size_t n;

	/* A rule fb_flow_format wrote, maybe by an older build, which named
	 * protocol 1 of an IPv6 key icmp (58 of an IPv4 one icmpv6): read
	 * back as the key it was, not refused as an operator's slip. */
	if (line_keys(line, keys, &n, blank, err, errlen, false))
		return -1;
	if (*blank)
		return 0;
	if (one_key(keys, n, key, err, errlen))
		return -1;
	return 0;
}

/* As parse_addr reads it back: IPv4 dotted; IPv6 in hex, spelled out for
 * ::ffff:0:0/96, where inet_ntop would print the dotted (IPv4) form. */
static void format_addr(const __u8 a[16], __u8 family, char *buf, size_t len, int bracket)
{
	char tmp[INET6_ADDRSTRLEN + 2];
	size_t n;

	if (family == FB_FAMILY_IPV4 && fb_addr_v4mapped(a)) {
		n = fb_ntop4(a + 12, tmp);
	} else {
		if (fb_addr_v4mapped(a))
			n = snprintf(tmp + 1, sizeof(tmp) - 1, "::ffff:%x:%x", a[12] << 8 | a[13],
				     a[14] << 8 | a[15]);
		else
			n = fb_ntop6(a, tmp + 1); /* inet_ntop's text (ntop.c) */
		if (bracket) {
			tmp[0] = '[';
			tmp[n + 1] = ']';
			n += 2;
		} else {
			memmove(tmp, tmp + 1, n);
		}
	}
	if (len) {
		n = n < len ? n : len - 1;
		memcpy(buf, tmp, n);
		buf[n] = 0;
	}
}

void fb_flow_format(const struct fb_key *key, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN + 2], d[INET6_ADDRSTRLEN + 2], pnum[8];
	const char *pname;

	if (key->kind == FB_KIND_MASK) {
		fb_mask_format(key, buf, len);
		return;
	}
	if (key->kind == FB_KIND_SRC || key->kind == FB_KIND_DST) {
		const __u8 *a = key->kind == FB_KIND_SRC ? key->saddr : key->daddr;
		int plen = key->plen;

		char t[sizeof(s) + 12];
		size_t n = 4;

		format_addr(a, key->family, s, sizeof(s), 0);
		if (key->family == FB_FAMILY_IPV4 && fb_addr_v4mapped(a) && plen >= 96)
			plen -= 96;
		/* By hand: a rule per path at each bgp state write. */
		memcpy(t, key->kind == FB_KIND_SRC ? "src " : "dst ", 4);
		n += strlen(strcpy(t + n, s));
		if (key->plen != 128) {
			t[n++] = '/';
			if (plen >= 100)
				t[n++] = '0' + plen / 100;
			if (plen >= 10)
				t[n++] = '0' + plen / 10 % 10;
			t[n++] = '0' + plen % 10;
		}
		if (len) {
			n = n < len ? n : len - 1;
			memcpy(buf, t, n);
			buf[n] = 0;
		}
		return;
	}
	pname = fb_proto_name_fam(key->proto, key->family);
	if (!pname) {
		snprintf(pnum, sizeof(pnum), "%u", key->proto);
		pname = pnum;
	}
	if (!fb_proto_has_ports(key->proto) && !key->sport && !key->dport) {
		format_addr(key->saddr, key->family, s, sizeof(s), 0);
		format_addr(key->daddr, key->family, d, sizeof(d), 0);
		snprintf(buf, len, "%s %s %s", pname, s, d);
		return;
	}
	format_addr(key->saddr, key->family, s, sizeof(s), 1);
	format_addr(key->daddr, key->family, d, sizeof(d), 1);
	snprintf(buf, len, "%s %s:%u %s:%u", pname, s, ntohs(key->sport), d, ntohs(key->dport));
}
