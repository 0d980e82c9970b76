/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Capture on the data path (`flowbloom capture`; include/flowbloom/capture.h
 * has the protocol with user space). flowbloom.bpf.c calls fb_capture()
 * once the verdict is known. With no capture running a packet pays one
 * load of the control block's `on` word (a global: its address is a
 * constant in the instruction, no map lookup) and a branch. Everything
 * else is a global function the verifier checks once, on its own, so the
 * main program's verification grows by a few instructions.
 *
 * Built with -DFB_NO_CAPTURE it is not there at all: the benchmark's
 * baseline for what an idle capture costs (tests/bench/bench_capture.c).
 */
#ifndef FLOWBLOOM_CAPTURE_BPF_H
#define FLOWBLOOM_CAPTURE_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/capture.h"

#ifdef FB_NO_CAPTURE
/* Nothing reads the slot: the compiler drops it. */
typedef struct xdp_md *fb_cap_slot;

static __always_inline int fb_capture(fb_cap_slot *ctx, int verdict, __u32 kind, int parse,
				      __u32 flags)
{
	return verdict;
}
#else

/* Written by user space through a mmap while the program runs. */
struct {
	FB_CAP_CTL_FIELDS
} fb_cap SEC(FB_CAP_SECTION) = {};

/* The capture's ring buffer, of the size the capture chose: slot 0 is
 * empty unless a capture runs. The template's size is not the ring's:
 * a ring buffer's map-in-map compatibility ignores max_entries. */
struct fb_cap_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct fb_cap_ring);
} fb_cap_rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fb_cap_buf);
} fb_cap_buf SEC(".maps");

/*
 * A packet while a capture runs: lease, verdict, 1 in N, then a copy of
 * up to snaplen bytes into the ring. what: the verdict, the rule kind
 * (bits 8..15), the parse result (16..23) and the record's flags (24..31,
 * FB_CAP_RECF_*). Global (verified once, by itself); returns 1 if the
 * packet went into the ring.
 */
__noinline int fb_capture_packet(struct xdp_md *ctx, __u32 what)
{
	typeof(fb_cap) *c = &fb_cap;
	__u32 zero = 0, verdict = what & 0xff, len, cap;
	struct fb_cap_buf *b;
	void *ring;

	if (!ctx)
		return verdict;
	b = bpf_map_lookup_elem(&fb_cap_buf, &zero);
	if (!b)
		return verdict;
	/* A lease that ran out: the capture's process is gone (or stopped);
	 * turn capture off here, so the next packets pay nothing more. */
	if (bpf_ktime_get_coarse_ns() > c->lease) {
		*(volatile __u32 *)&c->on = 0;
		b->stat[FB_CAP_STAT_EXPIRED]++;
		return verdict;
	}
	if (verdict > 31 || !(c->verdicts & (1U << verdict)))
		return verdict;
	b->stat[FB_CAP_STAT_MATCHED]++;
	/* 1 in sample, counted per CPU (no shared counter to fight over):
	 * the first, then every sample-th. */
	if (b->countdown && b->countdown < c->sample) {
		b->countdown++;
		return verdict;
	}
	b->countdown = 1;
	b->stat[FB_CAP_STAT_SAMPLED]++;
	ring = bpf_map_lookup_elem(&fb_cap_rings, &zero);
	if (!ring) {
		b->stat[FB_CAP_STAT_LOST]++;
		return verdict;
	}
	/* Multi-buffer: bpf_xdp_load_bytes() reads across the buffers. */
	len = cfg_frags ? bpf_xdp_get_buff_len(ctx) : ctx->data_end - ctx->data;
	cap = len < c->snaplen ? len : c->snaplen;
	/* Bounds the verifier can see: 1..FB_CAP_SNAP_MAX. */
	if (cap > FB_CAP_SNAP_MAX)
		cap = FB_CAP_SNAP_MAX;
	if (cap < 1 || bpf_xdp_load_bytes(ctx, 0, b->data, cap))
		cap = 0;
	b->rec.ts_ns = bpf_ktime_get_ns();
	b->rec.len = len;
	b->rec.caplen = cap;
	b->rec.tag = c->tag;
	b->rec.ifindex = ctx->ingress_ifindex;
	b->rec.rxq = ctx->rx_queue_index;
	b->rec.verdict = verdict;
	b->rec.kind = what >> 8;
	b->rec.parse = what >> 16;
	b->rec.flags = what >> 24;
	/* Default wake-up: the reader is woken when it has caught up, once
	 * per batch, not per record. */
	if (bpf_ringbuf_output(ring, &b->rec, sizeof(b->rec) + cap, 0))
		b->stat[FB_CAP_STAT_LOST]++;
	return verdict;
}

/* Where the program keeps its ctx for fb_capture(): volatile, so on the
 * stack rather than in a register (see below). */
typedef struct xdp_md *volatile fb_cap_slot;

/*
 * The data path's one call, after the verdict; returns the verdict. ctx
 * comes from a stack slot the program filled on entry and the packet's
 * verdict is what the capture function returns, so that neither has to
 * stay in a register to the end of the program for this call: kept there,
 * ctx cost 4-5 % of a packet's time (the compiler had one register fewer
 * for everything else; tests/bench/bench_capture.c), the slot nothing
 * measurable.
 */
static __always_inline int fb_capture(fb_cap_slot *ctx, int verdict, __u32 kind, int parse,
				      __u32 flags)
{
	if (*(volatile __u32 *)&fb_cap.on)
		return fb_capture_packet(*ctx, (__u32)verdict | kind << 8 | (__u32)parse << 16 |
						       flags << 24);
	return verdict;
}
#endif

#endif
