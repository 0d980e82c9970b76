/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which rules of a batch a filter takes (fit.c), for a caller that refuses
 * the others one by one rather than the batch whole (`flowbloom bgp`: a
 * refused rule's route goes, and with it its other rules in the batch).
 *
 * A filter probes at most FB_MAX_LENGTHS prefix lengths per list and
 * FB_MAX_MASKS rule shapes (fb_rules_merge_lengths()): a rule of a length
 * or shape the table lacks takes a free slot, if any. Adding the batch,
 * and on each refusal (fb_rules_add()'s -1 or -4 at *bad) refusing that
 * rule, moving the batch's last rule into its place, dropping the rules
 * the refusal took with it and adding again, costs a walk of the batch
 * per refusal: O(n * refusals), a hostile BGP peer's to choose. This gives
 * the same outcome (the same rules refused, in the same order, with the
 * same table at each refusal, and the same batch left, in the same order)
 * in one walk: O(n + refusals) checks and calls.
 */
#ifndef FLOWBLOOM_USER_FIT_H
#define FLOWBLOOM_USER_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include "flowbloom/geometry.h"
#include "flowbloom/key.h"
#include "store/store.h"

struct fb_fit;

struct fb_fit_ops {
	/* keys[i] does not fit: err -1, its prefix-length list would need
	 * one length too many; -4, the shape table one shape too many
	 * (fb_fit_mask_refusal() says which it holds). The caller refuses
	 * it; returns how many other rules of the batch the refusal took
	 * out with it (0: none). From the first that took some, alive() is
	 * asked of each rule before it counts: false, it has left. */
	size_t (*refused)(void *ctx, const struct fb_fit *t, size_t i, int err);
	bool (*alive)(void *ctx, const struct fb_key *k);
	void *ctx;
};

/*
 * Fit keys[0..*n) into table px (left unchanged), refusing through ops
 * what does not fit. On return keys[0..*n) are the rules left, in the
 * order tried: fb_rules_add() of them into a table like px takes them
 * all (no -1 or -4). 0, or -1 out of memory (nothing refused, keys as
 * they were: the caller's add refuses as it would have).
 */
int fb_fit_batch(const struct fb_prefixes *px, struct fb_key *keys, size_t *n,
		 const struct fb_fit_ops *ops);
/* For ops->refused() of a -4: why keys[i]'s shape does not fit, naming
 * the shapes the table would hold (as fb_rules_mask_refusal() does). */
void fb_fit_mask_refusal(const struct fb_fit *t, size_t i, char *buf, size_t len);
/* fb_rules_add() after fb_fit_batch() into f's table: 0, or its codes
 * (-2, -3; -1 or -4 only if the batch could not be fitted, out of
 * memory). Call with the lock held. */
int fb_fit_add(struct fb_store *f, struct fb_key *keys, size_t *n, const struct fb_fit_ops *ops,
	       size_t *bad);

#endif
