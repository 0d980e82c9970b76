// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Same slots on both sides, for the cuckoo, d-left and scalable types:
 * tests/test_types.c fills tc_table through its mmap with the user-space
 * operations (user/lib/types/cuckoo_table.c, dleft_table.c, scalable_table.c) and runs this program
 * with BPF_PROG_TEST_RUN on frames that carry a raw flow key; the program
 * probes with the data path's functions (bpf/types.bpf.h) and answers
 * XDP_DROP for "may be present", XDP_PASS for "absent".
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/hash.h"
#include "flowbloom/geometry.h"
#include "types_check.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tc_geom);
	__uint(map_flags, BPF_F_MMAPABLE);
} tc_geom SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TC_TABLE_BLOCKS);
	__type(key, __u32);
	__type(value, struct fb_block);
	__uint(map_flags, BPF_F_MMAPABLE);
} tc_table SEC(".maps");

/* Where bpf/types.bpf.h finds block b: tc_table itself. */
static __always_inline struct fb_block *fb_tblock(__u32 tbl, __u32 b)
{
	(void)tbl;
	return bpf_map_lookup_elem(&tc_table, &b);
}

#include "types.bpf.h"

SEC("xdp")
int types_check(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct fb_key key;
	struct tc_geom *g;
	__u32 zero = 0;
	__u64 h;
	int hit;

	if (data + sizeof(key) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(&key, data, sizeof(key));
	g = bpf_map_lookup_elem(&tc_geom, &zero);
	if (!g)
		return XDP_ABORTED;
	h = fb_hash_with(&key, g->hash, g->key, g->kw);
	if (g->type == TC_CUCKOO)
		hit = fb_cuckoo_probe(0, &g->c, h);
	else if (g->type == TC_DLEFT)
		hit = fb_dleft_probe(0, &g->d, h);
	else if (g->type == TC_SCALABLE)
		hit = fb_sbf_probe(0, &g->s, h);
	else
		return XDP_ABORTED;
	return hit ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
