/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `apply`'s configuration file, NAME.conf (applyconf.c; the format is in
 * cmd_apply.c).
 */
#ifndef FLOWBLOOM_CLI_APPLYCONF_H
#define FLOWBLOOM_CLI_APPLYCONF_H

#include <stdbool.h>
#include <net/if.h>
#include "store/store.h"

#define AP_MAX_ITEMS 64 /* load and attach lines each */

struct ap_dev {
	char name[IF_NAMESIZE];
	const char *mode; /* "native" or "generic" */
	int line;
	bool attached; /* this filter already runs there (before this run) */
	bool ours;     /* attached by this run (undone on failure) */
};

struct ap_conf {
	const char *file;
	char name[FB_NAME_MAX];
	/* create's options, as they would be typed, and where each was set */
	char capacity[32], fp_rate[32], bits[32], hashes[32];
	char layout[16], hash[16], action[16], counting[8], confirm[8], malformed[8];
	int line_of[16];
	char *load[AP_MAX_ITEMS];
	int load_line[AP_MAX_ITEMS];
	int nload;
	struct ap_dev dev[AP_MAX_ITEMS];
	int ndev;
};

/* Parse FILE; every error is printed as FILE:LINE: why. */
int fb_apply_conf_read(const char *file, struct ap_conf *c);
/* Would create size the filter the file describes (capacity and fp-rate
 * within the largest filter)? 0, or -1 printed with FILE:LINE, as create
 * would refuse it. */
int fb_apply_conf_size(const struct ap_conf *c);
/* Do the lists parse, as load reads them? 0, or -1 printed (LIST:LINE). */
int fb_apply_conf_lists(const struct ap_conf *c);
void fb_apply_conf_free(struct ap_conf *c);

#endif
