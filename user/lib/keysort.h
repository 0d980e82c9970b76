/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rules sorted in place (keysort.c): the order of memcmp() over the whole
 * key, as qsort() with a memcmp comparison gives it, without qsort's
 * buffer (glibc's merge sort takes 16 bytes a key of 40 beside the list:
 * a third more than the list itself at the peak of a load).
 */
#ifndef FLOWBLOOM_USER_KEYSORT_H
#define FLOWBLOOM_USER_KEYSORT_H

#include <stddef.h>
#include "flowbloom/key.h"

void fb_keys_sort(struct fb_key *k, size_t n);
/* Sort k[0..n) and drop repeats; the number of distinct keys. */
size_t fb_keys_unique(struct fb_key *k, size_t n);

#endif
