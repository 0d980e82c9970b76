// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Baselines for the benchmark suite, built from the same parser and the
 * same benchmark-flow hook as flowbloom's program so only the lookup
 * differs: an empty program, parse only, the kernel's Bloom filter map,
 * an exact hash map (xdp-filter's approach), a count-only program and a
 * traffic generator for live-frames runs.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "flowbloom/bench.h"
#include "flowbloom/geometry.h"
#include "flowbloom/head.h"
#include "flowbloom/key.h"
#include "flowbloom/maps.h"
#include "chunk.bpf.h"
#include "parsing.bpf.h"
#include "scale.h"

const volatile __u32 cfg_bench = 0;
const volatile __u8 cfg_bench_v6 = 0;
const volatile __u32 cfg_ifindex = 0;  /* xdp_gen: where to redirect */
const volatile __u32 cfg_nsrc = 1;     /* xdp_gen_list: sources in srcs */
const volatile __u8 cfg_nlens = 0;     /* xdp_hashlen: lengths in cfg_lens */
const volatile __u8 cfg_lens[33] = {}; /* longest first, 0..32 */
__u32 bench_seq;
__u64 sink;
__u64 chase; /* xdp_dram: the word the previous packet read */

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(max_entries, 1); /* set by the benchmark */
	__uint(map_extra, 7);	/* number of hashes, set by the benchmark */
	__type(value, struct fb_key);
} kbloom SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* set by the benchmark */
	__type(key, struct fb_key);
	__type(value, __u32);
} exact SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* set by the benchmark */
	__type(key, struct fb_lpm_key);
	__type(value, __u32);
} lpm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} count SEC(".maps");

/* Live generator's sources (xdp_gen_list): 16 bytes each, the IPv4 ones in
 * the first 4. */
struct src_addr {
	__u8 a[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct src_addr);
} srcs SEC(".maps");

/* One random 64-byte line of a large array per packet (xdp_dram): parse
 * plus one memory access, in the same kind of memory (vmalloc'd map
 * pages) as a filter's. With cfg_dram_chase each packet's line depends on
 * the previous packet's (one DRAM latency each); without, packets are as
 * independent as a filter's probes are: parsing and one line of an array
 * of that size, nothing else (a longer program overlaps fewer of its
 * misses with the next packets' work). Mmapable, as a filter's chunks
 * are, for the same alignment: its lines start on a page, so each is one
 * cache line. A plain array's values start 312 bytes into its allocation
 * (struct bpf_array on this kernel), which puts 8 bytes of every 64-byte
 * line in one cache line and 56 in the next: a program reading a whole
 * line (xdp_probe_floor) paid two misses where a filter pays one. */
struct line {
	__u64 w[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* set by the benchmark: a power of two */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct line);
} dram SEC(".maps");

const volatile __u32 cfg_dram_lines = 1; /* lines in dram */
const volatile __u8 cfg_dram_chase = 1;

/* Prefix benchmark: the source addresses xdp_addr writes into the packet
 * (network order) before it tail-calls the program under test in jmp[0]. */
#define ADDRS 65536
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ADDRS);
	__type(key, __u32);
	__type(value, __u32);
} addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} jmp SEC(".maps");

/* An IPv4-only LPM trie (4-byte keys, as an IPv4 block list would use). */
struct lpm4_key {
	__u32 prefixlen;
	__u32 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* set by the benchmark */
	__type(key, struct lpm4_key);
	__type(value, __u32);
} lpm4 SEC(".maps");

/* One exact hash map probed once per prefix length (the other way to hold
 * a prefix list): key = masked IPv4 address (network order) | length << 32. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* set by the benchmark */
	__type(key, __u64);
	__type(value, __u32);
} hlen SEC(".maps");

static __always_inline int parse_bench(struct xdp_md *ctx, struct fb_key *key)
{
	__u32 info = 0;
	int rc = fb_parse_packet(ctx, key, &info);

	if (cfg_bench) {
		__u32 i = bench_seq++;

		fb_bench_flow(fb_bench_index(i, cfg_bench), cfg_bench_v6, key);
	}
	return rc;
}

SEC("xdp")
int xdp_empty(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp")
int xdp_parse(struct xdp_md *ctx)
{
	struct fb_key key = {};

	if (parse_bench(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	/* Keep the key alive so the compiler cannot drop the parse. */
	sink += key.sport + key.saddr[15] + key.proto;
	return XDP_PASS;
}

SEC("xdp")
int xdp_kbloom(struct xdp_md *ctx)
{
	struct fb_key key = {};

	if (parse_bench(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	return bpf_map_peek_elem(&kbloom, &key) ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int xdp_exact(struct xdp_md *ctx)
{
	struct fb_key key = {};

	if (parse_bench(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	return bpf_map_lookup_elem(&exact, &key) ? XDP_DROP : XDP_PASS;
}

/* Source address in an LPM trie (the list xdp-filter users ask for). */
SEC("xdp")
int xdp_lpm(struct xdp_md *ctx)
{
	struct fb_key key = {};
	struct fb_lpm_key lk;

	if (parse_bench(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	fb_lpm_key_set(&lk, key.family, key.saddr, 128);
	return bpf_map_lookup_elem(&lpm, &lk) ? XDP_DROP : XDP_PASS;
}

/* Parse, then read one line of dram chosen by a multiplicative hash of the
 * packet's sequence number (a different, unpredictable line each time),
 * mixed with the word the previous packet read (always 0, but the CPU
 * cannot know): each read waits for the one before, so a packet pays a
 * whole DRAM latency, as a pointer chase does, rather than overlapping its
 * read with the next packets'. */
SEC("xdp")
int xdp_dram(struct xdp_md *ctx)
{
	struct fb_key key = {};
	__u32 i = bench_seq++ * 2654435761U, idx;
	struct line *l;

	if (parse_bench(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	if (cfg_dram_chase)
		i ^= (__u32)chase;
	idx = ((__u64)(i ^ i >> 15) * cfg_dram_lines) >> 32;
	l = bpf_map_lookup_elem(&dram, &idx);
	if (l)
		chase = l->w[key.sport & 7];
	return XDP_PASS;
}

/* The least a keyed probe of a blocked filter does (xdp_probe_floor):
 * the filter's one descriptor of the packet's shape (floor_probe, copied
 * from its head: the 10M filter's IPv4 5-tuple one in section 1, the
 * scale filter's IPv6 source one live), NH of the packet's key
 * (include/flowbloom/head.h), the key's one line of the filter's blocks
 * (copied into dram, one line each) and the k = 8 test (geometry.h), by
 * the data path's own functions. No head, no descriptor loop, no
 * statistics, no verdict logic: what the probe alone costs at that size.
 * floor_hits counts the lines that held the key. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fb_probe);
} floor_probe SEC(".maps");

__u64 floor_hits;

/* The floors' first steps: parse, then NH of the key under the filter's
 * descriptor (*h); 0 if the packet does not parse. */
static __always_inline int floor_hash(struct xdp_md *ctx, __u64 *h)
{
	struct fb_key key = {};
	const struct fb_probe *p;
	__u32 zero = 0;

	if (parse_bench(ctx, &key) != FB_PARSE_OK)
		return 0;
	p = bpf_map_lookup_elem(&floor_probe, &zero);
	if (!p)
		return 0;
	*h = fb_probe_nhk(p, key.w);
	return 1;
}

/* The floors' last step: the block's 8 bits; a hit counted and dropped. */
static __always_inline int floor_verdict(const struct fb_block *blk, __u64 h)
{
	if (!blk || !fb_block_has(blk, h, FB_BLOCK_WORDS))
		return XDP_PASS;
	floor_hits++;
	return XDP_DROP;
}

SEC("xdp")
int xdp_probe_floor(struct xdp_md *ctx)
{
	const struct fb_block *blk;
	__u32 idx;
	__u64 h;

	if (!floor_hash(ctx, &h))
		return XDP_PASS;
	idx = fb_blocked_index(h, cfg_dram_lines);
	blk = bpf_map_lookup_elem(&dram, &idx);
	return floor_verdict(blk, h);
}

/* The same probe over the filter's own chunks (xdp_probe_floor_chunks):
 * the filter's fb_filter, handed over by the benchmark, and the slot of
 * its generation's chunk 0. The block is found as the data path finds it
 * in a filter of more than one chunk (fb_chunk_block(), chunk.bpf.h):
 * the chunk's slot, then the block in it. What the copy saves is that
 * lookup, a dependent load on the way to the block. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, FB_FILTER_SLOTS);
	__type(key, __u32);
	__array(values, struct fb_chunk);
} floor_chunks SEC(".maps");

const volatile __u32 cfg_floor_base = 1; /* fb_chunk_slot(gen, 0) */

SEC("xdp")
int xdp_probe_floor_chunks(struct xdp_md *ctx)
{
	const struct fb_block *blk;
	__u64 h;

	if (!floor_hash(ctx, &h))
		return XDP_PASS;
	blk = fb_chunk_block(&floor_chunks, cfg_floor_base,
			     fb_blocked_block(h, cfg_dram_lines) + FB_HEAD_SHIFT);
	return floor_verdict(blk, h);
}

/* Prefix benchmark driver: give the packet (IPv4, from test_build_frame)
 * the next probe address as its source, then run the program under test on
 * it. Every program measured this way pays the same lookup and tail call. */
SEC("xdp")
int xdp_addr(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 i = bench_seq++ & (ADDRS - 1), *a = bpf_map_lookup_elem(&addrs, &i);
	__u8 *p = data;

	if (!a || p + 14 + 20 > (__u8 *)end)
		return XDP_ABORTED;
	__builtin_memcpy(p + 26, a, 4); /* IPv4 source (checksums are not checked) */
	bpf_tail_call(ctx, &jmp, 0);
	return XDP_ABORTED;
}

/* Source address in lpm4. */
SEC("xdp")
int xdp_lpm4(struct xdp_md *ctx)
{
	struct fb_key key = {};
	struct lpm4_key lk = { .prefixlen = 32 };

	if (parse_bench(ctx, &key) != FB_PARSE_OK || key.family != FB_FAMILY_IPV4)
		return XDP_PASS;
	__builtin_memcpy(&lk.addr, &key.saddr[12], 4);
	return bpf_map_lookup_elem(&lpm4, &lk) ? XDP_DROP : XDP_PASS;
}

/* Source address against hlen, one lookup per length, longest first. */
SEC("xdp")
int xdp_hashlen(struct xdp_md *ctx)
{
	struct fb_key key = {};
	__u32 a;
	int l;

	if (parse_bench(ctx, &key) != FB_PARSE_OK || key.family != FB_FAMILY_IPV4)
		return XDP_PASS;
	__builtin_memcpy(&a, &key.saddr[12], 4);
	for (l = 0; l < 33 && l < cfg_nlens; l++) {
		__u8 len = cfg_lens[l];
		__u64 k = (__u64)(a & (len ? bpf_htonl(~0U << (32 - len)) : 0)) | (__u64)len << 32;

		if (bpf_map_lookup_elem(&hlen, &k))
			return XDP_DROP;
	}
	return XDP_PASS;
}

/* Count and drop: the live runs' ceiling. */
SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&count, &zero);

	if (c)
		(*c)++;
	return XDP_DROP;
}

/* Live-frames generator: give each frame the next benchmark flow's source
 * (address low bytes and port) and send it out of cfg_ifindex. */
SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct fb_key key;
	__u32 i = bench_seq++;
	__u8 *p = data;

	fb_bench_flow(fb_bench_index(i, cfg_bench), cfg_bench_v6, &key);
	if (!cfg_bench_v6) {
		/* Ethernet 14 + IPv4 20: source address at 26, ports at 34. */
		if (p + 14 + 20 + 8 > (__u8 *)end)
			return XDP_ABORTED;
		p[28] = key.saddr[14];
		p[29] = key.saddr[15];
		__builtin_memcpy(p + 34, &key.sport, 2);
	} else {
		/* Ethernet 14 + IPv6 40: source address at 22, ports at 54. */
		if (p + 14 + 40 + 8 > (__u8 *)end)
			return XDP_ABORTED;
		p[36] = key.saddr[14];
		p[37] = key.saddr[15];
		__builtin_memcpy(p + 54, &key.sport, 2);
	}
	return bpf_redirect(cfg_ifindex, 0);
}

/* Live generator over a list of sources (the block list's): frame i gets
 * source srcs[i % cfg_nsrc] and is sent out of cfg_ifindex. */
SEC("xdp")
int xdp_gen_list(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 i = bench_seq++ % cfg_nsrc;
	struct src_addr *s = bpf_map_lookup_elem(&srcs, &i);
	__u8 *p = data;

	if (!s)
		return XDP_ABORTED;
	if (cfg_bench_v6) {
		if (p + 14 + 40 + 8 > (__u8 *)end)
			return XDP_ABORTED;
		__builtin_memcpy(p + 22, s->a, 16);
	} else {
		if (p + 14 + 20 + 8 > (__u8 *)end)
			return XDP_ABORTED;
		__builtin_memcpy(p + 26, s->a, 4);
	}
	return bpf_redirect(cfg_ifindex, 0);
}

/* Live at scale (bench_scale.c): the source addresses of the prefix
 * list's frames (one inside each listed prefix), and xdp-filter's design
 * as a receiver: a per-CPU hash of blocked source addresses, each with a
 * packet counter. */
const volatile __u32 cfg_scale_n = 0; /* xdp_gen_scale: scale_host(i) for i < n; 0: scale_srcs */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* set by the benchmark */
	__type(key, __u32);
	__type(value, struct src_addr);
} scale_srcs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1); /* set by the benchmark */
	__type(key, struct src_addr);
	__type(value, __u64);
} exact6 SEC(".maps");

/* Live-frames generator at scale: frame i's IPv6 source is blocked source
 * i mod n (scale.h), or scale_srcs[i mod entries], sent out of cfg_ifindex. */
SEC("xdp")
int xdp_gen_scale(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 i = bench_seq++;
	__u8 *p = data;

	if (p + 14 + 40 + 8 > (__u8 *)end)
		return XDP_ABORTED;
	if (cfg_scale_n) {
		scale_host(i % cfg_scale_n, p + 22);
	} else {
		__u32 j = i % cfg_nsrc;
		struct src_addr *s = bpf_map_lookup_elem(&scale_srcs, &j);

		if (!s)
			return XDP_ABORTED;
		__builtin_memcpy(p + 22, s->a, 16);
	}
	return bpf_redirect(cfg_ifindex, 0);
}

/* xdp-filter's way (its xdpfilt_alw_ip, IPv6 source only): the source in a
 * per-CPU hash map, its counter bumped, dropped if listed. */
SEC("xdp")
int xdp_exact6(struct xdp_md *ctx)
{
	struct fb_key key = {};
	__u64 *c;

	if (parse_bench(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	c = bpf_map_lookup_elem(&exact6, key.saddr);
	if (!c)
		return XDP_PASS;
	(*c)++;
	return XDP_DROP;
}

/* The floor at scale (bench scale-rx ... line): what any filter that reads
 * one random line a frame from an array of its size costs, with nothing
 * else: the source picks a line of dram (one multiply, no keyed hash, no
 * bit test), its first word is read, the frame counted and dropped. */
SEC("xdp")
int xdp_line6(struct xdp_md *ctx)
{
	struct fb_key key = {};
	__u32 zero = 0, idx;
	struct line *l;
	__u64 *c;

	if (parse_bench(ctx, &key) != FB_PARSE_OK)
		return XDP_PASS;
	idx = ((key.w[0] ^ key.w[1]) * 0x9e3779b97f4a7c15ULL >> 32) * cfg_dram_lines >> 32;
	l = bpf_map_lookup_elem(&dram, &idx);
	if (!l || l->w[0] == 1)
		return XDP_PASS;
	c = bpf_map_lookup_elem(&count, &zero);
	if (c)
		(*c)++;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
