/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the counting suites share (unit/test_counting.c, unit/test_counting_crash.c,
 * program/test_counting_kernel.c, program/test_counting_stress.c): a counting filter on
 * anonymous memory with snapshots and an exact model (counting_model.c), and
 * filters in a private bpffs root with the real program (counting_rig.c).
 */
#ifndef FLOWBLOOM_TEST_COUNTING_H
#define FLOWBLOOM_TEST_COUNTING_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* REG_EFL, sigjmp_buf with signal masks */
#endif
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "types/counting.h"
#include "types/bits.h"
#include "store/replace.h"
#include "rules/rules.h"
#include "store/stats.h"
#include "store/store.h"
#include "flowbloom.skel.h"
#include "prog/loader.h"
#include "packet.h"
#include "types/sizing.h"
#include "testlib.h"

struct fake {
	struct fb_store f;
	void *bmem, *cmem; /* the filter array (header + bits), the counter array */
	size_t blen, clen; /* mapped lengths, whole pages */
};

/* A copy of both arrays, whole (journal included). */
struct snap {
	void *b, *c;
	size_t blen, clen;
};

struct model {
	unsigned *c;
	__u64 m;
	unsigned max;
};

struct prog {
	struct flowbloom_bpf *skel;
	int fd, trace_fd;
};

/* counting_model.c */
double now(void);
void fake_init(struct fake *x, __u8 layout, __u8 k, __u32 nblocks, unsigned bits, uint64_t *seed);
void fake_free(struct fake *x);
__u64 mbits(const struct fb_store *f);
unsigned key_pos(const struct fb_store *f, const struct fb_key *key, __u64 pos[FB_MAX_K]);
bool bit_at(const struct fb_store *f, __u64 p);
void bit_put(struct fb_store *f, __u64 p, bool on);
void cnt_set(struct fb_store *f, __u64 p, unsigned v);
void snap_take(const struct fake *x, struct snap *s);
void snap_restore(struct fake *x, const struct snap *s);
void snap_free(struct snap *s);
unsigned cnt_in_snap(const struct fake *x, const struct snap *s, __u64 p);
bool snap_same_all(const struct fake *x, const struct snap *s);
bool snap_same_content(const struct fake *x, const struct snap *s);
void model_init(struct model *md, const struct fb_store *f);
bool model_can_del(const struct model *md, const __u64 *pos, unsigned k, unsigned *c);
void model_add(struct model *md, const __u64 *pos, unsigned k);
void model_del(unsigned *c, unsigned max, const __u64 *pos, unsigned k);
__u32 *recount(const struct fb_store *f, const struct fb_key *keys, const unsigned *mult, size_t n);
__u64 bits_vs_counters(const struct fb_store *f);

/* counting_rig.c */
void rig_init(void);
extern pid_t main_pid;
void forget(const char *name);
int make_filter(const char *name, __u8 layout, unsigned bits, __u64 cap, double p,
		struct fb_store *f);
void drop_filter(const char *name);
void publish_kind(struct fb_store *f);
int prog_load(const struct fb_store *f, struct prog *pr);
int matches(const struct prog *pr, const struct fb_key *k);
__u64 counters_vs(const struct fb_store *f, const __u32 *want);

#endif
