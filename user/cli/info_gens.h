/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `info`'s part on rules with a lifetime (info_gens.c): each generation's
 * expiry, flows and fill, and what a packet meets with them, read as one
 * content with the rest of info.
 */
#ifndef FLOWBLOOM_CLI_INFO_GENS_H
#define FLOWBLOOM_CLI_INFO_GENS_H

#include <stddef.h>
#include "store/gens.h"

struct fb_gens_fig {
	int n;	    /* -1: not read */
	bool clock; /* the data path's clock read */
	struct fb_gen gl[FB_GEN_SLOTS];
	double fill[FB_GEN_SLOTS];
	int live; /* fb_gens_packet()'s */
	unsigned probes;
	double rate;
};

/* Read first (it may map f again), quiet: why says what was not read. */
void fb_info_gens_read(struct fb_store *f, struct fb_gens_fig *g, char *why, size_t len);
/* Printed (text or -j); -1 if the generations or the clock were not read. */
int fb_info_gens(const struct fb_store *f, const struct fb_gens_fig *g);

#endif
