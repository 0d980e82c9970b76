/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rules with a lifetime (lifetime.c): into which generation of the filter
 * (store/gens.h; include/flowbloom/ttl.h for the data path's side) a batch
 * goes, added there by fb_rules_add(). Writers hold the filter's lock.
 */
#ifndef FLOWBLOOM_USER_LIFETIME_H
#define FLOWBLOOM_USER_LIFETIME_H

#include <stddef.h>
#include "rules/fit.h"
#include "store/gens.h"

/* A generation's size (lifetime.c says why): the blocks of a new one of
 * the filter with header h for n rules, and its k in *k. */
__u32 fb_gens_blocks(const struct fb_header *h, double n, __u8 *k);
/* The rules generation g holds within its rate (INFINITY: one as large as
 * the filter, which takes every batch). */
double fb_gens_capacity(const struct fb_header *h, const struct fb_gen *g);
/* Can generation g take n more rules: 1 within its own rate, 2 only
 * within the filter's whole target (taken only when every slot is in
 * use), 0 neither. */
int fb_gens_room(const struct fb_header *h, const struct fb_gen *g, double n);

/*
 * Add n rules that must match for secs from now (then stop within secs /
 * FB_GEN_DIV): into a generation expiring in that window, or a new one.
 * Returns fb_rules_add()'s codes (0; -1 prefix lengths or -4 rule shapes,
 * with *bad, where->px then the table that refused it; -2 reported), or -4
 * with *bad left (size_t)-1: every slot holds a live generation outside
 * the window (reported; nothing changed). where: the generation used (may
 * be NULL).
 */
int fb_gens_add(struct fb_store *f, const struct fb_key *keys, size_t n, double secs, size_t *bad,
		struct fb_gen *where);
/* fb_gens_add() of the rules of keys[0..*n) that fit the generation's
 * table (rules/fit.h: the others refused through ops, one by one); *n
 * those left. 0 with *n 0 when none did (no generation made). */
int fb_gens_add_fit(struct fb_store *f, struct fb_key *keys, size_t *n, double secs,
		    const struct fb_fit_ops *ops, size_t *bad, struct fb_gen *where);
/* For `load --replace --ttl`: in the new filter array nf (its header
 * naming the other set), one generation holding keys for secs; sets
 * nf->hdr->gens. */
int fb_gens_fresh(struct fb_store *nf, const struct fb_key *keys, size_t n, double secs,
		  size_t *bad);
/* The other way round from a plain replace (store/replace.h): the
 * permanent rules are kept and the rules with a lifetime are replaced by
 * keys, living secs (load --replace --ttl). -1 as fb_rules_replace() (*bad
 * (size_t)-1 for a failure of no particular rule, reported), or -1 / -4
 * with *bad: that rule needs a 5th prefix length / a 9th shape of the new
 * generation (its table starts empty); nothing changed. */
int fb_replace_timed(struct fb_store *f, const struct fb_key *keys, size_t n, double secs,
		     size_t *bad);
/* What a packet meets now: the probes of f's permanent rules plus those
 * of every live generation (*probes), and the expected false-positive
 * rate per packet over all of them (*fp_rate). Returns the live
 * generations; -1 if one could not be read (reported: the figures are then
 * the permanent rules' alone). */
int fb_gens_packet(const struct fb_store *f, unsigned *probes, double *fp_rate);

#endif
