/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `apply`'s devices (applydev.c): checked before anything changes, the
 * steps on them, and their undo.
 */
#ifndef FLOWBLOOM_CLI_APPLYDEV_H
#define FLOWBLOOM_CLI_APPLYDEV_H

#include "applyconf.h"

/* Before anything changes: the devices exist, the program can read their
 * packets, and each is free or runs this filter already (in the file's
 * mode; with its settings, or marked to be swapped for them); exists: the
 * filter exists and must be the file's. 0, or -1 said with FILE:LINE. */
int fb_apply_check_devices(struct ap_conf *c, bool exists);
/* Attach c's filter to d: 1 attached (d->new_id), 0 attached already
 * (meanwhile, by hand), -1 refused (said with FILE:LINE). */
int fb_apply_attach(const struct ap_conf *c, struct ap_dev *d, bool warn);
/* Swap d's program for one with the file's settings: 0, or -1 (said). */
int fb_apply_swap(const struct ap_conf *c, struct ap_dev *d);
/* "NAME already attached to DEV (MODE)". */
void fb_apply_print_already(const struct ap_conf *c, const struct ap_dev *d, __u32 prog_id);
/* Undo the run's attaches and swaps where they are still its own. */
void fb_apply_undo(struct ap_conf *c);
/* Mark the file's devices that run f attached: 0, or -1 (said). */
int fb_apply_find_attached(struct ap_conf *c, struct fb_store *f);

#endif
