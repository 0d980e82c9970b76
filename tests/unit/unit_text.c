// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_unit, part: small text readers the library shares (user/lib/util.c),
 * at the inputs fuzzing (tests/fuzz/units_fuzz.c) found them wrong on.
 */
#include "unit.h"
#include "report.h"
#include "util.h"

void test_text_input(void)
{
	/* "No sign, no junk": strtoull skips blanks and takes a sign, so
	 * " -5" was 2^64 - 5 and "+5" was 5. */
	static const char *const refuse[] = { "+5",
					      " 5",
					      "\t7",
					      " -5",
					      " +0",
					      "-1",
					      "",
					      "5 ",
					      "0x10",
					      "1e3",
					      "18446744073709551616" };
	static const struct {
		const char *s;
		unsigned long long v;
	} accept[] = { { "0", 0 }, { "5", 5 }, { "18446744073709551615", ~0ULL } };
	unsigned long long v;
	char label[160];
	size_t i;

	for (i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++) {
		v = 42;
		snprintf(label, sizeof(label), "fb_parse_u64 refuses '%s'", refuse[i]);
		ASSERT_TRUE(fb_parse_u64(refuse[i], &v) == -1, label);
	}
	for (i = 0; i < sizeof(accept) / sizeof(accept[0]); i++) {
		v = 42;
		snprintf(label, sizeof(label), "fb_parse_u64 reads '%s'", accept[i].s);
		ASSERT_TRUE(!fb_parse_u64(accept[i].s, &v) && v == accept[i].v, label);
	}
}

/* A real number as an operator writes it; strtod's other forms (hexadecimal,
 * inf, nan, a sign, leading blanks) are refused, and so is what overflows. */
void test_real_input(void)
{
	static const char *const refuse[] = { "0x1p-4", "0x10", "inf",	 "nan",	 "-0.5",
					      "+0.5",	" 0.5", "0.5 ",	 "",	 ".",
					      "e5",	".e5",	"1e999", "0.5x", "1e" };
	static const struct {
		const char *s;
		double v;
	} accept[] = {
		{ "0.01", 0.01 }, { ".5", 0.5 }, { "1e-3", 1e-3 }, { "2", 2 }, { "5E+2", 500 }
	};
	const char *end;
	char label[160];
	double v;
	size_t i;

	for (i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++) {
		snprintf(label, sizeof(label), "fb_parse_real refuses '%s'", refuse[i]);
		ASSERT_TRUE(fb_parse_real(refuse[i], &v) == -1, label);
	}
	for (i = 0; i < sizeof(accept) / sizeof(accept[0]); i++) {
		snprintf(label, sizeof(label), "fb_parse_real reads '%s'", accept[i].s);
		ASSERT_TRUE(!fb_parse_real(accept[i].s, &v) && v == accept[i].v, label);
	}
	ASSERT_TRUE(!fb_parse_real_prefix("1.5ms", &v, &end) && v == 1.5 && !strcmp(end, "ms"),
		    "fb_parse_real_prefix stops at a unit");
	ASSERT_TRUE(!fb_parse_real_prefix("2e1s", &v, &end) && v == 20 && !strcmp(end, "s"),
		    "fb_parse_real_prefix reads an exponent before a unit");
}

/* What a message quotes of a token: whole up to FB_QUOTE_MAX characters
 * as escaped, else a start cut between characters and what was left out. */
void test_quote(void)
{
	char big[9001], want[200];
	const char *q[4];
	int i;

	ASSERT_TRUE(!strcmp(fb_quote("198.51.100.7"), "198.51.100.7"), "quote: short, whole");
	ASSERT_TRUE(!strcmp(fb_quote(""), ""), "quote: empty");
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	big[FB_QUOTE_MAX] = 0;
	ASSERT_TRUE(!strcmp(fb_quote(big), big), "quote: FB_QUOTE_MAX characters, whole");
	big[FB_QUOTE_MAX] = 'A';
	big[FB_QUOTE_MAX + 1] = 0;
	snprintf(want, sizeof(want), "%.*s... (1 more byte)", FB_QUOTE_MAX, big);
	ASSERT_TRUE(!strcmp(fb_quote(big), want), "quote: one byte over");
	big[FB_QUOTE_MAX + 1] = 'A';
	snprintf(want, sizeof(want), "%.*s... (%d more bytes)", FB_QUOTE_MAX, big,
		 9000 - FB_QUOTE_MAX);
	ASSERT_TRUE(!strcmp(fb_quote(big), want), "quote: 9000 bytes");
	/* ESC shows as \x1b: four characters each. */
	memset(big, 0x1b, 2000);
	big[2000] = 0;
	snprintf(want, sizeof(want), "%.*s... (%d more bytes)", FB_QUOTE_MAX / 4, big,
		 2000 - FB_QUOTE_MAX / 4);
	ASSERT_TRUE(!strcmp(fb_quote(big), want), "quote: ESC counted as it shows");
	/* A two-byte character is never cut in two: "A" and 40 of U+00E9
	 * are 81 characters; the last one is left out whole. */
	strcpy(big, "A");
	for (i = 0; i < 40; i++)
		strcat(big, "\xc3\xa9");
	ASSERT_TRUE(strlen(fb_quote(big)) == 1 + 2 * 39 + strlen("... (2 more bytes)") &&
			    strstr(fb_quote(big), "\xc3\xa9... (2 more bytes)"),
		    "quote: cut between UTF-8 characters");
	ASSERT_TRUE(!strcmp(fb_quote_len("--name=value", 6), "--name"), "quote_len: its bytes");
	/* A character len cuts in two shows as bytes of no character. */
	ASSERT_TRUE(!strcmp(fb_quote_len("A\xc3\xa9", 2), "A\xc3"), "quote_len: a cut character");
	for (i = 0; i < 4; i++) {
		snprintf(want, sizeof(want), "w%d", i);
		q[i] = fb_quote(want);
	}
	for (i = 0; i < 4; i++) {
		snprintf(want, sizeof(want), "w%d", i);
		ASSERT_TRUE(!strcmp(q[i], want), "quote: four quotes in one message");
	}
}
