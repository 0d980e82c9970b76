// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A route's identity (bgp.h: a path is its peer's, family's and id's): the
 * same text for its announcement and its withdrawal, however ExaBGP prints
 * each, so that a withdrawal ends what the announcement started.
 *
 * A FlowSpec route is its "string", which ExaBGP ends with " next-hop
 * ADDR" in an announcement carrying a next hop (MP_REACH_NLRI) and not in
 * a withdrawal (MP_UNREACH_NLRI has none): the next hop is not part of the
 * NLRI, so it is left out of the id.
 *
 * A state file written before ids were made so (no "state 2" header,
 * bgpstate.c) holds such ids as they were: they are made so as they are
 * read.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <string.h>
#include "fleet/bgp.h"
#include "fleet/bgp_int.h"

/* Is s[0..n) an IPv4 or IPv6 address? */
static bool is_addr(const char *s, size_t n)
{
	unsigned char buf[16];
	char a[INET6_ADDRSTRLEN + 1];

	if (!n || n >= sizeof(a))
		return false;
	memcpy(a, s, n);
	a[n] = 0;
	return inet_pton(AF_INET, a, buf) == 1 || inet_pton(AF_INET6, a, buf) == 1;
}

#define NEXT_HOP " next-hop "

/* The length of " next-hop ADDR" at s, 0 if there is none there. */
static size_t next_hop_at(const char *s)
{
	size_t a = strlen(NEXT_HOP), n;

	if (strncmp(s, NEXT_HOP, a))
		return 0;
	n = strcspn(s + a, " ");
	return is_addr(s + a, n) ? a + n : 0;
}

size_t fb_bgp_flow_string_len(const char *s)
{
	size_t n = strlen(s), i;

	/* The last " next-hop ": an address holds no blank. */
	for (i = n; i-- > 0;)
		if (s[i] == ' ' && next_hop_at(s + i))
			return i && i + next_hop_at(s + i) == n ? i : n;
	return n;
}

void fb_bgp_old_id(const char *family, char *id)
{
	bool flow, v6;
	char *p;
	size_t n;

	if (fb_bgp_family(family, &flow, &v6) || !flow)
		return;
	/* "STRING[ next-hop ADDR][ part I/N]": the first " next-hop " is the
	 * string's (ExaBGP prints none before it). */
	p = strstr(id, NEXT_HOP);
	if (!p || p == id || !(n = next_hop_at(p)))
		return;
	if (p[n] && strncmp(p + n, " part ", 6))
		return;
	memmove(p, p + n, strlen(p + n) + 1);
}
