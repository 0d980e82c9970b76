// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom load`: block-lists as operators get them (their grammar:
 * user/lib/rules/lists.c). The whole input is parsed first; one bad line
 * rejects the load, naming FILE:LINE. Prefix lengths beyond the data
 * path's FB_MAX_LENGTHS per direction and family are expanded into longer
 * ones. --replace builds the new content aside and switches to it in one
 * step.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cmd.h"
#include "rules/flow.h"
#include "rules/lists.h"
#include "types/ftype.h"
#include "output.h"
#include "rules/prefixes.h"
#include "store/replace.h"
#include "store/gens.h"
#include "parse.h"
#include "rules/rules.h"
#include "types/sizing.h"
#include "store/store.h"
#include "util.h"

/* A cuckoo or d-left filter refused the list (nothing changed). */
static void full(const struct fb_store *f, const struct fb_key *k)
{
	char text[FB_FLOW_STR];

	fb_flow_format(k, text, sizeof(text));
	fb_err("'%s' does not fit: %s filter '%s' is full at load factor %.4f; nothing loaded",
	       text, fb_ftype_name(f->hdr->type), f->name, f->refused_load);
}

int cmd_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "replace", no_argument, NULL, 'r' },
		{ "ttl", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	double ttl = 0;
	struct fb_gen g;
	struct fb_prefixes none = { 0 }, want;
	struct fb_expand_budget budget;
	struct fb_expansion ex;
	struct fb_list l = { 0 };
	bool replace = false;
	char err[512], text[FB_FLOW_STR];
	struct fb_store f;
	size_t i, bad;
	double t0;
	int c, rc = 1;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 't') {
			if (fb_parse_duration("--ttl", optarg, FB_TTL_MIN, FB_TTL_MAX, &ttl))
				return 2;
			continue;
		}
		if (c != 'r')
			return fb_usage("unknown or incomplete option '%s'", argv[optind - 1]);
		replace = true;
	}
	if (argc - optind < 2)
		return fb_usage("missing NAME or FILE");
	for (i = optind + 1; i < (size_t)argc; i++)
		if (fb_list_read(argv[i], &l)) {
			fb_list_free(&l);
			return 1;
		}
	fb_list_unique(&l);
	if (fb_store_open(argv[optind], &f)) {
		fb_list_free(&l);
		return 1;
	}
	if (ttl > 0 && fb_gens_supported(&f))
		goto out;
	if (fb_store_lock(&f))
		goto out;
	t0 = fb_now();
	/* Rules with a lifetime go to a generation, whose prefix lengths
	 * start empty. A Bloom filter sized by capacity and rate gets its
	 * lengths chosen by cost on --replace: fewer probes when its memory
	 * allows. Not a counting filter (`del` of a prefix finds it only
	 * unexpanded), nor rules with a lifetime (a generation has the
	 * filter's geometry, not one sized for them). */
	budget.bytes = fb_replace_bytes;
	budget.ctx = f.hdr;
	if (fb_prefixes_expand(&l.keys, &l.n, replace || ttl > 0 ? &none : fb_store_prefixes(&f),
			       replace && ttl <= 0 && !f.hdr->type && !f.hdr->counter_bits &&
					       f.hdr->capacity && f.hdr->fp_ppb
				       ? &budget
				       : NULL,
			       &ex, err, sizeof(err))) {
		fb_err("%s; nothing loaded", err);
		goto unlock;
	}
	if (ttl > 0) {
		c = replace ? fb_replace_timed(&f, l.keys, l.n, ttl, &bad)
			    : fb_gens_add(&f, l.keys, l.n, ttl, &bad, &g);
		if (c) {
			if (c == -1 && bad != (size_t)-1) {
				fb_flow_format(&l.keys[bad], text, sizeof(text));
				fb_err("'%s' needs one prefix length too many in its generation; "
				       "nothing loaded",
				       text);
			}
			goto unlock;
		}
	} else if (replace) {
		__u32 nblocks = f.hdr->nblocks, kinds = 0;
		struct fb_block geom[5];
		__u8 k = f.hdr->k;
		/* Another filter type: its own geometry, sized by the same rule. */
		bool table = fb_ftype(f.hdr->type)->flags & FB_FTYPE_TABLE;

		/* A filter sized by capacity and rate is re-sized for the new
		 * list: capacity at least its length, the rate per packet
		 * spread over the probes it will make. */
		memset(&want, 0, sizeof(want));
		for (i = 0; i < l.n; i++)
			kinds |= FB_KINDF(l.keys[i].kind);
		if (fb_rules_merge_lengths(&want, l.keys, l.n, &bad) == -4) {
			fb_flow_format(&l.keys[bad], text, sizeof(text));
			fb_rules_mask_refusal(&none, l.keys, bad, err, sizeof(err));
			fb_err("'%s': %s; nothing loaded", text, err);
			goto unlock;
		}
		if (table || (f.hdr->capacity && f.hdr->fp_ppb)) {
			double n = l.n > f.hdr->capacity ? l.n : f.hdr->capacity;
			double q = fb_probe_target(f.hdr->fp_ppb / 1e9,
						   fb_probes_per_packet(kinds, &want));

			if (fb_ftype_resize(&f, n, q, &nblocks, &k, geom)) {
				fb_err("the new list needs more than the largest filter; nothing "
				       "loaded");
				goto unlock;
			}
			/* A Bloom filter gets whole chunks, as create sizes it; a
			 * table type's geometry says its size. */
			if (!table)
				nblocks = fb_whole_chunks(nblocks);
		}
		f.refused_load = -1;
		if (fb_rules_replace_geom(&f, nblocks, k, table ? geom : NULL, l.keys, l.n, &bad)) {
			if (f.refused_load >= 0 && bad != (size_t)-1)
				full(&f, &l.keys[bad]);
			goto unlock;
		}
	} else if ((c = fb_rules_add(&f, l.keys, l.n, &bad))) {
		if (c == -3)
			full(&f, &l.keys[bad]);
		if (c == -2 || c == -3)
			goto unlock;
		fb_flow_format(&l.keys[bad], text, sizeof(text));
		if (c == -4) {
			fb_rules_mask_refusal(fb_store_prefixes(&f), l.keys, bad, err, sizeof(err));
			fb_err("'%s': %s; nothing loaded", text, err);
		} else {
			fb_err("'%s' needs one prefix length too many; nothing loaded", text);
		}
		goto unlock;
	}
	t0 = fb_now() - t0;
	rc = 0;
	{
		unsigned probes = fb_probes_per_packet(f.hdr->kinds, fb_store_prefixes(&f));
		double r = fb_packet_rate(fb_ftype_fpr_now(&f), probes);

		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("filter", f.name);
			jw_u64("loaded", l.n);
			jw_bool("replaced", replace);
			if (ttl > 0)
				jw_double("ttl", ttl);
			else
				jw_null("ttl");
			jw_u64("prefixes_before_expansion", ex.before);
			jw_u64("prefixes_after_expansion", ex.after);
			jw_u64("bits", fb_header_mbits(f.hdr));
			jw_u64("probes_per_packet", probes);
			jw_double("fp_rate_per_packet", r);
			jw_double("seconds", t0);
			jw_obj_close();
			jw_end();
		} else {
			printf("%s %zu rules%s into %s in %.3f ms; %u probes per packet, expected "
			       "false-positive rate per packet %.3g\n",
			       replace ? "replaced with" : "loaded", l.n,
			       ttl > 0 ? " with a lifetime" : "", f.name, t0 * 1e3, probes, r);
		}
		if (ex.before != ex.after)
			fprintf(stderr,
				"flowbloom: note: expanded %zu prefixes into %zu: at most %d "
				"prefix "
				"lengths per family and direction, fewer (a probe each) where the "
				"filter's memory holds the entries\n",
				ex.before, ex.after, FB_MAX_LENGTHS);
		if (f.hdr->fp_ppb && r > f.hdr->fp_ppb / 1e9 * 1.0001)
			fprintf(stderr,
				"flowbloom: warning: expected false-positive rate per packet %.3g "
				"is "
				"above the filter's target %g (%u probes per packet); `load "
				"--replace` "
				"re-sizes it\n",
				r, f.hdr->fp_ppb / 1e9, probes);
	}
unlock:
	fb_store_unlock(&f);
out:
	fb_store_close(&f);
	fb_list_free(&l);
	return rc;
}
