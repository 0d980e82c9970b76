/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Library-internal: the pin tree (pintree.c), for store.c, exact.c and
 * replace.c. Every path is reached through verified directory fds.
 */
#ifndef FLOWBLOOM_USER_PINTREE_H
#define FLOWBLOOM_USER_PINTREE_H

#include <stdbool.h>
#include <stddef.h>
#include "store.h"

int fb_pin_trusted(int fd, const char *path, bool on_the_way);
int fb_pin_open_root(bool create);
int fb_pin_open_iproute(bool create);
int fb_pin_get(int dfd, const char *name);
int fb_pin_at(int fd, int dfd, const char *name);
int fb_pin_open_dir(int dfd, const char *name);
int fb_pin_remove_tree(int dfd, const char *name, int depth);
int fb_pin_remove_stale(int root, const char *stage);
void fb_pin_stage_name(char *buf, size_t len, const char *prefix, const char *name);
int fb_pin_rename(int dfd, const char *from, const char *to);
int fb_pin_iproute_maps(int *outer_fd, int *stats_fd);
int fb_pin_iproute(const struct fb_filter *f);
void fb_pin_iproute_remove(const struct fb_filter *f);

#endif
