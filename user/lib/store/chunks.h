/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A filter's chunks (include/flowbloom/geometry.h, "Physical layout"):
 * creating them, mapping them back to back so user space sees one array,
 * and installing them in the outer map fb_filter.
 *
 * Installing is a batch update of the outer map: the kernel waits for an
 * RCU grace period once per update syscall of a map-in-map (~15 ms here),
 * so a filter of 2,000 chunks is installed in one wait, not 2,000. A batch
 * is applied in order, so chunks listed before slot 0 are in place before
 * a packet can find the head that names them.
 */
#ifndef FLOWBLOOM_USER_CHUNKS_H
#define FLOWBLOOM_USER_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* n new chunks (zeroed) into fds[0..n); 0, or -1 with nothing left open
 * (error reported). */
int fb_chunks_create(__u32 n, int *fds);
void fb_chunks_close(int *fds, __u32 n);

/* Map chunks back to back: fds[0..n) (or, with fds NULL, the chunks of
 * generation gen in outer's slots, chunk 0 from head_fd) into a fresh
 * reservation of n chunks. Returns the mapping, or NULL (error reported). */
void *fb_chunks_mmap(const int *fds, __u32 n);
void *fb_chunks_mmap_outer(int outer_fd, int head_fd, __u32 gen, __u32 n);
/* The same, and fds[0..more) (not installed yet) after those n. */
void *fb_chunks_mmap_grown(int outer_fd, int head_fd, __u32 gen, __u32 n, const int *fds,
			   __u32 more);
/* Map chunks fds[0..n) at chunk positions from..from+n of an existing
 * mapping (whose reservation holds them). */
int fb_chunks_mmap_at(void *map, __u32 from, const int *fds, __u32 n);
void fb_chunks_munmap(void *map, __u32 n);

/* One batch: fds[0..n) into the slots of chunks 0..n-1 of generation gen,
 * then, if head, fds[0] into slot 0 (the switch). 0 or -1 (reported). */
int fb_chunks_install(int outer_fd, __u32 gen, const int *fds, __u32 n, int head);
/* The same for chunks from..from+n (a grown filter's new chunks). */
int fb_chunks_install_at(int outer_fd, __u32 gen, __u32 from, const int *fds, __u32 n);
/* Release the slots of chunks from..to-1 of generation gen: one batch
 * storing an empty chunk there (an outer map cannot delete in batches),
 * which drops the outer map's references to what they held; without
 * memory for the empty chunk, the last slots are deleted one by one
 * until it fits (all of them if it never does). */
int fb_chunks_release(int outer_fd, __u32 gen, __u32 from, __u32 to);

/* An outer map adopted from ip link's program, given back as it was
 * found: slot 0 empty (its program passes everything again) and none of
 * the n chunks of generation gen held in the others (an empty chunk stands
 * in each: an outer map cannot delete in batches, and each delete waits
 * for an RCU grace period). */
void fb_chunks_give_back(int outer_fd, __u32 gen, __u32 n);

/* How far generation gen's slots are filled: the chunk slots holding a
 * chunk, from chunk 0 up to the first empty one; -1 (reported) out of
 * memory or a slot that cannot be read. *maps
 * (unless NULL): how many distinct chunks they hold; *head (unless NULL):
 * whether chunk 0 holds a filter's header (not the empty chunk
 * fb_chunks_release() stores). */
int fb_chunks_span(int outer_fd, __u32 gen, __u32 *maps, bool *head);

/* Of generation gen's chunk slots 0..n), how many hold no chunk of their
 * own: slot 0 another chunk than the head (the data path reads chunk 0's
 * bits there, writers write them through the head), a later one the head
 * or an earlier slot's chunk, or none. Two slots on one chunk make two
 * parts of the bits one: each overwrites the other's rules. 0: each
 * slot holds its own chunk, as every writer leaves them; -1 (reported) if
 * a slot cannot be read. */
int fb_chunks_shared(int outer_fd, __u32 gen, __u32 n, __u32 head_id);

/* The chunk fd in slot (or -1, errno set). */
int fb_chunks_slot_fd(int outer_fd, __u32 slot, __u32 *id);

#endif
