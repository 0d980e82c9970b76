/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a filter holds in the kernel (memuse.c): every map pinned in its
 * directory (monitor/ included) and every map its outer maps hold, each
 * counted once, at the kernel's own figure (memlock in the map's fdinfo,
 * as `bpftool map show` prints it; a per-CPU map's is for every possible
 * CPU).
 */
#ifndef FLOWBLOOM_USER_MEMUSE_H
#define FLOWBLOOM_USER_MEMUSE_H

#include <linux/types.h>
#include "store/store.h"

enum fb_mem_part {
	FB_MEM_BITS,	    /* the filter's chunks (both replace generations' slots) */
	FB_MEM_COUNTERS,    /* a counting filter's counters */
	FB_MEM_GENERATIONS, /* rules with a lifetime: their chunks and counters */
	FB_MEM_EXACT,	    /* --confirm exact: the exact sets */
	FB_MEM_MONITOR,	    /* attach --monitor, --new-flows, --accounting */
	FB_MEM_OTHER,	    /* the outer map, counters of packets, guard's */
	FB_MEM_NR
};

extern const char *const fb_mem_part_names[FB_MEM_NR];

struct fb_mem {
	__u64 part[FB_MEM_NR];
	__u64 total;
	__u32 maps;   /* distinct maps counted */
	__u32 unread; /* maps or slots the kernel would not read (-1 only) */
};

/* 0, or -1 (reported) when the filter's directory cannot be read, or a
 * map, slot or figure of one is refused (memory, descriptors): the figures
 * are then what was read, a part of the whole (unread says how many were
 * not), never the whole. A map that vanishes meanwhile (a writer released
 * it) is not counted. */
int fb_store_memory(const struct fb_store *f, struct fb_mem *m);
/* A map's memlock in bytes, from its fdinfo (0 if unknown). */
__u64 fb_map_memlock(int fd);

#endif
