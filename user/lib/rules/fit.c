// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A batch fitted into a prefix-length and shape table in one walk (see
 * fit.h for what it is equal to).
 *
 * The walk keeps what the rules taken so far add to the table: each new
 * length (per list) or shape is a claim, with the rules that use it, in
 * the order they were taken. A rule that leaves (its route refused for
 * another rule) is not looked for: a claim stands while its first rule
 * still counts, and when a rule needs a slot and none is free, each claim
 * of that list drops the rules at its head that left, and a claim left
 * with none frees its slot. Each rule is dropped once, so the whole walk
 * costs O(n + refusals). A claim whose rules have all left, still
 * standing when another rule uses its length, gives the same answer as a
 * table rebuilt without them: that rule would take the freed slot.
 *
 * The retry the walk replaces tries the batch's rules in an order it
 * changes on each refusal: the last rule takes the refused one's place.
 * The walk does the same to its order (ord), so the same rules win the
 * free slots; it is the order a user never sees, but keeping it keeps
 * every outcome as it was.
 */
#include <stdlib.h>
#include <string.h>
#include "rules/fit.h"
#include "rules/flow.h"
#include "rules/rules.h"

#define NONE ((size_t)-1)

/* A length or shape the batch adds to the table, and the rules using it
 * (a list through fb_fit.next, in the order taken). */
struct claim {
	__u32 v; /* prefix length, or shape descriptor */
	size_t head, tail;
};

struct fb_fit {
	const struct fb_prefixes *px;
	const struct fb_key *keys;
	const struct fb_fit_ops *ops;
	size_t *next; /* per rule: the next rule of its claim */
	size_t *at;   /* per rule: its place in ord when taken */
	size_t *ord;  /* the order tried */
	struct claim len[FB_PFX_NR][FB_MAX_LENGTHS];
	int nlen[FB_PFX_NR];
	struct claim mask[FB_MAX_MASKS];
	int nmask, npxm;
	__u32 pxm[FB_MAX_MASKS]; /* px's shapes */
	bool leaving;		 /* some refusal took other rules with it */
};

static bool gone(const struct fb_fit *t, size_t x)
{
	return t->leaving && !t->ops->alive(t->ops->ctx, &t->keys[x]);
}

/* Claims c[0..nc) without the rules that left; those left with none
 * freed (the others keep their order). The claims remaining. */
static int prune(struct fb_fit *t, struct claim *c, int nc)
{
	int i, j;

	for (i = j = 0; i < nc; i++) {
		while (c[i].head != NONE && gone(t, c[i].head))
			c[i].head = t->next[c[i].head];
		if (c[i].head != NONE)
			c[j++] = c[i];
	}
	return j;
}

/* Rule x uses v, among claims c[0..*nc) of a list with room for `room`:
 * joins v's claim, or makes it if a slot is free. -1: none is. */
static int take(struct fb_fit *t, struct claim *c, int *nc, int room, __u32 v, size_t x)
{
	int i;

	for (i = 0; i < *nc && c[i].v != v; i++)
		;
	if (i == *nc) {
		if (*nc >= room)
			*nc = prune(t, c, *nc);
		if (*nc >= room)
			return -1;
		c[i = (*nc)++] = (struct claim){ v, NONE, NONE };
	}
	t->next[x] = NONE;
	if (c[i].head == NONE)
		c[i].head = x;
	else
		t->next[c[i].tail] = x;
	c[i].tail = x;
	return 0;
}

/* Does rule x fit (it is taken then)? 0, or fb_rules_merge_lengths()'s
 * -1 or -4. */
static int fits(struct fb_fit *t, size_t x)
{
	const struct fb_key *k = &t->keys[x];
	const struct fb_lengths *ls;
	int l, i;

	if (k->kind == FB_KIND_MASK) {
		__u32 d = fb_mask_of_key(k, NULL);

		for (i = 0; i < t->npxm; i++)
			if (t->pxm[i] == d)
				return 0;
		return take(t, t->mask, &t->nmask, FB_MAX_MASKS - t->npxm, d, x) ? -4 : 0;
	}
	l = fb_rules_prefix_list(k);
	if (l < 0)
		return 0;
	ls = &t->px->list[l];
	for (i = 0; i < ls->n; i++)
		if (ls->len[i] == k->plen)
			return 0;
	return take(t, t->len[l], &t->nlen[l], FB_MAX_LENGTHS - ls->n, k->plen, x) ? -1 : 0;
}

int fb_fit_batch(const struct fb_prefixes *px, struct fb_key *keys, size_t *n,
		 const struct fb_fit_ops *ops)
{
	struct fb_fit t = { .px = px, .keys = keys, .ops = ops };
	size_t c = 0, end = *n, m = end ? end : 1, j = 0;
	struct fb_key *out = malloc(m * sizeof(*out));
	int r = -1;

	t.npxm = fb_rules_masks(px, t.pxm);
	t.next = malloc(m * sizeof(*t.next));
	t.at = malloc(m * sizeof(*t.at));
	t.ord = malloc(m * sizeof(*t.ord));
	if (!out || !t.next || !t.at || !t.ord)
		goto out;
	for (c = 0; c < end; c++)
		t.ord[c] = c;
	for (c = 0; c < end;) {
		size_t x = t.ord[c];
		int err;

		if (gone(&t, x)) {
			c++; /* left with a refused route */
			continue;
		}
		err = fits(&t, x);
		if (!err) {
			t.at[x] = c++;
			continue;
		}
		/* The last rule takes x's place, as the retry's did: the last
		 * of those still in the batch before this refusal. */
		while (end - 1 > c && gone(&t, t.ord[end - 1]))
			end--;
		if (ops->refused(ops->ctx, &t, x, err))
			t.leaving = true;
		t.ord[c] = t.ord[--end];
	}
	/* The rules taken and still in, in the order tried. */
	for (c = 0; c < end; c++)
		if (!gone(&t, t.ord[c]))
			out[j++] = keys[t.ord[c]];
	memcpy(keys, out, j * sizeof(*keys));
	*n = j;
	r = 0;
out:
	free(out);
	free(t.next);
	free(t.at);
	free(t.ord);
	return r;
}

void fb_fit_mask_refusal(const struct fb_fit *t, size_t i, char *buf, size_t len)
{
	struct fb_prefixes tab = *t->px;
	const struct claim *c[FB_MAX_MASKS];
	int a, b;

	/* px's shapes, then the batch's in the order of the first rule of
	 * each still in (a table built from the rules before keys[i]). The
	 * claims were pruned when keys[i] found no room. */
	for (a = 0; a < t->nmask; a++) {
		for (b = a; b > 0 && t->at[c[b - 1]->head] > t->at[t->mask[a].head]; b--)
			c[b] = c[b - 1];
		c[b] = &t->mask[a];
	}
	for (a = 0; a < t->nmask; a++)
		fb_rules_add_mask(&tab, c[a]->v);
	fb_rules_mask_text(&tab, &t->keys[i], buf, len);
}

int fb_fit_add(struct fb_store *f, struct fb_key *keys, size_t *n, const struct fb_fit_ops *ops,
	       size_t *bad)
{
	fb_fit_batch(fb_store_prefixes(f), keys, n, ops);
	return *n ? fb_rules_add(f, keys, *n, bad) : 0;
}
