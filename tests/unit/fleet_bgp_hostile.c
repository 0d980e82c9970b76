// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_fleet, what a hostile or broken peer (or state file) cannot make
 * `flowbloom bgp` do (user/lib/fleet/bgp.c, bgpmsg.c): an IPv6 route never
 * becomes an IPv4 rule (v4-mapped prefixes, FlowSpec hosts), and every
 * length limit applies in the rule's own family; a line that is not
 * exactly one JSON message is refused whole; a FlowSpec component given
 * twice is refused, not widened; strings with tabs, newlines and NULs
 * cannot forge state-file lines; a state file's paths pass the same limits
 * as a peer's, and a path they refuse takes its rule out of the filter;
 * the stale-path counts that spare End-of-RIB a walk of the table; a
 * refused rule forgotten with the paths the last line made for it.
 */
#include <stdlib.h>
#include <string.h>
#include "fleet.h"
#include "report.h"
#include "fleet/bgp_int.h"

/* Any IPv4 rule among keys[0..n)? */
static bool any_v4(const struct fb_key *keys, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (keys[i].family == FB_FAMILY_IPV4)
			return true;
	return false;
}

#define NBR(peer) "\"neighbor\": {\"address\": {\"peer\": \"" peer "\"}"
#define BH(peer, fam, nlri)                                                                        \
	"{\"type\": \"update\", " NBR(                                                             \
		peer) ", \"message\": {\"update\": {\"attribute\": "                               \
		      "{\"community\": [[65535, 666]]}, \"announce\": {\"" fam                     \
		      "\": {\"x\": [{" nlri "}]}}}}}}"
#define WD(peer, pfx)                                                                              \
	"{\"type\": \"update\", " NBR(peer) ", \"message\": {\"update\": {\"withdraw\": "          \
					    "{\"ipv4 unicast\": [{\"nlri\": \"" pfx "\"}]}}}}}"
#define FS(fam, comps)                                                                             \
	"{\"type\": \"update\", " NBR(                                                             \
		"198.51.100.1") ", \"message\": {\"update\": {\"attribute\": "                     \
				"{\"extended-community\": [{\"value\": 9225060886715039744}]}, "   \
				"\"announce\": {\"" fam "\": {\"no-nexthop\": [{" comps            \
				", \"string\": \"f\"}]}}}}}}"

static void families(void)
{
	struct fb_bgp b;

	bgp_defaults(&b);
	/* ExaBGP prints a v4-mapped IPv6 prefix dotted. */
	bgp_feed(&b, BH("198.51.100.1", "ipv6 unicast", "\"nlri\": \"::ffff:0.0.0.0/96\""));
	ASSERT_TRUE(!any_v4(b.add, b.nadd) && !keys_hold(b.add, b.nadd, "dst 0.0.0.0/0"),
		    "bgp: ipv6 unicast ::ffff:0.0.0.0/96 makes no IPv4 rule (was dst 0.0.0.0/0)");
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, "dst ::ffff:0:0/96"),
		    "bgp: ... it makes the IPv6 rule dst ::ffff:0:0/96");
	fb_bgp_done(&b);
	bgp_feed(&b, BH("198.51.100.1", "ipv6 unicast", "\"nlri\": \"::ffff:198.51.100.0/120\""));
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, "dst ::ffff:c633:6400/120"),
		    "bgp: ipv6 unicast ::ffff:198.51.100.0/120: IPv6 dst, not IPv4 /24");
	fb_bgp_done(&b);
	/* The IPv6 minimum applies to IPv6 rules, the IPv4 one to IPv4. */
	bgp_feed(&b, BH("198.51.100.1", "ipv6 unicast", "\"nlri\": \"::ffff:0.0.0.0/40\""));
	ASSERT_TRUE(b.nadd == 0 && strstr(bgp_note, "shorter than /48"),
		    "bgp: ipv6 unicast ::ffff:0.0.0.0/40: refused by the IPv6 minimum");
	bgp_feed(&b, BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"::ffff:198.51.100.0/120\""));
	ASSERT_TRUE(b.nadd == 0 && bgp_note[0], "bgp: ipv4 unicast with an IPv6 prefix: refused");
	bgp_feed(&b, FS("ipv6 flow", "\"source-ipv6\": [\"::ffff:198.51.100.0/120/0\"]"));
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, "src ::ffff:c633:6400/120"),
		    "bgp: ipv6 flow, v4-mapped source /120: an IPv6 rule");
	fb_bgp_done(&b);
	bgp_feed(&b, FS("ipv6 flow", "\"destination-ipv6\": [\"::ffff:0.0.0.0/100/0\"]"));
	ASSERT_TRUE(b.nadd == 1 && !any_v4(b.add, 1) && keys_hold(b.add, 1, "dst ::ffff:0:0/100"),
		    "bgp: ipv6 flow ::ffff:0.0.0.0/100: an IPv6 rule (not IPv4 0.0.0.0/4)");
	fb_bgp_done(&b);
	bgp_feed(&b,
		 FS("ipv6 flow", "\"destination-ipv6\": [\"::ffff:203.0.113.9/128/0\"], "
				 "\"source-ipv6\": [\"::ffff:198.51.100.2/128/0\"], "
				 "\"next-header\": [\"=udp\"], \"destination-port\": [\"=53\"], "
				 "\"source-port\": [\"=4000\"]"));
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1,
					     "udp [::ffff:c633:6402]:4000 [::ffff:cb00:7109]:53"),
		    "bgp: ipv6 flow 5-tuple of v4-mapped hosts: an IPv6 5-tuple");
	fb_bgp_done(&b);
	bgp_feed(&b, FS("ipv6 flow", "\"destination-ipv6\": [\"::ffff:203.0.113.9/128/0\"], "
				     "\"source-ipv6\": [\"::ffff:198.51.100.2/128/0\"], "
				     "\"next-header\": [\"=44\"]"));
	ASSERT_TRUE(b.nadd == 0 && strstr(bgp_note, "extension header"),
		    "bgp: ipv6 flow keyed by an extension header: refused");
	/* Item 8: a component twice asks for both: one rule would widen it. */
	bgp_feed(&b, FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.22/32\"], "
				     "\"destination\": [\"203.0.113.0/24\"]"));
	ASSERT_TRUE(b.nadd == 0 && strstr(bgp_note, "given twice"),
		    "bgp: destination-ipv4 /32 and destination /24: refused, not dst /24");
	bgp_feed(&b, FS("ipv4 flow", "\"source\": [\"198.51.100.0/24\"], "
				     "\"source-ipv4\": [\"198.51.100.7/32\"]"));
	ASSERT_TRUE(b.nadd == 0 && strstr(bgp_note, "given twice"),
		    "bgp: source and source-ipv4: refused");
	fb_bgp_free(&b);
}

static void one_message(void)
{
	static const char a[] = BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"203.0.113.60/32\"");
	static const char c[] = BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"203.0.113.62/32\"");
	char buf[2048];
	struct fb_bgp b;
	size_t n;

	bgp_defaults(&b);
	snprintf(buf, sizeof(buf), "%s%s", a, c);
	ASSERT_TRUE(bgp_feed(&b, buf) == -1 && b.nadd == 0 && strstr(bgp_note, "another message"),
		    "bgp: {A}{B} on one line: refused whole, reported (A was applied, B dropped)");
	snprintf(buf, sizeof(buf), "%s garbage", a);
	ASSERT_TRUE(bgp_feed(&b, buf) == -1 && b.nadd == 0 && strstr(bgp_note, "garbage"),
		    "bgp: a message then garbage: refused, reported");
	n = snprintf(buf, sizeof(buf), "%s", a);
	memcpy(buf + n, "\0garbage", 8);
	bgp_note[0] = 0;
	ASSERT_TRUE(fb_bgp_line(&b, buf, n + 8, 1) == -1 && b.nadd == 0 && strstr(bgp_note, "NUL"),
		    "bgp: a message, a NUL and garbage: refused, reported");
	snprintf(buf, sizeof(buf), "  %s \t", a);
	ASSERT_TRUE(bgp_feed(&b, buf) == 0 && b.nadd == 1,
		    "bgp: blanks around one message: applied");
	fb_bgp_free(&b);
}

/* A name given twice in one object: json-c kept the last, so a FlowSpec
 * route's destination /32 and /24 became the /24 alone (the component
 * given twice, widened), and a withdrawal's first list was dropped. Refused
 * whole, also with a ':' in a comment or in a single-quoted name meant to
 * make the count come out even. */
static void names_twice(void)
{
	static const char *const bad[] = {
		FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.22/32\"], "
				"\"destination-ipv4\": [\"203.0.113.0/24\"]"),
		FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.22/32\"], "
				"\"destination-ipv4\": [\"203.0.113.0/24\"], \"x\": /* : */ 1"),
		FS("ipv4 flow", "'k\"': 1, \"destination-ipv4\": [\"203.0.113.22/32\"], "
				"\"destination-ipv4\": [\"203.0.113.0/24\"], \"q\": \"\\\"\""),
		"{\"type\": \"update\", " NBR(
			"198.51.100.1") ", \"message\": {\"update\": "
					"{\"withdraw\": {\"ipv4 unicast\": [{\"nlri\": "
					"\"203.0.113.80/32\"}], "
					"\"ipv4 unicast\": [{\"nlri\": \"203.0.113.81/32\"}]}}}}}",
	};
	struct fb_bgp b;
	size_t i;

	bgp_defaults(&b);
	bgp_feed(&b, BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"203.0.113.80/32\""));
	fb_bgp_done(&b);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_TRUE(bgp_feed(&b, bad[i]) == -1 && b.nadd == 0 && b.ndel == 0,
			    "bgp: a name given twice in one JSON object: the line refused whole");
		fb_bgp_done(&b);
	}
	ASSERT_TRUE(strstr(bgp_note, "given twice") || strstr(bgp_note, "not JSON"),
		    "bgp: ... reported");
	bgp_feed(&b, FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.0/24\"], "
				     "\"protocol\": [\"=udp\"], \"x:\\\"\": 0"));
	ASSERT_TRUE(strstr(bgp_note, "not supported") && !strstr(bgp_note, "twice"),
		    "bgp: names with ':' and '\\\"' in them are counted once");
	fb_bgp_free(&b);
}

/* The objects and arrays counted before json-c parses a line (bgpmsg.c):
 * none inside strings, escapes and all, nor in a name in single quotes
 * (json-c takes one), and a '"' there starts no string. */
static void containers(void)
{
	static const struct {
		const char *s;
		size_t want;
	} t[] = {
		{ "{\"a\": [1, {}, []]}", 3 },
		{ "{\"a\": \"{[\\\"{[\"}", 1 },		 /* {"a": "{[\"{["} */
		{ "{\"a\": \"\\\\\", \"b\": [[]]}", 3 }, /* {"a": "\\", "b": [[]]} */
		{ "\"[[[", 0 },
		{ "[[[[[[", 3 },	     /* counted up to max + 1 only */
		{ "{'\"': [{}]}", 3 },	     /* {'"': [{}]}: a name json-c takes */
		{ "{'a\\'[': [\"'\"]}", 2 }, /* {'a\'[': ["'"]} */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ASSERT_EQ(fb_bgp_containers(t[i].s, strlen(t[i].s), 2), t[i].want,
			  "bgp: objects and arrays outside strings counted");
}

/* A state file from what a peer sent, read back by a new process. */
static FILE *saved(struct fb_bgp *a)
{
	FILE *fp = tmpfile();

	fb_bgp_save(a, fp);
	rewind(fp);
	return fp;
}

static void strings(void)
{
	struct fb_bgp a, b;
	struct fb_key *keys;
	FILE *fp;
	size_t n;

	bgp_defaults(&a);
	/* An add-path id that would be a second state line if written raw. */
	bgp_feed(&a,
		 BH("198.51.100.1", "ipv4 unicast",
		    "\"nlri\": \"203.0.113.60/32\", \"path-information\": "
		    "\"1\\tdst 203.0.113.61/32\\n198.51.100.1\\tipv4 unicast\\t203.0.113.61/32\\t"
		    "dst 203.0.113.61\""));
	ASSERT_EQ(a.nadd, 1, "bgp: an add-path id with tabs and newlines: one path");
	fb_bgp_done(&a);
	bgp_feed(&a, BH("198.51.100.1\\\\x\\t", "ipv4 unicast", "\"nlri\": \"203.0.113.63/32\""));
	fb_bgp_done(&a);
	/* A peer whose line would start with '#', the state file's comment
	 * (a fuzzer's find: the path was forgotten on restart, its rule left
	 * in the filter for good). */
	bgp_feed(&a, BH("#198.51.100.2", "ipv4 unicast", "\"nlri\": \"203.0.113.62/32\""));
	fb_bgp_done(&a);
	fp = saved(&a);
	bgp_defaults(&b);
	ASSERT_EQ(fb_bgp_load(&b, fp, "state"), 0, "bgp state: escaped strings load back");
	ASSERT_EQ(b.npaths, 3, "bgp state: ... as the three paths there were, '#' peer included");
	n = fb_bgp_rules(&b, &keys);
	ASSERT_TRUE(n == 3 && !keys_hold(keys, n, "dst 203.0.113.61"),
		    "bgp state: 203.0.113.61, never announced, is not held");
	free(keys);
	bgp_feed(&b, WD("#198.51.100.2", "203.0.113.62/32"));
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, 1, "dst 203.0.113.62"),
		    "bgp state: the peer starting with '#' withdraws its own path");
	fb_bgp_done(&b);
	bgp_feed(&b, WD("198.51.100.1\\\\x\\t", "203.0.113.63/32"));
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, 1, "dst 203.0.113.63"),
		    "bgp state: the peer with a backslash and a tab withdraws its own path");
	fclose(fp);
	fb_bgp_free(&a);
	fb_bgp_free(&b);
	bgp_defaults(&a);
	bgp_feed(&a, BH("", "ipv4 unicast", "\"nlri\": \"203.0.113.64/32\""));
	ASSERT_TRUE(a.nadd == 0 && a.npaths == 0, "bgp: an empty neighbor address: refused");
	bgp_feed(&a, BH("198.51.100.1\\u0000x", "ipv4 unicast", "\"nlri\": \"203.0.113.64/32\""));
	ASSERT_TRUE(a.nadd == 0 && a.npaths == 0, "bgp: a neighbor address with a NUL: refused");
	bgp_feed(&a, BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"\""));
	ASSERT_TRUE(a.nadd == 0 && a.npaths == 0, "bgp: an empty NLRI: refused");
	fb_bgp_free(&a);
}

static void state_limits(void)
{
	struct fb_bgp b;
	FILE *fp = tmpfile();

	/* What the file says passes the limits a peer's route would. */
	fputs("# filter rtbh array-id 7\n"
	      "198.51.100.1\tipv4 unicast\t203.0.113.7/32\tdst 203.0.113.7\n"
	      "198.51.100.1\tipv4 unicast\t0.0.0.0/0\tdst 0.0.0.0/0\n"
	      "198.51.100.1\tipv6 unicast\t::/0\tdst ::/0\n"
	      "198.51.100.1\tipv6 unicast\t::ffff:0.0.0.0/96\tdst 0.0.0.0/0\n"
	      "198.51.100.1\tipv4 unicast\t203.0.113.8/32\tsrc 203.0.113.8\n"
	      "198.51.100.1\tipv4 flow\tflow x\tudp 198.51.100.1:1 203.0.113.9:2\n"
	      "198.51.100.3\tipv4 unicast\t203.0.113.9/32\tdst 203.0.113.7\n",
	      fp);
	rewind(fp);
	bgp_defaults(&b);
	ASSERT_EQ(fb_bgp_load(&b, fp, "state"), 0, "bgp state limits: the file loads");
	ASSERT_EQ(b.npaths, 3, "bgp state limits: 3 of 7 paths admitted");
	ASSERT_TRUE(b.ndel == 3 && keys_hold(b.del, b.ndel, "dst 0.0.0.0/0") &&
			    keys_hold(b.del, b.ndel, "dst ::/0") &&
			    keys_hold(b.del, b.ndel, "src 203.0.113.8"),
		    "bgp state limits: dst 0.0.0.0/0, dst ::/0 and a src rule under --rtbh dst "
		    "leave the filter, not enter it");
	ASSERT_EQ(fb_bgp_refs(&b, &b.del[0]), 0, "bgp state limits: ... held by no path");
	fb_bgp_done(&b);
	fb_bgp_free(&b);
	fclose(fp);
}

#define UP(peer)                                                                                   \
	"{\"type\": \"state\", \"neighbor\": {\"address\": {\"peer\": \"" peer                     \
	"\"}, \"state\": \"up\"}}"
#define EOR_OF(peer, afi)                                                                          \
	"{\"type\": \"update\", " NBR(peer) ", \"message\": {\"eor\": {\"afi\": \"" afi            \
					    "\", \"safi\": \"unicast\"}}}}"

/* The state file holds the marks: a run restarted while a peer restarts
 * (after a write) ends at its End-of-RIB what the peer did not announce
 * again (the marks lived in memory only: nothing ended, and those routes
 * kept their rules for good). b: 203.0.113.1 announced again, .3 and
 * 2001:db8::1 stale. A mark follows its path's line; one with no path line
 * before it is refused, one after a path dropped goes with it. */
static void stale_saved(const struct fb_bgp *b)
{
	struct fb_bgp c;
	FILE *fp = tmpfile();

	ASSERT_EQ(fb_bgp_save(b, fp), 0, "bgp stale saved: saved");
	rewind(fp);
	bgp_defaults(&c);
	ASSERT_EQ(fb_bgp_load(&c, fp, "state"), 0, "bgp stale saved: loaded");
	fclose(fp);
	ASSERT_TRUE(c.npaths == 4 && fb_bgp_stale_count(&c, "198.51.100.1", "ipv4 unicast") == 1 &&
			    fb_bgp_stale_count(&c, "198.51.100.1", "ipv6 unicast") == 1 &&
			    !fb_bgp_stale_count(&c, "198.51.100.2", "ipv4 unicast"),
		    "bgp stale saved: the marks read back, per peer and family");
	bgp_feed(&c, EOR_OF("198.51.100.1", "ipv4"));
	ASSERT_TRUE(c.ndel == 1 && keys_hold(c.del, 1, "dst 203.0.113.3") && c.npaths == 3,
		    "bgp stale saved: End-of-RIB to the next run ends the one not announced again");
	fb_bgp_free(&c);
	fp = tmpfile();
	fputs("# stale\n198.51.100.1\tipv4 unicast\t203.0.113.7/32\tdst 203.0.113.7\n", fp);
	rewind(fp);
	bgp_defaults(&c);
	ASSERT_TRUE(fb_bgp_load(&c, fp, "state") == -1 && !c.npaths,
		    "bgp stale saved: a mark with no path line before it refuses the file");
	fb_bgp_free(&c);
	fclose(fp);
	fp = tmpfile();
	fputs("198.51.100.1\tipv4 unicast\t203.0.113.7/32\tdst 203.0.113.7\n# stale\n"
	      "198.51.100.1\tipv4 unicast\t198.51.100.0/8\tdst 198.0.0.0/8\n# stale\n"
	      "198.51.100.1\tipv4 unicast\t203.0.113.8/32\tdst 203.0.113.8\n",
	      fp);
	rewind(fp);
	bgp_defaults(&c);
	ASSERT_TRUE(!fb_bgp_load(&c, fp, "state") && c.npaths == 2 &&
			    fb_bgp_stale_count(&c, "198.51.100.1", "ipv4 unicast") == 1,
		    "bgp stale saved: a dropped path's mark goes with it, the others stay");
	fb_bgp_free(&c);
	fclose(fp);
}

/* End-of-RIB looks at the table only while the peer has stale paths in
 * its family (a peer sending it again and again made each one a walk of
 * every path): the count behind that, kept as paths become stale, are
 * announced again, are withdrawn, and come up stale twice. */
/* Every cut of b's state file (a torn write, an edit): one inside a line
 * (no newline at the end) refuses the file whole; one at a line's end
 * loads a part, never a rule b does not hold (a path line cut inside its
 * rule named another: "dst 203.0.113.3" cut to "dst 203.0.113.", or a
 * prefix shortened, which the route's withdrawal would then delete),
 * and nothing to delete. */
static void torn(const struct fb_bgp *b)
{
	char *text = NULL;
	size_t size = 0, cut, i, n, bad = 0, refused = 0;
	FILE *fp = open_memstream(&text, &size);
	struct fb_key *keys;
	struct fb_bgp c;
	int rc;

	ASSERT_TRUE(fp && !fb_bgp_save(b, fp) && !fclose(fp) && size > 100,
		    "bgp torn state: saved");
	fb_report_quiet = true; /* a refusal for each cut inside a line */
	for (cut = 0; text && cut <= size; cut++) {
		fp = fmemopen(text, cut ? cut : 1, "r");
		bgp_defaults(&c);
		rc = fb_bgp_load(&c, fp, "state"); /* fmemopen of 1 byte for the empty cut */
		fclose(fp);
		if (cut && text[cut - 1] != '\n') {
			refused += rc == -1 && !c.npaths;
			bad += rc != -1 || c.npaths;
		} else if (cut) {
			n = fb_bgp_rules(&c, &keys);
			for (i = 0; i < n; i++)
				bad += !fb_bgp_refs(b, &keys[i]);
			bad += rc || c.ndel;
			free(keys);
		}
		fb_bgp_free(&c);
	}
	fb_report_quiet = false;
	ASSERT_TRUE(!bad && refused > 100,
		    "bgp torn state: each cut inside a line refuses the file, each at a line's end "
		    "loads only rules held, nothing to delete");
	free(text);
}

static void stale_counts(void)
{
	struct fb_bgp b;
	static const char *const held[] = {
		BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"203.0.113.1/32\""),
		BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"203.0.113.2/32\""),
		BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"203.0.113.3/32\""),
		BH("198.51.100.1", "ipv6 unicast", "\"nlri\": \"2001:db8::1/128\""),
		BH("198.51.100.2", "ipv4 unicast", "\"nlri\": \"203.0.113.4/32\""),
	};
	size_t i;

	bgp_defaults(&b);
	b.o.flush_on_down = false;
	for (i = 0; i < sizeof(held) / sizeof(held[0]); i++) {
		bgp_feed(&b, held[i]);
		fb_bgp_done(&b); /* in the filter */
	}
	bgp_feed(&b, UP("198.51.100.1"));
	bgp_feed(&b, UP("198.51.100.1")); /* twice: counted once */
	ASSERT_EQ(fb_bgp_stale_count(&b, "198.51.100.1", "ipv4 unicast"), 3,
		  "bgp stale: up makes the peer's 3 IPv4 paths stale (once, if twice up)");
	ASSERT_EQ(fb_bgp_stale_count(&b, "198.51.100.2", "ipv4 unicast"), 0,
		  "bgp stale: ... not another peer's");
	bgp_feed(&b, EOR_OF("198.51.100.2", "ipv4"));
	ASSERT_TRUE(b.ndel == 0 && b.npaths == 5, "bgp stale: another peer's End-of-RIB ends none");
	bgp_feed(&b, BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"203.0.113.1/32\""));
	bgp_feed(&b, WD("198.51.100.1", "203.0.113.2/32"));
	fb_bgp_done(&b);
	ASSERT_EQ(fb_bgp_stale_count(&b, "198.51.100.1", "ipv4 unicast"), 1,
		  "bgp stale: one announced again, one withdrawn: one left");
	stale_saved(&b);
	torn(&b);
	bgp_feed(&b, EOR_OF("198.51.100.1", "ipv6"));
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, 1, "dst 2001:db8::1"),
		    "bgp stale: the IPv6 End-of-RIB ends the IPv6 path only");
	fb_bgp_done(&b);
	bgp_feed(&b, EOR_OF("198.51.100.1", "ipv4"));
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, 1, "dst 203.0.113.3"),
		    "bgp stale: the IPv4 End-of-RIB ends the one not announced again");
	fb_bgp_done(&b);
	ASSERT_TRUE(b.npaths == 2 && !fb_bgp_stale_count(&b, "198.51.100.1", "ipv4 unicast") &&
			    !b.stale,
		    "bgp stale: 2 paths left, none stale, no count kept");
	bgp_feed(&b, UP("198.51.100.1"));
	fb_bgp_remove_all(&b);
	ASSERT_TRUE(!b.stale && !fb_bgp_stale_count(&b, "198.51.100.1", "ipv4 unicast"),
		    "bgp stale: every path ended: no count kept");
	fb_bgp_free(&b);
}

/* A rule the filter refuses: the paths holding it (made by the last line,
 * found through its operations) are forgotten, the rule too; what earlier
 * lines hold stays. */
static void refused(void)
{
	struct fb_bgp b;
	struct fb_key k;

	bgp_defaults(&b);
	bgp_feed(&b, BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"203.0.113.1/32\""));
	fb_bgp_done(&b); /* in the filter */
	bgp_feed(&b, "{\"type\": \"update\", " NBR(
			     "198.51.100.1") ", \"message\": {\"update\": "
					     "{\"attribute\": {\"community\": [[65535, 666]]}, "
					     "\"announce\": {\"ipv4 unicast\": "
					     "{\"x\": [{\"nlri\": \"203.0.113.2/32\", "
					     "\"path-information\": \"1\"}, "
					     "{\"nlri\": \"203.0.113.2/32\", \"path-information\": "
					     "\"2\"}, "
					     "{\"nlri\": \"203.0.113.3/32\"}]}}}}}}");
	ASSERT_TRUE(b.nadd == 2 && b.npaths == 4, "bgp refused: two rules to add, four paths");
	k = keys_hold(&b.add[0], 1, "dst 203.0.113.2") ? b.add[0] : b.add[1];
	ASSERT_TRUE(keys_hold(&k, 1, "dst 203.0.113.2"), "bgp refused: dst 203.0.113.2 to add");
	fb_bgp_refused(&b, &k, NULL, NULL);
	ASSERT_TRUE(b.npaths == 2 && fb_bgp_refs(&b, &k) == 0 && b.nrules == 2,
		    "bgp refused: both paths of the refused rule forgotten, and the rule");
	ASSERT_TRUE(b.changed, "bgp refused: ... the state is to be written");
	fb_bgp_done(&b);
	ASSERT_EQ(b.npaths, 2, "bgp refused: the earlier path and the other rule's stay");
	fb_bgp_free(&b);
}

/* A community is two 16-bit numbers, ExaBGP's [ASN, VALUE] of JSON
 * integers: a value past 65535 (2^32 + 65535 is 65535 in 32 bits), below
 * 0, a string or a fraction is not BLACKHOLE 65535:666 (each was taken
 * for it: the route blackholed). */
static void communities(void)
{
	static const char *const bad[] = {
		"[4295032831, 666]",	"[65535, 4294967962]", "[-4294901761, 666]",
		"[\"65535\", \"666\"]", "[65535.9, 666]",      "[65535, 666.0]",
		"[true, 666]",		"[65535, 666, 1]",     "[[65535], 666]",
	};
	char line[512], label[128];
	struct fb_bgp b;
	size_t i;

	bgp_defaults(&b);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line),
			 "{\"type\": \"update\", " NBR(
				 "198.51.100.1") ", \"message\": "
						 "{\"update\": {\"attribute\": {\"community\": "
						 "[%s]}, "
						 "\"announce\": {\"ipv4 unicast\": {\"x\": "
						 "[{\"nlri\": "
						 "\"203.0.113.%zu/32\"}]}}}}}}",
			 bad[i], i + 1);
		bgp_feed(&b, line);
		snprintf(label, sizeof(label), "bgp community %s: not 65535:666, nothing added",
			 bad[i]);
		ASSERT_TRUE(b.nadd == 0, label);
		fb_bgp_done(&b);
	}
	bgp_feed(&b, BH("198.51.100.1", "ipv4 unicast", "\"nlri\": \"203.0.113.99/32\""));
	ASSERT_TRUE(b.nadd == 1, "bgp community [65535, 666]: the rule added");
	fb_bgp_free(&b);
}

void test_bgp_hostile(void)
{
	communities();
	names_twice();
	families();
	one_message();
	containers();
	strings();
	state_limits();
	stale_counts();
	refused();
}
