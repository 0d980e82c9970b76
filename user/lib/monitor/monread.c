// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading the monitoring maps (see monmaps.h): statistics, the seen-set's
 * fill, sketch snapshots and estimates, the top flows, error bounds.
 * Creating, pinning and sharing them is monmaps.c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "monitor/monmaps.h"
#include "report.h"

int fb_monitor_read_stats(const struct fb_monitor *m, struct fb_mon_stats *out)
{
	int ncpu = libbpf_num_possible_cpus(), c, i;
	struct fb_mon_stats *per;
	__u32 zero = 0;

	memset(out, 0, sizeof(*out));
	if (m->stats_fd < 0)
		return 0;
	if (ncpu < 1)
		return -1;
	per = calloc(ncpu, sizeof(*per));
	if (!per) {
		fb_report_err("out of memory");
		return -1;
	}
	if (bpf_map_lookup_elem(m->stats_fd, &zero, per)) {
		fb_report_err("cannot read %s/mstats: %s", m->dir, strerror(errno));
		free(per);
		return -1;
	}
	for (c = 0; c < ncpu; c++)
		for (i = 0; i < FB_MON_STAT_SLOTS; i++)
			out->c[i] += per[c].c[i];
	free(per);
	return 0;
}

__u64 fb_monitor_seen_gen(const struct fb_monitor *m)
{
	const struct fb_seen_clock *clk = (const void *)m->seen;

	return clk ? *(const volatile __u64 *)&clk->gen : 0;
}

double fb_monitor_seen_fill(const struct fb_monitor *m)
{
	__u64 set = 0, gen, tag, v;
	__u32 i;

	if (!m->seen)
		return 0;
	/* The generation the data path last saw (slot 0). */
	gen = fb_monitor_seen_gen(m);
	tag = fb_seen_tag(gen);
	for (i = FB_SEEN_HDR_SLOTS; i < m->cfg.seen_slots; i++) {
		v = m->seen[i].w[gen & 1];
		if ((v & FB_SEEN_TAG_MASK) == tag)
			set += __builtin_popcountll(v & ~FB_SEEN_TAG_MASK);
	}
	return (double)set / ((double)(m->cfg.seen_slots - FB_SEEN_HDR_SLOTS) * FB_SEEN_BITS);
}

int fb_monitor_snap_sum(const struct fb_monitor *m, struct fb_mon_snap *s, const void *plane0,
			size_t stride, __u32 planes)
{
	const struct fb_mon_config *c = &m->cfg;
	size_t n = (size_t)c->depth << c->shift, i;
	__u32 p;

	s->shift = c->shift;
	s->depth = c->depth;
	s->cells = calloc(n, sizeof(*s->cells));
	if (!s->cells) {
		fb_report_err("out of memory");
		return -1;
	}
	for (p = 0; p < planes; p++) {
		const volatile struct fb_mon_cell *pl =
			(const void *)((const char *)plane0 + p * stride);

		for (i = 0; i < n; i++) {
			s->cells[i].packets += pl[i].packets;
			s->cells[i].bytes += pl[i].bytes;
		}
	}
	/* Every packet adds to exactly one cell of each row. */
	for (i = 0; i < (1U << c->shift); i++) {
		s->packets += s->cells[i].packets;
		s->bytes += s->cells[i].bytes;
	}
	return 0;
}

int fb_monitor_snap_take(const struct fb_monitor *m, struct fb_mon_snap *s)
{
	memset(s, 0, sizeof(*s));
	if (!m->cells) {
		fb_report_err("no sketch in %s (attach with --monitor)", m->dir);
		return -1;
	}
	return fb_monitor_snap_sum(m, s, (const void *)m->cells,
				   ((size_t)m->cfg.depth << m->cfg.shift) * sizeof(*m->cells),
				   m->cfg.planes);
}

void fb_monitor_snap_free(struct fb_mon_snap *s)
{
	free(s->cells);
	s->cells = NULL;
}

int fb_monitor_snap_pair(const struct fb_monitor *m,
			 int (*take)(const struct fb_monitor *m, struct fb_mon_snap *s),
			 struct fb_mon_snap *lower, struct fb_mon_snap *upper)
{
	if (take(m, lower))
		return -1;
	if (take(m, upper)) {
		fb_monitor_snap_free(lower);
		return -1;
	}
	return 0;
}

void fb_monitor_estimate(const struct fb_monitor *m, const struct fb_mon_snap *s,
			 const struct fb_mon_snap *base, const struct fb_key *key, __u64 *packets,
			 __u64 *bytes)
{
	__u64 h = fb_mon_hash(key, m->kw), p = ~0ULL, b = ~0ULL, cp, cb;
	__u32 i, at;

	for (i = 0; i < s->depth; i++) {
		at = (i << s->shift) + fb_mon_col(h, i, s->shift);
		cp = s->cells[at].packets;
		cb = s->cells[at].bytes;
		if (base) {
			/* Cells only grow; but a reader racing the writers
			 * may see a base cell ahead of the later copy. */
			cp = cp > base->cells[at].packets ? cp - base->cells[at].packets : 0;
			cb = cb > base->cells[at].bytes ? cb - base->cells[at].bytes : 0;
		}
		p = cp < p ? cp : p;
		b = cb < b ? cb : b;
	}
	*packets = p;
	*bytes = b;
}

struct cand {
	__u64 fp;
	struct fb_key key;
};

static int cmp_fp(const void *a, const void *b)
{
	__u64 x = ((const struct cand *)a)->fp, y = ((const struct cand *)b)->fp;

	return x < y ? -1 : x > y;
}

static bool top_by_bytes;

static int cmp_entry(const void *a, const void *b)
{
	const struct fb_top_entry *x = a, *y = b;
	__u64 kx = top_by_bytes ? x->bytes : x->packets, ky = top_by_bytes ? y->bytes : y->packets;
	__u64 tx = top_by_bytes ? x->packets : x->bytes, ty = top_by_bytes ? y->packets : y->bytes;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (tx != ty)
		return tx > ty ? -1 : 1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

int fb_monitor_top(const struct fb_monitor *m, const struct fb_mon_snap *s,
		   const struct fb_mon_snap *base, bool by_bytes, size_t n,
		   struct fb_top_entry **out)
{
	const struct fb_mon_config *c = &m->cfg;
	size_t nc = 0, i, u;
	struct fb_top_entry *e;
	struct cand *cand;
	__u32 p, b;
	int w;

	*out = NULL;
	if (!m->top) {
		fb_report_err("no sketch in %s (attach with --monitor)", m->dir);
		return -1;
	}
	cand = calloc((size_t)c->top_planes * FB_TOP_BUCKETS * FB_TOP_WAYS, sizeof(*cand));
	if (!cand) {
		fb_report_err("out of memory");
		return -1;
	}
	for (p = 0; p < c->top_planes; p++)
		for (b = 0; b < FB_TOP_BUCKETS; b++)
			for (w = 0; w < FB_TOP_WAYS; w++) {
				__u64 fp = *(volatile __u64 *)&m->top[p].b[b].fp[w];

				if (!fp)
					continue;
				cand[nc].key = m->keys[p].k[b * FB_TOP_WAYS + w];
				/* The program writes the key, then the
				 * fingerprint, as we read: keep only keys that
				 * hash to theirs. */
				if (fb_mon_hash(&cand[nc].key, m->kw) != fp)
					continue;
				cand[nc++].fp = fp;
			}
	qsort(cand, nc, sizeof(*cand), cmp_fp);
	e = calloc(nc ? nc : 1, sizeof(*e));
	if (!e) {
		free(cand);
		fb_report_err("out of memory");
		return -1;
	}
	for (i = 0, u = 0; i < nc; i++) {
		if (i && cand[i].fp == cand[i - 1].fp)
			continue;
		e[u].key = cand[i].key;
		fb_monitor_estimate(m, s, base, &e[u].key, &e[u].packets, &e[u].bytes);
		/* Over an interval, a flow that sent nothing in it is no talker. */
		if (!base || e[u].packets)
			u++;
	}
	free(cand);
	top_by_bytes = by_bytes;
	qsort(e, u, sizeof(*e), cmp_entry);
	*out = e;
	return (int)(u < n ? u : n);
}

double fb_monitor_epsilon(const struct fb_monitor *m)
{
	return M_E / (double)(1U << m->cfg.shift);
}

double fb_monitor_delta(const struct fb_monitor *m)
{
	return exp(-(double)m->cfg.depth);
}
