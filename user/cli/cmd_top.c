// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom top`: the heaviest flows from the candidate table, scored with
 * the sketch (maps: monmaps.c).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdlib.h>
#include "clock.h"
#include "cmd.h"
#include "rules/flow.h"
#include "monview.h"
#include "output.h"
#include "parse.h"
#include "util.h"

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "interval", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const bys[] = { "packets", "bytes", NULL };
	static const int by_v[] = { 0, 1 };
	struct fb_mon_snap base = { 0 }, now = { 0 };
	double interval = 0, secs = 0, t0;
	struct fb_top_entry *e = NULL;
	__u64 n = 10, tot, err_p, err_b;
	char since[64], text[FB_FLOW_STR], what[32] = "";
	struct fb_monitor m;
	struct fb_store f;
	int c, v, by = 0, got, i, r, rc = 1;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (fb_parse_u64_range("-n", optarg, 1, 100000, &n))
				return 2;
			break;
		case 'b':
			if ((v = fb_pick("--by", optarg, bys, by_v)) < 0)
				return 2;
			by = v;
			break;
		case 'i':
			if (fb_parse_duration("--interval", optarg, 0.01, 86400, &interval))
				return 2;
			break;
		default:
			return fb_bad_option(c, argv);
		}
	}
	if (argc - optind != 1)
		return fb_usage(argc - optind < 1 ? "missing NAME" : "too many arguments");
	if (fb_monview_open(argv[optind], FB_MON_SKETCH, &f, &m))
		return 1;
	if (interval > 0) {
		/* The sketch is linear: the difference of two readings is the
		 * sketch of the traffic in between. */
		fb_catch_interrupt();
		if (fb_monitor_snap_take(&m, &base))
			goto out;
		t0 = fb_now();
		/* Ctrl-C before the interval ends: the interval so far, its
		 * rates over the time it lasted (as ping's summary). The
		 * filter destroyed meanwhile: said within half a second. */
		r = fb_monview_sleep_until(&f, &m, t0 + interval);
		secs = fb_now() - t0;
		if (r < 0 || (!r && fb_monview_gone(&f, &m)))
			goto out;
	}
	if (fb_monitor_snap_take(&m, &now))
		goto out;
	got = fb_monitor_top(&m, &now, interval > 0 ? &base : NULL, by, n, &e);
	if (got < 0)
		goto out;
	if (interval > 0) {
		__u64 dp = now.packets - base.packets, db = now.bytes - base.bytes;

		now.packets = dp;
		now.bytes = db;
	}
	tot = by ? now.bytes : now.packets;
	err_p = fb_monview_max_error(&m, now.packets);
	err_b = fb_monview_max_error(&m, now.bytes);
	fb_clock_format(m.cfg.created_ns, false, since, sizeof(since));
	/* A sketch by address ranks addresses: said in the title. */
	if (m.cfg.flags & FB_MON_BY_ADDR)
		snprintf(what, sizeof(what), " %s addresses", fb_monview_key_noun(&m));
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f.name);
		jw_str("by", bys[by]);
		jw_str("sketch_by", fb_monitor_sketch_by(&m));
		jw_str("since", since);
		if (interval > 0)
			jw_double("interval", secs);
		else
			jw_null("interval");
		jw_u64("total_packets", now.packets);
		jw_u64("total_bytes", now.bytes);
		jw_u64("max_error_packets", err_p);
		jw_u64("max_error_bytes", err_b);
		jw_double("confidence", 1 - fb_monitor_delta(&m));
		jw_arr_open("flows");
		for (i = 0; i < got; i++) {
			fb_monview_key_text(&m, &e[i].key, text, sizeof(text));
			jw_obj_open(NULL);
			jw_u64("rank", i + 1);
			jw_str("flow", text);
			jw_u64("packets", e[i].packets);
			jw_u64("bytes", e[i].bytes);
			if (interval > 0) {
				jw_double("pps", e[i].packets / secs);
				jw_double("bps", e[i].bytes * 8.0 / secs);
			}
			jw_obj_close();
		}
		jw_arr_close();
		jw_obj_close();
		jw_end();
	} else {
		if (interval > 0)
			printf("top %d%s of '%s' by %s over %.2f s: %llu packet%s, %llu byte%s\n",
			       got, what, f.name, bys[by], secs, (unsigned long long)now.packets,
			       fb_monview_s(now.packets), (unsigned long long)now.bytes,
			       fb_monview_s(now.bytes));
		else
			printf("top %d%s of '%s' by %s since %s: %llu packet%s, %llu byte%s\n", got,
			       what, f.name, bys[by], since, (unsigned long long)now.packets,
			       fb_monview_s(now.packets), (unsigned long long)now.bytes,
			       fb_monview_s(now.bytes));
		printf("estimates are never below the truth, and above it by at most %llu "
		       "packet%s, "
		       "%llu byte%s with probability %.4g%%\n",
		       (unsigned long long)err_p, fb_monview_s(err_p), (unsigned long long)err_b,
		       fb_monview_s(err_b), 100 * (1 - fb_monitor_delta(&m)));
		if (m.cfg.flags & FB_MON_BY_ADDR)
			printf("the sketch counts %s addresses (attach --sketch-by %s): a line is "
			       "all of one address's traffic, any protocol, port and %s\n",
			       fb_monview_key_noun(&m), fb_monitor_sketch_by(&m),
			       m.cfg.flags & FB_MON_BY_SRC ? "destination" : "source");
		if (interval > 0)
			printf("%4s %14s %16s %7s  %s\n", "rank", "pps", "bits/s", "share",
			       fb_monview_key_noun(&m));
		else
			printf("%4s %14s %16s %7s  %s\n", "rank", "packets", "bytes", "share",
			       fb_monview_key_noun(&m));
		for (i = 0; i < got; i++) {
			__u64 val = by ? e[i].bytes : e[i].packets;

			fb_monview_key_text(&m, &e[i].key, text, sizeof(text));
			if (interval > 0)
				printf("%4d %14.1f %16.1f %6.2f%%  %s\n", i + 1,
				       e[i].packets / secs, e[i].bytes * 8.0 / secs,
				       tot ? 100.0 * val / tot : 0.0, text);
			else
				printf("%4d %14llu %16llu %6.2f%%  %s\n", i + 1,
				       (unsigned long long)e[i].packets,
				       (unsigned long long)e[i].bytes,
				       tot ? 100.0 * val / tot : 0.0, text);
		}
	}
	rc = 0;
out:
	free(e);
	fb_monitor_snap_free(&base);
	fb_monitor_snap_free(&now);
	fb_monview_close(&f, &m);
	return rc;
}
