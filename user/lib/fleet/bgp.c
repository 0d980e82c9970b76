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
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flowbloom/hash.h"
#include "fleet/bgp.h"
#include "fleet/bgp_int.h"
#include "rules/flow.h"
#include "rules/rules.h"
#include "report.h"

/* The tables' hash: SipHash-1-3 (hash.h) under a key drawn per process.
 * What is hashed (peer strings, NLRI and add-path ids, prefixes) is the
 * peers' choice: with an unkeyed hash (FNV-1a, as this was) a peer could
 * send ids or prefixes that all land in one bucket, making every lookup a
 * walk of all its paths (found offline in seconds: FNV's low bits depend
 * on the low bits of its state only). */
static __u64 keyed(const struct fb_bgp *b, const void *p, size_t n)
{
	return fb_siphash(p, (__u32)n, b->hkey, 1, 3);
}

size_t fb_bgp_route_len(const char *nlri, unsigned long *of)
{
	size_t n = strlen(nlri), i = n, j;

	while (i && isdigit((unsigned char)nlri[i - 1]))
		i--;
	if (i == n || i < 2 || nlri[i - 1] != '/' || n - i > 9)
		return n;
	j = --i;
	while (i && isdigit((unsigned char)nlri[i - 1]))
		i--;
	if (i == j || j - i > 9 || i < 6 || memcmp(nlri + i - 6, " part ", 6))
		return n;
	if (of)
		*of = strtoul(nlri + j + 1, NULL, 10);
	return i - 6;
}

static size_t route_hash(const struct fb_bgp *b, const char *peer, const char *family,
			 const char *id, size_t len)
{
	__u64 h[3] = { keyed(b, peer, strlen(peer)), keyed(b, family, strlen(family)),
		       keyed(b, id, len) };

	return keyed(b, h, sizeof(h)) & (b->nbuckets - 1);
}

/* A path's bucket is its route's: the parts of a route of several keys
 * ("ID part I/N") lie beside ID, where fb_bgp_route_paths() finds them. */
static size_t path_hash(const struct fb_bgp *b, const char *peer, const char *family,
			const char *nlri)
{
	return route_hash(b, peer, family, nlri, fb_bgp_route_len(nlri, NULL));
}

struct fb_bgp_path *fb_bgp_route_paths(const struct fb_bgp *b, const char *peer, const char *family,
				       const char *id)
{
	return b->paths[route_hash(b, peer, family, id, strlen(id))];
}

static size_t rule_hash(const struct fb_bgp *b, const struct fb_key *k)
{
	return keyed(b, k, sizeof(*k)) & (b->nbuckets - 1);
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

/* ------------------------------------------------------ applying a line */

int fb_bgp_touch(struct fb_bgp_ctx *c, struct fb_bgp_rule *r)
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

struct fb_bgp_rule *fb_bgp_rule_get(struct fb_bgp *b, const struct fb_key *k)
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

/* Forget path *pp (its rule's count is the caller's). */
static void path_forget(struct fb_bgp *b, struct fb_bgp_path **pp)
{
	struct fb_bgp_path *p = *pp;

	b->changed = true;
	fb_bgp_stale_clear(b, p);
	*pp = p->next;
	*p->rprev = p->rnext;
	if (p->rnext)
		p->rnext->rprev = p->rprev;
	free(p->peer);
	free(p);
	b->npaths--;
}

static int path_end(struct fb_bgp_ctx *c, struct fb_bgp_path **pp)
{
	struct fb_bgp_rule *r = find_rule(c->b, &(*pp)->key);

	path_forget(c->b, pp);
	if (r) {
		r->refs--;
		return fb_bgp_touch(c, r);
	}
	return 0;
}

int fb_bgp_apply_op(struct fb_bgp_ctx *c, const struct fb_bgp_op *o)
{
	struct fb_bgp *b = c->b;
	struct fb_bgp_path **pp = find_path(b, o->peer, o->family, o->nlri), *p;
	struct fb_bgp_rule *r;
	size_t lp, lf, ln;

	if (*pp) {
		if (o->announce && !memcmp(&(*pp)->key, &o->key, sizeof(o->key))) {
			if (o->stale)
				fb_bgp_mark_stale(b, *pp);
			else
				fb_bgp_stale_clear(b, *pp); /* announced again: the same path */
			return 0;
		}
		if (path_end(c, pp))
			return -1;
	}
	if (!o->announce)
		return 0;
	if (b->npaths >= b->nbuckets && grow(b))
		return -1;
	r = fb_bgp_rule_get(b, &o->key);
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
	p->rnext = r->paths;
	if (r->paths)
		r->paths->rprev = &p->rnext;
	p->rprev = &r->paths;
	r->paths = p;
	b->npaths++;
	b->changed = true;
	if (o->stale)
		fb_bgp_mark_stale(b, p);
	r->refs++;
	return fb_bgp_touch(c, r);
}

long fb_bgp_route_end(struct fb_bgp_ctx *c, const char *peer, const char *family, const char *nlri)
{
	struct fb_bgp *b = c->b;
	size_t l = fb_bgp_route_len(nlri, NULL);
	struct fb_bgp_path **pp = &b->paths[route_hash(b, peer, family, nlri, l)];
	long n = 0;

	while (*pp) {
		const struct fb_bgp_path *q = *pp;

		if (!strcmp(q->peer, peer) && !strcmp(q->family, family) &&
		    fb_bgp_route_len(q->nlri, NULL) == l && !strncmp(q->nlri, nlri, l)) {
			if (path_end(c, pp))
				return -1;
			n++;
		} else {
			pp = &(*pp)->next;
		}
	}
	return n;
}

int fb_bgp_push_key(struct fb_key **arr, size_t *n, size_t *cap, const struct fb_key *k)
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
static int outcome(struct fb_bgp *b, struct fb_bgp_ctx *c)
{
	size_t i;
	int err = 0;

	b->nadd = b->ndel = 0;
	for (i = 0; i < c->ntouched; i++) {
		struct fb_bgp_rule *r = c->touched[i];

		r->touched = false;
		if (r->refs && !r->in_filter)
			err |= fb_bgp_push_key(&b->add, &b->nadd, &b->cap_add, &r->key);
		else if (!r->refs && r->in_filter)
			err |= fb_bgp_push_key(&b->del, &b->ndel, &b->cap_del, &r->key);
		else if (!r->refs)
			rule_drop(b, r); /* added and ended within the line */
	}
	return err;
}

void fb_bgp_ctx_free(struct fb_bgp_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nops; i++)
		free(c->ops[i].peer);
	free(c->ops);
	free(c->touched);
}

/* Exactly one JSON value in line[0..n), nothing after it but blanks:
 * the value, or NULL with why. */
static json_object *one_message(const char *line, size_t n, char *why, size_t len)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	json_object *msg;
	size_t end;

	/* json-c's memory for small containers (bgpmsg.c). */
	if (fb_bgp_containers(line, n, FB_BGP_MAX_CONTAINERS) > FB_BGP_MAX_CONTAINERS) {
		snprintf(why, len,
			 "over %u JSON objects and arrays (ExaBGP prints fewer for "
			 "any BGP message)",
			 FB_BGP_MAX_CONTAINERS);
		return NULL;
	}
	tok = json_tokener_new_ex(FB_BGP_MAX_DEPTH);
	if (!tok) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	/* JSON as ExaBGP writes it: no comment, no trailing comma (what
	 * follows the message is looked at below). */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
	msg = json_tokener_parse_ex(tok, line, (int)n);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!msg && jerr == json_tokener_success) {
		/* json-c's way of saying an allocation failed. */
		snprintf(why, len, "out of memory");
		return NULL;
	}
	if (!msg || jerr != json_tokener_success) {
		snprintf(why, len, "not JSON (%s)",
			 jerr == json_tokener_continue ? "incomplete"
						       : json_tokener_error_desc(jerr));
		json_object_put(msg);
		return NULL;
	}
	while (end < n && isspace((unsigned char)line[end]))
		end++;
	if (end < n) {
		/* {A}{B} or {A} garbage: applying A alone would drop the
		 * rest unseen. */
		snprintf(why, len, "%s after the JSON message at byte %zu",
			 line[end] == '{' ? "another message" : "garbage", end + 1);
		json_object_put(msg);
		return NULL;
	}
	/* A member given twice: json-c keeps the last (bgpmsg.c). */
	if (fb_bgp_members_held(msg) != fb_bgp_members(line, n)) {
		snprintf(why, len, "a name given twice in one JSON object");
		json_object_put(msg);
		return NULL;
	}
	return msg;
}

int fb_bgp_line(struct fb_bgp *b, const char *line, size_t n, size_t lineno)
{
	struct fb_bgp_ctx c = { .b = b, .lineno = lineno };
	json_object *msg;
	const char *why = NULL;
	char jwhy[128];
	size_t i;
	int r = 0;

	b->nadd = b->ndel = 0;
	b->changed = b->stale_changed = false;
	b->lineno = lineno;
	b->talker = FB_BGP_NO_PEER; /* its peer's once read (fb_bgp_read_message) */
	if (memchr(line, 0, n)) {
		fb_bgp_note(b, FB_BGP_SKIPPED, lineno, "NUL byte in the line; line skipped");
		return -1;
	}
	while (n && isspace((unsigned char)line[n - 1]))
		n--;
	if (!n)
		return 0;
	if (n > INT_MAX) {
		fb_bgp_note(b, FB_BGP_SKIPPED, lineno, "line too long; line skipped");
		return -1;
	}
	msg = one_message(line, n, jwhy, sizeof(jwhy));
	if (!msg) {
		fb_bgp_note(b, FB_BGP_SKIPPED, lineno, "%s; line skipped", jwhy);
		return -1;
	}
	if (!json_object_is_type(msg, json_type_object)) {
		fb_bgp_note(b, FB_BGP_SKIPPED, lineno, "not a JSON object; line skipped");
		json_object_put(msg);
		return -1;
	}
	r = fb_bgp_read_message(&c, msg, &why);
	json_object_put(msg);
	if (r) {
		if (r == -2 || c.oom)
			fb_bgp_note(b, FB_BGP_SAID, lineno, "out of memory; line skipped");
		else
			fb_bgp_note(b, FB_BGP_SKIPPED, lineno, "%s; line skipped", why);
		fb_bgp_ctx_free(&c);
		return -1;
	}
	/* Applied in the message's order: withdrawals, then announcements. */
	for (i = 0; i < c.nops && !r; i++)
		r = fb_bgp_apply_op(&c, &c.ops[i]);
	if (r || outcome(b, &c)) {
		/* Out of memory half way: the table is consistent (each op is
		 * whole), the outcome of what was done is still returned. */
		fb_bgp_note(b, FB_BGP_SAID, lineno, "out of memory; the rest of the line skipped");
	}
	fb_bgp_ctx_free(&c);
	return 0;
}

/* One path of a refused route forgotten: its rule, unless it is the
 * refused one (the caller's) or another path holds it, leaves the line's
 * additions (dropped, counted in *gone) or, in the filter from before,
 * becomes a deletion. */
static void part_forget(struct fb_bgp *b, struct fb_bgp_path **pp,
			const struct fb_bgp_rule *refused, size_t *gone)
{
	struct fb_bgp_rule *r = find_rule(b, &(*pp)->key);

	path_forget(b, pp);
	if (!r || !r->refs || --r->refs || r == refused)
		return;
	if (!r->in_filter) {
		rule_drop(b, r);
		(*gone)++;
	} else if (fb_bgp_push_key(&b->del, &b->ndel, &b->cap_del, &r->key)) {
		fb_bgp_note(b, FB_BGP_SAID, b->lineno, "out of memory listing rules to delete");
	}
}

/* Refuse the route path p is part of (p itself included): every path of
 * its peer and family whose NLRI is the route's id, or the id with " part
 * I/N". They share p's bucket (path_hash): one chain, not the table. */
static void route_refuse(struct fb_bgp *b, struct fb_bgp_path *p, const struct fb_bgp_rule *refused,
			 const char *why, size_t *gone)
{
	size_t l = fb_bgp_route_len(p->nlri, NULL);
	struct fb_bgp_path **head = &b->paths[path_hash(b, p->peer, p->family, p->nlri)], **pp;

	for (pp = head; *pp;) {
		struct fb_bgp_path *q = *pp;

		if (q != p && !strcmp(q->peer, p->peer) && !strcmp(q->family, p->family) &&
		    fb_bgp_route_len(q->nlri, NULL) == l && !strncmp(q->nlri, p->nlri, l))
			part_forget(b, pp, refused, gone);
		else
			pp = &q->next;
	}
	if (why) {
		/* In the window of the peer it names (a refresh's refusal
		 * has no line, a line's route is its peer's). */
		unsigned talker = b->talker;

		b->talker = fb_bgp_talker(b, p->peer);
		fb_bgp_note(b, FB_BGP_REFUSED, b->lineno, "'%s' from %s: %s; not applied",
			    fb_quote_len(p->nlri, l), fb_quote(p->peer), why);
		b->talker = talker;
	}
	for (pp = head; *pp != p; pp = &(*pp)->next)
		;
	part_forget(b, pp, refused, gone);
}

size_t fb_bgp_refused(struct fb_bgp *b, const struct fb_key *k, const char *why, size_t *routes)
{
	struct fb_bgp_rule *r = find_rule(b, k);
	size_t gone = 0, nroutes = 0, ndel = b->ndel;
	bool held;

	if (routes)
		*routes = 0;
	/* In the filter with no path left: its deletion is in del already
	 * (its route was refused with another part). */
	if (!r || (r->in_filter && !r->refs))
		return 0;
	/* In the filter, held: a refresh the filter refused (a rule with a
	 * lifetime). Its copies would end while we counted it held: it goes
	 * as a new rule refused does, deleted with its route's other parts. */
	held = r->in_filter;
	r->in_filter = false;
	/* Its paths through its own chain, not a walk of every path (a peer
	 * whose routes the filter refuses, one after another, or a replaced
	 * filter refusing many rules at once, made each refusal cost the
	 * whole table). Each path's whole route goes, the path with it. */
	while (r->paths) {
		route_refuse(b, r->paths, r, why, &gone);
		nroutes++;
	}
	rule_drop(b, r);
	if (held) {
		/* The parts that became deletions leave the refresh's batch. */
		gone += b->ndel - ndel;
		if (fb_bgp_push_key(&b->del, &b->ndel, &b->cap_del, k))
			fb_bgp_note(b, FB_BGP_SAID, b->lineno,
				    "out of memory listing rules to delete");
	}
	if (routes)
		*routes = nroutes;
	return gone;
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
			r->paths = NULL;
			if (r->in_filter &&
			    fb_bgp_push_key(&b->del, &b->ndel, &b->cap_del, &r->key))
				fb_bgp_note(b, FB_BGP_SAID, 0,
					    "out of memory listing rules to delete");
		}
	}
	b->npaths = 0;
	fb_bgp_stale_free(b);
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

size_t fb_bgp_lost(struct fb_bgp *b, struct fb_key *keys, size_t n)
{
	size_t i, j, nd;
	bool dropped = false;

	for (i = j = 0; i < n; i++) {
		struct fb_bgp_rule *r = find_rule(b, &keys[i]);

		if (!r)
			continue;
		r->in_filter = false;
		if (r->refs) {
			keys[j++] = keys[i];
		} else {
			rule_drop(b, r);
			dropped = true;
		}
	}
	/* A rule no path holds is in del (its last path ended this line):
	 * there is nothing of it to delete any more. */
	for (i = nd = 0; dropped && i < b->ndel; i++)
		if (find_rule(b, &b->del[i]))
			b->del[nd++] = b->del[i];
	if (dropped)
		b->ndel = nd;
	return j;
}

void fb_bgp_added(struct fb_bgp *b, const struct fb_key *keys, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct fb_bgp_rule *r = find_rule(b, &keys[i]);

		if (r)
			r->in_filter = true;
	}
}
