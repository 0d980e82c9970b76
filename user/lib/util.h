/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Small helpers the library shares (util.c).
 */
#ifndef FLOWBLOOM_USER_UTIL_H
#define FLOWBLOOM_USER_UTIL_H

#include <linux/types.h>

/* The kernel id of BPF map fd (0 if unknown). */
__u32 fb_map_id(int fd);
/* qsort() comparison of two char * (names). */
int fb_cmp_str(const void *a, const void *b);

#endif
