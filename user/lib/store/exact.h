/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The exact sets of --confirm exact (exact.c).
 */
#ifndef FLOWBLOOM_USER_EXACT_H
#define FLOWBLOOM_USER_EXACT_H

#include <linux/types.h>
#include "store/store.h"

/* --confirm exact: raise (delta 1) or lower (-1) a rule's count in the
 * current exact sets; at 0 it leaves them. 0 ok, -1 error (printed). */
int fb_exact_adjust(struct fb_store *f, const struct fb_key *k, int delta);
/* --confirm exact: many rules into the exact sets, all or none: each
 * distinct key's count raised by its copies (copies[i] for keys[i], NULL:
 * one each), written a batch at a time with no lookups when the set is
 * empty (a new filter's, or the fresh one `load --replace` fills), else
 * after one lookup per distinct key. The trie of its direction gets each
 * new prefix. b (fb_exact_batch_free() it) says what was there before,
 * for fb_exact_undo_many(). 0 ok, -1 error (printed; nothing changed).
 * Call with the lock held. */
struct fb_exact_batch {
	struct fb_key *keys; /* distinct, sorted */
	__u32 *old, *now;    /* counts before (NULL: none) and after */
	size_t n;
	bool own; /* keys allocated here (else the caller's) */
};
int fb_exact_add_many(struct fb_store *f, const struct fb_key *keys, const __u32 *copies, size_t n,
		      struct fb_exact_batch *b);
/* The counts and trie entries back as they were before b was added. */
void fb_exact_undo_many(struct fb_store *f, struct fb_exact_batch *b);
void fb_exact_batch_free(struct fb_exact_batch *b);
/* --confirm exact: how many times a rule is in the exact sets, into
 * *count (0: not there); -1 when the set cannot be read (reported, *count
 * 0): never taken for "not there". */
int fb_exact_get(const struct fb_store *f, const struct fb_key *k, __u32 *count);
/* Every rule of the exact sets with its copies (0 too: damage a check
 * looks for), to fn (which stops the walk by returning non-zero), read in
 * batches. 0, or -1 (fn's, or printed). The caller holds the store lock:
 * no writer changes them. */
int fb_exact_each(const struct fb_store *f,
		  int (*fn)(const struct fb_key *k, __u32 copies, void *ctx), void *ctx);
/* Every entry of one of f's sets, fd (keys of ksize bytes, __u32 values),
 * to fn: in batches of 4096 (a call each), a key at a time where the
 * kernel cannot batch the map type. 0, or -1 (fn's, or printed). */
int fb_exact_walk(const struct fb_store *f, int fd, size_t ksize,
		  int (*fn)(const void *k, __u32 v, void *ctx), void *ctx);
/* The same for the entries of trie set (1: sources, 2: destinations). */
struct fb_lpm_key;
int fb_exact_each_prefix(const struct fb_store *f, int set,
			 int (*fn)(const struct fb_lpm_key *k, void *ctx), void *ctx);

/* The most rules an exact set holds: the kernel refuses a hash map of
 * more than 2^28 - 1 buckets (16 bytes each), and these, 2^27 buckets,
 * already take 2 GiB before the first rule. */
#define FB_EXACT_MAX_RULES (1U << 27)

/* Library-internal: for store.c, replace.c and repair.c. */
/* The rules a filter's exact sets are made for: twice its capacity, or
 * for explicit geometry one a byte of its bits (fb_exact_create_sets()
 * bounds it). */
static inline __u64 fb_exact_sets_for(__u64 capacity, __u32 nblocks)
{
	return capacity ? 2 * capacity : (__u64)nblocks * FB_BLOCK_BITS / 8;
}
int fb_exact_create_sets(__u64 n, int fd[3]);
int fb_exact_install(int exact_fd, int lpm_fd, int gen, const int fd[3]);
void fb_exact_clear_slot(int exact_fd, int lpm_fd, int gen);
int fb_exact_create(int dir_fd, __u64 n);
int fb_exact_open(struct fb_store *f);

#endif
