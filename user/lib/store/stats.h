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

#endif
