// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Numeric option values (see parse.h), and attach's monitoring options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "monitor/monmaps.h"
#include "parse.h"
#include "report.h"
#include "util.h"

int fb_parse_double(const char *opt, const char *s, double min, double max, double *out)
{
	double v;

	if (fb_parse_real(s, &v) || !(v >= min && v <= max)) {
		fb_usage("bad value '%s' for %s (want %g to %g)", fb_quote(s), opt, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int fb_parse_u64_range(const char *opt, const char *s, __u64 min, __u64 max, __u64 *out)
{
	unsigned long long v;

	if (fb_parse_u64(s, &v) || v < min || v > max) {
		fb_usage("bad value '%s' for %s (want %llu to %llu)", fb_quote(s), opt,
			 (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

static const struct {
	const char *suffix;
	double secs;
} units[] = { { "ms", 1e-3 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 } };

/* secs as the operator writes it: in the largest unit it is a whole
 * number of (30d, not 2.592e+06s; 10ms, not 0.01s). */
const char *fb_duration_text(double secs, char *buf, size_t len)
{
	size_t i = sizeof(units) / sizeof(units[0]);
	double n;

	while (i-- > 0) {
		n = secs / units[i].secs;
		if (n >= 1 && fabs(n - round(n)) < 1e-9 * n) {
			snprintf(buf, len, "%.0f%s", n, units[i].suffix);
			return buf;
		}
	}
	snprintf(buf, len, "%gs", secs);
	return buf;
}

int fb_duration_value(const char *s, double *out)
{
	const char *end;
	double v;
	size_t i;

	if (fb_parse_real_prefix(s, &v, &end))
		return -1;
	if (*end) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].suffix))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		v *= units[i].secs;
	}
	*out = v;
	return 0;
}

int fb_parse_duration(const char *opt, const char *s, double min, double max, double *out)
{
	char lo[32], hi[32];
	double v;

	if (fb_duration_value(s, &v) || !(v >= min && v <= max)) {
		fb_usage("bad duration '%s' for %s (want a number with ms, s, m, h or d, from %s "
			 "to %s)",
			 fb_quote(s), opt, fb_duration_text(min, lo, sizeof(lo)),
			 fb_duration_text(max, hi, sizeof(hi)));
		return -1;
	}
	*out = v;
	return 0;
}

/* A size with an optional K, M or G suffix (powers of 1024). */
int fb_parse_size(const char *opt, const char *s, __u64 *out)
{
	char num[64], *end;
	unsigned long long v, mult = 1;
	size_t n = strlen(s);

	if (!n || n >= sizeof(num))
		goto bad;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'k':
	case 'K':
		mult = 1ULL << 10;
		break;
	case 'm':
	case 'M':
		mult = 1ULL << 20;
		break;
	case 'g':
	case 'G':
		mult = 1ULL << 30;
		break;
	}
	if (mult > 1)
		num[n - 1] = 0;
	/* Digits first: strtoull() would skip blanks and take a sign. */
	errno = 0;
	v = strtoull(num, &end, 10);
	if (errno || num[0] < '0' || num[0] > '9' || *end || v > (1ULL << 40) / mult)
		goto bad;
	*out = v * mult;
	return 0;
bad:
	fb_usage("bad size '%s' for %s (bytes, or with K, M, G)", fb_quote(s), opt);
	return -1;
}

int fb_mon_option(int c, const char *arg, struct fb_mon_opts *o)
{
	__u64 v;

	static const char *const bys[] = { "flow", "src", "dst", NULL };
	static const int by_v[] = { 0, FB_MON_BY_SRC, FB_MON_BY_DST };
	int by;

	if (c < FB_OPT_MONITOR || c > FB_OPT_SKETCHBY)
		return 0;
	o->given |= 1U << (c - FB_OPT_MONITOR);
	switch (c) {
	case FB_OPT_MONITOR:
		o->sketch = true;
		return 1;
	/* The sketch's bounds (fb_monitor_geometry): w = e/eps columns, at
	 * most 2^FB_MON_MAX_SHIFT; d = ln(1/delta) rows, at most
	 * FB_MON_MAX_DEPTH. Out of them, a usage error with the real range. */
	case FB_OPT_EPSILON:
		o->sketch = true;
		if (fb_parse_double("--epsilon", arg, M_E / (1U << FB_MON_MAX_SHIFT), 0.5,
				    &o->epsilon))
			return -1;
		return 1;
	case FB_OPT_DELTA:
		o->sketch = true;
		if (fb_parse_double("--delta", arg, exp(-FB_MON_MAX_DEPTH), 0.5, &o->delta))
			return -1;
		return 1;
	case FB_OPT_NEWFLOWS:
		o->newflows = true;
		return 1;
	case FB_OPT_AGE:
		o->newflows = true;
		return fb_parse_duration("--age", arg, FB_MON_MIN_AGE, FB_MON_MAX_AGE, &o->age) ? -1
												: 1;
	case FB_OPT_EXPECT:
		o->newflows = true;
		return fb_parse_u64_range("--expect", arg, 1, FB_SEEN_MAX_SLOTS, &o->expect) ? -1
											     : 1;
	case FB_OPT_RING:
		o->newflows = true;
		if (fb_parse_size("--ring", arg, &v))
			return -1;
		if (v < (__u64)getpagesize() || v > (1ULL << 30) || (v & (v - 1))) {
			fb_usage("--ring must be a power of 2 from %d bytes to 1G", getpagesize());
			return -1;
		}
		o->ring_bytes = (__u32)v;
		return 1;
	case FB_OPT_ACCT:
		o->acct = true;
		return 1;
	case FB_OPT_MAXFLOWS:
		o->acct = true;
		return fb_parse_u64_range("--max-flows", arg, FB_ACCT_MIN_FLOWS, FB_ACCT_MAX_FLOWS,
					  &o->max_flows)
			       ? -1
			       : 1;
	case FB_OPT_SKETCHBY:
		o->sketch = true;
		if ((by = fb_pick("--sketch-by", arg, bys, by_v)) < 0)
			return -1;
		o->sketch_by = (__u32)by;
		return 1;
	}
	return 0;
}
