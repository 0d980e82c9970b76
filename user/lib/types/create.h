/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A new filter's settings (create.c): create's parameters as given (by
 * `create`'s options or `apply`'s file) checked and turned into the struct
 * fb_create_opts fb_store_create() takes, by one sizing rule: capacity and
 * rate through the layout's or the type's formula (sizing.h, ftype.h), or
 * bits and hashes as given. Nothing is printed: a refusal comes back as a
 * reason for the caller to word as its own error.
 */
#ifndef FLOWBLOOM_USER_CREATE_H
#define FLOWBLOOM_USER_CREATE_H

#include <stdbool.h>
#include <stddef.h>
#include "store/store.h"

struct fb_create_req {
	const char *name; /* the filter's: confirm is refused for FB_IPROUTE_FILTER */
	int type;	  /* enum fb_type; -1: Bloom, or scalable with grow */
	bool grow;	  /* a filter that grows (the scalable type) */
	__u8 layout;	  /* enum fb_layout; 0: not given (blocked) */
	bool have_capacity, have_fp_rate, have_bits, have_hashes;
	unsigned long long capacity, bits, hashes;
	double fp_rate;	   /* per probe, in (0, 1) */
	__u8 counter_bits; /* 0: plain; 4 or 8: counting */
	bool confirm;	   /* exact confirmation sets */
	bool compact;	   /* a Bloom filter's bits in whole pages (FB_HDRF_COMPACT) */
	__u8 hash;	   /* enum fb_hash_alg; 0: the action's default */
	__u8 action;	   /* enum fb_action; 0: drop */
};

enum {
	FB_CREATE_USAGE = -1,	/* parameters that do not go together (why says which) */
	FB_CREATE_TOO_BIG = -2, /* no filter of that size can be made */
	FB_CREATE_REFUSED = -3, /* a setting the filter cannot have (confirm on ip link's) */
};

/* A false-positive rate a filter can keep: the header stores it in parts
 * per 10^9 (fp_ppb), from 1 to 10^9 - 1. */
#define FB_FP_RATE_RANGE "from 1e-9 to 0.999999999"
static inline bool fb_fp_rate_ok(double p)
{
	return p >= 0.5e-9 && p < 1 - 0.5e-9;
}

/* r checked and sized into o. 0, or FB_CREATE_* with why (named as
 * create's options: "--capacity must be at least 1"). */
int fb_create_opts_make(const struct fb_create_req *r, struct fb_create_opts *o, char *why,
			size_t len);
/* The memory a filter made with o takes: its array and its counters. */
unsigned long long fb_create_bytes(const struct fb_create_opts *o);

#endif
