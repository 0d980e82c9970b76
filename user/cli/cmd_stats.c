// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom stats`: the filter's per-CPU counters, summed. */
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "cmd.h"
#include "parse.h"
#include "monview.h"
#include "output.h"
#include "store/stats.h"
#include "util.h"

/* stats --watch: rates per interval until interrupted. */
static int stats_watch(const char *name, double interval)
{
	struct fb_stats prev, cur;
	struct fb_store f;
	double t_prev, t_cur, next, dt;
	char when[64];
	int i, r;

	if (fb_store_open(name, &f))
		return 1;
	fb_catch_interrupt();
	if (fb_stats_read(&f, &prev)) {
		fb_store_close(&f);
		return 1;
	}
	t_prev = next = fb_now();
	for (;;) {
		next += interval;
		/* A filter destroyed meanwhile: said within half a second. */
		r = fb_monview_sleep_until(&f, NULL, next);
		if (!r)
			break;
		if (r < 0) {
			fb_store_close(&f);
			return 1;
		}
		if (fb_stats_read(&f, &cur)) {
			fb_store_close(&f);
			return 1;
		}
		t_cur = fb_now();
		dt = t_cur - t_prev;
		/* JSON, for programs: to the microsecond, as flows' and guard's
		 * event times. */
		fb_clock_format(fb_clock_real_ns(), fb_json, when, sizeof(when));
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("filter", f.name);
			jw_str("time", when);
			jw_double("interval", dt);
			for (i = 0; i < FB_STAT_NR; i++) {
				jw_obj_open(fb_stat_name(i));
				jw_u64("packets", cur.c[i].packets);
				jw_u64("bytes", cur.c[i].bytes);
				jw_double("pps", (cur.c[i].packets - prev.c[i].packets) / dt);
				jw_double("bps", (cur.c[i].bytes - prev.c[i].bytes) * 8.0 / dt);
				jw_obj_close();
			}
			jw_obj_close();
			jw_end();
		} else {
			printf("%s  %s  over %.2f s\n", f.name, when, dt);
			printf("%-12s %14s %12s %16s %14s\n", "counter", "packets", "pps", "bytes",
			       "bits/s");
			for (i = 0; i < FB_STAT_NR; i++)
				printf("%-12s %14llu %12.1f %16llu %14.1f\n", fb_stat_name(i),
				       (unsigned long long)cur.c[i].packets,
				       (cur.c[i].packets - prev.c[i].packets) / dt,
				       (unsigned long long)cur.c[i].bytes,
				       (cur.c[i].bytes - prev.c[i].bytes) * 8.0 / dt);
			printf("\n");
		}
		prev = cur;
		t_prev = t_cur;
		/* Nowhere to print (a full disk, stdout closed): main says so. */
		if (ferror(stdout))
			break;
	}
	fb_store_close(&f);
	return 0;
}

int cmd_stats(int argc, char **argv)
{
	struct fb_store f;
	struct fb_stats s;
	const char *name = NULL, *secs = NULL;
	bool watch = false;
	double every = 1;
	int i, end;

	/* NAME [--watch [SECS]]: SECS is the word after --watch, once NAME
	 * was given, or --watch=SECS (as every other option takes a value).
	 * From `--` on, a word is NAME. */
	end = fb_end_of_options(&argc, argv);
	for (i = 1; i < argc; i++) {
		if (i >= end) {
			if (name)
				return fb_usage("too many arguments");
			name = argv[i];
		} else if (!strcmp(argv[i], "--watch")) {
			watch = true;
			if (name && i + 1 < end && argv[i + 1][0] != '-')
				secs = argv[++i];
		} else if (!strncmp(argv[i], "--watch=", 8)) {
			watch = true;
			secs = argv[i] + 8;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return fb_unknown_option(argv[i], (int)strlen(argv[i]));
		} else if (name) {
			return fb_usage("too many arguments");
		} else {
			name = argv[i];
		}
	}
	if (!name)
		return fb_usage("missing NAME");
	if (secs) {
		if (fb_parse_duration("--watch", secs, 0.1, 86400, &every))
			return 2;
	}
	/* --watch: rates between polls. */
	if (watch)
		return stats_watch(name, every);
	if (fb_store_open(name, &f))
		return 1;
	if (fb_stats_read(&f, &s)) {
		fb_store_close(&f);
		return 1;
	}
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f.name);
		for (i = 0; i < FB_STAT_NR; i++) {
			jw_obj_open(fb_stat_names[i]);
			jw_u64("packets", s.c[i].packets);
			jw_u64("bytes", s.c[i].bytes);
			jw_obj_close();
		}
		/* Only when there is one: scripts read this object as counters. */
		fb_warn_fail_open(false);
		jw_obj_close();
		jw_end();
	} else {
		printf("%-12s %14s %16s\n", "counter", "packets", "bytes");
		for (i = 0; i < FB_STAT_NR; i++)
			printf("%-12s %14llu %16llu\n", fb_stat_names[i],
			       (unsigned long long)s.c[i].packets,
			       (unsigned long long)s.c[i].bytes);
		/* Counters here look calm while such a program passes everything. */
		fb_warn_fail_open(false);
	}
	fb_store_close(&f);
	return 0;
}
