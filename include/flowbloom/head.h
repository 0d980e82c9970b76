/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The head: the first page of a filter's chunk 0 (geometry.h, "Physical
 * layout"), everything the data path reads per packet besides the bits,
 * found with one lookup. Its last two blocks are the header and the prefix
 * table (logical blocks 0 and 1); before them, what user space derives
 * from those for the data path: the NH key words and the probe table.
 *
 * Probe descriptors (tuple space search, Srinivasan, Suri, Varghese 1999:
 * one probe per distinct rule shape present). A rule is stored as a key
 * built from the packet's key by keeping some bits and fixing others; a
 * descriptor says which, as (key & mask) | set over the key's five 64-bit
 * words, and the data path probes each descriptor of the packet's family
 * in order, first hit wins:
 *   5-tuple rules:          mask all ones, set 0 (the parser's key itself);
 *   source prefix /L:       mask = the first L address bits of words 0-1
 *                           and the family byte of word 4, set = kind and
 *                           L in word 4 (fb_prefix_key(), prefix.h);
 *   destination prefix /L:  the same over words 2-3;
 *   any other rule shape:   fb_mask_andor() of its mask (mask.h), whose
 *                           key fb_mask_key() defines.
 * So every filter hashes the same keys it always did, and a new rule shape
 * (a partial 5-tuple) is one more descriptor, not more code in the data
 * path. At most FB_MAX_PROBES per family bound the verifier's loop.
 *
 * With NH (FB_HASH_NHK) the hash is a sum of one term per word, each the
 * product of two 32-bit sums of a half of the word and a half of the key
 * word (hash.h). The builder (fb_probe_nh) prepares each descriptor so the
 * data path needs no key words: a word the descriptor fixes whatever the
 * packet (mask 0; words 0 and 2 of an IPv4 packet, which the parser always
 * writes 0: ::ffff:a.b.c.d; the family byte of word 4, the list's own)
 * adds a constant term, summed into `base`, and gets mask 0 and set 0,
 * which the data path skips; in every other word `set` holds its halves
 * already added to the key word's (the packet's bits under the mask and
 * `set` never overlap, so the halves add without carries: rule keys and
 * probes agree). The data path then adds the terms of the words left, two
 * loads and a multiply each (one word for an IPv4 prefix, three for an
 * IPv4 5-tuple), and Dharmapurikar et al.'s probe per prefix length costs
 * a few multiplies, not a keyed hash of 40 bytes.
 */
#ifndef FLOWBLOOM_HEAD_H
#define FLOWBLOOM_HEAD_H

#include <linux/types.h>
#include "geometry.h"
#include "hash.h"
#include "key.h"
#include "mask.h"
#include "prefix.h"

#define FB_FAMILIES 2
/* Per family: 1 flow + 4 source + 4 destination lengths + FB_MAX_MASKS
 * shapes (all of one family at worst). */
#define FB_MAX_PROBES (1 + 2 * FB_MAX_LENGTHS + FB_MAX_MASKS)

/* What a descriptor needs of the packet (fb_probe.flags); the data path
 * skips descriptors whose needs the packet does not meet. */
enum {
	FB_PROBEF_ADDRS = 1,  /* its addresses are known (a malformed packet may have them) */
	FB_PROBEF_PARSED = 2, /* protocol as keyed: parsed, or malformed only in its upper layer */
	FB_PROBEF_PORTS = 4,  /* real ports: read from its transport header (a cut one too) */
	FB_PROBEF_TUPLE = 8,  /* the key's ports are the packet's: PORTS, or a protocol without
			       * ports (a later fragment of one with ports has them elsewhere) */
};

struct fb_probe {
	__u64 mask[5];
	__u64 set[5]; /* FB_HASH_NHK: with the key word's halves added (fb_probe_nh) */
	__u64 base;   /* FB_HASH_NHK: the sum of the terms of the fixed words */
	__u8 kind;    /* enum fb_kind a hit reports */
	__u8 flags;   /* FB_PROBEF_* the packet must have */
	__u8 plen;    /* prefix rules: the length (for printing) */
	__u8 pad;
	__u32 shape; /* FB_KIND_MASK: the mask (mask.h), for confirmation and the trace */
};

_Static_assert(sizeof(struct fb_probe) == 96, "a probe descriptor is 96 bytes");

/* What user space keeps in the head beside the table: the NH key words
 * the table was built with (hash.h, fb_nhk_words) and the secret they came
 * from, and the filter array's identity: the id of the chunk 0 that create
 * or a replace made, which a swap of the head (same filter, new table)
 * keeps (store.h, bits_id); and its permanent rules' identity: the
 * array_id of the array they were written in, which a replace of the
 * rules with a lifetime only (load --replace --ttl) carries over with
 * them; 0 (create, any other replace, an earlier build): this array's
 * own (store.h, perm_id). Not read by the data path. */
struct fb_head_keys {
	__u64 kw[FB_NHK_WORDS];
	__u64 key_of[2];
	__u32 array_id;
	__u32 perm_id;
};

_Static_assert(sizeof(struct fb_head_keys) == FB_BLOCK_BYTES, "key words are one block");

#define FB_HEAD_RESERVED                                                                           \
	(FB_HEAD_SHIFT -                                                                           \
	 (FB_FAMILIES * FB_MAX_PROBES * sizeof(struct fb_probe)) / FB_BLOCK_BYTES - 1)

struct fb_head {
	struct fb_probe probe[FB_FAMILIES][FB_MAX_PROBES]; /* blocks 0..50 */
	struct fb_head_keys keys;			   /* block 51 */
	struct fb_block reserved[FB_HEAD_RESERVED];	   /* blocks 52..61 */
	struct fb_header hdr;				   /* logical block 0 */
	struct fb_prefixes px;				   /* logical block 1 */
};

_Static_assert(sizeof(struct fb_head) == FB_PAGE_BYTES, "the head is one page");
_Static_assert(FB_HEAD_RESERVED > 0, "the probe table fits the head");

/* Family index of a key's family byte (0 IPv4, 1 IPv6): arithmetic, no
 * test, so the verifier checks the probe loop once for both families. */
static __always_inline __u32 fb_head_family(__u8 family)
{
	return family & FB_FAMILY_IPV6;
}

/* NH's term of word i for a descriptor fb_probe_nh() prepared. */
static __always_inline __u64 fb_probe_term(const struct fb_probe *p, const __u64 *w, int i)
{
	__u64 m = fb_le64(w[i] & p->mask[i]), d = p->set[i];

	return (__u64)(__u32)((__u32)m + (__u32)d) * (__u32)((__u32)(m >> 32) + (__u32)(d >> 32));
}

/* FB_HASH_NHK of a packet's key words w under a descriptor of an NH
 * filter: the filter's hash of the key fb_probe_key() makes, by
 * construction (tests/unit). */
static __always_inline __u64 fb_probe_nhk(const struct fb_probe *p, const __u64 *w)
{
	__u64 h = p->base;
	int i;

	/* A word the descriptor fixes (mask 0) has a term of 0: skipped. The
	 * branches follow the descriptor, the same for every packet (an IPv4
	 * source prefix reads one word of five). */
#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < 5; i++)
		if (p->mask[i])
			h += fb_probe_term(p, w, i);
	return fb_fmix64(h);
}

/* The same under the other hashes: of the key itself. */
static __always_inline __u64 fb_probe_hash(const struct fb_probe *p, const __u64 *w, __u8 alg,
					   const __u64 key[2], const __u64 *kw)
{
	__u64 k[5];
	int i;

	if (alg == FB_HASH_NHK)
		return fb_probe_nhk(p, w);
#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < 5; i++)
		k[i] = (w[i] & p->mask[i]) | p->set[i];
	return fb_hash_with(k, alg, key, kw);
}

/* The key descriptor p probes for a packet's key (user space: queries,
 * tests), for a descriptor before fb_probe_nh() (fb_probes_build() with
 * kw NULL). */
static inline void fb_probe_key(const struct fb_probe *p, const struct fb_key *pkt,
				struct fb_key *out)
{
	int i;

	for (i = 0; i < 5; i++)
		out->w[i] = (pkt->w[i] & p->mask[i]) | p->set[i];
}

/* Descriptors of the shapes there are. */
static inline void fb_probe_flow(struct fb_probe *p)
{
	int i;

	__builtin_memset(p, 0, sizeof(*p));
	for (i = 0; i < 5; i++)
		p->mask[i] = ~0ULL;
	p->kind = FB_KIND_FLOW;
	/* A 5-tuple fixes its ports, 0 included: a later fragment of a
	 * protocol with ports (key port 0) must not meet `udp A:0 B:0`. */
	p->flags = FB_PROBEF_ADDRS | FB_PROBEF_PARSED | FB_PROBEF_TUPLE;
}

static inline void fb_probe_prefix(struct fb_probe *p, __u32 kind, __u8 plen)
{
	int w = kind == FB_KIND_DST ? 2 : 0;

	__builtin_memset(p, 0, sizeof(*p));
	p->mask[w] = fb_prefix_mask(plen, 0);
	p->mask[w + 1] = fb_prefix_mask(plen, 1);
	p->mask[4] = fb_key_word_family(~0ULL);
	p->set[4] = fb_key_word_tail(0, 0, 0, kind, plen, 0);
	p->kind = kind;
	p->flags = FB_PROBEF_ADDRS;
	p->plen = plen;
}

/* A rule shape's descriptor: mask d's (and, or) pair (mask.h). It needs
 * the packet's addresses; a fixed protocol needs a packet parsed whole, a
 * fixed port real ports (a malformed packet, a later fragment or a
 * protocol without ports never meets it). */
static inline void fb_probe_mask(struct fb_probe *p, __u32 d)
{
	__builtin_memset(p, 0, sizeof(*p));
	fb_mask_andor(d, p->mask, p->set);
	p->kind = FB_KIND_MASK;
	p->flags = FB_PROBEF_ADDRS | (FB_MASK_PROTO(d) || FB_MASK_PORTS(d) ? FB_PROBEF_PARSED : 0) |
		   (FB_MASK_PORTS(d) ? FB_PROBEF_PORTS : 0);
	p->shape = d;
}

/* For a FB_HASH_NHK filter, in a list for family fam (0 IPv4, 1 IPv6):
 * the terms of the words p fixes into base, the key words' halves into set
 * (see the top of this file). -1 if mask and set overlap in a word (the
 * halves would not add without carries). */
static inline int fb_probe_nh(struct fb_probe *p, __u32 fam, const __u64 *kw)
{
	int i;

	p->base = 0;
	/* Word 4's family byte is the list's own (fam): fixed, like the
	 * words an IPv4 packet always has 0 in, so a prefix's word 4 is
	 * all fixed. */
	if (p->mask[4] & fb_key_word_family(~0ULL)) {
		p->mask[4] &= ~fb_key_word_family(~0ULL);
		p->set[4] |= fb_key_word_tail(0, 0, 0, 0, 0, fam);
	}
	for (i = 0; i < 5; i++) {
		__u64 s = fb_le64(p->set[i]);
		__u32 lo = (__u32)s + (__u32)kw[i], hi = (__u32)(s >> 32) + (__u32)(kw[i] >> 32);

		if (p->mask[i] & p->set[i])
			return -1;
		/* Words 0 and 2 of an IPv4 packet are 0 (the parser writes
		 * ::ffff:a.b.c.d, bpf/parsing.bpf.h). */
		if (!p->mask[i] || (fam == 0 && (i == 0 || i == 2))) {
			p->base += fb_nh_step(s, kw[i]);
			p->mask[i] = 0;
			p->set[i] = 0;
			continue;
		}
		p->set[i] = (__u64)hi << 32 | lo;
	}
	return 0;
}

/*
 * The probe table of a filter: per family, the 5-tuple descriptor if it
 * holds 5-tuple rules, then one per source length, then one per
 * destination length, in the order of the prefix table (the order lengths
 * were added: a new length is a new last descriptor, so a table can grow
 * in place), then one per rule shape of the family in the mask table's
 * order (replay --explain reports the first that holds a packet). For an NH filter the descriptors are prepared with the key
 * words kw (fb_probe_nh; kw NULL: left as the keys they make, for tests).
 * Returns -1 if a list is longer than FB_MAX_LENGTHS (a table this build
 * does not probe).
 */
static inline int fb_probes_build(const struct fb_header *hdr, const struct fb_prefixes *px,
				  const __u64 *kw, struct fb_probe out[FB_FAMILIES][FB_MAX_PROBES],
				  __u8 nprobe[FB_FAMILIES])
{
	__u32 fam, j;
	int d;

	for (fam = 0; fam < FB_FAMILIES; fam++) {
		__u8 n = 0;

		if (hdr->kinds & FB_KINDF(FB_KIND_FLOW))
			fb_probe_flow(&out[fam][n++]);
		for (d = 0; d < 2; d++) {
			__u32 kind = d ? FB_KIND_DST : FB_KIND_SRC;
			const struct fb_lengths *l = &px->list[fb_prefix_list(kind, fam)];

			if (!(hdr->kinds & FB_KINDF(kind)))
				continue;
			if (l->n > FB_MAX_LENGTHS)
				return -1;
			for (j = 0; j < l->n; j++)
				fb_probe_prefix(&out[fam][n++], kind, l->len[j]);
		}
		for (j = 0; j < FB_MAX_MASKS && (hdr->kinds & FB_KINDF(FB_KIND_MASK)); j++) {
			__u32 m = fb_mask_get(px->masks, j);

			if (!m)
				break;
			if (FB_MASK_FAMILY(m) != fam)
				continue;
			fb_probe_mask(&out[fam][n++], m);
		}
		for (j = 0; j < n && kw && hdr->hash == FB_HASH_NHK; j++)
			if (fb_probe_nh(&out[fam][j], fam, kw))
				return -1;
		nprobe[fam] = n;
	}
	return 0;
}

/* Does the filter take the data path's fast loop (NH, blocked Bloom)? */
static inline __u8 fb_probes_fast(const struct fb_header *hdr)
{
	return hdr->hash == FB_HASH_NHK && hdr->type == FB_TYPE_BLOOM &&
	       hdr->layout == FB_LAYOUT_BLOCKED;
}

#endif
