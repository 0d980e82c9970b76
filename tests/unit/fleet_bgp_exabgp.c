// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_fleet, routes as ExaBGP 4.2 prints them (user/lib/fleet/bgpid.c,
 * bgpflow.c): a route's identity is the same in its announcement and its
 * withdrawal (a FlowSpec announcement's "string" ends with its next hop, a
 * withdrawal's does not; a prefix's host bits do not count), also for the
 * ids a state file of an earlier version holds; v4-mapped prefixes, printed
 * dotted, are IPv6 prefixes; port components match TCP and UDP ports;
 * protocols are read as ExaBGP names them.
 */
#include <stdlib.h>
#include <string.h>
#include "fleet.h"

/* A state file's text, loaded into a new table b. */
static int load(struct fb_bgp *b, const char *text)
{
	FILE *fp = tmpfile();
	int rc;

	fputs(text, fp);
	rewind(fp);
	bgp_defaults(b);
	rc = fb_bgp_load(b, fp, "state");
	fclose(fp);
	return rc;
}

#define NBR "\"neighbor\": {\"address\": {\"peer\": \"198.51.100.1\"}"
#define DISCARD "{\"value\": 9225060886715039744, \"string\": \"rate-limit:0\"}"
/* A FlowSpec announcement through next hop 198.51.100.1, as ExaBGP prints
 * it: the next hop a member of the NLRI and the end of its string. */
#define FS_NH(fam, comps, str, extra)                                                              \
	"{\"type\": \"update\", " NBR ", \"message\": {\"update\": {\"attribute\": "               \
	"{\"extended-community\": [" DISCARD "]}, \"announce\": {\"" fam "\": "                    \
	"{\"198.51.100.1\": [{" comps ", \"next-hop\": \"198.51.100.1\"" extra                     \
	", \"string\": \"" str " next-hop 198.51.100.1\"}]}}}}}}"
/* Its withdrawal (MP_UNREACH_NLRI: no next hop). */
#define FS_WD(fam, comps, str, extra)                                                              \
	"{\"type\": \"update\", " NBR ", \"message\": {\"update\": {\"withdraw\": {\"" fam         \
	"\": [{" comps extra ", \"string\": \"" str "\"}]}}}}}"

#define UDP5 "\"destination-ipv4\": [\"203.0.113.5/32\"], \"protocol\": [\"=udp\"]"
#define UDP5_S "flow destination-ipv4 203.0.113.5/32 protocol =udp"
#define RANGE5                                                                                     \
	"\"destination-ipv4\": [\"203.0.113.5/32\"], \"protocol\": [\"=udp\"], "                   \
	"\"destination-port\": [\">=5000&<=5002\"]"
#define RANGE5_S "flow destination-ipv4 203.0.113.5/32 protocol =udp destination-port >=5000&<=5002"

/* A FlowSpec route announced with a next hop is withdrawn by its NLRI
 * alone: one key, several keys. */
static void next_hop(void)
{
	struct fb_bgp b;

	bgp_defaults(&b);
	bgp_feed(&b, FS_NH("ipv4 flow", UDP5, UDP5_S, ""));
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, "udp dst 203.0.113.5"),
		    "bgp next hop: a FlowSpec route through a next hop: udp dst 203.0.113.5");
	fb_bgp_done(&b);
	bgp_feed(&b, FS_WD("ipv4 flow", UDP5, UDP5_S, ""));
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, 1, "udp dst 203.0.113.5") && !b.npaths,
		    "bgp next hop: its withdrawal (no next hop in its string) deletes it");
	fb_bgp_done(&b);
	bgp_feed(&b, FS_NH("ipv4 flow", RANGE5, RANGE5_S, ""));
	ASSERT_TRUE(b.nadd == 3 && b.npaths == 3, "bgp next hop: dport 5000-5002: 3 keys, 3 paths");
	fb_bgp_done(&b);
	bgp_feed(&b, FS_WD("ipv4 flow", RANGE5, RANGE5_S, ""));
	ASSERT_TRUE(b.ndel == 3 && !b.npaths, "bgp next hop: ... withdrawn: all 3 deleted");
	fb_bgp_done(&b);
	/* Announced again through another next hop: the same route. */
	bgp_feed(&b, FS_NH("ipv4 flow", UDP5, UDP5_S, ""));
	fb_bgp_done(&b);
	bgp_feed(&b, "{\"type\": \"update\", " NBR ", \"message\": {\"update\": {\"attribute\": "
		     "{\"extended-community\": [" DISCARD "]}, \"announce\": {\"ipv4 flow\": "
		     "{\"198.51.100.7\": [{" UDP5 ", \"next-hop\": \"198.51.100.7\", "
		     "\"string\": \"" UDP5_S " next-hop 198.51.100.7\"}]}}}}}}");
	ASSERT_TRUE(!b.nadd && !b.ndel && b.npaths == 1,
		    "bgp next hop: announced again through another next hop: one path");
	fb_bgp_free(&b);
}

/* Ids an earlier version wrote with the next hop (no "state 2" header)
 * are withdrawn by the NLRI alone once loaded, and written back without
 * it. */
static void old_state(void)
{
	static const char old[] =
		"# filter rtbh array-id 7\n"
		"# flowbloom bgp state: peer, family, NLRI, rule (one path a line)\n"
		"198.51.100.1\tipv4 flow\t" UDP5_S " next-hop 198.51.100.1\tudp dst 203.0.113.5\n"
		"198.51.100.1\tipv4 flow\t" RANGE5_S " next-hop 198.51.100.1 part 1/3\t"
		"udp dst 203.0.113.5 dport 5000\n"
		"198.51.100.1\tipv4 flow\t" RANGE5_S " next-hop 198.51.100.1 part 2/3\t"
		"udp dst 203.0.113.5 dport 5001\n"
		"198.51.100.1\tipv4 flow\t" RANGE5_S " next-hop 198.51.100.1 part 3/3\t"
		"udp dst 203.0.113.5 dport 5002\n"
		"198.51.100.1\tipv4 flow\tflow destination-ipv4 203.0.113.6/32 next-hop "
		"2001:db8::1\tdst 203.0.113.6\n";
	struct fb_bgp b, c;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	ASSERT_EQ(load(&b, old), 0, "bgp old state: a file with next hops in its ids loads");
	ASSERT_TRUE(b.npaths == 5 && !b.ndel, "bgp old state: ... its 5 paths");
	bgp_feed(&b, FS_WD("ipv4 flow", UDP5, UDP5_S, ""));
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, 1, "udp dst 203.0.113.5"),
		    "bgp old state: a route saved with its next hop is withdrawn");
	fb_bgp_done(&b);
	bgp_feed(&b, FS_WD("ipv4 flow", RANGE5, RANGE5_S, ""));
	ASSERT_TRUE(b.ndel == 3, "bgp old state: ... one of 3 parts, all of them");
	fb_bgp_done(&b);
	/* Written back: no next hop in the ids; read back as they are. */
	fp = open_memstream(&text, &len);
	fb_bgp_save(&b, fp);
	fclose(fp);
	ASSERT_TRUE(!strstr(text, "next-hop") && b.npaths == 1,
		    "bgp old state: written back without next hops");
	ASSERT_EQ(load(&c, text), 0, "bgp old state: ... and loads");
	bgp_feed(&c, FS_WD("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.6/32\"]",
			   "flow destination-ipv4 203.0.113.6/32", ""));
	ASSERT_TRUE(c.ndel == 1 && keys_hold(c.del, 1, "dst 203.0.113.6") && !c.npaths,
		    "bgp old state: ... its route (an IPv6 next hop) withdrawn");
	free(text);
	fb_bgp_free(&b);
	fb_bgp_free(&c);
}

#define BH(fam, nlri, extra)                                                                       \
	"{\"type\": \"update\", " NBR ", \"message\": {\"update\": {\"attribute\": "               \
	"{\"community\": [[65535, 666]]}, \"announce\": {\"" fam "\": {\"198.51.100.1\": "         \
	"[{\"nlri\": \"" nlri "\"" extra "}]}}}}}}"
#define BH_WD(fam, nlri, extra)                                                                    \
	"{\"type\": \"update\", " NBR ", \"message\": {\"update\": {\"withdraw\": {\"" fam         \
	"\": [{\"nlri\": \"" nlri "\"" extra "}]}}}}}"

/* A unicast route is its prefix, whatever host bits it is written with
 * (RFC 4271: they do not count), in a message or an earlier version's
 * state file. */
static void host_bits(void)
{
	static const char old[] =
		"# flowbloom bgp state: peer, family, NLRI, rule (one path a line)\n"
		"198.51.100.1\tipv4 unicast\t203.0.113.129/25\tdst 203.0.113.128/25\n"
		"198.51.100.1\tipv4 unicast\t203.0.113.65/26 path-id 1\tdst 203.0.113.64/26\n"
		"198.51.100.1\tipv6 unicast\t::ffff:cb00:7181/121\tdst ::ffff:cb00:7180/121\n";
	struct fb_bgp b;

	bgp_defaults(&b);
	bgp_feed(&b, BH("ipv4 unicast", "203.0.113.129/25", ""));
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, "dst 203.0.113.128/25"),
		    "bgp host bits: 203.0.113.129/25 announced: dst 203.0.113.128/25");
	fb_bgp_done(&b);
	bgp_feed(&b, BH_WD("ipv4 unicast", "203.0.113.128/25", ""));
	ASSERT_TRUE(b.ndel == 1 && !b.npaths, "bgp host bits: ... withdrawn as 203.0.113.128/25");
	fb_bgp_done(&b);
	bgp_feed(&b, BH("ipv4 unicast", "203.0.113.0/25", ", \"path-information\": \"1\""));
	fb_bgp_done(&b);
	bgp_feed(&b, BH("ipv4 unicast", "203.0.113.1/25", ", \"path-information\": \"1\""));
	ASSERT_TRUE(!b.nadd && !b.ndel && b.npaths == 1,
		    "bgp host bits: announced again as 203.0.113.1/25 (add-path): the same path");
	bgp_feed(&b, BH_WD("ipv4 unicast", "203.0.113.127/25", ", \"path-information\": \"1\""));
	ASSERT_TRUE(b.ndel == 1 && !b.npaths, "bgp host bits: ... withdrawn as 203.0.113.127/25");
	fb_bgp_done(&b);
	bgp_feed(&b, BH("ipv6 unicast", "2001:db8:0:1::1/64", ""));
	fb_bgp_done(&b);
	bgp_feed(&b, BH("ipv6 unicast", "::ffff:203.0.113.129/121", ""));
	ASSERT_TRUE(b.nadd == 1 && b.npaths == 2, "bgp host bits: two IPv6 routes with host bits");
	fb_bgp_done(&b);
	bgp_feed(&b, BH_WD("ipv6 unicast", "2001:db8:0:1::/64", ""));
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, 1, "dst 2001:db8:0:1::/64"),
		    "bgp host bits: 2001:db8:0:1::1/64 withdrawn as 2001:db8:0:1::/64");
	fb_bgp_done(&b);
	bgp_feed(&b, BH_WD("ipv6 unicast", "::ffff:203.0.113.128/121", ""));
	ASSERT_TRUE(
		b.ndel == 1 && !b.npaths,
		"bgp host bits: ::ffff:203.0.113.129/121 withdrawn as ::ffff:203.0.113.128/121");
	fb_bgp_free(&b);
	ASSERT_EQ(load(&b, old), 0, "bgp host bits: an old state file with host bits in its ids");
	bgp_feed(&b, BH_WD("ipv4 unicast", "203.0.113.128/25", ""));
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, 1, "dst 203.0.113.128/25"),
		    "bgp host bits: ... its 203.0.113.129/25 withdrawn as 203.0.113.128/25");
	fb_bgp_done(&b);
	bgp_feed(&b, BH_WD("ipv4 unicast", "203.0.113.64/26", ", \"path-information\": \"1\""));
	ASSERT_TRUE(
		b.ndel == 1 && keys_hold(b.del, 1, "dst 203.0.113.64/26"),
		"bgp host bits: ... its 203.0.113.65/26 path-id 1 withdrawn as 203.0.113.64/26");
	fb_bgp_done(&b);
	bgp_feed(&b, BH_WD("ipv6 unicast", "::ffff:203.0.113.128/121", ""));
	ASSERT_TRUE(b.ndel == 1 && !b.npaths, "bgp host bits: ... its ::ffff:cb00:7181/121 "
					      "withdrawn as ::ffff:203.0.113.128/121");
	fb_bgp_free(&b);
}

#define FS(fam, comps)                                                                             \
	"{\"type\": \"update\", " NBR ", \"message\": {\"update\": {\"attribute\": "               \
	"{\"extended-community\": [" DISCARD "]}, \"announce\": {\"" fam "\": "                    \
	"{\"no-nexthop\": [{" comps ", \"string\": \"flow\"}]}}}}}}"

/* An IPv6 FlowSpec route's v4-mapped prefixes, which ExaBGP prints
 * dotted, are IPv6 prefixes of their length: ::ffff:0.0.0.0/96 is no /0. */
static void v4mapped(void)
{
	struct fb_bgp b;

	bgp_defaults(&b);
	bgp_feed(&b, FS("ipv6 flow", "\"destination-ipv6\": [\"::ffff:203.0.113.7/128/0\"], "
				     "\"source-ipv6\": [\"::ffff:0.0.0.0/96/0\"]"));
	ASSERT_TRUE(b.nadd == 1 &&
			    keys_hold(b.add, 1, "any src ::ffff:0:0/96 dst ::ffff:cb00:7107"),
		    "bgp v4-mapped: src ::ffff:0.0.0.0/96 dst ::ffff:203.0.113.7: both kept "
		    "(was dst ::ffff:cb00:7107 alone)");
	fb_bgp_done(&b);
	bgp_feed(&b, FS("ipv6 flow", "\"destination-ipv6\": [\"::ffff:0.0.0.0/96/0\"], "
				     "\"next-header\": [\"=tcp\"]"));
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, "tcp dst ::ffff:0:0/96"),
		    "bgp v4-mapped: tcp to ::ffff:0.0.0.0/96: tcp dst ::ffff:0:0/96 (was refused "
		    "as /0)");
	fb_bgp_done(&b);
	bgp_feed(&b, FS("ipv6 flow", "\"destination-ipv6\": [\"::ffff:203.0.113.0/120/0\"], "
				     "\"source-ipv6\": [\"2001:db8::/48/0\"]"));
	ASSERT_TRUE(b.nadd == 1 &&
			    keys_hold(b.add, 1, "any src 2001:db8::/48 dst ::ffff:cb00:7100/120"),
		    "bgp v4-mapped: from 2001:db8::/48 to ::ffff:203.0.113.0/120: one IPv6 rule "
		    "(was refused: not the same family)");
	fb_bgp_done(&b);
	fb_bgp_free(&b);
}

/* How many of keys[0..n) are of protocol proto (6, 17; FLOW text's). */
static size_t of_proto(const struct fb_key *keys, size_t n, int proto)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++)
		m += keys[i].proto == proto;
	return m;
}

/* A FlowSpec port component matches packets with TCP or UDP ports only
 * (RFC 8955): one covering every port is not "no port" (which would match
 * ICMP, GRE, later fragments), and without a protocol component the rule
 * is TCP's and UDP's, not SCTP's or UDP-Lite's. */
static void ports(void)
{
	static const char *const every[] = { ">=0", ">=0&<=65535", "<=65535", "<=65535&>=0" };
	char buf[1024];
	struct fb_bgp b;
	size_t i;

	for (i = 0; i < sizeof(every) / sizeof(every[0]); i++) {
		bgp_defaults(&b);
		snprintf(buf, sizeof(buf),
			 FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.9/32\"], "
					 "\"destination-port\": [\"%s\"]"),
			 every[i]);
		bgp_feed(&b, buf);
		ASSERT_TRUE(b.nadd == 4 &&
				    keys_hold(b.add, 4, "tcp dst 203.0.113.9 dport 0-32767") &&
				    keys_hold(b.add, 4, "tcp dst 203.0.113.9 dport 32768-65535") &&
				    keys_hold(b.add, 4, "udp dst 203.0.113.9 dport 0-32767") &&
				    keys_hold(b.add, 4, "udp dst 203.0.113.9 dport 32768-65535"),
			    "bgp ports: destination-port covering every port, no protocol: TCP and "
			    "UDP, ports 0-32767 and 32768-65535 (was dst 203.0.113.9)");
		fb_bgp_free(&b);
	}
	bgp_defaults(&b);
	bgp_feed(&b,
		 FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.9/32\"], "
				 "\"protocol\": [\"=udp\"], \"source-port\": [\"=53\", \">=0\"]"));
	ASSERT_TRUE(b.nadd == 2 && keys_hold(b.add, 2, "udp dst 203.0.113.9 sport 0-32767") &&
			    keys_hold(b.add, 2, "udp dst 203.0.113.9 sport 32768-65535"),
		    "bgp ports: UDP, source port =53 or >=0: every UDP source port (was udp dst "
		    "203.0.113.9)");
	fb_bgp_done(&b);
	bgp_feed(&b, FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.9/32\"], "
				     "\"protocol\": [\"=icmp\"], \"destination-port\": [\">=0\"]"));
	ASSERT_TRUE(!b.nadd && strstr(bgp_note, "protocol 1 has no ports"),
		    "bgp ports: ICMP with every destination port: refused, as with =80 (was icmp "
		    "dst 203.0.113.9)");
	bgp_feed(&b, FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.9/32\"], "
				     "\"destination-port\": [\"=80\"]"));
	ASSERT_TRUE(b.nadd == 2 && keys_hold(b.add, 2, "tcp dst 203.0.113.9 dport 80") &&
			    keys_hold(b.add, 2, "udp dst 203.0.113.9 dport 80"),
		    "bgp ports: destination port 80, no protocol: TCP and UDP port 80 (was any "
		    "protocol)");
	fb_bgp_done(&b);
	bgp_feed(&b, FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.10/32\"], "
				     "\"destination-port\": [\">=1024\"]"));
	ASSERT_TRUE(b.nadd == 28 && of_proto(b.add, 28, 6) == 14 && of_proto(b.add, 28, 17) == 14 &&
			    keys_hold(b.add, 28, "tcp dst 203.0.113.10 dport 1024-2047") &&
			    keys_hold(b.add, 28, "udp dst 203.0.113.10 dport 57344-65535"),
		    "bgp ports: destination port >=1024, no protocol: 14 port prefixes each for "
		    "TCP and UDP, within the 64-key cap");
	fb_bgp_done(&b);
	bgp_feed(&b,
		 FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.11/32\"], "
				 "\"protocol\": [\"=tcp\"], \"destination-port\": [\">=1024\"]"));
	ASSERT_TRUE(b.nadd == 63 && of_proto(b.add, 63, 6) == 63,
		    "bgp ports: ... with protocol TCP: 63 prefixes of one length, as before");
	fb_bgp_free(&b);
}

/* Every protocol ExaBGP 4.2's FlowSpec decoder can print: the names of its
 * protocol table, "unknown protocol type N" for the other numbers. */
static void protocols(void)
{
	static const struct {
		const char *name;
		int proto;
	} t[] = {
		{ "icmp", 1 },
		{ "igmp", 2 },
		{ "tcp", 6 },
		{ "egp", 8 },
		{ "udp", 17 },
		{ "rsvp", 46 },
		{ "gre", 47 },
		{ "esp", 50 },
		{ "ah", 51 },
		{ "ospf", 89 },
		{ "ipip", 94 },
		{ "pim", 103 },
		{ "sctp", 132 },
		{ "unknown protocol type 0", 0 },
		{ "unknown protocol type 253", 253 },
	};
	char buf[1024], want[64];
	struct fb_bgp b;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		bgp_defaults(&b);
		snprintf(buf, sizeof(buf),
			 FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.9/32\"], "
					 "\"protocol\": [\"=%s\"]"),
			 t[i].name);
		snprintf(want, sizeof(want), "proto %d dst 203.0.113.9", t[i].proto);
		bgp_feed(&b, buf);
		snprintf(buf, sizeof(buf), "bgp protocols: ExaBGP's '=%s' is %s", t[i].name, want);
		ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, want), buf);
		fb_bgp_free(&b);
	}
	bgp_defaults(&b);
	bgp_feed(&b, FS("ipv6 flow", "\"destination-ipv6\": [\"2001:db8::9/128/0\"], "
				     "\"next-header\": [\"=unknown protocol type 58\"]"));
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, "icmpv6 dst 2001:db8::9"),
		    "bgp protocols: next-header '=unknown protocol type 58' is ICMPv6");
	fb_bgp_done(&b);
	bgp_feed(&b, FS("ipv4 flow", "\"destination-ipv4\": [\"203.0.113.9/32\"], "
				     "\"protocol\": [\"=unknown protocol type 256\"]"));
	ASSERT_TRUE(!b.nadd && strstr(bgp_note, "not known"),
		    "bgp protocols: 'unknown protocol type 256' is refused");
	fb_bgp_free(&b);
}

void test_bgp_exabgp(void)
{
	next_hop();
	old_state();
	host_bits();
	v4mapped();
	ports();
	protocols();
}
