// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 10 proof of concept: one blocked-Bloom probe (k = 8, 64-byte
 * blocks, header in blocks 0..3) reached through different map designs,
 * with different hashes. Each program parses like flowbloom, swaps in the
 * benchmark flow, probes, and counts hits in `hits` (so hit runs prove
 * they hit and miss runs measure the false-positive rate).
 *
 * Filter layout (all designs): block 0 = { nblocks, k, sipkey[2] },
 * blocks 1..3 = 24 multilinear key words, bits from block PH_HDR on.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/bench.h"
#include "flowbloom/geometry.h"
#include "parsing.bpf.h"
#include "perf_hash.h"

#define PH_HDR 4
#define CLASS_S (1U << 14) /* 1 MiB of bits */
#define CLASS_L (1U << 22) /* 256 MiB of bits */
#define BIG_VALUE (1U << 20)
#define BIG_BLOCKS (BIG_VALUE / 64)

const volatile __u32 cfg_alg = PH_SIP13;
const volatile __u32 cfg_kconst = 1; /* 1: k = 8 at compile time; 0: header k, loop to 16 */
__u32 cfg_bench = 0;		     /* runtime: flow mask | FB_BENCH_MISS */
__u32 bench_seq;
__u64 hits;

struct blk64 {
	__u64 w[8];
};

/* (a) today: template with BPF_F_INNER_MAP, any size; lookups are calls. */
struct inner_dyn {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, 4);
	__uint(value_size, 64);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct inner_dyn);
} outer_dyn SEC(".maps");

/* (b) fixed size classes: no BPF_F_INNER_MAP, so max_entries is part of
 * the template and the verifier can inline the inner lookup. */
struct inner_cs {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PH_HDR + CLASS_S);
	__uint(key_size, 4);
	__uint(value_size, 64);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct inner_cs);
} outer_cs SEC(".maps");

struct inner_cl {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PH_HDR + CLASS_L);
	__uint(key_size, 4);
	__uint(value_size, 64);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct inner_cl);
} outer_cl SEC(".maps");

/* Which class is live (a one-entry array: an ip-link-friendly selector). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sel SEC(".maps");

/* (c) big values: 1 MiB per element, BPF_F_INNER_MAP (any element count):
 * one call reaches the header and up to 1 MiB of bits. */
struct inner_big {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, 4);
	__uint(value_size, BIG_VALUE);
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct inner_big);
} outer_big SEC(".maps");

/* (f) a plain array the program knows, sized at load (set_max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blk64);
} garr SEC(".maps");

/* (d) .bss: fixed size at compile time (an array value is capped at
 * KMALLOC_MAX_SIZE, 4 MiB, so only in-cache sizes fit). */
struct blk64 gbss[PH_HDR + CLASS_S];

static __always_inline int parse_bench(struct xdp_md *ctx, struct fb_key *key)
{
	__u32 frag = 0;
	int rc = fb_parse_packet(ctx, key, &frag);

	if (cfg_bench) {
		__u32 i = bench_seq++;

		fb_bench_flow(fb_bench_index(i, cfg_bench), 0, key);
	}
	return rc;
}

enum { D_LOOKUP = 0, D_BIG = 1, D_BSS = 2 };

static __always_inline const __u64 *blk_at(void *m, __u32 b, int d)
{
	if (d == D_BSS)
		return b < PH_HDR + CLASS_S ? gbss[b].w : 0;
	if (d == D_BIG) {
		__u32 c = b / BIG_BLOCKS;
		__u8 *p = bpf_map_lookup_elem(m, &c);

		if (!p)
			return 0;
		return (const __u64 *)(p + ((b & (BIG_BLOCKS - 1)) << 6));
	}
	return bpf_map_lookup_elem(m, &b);
}

static __always_inline int test_block(const __u64 *blk, __u64 h, __u32 k)
{
	__u64 miss = 0;
	int w;

	if (cfg_kconst) {
#pragma unroll
		for (w = 0; w < 8; w++) {
			__u64 m = ph_mask8((__u32)h, w);

			miss |= (blk[w] & m) ^ m;
		}
	} else {
#pragma unroll
		for (w = 0; w < 8; w++) {
			__u64 m = fb_blocked_word_mask(h, k, w);

			miss |= (blk[w] & m) ^ m;
		}
	}
	return miss == 0;
}

/* The probe: header, keys (if the hash needs them), one block. cls != 0:
 * the size class is known at compile time. */
static __always_inline int probe(void *m, int d, __u32 cls, const struct fb_key *key)
{
	const __u64 *h0, *k1 = 0, *k2 = 0, *k3 = 0, *blk;
	__u64 K[PH_KEYWORDS], h;
	__u32 nb, idx;
	int i;

	if (d == D_BSS) {
		h0 = gbss[0].w;
	} else {
		h0 = blk_at(m, 0, d);
		if (!h0)
			return 0;
	}
	nb = cls ? cls : (__u32)h0[0];
	if (cfg_alg >= PH_ML2_FMIX) {
		if (d == D_BIG) {
			k1 = h0 + 8, k2 = h0 + 16, k3 = h0 + 24;
		} else if (d == D_BSS) {
			k1 = gbss[1].w, k2 = gbss[2].w, k3 = gbss[3].w;
		} else {
			k1 = blk_at(m, 1, d);
			k2 = blk_at(m, 2, d);
			k3 = blk_at(m, 3, d);
			if (!k1 || !k2 || !k3)
				return 0;
		}
#pragma unroll
		for (i = 0; i < 8; i++) {
			K[i] = k1[i];
			K[8 + i] = k2[i];
			K[16 + i] = k3[i];
		}
	}
	if (cfg_alg == PH_ML2_SHIFT) {
		__u64 s1, s2, miss = 0;

		ph_ml2_pair(key->w, K, &s1, &s2);
		idx = PH_HDR + fb_reduce32((__u32)(s1 >> 32), nb);
		blk = blk_at(m, idx, d);
		if (!blk)
			return 0;
#pragma unroll
		for (i = 0; i < 8; i++) {
			__u64 mk = ph_mask_shift(s2, i);

			miss |= (blk[i] & mk) ^ mk;
		}
		return miss == 0;
	}
	h = ph_hash(cfg_alg, key->w, K, h0 + 2);
	idx = PH_HDR + fb_reduce32((__u32)(h >> 32), nb);
	if (d == D_BSS)
		blk = blk_at(0, idx, D_BSS);
	else
		blk = blk_at(m, idx, d);
	if (!blk)
		return 0;
	return test_block(blk, h, (__u32)h0[1]);
}

#define PROG(name, body)                                                                           \
	SEC("xdp") int name(struct xdp_md *ctx)                                                    \
	{                                                                                          \
		struct fb_key key = {};                                                            \
		__u32 zero = 0;                                                                    \
		void *inner;                                                                       \
		int hit = 0;                                                                       \
                                                                                                   \
		if (parse_bench(ctx, &key) != FB_PARSE_OK)                                         \
			return XDP_PASS;                                                           \
		(void)zero;                                                                        \
		(void)inner;                                                                       \
		body;                                                                              \
		hits += hit;                                                                       \
		return hit ? XDP_DROP : XDP_PASS;                                                  \
	}

PROG(p_parse, hit = key.w[4] & 1)
PROG(p_empty, hit = 0)
PROG(p_a, inner = bpf_map_lookup_elem(&outer_dyn, &zero);
     if (inner) hit = probe(inner, D_LOOKUP, 0, &key))
PROG(p_bs, inner = bpf_map_lookup_elem(&outer_cs, &zero);
     if (inner) hit = probe(inner, D_LOOKUP, CLASS_S, &key))
PROG(p_bl, inner = bpf_map_lookup_elem(&outer_cl, &zero);
     if (inner) hit = probe(inner, D_LOOKUP, CLASS_L, &key))
PROG(p_bsel, {
	__u32 *c = bpf_map_lookup_elem(&sel, &zero);
	if (c && *c == 0) {
		inner = bpf_map_lookup_elem(&outer_cs, &zero);
		if (inner)
			hit = probe(inner, D_LOOKUP, CLASS_S, &key);
	} else if (c) {
		inner = bpf_map_lookup_elem(&outer_cl, &zero);
		if (inner)
			hit = probe(inner, D_LOOKUP, CLASS_L, &key);
	}
})
PROG(p_c, inner = bpf_map_lookup_elem(&outer_big, &zero);
     if (inner) hit = probe(inner, D_BIG, 0, &key))
PROG(p_f, hit = probe(&garr, D_LOOKUP, 0, &key))
PROG(p_d, hit = probe(0, D_BSS, CLASS_S, &key))

/* Cost split, on the .bss layout: the hash alone (no memory access), and
 * the block access and masks alone (index from a cheap mix, no key). */
PROG(p_honly, { hit = ph_hash(cfg_alg, key.w, gbss[1].w, gbss[0].w + 2) & 1; })
PROG(p_lonly, {
	__u64 h = (key.w[1] ^ key.w[4]) * 0x9e3779b97f4a7c15ULL;
	__u32 idx = PH_HDR + fb_reduce32((__u32)(h >> 32), CLASS_S);
	hit = test_block(gbss[idx].w, h, 8);
})

/* Live receiver: design (b), 1 MiB class, source-address rules (kind
 * SRC, /128) as one probe, with per-CPU counters as flowbloom keeps them
 * (seen, matched, hit_src, dropped/passed: packets and bytes). */
struct lstats {
	__u64 c[16][2];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lstats);
} live_stats SEC(".maps");

SEC("xdp") int p_live(struct xdp_md *ctx)
{
	__u64 bytes = ctx->data_end - ctx->data;
	struct fb_key key = {}, k = {};
	__u32 zero = 0;
	struct lstats *st = bpf_map_lookup_elem(&live_stats, &zero);
	void *inner;
	int hit = 0, v;

	if (!st)
		return XDP_PASS;
	st->c[0][0]++, st->c[0][1] += bytes;
	if (fb_parse_packet(ctx, &key, &zero) != FB_PARSE_OK)
		return XDP_PASS;
	k.w[0] = key.w[0];
	k.w[1] = key.w[1];
	k.w[4] = fb_key_word_tail(0, 0, 0, FB_KIND_SRC, 128);
	zero = 0;
	inner = bpf_map_lookup_elem(&outer_cs, &zero);
	if (inner)
		hit = probe(inner, D_LOOKUP, CLASS_S, &k);
	if (hit) {
		st->c[1][0]++, st->c[1][1] += bytes;
		st->c[8][0]++, st->c[8][1] += bytes;
	}
	v = hit ? 2 : 3;
	st->c[v][0]++, st->c[v][1] += bytes;
	return hit ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
