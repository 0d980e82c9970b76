/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --confirm exact: do the exact sets and the filter agree (exactcheck.c)?
 * What `check` asks of a confirming filter, and what `check --repair`
 * sets right.
 *
 * A packet is confirmed only after a Bloom hit, so a rule in an exact set
 * that is no hit of the filter (a descriptor of its kind, length or shape
 * in the data path's probe table, and its bits, by the data path's probe)
 * confirms nothing: it only takes room in the exact sets, and later adds
 * fail "exact sets are full". Where the filter can say how many copies of
 * a rule it holds (counting Bloom: the smallest counter; cuckoo and
 * d-left: the copies in its buckets), a rule counted more often in the
 * exact sets than that would let a later `del` pass the exact-set test and
 * lower counters that belong to other flows. Both are what a killed add
 * (the exact sets are written before the filter) or a killed del (the
 * filter is written before the exact sets) leaves, and repair lowers each
 * such rule's count to what the filter holds (never adds bits).
 *
 * The LPM tries mirror the hash set's address rules (exact.c): a rule the
 * trie lacks has its packets refused as unconfirmed, a trie entry without
 * its rule confirms what it should not. Repair makes the tries mirror the
 * hash set again.
 *
 * A counting Bloom filter counts its flows exactly (each add and delete of
 * one flow is journaled, counting.h), so the copies in the exact sets must
 * add up to its flow count: more copies than flows after the per-rule
 * test are rules whose counters went down while other flows keep their
 * bits set (check cannot tell which); fewer are flows held with no exact
 * entry, whose packets are refused as unconfirmed. Neither is repairable
 * here without the rule list. Other types' counts are not compared: a
 * plain or scalable filter cannot say which copies it holds, and a cuckoo
 * filter's count changes after its table does.
 */
#ifndef FLOWBLOOM_USER_EXACTCHECK_H
#define FLOWBLOOM_USER_EXACTCHECK_H

#include <stdbool.h>
#include <linux/types.h>
#include "store/store.h"

struct fb_exact_check {
	__u64 rules;	    /* entries of the exact hash set */
	__u64 copies;	    /* their counts, added up */
	__u64 not_held;	    /* rules that are no hit of the filter */
	__u64 over;	    /* rules counted more often than the filter holds them */
	__u64 trie_missing; /* held address rules missing from their LPM trie */
	__u64 trie_stale;   /* LPM trie entries without their rule in the hash set */
	__u64 flows;	    /* the filter's flow count */
	__u64 copies_left;  /* copies after the repair (copies without repair) */
	bool count_checked; /* copies compared with flows (counting Bloom filters) */
	bool count_ok;	    /* copies == flows, or not compared */
	bool unrepaired;    /* with repair: the copies still differ from the flows */
};

/*
 * Compare f's current exact sets with f (call with f's lock held, after
 * an interrupted write of the filter itself was rolled back if repair).
 * With repair, rules the filter does not hold are taken out, counts
 * lowered to what it holds, and the tries made to mirror the hash set.
 * 0, or -1 with the error reported.
 */
int fb_exact_check(struct fb_store *f, bool repair, struct fb_exact_check *out);

#endif
