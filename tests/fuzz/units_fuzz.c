// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Numbers, durations and sizes as options and configuration files give
 * them: fb_parse_u64() (user/lib/util.c: counts, ipfix's top and domain,
 * create's sizes), fb_parse_duration() (--ttl, --interval), fb_parse_size()
 * (capture --buffer, attach --ring) and fb_parse_double() (--pps, --age...)
 * from user/cli/parse.c, with the bounds their callers pass; and
 * fb_conf_text() (user/lib/util.c), which cuts every configuration line.
 * The input: one byte choosing the function and bounds, then the text.
 *
 * Checked against what each promises (util.h, parse.h): a number is all
 * decimal digits, no sign, no blank, no overflow; a size is such a number
 * with an optional K, M or G (powers of 1024), at most 2^40 bytes; a
 * duration a decimal number with an optional unit ms, s, m, h or d, in its
 * bounds; a real number (fb_parse_double) digits, a point and an exponent
 * only (no sign, blank, hexadecimal, inf or nan); a refusal is reported
 * (these report through fb_usage, defined in fuzz.h as main.c's is: an
 * error line). What each accepts, and that it
 * accepts what those words allow.
 */
#include "fuzz.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include "parse.h"
#include "util.h"
#include "store/gens.h"

/* All of s[0..n) decimal digits (n > 0), their value in *v unless it
 * passes 2^64 - 1 (then 0 is returned too). */
static int digits(const char *s, size_t n, unsigned long long *v, int *overflow)
{
	size_t i;

	*v = 0;
	*overflow = 0;
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		if (*v > (~0ULL - (s[i] - '0')) / 10)
			*overflow = 1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 1;
}

static void check_u64(const char *s)
{
	unsigned long long v, want;
	int overflow, ok = digits(s, strlen(s), &want, &overflow) && !overflow;

	if (!fb_parse_u64(s, &v)) {
		FUZZ_ASSERT(ok, "u64: accepted '%s' (%llu): not a decimal number", s, v);
		FUZZ_ASSERT(v == want, "u64: '%s' read as %llu", s, v);
	} else {
		FUZZ_ASSERT(!ok, "u64: refused '%s'", s);
	}
}

static void check_size(const char *s)
{
	size_t n = strlen(s);
	unsigned long long want, mult = 1;
	const char *unit;
	int overflow, ok;
	__u64 got;

	if (n && (unit = strchr("kKmMgG", s[n - 1])) && s[n - 1]) {
		mult = 1ULL << (10 * (1 + (unit - "kKmMgG") / 2));
		n--;
	}
	/* A size is at most 63 characters (user/cli/parse.c): 0 written with
	 * 93 zeros is refused, as too long. */
	ok = strlen(s) < 64 && digits(s, n, &want, &overflow) && !overflow &&
	     want <= (1ULL << 40) / mult;
	if (!fb_parse_size("--buffer", s, &got)) {
		FUZZ_ASSERT(ok, "size: accepted '%s' (%llu)", s, (unsigned long long)got);
		FUZZ_ASSERT(got == want * mult, "size: '%s' read as %llu", s,
			    (unsigned long long)got);
	} else {
		FUZZ_ASSERT(!ok, "size: refused '%s'", s);
		FUZZ_ASSERT(fuzz_errors == 1, "size: refused '%s' silently", s);
	}
}

/* A decimal number begins with a digit, or a point and a digit (.5). */
static int decimal_start(const char *s)
{
	return isdigit((unsigned char)s[0]) || (s[0] == '.' && isdigit((unsigned char)s[1]));
}

static void check_duration(const char *s, double min, double max)
{
	static const char *const units[] = { "ms", "s", "m", "h", "d", "" };
	static const double secs[] = { 1e-3, 1, 60, 3600, 86400, 1 };
	size_t n = strlen(s), num = strspn(s, "0123456789."), i;
	double got, want;
	char *end;
	int plain;

	/* Plain decimal (digits, at most one point) with a unit or none. */
	for (i = 0; i < 6 && strcmp(s + num, units[i]); i++)
		;
	plain = n && decimal_start(s) && i < 6 && strchr(s, '.') == strrchr(s, '.') && num <= 40;
	errno = 0;
	want = plain ? strtod(s, &end) * secs[i] : NAN;
	if (!fb_parse_duration("--ttl", s, min, max, &got)) {
		FUZZ_ASSERT(isfinite(got) && got >= min && got <= max,
			    "duration: '%s' read as %g, outside [%g, %g]", s, got, min, max);
		FUZZ_ASSERT(decimal_start(s), "duration: accepted '%s'", s);
		FUZZ_ASSERT(!plain || got == want, "duration: '%s' read as %g, not %g", s, got,
			    want);
	} else {
		FUZZ_ASSERT(!plain || !(want >= min && want <= max), "duration: refused '%s' (%g)",
			    s, want);
		FUZZ_ASSERT(fuzz_errors == 1, "duration: refused '%s' silently", s);
	}
}

static void check_double(const char *s, double min, double max)
{
	double got;

	if (!fb_parse_double("--pps", s, min, max, &got)) {
		FUZZ_ASSERT(got >= min && got <= max, "double: '%s' read as %g", s, got);
		FUZZ_ASSERT(decimal_start(s) && strspn(s, "0123456789.eE+-") == strlen(s),
			    "double: accepted '%s'", s);
	} else
		FUZZ_ASSERT(fuzz_errors == 1, "double: refused '%s' silently", s);
}

static void check_conf_text(const char *s, int line)
{
	char *copy = strdup(s), *t;
	size_t n;

	if (!copy)
		abort();
	t = fb_conf_text(copy, line);
	n = strlen(t);
	FUZZ_ASSERT(!strchr(t, '#'), "conf: '%s' keeps a comment", s);
	FUZZ_ASSERT(t[0] != ' ' && t[0] != '\t', "conf: '%s' keeps a leading blank", s);
	FUZZ_ASSERT(!n || !strchr(" \t\r\n", t[n - 1]), "conf: '%s' keeps a trailing blank", s);
	FUZZ_ASSERT(t >= copy && t + n <= copy + strlen(s), "conf: '%s' out of its line", s);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double bounds[][2] = {
		{ FB_TTL_MIN, FB_TTL_MAX }, { 1, FB_TTL_MAX }, { 0.05, 86400 }, { 0.001, 1e15 }
	};
	const double *b;
	char *s;

	fuzz_silence();
	if (size < 1 || size > 256)
		return -1;
	s = fuzz_cstr(data + 1, size - 1);
	if (!s)
		return -1;
	b = bounds[(data[0] >> 3) & 3];
	switch (data[0] & 7) {
	case 0:
	case 1:
		check_u64(s);
		break;
	case 2:
	case 3:
		check_size(s);
		break;
	case 4:
	case 5:
		check_duration(s, b[0], b[1]);
		break;
	case 6:
		check_double(s, b[0], b[1]);
		break;
	default:
		check_conf_text(s, (data[0] >> 3) & 1 ? 1 : 2);
	}
	free(s);
	return 0;
}
