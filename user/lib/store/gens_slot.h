/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A generation's slot range in the outer map (gens_slot.c), for gens.c:
 * its head (the range's chunk 0), its header, its counters' pin, and
 * emptying it. Range: fb_gen_range() (include/flowbloom/ttl.h).
 */
#ifndef FLOWBLOOM_USER_GENS_SLOT_H
#define FLOWBLOOM_USER_GENS_SLOT_H

#include <stddef.h>
#include <linux/types.h>
#include "store/store.h"

/* The pin name of the counters of the generation in range. */
void fb_gslot_cnt_pin(char *buf, size_t len, __u32 range);
/* The head of the generation in range, or -1 (none: errno ENOENT). */
int fb_gslot_head_fd(const struct fb_store *f, __u32 range);
/* The header in head chunk fd: 0, -1 if it is no generation's of range,
 * -2 if it cannot be mapped (errno). */
int fb_gslot_head_header(int fd, __u32 range, struct fb_header *h);
/* The header of the generation in range: 0, -1 if there is none, -2 if
 * it cannot be read now (errno), which is never taken for none. */
int fb_gslot_header(const struct fb_store *f, __u32 range, struct fb_header *h);
/* How many chunks the generation in range holds (1 if none), 0 (errno)
 * if its head cannot be read now. */
__u32 fb_gslot_chunks(const struct fb_store *f, __u32 range);
/* Empty range of its n chunks (fb_gslot_chunks()) and its counters' pin,
 * the head last: 0, or -1 (fb_report_last, unsaid) with the head left. */
int fb_gslot_clear(const struct fb_store *f, __u32 range, __u32 n);

/* Before a new generation of n chunks is installed in range (named by
 * no mask): a generation left there (its clear failed, or a killed
 * replace's) emptied whole, and the slots past the n left holding one
 * chunk at most; else its chunks past the new one's would stay held,
 * named by no head. 0, or -1 (fb_report_last, unsaid): nothing made. */
int fb_gslot_ready(const struct fb_store *f, __u32 range, __u32 n);

#endif
