/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What tests/test_types.c and tests/types_check.bpf.c share: the geometry
 * record the program reads (one array entry), and the packet it gets (a
 * raw struct fb_key at offset 0, padded to a minimum frame).
 */
#ifndef FLOWBLOOM_TEST_TYPES_CHECK_H
#define FLOWBLOOM_TEST_TYPES_CHECK_H

#include <linux/types.h>
#include "flowbloom/cuckoo.h"
#include "flowbloom/dleft.h"
#include "flowbloom/scalable.h"

enum tc_type {
	TC_CUCKOO = 1,
	TC_DLEFT = 2,
	TC_SCALABLE = 3,
};

struct tc_geom {
	__u32 type; /* enum tc_type */
	__u8 hash;  /* enum fb_hash_alg */
	__u8 pad[3];
	__u64 key[2];
	__u64 kw[FB_NHK_WORDS]; /* fb_nhk_words(key), for hash FB_HASH_NHK */
	struct fb_cuckoo_geom c;
	struct fb_dleft_geom d;
	struct fb_sbf_geom s;
};

#define TC_TABLE_BLOCKS (1U << 14) /* 1 MiB of 64-byte blocks */

#endif
