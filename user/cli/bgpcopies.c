// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Where `flowbloom bgp --ttl` wrote its rules' copies (bgprun.h, struct
 * bgp_copies): each announcement and refresh writes a copy of a rule into
 * one generation, and a withdrawal deletes exactly those copies, from the
 * generations that still hold them. A generation that only answers "maybe"
 * for the rule (a false positive, or the operator's own copy) is left
 * alone: lowering its counters would take bits from its other rules.
 *
 * A table keyed by rule (open addressing, keyed hash: peers choose the
 * rules), and the state file's lines for it:
 *   # generations G:EXPIRES ...        each slot's generation, its end in jiffies
 *   # copies<TAB>RULE<TAB>G:N,...      N copies of RULE in slot G's generation
 * comments to a reader that does not know them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bgprun.h"
#include "flowbloom/hash.h"
#include "output.h"
#include "rules/flow.h"
#include "types/counting.h"

#define GENS_LINE "# generations"
#define COPIES_LINE "# copies\t"

static size_t slot_of(const struct bgp_copies *c, const struct fb_key *k)
{
	return fb_siphash(k, sizeof(*k), c->hkey, 1, 3) & (c->cap - 1);
}

struct bgp_copy *bgp_copies_find(const struct bgp_copies *c, const struct fb_key *k)
{
	size_t i;

	if (!c->cap)
		return NULL;
	for (i = slot_of(c, k); c->t[i].used; i = (i + 1) & (c->cap - 1))
		if (!memcmp(&c->t[i].key, k, sizeof(*k)))
			return &c->t[i];
	return NULL;
}

/* Into a table of cap slots (a power of 2, more than used). */
static void put(struct bgp_copy *t, size_t cap, const struct bgp_copies *c,
		const struct bgp_copy *r)
{
	size_t i = fb_siphash(&r->key, sizeof(r->key), c->hkey, 1, 3) & (cap - 1);

	while (t[i].used)
		i = (i + 1) & (cap - 1);
	t[i] = *r;
}

/* The table again, at cap slots, without the records holding no copy. */
static int rebuild(struct bgp_copies *c, size_t cap)
{
	struct bgp_copy *t = calloc(cap, sizeof(*t));
	size_t i, g, n = 0;

	if (!t)
		return -1;
	for (i = 0; i < c->cap; i++) {
		if (!c->t[i].used)
			continue;
		for (g = 0; g < FB_GEN_SLOTS && !c->t[i].n[g] && !c->t[i].extra[g]; g++)
			;
		if (g < FB_GEN_SLOTS) {
			put(t, cap, c, &c->t[i]);
			n++;
		}
	}
	free(c->t);
	c->t = t;
	c->cap = cap;
	c->n = n;
	return 0;
}

static struct bgp_copy *get(struct bgp_copies *c, const struct fb_key *k)
{
	struct bgp_copy *r = bgp_copies_find(c, k), nr = { .key = *k, .used = true };

	if (r)
		return r;
	if ((c->n + 1) * 2 > c->cap && rebuild(c, c->cap ? 2 * c->cap : 1024))
		return NULL;
	put(c->t, c->cap, c, &nr);
	c->n++;
	return bgp_copies_find(c, k);
}

void bgp_copies_forget(struct bgp_copies *c, struct bgp_copy *r)
{
	size_t i = r - c->t, j = i, h, mask = c->cap - 1;

	/* Linear probing's deletion: the records after it that may move
	 * back do (a record stays between its hash slot and its place). */
	c->t[i].used = false;
	c->n--;
	for (;;) {
		j = (j + 1) & mask;
		if (!c->t[j].used)
			return;
		h = slot_of(c, &c->t[j].key);
		if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) {
			c->t[i] = c->t[j];
			c->t[j].used = false;
			i = j;
		}
	}
}

/* Slot g now counts the copies of the generation ending at expires: the
 * one it counted before ended (a slot is reused only then), its copies
 * with it. */
static void slot_is(struct bgp_copies *c, unsigned g, __u64 expires)
{
	size_t i;

	if (c->expires[g] == expires)
		return;
	for (i = 0; i < c->cap; i++)
		c->t[i].n[g] = c->t[i].extra[g] = 0;
	c->expires[g] = expires;
	if (c->cap)
		rebuild(c, c->cap); /* no memory: the empty records stay */
}

int bgp_copies_wrote(struct bgp_copies *c, const struct fb_gen *where, const struct fb_key *keys,
		     size_t n)
{
	size_t i;

	slot_is(c, where->g, where->expires);
	for (i = 0; i < n; i++) {
		struct bgp_copy *r = get(c, &keys[i]);

		if (!r)
			return -1;
		if (r->n[where->g] < 255)
			r->n[where->g]++;
	}
	return 0;
}

size_t bgp_copies_in(const struct bgp_copies *c, const struct fb_gen *w)
{
	size_t i, n = 0;

	if (c->expires[w->g] != w->expires)
		return 0;
	for (i = 0; i < c->cap; i++)
		n += c->t[i].used && c->t[i].n[w->g];
	return n;
}

/* The live generation of gv in slot g that slot g counts copies of: its
 * index in gv, or -1. */
static int live(const struct bgp_copies *c, const struct fb_gen_views *gv, unsigned g)
{
	int i;

	for (i = 0; i < gv->n; i++)
		if (gv->g[i].g == g && gv->g[i].expires == c->expires[g])
			return i;
	return -1;
}

__u64 bgp_copies_until(const struct bgp_copies *c, const struct fb_gen_views *gv,
		       const struct fb_key *k)
{
	const struct bgp_copy *r = bgp_copies_find(c, k);
	__u64 end = 0;
	unsigned g;

	for (g = 0; r && g < FB_GEN_SLOTS; g++)
		if (r->n[g] && live(c, gv, g) >= 0 && c->expires[g] > end)
			end = c->expires[g];
	return end;
}

void bgp_copies_verify(struct bgp_copies *c, const struct fb_gen_views *gv)
{
	size_t i;
	unsigned g;
	int v;

	for (g = 0; g < FB_GEN_SLOTS; g++) {
		if ((v = live(c, gv, g)) < 0)
			c->expires[g] = 0;
		for (i = 0; i < c->cap; i++)
			if (c->t[i].used && c->t[i].n[g] &&
			    (v < 0 || !fb_counting_min(&gv->v[v], &c->t[i].key)))
				c->t[i].n[g] = 0;
	}
	if (c->cap)
		rebuild(c, c->cap);
}

int bgp_copies_seed(struct bgp_copies *c, const struct fb_gen_views *gv, const struct fb_key *keys,
		    size_t n)
{
	size_t i;
	int v;

	for (v = 0; v < gv->n; v++) {
		slot_is(c, gv->g[v].g, gv->g[v].expires);
		for (i = 0; i < n; i++) {
			struct bgp_copy *r;

			if (!fb_counting_min(&gv->v[v], &keys[i]))
				continue;
			if (!(r = get(c, &keys[i])))
				return -1;
			r->n[gv->g[v].g] = 1;
		}
	}
	return 0;
}

int bgp_copies_del(struct bgp_copies *c, struct fb_gen_views *gv, const struct fb_key *k,
		   struct fb_capacity_limit *lim)
{
	struct bgp_copy *r = bgp_copies_find(c, k);
	unsigned g, j;
	int v, n = 0;

	if (!r)
		return 0;
	for (g = 0; g < FB_GEN_SLOTS; g++) {
		if ((!r->n[g] && !r->extra[g]) || (v = live(c, gv, g)) < 0)
			continue; /* ended: its copies with it */
		for (j = 0; j < r->n[g] + r->extra[g] && !fb_counting_del(&gv->v[v], k); j++) {
			n++;
			if (lim->wrote[g].expires == c->expires[g] && lim->wrote[g].n)
				lim->wrote[g].n--;
		}
	}
	bgp_copies_forget(c, r);
	return n;
}

/* A rule withdrawn and announced again before its deletion was applied
 * holds a copy more for each such flap, all in the newest generation: past
 * 15 (4-bit counters) they saturate, and its next withdrawal leaves it
 * matching until the generation ends. Its record keeps one copy, in the
 * generation ending last (it keeps the rule as long as all of them); the
 * others are marked to leave the filter after the state file is written
 * (bgp_copies_trim: a crash between leaves them, to end with their
 * lifetime). */
void bgp_copies_trim_plan(struct bgp_copies *c, const struct fb_key *k)
{
	struct bgp_copy *r = bgp_copies_find(c, k);
	int keep = -1;
	unsigned g;

	for (g = 0; r && g < FB_GEN_SLOTS; g++)
		if (r->n[g] && (keep < 0 || c->expires[g] > c->expires[keep]))
			keep = (int)g;
	for (g = 0; r && g < FB_GEN_SLOTS; g++) {
		unsigned x = r->n[g] - ((int)g == keep && r->n[g]);

		r->extra[g] = r->extra[g] + x > 255 ? 255 : r->extra[g] + x;
		r->n[g] -= x;
	}
}

/* The copies bgp_copies_trim_plan marked, out of the live generations:
 * how many. */
int bgp_copies_trim(struct bgp_copies *c, struct fb_gen_views *gv, const struct fb_key *k,
		    struct fb_capacity_limit *lim)
{
	struct bgp_copy *r = bgp_copies_find(c, k);
	unsigned g, j;
	int v, n = 0;

	for (g = 0; r && g < FB_GEN_SLOTS; g++) {
		if (r->extra[g] && (v = live(c, gv, g)) >= 0)
			for (j = 0; j < r->extra[g] && !fb_counting_del(&gv->v[v], k); j++) {
				n++;
				if (lim->wrote[g].expires == c->expires[g] && lim->wrote[g].n)
					lim->wrote[g].n--;
			}
		r->extra[g] = 0;
	}
	return n;
}

/* v in decimal at s: its length. */
static size_t put_u(char *s, unsigned v)
{
	char t[10];
	size_t n = 0, i;

	do
		t[n++] = '0' + v % 10;
	while ((v /= 10));
	for (i = 0; i < n; i++)
		s[i] = t[n - 1 - i];
	return n;
}

/* A line a rule, formatted by hand (stdio per field took a third of a
 * --ttl commit's CPU at 500,000 rules); the same text, byte for byte. */
int bgp_copies_save(const struct bgp_copies *c, const struct fb_bgp *b, FILE *fp)
{
	char line[sizeof(COPIES_LINE) + FB_FLOW_STR + FB_GEN_SLOTS * 16 + 2];
	const size_t head = sizeof(COPIES_LINE) - 1;
	size_t i, n;
	unsigned g;

	fputs(GENS_LINE, fp);
	for (g = 0; g < FB_GEN_SLOTS; g++)
		if (c->expires[g])
			fprintf(fp, " %u:%llu", g, (unsigned long long)c->expires[g]);
	fputc('\n', fp);
	memcpy(line, COPIES_LINE, head);
	/* The rules the file names: a withdrawn one's copies are deleted
	 * after the file is written (a crash between leaves them, to end
	 * with their lifetime). */
	for (i = 0; i < c->cap; i++) {
		const struct bgp_copy *r = &c->t[i];
		bool first = true;

		if (!r->used || !fb_bgp_refs(b, &r->key))
			continue;
		fb_flow_format(&r->key, line + head, FB_FLOW_STR);
		n = head + strlen(line + head);
		line[n++] = '\t';
		for (g = 0; g < FB_GEN_SLOTS; g++)
			if (r->n[g]) {
				if (!first)
					line[n++] = ',';
				first = false;
				n += put_u(line + n, g);
				line[n++] = ':';
				n += put_u(line + n, r->n[g]);
			}
		line[n++] = '\n';
		fwrite(line, 1, n, fp);
	}
	return ferror(fp) ? -1 : 0;
}

/* "# generations ..." into c->expires: 0, or -1 malformed. */
static int load_gens(struct bgp_copies *c, const char *s)
{
	unsigned g;
	unsigned long long e;
	int n;

	while (*s == ' ') {
		if (sscanf(s, " %u:%llu%n", &g, &e, &n) != 2 || g >= FB_GEN_SLOTS || !e ||
		    (s[n] && s[n] != ' '))
			return -1;
		c->expires[g] = e;
		s += n;
	}
	return *s ? -1 : 0;
}

/* "# copies\tRULE\tG:N,..." into the table: 0, -1 malformed, -2 no memory. */
static int load_copies(struct bgp_copies *c, char *s)
{
	char *tab = strchr(s, '\t'), err[256];
	struct bgp_copy *r;
	struct fb_key k;
	unsigned g, v;
	int blank, n;

	if (!tab)
		return -1;
	*tab++ = 0;
	if (fb_flow_parse_line(s, &k, &blank, err, sizeof(err)) || blank)
		return -1;
	if (!(r = get(c, &k)))
		return -2;
	do {
		if (sscanf(tab, "%u:%u%n", &g, &v, &n) != 2 || g >= FB_GEN_SLOTS || !v || v > 255 ||
		    !c->expires[g] || (tab[n] && tab[n] != ','))
			return -1;
		r->n[g] = v;
		tab += n + (tab[n] == ',');
	} while (*tab);
	return 0;
}

int bgp_copies_load(struct bgp_copies *c, FILE *fp, const char *name, bool *found)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int rc = 0;

	*found = false;
	while (!rc && (len = getline(&line, &cap, fp)) > 0) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, GENS_LINE, strlen(GENS_LINE))) {
			*found = true;
			rc = load_gens(c, line + strlen(GENS_LINE));
		} else if (!strncmp(line, COPIES_LINE, strlen(COPIES_LINE))) {
			/* After the generations they name. */
			rc = *found ? load_copies(c, line + strlen(COPIES_LINE)) : -1;
		}
	}
	if (rc)
		fb_err("%s:%zu: %s", name, lineno,
		       rc == -2 ? "out of memory" : "malformed record of where the copies are");
	else if (!feof(fp))
		fb_err("%s:%zu: cannot read: %s", name, lineno + 1, strerror(errno));
	free(line);
	return rc || !feof(fp) ? -1 : 0;
}

void bgp_copies_free(struct bgp_copies *c)
{
	free(c->t);
	memset(c, 0, sizeof(*c));
}
