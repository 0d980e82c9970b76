/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Prefix-list work for `flowbloom load`: fitting a list's prefix lengths
 * into the FB_MAX_LENGTHS the data path probes (per direction and family),
 * by expanding rarer lengths into longer ones (a /23 becomes two /24s), and
 * turning address ranges into prefixes.
 */
#ifndef FLOWBLOOM_USER_PREFIXES_H
#define FLOWBLOOM_USER_PREFIXES_H

#include <stddef.h>
#include "flowbloom/geometry.h"
#include "flowbloom/key.h"

/* Most entries one load may expand into. */
#define FB_EXPAND_MAX (16u << 20)

struct fb_expansion {
	size_t before, after; /* address rules in and out */
	int lists;	      /* lists (enum fb_prefix_list) that were expanded */
	size_t bad;	      /* refused: the rule expanded most, or (size_t)-1 */
};

/* What a choice of lengths costs in memory: bytes(ctx, entries, probes)
 * is the size of the filter that holds `entries` rules for packets that
 * make `probes` probes each (INFINITY if none does). */
struct fb_expand_budget {
	double (*bytes)(void *ctx, double entries, unsigned probes);
	void *ctx;
};

/*
 * Rewrite the address rules among keys[0..*n) so each list uses at most
 * FB_MAX_LENGTHS lengths including those already in `have` (which must all
 * stay). Chooses, per list, the lengths that need the fewest expanded
 * entries (dynamic programming over the sorted lengths). With a budget and
 * no lengths to keep (`load --replace`), it chooses by cost instead: a miss
 * pays one probe per length, so fewer lengths per list (expanding more)
 * whenever the filter holds the extra entries in no more memory than the
 * fewest entries take (a filter has whole chunks, often far more bits than
 * a short list needs); fewest probes per packet, then fewest entries.
 * *keys may be reallocated. Returns 0, or -1 with err set if even the
 * fewest entries would exceed FB_EXPAND_MAX.
 */
int fb_prefixes_expand(struct fb_key **keys, size_t *n, const struct fb_prefixes *have,
		       const struct fb_expand_budget *budget, struct fb_expansion *ex, char *err,
		       size_t errlen);

/*
 * A prefix rule k (src or dst, shorter than an address) as `load` may have
 * expanded it into a longer length of ls (the lengths of its list in the
 * filter it was loaded into): for each such length that takes it in at
 * most FB_EXPAND_MAX entries, held(sub, ctx) of its sub-prefixes there, up
 * to the first answering 0. Returns the sum over those lengths of each
 * one's smallest answer (0: held whole at none); *at is the shortest
 * length holding it whole (in the key's 128-bit space), 0 if none.
 */
unsigned fb_prefixes_held_expanded(const struct fb_key *k, const struct fb_lengths *ls,
				   unsigned (*held)(const struct fb_key *sub, void *ctx), void *ctx,
				   int *at);

/* Piece c (0 .. 2^(t - plen) - 1) of prefix rule k expanded to the
 * longer length t (128-bit space), as `load` makes it. */
void fb_prefix_piece(const struct fb_key *k, int t, __u64 c, struct fb_key *e);

/* Cover the inclusive address range [lo, hi] (16-byte big-endian, same
 * family) with prefixes: calls out(addr, plen, ctx) for each, fewest
 * possible. Returns the count, or -1 if lo > hi. */
int fb_prefixes_from_range(const __u8 lo[16], const __u8 hi[16],
			   int (*out)(const __u8 addr[16], int plen, void *ctx), void *ctx);

#endif
