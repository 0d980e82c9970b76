// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ExaBGP JSON to rules (see bgp.h). A line is handled in two steps: first
 * the whole message is read into a list of path operations (announce with
 * the rule it carries, or end), checking its structure; a malformed message
 * is refused whole. Then the operations are applied to the path table and
 * the rules' reference counts, and the rules whose count left or reached 0
 * become the line's additions and deletions.
 *
 * The JSON shapes (ExaBGP 4.2, `encoder json`, api `receive { parsed;
 * update; }` and `neighbor-changes`), one object per line:
 *   {"type": "update", "neighbor": {"address": {"peer": P, ...},
 *     "message": {"update": {"attribute": {"community": [[A, V], ...],
 *       "extended-community": [{"value": N, "string": S}, ...]},
 *      "announce": {"ipv4 unicast": {NEXTHOP: [{"nlri": "PFX"}, ...]},
 *                   "ipv4 flow": {"no-nexthop": [{COMPONENT: [...], ...,
 *                                                 "string": S}]}},
 *      "withdraw": {"ipv4 unicast": [{"nlri": "PFX"}], "ipv4 flow": [...]}}}}}
 *   {"type": "update", "neighbor": {..., "message": {"eor": {"afi": "ipv4",
 *     "safi": "unicast"}}}}
 *   {"type": "state", "neighbor": {..., "state": "up" | "down" | "connected"}}
 * NLRIs of add-path sessions carry "path-information".
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "bgp.h"
#include "flow.h"

struct fb_bgp_path {
	struct fb_bgp_path *next;
	char *peer, *family, *nlri; /* one allocation, peer first */
	struct fb_key key;
	bool stale; /* held over a session restart, until End-of-RIB */
};

struct fb_bgp_rule {
	struct fb_bgp_rule *next;
	struct fb_key key;
	unsigned refs;	/* paths holding it */
	bool in_filter; /* added to the filter by us */
	bool touched;	/* in this line's list */
};

/* One path operation of a message. */
struct op {
	bool announce; /* with key; else the path ends */
	char *peer, *family, *nlri;
	struct fb_key key;
};

struct line_ctx {
	struct fb_bgp *b;
	size_t lineno;
	struct op *ops;
	size_t nops, cap;
	struct fb_bgp_rule **touched;
	size_t ntouched, cap_touched;
	bool oom;
};

static void note(struct fb_bgp *b, size_t lineno, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct fb_bgp *b, size_t lineno, const char *fmt, ...)
{
	char msg[1024];
	int n = 0;
	va_list ap;

	if (lineno)
		n = snprintf(msg, sizeof(msg), "%s:%zu: ", b->source ? b->source : "<stdin>",
			     lineno);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	if (b->note)
		b->note(b->ctx, msg);
	else
		fprintf(stderr, "flowbloom: bgp: %s\n", msg);
}

/* FNV-1a: the tables hold at most a few hundred thousand routes from
 * trusted peers; no need for a keyed hash. */
static __u64 fnv(__u64 h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

static size_t path_hash(const struct fb_bgp *b, const char *peer, const char *family,
			const char *nlri)
{
	__u64 h = 0xcbf29ce484222325ULL;

	h = fnv(h, peer, strlen(peer) + 1);
	h = fnv(h, family, strlen(family) + 1);
	h = fnv(h, nlri, strlen(nlri));
	return h & (b->nbuckets - 1);
}

static size_t rule_hash(const struct fb_bgp *b, const struct fb_key *k)
{
	return fnv(0xcbf29ce484222325ULL, k, sizeof(*k)) & (b->nbuckets - 1);
}

static int grow(struct fb_bgp *b)
{
	size_t i, n = b->nbuckets * 2;
	struct fb_bgp_path **np = calloc(n, sizeof(*np));
	struct fb_bgp_rule **nr = calloc(n, sizeof(*nr));
	size_t old = b->nbuckets;

	if (!np || !nr) {
		free(np);
		free(nr);
		return -1;
	}
	b->nbuckets = n;
	for (i = 0; i < old; i++) {
		while (b->paths[i]) {
			struct fb_bgp_path *p = b->paths[i];
			size_t h = path_hash(b, p->peer, p->family, p->nlri);

			b->paths[i] = p->next;
			p->next = np[h];
			np[h] = p;
		}
		while (b->rules[i]) {
			struct fb_bgp_rule *r = b->rules[i];
			size_t h = rule_hash(b, &r->key);

			b->rules[i] = r->next;
			r->next = nr[h];
			nr[h] = r;
		}
	}
	free(b->paths);
	free(b->rules);
	b->paths = np;
	b->rules = nr;
	return 0;
}

int fb_bgp_init(struct fb_bgp *b, const struct fb_bgp_opts *o)
{
	memset(b, 0, sizeof(*b));
	b->o = *o;
	b->nbuckets = 1024;
	b->paths = calloc(b->nbuckets, sizeof(*b->paths));
	b->rules = calloc(b->nbuckets, sizeof(*b->rules));
	if (!b->paths || !b->rules) {
		free(b->paths);
		free(b->rules);
		return -1;
	}
	return 0;
}

void fb_bgp_free(struct fb_bgp *b)
{
	size_t i;

	for (i = 0; i < b->nbuckets; i++) {
		while (b->paths[i]) {
			struct fb_bgp_path *p = b->paths[i];

			b->paths[i] = p->next;
			free(p->peer);
			free(p);
		}
		while (b->rules[i]) {
			struct fb_bgp_rule *r = b->rules[i];

			b->rules[i] = r->next;
			free(r);
		}
	}
	free(b->paths);
	free(b->rules);
	free(b->add);
	free(b->del);
	memset(b, 0, sizeof(*b));
}

static struct fb_bgp_path **find_path(struct fb_bgp *b, const char *peer, const char *family,
				      const char *nlri)
{
	struct fb_bgp_path **pp = &b->paths[path_hash(b, peer, family, nlri)];

	for (; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->peer, peer) && !strcmp((*pp)->family, family) &&
		    !strcmp((*pp)->nlri, nlri))
			return pp;
	return pp;
}

static struct fb_bgp_rule *find_rule(const struct fb_bgp *b, const struct fb_key *k)
{
	struct fb_bgp_rule *r = b->rules[rule_hash(b, k)];

	for (; r; r = r->next)
		if (!memcmp(&r->key, k, sizeof(*k)))
			return r;
	return NULL;
}

unsigned fb_bgp_refs(const struct fb_bgp *b, const struct fb_key *k)
{
	const struct fb_bgp_rule *r = find_rule(b, k);

	return r ? r->refs : 0;
}

/* ----------------------------------------------------- reading a message */

static int push_op(struct line_ctx *c, bool announce, const char *peer, const char *family,
		   const char *nlri, const struct fb_key *key)
{
	struct op *o;
	size_t lp = strlen(peer) + 1, lf = strlen(family) + 1, ln = strlen(nlri) + 1;

	if (c->nops == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct op *n = realloc(c->ops, cap * sizeof(*n));

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

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

static const char *get_str(json_object *o, const char *k)
{
	json_object *v = get(o, k);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* Rule from FLOW words, parsed as the CLI parses them (the same keys). */
static int rule_from(const char *w0, const char *w1, const char *w2, struct fb_key *k, char *why,
		     size_t len)
{
	char *argv[3] = { (char *)w0, (char *)w1, (char *)w2 };
	int n = w2 ? 3 : 2;

	return fb_flow_parse(n, argv, k, why, len) == n ? 0 : -1;
}

/* "PFX/LEN" of family fam ("ipv4"/"ipv6"): checks the length against the
 * minimum. 0 ok, -1 with why. */
static int check_prefix(struct fb_bgp *b, const char *pfx, bool v6, char *why, size_t len)
{
	const char *slash = strchr(pfx, '/');
	char *end;
	long l;

	if (!slash) {
		snprintf(why, len, "prefix '%s' has no length", pfx);
		return -1;
	}
	errno = 0;
	l = strtol(slash + 1, &end, 10);
	if (errno || *end || l < 0 || l > (v6 ? 128 : 32) || (v6 != !!strchr(pfx, ':'))) {
		snprintf(why, len, "bad %s prefix '%s'", v6 ? "IPv6" : "IPv4", pfx);
		return -1;
	}
	if (l < (v6 ? b->o.min_v6 : b->o.min_v4)) {
		snprintf(why, len, "prefix '%s' is shorter than /%d (--min-length)", pfx,
			 v6 ? b->o.min_v6 : b->o.min_v4);
		return -1;
	}
	return 0;
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
		    (__u32)json_object_get_int64(json_object_array_get_idx(c, 0)) ==
			    b->o.community >> 16 &&
		    (__u32)json_object_get_int64(json_object_array_get_idx(c, 1)) ==
			    (b->o.community & 0xffff))
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

/* The one value of a FlowSpec numeric component, "=V" alone; NULL if it is
 * anything else (a range, several values, a negation). */
static const char *single_value(json_object *v)
{
	const char *s;

	if (!v || !json_object_is_type(v, json_type_array) || json_object_array_length(v) != 1)
		return NULL;
	s = json_object_get_string(json_object_array_get_idx(v, 0));
	if (!s || s[0] != '=' || !s[1] || strchr(s, '&'))
		return NULL;
	return s + 1;
}

/* A prefix component: ["PFX"] (IPv4) or ["PFX/OFFSET"] (IPv6, offset 0 only). */
static int flow_prefix(json_object *v, bool v6, char *out, size_t len)
{
	const char *s, *slash;

	if (!v || !json_object_is_type(v, json_type_array) || json_object_array_length(v) != 1)
		return -1;
	s = json_object_get_string(json_object_array_get_idx(v, 0));
	if (!s || strlen(s) >= len)
		return -1;
	strcpy(out, s);
	if (v6) {
		slash = strrchr(out, '/');
		if (!slash || slash == strchr(out, '/'))
			return 0; /* no offset given */
		if (strcmp(slash, "/0"))
			return -1;
		*strrchr(out, '/') = 0;
	}
	return 0;
}

static bool full_length(const char *pfx, bool v6)
{
	const char *slash = strchr(pfx, '/');

	return slash && atoi(slash + 1) == (v6 ? 128 : 32);
}

/* A FlowSpec NLRI as one flowbloom rule: a lone source or destination
 * prefix, or a complete 5-tuple of host addresses, a protocol and (for
 * protocols with ports) one source and one destination port. 0 with *k,
 * or -1 with why: everything else, which a rule could only approximate. */
static int flow_rule(struct fb_bgp *b, json_object *nlri, bool v6, struct fb_key *k, char *why,
		     size_t len)
{
	char dst[80] = "", src[80] = "", a[96], d[96], protobuf[16];
	const char *proto = NULL, *sport = NULL, *dport = NULL;
	const char *dname = v6 ? "destination-ipv6" : "destination-ipv4";
	const char *sname = v6 ? "source-ipv6" : "source-ipv4";
	const char *pname = v6 ? "next-header" : "protocol";
	int p;

	json_object_object_foreach(nlri, key, val)
	{
		if (!strcmp(key, "string") || !strcmp(key, "next-hop"))
			continue;
		if (!strcmp(key, dname) || !strcmp(key, "destination")) {
			if (flow_prefix(val, v6, dst, sizeof(dst)))
				goto comp;
		} else if (!strcmp(key, sname) || !strcmp(key, "source")) {
			if (flow_prefix(val, v6, src, sizeof(src)))
				goto comp;
		} else if (!strcmp(key, pname) || !strcmp(key, "protocol")) {
			if (!(proto = single_value(val)))
				goto comp;
		} else if (!strcmp(key, "destination-port")) {
			if (!(dport = single_value(val)))
				goto comp;
		} else if (!strcmp(key, "source-port")) {
			if (!(sport = single_value(val)))
				goto comp;
		} else {
			snprintf(why, len, "component '%s' is not supported", key);
			return -1;
		}
		continue;
	comp:
		snprintf(why, len, "component '%s' is not a single value (=V) or prefix", key);
		return -1;
	}
	if ((dst[0] && check_prefix(b, dst, v6, why, len)) ||
	    (src[0] && check_prefix(b, src, v6, why, len)))
		return -1;
	if (!proto && !sport && !dport && !!dst[0] != !!src[0])
		return rule_from(dst[0] ? "dst" : "src", dst[0] ? dst : src, NULL, k, why, len);
	if (!proto || !dst[0] || !src[0] || !full_length(dst, v6) || !full_length(src, v6)) {
		snprintf(why, len,
			 "flowbloom rules are one source or destination prefix, or a 5-tuple "
			 "of host addresses, protocol and ports");
		return -1;
	}
	/* ExaBGP names well-known protocols; ours may spell them alike. */
	p = fb_proto_parse(proto);
	if (p < 0) {
		snprintf(why, len, "protocol '%s' is not known", proto);
		return -1;
	}
	snprintf(protobuf, sizeof(protobuf), "%d", p);
	*strchr(src, '/') = 0;
	*strchr(dst, '/') = 0;
	if (fb_proto_has_ports(p)) {
		if (!sport || !dport) {
			snprintf(why, len, "a %s rule needs one source and one destination port",
				 proto);
			return -1;
		}
		snprintf(a, sizeof(a), v6 ? "[%s]:%s" : "%s:%s", src, sport);
		snprintf(d, sizeof(d), v6 ? "[%s]:%s" : "%s:%s", dst, dport);
	} else {
		if (sport || dport) {
			snprintf(why, len, "protocol %s has no ports", proto);
			return -1;
		}
		snprintf(a, sizeof(a), "%s", src);
		snprintf(d, sizeof(d), "%s", dst);
	}
	return rule_from(protobuf, a, d, k, why, len);
}

/* The path's identity within its peer and family: the NLRI text, with the
 * add-path id. */
static int nlri_id(json_object *n, bool flow, char *out, size_t len)
{
	const char *s = get_str(n, flow ? "string" : "nlri"), *pi = get_str(n, "path-information");

	if (!s)
		return -1;
	snprintf(out, len, "%s%s%s", s, pi ? " path-id " : "", pi ? pi : "");
	return 0;
}

static int family_kind(const char *family, bool *flow, bool *v6)
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

static int read_nlri(struct line_ctx *c, const char *peer, const char *family, json_object *n,
		     bool announce, json_object *attr)
{
	struct fb_bgp *b = c->b;
	char id[1024], why[256];
	const char *other;
	bool flow, v6;
	struct fb_key k;

	family_kind(family, &flow, &v6);
	if (!json_object_is_type(n, json_type_object) || nlri_id(n, flow, id, sizeof(id)))
		return -1;
	if (!announce)
		return push_op(c, false, peer, family, id, NULL) ? -2 : 0;
	if (!flow) {
		const char *pfx = get_str(n, "nlri");

		if (!has_community(b, attr))
			/* Not (or no longer) a blackhole: replaces any path we hold. */
			return push_op(c, false, peer, family, id, NULL) ? -2 : 0;
		if (check_prefix(b, pfx, v6, why, sizeof(why)) ||
		    rule_from(b->o.rtbh_src ? "src" : "dst", pfx, NULL, &k, why, sizeof(why))) {
			note(b, c->lineno, "%s from %s: %s; not applied", pfx, peer, why);
			return push_op(c, false, peer, family, id, NULL) ? -2 : 0;
		}
		return push_op(c, true, peer, family, id, &k) ? -2 : 0;
	}
	if (!has_discard(attr, &other)) {
		note(b, c->lineno,
		     "'%s' from %s: action %s%s%s is not supported (only discard, "
		     "traffic-rate 0); not applied",
		     id, peer, other ? "'" : "", other ? other : "none", other ? "'" : "");
		return push_op(c, false, peer, family, id, NULL) ? -2 : 0;
	}
	if (flow_rule(b, n, v6, &k, why, sizeof(why))) {
		note(b, c->lineno, "'%s' from %s: %s; not applied", id, peer, why);
		return push_op(c, false, peer, family, id, NULL) ? -2 : 0;
	}
	return push_op(c, true, peer, family, id, &k) ? -2 : 0;
}

/* announce {FAMILY: {NEXTHOP: [NLRI...]}} or withdraw {FAMILY: [NLRI...]}. */
static int read_routes(struct line_ctx *c, const char *peer, json_object *routes, bool announce,
		       json_object *attr)
{
	bool flow, v6;
	size_t i;

	if (!json_object_is_type(routes, json_type_object))
		return -1;
	json_object_object_foreach(routes, family, val)
	{
		if (family_kind(family, &flow, &v6)) {
			note(c->b, c->lineno, "family '%s' from %s is not supported; ignored",
			     family, peer);
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
static int end_paths(struct line_ctx *c, const char *peer, const char *family, bool only_stale)
{
	struct fb_bgp *b = c->b;
	size_t i;

	for (i = 0; i < b->nbuckets; i++) {
		struct fb_bgp_path *p;

		for (p = b->paths[i]; p; p = p->next)
			if (!strcmp(p->peer, peer) && (!family || !strcmp(p->family, family)) &&
			    (!only_stale || p->stale) &&
			    push_op(c, false, p->peer, p->family, p->nlri, NULL))
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
static int read_message(struct line_ctx *c, json_object *msg, const char **why)
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
	if (!peer)
		return -1;
	if (!strcmp(type, "state")) {
		const char *st = get_str(nb, "state");

		*why = "state message without a state";
		if (!st)
			return -1;
		if (!strcmp(st, "down")) {
			/* ExaBGP retries a down session every few seconds:
			 * say it only when routes are at stake. */
			if (peer_paths(b, peer))
				note(b, c->lineno, "session with %s down: %zu routes %s", peer,
				     peer_paths(b, peer), b->o.flush_on_down ? "deleted" : "kept");
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
						p->stale = true;
			note(b, c->lineno, "session with %s up", peer);
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

/* ------------------------------------------------------ applying a line */

static int touch(struct line_ctx *c, struct fb_bgp_rule *r)
{
	if (r->touched)
		return 0;
	if (c->ntouched == c->cap_touched) {
		size_t cap = c->cap_touched ? 2 * c->cap_touched : 16;
		struct fb_bgp_rule **n = realloc(c->touched, cap * sizeof(*n));

		if (!n)
			return -1;
		c->touched = n;
		c->cap_touched = cap;
	}
	r->touched = true;
	c->touched[c->ntouched++] = r;
	return 0;
}

static struct fb_bgp_rule *rule_get(struct fb_bgp *b, const struct fb_key *k)
{
	struct fb_bgp_rule *r = find_rule(b, k);
	size_t h;

	if (r)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->key = *k;
	h = rule_hash(b, k);
	r->next = b->rules[h];
	b->rules[h] = r;
	b->nrules++;
	return r;
}

static void rule_drop(struct fb_bgp *b, struct fb_bgp_rule *r)
{
	struct fb_bgp_rule **rp = &b->rules[rule_hash(b, &r->key)];

	for (; *rp; rp = &(*rp)->next)
		if (*rp == r) {
			*rp = r->next;
			free(r);
			b->nrules--;
			return;
		}
}

static int path_end(struct line_ctx *c, struct fb_bgp_path **pp)
{
	struct fb_bgp_path *p = *pp;
	struct fb_bgp_rule *r = find_rule(c->b, &p->key);

	*pp = p->next;
	free(p->peer);
	free(p);
	c->b->npaths--;
	c->b->changed = true;
	if (r) {
		r->refs--;
		return touch(c, r);
	}
	return 0;
}

static int apply_op(struct line_ctx *c, const struct op *o)
{
	struct fb_bgp *b = c->b;
	struct fb_bgp_path **pp = find_path(b, o->peer, o->family, o->nlri), *p;
	struct fb_bgp_rule *r;
	size_t lp, lf, ln;

	if (*pp) {
		if (o->announce && !memcmp(&(*pp)->key, &o->key, sizeof(o->key))) {
			(*pp)->stale = false; /* announced again: the same path */
			return 0;
		}
		if (path_end(c, pp))
			return -1;
	}
	if (!o->announce)
		return 0;
	if (b->npaths >= b->nbuckets && grow(b))
		return -1;
	r = rule_get(b, &o->key);
	p = calloc(1, sizeof(*p));
	lp = strlen(o->peer) + 1;
	lf = strlen(o->family) + 1;
	ln = strlen(o->nlri) + 1;
	if (!r || !p || !(p->peer = malloc(lp + lf + ln))) {
		free(p);
		return -1;
	}
	p->family = p->peer + lp;
	p->nlri = p->family + lf;
	memcpy(p->peer, o->peer, lp);
	memcpy(p->family, o->family, lf);
	memcpy(p->nlri, o->nlri, ln);
	p->key = o->key;
	pp = &b->paths[path_hash(b, p->peer, p->family, p->nlri)];
	p->next = *pp;
	*pp = p;
	b->npaths++;
	b->changed = true;
	r->refs++;
	return touch(c, r);
}

static int push_key(struct fb_key **arr, size_t *n, size_t *cap, const struct fb_key *k)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 16;
		struct fb_key *a = realloc(*arr, nc * sizeof(*a));

		if (!a)
			return -1;
		*arr = a;
		*cap = nc;
	}
	(*arr)[(*n)++] = *k;
	return 0;
}

/* The touched rules that must enter or leave the filter. */
static int outcome(struct fb_bgp *b, struct line_ctx *c)
{
	size_t i;
	int err = 0;

	b->nadd = b->ndel = 0;
	for (i = 0; i < c->ntouched; i++) {
		struct fb_bgp_rule *r = c->touched[i];

		r->touched = false;
		if (r->refs && !r->in_filter)
			err |= push_key(&b->add, &b->nadd, &b->cap_add, &r->key);
		else if (!r->refs && r->in_filter)
			err |= push_key(&b->del, &b->ndel, &b->cap_del, &r->key);
		else if (!r->refs)
			rule_drop(b, r); /* added and ended within the line */
	}
	return err;
}

static void ctx_free(struct line_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nops; i++)
		free(c->ops[i].peer);
	free(c->ops);
	free(c->touched);
}

int fb_bgp_line(struct fb_bgp *b, const char *line, size_t lineno)
{
	struct line_ctx c = { .b = b, .lineno = lineno };
	enum json_tokener_error jerr;
	json_object *msg;
	const char *why = NULL;
	size_t i, n = strlen(line);
	int r = 0;

	b->nadd = b->ndel = 0;
	b->changed = false;
	while (n && isspace((unsigned char)line[n - 1]))
		n--;
	if (!n)
		return 0;
	msg = json_tokener_parse_verbose(line, &jerr);
	if (!msg) {
		note(b, lineno, "not JSON (%s); line skipped", json_tokener_error_desc(jerr));
		return -1;
	}
	if (!json_object_is_type(msg, json_type_object)) {
		note(b, lineno, "not a JSON object; line skipped");
		json_object_put(msg);
		return -1;
	}
	r = read_message(&c, msg, &why);
	json_object_put(msg);
	if (r) {
		if (r == -2 || c.oom)
			note(b, lineno, "out of memory; line skipped");
		else
			note(b, lineno, "%s; line skipped", why);
		ctx_free(&c);
		return -1;
	}
	/* Applied in the message's order: withdrawals, then announcements. */
	for (i = 0; i < c.nops && !r; i++)
		r = apply_op(&c, &c.ops[i]);
	if (r || outcome(b, &c)) {
		/* Out of memory half way: the table is consistent (each op is
		 * whole), the outcome of what was done is still returned. */
		note(b, lineno, "out of memory; the rest of the line skipped");
	}
	ctx_free(&c);
	return 0;
}

void fb_bgp_refused(struct fb_bgp *b, const struct fb_key *k)
{
	struct fb_bgp_rule *r = find_rule(b, k);
	size_t i;

	if (!r || r->in_filter)
		return;
	for (i = 0; i < b->nbuckets; i++) {
		struct fb_bgp_path **pp = &b->paths[i];

		while (*pp) {
			if (!memcmp(&(*pp)->key, k, sizeof(*k))) {
				struct fb_bgp_path *p = *pp;

				b->changed = true;
				*pp = p->next;
				free(p->peer);
				free(p);
				b->npaths--;
			} else {
				pp = &(*pp)->next;
			}
		}
	}
	rule_drop(b, r);
}

void fb_bgp_done(struct fb_bgp *b)
{
	size_t i;

	for (i = 0; i < b->nadd; i++) {
		struct fb_bgp_rule *r = find_rule(b, &b->add[i]);

		if (r)
			r->in_filter = true;
	}
	for (i = 0; i < b->ndel; i++) {
		struct fb_bgp_rule *r = find_rule(b, &b->del[i]);

		if (r && !r->refs)
			rule_drop(b, r);
	}
	b->nadd = b->ndel = 0;
}

void fb_bgp_remove_all(struct fb_bgp *b)
{
	size_t i;

	b->nadd = b->ndel = 0;
	b->changed = b->npaths > 0;
	for (i = 0; i < b->nbuckets; i++) {
		struct fb_bgp_rule *r;

		while (b->paths[i]) {
			struct fb_bgp_path *p = b->paths[i];

			b->paths[i] = p->next;
			free(p->peer);
			free(p);
		}
		for (r = b->rules[i]; r; r = r->next) {
			r->refs = 0;
			if (r->in_filter && push_key(&b->del, &b->ndel, &b->cap_del, &r->key))
				note(b, 0, "out of memory listing rules to delete");
		}
	}
	b->npaths = 0;
}

size_t fb_bgp_rules(const struct fb_bgp *b, struct fb_key **out)
{
	size_t i, n = 0;
	struct fb_bgp_rule *r;

	*out = malloc((b->nrules ? b->nrules : 1) * sizeof(**out));
	if (!*out)
		return 0;
	for (i = 0; i < b->nbuckets; i++)
		for (r = b->rules[i]; r; r = r->next)
			if (r->in_filter)
				(*out)[n++] = r->key;
	return n;
}

/* ---------------------------------------------------------- state file */

int fb_bgp_save(const struct fb_bgp *b, FILE *fp)
{
	char text[FB_FLOW_STR];
	struct fb_bgp_path *p;
	size_t i;

	fprintf(fp, "# flowbloom bgp state: peer, family, NLRI, rule (one path a line)\n");
	for (i = 0; i < b->nbuckets; i++)
		for (p = b->paths[i]; p; p = p->next) {
			fb_flow_format(&p->key, text, sizeof(text));
			fprintf(fp, "%s\t%s\t%s\t%s\n", p->peer, p->family, p->nlri, text);
		}
	return ferror(fp) ? -1 : 0;
}

int fb_bgp_load(struct fb_bgp *b, FILE *fp, const char *name)
{
	struct line_ctx c = { .b = b };
	char *line = NULL, *f[4], *save, err[256];
	size_t cap = 0, lineno = 0, i;
	struct fb_key k;
	int blank, rc = -1;

	while (getline(&line, &cap, fp) > 0) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		f[0] = strtok_r(line, "\t", &save);
		for (i = 1; i < 4; i++)
			f[i] = strtok_r(NULL, "\t", &save);
		if (!f[3] || strtok_r(NULL, "\t", &save)) {
			fprintf(stderr, "flowbloom: %s:%zu: want 4 fields separated by tabs\n",
				name, lineno);
			goto out;
		}
		if (fb_flow_parse_line(f[3], &k, &blank, err, sizeof(err)) || blank) {
			fprintf(stderr, "flowbloom: %s:%zu: %s\n", name, lineno,
				blank ? "no rule" : err);
			goto out;
		}
		if (push_op(&c, true, f[0], f[1], f[2], &k))
			goto out;
	}
	for (i = 0; i < c.nops; i++)
		if (apply_op(&c, &c.ops[i]))
			goto out;
	for (i = 0; i < c.ntouched; i++) {
		c.touched[i]->touched = false;
		c.touched[i]->in_filter = true;
	}
	rc = 0;
out:
	if (rc && c.oom)
		fprintf(stderr, "flowbloom: %s: out of memory\n", name);
	free(line);
	ctx_free(&c);
	return rc;
}
