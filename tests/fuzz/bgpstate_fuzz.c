// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom bgp`'s state file (user/lib/fleet/bgpstate.c): fb_bgp_load()
 * on the fuzzer's bytes as the file, with the verb's default limits
 * (--min-length 24,48, blackholes as destination rules), or source rules
 * and no limits when the first byte is odd.
 *
 * What must hold: a refused file is reported as FILE:LINE: why and loads
 * nothing; a loaded one holds only rules the data path can match, each held
 * by a path, and what fb_bgp_save() writes of it reads back into the same
 * paths and rules, none dropped, the same of them stale ("# stale").
 */
#include "fuzz.h"
#include "fleet/bgp.h"
#include "fleet/bgp_int.h"
#include "rules/rules.h"

#define NAME "fuzz-state"

static void init(struct fb_bgp *b, int lax)
{
	struct fb_bgp_opts o = { .community = FB_BGP_BLACKHOLE,
				 .rtbh_src = lax,
				 .min_v4 = lax ? 0 : 24,
				 .min_v6 = lax ? 0 : 48 };

	if (fb_bgp_init(b, &o))
		abort();
	b->note = NULL;
	b->source = NAME;
}

/* b's rules in the filter, each held, each valid: how many. */
static size_t check_rules(const struct fb_bgp *b, struct fb_key **r)
{
	char why[256];
	size_t n = fb_bgp_rules(b, r), i;

	FUZZ_ASSERT(n == b->nrules, "%zu rules in the filter of %zu", n, b->nrules);
	for (i = 0; i < n; i++) {
		FUZZ_ASSERT(!fb_rules_valid(&(*r)[i], why, sizeof(why)), "rule %zu invalid: %s", i,
			    why);
		FUZZ_ASSERT(fb_bgp_refs(b, &(*r)[i]) > 0, "rule %zu held by no path", i);
	}
	return n;
}

/* b's stale paths: how many, and each one counted for its peer and family. */
static size_t stale_paths(const struct fb_bgp *b)
{
	const struct fb_bgp_path *p;
	size_t i, n = 0;

	for (i = 0; i < b->nbuckets; i++)
		for (p = b->paths[i]; p; p = p->next)
			if (p->stale) {
				FUZZ_ASSERT(fb_bgp_stale_count(b, p->peer, p->family) > 0,
					    "a stale path not counted");
				n++;
			}
	return n;
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct fb_key));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_bgp b, again;
	struct fb_key *r1, *r2;
	char *text = NULL;
	size_t len = 0, n1, n2;
	FILE *fp;
	int lax;

	fuzz_silence();
	if (size < 2)
		return -1;
	lax = data[0] & 1;
	init(&b, lax);
	fp = fmemopen((void *)(data + 1), size - 1, "r");
	if (!fp)
		abort();
	if (fb_bgp_load(&b, fp, NAME)) {
		fclose(fp);
		FUZZ_ASSERT(fuzz_names_line(fuzz_last_error, NAME),
			    "refused as '%s', not FILE:LINE", fuzz_last_error);
		FUZZ_ASSERT(!b.npaths && !b.nrules, "refused, yet %zu paths and %zu rules loaded",
			    b.npaths, b.nrules);
		fb_bgp_free(&b);
		return 0;
	}
	fclose(fp);
	/* A path dropped is reported, as FILE:LINE too. */
	FUZZ_ASSERT(!fuzz_errors || strstr(fuzz_last_error, NAME ":"),
		    "loaded, with an error naming no line: %s", fuzz_last_error);
	/* The rules a dropped path held, if no other path holds them, leave
	 * the filter: fb_bgp_done() as the verb does once it deleted them. */
	fb_bgp_done(&b);
	n1 = check_rules(&b, &r1);
	fp = open_memstream(&text, &len);
	if (!fp)
		abort();
	FUZZ_ASSERT(!fb_bgp_save(&b, fp), "save failed");
	fclose(fp);
	init(&again, lax);
	fp = fmemopen(text, len, "r");
	if (!fp)
		abort();
	FUZZ_ASSERT(!fb_bgp_load(&again, fp, NAME), "what was saved fails to load: %s",
		    fuzz_last_error);
	fclose(fp);
	FUZZ_ASSERT(!again.ndel, "%zu rules dropped reading back what was saved", again.ndel);
	FUZZ_ASSERT(again.npaths == b.npaths, "%zu paths back of %zu", again.npaths, b.npaths);
	FUZZ_ASSERT(stale_paths(&again) == stale_paths(&b), "%zu stale paths back of %zu",
		    stale_paths(&again), stale_paths(&b));
	n2 = check_rules(&again, &r2);
	FUZZ_ASSERT(n1 == n2, "%zu rules back of %zu", n2, n1);
	qsort(r1, n1, sizeof(*r1), cmp_key);
	qsort(r2, n2, sizeof(*r2), cmp_key);
	FUZZ_ASSERT(!n1 || !memcmp(r1, r2, n1 * sizeof(*r1)), "other rules read back");
	free(r1);
	free(r2);
	free(text);
	fb_bgp_free(&again);
	fb_bgp_free(&b);
	return 0;
}
