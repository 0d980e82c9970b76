// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What `flowbloom bgp` says, at a bounded rate (bgp.h): a note of a kind a
 * peer can make once per route or line, and a change to the filter, are
 * said in full only so often per window (ratelimit.h), the rest counted
 * and said in one line when the window is over. Each peer has windows of
 * its own (a talker): a flapping or hostile peer fills its own, never
 * another's, whose first lines are then still said in full.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fleet/bgp.h"
#include "report.h"

static void say(struct fb_bgp *b, const char *msg)
{
	if (b->note)
		b->note(b->ctx, msg);
	else
		fb_report_err("bgp: %s", msg);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What the count of a window of each kind says. */
static const char *const kind_what[FB_BGP_KINDS][2] = {
	[FB_BGP_PAST_MAX] = { "route", "refused past --max-paths" },
	[FB_BGP_INVALID] = { "route", "refused by the limits (--min-length, --rtbh, family)" },
	[FB_BGP_UNSUPPORTED] = { "route", "not supported (FlowSpec action or component, family)" },
	[FB_BGP_REFUSED] = { "route", "the filter could not take (refused whole)" },
	[FB_BGP_SKIPPED] = { "input line", "skipped (malformed, or too long)" },
};

/* " from PEER", or what the talker stands for. */
static void talker_from(const struct fb_bgp *b, unsigned t, char *buf, size_t len)
{
	if (t == FB_BGP_NO_PEER)
		buf[0] = 0;
	else if (t == FB_BGP_MORE_PEERS)
		snprintf(buf, len, " from peers past the first %u", FB_BGP_PEERS);
	else
		snprintf(buf, len, " from %s", fb_quote(b->talk[t].peer));
}

/* A window just taken from: the first to end is looked at first. */
static bool take(struct fb_bgp *b, struct fb_ratelimit *r)
{
	bool open = r->start, said = fb_ratelimit_take(r);

	if (!open && r->start && (!b->quiet_next || r->start + r->interval < b->quiet_next))
		b->quiet_next = r->start + r->interval;
	return said;
}

static void next_due(struct fb_bgp *b, const struct fb_ratelimit *r)
{
	if (r->start && (!b->quiet_next || r->start + r->interval < b->quiet_next))
		b->quiet_next = r->start + r->interval;
}

static void change_due(struct fb_bgp *b, unsigned t, bool end)
{
	struct fb_bgp_talker *k = &b->talk[t];
	unsigned long long n, add = k->held_add;
	char msg[1024], from[FB_QUOTE_SIZE + 32];
	double secs;

	n = fb_ratelimit_due(&k->change, end, &secs);
	if (!n) {
		next_due(b, &k->change);
		return;
	}
	talker_from(b, t, from, sizeof(from));
	snprintf(msg, sizeof(msg),
		 "%llu more change%s to the filter%s in the last %.0f s (not said one by one): "
		 "%llu rule%s added, %llu deleted; the first %s, the last %s",
		 n, n == 1 ? "" : "s", from, secs < 1 ? 1 : secs, add, add == 1 ? "" : "s", n - add,
		 k->first, n == 1 ? "the same" : k->last);
	k->held_add = 0;
	say(b, msg);
}

void fb_bgp_note_due(struct fb_bgp *b, bool end)
{
	char msg[512], from[FB_QUOTE_SIZE + 32];
	unsigned long long n;
	double secs;
	size_t t;
	int k;

	if (!b->ntalk || (!end && (!b->quiet_next || mono() < b->quiet_next)))
		return;
	b->quiet_next = 0;
	for (t = 0; t < b->ntalk; t++) {
		for (k = FB_BGP_SAID + 1; k < FB_BGP_KINDS; k++) {
			struct fb_ratelimit *r = &b->talk[t].quiet[k];

			n = fb_ratelimit_due(r, end, &secs);
			if (!n) {
				next_due(b, r);
				continue;
			}
			talker_from(b, (unsigned)t, from, sizeof(from));
			snprintf(msg, sizeof(msg),
				 "%llu more %s%s%s %s in the last %.0f s (not said one by one)", n,
				 kind_what[k][0], n == 1 ? "" : "s", from, kind_what[k][1],
				 secs < 1 ? 1 : secs);
			say(b, msg);
		}
		change_due(b, (unsigned)t, end);
	}
}

static void talker_init(struct fb_bgp *b, struct fb_bgp_talker *t, const char *peer)
{
	int k;

	memset(t, 0, sizeof(*t));
	snprintf(t->peer, sizeof(t->peer), "%s", peer);
	for (k = FB_BGP_SAID + 1; k < FB_BGP_KINDS; k++) {
		t->quiet[k].interval = b->quiet_secs;
		t->quiet[k].burst = b->quiet_burst;
	}
	t->change.interval = b->quiet_secs;
	t->change.burst = b->change_burst;
}

int fb_bgp_quiet(struct fb_bgp *b, double interval, unsigned burst, unsigned change_burst)
{
	b->quiet_secs = interval;
	b->quiet_burst = burst;
	b->change_burst = change_burst;
	b->cap_talk = 16;
	b->talk = calloc(b->cap_talk, sizeof(*b->talk));
	if (!b->talk) {
		fb_report_err("bgp: out of memory for the log's windows");
		return -1;
	}
	talker_init(b, &b->talk[FB_BGP_NO_PEER], "");
	talker_init(b, &b->talk[FB_BGP_MORE_PEERS], "");
	b->ntalk = 2;
	return 0;
}

unsigned fb_bgp_talker(struct fb_bgp *b, const char *peer)
{
	size_t i, len;

	if (!peer || !b->ntalk)
		return FB_BGP_NO_PEER;
	/* A line's peer is most often the last line's. */
	if (b->talker > FB_BGP_MORE_PEERS && !strcmp(b->talk[b->talker].peer, peer))
		return b->talker;
	len = strlen(peer);
	if (!len || len >= FB_BGP_PEER_MAX)
		return FB_BGP_MORE_PEERS; /* no address: shared */
	for (i = 2; i < b->ntalk; i++)
		if (!strcmp(b->talk[i].peer, peer))
			return (unsigned)i;
	if (b->ntalk - 2 >= FB_BGP_PEERS)
		return FB_BGP_MORE_PEERS;
	if (b->ntalk == b->cap_talk) {
		size_t cap = 2 * b->cap_talk;
		struct fb_bgp_talker *t = realloc(b->talk, cap * sizeof(*t));

		if (!t)
			return FB_BGP_MORE_PEERS;
		b->talk = t;
		b->cap_talk = cap;
	}
	talker_init(b, &b->talk[b->ntalk], peer);
	return (unsigned)b->ntalk++;
}

bool fb_bgp_change(struct fb_bgp *b, unsigned talker, char sign, const char *text)
{
	struct fb_bgp_talker *t;

	if (!b->ntalk)
		return true;
	fb_bgp_note_due(b, false);
	t = &b->talk[talker < b->ntalk ? talker : FB_BGP_MORE_PEERS];
	if (take(b, &t->change))
		return true;
	snprintf(t->change.held == 1 ? t->first : t->last, FB_BGP_CHANGE_STR, "%s", text);
	t->held_add += sign == '+';
	return false;
}

void fb_bgp_note(struct fb_bgp *b, enum fb_bgp_kind kind, size_t lineno, const char *fmt, ...)
{
	char msg[1024];
	int n = 0;
	va_list ap;

	if (kind != FB_BGP_SAID && b->ntalk) {
		fb_bgp_note_due(b, false);
		if (!take(b, &b->talk[b->talker < b->ntalk ? b->talker : FB_BGP_MORE_PEERS]
				      .quiet[kind]))
			return;
	}
	if (lineno)
		n = snprintf(msg, sizeof(msg), "%s:%zu: ", b->source ? b->source : "<stdin>",
			     lineno);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	say(b, msg);
}
