/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Opening a file the operator names for flowbloom to read (a block-list, a
 * flow file, guard's --never list, an export, a capture, a configuration
 * file): other users can put entries in directories such as /tmp, and root
 * must not be steered by them.
 *
 * - A symbolic link is followed, at any component of the path, only if
 *   root or the caller owns it: a link another user planted would make
 *   root read a file of that user's choice (and quote its first line in an
 *   error). The walk is one component at a time, each opened with
 *   O_NOFOLLOW from the one before, so nothing is swapped in between; a
 *   link's target is walked the same way, the last component's too (root's
 *   link to another user's link is refused), but for procfs's own links
 *   (/dev/stdin's /proc/self/fd/0), which the kernel follows.
 * - A FIFO is read only if root or the caller owns it: opening one blocks
 *   until someone writes, and a FIFO another user planted would hang the
 *   command for as long as that user likes. A pipe reached through procfs's
 *   own link is read whoever made it (`cat list | sudo flowbloom add -f
 *   /dev/stdin`: the caller's shell made it; '-' reads it so too): it is
 *   held, no name anyone planted. It is looked at before it is
 *   opened; anything else is opened O_NONBLOCK, so an entry swapped for a
 *   FIFO in between cannot make us wait (and is refused: another inode).
 */
#ifndef FLOWBLOOM_USER_INPUTFILE_H
#define FLOWBLOOM_USER_INPUTFILE_H

#include <stdbool.h>
#include <stddef.h>

/* The file, open for reading (O_CLOEXEC, blocking); -1 with why, a
 * strerror() text (it could not be opened), or -2 with why, a refusal (the
 * link, the FIFO); either printed as "PATH: why". With regular, anything
 * but a regular file is refused ("not a regular file"). */
int fb_input_open(const char *path, bool regular, char *why, size_t len);

/* The same, and where the file was found: *dir_fd, the directory it was
 * opened from (O_PATH; the caller closes it), after every link. */
int fb_input_open_at(const char *path, bool regular, int *dir_fd, char *why, size_t len);

#endif
