// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_fleet, refusing what a filter's prefix lengths and rule shapes
 * cannot take in one walk of a batch (user/lib/rules/fit.c) against the
 * retry `flowbloom bgp` made before it (one refusal, then the batch
 * tried again: a walk of it per refusal): random lines of blackhole
 * routes (IPv4 and IPv6, /24 to /32 and /48 to /64) and FlowSpec routes
 * of one to several keys (shapes by destination length and port prefix;
 * source or destination prefixes alone), from two peers so rules are
 * shared, some announced again within the line, into tables with a few
 * slots taken. Both sides get the same lines through two fb_bgp tables:
 * the same routes refused in the same order with the same messages, the
 * same batch left in the same order, the same deletions and paths. Also
 * the rules a replaced filter refuses (fb_bgp_lost's batch, no line).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "fleet.h"
#include "packet.h"
#include "rules/fit.h"
#include "rules/rules.h"

#define NB(peer) "\"neighbor\": {\"address\": {\"local\": \"198.51.100.2\", \"peer\": \"" peer "\"}"
#define DISCARD "{\"value\": 9225060886715039744, \"string\": \"rate-limit:0\"}"

/* What the notes said, one a line. */
struct log {
	char *s;
	size_t len, cap;
};

static void on_note(void *ctx, const char *msg)
{
	struct log *l = ctx;
	size_t m = strlen(msg) + 1;

	if (l->len + m + 1 > l->cap) {
		l->cap = 2 * (l->len + m + 1);
		l->s = realloc(l->s, l->cap);
	}
	memcpy(l->s + l->len, msg, m - 1);
	l->len += m;
	l->s[l->len - 1] = '\n';
	l->s[l->len] = 0;
}

/* The reason text bgp gives (the filter's name left out: none here). */
static void why_of(const struct fb_key *k, int err, const char *mask, char *why, size_t len)
{
	char text[FB_FLOW_STR];

	fb_flow_format(k, text, sizeof(text));
	if (err == -4)
		snprintf(why, len, "'%s': %s", text, mask);
	else
		snprintf(why, len, "'%s' would need a %dth %s prefix length", text,
			 FB_MAX_LENGTHS + 1, fb_rules_prefix_list_name(fb_rules_prefix_list(k)));
}

/* bgp_add_rules() before fit.c, with fb_rules_add()'s refusal (its
 * fb_rules_merge_lengths() into a copy of the table) for the filter. */
static void retry(struct fb_bgp *b, const struct fb_prefixes *px, struct fb_key *keys, size_t *n)
{
	char why[900], mask[600];
	size_t bad, i, j, gone;
	int err;

	for (;;) {
		struct fb_prefixes next = *px;

		if (!*n || !(err = fb_rules_merge_lengths(&next, keys, *n, &bad)))
			return;
		if (err == -4)
			fb_rules_mask_refusal(px, keys, bad, mask, sizeof(mask));
		why_of(&keys[bad], err, mask, why, sizeof(why));
		gone = fb_bgp_refused(b, &keys[bad], why, NULL);
		keys[bad] = keys[--*n];
		for (i = j = 0; gone && i < *n; i++)
			if (fb_bgp_refs(b, &keys[i]))
				keys[j++] = keys[i];
		if (gone)
			*n = j;
	}
}

struct fit_ctx {
	struct fb_bgp *b;
	const struct fb_key *keys;
	size_t *refusals; /* [0]: a length too many, [1]: a shape */
};

static size_t fit_refused(void *ctx, const struct fb_fit *t, size_t i, int err)
{
	struct fit_ctx *c = ctx;
	char why[900], mask[600] = "";

	if (err == -4)
		fb_fit_mask_refusal(t, i, mask, sizeof(mask));
	why_of(&c->keys[i], err, mask, why, sizeof(why));
	c->refusals[err == -4]++;
	return fb_bgp_refused(c->b, &c->keys[i], why, NULL);
}

static bool fit_alive(void *ctx, const struct fb_key *k)
{
	return fb_bgp_refs(((struct fit_ctx *)ctx)->b, k) > 0;
}

/* Appends printf output to a growing line. */
struct text {
	char *s;
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int m;

	for (;;) {
		va_start(ap, fmt);
		m = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if ((size_t)m < t->cap - t->len)
			break;
		t->cap = 2 * t->cap + m + 1;
		t->s = realloc(t->s, t->cap);
	}
	t->len += m;
}

/* One update of nr random routes from peer: blackhole NLRI of both
 * families, FlowSpec routes, one message. */
static void random_line(struct text *t, uint64_t *seed, const char *peer, int nr)
{
	/* Aligned ranges mostly: a single port costs its cover a search
	 * of 2^16 sets of lengths (rules/rule.c). */
	static const char *const ports[] = { "=53",	     ">=1024&<=2047", ">=256&<=1279",
					     ">=768&<=1279", ">=4096&<=8191", ">=512&<=1023",
					     ">=256&<=511",  ">=1024&<=1535" };
	struct text u4 = { 0 }, u6 = { 0 }, fl = { 0 };
	int i;

	put(&u4, "%s", "");
	put(&u6, "%s", "");
	put(&fl, "%s", "");
	for (i = 0; i < nr; i++) {
		uint64_t r = test_rand64(seed);
		unsigned x = r >> 8 & 15, len = 24 + (r >> 12) % 9, p = (r >> 20) % 8;

		switch (r % 5) {
		case 0:
			put(&u4, "%s{\"nlri\": \"203.0.113.%u/%u\"}", u4.len ? ", " : "",
			    (x << 4) & (0xffu << (32 - len)), len);
			break;
		case 1:
			put(&u6, "%s{\"nlri\": \"2001:db8:%x::/%u\"}", u6.len ? ", " : "", x,
			    24 + len);
			break;
		case 2: /* a prefix alone: a source or destination rule */
			put(&fl, "%s{\"%s-ipv4\": [\"203.0.113.%u/%u\"], \"string\": \"r%u\"}",
			    fl.len ? ", " : "", r >> 32 & 1 ? "source" : "destination",
			    (x << 4) & (0xffu << (32 - len)), len, (unsigned)(r >> 40) % 97);
			break;
		default: /* a shape per port prefix: one to several keys */
			put(&fl,
			    "%s{\"destination-ipv4\": [\"203.0.113.%u/%u\"], \"protocol\": "
			    "[\"=udp\"], "
			    "\"destination-port\": [\"%s\"%s%s%s], \"string\": \"r%u\"}",
			    fl.len ? ", " : "", (x << 4) & (0xffu << (32 - len)), len, ports[p],
			    r >> 33 & 1 ? ", \"" : "", r >> 33 & 1 ? ports[(p + 1) % 8] : "",
			    r >> 33 & 1 ? "\"" : "", (unsigned)(r >> 40) % 97);
		}
	}
	t->len = 0;
	put(t,
	    "{\"type\": \"update\", \"neighbor\": {\"address\": {\"local\": \"198.51.100.2\", "
	    "\"peer\": \"%s\"}, \"message\": {\"update\": {\"attribute\": {\"community\": "
	    "[[65535, 666]], \"extended-community\": [" DISCARD "]}, \"announce\": {"
	    "\"ipv4 unicast\": {\"198.51.100.1\": [%s]}, \"ipv6 unicast\": {\"2001:db8::1\": "
	    "[%s]}, "
	    "\"ipv4 flow\": {\"no-nexthop\": [%s]}}}}}}",
	    peer, u4.s, u6.s, fl.s);
	free(u4.s);
	free(u6.s);
	free(fl.s);
}

/* A table with a few lengths and shapes taken. */
static void random_table(struct fb_prefixes *px, uint64_t *seed)
{
	int i, m = test_rand64(seed) % 12;

	memset(px, 0, sizeof(*px));
	for (i = 0; i < m; i++) {
		uint64_t r = test_rand64(seed);
		unsigned len = 24 + r % 9;
		char flow[96];
		struct fb_key k;
		size_t bad;

		switch (r >> 8 & 3) {
		case 0:
			snprintf(flow, sizeof(flow), "dst 198.51.100.0/%u", len);
			break;
		case 1:
			snprintf(flow, sizeof(flow), "src 198.51.100.0/%u", len);
			break;
		case 2:
			snprintf(flow, sizeof(flow), "dst 2001:db8::/%u", 24 + len);
			break;
		default:
			snprintf(flow, sizeof(flow), "udp dst 198.51.100.0/%u dport %u", len,
				 (unsigned)(r >> 16) % 4 * 100);
		}
		key_of(flow, &k);
		fb_rules_merge_lengths(px, &k, 1, &bad); /* a full list stays full */
	}
}

struct side {
	struct fb_bgp b;
	struct log log;
};

static void side_init(struct side *s)
{
	struct fb_bgp_opts o = {
		.community = FB_BGP_BLACKHOLE, .flush_on_down = true, .min_v4 = 24, .min_v6 = 48
	};

	memset(s, 0, sizeof(*s));
	fb_bgp_init(&s->b, &o);
	s->b.note = on_note;
	s->b.ctx = &s->log;
}

static void side_free(struct side *s)
{
	fb_bgp_free(&s->b);
	free(s->log.s);
}

static bool same_keys(const struct fb_key *a, size_t na, const struct fb_key *b, size_t nb)
{
	return na == nb && (!na || !memcmp(a, b, na * sizeof(*a)));
}

/* One trial: history lines taken whole, then a line (or, resync, the
 * rules added again) fitted both ways. Its refusals in *refusals. */
static bool trial(uint64_t *seed, bool resync, size_t refusals[2], size_t *batch)
{
	static const char *const peers[] = { "198.51.100.1", "198.51.100.3" };
	struct side a, f;
	struct fb_prefixes px;
	struct text line = { 0 };
	struct fb_key *ka = NULL, *kf = NULL;
	size_t na, nf, lineno = 1;
	int h, nh = test_rand64(seed) % 4;
	bool ok;

	side_init(&a);
	side_init(&f);
	/* One hash key: the rules listed in one order (resync). */
	memcpy(f.b.hkey, a.b.hkey, sizeof(f.b.hkey));
	random_table(&px, seed);
	for (h = 0; h <= nh; h++, lineno++) {
		random_line(&line, seed, peers[test_rand64(seed) & 1],
			    1 + test_rand64(seed) % (h == nh ? 80 : 20));
		fb_bgp_line(&a.b, line.s, line.len, lineno);
		fb_bgp_line(&f.b, line.s, line.len, lineno);
		if (h < nh) {
			fb_bgp_done(&a.b);
			fb_bgp_done(&f.b);
		}
	}
	if (resync) {
		fb_bgp_done(&a.b);
		fb_bgp_done(&f.b);
		na = fb_bgp_rules(&a.b, &ka);
		na = fb_bgp_lost(&a.b, ka, na);
		nf = fb_bgp_rules(&f.b, &kf);
		nf = fb_bgp_lost(&f.b, kf, nf);
		a.b.lineno = f.b.lineno = 0;
	} else {
		na = nf = a.b.nadd;
		ka = malloc((na ? na : 1) * sizeof(*ka));
		kf = malloc((nf ? nf : 1) * sizeof(*kf));
		memcpy(ka, a.b.add, na * sizeof(*ka));
		memcpy(kf, f.b.add, nf * sizeof(*kf));
	}
	*batch += na;
	a.log.len = f.log.len = 0;
	retry(&a.b, &px, ka, &na);
	{
		struct fit_ctx c = { &f.b, kf, refusals };
		const struct fb_fit_ops ops = { fit_refused, fit_alive, &c };

		ok = !fb_fit_batch(&px, kf, &nf, &ops);
	}
	ok = ok && same_keys(ka, na, kf, nf) && a.b.ndel == f.b.ndel &&
	     same_keys(a.b.del, a.b.ndel, f.b.del, f.b.ndel) && a.b.npaths == f.b.npaths &&
	     a.b.nrules == f.b.nrules &&
	     (a.log.len == f.log.len && (!a.log.len || !strcmp(a.log.s, f.log.s)));
	if (!ok && getenv("TEST_VERBOSE"))
		printf("  retry: %zu left, %zu del\n%s  fit: %zu left, %zu del\n%s", na, a.b.ndel,
		       a.log.len ? a.log.s : "", nf, f.b.ndel, f.log.len ? f.log.s : "");
	/* What is left fits whole. */
	if (ok) {
		struct fb_prefixes next = px;
		size_t bad;

		ok = !fb_rules_merge_lengths(&next, kf, nf, &bad);
	}
	free(ka);
	free(kf);
	free(line.s);
	side_free(&a);
	side_free(&f);
	return ok;
}

void test_bgp_fit(void)
{
	uint64_t seed = 0x5eedf17;
	size_t i, bad = 0, ref[2] = { 0, 0 }, batch = 0, rbad = 0, rref[2] = { 0, 0 }, rbatch = 0;

	for (i = 0; i < 400; i++)
		bad += !trial(&seed, false, ref, &batch);
	ASSERT_EQ(bad, 0,
		  "bgp fit: 400 random lines, refused in one walk as by the retry (same "
		  "refusals, messages, batch order, deletions)");
	ASSERT_TRUE(ref[0] > 500 && ref[1] > 500 && ref[0] + ref[1] < batch,
		    "bgp fit: ... a length too many and a shape too many among them");
	for (i = 0; i < 200; i++)
		rbad += !trial(&seed, true, rref, &rbatch);
	ASSERT_EQ(rbad, 0, "bgp fit: 200 replaced filters' rules added again: as by the retry");
	ASSERT_TRUE(rref[0] > 100 && rref[1] > 100, "bgp fit: ... with refusals of both kinds");
	if (getenv("TEST_VERBOSE"))
		printf("  lines: %zu + %zu of %zu rules refused; added again: %zu + %zu of %zu\n",
		       ref[0], ref[1], batch, rref[0], rref[1], rbatch);
}
