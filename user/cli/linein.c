// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Lines from a file descriptor, for bgp (see linein.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "linein.h"

char *fb_linein_next(struct fb_linein *r, size_t *used, size_t *len)
{
	char *nl = r->len ? memchr(r->buf, '\n', r->len) : NULL; /* buf NULL before a read */

	if (!nl) {
		if (!r->eof || !r->len)
			return NULL;
		nl = r->buf + r->len; /* last line without a newline */
		if (r->len == r->cap) {
			char *b = realloc(r->buf, r->cap + 1);

			if (!b)
				return NULL;
			r->buf = b;
			nl = r->buf + r->len;
		}
	}
	*nl = 0;
	*len = nl - r->buf;
	*used = nl - r->buf + (nl < r->buf + r->len);
	return r->buf;
}

void fb_linein_consume(struct fb_linein *r, size_t used)
{
	memmove(r->buf, r->buf + used, r->len - used);
	r->len -= used;
}

int fb_linein_fill(struct fb_linein *r)
{
	ssize_t got;

	if (r->len == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 65536;
		char *b;

		if (r->cap >= r->max)
			return 1;
		if (cap > r->max)
			cap = r->max; /* a line of max bytes with its newline fits */
		b = realloc(r->buf, cap);
		if (!b)
			return 1;
		r->buf = b;
		r->cap = cap;
	}
	got = read(r->fd, r->buf + r->len, r->cap - r->len);
	if (got < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (!got)
		r->eof = true;
	r->len += got;
	return 0;
}
