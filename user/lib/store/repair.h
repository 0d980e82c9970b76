/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Half states an interrupted command leaves beside a working filter
 * (repair.c): found by `check`, removed by destroy and check --repair.
 */
#ifndef FLOWBLOOM_USER_REPAIR_H
#define FLOWBLOOM_USER_REPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "store/store.h"

/* Stale staging directories of NAME: *what bit 0 an interrupted create or
 * import, bit 1 an interrupted destroy. -1 (reported) if one cannot be
 * opened now (descriptors, memory): not known to be absent. */
int fb_repair_stale(const char *name, unsigned *what);
/* Every stale staging directory of the root (entry names, '~' included),
 * sorted; *names is malloc'd. Returns the count. */
int fb_repair_list_stale(char ***names);
/* Half states an interrupted command can leave beside a working filter. */
struct fb_repair_state {
	bool stale_create;    /* ~NAME: a killed create or import */
	bool stale_destroy;   /* ~~NAME: a killed destroy */
	bool stale_counters;  /* the other generation's counters: a killed replace */
	bool stale_sets;      /* exact sets in the unused generation slot */
	__u32 stale_chunks;   /* chunks the unused generation's slots hold */
	bool iproute_missing; /* "default" without its ip-link pins */
	bool iproute_stale;   /* ... with pins of other maps in their place */
	int stale_gens;	      /* generation slots no mask names: a killed add, replace */
	int expired_gens;     /* generations ended, not yet reclaimed (not a fault) */
	bool stale_head;      /* the probe table is not what the header says (head.h) */
	__u32 shared_chunks;  /* chunk slots without a chunk of their own (not repaired) */
	int damaged_gens;     /* live generations damaged (repair: taken out) */
	unsigned damaged_g;   /* ... the first one, and its damage */
	char damaged_why[256];
};
/* Find them (call with the lock held); with repair, remove/re-pin them. */
int fb_repair_check(struct fb_store *f, bool repair, struct fb_repair_state *s);

#endif
