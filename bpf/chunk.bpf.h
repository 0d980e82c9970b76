/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The shape of every chunk of a filter's bits (include/flowbloom/
 * geometry.h, "Physical layout"): the inner-map template of fb_filter
 * (maps.bpf.h), and of the benchmark's floor that probes a filter's own
 * chunks (tests/bench/bench.bpf.c), whose outer map must match it. A
 * template only: the chunks are created by the CLI. No map is declared
 * here, so a program may take the shape without fb_filter's pin.
 */
#ifndef FLOWBLOOM_CHUNK_BPF_H
#define FLOWBLOOM_CHUNK_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flowbloom/geometry.h"
#include "flowbloom/maps.h"

struct fb_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, FB_CHUNK_MAP_FLAGS);
	__uint(max_entries, 1);
	/* Sizes, not types: clang only forward-declares a type used here. */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FB_CHUNK_BYTES);
};

#endif
