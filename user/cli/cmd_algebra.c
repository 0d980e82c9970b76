// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Set algebra on filters: `merge` (union), `intersect`, `fold`, `card`.
 * A collector merges the seen-flow or block filters routers export
 * (the seeds' distributed / Bloom-join use) without importing each first:
 * an argument with a '/' or a '.' is an export file (user/lib/fleet/algebra.h).
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fleet/algebra.h"
#include "bgprun.h"
#include "cmd.h"
#include "output.h"

/* A source filter's rules with a lifetime are not in its copy: refused
 * (they would be missing from the result without a word), unless it is
 * the filter merged into, which keeps its own. */
static int no_gens(const struct fb_alg_img *img, const char *into, const char *verbs)
{
	if (!img->gens || (into && !strcmp(img->label, into)))
		return 0;
	fb_err("'%s' holds rules with a lifetime, which %s leave%s out: merge the others --into "
	       "it (a filter keeps its own), or wait until they end",
	       img->label, verbs, strchr(verbs, ' ') ? "" : "s");
	return -1;
}

/* A source refused (unreadable, not an export, not combinable), kept while
 * quiet: said with what is left, as every refusal is. */
static void refused(bool quiet, const char *verb)
{
	char why[sizeof(fb_report_last)];

	memcpy(why, fb_report_last, sizeof(why));
	fb_report_quiet = quiet;
	fb_err("%s; nothing %s", why, verb);
}

/* SRC SRC... --into NAME: every source loaded and combined in memory, the
 * result written last (nothing changes unless all of it worked). */
static int combine(int argc, char **argv, enum fb_alg_op op)
{
	static const struct option opts[] = {
		{ "into", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	const char *into = NULL, *verb = op == FB_ALG_UNION ? "merged" : "intersected";
	struct fb_alg_img acc, next;
	bool replaced, self = false, all_self, quiet = fb_report_quiet;
	char state[PATH_MAX];
	__u32 self_crc = 0;
	int c, i, rc = 1;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c != 'i')
			return fb_bad_option(c, argv);
		into = optarg;
	}
	if (!into)
		return fb_usage("missing --into NAME");
	if (argc - optind < 2)
		return fb_usage("needs two filters or export files at least");
	if (fb_alg_is_file(into))
		return fb_usage("--into takes a filter name, not a file ('%s'; export it after)",
				into);
	fb_report_last[0] = 0;
	fb_report_quiet = true;
	if (fb_alg_load(argv[optind], &acc)) {
		refused(quiet, verb);
		return 1;
	}
	if (no_gens(&acc, into, "merge and intersect"))
		goto refused;
	if (!strcmp(argv[optind], into)) {
		self = true;
		self_crc = acc.crc;
	}
	all_self = self;
	for (i = optind + 1; i < argc; i++) {
		if (fb_alg_load(argv[i], &next))
			goto refused;
		if (no_gens(&next, into, "merge and intersect")) {
			fb_alg_free(&next);
			goto refused;
		}
		if (!strcmp(argv[i], into)) {
			/* NAME twice (merge A A --into A): a writer between
			 * the copies is a change the check under the lock
			 * (the last copy's crc) would not see, and the result
			 * would undo it (a deleted rule back). */
			if (self && next.crc != self_crc) {
				fb_alg_free(&next);
				fb_report_quiet = quiet;
				fb_err("'%s' changed while it was being merged (a concurrent "
				       "writer); nothing changed, run it again",
				       into);
				goto out;
			}
			self = true;
			self_crc = next.crc;
		} else {
			all_self = false;
		}
		c = fb_alg_combine(&acc, &next, op);
		fb_alg_free(&next);
		if (c)
			goto refused;
	}
	fb_report_quiet = quiet;
	/* An intersection of NAME with another replaces its permanent rules
	 * with some of them: bgp's among them, which bgp, finding new
	 * permanent rules, adds again (bgpfeeds.c). Refused. */
	if (op == FB_ALG_INTERSECT && self && !all_self && bgp_feeds(into, state, sizeof(state))) {
		fb_err("'%s' holds the rules of flowbloom bgp (%s names them): intersected with "
		       "another filter, a rule of bgp's found in both would be counted twice, and "
		       "stay after its route's withdrawal; nothing changed (intersect into another "
		       "filter, or end bgp's rules first: flowbloom bgp %s --flush)",
		       into, state, into);
		goto out;
	}
	/* NAME's permanent rules are all in a union with it (or an
	 * intersection of it with itself only): they keep their identity. */
	if (fb_alg_store(into, &acc, self ? &self_crc : NULL,
			 self && (op == FB_ALG_UNION || all_self), &replaced))
		goto out;
	rc = 0;
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str(verb, into);
		jw_bool("replaced", replaced);
		jw_u64("inputs", argc - optind);
		jw_u64("flows", acc.m.hdr->nflows);
		jw_obj_close();
		jw_end();
	} else {
		printf("%s %d filters into %s (%s): %llu flow%s%s\n", verb, argc - optind, into,
		       replaced ? "replaced" : "created", (unsigned long long)acc.m.hdr->nflows,
		       acc.m.hdr->nflows == 1 ? "" : "s",
		       op == FB_ALG_UNION ? " (sum: an upper bound)" : " (estimated)");
	}
	goto out;
refused:
	refused(quiet, verb);
out:
	fb_alg_free(&acc);
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	return combine(argc, argv, FB_ALG_UNION);
}

int cmd_intersect(int argc, char **argv)
{
	return combine(argc, argv, FB_ALG_INTERSECT);
}

int cmd_fold(int argc, char **argv)
{
	__u32 nblocks;

	if (fb_no_options(&argc, argv))
		return 2;
	if (argc != 2)
		return fb_usage(argc < 2 ? "missing NAME" : "too many arguments");
	if (fb_alg_fold(argv[1], &nblocks))
		return 1;
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("folded", argv[1]);
		jw_u64("bits", (unsigned long long)nblocks * FB_BLOCK_BITS);
		jw_obj_close();
		jw_end();
	} else {
		printf("folded %s to m=%llu bits\n", argv[1],
		       (unsigned long long)nblocks * FB_BLOCK_BITS);
	}
	return 0;
}

/* An estimate; JSON null and "full" when the fill leaves none. */
static void est_json(const char *name, double v)
{
	if (isfinite(v))
		jw_double(name, round(v));
	else
		jw_null(name);
}

static void est_plain(const char *what, double v)
{
	if (isfinite(v))
		printf("%s %.0f\n", what, v);
	else
		printf("%s unknown (filter full)\n", what);
}

int cmd_card(int argc, char **argv)
{
	struct fb_alg_img img[2];
	struct fb_sa_est e;
	char why[200];
	int i, rc = 1;

	if (fb_no_options(&argc, argv))
		return 2;
	if (argc < 2)
		return fb_usage("missing SRC (a filter, or an export file)");
	if (argc > 3)
		return fb_usage("at most two SRCs");
	for (i = 1; i < argc; i++) {
		if (fb_alg_load(argv[i], &img[i - 1]))
			goto fail;
		if (no_gens(&img[i - 1], NULL, "card")) {
			fb_alg_free(&img[i - 1]);
			goto fail;
		}
	}
	if (argc == 2) {
		e.a = fb_sa_cardinality(&img[0].m);
	} else if (fb_sa_estimate(&img[0].m, &img[1].m, &e, why, sizeof(why))) {
		fb_err("%s and %s: %s", argv[1], argv[2], why);
		goto out;
	}
	rc = 0;
	if (fb_json) {
		jw_obj_open(NULL);
		jw_arr_open("filters");
		for (i = 1; i < argc; i++) {
			jw_obj_open(NULL);
			jw_str("name", argv[i]);
			est_json("flows", i == 1 ? e.a : e.b);
			jw_u64("flows_added", img[i - 1].m.hdr->nflows);
			jw_obj_close();
		}
		jw_arr_close();
		if (argc == 3) {
			est_json("union", e.uni);
			est_json("intersection", e.inter);
			if (isfinite(e.uni))
				jw_double("jaccard", e.jaccard);
			else
				jw_null("jaccard");
		}
		jw_obj_close();
		jw_end();
	} else {
		for (i = 1; i < argc; i++) {
			char what[600];

			snprintf(what, sizeof(what), "%s: flows", argv[i]);
			est_plain(what, i == 1 ? e.a : e.b);
		}
		if (argc == 3) {
			est_plain("union: flows", e.uni);
			est_plain("intersection: flows", e.inter);
			if (isfinite(e.uni))
				printf("jaccard %.4f\n", e.jaccard);
			else
				printf("jaccard unknown (filter full)\n");
		}
	}
out:
	for (i = 1; i < argc; i++)
		fb_alg_free(&img[i - 1]);
	return rc;
fail: /* sources 1..i-1 loaded */
	while (--i >= 1)
		fb_alg_free(&img[i - 1]);
	return 1;
}
