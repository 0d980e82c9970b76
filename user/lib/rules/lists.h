/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Block-lists (lists.c): files of addresses, prefixes, ranges, FireHOL
 * netsets, Spamhaus DROP lines and FLOWs, read into rules. What `load`,
 * `apply` and `apply --check` read, and, line by line, every verb's
 * `-f FILE` (fb_list_parse_line).
 */
#ifndef FLOWBLOOM_USER_LISTS_H
#define FLOWBLOOM_USER_LISTS_H

#include <stdbool.h>
#include <stddef.h>
#include "flowbloom/key.h"
#include "rules/flow.h"

/* Where a rule of the list came from: for naming FILE:LINE of a refused
 * rule once the list is sorted and expanded. */
struct fb_list_origin {
	struct fb_key key; /* as the line made it */
	__u32 file;	   /* index into files */
	__u32 line;
};

/* A file the list was read from. */
struct fb_list_file {
	char *label; /* as errors name it ("<stdin>" for "-") */
	int fd;	     /* a regular file's, kept to read it again; else -1 */
	/* Its prefixes written with host bits set (taken masked), for the
	 * caller to tell of. */
	struct fb_hostbits hostbits;
};

struct fb_list {
	struct fb_key *keys;
	size_t n, cap;
	struct fb_list_file *files;
	size_t nfiles;
	/* Every rule read, in the files' order: filled only on a refusal
	 * (fb_list_origins), so a list that loads costs nothing more. */
	struct fb_list_origin *from;
	size_t nfrom, capfrom;
	bool record; /* reading again for from */
	__u32 line;  /* the line being read */
	/* At most max different rules (0: no bound; fb_list_bound): at
	 * check rules the list drops its duplicates, and is refused if it
	 * still holds more than max (fb_list_next_check: it holds at most
	 * 1.25 max, and 2^20, rules). */
	size_t max, check;
	char max_why[160];
};

/* Where a line's rules go: 0, or -1 with why in err. */
typedef int (*fb_list_sink)(const struct fb_key *k, void *ctx, char *err, size_t errlen);
/* One line of a list (cut at '#' or ';', which start comments): its
 * rules, in order, to sink (none for a blank or comment line). 0, or -1
 * with why in err (the sink's, or the line's fault). The line is cut up. */
int fb_list_parse_line(char *line, fb_list_sink sink, void *ctx, char *err, size_t errlen);
/* Append FILE's rules ("-": stdin) to l. 0, or -1 with the error reported
 * as FILE:LINE: why (l then holds what came before: free it). */
int fb_list_read(const char *file, struct fb_list *l);
/* Hold l, read from then on, to max different rules, why being the
 * bound's reason (for "FILE:LINE: more than MAX different rules (WHY)"). */
void fb_list_bound(struct fb_list *l, size_t max, const char *why);
/* When a list of n different rules held to max (0: no bound) next drops
 * its duplicates: once it has doubled (at least 2^20 more), so that
 * sorting costs a few times the final sort and input that repeats itself
 * (`yes ADDR`) stays small, but at max + 1 where that leaves a quarter
 * more or a larger one: a list refused holds at most 1.25 max rules. */
size_t fb_list_next_check(size_t n, size_t max);
/* Sort l and drop duplicates (they add nothing, and would count twice). */
void fb_list_unique(struct fb_list *l);
void fb_list_free(struct fb_list *l);
/* Fill l->from by reading the list's regular files again, from their
 * open descriptors (a pipe or stdin is gone: its rules get no line), for
 * a refusal's message. Quiet, best effort: a file changed since, or no
 * memory, leaves the lines after that point unnamed. */
void fb_list_origins(struct fb_list *l);
/* "FILE:LINE" of the first line that made rule k, or of the line whose
 * prefix k was expanded from; "" if none did. */
void fb_list_where(const struct fb_list *l, const struct fb_key *k, char *buf, size_t len);

#endif
