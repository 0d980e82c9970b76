/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * IPFIX export (RFC 7011, information elements of RFC 7012 / IANA) through
 * libfixbuf, which does the message framing, sequence numbers, transports
 * and the IANA information model. Four templates:
 *
 *   256 / 257  new flow, IPv4 / IPv6: flowStartMilliseconds,
 *              flowEndMilliseconds, addresses, ports, protocolIdentifier,
 *              ingressInterface, forwardingStatus (the verdict), and the
 *              first packet: packetDeltaCount 1, octetDeltaCount its length
 *   258 / 259  estimate, IPv4 / IPv6: the interval (flowStart/End), the
 *              5-tuple, packetDeltaCount and octetDeltaCount as the sketch
 *              estimates them (upper bounds), then the accuracy statement
 *              of RFC 5477: confidenceLevel and a lowerCILimit/upperCILimit
 *              pair for packets, then one for octets
 *
 * The estimate templates are separate so a collector can tell measured
 * records from estimated ones by template ID alone; the CI elements say by
 * how much they may be off. glib and fixbuf types stay inside ipfix.c.
 */
#ifndef FLOWBLOOM_USER_IPFIX_H
#define FLOWBLOOM_USER_IPFIX_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "flowbloom/key.h"

#define FB_IPFIX_TID_NEW4 256
#define FB_IPFIX_TID_NEW6 257
#define FB_IPFIX_TID_EST4 258
#define FB_IPFIX_TID_EST6 259

/* forwardingStatus (IE 89, RFC 7270 registry): status in the top two bits,
 * reason below. A pass hands the packet to the stack: "forwarded, unknown
 * reason"; a drop by the filter is an access-list deny. */
#define FB_IPFIX_FWD_UNKNOWN 0
#define FB_IPFIX_FWD_FORWARDED 64
#define FB_IPFIX_FWD_DROP_ACL 129

struct fb_ipfix;

struct fb_ipfix_newflow {
	struct fb_key key; /* 5-tuple as the program saw it */
	__u64 start_ms;	   /* epoch milliseconds of the first packet */
	__u32 ifindex;
	__u32 bytes; /* the first packet's length */
	__u8 fwd;    /* FB_IPFIX_FWD_* */
};

struct fb_ipfix_estimate {
	struct fb_key key;
	__u64 start_ms, end_ms; /* the interval the counts cover */
	__u64 packets, bytes;	/* estimates: never below the truth */
	double packets_low;	/* truth >= low with probability confidence */
	double bytes_low;
	double confidence; /* 1 - delta' */
};

/* Open an exporter: to HOST PORT over UDP or TCP, or (tests) to a stdio
 * stream. Nothing is sent until the first flush. NULL on failure (printed). */
struct fb_ipfix *fb_ipfix_open_net(const char *host, const char *port, bool tcp, __u32 domain);
struct fb_ipfix *fb_ipfix_open_file(FILE *fp, __u32 domain);
/* Queue the four templates again (UDP refresh); opening and resetting
 * queue them for the first message. */
int fb_ipfix_templates(struct fb_ipfix *x);
int fb_ipfix_add_newflow(struct fb_ipfix *x, const struct fb_ipfix_newflow *r);
int fb_ipfix_add_estimate(struct fb_ipfix *x, const struct fb_ipfix_estimate *r);
/* Send what is queued as one or more messages. */
int fb_ipfix_flush(struct fb_ipfix *x);
/* After a failure: drop the connection and whatever was queued, start a
 * new session (sequence numbers from 0), templates queued first; the
 * connection opens at the next flush. -1 if that cannot be built. */
int fb_ipfix_reset(struct fb_ipfix *x);
/* The last error's text. */
const char *fb_ipfix_error(const struct fb_ipfix *x);
void fb_ipfix_close(struct fb_ipfix *x);
/* XDP verdict to forwardingStatus. */
__u8 fb_ipfix_fwd_status(unsigned xdp_verdict);

#endif
