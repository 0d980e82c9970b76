// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_shapes: rules of any shape (include/flowbloom/mask.h) on the real XDP
 * program, through BPF_PROG_TEST_RUN.
 *
 *  1. Property: random mixed rule sets (eight random shapes over both
 *     families, with 5-tuples, source and destination prefixes among them)
 *     added through the library as `add` does; for every rule a random
 *     packet it covers (fields outside its mask random) is dropped, and
 *     random packets no rule covers (by a reference written field by field,
 *     not with the key functions) match at most the false-positive rate
 *     the filter's geometry predicts, times three, plus a little. Three
 *     rounds: NH and SipHash-1-3, then a filter made with --confirm exact
 *     and sized so small that the Bloom probe says "maybe" often: the exact
 *     sets refuse every outside packet, and every covered one still drops.
 *  2. Packets without ports: a shape that fixes a port never matches a
 *     non-first fragment, a protocol without ports (ICMP to `dport 0`) or
 *     a malformed packet (its ports unread); the malformed one gets the
 *     malformed verdict (drop under --malformed default, pass when told),
 *     never "no rule" with the action's verdict. A shape of addresses
 *     alone matches a malformed packet, as source and destination rules do.
 *  3. Families: a rule without an address covers both families; with
 *     `dst 0.0.0.0/0` only IPv4.
 *  4. The bound: a ninth shape is refused (-4), and nothing of the batch
 *     is added (table, flows, kinds as before).
 *  5. IPv6 fragments whose fragmentable part starts with an extension
 *     header (dstopts, AH): the first walks it and meets `udp dst` with
 *     its real protocol; a later one's protocol is unknown, so it meets
 *     address rules only. Under drop the blocked datagram's first fragment
 *     is dropped (the rest never reassembles); under allow the later
 *     fragment needs its addresses allowed.
 *
 * Filters live under /sys/fs/bpf/fbtest_shapes_<pid>, destroyed at the end.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flowbloom.skel.h"
#include "flowbloom/mask.h"
#include "packet.h"
#include "rules/flow.h"
#include "rules/rules.h"
#include "prog/loader.h"
#include "store/stats.h"
#include "store/store.h"
#include "types/sizing.h"
#include "testlib.h"

#define NRULES 1500
#define NOUT 6000

struct rule {
	__u32 d;	 /* descriptor; 0 for a historical kind */
	struct fb_key v; /* values (masked), kind FLOW */
	struct fb_key key;
};

static long runs_failed;

/* Run one frame; the verdict, *kind and *shape from the trace. */
static int run(int prog, int trace, const __u8 *frame, size_t len, __u32 *kind, __u32 *shape)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .repeat = 1, .data_in = frame, .data_size_in = len);
	struct fb_trace tr;
	__u32 zero = 0;

	if (bpf_prog_test_run_opts(prog, &t) || bpf_map_lookup_elem(trace, &zero, &tr)) {
		runs_failed++;
		return -1;
	}
	*kind = tr.kind;
	*shape = tr.mask;
	return (int)t.retval;
}

static int send_key(struct flowbloom_bpf *sk, const struct fb_key *k, __u32 *kind, __u32 *shape)
{
	__u8 frame[128];
	size_t len = test_build_frame(k, frame);

	return run(bpf_program__fd(sk->progs.flowbloom), bpf_map__fd(sk->maps.fb_trace), frame, len,
		   kind, shape);
}

/* ----------------------------------------------------- the reference */

static int prefix_eq(const __u8 *a, const __u8 *b, int len)
{
	int i;

	for (i = 0; i < len; i++)
		if (((a[i / 8] ^ b[i / 8]) >> (7 - i % 8)) & 1)
			return 0;
	return 1;
}

/* Does rule r cover packet p (a parsed packet with ports)? Field by field. */
static int covers(const struct rule *r, const struct fb_key *p)
{
	const struct fb_key *v = &r->v;
	__u16 ps = ntohs(p->sport), pd = ntohs(p->dport), vs = ntohs(v->sport),
	      vd = ntohs(v->dport);

	if (p->family != v->family)
		return 0;
	if (!r->d) { /* historical kinds */
		if (r->key.kind == FB_KIND_FLOW)
			return !memcmp(p->saddr, v->saddr, 16) && !memcmp(p->daddr, v->daddr, 16) &&
			       p->sport == v->sport && p->dport == v->dport && p->proto == v->proto;
		if (r->key.kind == FB_KIND_SRC)
			return prefix_eq(p->saddr, r->key.saddr, r->key.plen);
		return prefix_eq(p->daddr, r->key.daddr, r->key.plen);
	}
	if (FB_MASK_PORTS(r->d) && !fb_proto_has_ports(p->proto))
		return 0;
	return prefix_eq(p->saddr, v->saddr, FB_MASK_SLEN(r->d)) &&
	       prefix_eq(p->daddr, v->daddr, FB_MASK_DLEN(r->d)) &&
	       (!FB_MASK_PROTO(r->d) || p->proto == v->proto) &&
	       (FB_MASK_SPLEN(r->d) == 0 || (ps ^ vs) >> (16 - FB_MASK_SPLEN(r->d)) == 0) &&
	       (FB_MASK_DPLEN(r->d) == 0 || (pd ^ vd) >> (16 - FB_MASK_DPLEN(r->d)) == 0);
}

/* ------------------------------------------------------- generation */

static void rand_addr(uint64_t *seed, int fam, __u8 a[16])
{
	uint64_t r = test_rand64(seed), r2 = test_rand64(seed);

	memcpy(a, &r, 8);
	memcpy(a + 8, &r2, 8);
	/* Few distinct top bits, so that prefixes overlap packets often. */
	a[0] = fam ? 0x20 : 0;
	a[1] = fam ? 0x01 : 0;
	if (!fam) {
		memset(a, 0, 10);
		a[10] = a[11] = 0xff;
		a[12] = 198 + (a[12] & 1) * 5;
	}
}

/* Not SCTP: test_build_frame writes 8 bytes after IP, SCTP needs 12. */
static const __u8 protos[] = { 6, 17, 6, 136, 1, 47 };

static void rand_packet(uint64_t *seed, int fam, struct fb_key *p)
{
	memset(p, 0, sizeof(*p));
	p->family = fam;
	p->kind = FB_KIND_FLOW;
	rand_addr(seed, fam, p->saddr);
	rand_addr(seed, fam, p->daddr);
	p->proto = protos[test_rand64(seed) % 6];
	if (fam && p->proto == 1)
		p->proto = 58;
	if (fb_proto_has_ports(p->proto)) {
		/* Ports from a small set too, so port prefixes meet them. */
		p->sport = htons((__u16)(test_rand64(seed) % 4 ? test_rand64(seed) % 1024
							       : test_rand64(seed)));
		p->dport = htons((__u16)(test_rand64(seed) % 4 ? test_rand64(seed) % 1024
							       : test_rand64(seed)));
	}
}

static __u32 rand_shape(uint64_t *seed, int fam)
{
	for (;;) {
		uint64_t r = test_rand64(seed);
		__u32 s = r % 3 ? 0 : (__u32)(r >> 8) % (fam ? 129 : 33);
		__u32 t = (r >> 16) % 3 == 0 ? 0 : (__u32)(r >> 20) % (fam ? 129 : 33);
		__u32 sp = (r >> 28) % 3 ? 0 : 1 + (__u32)(r >> 32) % 16;
		__u32 dp = (r >> 36) % 2 ? 0 : 1 + (__u32)(r >> 40) % 16, pr = (r >> 48) & 1;

		if (!fam) {
			s = s ? 96 + s : 0;
			t = t ? 96 + t : 0;
		}
		/* A shape that is not a historical kind (nothing, a source
		 * or destination prefix alone, a 5-tuple), with an address,
		 * so that most random packets stay outside every rule. */
		if ((!sp && !dp && !pr && !(s && t)) || (!s && !t))
			continue;
		if (s == 128 && t == 128 && pr && sp == 16 && dp == 16)
			continue;
		return fb_mask_desc(s, t, sp, dp, pr, fam);
	}
}

/* A rule of shape d from packet p's fields (p gets a protocol with ports
 * when d fixes one). */
static void make_rule(struct rule *r, __u32 d, const struct fb_key *p)
{
	r->d = d;
	r->v = *p;
	fb_mask_key(&r->key, p, d);
	fb_mask_of_key(&r->key, &r->v);
	r->v.kind = FB_KIND_FLOW;
	r->v.family = p->family;
}

/* A packet r covers: p's fields where r fixes none. */
static void covered_packet(uint64_t *seed, const struct rule *r, struct fb_key *p)
{
	__u16 rs, rd;
	int i;

	rand_packet(seed, r->v.family, p);
	if (!r->d && r->key.kind == FB_KIND_FLOW) {
		*p = r->v;
		return;
	}
	if (!r->d) {
		const __u8 *a = r->key.kind == FB_KIND_SRC ? r->key.saddr : r->key.daddr;
		__u8 *b = r->key.kind == FB_KIND_SRC ? p->saddr : p->daddr;

		for (i = 0; i < r->key.plen; i++)
			b[i / 8] = (b[i / 8] & ~(0x80 >> i % 8)) | (a[i / 8] & (0x80 >> i % 8));
		return;
	}
	for (i = 0; i < (int)FB_MASK_SLEN(r->d); i++)
		p->saddr[i / 8] = (p->saddr[i / 8] & ~(0x80 >> i % 8)) |
				  (r->v.saddr[i / 8] & (0x80 >> i % 8));
	for (i = 0; i < (int)FB_MASK_DLEN(r->d); i++)
		p->daddr[i / 8] = (p->daddr[i / 8] & ~(0x80 >> i % 8)) |
				  (r->v.daddr[i / 8] & (0x80 >> i % 8));
	if (FB_MASK_PROTO(r->d))
		p->proto = r->v.proto;
	if (FB_MASK_PORTS(r->d) && !fb_proto_has_ports(p->proto))
		p->proto = 17;
	if (!fb_proto_has_ports(p->proto))
		return;
	rs = ntohs(p->sport);
	rd = ntohs(p->dport);
	if (FB_MASK_SPLEN(r->d)) {
		__u16 m = (__u16)(0xffff0000U >> FB_MASK_SPLEN(r->d));

		rs = (rs & ~m) | (ntohs(r->v.sport) & m);
	}
	if (FB_MASK_DPLEN(r->d)) {
		__u16 m = (__u16)(0xffff0000U >> FB_MASK_DPLEN(r->d));

		rd = (rd & ~m) | (ntohs(r->v.dport) & m);
	}
	p->sport = htons(rs);
	p->dport = htons(rd);
}

/* ------------------------------------------------------ 1. property */

static void property(const char *label, __u8 hash, __u32 nblocks, __u8 confirm, uint64_t seed)
{
	struct fb_create_opts co = { .nblocks = nblocks,
				     .k = 4,
				     .layout = FB_LAYOUT_BLOCKED,
				     .hash = hash,
				     .action = FB_ACTION_DROP,
				     .confirm = confirm,
				     .capacity = confirm ? 100000 : 0 };
	struct fb_load_opts lo = { .trace = true, .private_stats = true };
	struct rule *rules = calloc(NRULES, sizeof(*rules));
	struct fb_key *keys = calloc(NRULES, sizeof(*keys));
	__u32 shapes[8], kind, shape;
	struct flowbloom_bpf *sk = NULL;
	long missed = 0, wrong_shape = 0, outside = 0, matched_out = 0, shape_hits = 0;
	struct fb_stats st;
	struct fb_store f;
	char msg[200];
	size_t bad, i, j;
	double rate;
	unsigned probes;
	int s;

	if (!rules || !keys)
		goto out;
	for (s = 0; s < 8; s++)
		shapes[s] = rand_shape(&seed, s & 1);
	for (i = 0; i < NRULES; i++) {
		struct fb_key p;
		int fam = (int)(test_rand64(&seed) & 1), h = (int)(test_rand64(&seed) % 10);

		rand_packet(&seed, fam, &p);
		if (h == 0) { /* a 5-tuple */
			rules[i].d = 0;
			rules[i].v = p;
			rules[i].key = p;
		} else if (h == 1) { /* a source or destination prefix */
			/* Four lengths per list: the data path's bound is 8. */
			int len = fam ? 32 + 32 * (int)(test_rand64(&seed) % 4)
				      : 96 + 8 + 8 * (int)(test_rand64(&seed) % 4);
			struct fb_key *k = &rules[i].key;

			memset(k, 0, sizeof(*k));
			k->kind = test_rand64(&seed) & 1 ? FB_KIND_SRC : FB_KIND_DST;
			memcpy(k->kind == FB_KIND_SRC ? k->saddr : k->daddr,
			       k->kind == FB_KIND_SRC ? p.saddr : p.daddr, 16);
			for (j = len; j < 128; j++)
				(k->kind == FB_KIND_SRC ? k->saddr : k->daddr)[j / 8] &=
					~(0x80 >> j % 8);
			k->plen = len;
			k->family = fam;
			rules[i].d = 0;
			rules[i].v = p;
		} else {
			__u32 d;

			do
				d = shapes[test_rand64(&seed) % 8];
			while ((int)FB_MASK_FAMILY(d) != fam);
			if (FB_MASK_PORTS(d) && !fb_proto_has_ports(p.proto))
				p.proto = 6;
			make_rule(&rules[i], d, &p);
		}
		keys[i] = rules[i].key;
	}
	snprintf(msg, sizeof(msg), "%s: create the filter", label);
	if (!ASSERT_EQ(fb_store_create("prop", &co), 0, msg))
		goto out;
	if (fb_store_open("prop", &f))
		goto destroy;
	fb_store_lock(&f);
	snprintf(msg, sizeof(msg), "%s: add %d rules of mixed shapes", label, NRULES);
	ASSERT_EQ(fb_rules_add(&f, keys, NRULES, &bad), 0, msg);
	fb_store_unlock(&f);
	sk = fb_load(&f, &lo);
	snprintf(msg, sizeof(msg), "%s: load the program", label);
	if (!ASSERT_TRUE(sk != NULL, msg))
		goto close;
	for (i = 0; i < NRULES; i++) {
		struct fb_key p;
		int v;

		covered_packet(&seed, &rules[i], &p);
		if (!covers(&rules[i], &p)) {
			wrong_shape++; /* the generator's fault: counted below */
			continue;
		}
		v = send_key(sk, &p, &kind, &shape);
		missed += v != XDP_DROP;
		shape_hits += kind == FB_KIND_MASK;
	}
	snprintf(msg, sizeof(msg), "%s: the generator's packets are covered (reference)", label);
	ASSERT_EQ(wrong_shape, 0, msg);
	snprintf(msg, sizeof(msg), "%s: every packet a rule covers is dropped (%d rules)", label,
		 NRULES);
	ASSERT_EQ(missed, 0, msg);
	for (i = 0; i < NOUT; i++) {
		struct fb_key p;
		int in = 0, v;

		rand_packet(&seed, (int)(i & 1), &p);
		for (j = 0; j < NRULES && !in; j++)
			in = covers(&rules[j], &p);
		if (in)
			continue;
		outside++;
		v = send_key(sk, &p, &kind, &shape);
		shape_hits += kind == FB_KIND_MASK;
		if (v == XDP_DROP) {
			matched_out++;
			if (getenv("SHAPES_DEBUG") && matched_out < 6) {
				char t[200], n[100];

				fb_flow_format(&p, t, sizeof(t));
				fb_mask_name(shape, n, sizeof(n));
				printf("outside match: %s kind %u shape %s\n", t, kind, n);
			}
		}
	}
	/* One statistics cell per packet outcome: kind 4 (a shape) is
	 * hit_shape. */
	snprintf(msg, sizeof(msg), "%s: the statistics count the %ld packets a shape matched",
		 label, shape_hits);
	ASSERT_TRUE(!fb_stats_read_fd(bpf_map__fd(sk->maps.fb_stats), "prop", &st) &&
			    shape_hits > 0 && st.c[FB_STAT_HIT_MASK].packets == (__u64)shape_hits,
		    msg);
	probes = fb_probes_per_packet(f.hdr->kinds, (const struct fb_prefixes *)&f.blocks[1]);
	rate = fb_packet_rate(fb_fpr(f.hdr->layout, f.hdr->nflows, f.hdr->nblocks, f.hdr->k),
			      probes);
	if (confirm) {
		snprintf(msg, sizeof(msg),
			 "%s: the Bloom probe alone would say maybe for %.0f%% of outside packets",
			 label, rate * 100);
		ASSERT_TRUE(rate > 0.05, msg);
		rate = 0;
	}
	snprintf(msg, sizeof(msg),
		 "%s: %ld of %ld packets outside every rule match (want <= 3 x %.2g + 3)", label,
		 matched_out, outside, rate);
	ASSERT_TRUE(outside > NOUT / 4 && matched_out <= 3 * rate * outside + 3, msg);
close:
	if (sk)
		flowbloom_bpf__destroy(sk);
	fb_store_close(&f);
destroy:
	fb_store_destroy("prop");
out:
	free(rules);
	free(keys);
}

/* ------------------------------------------- 2-4. ports, families, bound */

static int add_text(struct fb_store *f, const char *text)
{
	struct fb_key keys[FB_RULE_KEYS_MAX];
	char buf[256], err[256], *w[FB_FLOW_WORDS], *save = NULL, *t;
	size_t n, bad;
	int nw = 0, rc;

	snprintf(buf, sizeof(buf), "%s", text);
	for (t = strtok_r(buf, " ", &save); t && nw < FB_FLOW_WORDS; t = strtok_r(NULL, " ", &save))
		w[nw++] = t;
	if (fb_flow_parse_keys(nw, w, keys, &n, err, sizeof(err)) != nw)
		return -100;
	fb_store_lock(f);
	rc = fb_rules_add(f, keys, n, &bad);
	fb_store_unlock(f);
	return rc;
}

static struct fb_key pkt4(__u8 proto, const char *src, int sport, const char *dst, int dport)
{
	struct fb_key k = { .proto = proto, .kind = FB_KIND_FLOW };

	k.saddr[10] = k.saddr[11] = k.daddr[10] = k.daddr[11] = 0xff;
	inet_pton(AF_INET, src, k.saddr + 12);
	inet_pton(AF_INET, dst, k.daddr + 12);
	k.sport = htons(sport);
	k.dport = htons(dport);
	return k;
}

static void edges(void)
{
	struct fb_create_opts co = { .nblocks = 16384,
				     .k = 8,
				     .layout = FB_LAYOUT_BLOCKED,
				     .hash = FB_HASH_NHK,
				     .action = FB_ACTION_DROP };
	struct fb_load_opts lo = { .trace = true, .private_stats = true };
	struct fb_load_opts lp = { .trace = true,
				   .private_stats = true,
				   .malformed = FB_MALFORMED_PASS };
	struct flowbloom_bpf *sk = NULL, *sp = NULL;
	struct fb_key p, v6;
	__u8 frame[128];
	__u32 kind, shape;
	struct fb_store f;
	size_t len;
	__u64 flows;
	__u32 kinds;
	struct fb_prefixes before;
	int prog, trace, i;
	static const char *const eight[] = {
		"any src 198.51.100.0/24 dst 203.0.113.0/24",
		"udp dst 203.0.113.0/24 dport 53",
		"udp dport 7", /* two shapes: both families */
		"tcp dst 203.0.113.0/25 sport 1024-2047",
		"proto 47 src 198.51.100.0/26",
		"any dst 203.0.113.9 dport 0",
		"icmp dst 203.0.113.0/27",
	};

	if (!ASSERT_EQ(fb_store_create("edges", &co), 0, "edges: create a 1 MiB filter"))
		return;
	if (fb_store_open("edges", &f))
		goto destroy;
	for (i = 0; i < 7; i++) {
		char msg[160];

		snprintf(msg, sizeof(msg), "edges: add '%s'", eight[i]);
		ASSERT_EQ(add_text(&f, eight[i]), 0, msg);
	}
	{
		__u32 d[FB_MAX_MASKS];

		ASSERT_EQ(fb_rules_masks((struct fb_prefixes *)&f.blocks[1], d), FB_MAX_MASKS,
			  "bound: seven rules, eight shapes (one rule is two: no address)");
	}
	before = *(struct fb_prefixes *)&f.blocks[1];
	flows = f.hdr->nflows;
	kinds = f.hdr->kinds;
	ASSERT_EQ(add_text(&f, "udp src 198.51.100.0/24 dport 9"), -4,
		  "bound: a ninth shape is refused");
	ASSERT_TRUE(!memcmp(&before, &f.blocks[1], sizeof(before)) && flows == f.hdr->nflows &&
			    kinds == f.hdr->kinds,
		    "bound: nothing of the refused rule was added");
	ASSERT_EQ(add_text(&f, "udp dst 203.0.113.0/24 dport 54"), 0,
		  "bound: a rule of a shape the filter has is added");

	sk = fb_load(&f, &lo);
	sp = fb_load(&f, &lp);
	if (!ASSERT_TRUE(sk && sp, "edges: load the programs"))
		goto close;
	prog = bpf_program__fd(sk->progs.flowbloom);
	trace = bpf_map__fd(sk->maps.fb_trace);

	p = pkt4(17, "203.0.113.250", 999, "203.0.113.77", 53);
	ASSERT_EQ(send_key(sk, &p, &kind, &shape), XDP_DROP, "ports: udp to a /24 port 53 drops");
	ASSERT_TRUE(kind == FB_KIND_MASK && shape == fb_mask_desc(0, 120, 0, 16, 1, 0),
		    "ports: explained as the shape ipv4 proto dst/24 dport/16");
	/* The same packet as a non-first fragment: no ports, no match. */
	len = test_build_frame(&p, frame);
	frame[14 + 6] = 0x00;
	frame[14 + 7] = 0x10;
	ASSERT_EQ(run(prog, trace, frame, len, &kind, &shape), XDP_PASS,
		  "ports: its non-first fragment (no ports) passes");
	/* Cut inside the UDP header before its ports end: malformed, ports
	 * unread. */
	len = test_build_frame(&p, frame);
	ASSERT_EQ(run(prog, trace, frame, 14 + 20 + 3, &kind, &shape), XDP_DROP,
		  "ports: its malformed copy gets the malformed verdict (drop)");
	ASSERT_EQ(kind, 0, "ports: no rule decided the malformed packet");
	ASSERT_EQ(run(bpf_program__fd(sp->progs.flowbloom), bpf_map__fd(sp->maps.fb_trace), frame,
		      14 + 20 + 3, &kind, &shape),
		  XDP_PASS, "ports: with --malformed pass it passes (the port rule cannot see it)");
	/* Cut after its ports (a tiny first fragment): malformed, but the
	 * port rule sees it, --malformed pass or not. */
	ASSERT_EQ(run(bpf_program__fd(sp->progs.flowbloom), bpf_map__fd(sp->maps.fb_trace), frame,
		      14 + 20 + 4, &kind, &shape),
		  XDP_DROP, "ports: cut after its ports, the port rule decides (--malformed pass)");
	ASSERT_EQ(kind, FB_KIND_MASK, "ports: ... the shape decided it");
	/* A shape of addresses alone decides a malformed packet. */
	p = pkt4(17, "198.51.100.9", 999, "203.0.113.200", 4000);
	len = test_build_frame(&p, frame);
	ASSERT_EQ(run(bpf_program__fd(sp->progs.flowbloom), bpf_map__fd(sp->maps.fb_trace), frame,
		      14 + 20 + 4, &kind, &shape),
		  XDP_DROP, "addresses: a malformed packet meets the src+dst shape (drop)");
	ASSERT_EQ(kind, FB_KIND_MASK, "addresses: the shape decided it");
	/* `any dst 203.0.113.9 dport 0`: a UDP packet to port 0 drops, ICMP
	 * (whose key has port 0) passes. */
	p = pkt4(17, "203.0.113.250", 5, "203.0.113.9", 0);
	ASSERT_EQ(send_key(sk, &p, &kind, &shape), XDP_DROP, "ports: udp to port 0 drops");
	/* Its non-first fragments and malformed copies have port 0 in the
	 * key: still no match (the ports are unknown, not 0). */
	len = test_build_frame(&p, frame);
	frame[14 + 6] = 0x00;
	frame[14 + 7] = 0x10;
	ASSERT_EQ(run(prog, trace, frame, len, &kind, &shape), XDP_PASS,
		  "ports: a non-first fragment to 203.0.113.9 (key port 0) passes");
	len = test_build_frame(&p, frame);
	ASSERT_EQ(run(bpf_program__fd(sp->progs.flowbloom), bpf_map__fd(sp->maps.fb_trace), frame,
		      14 + 20 + 3, &kind, &shape),
		  XDP_PASS,
		  "ports: a malformed packet to 203.0.113.9 (key port 0) meets no port rule");
	ASSERT_EQ(run(bpf_program__fd(sp->progs.flowbloom), bpf_map__fd(sp->maps.fb_trace), frame,
		      14 + 20 + 4, &kind, &shape),
		  XDP_DROP, "ports: ... unless its ports are in: port 0 read, the rule decides");
	p = pkt4(47, "203.0.113.250", 0, "203.0.113.9", 0);
	ASSERT_EQ(send_key(sk, &p, &kind, &shape), XDP_PASS,
		  "ports: gre (no ports) never meets a port rule");
	p = pkt4(1, "203.0.113.250", 0, "203.0.113.20", 0);
	ASSERT_EQ(send_key(sk, &p, &kind, &shape), XDP_DROP, "proto: icmp to the /27 drops");
	p.proto = 17;
	ASSERT_EQ(send_key(sk, &p, &kind, &shape), XDP_PASS, "proto: udp to the /27 passes");
	/* Port prefixes: 1024-2047 as one /6. */
	p = pkt4(6, "203.0.113.250", 2047, "203.0.113.100", 80);
	ASSERT_EQ(send_key(sk, &p, &kind, &shape), XDP_DROP, "range: sport 2047 drops");
	p.sport = htons(2048);
	ASSERT_EQ(send_key(sk, &p, &kind, &shape), XDP_PASS, "range: sport 2048 passes");
	p.sport = htons(1023);
	ASSERT_EQ(send_key(sk, &p, &kind, &shape), XDP_PASS, "range: sport 1023 passes");
	/* Families: `udp dport 7` has no address: both; the src+dst shape is IPv4 only. */
	p = pkt4(17, "203.0.113.250", 5, "203.0.113.251", 7);
	ASSERT_EQ(send_key(sk, &p, &kind, &shape), XDP_DROP, "families: IPv4 udp port 7 drops");
	memset(&v6, 0, sizeof(v6));
	v6.family = FB_FAMILY_IPV6;
	v6.kind = FB_KIND_FLOW;
	v6.proto = 17;
	inet_pton(AF_INET6, "2001:db8::1", v6.saddr);
	inet_pton(AF_INET6, "2001:db8::2", v6.daddr);
	v6.dport = htons(7);
	ASSERT_EQ(send_key(sk, &v6, &kind, &shape), XDP_DROP, "families: IPv6 udp port 7 drops");
	ASSERT_TRUE(shape == fb_mask_desc(0, 0, 0, 16, 1, 1), "families: by the IPv6 shape");
	v6.dport = htons(53);
	inet_pton(AF_INET6, "::ffff:203.0.113.77", v6.daddr);
	ASSERT_EQ(send_key(sk, &v6, &kind, &shape), XDP_PASS,
		  "families: an IPv6 packet to ::ffff:203.0.113.77 port 53 meets no IPv4 shape");
close:
	if (sk)
		flowbloom_bpf__destroy(sk);
	if (sp)
		flowbloom_bpf__destroy(sp);
	fb_store_close(&f);
destroy:
	fb_store_destroy("edges");
}

/* ------------------------------------ 5. fragments after an extension */

/* An IPv6 UDP datagram from 2001:db8::1 to 2001:db8::DST (40000 -> 53)
 * whose fragmentable part starts with extension header ext: its first
 * fragment (ext, UDP, 8 bytes of data) or its last (later). */
static size_t frag_ext(__u8 *frame, int dst, __u8 ext, int later)
{
	__u8 s[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, d[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	struct pkt p;

	d[15] = dst;
	pkt_init(&p);
	pkt_eth(&p, ETH_P_IPV6);
	pkt_ipv6(&p, IPPROTO_FRAGMENT, s, d);
	/* The later one's offset: the first's data, in bytes (AH: 16). */
	pkt_frag6(&p, ext, later ? (ext == IPPROTO_AH ? 32 : 24) : 1);
	if (!later) {
		pkt_ext6(&p, ext, IPPROTO_UDP, ext == IPPROTO_AH ? 2 : 0);
		pkt_l4(&p, IPPROTO_UDP, htons(40000), htons(53));
	}
	pkt_payload(&p, 8);
	pkt_finish(&p);
	memcpy(frame, p.d, p.len);
	return p.len;
}

static void ext_fragments(void)
{
	struct fb_create_opts co = {
		.nblocks = 1024, .k = 8, .layout = FB_LAYOUT_BLOCKED, .hash = FB_HASH_NHK
	};
	struct fb_load_opts lo[2] = {
		{ .action = FB_ACTION_DROP, .trace = true, .private_stats = true },
		{ .action = FB_ACTION_ALLOW, .trace = true, .private_stats = true },
	};
	static const char *const rules[] = { "udp dst 2001:db8::7", "dst 2001:db8::9" };
	/* dst, later, allow: the verdict and the kind that decides. */
	static const struct {
		int dst, later, allow, verdict, kind;
		const char *what;
	} cases[] = {
		{ 7, 0, 0, XDP_DROP, FB_KIND_MASK, "drop, udp dst ::7: the first fragment drops" },
		{ 7, 1, 0, XDP_PASS, 0, "drop, udp dst ::7: a later one passes (no reassembly)" },
		{ 7, 0, 1, XDP_PASS, FB_KIND_MASK,
		  "allow, udp dst ::7: the first fragment passes" },
		{ 7, 1, 1, XDP_DROP, 0,
		  "allow, udp dst ::7: a later one (protocol unknown) drops" },
		{ 9, 1, 1, XDP_PASS, FB_KIND_DST, "allow, dst ::9: a later one passes" },
	};
	static const __u8 exts[] = { IPPROTO_DSTOPTS, IPPROTO_AH };
	struct flowbloom_bpf *sk[2] = { NULL, NULL };
	struct fb_store f;
	__u8 frame[128];
	__u32 kind, shape;
	char msg[200];
	size_t i, j, len;
	int v;

	if (!ASSERT_EQ(fb_store_create("fragext", &co), 0, "fragments: create"))
		return;
	if (fb_store_open("fragext", &f))
		goto destroy;
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		snprintf(msg, sizeof(msg), "fragments: add '%s'", rules[i]);
		ASSERT_EQ(add_text(&f, rules[i]), 0, msg);
	}
	sk[0] = fb_load(&f, &lo[0]);
	sk[1] = fb_load(&f, &lo[1]);
	if (!ASSERT_TRUE(sk[0] && sk[1], "fragments: load the programs"))
		goto close;
	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		for (j = 0; j < sizeof(cases) / sizeof(cases[0]); j++) {
			struct flowbloom_bpf *s = sk[cases[j].allow];

			len = frag_ext(frame, cases[j].dst, exts[i], cases[j].later);
			v = run(bpf_program__fd(s->progs.flowbloom), bpf_map__fd(s->maps.fb_trace),
				frame, len, &kind, &shape);
			snprintf(msg, sizeof(msg), "fragments after %s: %s (verdict %d, kind %u)",
				 exts[i] == IPPROTO_AH ? "AH" : "dstopts", cases[j].what, v, kind);
			ASSERT_TRUE(v == cases[j].verdict && kind == (__u32)cases[j].kind, msg);
		}
close:
	for (i = 0; i < 2; i++)
		if (sk[i])
			flowbloom_bpf__destroy(sk[i]);
	fb_store_close(&f);
destroy:
	fb_store_destroy("fragext");
}

int main(void)
{
	char root[128];

	test_private_root("shapes", root, sizeof(root));
	fb_libbpf_logging(false);
	signal(SIGPIPE, SIG_IGN);

	property("nh, 1 MiB", FB_HASH_NHK, 16384, 0, 0x19);
	property("siphash-1-3, 1 MiB", FB_HASH_SIPHASH13, 16384, 0, 0x1999);
	property("confirm exact, 1 KiB", FB_HASH_NHK, 16, 1, 0x2003);
	edges();
	ext_fragments();

	ASSERT_EQ(runs_failed, 0, "every test_run succeeded");
	ASSERT_TRUE(access(root, F_OK) != 0, "nothing left under FLOWBLOOM_ROOT");
	return test_summary();
}
