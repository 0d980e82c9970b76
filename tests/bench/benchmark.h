/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of the benchmark (bench.c) share: sizes, the result rows,
 * the filters and programs it measures.
 */
#ifndef FLOWBLOOM_TEST_BENCHMARK_H
#define FLOWBLOOM_TEST_BENCHMARK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CPU_SET, pthread_setaffinity_np */
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "bench.skel.h"
#include "types/counting.h"
#include "types/bits.h"
#include "store/replace.h"
#include "rules/rules.h"
#include "store/stats.h"
#include "store/store.h"
#include "store/head.h"
#include "flowbloom/bench.h"
#include "flowbloom.skel.h"
#include "prog/loader.h"
#include "monitor/monmaps.h"
#include "rules/prefixes.h"
#include "packet.h"
#include "types/sizing.h"
#include "util.h"

#define MIB (1024.0 * 1024.0)
/* The bits of a flowbloom filter taking exactly n MiB: its chunks less
 * the head page (include/flowbloom/geometry.h). */
#define MIB_BITS(n)                                                                                \
	(((__u64)(n) * (1024 * 1024 / FB_CHUNK_BYTES) * FB_CHUNK_BLOCKS - FB_PAGE_BLOCKS) *        \
	 FB_BLOCK_BITS)
#define SMALL_BITS MIB_BITS(1)	 /* 1 MiB */
#define LARGE_BITS MIB_BITS(256) /* 256 MiB */
#define SMALL_FLOWS (1U << 19)	 /* flows in the 1 MiB filters */
#define LARGE_FLOWS (1U << 20)	 /* flows in the 256 MiB filters, hash map */
struct row {
	char name[64];
	double kern, wall; /* ns per packet */
	int verdict;	   /* the last packet's (XDP_DROP, XDP_PASS, ...) */
};

/* bench.c */
extern unsigned repeat;
double now(void);
struct row *measure(const char *name, int prog_fd, int v6);
/* Exit unless row r's last packet got verdict (XDP_DROP for hits: a
 * program whose hits pass did not do the work its row is named for). */
void expect_verdict(const struct row *r, int verdict);
struct row *bench_row(const char *name);
struct row *bench_row_like(const char *prefix, const char *infix);
extern struct row *bench_floor10m; /* parse + one line of an array the 10M filter's size */
/* The probe alone over a copy of the 10M filter's bits (hit, miss), then
 * over the filter's own chunks (hit, miss) */
extern struct row *bench_probe_floor[4];
int make_filter_cli(const char *name, const char *args, struct fb_store *f);
const char *hash_name(int h); /* enum fb_hash_alg, as the CLI spells it */
int make_filter(const char *name, __u64 bits, int k, int layout, __u32 n, struct fb_store *f);
struct bench_bpf *load_bench(__u32 bench, int v6, __u32 kb_entries, __u32 hash_entries,
			     const struct bench_bpf *share);
void target(const char *what, double got, double limit, bool at_most);
/* ns per packet through flowbloom on f, hits (flows 0..n-1, n a power of
 * two) and misses. */
void bench_flowbloom(const char *label, struct fb_store *f, __u32 n, int v6);

/* bench_fill.c */
void bench_fill(double *plain_out, double *counting_out);
__u64 percpu_sum(int fd, size_t value_size, size_t offset);

/* bench_targets.c: sections 3 and 4 */
void bench_targets(unsigned long long hash_mem, unsigned long long kb_mem, double plain,
		   double counting);

/* bench_gen.c: the live head-to-head's tools (bench.sh): true if argv
 * names one (srcs, count, stage-rx, gen, scale-fill, scale-rx), which ran
 * and left its exit status in *rc. */
bool bench_tool(int argc, char **argv, int *rc);
/* The program cut after stage (FB_BENCH_STAGE_*) through test_run on f's
 * array, IPv4, cfg_bench bench: row name. */
struct row *bench_stage_measure(const char *name, const struct fb_store *f, int stage, __u32 bench);

/* bench_prefixes.c */
void bench_prefixes(void);
void bench_prefix_table(void);
/* A list of n entries shaped like Spamhaus DROP (n/10 prefixes /11-/24 with
 * DROP's length weights, the rest /32; all prefixes up to 1,500). */
struct pentry {
	__u32 addr; /* network order, masked */
	__u8 len;
};
void gen_list(struct pentry *e, size_t n, uint64_t *seed);

/* bench_scale.c: the live head-to-head at scale (section 14) */
int scale_fill(const char *name, const char *what);
int scale_rx(const char *dev, const char *kind, const char *what);
int floor_fill(struct bench_bpf *b, const struct fb_store *f, __u32 nb, int fam, int kind);
void scale_gen_setup(struct bench_bpf *b, const char *what);
int scale_gen_fill(struct bench_bpf *b, const char *what);

/* bench_shapes.c */
void bench_shapes(void);

/* bench_verifier.c */
void bench_verifier(void);

/* bench_monitor.c */
void bench_monitor(struct fb_store *f, __u32 n);

/* bench_ttl.c */
void bench_ttl(void);

/* bench_types.c */
void bench_types(void);

/* bench_capture.c */
void bench_capture(void);

/* bench_compress.c */
void bench_compress(void);

#endif
