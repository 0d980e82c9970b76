/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pin tree (pintree.c): the filter root, the ip-link pin directory,
 * names. Every path is reached through verified directory fds.
 */
#ifndef FLOWBLOOM_USER_PINTREE_H
#define FLOWBLOOM_USER_PINTREE_H

#include <stdbool.h>
#include <stddef.h>
#include "store/store.h"

/* The bpffs directory that holds all filters. */
const char *fb_pin_root(void);
/* Where the filter "default" is pinned for ip link: FB_IPROUTE_PIN_DIR, or
 * $FLOWBLOOM_IPROUTE_DIR (tests: squat.sh squats a private one). */
const char *fb_pin_iproute_dir(void);
/* 0 if bpffs is mounted where we need it, else -1 with a message printed. */
int fb_pin_check_bpffs(void);
/* 0 if name is a valid filter name, else -1 with a message printed and
 * the name kept in fb_pin_refused (malloc'd; the last one refused): the
 * CLI makes a NAME of its command line that is no name a usage error. */
int fb_pin_check_name(const char *name);
extern char *fb_pin_refused;
/* Names of all filters, sorted; *names is malloc'd. Returns the count, or
 * -1 (reported) if they cannot all be read. */
int fb_pin_list(char ***names);
/* Remove the stale staging directories of NAME (an interrupted create,
 * import or destroy: nobody holds their lock); returns how many, -1 on
 * error (reported). */
int fb_pin_clean_stale(const char *name);

/* Is something pinned under filter name NAME in the root (quiet: false
 * when the root cannot be opened)? */
bool fb_pin_exists(const char *name);

/* Why the last refusal in the pin tree was made, set where it is decided:
 * a directory not trusted or a symbolic link (untrusted: the filter may be
 * whole, someone else may have put it there), or an open this process
 * could not make (unknown: ulimit -n, memory, the kernel's EPERM or
 * EACCES). FB_PIN_NONE: neither (damage, or nothing refused). Reset by
 * who asks (fb_store_open()). */
enum fb_pin_why { FB_PIN_NONE, FB_PIN_UNTRUSTED, FB_PIN_UNKNOWN };
extern __thread enum fb_pin_why fb_pin_why;
/* The symbolic link refused last: "a symbolic link to TARGET, owned by
 * uid N"; fb_pin_report_link(PATH) says it and that it is refused. */
#define FB_PIN_LINK_FOUND 600
extern __thread char fb_pin_link_found[FB_PIN_LINK_FOUND];
void fb_pin_report_link(const char *path);
/* Is errno e of an open refused to this process (fb_pin_why unknown),
 * not of anything found in the tree? */
bool fb_pin_err_unknown(int e);

/* Library-internal: for store.c, exact.c, replace.c and repair.c. */
int fb_pin_trusted(int fd, const char *path, bool on_the_way);
int fb_pin_open_root(bool create);
/* The root, for the staging directories of NAME: -2 when there is no root
 * (nothing stale), -1 on error (reported). */
int fb_pin_open_root_of(const char *name);
int fb_pin_open_iproute(bool create);
int fb_pin_get(int dfd, const char *name);
int fb_pin_at(int fd, int dfd, const char *name);
int fb_pin_open_dir(int dfd, const char *name);
int fb_pin_remove_tree(int dfd, const char *name, int depth);
/* A stale staging directory (no maker holds its flock) removed: 1, or 0
 * if absent or in use; -1 (errno, not printed) if it could not be opened,
 * locked or removed. For a FB_STAGE_NEW one, under fb_pin_stage_lock(). */
int fb_pin_remove_stale(int root, const char *stage);
/* Staging directories are made (mkdir, then the maker's flock) and
 * removed when stale under an exclusive flock of the root, so no remover
 * meets one between its mkdir and its maker's lock and takes it for
 * stale. Held only for those few calls; never nested. */
int fb_pin_stage_lock(int root);
void fb_pin_stage_unlock(int root);
void fb_pin_stage_name(char *buf, size_t len, const char *prefix, const char *name);
int fb_pin_rename(int dfd, const char *from, const char *to);
int fb_pin_iproute_maps(int *outer_fd, int *stats_fd);
int fb_pin_iproute(const struct fb_store *f);
void fb_pin_iproute_remove(const struct fb_store *f);

#endif
