// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The line reader every file input goes through (declared in flow.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "inputfile.h"
#include "rules/flow.h"
#include "util.h"
#include "report.h"

/*
 * The one line reader behind every file input. read(2) into a buffer of
 * one chunk plus the longest line, so memory stays bounded whatever the
 * input is (/dev/zero, a line without end); every error is checked and
 * named with the line it happened at, so a caller can apply nothing.
 */
#define CHUNK 65536

int fb_lines_open(struct fb_lines *r, const char *file)
{
	bool is_stdin = !strcmp(file, "-");
	char why[300];
	int fd = is_stdin ? 0 : fb_input_open(file, false, why, sizeof(why));

	if (fd < 0) {
		memset(r, 0, sizeof(*r));
		r->fd = -1;
		fb_report_err("%s: %s", file, why);
		return -1;
	}
	if (fb_lines_fdopen(r, fd, is_stdin ? "<stdin>" : file))
		return -1;
	r->is_stdin = is_stdin;
	return 0;
}

int fb_lines_fdopen(struct fb_lines *r, int fd, const char *label)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->is_stdin = fd == 0;
	r->label = label;
	if (fstat(r->fd, &st)) {
		fb_report_err("%s: %s", r->label, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		fb_report_err("%s: is a directory (want a file of one entry per line)", r->label);
		goto fail;
	}
	r->regular = S_ISREG(st.st_mode);
	r->mtime = st.st_mtim;
	r->size = st.st_size;
	r->max = FB_LINE_MAX;
	r->cap = FB_LINE_MAX + 1 + CHUNK;
	r->buf = malloc(r->cap);
	if (!r->buf) {
		fb_report_err("%s: out of memory", r->label);
		goto fail;
	}
	return 0;
fail:
	fb_lines_close(r);
	return -1;
}

void fb_lines_close(struct fb_lines *r)
{
	if (r->fd > 0 || (r->fd == 0 && !r->is_stdin))
		close(r->fd);
	r->fd = -1;
	free(r->buf);
	r->buf = NULL;
}

/* Did the regular file r reads change since it was opened: written to
 * (its mtime), or cut or grown past where the read ended? Then the text
 * read was never the file's (a download writing the list in place: the
 * old file's start, then a line cut where the file was truncated, which
 * a regular file may leave without a newline). A file whose size says 0
 * throughout (/proc's) is judged by its mtime alone. */
static bool changed(const struct fb_lines *r)
{
	off_t at = lseek(r->fd, 0, SEEK_CUR);
	struct stat st;

	if (fstat(r->fd, &st))
		return false; /* the read itself reports what fails */
	return st.st_mtim.tv_sec != r->mtime.tv_sec || st.st_mtim.tv_nsec != r->mtime.tv_nsec ||
	       (at >= 0 && st.st_size != at && (st.st_size || r->size));
}

int fb_lines_next(struct fb_lines *r, char **line, size_t *len)
{
	char *l, *nl;
	size_t n;
	ssize_t got;

	for (;;) {
		nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		if (nl) {
			l = r->buf + r->start;
			n = nl - l;
			r->start += n + 1;
			break;
		}
		if (r->end - r->start > r->max) {
			fb_report_err("%s:%zu: line longer than %zu bytes", r->label, r->lineno + 1,
				      r->max);
			return -1;
		}
		if (r->eof) {
			if (r->end == r->start)
				return 0;
			/* A pipe cut mid-line would otherwise give a valid
			 * but wrong entry (198.51.100.12 cut to .1): only a
			 * regular file, complete on disk, may omit the last
			 * newline. */
			if (!r->regular) {
				fb_report_err("%s:%zu: last line has no newline (input cut short?)",
					      r->label, r->lineno + 1);
				return -1;
			}
			l = r->buf + r->start;
			n = r->end - r->start;
			r->start = r->end;
			break;
		}
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
		got = read(r->fd, r->buf + r->end, r->cap - 1 - r->end);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			fb_report_err("%s:%zu: read error: %s", r->label, r->lineno + 1,
				      strerror(errno));
			return -1;
		}
		if (!got) {
			r->eof = true;
			if (r->regular && changed(r)) {
				fb_report_err(
					"%s:%zu: changed while it was read (written in place? "
					"write a new file and rename it onto the list)",
					r->label, r->lineno + 1);
				return -1;
			}
		}
		r->total += got;
		/* A regular file read past the size it had when opened is
		 * being written to (appended to by a process that may never
		 * stop): refused there rather than at an end that may never
		 * come. One whose size said 0 (/proc's, or a file made empty
		 * and then appended to) is held to a pipe's bound. */
		if (r->regular && r->size > 0 && r->total > (unsigned long long)r->size) {
			fb_report_err("%s:%zu: changed while it was read (grew past the %lld "
				      "bytes it had; written in place? write a new file and "
				      "rename it onto the list)",
				      r->label, r->lineno + 1, r->size);
			return -1;
		}
		if (r->regular && !r->size && r->total > FB_INPUT_MAX) {
			fb_report_err("%s:%zu: more than %d MiB from a file whose size said 0 "
				      "when it was opened (still being written?)",
				      r->label, r->lineno + 1, (int)(FB_INPUT_MAX >> 20));
			return -1;
		}
		if (!r->regular && r->total > FB_INPUT_MAX) {
			fb_report_err(
				"%s:%zu: more than %d MiB from a pipe or device (use a regular "
				"file)",
				r->label, r->lineno + 1, (int)(FB_INPUT_MAX >> 20));
			return -1;
		}
		r->end += got;
	}
	r->lineno++;
	l[n] = 0;
	if (n > r->max) {
		fb_report_err("%s:%zu: line longer than %zu bytes", r->label, r->lineno, r->max);
		return -1;
	}
	if (memchr(l, 0, n)) {
		fb_report_err("%s:%zu: NUL byte in line (not a text file?)", r->label, r->lineno);
		return -1;
	}
	/* A UTF-8 byte-order mark, as some editors write: not part of the text. */
	if (r->lineno == 1 && n >= 3 && !memcmp(l, "\xef\xbb\xbf", 3)) {
		l += 3;
		n -= 3;
	}
	*line = l;
	*len = n;
	return 1;
}
