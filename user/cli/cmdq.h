/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * guard's commands for ExaBGP (cmdq.c): they wait here until stdout takes
 * them, so guard never blocks on a reader that stops reading (its bans go
 * on, and a SIGTERM ends it in time). A reader that has not taken
 * FB_CMDQ_MAX bytes is not coming back: the queue breaks, guard stops.
 */
#ifndef FLOWBLOOM_CLI_CMDQ_H
#define FLOWBLOOM_CLI_CMDQ_H

#include <stdbool.h>
#include <stddef.h>

#define FB_CMDQ_MAX (16u << 20)

struct fb_cmdq {
	char *buf;
	size_t len, cap;
	bool broken; /* stdout gone, the queue full or no memory: nothing more to write */
};

/* Write what the queue holds as stdout takes it, waiting for it until
 * `until` (fb_now(); in the past: not at all). Whole lines of at most
 * PIPE_BUF bytes once poll() says there is room: a pipe takes them at
 * once, never half. 0 when all is written. */
int fb_cmdq_flush(struct fb_cmdq *q, double until);
/* Commands not written yet. */
size_t fb_cmdq_lines(const struct fb_cmdq *q);
/* Queue one command (a line of n bytes), then write what stdout takes now
 * (reported, and the queue broken, when it cannot). */
void fb_cmdq_push(struct fb_cmdq *q, const char *line, size_t n);

#endif
