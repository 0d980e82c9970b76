// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_fleet, the bound on paths held (--max-paths, user/lib/fleet/bgpmsg.c):
 * a path past it is refused, its route whole, noted and counted, whether
 * its rule is new or held already (add-path ids for one prefix); a route
 * announced again or narrower passes; withdrawals make room; a message's
 * own announcements count; a state file holding more keeps its first
 * paths, the rules of those after them deleted unless a kept one holds them.
 */
#include <stdlib.h>
#include <string.h>
#include "fleet.h"

static char note[1024];
static int notes;

static void on_note(void *ctx, const char *msg)
{
	(void)ctx;
	notes++;
	snprintf(note, sizeof(note), "%s", msg);
	if (getenv("TEST_VERBOSE"))
		printf("  note: %s\n", msg);
}

static void init(struct fb_bgp *b, size_t max)
{
	struct fb_bgp_opts o = { .community = FB_BGP_BLACKHOLE,
				 .flush_on_down = true,
				 .min_v4 = 24,
				 .min_v6 = 48,
				 .max_paths = max };

	fb_bgp_init(b, &o);
	b->note = on_note;
}

static void line(struct fb_bgp *b, const char *s)
{
	note[0] = 0;
	notes = 0;
	fb_bgp_line(b, s, strlen(s), 1);
	fb_bgp_done(b); /* the filter takes what it is given */
}

#define NBR "\"neighbor\": {\"address\": {\"peer\": \"198.51.100.1\"}"
#define UPD(body) "{\"type\": \"update\", " NBR ", \"message\": {\"update\": {" body "}}}}"
#define BH_ATTR "\"attribute\": {\"community\": [[65535, 666]]}"
/* The blackhole 203.0.113.1/32 through add-path id ID. */
#define BH1(id) "{\"nlri\": \"203.0.113.1/32\", \"path-information\": \"" id "\"}"
#define BH_ANN(nlris) UPD(BH_ATTR ", \"announce\": {\"ipv4 unicast\": {\"x\": [" nlris "]}}")
#define BH_WD(nlris) UPD("\"withdraw\": {\"ipv4 unicast\": [" nlris "]}")
/* UDP to 203.0.113.9, destination ports 5000 to HI: HI - 4999 keys. */
#define FS_ANN(hi)                                                                                 \
	UPD("\"attribute\": {\"extended-community\": [{\"value\": 9225060886715039744}]}, "        \
	    "\"announce\": {\"ipv4 flow\": {\"no-nexthop\": [{\"destination-ipv4\": "              \
	    "[\"203.0.113.9/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "               \
	    "[\">=5000&<=" hi "\"], \"string\": \"r\"}]}}")

static void bound(void)
{
	struct fb_bgp b;

	init(&b, 5);
	line(&b, BH_ANN(BH1("1") ", " BH1("2") ", " BH1("3") ", " BH1("4") ", " BH1("5")));
	ASSERT_TRUE(b.npaths == 5 && b.nrules == 1 && !notes,
		    "bgp max paths: 5 add-path ids for one /32: 5 paths, within --max-paths 5");
	line(&b, BH_ANN(BH1("6")));
	ASSERT_TRUE(b.npaths == 5 && b.refused_paths == 1 && notes == 1 &&
			    strstr(note, "203.0.113.1/32 from 198.51.100.1: 1 path more would make "
					 "6 held, past --max-paths 5; not applied"),
		    "bgp max paths: a 6th id for a rule held already: refused, noted, counted");
	line(&b, BH_ANN(BH1("3")));
	ASSERT_TRUE(b.npaths == 5 && !notes && b.refused_paths == 1,
		    "bgp max paths: a path held announced again passes");
	line(&b, BH_WD(BH1("1") ", " BH1("2")));
	line(&b, BH_ANN(BH1("6") ", " BH1("7") ", " BH1("8")));
	ASSERT_TRUE(b.npaths == 5 && notes == 1 && b.refused_paths == 2,
		    "bgp max paths: 2 withdrawn, then 3 in one message: the first 2 held, the "
		    "3rd refused");
	/* A FlowSpec route of 3 keys is refused whole, never in part. */
	line(&b, BH_WD(BH1("3") ", " BH1("4")));
	line(&b, FS_ANN("5002"));
	ASSERT_TRUE(b.npaths == 3 && b.refused_paths == 3 && notes == 1 &&
			    strstr(note, "'r' from 198.51.100.1: 3 paths more would make 6 held"),
		    "bgp max paths: a route of 3 keys with room for 2: none of it held");
	line(&b, BH_WD(BH1("5")));
	line(&b, FS_ANN("5002"));
	ASSERT_TRUE(b.npaths == 5 && b.nrules == 4 && !notes,
		    "bgp max paths: ... with room for 3: all of it");
	line(&b, FS_ANN("5001"));
	ASSERT_TRUE(b.npaths == 3 && !notes, "bgp max paths: ... narrowed to 1 key: passes");
	line(&b, FS_ANN("5004"));
	ASSERT_TRUE(b.npaths == 2 && b.nrules == 1 && b.refused_paths == 4 && notes == 1 &&
			    strstr(note, "4 paths more would make 7 held"),
		    "bgp max paths: ... widened to 5 keys past the bound: refused, its old path "
		    "ended (as any refused announcement's)");
	fb_bgp_free(&b);
	/* No bound (0): as many as announced. */
	init(&b, 0);
	line(&b, BH_ANN(BH1("1") ", " BH1("2") ", " BH1("3") ", " BH1("4") ", " BH1("5") ", " BH1(
			 "6")));
	ASSERT_TRUE(b.npaths == 6 && !notes, "bgp max paths: 0 is no bound");
	fb_bgp_free(&b);
}

/* A state file holding more paths than the bound (the bound lowered
 * since): its first paths are kept, whole routes; each route after them is
 * noted and counted, and ends as its withdrawal would: its rule a
 * deletion unless a kept path holds it. It was loaded whole, the bound
 * held only against new paths. */
static void state_over(void)
{
	FILE *fp = tmpfile();
	struct fb_bgp b;
	struct fb_key k;
	char err[128], rule[] = "dst 203.0.113.3";
	int blank;

	fputs("198.51.100.1\tipv4 unicast\t203.0.113.1/32 path-id 1\tdst 203.0.113.1\n"
	      "198.51.100.1\tipv4 unicast\t203.0.113.2/32\tdst 203.0.113.2\n"
	      "198.51.100.1\tipv4 unicast\t203.0.113.1/32 path-id 2\tdst 203.0.113.1\n"
	      "198.51.100.1\tipv4 unicast\t203.0.113.1/32 path-id 3\tdst 203.0.113.1\n"
	      "198.51.100.1\tipv4 unicast\t203.0.113.3/32\tdst 203.0.113.3\n",
	      fp);
	rewind(fp);
	init(&b, 2);
	notes = 0;
	ASSERT_TRUE(!fb_bgp_load(&b, fp, "state") && b.npaths == 2 && b.refused_paths == 3 &&
			    notes == 3,
		    "bgp max paths: a state file of 5 paths under --max-paths 2: the first 2 "
		    "kept, each of the 3 others noted and counted");
	ASSERT_TRUE(strstr(note, "state:3: '203.0.113.1/32 path-id 2' from 198.51.100.1: 1 path "
				 "past --max-paths 2 (the file holds 5); dropped") != NULL,
		    "bgp max paths: ... named with its line");
	fb_flow_parse_line(rule, &k, &blank, err, sizeof(err));
	ASSERT_TRUE(b.ndel == 1 && !memcmp(&b.del[0], &k, sizeof(k)) && !fb_bgp_refs(&b, &k),
		    "bgp max paths: ... the rule only a dropped path held is to be deleted, "
		    "not the one a kept path holds");
	fclose(fp);
	fb_bgp_done(&b);
	line(&b, BH_ANN(BH1("4")));
	ASSERT_TRUE(b.npaths == 2 && notes == 1, "bgp max paths: ... a new path refused");
	line(&b, BH_WD(BH1("1")));
	line(&b, BH_ANN(BH1("4")));
	ASSERT_TRUE(b.npaths == 2 && !notes, "bgp max paths: ... under it again, accepted");
	fb_bgp_free(&b);
}

void test_bgp_paths(void)
{
	bound();
	state_over();
}
