/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A filter's statistics (stats.c).
 */
#ifndef FLOWBLOOM_USER_STATS_H
#define FLOWBLOOM_USER_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "store/store.h"

/* Sum of the per-CPU statistics. */
int fb_stats_read(const struct fb_store *f, struct fb_stats *out);
/* The same from a stats map fd (a program's own, a test's); name for the
 * error. */
int fb_stats_read_fd(int fd, const char *name, struct fb_stats *out);

#endif
