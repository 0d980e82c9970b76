// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Block-list files (user/lib/rules/lists.c) as `load`, `apply` and every
 * `-f FILE` read them: plain addresses, prefixes, ranges, FireHOL netsets,
 * Spamhaus DROP lines, FLOWs; and guard's --never file (user/lib/monitor/guard.c), the
 * same addresses and prefixes without ranges or FLOWs. The fuzzer's bytes
 * are the file (a regular one, through the line reader every file input
 * uses).
 *
 * What must hold: an accepted list holds only rules the data path can
 * match (fb_rules_valid); a refusal is reported as FILE:LINE: why; a
 * --never file that is accepted is accepted by the list reader too, as the
 * same source prefixes in the same order; reading the file again for a
 * refusal's FILE:LINE (fb_list_origins) gives back the same rules in the
 * same order, quietly; fb_list_unique leaves a sorted list without
 * repeats, of keys that were there.
 */
#include "fuzz.h"
#include "monitor/guard.h"
#include "rules/lists.h"
#include "rules/rules.h"

static void check_refusal(const char *what, const char *path)
{
	FUZZ_ASSERT(fuzz_errors == 1, "%s: refused with %u errors reported", what, fuzz_errors);
	FUZZ_ASSERT(fuzz_names_line(fuzz_last_error, path), "%s: refused as '%s', not FILE:LINE",
		    what, fuzz_last_error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_list l = { 0 };
	struct fb_never_list nv;
	const char *path;
	char why[256];
	size_t i, before;
	int rl, rn;

	fuzz_silence();
	fuzz_file(data, size, &path);
	rl = fb_list_read(path, &l);
	if (rl) {
		FUZZ_ASSERT(rl == -1, "list: returned %d", rl);
		check_refusal("list", path);
	} else {
		FUZZ_ASSERT(!fuzz_errors, "list: accepted, with an error: %s", fuzz_last_error);
		for (i = 0; i < l.n; i++)
			FUZZ_ASSERT(!fb_rules_valid(&l.keys[i], why, sizeof(why)),
				    "list: entry %zu is an invalid rule: %s", i, why);
	}
	fuzz_silence();
	rn = fb_never_read(path, &nv);
	if (rn) {
		FUZZ_ASSERT(rn == -1 && !nv.p && !nv.n, "never: returned %d, %zu entries kept", rn,
			    nv.n);
		check_refusal("never", path);
	} else {
		FUZZ_ASSERT(!rl, "never: accepted what the list reader refused");
		FUZZ_ASSERT(nv.n == l.n, "never: %zu entries, the list %zu", nv.n, l.n);
		for (i = 0; i < nv.n; i++) {
			FUZZ_ASSERT(nv.p[i].kind == FB_KIND_SRC &&
					    !memcmp(&nv.p[i], &l.keys[i], sizeof(nv.p[i])),
				    "never: entry %zu is not the list's", i);
			FUZZ_ASSERT(fb_never_has(&nv, &nv.p[i]),
				    "never: address %zu not found in its own list", i);
		}
		fb_never_free(&nv);
	}
	if (!rl) {
		/* A refusal's origins: the file read again from its kept
		 * descriptor gives back every rule, in order, each with a
		 * line, and reports nothing. */
		fuzz_silence();
		fb_list_origins(&l);
		FUZZ_ASSERT(!fuzz_errors && !fb_report_quiet, "origins: reported '%s'",
			    fuzz_last_error);
		FUZZ_ASSERT(l.nfrom == l.n, "origins: %zu rules, the list %zu", l.nfrom, l.n);
		for (i = 0; i < l.n; i++)
			FUZZ_ASSERT(!memcmp(&l.from[i].key, &l.keys[i], sizeof(l.keys[i])) &&
					    !l.from[i].file && l.from[i].line >= 1 &&
					    (!i || l.from[i].line >= l.from[i - 1].line),
				    "origins: rule %zu differs or is out of order", i);
		before = l.n;
		fb_list_unique(&l);
		FUZZ_ASSERT(l.n <= before && (l.n || !before), "unique: %zu of %zu", l.n, before);
		for (i = 1; i < l.n; i++)
			FUZZ_ASSERT(memcmp(&l.keys[i - 1], &l.keys[i], sizeof(l.keys[i])) < 0,
				    "unique: entries %zu and %zu out of order or repeated", i - 1,
				    i);
	}
	fb_list_free(&l);
	return 0;
}
