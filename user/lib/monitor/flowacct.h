/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading the per-flow accounting table (attach --accounting; layout and
 * the protocol between the data path and its reader are in
 * include/flowbloom/flowacct.h): one pass over every CPU's plane ends the
 * flows whose time has come and hands out their records, counted exactly,
 * merged over CPUs; and the overflow sketch, read as a sketch snapshot.
 *
 * One reader at a time (the exporter holds the monitoring directory's
 * lock): the reader's bookkeeping (what it exported) lives in the table.
 */
#ifndef FLOWBLOOM_USER_FLOWACCT_H
#define FLOWBLOOM_USER_FLOWACCT_H

#include <stdbool.h>
#include <linux/types.h>
#include "flowbloom/flowacct.h"
#include "monitor/monmaps.h"

/* A flow record: the packets of one flow (5-tuple, ICMP type/code,
 * verdict) since its previous record. Times are CLOCK_MONOTONIC ns. */
struct fb_acct_rec {
	struct fb_key key;
	__u64 packets, bytes; /* bytes: IP octets */
	__u64 start_ns, end_ns;
	__u32 ifindex;
	__u16 tcp_flags, icmp, vlan;
	__u8 tos, verdict, reason; /* reason: enum fb_acct_end */
	__u8 smac[6], dmac[6];
};

struct fb_acct_pass {
	__u64 now_ns;	 /* CLOCK_MONOTONIC */
	__u64 idle_ns;	 /* end a flow this long without a packet */
	__u64 active_ns; /* export a flow at least this often */
	/* A flow with TCP FIN seen ends once quiet this long (its last ACK
	 * still counts); one with RST at once. */
	__u64 fin_ns;
	bool end_all; /* the reader stops: every flow ends (forced end) */
};

/* What the table holds, summed over CPUs. */
struct fb_acct_totals {
	__u64 live, ending; /* ways in use; of them, ended and not yet read */
	__u64 capacity;	    /* ways in all */
	__u64 taken;	    /* ways taken since the maps were made */
	__u64 overflow_packets, overflow_bytes, collisions;
};

typedef int (*fb_acct_fn)(const struct fb_acct_rec *r, void *ctx);

/*
 * One pass: flows ended by an earlier pass are read (final counts) and
 * freed; flows due now are ended (to be read by the next pass, once no
 * packet can still be adding to them) or, at an active timeout, exported
 * up to now and kept. Records of one flow from several CPUs are merged.
 * fn gets each record (a non-zero return stops the calls, not the pass).
 * Returns the number of records, -1 on error (reported).
 */
int fb_acct_pass(const struct fb_monitor *m, const struct fb_acct_pass *o, fb_acct_fn fn,
		 void *ctx);
/* Every flow's end, at once: a pass with end_all, a pause longer than any
 * packet's run through the program, and a pass that reads them. */
int fb_acct_drain(const struct fb_monitor *m, __u64 now_ns, fb_acct_fn fn, void *ctx);
void fb_acct_totals(const struct fb_monitor *m, struct fb_acct_totals *t);
/* The overflow sketch of every plane, summed (shape of the main sketch; N
 * is the overflow traffic). Needs --monitor; -1 (reported) without. */
int fb_acct_osnap_take(const struct fb_monitor *m, struct fb_mon_snap *s);

#endif
