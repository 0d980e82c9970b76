/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The frame of one packet of a flow (frame.c), for asking the XDP program
 * what it does with that packet (`query --packet`): Ethernet, then IPv4 or
 * IPv6 by the key's family (not by the addresses: an IPv6 flow may carry
 * ::ffff:a.b.c.d), then the first packet a host would send: a TCP SYN, a
 * UDP or UDP-Lite datagram of 8 bytes, an SCTP INIT, an ICMP or ICMPv6
 * echo request, or 8 bytes of payload for any other protocol. Lengths and
 * checksums are correct (SCTP's CRC32c too).
 */
#ifndef FLOWBLOOM_USER_FRAME_H
#define FLOWBLOOM_USER_FRAME_H

#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/key.h"

/* Room for the longest frame fb_frame_of_flow writes. */
#define FB_FRAME_MAX 128

/* Write the frame of k (an FB_KIND_FLOW key) into buf (FB_FRAME_MAX
 * bytes); returns its length. */
size_t fb_frame_of_flow(const struct fb_key *k, __u8 buf[FB_FRAME_MAX]);

#endif
