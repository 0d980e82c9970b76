// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom load`: block-lists as operators get them. One entry per line,
 * mixed freely:
 *   198.51.100.7   203.0.113.0/24   2001:db8:12::/48     a source rule
 *   198.51.100.10-198.51.100.20                          a range: prefixes
 *   1.10.16.0/20 ; SBL256894                             Spamhaus DROP
 *   # comment                                            FireHOL netsets
 *   udp 198.51.100.1:53 203.0.113.7:4000 | src P | dst P any FLOW
 * '#' and ';' start comments. The whole input is parsed first; one bad line
 * rejects the load, naming FILE:LINE. Prefix lengths beyond the data path's
 * FB_MAX_LENGTHS per direction and family are expanded into longer ones.
 * --replace builds the new content aside and switches to it in one step.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cmd.h"
#include "rules/flow.h"
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

struct list {
	struct fb_key *keys;
	size_t n, cap;
};

static int push(struct list *l, const struct fb_key *k)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		struct fb_key *nk = realloc(l->keys, cap * sizeof(*nk));

		if (!nk)
			return -1;
		l->keys = nk;
		l->cap = cap;
	}
	l->keys[l->n++] = *k;
	return 0;
}

/* A range's prefixes: of the range's family (cmd_load keeps it in key). */
struct range_ctx {
	struct list *l;
	__u8 family;
};

static int push_prefix(const __u8 addr[16], int plen, void *ctx)
{
	struct range_ctx *rc = ctx;
	struct fb_key k = { 0 };

	memcpy(k.saddr, addr, 16);
	k.plen = plen;
	k.kind = FB_KIND_SRC;
	k.family = plen < 96 ? FB_FAMILY_IPV6 : rc->family;
	return push(rc->l, &k);
}

/* One entry: a single word is a source address, prefix or range. */
static int parse_entry(char *line, struct list *l, char *err, size_t errlen)
{
	char *words[FB_FLOW_WORDS], *save = NULL, *w;
	struct fb_key k, keys[FB_RULE_KEYS_MAX];
	size_t nk, j;
	int n = 0, used;

	for (w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == FB_FLOW_WORDS) {
			snprintf(err, errlen, "too many words for one entry");
			return -1;
		}
		words[n++] = w;
	}
	if (!n)
		return 0;
	if (n == 1) {
		char *dash = strchr(words[0], '-');

		if (dash) {
			__u8 lo[16], hi[16], pl, hifam;
			struct range_ctx ctx = { l, 0 };
			int rc;

			*dash = 0;
			if (fb_prefix_parse(words[0], lo, &pl, &ctx.family, err, errlen) ||
			    pl != 128 || fb_prefix_parse(dash + 1, hi, &pl, &hifam, err, errlen) ||
			    pl != 128 || ctx.family != hifam) {
				snprintf(err, errlen,
					 "bad range '%s-%s' (want ADDR-ADDR, one family)", words[0],
					 dash + 1);
				return -1;
			}
			if (memcmp(lo, hi, 16) > 0) {
				snprintf(err, errlen, "bad range '%s-%s' (start after end)",
					 words[0], dash + 1);
				return -1;
			}
			rc = fb_prefixes_from_range(lo, hi, push_prefix, &ctx);
			if (rc < 0) {
				snprintf(err, errlen, "out of memory after %zu entries", l->n);
				return -1;
			}
			return 0;
		}
		memset(&k, 0, sizeof(k));
		if (fb_prefix_parse(words[0], k.saddr, &k.plen, &k.family, err, errlen))
			return -1;
		k.kind = FB_KIND_SRC;
		return push(l, &k)
			       ? (snprintf(err, errlen, "out of memory after %zu entries", l->n),
				  -1)
			       : 0;
	}
	used = fb_flow_parse_keys(n, words, keys, &nk, err, errlen);
	if (used < 0)
		return -1;
	if (used != n) {
		snprintf(err, errlen, "unexpected '%s' after the entry", words[used]);
		return -1;
	}
	for (j = 0; j < nk; j++)
		if (push(l, &keys[j])) {
			snprintf(err, errlen, "out of memory after %zu entries", l->n);
			return -1;
		}
	return 0;
}

static int read_list(const char *file, struct list *l)
{
	struct fb_lines r;
	char *line, err[256];
	size_t len;
	int rc;

	if (fb_lines_open(&r, file))
		return -1;
	while ((rc = fb_lines_next(&r, &line, &len)) > 0) {
		char *c;

		for (c = line; *c; c++)
			if (*c == '#' || *c == ';') {
				*c = 0;
				break;
			}
		if (parse_entry(line, l, err, sizeof(err))) {
			fb_err("%s:%zu: %s", r.label, r.lineno, err);
			rc = -1;
			break;
		}
	}
	fb_lines_close(&r);
	return rc;
}

int fb_load_check_lists(char *const *files, int n)
{
	struct list l = { 0 };
	int i, rc = 0;

	for (i = 0; i < n && !rc; i++)
		rc = read_list(files[i], &l) ? -1 : 0;
	free(l.keys);
	return rc;
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct fb_key));
}

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
	struct list l = { 0 };
	bool replace = false;
	char err[512], text[FB_FLOW_STR];
	struct fb_store f;
	size_t i, j, bad;
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
		if (read_list(argv[i], &l)) {
			free(l.keys);
			return 1;
		}
	/* Duplicates add nothing to a list (and would count twice). */
	if (l.n) {
		qsort(l.keys, l.n, sizeof(*l.keys), cmp_key);
		for (i = j = 1; i < l.n; i++)
			if (memcmp(&l.keys[i], &l.keys[j - 1], sizeof(*l.keys)))
				l.keys[j++] = l.keys[i];
		l.n = j;
	}
	if (fb_store_open(argv[optind], &f)) {
		free(l.keys);
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
	free(l.keys);
	return rc;
}
