/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of test_fleet share: FLOW text to a key, the BGP half's
 * entry points.
 */
#ifndef FLOWBLOOM_TEST_FLEET_H
#define FLOWBLOOM_TEST_FLEET_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <linux/bpf.h>
#include "fleet/bgp.h"
#include "rules/flow.h"
#include "fleet/ipfix.h"
#include "testlib.h"

/* test_fleet.c */
void key_of(const char *text, struct fb_key *k);
/* Is FLOW text flow among keys[0..n)? */
bool keys_hold(const struct fb_key *keys, size_t n, const char *flow);
/* A BGP table with the verb's defaults (blackhole community, flush on
 * session down, --min-length 24,48), its notes kept in bgp_note (the
 * last one); bgp_feed() clears it and feeds one line (line number 1). */
extern char bgp_note[1024];
void bgp_defaults(struct fb_bgp *b);
int bgp_feed(struct fb_bgp *b, const char *s);

/* fleet_bgp.c */
void test_bgp_rtbh(void);
void test_bgp_flowspec(void);
void test_bgp_refused_route(void);
void test_bgp_lost(void);
void test_bgp_bad_input(void);
void test_bgp_state(void);

/* fleet_bgp_save.c */
void test_bgp_save(void);

/* fleet_bgp_hostile.c */
void test_bgp_hostile(void);

/* fleet_bgpquiet.c */
void test_bgp_quiet(void);

/* fleet_bgp_exabgp.c */
void test_bgp_exabgp(void);

/* fleet_bgp_paths.c */
void test_bgp_paths(void);

/* fleet_bgpfit.c */
void test_bgp_fit(void);

/* fleet_flip.c */
void test_export_flips(void);

#endif
