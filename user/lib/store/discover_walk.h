/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside discovery (discover.c, discover_ns.c): the loaded flowbloom
 * programs, the network namespaces to visit, the attachments found, and
 * what the walk could not look into. Not for other callers: they use
 * discover.h.
 */
#ifndef FLOWBLOOM_USER_DISCOVER_WALK_H
#define FLOWBLOOM_USER_DISCOVER_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "store/discover.h"

/* A loaded flowbloom program. */
struct fbprog {
	__u32 id, filter_map_id, inner_id;
};

struct ns {
	dev_t dev;
	ino_t ino;
	char path[300];
	char label[NAME_MAX + 1]; /* a name in /run/netns, whole */
	bool proc;		  /* reached through a process's /proc entry */
	ino_t netdev; /* its /proc net/dev's inode (one per namespace); 0: not visited */
};

struct found {
	struct fbprog *progs;
	size_t nprogs;
	struct ns *ns;
	size_t nns, capns;
	struct fb_att *atts;
	size_t natts, capatts;
	struct fb_refused *refused; /* each process and what once */
	size_t nrefused, caprefused;
	bool quiet; /* info/stats: discovery must never break their output */
	int err;    /* a namespace or a list of them not read: errno */
	char err_path[300];
	char why[320];	    /* the walk failed: why, said or not (quiet) */
	char self_path[32]; /* our own namespace: the walk's descriptor for it */
	dev_t nsfs;	    /* the namespace files' file system: no other is one */
};

void *fb_walk_grow(void *p, size_t *cap, size_t n, size_t size);
/* path not read for errno e (proc: a process's own entry): see discover_ns.c */
void fb_walk_err(struct found *f, const char *path, int e, bool proc);
/* The namespaces every walk visits (names, bind mounts, processes' own). */
void fb_walk_collect(struct found *f);
/* Those only an open file or another mount namespace holds. */
void fb_walk_held(struct found *f);

#endif
