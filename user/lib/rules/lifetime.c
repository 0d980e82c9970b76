// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rules with a lifetime (see lifetime.h): the generation that takes them
 * (store/gens.h keeps the generations themselves), filled by fb_rules_add. */
#include <math.h>
#include <string.h>
#include "report.h"
#include "rules/fit.h"
#include "rules/lifetime.h"
#include "rules/rules.h"
#include "store/gens.h"
#include "store/jiffies.h"
#include "store/counters.h"
#include "store/head.h"
#include "store/replace.h"
#include "types/ftype.h"
#include "types/sizing.h"

/*
 * A generation's size. One as large as its filter costs a packet that no
 * permanent rule matches a read of a random line of another array that
 * large: 40 to 50 ns when the line is not in cache, per live generation
 * (docs/performance.md, Rule lifetimes). So a generation is sized, as the
 * stages of a scalable Bloom filter are (Almeida et al. 2007), for what
 * it is expected to hold: FB_GEN_GROWTH times the rules of its batch and
 * of the generations already in its window, at least FB_GEN_MIN_BLOCKS
 * (4 KiB, which a probe finds in cache), at most the filter's own size,
 * with the filter's k or the data path's other fast k (8), whichever
 * needs fewer bits. Its rate is gen_rate(): full, all FB_GEN_SLOTS
 * generations together add at most the filter's own target per packet
 * (1 % for a filter made by geometry) to the permanent rules', at
 * FB_GEN_PROBES probes a packet.
 *
 * A full generation takes no more; the next batch of its window opens
 * one FB_GEN_GROWTH times larger, and the window's FB_GEN_STAGES-th is as
 * large as the filter and takes every batch, as the filter does: a
 * uniform lifetime has at most 5 windows live (docs/design.md), so it
 * never needs more than 15 of the 16 slots. Only when every slot is in
 * use does a batch go into a full generation of its window, while that
 * one's rate stays within the filter's whole target (fb_gens_room());
 * past that it is refused.
 */
#define FB_GEN_GROWTH 4
#define FB_GEN_STAGES 3
#define FB_GEN_MIN_BLOCKS 64
#define FB_GEN_PROBES 8
#define FB_GEN_DEFAULT_RATE 0.01

/* The per-probe rate a full generation of f has (slots: how many of the
 * FB_GEN_SLOTS it answers for). */
static double gen_rate(const struct fb_header *h, unsigned slots)
{
	double p = h->fp_ppb ? h->fp_ppb / 1e9 : FB_GEN_DEFAULT_RATE;

	return fb_probe_target(p * slots / FB_GEN_SLOTS, FB_GEN_PROBES);
}

__u32 fb_gens_blocks(const struct fb_header *h, double n, __u8 *k)
{
	__u32 max = fb_gen_max_blocks(h->nblocks),
	      min = FB_GEN_MIN_BLOCKS < max ? FB_GEN_MIN_BLOCKS : max, b, b8;
	double q = gen_rate(h, 1), want = n * FB_GEN_GROWTH;

	*k = h->k;
	b = fb_size_fixed_k(h->layout, h->k, want, q, min, max);
	if (h->layout != FB_LAYOUT_BLOCKED || h->k == FB_FAST_K_HI)
		return b;
	/* The data path's other fast k where it needs fewer bits (a short
	 * list's k = 4 at a generation's stricter rate), or the same bits at
	 * a lower rate. */
	b8 = fb_size_fixed_k(h->layout, FB_FAST_K_HI, want, q, min, max);
	if (b8 < b ||
	    (b8 == b && fb_fpr_blocked(want, b, FB_FAST_K_HI) < fb_fpr_blocked(want, b, h->k))) {
		*k = FB_FAST_K_HI;
		return b8;
	}
	return b;
}

double fb_gens_capacity(const struct fb_header *h, const struct fb_gen *g)
{
	if (g->nblocks >= fb_gen_max_blocks(h->nblocks))
		return INFINITY;
	return fb_capacity_at(h->layout, g->k, g->nblocks, gen_rate(h, 1));
}

int fb_gens_room(const struct fb_header *h, const struct fb_gen *g, double n)
{
	double want = (double)g->nflows + n;

	if (want <= fb_gens_capacity(h, g))
		return 1;
	return want <= fb_capacity_at(h->layout, g->k, g->nblocks, gen_rate(h, FB_GEN_SLOTS)) ? 2
											      : 0;
}

/* Where a batch of n added now for secs goes: 0, generation
 * p->gl[p->pick] opened into gs; 1, none fits (a new one, expiring at
 * p->hi, for p->band rules, after p->in_window others of the window); -2
 * reported. */
struct gens_pick {
	struct fb_gen gl[FB_GEN_SLOTS];
	int ng, pick, spare, in_window;
	__u64 hi;
	double band, n;
};

static int gens_pick(struct fb_store *f, double secs, size_t n, struct gens_pick *p,
		     struct fb_store *gs, struct fb_gen *where)
{
	__u64 lo, span;
	int i, room;

	if (fb_gens_supported(f))
		return -2;
	if (fb_gens_reclaim(f) < 0)
		return -2;
	/* Not before secs from now; by secs / FB_GEN_DIV after that. */
	lo = fb_jiffies_after(secs);
	span = (__u64)(secs / FB_GEN_DIV / fb_jiffies_tick());
	p->hi = lo + span;
	p->ng = fb_gens_list(f, p->gl);
	if (p->ng < 0)
		return -2;
	p->band = p->n = (double)n;
	p->in_window = 0;
	for (p->pick = p->spare = -1, i = 0; i < p->ng; i++) {
		if (p->gl[i].expires < lo || p->gl[i].expires > p->hi || !p->gl[i].nblocks)
			continue;
		p->band += (double)p->gl[i].nflows;
		p->in_window++;
		room = p->pick < 0 ? fb_gens_room(f->hdr, &p->gl[i], (double)n) : 0;
		if (room == 1)
			p->pick = i;
		else if (room == 2 && p->spare < 0)
			p->spare = i;
	}
	/* Every slot in use: a full generation of the window, within the
	 * filter's whole rate. */
	if (p->pick < 0 && p->ng == FB_GEN_SLOTS)
		p->pick = p->spare;
	if (p->pick < 0)
		return 1;
	if (fb_gen_open(f, p->gl[p->pick].g, gs))
		return -2;
	if (where)
		*where = p->gl[p->pick];
	return 0;
}

/* A new generation for the batch (gens_pick() said 1), opened into gs:
 * 0, -4 every slot in use (reported), -2. */
static int gens_new(struct fb_store *f, const struct gens_pick *p, struct fb_store *gs,
		    struct fb_gen *where)
{
	struct fb_header tmpl = *f->hdr;
	__u32 used = f->hdr->gens;
	unsigned g;

	for (g = 0; g < FB_GEN_SLOTS && (used & 1U << g); g++)
		;
	if (g == FB_GEN_SLOTS) {
		if (p->in_window)
			fb_report_err(
				"all %d generations of '%s' are in use, and those these "
				"rules' lifetime ends in are full (%.0f rules): nothing added",
				FB_GEN_SLOTS, f->name, p->band - p->n);
		else
			fb_report_err("all %d generations of '%s' hold rules with other lifetimes "
				      "(they end within %.0f s): nothing added",
				      FB_GEN_SLOTS, f->name, p->gl[p->ng - 1].secs);
		return -4;
	}
	if (p->in_window + 1 >= FB_GEN_STAGES)
		tmpl.nblocks = fb_gen_max_blocks(f->hdr->nblocks);
	else
		tmpl.nblocks = fb_gens_blocks(f->hdr, p->band, &tmpl.k);
	if (fb_gen_make(f, &tmpl, f->hdr->gen, g, p->hi, gs))
		return -2;
	__atomic_fetch_or(&f->hdr->gens, 1U << g, __ATOMIC_RELEASE);
	if (where) {
		where->g = g;
		where->slot = fb_gen_range(f->hdr->gen, g);
		where->expires = p->hi;
		where->nblocks = gs->hdr->nblocks;
		where->k = gs->hdr->k;
	}
	return 0;
}

/* The batch into generation gs, which is closed. */
static int gens_fill(struct fb_store *gs, const struct fb_key *keys, size_t n, size_t *bad,
		     struct fb_gen *where)
{
	int rc = fb_rules_add(gs, keys, n, bad);

	if (where) {
		where->nflows = gs->hdr->nflows;
		where->secs = fb_jiffies_secs(where->expires);
	}
	fb_gen_close(gs);
	return rc;
}

int fb_gens_add(struct fb_store *f, const struct fb_key *keys, size_t n, double secs, size_t *bad,
		struct fb_gen *where)
{
	struct fb_prefixes none = { 0 };
	struct gens_pick p;
	struct fb_store gs;
	int rc;

	*bad = (size_t)-1;
	rc = gens_pick(f, secs, n, &p, &gs, where);
	if (rc == 1) {
		/* A new generation: refuse rules needing too many prefix
		 * lengths or shapes before making it. */
		rc = fb_rules_merge_lengths(&none, keys, n, bad);
		if (rc) {
			if (where)
				memset(&where->px, 0, sizeof(where->px));
			return rc;
		}
		rc = gens_new(f, &p, &gs, where);
	} else if (!rc && where) {
		/* The table a refused rule is refused by. */
		where->px = *fb_store_prefixes(&gs);
	}
	return rc ? rc : gens_fill(&gs, keys, n, bad, where);
}

int fb_gens_add_fit(struct fb_store *f, struct fb_key *keys, size_t *n, double secs,
		    const struct fb_fit_ops *ops, size_t *bad, struct fb_gen *where)
{
	static const struct fb_prefixes none;
	struct fb_prefixes fresh = none;
	struct gens_pick p;
	struct fb_store gs;
	int rc = gens_pick(f, secs, *n, &p, &gs, where);

	if (rc < 0)
		return rc;
	/* Fitted into the table of the generation they go to (a new one's
	 * is empty); no generation is made if none of them is left. */
	fb_fit_batch(rc ? &none : fb_store_prefixes(&gs), keys, n, ops);
	if (!*n) {
		if (!rc)
			fb_gen_close(&gs);
		return 0;
	}
	if (rc == 1) {
		if (fb_rules_merge_lengths(&fresh, keys, *n, bad))
			return -1; /* not fitted: no memory */
		rc = gens_new(f, &p, &gs, where);
	}
	return rc ? rc : gens_fill(&gs, keys, *n, bad, where);
}

int fb_gens_fresh(struct fb_store *nf, const struct fb_key *keys, size_t n, double secs,
		  size_t *bad)
{
	struct fb_prefixes none = { 0 };
	struct fb_header tmpl;
	struct fb_store gs;
	__u64 hi;
	int rc;

	nf->hdr->gens = 0;
	if (fb_gens_supported(nf))
		return -2;
	rc = fb_rules_merge_lengths(&none, keys, n, bad);
	if (rc)
		return rc;
	hi = fb_jiffies_after(secs) + (__u64)(secs / FB_GEN_DIV / fb_jiffies_tick());
	tmpl = *nf->hdr;
	tmpl.nblocks = fb_gens_blocks(nf->hdr, (double)n, &tmpl.k);
	if (fb_gen_make(nf, &tmpl, nf->hdr->gen, 0, hi, &gs))
		return -2;
	/* Named at once: a failed replace retires what its mask names. */
	nf->hdr->gens = 1;
	rc = fb_rules_add(&gs, keys, n, bad);
	fb_gen_close(&gs);
	return rc;
}

struct timed_arg {
	const struct fb_store *f;
	const struct fb_key *keys;
	size_t n, *bad;
	double secs;
	int refused; /* fb_gens_fresh()'s -1 or -4 for rule *bad */
};

/* The old filter's permanent rules as they are (same geometry), then one
 * generation holding the new list. */
static int fill_timed(struct fb_store *nf, void *arg)
{
	struct timed_arg *t = arg;
	const struct fb_store *f = t->f;

	/* The logical array after the header: prefix lengths and shapes,
	 * then the bits (the probe table follows by fb_head_sync()). */
	memcpy(nf->blocks + 1, f->blocks + 1,
	       ((size_t)f->hdr->nblocks + FB_HDR_BLOCKS - 1) * FB_BLOCK_BYTES);
	nf->hdr->kinds = f->hdr->kinds;
	nf->hdr->nflows = f->hdr->nflows;
	if (f->cnt_hdr)
		memcpy(nf->cnt, f->cnt,
		       fb_counting_data_bytes(fb_header_mbits(f->hdr), f->hdr->counter_bits));
	/* They are f's permanent rules still, and say so (head.h): a writer
	 * of its own copies there (bgp) finds them where it left them. */
	fb_store_head(nf)->keys.perm_id = f->perm_id;
	int rc = fb_gens_fresh(nf, t->keys, t->n, t->secs, t->bad);

	if (rc == -1 || rc == -4)
		t->refused = rc;
	return rc ? -1 : 0;
}

int fb_replace_timed(struct fb_store *f, const struct fb_key *keys, size_t n, double secs,
		     size_t *bad)
{
	struct timed_arg t = { f, keys, n, bad, secs, 0 };

	*bad = (size_t)-1;
	if (fb_gens_supported(f))
		return -1;
	if (!fb_replace_fill(f, f->hdr->nblocks, f->hdr->k, 0, fill_timed, &t))
		return 0;
	if (!t.refused)
		*bad = (size_t)-1;
	return t.refused ? t.refused : -1;
}

int fb_gens_packet(const struct fb_store *f, unsigned *probes, double *fp_rate)
{
	struct fb_gen_views gv;
	double miss;
	int i, n;

	*probes = fb_probes_per_packet(f->hdr->kinds, fb_store_prefixes(f));
	*fp_rate = fb_packet_rate(fb_ftype_fpr_now(f), *probes);
	n = fb_gens_views_open(f, &gv);
	if (n <= 0)
		return n;
	/* A packet passes when it passes the permanent rules' probes and
	 * every generation's: the rates combine as independent misses, in
	 * logs (1 - 1e-19 is 1 in a double: a product of misses would read a
	 * rate of 0). */
	miss = log1p(-*fp_rate);
	for (i = 0; i < n; i++) {
		const struct fb_store *g = &gv.v[i];
		unsigned p = fb_probes_per_packet(g->hdr->kinds, fb_store_prefixes(g));

		*probes += p;
		miss += log1p(-fb_packet_rate(fb_ftype_fpr_now(g), p));
	}
	*fp_rate = -expm1(miss);
	fb_gens_views_close(&gv);
	return n;
}
