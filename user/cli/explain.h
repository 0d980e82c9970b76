/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the program's trace record (struct fb_trace, include/flowbloom/maps.h)
 * says of the rule that decided a packet, for replay --explain and query
 * --packet (explain.c): a permanent rule, or a rule with a lifetime and
 * its generation, with when that generation ends if the filter still
 * lists it.
 */
#ifndef FLOWBLOOM_CLI_EXPLAIN_H
#define FLOWBLOOM_CLI_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include "flowbloom/maps.h"
#include "store/store.h"

enum fb_life_what {
	FB_LIFE_NONE,	   /* no rule decided */
	FB_LIFE_PERMANENT, /* the filter's own rules */
	FB_LIFE_TTL,	   /* a rule with a lifetime, of generation g */
	FB_LIFE_UNKNOWN,   /* the program found it in neither: the filter changed */
};

struct fb_life {
	enum fb_life_what what;
	unsigned g;	 /* FB_LIFE_TTL: the generation, as info numbers them */
	bool ends_known; /* the filter lists the generation */
	double ends_in;	 /* seconds from now; <= 0: it has ended since */
};

/* The rule life of tr's deciding rule, f being the filter the program ran
 * against. */
void fb_life_of(const struct fb_store *f, const struct fb_trace *tr, struct fb_life *l);
/* Text to append to an answer's line: " (permanent)", " (lifetime,
 * generation 3, ends in 41.2 s)"...; "" if no rule decided. */
void fb_life_text(const struct fb_life *l, char *buf, size_t n);
/* Its JSON members: "lifetime" (true, false, or null: no rule decided or
 * the program could not tell), and for a lifetime "generation" and
 * "ends_in" (seconds, null if not known). */
void fb_life_json(const struct fb_life *l);

#endif
