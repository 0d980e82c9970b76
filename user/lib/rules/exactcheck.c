// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --confirm exact: the exact sets against the filter, for `check` (see
 * exactcheck.h). One pass over the hash set in batches (each rule tested
 * as the data path would ask about it), the address rules and the tries'
 * entries collected and compared sorted, then the repairs, made after the
 * walk so that no change moves the walk's cursor. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "rules/flow.h"
#include "report.h"
#include "rules/exactcheck.h"
#include "store/exact.h"
#include "store/head.h"
#include "types/bits.h"
#include "types/counting.h"
#include "types/ftype.h"
#include "types/sizing.h"

/* What the filter can say of a rule's copies: none, or at least this
 * many (a saturated counter has lost count). */
#define HELD_UNBOUNDED (~0U)

/* An address rule or a trie entry: set 1 (sources) or 2 (destinations). */
struct lpm_ent {
	struct fb_lpm_key lk;
	__u8 set;
	bool keep; /* a rule that stays in the hash set (after repair) */
};

/* A rule whose count repair lowers (to 0: out of the hash set). */
struct fix {
	struct fb_key key;
	__u32 count;
};

struct vec {
	void *v;
	size_t n, cap, size;
};

static void *vec_push(struct vec *a)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		void *nv = realloc(a->v, cap * a->size);

		if (!nv)
			return NULL;
		a->v = nv;
		a->cap = cap;
	}
	return (char *)a->v + a->n++ * a->size;
}

/* Does the data path's probe table (the head it reads) hold a descriptor
 * that asks about k: its kind, and for an address rule its length, for a
 * shape its mask, in k's family? */
static bool asked(const struct fb_store *f, const struct fb_key *k)
{
	const struct fb_head *h = fb_store_head(f);
	__u32 fam = fb_head_family(k->family), shape = 0, i;

	if (k->kind == FB_KIND_MASK)
		shape = fb_mask_of_key(k, NULL);
	for (i = 0; i < h->hdr.nprobe[fam] && i < FB_MAX_PROBES; i++) {
		const struct fb_probe *p = &h->probe[fam][i];

		if (p->kind != k->kind)
			continue;
		if ((k->kind == FB_KIND_SRC || k->kind == FB_KIND_DST) && p->plen != k->plen)
			continue;
		if (k->kind == FB_KIND_MASK && p->shape != shape)
			continue;
		return true;
	}
	return false;
}

/* Copies of k the filter holds: 0 if it is no hit, else as many as its
 * counters or buckets can show, HELD_UNBOUNDED where they show none. */
static unsigned held(const struct fb_store *f, const struct fb_key *k)
{
	const struct fb_ftype_ops *o = fb_ftype(f->hdr->type);
	unsigned c;

	if (!asked(f, k) || !fb_bits_test(f, k))
		return 0;
	if (f->cnt_hdr) {
		c = fb_counting_min(f, k);
		return c >= fb_counting_max(f) ? HELD_UNBOUNDED : c;
	}
	if (o && (o->flags & FB_FTYPE_DELETES) && !fb_ftype_seq_odd(f)) {
		c = fb_ftype_count(f, k);
		return o->count_max && c >= o->count_max ? HELD_UNBOUNDED : c;
	}
	return HELD_UNBOUNDED;
}

static int lpm_cmp(const void *a, const void *b)
{
	const struct lpm_ent *x = a, *y = b;

	if (x->set != y->set)
		return x->set < y->set ? -1 : 1;
	if (x->lk.prefixlen != y->lk.prefixlen)
		return x->lk.prefixlen < y->lk.prefixlen ? -1 : 1;
	if (x->lk.family != y->lk.family)
		return x->lk.family < y->lk.family ? -1 : 1;
	return memcmp(x->lk.addr, y->lk.addr, sizeof(x->lk.addr));
}

/* One rule of the hash set, with count v: tested, counted, and its fix
 * and trie entry noted. */
static int one_rule(struct fb_store *f, const struct fb_key *k, __u32 v, struct fb_exact_check *out,
		    struct vec *fixes, struct vec *rules, __u64 *removed)
{
	unsigned h = held(f, k);
	__u32 keep = v;

	out->rules++;
	out->copies += v;
	if (h < v) {
		struct fix *x = vec_push(fixes);

		if (!x)
			return -1;
		if (h)
			out->over++;
		else
			out->not_held++;
		keep = h;
		x->key = *k;
		x->count = keep;
		*removed += v - keep;
	}
	if (k->kind == FB_KIND_SRC || k->kind == FB_KIND_DST) {
		struct lpm_ent *e = vec_push(rules);

		if (!e)
			return -1;
		memset(e, 0, sizeof(*e));
		fb_lpm_key_of(&e->lk, k, k->kind, k->plen);
		e->set = k->kind == FB_KIND_DST ? 2 : 1;
		e->keep = keep > 0;
	}
	return 0;
}

struct walk {
	struct fb_store *f;
	struct fb_exact_check *out;
	struct vec *fixes, *rules, *trie;
	__u64 *removed;
	__u8 set;
	bool nomem;
};

static int rule_of(const struct fb_key *k, __u32 v, void *arg)
{
	struct walk *w = arg;

	w->nomem = one_rule(w->f, k, v, w->out, w->fixes, w->rules, w->removed) != 0;
	return w->nomem;
}

static int entry_of(const struct fb_lpm_key *k, void *arg)
{
	struct walk *w = arg;
	struct lpm_ent *e = vec_push(w->trie);

	if (!e) {
		w->nomem = true;
		return -1;
	}
	memset(e, 0, sizeof(*e));
	fb_lpm_key_set(&e->lk, k->family, k->addr, (int)k->prefixlen - 8);
	e->set = w->set;
	return 0;
}

/* The hash set's rules, then both tries' entries, read in batches (a call
 * for thousands: store/exact.c). */
static int walk_rules(struct fb_store *f, struct fb_exact_check *out, struct vec *fixes,
		      struct vec *rules, __u64 *removed)
{
	struct walk w = { .f = f, .out = out, .fixes = fixes, .rules = rules, .removed = removed };

	if (!fb_exact_each(f, rule_of, &w))
		return 0;
	if (w.nomem)
		fb_report_err("out of memory checking the exact sets of '%s'", f->name);
	return -1;
}

static int walk_tries(struct fb_store *f, struct vec *trie)
{
	struct walk w = { .f = f, .trie = trie };

	for (w.set = 1; w.set <= 2; w.set++)
		if (fb_exact_each_prefix(f, w.set, entry_of, &w)) {
			if (w.nomem)
				fb_report_err("out of memory checking the exact sets of '%s'",
					      f->name);
			return -1;
		}
	return 0;
}

/* Address rules against trie entries, both sorted: rules that stay and
 * have no entry (missing), entries with no rule at all (stale); with
 * repair, entries whose rule goes are deleted too, missing ones put in. */
static int compare_tries(struct fb_store *f, struct vec *rules, struct vec *trie, bool repair,
			 struct fb_exact_check *out)
{
	struct lpm_ent *r = rules->v, *t = trie->v;
	size_t i = 0, j = 0;
	__u32 one = 1;
	int c, err = 0;

	if (rules->n)
		qsort(r, rules->n, sizeof(*r), lpm_cmp);
	if (trie->n)
		qsort(t, trie->n, sizeof(*t), lpm_cmp);
	while (i < rules->n || j < trie->n) {
		c = i == rules->n ? 1 : j == trie->n ? -1 : lpm_cmp(&r[i], &t[j]);
		if (c < 0) {
			/* A rule with no trie entry. */
			if (r[i].keep) {
				out->trie_missing++;
				if (repair && bpf_map_update_elem(f->set_fd[r[i].set], &r[i].lk,
								  &one, BPF_ANY))
					err = -1;
			}
			i++;
		} else if (c > 0) {
			/* A trie entry with no rule. */
			out->trie_stale++;
			if (repair && bpf_map_delete_elem(f->set_fd[t[j].set], &t[j].lk) &&
			    errno != ENOENT)
				err = -1;
			j++;
		} else {
			if (!r[i].keep && repair &&
			    bpf_map_delete_elem(f->set_fd[t[j].set], &t[j].lk) && errno != ENOENT)
				err = -1;
			i++;
			j++;
		}
	}
	if (err)
		fb_report_err("cannot repair the address tries of '%s': %s", f->name,
			      strerror(errno));
	return err;
}

/* Each noted rule's count lowered in the hash set (out of it at 0). */
static int apply_fixes(struct fb_store *f, const struct vec *fixes)
{
	const struct fix *x = fixes->v;
	size_t i;

	for (i = 0; i < fixes->n; i++) {
		int e = x[i].count ? bpf_map_update_elem(f->set_fd[0], &x[i].key, &x[i].count,
							 BPF_EXIST)
				   : bpf_map_delete_elem(f->set_fd[0], &x[i].key);

		if (e && errno != ENOENT) {
			fb_report_err("cannot repair the exact set of '%s': %s", f->name,
				      strerror(errno));
			return -1;
		}
	}
	return 0;
}

int fb_exact_check(struct fb_store *f, bool repair, struct fb_exact_check *out)
{
	struct vec fixes = { .size = sizeof(struct fix) };
	struct vec rules = { .size = sizeof(struct lpm_ent) };
	struct vec trie = { .size = sizeof(struct lpm_ent) };
	__u64 removed = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->flows = f->hdr->nflows;
	out->count_ok = true;
	if (walk_rules(f, out, &fixes, &rules, &removed) || walk_tries(f, &trie))
		goto out;
	/* Repairs: the hash set first, then the tries to mirror it. */
	if (repair && apply_fixes(f, &fixes))
		goto out;
	if (compare_tries(f, &rules, &trie, repair, out))
		goto out;
	/* A counting Bloom filter's flows are exact unless an intersection
	 * estimated them or they reached the most it counts. */
	out->count_checked = f->cnt_hdr && !f->hdr->type &&
			     !(f->hdr->flags & FB_HDRF_NFLOWS_ESTIMATE) &&
			     out->flows < fb_flows_max(f->hdr->nblocks);
	out->count_ok = !out->count_checked || out->copies == out->flows;
	out->copies_left = repair ? out->copies - removed : out->copies;
	out->unrepaired = repair && out->count_checked && out->copies_left != out->flows;
	rc = 0;
out:
	free(fixes.v);
	free(rules.v);
	free(trie.v);
	return rc;
}
