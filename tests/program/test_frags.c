// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_frags: the real XDP program loaded multi-buffer (cfg_frags = 1,
 * BPF_F_XDP_HAS_FRAGS), as `attach` loads it on a device whose MTU exceeds
 * a page and as `replay` always does, through BPF_PROG_TEST_RUN on
 * test_verdict's table (verdict_*.c). test_run puts what a frame has past
 * its first buffer (a page less head- and tailroom: 3,520 bytes on
 * x86_64, as a veth has) into further pages; since Linux 6.18 the
 * context's data_end sets the first buffer's length, so a frame's headers
 * can be made to end anywhere, as a NIC that splits headers from data may
 * deliver them.
 *
 * Each row runs, against a filter of the row's rules, under every action
 * and malformed policy:
 * - as it is (one buffer): the verdicts test_verdict checks for the
 *   program of one buffer;
 * - padded to a jumbo frame (9,014 bytes; and 3,521, one byte in the
 *   second buffer), its IP length raised to match: the same verdict, the
 *   counters counting the whole frame; a malformed row with its bytes in
 *   the first buffer and the padding after: malformed and longer than its
 *   first buffer, so dropped under drop and allow even with --malformed
 *   pass (docs/cli.md, Malformed packets);
 * - padded, its first buffer ending at every byte of its headers: cut
 *   there, it is malformed, matched on what was read (addresses, then
 *   ports), and what no rule decides is dropped under drop and allow
 *   whatever --malformed says: its ports may be in the next buffer;
 * - cut short (a truncated frame, one buffer): as the program of one
 *   buffer reads it.
 * Then the frames a filter must not be evaded by: a blocked IPv6 5-tuple
 * behind extension headers of 4 KB, whose UDP header lies in the second
 * buffer, and the same chain short enough for the first.
 *
 * Filters live under /sys/fs/bpf/fbtest_frags_<pid>, destroyed at the end.
 */
#include "verdict.h"

#define JUMBO (9000 + 14) /* MTU 9000 and an Ethernet header */
#define FIRST_MAX 3520	  /* test_run's first buffer: 4096 - 256 - 320 */

/* Filter contents: the rules, the kind that matches a row that parses,
 * and one that is malformed with its addresses read. */
static const struct mode {
	const char *name;
	int rules;
	int hit, addr_hit;
} modes[] = {
	{ "empty", 0, 0, 0 },
	{ "flow", R_FLOW, FB_KIND_FLOW, 0 },
	{ "src", R_SRC, FB_KIND_SRC, FB_KIND_SRC },
	{ "dst", R_DST, FB_KIND_DST, FB_KIND_DST },
	{ "reverse flow+src+dst", R_RFLOW | R_RSRC | R_RDST, 0, 0 },
	{ "flow+src+dst", R_FLOW | R_SRC | R_DST, FB_KIND_FLOW, FB_KIND_SRC },
};

#define NMODES (sizeof(modes) / sizeof(modes[0]))

static __u8 big[JUMBO];

/* The row's frame padded to len bytes (payload); with raise, its IP
 * length raised by the padding unless 0 (the frame's length: BIG TCP, a
 * jumbogram). A malformed row keeps its lengths: a bad one stays bad. */
static size_t jumbo(const struct pkt *p, size_t len, bool raise)
{
	size_t pad = len - p->len;
	__u8 *ip = big + p->l3;

	memcpy(big, p->d, p->len);
	memset(big + p->len, 'j', pad);
	if (!raise || p->l3 < 0 || (size_t)p->l3 + 6 > p->len)
		return len;
	if (p->v6 && (ip[4] | ip[5])) {
		pkt_wr16(ip + 4, ((ip[4] << 8) | ip[5]) + pad);
	} else if (!p->v6 && (ip[0] >> 4) == 4 && (ip[2] | ip[3])) {
		__u32 sum = 0;
		size_t i, n = (ip[0] & 15) * 4u;

		pkt_wr16(ip + 2, ((ip[2] << 8) | ip[3]) + pad);
		ip[10] = ip[11] = 0;
		for (i = 0; i + 1 < n && (size_t)p->l3 + i + 1 < p->len; i += 2)
			sum += (ip[i] << 8) | ip[i + 1];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		pkt_wr16(ip + 10, ~sum & 0xffff);
	}
	return len;
}

/* What the program must make of the row's frame when it reads only its
 * first cut bytes: all of them (the whole frame in its first buffer), or
 * fewer (its headers run on into a later buffer, more; or the frame is
 * cut there). rules: the filter's (R_*). */
static void expect_cut(const struct row *r, const struct pkt *p, size_t cut, bool more, int rules,
		       struct expect *e)
{
	int hit = rules & R_FLOW  ? FB_KIND_FLOW
		  : rules & R_SRC ? FB_KIND_SRC
		  : rules & R_DST ? FB_KIND_DST
				  : 0;

	memset(e, 0, sizeof(*e));
	row_key(r, &e->key);
	e->parse = cut < p->need ? FB_PARSE_MALFORMED : r->parse;
	e->frag = e->parse == FB_PARSE_OK ? r->frag : 0;
	e->addrs = e->parse == FB_PARSE_MALFORMED && addrs_read(r, p, cut);
	/* A malformed row's ports are never read; a well-formed one cut
	 * after its transport header's first four bytes has them. */
	e->ports = e->addrs && r->parse != FB_PARSE_MALFORMED && !r->frag && p->l4 >= 0 &&
		   fb_proto_has_ports(r->proto) && cut >= (size_t)p->l4 + 4;
	if (e->parse == FB_PARSE_OK)
		e->kind = parsed_hit(r, rules, hit);
	else if (e->ports && (rules & R_FLOW))
		e->kind = FB_KIND_FLOW;
	else if (e->addrs)
		e->kind = rules & R_SRC ? FB_KIND_SRC : rules & R_DST ? FB_KIND_DST : 0;
	/* Dropped under drop and allow whatever --malformed says: malformed
	 * and longer than its first buffer, or a first fragment cut before
	 * its ports (past the header that makes it one). */
	e->split = e->parse == FB_PARSE_MALFORMED &&
		   (more || (first_fragment(r) && cut >= first_known(r, p) && !e->ports));
}

/* Every row as it is, and padded to a jumbo frame (the row's bytes in the
 * first buffer for a malformed one, whose padding could otherwise complete
 * a header cut short), against every filter content and setting. */
static void run_table(const char *layout, struct fb_store *f, struct flowbloom_bpf **skel)
{
	static const size_t sizes[] = { 0, FIRST_MAX + 1, JUMBO };
	char base[320];
	size_t i, c, m, z;

	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		struct expect e;
		struct pkt p;

		pkt_init(&p);
		r->build(&p, r->a, r->b);
		for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
			size_t len = sizes[z] ? jumbo(&p, sizes[z], r->parse != FB_PARSE_MALFORMED)
					      : p.len,
			       lin = 0;
			const __u8 *d = sizes[z] ? big : p.d;

			if (sizes[z] && r->parse == FB_PARSE_MALFORMED)
				lin = p.len;
			for (m = 0; m < NMODES; m++) {
				expect_cut(r, &p, p.len, sizes[z] != 0, modes[m].rules, &e);
				fill_filter(f, &e.key, modes[m].rules);
				/* As test_verdict's table: a malformed row meets
				 * address rules only. */
				if (r->parse == FB_PARSE_MALFORMED)
					e.kind = e.addrs ? modes[m].addr_hit : 0;
				for (c = 0; c < NCFG; c++) {
					snprintf(base, sizeof(base),
						 "%s %s filter=%s: %s (%zu B%s)", layout,
						 cfgs[c].name, modes[m].name, r->name, len,
						 lin ? ", its own bytes in the first buffer" : "");
					check_run_lin(base, skel[c], &cfgs[c], d, len, lin, &e);
				}
			}
		}
	}
}

/* Every row that is not malformed, padded to a jumbo frame whose first
 * buffer ends at each byte of its headers (and a few past them), and cut
 * short there instead (one buffer), against its 5-tuple alone and its
 * 5-tuple and source. */
static void run_cuts(const char *layout, struct fb_store *f, struct flowbloom_bpf **skel)
{
	static const int rule_sets[] = { R_FLOW, R_FLOW | R_SRC };
	char base[320];
	size_t i, c, s, cut;

	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		struct expect e;
		struct pkt p;

		if (r->parse == FB_PARSE_MALFORMED)
			continue;
		pkt_init(&p);
		r->build(&p, r->a, r->b);
		jumbo(&p, JUMBO, true);
		for (s = 0; s < sizeof(rule_sets) / sizeof(rule_sets[0]); s++) {
			row_key(r, &e.key);
			fill_filter(f, &e.key, rule_sets[s]);
			for (cut = 14; cut <= p.need + 4 && cut < p.len; cut++) {
				for (c = 0; c < NCFG; c++) {
					expect_cut(r, &p, cut, true, rule_sets[s], &e);
					snprintf(base, sizeof(base),
						 "%s %s %s first buffer %zu of %d B: %s", layout,
						 cfgs[c].name, s ? "5-tuple+src" : "5-tuple", cut,
						 JUMBO, r->name);
					check_run_lin(base, skel[c], &cfgs[c], big, JUMBO, cut, &e);
					expect_cut(r, &p, cut, false, rule_sets[s], &e);
					snprintf(base, sizeof(base), "%s %s %s cut %zu/%zu: %s",
						 layout, cfgs[c].name,
						 s ? "5-tuple+src" : "5-tuple", cut, p.len,
						 r->name);
					check_run(base, skel[c], &cfgs[c], p.d, cut, &e);
				}
			}
		}
	}
}

/* An IPv6 UDP datagram of the table's 5-tuple behind two destination
 * options headers of (hlen + 1) * 8 bytes each (Pad1 options, which the
 * stack skips), in a frame of len bytes; returns its UDP header's offset. */
static size_t chain_frame(__u8 hlen, size_t len)
{
	size_t off = 14 + 40, ext = ((size_t)hlen + 1) * 8, i;
	__u8 *q = big;

	memset(big, 'j', len);
	memset(q, 0, 12);
	pkt_wr16(q + 12, ETH_IP6);
	q += 14;
	pkt_wr32(q, 6u << 28);
	pkt_wr16(q + 4, len - off);
	q[6] = X_DST;
	q[7] = 64;
	memcpy(q + 8, V6_SRC, 16);
	memcpy(q + 24, V6_DST, 16);
	for (i = 0; i < 2; i++, off += ext) {
		memset(big + off, 0, ext);
		big[off] = i ? P_UDP : X_DST;
		big[off + 1] = hlen;
	}
	pkt_wr16(big + off, UDP_SP);
	pkt_wr16(big + off + 2, UDP_DP);
	pkt_wr16(big + off + 4, len - off);
	pkt_wr16(big + off + 6, 0);
	return off;
}

/* A blocked 5-tuple behind 4 KB of extension headers: its UDP header is
 * in the second buffer, where the parser cannot read it. Malformed, its
 * addresses read: dropped under drop and allow even with --malformed pass
 * (which let it through before the multi-buffer rule), passed under
 * monitor; a source rule still matches. Behind 2 KB, in the first
 * buffer, it parses and meets its 5-tuple. */
static void check_chains(const char *layout, struct fb_store *f, struct flowbloom_bpf **skel)
{
	static const struct row v6udp = {
		.v6 = 1, .proto = P_UDP, .sport = UDP_SP, .dport = UDP_DP
	};
	struct expect e;
	char base[320];
	size_t c, len, l4;
	int rules;

	for (rules = R_FLOW; rules <= (R_FLOW | R_SRC); rules += R_SRC) {
		/* 14 + 40 + 4,096 + 8 + 16 bytes; and the frame of MTU 9000. */
		for (len = 4174; len <= JUMBO; len += JUMBO - 4174) {
			l4 = chain_frame(255, len);
			memset(&e, 0, sizeof(e));
			row_key(&v6udp, &e.key);
			fill_filter(f, &e.key, rules);
			e.parse = FB_PARSE_MALFORMED;
			e.addrs = 1;
			e.split = 1;
			e.kind = rules & R_SRC ? FB_KIND_SRC : 0;
			for (c = 0; c < NCFG; c++) {
				snprintf(base, sizeof(base),
					 "%s %s %s: IPv6 UDP behind 2 x 2048 B of destination "
					 "options, UDP at %zu of %zu B",
					 layout, cfgs[c].name,
					 rules & R_SRC ? "5-tuple+src" : "5-tuple", l4, len);
				check_run(base, skel[c], &cfgs[c], big, len, &e);
			}
		}
		l4 = chain_frame(127, JUMBO);
		e.parse = FB_PARSE_OK;
		e.addrs = 0;
		e.split = 0;
		e.kind = FB_KIND_FLOW;
		for (c = 0; c < NCFG; c++) {
			snprintf(base, sizeof(base),
				 "%s %s %s: IPv6 UDP behind 2 x 1024 B of destination options, UDP "
				 "at %zu of %d B",
				 layout, cfgs[c].name, rules & R_SRC ? "5-tuple+src" : "5-tuple",
				 l4, JUMBO);
			check_run(base, skel[c], &cfgs[c], big, JUMBO, &e);
		}
	}
}

static void run_layout(const char *name, __u8 layout, __u8 hash)
{
	struct flowbloom_bpf *skel[NCFG];
	struct fb_store f;

	if (rig_up(name, layout, hash, cfgs, NCFG, true, &f, skel)) {
		run_table(name, &f, skel);
		run_cuts(name, &f, skel);
		check_chains(name, &f, skel);
	}
	rig_down(name, &f, skel, NCFG);
}

int main(void)
{
	char root[128];

	test_private_root("frags", root, sizeof(root));
	fb_libbpf_logging(false);

	/* NH and the blocked layout: the data path's inlined loop; SipHash
	 * and the classic layout: the global probe function. */
	run_layout("frags-blocked-nh", FB_LAYOUT_BLOCKED, FB_HASH_NHK);
	run_layout("frags-classic", FB_LAYOUT_CLASSIC, FB_HASH_SIPHASH13);

	ASSERT_EQ(aborted_runs, 0, "no frame ever got XDP_ABORTED");
	ASSERT_TRUE(access(root, F_OK) != 0, "nothing left under FLOWBLOOM_ROOT");
	return test_summary();
}
