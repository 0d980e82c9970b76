// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom traffic`: the sketch's estimate for given flows.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "cmd.h"
#include "monview.h"
#include "clock.h"
#include "rules/flow.h"
#include "output.h"

/* A flow traffic cannot take: given as an argument, a usage error (2), as
 * query --packet's; a file's line, FILE:LINE and exit 1. */
static int refuse(const struct fb_flows *fl, const char *why)
{
	if (fl->file) {
		fb_err("%s", why);
		return 1;
	}
	fb_usage("%s", why);
	return 2;
}

int cmd_traffic(int argc, char **argv)
{
	const char *name;
	char since[64], text[FB_FLOW_STR], where[FB_FLOWS_WHERE], why[FB_FLOWS_WHERE + 400];
	struct fb_mon_snap s = { 0 };
	struct fb_flows fl;
	struct fb_monitor m;
	struct fb_store f;
	__u64 p, b, err_p, err_b;
	int rc;
	bool by_dst;
	size_t i;

	if ((rc = fb_flows_args(argc, argv, &name, &fl, false)))
		return rc;
	rc = 1;
	/* Never a key of any sketch: refused before the filter is read. */
	for (i = 0; i < fl.n; i++) {
		const struct fb_key *k = &fl.keys[i];

		if ((k->kind == FB_KIND_FLOW && !k->plen) ||
		    ((k->kind == FB_KIND_SRC || k->kind == FB_KIND_DST) && k->plen == 128))
			continue;
		fb_flows_where(&fl, i, where, sizeof(where));
		snprintf(why, sizeof(why),
			 "%s: the sketch counts 5-tuples (PROTO SRC:PORT DST:PORT), or one "
			 "address (src ADDR, dst ADDR) with attach --sketch-by, not prefixes or "
			 "other rule shapes",
			 where);
		rc = refuse(&fl, why);
		fb_flows_free(&fl);
		return rc;
	}
	if (fb_monview_open(name, FB_MON_SKETCH, &f, &m)) {
		fb_flows_free(&fl);
		return 1;
	}
	/* What the sketch counts: 5-tuples, or (--sketch-by) the addresses
	 * of one side, which a 5-tuple of that address stands for. */
	by_dst = m.cfg.flags & FB_MON_BY_DST;
	for (i = 0; i < fl.n; i++) {
		const struct fb_key *k = &fl.keys[i];

		if ((k->kind == FB_KIND_FLOW && !k->plen) ||
		    ((m.cfg.flags & FB_MON_BY_ADDR) &&
		     k->kind == (by_dst ? FB_KIND_DST : FB_KIND_SRC) && k->plen == 128))
			continue;
		fb_flows_where(&fl, i, where, sizeof(where));
		if (m.cfg.flags & FB_MON_BY_ADDR)
			snprintf(why, sizeof(why),
				 "%s: the sketch of '%s' counts %s addresses (attach --sketch-by "
				 "%s): give `%s ADDR` (one address) or a 5-tuple, not other rule "
				 "shapes",
				 where, name, fb_monview_key_noun(&m), fb_monitor_sketch_by(&m),
				 fb_monitor_sketch_by(&m));
		else
			snprintf(why, sizeof(why),
				 "%s: the sketch counts 5-tuples (PROTO SRC:PORT DST:PORT), not "
				 "addresses or other rule shapes",
				 where);
		rc = refuse(&fl, why);
		goto out;
	}
	if (fb_monitor_snap_take(&m, &s))
		goto out;
	err_p = fb_monview_max_error(&m, s.packets);
	err_b = fb_monview_max_error(&m, s.bytes);
	fb_clock_format(m.cfg.created_ns, false, since, sizeof(since));
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f.name);
		jw_str("since", since);
		jw_str("sketch_by", fb_monitor_sketch_by(&m));
		jw_u64("total_packets", s.packets);
		jw_u64("total_bytes", s.bytes);
		jw_u64("max_error_packets", err_p);
		jw_u64("max_error_bytes", err_b);
		jw_double("confidence", 1 - fb_monitor_delta(&m));
		jw_arr_open("flows");
	} else {
		printf("'%s' since %s: %llu packet%s, %llu byte%s\n", f.name, since,
		       (unsigned long long)s.packets, fb_monview_s(s.packets),
		       (unsigned long long)s.bytes, fb_monview_s(s.bytes));
		printf("estimates are never below the truth, and above it by at most %llu "
		       "packet%s, "
		       "%llu byte%s with probability %.4g%%\n",
		       (unsigned long long)err_p, fb_monview_s(err_p), (unsigned long long)err_b,
		       fb_monview_s(err_b), 100 * (1 - fb_monitor_delta(&m)));
		printf("%14s %16s  %s\n", "packets", "bytes", fb_monview_key_noun(&m));
	}
	for (i = 0; i < fl.n; i++) {
		struct fb_key k;

		/* The key the sketch counts it under: itself, or its address. */
		fb_monitor_sketch_key(&m, &fl.keys[i], &k);
		fb_monitor_estimate(&m, &s, NULL, &k, &p, &b);
		fb_monview_key_text(&m, &k, text, sizeof(text));
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("flow", text);
			jw_u64("packets", p);
			jw_u64("bytes", b);
			jw_u64("packets_at_least", p > err_p ? p - err_p : 0);
			jw_u64("bytes_at_least", b > err_b ? b - err_b : 0);
			jw_obj_close();
		} else {
			printf("%14llu %16llu  %s\n", (unsigned long long)p, (unsigned long long)b,
			       text);
		}
	}
	if (fb_json) {
		jw_arr_close();
		jw_obj_close();
		jw_end();
	}
	rc = 0;
out:
	fb_monitor_snap_free(&s);
	fb_flows_free(&fl);
	fb_monview_close(&f, &m);
	return rc;
}
