/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `apply`'s configuration file, NAME.conf (applyconf.c; the format is in
 * cmd_apply.c).
 */
#ifndef FLOWBLOOM_CLI_APPLYCONF_H
#define FLOWBLOOM_CLI_APPLYCONF_H

#include <stdbool.h>
#include <net/if.h>
#include "rules/lists.h"
#include "store/store.h"
#include "prog/xdpdev.h"
#include "types/create.h"

#define AP_MAX_ITEMS 64 /* load and attach lines each */

/* The settings that take one value, in the order of line_of[]. */
enum ap_key {
	AP_CAPACITY,
	AP_FP_RATE,
	AP_BITS,
	AP_HASHES,
	AP_LAYOUT,
	AP_HASH,
	AP_ACTION,
	AP_COUNTING,
	AP_CONFIRM,
	AP_COMPACT,
	AP_MALFORMED,
	AP_ALLOW_EMPTY,
	AP_NKEYS,
};

struct ap_dev {
	char name[IF_NAMESIZE];
	enum fb_xdp_mode mode;
	int line;
	bool attached;		   /* this filter already runs there (before this run) */
	__u32 prog_id;		   /* ... in this program */
	enum fb_xdp_mode run_mode; /* ... in this mode */
	bool swap;		   /* ... with another action or malformed policy than the file's */
	bool ours;		   /* attached by this run (undone on failure) */
	bool swapped;		   /* swapped by this run (undone on failure) */
	__u32 new_id;		   /* the program this run put there (attached or swapped in) */
	int old_fd;		   /* the program swapped out, held for the undo (-1: none) */
};

struct ap_conf {
	const char *file;
	char name[FB_NAME_MAX];
	/* create's parameters, read once (name: the filter's) */
	struct fb_create_req create;
	char fp_rate_text[32]; /* fp-rate as written, for messages */
	__u8 malformed;	       /* enum fb_malformed for every attachment; 0: default */
	bool allow_empty;      /* lists of no rules may empty the filter */
	int line_of[AP_NKEYS]; /* where each setting was (0: not set) */
	char *load[AP_MAX_ITEMS];
	int load_line[AP_MAX_ITEMS];
	int nload;
	struct ap_dev dev[AP_MAX_ITEMS];
	int ndev;
	bool down; /* read for --down: the lists need not be readable */
};

/* Parse FILE; every error is printed as FILE:LINE: why (-1), or as FILE:
 * why when its name is no NAME.conf (-2: a usage error). down: for
 * --down, which detaches the file's devices and reads no list (a list
 * that cannot be read is not an error then). */
int fb_apply_conf_read(const char *file, bool down, struct ap_conf *c);
/* The filter the file describes, as create makes it (the same sizing
 * rule: user/lib/types/create.c). 0, or -1 printed with FILE:LINE, as
 * create would refuse it. */
int fb_apply_conf_opts(const struct ap_conf *c, struct fb_create_opts *o);
/* The lists, read as load reads them, into l (free it): 0, or -1 printed
 * (LIST:LINE; FILE:LINE of the first load line when they hold no rules
 * and the file does not say allow-empty = yes). */
int fb_apply_conf_lists(const struct ap_conf *c, struct fb_list *l);
void fb_apply_conf_free(struct ap_conf *c);
/* An existing filter f is the one the file describes (apply never
 * re-creates one: its content and attachments would go): 0, or -1 said
 * with FILE:LINE of the setting that differs. */
int fb_apply_conf_same(const struct ap_conf *c, const struct fb_store *f);
/* A setting's key as the file spells it ("fp-rate"). */
const char *fb_apply_conf_key(enum ap_key k);

#endif
