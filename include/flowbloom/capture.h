/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Capture of what the XDP program decided (`flowbloom capture`), shared by
 * the program (bpf/capture.bpf.h) and the CLI (user/lib/capture/).
 *
 * Every loaded program holds a control block, struct fb_cap_ctl, in a data
 * section of its own (FB_CAP_SECTION): a one-entry array map that user
 * space finds among the program's maps by name and maps into memory. The
 * data path reads its `on` word once per packet, after the verdict; while
 * it is 0 that read is all a packet pays. A capture fills the block, puts
 * a ring buffer of its own size in the program's one-slot map-in-map
 * (FB_CAP_RINGS), then sets `on`; nothing is reloaded or re-attached.
 *
 * A capture holds a lease: `lease` is a CLOCK_MONOTONIC_COARSE time the
 * capturing process keeps pushing forward. A program that meets a packet
 * after the lease ran out clears `on` itself, so a capture whose process
 * died (SIGKILL, a crash) stops costing the data path within the lease.
 * `owner` says which capture holds the block: a second capture finds it
 * taken while the lease runs, and is refused.
 */
#ifndef FLOWBLOOM_CAPTURE_H
#define FLOWBLOOM_CAPTURE_H

#include <linux/types.h>

/* The control block's section, hence its map's name (libbpf names the map
 * of a custom data section after the section). */
#define FB_CAP_SECTION ".data.fbcap"
#define FB_CAP_RINGS "fb_cap_rings"
#define FB_CAP_BUF "fb_cap_buf"

/* Bytes of a packet a record can hold: an XDP frame without fragments
 * fits in a page. Longer frames (generic XDP on a jumbo MTU) are cut
 * here; their record keeps the length on the wire. */
#define FB_CAP_SNAP_MAX 4096

/* How long a lease lasts, and how often the capture renews it. A dead
 * capture costs the data path a clock read per packet for at most this. */
#define FB_CAP_LEASE_NS 2000000000ULL
#define FB_CAP_RENEW_NS 250000000ULL

/* The fields, once: the program declares its block as an unnamed struct of
 * them, so the skeleton (bpftool gen skeleton) spells the type out and
 * needs no header; user space uses struct fb_cap_ctl. */
#define FB_CAP_CTL_FIELDS                                                                          \
	__u32 on;	/* read per packet: nonzero while a capture runs */                        \
	__u32 verdicts; /* 1 << XDP_DROP, 1 << XDP_PASS: which to capture */                       \
	__u32 sample;	/* 1 in sample packets of those (per CPU), >= 1 */                         \
	__u32 snaplen;	/* bytes kept per packet, 1..FB_CAP_SNAP_MAX */                            \
	__u64 lease;	/* CLOCK_MONOTONIC_COARSE ns: past it, the program clears on */            \
	__u64 owner;	/* the capture holding the block (pid << 32 | nonce), 0: none */           \
	__u32 tag;	/* the attachment's number in the capture: records carry it */             \
	__u32 pad;

struct fb_cap_ctl {
	FB_CAP_CTL_FIELDS
};
_Static_assert(sizeof(struct fb_cap_ctl) == 40, "fb_cap_ctl layout");

/* One ring buffer record: this header, then caplen bytes of the frame. */
struct fb_cap_rec {
	__u64 ts_ns;   /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 len;     /* the frame's length */
	__u32 caplen;  /* bytes that follow */
	__u32 tag;     /* fb_cap_ctl.tag of the program that wrote it */
	__u32 ifindex; /* ingress device */
	__u32 rxq;     /* receive queue */
	__u8 verdict;  /* XDP_* */
	__u8 kind;     /* enum fb_kind that matched, 0: none */
	__u8 parse;    /* enum fb_parse */
	__u8 flags;    /* FB_CAP_RECF_* */
};
_Static_assert(sizeof(struct fb_cap_rec) == 32, "fb_cap_rec layout");

/* fb_cap_rec.flags: the rule that matched has a lifetime (a generation's,
 * ttl.h), not a permanent one. */
#define FB_CAP_RECF_LIFETIME 1

/* Per-CPU counters of the program, since its load (readers subtract). */
enum fb_cap_stat {
	FB_CAP_STAT_MATCHED, /* packets with a captured verdict, before sampling */
	FB_CAP_STAT_SAMPLED, /* of those, the 1 in N offered to the ring */
	FB_CAP_STAT_LOST,    /* of those, the ones the ring had no room for */
	FB_CAP_STAT_EXPIRED, /* leases the data path found run out */
	FB_CAP_STAT_NR,
};

/* The per-CPU scratch value: counters, the sampling countdown, and a
 * record being built (a ring buffer record's size must be known to the
 * verifier; one built here goes out at its own length). */
struct fb_cap_buf {
	__u64 stat[FB_CAP_STAT_NR];
	__u32 countdown;
	__u32 pad;
	struct fb_cap_rec rec;
	__u8 data[FB_CAP_SNAP_MAX];
};

#endif
