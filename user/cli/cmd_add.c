// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom add` and `del`: flows in, through the mmap of the filter (and
 * of its counters). Input is parsed and checked whole before the filter is
 * touched. `query` and `count` (cmd_query.c) open their flows here too.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "types/bits.h"
#include "cmd.h"
#include "types/counting.h"
#include "store/exact.h"
#include "rules/flow.h"
#include "types/ftype.h"
#include "output.h"
#include "parse.h"
#include "rules/prefixes.h"
#include "rules/lifetime.h"
#include "store/gens.h"
#include "rules/rules.h"
#include "store/store.h"
#include "util.h"

/* `del`'s options, anywhere but as -f's FILE: --force, and which part of a
 * filter with rules with a lifetime. */
struct del_opts {
	bool force;
	enum fb_del_part part;
};

/* NAME and its flows (fb_flows_args), then open the filter. del: NULL, or
 * where `del` notes its options. ttl: NULL, or where `add` puts --ttl
 * DURATION (anywhere: a FLOW word never starts with '-'), 0 if absent. */
static int flows_args(int argc, char **argv, struct fb_store *f, struct fb_flows *fl,
		      struct del_opts *del, double *ttl)
{
	bool *force = del ? &del->force : NULL;
	const char *name;
	char **av = argv;
	int rc, i, n = 0;

	if (force || ttl) {
		av = malloc((argc + 1) * sizeof(*av));
		if (!av)
			return fb_err("out of memory"), 1;
		if (ttl)
			*ttl = 0;
		for (i = 0; i < argc; i++) {
			/* `--` (not -f's FILE): the rest is fb_flows_args's, as is. */
			if (i > 0 && !strcmp(argv[i], "--") &&
			    !(n > 1 &&
			      (!strcmp(av[n - 1], "-f") || !strcmp(av[n - 1], "--file")))) {
				while (i < argc)
					av[n++] = argv[i++];
				break;
			}
			/* Anywhere but as -f's FILE, as --ttl and --permanent. */
			if (i > 0 && force && !strcmp(argv[i], "--force") &&
			    !(n > 1 &&
			      (!strcmp(av[n - 1], "-f") || !strcmp(av[n - 1], "--file")))) {
				*force = true;
				continue;
			}
			if (i > 0 && del &&
			    (!strcmp(argv[i], "--permanent") ||
			     !strcmp(argv[i], "--with-lifetime"))) {
				enum fb_del_part p =
					argv[i][2] == 'p' ? FB_DEL_PERMANENT : FB_DEL_LIFETIME;

				if (del->part && del->part != p) {
					free(av);
					return fb_usage(
						"--permanent and --with-lifetime: one part, "
						"or neither");
				}
				del->part = p;
				continue;
			}
			if (i > 0 && ttl &&
			    (!strcmp(argv[i], "--ttl") || !strncmp(argv[i], "--ttl=", 6))) {
				const char *v = argv[i][5]     ? argv[i] + 6
						: i + 1 < argc ? argv[++i]
							       : NULL;

				if (!v) {
					free(av);
					return fb_usage("--ttl needs a DURATION (2s, 10m, 1h)");
				}
				if (fb_parse_duration("--ttl", v, FB_TTL_MIN, FB_TTL_MAX, ttl)) {
					free(av);
					return 2;
				}
				continue;
			}
			av[n++] = argv[i];
		}
		av[n] = NULL;
		argc = n;
	}
	rc = fb_flows_args(argc, av, &name, fl, del || ttl);
	if (av != argv)
		free(av);
	if (rc)
		return rc;
	if (fb_store_open(name, f)) {
		fb_flows_free(fl);
		return 1;
	}
	return 0;
}

static void report(const char *verb, const struct fb_store *f, size_t n, double secs)
{
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f->name);
		jw_u64(verb, n);
		jw_double("seconds", secs);
		jw_double("flows_per_second", secs > 0 ? n / secs : 0);
		jw_u64("flows", f->hdr->nflows);
		jw_obj_close();
		jw_end();
	} else {
		double rate = secs > 0 ? n / secs : 0;
		char r[48];

		/* In millions where there are (a list), else as it is: one flow
		 * read "0.00 M flows/s". */
		if (rate >= 1e5)
			snprintf(r, sizeof(r), "%.2f M flows/s", rate / 1e6);
		else
			snprintf(r, sizeof(r), "%.0f flows/s", rate);
		printf("%s %zu flow%s %s %s in %.3f ms (%s)\n", verb, n, n == 1 ? "" : "s",
		       strcmp(verb, "added") ? "from" : "to", f->name, secs * 1e3, r);
	}
}

/* A rule with a lifetime: where it went. */
static void report_ttl(const struct fb_store *f, size_t n, double ttl, const struct fb_gen *g)
{
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f->name);
		jw_u64("added", n);
		jw_double("ttl", ttl);
		jw_u64("generation", g->g);
		jw_double("ends_in", g->secs);
		jw_u64("generation_flows", g->nflows);
		jw_obj_close();
		jw_end();
	} else {
		printf("added %zu flow%s to %s for %.10g s: generation %u, which ends in %.3f s\n",
		       n, n == 1 ? "" : "s", f->name, ttl, g->g, g->secs);
	}
	/* The lifetime runs from the command's start: one shorter than the
	 * command itself ended before (or while) its rules went in. */
	if (g->secs <= 0)
		fprintf(stderr,
			"flowbloom: warning: the lifetime of %.3g s ended before the command did: "
			"these rules may never have matched (give a longer --ttl)\n",
			ttl);
}

int cmd_add(int argc, char **argv)
{
	char where[FB_FLOWS_WHERE], text[FB_FLOW_STR];
	struct fb_store f;
	struct fb_flows fl;
	struct fb_gen g;
	size_t bad = (size_t)-1; /* -4 without a rule: no generation free */
	double t0, ttl;
	int err, rc = flows_args(argc, argv, &f, &fl, NULL, &ttl);

	if (rc)
		return rc;
	rc = 1;
	/* A file's rules once each, as `load` and `del -f` take them (a
	 * note says so once they are in): `del -f FILE` then undoes `add -f
	 * FILE`. */
	if (fl.file && fb_flows_unique(&fl, "added"))
		goto out;
	if (ttl > 0 && fb_gens_supported(&f))
		goto out;
	if (fb_store_lock(&f))
		goto out;
	t0 = fb_now();
	err = ttl > 0 ? fb_gens_add(&f, fl.keys, fl.n, ttl, &bad, &g)
		      : fb_rules_add(&f, fl.keys, fl.n, &bad);
	if ((err == -1 || err == -4) && bad < fl.n) {
		/* The table the rule was refused by: the filter's, or that of
		 * the generation the batch went to. */
		const struct fb_prefixes *px =
			ttl > 0 ? &g.px : (const struct fb_prefixes *)&f.blocks[1];
		char why[600];

		fb_flows_where(&fl, bad, where, sizeof(where));
		fb_flow_format(&fl.keys[bad], text, sizeof(text));
		fb_rules_refusal(err, px, fl.keys, bad, why, sizeof(why));
		fb_err("%s: '%s': %s%s; nothing added", where, text, why,
		       err == -1 && ttl <= 0 ? " (`flowbloom load` expands rare lengths into "
					       "longer ones)"
					     : "");
	}
	if (err == -3) {
		char why[512];

		fb_flows_where(&fl, bad, where, sizeof(where));
		fb_flow_format(&fl.keys[bad], text, sizeof(text));
		fb_ftype_full_why(&f, fl.keys, bad, why, sizeof(why));
		fb_err("%s: '%s' does not fit: %s; nothing added", where, text, why);
	}
	if (err) {
		/* -2: an exact set refused a rule, -4: no generation (said). */
		fb_store_unlock(&f);
		goto out;
	}
	t0 = fb_now() - t0;
	fb_store_unlock(&f);
	if (ttl > 0)
		report_ttl(&f, fl.n, ttl, &g);
	else
		report("added", &f, fl.n, t0);
	fb_flows_note_again(&fl, "added");
	rc = 0;
out:
	fb_store_close(&f);
	fb_flows_free(&fl);
	return rc;
}

/* Places in the input, by key, then by place: qsort_r's order for
 * check_members (arg: the keys). */
static int cmp_place(const void *a, const void *b, void *arg)
{
	const struct fb_key *keys = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = memcmp(&keys[x], &keys[y], sizeof(*keys));

	return c ? c : (x > y) - (x < y);
}

/*
 * With exact sets, does the filter hold every flow of the batch as often as
 * the batch deletes it? Else says which flow is the first, in the input's
 * order, to find none left (nothing is deleted then): a flow added once and
 * deleted twice would take the second copy from the counters (or buckets)
 * of the flows it shares them with.
 */
static int check_members(struct fb_store *f, const struct fb_flows *fl)
{
	char where[FB_FLOWS_WHERE], text[FB_FLOW_STR];
	size_t *at, i, j, bad = SIZE_MAX;
	__u32 held = 0;

	if (!f->hdr->confirm || !fl->n)
		return 0;
	at = malloc(fl->n * sizeof(*at));
	if (!at) {
		fb_err("out of memory checking %zu deletions; nothing deleted", fl->n);
		return -1;
	}
	for (i = 0; i < fl->n; i++)
		at[i] = i;
	qsort_r(at, fl->n, sizeof(*at), cmp_place, fl->keys);
	/* Each run of one flow: its copy past the exact set's count. */
	for (i = 0; i < fl->n; i = j) {
		const struct fb_key *k = &fl->keys[at[i]];
		__u32 c;

		if (fb_exact_get(f, k, &c)) {
			free(at);
			fb_err("nothing deleted");
			return -1;
		}

		for (j = i + 1; j < fl->n && !memcmp(&fl->keys[at[j]], k, sizeof(*k)); j++)
			;
		if (j - i > c && at[i + c] < bad) {
			bad = at[i + c];
			held = c;
		}
	}
	free(at);
	if (bad == SIZE_MAX)
		return 0;
	fb_flows_where(fl, bad, where, sizeof(where));
	fb_flow_format(&fl->keys[bad], text, sizeof(text));
	if (!held)
		fb_err("%s: '%s' is not in filter '%s' (not in its exact set); nothing deleted",
		       where, text, f->name);
	else
		fb_err("%s: '%s' is deleted more often than filter '%s' holds it (%u in its exact "
		       "set); nothing deleted",
		       where, text, f->name, held);
	return -1;
}

/*
 * Why del refuses flow bad of fl: no counter holds it, or the input deletes
 * it more often than the filter holds it (an earlier line, or another rule
 * the same written rule or an overlapping one makes, deletes the same key:
 * `load` holds a rule once however often its list names it).
 */
static void del_refusal(const struct fb_flows *fl, size_t bad, const char *part, const char *name,
			const char *why)
{
	char where[FB_FLOWS_WHERE], first[FB_FLOWS_WHERE], text[FB_FLOW_STR];
	size_t j = 0;

	fb_flows_where(fl, bad, where, sizeof(where));
	fb_flow_format(&fl->keys[bad], text, sizeof(text));
	while (j < bad && memcmp(&fl->keys[j], &fl->keys[bad], sizeof(fl->keys[j])))
		j++;
	if (j == bad) {
		fb_err("%s: '%s' is not in %sfilter '%s' (%s); nothing deleted", where, text, part,
		       name, why);
		return;
	}
	fb_flows_where(fl, j, first, sizeof(first));
	fb_err("%s: '%s' is deleted more often than %sfilter '%s' holds it: %s deletes it too "
	       "(load holds a rule once, however often its list names it); nothing deleted",
	       where, text, part, name, first);
}

/*
 * With exact sets, a deletion's copies out of them, after its counters (or
 * buckets): 0, or -1 (said) with the sets as they were, the caller then
 * putting the counters back: a deletion the sets refused changes nothing
 * (counts above the counters' would let a later del lower other flows').
 */
static int exact_out(struct fb_store *f, const struct fb_flows *fl)
{
	size_t i;

	for (i = 0; f->hdr->confirm && i < fl->n; i++)
		if (fb_exact_adjust(f, &fl->keys[i], -1)) {
			while (i--)
				fb_exact_adjust(f, &fl->keys[i], 1);
			return -1;
		}
	return 0;
}

/*
 * del on a cuckoo or d-left filter: one stored copy of each flow, all or
 * nothing. A flow never added whose fingerprint collides with a member's
 * passes every check the table can make and would delete that member's
 * copy, a false negative for a flow still listed. So it is allowed only
 * when the exact sets can tell (--confirm exact) or when the operator says
 * --force; a flow whose fingerprint is in none of its buckets is always
 * refused. A scalable Bloom filter cannot forget a flow. The caller holds
 * the lock.
 */
static int del_typed(struct fb_store *f, struct fb_flows *fl, bool force)
{
	const struct fb_ftype_ops *ops = fb_ftype(f->hdr->type);
	struct fb_batch_err e = { 0, 0 };
	double t0;
	int r;

	if (!(ops->flags & FB_FTYPE_DELETES)) {
		fb_err("'%s' is a %s filter: it cannot forget a flow (use a cuckoo or dleft "
		       "filter, or load --replace)",
		       f->name, ops->name);
		return 1;
	}
	if ((ops->flags & FB_FTYPE_DEL_ASKS) && !f->hdr->confirm && !force) {
		fb_err("'%s' is a %s filter: a flow never added may share a member's fingerprint "
		       "and delete it; give --force, or create the filter with --confirm exact",
		       f->name, fb_ftype_name(f->hdr->type));
		return 1;
	}
	t0 = fb_now();
	if (check_members(f, fl))
		return 1;
	r = fb_ftype_del(f, fl->keys, fl->n, &e);
	if (r) {
		if (r == -4) {
			/* (said) */
		} else if (r == -2) {
			fb_err("out of memory deleting %zu flows; nothing deleted", fl->n);
		} else {
			del_refusal(fl, e.bad, "", f->name,
				    "its fingerprint is in none of its buckets");
		}
		return 1;
	}
	if (exact_out(f, fl)) {
		/* The buckets back (room for them was just made). */
		if (fb_ftype_add(f, fl->keys, fl->n, &e))
			fb_err("the flows are out of the buckets of '%s' but still in its exact "
			       "sets (out of memory putting them back): rebuild it with load "
			       "--replace",
			       f->name);
		else
			fb_err("nothing deleted");
		return 1;
	}
	t0 = fb_now() - t0;
	report("deleted", f, fl->n, t0);
	return 0;
}

/*
 * del on a counting filter that has rules with a lifetime: each flow from
 * the part of the filter holding it (fb_del_part): the live generations
 * holding it (one copy from each), or the permanent rules. One both parts
 * hold refuses the whole input unless part says which; a flow held nowhere
 * too.
 */
static int del_gens(struct fb_store *f, struct fb_flows *fl, enum fb_del_part part)
{
	char where[FB_FLOWS_WHERE], text[FB_FLOW_STR];
	struct fb_gen_views gv;
	enum fb_del_part *p = NULL;
	size_t i, bad;
	double t0 = fb_now();
	int rc = 1, r;

	if (fb_gens_reclaim(f) < 0 || fb_gens_views_open(f, &gv) < 0)
		return 1;
	/* Checked whole, as the deletes will run: a flow deleted twice but
	 * held once is refused, not taken from the flows sharing its
	 * counters. */
	r = fb_gens_check_dels(f, &gv, fl->keys, fl->n, part, &bad);
	if (r == -2 || !(p = malloc(fl->n * sizeof(*p) + 1))) {
		fb_err("out of memory checking %zu deletions; nothing deleted", fl->n);
		goto out;
	}
	if (r) {
		fb_flows_where(fl, bad, where, sizeof(where));
		fb_flow_format(&fl->keys[bad], text, sizeof(text));
		if (r == -3)
			fb_err("%s: '%s' is held both by the permanent rules and by rules with a "
			       "lifetime of filter '%s' (or is a false positive of one): say which "
			       "to delete it from, --permanent or --with-lifetime; nothing deleted",
			       where, text, f->name);
		else
			del_refusal(fl, bad,
				    part == FB_DEL_LIFETIME ? "the rules with a lifetime of " : "",
				    f->name, "a counter is 0");
		goto out;
	}
	/* Each flow's part as checked, before any is deleted. */
	for (i = 0; i < fl->n; i++)
		p[i] = part ? part : fb_gens_part(f, &gv, &fl->keys[i]);
	for (i = 0; i < fl->n; i++)
		fb_gens_del_held(f, &gv, &fl->keys[i], p[i]);
	rc = 0;
out:
	free(p);
	fb_gens_views_close(&gv);
	if (!rc) {
		t0 = fb_now() - t0;
		report("deleted", f, fl->n, t0);
	}
	return rc;
}

int cmd_del(int argc, char **argv)
{
	struct fb_store f;
	struct fb_flows fl;
	size_t bad;
	double t0;
	struct del_opts d = { false, FB_DEL_ANY };
	struct fb_gen_views gv;
	bool gens, locked = false;
	int r, rc = flows_args(argc, argv, &f, &fl, &d, NULL);

	if (rc)
		return rc;
	rc = 1;
	/* A file's rules once each, as `load` holds them (a note says so
	 * once they are out). */
	if (fl.file && fb_flows_unique(&fl, "deleted"))
		goto out;
	/* Everything below reads the filter as the lock finds it: a replace
	 * while del waited for it may hold a prefix otherwise (whole, or as
	 * other pieces), or have made or ended generations. */
	if (fb_store_lock(&f))
		goto out;
	locked = true;
	if (d.part == FB_DEL_LIFETIME && !f.hdr->gens) {
		fb_err("filter '%s' holds no rules with a lifetime (--with-lifetime)", f.name);
		goto out;
	}
	/* A prefix load expanded: as its pieces, in each part del takes from. */
	gens = f.hdr->gens && f.cnt_hdr && d.part != FB_DEL_PERMANENT;
	if (gens && fb_gens_views_open(&f, &gv) < 0)
		goto out;
	r = fb_flows_as_stored(&fl, &f, d.part != FB_DEL_LIFETIME, gens ? &gv : NULL);
	if (gens)
		fb_gens_views_close(&gv);
	if (r)
		goto out;
	if (fb_ftype(f.hdr->type)->flags & FB_FTYPE_TABLE) {
		rc = del_typed(&f, &fl, d.force);
		goto out;
	}
	if (!f.cnt_hdr) {
		fb_err("'%s' is a plain Bloom filter: it cannot forget a flow (create it with "
		       "--counting)",
		       f.name);
		goto out;
	}
	/* --permanent: as a filter without rules with a lifetime. */
	if (f.hdr->gens && d.part != FB_DEL_PERMANENT) {
		rc = del_gens(&f, &fl, d.part);
		goto out;
	}
	t0 = fb_now();
	/* With exact sets, a counting filter can tell a member from a false
	 * positive: deleting a false positive would lower others' counters. */
	if (check_members(&f, &fl))
		goto out;
	/* A batch with a flow the counters do not hold changes nothing. */
	rc = fb_counting_del_batch(&f, fl.keys, fl.n, &bad);
	if (rc) {
		if (rc == -2) {
			fb_err("out of memory checking %zu deletions; nothing deleted", fl.n);
		} else {
			del_refusal(&fl, bad, "", f.name, "a counter is 0");
		}
		rc = 1;
		goto out;
	}
	if (exact_out(&f, &fl)) {
		fb_counting_add_many(&f, fl.keys, fl.n);
		fb_err("nothing deleted");
		rc = 1;
		goto out;
	}
	t0 = fb_now() - t0;
	fb_store_unlock(&f);
	locked = false;
	report("deleted", &f, fl.n, t0);
	rc = 0;
out:
	if (locked)
		fb_store_unlock(&f);
	/* Said once done: a refusal deleted nothing. */
	if (!rc)
		fb_flows_note_again(&fl, "deleted");
	fb_store_close(&f);
	fb_flows_free(&fl);
	return rc;
}

int fb_flows_open(int argc, char **argv, struct fb_store *f, struct fb_flows *fl)
{
	return flows_args(argc, argv, f, fl, NULL, NULL);
}
