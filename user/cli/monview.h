/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the monitoring verbs share (monview.c).
 */
#ifndef FLOWBLOOM_CLI_MONVIEW_H
#define FLOWBLOOM_CLI_MONVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "monitor/monmaps.h"
#include "store/discover.h"
#include "store/store.h"

/* Open filter NAME and its monitoring maps, which must include `need`. */
int fb_monview_open(const char *name, __u32 need, struct fb_store *f, struct fb_monitor *m);
int fb_monview_report_gone(const struct fb_store *f);
/* For a loop reading m: is the filter gone, or its monitoring maps made
 * anew (then these are fed no more)? Says which. */
bool fb_monview_gone(const struct fb_store *f, const struct fb_monitor *m);
/* Sleep until `until` (fb_now() seconds), looking every half second
 * whether f is gone (and with m, whether its maps were made anew): a
 * long interval does not hide it. 1: the time came; 0: interrupted
 * first; -1: gone, said. */
int fb_monview_sleep_until(const struct fb_store *f, const struct fb_monitor *m, double until);
void fb_monview_close(struct fb_store *f, struct fb_monitor *m);
/* The bound eps' * N on any estimate's excess, rounded up. */
__u64 fb_monview_max_error(const struct fb_monitor *m, __u64 total);
void fb_monview_flow_text(const struct fb_key *k, char *buf, size_t len);
/* A key of m's sketch as text: a flow (FLOW syntax), or for a sketch by
 * address the address as a rule of its side ("src 198.51.100.7": any
 * protocol, port and other address). */
void fb_monview_key_text(const struct fb_monitor *m, const struct fb_key *k, char *buf, size_t len);
/* What a line of m's top talkers is: "flow", "source" or "destination". */
const char *fb_monview_key_noun(const struct fb_monitor *m);
/* The new-flow ring's consumer position is shared: one reader at a time
 * (flows, ipfix). A flock()ed fd of the monitoring directory, or -1
 * (printed). */
int fb_monview_lock_events(const struct fb_store *f, const struct fb_monitor *m);

/* The device an event's ifindex means. The program reports the ifindex
 * of the device in the namespace of the attachment that saw the packet,
 * which in another namespace is some other device, or none: it is looked
 * up among the filter's attachments in every namespace (store/discover.h),
 * found again at most every few seconds. */
struct fb_monview_devs {
	struct fb_att *att; /* the filter's attachments; NULL: not looked yet */
	int n;
	__u32 outer_id; /* the filter's fb_filter map */
	double when;	/* fb_now() of the look */
};
struct fb_monview_dev {
	char name[IF_NAMESIZE + 16]; /* the device, or "ifindex N"; as it is (JSON) */
	/* Its namespace as status names it; "" when ifindex is not one of
	 * the filter's attachments, or is in several namespaces. */
	char netns[NAME_MAX + 1];
	bool here; /* in the namespace this runs in */
};
void fb_monview_devs_init(struct fb_monview_devs *d, const struct fb_store *f);
void fb_monview_devs_free(struct fb_monview_devs *d);
void fb_monview_dev(struct fb_monview_devs *d, __u32 ifindex, struct fb_monview_dev *out);
/* The device for a line of text: "veth0" in this namespace, "veth0
 * (netns NS)" in another, "ifindex 2 (netns A or B)" when several
 * namespaces have an attachment with that ifindex, "ifindex 2" when none;
 * the names escaped for a terminal (fb_printable()). */
void fb_monview_dev_text(struct fb_monview_devs *d, __u32 ifindex, char *buf, size_t len);

/* "s" unless n is 1: "1 packet", "2 packets". */
static inline const char *fb_monview_s(unsigned long long n)
{
	return n == 1 ? "" : "s";
}

#endif
