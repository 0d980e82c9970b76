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

/* Where a namespace the walk listed stands. */
enum ns_state {
	NS_NEW,	 /* to visit */
	NS_DONE, /* visited, or not read (an error kept) */
	NS_GONE, /* its path reached it no more (its process exited, its mount
		  * went, the path names another namespace now): visited if
		  * another path to it is found (add_ns()) */
};

struct ns {
	dev_t dev;
	ino_t ino;
	char path[300];
	char label[NAME_MAX + 1]; /* a name in /run/netns, whole */
	bool proc;		  /* reached through a process's /proc entry */
	bool theirs;  /* a mount point another mount namespace lists (discover_theirs.c) */
	int hold;     /* theirs: its namespace file, O_PATH, checked (else -1) */
	ino_t netdev; /* its /proc net/dev's inode (one per namespace); 0: not visited */
	enum ns_state state;
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
	int self;	    /* that descriptor */
};

void *fb_walk_grow(void *p, size_t *cap, size_t n, size_t size);
/* path not read for errno e (proc: a process's own entry): see discover_ns.c */
void fb_walk_err(struct found *f, const char *path, int e, bool proc);
/* The same for a namespace the walk listed (its path reached no namespace
 * file, for e): one whose path another mount namespace chose is as gone. */
void fb_walk_ns_err(struct found *f, const struct ns *ns, int e);
/* A namespace file discover_theirs.c looked up: added, hold (O_PATH) kept
 * for the scan or closed. */
void fb_walk_add_held(struct found *f, const char *path, const char *label, int hold);

/* Mount points other mount namespaces list, to look up (discover_theirs.c). */
struct fb_theirs {
	struct {
		char path[300];
		char label[128];
	} * p;
	size_t n, cap;
};
/* One more: 0, or -1 (no memory; all dropped). */
int fb_theirs_add(struct fb_theirs *t, const char *path, const char *label);
/* Look them up, in a child process, within a bounded time: each that is a
 * namespace file added (fb_walk_add_held()); t emptied. */
void fb_theirs_resolve(struct found *f, struct fb_theirs *t);

/* The namespaces every walk visits (names, bind mounts, processes' own). */
void fb_walk_collect(struct found *f);
/* Those only an open file or another mount namespace holds. */
void fb_walk_held(struct found *f);

#endif
