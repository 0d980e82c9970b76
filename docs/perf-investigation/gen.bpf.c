// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 10 PoC, live traffic: BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES runs gen on a template frame (IPv6 UDP); gen
 * writes the next source address of the table `srcs` (2001:db8::/32) and
 * redirects the frame into cfg_ifindex (one end of a veth). count is a
 * count-and-drop receiver, the ceiling.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

const volatile __u32 cfg_ifindex = 0;
const volatile __u32 cfg_nsrc = 1;
__u32 seq;

struct src6 {
	__u8 a[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct src6);
} srcs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} count_map SEC(".maps");

SEC("xdp") int gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 i = seq++ % cfg_nsrc;
	struct src6 *s = bpf_map_lookup_elem(&srcs, &i);
	__u8 *p = data;

	if (!s || p + 14 + 40 + 8 > (__u8 *)end)
		return XDP_ABORTED;
	__builtin_memcpy(p + 22, s->a, 16); /* IPv6 source */
	return bpf_redirect(cfg_ifindex, 0);
}

SEC("xdp") int count(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&count_map, &zero);

	if (c)
		(*c)++;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
