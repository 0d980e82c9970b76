// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom stats`: the filter's per-CPU counters, summed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "discover.h"
#include "output.h"
#include "stats.h"
#include "store.h"

static const char *const stat_names[FB_STAT_NR] = {
	[FB_STAT_SEEN] = "seen",	   [FB_STAT_MATCHED] = "matched",
	[FB_STAT_DROPPED] = "dropped",	   [FB_STAT_PASSED] = "passed",
	[FB_STAT_NONIP] = "non_ip",	   [FB_STAT_FRAGMENT] = "fragments",
	[FB_STAT_MALFORMED] = "malformed", [FB_STAT_HIT_FLOW] = "hit_flow",
	[FB_STAT_HIT_SRC] = "hit_src",	   [FB_STAT_HIT_DST] = "hit_dst",
	[FB_STAT_NOFILTER] = "no_filter",  [FB_STAT_UNCONFIRMED] = "unconfirmed",
};

const char *fb_stat_name(int i)
{
	return i >= 0 && i < FB_STAT_NR && stat_names[i] ? stat_names[i] : "unnamed";
}

int cmd_stats(int argc, char **argv)
{
	struct fb_store f;
	struct fb_stats s;
	int i;

	/* --watch [SECS]: rates between polls (cmd_monitor.c). */
	if (argc >= 3 && !strcmp(argv[2], "--watch")) {
		double secs = 1;
		char *end;

		if (argc > 4)
			return fb_usage("too many arguments");
		if (argc == 4) {
			secs = strtod(argv[3], &end);
			if (end == argv[3] || *end || !(secs >= 0.1 && secs <= 86400))
				return fb_usage("bad interval '%s' for --watch (0.1 to 86400 s)",
						argv[3]);
		}
		return fb_stats_watch(argv[1], secs);
	}
	if (argc != 2)
		return fb_usage(argc < 2 ? "missing NAME" : "too many arguments");
	if (fb_store_open(argv[1], &f))
		return 1;
	if (fb_stats_read(&f, &s)) {
		fb_store_close(&f);
		return 1;
	}
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f.name);
		for (i = 0; i < FB_STAT_NR; i++) {
			jw_obj_open(stat_names[i]);
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
			printf("%-12s %14llu %16llu\n", stat_names[i],
			       (unsigned long long)s.c[i].packets,
			       (unsigned long long)s.c[i].bytes);
		/* Counters here look calm while such a program passes everything. */
		fb_warn_fail_open(false);
	}
	fb_store_close(&f);
	return 0;
}
