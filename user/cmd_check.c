// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom check`: is every bit set exactly where its counter is
 * non-zero, and do the counters add up to k times the flows? */
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include "cmd.h"
#include "counting.h"
#include "filter.h"
#include "output.h"

int cmd_check(int argc, char **argv)
{
	bool repair = false, clean;
	struct fb_filter f;
	struct fb_check c;
	const char *name = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repair"))
			repair = true;
		else if (argv[i][0] == '-' || name)
			return fb_usage("unexpected '%s'", argv[i]);
		else
			name = argv[i];
	}
	if (!name)
		return fb_usage("missing NAME");
	if (fb_filter_open(name, &f))
		return 1;
	if (!f.cnt_hdr) {
		fb_err("'%s' is a plain Bloom filter: without counters there is nothing to "
		       "check its bits against",
		       name);
		fb_filter_close(&f);
		return 1;
	}
	/* Keep writers out: a write in progress would look like damage. (Not
	 * fb_filter_lock(): it would roll back an interrupted write unseen.) */
	if (fb_filter_flock(&f, repair ? LOCK_EX : LOCK_SH)) {
		fb_filter_close(&f);
		return 1;
	}
	fb_counting_check(&f, repair, &c);
	fb_filter_unlock(&f);
	clean = !c.stale_bits && !c.missing_bits && !c.journal_dirty && c.count_ok;
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", name);
		jw_bool("clean", clean);
		jw_bool("repaired", repair && !clean);
		jw_u64("stale_bits", c.stale_bits);
		jw_u64("missing_bits", c.missing_bits);
		jw_bool("interrupted_write", c.journal_dirty);
		jw_u64("saturated", c.saturated);
		jw_u64("counter_sum", c.counter_sum);
		jw_u64("flows", f.hdr->nflows);
		jw_bool("count_checked", c.count_checked);
		jw_bool("count_ok", c.count_ok);
		jw_obj_close();
		jw_end();
	} else {
		printf("%s: %s%s\n", name, clean ? "clean" : "NOT clean",
		       repair && !clean ? " (repaired)" : "");
		printf("  bits set over a zero counter %llu, counters without their bit %llu\n",
		       (unsigned long long)c.stale_bits, (unsigned long long)c.missing_bits);
		if (c.journal_dirty)
			printf("  a write was interrupted (one flow half applied)%s\n",
			       repair ? ": rolled back" : "");
		printf("  counters sum %llu for %llu flows x k=%u: %s\n",
		       (unsigned long long)c.counter_sum, (unsigned long long)f.hdr->nflows,
		       f.hdr->k,
		       !c.count_checked ? "not checkable (saturated counters)"
		       : c.count_ok	? "ok"
					: "MISMATCH");
		printf("  saturated counters %llu\n", (unsigned long long)c.saturated);
	}
	fb_filter_close(&f);
	/* After a repair the filter is consistent: success. */
	return clean || repair ? 0 : 1;
}
