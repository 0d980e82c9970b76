/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The trace record's answer to "is the rule that decided permanent, or one
 * with a lifetime, and of which generation?" (struct fb_trace, gen), for
 * replay --explain and query --packet. Only a program loaded with
 * cfg_trace reaches it, after the verdict.
 *
 * The data path keeps no note of where its hit came from: a note would
 * cost a store on every packet a generation decides, and whatever it kept
 * live to the end of the program would cost the compiler a register all
 * the way (tried: 8 to 18 more instructions the kernel runs, trace off,
 * and spills moved into the probe loops). So the trace finds the place
 * again, from what the program has just written in the record: the key
 * and the kind and shape of the descriptor that decided. The program calls
 * fb_trace_fill() with no argument from its cfg_trace block, so nothing is
 * kept live for it: built with it or without, the program differs by that
 * call alone, which the verifier removes with the block when the trace is
 * off (tests/bench/bench_verifier.c prints the xlated lengths).
 *
 * Why that is exact: the data path probes the filter's own descriptors,
 * then, only if none holds the packet, each live generation's in slot
 * order (ttl.h), stopping at the first hit. What a descriptor needs of a
 * packet (its flags) depends on its kind and shape alone (head.h,
 * fb_probes_build()), and the one that decided had it, so every
 * descriptor of that kind and shape has it too. Hence the filter's own
 * rules decided if and only if one of its descriptors of that kind and
 * shape holds the packet; otherwise the first live generation with one
 * did. "Holds" is fb_hit()'s: a Bloom hit, confirmed if the filter says
 * so (not counted again here).
 */
#ifndef FLOWBLOOM_TRACE_BPF_H
#define FLOWBLOOM_TRACE_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/head.h"
#include "flowbloom/maps.h"
#include "flowbloom/ttl.h"
#include "maps.bpf.h"

/* bpf/flowbloom.bpf.c: global functions the data path calls. */
int fb_confirm(const struct fb_header *hdr, const struct fb_key *key, __u32 kind, __u32 shape);
int fb_probe_other(const struct fb_head *head, const struct fb_key *key, __u32 i, __u32 base);

/*
 * Does the filter's own head (range 0) or generation range's hold key under
 * a descriptor of kind and shape? 1 if so and, for a generation, it was
 * live at the data path's clock: one expiring at this jiffy still counts
 * (the data path read jiffies first, within the same run, so at most a
 * tick earlier). 0 otherwise. A global function: verified once.
 */
__noinline int fb_trace_holds(const struct fb_key *key, __u32 range, __u32 kind, __u32 shape,
			      __u64 now)
{
	__u32 slot = range ? fb_gen_chunk_slot(range, 0) : 0, zero = 0, fam, n, i, base;
	const struct fb_head *head = NULL;
	void *c0;

	if (!key)
		return 0;
	c0 = bpf_map_lookup_elem(&fb_filter, &slot);
	if (c0)
		head = bpf_map_lookup_elem(c0, &zero);
	if (!head || head->hdr.magic != FB_MAGIC || head->hdr.version != FB_VERSION)
		return 0;
	if (range && (!(head->hdr.flags & FB_HDRF_GENERATION) || head->hdr.gen != range ||
		      head->hdr.expires < now))
		return 0;
	base = range ? slot : fb_chunk_slot(head->hdr.gen, 0);
	fam = fb_head_family(key->family);
	n = head->hdr.nprobe[fam];
	for (i = 0; i < FB_MAX_PROBES; i++) {
		const struct fb_probe *p = &head->probe[fam][i];

		if (i >= n)
			break;
		if (p->kind == kind && p->shape == shape &&
		    fb_probe_other(head, key, fam * FB_MAX_PROBES + i, base) &&
		    (!head->hdr.confirm || fb_confirm(&head->hdr, key, kind, shape)))
			return 1;
	}
	return 0;
}

/* fb_trace.gen for a packet the descriptor of kind (non-zero) and shape
 * decided: FB_TRACE_OWN, a generation's slot range, or FB_TRACE_UNKNOWN
 * (the filter changed between the verdict and this). */
__noinline __u32 fb_trace_source(const struct fb_key *key, __u32 kind, __u32 shape)
{
	const struct fb_head *head = NULL;
	__u32 zero = 0, gens, set, g;
	__u64 now;
	void *c0;

	if (!key)
		return FB_TRACE_UNKNOWN;
	if (fb_trace_holds(key, 0, kind, shape, 0))
		return FB_TRACE_OWN;
	c0 = bpf_map_lookup_elem(&fb_filter, &zero);
	if (c0)
		head = bpf_map_lookup_elem(c0, &zero);
	if (!head)
		return FB_TRACE_UNKNOWN;
	gens = head->hdr.gens;
	set = head->hdr.gen & 1;
	now = bpf_jiffies64();
	for (g = 0; g < FB_GEN_SLOTS; g++)
		if ((gens & 1U << g) && fb_trace_holds(key, fb_gen_range(set, g), kind, shape, now))
			return fb_gen_range(set, g);
	return FB_TRACE_UNKNOWN;
}

/* The trace record's gen, from the rest of it (the program has just
 * written it): no argument, so that the data path keeps nothing live for
 * it. A key with addresses is keyed FB_KIND_FLOW by the parser; the
 * record's says which rule kind matched. */
__noinline int fb_trace_fill(void)
{
	struct fb_trace *tr;
	struct fb_key key;
	__u32 zero = 0;

	tr = bpf_map_lookup_elem(&fb_trace, &zero);
	if (!tr)
		return 0;
	key = tr->key;
	key.kind = FB_KIND_FLOW;
	tr->gen = tr->kind ? fb_trace_source(&key, tr->kind, tr->mask) : FB_TRACE_OWN;
	return 0;
}

#endif
