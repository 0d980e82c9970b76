/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the libFuzzer harnesses share (tests/fuzz/NAME_fuzz.c, `make fuzz`,
 * docs/testing.md#fuzzing): the library's reports silenced, the fuzzer's
 * bytes as a C string, and as a file the readers open by name. A harness
 * calls the real parser and checks what must hold of its answer; a broken
 * promise aborts (libFuzzer keeps the input as a crash).
 */
#ifndef FLOWBLOOM_FUZZ_H
#define FLOWBLOOM_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The CLI's usage reports, which live in its main.c (not in the library
 * the harnesses link): the verbs' option parsing (cmd_common.c) and the
 * unit parsers call them. Here an error report, returning the usage exit
 * code as the CLI's do. */
int fb_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fb_vreport(FB_REPORT_ERROR, fmt, ap);
	va_end(ap);
	return 2;
}

int fb_unknown_option(const char *opt, int len)
{
	return fb_usage("unknown option '%.*s'", len, opt);
}

/* The last error reported (for checking it names FILE:LINE), and how many. */
static char fuzz_last_error[1024];
static unsigned fuzz_errors;
static int fuzz_verbose;

static void fuzz_report(enum fb_report_level level, const char *msg)
{
	if (level == FB_REPORT_ERROR) {
		snprintf(fuzz_last_error, sizeof(fuzz_last_error), "%s", msg);
		fuzz_errors++;
	}
	if (fuzz_verbose)
		fprintf(stderr, "flowbloom: %s%s\n", level == FB_REPORT_NOTE ? "note: " : "", msg);
}

/* Reports are kept, not printed (FUZZ_VERBOSE=1 in the environment: also
 * to stderr, for reading what a saved input makes the parser say). Call
 * first in each run: it also forgets the last run's error. */
static inline void fuzz_silence(void)
{
	static int done;

	if (!done) {
		done = 1;
		fuzz_verbose = !!getenv("FUZZ_VERBOSE");
		fb_report_set(fuzz_report);
	}
	fuzz_last_error[0] = 0;
	fuzz_errors = 0;
}

/* Does msg start with "FILE:LINE: " (LINE a number from 1)? */
static inline int fuzz_names_line(const char *msg, const char *file)
{
	size_t n = strlen(file);
	const char *p = msg + n + 1;

	if (strncmp(msg, file, n) || msg[n] != ':' || *p < '1' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return p[0] == ':' && p[1] == ' ';
}

/* A promise the parser broke: say which, and crash so libFuzzer saves the
 * input. */
#define FUZZ_ASSERT(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, #cond);           \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* data[0..size) as a NUL-terminated copy (the caller frees it); NULL if
 * it holds a NUL byte (argv words and C strings cannot). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s;

	if (memchr(data, 0, size))
		return NULL;
	s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* An anonymous regular file (memfd), made once, holding exactly
 * data[0..size) on return; its name for open(2) is *path. */
static inline int fuzz_file(const uint8_t *data, size_t size, const char **path)
{
	static char name[64];
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	*path = name;
	return fd;
}

#endif
