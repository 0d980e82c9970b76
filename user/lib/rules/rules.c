// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rule insertion: bits (or counters), then the prefix lengths rules need. */
#define _GNU_SOURCE
#include "types/bits.h"
#include "types/counting.h"
#include "store/exact.h"
#include "types/ftype.h"
#include "report.h"
#include "rules/rules.h"
#include "store/head.h"

/* By the rule's family, never by its address: an IPv6 prefix expanded
 * into ::ffff:0:0/96 stays an IPv6 rule. */
int fb_rules_prefix_list(const struct fb_key *k)
{
	return fb_prefix_list(k->kind, k->family); /* as the data path picks it */
}

int fb_rules_merge_lengths(struct fb_prefixes *px, const struct fb_key *keys, size_t n, size_t *bad)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int l = fb_rules_prefix_list(&keys[i]), j;
		struct fb_lengths *ls;

		if (l < 0)
			continue;
		ls = &px->list[l];
		for (j = 0; j < ls->n; j++)
			if (ls->len[j] == keys[i].plen)
				break;
		if (j < ls->n)
			continue;
		if (ls->n == FB_MAX_LENGTHS) {
			*bad = i;
			return -1;
		}
		ls->len[ls->n++] = keys[i].plen;
	}
	return 0;
}

const char *fb_rules_prefix_list_name(int l)
{
	static const char *const names[FB_PFX_NR] = { "IPv4 source", "IPv6 source",
						      "IPv4 destination", "IPv6 destination" };

	return l >= 0 && l < FB_PFX_NR ? names[l] : "?";
}

int fb_rules_add(struct fb_store *f, const struct fb_key *keys, size_t n, size_t *bad)
{
	struct fb_prefixes *px = (struct fb_prefixes *)&f->blocks[1], next = *px;
	__u32 kinds = 0;
	size_t i;
	int l;

	if (fb_rules_merge_lengths(&next, keys, n, bad))
		return -1;
	for (i = 0; i < n; i++)
		kinds |= FB_KINDF(keys[i].kind);
	/* Another filter type: its all-or-nothing add first, so a refused
	 * batch changes nothing (not even the exact sets). A new rule is
	 * briefly a hit the exact set cannot confirm yet: not a match. */
	if (f->hdr->type) {
		struct fb_batch_err e = { 0, 0 };
		int r = fb_ftype_add(f, keys, n, &e);

		if (r == -1) {
			*bad = e.bad;
			f->refused_load = e.load;
			return -3;
		}
		if (r) {
			if (r == -2)
				fb_report_err("out of memory adding %zu rules to '%s'", n, f->name);
			return -2;
		}
	}
	/* A scalable filter's add may have grown it into a new array. */
	px = (struct fb_prefixes *)&f->blocks[1];
	/* Exact sets before bits: every Bloom hit must be confirmable. */
	for (i = 0; f->hdr->confirm && i < n; i++)
		if (fb_exact_adjust(f, &keys[i], 1))
			return -2;
	if (f->hdr->type) {
		f->hdr->nflows += n;
	} else if (f->cnt_hdr) {
		fb_counting_add_many(f, keys, n);
	} else {
		fb_bits_set_many(f, keys, n);
		f->hdr->nflows += n;
	}
	/* Then the lengths: new ones are appended (the order of a list does
	 * not change what matches), each written before the count that makes
	 * it visible. Then the kind flags. The data path thus never probes
	 * for rules whose bits are not all set. */
	for (l = 0; l < FB_PFX_NR; l++) {
		struct fb_lengths *cur = &px->list[l];
		int j;

		for (j = cur->n; j < next.list[l].n; j++) {
			cur->len[j] = next.list[l].len[j];
			__atomic_store_n(&cur->n, j + 1, __ATOMIC_RELEASE);
		}
	}
	__atomic_fetch_or(&f->hdr->kinds, kinds, __ATOMIC_RELEASE);
	/* Then the probe table the data path reads (store/head.h). */
	return fb_head_sync(f, fb_store_live(f)) ? -2 : 0;
}
