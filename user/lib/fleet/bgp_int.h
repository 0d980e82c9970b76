/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Library-internal: what bgp.c (paths, rules, reference counts),
 * bgpstate.c (the state file), bgpmsg.c (reading one ExaBGP JSON message
 * into path operations), bgpflow.c (a FlowSpec NLRI's rule) and bgpid.c
 * (a route's identity) share.
 */
#ifndef FLOWBLOOM_USER_BGP_INT_H
#define FLOWBLOOM_USER_BGP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>
#include "fleet/bgp.h"

struct fb_bgp_path {
	struct fb_bgp_path *next;
	char *peer, *family, *nlri; /* one allocation, peer first */
	struct fb_key key;
	/* The chain of paths holding the same rule (fb_bgp_rule.paths):
	 * a refused rule finds its paths there, not by a walk of the table. */
	struct fb_bgp_path *rnext, **rprev;
	bool stale; /* held over a session restart, until End-of-RIB */
};

struct fb_bgp_rule {
	struct fb_bgp_rule *next;
	struct fb_key key;
	struct fb_bgp_path *paths; /* those holding it, refs of them */
	unsigned refs;		   /* paths holding it */
	bool in_filter;		   /* added to the filter by us */
	bool touched;		   /* in this line's list */
};

/* One path operation of a message. */
struct fb_bgp_op {
	bool announce; /* with key; else the path ends */
	bool stale;    /* announced path held stale (the state file's "# stale") */
	char *peer, *family, *nlri;
	struct fb_key key;
};

struct fb_bgp_ctx {
	struct fb_bgp *b;
	size_t lineno;
	struct fb_bgp_op *ops;
	size_t nops, cap;
	struct fb_bgp_rule **touched;
	size_t ntouched, cap_touched;
	size_t grow; /* paths the message's announcements start (--max-paths) */
	bool oom;
};

/* bgpops.c, below the readers and the path table (and fb_bgp_note,
 * bgp.h): a path operation onto the line's list (0, or -1 out of memory), the families (fb_bgp_family) and
 * the limits (fb_bgp_admit, bgp.h). */
int fb_bgp_push_op(struct fb_bgp_ctx *c, bool announce, const char *peer, const char *family,
		   const char *nlri, const struct fb_key *key);
/* Applying path operations (bgp.c), for the state file (bgpstate.c):
 * mark a rule touched by this line, the rule of key k (made if new), one
 * operation on the path table, a key onto a growing array, and freeing a
 * context. The int ones: 0, or -1 out of memory. */
int fb_bgp_touch(struct fb_bgp_ctx *c, struct fb_bgp_rule *r);
struct fb_bgp_rule *fb_bgp_rule_get(struct fb_bgp *b, const struct fb_key *k);
int fb_bgp_apply_op(struct fb_bgp_ctx *c, const struct fb_bgp_op *o);
int fb_bgp_push_key(struct fb_key **arr, size_t *n, size_t *cap, const struct fb_key *k);
/* End every path of the route nlri is one of (its id, or the id with
 * " part I/N") of peer and family, as a withdrawal does (their rules
 * touched): how many, or -1 out of memory. */
long fb_bgp_route_end(struct fb_bgp_ctx *c, const char *peer, const char *family, const char *nlri);
void fb_bgp_ctx_free(struct fb_bgp_ctx *c);
/* bgpstale.c: mark path p stale (held from before a session came up). */
void fb_bgp_mark_stale(struct fb_bgp *b, struct fb_bgp_path *p);
/* bgpstale.c: path p stale no longer (announced again, or ended); every
 * count freed. */
void fb_bgp_stale_clear(struct fb_bgp *b, struct fb_bgp_path *p);
void fb_bgp_stale_free(struct fb_bgp *b);
/* bgp.c: the length of nlri without a trailing " part I/N" (one key of a
 * route of several, bgpmsg.c), with N in *of if asked; strlen(nlri) for
 * any other path. */
size_t fb_bgp_route_len(const char *nlri, unsigned long *of);
/* The bucket holding route id of peer and family and its parts ("ID part
 * I/N"): a chain to filter by name, not the whole table. */
struct fb_bgp_path *fb_bgp_route_paths(const struct fb_bgp *b, const char *peer, const char *family,
				       const char *id);
/* "ipv4 unicast", "ipv6 unicast", "ipv4 flow", "ipv6 flow": 0 with what
 * it is; -1 for any other family. */
int fb_bgp_family(const char *family, bool *flow, bool *v6);
/* bgpflow.c: "PFX/LEN" as a route of family v6 or not writes it (the
 * length limits apply to the rule it makes: fb_bgp_admit): 0, or -1 with
 * why. */
int fb_bgp_check_prefix(const char *pfx, bool v6, char *why, size_t len);
/* bgpflow.c: FlowSpec NLRI nlri (a JSON object of components) as the keys
 * of one rule of its shape, keys[0..*nk) (at most FB_RULE_KEYS_MAX): 0, or
 * -1 with why (a component no rule holds exactly). */
int fb_bgp_flow_rule(json_object *nlri, bool v6, struct fb_key *keys, size_t *nk, char *why,
		     size_t len);
/* bgpid.c: the length of FlowSpec string s (ExaBGP's "string" member)
 * without a trailing " next-hop ADDR" (an announcement's next hop, which a
 * withdrawal does not print): the route's id. */
size_t fb_bgp_flow_string_len(const char *s);
/* bgpid.c: unicast prefix pfx[0..n) of family v6 or not ("ADDR/LEN") as
 * its route's id: its host bits cleared, the address as inet_ntop()
 * writes it. 0, or -1 if it is no such prefix. */
int fb_bgp_prefix_id(const char *pfx, size_t n, bool v6, char *out, size_t len);
/* bgpid.c: id of a path of family, read from a state file written before
 * ids were made as they are now (no "state 2" header), made so: a FlowSpec
 * id without the next hop its announcement printed, a unicast one's prefix
 * without host bits. Returns id if it is so already (or the new one would
 * not fit), else buf[0..len) holding it. */
const char *fb_bgp_old_id(const char *family, const char *id, char *buf, size_t len);
/* bgpmsg.c: read the message into c->ops: 0, -1 malformed (why set), -2
 * no memory. */
int fb_bgp_read_message(struct fb_bgp_ctx *c, json_object *msg, const char **why);
/* bgpmsg.c: the most objects and arrays ExaBGP prints for one BGP message
 * (why there), and the deepest nesting json-c is let parse. */
#define FB_BGP_MAX_CONTAINERS (1U << 18)
#define FB_BGP_MAX_DEPTH 32
/* The objects and arrays in line[0..n) ('{' and '[' outside strings),
 * counted up to max + 1 at most. */
size_t fb_bgp_containers(const char *line, size_t n, size_t max);
/* The members of objects line[0..n) names (JSON that parsed), and those
 * the parsed value v holds: fewer held, a name was given twice in one
 * object (json-c keeps the last). */
size_t fb_bgp_members(const char *line, size_t n);
size_t fb_bgp_members_held(json_object *v);

#endif
