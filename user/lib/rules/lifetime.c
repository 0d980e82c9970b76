// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rules with a lifetime (see lifetime.h): the generation that takes them
 * (store/gens.h keeps the generations themselves), filled by fb_rules_add. */
#include <string.h>
#include "report.h"
#include "rules/lifetime.h"
#include "rules/rules.h"
#include "store/gens.h"
#include "store/jiffies.h"
#include "store/counters.h"
#include "store/replace.h"

int fb_gens_add(struct fb_store *f, const struct fb_key *keys, size_t n, double secs, size_t *bad,
		struct fb_gen *where)
{
	struct fb_gen gl[FB_GEN_SLOTS];
	struct fb_prefixes none = { 0 };
	struct fb_store gs;
	__u64 lo, hi, span;
	__u32 used;
	int ng, i, pick = -1, rc;
	unsigned g;

	if (fb_gens_supported(f))
		return -2;
	fb_gens_reclaim(f);
	/* Not before secs from now; by secs / FB_GEN_DIV after that. */
	lo = fb_jiffies_after(secs);
	span = (__u64)(secs / FB_GEN_DIV / fb_jiffies_tick());
	hi = lo + span;
	ng = fb_gens_list(f, gl);
	for (i = 0; i < ng && pick < 0; i++)
		if (gl[i].expires >= lo && gl[i].expires <= hi && gl[i].nblocks)
			pick = i;
	if (pick >= 0) {
		if (fb_gen_open(f, gl[pick].g, &gs))
			return -2;
		if (where)
			*where = gl[pick];
	} else {
		/* A new generation: refuse rules needing too many prefix
		 * lengths before making it. */
		if (fb_rules_merge_lengths(&none, keys, n, bad))
			return -1;
		used = f->hdr->gens;
		for (g = 0; g < FB_GEN_SLOTS && (used & 1U << g); g++)
			;
		if (g == FB_GEN_SLOTS) {
			fb_report_err("all %d generations of '%s' hold rules with other lifetimes "
				      "(they end within %.0f s): nothing added",
				      FB_GEN_SLOTS, f->name, gl[ng - 1].secs);
			return -4;
		}
		if (fb_gen_make(f, f->hdr, f->hdr->gen, g, hi, &gs))
			return -2;
		__atomic_fetch_or(&f->hdr->gens, 1U << g, __ATOMIC_RELEASE);
		if (where) {
			where->g = g;
			where->slot = fb_gen_range(f->hdr->gen, g);
			where->expires = hi;
			where->nblocks = gs.hdr->nblocks;
			where->k = gs.hdr->k;
		}
	}
	rc = fb_rules_add(&gs, keys, n, bad);
	if (where) {
		where->nflows = gs.hdr->nflows;
		where->secs = fb_jiffies_secs(where->expires);
	}
	fb_gen_close(&gs);
	return rc;
}

int fb_gens_fresh(struct fb_store *nf, const struct fb_key *keys, size_t n, double secs,
		  size_t *bad)
{
	struct fb_prefixes none = { 0 };
	struct fb_store gs;
	__u64 hi;
	int rc;

	nf->hdr->gens = 0;
	if (fb_gens_supported(nf))
		return -2;
	if (fb_rules_merge_lengths(&none, keys, n, bad))
		return -1;
	hi = fb_jiffies_after(secs) + (__u64)(secs / FB_GEN_DIV / fb_jiffies_tick());
	if (fb_gen_make(nf, nf->hdr, nf->hdr->gen, 0, hi, &gs))
		return -2;
	/* Named at once: a failed replace retires what its mask names. */
	nf->hdr->gens = 1;
	rc = fb_rules_add(&gs, keys, n, bad);
	fb_gen_close(&gs);
	return rc;
}

struct timed_arg {
	const struct fb_store *f;
	const struct fb_key *keys;
	size_t n, *bad;
	double secs;
};

/* The old filter's permanent rules as they are (same geometry), then one
 * generation holding the new list. */
static int fill_timed(struct fb_store *nf, void *arg)
{
	struct timed_arg *t = arg;
	const struct fb_store *f = t->f;

	/* The logical array after the header: prefix lengths and shapes,
	 * then the bits (the probe table follows by fb_head_sync()). */
	memcpy(nf->blocks + 1, f->blocks + 1,
	       ((size_t)f->hdr->nblocks + FB_HDR_BLOCKS - 1) * FB_BLOCK_BYTES);
	nf->hdr->kinds = f->hdr->kinds;
	nf->hdr->nflows = f->hdr->nflows;
	if (f->cnt_hdr)
		memcpy(nf->cnt, f->cnt, f->cnt_bytes - FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES);
	return fb_gens_fresh(nf, t->keys, t->n, t->secs, t->bad) ? -1 : 0;
}

int fb_replace_timed(struct fb_store *f, const struct fb_key *keys, size_t n, double secs,
		     size_t *bad)
{
	struct timed_arg t = { f, keys, n, bad, secs };

	*bad = (size_t)-1;
	if (fb_gens_supported(f))
		return -1;
	return fb_replace_fill(f, f->hdr->nblocks, f->hdr->k, 0, fill_timed, &t);
}
