// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The data path's parser (bpf/parsing.bpf.h) alone, for
 * tests/program/test_parse.c: each run writes what it made of the frame
 * (key, FB_PARSE_* bits, verdict) into pc_out. Built twice by the Makefile:
 * as the program is built on this machine (with FB_UNALIGNED_LOADS where
 * the architecture has it: one 8-byte load per IPv6 key word) and as it is
 * built where it does not (parse_check_aligned.bpf.o: the halves one by
 * one), so the test shows both readings agree on every frame.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "parsing.bpf.h"
#include "parse_check.h"

_Static_assert(PC_PARSE_FRAGMENT == FB_PARSE_FRAGMENT && PC_PARSE_PROTO == FB_PARSE_PROTO,
	       "the test's names for the bits");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pc_out);
} pc_out SEC(".maps");

SEC("xdp")
int parse_check(struct xdp_md *ctx)
{
	struct fb_key key = {};
	struct pc_out *o;
	__u32 zero = 0, info = 0;
	int parse;

	parse = fb_parse_packet(ctx, &key, &info);
	o = bpf_map_lookup_elem(&pc_out, &zero);
	if (!o)
		return XDP_ABORTED;
	o->key = key;
	o->info = info;
	o->parse = parse;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
