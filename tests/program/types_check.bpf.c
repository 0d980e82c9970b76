// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The probes of every filter type, as the data path compiles them
 * (include/flowbloom/probe.h), over a filter array that user space fills
 * through its mmap: tests/program/types_same.c runs this program with
 * BPF_PROG_TEST_RUN on frames that carry a raw flow key and compares its
 * answer (XDP_DROP: may be present, XDP_PASS: absent) with the library's
 * probe of the same memory.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "types_check.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tc_conf);
	__uint(map_flags, BPF_F_MMAPABLE);
} tc_conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TC_CHUNKS);
	__type(key, __u32);
	__type(value, struct tc_chunk);
	__uint(map_flags, BPF_F_MMAPABLE);
} tc_table SEC(".maps");

/* Where probe.h finds block b: chunk b / FB_CHUNK_BLOCKS of tc_table, as
 * bpf/filter.bpf.h finds it in the filter's (one lookup fewer: no outer
 * map). */
typedef __u32 fb_tbl_t;

static __always_inline struct fb_block *fb_tblock(fb_tbl_t tbl, __u32 b)
{
	__u32 c = b / FB_CHUNK_BLOCKS;
	struct tc_chunk *v;

	(void)tbl;
	v = bpf_map_lookup_elem(&tc_table, &c);
	return v ? &v->b[b % FB_CHUNK_BLOCKS] : NULL;
}

#include "flowbloom/probe.h"

SEC("xdp")
int types_check(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	const struct fb_header *hdr;
	struct fb_key key;
	struct tc_conf *c;
	__u32 zero = 0;
	__u64 h;

	if (data + sizeof(key) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(&key, data, sizeof(key));
	c = bpf_map_lookup_elem(&tc_conf, &zero);
	hdr = (const struct fb_header *)fb_tblock(0, 0);
	if (!c || !hdr)
		return XDP_ABORTED;
	h = fb_hash_with(&key, hdr->hash, hdr->key, c->kw);
	return fb_filter_probe(0, hdr, h) ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
