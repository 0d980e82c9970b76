// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rule insertion: bits (or counters), then the prefix lengths rules need. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "flowbloom/proto.h"
#include "types/bits.h"
#include "types/counting.h"
#include "store/exact.h"
#include "types/ftype.h"
#include "types/sizing.h"
#include "report.h"
#include "rules/rules.h"
#include "store/replace.h"
#include "rules/flow.h"
#include "rules/prefixes.h"
#include "store/gens.h"
#include "store/head.h"

/* By the rule's family, never by its address: an IPv6 prefix expanded
 * into ::ffff:0:0/96 stays an IPv6 rule. */
int fb_rules_prefix_list(const struct fb_key *k)
{
	return fb_prefix_list(k->kind, k->family); /* as the data path picks it */
}

int fb_rules_masks(const struct fb_prefixes *px, __u32 *d)
{
	int n = 0;

	while (n < FB_MAX_MASKS && (d[n] = fb_mask_get(px->masks, n)))
		n++;
	return n;
}

int fb_rules_add_mask(struct fb_prefixes *px, __u32 d)
{
	__u32 have[FB_MAX_MASKS];
	int n = fb_rules_masks(px, have), i;

	for (i = 0; i < n; i++)
		if (have[i] == d)
			return 0;
	if (n == FB_MAX_MASKS)
		return -1;
	fb_mask_put(px->masks, n, d);
	return 0;
}

int fb_rules_merge_lengths(struct fb_prefixes *px, const struct fb_key *keys, size_t n, size_t *bad)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int l = fb_rules_prefix_list(&keys[i]), j;
		struct fb_lengths *ls;

		if (keys[i].kind == FB_KIND_MASK) {
			if (fb_rules_add_mask(px, fb_mask_of_key(&keys[i], NULL))) {
				*bad = i;
				return -4;
			}
			continue;
		}
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

static bool all_zero(const __u8 *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

int fb_rules_valid(const struct fb_key *k, char *why, size_t len)
{
	const char *fam = k->family == FB_FAMILY_IPV4 ? "IPv4" : "IPv6";

	if (k->kind < FB_KIND_FLOW || k->kind >= FB_KIND_MAX) {
		snprintf(why, len, "unknown rule kind %u", k->kind);
		return -1;
	}
	if (k->family != FB_FAMILY_IPV4 && k->family != FB_FAMILY_IPV6) {
		snprintf(why, len, "unknown address family %u", k->family);
		return -1;
	}
	if (k->kind == FB_KIND_MASK) {
		/* A shape's key: a valid mask, and the key that mask builds
		 * from the key's own values (markers and flags in place). */
		struct fb_key v, again;
		__u32 d = fb_mask_of_key(k, &v);

		v.kind = FB_KIND_FLOW;
		fb_mask_key(&again, &v, d);
		if (!fb_mask_valid(d) || memcmp(&again, k, sizeof(again))) {
			snprintf(why, len, "not the key of a rule shape");
			return -1;
		}
		if (k->family == FB_FAMILY_IPV4 &&
		    ((FB_MASK_SLEN(d) && !fb_addr_v4mapped(v.saddr)) ||
		     (FB_MASK_DLEN(d) && !fb_addr_v4mapped(v.daddr)))) {
			snprintf(why, len, "IPv4 rule without an IPv4 address");
			return -1;
		}
		return 0;
	}
	if (k->kind != FB_KIND_FLOW) {
		const __u8 *a = k->kind == FB_KIND_SRC ? k->saddr : k->daddr;
		const __u8 *other = k->kind == FB_KIND_SRC ? k->daddr : k->saddr;
		__u8 masked[16];
		int i;

		if (k->plen > 128 || (k->family == FB_FAMILY_IPV4 && k->plen < 96)) {
			snprintf(why, len, "%s prefix length %d is out of range", fam,
				 k->family == FB_FAMILY_IPV4 ? k->plen - 96 : k->plen);
			return -1;
		}
		if (k->family == FB_FAMILY_IPV4 && !fb_addr_v4mapped(a)) {
			snprintf(why, len, "IPv4 rule without an IPv4 address");
			return -1;
		}
		for (i = 0; i < 16; i++) {
			int keep = (int)k->plen - 8 * i;

			masked[i] = keep >= 8	? a[i]
				    : keep <= 0 ? 0
						: a[i] & (__u8)(0xff << (8 - keep));
		}
		if (memcmp(masked, a, 16)) {
			snprintf(why, len, "address bits set beyond the prefix length");
			return -1;
		}
		if (!all_zero(other, 16) || k->sport || k->dport || k->proto) {
			snprintf(why, len, "address rule with other fields set");
			return -1;
		}
		return 0;
	}
	if (k->plen) {
		snprintf(why, len, "5-tuple with a prefix length");
		return -1;
	}
	if (k->family == FB_FAMILY_IPV4 &&
	    (!fb_addr_v4mapped(k->saddr) || !fb_addr_v4mapped(k->daddr))) {
		snprintf(why, len, "IPv4 5-tuple without IPv4 addresses");
		return -1;
	}
	if (!fb_proto_has_ports(k->proto) && (k->sport || k->dport)) {
		snprintf(why, len, "protocol %u has no ports", k->proto);
		return -1;
	}
	if (k->family == FB_FAMILY_IPV6 && fb_proto_ipv6_ext(k->proto)) {
		snprintf(why, len,
			 "IPv6 protocol %u is an extension header: packets are keyed by the "
			 "protocol after it, so the rule would never match",
			 k->proto);
		return -1;
	}
	return 0;
}

const char *fb_rules_prefix_list_name(int l)
{
	static const char *const names[FB_PFX_NR] = { "IPv4 source", "IPv6 source",
						      "IPv4 destination", "IPv6 destination" };

	return l >= 0 && l < FB_PFX_NR ? names[l] : "?";
}

/* What the data path probes for, once the rules are placed: the prefix
 * lengths (next) and rule kinds of the batch, then the probe table. */
struct probed {
	const struct fb_prefixes *next;
	__u32 kinds;
};

static int publish_probed(struct fb_store *f, void *arg)
{
	const struct probed *pr = arg;
	struct fb_prefixes *px = fb_store_prefixes(f);
	int l;

	/* New lengths are appended (the order of a list does not change
	 * what matches), each written before the count that makes it
	 * visible. Then the kind flags. */
	for (l = 0; l < FB_PFX_NR; l++) {
		struct fb_lengths *cur = &px->list[l];
		int j;

		for (j = cur->n; j < pr->next->list[l].n; j++) {
			cur->len[j] = pr->next->list[l].len[j];
			__atomic_store_n(&cur->n, j + 1, __ATOMIC_RELEASE);
		}
	}
	/* New masks are appended likewise (fb_mask_put's stores release). */
	{
		__u32 have[FB_MAX_MASKS], want[FB_MAX_MASKS];
		int h = fb_rules_masks(px, have), w = fb_rules_masks(pr->next, want), j;

		for (j = h; j < w; j++)
			fb_mask_put(px->masks, j, want[j]);
	}
	__atomic_fetch_or(&f->hdr->kinds, pr->kinds, __ATOMIC_RELEASE);
	/* Then the probe table the data path reads (store/head.h). */
	return fb_head_sync(f, fb_store_live(f)) ? -2 : 0;
}

/* Rules a replace adds to a cuckoo or d-left table it fills aside (no
 * program reads it, and a refusal drops it whole): a chunk at a time, so
 * that the plan of the stores (types/plan.h) and the rules' hashes are a
 * chunk's, not the list's (about 40 bytes a rule). The rules go in in
 * the same order: the same table, the same refusal. */
enum { TABLE_CHUNK = 16384 };

static int ftype_add(struct fb_store *f, const struct fb_key *keys, size_t n,
		     struct fb_batch_err *e, const struct fb_batch_ready *rd)
{
	bool chunks = f->aside && (f->hdr->type == FB_TYPE_CUCKOO || f->hdr->type == FB_TYPE_DLEFT);
	size_t s = 0, c;
	int r;

	do {
		c = chunks && n - s > TABLE_CHUNK ? TABLE_CHUNK : n - s;
		r = fb_ftype_add_ready(f, keys + s, c, e, rd);
		if (r == -1)
			e->bad += s;
		s += c;
	} while (!r && s < n);
	return r;
}

/* fb_rules_add(); eb: what the exact sets held before (for the undo). */
static int rules_add(struct fb_store *f, const struct fb_key *keys, size_t n, size_t *bad,
		     struct fb_exact_batch *eb)
{
	struct fb_prefixes next = *fb_store_prefixes(f);
	struct probed pr = { &next, 0 };
	size_t i;

	int r = fb_rules_merge_lengths(&next, keys, n, bad);

	if (r)
		return r;
	for (i = 0; i < n; i++)
		pr.kinds |= FB_KINDF(keys[i].kind);
	/* Exact sets before bits: every hit must be confirmable (a new rule
	 * is briefly in its exact set with no hit yet: not a match). A batch
	 * the sets cannot take (full) is taken out of them again: a refused
	 * batch changes nothing. */
	if (f->hdr->confirm && fb_exact_add_many(f, keys, NULL, n, eb))
		return -2;
	/* Another filter type: its all-or-nothing add (which counts the
	 * flows), the exact sets undone if it refuses. What the data path
	 * probes for goes in once the batch fits: before a cuckoo or d-left
	 * table changes (a batch a killed writer left is rolled back by the
	 * next one, batchlog.h: lengths with no rule stay, as after a del),
	 * after a scalable filter's bits. */
	if (f->hdr->type) {
		struct fb_batch_err e = { 0, 0 };
		struct fb_batch_ready rd = { publish_probed, &pr };
		int r = ftype_add(f, keys, n, &e, &rd);

		if (r && f->hdr->confirm)
			fb_exact_undo_many(f, eb);
		if (r == -1) {
			*bad = e.bad;
			f->refused_load = e.load;
			return -3;
		}
		if (r == -2)
			fb_report_err("out of memory adding %zu rules to '%s'", n, f->name);
		return r ? -2 : 0;
	}
	if (f->cnt_hdr) {
		fb_counting_add_many(f, keys, n);
	} else {
		fb_bits_set_many(f, keys, n);
		f->hdr->nflows = fb_flows_add(f->hdr->nflows, n, f->hdr->nblocks);
	}
	/* Bits before lengths: the data path never probes for rules whose
	 * bits are not all set. */
	return publish_probed(f, &pr);
}

int fb_rules_add(struct fb_store *f, const struct fb_key *keys, size_t n, size_t *bad)
{
	struct fb_exact_batch eb = { 0 };
	int r = rules_add(f, keys, n, bad, &eb);

	fb_exact_batch_free(&eb);
	return r;
}

struct rules_arg {
	const struct fb_key *keys;
	size_t n, *bad;
	const struct fb_block *geom; /* another filter type's new geometry */
	struct fb_store *f;	     /* told the load factor of a refusal */
	__u64 capacity;		     /* what the new array is sized for, or 0 */
};

static int fill_rules(struct fb_store *nf, void *arg)
{
	struct rules_arg *r = arg;

	/* Another filter type: its new geometry, before any rule. */
	if (nf->hdr->type && r->geom)
		memcpy(&nf->blocks[FB_TYPE_GEOM_BLOCK], r->geom,
		       fb_type_geom_blocks(nf->hdr->type) * FB_BLOCK_BYTES);
	if (r->capacity)
		nf->hdr->capacity = r->capacity;
	if (fb_rules_add(nf, r->keys, r->n, r->bad)) {
		r->f->refused_load = nf->refused_load;
		return -1;
	}
	return 0;
}

int fb_rules_replace(struct fb_store *f, __u32 nblocks, __u8 k, const struct fb_key *keys, size_t n,
		     size_t *bad)
{
	return fb_rules_replace_geom(f, nblocks, k, NULL, 0, keys, n, bad);
}

int fb_rules_replace_geom(struct fb_store *f, __u32 nblocks, __u8 k, const struct fb_block *geom,
			  __u64 capacity, const struct fb_key *keys, size_t n, size_t *bad)
{
	struct rules_arg r = { keys, n, bad, geom, f, capacity };

	*bad = (size_t)-1;
	return fb_replace_fill(f, nblocks, k, n, fill_rules, &r);
}

void fb_rules_mask_text(const struct fb_prefixes *t, const struct fb_key *k, char *buf, size_t len)
{
	__u32 have[FB_MAX_MASKS];
	char name[96];
	int n = fb_rules_masks(t, have), i;
	size_t o;

	fb_mask_name(fb_mask_of_key(k, NULL), name, sizeof(name));
	snprintf(buf, len,
		 "its shape (%s) would be one too many: a filter holds at most %d rule shapes "
		 "(each one probe per packet), and would have:",
		 name, FB_MAX_MASKS);
	o = strlen(buf);
	for (i = 0; i < n && o < len; i++) {
		fb_mask_name(have[i], name, sizeof(name));
		o += snprintf(buf + o, len - o, "%s %s", i ? ";" : "", name);
	}
}

void fb_rules_mask_refusal(const struct fb_prefixes *px, const struct fb_key *keys, size_t bad,
			   char *buf, size_t len)
{
	struct fb_prefixes t = *px;
	size_t j;

	/* The table as the rules before the refused one would have left it. */
	for (j = 0; j < bad; j++)
		if (keys[j].kind == FB_KIND_MASK)
			fb_rules_add_mask(&t, fb_mask_of_key(&keys[j], NULL));
	fb_rules_mask_text(&t, &keys[bad], buf, len);
}

void fb_rules_length_refusal(const struct fb_prefixes *px, const struct fb_key *keys, size_t bad,
			     char *buf, size_t len)
{
	struct fb_prefixes t = *px;
	int l = fb_rules_prefix_list(&keys[bad]), j, i, w[FB_MAX_LENGTHS], n;
	size_t o;

	/* The lists as the rules before the refused one would leave them
	 * (none of those refused: it is the first). */
	fb_rules_merge_lengths(&t, keys, bad, &(size_t){ 0 });
	if (l < 0) {
		snprintf(buf, len, "it needs a prefix length the filter cannot add");
		return;
	}
	snprintf(buf, len,
		 "it would need a %dth %s prefix length: a filter holds at most %d per family "
		 "and direction (each one probe per packet), and would have:",
		 FB_MAX_LENGTHS + 1, fb_rules_prefix_list_name(l), FB_MAX_LENGTHS);
	/* Shortest first, as info lists them (the table's order is its own). */
	n = t.list[l].n < FB_MAX_LENGTHS ? t.list[l].n : FB_MAX_LENGTHS;
	for (j = 0; j < n; j++) {
		int v = fb_prefix_list_written(l, t.list[l].len[j]);

		for (i = j; i > 0 && w[i - 1] > v; i--)
			w[i] = w[i - 1];
		w[i] = v;
	}
	o = strlen(buf);
	for (j = 0; j < n && o < len; j++)
		o += snprintf(buf + o, len - o, " /%d", w[j]);
}

void fb_rules_refusal(int err, const struct fb_prefixes *px, const struct fb_key *keys, size_t bad,
		      char *buf, size_t len)
{
	if (err == -4)
		fb_rules_mask_refusal(px, keys, bad, buf, len);
	else
		fb_rules_length_refusal(px, keys, bad, buf, len);
}

/* A rule held by f as the data path asks (fb_rules_query): its bits, and
 * with --confirm exact its entry in the exact sets; an entry that cannot
 * be read (reported) counts as none, and err says so. */
struct held_ctx {
	const struct fb_store *f;
	bool err;
};

static unsigned rule_held(const struct fb_key *k, void *ctx)
{
	struct held_ctx *c = ctx;
	__u32 n;

	if (!fb_bits_test(c->f, k))
		return 0;
	if (!c->f->hdr->confirm)
		return 1;
	if (fb_exact_get(c->f, k, &n))
		c->err = true;
	return n;
}

int fb_rules_query(const struct fb_store *f, const struct fb_key *k, int *as)
{
	const struct fb_prefixes *px = fb_store_prefixes(f);
	int l = fb_rules_prefix_list(k), i, w = k->kind == FB_KIND_DST ? 2 : 0;
	struct held_ctx c = { f, false };

	*as = 0;
	if (l < 0 || k->plen != 128) {
		if (rule_held(k, &c) ||
		    (l >= 0 && fb_prefixes_held_expanded(k, &px->list[l], rule_held, &c, as)))
			return 1;
		return c.err ? -1 : 0;
	}
	/* An address: its prefix at each length of its list, as the data
	 * path probes them (include/flowbloom/prefix.h). */
	for (i = 0; i < px->list[l].n && i < FB_MAX_LENGTHS; i++) {
		struct fb_key m;

		fb_prefix_key(&m, k->kind, k->w[w], k->w[w + 1], px->list[l].len[i],
			      fb_key_word_family(k->w[4]));
		if (rule_held(&m, &c))
			return 1;
	}
	return c.err ? -1 : 0;
}

int fb_rules_query_gens(const struct fb_store *f, const struct fb_gen_views *gv,
			const struct fb_key *k, int *as)
{
	int g, r = fb_rules_query(f, k, as), rg;

	for (g = 0; g < gv->n && r != 1; g++)
		if ((rg = fb_rules_query(&gv->v[g], k, as)))
			r = rg;
	return r;
}
