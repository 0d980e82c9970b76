/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where flowbloom's XDP program is attached, on the whole machine, and
 * which filter each attachment really uses.
 *
 * Why: `ip -n NS link set DEV xdp obj flowbloom.bpf.o` (and `ip netns
 * exec`) remounts /sys in a private mount namespace, so iproute2 pins the
 * object's maps in a new, private bpffs instead of reusing
 * /sys/fs/bpf/xdp/globals: the program runs on empty maps of its own and
 * passes every packet (counted as no_filter, in counters nobody sees). It
 * fails open, silently. This module finds such attachments.
 *
 * A flowbloom program is an XDP program with maps named fb_filter and
 * fb_stats. It is found attached by walking every network namespace
 * (/proc/1 or kthreadd's, the names in /run/netns, nsfs bind mounts,
 * /proc/PID/ns/net; while a program is still not found, the namespaces
 * processes hold open (/proc/PID/fd) or mounted in their own mount
 * namespaces; one visit per namespace inode, through another path of it
 * when the first found goes before the visit) and asking netlink there,
 * after setns() into it and back. It fails open when its fb_filter holds no filter array (the slot a
 * filter always fills); the filter it uses is the pinned filter whose
 * fb_filter map it holds.
 */
#ifndef FLOWBLOOM_USER_DISCOVER_H
#define FLOWBLOOM_USER_DISCOVER_H

#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>
#include "store/store.h"

/* What an attachment's fb_filter map is. */
enum fb_att_maps {
	FB_ATT_FILTER,	/* a filter's, pinned under fb_pin_root() (filter names it) */
	FB_ATT_GLOBALS, /* /sys/fs/bpf/xdp/globals', no filter 'default' yet */
	FB_ATT_PRIVATE, /* pinned nowhere we look, holding no filter: fails open */
	FB_ATT_OTHER,	/* holds a filter, pinned elsewhere (another root) */
	FB_ATT_UNKNOWN, /* holds a filter; the pins that would name it not read
			   (name_err: descriptors, memory, a refused root) */
};

struct fb_att {
	char netns[NAME_MAX + 1]; /* name in /run/netns, "root", a bind mount, "pid N" */
	char ifname[IF_NAMESIZE];
	__u32 ifindex;
	const char *mode; /* native, generic, offload */
	__u32 prog_id;
	__u32 filter_map_id; /* its fb_filter */
	__u32 inner_id;	     /* the filter array in it; 0: none */
	enum fb_att_maps maps;
	char filter[FB_NAME_MAX]; /* FB_ATT_FILTER only */
	int name_err;		  /* FB_ATT_UNKNOWN only: errno */
	bool fails_open;	  /* no filter array: passes every packet */
	/* The device's link type (ARPHRD_*; -1 unknown). One whose packets
	 * reach XDP without an Ethernet header (fb_link_ethernet()) has them
	 * all passed as non-IP: an object loaded there by `ip link` (attach
	 * refuses such a device). */
	int link_type;
	int link_err; /* link_type -1: errno */
};

/* A process whose own /proc entries discovery was refused (a sandbox's
 * init; flowbloom without CAP_SYS_PTRACE): what of it was not looked into.
 * One whose network namespace was refused, but is one the walk visited
 * (told by /proc/PID/net, which needs no such right), is no gap. */
struct fb_refused {
	int pid, err;
	char comm[16];
	const char *what; /* "network namespace", "open files", "mounts" */
};

/* What a walk could not see. An attachment may be missing from its answer
 * (fb_walk_partial()) when a flowbloom program was found attached nowhere
 * and a refused process is in a network namespace the walk could not
 * visit: it may be attached there. With refused processes alone, every
 * loaded flowbloom program was found (another attachment of one of them
 * could still be there). A process whose open files or mounts were refused
 * might hold a namespace too (as one only a socket holds might): listed,
 * never known to. A namespace whose every path went away before it was
 * visited is named (gone). why: the walk failed (-1), said or not.
 * malloc'd (fb_walk_free()). */
struct fb_walk {
	struct fb_refused *refused;
	size_t nrefused;
	__u32 *unplaced; /* loaded flowbloom programs found attached nowhere */
	size_t nunplaced;
	/* Namespaces listed, then not visited: every path the walk found to
	 * each went away first (its processes exited, its names and mounts
	 * went): gone, but for a holder the walk cannot see (a socket). */
	char (*gone)[NAME_MAX + 1];
	size_t ngone;
	char why[320];
};

bool fb_walk_partial(const struct fb_walk *w);
void fb_walk_free(struct fb_walk *w);

/* Every flowbloom XDP attachment on the machine, sorted by namespace and
 * device; *atts is malloc'd. With fail_open_only, only the attachments
 * that fail open (and cheaply: no namespace walk when no loaded flowbloom
 * program could), quietly. Returns the count, -1 on error (printed unless
 * fail_open_only). w (or NULL): what it could not see, and why it failed. */
int fb_discover_walk(struct fb_att **atts, bool fail_open_only, struct fb_walk *w);
int fb_discover(struct fb_att **atts, bool fail_open_only);
/* The first attachment of program prog_id (if not 0), else of a program
 * using the fb_filter map map_id, in any namespace, into *out, found
 * quietly (the caller says what it means): 1, 0 if there is none, -1 if
 * the walk failed (a namespace not read: fb_report_last says which and
 * why), when none found is no answer. */
int fb_discover_find(__u32 prog_id, __u32 map_id, struct fb_att *out);

/* Loaded programs using the filter, in any network namespace; the first's
 * id in *first_prog. -1 (reported) if a program cannot be read. */
int fb_discover_users(const struct fb_store *f, __u32 *first_prog);
/* Devices the filter is attached to: calls cb for each (ifname, mode);
 * how many, or -1 (reported) if the devices or their programs cannot be
 * read. */
typedef void (*fb_attach_cb)(const char *ifname, const char *mode, __u32 prog_id, void *ctx);
int fb_discover_attachments(const struct fb_store *f, fb_attach_cb cb, void *ctx);

#endif
