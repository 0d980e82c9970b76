/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The counter map of a counting filter (NAME/counters, a generation's
 * gcntS), as the store creates, pins and maps it: its layout in 64-byte
 * blocks
 *   blocks 0-1  struct fb_cnt_header (width, the write journal)
 *   blocks 2..  m counters of 4 bits (two per byte, low nibble first) or 8
 *   then        the batch journal (fb_counting_log_bytes(): a quarter of
 *               the counters' bytes, from 32 KiB to 16 MiB; a map made by
 *               an earlier build ends with the counters and has none)
 * What the counters mean, and the journals' protocols, are the counting
 * filter's (types/counting.h, types/counting_log.h).
 */
#ifndef FLOWBLOOM_USER_COUNTERS_H
#define FLOWBLOOM_USER_COUNTERS_H

#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/key.h"

#define FB_CNT_MAGIC 0x544e4346 /* "FCNT" */
#define FB_CNT_HDR_BLOCKS 2

enum fb_journal_op {
	FB_JOURNAL_IDLE = 0,
	FB_JOURNAL_ADD = 1,
	FB_JOURNAL_DEL = 2,
};

struct fb_journal {
	__u32 op;	     /* enum fb_journal_op */
	__u32 done;	     /* positions 0..done-1 are applied */
	__u32 cur_old;	     /* counter at position `done` before it changes */
	__u32 changed;	     /* bit i: position i's counter moved */
	__u64 nflows_before; /* header nflows before this flow */
	struct fb_key key;
};

struct fb_cnt_header {
	__u32 magic;
	__u8 bits; /* 4 or 8 */
	__u8 pad[3];
	struct fb_journal journal;
	__u8 reserved[128 - 8 - sizeof(struct fb_journal)];
};

_Static_assert(sizeof(struct fb_cnt_header) == FB_CNT_HDR_BLOCKS * 64, "counter header blocks");

/* Bytes of the counter map for m counters of the given width (the batch
 * journal included); of its counters alone (whole blocks); of its batch
 * journal; a new map's header. */
size_t fb_counting_map_bytes(__u64 mbits, unsigned bits);
size_t fb_counting_data_bytes(__u64 mbits, unsigned bits);
size_t fb_counting_log_bytes(size_t data_bytes);
void fb_counting_init(struct fb_cnt_header *ch, unsigned bits);

#endif
