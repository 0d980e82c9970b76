/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Numeric option values (parse.c). Each prints a usage error naming the
 * option and returns -1 on bad input.
 */
#ifndef FLOWBLOOM_CLI_PARSE_H
#define FLOWBLOOM_CLI_PARSE_H

#include <stddef.h>
#include <linux/types.h>

int fb_parse_double(const char *opt, const char *s, double min, double max, double *out);
int fb_parse_u64_range(const char *opt, const char *s, __u64 min, __u64 max, __u64 *out);
/* A duration: a number with an optional unit ms, s, m, h or d (2s, 10m,
 * 1.5h; no unit: seconds), in [min, max] seconds. */
int fb_parse_duration(const char *opt, const char *s, double min, double max, double *out);
/* The same without a message: 0, or -1 if s is no duration. */
int fb_duration_value(const char *s, double *out);
/* secs as an operator writes it (30d, 10ms, 1.5s) into buf. */
const char *fb_duration_text(double secs, char *buf, size_t len);
/* A size with an optional K, M or G suffix (powers of 1024). */
int fb_parse_size(const char *opt, const char *s, __u64 *out);
/* attach's monitoring options (codes FB_OPT_* in monmaps.h): 1 handled,
 * 0 not ours, -1 bad value (printed). */
struct fb_mon_opts;
int fb_mon_option(int c, const char *arg, struct fb_mon_opts *o);

#endif
