/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Output: error reporting and a small JSON writer. Every verb that shows
 * something has a plain and a JSON form (global -j). Errors are one line on
 * stderr; in JSON mode {"error": "..."} is also printed on stdout.
 */
#ifndef FLOWBLOOM_USER_OUTPUT_H
#define FLOWBLOOM_USER_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "report.h"

extern bool fb_json;	/* -j */
extern bool fb_verbose; /* -v */

/* The CLI's errors: reported as the library's are (report.h), so
 * fb_report_quiet holds them back too. */
void fb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "flowbloom: warning: MSG" on stderr, MSG as every message shows
 * (fb_escape_message(): a file's name escaped, a long one's middle left
 * out). */
void fb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* s (a file's or a device's name) as a message shows it, for a verb's own
 * lines on stdout: fb_escape_message(). One of two buffers used in turn. */
const char *fb_shown(const char *s);
/* The printer main() installs with fb_report_set(): an error is one line
 * "flowbloom: MSG" on stderr, and in JSON mode also {"error": MSG} on
 * stdout; a note is "flowbloom: note: MSG"; libbpf's lines go as they are. */
void fb_output_report(enum fb_report_level level, const char *msg);

/* JSON writer on stdout; commas handled by a nesting stack. name is NULL
 * inside arrays. */
void jw_obj_open(const char *name);
void jw_obj_close(void);
void jw_arr_open(const char *name);
void jw_arr_close(void);
void jw_str(const char *name, const char *val);
void jw_u64(const char *name, unsigned long long val);
void jw_double(const char *name, double val);
void jw_bool(const char *name, bool val);
void jw_null(const char *name);
/* End of a top-level value: newline, reset the stack. */
void jw_end(void);

#endif
