// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 10 proof of concept, prefix lists: an IPv4 source address probed
 * at every prefix length the list holds (longest first, stop at a hit) in
 * a blocked Bloom filter, against BPF_MAP_TYPE_LPM_TRIE.
 *
 * cfg_alg PH_SIP13: today's scheme, SipHash-1-3 of the masked 40-byte key
 * per length. PH_ML2_FMIX: the multilinear hash of the same key computed
 * incrementally: for IPv4 only chunk 3 (the address) varies with the
 * length, so per length the hash is C[len] + K * (addr & mask), then fmix.
 * Both give the same bits as user space hashing the masked key whole.
 *
 * Filter (the array `filt`, 64-byte elements): block 0 = { nblocks,
 * number of lengths, SipHash key[2], the two sums' keys of chunk 3 };
 * block 1 + i = { length i (128-bit space, longest first), C1[i], C2[i] };
 * bits from block PX_HDR on.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/bench.h"
#include "flowbloom/geometry.h"
#include "parsing.bpf.h"
#include "perf_hash.h"

#define PX_HDR 17
#define PX_MAXLEN 16

const volatile __u32 cfg_alg = PH_ML2_FMIX;
__u32 seq;
__u64 hits;

struct blk64 {
	__u64 w[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* set at load */
	__type(key, __u32);
	__type(value, struct blk64);
} filt SEC(".maps");

/* Probe addresses (network byte order), 2^16 of them, set per run. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1 << 16);
	__type(key, __u32);
	__type(value, __u64); /* low 32 bits: the address (values are 8-byte strided anyway) */
} addrs SEC(".maps");

struct lpm4_key {
	__u32 prefixlen;
	__u32 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* set at load */
	__type(key, struct lpm4_key);
	__type(value, __u32);
} lpm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* set at load */
	__type(key, __u64);	/* masked address | plen << 32 */
	__type(value, __u32);
} hmap SEC(".maps");

/* Parse, then replace the source address with the run's next address. */
static __always_inline int parse_addr(struct xdp_md *ctx, struct fb_key *key)
{
	__u32 frag = 0, i = seq++ & 0xffff;
	int rc = fb_parse_packet(ctx, key, &frag);
	__u64 *a = bpf_map_lookup_elem(&addrs, &i);

	if (!a)
		return -1;
	key->w[0] = 0;
	key->w[1] = fb_key_word_v4mapped((__u32)*a);
	return rc;
}

static __always_inline int test8(const __u64 *blk, __u64 h)
{
	__u64 miss = 0;
	int w;

#pragma unroll
	for (w = 0; w < 8; w++) {
		__u64 m = ph_mask8((__u32)h, w);

		miss |= (blk[w] & m) ^ m;
	}
	return miss == 0;
}

SEC("xdp") int x_parse(struct xdp_md *ctx)
{
	struct fb_key key = {};

	if (parse_addr(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	hits += (key.w[1] >> 32) & 1;
	return XDP_PASS;
}

SEC("xdp") int x_lpm(struct xdp_md *ctx)
{
	struct fb_key key = {};
	struct lpm4_key lk;
	int hit;

	if (parse_addr(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	lk.prefixlen = 32;
	lk.addr = key.w[1] >> 32;
	hit = bpf_map_lookup_elem(&lpm, &lk) != NULL;
	hits += hit;
	return hit ? XDP_DROP : XDP_PASS;
}

/* Exact hash map per prefix length (the lengths from the filter header):
 * the hash-map way of doing what the Bloom probe does. */
SEC("xdp") int x_hash(struct xdp_md *ctx)
{
	struct fb_key key = {};
	__u32 zero = 0, i, n, a;
	const __u64 *h0;
	int hit = 0;

	if (parse_addr(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	h0 = bpf_map_lookup_elem(&filt, &zero);
	if (!h0)
		return XDP_PASS;
	n = h0[1];
	a = key.w[1] >> 32;
	for (i = 0; i < PX_MAXLEN; i++) {
		__u32 b = 1 + i, plen, bits;
		const __u64 *lb;
		__u64 k;

		if (i >= n)
			break;
		lb = bpf_map_lookup_elem(&filt, &b);
		if (!lb)
			break;
		plen = lb[0];
		bits = plen - 96;
		k = (bits >= 32 ? a
				: a & (bits ? __builtin_bswap32(~0U << (32 - (bits & 31))) : 0)) |
		    (__u64)plen << 32;
		if (bpf_map_lookup_elem(&hmap, &k)) {
			hit = 1;
			break;
		}
	}
	hits += hit;
	return hit ? XDP_DROP : XDP_PASS;
}

SEC("xdp") int x_bloom(struct xdp_md *ctx)
{
	struct fb_key key = {};
	__u32 zero = 0, i, n, nb;
	const __u64 *h0, *blk;
	__u64 m3, ka, kb;
	int hit = 0;

	if (parse_addr(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	h0 = bpf_map_lookup_elem(&filt, &zero);
	if (!h0)
		return XDP_PASS;
	nb = h0[0];
	n = h0[1];
	ka = h0[4];
	kb = h0[5];
	m3 = key.w[1] >> 32; /* chunk 3: the IPv4 address as the key holds it */
	for (i = 0; i < PX_MAXLEN; i++) {
		__u32 b = 1 + i, idx, plen;
		const __u64 *lb;
		__u64 h;

		if (i >= n)
			break;
		lb = bpf_map_lookup_elem(&filt, &b);
		if (!lb)
			break;
		plen = lb[0];
		if (cfg_alg == PH_ML2_FMIX || cfg_alg == PH_ML2_RAW) {
			/* Mask of the first plen - 96 bits of the address,
			 * as the little-endian chunk holds them. */
			__u32 bits = plen - 96;
			__u32 mask = bits ? __builtin_bswap32(~0U << (32 - (bits & 31))) : 0;
			__u64 m = m3 & (bits >= 32 ? ~0U : mask);
			__u64 s1 = lb[1] + ka * m, s2 = lb[2] + kb * m;

			h = (s1 >> 32) << 32 | s2 >> 32;
			if (cfg_alg == PH_ML2_FMIX)
				h = fb_fmix64(h);
			else
				h = (h ^ h >> 29) * 0xbf58476d1ce4e5b9ULL; /* one-multiply spread */
		} else {
			struct fb_key k = {};

			k.w[1] = key.w[1] & fb_prefix_mask(plen, 1);
			k.w[4] = fb_key_word_tail(0, 0, 0, FB_KIND_SRC, plen);
			h = fb_siphash(k.w, 40, h0 + 2, 1, 3);
		}
		idx = PX_HDR + fb_reduce32((__u32)(h >> 32), nb);
		blk = bpf_map_lookup_elem(&filt, &idx);
		if (blk && test8(blk, h)) {
			hit = 1;
			break;
		}
	}
	hits += hit;
	return hit ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
