// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a BGP message or a state-file line may become, below both readers
 * (bgpmsg.c, bgpstate.c) and the path table (bgp.c): the families, the
 * limits every rule is held to whoever says it (a peer or the state file)
 * and a path operation onto a line's list (notes for the user: bgpquiet.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/bgp.h"
#include "fleet/bgp_int.h"
#include "report.h"
#include "rules/flow.h"
#include "rules/rules.h"

int fb_bgp_family(const char *family, bool *flow, bool *v6)
{
	if (!strcmp(family, "ipv4 unicast") || !strcmp(family, "ipv6 unicast"))
		*flow = false;
	else if (!strcmp(family, "ipv4 flow") || !strcmp(family, "ipv6 flow"))
		*flow = true;
	else
		return -1;
	*v6 = family[3] == '6';
	return 0;
}

int fb_bgp_admit(const struct fb_bgp *b, const char *family, const struct fb_key *k, char *why,
		 size_t len)
{
	bool flow, v6;
	int l, min;

	if (fb_bgp_family(family, &flow, &v6)) {
		snprintf(why, len, "family '%s' is not supported", fb_quote(family));
		return -1;
	}
	if (k->family != (v6 ? FB_FAMILY_IPV6 : FB_FAMILY_IPV4)) {
		snprintf(why, len, "an %s route makes %s rules only", family, v6 ? "IPv6" : "IPv4");
		return -1;
	}
	if (fb_rules_valid(k, why, len))
		return -1;
	if (!flow && k->kind != (b->o.rtbh_src ? FB_KIND_SRC : FB_KIND_DST)) {
		snprintf(why, len, "a blackhole route makes %s rules (--rtbh %s)",
			 b->o.rtbh_src ? "source" : "destination", b->o.rtbh_src ? "src" : "dst");
		return -1;
	}
	if (k->kind == FB_KIND_FLOW)
		return 0; /* host addresses only (flow_rule) */
	min = v6 ? b->o.min_v6 : b->o.min_v4;
	if (k->kind == FB_KIND_MASK) {
		/* Another shape: its longest prefix counts (a rule of ports
		 * and protocol alone covers every address: /0). */
		__u32 d = fb_mask_of_key(k, NULL), s = FB_MASK_SLEN(d), t = FB_MASK_DLEN(d);

		l = (int)(s > t ? s : t);
		l = l && !v6 ? l - 96 : l;
		if (l < min) {
			snprintf(why, len,
				 "its longest prefix /%d is shorter than /%d (--min-length)", l,
				 min);
			return -1;
		}
		return 0;
	}
	/* In the family the rule has: an IPv4 /n is 96 + n in the key. */
	l = v6 ? k->plen : k->plen - 96;
	if (l < min) {
		snprintf(why, len, "/%d is shorter than /%d (--min-length)", l, min);
		return -1;
	}
	return 0;
}

int fb_bgp_push_op(struct fb_bgp_ctx *c, bool announce, const char *peer, const char *family,
		   const char *nlri, const struct fb_key *key)
{
	struct fb_bgp_op *o;
	size_t lp = strlen(peer) + 1, lf = strlen(family) + 1, ln = strlen(nlri) + 1;

	if (c->nops == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct fb_bgp_op *n = realloc(c->ops, cap * sizeof(*n));

		if (!n)
			goto oom;
		c->ops = n;
		c->cap = cap;
	}
	o = &c->ops[c->nops];
	memset(o, 0, sizeof(*o));
	o->peer = malloc(lp + lf + ln);
	if (!o->peer)
		goto oom;
	o->family = o->peer + lp;
	o->nlri = o->family + lf;
	memcpy(o->peer, peer, lp);
	memcpy(o->family, family, lf);
	memcpy(o->nlri, nlri, ln);
	o->announce = announce;
	if (key)
		o->key = *key;
	c->nops++;
	return 0;
oom:
	c->oom = true;
	return -1;
}
