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
 * A unicast route is its prefix, written as inet_ntop() writes it with
 * its host bits cleared: RFC 4271 says they do not count, so
 * 203.0.113.129/25 announced is withdrawn as 203.0.113.128/25 too.
 *
 * A state file written before ids were made so (no "state 2" header,
 * bgpstate.c) holds such ids as they were: they are made so as they are
 * read.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
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

int fb_bgp_prefix_id(const char *pfx, size_t n, bool v6, char *out, size_t len)
{
	unsigned char a[16];
	char t[INET6_ADDRSTRLEN + 1];
	const char *slash = memchr(pfx, '/', n);
	size_t al = slash ? (size_t)(slash - pfx) : n, i;
	unsigned l = 0;

	if (!slash || !al || al >= sizeof(t) || n - al < 2 || n - al > 4)
		return -1;
	for (i = al + 1; i < n; i++) {
		if (pfx[i] < '0' || pfx[i] > '9' || (i == al + 1 && pfx[i] == '0' && n - al > 2))
			return -1;
		l = 10 * l + (unsigned)(pfx[i] - '0');
	}
	memcpy(t, pfx, al);
	t[al] = 0;
	if (l > (v6 ? 128U : 32U) || inet_pton(v6 ? AF_INET6 : AF_INET, t, a) != 1)
		return -1;
	for (i = 0; i < (v6 ? 16U : 4U); i++)
		if (8 * i >= l)
			a[i] = 0;
		else if (8 * i + 8 > l)
			a[i] &= (unsigned char)(0xff << (8 * i + 8 - l));
	if (!inet_ntop(v6 ? AF_INET6 : AF_INET, a, t, sizeof(t)))
		return -1;
	return snprintf(out, len, "%s/%u", t, l) < (int)len ? 0 : -1;
}

const char *fb_bgp_old_id(const char *family, const char *id, char *buf, size_t len)
{
	char pfx[INET6_ADDRSTRLEN + 8];
	const char *p;
	bool flow, v6;
	size_t n;

	if (fb_bgp_family(family, &flow, &v6))
		return id;
	if (!flow) {
		/* "PREFIX[ path-id ID]": the prefix as it is written now. */
		n = strcspn(id, " ");
		if (fb_bgp_prefix_id(id, n, v6, pfx, sizeof(pfx)) ||
		    snprintf(buf, len, "%s%s", pfx, id + n) >= (int)len)
			return id;
		return buf;
	}
	/* "STRING[ next-hop ADDR][ part I/N]": the first " next-hop " is the
	 * string's (ExaBGP prints none before it). */
	p = strstr(id, NEXT_HOP);
	if (!p || p == id || !(n = next_hop_at(p)) || (p[n] && strncmp(p + n, " part ", 6)) ||
	    snprintf(buf, len, "%.*s%s", (int)(p - id), id, p + n) >= (int)len)
		return id;
	return buf;
}
