// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* guard's queue of commands for ExaBGP on stdout (see cmdq.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmdq.h"
#include "output.h"
#include "util.h"

int fb_cmdq_flush(struct fb_cmdq *q, double until)
{
	while (q->len && !q->broken) {
		struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };
		double left = until - fb_now();
		size_t n = q->len;
		ssize_t w;
		int r;

		r = poll(&p, 1, left > 0 ? (int)(left * 1000) + 1 : 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (n > PIPE_BUF) {
			char *nl = memrchr(q->buf, '\n', PIPE_BUF);

			n = nl ? (size_t)(nl - q->buf) + 1 : PIPE_BUF;
		}
		w = write(STDOUT_FILENO, q->buf, n);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w < 0) {
			fb_err("guard: cannot write commands on stdout: %s%s", strerror(errno),
			       errno == EPIPE ? " (ExaBGP gone?): stopping" : ": stopping");
			q->broken = true;
			break;
		}
		memmove(q->buf, q->buf + w, q->len - w);
		q->len -= w;
	}
	return q->len ? -1 : 0;
}

size_t fb_cmdq_lines(const struct fb_cmdq *q)
{
	size_t i, n = 0;

	for (i = 0; i < q->len; i++)
		n += q->buf[i] == '\n';
	return n;
}

void fb_cmdq_push(struct fb_cmdq *q, const char *line, size_t n)
{
	if (q->broken)
		return;
	if (q->len + n > FB_CMDQ_MAX) {
		fb_err("guard: stdout has not taken %zu commands (%zu bytes): ExaBGP is not "
		       "reading; stopping",
		       fb_cmdq_lines(q), q->len);
		q->broken = true;
		return;
	}
	if (q->len + n > q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 4096;
		char *b;

		while (cap < q->len + n)
			cap *= 2;
		b = realloc(q->buf, cap);
		if (!b) {
			fb_err("out of memory");
			q->broken = true;
			return;
		}
		q->buf = b;
		q->cap = cap;
	}
	memcpy(q->buf + q->len, line, n);
	q->len += n;
	fb_cmdq_flush(q, 0);
}
