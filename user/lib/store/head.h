/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The head's derived part (include/flowbloom/head.h): NH key words and the
 * probe table, rebuilt from the header and the prefix table whenever
 * those change.
 */
#ifndef FLOWBLOOM_USER_HEAD_H
#define FLOWBLOOM_USER_HEAD_H

#include <stdbool.h>
#include "flowbloom/head.h"
#include "store/store.h"

/* The head of f's mapping. */
static inline struct fb_head *fb_store_head(const struct fb_store *f)
{
	return (struct fb_head *)f->map;
}

/* What the head should hold, from f's header and prefix table. */
struct fb_head_want {
	struct fb_head_keys keys;
	struct fb_probe probe[FB_FAMILIES][FB_MAX_PROBES];
	__u8 nprobe[FB_FAMILIES];
	__u8 fast;
};

/* 0, or -1 if the prefix table is one this build does not probe (more
 * than FB_MAX_LENGTHS lengths in a list). */
int fb_head_want(const struct fb_store *f, struct fb_head_want *w);

/*
 * Bring f's head up to date: the probe table, and the header's nprobe and
 * fast (geometry.h). A filter no program can see yet (live false: being
 * built aside) is written in place. A live one grows in place when
 * its probe table only gains descriptors at the end (each written before
 * the count that makes it visible: the order a packet reads them); any
 * other change swaps the head whole: a copy of chunk 0 with the new
 * table, stored in the slots of chunk 0 in one step (the bits it holds
 * are the same; writers hold the lock). Call with the lock held. 0, or -1
 * with the error reported (nothing changed).
 */
int fb_head_sync(struct fb_store *f, bool live);

/* Is the head what the header says (check)? */
bool fb_head_current(const struct fb_store *f);

/* Before a program is attached to f: a probe table another build of
 * flowbloom wrote (descriptors this build makes differently), f's own or
 * a live generation's, rebuilt under the lock, with a note. 0, or -1
 * reported. */
int fb_head_refresh(struct fb_store *f);

#endif
