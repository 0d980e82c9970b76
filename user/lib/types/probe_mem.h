/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The filter types' probes (include/flowbloom/probe.h, the data path's own
 * code) over memory: a filter array is a run of 64-byte blocks, block 0
 * its header (the mmap of a filter, an export file's image, a table in a
 * buffer), and a block past its end is absent, as a missing chunk is to
 * the data path.
 */
#ifndef FLOWBLOOM_USER_PROBE_MEM_H
#define FLOWBLOOM_USER_PROBE_MEM_H

#include <linux/types.h>
#include "flowbloom/geometry.h"

struct fb_tbl {
	const struct fb_block *blocks; /* logical block 0 */
	__u64 nblocks;		       /* blocks there, from blocks[0] on */
};

typedef const struct fb_tbl *fb_tbl_t;

static __always_inline const struct fb_block *fb_tblock(fb_tbl_t t, __u32 b)
{
	return b < t->nblocks ? &t->blocks[b] : (const struct fb_block *)0;
}

#include "flowbloom/probe.h"

#endif
