/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A verb's options from a file (optfile.c): one long option a line, as
 * `name = value` or `name` alone for one without a value, '#' comments and
 * blank lines; e.g. for `ipfix --config FILE`:
 *
 *   collector = 198.51.100.10:4739
 *   tcp
 *   idle-timeout = 15
 *
 * The file must belong to root (or the caller) and be writable by nobody
 * else: it says where flow records go. It is reached through a symbolic
 * link only if root (or the caller) owns the link, and must be a regular
 * file (a FIFO is refused, not waited on).
 */
#ifndef FLOWBLOOM_CLI_OPTFILE_H
#define FLOWBLOOM_CLI_OPTFILE_H

#include <getopt.h>
#include <stddef.h>

/* Set option `code` to `val` (NULL for none); NULL if done, else why not
 * (a message without the place). */
typedef const char *(*fb_optfile_fn)(int code, const char *val, void *ctx);

/* Open a configuration FILE as above (the rules of the file and the
 * link); says: what it says, for the message refusing it ("where records
 * go"). The descriptor, or -1 (printed). */
int fb_conf_file_open(const char *file, const char *says);

/* Options that set one thing (their codes, e.g. "ut" for udp and tcp),
 * and what it is ("the transport"); a list ends with codes NULL. */
struct fb_optfile_group {
	const char *codes, *what;
};

/* Read FILE, calling set for each line. Errors are printed as
 * FILE:LINE: why; returns 0, or 1 on an error. opts: the verb's table
 * (an entry named `skip`, e.g. "config", is refused in the file); an
 * option given twice in the file is an error, and so are two options of
 * one of `groups` (NULL: none). */
int fb_optfile_read(const char *file, const struct option *opts, const char *skip,
		    const struct fb_optfile_group *groups, fb_optfile_fn set, void *ctx);

#endif
