/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every map the XDP program uses, in one place.
 *
 * fb_filter and fb_stats are pinned by name, so an object loaded by
 * `ip link set dev X xdp obj flowbloom.bpf.o sec xdp` reuses the maps that
 * `flowbloom create default` pinned in /sys/fs/bpf/xdp/globals. The CLI
 * instead hands the loader the named filter's maps (bpf_map__reuse_fd).
 *
 * fb_filter is an ARRAY_OF_MAPS of chunks (include/flowbloom/geometry.h,
 * "Physical layout"): slot 0 the head, then each generation's chunks, then
 * those of the generations of rules with a lifetime (ttl.h). Every
 * chunk has the template's shape and the template has no BPF_F_INNER_MAP,
 * so the verifier inlines the lookups into them: a probe makes no helper
 * call. The outer map's parameters are fixed, so `ip link` can reuse its
 * pin; swapping slot 0 replaces a filter in one step.
 */
#ifndef FLOWBLOOM_MAPS_BPF_H
#define FLOWBLOOM_MAPS_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/geometry.h"
#include "chunk.bpf.h"
#include "flowbloom/maps.h"
#include "flowbloom/monitor.h"
#include "flowbloom/flowacct.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, FB_FILTER_SLOTS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct fb_chunk);
} fb_filter SEC(".maps");

/* One counter pair per packet outcome (maps.h, fb_stat_cell()): each
 * packet adds to one. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fb_stat_cells);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} fb_stats SEC(".maps");

/* replay --explain: the last packet's key and verdict. Written only when
 * cfg_trace is set, which removes the code otherwise. Not pinned. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fb_trace);
} fb_trace SEC(".maps");

/* Exact confirmation sets (maps.h). Templates; the CLI creates the sets of
 * a filter made with --confirm exact and hands over its outer maps. */
struct fb_exact_set {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(struct fb_key));
	__uint(value_size, sizeof(__u32));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, struct fb_exact_set);
} fb_exact SEC(".maps");

struct fb_lpm_set {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(struct fb_lpm_key));
	__uint(value_size, sizeof(__u32));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 4);
	__type(key, __u32);
	__array(values, struct fb_lpm_set);
} fb_lpm SEC(".maps");

/* Flow monitoring (bpf/monitor.bpf.h). The CLI sizes and pins these per filter
 * (user/lib/monitor/monmaps.c) and hands them over with bpf_map__reuse_fd; the small
 * declarations here serve loads with monitoring off, whose code the
 * verifier removes. Never pinned by name: their sizes vary. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fb_mon_cell);
} fb_sketch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fb_top_bucket);
} fb_top SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fb_key);
} fb_top_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fb_seen_slot);
} fb_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} fb_newflows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fb_mon_stats);
} fb_mon_stats SEC(".maps");

/* Per-flow accounting (bpf/flowacct.bpf.h): one plane per CPU, each a
 * struct fb_acct_hdr followed by buckets (include/flowbloom/flowacct.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fb_acct_hdr);
} fb_flows SEC(".maps");

#endif
