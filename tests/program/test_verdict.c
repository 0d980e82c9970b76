// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_verdict: the real XDP program, run through BPF_PROG_TEST_RUN on
 * hand-built frames. A katran-style table of rows {description, frame
 * builder, expected parse outcome and flow key} covers IPv4 (options up to
 * IHL 15, first and non-first fragments, every upper layer we take ports
 * from and some we do not), IPv6 (extension header chains up to the limit of
 * 8 and past it, fragment headers), VLAN tags (one, two, one too many),
 * non-IP ethertypes and malformed IPv4/IPv6 headers.
 *
 * Every row runs against a blocked and a classic filter holding nothing, the
 * row's 5-tuple, its source, its destination, rules of the reverse direction
 * only, or several kinds at once; under each action (drop, allow, monitor)
 * with the default malformed policy, with malformed packets dropped or
 * passed explicitly, and under the filter's default action with the trace
 * record on. A malformed frame whose fixed IP header is complete is still
 * matched on its addresses (source and destination rules); what no rule
 * decides gets the malformed verdict (default: drop, pass under monitor).
 * Each run checks the verdict (never XDP_ABORTED), the per-CPU counter
 * deltas (packets and bytes, every slot) and, when traced, the parse
 * outcome, fragment flag, matched kind and the flow key the program
 * extracted (for malformed frames, its addresses and family). Every frame
 * that parses is then cut short, against its 5-tuple and source rules:
 * below 14 bytes test_run refuses it (EINVAL), every cut inside a header is
 * malformed (and still matches its source once the addresses are in), cuts
 * in the payload change nothing. Last, the shared stats map (private_stats
 * = false), a program loaded without a filter (fail open), and destroy
 * waiting out a program another process holds for a moment.
 *
 * Filters live under /sys/fs/bpf/fbtest_verdict_<pid> (bpffs refuses names
 * with dots) and are destroyed at the end, failures or not.
 */
#include <sys/wait.h>
#include "verdict.h"

/* Filter contents each row is run against, the kind that should match a
 * frame that parses (the program probes flow, then src, then dst), and the
 * kind that should match a malformed frame whose addresses were read (no
 * 5-tuple: its ports may be missing). */
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
	{ "src+dst", R_SRC | R_DST, FB_KIND_SRC, FB_KIND_SRC },
	{ "flow+src+dst", R_FLOW | R_SRC | R_DST, FB_KIND_FLOW, FB_KIND_SRC },
	{ "reverse flow, src", R_RFLOW | R_SRC, FB_KIND_SRC, FB_KIND_SRC },
	{ "reverse flow+src, dst", R_RFLOW | R_RSRC | R_DST, FB_KIND_DST, FB_KIND_DST },
};

#define NMODES (sizeof(modes) / sizeof(modes[0]))

/* ---------------------------------------------------------------- main */

/* Flows of the plain rows, for checks outside the table. */
static const struct row udp4 = { .v6 = 0, .proto = P_UDP, .sport = UDP_SP, .dport = UDP_DP };
static const struct row tcp6 = { .v6 = 1, .proto = P_TCP, .sport = TCP_SP, .dport = TCP_DP };

/* The keys this test puts in filters are the ones `flowbloom add` builds. */
static void check_key_syntax(void)
{
	char *flow4[] = { "udp", "198.51.100.1:40000", "203.0.113.7:53" };
	char *flow6[] = { "tcp", "[2001:db8::1]:51000", "[2001:db8:0:1::2]:443" };
	char *src4[] = { "src", "198.51.100.1" }, *dst6[] = { "dst", "2001:db8:0:1::2" };
	struct fb_key got, want, v4;
	char err[128];

	row_key(&udp4, &want);
	ASSERT_EQ(fb_flow_parse(3, flow4, &got, err, sizeof(err)), 3, "parse udp flow text");
	ASSERT_TRUE(!memcmp(&got, &want, sizeof(got)), "IPv4 5-tuple key as `add` builds it");
	row_key(&tcp6, &want);
	ASSERT_EQ(fb_flow_parse(3, flow6, &got, err, sizeof(err)), 3, "parse tcp flow text");
	ASSERT_TRUE(!memcmp(&got, &want, sizeof(got)), "IPv6 5-tuple key as `add` builds it");
	row_key(&udp4, &v4);
	addr_key(&want, FB_KIND_SRC, v4.saddr, FB_FAMILY_IPV4);
	ASSERT_EQ(fb_flow_parse(2, src4, &got, err, sizeof(err)), 2, "parse src rule text");
	ASSERT_TRUE(!memcmp(&got, &want, sizeof(got)), "src key as `add` builds it");
	addr_key(&want, FB_KIND_DST, V6_DST, FB_FAMILY_IPV6);
	ASSERT_EQ(fb_flow_parse(2, dst6, &got, err, sizeof(err)), 2, "parse dst rule text");
	ASSERT_TRUE(!memcmp(&got, &want, sizeof(got)), "dst key as `add` builds it");
}

/* Run the frame cut at len; with iplen (IPv6), the whole frame, its
 * payload length ending at len instead: the rest is padding the kernel
 * trims, where an attacker can write a made-up rest of the header chain
 * and harmless ports. It must parse as the frame cut there. (IPv4 is
 * bounded by its frame alone: bpf/parsing.bpf.h says why.) */
static void check_cut(const char *base, struct flowbloom_bpf *s, const struct cfg *c,
		      const struct pkt *p, size_t len, bool iplen, const struct expect *e)
{
	struct pkt q;

	if (!iplen) {
		check_run(base, s, c, p->d, len, e);
		return;
	}
	q = *p;
	pkt_wr16(q.d + p->l3 + 4, len - p->l3 - 40);
	check_run(base, s, c, q.d, q.len, e);
}

/* The first length check_cut() takes: with iplen, one past the fixed
 * IPv6 header (payload length 0 is a jumbogram's: the frame's length). */
static size_t first_cut(const struct pkt *p, bool iplen)
{
	return iplen ? (size_t)p->l3 + 41 : 14;
}

static void run_table(const char *layout, struct fb_store *f, struct flowbloom_bpf **skel)
{
	char base[256];
	size_t i, c, m;

	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		struct expect e = { .parse = r->parse, .frag = r->frag };
		struct pkt p;

		pkt_init(&p);
		r->build(&p, r->a, r->b);
		row_key(r, &e.key);
		e.addrs = r->parse == FB_PARSE_MALFORMED && addrs_read(r, &p, p.len);
		for (m = 0; m < NMODES; m++) {
			fill_filter(f, &e.key, modes[m].rules);
			e.kind = r->parse == FB_PARSE_OK
					 ? parsed_hit(r, modes[m].rules, modes[m].hit)
				 : e.addrs ? modes[m].addr_hit
					   : 0;
			for (c = 0; c < NCFG; c++) {
				snprintf(base, sizeof(base), "%s %s filter=%s: %s (%zu B)", layout,
					 cfgs[c].name, modes[m].name, r->name, p.len);
				check_run(base, skel[c], &cfgs[c], p.d, p.len, &e);
			}
		}
	}
}

/* Every frame that parses, cut at every length inside its headers and at a
 * few in its payload (by its frame, or with iplen by its IPv6 payload length),
 * against a filter holding its own 5-tuple and its source: a frame cut
 * after its IP header still meets the source rule (a truncated TCP header
 * must not carry a blocked source past), and one cut after the ports of
 * its transport header meets its 5-tuple (a tiny first fragment, RFC 1858,
 * must not carry a blocked port past under --malformed pass). */
static void run_cuts(const char *layout, struct fb_store *f, struct flowbloom_bpf **skel,
		     bool iplen)
{
	const char *how = iplen ? "payload length" : "frame";
	char base[256];
	size_t i, c, len;

	for (i = 0; i < nrows; i++) {
		static const int cut_cfgs[] = { C_DROP, C_DROP_MPASS, C_TRACE };
		const struct row *r = &rows[i];
		struct expect e;
		struct pkt p;

		if (r->parse == FB_PARSE_MALFORMED)
			continue;
		e.split = 0;
		pkt_init(&p);
		r->build(&p, r->a, r->b);
		if (iplen && (p.l3 < 0 || !p.v6))
			continue;
		row_key(r, &e.key);
		fill_filter(f, &e.key, R_FLOW | R_SRC);
		snprintf(base, sizeof(base), "%s: %s", layout, r->name);
		if (!iplen)
			check_too_short(base, skel[C_DROP], p.d);
		for (len = first_cut(&p, iplen); len < p.len; len++) {
			if (len > p.need + 8 && len != p.len - 1)
				continue; /* enough payload cuts */
			e.parse = len < p.need ? FB_PARSE_MALFORMED : r->parse;
			e.frag = e.parse == FB_PARSE_OK ? r->frag : 0;
			e.addrs = e.parse == FB_PARSE_MALFORMED && addrs_read(r, &p, len);
			e.ports = e.addrs && !r->frag && p.l4 >= 0 &&
				  fb_proto_has_ports(r->proto) && len >= (size_t)p.l4 + 4;
			e.kind = e.parse == FB_PARSE_OK
					 ? parsed_hit(r, R_FLOW | R_SRC, FB_KIND_FLOW)
				 : e.ports ? FB_KIND_FLOW
				 : e.addrs ? FB_KIND_SRC
					   : 0;
			for (c = 0; c < sizeof(cut_cfgs) / sizeof(cut_cfgs[0]); c++) {
				snprintf(base, sizeof(base), "%s %s %s cut %zu/%zu (%s): %s",
					 layout, cfgs[cut_cfgs[c]].name, how, len, p.len,
					 len < p.need ? "header" : "payload", r->name);
				check_cut(base, skel[cut_cfgs[c]], &cfgs[cut_cfgs[c]], &p, len,
					  iplen, &e);
			}
		}
	}
}

/* First fragments cut at every length, against a filter holding only their
 * 5-tuple, under every setting: one cut after its fragment header but
 * before its ports could be the first piece of a datagram whose header
 * chain goes on in the next fragment (Linux reassembles some: see
 * tests/e2e/evasion.sh), and no port rule would ever see its ports. It is
 * dropped under drop and allow even with --malformed pass; cut after its
 * ports it meets its 5-tuple. With iplen, IPv6 ones cut by their payload length, the rest
 * of the frame padding: a made-up rest of the chain with harmless ports
 * there must not make it a datagram to them. */
static void run_split_first(const char *layout, struct fb_store *f, struct flowbloom_bpf **skel,
			    bool iplen)
{
	char base[256];
	size_t i, c, len;

	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		struct expect e;
		struct pkt p;

		if (!first_fragment(r))
			continue;
		pkt_init(&p);
		r->build(&p, r->a, r->b);
		if (iplen && !p.v6)
			continue;
		row_key(r, &e.key);
		fill_filter(f, &e.key, R_FLOW);
		for (len = (size_t)p.l3 + 20; len <= (size_t)p.l4 + 8 && len <= p.len; len++) {
			if (len < first_cut(&p, iplen))
				continue;
			e.parse = len < p.need ? FB_PARSE_MALFORMED : r->parse;
			e.frag = 0;
			e.addrs = e.parse == FB_PARSE_MALFORMED && addrs_read(r, &p, len);
			e.ports = e.addrs && len >= (size_t)p.l4 + 4;
			e.kind = e.parse == FB_PARSE_OK ? parsed_hit(r, R_FLOW, FB_KIND_FLOW)
				 : e.ports		? FB_KIND_FLOW
							: 0;
			e.split = e.parse == FB_PARSE_MALFORMED && len >= first_known(r, &p) &&
				  !e.ports;
			for (c = 0; c < NCFG; c++) {
				snprintf(base, sizeof(base),
					 "%s %s 5-tuple only, %s cut %zu/%zu: %s", layout,
					 cfgs[c].name, iplen ? "payload length" : "frame", len,
					 p.len, r->name);
				check_cut(base, skel[c], &cfgs[c], &p, len, iplen, &e);
			}
		}
	}
}

/* Stats: private maps leave the filter's alone; shared ones count there. */
static void check_shared_stats(const char *layout, struct fb_store *f)
{
	struct fb_load_opts o = { .action = FB_ACTION_DROP };
	struct expect e = { .parse = FB_PARSE_OK, .kind = FB_KIND_FLOW };
	struct fb_stats before, after, want, zero = {};
	LIBBPF_OPTS(bpf_test_run_opts, t, .repeat = 1);
	struct flowbloom_bpf *s;
	char l[256];
	struct pkt p;

	pkt_init(&p);
	f_v4(&p, P_UDP, 5);
	row_key(&udp4, &e.key);
	fill_filter(f, &e.key, R_FLOW);
	ASSERT_EQ(fb_stats_read(f, &before), 0, "read the filter's stats");
	snprintf(l, sizeof(l), "%s: private-stats programs left the filter's counters at 0",
		 layout);
	check_stats(l, &zero, &before, &zero);

	s = fb_load(f, &o);
	snprintf(l, sizeof(l), "%s: load with the filter's stats map", layout);
	if (!ASSERT_TRUE(s, l))
		return;
	t.data_in = p.d;
	t.data_size_in = p.len;
	ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(s->progs.flowbloom), &t), 0,
		  "test_run (shared stats)");
	snprintf(l, sizeof(l), "%s shared stats: verdict", layout);
	ASSERT_EQ(t.retval, XDP_DROP, l);
	fb_stats_read(f, &after);
	want_stats(&e, XDP_DROP, p.len, &want);
	snprintf(l, sizeof(l), "%s shared stats: the filter's counters", layout);
	check_stats(l, &before, &after, &want);
	flowbloom_bpf__destroy(s);
}

/* The table through the program, on a filter of layout and hash: with
 * SipHash the descriptors go through the global probe function, with NH
 * and the blocked layout through the data path's inlined loop. */
static void run_layout(const char *name, __u8 layout, __u8 hash)
{
	struct flowbloom_bpf *skel[NCFG];
	struct fb_store f;

	if (rig_up(name, layout, hash, cfgs, NCFG, false, &f, skel)) {
		run_table(name, &f, skel);
		run_cuts(name, &f, skel, false);
		run_cuts(name, &f, skel, true);
		run_split_first(name, &f, skel, false);
		run_split_first(name, &f, skel, true);
		check_shared_stats(name, &f);
	}
	rig_down(name, &f, skel, NCFG);
}

/*
 * The data path probes what the head's table says (include/flowbloom/
 * head.h), derived from the header and the prefix lengths by every writer
 * (fb_head_sync). A writer that changed the header and not the table (a
 * bug this simulates) leaves a rule the program cannot see: `check` finds
 * it and --repair rebuilds the table.
 */
static void check_stale_head(void)
{
	struct fb_create_opts co = { .nblocks = 1024,
				     .k = 8,
				     .layout = FB_LAYOUT_BLOCKED,
				     .hash = FB_HASH_NHK,
				     .action = FB_ACTION_DROP };
	struct fb_load_opts o = { .trace = true, .private_stats = true };
	struct fb_store f = { .dir_fd = -1, .outer_fd = -1, .bits_fd = -1, .stats_fd = -1 };
	const __u8 a4[4] = { 198, 51, 100, 77 };
	struct fb_repair_state st;
	struct flowbloom_bpf *skel;
	struct fb_key k, pkt;
	int m;

	if (!ASSERT_EQ(fb_store_create("stale", &co), 0, "stale head: create") ||
	    !ASSERT_EQ(fb_store_open("stale", &f), 0, "stale head: open"))
		return;
	memset(&pkt, 0, sizeof(pkt));
	v4mapped(pkt.saddr, a4);
	v4mapped(pkt.daddr, a4);
	pkt.proto = 17, pkt.kind = FB_KIND_FLOW, pkt.family = FB_FAMILY_IPV4;
	addr_key(&k, FB_KIND_SRC, pkt.saddr, FB_FAMILY_IPV4);
	/* The bits and the length, the kind flag: no table. */
	fb_bits_set(&f, &k);
	((struct fb_prefixes *)&f.blocks[1])->list[FB_PFX_SRC4].len[0] = 128;
	((struct fb_prefixes *)&f.blocks[1])->list[FB_PFX_SRC4].n = 1;
	f.hdr->kinds |= FB_KINDF(FB_KIND_SRC);
	skel = fb_load(&f, &o);
	if (!ASSERT_TRUE(skel != NULL, "stale head: load the program"))
		goto out;
	ASSERT_EQ(test_probe_flow(bpf_program__fd(skel->progs.flowbloom),
				  bpf_map__fd(skel->maps.fb_trace), &pkt, &m),
		  XDP_PASS, "stale head: the program does not see the rule: passed");
	ASSERT_EQ(fb_store_lock(&f), 0, "stale head: lock");
	ASSERT_EQ(fb_repair_check(&f, false, &st), 0, "stale head: check");
	ASSERT_TRUE(st.stale_head, "stale head: check reports the probe table");
	fb_store_unlock(&f);
	/* What attach does first (a table another build wrote). */
	ASSERT_EQ(fb_head_refresh(&f), 0, "stale head: refreshed as attach does");
	ASSERT_TRUE(fb_head_current(&f), "stale head: current after the refresh");
	ASSERT_EQ(test_probe_flow(bpf_program__fd(skel->progs.flowbloom),
				  bpf_map__fd(skel->maps.fb_trace), &pkt, &m),
		  XDP_DROP, "stale head: after the refresh the program sees the rule: dropped");
	/* Stale again (the table emptied by hand): check --repair rebuilds it. */
	ASSERT_EQ(fb_store_lock(&f), 0, "stale head: lock again");
	memset(fb_store_head(&f)->hdr.nprobe, 0, sizeof(fb_store_head(&f)->hdr.nprobe));
	ASSERT_EQ(test_probe_flow(bpf_program__fd(skel->progs.flowbloom),
				  bpf_map__fd(skel->maps.fb_trace), &pkt, &m),
		  XDP_PASS, "stale head: an empty table again: passed");
	ASSERT_EQ(fb_repair_check(&f, false, &st), 0, "stale head: check");
	ASSERT_TRUE(st.stale_head, "stale head: check reports it again");
	ASSERT_EQ(fb_repair_check(&f, true, &st), 0, "stale head: check --repair");
	ASSERT_EQ(fb_repair_check(&f, false, &st), 0, "stale head: check again");
	ASSERT_TRUE(!st.stale_head, "stale head: repaired");
	fb_store_unlock(&f);
	ASSERT_EQ(test_probe_flow(bpf_program__fd(skel->progs.flowbloom),
				  bpf_map__fd(skel->maps.fb_trace), &pkt, &m),
		  XDP_DROP, "stale head: after the repair the program sees the rule: dropped");
	flowbloom_bpf__destroy(skel);
out:
	fb_store_close(&f);
	ASSERT_EQ(fb_store_destroy("stale"), 0, "stale head: destroy");
}

/* No filter in the outer map: fail open, malformed packets too unless the
 * attachment says --malformed drop (whatever its action). */
static void check_no_filter(__u8 malformed)
{
	struct fb_load_opts o = { .action = FB_ACTION_ALLOW, .malformed = malformed };
	struct flowbloom_bpf *s = fb_load(NULL, &o);
	struct fb_stats before, after, want;
	__u32 mverdict = malformed == FB_MALFORMED_DROP ? XDP_DROP : XDP_PASS;
	struct pkt good, bad;
	char l[128];
	int fd;

	if (!ASSERT_TRUE(s, "load without a filter"))
		return;
	fd = bpf_map__fd(s->maps.fb_stats);
	pkt_init(&good);
	f_v4(&good, P_UDP, 5);
	pkt_init(&bad);
	f_v4_ihl(&bad, 4, 0);
	{
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = good.d, .data_size_in = good.len,
			    .repeat = 1);

		read_stats(fd, &before);
		ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(s->progs.flowbloom), &t), 0,
			  "no filter: test_run");
		ASSERT_EQ(t.retval, XDP_PASS, "no filter, action allow: IPv4 UDP passes");
		read_stats(fd, &after);
		memset(&want, 0, sizeof(want));
		bump(&want, FB_STAT_SEEN, good.len);
		bump(&want, FB_STAT_NOFILTER, good.len);
		bump(&want, FB_STAT_PASSED, good.len);
		check_stats("no filter: counters (NOFILTER)", &before, &after, &want);
	}
	{
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = bad.d, .data_size_in = bad.len,
			    .repeat = 1);

		read_stats(fd, &before);
		ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(s->progs.flowbloom), &t), 0,
			  "no filter: test_run malformed");
		snprintf(l, sizeof(l), "no filter, action allow, --malformed %s: IHL 4 %s",
			 malformed == FB_MALFORMED_DROP ? "drop" : "(default)",
			 mverdict == XDP_DROP ? "dropped" : "passes");
		ASSERT_EQ(t.retval, mverdict, l);
		read_stats(fd, &after);
		memset(&want, 0, sizeof(want));
		bump(&want, FB_STAT_SEEN, bad.len);
		bump(&want, FB_STAT_MALFORMED, bad.len);
		bump(&want, mverdict == XDP_DROP ? FB_STAT_DROPPED : FB_STAT_PASSED, bad.len);
		check_stats("no filter: counters (MALFORMED)", &before, &after, &want);
	}
	flowbloom_bpf__destroy(s);
}

/*
 * destroy refuses a filter a loaded program holds (attached in another
 * namespace), but a program on its way out is no such user: its last
 * reference may be another process's, which opened it by id only to read
 * its maps (every destroy, status and info does), for a moment. A child
 * holding the program's descriptors for 300 ms stands for that process:
 * destroy waits, then succeeds.
 */
static void check_destroy_waits(void)
{
	struct fb_create_opts co = { .nblocks = 1024,
				     .k = 8,
				     .layout = FB_LAYOUT_BLOCKED,
				     .hash = FB_HASH_NHK,
				     .action = FB_ACTION_DROP };
	struct fb_load_opts o = { .private_stats = true };
	struct fb_store f = { .dir_fd = -1, .outer_fd = -1, .bits_fd = -1, .stats_fd = -1 };
	struct flowbloom_bpf *skel;
	int status = -1;
	pid_t child;

	if (!ASSERT_EQ(fb_store_create("held", &co), 0, "held: create") ||
	    !ASSERT_EQ(fb_store_open("held", &f), 0, "held: open"))
		return;
	skel = fb_load(&f, &o);
	fb_store_close(&f);
	if (!ASSERT_TRUE(skel != NULL, "held: load the program")) {
		fb_store_destroy("held");
		return;
	}
	child = fork();
	if (child == 0) {
		usleep(300000); /* the program's descriptors, inherited */
		_exit(0);
	}
	flowbloom_bpf__destroy(skel);
	ASSERT_EQ(fb_store_destroy("held"), 0,
		  "destroy waits out a program another process holds for a moment");
	if (child > 0)
		waitpid(child, &status, 0);
	ASSERT_EQ(status, 0, "held: the child held the program and exited");
}

int main(void)
{
	char root[128];

	test_private_root("verdict", root, sizeof(root));
	fb_libbpf_logging(false);

	check_key_syntax();
	run_layout("verdict-blocked", FB_LAYOUT_BLOCKED, FB_HASH_SIPHASH13);
	run_layout("verdict-classic", FB_LAYOUT_CLASSIC, FB_HASH_SIPHASH13);
	run_layout("verdict-blocked-nh", FB_LAYOUT_BLOCKED, FB_HASH_NHK);
	check_stale_head();
	check_destroy_waits();
	check_no_filter(FB_MALFORMED_DROP);
	check_no_filter(FB_MALFORMED_DEFAULT);

	ASSERT_EQ(aborted_runs, 0, "no frame ever got XDP_ABORTED");
	ASSERT_TRUE(access(root, F_OK) != 0, "nothing left under FLOWBLOOM_ROOT");
	return test_summary();
}
