// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_fleet, ExaBGP JSON to rules (user/lib/fleet/bgp.c): RTBH and FlowSpec
 * translation, reference counts per path across peers and add-path ids,
 * implicit withdrawals, session policies and End-of-RIB, what is refused,
 * the state file, and malformed input.
 */
#include "fleet.h"

/* --------------------------------------------------------------- BGP */

static char last_note[1024];
static int notes;

static void on_note(void *ctx, const char *msg)
{
	(void)ctx;
	notes++;
	snprintf(last_note, sizeof(last_note), "%s", msg);
	if (getenv("TEST_VERBOSE"))
		printf("  note: %s\n", msg);
}

static void bgp_init(struct fb_bgp *b, bool flush, bool src)
{
	struct fb_bgp_opts o = { .community = FB_BGP_BLACKHOLE,
				 .flush_on_down = flush,
				 .rtbh_src = src,
				 .min_v4 = 24,
				 .min_v6 = 48 };

	fb_bgp_init(b, &o);
	b->note = on_note;
}

/* Feed one line and apply its outcome as the filter would (all accepted). */
static int feed(struct fb_bgp *b, const char *line)
{
	static size_t n;
	int r = fb_bgp_line(b, line, strlen(line), ++n);

	return r;
}

static unsigned refs(const struct fb_bgp *b, const char *flow)
{
	struct fb_key k;

	key_of(flow, &k);
	return fb_bgp_refs(b, &k);
}

#define NB(peer) "\"neighbor\": {\"address\": {\"local\": \"198.51.100.2\", \"peer\": \"" peer "\"}"
#define RTBH_ANN(peer, pfx, extra)                                                                 \
	"{\"type\": \"update\", " NB(                                                              \
		peer) ", \"message\": {\"update\": {\"attribute\": "                               \
		      "{\"community\": [[65535, 666]]}, \"announce\": "                            \
		      "{\"ipv4 unicast\": {\"198.51.100.1\": [{\"nlri\": \"" pfx "\"" extra        \
		      "}]}}}}}}"
#define RTBH_WD(peer, pfx, extra)                                                                  \
	"{\"type\": \"update\", " NB(peer) ", \"message\": {\"update\": {\"withdraw\": "           \
					   "{\"ipv4 unicast\": [{\"nlri\": \"" pfx "\"" extra      \
					   "}]}}}}}"
#define STATE(peer, st) "{\"type\": \"state\", " NB(peer) ", \"state\": \"" st "\"}}"
#define EOR(peer)                                                                                  \
	"{\"type\": \"update\", " NB(                                                              \
		peer) ", \"message\": {\"eor\": {\"afi\": \"ipv4\", \"safi\": \"unicast\"}}}}"
/* A FlowSpec announcement: components (JSON members) and the extended
 * community value (9225060886715039744 = 0x8006000000000000: rate 0). */
#define FLOW_ANN(comps, ext)                                                                       \
	"{\"type\": \"update\", " NB(                                                              \
		"198.51.100.1") ", \"message\": {\"update\": {\"attribute\": "                     \
				"{\"extended-community\": [" ext "]}, "                            \
				"\"announce\": {\"ipv4 flow\": {\"no-nexthop\": [{" comps          \
				", \"string\": \"flow\"}]}}}}}}"
#define DISCARD "{\"value\": 9225060886715039744, \"string\": \"rate-limit:0\"}"

void test_bgp_rtbh(void)
{
	struct fb_bgp b;

	bgp_init(&b, true, false);
	ASSERT_EQ(feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.7/32", "")), 0,
		  "bgp: announce read");
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, b.nadd, "dst 203.0.113.7"),
		    "bgp: blackhole route -> add dst 203.0.113.7");
	fb_bgp_done(&b);
	feed(&b, RTBH_ANN("198.51.100.3", "203.0.113.7/32", ""));
	ASSERT_EQ(b.nadd + b.ndel, 0, "bgp: a second peer's path adds nothing to the filter");
	ASSERT_TRUE(b.changed, "bgp: ... but changes the paths (state saved)");
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 2, "bgp: two paths hold the rule");
	feed(&b, RTBH_ANN("198.51.100.3", "203.0.113.7/32", ""));
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 2, "bgp: the same path announced again counts once");
	feed(&b, RTBH_ANN("198.51.100.3", "203.0.113.7/32", ", \"path-information\": \"0.0.0.2\""));
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 3, "bgp: another add-path id is another path");
	feed(&b, RTBH_WD("198.51.100.1", "203.0.113.7/32", ""));
	ASSERT_EQ(b.ndel, 0, "bgp: withdrawal of one path of three: rule stays");
	feed(&b, RTBH_WD("198.51.100.1", "203.0.113.7/32", ""));
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 2, "bgp: withdrawing an ended path changes nothing");
	/* A route announced again without the community replaces the path. */
	feed(&b, "{\"type\": \"update\", " NB(
			 "198.51.100.3") ", \"message\": {\"update\": "
					 "{\"attribute\": {\"community\": [[65000, 1]]}, "
					 "\"announce\": {\"ipv4 unicast\": {\"x\": "
					 "[{\"nlri\": \"203.0.113.7/32\"}]}}}}}}");
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 1, "bgp: re-announced without the community: ended");
	feed(&b, STATE("198.51.100.3", "down"));
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, b.ndel, "dst 203.0.113.7"),
		    "bgp: flush: the last path's session down deletes the rule");
	fb_bgp_done(&b);
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 0, "bgp: rule forgotten");
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.0.0/16", ""));
	ASSERT_TRUE(b.nadd == 0 && strstr(last_note, "shorter than /24"),
		    "bgp: a /16 blackhole is refused (--min-length 24)");
	feed(&b, "{\"type\": \"update\", \"neighbor\": {\"address\": {\"peer\": \"198.51.100.1\"}, "
		 "\"direction\": \"send\", \"message\": {\"update\": {\"attribute\": "
		 "{\"community\": [[65535, 666]]}, \"announce\": {\"ipv4 unicast\": {\"x\": "
		 "[{\"nlri\": \"203.0.113.99/32\"}]}}}}}}");
	ASSERT_TRUE(b.nadd == 0, "bgp: an update ExaBGP sends (direction send) is not applied");
	feed(&b, RTBH_ANN("198.51.100.1", "0.0.0.0/0", ""));
	ASSERT_TRUE(b.nadd == 0, "bgp: a default-route blackhole is refused");
	feed(&b, "{\"type\": \"update\", " NB(
			 "198.51.100.1") ", \"message\": {\"update\": "
					 "{\"attribute\": {\"community\": [[65535, 666]]}, "
					 "\"announce\": {\"ipv6 "
					 "unicast\": {\"2001:db8::9\": [{\"nlri\": "
					 "\"2001:db8::/32\"}, {\"nlri\": "
					 "\"2001:db8:7::1/128\"}]}}}}}}");
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, "dst 2001:db8:7::1"),
		    "bgp: IPv6 blackholes: /128 accepted, /32 refused (--min-length 48)");
	fb_bgp_done(&b);
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.0/24", ""));
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, "dst 203.0.113.0/24"),
		    "bgp: a /24 is accepted");
	fb_bgp_done(&b);
	/* Withdrawal and announcement of the same rule in one line. */
	feed(&b, "{\"type\": \"update\", " NB(
			 "198.51.100.1") ", \"message\": {\"update\": "
					 "{\"attribute\": {\"community\": [[65535, 666]]}, "
					 "\"withdraw\": {\"ipv4 unicast\": [{\"nlri\": "
					 "\"203.0.113.0/24\"}]}, \"announce\": {\"ipv4 "
					 "unicast\": {\"x\": [{\"nlri\": "
					 "\"203.0.113.0/24\"}]}}}}}}");
	ASSERT_EQ(b.nadd + b.ndel, 0, "bgp: withdrawn and announced in one update: no change");
	ASSERT_EQ(refs(&b, "dst 203.0.113.0/24"), 1, "bgp: ... one path");
	fb_bgp_free(&b);

	/* keep: session loss keeps; up marks stale; End-of-RIB ends the rest. */
	bgp_init(&b, false, true);
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.7/32", ""));
	ASSERT_TRUE(keys_hold(b.add, b.nadd, "src 203.0.113.7"), "bgp: --rtbh src: a source rule");
	fb_bgp_done(&b);
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.8/32", ""));
	fb_bgp_done(&b);
	feed(&b, STATE("198.51.100.1", "down"));
	ASSERT_EQ(b.ndel, 0, "bgp: keep: session down deletes nothing");
	feed(&b, STATE("198.51.100.1", "up"));
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.8/32", ""));
	ASSERT_EQ(b.nadd + b.ndel, 0, "bgp: keep: a re-announced route is not added again");
	feed(&b, EOR("198.51.100.1"));
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, 1, "src 203.0.113.7"),
		    "bgp: keep: End-of-RIB ends the route not announced again");
	fb_bgp_done(&b);
	ASSERT_EQ(refs(&b, "src 203.0.113.8"), 1, "bgp: keep: the re-announced one stays");
	fb_bgp_free(&b);
}

void test_bgp_flowspec(void)
{
	static const struct {
		const char *comps, *ext, *want; /* want NULL: refused */
		const char *label;
	} cases[] = {
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
		  "[\"198.51.100.2/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "
		  "[\"=5000\"], \"source-port\": [\"=4000\"]",
		  DISCARD, "udp 198.51.100.2:4000 203.0.113.9:5000", "5-tuple, discard" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
		  "[\"198.51.100.2/32\"], \"protocol\": [\"=1\"]",
		  DISCARD, "icmp 198.51.100.2 203.0.113.9", "host pair and ICMP (no ports)" },
		{ "\"destination-ipv4\": [\"203.0.113.0/24\"]", DISCARD, "dst 203.0.113.0/24",
		  "a lone destination prefix" },
		{ "\"source-ipv4\": [\"198.51.100.0/25\"]", DISCARD, "src 198.51.100.0/25",
		  "a lone source prefix" },
		{ "\"destination-ipv4\": [\"203.0.113.0/24\"], \"protocol\": [\"=tcp\"]", DISCARD,
		  "tcp dst 203.0.113.0/24", "prefix and protocol: a rule of that shape" },
		{ "\"destination-ipv4\": [\"203.0.113.30/32\"], \"protocol\": [\"=udp\"], "
		  "\"destination-port\": [\"=5000\"]",
		  DISCARD, "udp dst 203.0.113.30 dport 5000", "host, UDP, destination port" },
		{ "\"destination-ipv4\": [\"198.51.100.0/24\"], \"protocol\": [\"=udp\"], "
		  "\"source-port\": [\"=123\"]",
		  DISCARD, "udp sport 123 dst 198.51.100.0/24",
		  "NTP amplification: sport 123 to a /24" },
		{ "\"destination-ipv4\": [\"203.0.113.0/24\"], \"protocol\": [\"=tcp\"], "
		  "\"destination-port\": [\">=1024&<=2047\"]",
		  DISCARD, "tcp dst 203.0.113.0/24 dport 1024-2047", "a range of one port prefix" },
		{ "\"destination-ipv4\": [\"203.0.113.0/24\"], \"protocol\": [\"=tcp\"], "
		  "\"destination-port\": [\">1023&<2048\"]",
		  DISCARD, "tcp dst 203.0.113.0/24 dport 1024-2047", "the same range, strict" },

		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"protocol\": [\"=udp\"], "
		  "\"destination-port\": [\">=10&<=5\"]",
		  DISCARD, NULL, "an empty range: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"protocol\": [\"=udp\"], "
		  "\"destination-port\": [\"!=53\"]",
		  DISCARD, NULL, "a negation: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"port\": [\"=53\"]", DISCARD, NULL,
		  "port (either direction): refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"protocol\": [\"=tcp\"], "
		  "\"tcp-flags\": [\"=syn\"]",
		  DISCARD, NULL, "tcp-flags: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"protocol\": [\"=icmp\"], "
		  "\"icmp-type\": [\"=8\"]",
		  DISCARD, NULL, "icmp-type: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"dscp\": [\"=46\"]", DISCARD, NULL,
		  "dscp: refused" },
		{ "\"protocol\": [\"=udp\"], \"destination-port\": [\"=53\"]", DISCARD, NULL,
		  "no prefix (every address): refused (--min-length)" },
		{ "\"destination-ipv4\": [\"203.0.0.0/16\"], \"protocol\": [\"=udp\"]", DISCARD,
		  NULL, "a /16 with a protocol: refused (--min-length)" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
		  "[\"198.51.100.2/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "
		  "[\"=5000\"]",
		  DISCARD, "udp src 198.51.100.2 dst 203.0.113.9 dport 5000",
		  "UDP host pair with one port: a rule of that shape" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"packet-length\": [\"=1500\"]",
		  DISCARD, NULL, "packet-length: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"fragment\": [\"is-fragment\"]",
		  DISCARD, NULL, "fragment: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"]",
		  "{\"value\": 9225060887789846528, \"string\": \"rate-limit:1000\"}", NULL,
		  "rate-limit 1000: refused" },
		/* 0x800600003f000000: rate 0.5, which ExaBGP prints as rate-limit:0. */
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"]",
		  "{\"value\": 9225060887773003776, \"string\": \"rate-limit:0\"}", NULL,
		  "rate 0.5 (printed rate-limit:0): refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"]",
		  "{\"value\": 9225623836668461056, \"string\": \"redirect:65000:1\"}", NULL,
		  "redirect: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"]", "", NULL, "no action: refused" },
		{ "\"destination-ipv4\": [\"203.0.0.0/16\"]", DISCARD, NULL,
		  "a /16: refused (--min-length)" },
	};
	char line[2048];
	struct fb_bgp b;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char label[256];

		bgp_init(&b, true, false);
		snprintf(line, sizeof(line),
			 "{\"type\": \"update\", " NB(
				 "198.51.100.1") ", \"message\": {\"update\": "
						 "{\"attribute\": "
						 "{\"extended-community\": [%s]}, "
						 "\"announce\": {\"ipv4 flow\": "
						 "{\"no-nexthop\": [{%s, \"string\": "
						 "\"flow %zu\"}]}}}}}}",
			 cases[i].ext, cases[i].comps, i);
		notes = 0;
		snprintf(label, sizeof(label), "bgp flowspec: %s", cases[i].label);
		if (cases[i].want)
			ASSERT_TRUE(!feed(&b, line) && b.nadd == 1 &&
					    keys_hold(b.add, 1, cases[i].want) && !notes,
				    label);
		else
			ASSERT_TRUE(!feed(&b, line) && b.nadd == 0 && notes == 1, label);
		fb_bgp_free(&b);
	}
	/* IPv6: prefixes carry an offset ("/0"), the protocol is next-header. */
	bgp_init(&b, true, false);
	feed(&b, "{\"type\": \"update\", " NB(
			 "198.51.100.1") ", \"message\": {\"update\": "
					 "{\"attribute\": {\"extended-community\": "
					 "[" DISCARD "]}, \"announce\": {\"ipv6 flow\": "
					 "{\"no-nexthop\": [{\"destination-ipv6\": "
					 "[\"2001:db8::2/128/0\"], \"source-ipv6\": "
					 "[\"2001:db8::1/128/0\"], \"next-header\": "
					 "[\"=tcp\"], \"destination-port\": [\"=443\"], "
					 "\"source-port\": [\"=51000\"], \"string\": "
					 "\"f6\"}]}}}}}}");
	ASSERT_TRUE(b.nadd == 1 && keys_hold(b.add, 1, "tcp [2001:db8::1]:51000 [2001:db8::2]:443"),
		    "bgp flowspec: IPv6 5-tuple");
	fb_bgp_done(&b);
	/* The same flow announced with another action ends its path. */
	feed(&b, "{\"type\": \"update\", " NB(
			 "198.51.100.1") ", \"message\": {\"update\": "
					 "{\"attribute\": {}, \"announce\": {\"ipv6 flow\": "
					 "{\"no-nexthop\": [{\"destination-ipv6\": "
					 "[\"2001:db8::2/128/0\"], \"string\": "
					 "\"f6\"}]}}}}}}");
	ASSERT_TRUE(b.ndel == 1, "bgp flowspec: re-announced without discard: rule deleted");
	fb_bgp_done(&b);
	fb_bgp_free(&b);
	/* A line mixing a supported and an unsupported NLRI applies the first. */
	bgp_init(&b, true, false);
	feed(&b, FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"]", DISCARD));
	ASSERT_EQ(b.nadd, 1, "bgp flowspec: FLOW_ANN macro line");
	fb_bgp_free(&b);

	/* A port range of several prefixes: one path per key ("part I/N"),
	 * re-announced narrower (its other parts end), then withdrawn. */
	bgp_init(&b, true, false);
	notes = 0;
	feed(&b, FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"], \"protocol\": [\"=udp\"], "
			  "\"destination-port\": [\">=5000&<=5010\"]",
			  DISCARD));
	ASSERT_TRUE(b.nadd == 11 && keys_hold(b.add, 11, "udp dst 203.0.113.9 dport 5000") &&
			    keys_hold(b.add, 11, "udp dst 203.0.113.9 dport 5010") &&
			    refs(&b, "udp dst 203.0.113.9 dport 5004") == 1 && !notes,
		    "bgp flowspec: dport 5000-5010 is 11 rules, one path each");
	fb_bgp_done(&b);
	feed(&b, FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"], \"protocol\": [\"=udp\"], "
			  "\"destination-port\": [\">=5000&<=5005\"]",
			  DISCARD));
	ASSERT_TRUE(b.nadd == 3 && b.ndel == 11 &&
			    keys_hold(b.add, 3, "udp dst 203.0.113.9 dport 5004-5005") &&
			    refs(&b, "udp dst 203.0.113.9 dport 5010") == 0,
		    "bgp flowspec: re-announced as 5000-5005: 3 rules, the 11 others end");
	fb_bgp_done(&b);
	feed(&b, "{\"type\": \"update\", " NB("198.51.100.1") ", \"message\": {\"update\": "
							      "{\"withdraw\": {\"ipv4 flow\": "
							      "[{\"string\": \"flow\"}]}}}}}");
	ASSERT_TRUE(b.ndel == 3 && refs(&b, "udp dst 203.0.113.9 dport 5000-5001") == 0,
		    "bgp flowspec: the range withdrawn: its 3 rules end");
	fb_bgp_free(&b);
	/* ORed values: one FLOW per value, their keys together. */
	bgp_init(&b, true, false);
	notes = 0;
	feed(&b, FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"], \"protocol\": [\"=tcp\"], "
			  "\"destination-port\": [\"=80\", \"=443\", \">=8000&<=8003\"]",
			  DISCARD));
	ASSERT_TRUE(b.nadd == 3 && keys_hold(b.add, 3, "tcp dst 203.0.113.9 dport 80") &&
			    keys_hold(b.add, 3, "tcp dst 203.0.113.9 dport 443") &&
			    keys_hold(b.add, 3, "tcp dst 203.0.113.9 dport 8000-8003") && !notes,
		    "bgp flowspec: dport =80|=443|8000-8003 is 3 rules");
	fb_bgp_free(&b);
	bgp_init(&b, true, false);
	notes = 0;
	feed(&b, FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"], \"protocol\": [\"=tcp\"], "
			  "\"destination-port\": [\"=80\", \"!=443\"]",
			  DISCARD));
	ASSERT_TRUE(b.nadd == 0 && notes == 1, "bgp flowspec: one term a negation: refused whole");
	fb_bgp_free(&b);
	/* Past the cap (64 keys): refused, nothing applied. */
	bgp_init(&b, true, false);
	notes = 0;
	feed(&b, FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"], \"protocol\": [\"=udp\"], "
			  "\"destination-port\": [\">=1&<=65534\"], \"source-port\": "
			  "[\">=1&<=65534\"]",
			  DISCARD));
	ASSERT_TRUE(b.nadd == 0 && notes == 1, "bgp flowspec: ranges past the cap: refused");
	fb_bgp_free(&b);
}

/* FlowSpec routes announced by peer, each NLRI a JSON object's members. */
#define FLOWS_ANN(peer, nlris)                                                                     \
	"{\"type\": \"update\", " NB(peer) ", \"message\": {\"update\": {\"attribute\": "          \
					   "{\"extended-community\": [" DISCARD "]}, "             \
					   "\"announce\": {\"ipv4 flow\": {\"no-nexthop\": "       \
					   "[" nlris "]}}}}}}"
#define UDP9(ports, name)                                                                          \
	"{\"destination-ipv4\": [\"203.0.113.9/32\"], \"protocol\": [\"=udp\"], "                  \
	"\"destination-port\": [\"" ports "\"], \"string\": \"" name "\"}"

/* The additions still held (as cmd_bgp.c's add_rules takes a refused
 * route's other parts out of its batch). */
static size_t held_adds(struct fb_bgp *b)
{
	size_t i, j;

	for (i = j = 0; i < b->nadd; i++)
		if (fb_bgp_refs(b, &b->add[i]))
			b->add[j++] = b->add[i];
	return b->nadd = j;
}

/* The filter refuses one key of a route of several: the route is refused
 * whole (all its parts, noted once), a rule another peer holds stays,
 * another route of the line is applied; a refused re-announcement's old
 * rules leave the filter; announced again later, it is applied whole. */
void test_bgp_refused_route(void)
{
	struct fb_bgp b;
	struct fb_key k;
	size_t routes, gone, n;

	bgp_init(&b, true, false);
	feed(&b, FLOWS_ANN("198.51.100.9", UDP9("=5010", "r0")));
	ASSERT_TRUE(b.nadd == 1, "bgp refused route: another peer's rule dport 5010");
	fb_bgp_done(&b);
	feed(&b, FLOWS_ANN("198.51.100.1", UDP9(">=5000&<=5010",
						"r1") ", {\"destination-ipv4\": "
						      "[\"203.0.113.8/32\"], \"string\": \"r2\"}"));
	ASSERT_TRUE(b.nadd == 11 && refs(&b, "udp dst 203.0.113.9 dport 5010") == 2,
		    "bgp refused route: r1's 10 new keys and r2's to add");
	notes = 0;
	key_of("udp dst 203.0.113.9 dport 5003", &k);
	gone = fb_bgp_refused(&b, &k, "no room", &routes);
	ASSERT_TRUE(routes == 1 && gone == 9 && notes == 1 &&
			    strstr(last_note, ": 'r1' from 198.51.100.1: no room; not applied"),
		    "bgp refused route: r1 refused once, its 9 other new rules out of the batch");
	ASSERT_TRUE(held_adds(&b) == 1 && keys_hold(b.add, 1, "dst 203.0.113.8") && !b.ndel &&
			    !refs(&b, "udp dst 203.0.113.9 dport 5000") &&
			    !refs(&b, "udp dst 203.0.113.9 dport 5003") &&
			    refs(&b, "udp dst 203.0.113.9 dport 5010") == 1 && b.npaths == 2,
		    "bgp refused route: none of r1 held, r0's rule and r2 stay");
	fb_bgp_done(&b);
	/* Announced again (room now): whole. */
	feed(&b, FLOWS_ANN("198.51.100.1", UDP9(">=5000&<=5010", "r1")));
	ASSERT_TRUE(b.nadd == 10 && b.npaths == 13 &&
			    refs(&b, "udp dst 203.0.113.9 dport 5010") == 2,
		    "bgp refused route: announced again, all 11 parts");
	fb_bgp_done(&b);
	/* Widened, one new key refused: the route goes, its rules in the
	 * filter from before leave it (but r0's). */
	feed(&b, FLOWS_ANN("198.51.100.1", UDP9(">=5000&<=5012", "r1")));
	ASSERT_TRUE(b.nadd == 2 && !b.ndel, "bgp refused route: widened: 2 rules to add");
	key_of("udp dst 203.0.113.9 dport 5012", &k);
	gone = fb_bgp_refused(&b, &k, "no room", &routes);
	ASSERT_TRUE(routes == 1 && gone == 1 && held_adds(&b) == 0 && b.ndel == 10 &&
			    keys_hold(b.del, 10, "udp dst 203.0.113.9 dport 5000") &&
			    refs(&b, "udp dst 203.0.113.9 dport 5010") == 1 && b.npaths == 2,
		    "bgp refused route: widened and refused: its 10 old rules to delete");
	fb_bgp_done(&b);
	ASSERT_TRUE(b.nrules == 2, "bgp refused route: r0's and r2's rules left");
	/* In the filter, a refresh (bgp --ttl) refused: the route goes, all
	 * its rules (the refused one too) to delete, and out of the
	 * refresh's batch (gone); its other keys, refused next, are in del
	 * already. */
	feed(&b, FLOWS_ANN("198.51.100.2", UDP9(">=5001&<=5004", "r3")));
	n = b.nadd;
	fb_bgp_done(&b);
	notes = 0;
	key_of("udp dst 203.0.113.9 dport 5001", &k);
	gone = fb_bgp_refused(&b, &k, "refreshing refused", &routes);
	ASSERT_TRUE(n > 1 && routes == 1 && gone == n - 1 && b.ndel == n && notes == 1 &&
			    keys_hold(b.del, n, "udp dst 203.0.113.9 dport 5001") &&
			    !refs(&b, "udp dst 203.0.113.9 dport 5001") && b.npaths == 2,
		    "bgp refused route: a refresh refused: its route, all its rules to delete");
	key_of("udp dst 203.0.113.9 dport 5004", &k);
	ASSERT_TRUE(!fb_bgp_refused(&b, &k, "refreshing refused", &routes) && !routes &&
			    b.ndel == n && notes == 1,
		    "bgp refused route: ... another of its rules refused next: in del once");
	fb_bgp_done(&b);
	ASSERT_TRUE(b.nrules == 2, "bgp refused route: r0's and r2's rules left again");
	fb_bgp_free(&b);
}

/* The filter array was replaced (cmd_bgp's resync): a rule withdrawn in
 * the line being applied has nothing left to delete; of the rules added
 * again, one the new array refuses takes its route whole (noted once,
 * without a line), leaves no rule counted in the filter that is not, and
 * is applied again when announced again; its withdrawal deletes nothing. */
void test_bgp_lost(void)
{
	struct fb_bgp b;
	struct fb_key *keys, k;
	size_t n, i, j, routes, gone;

	bgp_init(&b, true, false);
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.7/32", ""));
	fb_bgp_done(&b);
	feed(&b, RTBH_ANN("198.51.100.3", "203.0.113.7/32", ""));
	fb_bgp_done(&b);
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.8/32", ""));
	fb_bgp_done(&b);
	feed(&b, FLOWS_ANN("198.51.100.1", UDP9(">=5001&<=5004", "r1")));
	ASSERT_TRUE(b.nadd == 4, "bgp lost: r1 is 4 rules");
	fb_bgp_done(&b);
	/* A line withdraws dst 203.0.113.8 (its deletion waits in del) and
	 * finds the filter replaced. */
	feed(&b, RTBH_WD("198.51.100.1", "203.0.113.8/32", ""));
	ASSERT_TRUE(b.ndel == 1, "bgp lost: the line deletes dst 203.0.113.8");
	n = fb_bgp_rules(&b, &keys);
	ASSERT_EQ(n, 6, "bgp lost: 6 rules in the old array");
	n = fb_bgp_lost(&b, keys, n);
	ASSERT_TRUE(n == 5 && !keys_hold(keys, n, "dst 203.0.113.8") && !b.ndel && b.nrules == 5,
		    "bgp lost: the withdrawn rule is forgotten, nothing left to delete");
	/* The new array refuses one key of r1: r1 goes whole. */
	b.lineno = 0;
	notes = 0;
	key_of("udp dst 203.0.113.9 dport 5002", &k);
	gone = fb_bgp_refused(&b, &k, "no room", &routes);
	ASSERT_TRUE(routes == 1 && gone == 3 && notes == 1 &&
			    !strcmp(last_note, "'r1' from 198.51.100.1: no room; not applied"),
		    "bgp lost: r1 refused, noted once without a line");
	for (i = j = 0; i < n; i++)
		if (fb_bgp_refs(&b, &keys[i]))
			keys[j++] = keys[i];
	ASSERT_TRUE(j == 1 && keys_hold(keys, 1, "dst 203.0.113.7") && b.npaths == 2 && !b.ndel,
		    "bgp lost: dst 203.0.113.7 alone to add again");
	fb_bgp_added(&b, keys, j);
	fb_bgp_done(&b);
	free(keys);
	n = fb_bgp_rules(&b, &keys);
	ASSERT_TRUE(n == 1 && keys_hold(keys, n, "dst 203.0.113.7") && b.nrules == 1,
		    "bgp lost: the rules in the filter are those the new array took");
	free(keys);
	feed(&b, FLOWS_ANN("198.51.100.1", UDP9(">=5001&<=5004", "r1")));
	ASSERT_TRUE(b.nadd == 4, "bgp lost: r1 announced again: tried again whole");
	fb_bgp_done(&b);
	feed(&b, RTBH_WD("198.51.100.1", "203.0.113.8/32", ""));
	ASSERT_TRUE(!b.nadd && !b.ndel, "bgp lost: withdrawn again: nothing to delete");
	fb_bgp_free(&b);
}

void test_bgp_bad_input(void)
{
	static const char *const good[] = {
		RTBH_ANN("198.51.100.1", "203.0.113.7/32", ""),
		RTBH_WD("198.51.100.1", "203.0.113.7/32", ""),
		FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
			 "[\"198.51.100.2/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "
			 "[\"=5000\"], \"source-port\": [\"=4000\"]",
			 DISCARD),
		STATE("198.51.100.1", "down"),
	};
	static const char *const bad[] = {
		"not json",
		"[1, 2]",
		"{}",
		"{\"type\": \"update\"}",
		"{\"type\": \"update\", " NB("198.51.100.1") ", \"message\": {\"update\": "
							     "{\"announce\": []}}}}",
		"{\"type\": \"update\", " NB(
			"198.51.100.1") ", \"message\": {\"update\": "
					"{\"announce\": {\"ipv4 unicast\": {\"x\": "
					"[{\"nlri\": \"203.0.113.1/32\"}, 5]}}}}}}",
		"{\"type\": \"state\", " NB("198.51.100.1") "}}",
		"{\"type\": \"update\", " NB("198.51.100.1") ", \"message\": {\"eor\": {}}}}",
	};
	struct fb_bgp b;
	char line[4096];
	size_t i, j, n;
	unsigned seed = 1;
	bool ok = true, whole = true;

	bgp_init(&b, true, false);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char label[128];

		notes = 0;
		snprintf(label, sizeof(label), "bgp: malformed line %zu refused with a note",
			 i + 1);
		ASSERT_TRUE(feed(&b, bad[i]) == -1 && b.nadd + b.ndel == 0 && notes == 1 &&
				    strstr(last_note, "line skipped"),
			    label);
	}
	/* The second bad line holds a valid NLRI before a bad one: nothing of
	 * it may have been applied. */
	ASSERT_EQ(refs(&b, "dst 203.0.113.1"), 0, "bgp: a half-valid line applies nothing");
	/* Every truncation of real lines: no crash, nothing changed unless the
	 * line parses whole. */
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		n = strlen(good[i]);
		for (j = 0; j < n; j++) {
			snprintf(line, sizeof(line), "%.*s", (int)j, good[i]);
			if (fb_bgp_line(&b, line, strlen(line), 1) != -1 && j > 0)
				whole = false;
			if (b.nadd || b.ndel)
				ok = false;
		}
	}
	ASSERT_TRUE(whole, "bgp: every truncation of a real line is refused");
	ASSERT_TRUE(ok, "bgp: ... and none changes the filter");
	ASSERT_EQ(b.npaths, 0, "bgp: ... nor the paths");
	/* Random byte changes: never a crash; whatever parses is consistent. */
	for (i = 0; i < 20000; i++) {
		const char *g = good[i % 4];
		int k;

		n = strlen(g);
		memcpy(line, g, n + 1);
		for (k = 0; k < 3; k++) {
			seed = seed * 1103515245 + 12345;
			line[(seed >> 8) % n] = "{}[]\":,0a \\/5-"[(seed >> 20) % 14];
		}
		fb_bgp_line(&b, line, strlen(line), i);
		fb_bgp_done(&b);
	}
	ASSERT_TRUE(true, "bgp: 20,000 randomly damaged lines: no crash");
	fb_bgp_free(&b);
}

void test_bgp_state(void)
{
	struct fb_bgp a, b;
	struct fb_key *keys;
	FILE *fp = tmpfile();
	size_t n;

	bgp_init(&a, true, false);
	feed(&a, RTBH_ANN("198.51.100.1", "203.0.113.7/32", ""));
	feed(&a, RTBH_ANN("198.51.100.3", "203.0.113.7/32", ""));
	feed(&a, FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
			  "[\"198.51.100.2/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "
			  "[\"=5000\"], \"source-port\": [\"=4000\"]",
			  DISCARD));
	fb_bgp_done(&a);
	ASSERT_EQ(fb_bgp_save(&a, fp), 0, "bgp state: saved");
	rewind(fp);
	bgp_init(&b, true, false);
	ASSERT_EQ(fb_bgp_load(&b, fp, "state"), 0, "bgp state: loaded");
	ASSERT_EQ(b.npaths, 3, "bgp state: three paths");
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 2, "bgp state: two of them hold dst 203.0.113.7");
	n = fb_bgp_rules(&b, &keys);
	ASSERT_TRUE(n == 2 && keys_hold(keys, n, "udp 198.51.100.2:4000 203.0.113.9:5000"),
		    "bgp state: two rules, in the filter");
	free(keys);
	feed(&b, RTBH_WD("198.51.100.1", "203.0.113.7/32", ""));
	ASSERT_EQ(b.ndel, 0, "bgp state: after a restart, one peer's withdrawal keeps the rule");
	feed(&b, RTBH_WD("198.51.100.3", "203.0.113.7/32", ""));
	ASSERT_TRUE(b.ndel == 1, "bgp state: the last withdrawal deletes it, once");
	fb_bgp_done(&b);
	fb_bgp_remove_all(&b);
	ASSERT_TRUE(b.ndel == 1 && keys_hold(b.del, 1, "udp 198.51.100.2:4000 203.0.113.9:5000"),
		    "bgp state: --flush deletes exactly what is held");
	fb_bgp_free(&b);
	fb_bgp_free(&a);
	fclose(fp);
	fp = tmpfile();
	fputs("198.51.100.1\tipv4 unicast\t203.0.113.7/32\tdst 203.0.113.7\n"
	      "198.51.100.1\tipv4 unicast\tbroken\n",
	      fp);
	rewind(fp);
	bgp_init(&b, true, false);
	ASSERT_TRUE(fb_bgp_load(&b, fp, "state") == -1 && b.npaths == 0,
		    "bgp state: a bad line refuses the whole file");
	fb_bgp_free(&b);
	fclose(fp);
}
