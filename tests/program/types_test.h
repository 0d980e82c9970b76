/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of test_types share: the flow sets and their hashes, the
 * sampling tolerance, zeroed block memory.
 */
#ifndef FLOWBLOOM_TEST_TYPES_H
#define FLOWBLOOM_TEST_TYPES_H

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "types/bits.h"
#include "types/cuckoo_table.h"
#include "types/dleft_table.h"
#include "types/probe_mem.h"
#include "types/scalable_table.h"
#include "types/setalgebra.h"
#include "types/sizing.h"
#include "packet.h"
#include "testlib.h"
#include "types_check.h"

#define N_ADD 100000
#define N_PROBE 1000000

/* test_types.c */
extern __u64 hkey[2];
extern char label[256];
extern struct fb_key *added_keys, *probe_keys; /* the flows added, the flows probed */
extern __u64 *added, *probes;		       /* their hashes */
void *zalloc_blocks(__u64 n);
bool near(double got, double want, double tol, double trials);

/* types_cuckoo.c */
void cuckoo_fp(unsigned fp_bits, double *bits_per_item, double *fpr_out);
void cuckoo_refusals(void);
void cuckoo_capacity(void);
void cuckoo_capacity_large(void);
void cuckoo_union(void);
double cuckoo_max_load(unsigned fp_bits, __u32 nb, bool *unchanged, long *miss);
void cuckoo_store_order(void);
void cuckoo_race(void);

/* types_dleft_scalable.c */
void dleft_fp(double *bits_per_item, double *fpr_out);
void dleft_rules(void);
double dleft_max_load(bool *refused, bool *unchanged, long *miss);
void scalable(double *bits_per_item, double *fpr_out);
void scalable_limit(void);

/* types_same.c */
void types_same(const char *dir);

/* types_algebra.c */
void algebra(__u8 layout, const char *name);
void cardinality(__u8 layout, const char *name);
void cardinality_two_per_word(void);
void space_table(const double meas[4][2]);

#endif
