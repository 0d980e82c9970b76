/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of test_verdict share: protocol numbers and the ports every
 * builder uses, the table's row and the run settings.
 */
#ifndef FLOWBLOOM_TEST_VERDICT_H
#define FLOWBLOOM_TEST_VERDICT_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "types/bits.h"
#include "store/replace.h"
#include "rules/rules.h"
#include "store/stats.h"
#include "store/head.h"
#include "store/repair.h"
#include "store/store.h"
#include "rules/flow.h"
#include "flowbloom.skel.h"
#include "prog/loader.h"
#include "packet.h"
#include "testlib.h"

/* Protocol numbers and ethertypes, spelled out. */
#define P_ICMP 1
#define P_TCP 6
#define P_UDP 17
#define P_GRE 47
#define P_ESP 50
#define P_ICMP6 58
#define P_NONE 59
#define P_SCTP 132
#define P_LITE 136
#define X_HOP 0
#define X_RT 43
#define X_FRAG 44
#define X_AH 51
#define X_DST 60
#define ETH_IP 0x0800
#define ETH_IP6 0x86dd
#define ETH_ARP 0x0806
#define ETH_LLDP 0x88cc
#define ETH_MPLS 0x8847

/* Ports every builder uses, per upper-layer protocol (host order). */
#define TCP_SP 51000
#define TCP_DP 443
#define UDP_SP 40000
#define UDP_DP 53
#define SCTP_SP 36412
#define SCTP_DP 38412
#define LITE_SP 5004
#define LITE_DP 5005

/* Documentation addresses only. */
typedef void (*build_fn)(struct pkt *p, int a, int b);

/* VLAN tag sets, outermost first. */
enum { TAGS_Q, TAGS_AD, TAGS_QINQ, TAGS_QQ, TAGS_ADQQ, TAGS_QQQ };
struct row {
	const char *name;
	build_fn build;
	int a, b;
	int parse;	    /* FB_PARSE_* expected */
	int frag;	    /* 1: a non-first fragment (FRAGMENT counted, ports 0) */
	int v6;		    /* the key's address family */
	__u8 proto;	    /* the key's protocol and ports (host order); for malformed */
	__u16 sport, dport; /* rows, what the key would be if they parsed */
};

/* Loaded programs: one per (action, malformed policy, trace) setting. */
struct cfg {
	const char *name;
	__u8 action;
	__u8 malformed; /* enum fb_malformed */
	bool trace;
};

/* Every setting the tables run under (verdict_rules.c); C_*: some of them. */
extern const struct cfg cfgs[8];
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))
enum { C_DROP = 0, C_DROP_MPASS = 3, C_TRACE = 7 };

struct expect {
	int parse, frag;
	int addrs;	   /* malformed, but the fixed IP header (addresses) was read */
	int ports;	   /* malformed, but its protocol and ports were read too */
	int kind;	   /* the rule kind that matches, 0: none */
	int split;	   /* malformed first fragment cut before its ports: dropped
			    * under drop and allow whatever --malformed says */
	struct fb_key key; /* what the trace record must hold when parse is OK */
};

/* verdict_frames.c */
extern const __u8 V4_SRC[4];
extern const __u8 V4_DST[4];
extern const __u8 V6_SRC[16];
extern const __u8 V6_DST[16];
void f_v4(struct pkt *p, int proto, int ihl);
void f_v4_bare(struct pkt *p, int proto, int unused);
void f_mtu(struct pkt *p, int family, int proto);
void f_v4_frag(struct pkt *p, int proto, int frag_off);
void f_v6(struct pkt *p, int proto, int unused);
void f_v6_frag(struct pkt *p, int proto, int field);
void f_v6_hop_frag(struct pkt *p, int proto, int field);
void f_v6_exts(struct pkt *p, int n, int proto);
void f_v6_exts_frag(struct pkt *p, int n, int field);
void f_v6_frag_ext(struct pkt *p, int ext, int field);
void f_v6_long_exts(struct pkt *p, int proto, int unused);
void f_vlan(struct pkt *p, int set, int inner);
void f_nonip(struct pkt *p, int type, int unused);
void f_v4_ihl(struct pkt *p, int ihl, int unused);
void f_v4_version(struct pkt *p, int version, int unused);
void f_v4_tso(struct pkt *p, int proto, int tot_len);
void f_v4_totlen(struct pkt *p, int ihl, int tot_len);
void f_v6_version(struct pkt *p, int version, int unused);
void f_v6_overrun(struct pkt *p, int type, int unused);

/* verdict_table.c */
extern const struct row rows[];
extern const size_t nrows;

/* verdict_rules.c */
/* Rules a filter can hold for a row: its 5-tuple, source, destination, or
 * the same of the reverse direction (which must never match). */
enum { R_FLOW = 1, R_SRC = 2, R_DST = 4, R_RFLOW = 8, R_RSRC = 16, R_RDST = 32 };
void v4mapped(__u8 out[16], const __u8 a[4]);
void row_key(const struct row *r, struct fb_key *k);
int parsed_hit(const struct row *r, int rules, int hit);
void add_rule(struct fb_store *f, const struct fb_key *k);
void addr_key(struct fb_key *k, int kind, const __u8 addr[16], __u8 family);
void add_addr(struct fb_store *f, int kind, const __u8 addr[16], __u8 family);
void fill_filter(struct fb_store *f, const struct fb_key *flow, int rules);
int addrs_read(const struct row *r, const struct pkt *p, size_t len);
int first_fragment(const struct row *r);
size_t first_known(const struct row *r, const struct pkt *p);

/* verdict_runs.c */
extern int aborted_runs;
int read_stats(int fd, struct fb_stats *out);
void bump(struct fb_stats *s, int stat, __u64 bytes);
void want_stats(const struct expect *e, __u32 verdict, __u64 bytes, struct fb_stats *w);
void check_stats(const char *label, const struct fb_stats *before, const struct fb_stats *after,
		 const struct fb_stats *want);
void check_run(const char *base, struct flowbloom_bpf *s, const struct cfg *c, const __u8 *data,
	       size_t len, const struct expect *e);
/* The same, the frame's first buffer lin bytes long and the rest in
 * further ones (a multi-buffer program; 0: as test_run splits it, a page
 * less its head- and tailroom in the first). */
void check_run_lin(const char *base, struct flowbloom_bpf *s, const struct cfg *c, const __u8 *data,
		   size_t len, size_t lin, const struct expect *e);
void check_too_short(const char *base, struct flowbloom_bpf *s, const __u8 *data);
/* Filter name (1024 blocks, k = 7, layout and hash, action drop) created
 * and opened in *f, and a program for each of the n cfgs loaded into
 * skel[] (multi-buffer if frags): true if all of it is there. Whatever
 * it returns, rig_down() undoes what it made. */
bool rig_up(const char *name, __u8 layout, __u8 hash, const struct cfg *cfgs, size_t n, bool frags,
	    struct fb_store *f, struct flowbloom_bpf **skel);
void rig_down(const char *name, struct fb_store *f, struct flowbloom_bpf **skel, size_t n);

#endif
