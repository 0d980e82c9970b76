/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Loading a list into a filter (load.c): what `load` and `apply` do once
 * the lists are read (lists.h). Prefix lengths beyond the data path's
 * FB_MAX_LENGTHS per direction and family are expanded into longer ones;
 * the rules are added, or replace the content in one step (a filter sized
 * by capacity and rate is re-sized for the new list first), or go to a
 * generation with a lifetime. All or nothing: a refused rule changes
 * nothing.
 */
#ifndef FLOWBLOOM_USER_LOAD_H
#define FLOWBLOOM_USER_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "rules/lists.h"
#include "store/store.h"

struct fb_load_req {
	bool replace; /* the list becomes the content (else it is added) */
	double ttl;   /* seconds the rules live (0: for good) */
	/* replace without ttl: a content the same as the new one is kept
	 * (apply); dry: only compared, never switched (apply --check). */
	bool keep_same, dry;
	/* replace with a list of no rules: done (else refused, FB_LOAD_EMPTY:
	 * a download that failed into an empty file must not wipe a
	 * block-list, nor empty an allow-list) */
	bool allow_empty;
};

/* fb_load_list(): a replace with a list of no rules, not allowed. */
#define FB_LOAD_EMPTY (-2)

/* What a load did, for load's and apply's line. */
struct fb_load_result {
	char filter[FB_NAME_MAX];
	size_t loaded;	      /* rules, after de-duplication and expansion */
	bool replaced;	      /* as asked, and done */
	bool compared;	      /* keep_same or dry asked: unchanged says */
	bool unchanged;	      /* the content was (or dry: is) the new one already */
	double ttl;	      /* as asked */
	size_t before, after; /* address rules before and after expansion */
	__u64 bits;	      /* the filter's bits now */
	unsigned probes;      /* per packet: the permanent rules' and the live */
	double fp_rate;	      /* generations' together; expected per packet */
	int generations;      /* live generations of rules with a lifetime */
	unsigned own_probes;  /* the permanent rules' alone */
	double own_fp_rate;
	double target;	/* the filter's per-packet target (0: none) */
	double seconds; /* the load's time, under the lock */
};

/* Hold l, before it is read, to the most different rules filter name can
 * load (rules/capacity.h, fb_capacity_input()). 0, or -1 reported (the
 * filter cannot be opened: an input without end would never get to say so). */
int fb_load_bound(const char *name, bool replace, struct fb_list *l);

/* Load l (from fb_list_read() and fb_list_unique(); expanded in place)
 * into filter name as req says, under its lock. 0, or -1 with the error
 * reported (nothing loaded), or FB_LOAD_EMPTY, not reported (the caller
 * says how to allow it; the filter opened, nothing changed). */
int fb_load_list(const char *name, struct fb_list *l, const struct fb_load_req *req,
		 struct fb_load_result *res);
/* The same into f, open (and, if staged, locked by its maker; else
 * locked here for the load). */
int fb_load_into(struct fb_store *f, struct fb_list *l, const struct fb_load_req *req,
		 struct fb_load_result *res);

#endif
