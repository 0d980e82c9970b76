/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Flow monitoring on the data path, after the verdict: one NH hash of the
 * flow key feeds the count-min sketch (packets and bytes), the top-talker
 * candidate table, and the seen-set that turns a flow's first packet of an
 * aging period into a ring-buffer event. Geometry and the reasons for it
 * are in include/flowbloom/monitor.h.
 *
 * Everything here hangs off cfg_mon, read-only data the loader sets from
 * the filter's monitoring maps (user/monitor.c). With cfg_mon = 0 (the
 * default, and what an `ip link`-loaded object has) the verifier removes
 * every instruction of it.
 */
#ifndef FLOWBLOOM_BPF_MONITOR_H
#define FLOWBLOOM_BPF_MONITOR_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/monitor.h"
#include "maps.bpf.h"

const volatile __u32 cfg_mon = 0; /* FB_MON_*; 0: no monitoring */
const volatile __u32 cfg_mon_width = 1;
const volatile __u32 cfg_mon_depth = 1;
const volatile __u64 cfg_mon_key[2] = { 0, 0 };
const volatile __u32 cfg_top_buckets = 1;
const volatile __u32 cfg_seen_slots = 1;
const volatile __u32 cfg_seen_k = 1;
const volatile __u32 cfg_seen_age_mult = 1;

#define FB_READ_ONCE(x) (*(const volatile __u64 *)&(x))
/* A few tries of the compare-and-swap that claims a stale seen word; only
 * other CPUs inserting into the very same word can make one fail. */
#define FB_SEEN_CAS_TRIES 4

/* One of the two pairs of ways of a top bucket (w0 = 0: by packets, 2: by
 * bytes): refresh the flow's score if it is resident, else take the way of
 * the lighter resident if the flow now outweighs it. The key is written
 * before the fingerprint that claims it; readers check the key's hash
 * against the fingerprint anyway, since they read while CPUs write. */
static __always_inline void fb_top_update(struct fb_top_bucket *b, __u32 bidx, int w0, __u64 h,
					  __u64 est, const struct fb_key *key)
{
	struct fb_key *k;
	__u32 kidx;
	int w;

	if (b->fp[w0] == h) {
		b->score[w0] = est;
		return;
	}
	if (b->fp[w0 + 1] == h) {
		b->score[w0 + 1] = est;
		return;
	}
	w = b->score[w0 + 1] < b->score[w0] ? w0 + 1 : w0;
	if (est <= b->score[w])
		return;
	kidx = bidx * FB_TOP_WAYS + w;
	k = bpf_map_lookup_elem(&fb_top_keys, &kidx);
	if (!k)
		return;
	k->w[0] = key->w[0];
	k->w[1] = key->w[1];
	k->w[2] = key->w[2];
	k->w[3] = key->w[3];
	k->w[4] = key->w[4];
	b->fp[w] = h;
	b->score[w] = est;
}

/* Add the packet to one cell per row, and offer the flow's estimate (the
 * smallest of the cells just updated, this CPU's plane) to the top table.
 * Per-CPU planes need no atomics: XDP runs one packet at a time per CPU. */
static __always_inline void fb_mon_sketch(__u64 h, const struct fb_key *key, __u64 bytes,
					  __u32 cpu)
{
	__u32 width = cfg_mon_width, depth = cfg_mon_depth, plane, idx, i;
	__u64 est_p = ~0ULL, est_b = ~0ULL, p, b;
	struct fb_top_bucket *bucket;
	struct fb_mon_cell *c;

	plane = cfg_mon & FB_MON_ATOMIC ? 0 : cpu;
	/* Unrolled; rows past depth (a constant to the verifier) are dead
	 * code. A break here would give the loop two exits, which clang
	 * refuses to unroll. */
#pragma unroll
	for (i = 0; i < FB_MON_MAX_DEPTH; i++) {
		if (i >= depth)
			continue;
		idx = fb_mon_cell_index(plane, i, fb_mon_col(h, i, width), width, depth);
		c = bpf_map_lookup_elem(&fb_sketch, &idx);
		if (!c)
			continue; /* cannot happen: the map holds every plane */
		if (cfg_mon & FB_MON_ATOMIC) {
			p = __sync_fetch_and_add(&c->packets, 1) + 1;
			b = __sync_fetch_and_add(&c->bytes, bytes) + bytes;
		} else {
			p = c->packets + 1;
			b = c->bytes + bytes;
			c->packets = p;
			c->bytes = b;
		}
		est_p = p < est_p ? p : est_p;
		est_b = b < est_b ? b : est_b;
	}

	idx = cpu * cfg_top_buckets + fb_top_index(h, cfg_top_buckets);
	bucket = bpf_map_lookup_elem(&fb_top, &idx);
	if (!bucket)
		return;
	fb_top_update(bucket, idx, 0, h, est_p, key);
	fb_top_update(bucket, idx, 2, h, est_b, key);
}

/* The flow is not in the current generation (or its word is stale): insert
 * it, and report it unless another CPU just did or the previous generation
 * has it (then it is only carried over, so a long flow never ages out).
 * fetch_or and cmpxchg make exactly one CPU see the flow's bits go in. */
static __always_inline void fb_mon_newflow_slow(struct xdp_md *ctx, struct fb_seen_slot *s,
						__u64 gen, __u64 mask, const struct fb_key *key,
						__u64 bytes, int verdict)
{
	__u64 *cur = &s->w[gen & 1], tag = fb_seen_tag(gen), v, prev;
	struct fb_mon_event *e;
	struct fb_mon_stats *st;
	__u32 zero = 0;
	int i, fresh = 0;

#pragma unroll
	for (i = 0; i < FB_SEEN_CAS_TRIES; i++) {
		v = FB_READ_ONCE(*cur);
		if ((v & FB_SEEN_TAG_MASK) == tag) {
			fresh = (__sync_fetch_and_or(cur, mask) & mask) != mask;
			break;
		}
		/* A word of generation gen - 2 or older: its bits are stale. */
		if (__sync_val_compare_and_swap(cur, v, tag | mask) == v) {
			fresh = 1;
			break;
		}
	}
	if (!fresh)
		return;
	st = bpf_map_lookup_elem(&fb_mon_stats, &zero);
	if (!st)
		return;
	prev = FB_READ_ONCE(s->w[(gen & 1) ^ 1]);
	if ((prev & FB_SEEN_TAG_MASK) == fb_seen_tag(gen - 1) && (prev & mask) == mask) {
		st->c[FB_MON_STAT_REFRESHED]++;
		return;
	}
	st->c[FB_MON_STAT_NEW]++;
	e = bpf_ringbuf_reserve(&fb_newflows, sizeof(*e), 0);
	if (!e) {
		/* Nobody drains the ring fast enough: counted, never silent. */
		st->c[FB_MON_STAT_LOST]++;
		return;
	}
	e->key.w[0] = key->w[0];
	e->key.w[1] = key->w[1];
	e->key.w[2] = key->w[2];
	e->key.w[3] = key->w[3];
	e->key.w[4] = key->w[4];
	e->ts_ns = bpf_ktime_get_ns();
	e->ifindex = ctx->ingress_ifindex;
	e->bytes = bytes;
	e->verdict = verdict;
	__builtin_memset(e->pad, 0, sizeof(e->pad));
	bpf_ringbuf_submit(e, 0);
}

/* Seen this aging period? One load of the slot's current word answers for
 * almost every packet. The coarse clock (jiffies resolution) is plenty for
 * periods of seconds and much cheaper than bpf_ktime_get_ns(). */
static __always_inline void fb_mon_newflow(struct xdp_md *ctx, __u64 h, const struct fb_key *key,
					   __u64 bytes, int verdict)
{
	__u64 gen = fb_seen_gen(bpf_ktime_get_coarse_ns(), cfg_seen_age_mult);
	__u64 mask = fb_seen_mask(h, cfg_seen_k), v;
	__u32 idx = fb_seen_index(h, cfg_seen_slots);
	struct fb_seen_slot *s = bpf_map_lookup_elem(&fb_seen, &idx);

	if (!s)
		return;
	v = FB_READ_ONCE(s->w[gen & 1]);
	if ((v & FB_SEEN_TAG_MASK) == fb_seen_tag(gen) && (v & mask) == mask)
		return;
	fb_mon_newflow_slow(ctx, s, gen, mask, key, bytes, verdict);
}

static __always_inline void fb_monitor(struct xdp_md *ctx, const struct fb_key *key, __u64 bytes,
				       int verdict)
{
	__u64 mkey[2] = { cfg_mon_key[0], cfg_mon_key[1] };
	__u64 h = fb_mon_hash(key, mkey);

	if (cfg_mon & FB_MON_SKETCH)
		fb_mon_sketch(h, key, bytes, bpf_get_smp_processor_id());
	if (cfg_mon & FB_MON_NEWFLOWS)
		fb_mon_newflow(ctx, h, key, bytes, verdict);
}

#endif
