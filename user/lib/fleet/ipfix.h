/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * IPFIX messages (RFC 7011, information elements of RFC 7012 / IANA)
 * through libfixbuf, which lays out records, sets and message headers,
 * keeps the sequence numbers and knows the IANA information model; it
 * writes each message into memory, and the exporter (ipfix_out.h) sends
 * it. Eight templates:
 *
 *   256 / 257  new flow, IPv4 / IPv6 (attach --new-flows): a flow's first
 *              packet in an aging period, as a notification: its time
 *              (flowStart/EndMilliseconds), the 5-tuple, ingressInterface,
 *              egressInterface, flowDirection, forwardingStatus (the
 *              verdict). No packet or octet count: a collector summing
 *              counts never counts a packet twice.
 *   258 / 259  estimate, IPv4 / IPv6: the interval, the 5-tuple, the
 *              interfaces and direction, packetDeltaCount and
 *              octetDeltaCount as a count-min sketch estimates them (upper
 *              bounds; layer2OctetDeltaCount instead when the sketch counts
 *              Ethernet frames), then RFC 5477's accuracy statement:
 *              confidenceLevel and lowerCILimit/upperCILimit for packets,
 *              then for octets.
 *   260 / 261  flow, IPv4 / IPv6 (attach --accounting): a flow's exact
 *              counts since its previous record: flowStart/EndMilliseconds,
 *              the 5-tuple, ipClassOfService, tcpControlBits,
 *              icmpTypeCodeIPv4 or IPv6, vlanId, source/destinationMac-
 *              Address, ingress/egressInterface, flowDirection,
 *              forwardingStatus, flowEndReason, packetDeltaCount and
 *              octetDeltaCount (IP octets).
 *
 *   262 / 263  mitigation event, IPv4 / IPv6 (`flowbloom guard`): an
 *              address banned (firewallEvent 1, flow created) or its ban
 *              ended (2, flow deleted): flowStart/EndMilliseconds (the ban's
 *              start, and its end: expected for a ban, as it happened for an
 *              unban), the address as source (or destination, --by dst),
 *              the other address, ports and protocol 0, forwardingStatus
 *              (dropped, access list).
 *
 * Estimates and measured records are told apart by template ID; the CI
 * elements say by how much an estimate may be off. glib and fixbuf types
 * stay inside ipfix.c.
 */
#ifndef FLOWBLOOM_USER_IPFIX_H
#define FLOWBLOOM_USER_IPFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/key.h"

#define FB_IPFIX_TID_NEW4 256
#define FB_IPFIX_TID_NEW6 257
#define FB_IPFIX_TID_EST4 258
#define FB_IPFIX_TID_EST6 259
#define FB_IPFIX_TID_FLOW4 260
#define FB_IPFIX_TID_FLOW6 261
#define FB_IPFIX_TID_MIT4 262
#define FB_IPFIX_TID_MIT6 263

/* firewallEvent (IE 233) values a mitigation record carries. */
#define FB_IPFIX_FW_CREATED 1
#define FB_IPFIX_FW_DELETED 2

/* forwardingStatus (IE 89, RFC 7270 registry): status in the top two bits,
 * reason below. A pass hands the packet to the stack: "forwarded, unknown
 * reason"; a drop by the filter is an access-list deny. */
#define FB_IPFIX_FWD_UNKNOWN 0
#define FB_IPFIX_FWD_FORWARDED 64
#define FB_IPFIX_FWD_DROP_ACL 129

/* flowDirection (IE 61): XDP sees packets as they come in. */
#define FB_IPFIX_DIR_INGRESS 0

struct fb_ipfix;

struct fb_ipfix_newflow {
	struct fb_key key; /* 5-tuple as the program saw it */
	__u64 start_ms;	   /* epoch milliseconds of the first packet */
	__u32 ifindex;
	__u8 fwd; /* FB_IPFIX_FWD_* */
};

struct fb_ipfix_estimate {
	struct fb_key key;
	__u64 start_ms, end_ms; /* the interval the counts cover */
	__u64 packets, bytes;	/* estimates: never below the truth */
	double packets_low;	/* truth >= low with probability confidence */
	double bytes_low;
	double confidence; /* 1 - delta' */
};

struct fb_ipfix_flow {
	struct fb_key key;
	__u64 start_ms, end_ms; /* epoch ms: first and last packet of the record */
	__u64 packets, bytes;	/* exact; bytes: IP octets */
	__u32 ingress, egress;	/* egress 0: not known (XDP_PASS hands it to the stack) */
	__u16 tcp_flags, icmp, vlan;
	__u8 tos, fwd, end_reason; /* end_reason: flowEndReason (enum fb_acct_end) */
	__u8 smac[6], dmac[6];
};

struct fb_ipfix_mitigation {
	struct fb_key key;	/* an address rule: kind SRC or DST, its address */
	__u64 start_ms, end_ms; /* epoch ms: the ban's start and end */
	__u8 event;		/* FB_IPFIX_FW_* */
};

/* Largest message it builds: what fits one UDP datagram on an Ethernet
 * path (IPv6 and UDP headers included; less on a path of a smaller MTU:
 * fb_ipfix_set_msg_max), and what a TCP write takes. */
#define FB_IPFIX_MSG_UDP 1400
#define FB_IPFIX_MSG_TCP 16384

/* An encoder for observation domain `domain`, messages of at most msg_max
 * bytes; l2_estimates: the estimates count Ethernet frame octets (then
 * template 258/259 says layer2OctetDeltaCount). A new session is open
 * (sequence numbers from 0). NULL on failure (reported). */
struct fb_ipfix *fb_ipfix_new(__u32 domain, size_t msg_max, bool l2_estimates);
void fb_ipfix_free(struct fb_ipfix *x);
/* Start a new session: sequence numbers from 0; what was appended and not
 * taken is dropped. -1 on failure (fb_ipfix_error). */
int fb_ipfix_session(struct fb_ipfix *x);
/* Messages of at most msg_max bytes (at least 512, at most fb_ipfix_new's)
 * from the next session on. */
void fb_ipfix_set_msg_max(struct fb_ipfix *x, size_t msg_max);
/* Append to the message being built: 0 done, 1 the message is full (take
 * it, then append again), -1 error. */
int fb_ipfix_put_templates(struct fb_ipfix *x);
/* TCP, at the end of a session: a withdrawal of every template (RFC 7011
 * section 8.1), in a message of its own; nothing may be appended after. */
int fb_ipfix_put_withdrawals(struct fb_ipfix *x);
int fb_ipfix_put_newflow(struct fb_ipfix *x, const struct fb_ipfix_newflow *r);
int fb_ipfix_put_estimate(struct fb_ipfix *x, const struct fb_ipfix_estimate *r);
int fb_ipfix_put_mitigation(struct fb_ipfix *x, const struct fb_ipfix_mitigation *r);
int fb_ipfix_put_flow(struct fb_ipfix *x, const struct fb_ipfix_flow *r);
/* Close the message built so far: *msg and *len its bytes (valid until the
 * next call), *records its data records. 0, or -1 on error. */
int fb_ipfix_take(struct fb_ipfix *x, const __u8 **msg, size_t *len, unsigned *records);
const char *fb_ipfix_error(const struct fb_ipfix *x);
/* XDP verdict to forwardingStatus. */
__u8 fb_ipfix_fwd_status(unsigned xdp_verdict);

#endif
