// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Error lines and the JSON writer (see output.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "output.h"

bool fb_json;
bool fb_verbose;

#define JW_DEPTH 16
static int jw_depth;
static bool jw_first[JW_DEPTH] = { true };

/* JSON text is UTF-8 (RFC 8259): a byte of no valid sequence (a file
 * name, a device name or a list line in another encoding) is written as
 * U+FFFD (as Go's encoder does), so every parser takes it. Control
 * characters, DEL and the C1 controls too (U+0080 to U+009F, which a
 * terminal obeys as it does ESC) are escaped: JSON read on a terminal
 * shows them as \uXXXX, and a parser gets them as they are. */
static void jw_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;
		int n;

		if (c >= 0x80) {
			n = fb_utf8_len((const unsigned char *)s);
			if (n == 2 && c == 0xc2 && (unsigned char)s[1] < 0xa0) {
				printf("\\u%04x", (unsigned char)s[1]);
				s++;
			} else if (n) {
				fwrite(s, 1, n, stdout);
				s += n - 1;
			} else {
				fputs("\\ufffd", stdout);
			}
		} else if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c < 0x20 || c == 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void jw_key(const char *name)
{
	if (!jw_first[jw_depth])
		putchar(',');
	jw_first[jw_depth] = false;
	if (name) {
		jw_string(name);
		putchar(':');
	}
}

void fb_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fb_vreport(FB_REPORT_ERROR, fmt, ap);
	va_end(ap);
}

void fb_warn(const char *fmt, ...)
{
	char buf[FB_REPORT_MAX];
	va_list ap;

	va_start(ap, fmt);
	fb_vformat_message(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "flowbloom: warning: %s\n", buf);
}

const char *fb_shown(const char *s)
{
	static char buf[2][FB_REPORT_MAX];
	static unsigned next;
	char *b = buf[next++ % 2];

	fb_escape_message(s, b, FB_REPORT_MAX);
	return b;
}

void fb_output_report(enum fb_report_level level, const char *msg)
{
	if (level == FB_REPORT_LIBBPF) {
		fputs(msg, stderr);
		return;
	}
	if (level == FB_REPORT_NOTE) {
		fprintf(stderr, "flowbloom: note: %s\n", msg);
		return;
	}
	fprintf(stderr, "flowbloom: %s\n", msg);
	if (fb_json) {
		jw_depth = 0;
		jw_first[0] = true;
		jw_obj_open(NULL);
		jw_str("error", msg);
		jw_obj_close();
		jw_end();
	}
}

void jw_obj_open(const char *name)
{
	jw_key(name);
	putchar('{');
	if (jw_depth < JW_DEPTH - 1)
		jw_depth++;
	jw_first[jw_depth] = true;
}

void jw_obj_close(void)
{
	putchar('}');
	if (jw_depth > 0)
		jw_depth--;
}

void jw_arr_open(const char *name)
{
	jw_key(name);
	putchar('[');
	if (jw_depth < JW_DEPTH - 1)
		jw_depth++;
	jw_first[jw_depth] = true;
}

void jw_arr_close(void)
{
	putchar(']');
	if (jw_depth > 0)
		jw_depth--;
}

void jw_str(const char *name, const char *val)
{
	jw_key(name);
	jw_string(val);
}

void jw_u64(const char *name, unsigned long long val)
{
	jw_key(name);
	printf("%llu", val);
}

void jw_double(const char *name, double val)
{
	jw_key(name);
	if (val != val)
		fputs("null", stdout); /* NaN is not JSON */
	else
		printf("%.6g", val);
}

void jw_bool(const char *name, bool val)
{
	jw_key(name);
	fputs(val ? "true" : "false", stdout);
}

void jw_null(const char *name)
{
	jw_key(name);
	fputs("null", stdout);
}

void jw_end(void)
{
	putchar('\n');
	jw_depth = 0;
	jw_first[0] = true;
	fflush(stdout);
}
