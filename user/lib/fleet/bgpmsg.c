// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading one ExaBGP JSON message into path operations (see bgp.c for the
 * shapes): checks its structure, turns unicast NLRIs into keys and
 * FlowSpec NLRIs through bgpflow.c; a malformed message is refused whole.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "fleet/bgp.h"
#include "fleet/bgp_int.h"
#include "report.h"
#include "rules/flow.h"

/*
 * json-c holds a table for each object (about 700 bytes) and an array of
 * 32 slots for each array, however small: a line of empty ones ({"a":
 * [{},{},...]}) took about 260 bytes per byte, 2.2 GB at the 8 MiB line
 * limit (cmd_bgp.c), where ExaBGP's own JSON takes about 36. So a line is
 * counted before json-c sees it, and one holding more objects and arrays
 * than ExaBGP prints for any BGP message is refused unparsed.
 *
 * ExaBGP prints a container only for something on the wire, and the
 * densest are about one a byte: an IPv4 /0 NLRI is one byte and one object
 * ({ "nlri": "0.0.0.0/0" }); a labeled NLRI of no prefix, four bytes and
 * three (the NLRI, its label list, the label); a FlowSpec NLRI of one term,
 * four bytes (length, type, operator, value) and two (the NLRI, the
 * component's list), each further component three bytes and one list; an
 * AS_PATH segment of no AS, two bytes and at most two (segment, list); an
 * attribute, three bytes of header and at most two; a community, four
 * bytes and one pair. The message's frame (neighbor, message, update,
 * announce, family, next hop) is a dozen more. A message is at most 64 KiB
 * (RFC 8654), so at most about 65,536 + 12; 2^18 is four times that. A
 * line at the bound takes at most about 200 MB while parsed (2^18 empty
 * objects in a list, the costliest), less than a line of ExaBGP's JSON at
 * the line limit (about 300 MB).
 *
 * ExaBGP nests about 10 deep (neighbor, message, update, announce, family,
 * next hop, NLRI, component list; an attribute's parts about as deep):
 * json-c's default depth, 32, is kept and named.
 */
size_t fb_bgp_containers(const char *line, size_t n, size_t max)
{
	size_t i, count = 0;
	char quote = 0; /* in a string: its quote, '"' or '\'' (a name's, below) */

	/* A name json-c takes in single quotes, strict as it is
	 * ({'"': [{}, ...]}): a '"' in it starts no string, and the
	 * brackets after it count. */
	for (i = 0; i < n && count <= max; i++) {
		if (quote) {
			if (line[i] == '\\')
				i++; /* \" and \\ stay in the string */
			else if (line[i] == quote)
				quote = 0;
		} else if (line[i] == '"' || line[i] == '\'') {
			quote = line[i];
		} else if (line[i] == '{' || line[i] == '[') {
			count++;
		}
	}
	return count;
}

/*
 * json-c keeps the last of an object's members of one name, silently: a
 * FlowSpec route of {"destination-ipv4": [A/32], "destination-ipv4":
 * [B/24]} would be the /24 alone, a component given twice read as once
 * and widened; a withdrawal's list given twice, its first half dropped.
 * ExaBGP writes no name twice in an object. The members a line names
 * (each ':' outside a string is one, in JSON that parsed strictly: no
 * comment; json-c takes a name in single quotes even so) against those
 * its parsed objects hold tell: fewer held, a name was given twice.
 */
size_t fb_bgp_members(const char *line, size_t n)
{
	size_t i, count = 0;
	char quote = 0; /* in a string: its quote ('"', or '\'' for a name json-c takes so) */

	for (i = 0; i < n; i++) {
		if (quote) {
			if (line[i] == '\\')
				i++;
			else if (line[i] == quote)
				quote = 0;
		} else if (line[i] == '"' || line[i] == '\'') {
			quote = line[i];
		} else if (line[i] == ':') {
			count++;
		}
	}
	return count;
}

size_t fb_bgp_members_held(json_object *v)
{
	size_t i, count = 0;

	if (json_object_is_type(v, json_type_array)) {
		for (i = 0; i < json_object_array_length(v); i++)
			count += fb_bgp_members_held(json_object_array_get_idx(v, i));
	} else if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val)
		{
			(void)key;
			count += 1 + fb_bgp_members_held(val);
		}
	}
	return count;
}

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

/* A string member; NULL if absent, not a string, or holding a NUL (\u0000:
 * the C string would say less than the peer sent). */
static const char *get_str(json_object *o, const char *k)
{
	json_object *v = get(o, k);
	const char *s;

	if (!v || !json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL;
}

/* Rule from FLOW words, parsed as the CLI parses them (the same keys); the
 * route's AFI, not how its addresses are written, decides the family: an
 * IPv6 route's ::ffff:a.b.c.d (ExaBGP prints v4-mapped prefixes dotted)
 * is an IPv6 address, and only IPv6 packets carry it. */
static int rule_from(bool v6, const char *w0, const char *w1, const char *w2, struct fb_key *k,
		     char *why, size_t len)
{
	char *argv[3] = { (char *)w0, (char *)w1, (char *)w2 };
	int n = w2 ? 3 : 2;

	if (fb_flow_parse(n, argv, k, why, len) != n)
		return -1;
	if (v6)
		k->family = FB_FAMILY_IPV6;
	return 0;
}

/* One half of a community: a JSON integer 0 to 65535, as ExaBGP prints
 * it; -1 for anything else (json-c would read a string, a fraction or
 * true as a number, and 2^32 + 65535 cast to 32 bits is 65535). */
static long community_half(json_object *v)
{
	int64_t n;

	if (!v || !json_object_is_type(v, json_type_int))
		return -1;
	n = json_object_get_int64(v);
	return n >= 0 && n <= 0xffff ? (long)n : -1;
}

static bool has_community(struct fb_bgp *b, json_object *attr)
{
	json_object *list = get(attr, "community");
	size_t i;

	if (!list || !json_object_is_type(list, json_type_array))
		return false;
	for (i = 0; i < json_object_array_length(list); i++) {
		json_object *c = json_object_array_get_idx(list, i);

		if (c && json_object_is_type(c, json_type_array) &&
		    json_object_array_length(c) == 2 &&
		    community_half(json_object_array_get_idx(c, 0)) == b->o.community >> 16 &&
		    community_half(json_object_array_get_idx(c, 1)) == (b->o.community & 0xffff))
			return true;
	}
	return false;
}

/* RFC 8955 section 7.3: traffic-rate-bytes (type 0x80, subtype 0x06) with
 * rate 0 discards; so does traffic-rate-packets (0x800c, RFC 8955 7.3 as
 * updated) at 0. The rate is an IEEE float in the low 32 bits: 0 or -0.
 * The numeric value is used, not ExaBGP's "rate-limit:%d" text, which
 * prints 0.5 as 0. What else is there is described in *other. */
static bool has_discard(json_object *attr, const char **other)
{
	json_object *list = get(attr, "extended-community");
	size_t i;

	*other = NULL;
	if (!list || !json_object_is_type(list, json_type_array))
		return false;
	for (i = 0; i < json_object_array_length(list); i++) {
		json_object *c = json_object_array_get_idx(list, i), *v = get(c, "value");
		__u64 val;

		if (!v || !json_object_is_type(v, json_type_int))
			continue;
		val = json_object_get_uint64(v);
		if (((val >> 48) == 0x8006 || (val >> 48) == 0x800c) && !((__u32)val & 0x7fffffffU))
			return true;
		if (!*other)
			*other = get_str(c, "string");
	}
	return false;
}

/* The path's identity within its peer and family: the NLRI text (a
 * FlowSpec route's without the next hop an announcement prints, a unicast
 * prefix without host bits: bgpid.c), with the add-path id. */
static int nlri_id(json_object *n, bool flow, bool v6, char *out, size_t len)
{
	const char *s = get_str(n, flow ? "string" : "nlri"), *pi = get_str(n, "path-information");
	char pfx[64];

	if (!s || !*s)
		return -1;
	if (!flow && !fb_bgp_prefix_id(s, strlen(s), v6, pfx, sizeof(pfx)))
		s = pfx;
	snprintf(out, len, "%.*s%s%s", (int)(flow ? fb_bgp_flow_string_len(s) : strlen(s)), s,
		 pi ? " path-id " : "", pi ? pi : "");
	return 0;
}

/* End the paths of route id of peer and family ("ID", or "ID part I/N"
 * when it was several keys), except those an announcement of keep keys
 * makes again ("ID" for one, "ID part I/keep" for several). 0, or -2 out
 * of memory. */
static int end_route(struct fb_bgp_ctx *c, const char *peer, const char *family, const char *id,
		     size_t keep)
{
	size_t l = strlen(id);
	struct fb_bgp_path *p;

	if (keep != 1 && fb_bgp_push_op(c, false, peer, family, id, NULL))
		return -2;
	/* Its parts share its bucket: a look at one chain, not at every path
	 * (which made a table of N FlowSpec routes cost N^2). */
	for (p = fb_bgp_route_paths(c->b, peer, family, id); p; p = p->next) {
		unsigned long of = 0;

		if (strcmp(p->peer, peer) || strcmp(p->family, family) ||
		    fb_bgp_route_len(p->nlri, &of) != l || strncmp(p->nlri, id, l) || !p->nlri[l])
			continue;
		if (keep > 1 && of == keep)
			continue; /* announced again below */
		if (fb_bgp_push_op(c, false, p->peer, p->family, p->nlri, NULL))
			return -2;
	}
	return 0;
}

/* How many paths route id of peer and family holds: "ID", or its parts
 * ("ID part I/N"). They lie in the bucket of ID without a " part I/N" of
 * its own (an add-path id may end so). */
static size_t route_held(const struct fb_bgp *b, const char *peer, const char *family,
			 const char *id)
{
	size_t l = strlen(id), r = fb_bgp_route_len(id, NULL), n = 0;
	const struct fb_bgp_path *p;
	char head[1024];

	snprintf(head, sizeof(head), "%.*s", (int)r, id);
	for (p = fb_bgp_route_paths(b, peer, family, head); p; p = p->next)
		n += !strcmp(p->peer, peer) && !strcmp(p->family, family) &&
		     (r == l ? fb_bgp_route_len(p->nlri, NULL) == l && !strncmp(p->nlri, id, l)
			     : !strcmp(p->nlri, id));
	return n;
}

/* Would route id of peer and family, holding n paths once announced,
 * take the paths held past --max-paths? The paths the message's earlier
 * announcements start count (c->grow); its withdrawals make room from the
 * next line on (as the filter's capacity does: bgpfilter.c). 0 (its new
 * paths counted), or -1 with why (a refusal counted). */
static int past_max(struct fb_bgp_ctx *c, const char *peer, const char *family, const char *id,
		    size_t n, char *why, size_t len)
{
	struct fb_bgp *b = c->b;
	size_t held = route_held(b, peer, family, id), total;

	if (n <= held)
		return 0; /* held already, or fewer parts now */
	total = b->npaths + c->grow + n - held;
	if (b->o.max_paths && total > b->o.max_paths) {
		snprintf(why, len, "%zu path%s more would make %zu held, past --max-paths %zu",
			 n - held, n - held == 1 ? "" : "s", total, b->o.max_paths);
		b->refused_paths++;
		return -1;
	}
	c->grow += n - held;
	return 0;
}

static int read_nlri(struct fb_bgp_ctx *c, const char *peer, const char *family, json_object *n,
		     bool announce, json_object *attr)
{
	struct fb_bgp *b = c->b;
	char id[1024], why[256];
	const char *other;
	struct fb_key k, keys[FB_RULE_KEYS_MAX];
	enum fb_bgp_kind kind = FB_BGP_SAID; /* of a refusal's note */
	bool flow, v6;
	size_t nk, i;

	fb_bgp_family(family, &flow, &v6);
	if (!json_object_is_type(n, json_type_object) || nlri_id(n, flow, v6, id, sizeof(id)))
		return -1;
	if (!announce)
		return flow ? end_route(c, peer, family, id, 0)
		       : fb_bgp_push_op(c, false, peer, family, id, NULL) ? -2
									  : 0;
	if (!flow) {
		const char *pfx = get_str(n, "nlri");

		if (!has_community(b, attr))
			/* Not (or no longer) a blackhole: replaces any path we hold. */
			return fb_bgp_push_op(c, false, peer, family, id, NULL) ? -2 : 0;
		if (fb_bgp_check_prefix(pfx, v6, why, sizeof(why)) ||
		    rule_from(v6, b->o.rtbh_src ? "src" : "dst", pfx, NULL, &k, why, sizeof(why)) ||
		    fb_bgp_admit(b, family, &k, why, sizeof(why)))
			kind = FB_BGP_INVALID;
		else if (past_max(c, peer, family, id, 1, why, sizeof(why)))
			kind = FB_BGP_PAST_MAX;
		if (kind != FB_BGP_SAID) {
			fb_bgp_note(b, kind, c->lineno, "%s from %s: %s; not applied", pfx, peer,
				    why);
			return fb_bgp_push_op(c, false, peer, family, id, NULL) ? -2 : 0;
		}
		return fb_bgp_push_op(c, true, peer, family, id, &k) ? -2 : 0;
	}
	kind = FB_BGP_UNSUPPORTED;
	if (!has_discard(attr, &other)) {
		fb_bgp_note(b, kind, c->lineno,
			    "'%s' from %s: action %s%s%s is not supported (only discard, "
			    "traffic-rate 0); not applied",
			    fb_quote(id), fb_quote(peer), other ? "'" : "",
			    other ? fb_quote(other) : "none", other ? "'" : "");
		return end_route(c, peer, family, id, 0);
	}
	if (fb_bgp_flow_rule(n, v6, keys, &nk, why, sizeof(why)))
		goto refused;
	kind = FB_BGP_INVALID;
	for (i = 0; i < nk; i++)
		if (fb_bgp_admit(b, family, &keys[i], why, sizeof(why)))
			goto refused;
	if (past_max(c, peer, family, id, nk, why, sizeof(why))) {
		kind = FB_BGP_PAST_MAX;
		goto refused;
	}
	/* A route of several keys (port ranges) is one path per key, "ID
	 * part I/N": each holds its rule as any path does (reference counts,
	 * the state file); the route's other paths end. */
	if (end_route(c, peer, family, id, nk))
		return -2;
	if (nk == 1)
		return fb_bgp_push_op(c, true, peer, family, id, &keys[0]) ? -2 : 0;
	for (i = 0; i < nk; i++) {
		char part[1100];

		snprintf(part, sizeof(part), "%s part %zu/%zu", id, i + 1, nk);
		if (fb_bgp_push_op(c, true, peer, family, part, &keys[i]))
			return -2;
	}
	return 0;
refused:
	fb_bgp_note(b, kind, c->lineno, "'%s' from %s: %s; not applied", fb_quote(id),
		    fb_quote(peer), why);
	return end_route(c, peer, family, id, 0);
}

/* announce {FAMILY: {NEXTHOP: [NLRI...]}} or withdraw {FAMILY: [NLRI...]}. */
static int read_routes(struct fb_bgp_ctx *c, const char *peer, json_object *routes, bool announce,
		       json_object *attr)
{
	bool flow, v6;
	size_t i;

	if (!json_object_is_type(routes, json_type_object))
		return -1;
	json_object_object_foreach(routes, family, val)
	{
		if (fb_bgp_family(family, &flow, &v6)) {
			fb_bgp_note(c->b, FB_BGP_UNSUPPORTED, c->lineno,
				    "family '%s' from %s is not supported; ignored",
				    fb_quote(family), fb_quote(peer));
			continue;
		}
		if (announce) {
			if (!json_object_is_type(val, json_type_object))
				return -1;
			json_object_object_foreach(val, nexthop, list)
			{
				(void)nexthop;
				if (!json_object_is_type(list, json_type_array))
					return -1;
				for (i = 0; i < json_object_array_length(list); i++) {
					int r = read_nlri(c, peer, family,
							  json_object_array_get_idx(list, i), true,
							  attr);
					if (r)
						return r;
				}
			}
		} else {
			if (!json_object_is_type(val, json_type_array))
				return -1;
			for (i = 0; i < json_object_array_length(val); i++) {
				int r = read_nlri(c, peer, family,
						  json_object_array_get_idx(val, i), false, NULL);
				if (r)
					return r;
			}
		}
	}
	return 0;
}

/* Operations ending every path of peer (of family, if given) that is
 * stale (or any, if !only_stale). */
static int end_paths(struct fb_bgp_ctx *c, const char *peer, const char *family, bool only_stale)
{
	struct fb_bgp *b = c->b;
	size_t i;

	/* End-of-RIB with nothing stale (a peer may send it again and again):
	 * nothing to look for. */
	if (only_stale && !fb_bgp_stale_count(b, peer, family))
		return 0;
	for (i = 0; i < b->nbuckets; i++) {
		struct fb_bgp_path *p;

		for (p = b->paths[i]; p; p = p->next)
			if (!strcmp(p->peer, peer) && (!family || !strcmp(p->family, family)) &&
			    (!only_stale || p->stale) &&
			    fb_bgp_push_op(c, false, p->peer, p->family, p->nlri, NULL))
				return -2;
	}
	return 0;
}

static size_t peer_paths(const struct fb_bgp *b, const char *peer)
{
	size_t i, n = 0;
	struct fb_bgp_path *p;

	for (i = 0; i < b->nbuckets; i++)
		for (p = b->paths[i]; p; p = p->next)
			n += !strcmp(p->peer, peer);
	return n;
}

/* Read the message into c->ops: 0, -1 malformed (why set), -2 no memory. */
int fb_bgp_read_message(struct fb_bgp_ctx *c, json_object *msg, const char **why)
{
	struct fb_bgp *b = c->b;
	json_object *nb = get(msg, "neighbor"), *m, *u;
	const char *type = get_str(msg, "type"), *peer = get_str(get(nb, "address"), "peer");
	size_t i;
	int r;

	*why = "not an ExaBGP message (no \"type\")";
	if (!type)
		return -1;
	if (strcmp(type, "update") && strcmp(type, "state"))
		return 0; /* open, keepalive, notification, ...: nothing to do */
	*why = "no neighbor address";
	if (!peer || !*peer)
		return -1;
	b->talker = fb_bgp_talker(b, peer); /* its notes and changes: its peer's windows */
	if (!strcmp(type, "state")) {
		const char *st = get_str(nb, "state");

		*why = "state message without a state";
		if (!st)
			return -1;
		if (!strcmp(st, "down")) {
			/* ExaBGP retries a down session every few seconds:
			 * say it only when routes are at stake. */
			if (peer_paths(b, peer))
				fb_bgp_note(b, FB_BGP_SAID, c->lineno,
					    "session with %s down: %zu routes %s", peer,
					    peer_paths(b, peer),
					    b->o.flush_on_down ? "deleted" : "kept");
			return b->o.flush_on_down ? end_paths(c, peer, NULL, false) : 0;
		}
		if (!strcmp(st, "up")) {
			struct fb_bgp_path *p;

			/* Routes held from before (kept over a session loss, or
			 * from a previous run) are stale until the peer
			 * announces them again; End-of-RIB ends the rest. */
			for (i = 0; i < b->nbuckets; i++)
				for (p = b->paths[i]; p; p = p->next)
					if (!strcmp(p->peer, peer))
						fb_bgp_mark_stale(b, p);
			fb_bgp_note(b, FB_BGP_SAID, c->lineno, "session with %s up", peer);
		}
		return 0;
	}
	/* With `send { update; }` ExaBGP also reports what it sends: only
	 * what the peers announce counts. */
	if (get_str(nb, "direction") && strcmp(get_str(nb, "direction"), "receive"))
		return 0;
	m = get(nb, "message");
	*why = "update without a message";
	if (!m)
		return -1;
	if ((u = get(m, "eor"))) {
		const char *afi = get_str(u, "afi"), *safi = get_str(u, "safi");
		char fam[64];

		*why = "End-of-RIB without afi/safi";
		if (!afi || !safi)
			return -1;
		snprintf(fam, sizeof(fam), "%s %s", afi, safi);
		return end_paths(c, peer, fam, true);
	}
	u = get(m, "update");
	*why = "update message without \"update\" or \"eor\"";
	if (!u)
		return -1;
	*why = "malformed announce or withdraw";
	if (get(u, "withdraw") && (r = read_routes(c, peer, get(u, "withdraw"), false, NULL)))
		return r;
	if (get(u, "announce") &&
	    (r = read_routes(c, peer, get(u, "announce"), true, get(u, "attribute"))))
		return r;
	return 0;
}
