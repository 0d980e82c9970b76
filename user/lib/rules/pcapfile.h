/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading captures (libpcap: pcap and pcapng) as Ethernet frames. Kept
 * apart from the BPF code because <pcap/pcap.h> and <linux/bpf.h> both
 * define struct bpf_insn.
 */
#ifndef FLOWBLOOM_USER_PCAPFILE_H
#define FLOWBLOOM_USER_PCAPFILE_H

#include <stddef.h>

struct fb_pcap;

/* NULL on error (message printed). path "-" is stdin, named <stdin>. Accepts Ethernet, raw IP and Linux
 * cooked captures (SLL v1 and v2, as `tcpdump -i any` writes); the others
 * get a synthetic Ethernet header. */
struct fb_pcap *fb_pcap_open(const char *path);
/* Next frame into out (at most cap bytes; longer ones are cut and *cut set).
 * Returns 1 with *len set, 0 at the end, -1 on a read error (printed, with
 * the file and the number of the record it could not read). */
int fb_pcap_next(struct fb_pcap *p, unsigned char *out, size_t cap, size_t *len, int *cut);
/* Was the last frame truncated by the capture (its snap length): fewer
 * bytes recorded than the frame had on the wire? */
int fb_pcap_truncated(const struct fb_pcap *p);
/* Did the last record hold more bytes than the frame had on the wire (a
 * malformed record, given at its length on the wire)? 1 with both lengths
 * set, else 0. */
int fb_pcap_overlong(const struct fb_pcap *p, unsigned int *caplen, unsigned int *len);
void fb_pcap_close(struct fb_pcap *p);

#endif
