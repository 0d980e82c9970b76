// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A read list into a filter (load.h): `load`'s work after the lists are
 * read, which `apply` does too.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include "report.h"
#include "rules/capacity.h"
#include "rules/flow.h"
#include "rules/load.h"
#include "rules/prefixes.h"
#include "rules/rules.h"
#include "rules/lifetime.h"
#include "store/gens.h"
#include "store/replace.h"

/* Room for "FILE:LINE": a path may have PATH_MAX bytes. */
#define FB_AT_SIZE (PATH_MAX + 64)
#include "types/ftype.h"
#include "types/sizing.h"
#include "util.h"

/* "FILE:LINE: " of the line that made rule k (or that k was expanded
 * from), for the start of an error line; "" if no line did. */
static void place(struct fb_list *l, const struct fb_key *k, char *buf, size_t len)
{
	char w[FB_AT_SIZE];

	fb_list_origins(l);
	fb_list_where(l, k, w, sizeof(w));
	snprintf(buf, len, "%s%s", w, *w ? ": " : "");
}

/* A cuckoo or d-left filter refused the list (nothing changed). */
static void full(const struct fb_store *f, struct fb_list *l, size_t bad)
{
	char at[FB_AT_SIZE + 8], text[FB_FLOW_STR], why[512];

	place(l, &l->keys[bad], at, sizeof(at));
	fb_flow_format(&l->keys[bad], text, sizeof(text));
	fb_ftype_full_why(f, l->keys, bad, why, sizeof(why));
	fb_report_err("%s'%s' does not fit: %s; nothing loaded", at, text, why);
}

/* Rule l->keys[bad] needs a 5th prefix length (err -1) or a 9th rule
 * shape (-4) of table px, which the rules before it were added to. */
static void refused(int err, const struct fb_prefixes *px, struct fb_list *l, size_t bad)
{
	char at[FB_AT_SIZE + 8], why[512], text[FB_FLOW_STR];
	struct fb_prefixes t = *px;
	size_t i;

	fb_list_origins(l);
	/* A shape: the list is sorted, but whether its shapes fit does not
	 * depend on the order; name the first line, in the files' order,
	 * whose shape is one too many, as `add -f` does. */
	for (i = 0; err == -4 && i < l->nfrom; i++) {
		const struct fb_key *k = &l->from[i].key;

		if (k->kind != FB_KIND_MASK || !fb_rules_add_mask(&t, fb_mask_of_key(k, NULL)))
			continue;
		snprintf(at, sizeof(at), "%s:%u: ", l->files[l->from[i].file].label,
			 l->from[i].line);
		fb_flow_format(k, text, sizeof(text));
		fb_rules_mask_text(&t, k, why, sizeof(why));
		fb_report_err("%s'%s': %s; nothing loaded", at, text, why);
		return;
	}
	place(l, &l->keys[bad], at, sizeof(at));
	fb_flow_format(&l->keys[bad], text, sizeof(text));
	fb_rules_refusal(err, px, l->keys, bad, why, sizeof(why));
	fb_report_err("%s'%s': %s; nothing loaded", at, text, why);
}

/* The expansion refused the list: is it for a rule longer than every
 * length of a list the filter already uses all FB_MAX_LENGTHS of (a
 * rule expands only into longer lengths)? Says so, naming its line (the
 * first such), and returns 0; -1 if no rule is (another refusal). */
static int unexpandable(struct fb_list *l, const struct fb_prefixes *have)
{
	char at[FB_AT_SIZE + 8], why[512], text[FB_FLOW_STR];
	size_t i;

	fb_list_origins(l);
	for (i = 0; i < l->nfrom; i++) {
		const struct fb_key *k = &l->from[i].key;
		int li = fb_rules_prefix_list(k), j, longer = 0;

		if (li < 0 || have->list[li].n < FB_MAX_LENGTHS)
			continue;
		for (j = 0; j < have->list[li].n; j++)
			longer |= have->list[li].len[j] >= k->plen;
		if (longer)
			continue;
		snprintf(at, sizeof(at), "%s:%u: ", l->files[l->from[i].file].label,
			 l->from[i].line);
		fb_flow_format(k, text, sizeof(text));
		fb_rules_length_refusal(have, k, 0, why, sizeof(why));
		fb_report_err("%s'%s': %s; a rule expands only into longer lengths (`load "
			      "--replace` picks all lengths afresh); nothing loaded",
			      at, text, why);
		return 0;
	}
	return -1;
}

/* The content replaced by l. A filter sized by capacity and rate is
 * re-sized for the new list: capacity at least its length, the rate per
 * packet spread over the probes it will make; another filter type gets
 * its own geometry, sized by the same rule, and that capacity in its
 * header (what info says it is sized for). A Bloom filter keeps the
 * capacity it was created with: apply compares it with its file's. */
static int replace(struct fb_store *f, struct fb_list *l)
{
	static const struct fb_prefixes none;
	__u32 nblocks = f->hdr->nblocks, kinds = 0, was;
	bool table = fb_ftype(f->hdr->type)->flags & FB_FTYPE_TABLE;
	struct fb_prefixes want = { 0 };
	struct fb_block geom[5];
	__u8 k = f->hdr->k;
	size_t i, bad;
	int r;

	for (i = 0; i < l->n; i++)
		kinds |= FB_KINDF(l->keys[i].kind);
	r = fb_rules_merge_lengths(&want, l->keys, l->n, &bad);
	if (r) {
		refused(r, &none, l, bad);
		return -1;
	}
	double n = l->n > f->hdr->capacity ? l->n : f->hdr->capacity;
	double q = fb_probe_target(f->hdr->fp_ppb / 1e9, fb_probes_per_packet(kinds, &want));
	bool sized = table || (f->hdr->capacity && f->hdr->fp_ppb);
	__u64 cap = table ? (__u64)n : 0;
	int tries = 0;

	for (;;) {
		if (sized) {
			if (fb_ftype_resize(f, n, q, &nblocks, &k, geom)) {
				fb_report_err("the new list needs more than the largest filter; "
					      "nothing loaded");
				return -1;
			}
			/* A Bloom filter by create's rule (whole chunks, or
			 * whole pages if compact); a table type's geometry
			 * says its size. */
			if (!table)
				fb_bloom_fit(f->hdr->layout, f->hdr->flags & FB_HDRF_COMPACT, n, q,
					     &nblocks, &k);
		}
		f->refused_load = -1;
		if (!fb_rules_replace_geom(f, nblocks, k, table ? geom : NULL, cap, l->keys, l->n,
					   &bad))
			return 0;
		/* A table sized by its formula can still refuse the list:
		 * a cuckoo table's relocations fail below its design load
		 * now and then, most often in a small table. The list is the
		 * operator's and the size is ours: try the next size up (a
		 * few times; nothing was changed): the capacity doubled
		 * until the table grows, as twice a list far below the
		 * table's capacity may be sized into the same table. */
		if (!table || f->refused_load < 0 || bad == (size_t)-1 || ++tries > 3)
			break;
		for (was = nblocks; nblocks == was; n *= 2)
			if (fb_ftype_resize(f, 2 * n, q, &nblocks, &k, geom))
				goto full;
	}
full:
	if (f->refused_load >= 0 && bad != (size_t)-1)
		full(f, l, bad);
	return -1;
}

/* The list added to what the filter holds. */
static int add(struct fb_store *f, struct fb_list *l)
{
	struct fb_prefixes px = *fb_store_prefixes(f);
	size_t bad;
	int c = fb_rules_add(f, l->keys, l->n, &bad);

	if (c == -3)
		full(f, l, bad);
	if (c == -1 || c == -4)
		refused(c, &px, l, bad);
	return c ? -1 : 0;
}

/* Rules with a lifetime: a new generation, or (replace) the ones with a
 * lifetime replaced, in a new generation. A -4 of no rule: every
 * generation slot holds rules of other lifetimes (fb_gens_add() said so);
 * other failures of no rule are reported where they happen. */
static int timed(struct fb_store *f, struct fb_list *l, const struct fb_load_req *req)
{
	static const struct fb_prefixes none;
	struct fb_gen g;
	size_t bad;
	int c = req->replace ? fb_replace_timed(f, l->keys, l->n, req->ttl, &bad)
			     : fb_gens_add(f, l->keys, l->n, req->ttl, &bad, &g);

	if ((c == -1 || c == -4) && bad < l->n)
		refused(c, req->replace ? &none : &g.px, l, bad);
	return c ? -1 : 0;
}

int fb_load_bound(const char *name, bool replace, struct fb_list *l)
{
	struct fb_store f;
	char why[160];
	__u64 max;

	if (fb_store_open(name, &f))
		return -1;
	max = fb_capacity_input(f.hdr, replace, why, sizeof(why));
	fb_store_close(&f);
	fb_list_bound(l, max, why);
	return 0;
}

int fb_load_list(const char *name, struct fb_list *l, const struct fb_load_req *req,
		 struct fb_load_result *res)
{
	struct fb_store f;
	int rc;

	memset(res, 0, sizeof(*res));
	if (fb_store_open(name, &f))
		return -1;
	rc = fb_load_into(&f, l, req, res);
	fb_store_close(&f);
	return rc;
}

int fb_load_into(struct fb_store *f, struct fb_list *l, const struct fb_load_req *req,
		 struct fb_load_result *res)
{
	static const struct fb_prefixes none;
	struct fb_expand_budget budget;
	struct fb_expansion ex;
	char err[512];
	int rc = -1;
	double t0;

	memset(res, 0, sizeof(*res));
	if (req->ttl > 0 && fb_gens_supported(f))
		return -1;
	/* After the filter's own errors (none, broken, too old). */
	if (req->replace && !l->n && !req->allow_empty)
		return FB_LOAD_EMPTY;
	f->keep_same = req->replace && req->ttl <= 0 && (req->keep_same || req->dry);
	f->dry = f->keep_same && req->dry;
	/* A staged filter is locked already, by its maker, until it is
	 * published or removed (unlocked, another create would take it for
	 * one a killed create left, and remove it). A dry run only reads:
	 * shared, against writers, and without the writer's roll-back of a
	 * counting filter's write a killed writer left half done. */
	if (!f->staged && (f->dry ? fb_store_flock(f, LOCK_SH) : fb_store_lock(f)))
		return -1;
	t0 = fb_now();
	/* Rules with a lifetime go to a generation, whose prefix lengths
	 * start empty; so does a replaced content. A Bloom filter sized by
	 * capacity and rate gets its lengths chosen by cost on replace:
	 * fewer probes when its memory allows. Not a counting filter (`del`
	 * of a prefix finds it only unexpanded), nor rules with a lifetime
	 * (a generation has the filter's geometry, not one sized for them). */
	budget.bytes = fb_replace_bytes;
	budget.ctx = f->hdr;
	if (fb_prefixes_expand(
		    &l->keys, &l->n, req->replace || req->ttl > 0 ? &none : fb_store_prefixes(f),
		    req->replace && req->ttl <= 0 && !f->hdr->type && !f->hdr->counter_bits &&
				    f->hdr->capacity && f->hdr->fp_ppb
			    ? &budget
			    : NULL,
		    &ex, err, sizeof(err))) {
		if (!req->replace && req->ttl <= 0 && !unexpandable(l, fb_store_prefixes(f)))
			goto unlock;
		if (ex.bad < l->n) {
			/* Too many entries: the rule the cheapest fit expands most. */
			char at[FB_AT_SIZE + 8], text[FB_FLOW_STR];

			place(l, &l->keys[ex.bad], at, sizeof(at));
			fb_flow_format(&l->keys[ex.bad], text, sizeof(text));
			fb_report_err("%s'%s': %s; nothing loaded", at, text, err);
		} else {
			fb_report_err("%s; nothing loaded", err);
		}
		goto unlock;
	}
	if (req->ttl > 0 ? timed(f, l, req) : req->replace ? replace(f, l) : add(f, l))
		goto unlock;
	res->seconds = fb_now() - t0;
	snprintf(res->filter, sizeof(res->filter), "%s", f->name);
	res->loaded = l->n;
	res->compared = f->keep_same;
	res->unchanged = f->keep_same && f->same;
	res->replaced = req->replace && !res->unchanged && !f->dry;
	res->ttl = req->ttl;
	res->before = ex.before;
	res->after = ex.after;
	res->bits = fb_header_mbits(f->hdr);
	res->own_probes = fb_probes_per_packet(f->hdr->kinds, fb_store_prefixes(f));
	res->own_fp_rate = fb_packet_rate(fb_ftype_fpr_now(f), res->own_probes);
	/* What a packet meets: the permanent rules' probes and those of
	 * every live generation (as the data path makes them). */
	res->generations = fb_gens_packet(f, &res->probes, &res->fp_rate);
	res->target = f->hdr->fp_ppb / 1e9;
	rc = 0;
unlock:
	if (!f->staged)
		fb_store_unlock(f);
	return rc;
}
