// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom query` and `count`: answers out, read through the mmap of the
 * filter (and of its counters), for rules as they were put in (a prefix
 * `load` expanded is found as its pieces).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "cmd.h"
#include "types/counting.h"
#include "rules/flow.h"
#include "types/ftype.h"
#include "output.h"
#include "rules/prefixes.h"
#include "report.h"
#include "store/gens.h"
#include "rules/rules.h"
#include "store/store.h"

int cmd_query(int argc, char **argv)
{
	char text[FB_FLOW_STR], err[sizeof(fb_report_last)] = "";
	struct fb_gen_views gv;
	struct fb_store f;
	struct fb_flows fl;
	size_t i, hits = 0, unknown = 0;
	const char *yes;
	bool quiet;
	int rc;

	/* The other question: what the program does with a packet (whose
	 * options without --packet are refused there, with the reason). */
	for (i = 1; i < (size_t)argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--packet") || !strncmp(argv[i], "--action", 8) ||
		    !strncmp(argv[i], "--malformed", 11) || !strncmp(argv[i], "--dev", 5))
			return fb_query_packet(argc, argv);
	rc = fb_flows_open(argc, argv, &f, &fl);
	if (rc)
		return rc;
	if (fb_gens_views_read(&f, &gv) < 0) {
		fb_store_close(&f);
		fb_flows_free(&fl);
		return 1;
	}
	/* With --confirm exact the exact sets decide, as on the data path: a
	 * hit is a rule that is there. Else a hit may be a false positive. */
	yes = f.hdr->confirm ? "yes" : "maybe";
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f.name); /* as count, traffic and query --packet */
		jw_arr_open("results");
	}
	for (i = 0; i < fl.n; i++) {
		const struct fb_key *k = &fl.keys[i];
		int as, hit, l = fb_rules_prefix_list(k);

		/* An exact set the kernel would not read (memory): not known,
		 * never "no"; its error said once, after the answers. */
		quiet = fb_report_quiet;
		fb_report_quiet = true;
		fb_report_last[0] = 0;
		hit = fb_rules_query_gens(&f, &gv, k, &as);
		fb_report_quiet = quiet;
		if (hit < 0 && !unknown++)
			snprintf(err, sizeof(err), "%s", fb_report_last);
		hits += hit > 0;
		fb_flow_format(k, text, sizeof(text));
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("flow", text);
			if (hit < 0)
				jw_null("result");
			else
				jw_str("result", hit ? yes : "no");
			if (as)
				jw_u64("expanded_to", fb_prefix_list_written(l, as));
			jw_obj_close();
		} else if (as) {
			printf("%-5s %s (as its %llu /%d prefixes: load expanded it)\n", yes, text,
			       1ULL << (as - k->plen), fb_prefix_list_written(l, as));
		} else {
			printf("%-5s %s\n", hit < 0 ? "?" : hit ? yes : "no", text);
		}
	}
	if (fb_json) {
		jw_arr_close();
		jw_u64("maybe", f.hdr->confirm ? 0 : hits);
		jw_u64("yes", f.hdr->confirm ? hits : 0);
		jw_u64("unknown", unknown);
		jw_u64("total", fl.n);
		jw_obj_close();
		jw_end();
	} else {
		printf("%zu of %zu %s", hits, fl.n, yes);
		if (unknown)
			printf(", %zu not known", unknown);
		printf("\n");
	}
	if (unknown)
		fb_err("cannot tell for %zu of %zu flows: %s", unknown, fl.n,
		       *err ? err : "an exact set could not be read");
	fb_gens_views_close(&gv);
	fb_store_close(&f);
	fb_flows_free(&fl);
	return unknown ? 1 : 0;
}

/* One line of count's answer; -j: {"filter", "results": [{flow, count,
 * saturated, expanded_to (as query's: the length a prefix load expanded
 * was found at, 128-bit space; 0: none)}...]}, opened and closed by
 * count_json. */
static void count_one(const struct fb_key *k, unsigned c, bool sat, int as)
{
	char text[FB_FLOW_STR];

	fb_flow_format(k, text, sizeof(text));
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("flow", text);
		jw_u64("count", c);
		jw_bool("saturated", sat);
		if (as)
			jw_u64("expanded_to", fb_prefix_list_written(fb_rules_prefix_list(k), as));
		jw_obj_close();
	} else {
		printf("%u%s %s\n", c, sat ? "+" : "", text);
	}
}

static void count_json(const struct fb_store *f, bool open)
{
	if (!fb_json)
		return;
	if (open) {
		jw_obj_open(NULL);
		jw_str("filter", f->name);
		jw_arr_open("results");
	} else {
		jw_arr_close();
		jw_obj_close();
		jw_end();
	}
}

/* The copies of k in f (fb_ftype_held): as written and, for a prefix
 * rule, whole at each longer length of f's, as `load` expands one. *as,
 * if 0: the shortest such length holding it, as query says it. */
static unsigned count_in(const struct fb_store *f, const struct fb_key *k, int *as)
{
	int l = fb_rules_prefix_list(k), at = 0;
	unsigned c = fb_ftype_held(k, (void *)f);

	if (l >= 0)
		c += fb_prefixes_held_expanded(k, &fb_store_prefixes(f)->list[l], fb_ftype_held,
					       (void *)f, &at);
	if (!*as)
		*as = at;
	return c;
}

/* count on a cuckoo filter (copies stored in the flow's buckets) or a
 * d-left filter (its cell's counter, 3+ saturated). */
static int count_typed(const struct fb_store *f, const struct fb_flows *fl)
{
	unsigned max = fb_ftype(f->hdr->type)->count_max;
	size_t i;

	count_json(f, true);
	for (i = 0; i < fl->n; i++) {
		int as = 0;
		unsigned c = count_in(f, &fl->keys[i], &as);

		count_one(&fl->keys[i], c, max && c >= max, as);
	}
	count_json(f, false);
	return 0;
}

int cmd_count(int argc, char **argv)
{
	struct fb_gen_views gv;
	struct fb_store f;
	struct fb_flows fl;
	size_t i;
	int rc = fb_flows_open(argc, argv, &f, &fl);

	if (rc)
		return rc;
	/* A table that keeps copies counts them; other tables have no
	 * counters, as a plain Bloom filter has none. */
	if (fb_ftype(f.hdr->type)->flags & FB_FTYPE_DELETES) {
		rc = count_typed(&f, &fl);
		goto out;
	}
	if (f.hdr->type == FB_TYPE_SCALABLE) {
		fb_err("'%s' is a scalable filter: it has no counters (its stages are plain "
		       "Bloom filters)",
		       f.name);
		rc = 1;
		goto out;
	}
	if (!f.cnt_hdr) {
		fb_err("'%s' is a plain Bloom filter: it has no counters (create it with "
		       "--counting)",
		       f.name);
		rc = 1;
		goto out;
	}
	if (fb_gens_views_read(&f, &gv) < 0) {
		rc = 1;
		goto out;
	}
	count_json(&f, true);
	for (i = 0; i < fl.n; i++) {
		int g, as = 0;
		unsigned c = count_in(&f, &fl.keys[i], &as);

		/* Copies with a lifetime, in the live generations. */
		for (g = 0; g < gv.n; g++)
			c += count_in(&gv.v[g], &fl.keys[i], &as);
		count_one(&fl.keys[i], c, c >= fb_counting_max(&f), as);
	}
	count_json(&f, false);
	fb_gens_views_close(&gv);
out:
	fb_store_close(&f);
	fb_flows_free(&fl);
	return rc;
}
