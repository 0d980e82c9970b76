// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BGP state file's writer (fb_bgp_save), which formats its lines by
 * hand into a buffer: byte for byte what the stdio writer it replaced
 * (kept here as the reference: fprintf and fputc per field) wrote, for a
 * table of every rule shape a route makes (RTBH both sides and families,
 * v4-mapped and IPv4-compatible IPv6, FlowSpec 5-tuples, port ranges in
 * parts, protocols without ports, numbers without a name, ICMPv6) held
 * by peers and add-path ids that need every escape (tab, newline, CR,
 * backslash, '#', other control bytes, DEL, bytes past ASCII), and for
 * tables past the buffer's size, stale paths among them; and bgp --ttl's lines of where each
 * rule's copies are (bgp_copies_save), as its stdio writer wrote them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bgprun.h"
#include "fleet.h"
#include "fleet/bgp_int.h"

/* The writer as it was: stdio per field. */
static void ref_field(FILE *fp, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '\\')
			fputs("\\\\", fp);
		else if (c == '\t')
			fputs("\\t", fp);
		else if (c == '\n')
			fputs("\\n", fp);
		else if (c == '\r')
			fputs("\\r", fp);
		else if (c < 0x20 || c == 0x7f || c == '#')
			fprintf(fp, "\\x%02x", c);
		else
			fputc(c, fp);
	}
}

static void ref_save(const struct fb_bgp *b, FILE *fp)
{
	char text[FB_FLOW_STR];
	struct fb_bgp_path *p;
	size_t i;

	fprintf(fp, "# flowbloom bgp state 2: peer, family, route id, rule (one path a line)\n");
	for (i = 0; i < b->nbuckets; i++)
		for (p = b->paths[i]; p; p = p->next) {
			fb_flow_format(&p->key, text, sizeof(text));
			ref_field(fp, p->peer);
			fputc('\t', fp);
			ref_field(fp, p->family);
			fputc('\t', fp);
			ref_field(fp, p->nlri);
			fprintf(fp, "\t%s\n", text);
			if (p->stale)
				fputs("# stale\n", fp);
		}
}

static void ref_copies(const struct bgp_copies *c, const struct fb_bgp *b, FILE *fp)
{
	char text[FB_FLOW_STR];
	const char *sep;
	size_t i;
	unsigned g;

	fputs("# generations", fp);
	for (g = 0; g < FB_GEN_SLOTS; g++)
		if (c->expires[g])
			fprintf(fp, " %u:%llu", g, (unsigned long long)c->expires[g]);
	fputc('\n', fp);
	for (i = 0; i < c->cap; i++) {
		const struct bgp_copy *r = &c->t[i];

		if (!r->used || !fb_bgp_refs(b, &r->key))
			continue;
		fb_flow_format(&r->key, text, sizeof(text));
		fprintf(fp, "%s%s\t", "# copies\t", text);
		for (sep = "", g = 0; g < FB_GEN_SLOTS; g++)
			if (r->n[g]) {
				fprintf(fp, "%s%u:%u", sep, g, r->n[g]);
				sep = ",";
			}
		fputc('\n', fp);
	}
}

#define NBP(peer)                                                                                  \
	"{\"type\": \"update\", \"neighbor\": {\"address\": {\"local\": \"198.51.100.2\", "        \
	"\"peer\": \"" peer "\"}, \"direction\": \"receive\", \"message\": {\"update\": "          \
	"{\"attribute\": "
#define BH(peer, fam, nlri)                                                                        \
	NBP(peer)                                                                                  \
	"{\"community\": [[65535, 666]]}, \"announce\": {\"" fam "\": {\"198.51.100.1\": "         \
	"[{\"nlri\": \"" nlri "\"}]}}}}}}"
#define FS(peer, fam, id, comps)                                                                   \
	NBP(peer)                                                                                  \
	"{\"extended-community\": [{\"value\": 9225060886715039744, \"string\": "                  \
	"\"rate-limit:0\"}]}, \"announce\": {\"" fam "\": {\"no-nexthop\": [{" comps               \
	", \"string\": \"" id "\"}]}}}}}}"
/* The peers: plain, and one of every escape (JSON escapes: the peer gets
 * the bytes). */
#define P1 "198.51.100.9"
#define P2 "#198.51.100.1\\t\\n\\r\\\\x\\u0001\\u001f\\u007f\\u00e9 \\\"q\\\""

static const char *const lines[] = {
	BH(P1, "ipv4 unicast", "203.0.113.7/32"),
	BH(P1, "ipv4 unicast", "203.0.113.129/25"),
	BH(P2, "ipv4 unicast", "203.0.113.7/32"),
	BH(P1, "ipv6 unicast", "2001:db8::1/128"),
	BH(P1, "ipv6 unicast", "2001:db8:0:1::/64"),
	BH(P2, "ipv6 unicast", "2001:db8:ffff:0:0:1:0:0/128"),
	BH(P1, "ipv6 unicast", "::ffff:203.0.113.7/128"),
	BH(P1, "ipv6 unicast", "::ffff:0.0.0.0/96"),
	BH(P1, "ipv6 unicast", "::203.0.113.8/128"),
	BH(P1, "ipv6 unicast", "2001:db8:1:2:3:4:5:6/128"),
	BH(P1, "ipv6 unicast", "2001:0:0:1::1/128"),
	FS(P1, "ipv4 flow", "flow 1",
	   "\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": [\"198.51.100.2/32\"], "
	   "\"protocol\": [\"=udp\"], \"destination-port\": [\"=5000\"], \"source-port\": "
	   "[\"=4000\"]"),
	FS(P2, "ipv4 flow", "flow 2",
	   "\"destination-ipv4\": [\"203.0.113.10/32\"], \"protocol\": [\"=tcp\"], "
	   "\"destination-port\": [\">=1024&<=2047\", \"=53\"]"),
	FS(P1, "ipv4 flow", "flow 3",
	   "\"destination-ipv4\": [\"203.0.113.0/24\"], \"protocol\": [\"=gre\"]"),
	FS(P1, "ipv4 flow", "flow 4",
	   "\"destination-ipv4\": [\"203.0.113.11/32\"], \"protocol\": [\"=unknown protocol type "
	   "200\"]"),
	FS(P1, "ipv4 flow", "flow 5",
	   "\"source-ipv4\": [\"198.51.100.0/24\"], \"source-port\": [\"=123\"]"),
	FS(P1, "ipv6 flow", "flow 6",
	   "\"destination-ipv6\": [\"2001:db8::5/128/0\"], \"next-header\": [\"=unknown protocol "
	   "type "
	   "58\"]"),
	FS(P2, "ipv6 flow", "flow 7",
	   "\"destination-ipv6\": [\"2001:db8::6/128\"], \"source-ipv6\": [\"2001:db8:1::/48\"], "
	   "\"protocol\": [\"=udp\"], \"destination-port\": [\">=0\"]"),
	FS(P1, "ipv4 flow", "flow 8\\t#\\u0002\\\\ \\u00ff",
	   "\"destination-ipv4\": [\"203.0.113.12/32\"]"),
};

static void note(void *ctx, const char *msg)
{
	(void)ctx;
	if (getenv("TEST_VERBOSE"))
		printf("  note: %s\n", msg);
}

/* Both writers' text of b: equal, and the new one's return value 0. */
static bool same(const struct fb_bgp *b, size_t *len)
{
	char *x = NULL, *y = NULL;
	size_t nx = 0, ny = 0;
	FILE *fx = open_memstream(&x, &nx), *fy = open_memstream(&y, &ny);
	bool eq;
	int rc;

	rc = fb_bgp_save(b, fx);
	ref_save(b, fy);
	fclose(fx);
	fclose(fy);
	eq = !rc && nx == ny && !memcmp(x, y, nx);
	if (!eq)
		for (size_t i = 0; i < nx && i < ny; i++)
			if (x[i] != y[i]) {
				fprintf(stderr, "# differ at byte %zu: '%.40s' against '%.40s'\n",
					i, x + i, y + i);
				break;
			}
	*len = nx;
	free(x);
	free(y);
	return eq;
}

/* Where the copies of a's rules are, every slot and count: both writers'
 * text. */
static void copies(const struct fb_bgp *a)
{
	struct bgp_copies c = { .hkey = a->hkey };
	struct fb_key *keys;
	char *in = NULL, *x = NULL, *y = NULL, text[FB_FLOW_STR];
	size_t nin = 0, nx = 0, ny = 0, n = fb_bgp_rules(a, &keys), i;
	FILE *fp = open_memstream(&in, &nin), *fx, *fy;
	bool found = false;
	int rc;

	fprintf(fp, "# generations 0:1 3:4294967296 9:77 15:18446744073709551615\n");
	for (i = 0; i < n; i++) {
		fb_flow_format(&keys[i], text, sizeof(text));
		fprintf(fp, "# copies\t%s\t", text);
		if (i % 3 == 0)
			fprintf(fp, "0:%zu\n", 1 + i % 255);
		else if (i % 3 == 1)
			fprintf(fp, "3:1,9:255,15:%zu\n", 1 + i % 200);
		else
			fprintf(fp, "15:%zu\n", 10 + i % 90);
	}
	/* A rule no path holds: not written. */
	fprintf(fp, "# copies\tdst 198.51.100.77\t0:1\n");
	fclose(fp);
	fp = fmemopen(in, nin, "r");
	ASSERT_TRUE(!bgp_copies_load(&c, fp, "state", &found) && found && c.n == n + 1,
		    "bgp save: copies of every rule read");
	fclose(fp);
	fx = open_memstream(&x, &nx);
	fy = open_memstream(&y, &ny);
	rc = bgp_copies_save(&c, a, fx);
	ref_copies(&c, a, fy);
	fclose(fx);
	fclose(fy);
	ASSERT_TRUE(!rc && nx == ny && !memcmp(x, y, nx) && !strstr(x, "198.51.100.77") &&
			    strstr(x, "\t3:1,9:255,15:") && nx > 1000000,
		    "bgp save: --ttl's copies of every rule: as the stdio writer");
	bgp_copies_free(&c);
	free(keys);
	free(in);
	free(x);
	free(y);
}

void test_bgp_save(void)
{
	struct fb_bgp_opts o = { .community = FB_BGP_BLACKHOLE, .max_paths = 1000000 };
	struct fb_bgp a, s;
	char line[600], *text = NULL;
	size_t i, len, n = 0, nlines = 0;
	FILE *fp;

	fb_bgp_init(&a, &o);
	o.rtbh_src = true;
	fb_bgp_init(&s, &o);
	a.note = s.note = note;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		ASSERT_EQ(fb_bgp_line(&a, lines[i], strlen(lines[i]), i + 1), 0,
			  "bgp save: a line of every shape read");
		fb_bgp_done(&a);
		fb_bgp_line(&s, lines[i], strlen(lines[i]), i + 1);
		fb_bgp_done(&s);
	}
	ASSERT_TRUE(a.npaths >= 20 && s.npaths >= 8, "bgp save: every shape held, both sides");
	ASSERT_TRUE(same(&a, &len), "bgp save: every rule shape and escape: as the stdio writer");
	fp = open_memstream(&text, &n);
	fb_bgp_save(&a, fp);
	fclose(fp);
	ASSERT_TRUE(
		strstr(text, "\\x23198.51.100.1\\t\\n\\r\\\\x\\x01\\x1f\\x7f\xc3\xa9 \"q\"\t") &&
			strstr(text, "\tdst ::ffff:cb00:7107\n") &&
			strstr(text, "\tdst ::203.0.113.8\n") && strstr(text, " part 2/") &&
			strstr(text, "\tgre dst 203.0.113.0/24\n"),
		"bgp save: ... escapes, v4-mapped, IPv4-compatible, parts, a portless protocol");
	for (i = 0; i < n; i++)
		nlines += text[i] == '\n';
	ASSERT_EQ(nlines, a.npaths + 1, "bgp save: ... a line a path");
	free(text);
	ASSERT_TRUE(same(&s, &len), "bgp save: source RTBH: as the stdio writer");
	/* P1's session up again: its paths held stale, a "# stale" line after
	 * each (until End-of-RIB). */
	snprintf(line, sizeof(line),
		 "{\"type\": \"state\", \"neighbor\": {\"address\": {\"peer\": \"%s\"}, "
		 "\"state\": \"up\"}}",
		 P1);
	fb_bgp_line(&a, line, strlen(line), 99);
	ASSERT_TRUE(fb_bgp_stale_count(&a, P1, "ipv4 unicast") > 0 && same(&a, &len),
		    "bgp save: stale paths: as the stdio writer");
	/* Past any buffer: 30,000 more paths (about 2 MB). */
	for (i = 0; i < 30000; i++) {
		snprintf(
			line, sizeof(line),
			NBP("%s") "{\"community\": [[65535, 666]]}, \"announce\": {\"ipv6 "
				  "unicast\": {\"198.51.100.1\": [{\"nlri\": \"2001:db8:%zx:%zx::1/"
				  "128\", \"path-information\": \"%zu\"}]}}}}}}",
			i % 2 ? P1 : P2, i >> 16, i & 0xffff, i);
		fb_bgp_line(&a, line, strlen(line), i + 100);
		fb_bgp_done(&a);
	}
	ASSERT_TRUE(same(&a, &len) && len > 2000000,
		    "bgp save: a table of 30,000 paths more: as the stdio writer");
	copies(&a);
	fb_bgp_free(&a);
	fb_bgp_free(&s);
}
