// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The escaper of strings others chose (user/lib/report.c): fb_escape(),
 * which every message (fb_report()) and every name shown on the terminal
 * (fb_name_for_tty()) goes through. The input: one options byte (bit 0
 * keep_tab; bits 1-7 the buffer: 0 for FB_ESCAPED_SIZE of the string, else
 * that many bytes), then the string (up to a NUL).
 *
 * What must hold (report.h): the output has no control byte but the tab
 * it keeps with keep_tab, no DEL, no C1 control (U+0080 to U+009F) in
 * UTF-8 form, and is valid UTF-8; escaping it again changes nothing; with
 * FB_ESCAPED_SIZE it is never cut, a string of nothing to escape coming
 * back as it is; cut to a smaller buffer it is the whole output's first
 * escapes, never part of one. Checked against an escaper written here
 * from report.h's words (a UTF-8 decoder of its own, RFC 3629).
 */
#include "fuzz.h"

/* The length of a valid UTF-8 sequence at s (shortest form, no surrogate,
 * at most U+10FFFF) and its code point, or 0. */
static int utf8_seq(const unsigned char *s, unsigned *cp)
{
	unsigned v, min;
	int n, i;

	if (s[0] < 0x80)
		return *cp = s[0], 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, v = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, v = s[0] & 0x0f, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, v = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* a NUL ends it here too */
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

/* report.h's escaping, written again: the next unit of s in out (a
 * string), its input bytes returned. */
static int unit(const unsigned char *s, bool keep_tab, char *out)
{
	static const char *named[] = { "\\a", "\\b", "\\t", "\\n", "\\v", "\\f", "\\r" };
	unsigned cp;
	int n = utf8_seq(s, &cp), i;

	if (!n) {
		sprintf(out, "\\x%02x", s[0]);
		return 1;
	}
	if (n == 1 && s[0] == '\t' && keep_tab) {
		strcpy(out, "\t");
	} else if (n == 1 && s[0] >= 7 && s[0] <= 13) {
		strcpy(out, named[s[0] - 7]);
	} else if ((n == 1 && (s[0] < 0x20 || s[0] == 0x7f)) || (cp >= 0x80 && cp <= 0x9f)) {
		for (i = 0; i < n; i++)
			sprintf(out + 4 * i, "\\x%02x", s[i]);
	} else {
		memcpy(out, s, n);
		out[n] = 0;
	}
	return n;
}

static void reference(const char *s, bool keep_tab, char *buf, size_t len)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t at = 0, w;
	char u[32];

	while (*c) {
		int n = unit(c, keep_tab, u);

		w = strlen(u);
		if (at + w >= len)
			break;
		memcpy(buf + at, u, w);
		at += w;
		c += n;
	}
	buf[at] = 0;
}

/* No control byte (but a kept tab), no DEL, valid UTF-8, no C1. */
static void clean(const char *out, bool keep_tab)
{
	const unsigned char *c = (const unsigned char *)out;
	unsigned cp;

	while (*c) {
		int n = utf8_seq(c, &cp);

		FUZZ_ASSERT(n, "byte 0x%02x at %zu: not UTF-8", *c,
			    (size_t)(c - (const unsigned char *)out));
		FUZZ_ASSERT(cp >= 0x20 || (cp == '\t' && keep_tab), "control 0x%02x left", cp);
		FUZZ_ASSERT(cp != 0x7f, "DEL left");
		FUZZ_ASSERT(cp < 0x80 || cp > 0x9f, "C1 control U+%04X left", cp);
		c += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool keep_tab;
	size_t n, full, len;
	char *s, *out, *whole, *ref, *again;

	if (!size)
		return 0;
	fuzz_silence();
	keep_tab = data[0] & 1;
	n = strnlen((const char *)data + 1, size - 1);
	s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, data + 1, n);
	s[n] = 0;
	full = FB_ESCAPED_SIZE(n);
	len = data[0] >> 1 ? (size_t)(data[0] >> 1) : full;
	out = malloc(len); /* exactly its size: AddressSanitizer sees a write past it */
	whole = malloc(full);
	ref = malloc(full > len ? full : len);
	again = malloc(FB_ESCAPED_SIZE(full));
	if (!out || !whole || !ref || !again)
		abort();

	FUZZ_ASSERT(fb_escape(s, whole, full, keep_tab) == whole, "not its buffer returned");
	clean(whole, keep_tab);
	reference(s, keep_tab, ref, full);
	FUZZ_ASSERT(!strcmp(whole, ref), "'%s' escaped '%s', report.h says '%s'", s, whole, ref);
	/* FB_ESCAPED_SIZE is enough: nothing cut (the reference says so too). */
	reference(s, keep_tab, ref, SIZE_MAX);
	FUZZ_ASSERT(!strcmp(whole, ref), "cut within FB_ESCAPED_SIZE(%zu)", n);
	fb_escape(whole, again, FB_ESCAPED_SIZE(full), keep_tab);
	FUZZ_ASSERT(!strcmp(whole, again), "escaping twice changes '%s' to '%s'", whole, again);

	fb_escape(s, out, len, keep_tab);
	FUZZ_ASSERT(strlen(out) < len, "%zu bytes in a buffer of %zu", strlen(out), len);
	clean(out, keep_tab);
	reference(s, keep_tab, ref, len);
	FUZZ_ASSERT(!strcmp(out, ref), "cut to %zu: '%s', report.h says '%s'", len, out, ref);
	FUZZ_ASSERT(!strncmp(out, whole, strlen(out)), "cut output no prefix of the whole");
	fb_escape(out, again, FB_ESCAPED_SIZE(strlen(out)), keep_tab);
	FUZZ_ASSERT(!strcmp(out, again), "escaping the cut output twice changes it");

	free(s);
	free(out);
	free(whole);
	free(ref);
	free(again);
	return 0;
}
