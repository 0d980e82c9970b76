/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Flow monitoring on the data path. One NH hash of the flow key feeds the
 * count-min sketch (packets and bytes), the top-talker candidate table and
 * the seen-set (a sketch by address hashes the address's key for the first
 * two: fb_mon_sketch_key()); a flow's first packet of an aging period becomes a
 * ring-buffer event once the verdict is known. Geometry and the reasons for
 * it are in include/flowbloom/monitor.h; measurements in docs/design.md.
 *
 * flowbloom.bpf.c calls fb_monitor() after parsing and
 * fb_monitor_verdict() after the verdict (which also feeds per-flow
 * accounting, bpf/flowacct.bpf.h), both under cfg_mon: read-only
 * data (bpf/config.bpf.h) the loader sets from the filter's monitoring maps.
 * With cfg_mon = 0 (the default, and what an `ip link`-loaded object has)
 * the verifier removes every instruction of it.
 *
 * Cost is instructions while the maps sit in cache: each map is looked up
 * once per packet (a CPU's whole plane is one map value) and rows are
 * addressed by pointer arithmetic, so nothing is spilled around helper
 * calls; widths are powers of two, so a column is one shift.
 */
#ifndef FLOWBLOOM_MONITOR_BPF_H
#define FLOWBLOOM_MONITOR_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/monitor.h"
#include "config.bpf.h"
#include "maps.bpf.h"

#define FB_READ_ONCE(x) (*(const volatile __u64 *)&(x))
#define FB_WRITE_ONCE(x, v) (*(volatile __u64 *)&(x) = (v))
/* A few tries of the compare-and-swap that claims a stale seen word; only
 * other CPUs inserting into the very same word can make one fail. */
#define FB_SEEN_CAS_TRIES 4

#include "flowacct.bpf.h"

_Static_assert(FB_MON_BY_SRC > (FB_MON_SKETCH | FB_MON_NEWFLOWS | FB_MON_ATOMIC | FB_MON_ACCT) &&
		       FB_MON_BY_DST > FB_MON_BY_SRC,
	       "cfg_mon >= FB_MON_BY_SRC: a sketch by address");

/* One of the two pairs of ways of a top bucket (w0 = 0: by packets, 2: by
 * bytes): refresh the flow's score if it is resident, else take the way of
 * a resident not offered for two epochs (fb_top_stale()), or of the
 * lighter resident if the flow now outweighs it. The key is written
 * before the fingerprint that claims it; readers check the key's hash
 * against the fingerprint anyway, since they read while CPUs write. */
static __always_inline void fb_top_update(struct fb_top_bucket *b, __u32 cpu, __u32 bidx, int w0,
					  __u64 h, __u64 est, __u64 epoch, const struct fb_key *key)
{
	__u64 score = fb_top_score(epoch, est), s0 = b->score[w0], s1 = b->score[w0 + 1];
	struct fb_key *k;
	int w;

	if (b->fp[w0] == h) {
		b->score[w0] = score;
		return;
	}
	if (b->fp[w0 + 1] == h) {
		b->score[w0 + 1] = score;
		return;
	}
	/* A stale resident weighs nothing: any newcomer outweighs it. */
	s0 = fb_top_stale(s0, epoch) ? 0 : s0 & FB_TOP_EST_MAX;
	s1 = fb_top_stale(s1, epoch) ? 0 : s1 & FB_TOP_EST_MAX;
	w = s1 < s0 ? w0 + 1 : w0;
	if (est <= (w == w0 ? s0 : s1))
		return;
	k = bpf_map_lookup_elem(&fb_top_keys, &cpu);
	if (!k)
		return;
	k += bidx * FB_TOP_WAYS + w;
	k->w[0] = key->w[0];
	k->w[1] = key->w[1];
	k->w[2] = key->w[2];
	k->w[3] = key->w[3];
	k->w[4] = key->w[4];
	b->fp[w] = h;
	b->score[w] = score;
}

/* One row: add the packet to the flow's cell, return the cell's packets. */
static __always_inline __u64 fb_mon_row(struct fb_mon_cell *c, __u64 bytes, __u32 atomic,
					__u64 *cell_bytes)
{
	__u64 p, b;

	if (atomic) {
		p = __sync_fetch_and_add(&c->packets, 1) + 1;
		b = __sync_fetch_and_add(&c->bytes, bytes) + bytes;
	} else {
		p = c->packets + 1;
		b = c->bytes + bytes;
		c->packets = p;
		c->bytes = b;
	}
	*cell_bytes = b;
	return p;
}

/* Add the packet to one cell per row, and offer the flow to the top table
 * with the smaller of its first two rows on this CPU's plane: enough to
 * rank candidates (user space scores them with every row and plane), and
 * a mouse sharing a heavy flow's cell in both rows is a 1 in w^2 event.
 * Per-CPU planes need no atomics: XDP runs one packet at a time per CPU. */
static __always_inline void fb_mon_sketch(__u64 h, const struct fb_key *key, __u64 bytes, __u32 cpu)
{
	/* Read-only data is volatile to the compiler: read it once. The
	 * verifier knows the values, so the atomic branch and the rows past
	 * depth disappear at load. */
	__u32 shift = cfg_mon_shift, depth = cfg_mon_depth, atomic = cfg_mon & FB_MON_ATOMIC;
	/* h1 and h2 | 1 in the upper halves: g_i = h1 + i * h2 mod 2^32. */
	__u64 g = h << 32, step = (h & 0xffffffff00000000ULL) | (1ULL << 32);
	__u64 est_p, est_b, p, b, width = 1ULL << shift, right = 64 - shift, epoch;
	struct fb_mon_cell *row;
	struct fb_top_bucket *bucket;
	__u32 plane = atomic ? 0 : cpu, bidx, i;

	row = bpf_map_lookup_elem(&fb_sketch, &plane);
	if (!row)
		return;
	/* Rows 0 and 1 first, for the estimate; the rest need no bookkeeping,
	 * which keeps the loop's values in registers. */
	est_p = fb_mon_row(row + (g >> right), bytes, atomic, &est_b);
	row += width;
	g += step;
	if (depth > 1) {
		p = fb_mon_row(row + (g >> right), bytes, atomic, &b);
		row += width;
		g += step;
		est_p = p < est_p ? p : est_p;
		est_b = b < est_b ? b : est_b;
	}
	/* Unrolled; a break here would give the loop two exits, which clang
	 * refuses to unroll. */
#pragma unroll
	for (i = 2; i < FB_MON_MAX_DEPTH; i++) {
		if (i >= depth)
			continue;
		fb_mon_row(row + (g >> right), bytes, atomic, &b);
		row += width;
		g += step;
	}

	/* Offer the flow only when its estimate is a multiple of 16: about
	 * one in 16 of a heavy flow's packets, so the table costs almost
	 * nothing per packet (a heavy newcomer waits ~16 packets longer), and
	 * mice never churn it. Or when it is 1, the first packet of a flow
	 * alone in its cells: on a quiet link, a flow of a few packets still
	 * shows up in `top`. */
	if (est_p != 1 && (est_p & (FB_TOP_EVERY - 1)))
		return;
	bucket = bpf_map_lookup_elem(&fb_top, &cpu);
	if (!bucket)
		return;
	bidx = fb_top_index(h);
	bucket += bidx;
	epoch = bpf_jiffies64() / cfg_top_epoch_jiffies;
	fb_top_update(bucket, cpu, bidx, 0, h, est_p, epoch, key);
	fb_top_update(bucket, cpu, bidx, 2, h, est_b, epoch, key);
}

/* The current aging generation: jiffies / age_jiffies, kept in slot 0 of
 * the seen map with the jiffy where the next one starts, so the division
 * runs once per period. bpf_jiffies64() is one load once the verifier
 * inlines it (bpf_ktime_get_coarse_ns() is a helper call, ~11 ns here).
 * Whoever sees the boundary first writes gen, then next_jiffy: a CPU that
 * reads the new next_jiffy reads the new gen too (x86 keeps store order;
 * elsewhere a packet at the boundary may still use the old generation). */
static __always_inline __u64 fb_seen_now(struct fb_seen_clock *clk)
{
	__u64 j = bpf_jiffies64(), age = cfg_seen_age_jiffies, gen;

	if (j >= FB_READ_ONCE(clk->next_jiffy)) {
		gen = j / age;
		FB_WRITE_ONCE(clk->gen, gen);
		FB_WRITE_ONCE(clk->next_jiffy, (gen + 1) * age);
	}
	return FB_READ_ONCE(clk->gen);
}

int fb_monitor_new(struct xdp_md *ctx, const struct fb_key *key, __u64 h, __u64 bytes, int verdict);
int fb_mon_sketch_addr(const struct fb_key *key, __u64 bytes);

/* Seen this aging period? One load of the slot's current word answers for
 * almost every packet. */
static __always_inline int fb_mon_seen(__u64 h)
{
	struct fb_seen_slot *s;
	__u32 zero = 0;
	__u64 gen, mask, v;

	s = bpf_map_lookup_elem(&fb_seen, &zero);
	if (!s)
		return 1;
	gen = fb_seen_now((struct fb_seen_clock *)s);
	s += fb_seen_index(h, cfg_seen_slots);
	mask = fb_seen_mask(h);
	/* Both words: one cache line, and no variable offset for the verifier
	 * to over-approximate past the map's end. */
	v = gen & 1 ? FB_READ_ONCE(s->w[1]) : FB_READ_ONCE(s->w[0]);
	return (v & FB_SEEN_TAG_MASK) == fb_seen_tag(gen) && (v & mask) == mask;
}

/*
 * The per-packet part, inlined before the filter's probes (a function call
 * costs ~8 ns here): hash, sketch, top table, seen check. A flow that may
 * be new this period leaves its hash in this CPU's scratch slot for
 * fb_monitor_verdict(), once the verdict is known. Kept in a map rather
 * than a variable: the verifier cannot tell the two outcomes apart, so it
 * does not check everything after this twice (the program is large).
 */
static __always_inline void fb_monitor(const struct fb_key *key, __u64 bytes)
{
	__u64 kw[FB_MON_NH_WORDS] = { cfg_mon_nh[0], cfg_mon_nh[1], cfg_mon_nh[2],
				      cfg_mon_nh[3], cfg_mon_nh[4], cfg_mon_nh[5] };
	__u64 h = fb_mon_hash(key, kw);
	struct fb_mon_stats *st;
	__u32 zero = 0;

	/* The seen check first: its load then overlaps the sketch's work.
	 * Written on every packet, so a packet that leaves the program
	 * without reaching the verdict cannot pass its flow to the next. */
	if (cfg_mon & FB_MON_NEWFLOWS) {
		st = bpf_map_lookup_elem(&fb_mon_stats, &zero);
		if (st)
			st->c[FB_MON_STAT_PENDING] = fb_mon_seen(h) ? 0 : h;
	}
	/* A sketch by address has FB_MON_BY_SRC or FB_MON_BY_DST here in
	 * place of FB_MON_SKETCH (the loader's choice), the highest bits:
	 * a sketch by flow meets the one test it always met, and the path
	 * it never takes costs it nothing once the verifier removed it. */
	if (cfg_mon & FB_MON_SKETCH)
		fb_mon_sketch(h, key, bytes, bpf_get_smp_processor_id());
	else if (cfg_mon >= FB_MON_BY_SRC)
		fb_mon_sketch_addr(key, bytes);
}

/*
 * A sketch by address (attach --sketch-by src|dst): the packet counted
 * under its address alone (fb_mon_sketch_key()), so a flood spread over
 * ever new ports is one heavy key, not thousands of light flows; the
 * seen-set keeps the flow's own hash. A function of its own: the masked
 * key's 40 bytes of stack would take the program past the 512 bytes its
 * deepest chain of calls may use, and a sketch by flow pays nothing for it
 * (the verifier removes the call).
 */
__attribute__((noinline)) int fb_mon_sketch_addr(const struct fb_key *key, __u64 bytes)
{
	__u64 kw[FB_MON_NH_WORDS] = { cfg_mon_nh[0], cfg_mon_nh[1], cfg_mon_nh[2],
				      cfg_mon_nh[3], cfg_mon_nh[4], cfg_mon_nh[5] };
	struct fb_key a;

	if (!key)
		return 0; /* the verifier wants the check */
	fb_mon_sketch_key(key, cfg_mon, &a);
	fb_mon_sketch(fb_mon_hash(&a, kw), &a, bytes, bpf_get_smp_processor_id());
	return 0;
}

/* After the verdict: report the flow fb_monitor() found new, if any (a
 * flow whose hash is 0, one in 2^64, is never reported). */
static __always_inline void fb_monitor_verdict(struct xdp_md *ctx, const struct fb_key *key,
					       __u64 bytes, int verdict)
{
	struct fb_mon_stats *st;
	__u32 zero = 0;
	__u64 h;

	/* Per-flow accounting (bpf/flowacct.bpf.h): after the verdict, which
	 * is part of a flow record. */
	if (cfg_mon & FB_MON_ACCT)
		fb_flowacct(ctx, key, verdict, bytes);
	if (!(cfg_mon & FB_MON_NEWFLOWS))
		return;
	st = bpf_map_lookup_elem(&fb_mon_stats, &zero);
	if (!st || !st->c[FB_MON_STAT_PENDING])
		return;
	h = st->c[FB_MON_STAT_PENDING];
	st->c[FB_MON_STAT_PENDING] = 0;
	fb_monitor_new(ctx, key, h, bytes, verdict);
}

/*
 * A flow's first packet this period, or nearly: insert it, and report it
 * unless another CPU just did or the previous generation has it (then it
 * is only carried over, so a long flow never ages out). fetch_or and
 * cmpxchg make exactly one CPU see the flow's bits go in.
 *
 * A global function: the verifier checks it once, on its own, instead of
 * once more for every path through the probes that reaches the verdict
 * (with prefix rules those multiply past its limit), and the call is paid
 * only by new flows.
 */
__attribute__((noinline)) int fb_monitor_new(struct xdp_md *ctx, const struct fb_key *key, __u64 h,
					     __u64 bytes, int verdict)
{
	struct fb_seen_slot *s;
	struct fb_mon_event *e;
	struct fb_mon_stats *st;
	__u64 *cur, gen, mask, tag, v, prev;
	__u32 zero = 0;
	int i, fresh = 0;

	s = bpf_map_lookup_elem(&fb_seen, &zero);
	st = bpf_map_lookup_elem(&fb_mon_stats, &zero);
	if (!key || !s || !st)
		return 0; /* the verifier wants the checks */
	gen = fb_seen_now((struct fb_seen_clock *)s);
	s += fb_seen_index(h, cfg_seen_slots);
	mask = fb_seen_mask(h);
	tag = fb_seen_tag(gen);
	cur = gen & 1 ? &s->w[1] : &s->w[0];
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
		return 0;
	prev = gen & 1 ? FB_READ_ONCE(s->w[0]) : FB_READ_ONCE(s->w[1]);
	if ((prev & FB_SEEN_TAG_MASK) == fb_seen_tag(gen - 1) && (prev & mask) == mask) {
		st->c[FB_MON_STAT_REFRESHED]++;
		return 0;
	}
	st->c[FB_MON_STAT_NEW]++;
	e = bpf_ringbuf_reserve(&fb_newflows, sizeof(*e), 0);
	if (!e) {
		/* Nobody drains the ring fast enough: counted, never silent. */
		st->c[FB_MON_STAT_LOST]++;
		return 0;
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
	/* Wake the reader only once a quarter of the ring is waiting: a wakeup
	 * (irq_work, then a context switch) costs microseconds, and in a flood
	 * of new flows (spoofed sources) every packet brings one. Readers
	 * drain on a short poll timeout anyway. */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&fb_newflows, BPF_RB_AVAIL_DATA) >= cfg_ring_wake
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
	return 0;
}

#endif
