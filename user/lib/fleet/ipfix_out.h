/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The IPFIX exporting process (RFC 7011 section 10): records wait in a
 * bounded queue, become messages (ipfix.h) and go to the collector over
 * UDP or TCP, on non-blocking sockets the caller pumps from its loop, so
 * nothing here ever waits on the collector.
 *
 * - A record leaves the queue only once its message is handed whole to
 *   the kernel: a collector that is away (refused, reset, not yet
 *   listening) keeps records queued, and they go out in the next session,
 *   after its templates. A record that finds the queue full is dropped,
 *   counted.
 * - UDP: a connected socket, so an ICMP unreachable comes back as an
 *   error; the records sent since the previous pump are then presumed
 *   lost (counted). While the collector is away, a templates-only message
 *   probes it each second; once one goes without an error, a new session
 *   starts on a new socket (sequence numbers from 0, templates first).
 *   Templates are also sent again at 1, 2, 4, 8, 16 and 32 seconds into a
 *   session and every `refresh` seconds after (0: in every message), since
 *   a UDP collector that restarts between two sends says nothing.
 * - TCP: one connection, templates first (alone for its first second: a
 *   collector that accepts and resets at once gets no records to lose,
 *   nor is it a recovery); the collector's acknowledgements
 *   (SIOCOUTQ) say which messages it has: at a reset or close, the rest are
 *   counted lost. Reconnection each second. A collector that takes the
 *   connection and never reads fills the queue (records are then dropped,
 *   counted); TCP_USER_TIMEOUT ends such a connection after 30 s. What a
 *   collector sends is read and dropped (unread, it would turn the close
 *   into a reset). At the end, once all is sent, the templates are
 *   withdrawn (RFC 7011 section 8.1).
 */
#ifndef FLOWBLOOM_USER_IPFIX_OUT_H
#define FLOWBLOOM_USER_IPFIX_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "fleet/ipfix.h"

struct fb_ipfix_out;

struct fb_ipfix_out_opts {
	const char *host, *port;
	bool tcp;
	__u32 domain;
	double refresh;	   /* UDP template refresh, seconds; 0: in every message */
	size_t queue;	   /* records held while the collector is away */
	bool l2_estimates; /* see fb_ipfix_new() */
};

enum fb_ipfix_kind {
	FB_IPFIX_NEWFLOW,
	FB_IPFIX_ESTIMATE,
	FB_IPFIX_FLOW,
	FB_IPFIX_MITIGATION,
	FB_IPFIX_KINDS
};

struct fb_ipfix_out_stats {
	__u64 sent[FB_IPFIX_KINDS]; /* records handed to the network, by kind */
	__u64 unconfirmed;	    /* of them: presumed lost (refused, unacknowledged) */
	__u64 dropped;		    /* never sent: the queue was full, or left at the end */
	__u64 messages, send_errors, sessions;
};

/* What a pump saw happen (bits). */
enum {
	FB_IPFIX_EV_DOWN = 1,	  /* the collector went away (fb_ipfix_out_error says how) */
	FB_IPFIX_EV_UP = 2,	  /* it takes records again: a new session started */
	FB_IPFIX_EV_DROPPING = 4, /* the queue is full: records are being dropped */
};

/* NULL on failure (reported): a host that does not resolve, no memory. */
struct fb_ipfix_out *fb_ipfix_out_open(const struct fb_ipfix_out_opts *o);
/* Queue a record: 0, or 1 if it was dropped (queue full). */
int fb_ipfix_out_newflow(struct fb_ipfix_out *x, const struct fb_ipfix_newflow *r);
int fb_ipfix_out_estimate(struct fb_ipfix_out *x, const struct fb_ipfix_estimate *r);
int fb_ipfix_out_flow(struct fb_ipfix_out *x, const struct fb_ipfix_flow *r);
int fb_ipfix_out_mitigation(struct fb_ipfix_out *x, const struct fb_ipfix_mitigation *r);
/* Whatever I/O can be done now, without waiting; now: CLOCK_MONOTONIC
 * seconds. Returns FB_IPFIX_EV_* bits. -1 on an error that ends the
 * export (the encoder failed: reported). */
int fb_ipfix_out_pump(struct fb_ipfix_out *x, double now);
/* At the end: pump until everything is sent and acknowledged or `until`
 * (CLOCK_MONOTONIC seconds) has come; what is left counts as dropped or
 * unconfirmed. */
void fb_ipfix_out_finish(struct fb_ipfix_out *x, double until);
void fb_ipfix_out_stats(const struct fb_ipfix_out *x, struct fb_ipfix_out_stats *s);
/* The last failure: "connect: Connection refused", ... */
const char *fb_ipfix_out_error(const struct fb_ipfix_out *x);
void fb_ipfix_out_close(struct fb_ipfix_out *x);

#endif
