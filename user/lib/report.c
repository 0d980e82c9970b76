// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The library's one way to report (see report.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

bool fb_report_quiet;
char fb_report_last[FB_REPORT_MAX];

/* The default, for users of the library that install nothing. */
static void report_plain(enum fb_report_level level, const char *msg)
{
	if (level == FB_REPORT_LIBBPF)
		fputs(msg, stderr);
	else
		fprintf(stderr, "flowbloom: %s%s\n", level == FB_REPORT_NOTE ? "note: " : "", msg);
}

static fb_report_fn reporter = report_plain;

fb_report_fn fb_report_set(fb_report_fn fn)
{
	fb_report_fn old = reporter;

	reporter = fn ? fn : report_plain;
	return old;
}

int fb_utf8_len(const unsigned char *s)
{
	int n, i;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

/* One step of fb_escape(): how c's next character shows (in esc, w
 * bytes, returned) and how many bytes of c it takes (*n). */
static int escape_step(const unsigned char *c, char esc[16], int *n, bool keep_tab)
{
	static const char named[] = "\\a\\b\\t\\n\\v\\f\\r";
	int w;

	*n = *c >= 0x80 ? fb_utf8_len(c) : 1;
	/* A C1 control (U+0080 to U+009F) is two bytes in UTF-8: a
	 * terminal takes U+009B as CSI as it takes ESC '['. */
	if (*n == 2 && c[0] == 0xc2 && c[1] < 0xa0)
		return snprintf(esc, 16, "\\x%02x\\x%02x", c[0], c[1]);
	if (!*n) {
		*n = 1;
		return snprintf(esc, 16, "\\x%02x", c[0]);
	}
	if (*c >= 7 && *c <= 13 && !(*c == '\t' && keep_tab))
		return snprintf(esc, 16, "%.2s", named + 2 * (*c - 7));
	if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
		return snprintf(esc, 16, "\\x%02x", c[0]);
	for (w = 0; w < *n; w++)
		esc[w] = (char)c[w];
	return w;
}

const char *fb_escape(const char *s, char *buf, size_t len, bool keep_tab)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t at = 0;

	if (!len)
		return buf;
	while (*c) {
		char esc[16];
		int n, w = escape_step(c, esc, &n, keep_tab), i;

		if (at + (size_t)w >= len)
			break; /* cut before it, never inside an escape */
		for (i = 0; i < w; i++)
			buf[at++] = esc[i];
		c += n;
	}
	buf[at] = 0;
	return buf;
}

/* A few buffers in turn, so that one message may quote FB_QUOTES
 * tokens; per thread, as the messages are. */
#define FB_QUOTES 4
static __thread char quoted[FB_QUOTES][FB_QUOTE_SIZE];
static __thread unsigned quote_next;

const char *fb_quote_len(const char *s, size_t len)
{
	const unsigned char *c = (const unsigned char *)s, *end;
	char *buf = quoted[quote_next++ % FB_QUOTES], esc[16];
	size_t shown = 0, at = 0;
	int n, w;

	if (!s)
		return "(null)";
	len = strnlen(s, len);
	for (end = c + len; c < end; c += n) {
		w = escape_step(c, esc, &n, false);
		if (c + n > end) /* a character cut by len: its bytes as \xHH */
			w = 4, n = 1;
		if (shown + (size_t)w > FB_QUOTE_MAX)
			break;
		shown += (size_t)w;
		memcpy(buf + at, c, (size_t)n);
		at += (size_t)n;
	}
	if (c == end) {
		buf[at] = 0;
		return buf;
	}
	snprintf(buf + at, FB_QUOTE_SIZE - at, "... (%zu more byte%s)", (size_t)(end - c),
		 end - c == 1 ? "" : "s");
	return buf;
}

const char *fb_quote(const char *s)
{
	return fb_quote_len(s, s ? strlen(s) : 0);
}

/* Bytes of s up to end, escaped, onto buf (at *at, of len), cut before an
 * escape that does not fit; false once cut. */
static bool escape_onto(const unsigned char *s, const unsigned char *end, char *buf, size_t len,
			size_t *at)
{
	while (s < end) {
		char esc[16];
		int n, w = escape_step(s, esc, &n, true);

		if (*at + (size_t)w >= len)
			return false;
		memcpy(buf + *at, esc, (size_t)w);
		*at += (size_t)w;
		s += n;
	}
	return true;
}

void fb_escape_message(const char *msg, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)msg, *end, *c, *tail;
	size_t at = 0, width, head;
	char mid[48];
	int n, w;

	if (!len)
		return;
	buf[0] = 0;
	while (*s) {
		for (end = s; *end && *end != ' '; end++)
			;
		if (*end == ' ')
			end++; /* a run with the space after it */
		for (c = s, width = 0; c < end; c += n) {
			char esc[16];

			width += (size_t)escape_step(c, esc, &n, true);
		}
		if (width <= FB_RUN_MAX) {
			if (!escape_onto(s, end, buf, len, &at))
				break;
			s = end;
			continue;
		}
		/* Its start, the bytes left out, its end (a file's name). */
		for (c = s, head = 0; c < end; c += n) {
			char esc[16];

			w = escape_step(c, esc, &n, true);
			if (head + (size_t)w > FB_RUN_HEAD)
				break;
			head += (size_t)w;
		}
		for (tail = c; tail < end && width - head > FB_RUN_TAIL; tail += n) {
			char esc[16];

			head += (size_t)escape_step(tail, esc, &n, true);
		}
		snprintf(mid, sizeof(mid), "...(%zu bytes)...", (size_t)(tail - c));
		if (!escape_onto(s, c, buf, len, &at) ||
		    !escape_onto((const unsigned char *)mid,
				 (const unsigned char *)mid + strlen(mid), buf, len, &at) ||
		    !escape_onto(tail, end, buf, len, &at))
			break;
		s = end;
	}
	buf[at] = 0;
}

void fb_vformat_message(char *buf, size_t len, const char *fmt, va_list ap)
{
	char stack[FB_REPORT_MAX], *raw = stack;
	va_list again;
	int need;

	/* Whole, however long (an argument of any length, a path of
	 * PATH_MAX escaped to four times that): what the message says after
	 * it is never cut off. */
	va_copy(again, ap);
	need = vsnprintf(stack, sizeof(stack), fmt, ap);
	if (need >= (int)sizeof(stack) && (raw = malloc((size_t)need + 1)))
		vsnprintf(raw, (size_t)need + 1, fmt, again);
	else
		raw = stack;
	va_end(again);
	fb_escape_message(raw, buf, len);
	if (raw != stack)
		free(raw);
}

void fb_vreport(enum fb_report_level level, const char *fmt, va_list ap)
{
	char buf[FB_REPORT_MAX];
	int e = errno; /* kept: a caller may tell its failure by it */

	/* Messages quote their input (a list's line, a peer's route, a
	 * file's name): its control characters reach the operator's
	 * terminal escaped, where an escape sequence could rewrite what the
	 * screen shows, and a long path shows its start and end
	 * (fb_vformat_message()). libbpf's own lines keep their newlines. */
	if (level != FB_REPORT_LIBBPF)
		fb_vformat_message(buf, sizeof(buf), fmt, ap);
	else
		vsnprintf(buf, sizeof(buf), fmt, ap);
	if (level == FB_REPORT_ERROR && fb_report_quiet) {
		memcpy(fb_report_last, buf, sizeof(fb_report_last) - 1);
		fb_report_last[sizeof(fb_report_last) - 1] = 0;
	} else {
		reporter(level, buf);
	}
	errno = e;
}

void fb_report(enum fb_report_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fb_vreport(level, fmt, ap);
	va_end(ap);
}

void fb_report_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fb_vreport(FB_REPORT_ERROR, fmt, ap);
	va_end(ap);
}
