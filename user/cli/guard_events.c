// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What `flowbloom guard` says (guard.h): its events on stderr and in the
 * IPFIX queue beside NAME, and its commands for ExaBGP on stdout.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "clock.h"
#include "guard.h"

static void addr_text(const struct fb_key *k, char *buf, size_t len)
{
	const __u8 *a = k->kind == FB_KIND_DST ? k->daddr : k->saddr;

	if (k->family == FB_FAMILY_IPV4)
		inet_ntop(AF_INET, a + 12, buf, len);
	else
		inet_ntop(AF_INET6, a, buf, len);
}

void fb_guard_announce_route(struct guard *g, const struct fb_guard_route *r, bool withdraw)
{
	char a[INET6_ADDRSTRLEN], line[256];
	struct fb_cmdq *q = &g->q;
	bool v4 = r->family == FB_FAMILY_IPV4;
	int n;

	if (g->announce == ANN_NONE || g->dry_run || q->broken)
		return;
	inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? r->addr + 12 : r->addr, a, sizeof(a));
	/* ExaBGP reads a command a line. */
	if (r->kind == FB_ROUTE_BLACKHOLE)
		n = snprintf(line, sizeof(line), "%s route %s/%d next-hop self%s\n",
			     withdraw ? "withdraw" : "announce", a, v4 ? 32 : 128,
			     withdraw ? "" : " community [65535:666]");
	else if (withdraw)
		n = snprintf(line, sizeof(line), "withdraw flow route { match { %s %s/%d; } }\n",
			     r->kind == FB_ROUTE_FLOW_DST ? "destination" : "source", a,
			     v4 ? 32 : 128);
	else
		n = snprintf(line, sizeof(line),
			     "announce flow route { match { %s %s/%d; } then { discard; } }\n",
			     r->kind == FB_ROUTE_FLOW_DST ? "destination" : "source", a,
			     v4 ? 32 : 128);
	fb_cmdq_push(q, line, n);
}

void fb_guard_announce(struct guard *g, const struct fb_key *k, bool withdraw)
{
	struct fb_guard_route r;

	fb_guard_route_of(g, k, &r);
	fb_guard_announce_route(g, &r, withdraw);
}

/* One event: a line on stderr, or a JSON object with -j. */
void fb_guard_event(const struct guard *g, const char *what, const struct fb_key *k,
		    const struct fb_guard_addr *a, double secs, double ends_in, double lasted)
{
	char addr[INET6_ADDRSTRLEN], when[64];
	const char *by = g->by_dst ? "dst" : "src";

	addr_text(k, addr, sizeof(addr));
	fb_clock_format(fb_clock_real_ns(), true, when, sizeof(when));
	if (g->evfd >= 0 && (!strcmp(what, "ban") || !strcmp(what, "unban"))) {
		/* For an IPFIX exporter of NAME: a ban, or its end. */
		struct fb_guard_event e = { .key = *k };
		__u64 now = fb_clock_real_ns();

		e.event = !strcmp(what, "ban") ? 1 : 2;
		e.start_ns = lasted >= 0 ? now - (__u64)(lasted * 1e9) : now;
		e.end_ns = ends_in >= 0 ? now + (__u64)(ends_in * 1e9) : now;
		fb_guard_events_push(g->evfd, &e);
	}
	if (g->json) {
		fprintf(stderr,
			"{\"time\": \"%s\", \"event\": \"%s\", \"by\": \"%s\", \"address\": \"%s\"",
			when, what, by, addr);
		if (a)
			fprintf(stderr,
				", \"pps\": %.1f, \"pps_lower\": %.1f, \"bps\": %.1f, "
				"\"bps_lower\": "
				"%.1f, \"flows\": %u",
				a->packets / secs, a->lo_packets / secs, a->bytes * 8.0 / secs,
				a->lo_bytes * 8.0 / secs, a->flows);
		if (ends_in >= 0)
			fprintf(stderr, ", \"ttl\": %g, \"ends_in\": %.3f", g->ttl, ends_in);
		if (lasted >= 0)
			fprintf(stderr, ", \"lasted\": %.3f", lasted);
		if (!strcmp(what, "limit"))
			fprintf(stderr, ", \"limit\": %llu, \"limit_by\": \"%s\", \"held\": %llu",
				(unsigned long long)g->lim.n,
				g->lim.by_bans ? "max_bans" : "capacity",
				(unsigned long long)g->lim.held);
		fprintf(stderr, ", \"filter\": \"%s\", \"dry_run\": %s}\n", g->into,
			g->dry_run ? "true" : "false");
	} else if (a) {
		fprintf(stderr,
			"flowbloom: guard: %s%s %s %s: %.1f pps, %.0f bit/s (at least %.1f pps, "
			"%.0f bit/s",
			g->dry_run ? "(dry run) " : "", strcmp(what, "limit") ? what : "not banned",
			by, addr, a->packets / secs, a->bytes * 8.0 / secs, a->lo_packets / secs,
			a->lo_bytes * 8.0 / secs);
		/* A sketch by address counts the address itself: no flows. */
		if (g->by_addr)
			fputc(')', stderr);
		else
			fprintf(stderr, ", %u flow%s)", a->flows, a->flows == 1 ? "" : "s");
		if (ends_in >= 0)
			fprintf(stderr, "; in %s for %.10g s, ends in %.3f s", g->into, g->ttl,
				ends_in);
		if (!strcmp(what, "limit") && g->lim.by_bans)
			fprintf(stderr, "; ban limit %llu reached: %llu bans in force (--max-bans)",
				(unsigned long long)g->lim.n, (unsigned long long)g->lim.held);
		else if (!strcmp(what, "limit"))
			fprintf(stderr,
				"; ban limit reached: '%s' holds %llu flows, its capacity %llu%s",
				g->into, (unsigned long long)g->lim.held,
				(unsigned long long)g->lim.n,
				g->lim.derived ? " (m ln 2 / k)" : "");
		fputc('\n', stderr);
	} else {
		fprintf(stderr, "flowbloom: guard: %s%s %s %s after %.3f s\n",
			g->dry_run ? "(dry run) " : "", what, by, addr, lasted);
	}
	fflush(stderr);
}
