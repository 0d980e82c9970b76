// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_fleet, what bgp says at a bounded rate (user/lib/fleet/bgpquiet.c):
 * a window per peer (a noisy peer's notes never take another's), the
 * filter's changes said up to their burst and counted past it (added,
 * deleted, the first and the last), and the bound on the peers followed
 * one by one.
 */
#include "fleet.h"

static char said[8][512];
static int nsaid;

static void keep(void *ctx, const char *msg)
{
	(void)ctx;
	if (nsaid < 8)
		snprintf(said[nsaid], sizeof(said[0]), "%s", msg);
	nsaid++;
}

/* An RTBH announcement of PFX from PEER, line LINENO. */
static void announce(struct fb_bgp *b, const char *peer, const char *pfx, size_t lineno)
{
	char line[512];

	snprintf(line, sizeof(line),
		 "{\"type\": \"update\", \"neighbor\": {\"address\": {\"peer\": \"%s\"}, "
		 "\"direction\": \"receive\", \"message\": {\"update\": {\"attribute\": "
		 "{\"community\": [[65535, 666]]}, \"announce\": {\"ipv4 unicast\": {\"x\": "
		 "[{\"nlri\": \"%s\"}]}}}}}}",
		 peer, pfx);
	fb_bgp_line(b, line, strlen(line), lineno);
}

void test_bgp_quiet(void)
{
	struct fb_bgp b;
	unsigned a, t;
	int i, n;

	bgp_defaults(&b);
	b.note = keep;
	/* A window of an hour: nothing is due before the end. */
	ASSERT_EQ(fb_bgp_quiet(&b, 3600, 2, 3), 0, "bgp quiet: windows made");
	nsaid = 0;
	for (i = 0; i < 5; i++)
		announce(&b, "198.51.100.1", "198.51.100.0/16", (size_t)i + 1);
	ASSERT_EQ(nsaid, 2, "bgp quiet: a peer's 5 refusals, 2 said");
	announce(&b, "203.0.113.1", "203.0.113.0/16", 6);
	ASSERT_EQ(nsaid, 3, "bgp quiet: another peer's first refusal said (its own window)");
	ASSERT_TRUE(strstr(said[2], "<stdin>:6: 203.0.113.0/16 from 203.0.113.1: /16 is shorter"),
		    "bgp quiet: ... named, line and peer");
	ASSERT_EQ(fb_bgp_talker(&b, "198.51.100.1"), 2, "bgp quiet: the first peer's talker");
	ASSERT_EQ(fb_bgp_talker(&b, "203.0.113.1"), 3, "bgp quiet: the second's");
	a = 2;
	n = 0;
	n += fb_bgp_change(&b, a, '+', "<stdin>:7: +dst 198.51.100.7");
	n += fb_bgp_change(&b, a, '-', "<stdin>:8: -dst 198.51.100.7");
	n += fb_bgp_change(&b, a, '+', "<stdin>:9: +dst 198.51.100.9");
	ASSERT_EQ(n, 3, "bgp quiet: a peer's first 3 changes said");
	n = fb_bgp_change(&b, a, '+', "<stdin>:10: +dst 198.51.100.10");
	n += fb_bgp_change(&b, a, '-', "<stdin>:11: -dst 198.51.100.9");
	n += fb_bgp_change(&b, a, '+', "<stdin>:12: +dst 198.51.100.12");
	ASSERT_EQ(n, 0, "bgp quiet: ... the next 3 counted");
	ASSERT_EQ(fb_bgp_change(&b, 3, '+', "<stdin>:13: +dst 203.0.113.13"), 1,
		  "bgp quiet: the other peer's first change said");
	ASSERT_EQ(fb_bgp_change(&b, FB_BGP_NO_PEER, '-', "-dst 203.0.113.14"), 1,
		  "bgp quiet: a change no peer's line made said (its own window)");
	nsaid = 0;
	fb_bgp_note_due(&b, true);
	ASSERT_EQ(nsaid, 2, "bgp quiet: at the end, a refusals' count and a changes' count");
	ASSERT_TRUE(!strcmp(said[0], "3 more routes from 198.51.100.1 refused by the limits "
				     "(--min-length, --rtbh, family) in the last 1 s (not said "
				     "one by one)"),
		    "bgp quiet: ... the refusals' count names the peer");
	ASSERT_TRUE(!strcmp(said[1], "3 more changes to the filter from 198.51.100.1 in the "
				     "last 1 s (not said one by one): 2 rules added, 1 deleted; "
				     "the first <stdin>:10: +dst 198.51.100.10, the last "
				     "<stdin>:12: +dst 198.51.100.12"),
		    "bgp quiet: ... the changes' count: added, deleted, first and last");
	if (getenv("TEST_VERBOSE"))
		printf("  %s\n  %s\n", said[0], said[1]);
	nsaid = 0;
	fb_bgp_note_due(&b, true);
	ASSERT_EQ(nsaid, 0, "bgp quiet: a count said once");
	/* The peers followed one by one are bounded; those after share one. */
	for (i = 0, n = 0; i < FB_BGP_PEERS + 10; i++) {
		char peer[32];

		snprintf(peer, sizeof(peer), "2001:db8::%x", i + 1);
		t = fb_bgp_talker(&b, peer);
		n += t == FB_BGP_MORE_PEERS;
	}
	ASSERT_EQ(n, 12, "bgp quiet: past 256 peers (2 seen before), the others share a window");
	ASSERT_EQ(fb_bgp_talker(&b, "198.51.100.1"), 2, "bgp quiet: a peer keeps its window");
	ASSERT_EQ(fb_bgp_talker(&b, NULL), FB_BGP_NO_PEER, "bgp quiet: no peer: its own window");
	fb_bgp_free(&b);
}
