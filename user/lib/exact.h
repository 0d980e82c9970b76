/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Library-internal: the exact sets of --confirm exact (exact.c).
 */
#ifndef FLOWBLOOM_USER_EXACT_H
#define FLOWBLOOM_USER_EXACT_H

#include <linux/types.h>
#include "store.h"

int fb_exact_create_sets(__u64 n, int fd[3]);
int fb_exact_install(int exact_fd, int lpm_fd, int gen, const int fd[3]);
void fb_exact_clear_slot(int exact_fd, int lpm_fd, int gen);
int fb_exact_create(int dir_fd, __u64 n);
int fb_exact_open(struct fb_filter *f);

#endif
