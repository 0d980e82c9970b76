/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What tests/program/parse_check.bpf.c makes of a frame (pc_out). */
#ifndef FLOWBLOOM_TEST_PARSE_CHECK_H
#define FLOWBLOOM_TEST_PARSE_CHECK_H

#include <linux/types.h>
#include "flowbloom/key.h"

/* FB_PARSE_FRAGMENT and FB_PARSE_PROTO of bpf/parsing.bpf.h (asserted in
 * parse_check.bpf.c). */
#define PC_PARSE_FRAGMENT 1
#define PC_PARSE_PROTO 8

struct pc_out {
	struct fb_key key;
	__u32 info;  /* FB_PARSE_* bits (bpf/parsing.bpf.h) */
	__s32 parse; /* enum fb_parse */
};

#endif
