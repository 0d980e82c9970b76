/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Writing captured frames as pcapng (the default) or classic pcap, for
 * tcpdump, tshark and Wireshark.
 *
 * pcapng (draft-ietf-opsawg-pcapng): one Interface Description Block per
 * attachment (if_name the device, if_description the filter and mode,
 * nanosecond timestamps), and per frame an Enhanced Packet Block with
 *   epb_verdict (option 7) type 2, "Linux eBPF XDP", the XDP action: tshark
 *     shows it as frame.verdict.ebpf_xdp (1 XDP_DROP, 2 XDP_PASS);
 *   opt_comment "flowbloom: verdict=drop rule=src" (frame.comment); rule is
 *     the kind of rule that matched (flow, src, dst) or none, and a packet
 *     that did not parse says so (parse=malformed, parse=non-ip);
 *   epb_flags inbound, epb_queue the receive queue.
 * Classic pcap has no room for these: nanosecond timestamps and the frames.
 */
#ifndef FLOWBLOOM_USER_PCAPOUT_H
#define FLOWBLOOM_USER_PCAPOUT_H

#include <stdio.h>
#include <linux/types.h>
#include "flowbloom/capture.h"

enum fb_pcap_format { FB_PCAP_NG, FB_PCAP_CLASSIC };

struct fb_pcapout {
	FILE *out;
	int format;
	__u32 snaplen;
	__u32 ifaces; /* IDBs written */
	__u64 packets, bytes;
};

/* Every function returns 0, or -1 with errno set (a write error). */
int fb_pcapout_begin(struct fb_pcapout *w, FILE *out, int format, __u32 snaplen);
/* pcapng: the next interface (numbered from 0); classic pcap: nothing. */
int fb_pcapout_iface(struct fb_pcapout *w, const char *name, const char *descr);
/* One record from the XDP program, timestamped ts_real_ns (CLOCK_REALTIME). */
int fb_pcapout_packet(struct fb_pcapout *w, const struct fb_cap_rec *r, const void *data,
		      __u64 ts_real_ns);
/* The comment a record gets: "flowbloom: verdict=drop rule=flow", with
 * " lifetime=yes" when the rule that matched has a lifetime. */
void fb_pcapout_comment(const struct fb_cap_rec *r, char *buf, size_t len);

#endif
