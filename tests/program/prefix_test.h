/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of test_prefix share: prefixes in the 128-bit space, the
 * loaded program, the CLI and list helpers.
 */
#ifndef FLOWBLOOM_TEST_PREFIX_H
#define FLOWBLOOM_TEST_PREFIX_H

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "types/bits.h"
#include "store/replace.h"
#include "rules/rules.h"
#include "store/stats.h"
#include "store/store.h"
#include "rules/flow.h"
#include "flowbloom.skel.h"
#include "prog/loader.h"
#include "packet.h"
#include "types/sizing.h"
#include "testlib.h"

#define N_INSIDE 10000
#define N_OUTSIDE 10000
#define BIG_BITS "8388608" /* 1 MiB: a few rules never give a false positive */
struct pfx {
	__u8 a[16]; /* masked, 128-bit space (IPv4 v4-mapped) */
	int plen;   /* 128-bit space */
	__u8 fam;   /* enum fb_family */
};
struct prog {
	struct flowbloom_bpf *skel;
	int fd, trace_fd, stats_fd;
};

/* prefix_util.c */
extern char cli[512];
extern char tmpdir[64];
extern long test_runs_failed;
double now(void);
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *slurp(const char *path);
double json_num(const char *json, const char *key);
void addr(const char *s, __u8 out[16]);
bool is_v4(const __u8 a[16]);
__u8 fam_of(const __u8 a[16]);
bool ref_inside_fam(const struct pfx *p, const __u8 a[16], __u8 fam);
bool ref_inside(const struct pfx *p, const __u8 a[16]);
void pfx_text(const struct pfx *p, char *buf, size_t len);
void addr_text(const __u8 a[16], char *buf, size_t len);
void rand_in(const struct pfx *p, uint64_t *seed, __u8 out[16]);
void edge_of(const struct pfx *p, int last, __u8 out[16]);
void rand_pfx(uint64_t *seed, int v4, int len, struct pfx *p);
bool prog_load(struct prog *pg, const struct fb_store *f);
void prog_unload(struct prog *pg);
int send_pkt_fam(const struct prog *pg, const __u8 src[16], const __u8 dst[16], __u8 fam,
		 __u32 *kind);
int send_pkt(const struct prog *pg, const __u8 src[16], const __u8 dst[16], __u32 *kind);
__u64 nofilter_packets(const struct prog *pg);
const __u8 *other_of(const __u8 a[16]);

/* prefix_semantics.c */
void semantics(void);

/* prefix_lists.c */
void write_list(const char *path, const char *mode, const struct pfx *p, size_t n,
		const char *suffix);
long check_edges(const struct prog *pg, const struct pfx *p, size_t n, const char *what);
long check_inside(const struct prog *pg, const struct pfx *p, size_t np, long n, uint64_t *seed);
double expected_rate(const char *name, unsigned *probes);
void lengths_of(const char *name, struct fb_prefixes *px, __u64 *nflows);
bool has_len(const struct fb_lengths *l, int len);
void random_list(void);
void expansion(void);

/* prefix_drop_mixed.c */
void drop_list(void);
void mixed_families(void);

#endif
