/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Write plans for tables the data path reads while they change (cuckoo,
 * d-left): a batch is first worked out on an overlay of copied buckets,
 * reading through it, while every store it would make is logged in order.
 * If any flow of the batch fails, the plan is dropped and the live table
 * is untouched; otherwise the log is replayed on the live memory, store by
 * store, in the order planned (which is what keeps relocations safe for
 * concurrent readers, see include/flowbloom/cuckoo.h).
 *
 * Each logged store is one naturally aligned 8, 16, 32 or 64-bit store with
 * release ordering: the compiler and the CPU make it visible after every
 * store logged before it (x86 keeps stores in order anyway; on weaker
 * architectures this is what orders them).
 */
#ifndef FLOWBLOOM_USER_PLAN_H
#define FLOWBLOOM_USER_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

/* One store: 16 bytes (a plan holds one or more a flow added). The
 * address with log2 of the width (bytes: 1, 2, 4 or 8) in its top two
 * bits, which no user-space address has. */
struct fb_plan_store {
	__u64 at;
	__u64 val;
};

/* The address a logged store writes. */
static inline void *fb_plan_store_addr(const struct fb_plan_store *s)
{
	return (void *)(uintptr_t)(s->at & ~(3ULL << 62));
}

struct fb_plan {
	unsigned char *live;   /* table memory (block 0 of the filter array) */
	unsigned bucket_shift; /* log2 of a bucket's bytes */
	__u64 *ids;	       /* overlay: bucket id + 1, 0 = free slot */
	unsigned char *data;   /* overlay: the buckets' planned contents */
	size_t cap, used;
	struct fb_plan_store *log;
	size_t nlog, caplog;
	/* If set (n + 1 entries, by the caller): a batch planner stores nlog
	 * at marks[i] as it starts flow i, so flow i's stores are
	 * log[marks[i] .. marks[i + 1]) (batchlog.c applies a batch in parts
	 * so). */
	size_t *marks;
};

/* Why a batch was refused (returned by the cuckoo, d-left and scalable
 * operations): the first flow that could not be placed, or that a delete
 * found absent, and the table's load factor at that point. */
struct fb_batch_err {
	size_t bad;
	double load;
};

void fb_plan_init(struct fb_plan *p, void *live, unsigned bucket_shift);
void fb_plan_free(struct fb_plan *p);
/* The planned contents of the bucket at byte offset off (a multiple of the
 * bucket size) from live: the overlay copy if the plan wrote it, else live
 * memory. Valid until the next fb_plan_set(). */
const void *fb_plan_bucket(struct fb_plan *p, __u64 off);
/* Plan a store of width bytes at byte offset off from live. -1: no memory. */
int fb_plan_set(struct fb_plan *p, __u64 off, unsigned width, __u64 val);
/* Plan a store to memory outside the table (a sequence number, a count). */
int fb_plan_set_ext(struct fb_plan *p, void *addr, unsigned width, __u64 val);
/* Replay the log on live memory, in order. */
void fb_plan_apply(struct fb_plan *p);
/* Replay log[from, to), pausing pause_us after each store. */
void fb_plan_apply_range(struct fb_plan *p, size_t from, size_t to, unsigned pause_us);
/* The overlay slot (< p->cap) of the bucket at byte offset off from
 * live, or p->cap if the plan never wrote it. */
size_t fb_plan_slot(const struct fb_plan *p, __u64 off);
/* The same, pausing pause_us microseconds after each store: a test hook
 * that holds the intermediate states open (fb_plan_test_pace()). */
void fb_plan_apply_paced(struct fb_plan *p, unsigned pause_us);
/* Test hook, not for use: FLOWBLOOM_TEST_RELOC_DELAY_US=N (read once)
 * pauses N microseconds after each store of a cuckoo or d-left batch, and
 * of a batch's journal replayed (batchlog.c), so that every state inside
 * it (a relocation chain's fingerprint copied, its old slot not yet
 * overwritten; the sequence number odd; a batch half applied) lasts long
 * enough for probes through the real program, or a SIGKILL at the Nth
 * pause, to land in it (tests/cli/types_cli.sh, batch_crash.sh). Unset: 0,
 * the stores run back to back. */
unsigned fb_plan_test_pace(void);

#endif
