// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom load`: block-lists as operators get them (their grammar:
 * user/lib/rules/lists.c). The whole input is parsed first; one bad line
 * rejects the load, naming FILE:LINE. Prefix lengths beyond the data
 * path's FB_MAX_LENGTHS per direction and family are expanded into longer
 * ones. --replace builds the new content aside and switches to it in one
 * step; an input of no rules replaces nothing unless --allow-empty (a
 * failed download must not wipe a list: empty_refused()). What follows
 * the reading is the library's (user/lib/rules/load.c), which `apply`
 * calls too; both print through fb_print_loaded().
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "output.h"
#include "parse.h"
#include "rules/lists.h"
#include "rules/load.h"
#include "store/gens.h"

/* What load says it did (apply's load step too). */
void fb_print_loaded(const struct fb_load_result *r)
{
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", r->filter);
		jw_u64("loaded", r->loaded);
		jw_bool("replaced", r->replaced);
		if (r->compared)
			jw_bool("changed", !r->unchanged);
		if (r->ttl > 0)
			jw_double("ttl", r->ttl);
		else
			jw_null("ttl");
		jw_u64("prefixes_before_expansion", r->before);
		jw_u64("prefixes_after_expansion", r->after);
		jw_u64("bits", r->bits);
		jw_u64("probes_per_packet", r->probes);
		jw_double("fp_rate_per_packet", r->fp_rate);
		if (r->generations >= 0)
			jw_u64("live_generations", r->generations);
		else
			jw_null("live_generations");
		jw_double("seconds", r->seconds);
		jw_obj_close();
		jw_end();
	} else {
		char cover[128] = "";

		/* The figures are what a packet meets: say so when they are
		 * more (or, unreadable generations, less) than the filter's. */
		if (r->generations > 0)
			snprintf(cover, sizeof(cover),
				 " (the permanent rules and %d live generation%s of rules with a "
				 "lifetime)",
				 r->generations, r->generations == 1 ? "" : "s");
		else if (r->generations < 0)
			snprintf(cover, sizeof(cover), " (the permanent rules only)");
		if (r->unchanged)
			printf("unchanged %s: it holds the %zu rule%s already (compared in %.3f "
			       "ms); "
			       "%u probe%s per packet%s, expected false-positive rate per packet "
			       "%.3g\n",
			       r->filter, r->loaded, r->loaded == 1 ? "" : "s", r->seconds * 1e3,
			       r->probes, r->probes == 1 ? "" : "s", cover, r->fp_rate);
		else
			printf("%s %zu rule%s%s into %s in %.3f ms; %u probe%s per packet%s, "
			       "expected false-positive rate per packet %.3g\n",
			       r->replaced ? "replaced with" : "loaded", r->loaded,
			       r->loaded == 1 ? "" : "s", r->ttl > 0 ? " with a lifetime" : "",
			       r->filter, r->seconds * 1e3, r->probes, r->probes == 1 ? "" : "s",
			       cover, r->fp_rate);
	}
	if (r->before != r->after)
		fprintf(stderr,
			"flowbloom: note: expanded %zu prefixes into %zu: at most %d prefix "
			"lengths per family and direction, fewer (a probe each) where the "
			"filter's memory holds the entries\n",
			r->before, r->after, FB_MAX_LENGTHS);
	/* An empty input replaces a list with nothing (a download that failed
	 * into an empty file): allowed, but never silently. Under an allow
	 * action the filter then passes no IP packet. */
	if ((r->replaced || r->unchanged) && !r->loaded)
		fprintf(stderr, "flowbloom: warning: the input held no rules: '%s' %s no %s\n",
			r->filter, r->unchanged ? "has" : "now has",
			r->ttl > 0 ? "rules with a lifetime" : "permanent rules");
	/* The target is the permanent rules' (what --replace re-sizes). */
	if (r->target > 0 && r->own_fp_rate > r->target * 1.0001)
		fprintf(stderr,
			"flowbloom: warning: expected false-positive rate per packet %.3g%s is "
			"above the filter's target %g (%u probe%s per packet); `load --replace` "
			"re-sizes it\n",
			r->own_fp_rate, r->generations ? " of the permanent rules" : "", r->target,
			r->own_probes, r->own_probes == 1 ? "" : "s");
}

/* --replace of files holding no rules, without --allow-empty: the files
 * named (a cron job's `curl ... >list; load bl list --replace` after a
 * failed download), nothing changed. */
static void empty_refused(const struct fb_list *l, bool ttl)
{
	size_t i, n = 0, len = 1;
	char *names;

	for (i = 0; i < l->nfiles; i++)
		len += strlen(l->files[i].label) + 2;
	names = malloc(len);
	if (!names) {
		fb_err("the files hold no rules: nothing replaced");
		return;
	}
	names[0] = 0;
	for (i = 0; i < l->nfiles; i++)
		n += snprintf(names + n, len - n, "%s%s", i ? ", " : "", l->files[i].label);
	fb_err("%s %s no rules: nothing replaced (--allow-empty %s)", names,
	       l->nfiles == 1 ? "holds" : "hold",
	       ttl ? "takes the rules with a lifetime away" : "empties the filter");
	free(names);
}

int cmd_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "replace", no_argument, NULL, 'r' },
		{ "ttl", required_argument, NULL, 't' },
		{ "allow-empty", no_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	struct fb_load_req req = { 0 };
	struct fb_load_result res;
	struct fb_list l = { 0 };
	int c, i, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c == 't') {
			if (fb_parse_duration("--ttl", optarg, FB_TTL_MIN, FB_TTL_MAX, &req.ttl))
				return 2;
		} else if (c == 'e') {
			req.allow_empty = true;
		} else if (c == 'r') {
			req.replace = true;
		} else {
			return fb_bad_option(c, argv);
		}
	}
	if (req.allow_empty && !req.replace)
		return fb_usage("--allow-empty goes with --replace");
	if (argc - optind < 2)
		return fb_usage("missing NAME or FILE");
	/* Input without end is refused where it passes what the filter
	 * can load, in bounded memory. */
	if (fb_load_bound(argv[optind], req.replace && req.ttl <= 0, &l))
		return 1;
	for (i = optind + 1; i < argc; i++) {
		if (fb_list_read(argv[i], &l)) {
			fb_list_free(&l);
			return 1;
		}
		fb_hostbits_file(l.files[l.nfiles - 1].label, &l.files[l.nfiles - 1].hostbits);
	}
	fb_list_unique(&l);
	/* The rest (expansion, add or replace, lifetimes): rules/load.c. */
	rc = fb_load_list(argv[optind], &l, &req, &res);
	if (rc == FB_LOAD_EMPTY)
		empty_refused(&l, req.ttl > 0);
	fb_list_free(&l);
	if (rc)
		return 1;
	fb_print_loaded(&res);
	return 0;
}
