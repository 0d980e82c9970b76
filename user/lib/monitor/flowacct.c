// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The accounting table's reader (see flowacct.h; the data path's side is
 * bpf/flowacct.bpf.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "monitor/flowacct.h"
#include "report.h"

#define TCP_FIN 0x01
#define TCP_RST 0x04

struct recs {
	struct fb_acct_rec *r;
	size_t n, cap;
};

static __u64 load64(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store64(__u64 *p, __u64 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static struct fb_acct_hdr *plane(const struct fb_monitor *m, __u32 cpu)
{
	return (struct fb_acct_hdr *)((char *)m->flows + (size_t)cpu * m->plane_bytes);
}

static struct fb_acct_bucket *bucket(struct fb_acct_hdr *h, __u32 i)
{
	return (struct fb_acct_bucket *)(h + 1) + i;
}

/* The CLOCK_MONOTONIC time of a jiffy j near the entry's first packet:
 * the entry carries its own (first_ns, first_j) pair, and jiffies follow
 * CLOCK_MONOTONIC one tick at a time. */
static __u64 last_ns(const struct fb_acct_flow *e, __u64 tick, __u64 now)
{
	__u32 dj = *(const volatile __u32 *)&e->last_j - (__u32)e->first_j;
	__u64 t = e->first_ns + (__u64)dj * tick;

	/* A jiffy is as good as a tick: never after now. */
	return t < now ? t : now;
}

static int add_rec(struct recs *rs, const struct fb_acct_flow *e, __u64 packets, __u64 bytes,
		   __u64 end_ns, __u8 reason)
{
	struct fb_acct_rec *r;

	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 1024;
		struct fb_acct_rec *n = realloc(rs->r, cap * sizeof(*n));

		if (!n) {
			fb_report_err("out of memory");
			return -1;
		}
		rs->r = n;
		rs->cap = cap;
	}
	r = &rs->r[rs->n++];
	memset(r, 0, sizeof(*r));
	r->key = e->key;
	r->packets = packets;
	r->bytes = bytes;
	r->start_ns = e->done_ns;
	r->end_ns = end_ns < r->start_ns ? r->start_ns : end_ns;
	r->ifindex = e->ifindex;
	r->tcp_flags = e->tcp_flags;
	r->icmp = e->icmp;
	r->vlan = e->vlan;
	r->tos = e->tos;
	r->verdict = e->verdict;
	r->reason = reason;
	memcpy(r->smac, e->smac, 6);
	memcpy(r->dmac, e->dmac, 6);
	return 0;
}

/* Why a live flow ends now, or 0 (then perhaps an active-timeout record). */
static __u8 due(const struct fb_acct_flow *e, const struct fb_acct_pass *o, __u64 last)
{
	__u64 quiet = o->now_ns > last ? o->now_ns - last : 0;
	__u16 flags = *(const volatile __u16 *)&e->tcp_flags;

	if (o->end_all)
		return FB_ACCT_END_FORCED;
	if ((flags & TCP_RST) || ((flags & TCP_FIN) && quiet >= o->fin_ns))
		return FB_ACCT_END_FLOW;
	if (quiet >= o->idle_ns)
		return FB_ACCT_END_IDLE;
	return 0;
}

/* One way: read it, end it or export its news. */
static int visit(const struct fb_monitor *m, const struct fb_acct_pass *o, struct recs *rs,
		 __u64 *fp, struct fb_acct_flow *e, __u64 tick)
{
	__u64 v = load64(fp), packets, bytes, last;
	__u32 dj;
	__u8 reason;

	if (v == FB_ACCT_FREE)
		return 0;
	if (v == FB_ACCT_TOMB) {
		/* Ended by an earlier pass (or an earlier reader): no packet
		 * adds to it any more. */
		packets = e->packets - e->done_packets;
		bytes = e->bytes - e->done_bytes;
		reason = e->end_reason ? e->end_reason : FB_ACCT_END_FORCED;
		if (packets && add_rec(rs, e, packets, bytes, last_ns(e, tick, o->now_ns), reason))
			return -1;
		store64(fp, FB_ACCT_FREE);
		return 0;
	}
	last = last_ns(e, tick, o->now_ns);
	reason = due(e, o, last);
	if (reason) {
		e->end_reason = reason;
		store64(fp, FB_ACCT_TOMB);
		return 0;
	}
	(void)m;
	if (o->now_ns < e->done_ns || o->now_ns - e->done_ns < o->active_ns)
		return 0;
	/* Active timeout: what came since the last record, the flow going
	 * on. A packet counted while we read (packets before bytes) shows
	 * in the next record: each count is exported exactly once. */
	packets = *(volatile __u64 *)&e->packets;
	bytes = *(volatile __u64 *)&e->bytes;
	if (packets > e->done_packets && add_rec(rs, e, packets - e->done_packets,
						 bytes - e->done_bytes, last, FB_ACCT_END_ACTIVE))
		return -1;
	e->done_packets = packets;
	e->done_bytes = bytes;
	e->done_ns = o->now_ns;
	/* The next packet writes its own time there (the next record's
	 * start); done_ns first, for a packet that reads the mark. */
	__atomic_store_n(&e->mark, 1, __ATOMIC_RELEASE);
	/* Move the jiffy reference up to the last packet: last_j has 32
	 * bits, and a flow that never goes idle would outlive them (2^32
	 * ticks: 49 days at HZ=1000). The data path writes first_* only when
	 * it takes a free way. */
	dj = *(const volatile __u32 *)&e->last_j - (__u32)e->first_j;
	e->first_j += dj;
	e->first_ns += (__u64)dj * tick;
	return 0;
}

/* Records of one flow (and reason) from several CPUs become one. */
static int cmp_rec(const void *a, const void *b)
{
	const struct fb_acct_rec *x = a, *y = b;
	int c = memcmp(&x->key, &y->key, sizeof(x->key));

	if (c)
		return c;
	if (x->icmp != y->icmp)
		return x->icmp < y->icmp ? -1 : 1;
	if (x->verdict != y->verdict)
		return x->verdict < y->verdict ? -1 : 1;
	return (int)x->reason - (int)y->reason;
}

static size_t merge(struct recs *rs)
{
	size_t i, n = 0;

	if (!rs->n)
		return 0;
	qsort(rs->r, rs->n, sizeof(*rs->r), cmp_rec);
	for (i = 1; i < rs->n; i++) {
		struct fb_acct_rec *a = &rs->r[n], *b = &rs->r[i];

		if (cmp_rec(a, b)) {
			rs->r[++n] = *b;
			continue;
		}
		a->packets += b->packets;
		a->bytes += b->bytes;
		a->tcp_flags |= b->tcp_flags;
		if (b->start_ns < a->start_ns)
			a->start_ns = b->start_ns;
		if (b->end_ns > a->end_ns)
			a->end_ns = b->end_ns;
	}
	return n + 1;
}

int fb_acct_pass(const struct fb_monitor *m, const struct fb_acct_pass *o, fb_acct_fn fn, void *ctx)
{
	__u32 nb = m->cfg.acct_buckets, cpu, i, w;
	__u64 tick = fb_monitor_tick_ns();
	struct recs rs = { 0 };
	size_t n, k;
	int stop = 0;

	if (!m->flows) {
		fb_report_err("no accounting table in %s (attach with --accounting)", m->dir);
		return -1;
	}
	for (cpu = 0; cpu < m->cfg.top_planes; cpu++) {
		struct fb_acct_hdr *h = plane(m, cpu);

		for (i = 0; i < nb; i++) {
			struct fb_acct_bucket *b = bucket(h, i);

			for (w = 0; w < FB_ACCT_WAYS; w++)
				if (visit(m, o, &rs, &b->fp[w], &b->flow[w], tick)) {
					free(rs.r);
					return -1;
				}
		}
	}
	n = merge(&rs);
	for (k = 0; k < n && !stop; k++)
		stop = fn(&rs.r[k], ctx);
	free(rs.r);
	return (int)n;
}

int fb_acct_drain(const struct fb_monitor *m, __u64 now_ns, fb_acct_fn fn, void *ctx)
{
	struct fb_acct_pass o = { .now_ns = now_ns, .end_all = true };
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	int a, b;

	/* Flows ended earlier come out of the first pass; the rest are
	 * ended by it and read by the second, after a pause far longer than
	 * an XDP program runs (microseconds, never preempted). */
	a = fb_acct_pass(m, &o, fn, ctx);
	if (a < 0)
		return -1;
	nanosleep(&pause, NULL);
	b = fb_acct_pass(m, &o, fn, ctx);
	return b < 0 ? -1 : a + b;
}

void fb_acct_totals(const struct fb_monitor *m, struct fb_acct_totals *t)
{
	__u32 nb = m->cfg.acct_buckets, cpu, i, w;

	memset(t, 0, sizeof(*t));
	if (!m->flows)
		return;
	for (cpu = 0; cpu < m->cfg.top_planes; cpu++) {
		const struct fb_acct_hdr *h = plane(m, cpu);

		t->taken += *(const volatile __u64 *)&h->taken;
		t->overflow_packets += *(const volatile __u64 *)&h->overflow_packets;
		t->overflow_bytes += *(const volatile __u64 *)&h->overflow_bytes;
		t->collisions += *(const volatile __u64 *)&h->collisions;
		for (i = 0; i < nb; i++) {
			struct fb_acct_bucket *b = bucket((struct fb_acct_hdr *)h, i);

			for (w = 0; w < FB_ACCT_WAYS; w++) {
				__u64 v = load64(&b->fp[w]);

				t->live += v != FB_ACCT_FREE;
				t->ending += v == FB_ACCT_TOMB;
			}
		}
		t->capacity += (__u64)nb * FB_ACCT_WAYS;
	}
}

int fb_acct_osnap_take(const struct fb_monitor *m, struct fb_mon_snap *s)
{
	memset(s, 0, sizeof(*s));
	if (!m->flows || !(m->cfg.flags & FB_MON_SKETCH)) {
		fb_report_err("no overflow sketch in %s (attach with --accounting --monitor)",
			      m->dir);
		return -1;
	}
	/* The overflow sketch sits in each CPU's plane after its buckets. */
	return fb_monitor_snap_sum(
		m, s, (const char *)plane(m, 0) + fb_acct_osketch_off(m->cfg.acct_buckets),
		m->plane_bytes, m->cfg.top_planes);
}
