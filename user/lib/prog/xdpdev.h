/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * XDP programs on devices (xdpdev.c): what runs on a device, attaching
 * flowbloom's program there, and detaching it. Every kernel call of
 * `attach`, `detach` and `apply` on a device goes through here; errors are
 * reported (report.h) as one line naming the device and why.
 */
#ifndef FLOWBLOOM_USER_XDPDEV_H
#define FLOWBLOOM_USER_XDPDEV_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include "prog/loader.h"

enum fb_xdp_mode {
	FB_XDP_NATIVE = 0,
	FB_XDP_GENERIC = 1,
};

/* "native", "generic". */
const char *fb_xdp_mode_name(enum fb_xdp_mode mode);

/* What runs on a device. */
struct fb_xdp_dev {
	unsigned int ifindex;
	__u32 prog_id;		     /* 0: no XDP program */
	enum fb_xdp_mode mode;	     /* of prog_id */
	char name[BPF_OBJ_NAME_LEN]; /* the program's name ("" if unreadable) */
	bool flowbloom;		     /* the program is flowbloom's */
};

/* Query DEV. 0, or -1 with the error reported (no such device, or the
 * kernel refused: a permission error says so). */
int fb_xdp_query(const char *dev, struct fb_xdp_dev *out);

/* Can flowbloom's program filter DEV's packets? Only where they reach XDP
 * with an Ethernet header (fb_link_ethernet()): on a layer-3 device
 * (tun, WireGuard, IP tunnels, PPP) XDP gets the IP header first, which
 * the program would take for a non-IP frame and pass, whatever the rules.
 * 0, or -1 with the error reported (naming DEV, its link type and what to
 * do instead). */
int fb_xdp_check_link(const char *dev);

/* Load flowbloom's program for f with lo (fb_load) and attach it to DEV
 * in mode, never replacing a program already there, nor attaching where it
 * cannot filter (fb_xdp_check_link()), nor attaching for a filter
 * destroyed since f was opened (attached under f's lock: shared, unless
 * the caller holds it). Where native mode refuses the frames DEV's MTU
 * allows (above a page: jumbo frames), the program is loaded multi-buffer
 * (lo->frags) and tried again; *multibuf says which runs. 0, or -1 with
 * the error reported (another program there, no Ethernet header, no native
 * support, an MTU the driver cannot take, permission, the filter gone).
 * *prog_id (if not NULL): the id of the program attached. */
int fb_xdp_attach(struct fb_store *f, const char *dev, enum fb_xdp_mode mode,
		  const struct fb_load_opts *lo, bool *multibuf, __u32 *prog_id);

/* Swap the program old_id on DEV (in mode) for flowbloom's for f with lo,
 * in one step (XDP_FLAGS_REPLACE): refused if old_id no longer runs there.
 * Under f's lock and multi-buffer where needed, as fb_xdp_attach(). 0, or
 * -1 with the error reported. */
int fb_xdp_replace(struct fb_store *f, const char *dev, enum fb_xdp_mode mode, __u32 old_id,
		   const struct fb_load_opts *lo, bool *multibuf, __u32 *prog_id);

/* Detach flowbloom's program from DEV; refuses another program. 0, or -1
 * with the error reported. */
int fb_xdp_detach(const char *dev);

/* Undo an attach or a swap: program cur_id on DEV (in mode) replaced by
 * prog_fd, or detached (prog_fd -1), in one step, only if cur_id still
 * runs there (a program put there since by anyone else stays). 0, or -1
 * with the error reported. */
int fb_xdp_put_back(const char *dev, enum fb_xdp_mode mode, __u32 cur_id, int prog_fd);

#endif
