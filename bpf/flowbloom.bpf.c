// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * flowbloom's XDP program: parse -> flow key -> one probe per rule shape
 * the filter holds (and, if it has rules with a lifetime, per shape of
 * each live generation) -> verdict -> count.
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
#include "flowbloom/head.h"
#include "flowbloom/maps.h"
#include "flowbloom/proto.h"
#include "config.bpf.h"
#include "parsing.bpf.h"
#include "filter.bpf.h"
#include "maps.bpf.h"
#include "monitor.bpf.h"
#include "capture.bpf.h"
#include "trace.bpf.h"

__u32 bench_seq;

/* With --confirm exact: is a Bloom hit of this kind really in the list?
 * Only hits get here, so misses (the common case) pay nothing. A global
 * function: checked once, not at every probe of the loop. shape: a rule
 * shape's mask (FB_KIND_MASK), whose key (mask.h, fb_mask_key()) is
 * looked up as a 5-tuple is. */
__noinline int fb_confirm(const struct fb_header *hdr, const struct fb_key *key, __u32 kind,
			  __u32 shape)
{
	struct fb_lpm_key lk;
	struct fb_key mk;
	__u32 slot;
	void *set;

	if (!hdr || !key)
		return 0;
	slot = hdr->gen & 1;
	if (kind == FB_KIND_FLOW || kind == FB_KIND_MASK) {
		set = bpf_map_lookup_elem(&fb_exact, &slot);
		if (kind == FB_KIND_MASK) {
			fb_mask_key(&mk, key, shape);
			return set && bpf_map_lookup_elem(set, &mk);
		}
		return set && bpf_map_lookup_elem(set, key);
	}
	slot = slot * 2 + (kind == FB_KIND_DST);
	set = bpf_map_lookup_elem(&fb_lpm, &slot);
	if (!set)
		return 0;
	fb_lpm_key_of(&lk, key, kind, 128);
	return bpf_map_lookup_elem(set, &lk) != NULL;
}

/* A hit of kind, confirmed if the filter asks for it (a refusal is
 * counted: a false positive the exact sets caught). */
static __always_inline int fb_hit(const struct fb_header *hdr, const struct fb_key *key,
				  const struct fb_probe *p, __u64 bytes)
{
	struct fb_stat_cells *st;
	__u32 zero = 0;

	if (!hdr->confirm || fb_confirm(hdr, key, p->kind, p->shape))
		return 1;
	st = bpf_map_lookup_elem(&fb_stats, &zero);
	if (st) {
		st->cell[FB_STAT_UNCONFIRMED_CELL].packets++;
		st->cell[FB_STAT_UNCONFIRMED_CELL].bytes += bytes;
	}
	return 0;
}

/* The descriptors of the filter for the other hashes, layouts and types
 * (SipHash, classic Bloom, cuckoo, d-left, scalable): hash and probe of
 * descriptor i (of both families' tables). A global function, checked
 * once by the verifier; these filters pay a call per probe. */
__noinline int fb_probe_other(const struct fb_head *head, const struct fb_key *key, __u32 i,
			      __u32 base)
{
	const struct fb_probe *p;
	__u64 h;

	/* A bound test, not a modulo: the verifier keeps no bounds through a
	 * modulo by a number that is not a power of two. */
	if (!head || !key || i >= FB_FAMILIES * FB_MAX_PROBES)
		return 0;
	p = &head->probe[0][i];
	h = fb_probe_hash(p, key->w, head->hdr.hash, head->hdr.key, head->keys.kw);
	/* fb_filter_probe() (include/flowbloom/probe.h) in its two parts:
	 * the blocked Bloom filter here, the rest behind a second global
	 * function. One function for both would be verified once per path
	 * of the hash above (2,600 instructions more). */
	if (fb_filter_blocked(&head->hdr))
		return fb_bloom_blocked_probe(base, &head->hdr, h);
	return fb_probe_slow(head, h, base);
}

/*
 * Values the verifier cannot know. What the parser found (a protocol, a
 * fragment, a malformed header) is a constant on each of its paths; every
 * such constant that decides a branch further on would make the verifier
 * check the probe loop once per combination (and the statistics index
 * would make them all matter: an index into memory must be known to be in
 * bounds, so the verifier traces back every value it was computed from).
 * Passed through a per-CPU scratch word instead, they reach the loop as
 * one unknown value: one check of the loop covers every packet. A store
 * and a load in the L1 cache, per packet.
 */
static __always_inline __u64 fb_opaque(struct fb_stat_cells *st, __u64 v)
{
	volatile __u64 *scratch = &st->cell[FB_STAT_SCRATCH_CELL].packets;

	*scratch = v;
	return *scratch;
}

/*
 * Probe the descriptors of the packet's family (include/flowbloom/head.h)
 * in order; returns the kind of the first that holds the packet, or 0
 * (*shape: its rule shape's mask, for the trace).
 * have: the FB_PROBEF_* the packet meets (a malformed packet, whose
 * addresses alone are known, meets none: only address rules count).
 * head: a filter's or a generation's (ttl.h), its chunks from slot base
 * on (geometry.h: fb_chunk_slot() of a filter's gen, fb_gen_chunk_slot()
 * of a generation's: two formulas, so that neither takes a branch).
 *
 * The fast loop (NH, blocked Bloom filter) has one way round whatever the
 * descriptor: one the packet does not qualify for is probed and its answer
 * dropped, rather than skipped by a branch, which would give the verifier
 * another state to carry through every later iteration. Its probe is
 * fb_bloom_blocked_probe() (include/flowbloom/probe.h) written out: for a
 * filter of one chunk it reads beside the head (no lookup at all), and for
 * larger ones the shared function's answer, a 0/1 made by a branch on the
 * block, combined with the descriptor's flags costs the verifier 22,000
 * more instructions than testing the block in the same condition.
 */
static __always_inline __u32 fb_match(struct fb_stat_cells *st, const struct fb_head *head,
				      const struct fb_key *key, __u32 have, __u64 bytes, __u32 base,
				      __u32 *shape)
{
	const struct fb_header *hdr = &head->hdr;
	__u32 fam = fb_head_family(key->family), n = hdr->nprobe[fam], i;
	const struct fb_probe *p = &head->probe[fam][0];

	if (hdr->fast && hdr->nblocks <= FB_CHUNK_BLOCKS - FB_PAGE_BLOCKS) {
		/* A filter of one chunk (up to 2 Mbit) is all in the head's
		 * chunk: no lookup of the chunk per probe. */
		for (i = 0; i < FB_MAX_PROBES; i++, p++) {
			struct fb_block *blk;
			__u32 b;
			__u64 h;

			if (i >= n)
				break;
			h = fb_probe_nhk(p, key->w);
			/* The modulo is the verifier's bound, hidden from the
			 * compiler (which knows b is in range and would drop
			 * it) by an empty asm: no store and load on the way to
			 * the block, whose read is this loop's one miss. */
			b = fb_blocked_block(h, hdr->nblocks) + FB_HEAD_SHIFT;
			barrier_var(b);
			blk = (struct fb_block *)((char *)head +
						  b % FB_CHUNK_BLOCKS * FB_BLOCK_BYTES);
			if (fb_block_has(blk, h, hdr->k) & !(p->flags & ~have) &&
			    fb_hit(hdr, key, p, bytes)) {
				*shape = p->shape;
				return p->kind;
			}
		}
		return 0;
	}
	if (hdr->fast) {
		for (i = 0; i < FB_MAX_PROBES; i++, p++) {
			struct fb_block *blk;
			__u64 h;

			if (i >= n)
				break;
			h = fb_probe_nhk(p, key->w);
			blk = fb_tblock(base, fb_blocked_block(h, hdr->nblocks));
			if (blk && fb_block_has(blk, h, hdr->k) & !(p->flags & ~have) &&
			    fb_hit(hdr, key, p, bytes)) {
				*shape = p->shape;
				return p->kind;
			}
		}
		return 0;
	}
	for (i = 0; i < FB_MAX_PROBES; i++, p++) {
		if (i >= n)
			break;
		if (!(p->flags & ~have) &&
		    fb_probe_other(head, key, fam * FB_MAX_PROBES + i, base) &&
		    fb_hit(hdr, key, p, bytes)) {
			*shape = p->shape;
			return p->kind;
		}
	}
	return 0;
}

/*
 * The rules with a lifetime of the generation in slot range
 * what >> 8 (include/flowbloom/ttl.h): its head (its range's chunk 0), if
 * it is one and has not expired by now (jiffies), probed by the same
 * descriptor loop as the filter; what & 0xff: the FB_PROBEF_* the packet
 * meets (five arguments at most). A global
 * function, verified once: the program's main function calls it per live
 * generation, so the loop is checked twice in all, not once per
 * generation. It looks the head up itself (the head is a whole chunk only
 * as a map value; a global function's pointer arguments are only as long
 * as their type). Returns the kind that matched, and the shape's mask in
 * bits 32..63; 0 if none.
 */
__noinline __u64 fb_match_gen(struct fb_stat_cells *st, const struct fb_key *key, __u32 what,
			      __u64 bytes, __u64 now)
{
	__u32 range = what >> 8, slot = fb_gen_chunk_slot(range, 0), zero = 0, shape = 0, kind;
	const struct fb_head *head = NULL;
	void *c0;

	if (!st || !key)
		return 0;
	c0 = bpf_map_lookup_elem(&fb_filter, &slot);
	if (c0)
		head = bpf_map_lookup_elem(c0, &zero);
	if (!head || head->hdr.magic != FB_MAGIC || head->hdr.version != FB_VERSION ||
	    !(head->hdr.flags & FB_HDRF_GENERATION) || head->hdr.gen != range ||
	    head->hdr.expires <= now)
		return 0;
	kind = fb_match(st, head, key, what & 0xff, bytes, slot, &shape);
	return kind ? (__u64)shape << 32 | kind : 0;
}

/* The parser's outcome in one word (fb_opaque), and its parts. */
#define FB_PK_MALFORMED 0x100 /* parse == FB_PARSE_MALFORMED */
#define FB_PK_ADDRS 0x200     /* the packet's addresses are known (its key has a kind) */

/* The FB_PROBEF_* a packet meets: arithmetic on the parser's bits, no
 * test. Addresses are known if the key has a kind; the protocol if the
 * parser says so (PROTO: every packet that parsed, and one found malformed
 * in its upper-layer header); the ports if they were in (PORTS, TUPLE).
 * The parser's PORTS and TUPLE bits are the probe flags' halves: one mask
 * and one shift take both. */
_Static_assert(FB_PROBEF_PORTS == 2 * FB_PARSE_PORTS && FB_PROBEF_TUPLE == 2 * FB_PARSE_TUPLE,
	       "parser bits are half the probe flags");
static __always_inline __u32 fb_have(__u64 pk)
{
	__u32 addrs = (pk & FB_PK_ADDRS) / FB_PK_ADDRS,
	      keyed = (pk & FB_PARSE_PROTO) / FB_PARSE_PROTO;

	return addrs * FB_PROBEF_ADDRS + keyed * FB_PROBEF_PARSED +
	       (pk & (FB_PARSE_PORTS | FB_PARSE_TUPLE)) * 2;
}

/* Is the frame (bytes long) longer than its first buffer (multi-buffer,
 * cfg_frags)? Asked of ctx on the malformed path only: kept from the
 * start, the answer would cost every frame a register across the parser. */
static __always_inline int fb_more(struct xdp_md *ctx, __u64 bytes)
{
	return cfg_frags && bytes > (__u64)(ctx->data_end - ctx->data);
}

/*
 * A first fragment cut before its ports: the rest of its header chain (or
 * its transport header) is in a later fragment, which has port 0 in its
 * key, so no port rule or 5-tuple can ever see the datagram's ports. RFC
 * 8200 (section 4.5) says such a first fragment should be discarded, and
 * RFC 7112 (section 5) lets a filter discard it; Linux reassembles some of
 * them all the same (an IPv6 chain cut inside an extension header that
 * another follows passes its check, ipv6_frag_thdr_truncated(): its
 * ipv6_skip_exthdr() fails, which it takes for "not truncated"). So it
 * gets the default malformed verdict (dropped under drop and allow)
 * whatever --malformed says: under --malformed pass it would carry a
 * blocked 5-tuple past the filter. So does a malformed frame longer than
 * its first buffer (multi-buffer, fb_more()): the parser reads the first
 * buffer only, and a header chain of a few kilobytes (two 2048-byte
 * extension headers, which the stack takes) puts the ports past it.
 */
static __always_inline int fb_split_drop(__u64 pk, int more, __u32 action)
{
	return ((pk & (FB_PARSE_FIRST | FB_PARSE_PORTS)) == FB_PARSE_FIRST || more) &&
	       fb_malformed_drop(FB_MALFORMED_DEFAULT, action);
}

/*
 * parse -> key -> the filter's head (one lookup; everything later goes by
 * the generation of chunks it names, which stays in place until the head
 * is retired and every program that could hold it has finished: map-in-map
 * updates wait for an RCU grace period) -> probes -> verdict -> one
 * statistics update. No function call on the way for a blocked Bloom
 * filter with NH: each costs ~12 ns here (README, Performance).
 */
SEC("xdp")
int flowbloom(struct xdp_md *ctx)
{
	__u64 bytes = ctx->data_end - ctx->data, pk;
	__u32 zero = 0, info = 0, frag, kind = 0, cond, action, idx, shape = 0, have, recf = 0;
	const struct fb_head *head = NULL;
	/* For `flowbloom capture` at the end (bpf/capture.bpf.h). */
	fb_cap_slot cap_ctx = ctx;
	struct fb_stat_cells *st;
	struct fb_key key; /* every word written by the parser */
	int parse, verdict;
	void *c0;

	/* The frame's length now, not late from the two 32-bit loads: clang
	 * would keep ctx->data for it, spill it in 4 bytes when registers run
	 * short, and the verifier refuses a packet pointer spilled in less
	 * than 8 (the bench's cut build did: test_objects loads it). A
	 * multi-buffer frame's is all its buffers' (cfg_frags = 0 removes the
	 * call). */
	if (cfg_frags)
		bytes = bpf_xdp_get_buff_len(ctx);
	__asm__ __volatile__("" : "+r"(bytes));
	st = bpf_map_lookup_elem(&fb_stats, &zero);
	if (!st)
		return XDP_PASS; /* cannot happen: a one-entry array */
	parse = fb_parse_packet(ctx, &key, &info);
	/* Benchmark cuts (config.bpf.h; none in the program itself): each
	 * verdict uses what its stage made, so the compiler keeps the stage. */
	FB_BENCH_CUT(FB_BENCH_STAGE_PARSE, FB_BENCH_KEYED(parse, key) ? XDP_DROP : XDP_ABORTED);
	if (parse == FB_PARSE_NONIP) {
		cond = FB_COND_NONIP;
		frag = 0;
		verdict = XDP_PASS;
		goto out;
	}
	if (parse == FB_PARSE_OK) {
		if (cfg_bench) {
			__u32 i = bench_seq++;

			fb_bench_flow(fb_bench_index(i, cfg_bench), cfg_bench_v6, &key);
		}
		/* Flow monitoring (bpf/monitor.bpf.h): cfg_mon = 0 removes it. */
		if (cfg_mon)
			fb_monitor(&key, bytes);
	}
	pk = fb_opaque(st, info | (parse == FB_PARSE_MALFORMED) * FB_PK_MALFORMED |
				   (key.kind != 0) * FB_PK_ADDRS);
	frag = pk & FB_PARSE_FRAGMENT;

	c0 = bpf_map_lookup_elem(&fb_filter, &zero);
	if (c0)
		head = bpf_map_lookup_elem(c0, &zero);
	if (!head || head->hdr.magic != FB_MAGIC || head->hdr.version != FB_VERSION) {
		/* No filter installed yet (ip link before create): fail open,
		 * malformed packets too unless the attachment says drop. */
		if (pk & FB_PK_MALFORMED) {
			cond = FB_COND_MALFORMED;
			verdict = cfg_malformed == FB_MALFORMED_DROP ? XDP_DROP : XDP_PASS;
		} else {
			cond = FB_COND_NOFILTER;
			verdict = XDP_PASS;
		}
		goto out;
	}
	/* A malformed packet is matched on its addresses, if the parser got
	 * that far; what no rule decides gets the malformed verdict. */
	have = fb_have(pk);
	FB_BENCH_CUT(FB_BENCH_STAGE_HEAD,
		     have && head->hdr.nprobe[fb_head_family(key.family)] ? XDP_DROP : XDP_ABORTED);
	kind = fb_match(st, head, &key, have, bytes, fb_chunk_slot(head->hdr.gen, 0), &shape);
	/* Rules with a lifetime: a filter without them pays this one test. */
	if (!cfg_bench_no_ttl && !kind && head->hdr.gens) {
		__u32 gens = head->hdr.gens, set = head->hdr.gen & 1, g;
		__u64 now = bpf_jiffies64(), r;

		for (g = 0; g < FB_GEN_SLOTS; g++) {
			if (!(gens & 1U << g))
				continue;
			r = fb_match_gen(st, &key, have | fb_gen_range(set, g) << 8, bytes, now);
			if (r) {
				kind = r & 0xff;
				shape = r >> 32;
				recf = FB_CAP_RECF_LIFETIME;
				break;
			}
		}
	}

	FB_BENCH_CUT(FB_BENCH_STAGE_PROBE, kind ? XDP_DROP : XDP_ABORTED);
	action = cfg_action ? cfg_action : head->hdr.action;
	if ((pk & FB_PK_MALFORMED) && !kind)
		verdict = fb_malformed_drop(cfg_malformed, action) ||
					  fb_split_drop(pk, fb_more(ctx, bytes), action)
				  ? XDP_DROP
				  : XDP_PASS;
	else if (action == FB_ACTION_MONITOR)
		verdict = XDP_PASS;
	else if (action == FB_ACTION_ALLOW)
		verdict = kind ? XDP_PASS : XDP_DROP;
	else
		verdict = kind ? XDP_DROP : XDP_PASS;
	cond = pk & FB_PK_MALFORMED ? FB_COND_MALFORMED : FB_COND_OK;
	/* A new flow's event carries the verdict (bpf/monitor.bpf.h). */
	if (cfg_mon && !(pk & FB_PK_MALFORMED))
		fb_monitor_verdict(ctx, &key, bytes, verdict);
out:
	idx = fb_opaque(st, fb_stat_cell(verdict == XDP_DROP, kind, frag, cond));
	st->cell[idx & (FB_STAT_OUTCOMES - 1)].packets++;
	st->cell[idx & (FB_STAT_OUTCOMES - 1)].bytes += bytes;
	if (cfg_trace) {
		struct fb_trace *tr = bpf_map_lookup_elem(&fb_trace, &zero);

		if (tr) {
			tr->key = key;
			if (kind)
				tr->key.kind = kind;
			tr->parse = parse;
			tr->fragment = frag;
			tr->kind = kind;
			tr->mask = kind == FB_KIND_MASK ? shape : 0;
			tr->verdict = verdict;
			/* Permanent, or which lifetime: from the record, so that
			 * nothing is kept live for it (bpf/trace.bpf.h). */
			fb_trace_fill();
		}
	}
	/* `flowbloom capture` (bpf/capture.bpf.h): one load while none runs;
	 * the record says whether the rule that matched has a lifetime. */
	return fb_capture(&cap_ctx, verdict, kind, parse, recf);
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
