/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What tests/program/types_same.c and types_check.bpf.c share: the hash
 * settings the program reads (one array entry), the filter array (chunks
 * of the data path's shape, mmap'd whole by user space as one run of
 * blocks, block 0 the header), and the packet it gets (a raw struct fb_key
 * at offset 0, padded to a minimum frame).
 */
#ifndef FLOWBLOOM_TEST_TYPES_CHECK_H
#define FLOWBLOOM_TEST_TYPES_CHECK_H

#include <linux/types.h>
#include "flowbloom/geometry.h"
#include "flowbloom/hash.h"

struct tc_conf {
	__u64 kw[FB_NHK_WORDS]; /* fb_nhk_words(header's key), for hash FB_HASH_NHK */
};

/* One value of tc_table: a chunk, as the data path's are (geometry.h). */
struct tc_chunk {
	struct fb_block b[FB_CHUNK_BLOCKS];
};

#define TC_CHUNKS 4
#define TC_TABLE_BLOCKS (TC_CHUNKS * FB_CHUNK_BLOCKS) /* 1 MiB of 64-byte blocks */

#endif
