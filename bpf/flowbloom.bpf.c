// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * flowbloom's XDP program: parse -> flow key -> Bloom probe per rule kind
 * (and per rule shape)
 * -> count -> verdict.
 *
 * Per-attachment settings are read-only data the loader sets before load
 * (`flowbloom attach`); an object loaded unchanged by `ip link` keeps the
 * defaults: the filter's own default action, and for malformed packets no
 * address rule decides, drop unless the action is monitor.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/bench.h"
#include "flowbloom/geometry.h"
#include "flowbloom/maps.h"
#include "config.bpf.h"
#include "parsing.bpf.h"
#include "filter.bpf.h"
#include "maps.bpf.h"
#include "monitor.bpf.h"
#include "capture.bpf.h"

__u32 bench_seq;

static __always_inline void fb_count(struct fb_stats *s, int stat, __u64 bytes)
{
	s->c[stat].packets++;
	s->c[stat].bytes += bytes;
}

/* One Bloom probe by hash, as a subprogram: address rules probe up to
 * FB_MAX_LENGTHS times per direction, and one shared copy keeps the
 * program small. */
static __noinline int fb_probe_bloom_sub(void *filter, const struct fb_header *hdr, __u64 h)
{
	return fb_probe_bloom(filter, hdr, h);
}

/* The other types' probe is a global function already: called from here,
 * not from fb_probe_bloom_sub, it keeps the call chain (and the combined
 * stack, 512 bytes at most) one frame shorter. */
static __always_inline int fb_probe_sub(void *filter, const struct fb_header *hdr, __u64 h)
{
	return hdr->type ? fb_probe_typed(hdr->type, h) : fb_probe_bloom_sub(filter, hdr, h);
}

/* A key's hash by the filter's algorithm: SipHash's one shared copy,
 * out of line. */
static __noinline __u64 fb_hash_sub(const struct fb_header *hdr, const struct fb_hkey *hk,
				    const struct fb_key *key)
{
	return fb_flow_hash(hdr, hk, key);
}

/* Source (kind FB_KIND_SRC) or destination (FB_KIND_DST) rules: the
 * address masked to each length in the list, longest first. fam: the
 * packet's family as it sits in word 4 (fb_key_word_family). With the NH
 * hash each length costs three multiplies (include/flowbloom/prefix.h,
 * fb_nhk_prefix); with SipHash a full hash of the key the CLI stored. */
static __always_inline int fb_match_addr(void *filter, const struct fb_header *hdr,
					 const struct fb_hkey *hk, const struct fb_lengths *l,
					 __u64 a0, __u64 a1, __u64 fam, __u32 kind)
{
	__u32 i, n = l->n;
	struct fb_key k;
	__u64 base, h;

	/* Two loops, not a test per length: the verifier walks each once. */
	if (hdr->hash == FB_HASH_NHK) {
		base = fb_nhk_prefix_base(hk->kw, kind);
		for (i = 0; i < FB_MAX_LENGTHS; i++) {
			if (i >= n)
				break;
			h = fb_nhk_prefix(hk->kw, base, kind, a0, a1,
					  l->len[i & (FB_MAX_LENGTHS - 1)], fam);
			if (fb_probe_sub(filter, hdr, h))
				return 1;
		}
		return 0;
	}
	for (i = 0; i < FB_MAX_LENGTHS; i++) {
		if (i >= n)
			break;
		fb_prefix_key(&k, kind, a0, a1, l->len[i & (FB_MAX_LENGTHS - 1)], fam);
		if (fb_probe_sub(filter, hdr, fb_hash_sub(hdr, hk, &k)))
			return 1;
	}
	return 0;
}

/* With --confirm exact: is a Bloom hit of this kind really in the list?
 * Only hits get here, so misses (the common case) pay nothing. */
static __noinline int fb_confirm(const struct fb_header *hdr, const struct fb_key *key, __u32 kind)
{
	struct fb_lpm_key lk;
	__u32 slot = hdr->gen & 1;
	void *set;

	/* A 5-tuple, or another shape's masked key: its exact key. */
	if (kind == FB_KIND_FLOW || kind == FB_KIND_MASK) {
		set = bpf_map_lookup_elem(&fb_exact, &slot);
		return set && bpf_map_lookup_elem(set, key);
	}
	slot = slot * 2 + (kind == FB_KIND_DST);
	set = bpf_map_lookup_elem(&fb_lpm, &slot);
	if (!set)
		return 0;
	fb_lpm_key_of(&lk, key, kind, 128);
	return bpf_map_lookup_elem(set, &lk) != NULL;
}

/* A hit of kind, confirmed if the filter asks for it (else counted). */
static __always_inline int fb_hit(const struct fb_header *hdr, const struct fb_key *key, __u32 kind,
				  __u64 bytes)
{
	struct fb_stats *st;
	__u32 zero = 0;

	if (!hdr->confirm || fb_confirm(hdr, key, kind))
		return 1;
	st = bpf_map_lookup_elem(&fb_stats, &zero);
	if (st) {
		st->c[FB_STAT_UNCONFIRMED].packets++;
		st->c[FB_STAT_UNCONFIRMED].bytes += bytes;
	}
	return 0;
}

#define FB_DECIDE_NOFILTER 0xffffffffU
/* fb_decide's mode: flags. */
enum {
	FB_DECIDE_MATCH = 0,
	FB_DECIDE_ADDRS = 1,   /* malformed: the addresses alone are known */
	FB_DECIDE_NONE = 2,    /* only the action is wanted */
	FB_DECIDE_NOPORTS = 4, /* a non-first fragment: no ports */
};
/* fb_decide's answer when no historical kind matched and the filter has
 * other shapes: the caller asks fb_match_shapes. */
#define FB_DECIDE_SHAPES 0xffU
/* Bits 8.. of the mode: generation g + 1 of rules with a lifetime, or 0
 * for the filter itself. */
#define FB_DECIDE_GEN_SHIFT 8

/* The outer-map slot of the filter image mode names: 0 for the filter, or
 * its generation's slot in the set the filter's header names. */
static __always_inline __u32 fb_decide_slot(const struct fb_header *hdr, __u32 mode)
{
	__u32 g = mode >> FB_DECIDE_GEN_SHIFT;

	return g ? fb_gen_slot(hdr->gen, g - 1) : 0;
}

/*
 * The other rule shapes (include/flowbloom/mask.h): one probe per mask of
 * the packet's family in the table, the packet's key cut to it (tuple
 * space search, Srinivasan, Suri, Varghese 1999). A mask that fixes a
 * port needs the packet's ports (not a malformed packet, a non-first
 * fragment or a protocol without ports: those never match it, and a
 * malformed one gets the malformed verdict); one that fixes the protocol
 * needs a packet that was parsed. Returns the descriptor that matched, 0
 * if none.
 */
/* A packet's key cut to mask d (include/flowbloom/mask.h), a global
 * function: its branches per field (inside, beyond or across a word) are
 * walked once here, not multiplied into every path of the hash and probe
 * after it. */
__noinline int fb_shape_key(struct fb_key *k, const struct fb_key *p, __u32 d)
{
	if (!k || !p)
		return -1;
	fb_mask_key(k, p, d);
	return 0;
}

/* One shape's probe (and confirmation), a global function: the verifier
 * checks it once, not once per mask and state of the loop below (inlined
 * there, the program passed the verifier's limit). A global function
 * cannot take map pointers, so it looks the filter up again (as
 * fb_probe_typed: the outer lookup is inlined). */
__noinline int fb_probe_shape(const struct fb_key *key, __u32 d, __u64 bytes, __u32 slot)
{
	const struct fb_hkey *hk;
	struct fb_header *hdr;
	struct fb_key k;
	__u32 zero = 0;
	void *filter;

	if (!key)
		return 0;
	filter = bpf_map_lookup_elem(&fb_filter, &slot);
	hdr = filter ? bpf_map_lookup_elem(filter, &zero) : NULL;
	if (!hdr)
		return 0;
	hk = fb_hkey_get(hdr);
	if (!hk)
		return 0;
	/* The hash and Bloom probe inline (this function is verified once):
	 * 17 % less per shape than through fb_hash_sub and fb_probe_sub. The
	 * whole loop in one global function would save 20 % more per shape,
	 * for +190k instructions the verifier processes at every load. */
	if (fb_shape_key(&k, key, d))
		return 0;
	return fb_probe_hash(filter, hdr, fb_flow_hash(hdr, hk, &k)) &&
	       fb_hit(hdr, &k, FB_KIND_MASK, bytes);
}

/* The loop over the filter's shapes, a global function called from the
 * program's main function when nothing else matched: the chain main ->
 * here -> fb_probe_shape -> fb_probe_typed stays within the 512 bytes of
 * stack BPF allows (through fb_decide it would not), and the loop is
 * verified once. A mask that fixes a port needs the packet's ports (not a
 * malformed packet, a non-first fragment or a protocol without ports:
 * those never match it, and a malformed one gets the malformed verdict);
 * one that fixes the protocol needs a packet that was parsed. mode's
 * generation bits pick the filter image (fb_decide checked its expiry).
 * Returns the descriptor that matched, 0 if none. */
__noinline __u32 fb_match_shapes(const struct fb_key *key, __u64 bytes, __u32 mode)
{
	__u32 zero = 0, one = 1, i, d, slot = 0;
	const struct fb_prefixes *px;
	const struct fb_header *hdr;
	void *filter;
	int ports;

	if (!key)
		return 0;
	filter = bpf_map_lookup_elem(&fb_filter, &zero);
	if (mode >> FB_DECIDE_GEN_SHIFT) {
		hdr = filter ? bpf_map_lookup_elem(filter, &zero) : NULL;
		if (!hdr)
			return 0;
		slot = fb_decide_slot(hdr, mode);
		filter = bpf_map_lookup_elem(&fb_filter, &slot);
	}
	px = filter ? bpf_map_lookup_elem(filter, &one) : NULL;
	if (!px)
		return 0;
	ports = !(mode & (FB_DECIDE_ADDRS | FB_DECIDE_NOPORTS)) &&
		fb_proto_ports_hdr(key->proto) != 0;
	for (i = 0; i < FB_MAX_MASKS; i++) {
		d = fb_mask_get(px->masks, i);
		if (!d)
			break;
		if (FB_MASK_FAMILY(d) != key->family || (FB_MASK_PORTS(d) && !ports) ||
		    (FB_MASK_PROTO(d) && (mode & FB_DECIDE_ADDRS)))
			continue;
		if (fb_probe_shape(key, d, bytes, slot))
			return d;
	}
	return 0;
}

/* Probe the historical rule kinds the filter holds, cheapest question
 * first; returns the kind that matched or 0 (the other shapes are probed
 * after, by fb_match_shapes). A 5-tuple-only filter pays for one probe.
 * mode: FB_DECIDE_ADDRS for a malformed packet, whose addresses alone are
 * known. */
static __always_inline __u32 fb_match(void *filter, const struct fb_header *hdr,
				      const struct fb_hkey *hk, const struct fb_key *key,
				      __u64 bytes, __u32 mode)
{
	__u32 kinds = hdr->kinds, one = 1;
	int addrs_only = mode & FB_DECIDE_ADDRS;
	struct fb_prefixes *px;
	int src, dst;
	__u64 fam;

	/* The parser wrote key as a FB_KIND_FLOW key. */
	if ((kinds & FB_KINDF(FB_KIND_FLOW)) && !addrs_only) {
		if (fb_probe(filter, hdr, hk, key) && fb_hit(hdr, key, FB_KIND_FLOW, bytes))
			return FB_KIND_FLOW;
	}
	if (!(kinds & (FB_KINDF(FB_KIND_SRC) | FB_KINDF(FB_KIND_DST))))
		return 0;
	px = bpf_map_lookup_elem(filter, &one);
	if (!px)
		return 0;
	/* The family the parser took from the IP header, never from the
	 * address: an IPv6 packet from ::ffff:a.b.c.d meets IPv6 rules. */
	fam = fb_key_word_family(key->w[4]);
	src = fb_prefix_list(FB_KIND_SRC, key->family);
	dst = fb_prefix_list(FB_KIND_DST, key->family);
	if ((kinds & FB_KINDF(FB_KIND_SRC)) &&
	    fb_match_addr(filter, hdr, hk, &px->list[src], key->w[0], key->w[1], fam,
			  FB_KIND_SRC) &&
	    fb_hit(hdr, key, FB_KIND_SRC, bytes))
		return FB_KIND_SRC;
	if ((kinds & FB_KINDF(FB_KIND_DST)) &&
	    fb_match_addr(filter, hdr, hk, &px->list[dst], key->w[2], key->w[3], fam,
			  FB_KIND_DST) &&
	    fb_hit(hdr, key, FB_KIND_DST, bytes))
		return FB_KIND_DST;
	return 0;
}

/*
 * The filter's answer for a parsed packet: FB_DECIDE_NOFILTER when no
 * filter is installed, else the kind that matched (0: none), the filter's
 * own action in bits 8..15 and its generations of rules with a lifetime
 * in bits 16..31 (include/flowbloom/ttl.h). mode: FB_DECIDE_MATCH, _ADDRS
 * (a malformed packet: its addresses alone are known) or _NONE (only the
 * action is wanted), plus (g + 1) << 8 to match generation g instead of
 * the filter, if its expiry is after now (jiffies): then the kind is what
 * counts (0 if it has expired).
 *
 * A global function, so the verifier checks it once: inlined, it was
 * walked again for every state the parser leaves (670k processed
 * instructions with NH's prefix loops; 370k this way, and a load in half
 * the time), and the generations reuse it rather than a copy. The price is
 * one call and return per packet, about 12 ns on this machine, whose
 * kernel returns through AMD's SRSO "Safe RET" thunk (docs/performance.md).
 */
__noinline __u32 fb_decide(const struct fb_key *key, __u64 bytes, __u32 mode, __u64 now)
{
	__u32 zero = 0, kind = 0, g = mode >> FB_DECIDE_GEN_SHIFT, slot;
	const struct fb_hkey *hk;
	struct fb_header *hdr;
	void *filter;

	if (!key)
		return FB_DECIDE_NOFILTER;
	filter = bpf_map_lookup_elem(&fb_filter, &zero);
	hdr = filter ? bpf_map_lookup_elem(filter, &zero) : NULL;
	if (!hdr || hdr->magic != FB_MAGIC)
		return FB_DECIDE_NOFILTER;
	mode &= 0xff;
	if (g) {
		/* A generation of the set the filter names: matched as the
		 * filter is, until its expiry. */
		slot = fb_gen_slot(hdr->gen, g - 1);
		filter = bpf_map_lookup_elem(&fb_filter, &slot);
		hdr = filter ? bpf_map_lookup_elem(filter, &zero) : NULL;
		if (!hdr || hdr->magic != FB_MAGIC || hdr->expires <= now)
			return 0;
	}
	/* The NH key words, whatever the hash: one kind of pointer for every
	 * filter keeps the verifier from walking the match twice. */
	hk = fb_hkey_get(hdr);
	if (hk && !(mode & FB_DECIDE_NONE)) {
		kind = fb_match(filter, hdr, hk, key, bytes, mode);
		if (!kind && (hdr->kinds & FB_KINDF(FB_KIND_MASK)))
			kind = FB_DECIDE_SHAPES;
	}
	/* The same answer for a generation (its gens is 0): nothing of g
	 * stays live past the lookup, so the verifier walks the match once,
	 * not once per branch (373k processed instructions, against 673k). */
	return kind | (__u32)hdr->action << 8 | (hdr->gens & 0xffff) << 16;
}

_Static_assert(FB_GEN_SLOTS <= 16, "generations in the top half of fb_decide's answer");

/* The kind an image's answer stands for: its shapes asked when it says so
 * (*shape: the mask that matched). */
static __always_inline __u32 fb_decided_kind(const struct fb_key *key, __u64 bytes, __u32 mode,
					     __u32 kind, __u32 *shape)
{
	if (kind == FB_DECIDE_SHAPES) {
		*shape = fb_match_shapes(key, bytes, mode);
		kind = *shape ? FB_KIND_MASK : 0;
	}
	return kind;
}

/* Rules with a lifetime: the first live generation in mask that matches
 * (its kind), or 0. Only filters that have generations get here; each
 * costs a lookup, a header line and the probes of the filter. */
static __always_inline __u32 fb_decide_gens(const struct fb_key *key, __u64 bytes, __u32 mode,
					    __u32 mask, __u32 *shape)
{
	__u64 now = bpf_jiffies64();
	__u32 g, kind, gm;

	for (g = 0; g < FB_GEN_SLOTS; g++) {
		if (!(mask & 1U << g))
			continue;
		gm = mode | (g + 1) << FB_DECIDE_GEN_SHIFT;
		kind = fb_decided_kind(key, bytes, gm, fb_decide(key, bytes, gm, now) & 0xff,
				       shape);
		if (kind)
			return kind;
	}
	return 0;
}

SEC("xdp")
int flowbloom(struct xdp_md *ctx)
{
	__u64 bytes = ctx->data_end - ctx->data;
	struct fb_key key = {};
	__u32 zero = 0, frag = 0, kind = 0, action, mode, shape = 0;
	int parse, verdict, malformed;
	struct fb_stats *st;
	__u32 decided;
	/* For `flowbloom capture` at the end (bpf/capture.bpf.h). */
	fb_cap_slot cap_ctx = ctx;

	st = bpf_map_lookup_elem(&fb_stats, &zero);
	if (!st)
		return XDP_PASS; /* cannot happen: a one-entry array */
	fb_count(st, FB_STAT_SEEN, bytes);

	parse = fb_parse_packet(ctx, &key, &frag);
	if (parse == FB_PARSE_NONIP) {
		fb_count(st, FB_STAT_NONIP, bytes);
		verdict = XDP_PASS;
		goto out;
	}
	malformed = parse == FB_PARSE_MALFORMED;
	if (malformed) {
		fb_count(st, FB_STAT_MALFORMED, bytes);
	} else {
		if (frag)
			fb_count(st, FB_STAT_FRAGMENT, bytes);
		if (cfg_bench) {
			__u32 i = bench_seq++;

			fb_bench_flow(fb_bench_index(i, cfg_bench), cfg_bench_v6, &key);
		}
		/* Flow monitoring (bpf/monitor.bpf.h): cfg_mon = 0 removes it. */
		if (cfg_mon)
			fb_monitor(&key, bytes);
	}

	/* A malformed packet is matched on its addresses, if the parser got
	 * that far (key has a kind); what no rule decides gets the malformed
	 * verdict. */
	mode = !malformed ? (frag ? FB_DECIDE_NOPORTS : FB_DECIDE_MATCH)
	       : key.kind ? FB_DECIDE_ADDRS
			  : FB_DECIDE_NONE;
	decided = fb_decide(&key, bytes, mode, 0);
	if (decided == FB_DECIDE_NOFILTER) {
		/* No filter installed yet (ip link before create): fail open,
		 * malformed packets too unless the attachment says drop. */
		if (malformed) {
			verdict = cfg_malformed == FB_MALFORMED_DROP ? XDP_DROP : XDP_PASS;
			goto out;
		}
		fb_count(st, FB_STAT_NOFILTER, bytes);
		verdict = XDP_PASS;
		goto out;
	}
	kind = decided & 0xff;
	kind = fb_decided_kind(&key, bytes, mode, kind, &shape);
	/* A filter without lifetimes pays this one test. */
	if (!cfg_bench_no_ttl && !kind && (decided >> 16) && !(mode & FB_DECIDE_NONE))
		kind = fb_decide_gens(&key, bytes, mode, decided >> 16, &shape);
	if (kind < FB_KIND_FLOW || kind > FB_KIND_MASK)
		kind = 0; /* only a kind or 0 comes back: this is for the verifier */
	if (kind) {
		fb_count(st, FB_STAT_MATCHED, bytes);
		fb_count(st,
			 kind == FB_KIND_MASK ? FB_STAT_HIT_MASK
					      : FB_STAT_HIT_FLOW + kind - FB_KIND_FLOW,
			 bytes);
	}

	action = cfg_action ? cfg_action : (decided >> 8) & 0xff;
	if (malformed && !kind)
		verdict = fb_malformed_drop(cfg_malformed, action) ? XDP_DROP : XDP_PASS;
	else if (action == FB_ACTION_MONITOR)
		verdict = XDP_PASS;
	else if (action == FB_ACTION_ALLOW)
		verdict = kind ? XDP_PASS : XDP_DROP;
	else
		verdict = kind ? XDP_DROP : XDP_PASS;
	/* A new flow's event carries the verdict (bpf/monitor.bpf.h). */
	if (cfg_mon && !malformed)
		fb_monitor_verdict(ctx, &key, bytes, verdict);
out:
	fb_count(st, verdict == XDP_DROP ? FB_STAT_DROPPED : FB_STAT_PASSED, bytes);
	if (cfg_trace) {
		struct fb_trace *tr = bpf_map_lookup_elem(&fb_trace, &zero);

		if (tr) {
			tr->key = key;
			if (kind)
				tr->key.kind = kind;
			tr->parse = parse;
			tr->fragment = frag;
			tr->kind = kind;
			tr->mask = shape;
			tr->verdict = verdict;
		}
	}
	/* `flowbloom capture` (bpf/capture.bpf.h): one load while none runs. */
	return fb_capture(&cap_ctx, verdict, kind, parse);
}

/* libxdp's run config (xdp-tools' headers/xdp/xdp_helpers.h, parsed from BTF by
 * xdp-loader and other libxdp users): under the multi-program dispatcher we
 * run early (priority 10; lower runs first, the default is 50) and only
 * XDP_PASS goes on to the next program, so what we drop never reaches it.
 * The section is neither code nor a map: iproute2 and the skeleton ignore it. */
struct {
	__uint(priority, 10);
	__uint(XDP_PASS, 1);
} _flowbloom SEC(".xdp_run_config");

char LICENSE[] SEC("license") = "Dual BSD/GPL";
