/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How the library tells its user about errors and notes: it prints nothing
 * itself, it calls one reporting function (libbpf_set_print-style). The CLI
 * installs a printer that writes stderr and, in JSON mode, the error object
 * (user/cli/output.c); without one, messages go to stderr as plain lines
 * ("flowbloom: MSG"), so tests and other users of libflowbloom.a still see
 * them.
 */
#ifndef FLOWBLOOM_USER_REPORT_H
#define FLOWBLOOM_USER_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum fb_report_level {
	FB_REPORT_ERROR,  /* why a call failed: one line */
	FB_REPORT_NOTE,	  /* worth knowing, not a failure: one line */
	FB_REPORT_LIBBPF, /* libbpf's own line, verbatim (newline included) */
};

/* msg is the formatted message, without "flowbloom: " or a newline (but
 * FB_REPORT_LIBBPF's as libbpf wrote it). */
typedef void (*fb_report_fn)(enum fb_report_level level, const char *msg);

/* Install fn (NULL: the plain stderr default); returns the previous one. */
fb_report_fn fb_report_set(fb_report_fn fn);

void fb_report(enum fb_report_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void fb_vreport(enum fb_report_level level, const char *fmt, va_list ap);
/* A message's longest: a path as long as the kernel takes (PATH_MAX) and
 * the rest of the line (a reason that quotes a list's line, what is left):
 * a long path never cuts off what follows it. */
#define FB_REPORT_MAX 8192
/* fb_report(FB_REPORT_ERROR, ...): what every failing library call does. */
void fb_report_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* While fb_report_quiet is set, errors are kept in fb_report_last instead
 * of being reported: for verbs that report one broken filter among others
 * (list, metrics, check) and carry on, or that say where a bad value came
 * from (apply: the file whose name names the filter). */
extern bool fb_report_quiet;
extern char fb_report_last[FB_REPORT_MAX];

/* Bytes of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * form, no surrogate, nothing above U+10FFFF), 0 if there is none: what
 * the JSON writer and metrics' label values pass as they are. */
int fb_utf8_len(const unsigned char *s);

/* s for a terminal, in buf: what others chose (a list's line, a peer's
 * string, a device's name, which root of a container's namespace sets; a
 * process's, which the process sets) shown as ls -b and systemd's
 * cescape() show it, so no escape sequence in it rewrites the operator's
 * screen and every byte stays readable: a control character (C0, DEL,
 * and a C1 control, U+0080 to U+009F in UTF-8) and a byte of no valid
 * UTF-8 sequence as \xHH, or \a \b \t \n \v \f \r (a tab kept as it is
 * with keep_tab); the rest, a backslash too, as it is (escaping twice
 * changes nothing). Cut to fit len, never inside an escape; a string of n
 * bytes needs at most FB_ESCAPED_SIZE(n). Every message is escaped so
 * (fb_report()); JSON keeps the strings as they are (its own escapes). */
const char *fb_escape(const char *s, char *buf, size_t len, bool keep_tab);
#define FB_ESCAPED_SIZE(n) (4 * (n) + 1)

/* A message for a terminal, in buf: fb_escape() (a tab kept), and each
 * run of it between spaces (a path, mostly) that would show longer than
 * FB_RUN_MAX characters shows its first FB_RUN_HEAD and its last
 * FB_RUN_TAIL (where it lies, and the file's name), with how many bytes
 * are left out between: "/srv/lists/...(3900 bytes).../rules.txt". A
 * path may have 4096 bytes, four times that once escaped: whole, it would
 * fill the operator's screen, and what the message says after it (why,
 * what was left as it was) would be cut off or scroll away. What every
 * message goes through (fb_report()), and the CLI's warnings. */
void fb_escape_message(const char *msg, char *buf, size_t len);
/* fmt and its arguments formatted whole (however long), then
 * fb_escape_message() into buf: what fb_report() and the CLI's warnings,
 * notes and usage errors print. */
void fb_vformat_message(char *buf, size_t len, const char *fmt, va_list ap);
#define FB_RUN_MAX 512
#define FB_RUN_HEAD 160
#define FB_RUN_TAIL 320

/* What a message quotes of an input token (a list's word, a value of a
 * configuration file, an argument): s as it is if it shows in at most
 * FB_QUOTE_MAX characters once escaped (fb_escape()), else the start
 * that does, cut between characters, then "... (N more bytes)". A token
 * may be a line of 8192 bytes, four times that once escaped: quoted
 * whole, it would fill the operator's screen and push what the message
 * says after it (the reason, "nothing loaded") past FB_REPORT_MAX. Every
 * message that quotes such a token quotes it through here. Returns one
 * of a few buffers used in turn (per thread): at most 4 quotes in one
 * message. */
const char *fb_quote(const char *s);
/* fb_quote() of the first len bytes of s (what "%.*s" would print). */
const char *fb_quote_len(const char *s, size_t len);
#define FB_QUOTE_MAX 80
#define FB_QUOTE_SIZE (FB_QUOTE_MAX + 32)

#endif
