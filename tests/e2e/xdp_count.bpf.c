// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A second XDP program for tests/e2e/xdp_loader.sh: counts every packet it sees
 * and passes it. Loaded with flowbloom under xdp-loader's dispatcher, its
 * counter shows which packets flowbloom let through to the next program.
 * Its map is pinned by name, under the pin path the test gives xdp-loader.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xc_count SEC(".maps");

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&xc_count, &zero);

	(void)ctx;
	if (n)
		(*n)++;
	return XDP_PASS;
}

/* After flowbloom (priority 10) under libxdp's dispatcher. */
struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} _xdp_count SEC(".xdp_run_config");

char LICENSE[] SEC("license") = "Dual BSD/GPL";
