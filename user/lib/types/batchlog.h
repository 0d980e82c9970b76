/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The journal of cuckoo and d-left batches: what makes an add or del of
 * such a filter all or nothing across a kill of its writer, as a counting
 * filter's journal makes each of its flows (counting.h), and by the same
 * means: the old contents of what is about to change, saved first, put
 * back by the next lock holder.
 *
 * A batch is planned on an overlay first (plan.h: a batch that does not
 * fit, or deletes an absent flow, changes nothing). Then, before the
 * table changes, the present contents of every bucket the batch will
 * write, and the counts (the geometry's count, the header's flows), are
 * saved in the filter's own array, in the blocks after the filter's (the
 * rest of its last 256 KiB chunk, which no probe reads and no export
 * carries), and the journal is marked open; the plan's stores are applied
 * in their order (which keeps concurrent probes right); the journal is
 * marked closed. A writer killed while it is open leaves it to the next
 * lock holder (fb_store_lock()'s recovery: any writer; check --repair),
 * which writes every saved bucket back: the batch is then not in at all,
 * and running it again puts each of its flows in once. For a cuckoo
 * table that is done inside a relocation bracket (the sequence number
 * odd: probes answer maybe meanwhile), which also ends a chain the killed
 * writer was inside. A d-left table needs none: its flows never move, so
 * any mix of a bucket's old and new cells holds every flow the batch
 * leaves alone.
 *
 * Memory: the journal holds a few thousand buckets (the chunk's tail: at
 * least 123 KiB for these tables, whose sizes are powers of two). A batch
 * touching more is applied in parts, in the batch's order: each the next
 * flows whose buckets fit, their stores a range of the one plan's log
 * (the planners mark where each flow's stores start, plan.h), each part
 * all or nothing. A kill leaves the batch's first parts in and the rest
 * out, and the recovery says how many flows that is.
 */
#ifndef FLOWBLOOM_USER_BATCHLOG_H
#define FLOWBLOOM_USER_BATCHLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "types/plan.h"
#include "store/store.h"

#define FB_BATCHLOG_MAGIC 0x4a544246 /* "FBTJ" */

enum fb_batchlog_state { FB_BATCHLOG_IDLE = 0, FB_BATCHLOG_OPEN = 1 };

/* The journal's first block; the buckets' records follow, each the
 * bucket's index (8 bytes) and its planned contents (padded to 8). */
struct fb_batchlog_hdr {
	__u32 magic;
	__u32 state; /* enum fb_batchlog_state, stored last (release) */
	__u32 nrec;  /* bucket records */
	__u8 shift;  /* log2 of a bucket's bytes */
	__u8 type;   /* enum fb_type */
	__u8 del;    /* 1: a del */
	__u8 pad;
	__u64 count;   /* the geometry's count once applied */
	__u64 nflows;  /* the header's nflows once applied */
	__u64 flows;   /* flows of the whole batch */
	__u64 through; /* flows 0..through-1 are in once applied */
	__u8 reserved[16];
};

_Static_assert(sizeof(struct fb_batchlog_hdr) == 64, "one block");

/* Run once a batch is known to fit, before its first store (what must
 * hold before the table does: the prefix lengths and rule kinds the data
 * path probes for). Non-zero refuses the batch, the table unchanged. */
struct fb_batch_ready {
	int (*fn)(struct fb_store *f, void *arg);
	void *arg;
};

/* Add n flows (their keyed hashes) to a cuckoo or d-left filter, or
 * delete one copy of each, through the journal; the header's nflows
 * follows. 0; -1 refused, nothing changed (err: fb_cuckoo_add() and the
 * like); -2 out of memory; -3 not a cuckoo or d-left filter; -4 failed,
 * reported (the ready step, a journal damaged or missing). A batch in
 * parts that fails after its first part (memory) leaves its first parts. */
int fb_batchlog_add(struct fb_store *f, const __u64 *h, size_t n, struct fb_batch_err *err,
		    const struct fb_batch_ready *ready);
int fb_batchlog_del(struct fb_store *f, const __u64 *h, size_t n, struct fb_batch_err *err);

/* Is a batch a killed writer left open in f (its journal open)? */
bool fb_batchlog_open(const struct fb_store *f);
/* Roll it back (the caller holds the lock): 1 done (a note says so when
 * note), 0 none open, -1 the journal is damaged (reported; drop, with
 * check --repair, closes it and leaves the table as it is). */
int fb_batchlog_recover(struct fb_store *f, bool note, bool drop);
/* The note a rollback of either journal (this one, counting_log.h's)
 * gives: the batch's first `through` of `flows` flows are in (0: none). */
void fb_batch_rolled_back(const struct fb_store *f, bool del, __u64 through, __u64 flows);

#endif
