// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_prefix: CIDR prefix rules on the real XDP program, through
 * BPF_PROG_TEST_RUN.
 *
 *  1. Semantics table: source and destination rules of every shape
 *     (/24 boundaries and the addresses just outside, /0 of each family,
 *     /32 and /128, ::ffff:198.51.100.0/120 as a spelling of
 *     198.51.100.0/24, odd lengths /1 /7 /25 /31 /33 /127, host bits set in
 *     the rule) against addresses on both sides of each edge. Each rule is
 *     alone in a 1 MiB filter (swapped in with fb_replace under one
 *     loaded program), so a false positive is out of the question and every
 *     verdict is asserted exactly. IPv4 and IPv6 are separate lists: ::/0
 *     matches every IPv6 packet and no IPv4 packet (the code keeps one
 *     length list per family, and the family is a byte of the key),
 *     0.0.0.0/0 and ::ffff:0.0.0.0/96 every IPv4 packet and no IPv6.
 *     Rules never match on the other side of the packet. IPv6 packets with
 *     v4-mapped addresses meet IPv6 rules only (::/0, a destination /48,
 *     ::ffff:0:0/96 written in hex, 5-tuples), IPv4 packets never an IPv6
 *     rule over the same bits, and `query` answers alike.
 *  2. Zero false negatives: ~200 random prefixes (IPv4 /8-/30, IPv6
 *     /16-/64, far more than 8 lengths each, so `flowbloom load` expands
 *     them) loaded by the CLI, then 10,000 random addresses inside listed
 *     prefixes as packet sources: every one matches as a source rule. 10,000
 *     addresses outside every prefix match at most 3x the per-packet rate
 *     the sizing formulas expect (plus a little slack), after `load
 *     --replace` has re-sized the filter for the list.
 *  3. Expansion is exact: the first and last address of every listed prefix
 *     match after expansion; a rare /23 expanded into two /24s matches in
 *     both halves and not one address beside it; a /31 expanded into /32s
 *     (and an IPv6 /127 into /128s) matches both of its addresses.
 *  4. A list shaped like Spamhaus DROP (1,500 IPv4 prefixes /11-/24, mostly
 *     /24 and /22, plus 50 IPv6 /29-/48, in DROP syntax with '; comment'
 *     lines, two files in one call) loads with a note about the expansion,
 *     and 10,000 packets from inside listed prefixes all drop, as do the
 *     first and last address of every prefix.
 *  5. Replace under traffic: lists A and B share 500 prefixes C; B needs
 *     expansion, A does not, so C is stored under different lengths in
 *     each. A child process runs `load --replace` B, A, B, A, ... while the
 *     parent sends packets from inside C through one program loaded once:
 *     every packet matches, every time (no packet ever sees an empty or
 *     half-loaded filter), and the program never finds the filter missing.
 *     Each replace also re-sizes the filter (it was sized by capacity).
 *
 * Addresses: rules and packets of the semantics table stay in the
 * documentation ranges (198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32)
 * except where a boundary needs another address (/0, /1, /7 edges, look-alikes
 * in the other family). The random, crafted and DROP-shaped lists use any
 * addresses: every frame here exists only inside BPF_PROG_TEST_RUN, nothing
 * is sent on any network.
 *
 * Filters live under /sys/fs/bpf/fbtest_prefix_<pid> (bpffs refuses dots)
 * and are all destroyed at the end, failures or not.
 */
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
#include "bits.h"
#include "flow.h"
#include "flowbloom.skel.h"
#include "loader.h"
#include "packet.h"
#include "replace.h"
#include "rules.h"
#include "sizing.h"
#include "store.h"
#include "testlib.h"

#define N_INSIDE 10000
#define N_OUTSIDE 10000
#define BIG_BITS "8388608" /* 1 MiB: a few rules never give a false positive */

static char cli[512];
static char tmpdir[64];
static long test_runs_failed;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run `flowbloom ARGS` through the shell; returns the exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char args[1536], cmd[2200];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s %s", cli, args);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static char *slurp(const char *path)
{
	FILE *in = fopen(path, "r");
	static char buf[65536];
	size_t n;

	buf[0] = 0;
	if (!in)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, in);
	buf[n] = 0;
	fclose(in);
	return buf;
}

/* A number after "key": in a JSON object; -1 if absent. */
static double json_num(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	return p ? atof(p + strlen(pat)) : -1;
}

/* ------------------------------------------------------------ addresses */

struct pfx {
	__u8 a[16]; /* masked, 128-bit space (IPv4 v4-mapped) */
	int plen;   /* 128-bit space */
	__u8 fam;   /* enum fb_family */
};

static void addr(const char *s, __u8 out[16])
{
	char err[128];
	__u8 pl, fam;

	if (fb_prefix_parse(s, out, &pl, &fam, err, sizeof(err)) || pl != 128) {
		fprintf(stderr, "test bug: bad address '%s'\n", s);
		abort();
	}
}

static bool is_v4(const __u8 a[16])
{
	return test_is_v4(a);
}

/* Byte i of the mask of a 128-bit-space prefix length. */
static __u8 mask_byte(int plen, int i)
{
	int keep = plen - 8 * i;

	return keep >= 8 ? 0xff : keep <= 0 ? 0 : (__u8)(0xff << (8 - keep));
}

/* The family of a packet carrying address a, where the test does not say:
 * IPv4 for ::ffff:a.b.c.d. */
static __u8 fam_of(const __u8 a[16])
{
	return is_v4(a) ? FB_FAMILY_IPV4 : FB_FAMILY_IPV6;
}

/* The documented semantics: same family, equal under the mask. fam: the
 * family of the packet carrying a. */
static bool ref_inside_fam(const struct pfx *p, const __u8 a[16], __u8 fam)
{
	int i;

	if (p->fam != fam)
		return false;
	for (i = 0; i < 16; i++) {
		__u8 m = mask_byte(p->plen, i);

		if ((a[i] & m) != p->a[i])
			return false;
	}
	return true;
}

static bool ref_inside(const struct pfx *p, const __u8 a[16])
{
	return ref_inside_fam(p, a, fam_of(a));
}

static void pfx_text(const struct pfx *p, char *buf, size_t len)
{
	char t[INET6_ADDRSTRLEN];

	if (p->fam == FB_FAMILY_IPV6 && is_v4(p->a)) {
		/* All hex: the IPv6 spelling of ::ffff:0:0/96 (flow.c). */
		snprintf(buf, len, "::ffff:%x:%x/%d", p->a[12] << 8 | p->a[13],
			 p->a[14] << 8 | p->a[15], p->plen);
	} else if (p->fam == FB_FAMILY_IPV4) {
		inet_ntop(AF_INET, p->a + 12, t, sizeof(t));
		snprintf(buf, len, "%s/%d", t, p->plen - 96);
	} else {
		inet_ntop(AF_INET6, p->a, t, sizeof(t));
		snprintf(buf, len, "%s/%d", t, p->plen);
	}
}

static void addr_text(const __u8 a[16], char *buf, size_t len)
{
	if (is_v4(a))
		inet_ntop(AF_INET, a + 12, buf, len);
	else
		inet_ntop(AF_INET6, a, buf, len);
}

/* A random address inside p. */
static void rand_in(const struct pfx *p, uint64_t *seed, __u8 out[16])
{
	uint64_t r[2] = { test_rand64(seed), test_rand64(seed) };
	const __u8 *rb = (const __u8 *)r;
	int i;

	for (i = 0; i < 16; i++) {
		__u8 m = mask_byte(p->plen, i);

		out[i] = (p->a[i] & m) | (rb[i] & ~m);
	}
}

/* The first (last = 0) or last address of p. */
static void edge_of(const struct pfx *p, int last, __u8 out[16])
{
	int i;

	for (i = 0; i < 16; i++) {
		__u8 m = mask_byte(p->plen, i);

		out[i] = last ? (p->a[i] | (__u8)~m) : (p->a[i] & m);
	}
}

/* A random prefix of length len (IPv4 /len, or IPv6 /len under 2000::/3). */
static void rand_pfx(uint64_t *seed, int v4, int len, struct pfx *p)
{
	struct pfx all = { .plen = v4 ? 96 : 3, .fam = v4 ? FB_FAMILY_IPV4 : FB_FAMILY_IPV6 };

	if (v4)
		all.a[10] = all.a[11] = 0xff;
	else
		all.a[0] = 0x20;
	rand_in(&all, seed, p->a);
	p->plen = v4 ? 96 + len : len;
	p->fam = all.fam;
	edge_of(p, 0, p->a); /* mask to the length */
}

/* ----------------------------------------------------------- the program */

struct prog {
	struct flowbloom_bpf *skel;
	int fd, trace_fd, stats_fd;
};

static bool prog_load(struct prog *pg, const struct fb_store *f)
{
	struct fb_load_opts o = { .trace = true, .private_stats = true, .action = FB_ACTION_DROP };

	pg->skel = fb_load(f, &o);
	if (!pg->skel)
		return false;
	pg->fd = bpf_program__fd(pg->skel->progs.flowbloom);
	pg->trace_fd = bpf_map__fd(pg->skel->maps.fb_trace);
	pg->stats_fd = bpf_map__fd(pg->skel->maps.fb_stats);
	return true;
}

static void prog_unload(struct prog *pg)
{
	if (pg->skel)
		flowbloom_bpf__destroy(pg->skel);
	pg->skel = NULL;
}

/* Send one UDP packet src -> dst of family fam; returns the verdict and
 * the matched kind from the trace record, or -1 if test_run failed. */
static int send_pkt_fam(const struct prog *pg, const __u8 src[16], const __u8 dst[16], __u8 fam,
			__u32 *kind)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .repeat = 1);
	struct fb_key k = { .proto = 17, .kind = FB_KIND_FLOW, .family = fam };
	uint8_t frame[128];
	struct fb_trace tr;
	__u32 zero = 0;

	memcpy(k.saddr, src, 16);
	memcpy(k.daddr, dst, 16);
	k.sport = htons(40000);
	k.dport = htons(53);
	t.data_in = frame;
	t.data_size_in = test_build_frame(&k, frame);
	if (bpf_prog_test_run_opts(pg->fd, &t) || bpf_map_lookup_elem(pg->trace_fd, &zero, &tr)) {
		test_runs_failed++;
		return -1;
	}
	*kind = tr.kind;
	return (int)t.retval;
}

/* The same, of the family the source address reads as. */
static int send_pkt(const struct prog *pg, const __u8 src[16], const __u8 dst[16], __u32 *kind)
{
	return send_pkt_fam(pg, src, dst, fam_of(src), kind);
}

static __u64 nofilter_packets(const struct prog *pg)
{
	int ncpu = libbpf_num_possible_cpus();
	struct fb_stats *s = calloc(ncpu, sizeof(*s));
	__u32 zero = 0;
	__u64 n = 0;
	int c;

	if (s && !bpf_map_lookup_elem(pg->stats_fd, &zero, s))
		for (c = 0; c < ncpu; c++)
			n += s[c].c[FB_STAT_NOFILTER].packets;
	free(s);
	return n;
}

/* The "other" address of a packet: same family, fixed. */
static const __u8 *other_of(const __u8 a[16])
{
	static __u8 o4[16], o6[16];
	static bool init;

	if (!init) {
		addr("203.0.113.77", o4);
		addr("2001:db8:ffff::77", o6);
		init = true;
	}
	return is_v4(a) ? o4 : o6;
}

/* -------------------------------------------------- 1. semantics table */

struct row {
	const char *rule;
	const char *in[6];
	const char *out[7];
};

static const struct row table[] = {
	{ "198.51.100.0/24",
	  { "198.51.100.0", "198.51.100.255", "198.51.100.128" },
	  { "198.51.99.255", "198.51.101.0", "203.0.113.0", "2001:db8::c633:6400" } },
	{ "198.51.100.7/24", /* host bits set: behaves as /24 */
	  { "198.51.100.0", "198.51.100.255", "198.51.100.7" },
	  { "198.51.99.255", "198.51.101.0" } },
	{ "::ffff:198.51.100.0/120", /* the same rule, spelled v4-mapped */
	  { "198.51.100.0", "198.51.100.255", "198.51.100.77" },
	  { "198.51.99.255", "198.51.101.0", "2001:db8::c633:6400" } },
	{ "198.51.100.7",
	  { "198.51.100.7" },
	  { "198.51.100.6", "198.51.100.8", "2001:db8::c633:6407" } },
	{ "198.51.100.7/32", { "198.51.100.7" }, { "198.51.100.6", "198.51.100.8" } },
	{ "0.0.0.0/0",
	  { "0.0.0.0", "255.255.255.255", "198.51.100.1", "203.0.113.254" },
	  { "2001:db8::1", "::", "::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" } },
	{ "::ffff:0.0.0.0/96", /* 0.0.0.0/0 spelled v4-mapped */
	  { "0.0.0.0", "255.255.255.255", "198.51.100.1" },
	  { "2001:db8::1", "::" } },
	{ "::/0", /* every IPv6 packet, no IPv4 packet */
	  { "2001:db8::1", "::", "::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" },
	  { "198.51.100.1", "0.0.0.0", "255.255.255.255", "203.0.113.1" } },
	{ "::/80", /* covers ::ffff:0:0/96 numerically, but IPv4 is its own list */
	  { "::1", "::fffe:0:1" },
	  { "198.51.100.1", "0:0:0:0:1::", "2001:db8::1" } },
	{ "128.0.0.0/1",
	  { "128.0.0.0", "255.255.255.255", "198.51.100.1", "203.0.113.1" },
	  { "127.255.255.255", "0.0.0.0", "8000::1" } },
	{ "0.0.0.0/1", { "0.0.0.0", "127.255.255.255" }, { "128.0.0.0", "198.51.100.1", "::1" } },
	{ "198.0.0.0/7",
	  { "198.0.0.0", "199.255.255.255", "198.51.100.1" },
	  { "197.255.255.255", "200.0.0.0", "203.0.113.1" } },
	{ "198.51.100.6/31",
	  { "198.51.100.6", "198.51.100.7" },
	  { "198.51.100.5", "198.51.100.8" } },
	{ "198.51.100.128/25",
	  { "198.51.100.128", "198.51.100.255" },
	  { "198.51.100.127", "198.51.101.0" } },
	{ "2001:db8::/32",
	  { "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8:1234::1" },
	  { "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::", "32.1.13.184" } },
	{ "2001:db8:8000::/33",
	  { "2001:db8:8000::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff" },
	  { "2001:db8:7fff:ffff:ffff:ffff:ffff:ffff", "2001:db9::" } },
	{ "2001:db8:0:1::/64",
	  { "2001:db8:0:1::", "2001:db8:0:1:ffff:ffff:ffff:ffff" },
	  { "2001:db8:0:0:ffff:ffff:ffff:ffff", "2001:db8:0:2::" } },
	{ "2001:db8::c633:6400/120",
	  { "2001:db8::c633:6400", "2001:db8::c633:64ff" },
	  { "2001:db8::c633:63ff", "2001:db8::c633:6500", "198.51.100.0" } },
	{ "2001:db8::2/127", { "2001:db8::2", "2001:db8::3" }, { "2001:db8::1", "2001:db8::4" } },
	{ "2001:db8::1/128", { "2001:db8::1" }, { "2001:db8::", "2001:db8::2", "2001:db8::1:0" } },
	{ "2001:db8::1", { "2001:db8::1" }, { "2001:db8::", "2001:db8::2" } },
	{ "8000::/1",
	  { "8000::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" },
	  { "7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::1", "198.51.100.1" } },
	{ "::/1",
	  { "::", "2001:db8::1", "7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" },
	  { "8000::", "198.51.100.1" } },
	{ "2001:db8:1:2:3:4:5:6/32", /* host bits set */
	  { "2001:db8::", "2001:db8:ffff::1" },
	  { "2001:db9::", "2001:db7::" } },
};

static void one_rule(struct fb_store *f, const struct prog *pg, const struct row *r, int dst)
{
	char rule[96], *argv[2] = { dst ? "dst" : "src", rule }, err[256], l[256];
	struct fb_key key;
	struct pfx p;
	size_t bad;
	int i, v, in;
	__u32 kind, want_kind = dst ? FB_KIND_DST : FB_KIND_SRC;

	snprintf(rule, sizeof(rule), "%s", r->rule);
	if (!ASSERT_EQ(fb_flow_parse(2, argv, &key, err, sizeof(err)), 2, "parse the rule"))
		return;
	memcpy(p.a, dst ? key.daddr : key.saddr, 16);
	p.plen = key.plen;
	p.fam = key.family;
	fb_store_lock(f);
	v = fb_replace(f, f->hdr->nblocks, f->hdr->k, &key, 1, &bad);
	fb_store_unlock(f);
	snprintf(l, sizeof(l), "%s %s: replace the filter with the one rule", argv[0], r->rule);
	if (!ASSERT_EQ(v, 0, l))
		return;
	for (in = 1; in >= 0; in--) {
		const char *const *list = in ? r->in : r->out;
		int n = in ? 6 : 7;

		for (i = 0; i < n && list[i]; i++) {
			__u8 a[16];
			const __u8 *o;
			char d[160];
			int verdict;

			addr(list[i], a);
			o = other_of(a);
			/* The table itself against the reference semantics. */
			if (ref_inside(&p, a) != in) {
				printf("FAIL test table: %s %s listed as %s\n", r->rule, list[i],
				       in ? "inside" : "outside");
				test_failed++;
			}
			verdict = dst ? send_pkt(pg, o, a, &kind) : send_pkt(pg, a, o, &kind);
			snprintf(l, sizeof(l), "%s %s: packet %s %s %s", argv[0], r->rule,
				 dst ? "to" : "from", list[i], in ? "matches" : "does not match");
			snprintf(d, sizeof(d), "verdict %d kind %u, want verdict %d kind %u",
				 verdict, kind, in ? XDP_DROP : XDP_PASS, in ? want_kind : 0);
			test_check(verdict == (in ? XDP_DROP : XDP_PASS) &&
					   kind == (in ? want_kind : 0),
				   l, d);
			/* The same address on the other side of the packet: a
			 * source rule never matches a destination and back. */
			if (!ref_inside(&p, o)) {
				verdict =
					dst ? send_pkt(pg, a, o, &kind) : send_pkt(pg, o, a, &kind);
				snprintf(l, sizeof(l),
					 "%s %s: packet %s %s (other side) does not match", argv[0],
					 r->rule, dst ? "from" : "to", list[i]);
				snprintf(d, sizeof(d), "verdict %d kind %u", verdict, kind);
				test_check(verdict == XDP_PASS && kind == 0, l, d);
			}
		}
	}
}

/*
 * v4-mapped addresses in IPv6 packets (::ffff:a.b.c.d is not valid on the
 * wire, so only an attacker sends it): the family comes from the IP
 * header, so such a packet meets IPv6 rules (::/0, a blocked destination
 * /48) and never an IPv4 rule, 5-tuples included; `query` answers as the
 * data path does. Before the family was in the key, the program took these
 * packets for IPv4 ones and let them past every IPv6 rule.
 */
static const struct mcase {
	const char *rule;
	const char *pkt;   /* "4": IPv4 198.51.100.5 -> 203.0.113.77; "6m": IPv6
			    * ::ffff:198.51.100.5 -> 2001:db8:ffff::1; "6mm": IPv6
			    * ::ffff:198.51.100.5 -> ::ffff:203.0.113.77 */
	const char *query; /* the same packet's question, as `query` takes it */
	__u32 kind;	   /* what matches, 0: nothing */
} mcases[] = {
	{ "dst 2001:db8:ffff::/48", "6m", "dst 2001:db8:ffff::1", FB_KIND_DST },
	{ "dst ::/0", "6m", "dst 2001:db8:ffff::1", FB_KIND_DST },
	{ "dst ::/0", "4", "dst 203.0.113.77", 0 },
	{ "src ::/0", "6m", "src ::ffff:c633:6405", FB_KIND_SRC },
	{ "src ::/0", "6mm", "src ::ffff:c633:6405", FB_KIND_SRC },
	{ "src ::/0", "4", "src 198.51.100.5", 0 },
	{ "src ::/80", "6m", "src ::ffff:c633:6405", FB_KIND_SRC },
	{ "src ::/80", "4", "src 198.51.100.5", 0 },
	{ "src 198.51.100.0/24", "6m", "src ::ffff:c633:6405", 0 },
	{ "src 198.51.100.0/24", "4", "src 198.51.100.5", FB_KIND_SRC },
	{ "src 198.51.100.0/24", "4", "src ::ffff:198.51.100.5", FB_KIND_SRC },
	{ "src ::ffff:198.51.100.5", "6m", "src ::ffff:c633:6405", 0 },
	{ "src ::ffff:198.51.100.5", "4", "src 198.51.100.5", FB_KIND_SRC },
	{ "src ::ffff:c633:6405", "6m", "src ::ffff:c633:6405", FB_KIND_SRC },
	{ "src ::ffff:c633:6405", "4", "src 198.51.100.5", 0 },
	{ "src ::ffff:0:0/96", "6m", "src ::ffff:c633:6405", FB_KIND_SRC },
	{ "src ::ffff:0:0/96", "4", "src 198.51.100.5", 0 },
	{ "src ::ffff:0.0.0.0/96", "6m", "src ::ffff:c633:6405", 0 },
	{ "src ::ffff:0.0.0.0/96", "4", "src 198.51.100.5", FB_KIND_SRC },
	{ "dst ::ffff:203.0.113.0/120", "6mm", "dst ::ffff:cb00:714d", 0 },
	{ "dst ::ffff:cb00:7100/120", "6mm", "dst ::ffff:cb00:714d", FB_KIND_DST },
	{ "udp 198.51.100.5:40000 203.0.113.77:53", "4", "udp 198.51.100.5:40000 203.0.113.77:53",
	  FB_KIND_FLOW },
	{ "udp 198.51.100.5:40000 203.0.113.77:53", "6mm",
	  "udp [::ffff:c633:6405]:40000 [::ffff:cb00:714d]:53", 0 },
	{ "udp [::ffff:c633:6405]:40000 [::ffff:cb00:714d]:53", "6mm",
	  "udp [::ffff:c633:6405]:40000 [::ffff:cb00:714d]:53", FB_KIND_FLOW },
	{ "udp [::ffff:c633:6405]:40000 [::ffff:cb00:714d]:53", "4",
	  "udp 198.51.100.5:40000 203.0.113.77:53", 0 },
};

/* FLOW text into a key; aborts on a bad one (a bug in the table). */
static void flow_of(const char *text, struct fb_key *k)
{
	char buf[128], *w[4], *save = NULL, err[128];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &save); t && n < 4; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	if (fb_flow_parse(n, w, k, err, sizeof(err)) != n) {
		fprintf(stderr, "test bug: '%s': %s\n", text, err);
		abort();
	}
}

static void v4mapped_packets(struct fb_store *f, const struct prog *pg)
{
	__u8 m5[16], m77[16], v4s[16], v4d[16], d6[16];
	size_t i, bad;

	addr("::ffff:c633:6405", m5);  /* 198.51.100.5's bits */
	addr("::ffff:cb00:714d", m77); /* 203.0.113.77's bits */
	addr("198.51.100.5", v4s);
	addr("203.0.113.77", v4d);
	addr("2001:db8:ffff::1", d6);
	for (i = 0; i < sizeof(mcases) / sizeof(mcases[0]); i++) {
		const struct mcase *c = &mcases[i];
		struct fb_key rule, q;
		char l[256], d[128];
		__u32 kind;
		int v, want = c->kind ? XDP_DROP : XDP_PASS;

		flow_of(c->rule, &rule);
		fb_store_lock(f);
		v = fb_replace(f, f->hdr->nblocks, f->hdr->k, &rule, 1, &bad);
		fb_store_unlock(f);
		snprintf(l, sizeof(l), "v4-mapped: %s: the rule alone in the filter", c->rule);
		if (!ASSERT_EQ(v, 0, l))
			continue;
		if (!strcmp(c->pkt, "4"))
			v = send_pkt_fam(pg, v4s, v4d, FB_FAMILY_IPV4, &kind);
		else
			v = send_pkt_fam(pg, m5, strcmp(c->pkt, "6m") ? m77 : d6, FB_FAMILY_IPV6,
					 &kind);
		snprintf(l, sizeof(l), "v4-mapped: rule '%s', %s packet (%s): %s", c->rule,
			 c->pkt[0] == '4' ? "IPv4" : "IPv6", c->query,
			 c->kind ? "matches" : "does not match");
		snprintf(d, sizeof(d), "verdict %d kind %u, want %d kind %u", v, kind, want,
			 c->kind);
		test_check(v == want && kind == c->kind, l, d);
		flow_of(c->query, &q);
		snprintf(l, sizeof(l), "v4-mapped: rule '%s': query %s answers %s", c->rule,
			 c->query, c->kind ? "maybe" : "no");
		test_check(fb_bits_query(f, &q) == (c->kind != 0), l, NULL);
	}
}

static void semantics(void)
{
	struct fb_create_opts co = {
		.nblocks = 16384, /* 1 MiB */
		.k = 8,
		.layout = FB_LAYOUT_BLOCKED,
		.hash = FB_HASH_SIPHASH13,
		.action = FB_ACTION_DROP,
	};
	struct fb_store f;
	struct prog pg = { 0 };
	size_t i;
	double t0 = now();

	if (!ASSERT_EQ(fb_store_create("sem", &co), 0, "semantics: create a 1 MiB filter"))
		return;
	if (!ASSERT_EQ(fb_store_open("sem", &f), 0, "semantics: open it"))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "semantics: load the program"))
		goto close;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		one_rule(&f, &pg, &table[i], 0);
		one_rule(&f, &pg, &table[i], 1);
	}

	/* Both kinds at once: a source /24 and a destination /120 rule of
	 * another family; each matches on its own side only. */
	{
		char s1[] = "src", s2[] = "198.51.100.0/24", d1[] = "dst",
		     d2[] = "2001:db8::100/120";
		char *a1[2] = { s1, s2 }, *a2[2] = { d1, d2 }, err[128];
		struct fb_key keys[2];
		__u8 x[16], y[16];
		size_t bad;
		__u32 kind;
		int v;

		fb_flow_parse(2, a1, &keys[0], err, sizeof(err));
		fb_flow_parse(2, a2, &keys[1], err, sizeof(err));
		fb_store_lock(&f);
		ASSERT_EQ(fb_replace(&f, f.hdr->nblocks, f.hdr->k, keys, 2, &bad), 0,
			  "semantics: src and dst rules together");
		fb_store_unlock(&f);
		addr("198.51.100.9", x);
		addr("203.0.113.9", y);
		v = send_pkt(&pg, x, y, &kind);
		ASSERT_TRUE(v == XDP_DROP && kind == FB_KIND_SRC,
			    "src /24 + dst v6 /120: IPv4 packet from inside matches as src");
		v = send_pkt(&pg, y, x, &kind);
		ASSERT_TRUE(v == XDP_PASS && kind == 0,
			    "src /24 + dst v6 /120: IPv4 packet to inside does not match");
		addr("2001:db8::1ff", x);
		addr("2001:db8::5", y);
		v = send_pkt(&pg, y, x, &kind);
		ASSERT_TRUE(v == XDP_DROP && kind == FB_KIND_DST,
			    "src /24 + dst v6 /120: IPv6 packet to inside matches as dst");
		v = send_pkt(&pg, x, y, &kind);
		ASSERT_TRUE(v == XDP_PASS && kind == 0,
			    "src /24 + dst v6 /120: IPv6 packet from inside does not match");
	}

	v4mapped_packets(&f, &pg);
	printf("semantics: %zu rules x {src, dst} in %.2f s\n", sizeof(table) / sizeof(table[0]),
	       now() - t0);
	prog_unload(&pg);
close:
	fb_store_close(&f);
destroy:
	ASSERT_EQ(fb_store_destroy("sem"), 0, "semantics: destroy the filter");
}

/* ------------------------------------------------------- list helpers */

/* Forward: section 6 uses the list helpers below. */
static void write_list(const char *path, const char *mode, const struct pfx *p, size_t n,
		       const char *suffix);
static double expected_rate(const char *name, unsigned *probes);
static void lengths_of(const char *name, struct fb_prefixes *px, __u64 *nflows);

/* Write (or append) prefixes one a line, each followed by suffix. */
static void write_list(const char *path, const char *mode, const struct pfx *p, size_t n,
		       const char *suffix)
{
	FILE *out = fopen(path, mode);
	char t[96];
	size_t i;

	for (i = 0; i < n; i++) {
		pfx_text(&p[i], t, sizeof(t));
		fprintf(out, "%s%s\n", t, suffix);
	}
	fclose(out);
}

/* Every listed prefix: first and last address match as sources. Returns
 * the number that did not (and prints the first few). */
static long check_edges(const struct prog *pg, const struct pfx *p, size_t n, const char *what)
{
	long missed = 0;
	size_t i;
	int e;

	for (i = 0; i < n; i++)
		for (e = 0; e < 2; e++) {
			__u8 a[16];
			__u32 kind;
			int v;

			edge_of(&p[i], e, a);
			v = send_pkt(pg, a, other_of(a), &kind);
			if (v != XDP_DROP || kind != FB_KIND_SRC) {
				char t[96], at[64];

				if (missed++ < 5) {
					pfx_text(&p[i], t, sizeof(t));
					addr_text(a, at, sizeof(at));
					printf("  %s: %s address %s of %s: verdict %d kind %u\n",
					       what, e ? "last" : "first", at, t, v, kind);
				}
			}
		}
	return missed;
}

/* n random addresses inside random listed prefixes: how many did not
 * match as sources. */
static long check_inside(const struct prog *pg, const struct pfx *p, size_t np, long n,
			 uint64_t *seed)
{
	long missed = 0, i;

	for (i = 0; i < n; i++) {
		const struct pfx *q = &p[test_rand64(seed) % np];
		__u8 a[16];
		__u32 kind;
		int v;

		rand_in(q, seed, a);
		v = send_pkt(pg, a, other_of(a), &kind);
		if (v != XDP_DROP || kind != FB_KIND_SRC) {
			if (missed++ < 5) {
				char t[96], at[64];

				pfx_text(q, t, sizeof(t));
				addr_text(a, at, sizeof(at));
				printf("  %s inside %s: verdict %d kind %u\n", at, t, v, kind);
			}
		}
	}
	return missed;
}

/* Expected per-packet false-positive rate of a filter as it is now. */
static double expected_rate(const char *name, unsigned *probes)
{
	struct fb_store f;
	double r;

	if (fb_store_open(name, &f))
		return -1;
	*probes = fb_probes_per_packet(f.hdr->kinds, (void *)&f.blocks[1]);
	r = fb_packet_rate(fb_fpr(f.hdr->layout, f.hdr->nflows, f.hdr->nblocks, f.hdr->k), *probes);
	fb_store_close(&f);
	return r;
}

/* Lengths per list of a filter, and the number of rules. */
static void lengths_of(const char *name, struct fb_prefixes *px, __u64 *nflows)
{
	struct fb_store f;

	memset(px, 0, sizeof(*px));
	*nflows = 0;
	if (fb_store_open(name, &f))
		return;
	*px = *(struct fb_prefixes *)&f.blocks[1];
	*nflows = f.hdr->nflows;
	fb_store_close(&f);
}

static bool has_len(const struct fb_lengths *l, int len)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->len[i] == len)
			return true;
	return false;
}

/* ------------------------------------- 2 and 3. random list, expansion */

#define N_RND4 100
#define N_RND6 100

static void random_list(void)
{
	struct pfx p[N_RND4 + N_RND6];
	uint64_t seed = 0x9f1e57;
	char path[128], out[128], errf[128], l[256];
	struct fb_store f;
	struct prog pg = { 0 };
	struct fb_prefixes px;
	__u64 nflows;
	long missed, fp = 0, i;
	unsigned probes = 0;
	bool seen4[129] = { 0 }, seen6[129] = { 0 };
	int d4 = 0, d6 = 0, j;
	double want, t0 = now();

	for (i = 0; i < N_RND4; i++) {
		int len = 8 + test_rand64(&seed) % 23; /* /8../30 */

		rand_pfx(&seed, 1, len, &p[i]);
		d4 += !seen4[len];
		seen4[len] = true;
	}
	for (i = 0; i < N_RND6; i++) {
		int len = 16 + test_rand64(&seed) % 49; /* /16../64 */

		rand_pfx(&seed, 0, len, &p[N_RND4 + i]);
		d6 += !seen6[len];
		seen6[len] = true;
	}
	snprintf(l, sizeof(l), "random list: %d IPv4 and %d IPv6 lengths (> 8 each)", d4, d6);
	ASSERT_TRUE(d4 > FB_MAX_LENGTHS && d6 > FB_MAX_LENGTHS, l);
	snprintf(path, sizeof(path), "%s/random.txt", tmpdir);
	snprintf(out, sizeof(out), "%s/random.out", tmpdir);
	snprintf(errf, sizeof(errf), "%s/random.err", tmpdir);
	{
		/* Every other prefix written with host bits set: the loader
		 * masks them (198.51.100.7/24 is 198.51.100.0/24). */
		FILE *o = fopen(path, "w");

		for (i = 0; i < N_RND4 + N_RND6; i++) {
			char t[96];

			if (i & 1) {
				__u8 a[16];

				rand_in(&p[i], &seed, a);
				addr_text(a, t, sizeof(t));
				fprintf(o, "%s/%d\n", t, p[i].plen - (is_v4(a) ? 96 : 0));
			} else {
				pfx_text(&p[i], t, sizeof(t));
				fprintf(o, "%s\n", t);
			}
		}
		fclose(o);
	}

	if (!ASSERT_EQ(sh("create rnd --capacity 1000 --fp-rate 0.01 >/dev/null"), 0,
		       "random list: create (capacity 1000, 1%)"))
		return;
	ASSERT_EQ(sh("-j load rnd %s >%s 2>%s", path, out, errf), 0, "random list: flowbloom load");
	{
		char *o = slurp(out);
		double before = json_num(o, "prefixes_before_expansion"),
		       after = json_num(o, "prefixes_after_expansion");

		ASSERT_EQ(before, N_RND4 + N_RND6, "random list: 200 prefixes before expansion");
		ASSERT_TRUE(after > before, "random list: expanded into more prefixes");
		printf("random list: %.0f prefixes expanded into %.0f\n", before, after);
	}
	ASSERT_TRUE(strstr(slurp(errf), "note: expanded"),
		    "random list: stderr notes the expansion");
	lengths_of("rnd", &px, &nflows);
	for (j = 0; j < FB_PFX_NR; j++) {
		snprintf(l, sizeof(l), "random list: %s uses %u lengths (<= 8)",
			 fb_rules_prefix_list_name(j), px.list[j].n);
		ASSERT_RANGE(px.list[j].n, j == FB_PFX_SRC4 || j == FB_PFX_SRC6 ? 8 : 0,
			     j == FB_PFX_SRC4 || j == FB_PFX_SRC6 ? 8 : 0, l);
	}

	if (fb_store_open("rnd", &f))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "random list: load the program"))
		goto close;

	seed = 0x1a51de;
	missed = check_inside(&pg, p, N_RND4 + N_RND6, N_INSIDE, &seed);
	ASSERT_EQ(missed, 0, "random list: 10,000 addresses inside listed prefixes all match");
	missed = check_edges(&pg, p, N_RND4 + N_RND6, "random list");
	ASSERT_EQ(missed, 0,
		  "random list: first and last address of every prefix match after expansion");

	/* Re-sized for the list: the per-packet rate meets the target. */
	ASSERT_EQ(sh("-j load rnd %s --replace >%s 2>/dev/null", path, out), 0,
		  "random list: load --replace (re-sizes the filter)");
	want = expected_rate("rnd", &probes);
	snprintf(l, sizeof(l), "random list: expected per-packet rate %.4g (%u probes) <= 1%%",
		 want, probes);
	ASSERT_RANGE(want, 0, 0.01 * 1.0001, l);
	seed = 0x1a51de;
	missed = check_inside(&pg, p, N_RND4 + N_RND6, N_INSIDE, &seed);
	ASSERT_EQ(missed, 0, "random list: after --replace, 10,000 inside addresses all match");
	missed = check_edges(&pg, p, N_RND4 + N_RND6, "random list (replaced)");
	ASSERT_EQ(missed, 0, "random list: after --replace, every prefix's edges match");

	seed = 0x0075de;
	for (i = 0; i < N_OUTSIDE;) {
		struct pfx all = { .plen = (i & 1) ? 3 : 96,
				   .fam = (i & 1) ? FB_FAMILY_IPV6 : FB_FAMILY_IPV4 };
		__u8 a[16];
		__u32 kind;
		size_t q;
		bool inside = false;

		memset(all.a, 0, 16);
		if (i & 1)
			all.a[0] = 0x20;
		else
			all.a[10] = all.a[11] = 0xff;
		rand_in(&all, &seed, a);
		for (q = 0; q < N_RND4 + N_RND6 && !inside; q++)
			inside = ref_inside(&p[q], a);
		if (inside)
			continue;
		i++;
		send_pkt(&pg, a, other_of(a), &kind);
		fp += kind != 0;
	}
	snprintf(l, sizeof(l),
		 "random list: %ld of %d outside addresses match (rate %.4f), <= 3 x expected "
		 "%.4f + 0.001",
		 fp, N_OUTSIDE, (double)fp / N_OUTSIDE, want);
	ASSERT_RANGE((double)fp / N_OUTSIDE, 0, 3 * want + 0.001, l);
	printf("random list: outside match rate %.4f, expected per packet <= %.4f; %.2f s\n",
	       (double)fp / N_OUTSIDE, want, now() - t0);
	prog_unload(&pg);
close:
	fb_store_close(&f);
destroy:
	ASSERT_EQ(sh("destroy rnd >/dev/null"), 0, "random list: destroy");
}

/* A length that expansion must remove from a list (gone) and the one it
 * must expand into (kept), 128-bit space. */
struct len_check {
	int list, gone, kept;
};

/* Crafted lists whose expansion is known: the lengths it leaves, the rule
 * count, each prefix's edges and the addresses beside the prefixes. */
static void crafted(const char *name, const char *const *lines, size_t n, const char *const *beside,
		    const struct len_check *lc, size_t nlc, const char *what)
{
	char path[128], l[256];
	struct pfx p[64];
	struct fb_store f;
	struct fb_prefixes px;
	struct prog pg = { 0 };
	__u64 nflows;
	FILE *out;
	size_t i;
	long missed;

	snprintf(path, sizeof(path), "%s/%s.txt", tmpdir, name);
	out = fopen(path, "w");
	for (i = 0; i < n; i++) {
		char err[128];
		__u8 pl;

		fprintf(out, "%s\n", lines[i]);
		fb_prefix_parse(lines[i], p[i].a, &pl, &p[i].fam, err, sizeof(err));
		p[i].plen = pl;
	}
	fclose(out);
	snprintf(l, sizeof(l), "%s: create a 1 MiB filter", what);
	if (!ASSERT_EQ(sh("create %s --bits " BIG_BITS " --hashes 8 >/dev/null", name), 0, l))
		return;
	snprintf(l, sizeof(l), "%s: load (expands)", what);
	ASSERT_EQ(sh("load %s %s >/dev/null 2>&1", name, path), 0, l);
	lengths_of(name, &px, &nflows);
	for (i = 0; i < nlc; i++) {
		const struct fb_lengths *ls = &px.list[lc[i].list];
		int off = lc[i].list == FB_PFX_SRC4 ? 96 : 0;

		snprintf(l, sizeof(l), "%s: %s lengths: 8, /%d expanded into /%d", what,
			 fb_rules_prefix_list_name(lc[i].list), lc[i].gone - off, lc[i].kept - off);
		ASSERT_TRUE(ls->n == FB_MAX_LENGTHS && !has_len(ls, lc[i].gone) &&
				    has_len(ls, lc[i].kept),
			    l);
	}
	snprintf(l, sizeof(l), "%s: %zu rules listed, %zu stored", what, n, n + nlc);
	ASSERT_EQ(nflows, n + nlc, l);
	if (fb_store_open(name, &f))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "load the program"))
		goto close;
	missed = check_edges(&pg, p, n, what);
	snprintf(l, sizeof(l), "%s: first and last address of every prefix match", what);
	ASSERT_EQ(missed, 0, l);
	for (i = 0; beside && beside[i]; i++) {
		__u8 a[16];
		__u32 kind;
		int v;

		addr(beside[i], a);
		v = send_pkt(&pg, a, other_of(a), &kind);
		snprintf(l, sizeof(l), "%s: %s (beside a prefix) does not match", what, beside[i]);
		ASSERT_TRUE(v == XDP_PASS && kind == 0, l);
	}
	prog_unload(&pg);
close:
	fb_store_close(&f);
destroy:
	snprintf(l, sizeof(l), "%s: destroy", what);
	ASSERT_EQ(sh("destroy %s >/dev/null", name), 0, l);
}

static void expansion(void)
{
	/* Nine IPv4 lengths; the one /23 is the cheapest to expand (into
	 * two /24s: one extra rule; any other merge costs 3 or more). */
	static const char *const l23[] = {
		"10.1.0.0/16",	 "10.2.0.0/16",	    "10.3.0.0/16",    "10.16.0.0/20",
		"10.16.16.0/20", "10.16.32.0/20",   "10.32.0.0/22",   "10.32.4.0/22",
		"10.32.8.0/22",	 "198.51.100.0/23", "203.0.113.0/24", "10.40.1.0/24",
		"10.40.2.0/24",	 "10.40.3.0/24",    "10.40.4.0/24",   "10.40.5.0/24",
		"10.48.0.0/26",	 "10.48.0.64/26",   "10.48.0.128/26", "10.48.1.0/28",
		"10.48.1.16/28", "10.48.1.32/28",   "10.48.2.0/30",   "10.48.2.4/30",
		"10.48.2.8/30",	 "10.48.3.1",	    "10.48.3.2",      "10.48.3.3",
		"10.48.3.4",	 "10.48.3.5",	    "10.48.3.6",
	};
	static const char *const b23[] = { "198.51.99.255", "198.51.102.0", "203.0.112.255",
					   "203.0.114.0", NULL };
	static const struct len_check c23[] = { { FB_PFX_SRC4, 96 + 23, 96 + 24 } };
	/* Nine IPv4 lengths where the /31 is the cheapest to expand: into
	 * /32s (two addresses); and the same in IPv6, a /127 into /128s. */
	static const char *const l31[] = {
		"10.1.0.0/16",	       "10.2.0.0/16",	       "10.3.0.0/16",
		"10.4.0.0/16",	       "10.5.0.0/16",	       "10.16.0.0/18",
		"10.16.64.0/18",       "10.16.128.0/18",       "10.16.192.0/18",
		"10.17.0.0/18",	       "10.32.0.0/20",	       "10.32.16.0/20",
		"10.32.32.0/20",       "10.32.48.0/20",	       "10.32.64.0/20",
		"10.33.0.0/22",	       "10.33.4.0/22",	       "10.33.8.0/22",
		"10.33.12.0/22",       "10.33.16.0/22",	       "10.34.0.0/24",
		"10.34.1.0/24",	       "10.34.2.0/24",	       "10.34.3.0/24",
		"10.34.4.0/24",	       "10.35.0.0/26",	       "10.35.0.64/26",
		"10.35.0.128/26",      "10.35.0.192/26",       "10.35.1.0/26",
		"10.36.0.0/28",	       "10.36.0.16/28",	       "10.36.0.32/28",
		"10.36.0.48/28",       "10.36.0.64/28",	       "203.0.113.1",
		"203.0.113.2",	       "203.0.113.3",	       "203.0.113.4",
		"203.0.113.5",	       "203.0.113.6",	       "198.51.100.10/31",
		"2001:db8:1::/48",     "2001:db8:2::/48",      "2001:db8:3::/48",
		"2001:db8:4::/56",     "2001:db8:4:100::/56",  "2001:db8:5::/64",
		"2001:db8:5:1::/64",   "2001:db8:6::/80",      "2001:db8:6:0:1::/80",
		"2001:db8:7::/96",     "2001:db8:7::1:0:0/96", "2001:db8:8::/112",
		"2001:db8:8::1:0/112", "2001:db8:9::/120",     "2001:db8:9::100/120",
		"2001:db8:a::1",       "2001:db8:a::2",	       "2001:db8:a::3",
		"2001:db8:a::4",       "2001:db8:b::10/127",
	};
	static const char *const b31[] = { "198.51.100.9", "198.51.100.12", "2001:db8:b::f",
					   "2001:db8:b::12", NULL };
	static const struct len_check c31[] = { { FB_PFX_SRC4, 96 + 31, 128 },
						{ FB_PFX_SRC6, 127, 128 } };
	double t0 = now();

	crafted("x23", l23, sizeof(l23) / sizeof(l23[0]), b23, c23, 1, "expansion /23 -> /24");
	crafted("x31", l31, sizeof(l31) / sizeof(l31[0]), b31, c31, 2,
		"expansion /31 -> /32, /127 -> /128");
	printf("expansion: %.2f s\n", now() - t0);
}

/* ------------------------------------------------ 4. DROP-shaped list */

#define N_DROP4 1500
#define N_DROP6 50

static void drop_list(void)
{
	/* Lengths /11../24, weights per mille shaped like Spamhaus DROP. */
	static const struct {
		int len, w;
	} wt[] = { { 24, 400 }, { 22, 180 }, { 23, 100 }, { 21, 80 }, { 20, 70 },
		   { 19, 50 },	{ 16, 40 },  { 18, 30 },  { 17, 20 }, { 15, 12 },
		   { 14, 8 },	{ 13, 5 },   { 12, 3 },	  { 11, 2 } };
	struct pfx *p = calloc(N_DROP4 + N_DROP6, sizeof(*p));
	uint64_t seed = 0xd209;
	char p4[128], p6[128], err[128], l[256];
	struct fb_store f;
	struct prog pg = { 0 };
	FILE *o4, *o6;
	long missed;
	size_t i;
	double t0 = now(), t1;

	snprintf(p4, sizeof(p4), "%s/drop.txt", tmpdir);
	snprintf(p6, sizeof(p6), "%s/dropv6.txt", tmpdir);
	snprintf(err, sizeof(err), "%s/drop.err", tmpdir);
	o4 = fopen(p4, "w");
	o6 = fopen(p6, "w");
	fprintf(o4, "; Spamhaus DROP List 2025/01/01 - (c) 2025 The Spamhaus Project SLU\n"
		    "; https://www.spamhaus.org/drop/drop.txt\n"
		    "; Last-Modified: Wed, 01 Jan 2025 00:00:00 GMT\n"
		    "; Expires: Wed, 01 Jan 2025 01:00:00 GMT\n");
	fprintf(o6, "; Spamhaus IPv6 DROP List 2025/01/01 - (c) 2025 The Spamhaus Project SLU\n"
		    "; https://www.spamhaus.org/drop/dropv6.txt\n");
	for (i = 0; i < N_DROP4 + N_DROP6; i++) {
		char t[96];
		int len = 0;

		if (i < N_DROP4) {
			int r = test_rand64(&seed) % 1000, k;

			for (k = 0; r >= wt[k].w; k++)
				r -= wt[k].w;
			len = wt[k].len;
		} else {
			len = 29 + test_rand64(&seed) % 20; /* /29../48 */
		}
		rand_pfx(&seed, i < N_DROP4, len, &p[i]);
		pfx_text(&p[i], t, sizeof(t));
		fprintf(i < N_DROP4 ? o4 : o6, "%s ; SBL%06zu\n", t, 100000 + i * 7);
	}
	fclose(o4);
	fclose(o6);

	if (!ASSERT_EQ(sh("create drop --capacity 20000 --fp-rate 0.001 >/dev/null"), 0,
		       "DROP list: create"))
		goto out;
	t1 = now();
	ASSERT_EQ(sh("load drop %s %s >/dev/null 2>%s", p4, p6, err), 0,
		  "DROP list: load drop.txt and dropv6.txt in one call");
	printf("DROP list: %d + %d prefixes loaded in %.3f s (CLI, incl. process start)\n", N_DROP4,
	       N_DROP6, now() - t1);
	ASSERT_TRUE(strstr(slurp(err), "note: expanded"), "DROP list: stderr notes the expansion");
	if (fb_store_open("drop", &f))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "DROP list: load the program"))
		goto close;
	seed = 0xd20b;
	missed = check_inside(&pg, p, N_DROP4 + N_DROP6, N_INSIDE, &seed);
	snprintf(l, sizeof(l), "DROP list: %d packets from inside listed prefixes all drop",
		 N_INSIDE);
	ASSERT_EQ(missed, 0, l);
	missed = check_edges(&pg, p, N_DROP4 + N_DROP6, "DROP list");
	ASSERT_EQ(missed, 0, "DROP list: first and last address of every prefix drop");
	prog_unload(&pg);
	printf("DROP list: %.2f s\n", now() - t0);
close:
	fb_store_close(&f);
destroy:
	ASSERT_EQ(sh("destroy drop >/dev/null"), 0, "DROP list: destroy");
out:
	free(p);
}

/* ------------------------------------------ 5. replace under traffic */

#define N_C 500
#define N_AONLY 300
#define N_BONLY 300
#define N_SWAPS 20
/* ----------------------------------- 6. families never mix in expansion */

#define MIX_MAX 160
#define MIX_ROUNDS 4
#define MIX_OUTSIDE 4000

/* An IPv6 prefix from text (hex for ::ffff:0:0/96: IPv6 as written). */
static void pfx6(const char *text, struct pfx *p)
{
	char err[128];
	__u8 pl;

	if (fb_prefix_parse(text, p->a, &pl, &p->fam, err, sizeof(err)) ||
	    p->fam != FB_FAMILY_IPV6) {
		fprintf(stderr, "test bug: '%s' is not an IPv6 prefix\n", text);
		abort();
	}
	p->plen = pl;
}

/* A random address of family fam for the outside sample: IPv4 anywhere,
 * or IPv6 in 2000::/3, in ::ffff:0:0/96 (a v4-mapped source) or in ::/64. */
static void rand_addr(uint64_t *seed, __u8 fam, __u8 out[16])
{
	struct pfx all = { .fam = fam };
	int which = test_rand64(seed) % 3;

	memset(all.a, 0, 16);
	if (fam == FB_FAMILY_IPV4 || which == 1) {
		all.a[10] = all.a[11] = 0xff;
		all.plen = 96;
	} else if (which == 0) {
		all.a[0] = 0x20;
		all.plen = 3;
	} else {
		all.plen = 64;
	}
	rand_in(&all, seed, out);
}

/*
 * Random mixed lists: IPv4 prefixes of every length /1-/32 (and /0 in one
 * round), IPv6 prefixes of many lengths, and the prefixes at the family
 * border: ::/N for N < 96 (which cover ::ffff:0:0/96 numerically),
 * ::fffe:0:0/95 (expanding it to /96 makes ::ffff:0:0/96), ::ffff:0:0/96
 * and longer written in hex (IPv6 rules), 64:ff9b::/96, ::/0 in one round.
 * Each list has more than 8 lengths per family, so `load` expands both.
 * Then, through the real program: every listed prefix's first, last and
 * random addresses match as sources of a packet of the prefix's family,
 * and packets from outside every prefix of their own family (IPv4, IPv6,
 * IPv6 from v4-mapped sources) match no more often than the false-positive
 * rate says. And no length appears in a family's list that no prefix of
 * that family could have been expanded into.
 */
static void mixed_families(void)
{
	static const char *const border[] = {
		"::/8",		 "::/40",
		"::/64",	 "::/80",
		"::/88",	 "::/94",
		"::fffe:0:0/95", "::ffff:0:0/96",
		"::ffff:0:0/97", "::ffff:c633:6400/120",
		"64:ff9b::/96",	 "::ffff:cb00:714d",
	};
	static const int len6[] = { 16, 24, 29, 32, 36, 44, 48, 56, 64, 100, 112, 127, 128 };
	struct pfx *p = calloc(MIX_MAX, sizeof(*p));
	uint64_t seed = 0x3a9ed;
	struct prog pg = { 0 };
	struct fb_store f;
	char path[128], l[256];
	double t0 = now();
	int round;

	if (!p || !ASSERT_EQ(sh("create mix --bits " BIG_BITS " --hashes 8 >/dev/null"), 0,
			     "mixed families: create a 1 MiB filter"))
		goto out;
	if (!ASSERT_EQ(fb_store_open("mix", &f), 0, "mixed families: open it"))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "mixed families: load the program"))
		goto close;
	snprintf(path, sizeof(path), "%s/mix.txt", tmpdir);
	for (round = 0; round < MIX_ROUNDS; round++) {
		struct fb_prefixes px;
		size_t n = 0, i;
		long miss = 0, fp = 0, sent[2] = { 0, 0 }, allowed;
		int min4 = 128, min6 = 128, j, e, bad_len = 0;
		unsigned probes;
		__u64 nflows;
		double rate;

		for (i = 0; i < 50; i++, n++) {
			int len = 1 + (int)(test_rand64(&seed) % 32);

			rand_pfx(&seed, 1, len, &p[n]);
			/* The short ones in 128.0.0.0/1: room outside below. */
			if (len < 8)
				p[n].a[12] |= 0x80;
		}
		if (round == 1)
			rand_pfx(&seed, 1, 0, &p[n++]); /* 0.0.0.0/0 */
		for (i = 0; i < 60; i++)
			rand_pfx(&seed, 0, len6[test_rand64(&seed) % 13], &p[n++]);
		for (i = 0; i < sizeof(border) / sizeof(border[0]); i++)
			if (round == 0 || test_rand64(&seed) % 2)
				pfx6(border[i], &p[n++]);
		if (round == 2)
			pfx6("::/0", &p[n++]);
		for (i = 0; i < n; i++) {
			if (p[i].fam == FB_FAMILY_IPV4 && p[i].plen < min4)
				min4 = p[i].plen;
			if (p[i].fam == FB_FAMILY_IPV6 && p[i].plen < min6)
				min6 = p[i].plen;
		}
		write_list(path, "w", p, n, "");
		snprintf(l, sizeof(l), "mixed families, round %d: load %zu prefixes (expands)",
			 round, n);
		if (!ASSERT_EQ(sh("load mix %s --replace >/dev/null 2>&1", path), 0, l))
			continue;

		/* Lengths: each family's list holds only lengths its own
		 * prefixes expand into. */
		lengths_of("mix", &px, &nflows);
		for (j = 0; j < FB_PFX_NR; j++)
			for (e = 0; e < px.list[j].n; e++) {
				int len = px.list[j].len[e];
				bool v4 = j == FB_PFX_SRC4 || j == FB_PFX_DST4;

				if (j == FB_PFX_DST4 || j == FB_PFX_DST6 ||
				    len < (v4 ? min4 : min6))
					bad_len++;
			}
		snprintf(l, sizeof(l),
			 "mixed families, round %d: IPv4 lengths none below /%d, IPv6 none below "
			 "/%d, no destination list",
			 round, min4 - 96, min6);
		ASSERT_EQ(bad_len, 0, l);

		/* Inside: first, last and two random addresses of each. */
		for (i = 0; i < n; i++)
			for (e = 0; e < 4; e++) {
				const __u8 *o;
				__u8 a[16];
				__u32 kind;
				int v;

				if (e < 2)
					edge_of(&p[i], e, a);
				else
					rand_in(&p[i], &seed, a);
				o = other_of(a);
				v = send_pkt_fam(&pg, a, o, p[i].fam, &kind);
				if ((v != XDP_DROP || kind != FB_KIND_SRC) && miss++ < 5) {
					char t[96], at[64];

					pfx_text(&p[i], t, sizeof(t));
					inet_ntop(AF_INET6, a, at, sizeof(at));
					printf("  round %d: %s packet from %s inside %s: verdict "
					       "%d "
					       "kind %u\n",
					       round, p[i].fam ? "IPv6" : "IPv4", at, t, v, kind);
				}
			}
		snprintf(l, sizeof(l),
			 "mixed families, round %d: every prefix's edges and random addresses "
			 "match, in their own family",
			 round);
		ASSERT_EQ(miss, 0, l);

		/* Outside, both families, v4-mapped IPv6 sources among them. */
		for (i = 0; i < MIX_OUTSIDE * 20 && sent[0] + sent[1] < MIX_OUTSIDE; i++) {
			__u8 fam = i & 1 ? FB_FAMILY_IPV6 : FB_FAMILY_IPV4, a[16];
			const __u8 *o;
			bool inside = false;
			__u32 kind;
			size_t q;
			int v;

			rand_addr(&seed, fam, a);
			for (q = 0; q < n && !inside; q++)
				inside = ref_inside_fam(&p[q], a, fam);
			if (inside)
				continue;
			sent[fam == FB_FAMILY_IPV6]++;
			o = other_of(a);
			v = send_pkt_fam(&pg, a, o, fam, &kind);
			if (v == XDP_DROP || kind) {
				char at[64];

				if (fp++ < 5) {
					inet_ntop(AF_INET6, a, at, sizeof(at));
					printf("  round %d: %s packet from %s (outside) matched "
					       "(kind %u)\n",
					       round, fam ? "IPv6" : "IPv4", at, kind);
				}
			}
		}
		rate = expected_rate("mix", &probes);
		allowed = (long)(3 * rate * (sent[0] + sent[1])) + 2;
		snprintf(l, sizeof(l),
			 "mixed families, round %d: %ld IPv4 and %ld IPv6 packets from outside: "
			 "%ld matched (allowed %ld: rate %.2g per packet)",
			 round, sent[0], sent[1], fp, allowed, rate);
		/* 0.0.0.0/0 (round 1) and ::/0 (round 2) leave no outside. */
		ASSERT_TRUE(fp <= allowed && (sent[0] > 0 || round == 1) &&
				    (sent[1] > 0 || round == 2),
			    l);
	}
	printf("mixed families: %d rounds in %.1f s\n", MIX_ROUNDS, now() - t0);
	prog_unload(&pg);
close:
	fb_store_close(&f);
destroy:
	ASSERT_EQ(sh("destroy mix >/dev/null"), 0, "mixed families: destroy");
out:
	free(p);
}

#define N_FRAMES 4096

struct frame {
	uint8_t d[128];
	__u32 len;
};

static void build_frames(struct frame *fr, size_t n, const struct pfx *p, size_t np, uint64_t *seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct fb_key k = { .proto = 17, .kind = FB_KIND_FLOW };

		rand_in(&p[test_rand64(seed) % np], seed, k.saddr);
		memcpy(k.daddr, other_of(k.saddr), 16);
		k.family = fam_of(k.saddr);
		k.sport = htons(1000 + i);
		k.dport = htons(53);
		fr[i].len = test_build_frame(&k, fr[i].d);
	}
}

static int run_frame(const struct prog *pg, const struct frame *fr, __u32 *kind)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .repeat = 1);
	struct fb_trace tr;
	__u32 zero = 0;

	t.data_in = fr->d;
	t.data_size_in = fr->len;
	if (bpf_prog_test_run_opts(pg->fd, &t) || bpf_map_lookup_elem(pg->trace_fd, &zero, &tr))
		return -1;
	*kind = tr.kind;
	return (int)t.retval;
}

static void replace_under_traffic(void)
{
	static struct pfx c[N_C], ao[N_AONLY], bo[N_BONLY];
	static struct frame fc[N_FRAMES], fa[N_FRAMES / 4];
	/* C: IPv4 /16 and /24, ten /19s, IPv6 /32 /48. A adds /22 /28 /32
	 * and /40 /64 (six IPv4 lengths: no expansion). B adds eight more
	 * IPv4 lengths, 37 or 38 prefixes each (eleven: expanded; the ten
	 * /19s are the cheapest to expand, so C's /19s are /19s under A and
	 * /20s under B). */
	static const int c4[] = { 16, 24 }, c6[] = { 32, 48 }, a4[] = { 22, 28, 32 },
			 a6[] = { 40, 64 }, b4[] = { 17, 18, 20, 21, 22, 23, 25, 26 };
	uint64_t seed = 0x5e1ec7;
	char pa[128], pb[128], pe[128], l[256];
	struct fb_store f;
	struct prog pg = { 0 };
	long sent = 0, missed = 0, errors = 0, a_hits = 0, a_sent = 0;
	int status = 0, swaps = -1;
	pid_t child;
	size_t i;
	double t0, t1;

	for (i = 0; i < N_C; i++) {
		int v6 = i % 5 == 4;

		rand_pfx(&seed, !v6, v6 ? c6[i % 2] : i % 40 == 0 ? 19 : c4[i % 2], &c[i]);
	}
	for (i = 0; i < N_AONLY; i++) {
		int v6 = i % 5 == 4;

		rand_pfx(&seed, !v6, v6 ? a6[i % 2] : a4[i % 3], &ao[i]);
	}
	for (i = 0; i < N_BONLY; i++)
		rand_pfx(&seed, 1, b4[i % 8], &bo[i]);
	snprintf(pa, sizeof(pa), "%s/listA.txt", tmpdir);
	snprintf(pb, sizeof(pb), "%s/listB.txt", tmpdir);
	snprintf(pe, sizeof(pe), "%s/swap.err", tmpdir);
	write_list(pa, "w", c, N_C, "");
	write_list(pa, "a", ao, N_AONLY, "");
	write_list(pb, "w", c, N_C, " ; shared part");
	write_list(pb, "a", bo, N_BONLY, " # B only");
	build_frames(fc, N_FRAMES, c, N_C, &seed);
	build_frames(fa, N_FRAMES / 4, ao, N_AONLY, &seed);

	if (!ASSERT_EQ(sh("create swap --capacity 2000 --fp-rate 0.001 >/dev/null"), 0,
		       "replace: create"))
		return;
	{
		struct fb_prefixes px;
		__u64 n;

		ASSERT_EQ(sh("load swap %s --replace >/dev/null 2>&1", pb), 0,
			  "replace: load list B");
		lengths_of("swap", &px, &n);
		ASSERT_TRUE(px.list[FB_PFX_SRC4].n == 8 &&
				    !has_len(&px.list[FB_PFX_SRC4], 96 + 19) &&
				    has_len(&px.list[FB_PFX_SRC4], 96 + 20),
			    "replace: under B, C's /19s are stored as /20s");
		ASSERT_EQ(sh("load swap %s --replace >/dev/null", pa), 0, "replace: load list A");
		lengths_of("swap", &px, &n);
		ASSERT_TRUE(px.list[FB_PFX_SRC4].n == 6 && has_len(&px.list[FB_PFX_SRC4], 96 + 19),
			    "replace: under A, C's /19s are /19s");
	}
	if (fb_store_open("swap", &f))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "replace: load the program once"))
		goto close;
	for (i = 0; i < N_FRAMES; i++) {
		__u32 kind;

		missed += run_frame(&pg, &fc[i], &kind) != XDP_DROP || kind != FB_KIND_SRC;
	}
	ASSERT_EQ(missed, 0, "replace: before: every packet from C matches (A loaded)");
	missed = 0;

	t0 = now();
	child = fork();
	if (child == 0) {
		int ok = 0, k;

		for (k = 0; k < N_SWAPS; k++) {
			ok += !sh("load swap %s --replace >/dev/null 2>>%s", pb, pe);
			ok += !sh("load swap %s --replace >/dev/null 2>>%s", pa, pe);
		}
		_exit(ok);
	}
	if (!ASSERT_TRUE(child > 0, "replace: fork"))
		goto unload;
	for (;;) {
		for (i = 0; i < 64; i++) {
			const struct frame *fr = &fc[(sent + i) % N_FRAMES];
			__u32 kind;
			int v = run_frame(&pg, fr, &kind);

			errors += v < 0;
			missed += v != XDP_DROP || kind != FB_KIND_SRC;
		}
		sent += 64;
		{
			__u32 kind;

			a_hits += run_frame(&pg, &fa[a_sent % (N_FRAMES / 4)], &kind) == XDP_DROP;
			a_sent++;
		}
		if (waitpid(child, &status, WNOHANG) == child)
			break;
	}
	t1 = now() - t0;
	swaps = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	snprintf(l, sizeof(l), "replace: %d of %d `load --replace` runs succeeded", swaps,
		 2 * N_SWAPS);
	ASSERT_EQ(swaps, 2 * N_SWAPS, l);
	snprintf(l, sizeof(l), "replace: %ld packets from C sent during the replaces (>= 1000)",
		 sent);
	ASSERT_RANGE(sent, 1000, 1e12, l);
	snprintf(l, sizeof(l), "replace: all %ld packets from C matched during the replaces", sent);
	ASSERT_EQ(missed, 0, l);
	ASSERT_EQ(errors, 0, "replace: every test_run succeeded");
	ASSERT_EQ(nofilter_packets(&pg), 0, "replace: the program never found no filter");
	snprintf(l, sizeof(l),
		 "replace: A-only packets matched %ld of %ld times: the program saw both lists",
		 a_hits, a_sent);
	ASSERT_TRUE(a_hits > 0 && a_hits < a_sent, l);
	printf("replace: %d replaces in %.2f s (%.1f ms each), %ld packets from C during them "
	       "(%ld missed), A-only packets matched %ld of %ld\n",
	       swaps, t1, t1 * 1e3 / (swaps > 0 ? swaps : 1), sent, missed, a_hits, a_sent);

	/* A is loaded again at the end: all of A matches. */
	missed = 0;
	for (i = 0; i < N_FRAMES / 4; i++) {
		__u32 kind;

		missed += run_frame(&pg, &fa[i], &kind) != XDP_DROP || kind != FB_KIND_SRC;
	}
	ASSERT_EQ(missed, 0, "replace: after: every packet from A-only prefixes matches");
	{
		char *e = slurp(pe);

		ASSERT_TRUE(strstr(e, "note: expanded") && !strstr(e, "error"),
			    "replace: B's loads note the expansion, no errors");
	}
unload:
	prog_unload(&pg);
close:
	fb_store_close(&f);
destroy:
	ASSERT_EQ(sh("destroy swap >/dev/null"), 0, "replace: destroy");
}

int main(int argc, char **argv)
{
	char root[128];
	double t0 = now();

	(void)argc;
	snprintf(root, sizeof(root), "/sys/fs/bpf/fbtest_prefix_%d", (int)getpid());
	setenv("FLOWBLOOM_ROOT", root, 1);
	snprintf(cli, sizeof(cli), "%.*s/../flowbloom", (int)(strrchr(argv[0], '/') - argv[0]),
		 argv[0]);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/fbtest_prefix.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	fb_libbpf_logging(false);
	signal(SIGPIPE, SIG_IGN); /* output piped into head must not skip the cleanup */

	semantics();
	random_list();
	expansion();
	drop_list();
	replace_under_traffic();
	mixed_families();

	ASSERT_EQ(test_runs_failed, 0, "every test_run succeeded");
	ASSERT_TRUE(access(root, F_OK) != 0, "nothing left under FLOWBLOOM_ROOT");
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	printf("test_prefix: %.1f s\n", now() - t0);
	return test_summary();
}
