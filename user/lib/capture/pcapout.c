// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pcapng and classic pcap output (pcapout.h). Blocks are written in host
 * byte order, which the Section Header's byte-order magic announces
 * (draft-ietf-opsawg-pcapng, section 4.1); every block and option is
 * padded to 32 bits.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include "capture/pcapout.h"
#include "util.h"

#define LINKTYPE_ETHERNET 1
#define BT_SHB 0x0A0D0D0A
#define BT_IDB 0x00000001
#define BT_EPB 0x00000006
#define OPT_END 0
#define OPT_COMMENT 1
#define SHB_USERAPPL 4
#define IF_NAME 2
#define IF_DESCRIPTION 3
#define IF_TSRESOL 9
#define EPB_FLAGS 2
#define EPB_QUEUE 6
#define EPB_VERDICT 7
#define VERDICT_XDP 2	/* epb_verdict type: Linux eBPF XDP */
#define EPB_INBOUND 0x1 /* epb_flags direction bits 0-1 */

/* Room for one block's header and options (the frame is written apart). */
struct blk {
	__u8 b[512];
	size_t n;
};

static void put(struct blk *k, const void *p, size_t n)
{
	if (k->n + n > sizeof(k->b))
		n = sizeof(k->b) - k->n; /* cannot happen: callers bound what they add */
	if (n) /* OPT_END has no value: p NULL, which memcpy may not take */
		memcpy(k->b + k->n, p, n);
	k->n += n;
}

static void put32(struct blk *k, __u32 v)
{
	put(k, &v, 4);
}

static void pad(struct blk *k)
{
	static const __u8 z[4];

	put(k, z, (4 - k->n % 4) % 4);
}

static void opt(struct blk *k, __u16 code, const void *val, __u16 len)
{
	__u16 h[2] = { code, len };

	put(k, h, 4);
	put(k, val, len);
	pad(k);
}

static int emit(struct fb_pcapout *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->out) != n) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	w->bytes += n;
	return 0;
}

/* Type, total length, body (head, then data of dlen padded, then tail),
 * total length again. */
static int block(struct fb_pcapout *w, __u32 type, const struct blk *head, const void *data,
		 size_t dlen, const struct blk *tail)
{
	static const __u8 z[4];
	size_t dpad = (4 - dlen % 4) % 4;
	__u32 total = 12 + head->n + dlen + dpad + (tail ? tail->n : 0);
	__u32 h[2] = { type, total };

	if (emit(w, h, 8) || emit(w, head->b, head->n) || emit(w, data, dlen) || emit(w, z, dpad) ||
	    (tail && emit(w, tail->b, tail->n)) || emit(w, &total, 4))
		return -1;
	return 0;
}

int fb_pcapout_begin(struct fb_pcapout *w, FILE *out, int format, __u32 snaplen)
{
	static const char appl[] = "flowbloom";
	struct blk k = { .n = 0 };

	memset(w, 0, sizeof(*w));
	w->out = out;
	w->format = format;
	w->snaplen = snaplen;
	if (format == FB_PCAP_CLASSIC) {
		/* Nanosecond pcap: magic a1b23c4d, version 2.4. */
		__u32 h[6] = { 0xa1b23c4d, 2 | 4 << 16, 0, 0, snaplen, LINKTYPE_ETHERNET };

		return emit(w, h, sizeof(h));
	}
	put32(&k, 0x1A2B3C4D); /* byte-order magic */
	put32(&k, 1);	       /* major 1, minor 0 */
	put32(&k, 0xffffffff); /* section length: not given */
	put32(&k, 0xffffffff);
	opt(&k, SHB_USERAPPL, appl, sizeof(appl) - 1);
	opt(&k, OPT_END, NULL, 0);
	return block(w, BT_SHB, &k, NULL, 0, NULL);
}

int fb_pcapout_iface(struct fb_pcapout *w, const char *name, const char *descr)
{
	struct blk k = { .n = 0 };
	__u16 lt[2] = { LINKTYPE_ETHERNET, 0 };
	__u8 nsec = 9;

	if (w->format == FB_PCAP_CLASSIC)
		return 0;
	put(&k, lt, 4);
	put32(&k, w->snaplen);
	opt(&k, IF_NAME, name, strnlen(name, 64));
	if (descr)
		opt(&k, IF_DESCRIPTION, descr, strnlen(descr, 200));
	opt(&k, IF_TSRESOL, &nsec, 1);
	opt(&k, OPT_END, NULL, 0);
	w->ifaces++;
	return block(w, BT_IDB, &k, NULL, 0, NULL);
}

void fb_pcapout_comment(const struct fb_cap_rec *r, char *buf, size_t len)
{
	const char *parse = r->parse == FB_PARSE_NONIP	     ? " parse=non-ip"
			    : r->parse == FB_PARSE_MALFORMED ? " parse=malformed"
							     : "";

	snprintf(buf, len, "flowbloom: verdict=%s rule=%s%s%s",
		 FB_NAME(fb_verdict_names, r->verdict), FB_NAME_OR(fb_kind_names, r->kind, "none"),
		 r->flags & FB_CAP_RECF_LIFETIME ? " lifetime=yes" : "", parse);
}

int fb_pcapout_packet(struct fb_pcapout *w, const struct fb_cap_rec *r, const void *data,
		      __u64 ts_real_ns)
{
	__u32 caplen = r->caplen < w->snaplen ? r->caplen : w->snaplen;
	struct blk head = { .n = 0 }, tail = { .n = 0 };
	__u8 verdict[9] = { VERDICT_XDP };
	__u32 flags = EPB_INBOUND;
	__u64 v = r->verdict;
	char comment[96];

	w->packets++;
	if (w->format == FB_PCAP_CLASSIC) {
		__u32 h[4] = { ts_real_ns / 1000000000ULL, ts_real_ns % 1000000000ULL, caplen,
			       r->len };

		return emit(w, h, sizeof(h)) || emit(w, data, caplen) ? -1 : 0;
	}
	put32(&head, r->tag < w->ifaces ? r->tag : 0);
	put32(&head, ts_real_ns >> 32); /* in units of if_tsresol: ns */
	put32(&head, (__u32)ts_real_ns);
	put32(&head, caplen);
	put32(&head, r->len);
	fb_pcapout_comment(r, comment, sizeof(comment));
	opt(&tail, OPT_COMMENT, comment, strlen(comment));
	memcpy(verdict + 1, &v, 8);
	opt(&tail, EPB_VERDICT, verdict, sizeof(verdict));
	opt(&tail, EPB_FLAGS, &flags, 4);
	opt(&tail, EPB_QUEUE, &r->rxq, 4);
	opt(&tail, OPT_END, NULL, 0);
	return block(w, BT_EPB, &head, data, caplen, &tail);
}
