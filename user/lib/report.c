// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The library's one way to report (see report.h). */
#include <errno.h>
#include <stdio.h>
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

void fb_vreport(enum fb_report_level level, const char *fmt, va_list ap)
{
	char buf[FB_REPORT_MAX];
	int e = errno; /* kept: a caller may tell its failure by it */

	vsnprintf(buf, sizeof(buf), fmt, ap);
	/* Messages quote their input (a list's line, a peer's route): its
	 * control characters never reach the operator's terminal, where an
	 * escape sequence could rewrite what the screen shows. libbpf's own
	 * lines keep their newlines. */
	if (level != FB_REPORT_LIBBPF)
		for (char *c = buf; *c; c++)
			if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
				*c = '?';
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
