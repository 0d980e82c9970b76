/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Lines from a file descriptor (bgp's stdin) through a buffer of our own,
 * so poll() sees all that waits, a last line without a newline still
 * counts, and a line longer than a limit is dropped rather than kept
 * growing.
 */
#ifndef FLOWBLOOM_USER_LINEIN_H
#define FLOWBLOOM_USER_LINEIN_H

#include <stdbool.h>
#include <stddef.h>

struct fb_linein {
	int fd;
	size_t max; /* the buffer grows up to this: the longest line kept, its newline included */
	char *buf;
	size_t len, cap, skip; /* skip: inside an over-long line (the caller's) */
	bool eof;
};

/* The next complete line (NUL-terminated, in r->buf; *len bytes before its
 * newline, NUL bytes in it included; *used bytes to consume), or NULL. */
char *fb_linein_next(struct fb_linein *r, size_t *used, size_t *len);
void fb_linein_consume(struct fb_linein *r, size_t used);
/* One read: 0 (r->eof at the end), 1 if the buffer cannot grow (a line
 * over r->max, or no memory: the caller drops the line), -1 with errno. */
int fb_linein_fill(struct fb_linein *r);

#endif
