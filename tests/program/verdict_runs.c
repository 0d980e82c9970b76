// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_verdict's runs: one frame through one loaded program, its verdict and
 * counter deltas against what the row and the filter's rules predict.
 */
#include "verdict.h"

/* ---------------------------------------------------------------- runs */

static const char *const stat_name[FB_STAT_SLOTS] = {
	"SEEN",	     "MATCHED",	 "DROPPED", "PASSED",  "NONIP",	   "FRAGMENT",
	"MALFORMED", "HIT_FLOW", "HIT_SRC", "HIT_DST", "NOFILTER",
};

int aborted_runs;

int read_stats(int fd, struct fb_stats *out)
{
	return fb_stats_read_fd(fd, "test", out);
}

void bump(struct fb_stats *s, int stat, __u64 bytes)
{
	s->c[stat].packets++;
	s->c[stat].bytes += bytes;
}

/* The documented policy, spelled out here rather than taken from the
 * program's header: what no rule decides of a malformed frame is dropped
 * unless said otherwise, or the action is monitor; a first fragment cut
 * before its ports is dropped under drop and allow even with --malformed
 * pass (docs/cli.md, Malformed packets). */
static __u32 want_verdict(const struct expect *e, __u8 action, __u8 malformed)
{
	if (e->parse == FB_PARSE_NONIP)
		return XDP_PASS;
	if (e->parse == FB_PARSE_MALFORMED && !e->kind) {
		if (e->split && action != FB_ACTION_MONITOR)
			return XDP_DROP;
		if (malformed == FB_MALFORMED_PASS)
			return XDP_PASS;
		if (malformed == FB_MALFORMED_DROP)
			return XDP_DROP;
		return action == FB_ACTION_MONITOR ? XDP_PASS : XDP_DROP;
	}
	if (action == FB_ACTION_MONITOR)
		return XDP_PASS;
	if (action == FB_ACTION_ALLOW)
		return e->kind ? XDP_PASS : XDP_DROP;
	return e->kind ? XDP_DROP : XDP_PASS;
}

void want_stats(const struct expect *e, __u32 verdict, __u64 bytes, struct fb_stats *w)
{
	memset(w, 0, sizeof(*w));
	bump(w, FB_STAT_SEEN, bytes);
	if (e->parse == FB_PARSE_NONIP) {
		bump(w, FB_STAT_NONIP, bytes);
	} else if (e->parse == FB_PARSE_MALFORMED) {
		bump(w, FB_STAT_MALFORMED, bytes);
		if (e->kind) {
			bump(w, FB_STAT_MATCHED, bytes);
			bump(w, FB_STAT_HIT_FLOW + e->kind - FB_KIND_FLOW, bytes);
		}
	} else {
		if (e->frag)
			bump(w, FB_STAT_FRAGMENT, bytes);
		if (e->kind) {
			bump(w, FB_STAT_MATCHED, bytes);
			bump(w, FB_STAT_HIT_FLOW + e->kind - FB_KIND_FLOW, bytes);
		}
	}
	bump(w, verdict == XDP_DROP ? FB_STAT_DROPPED : FB_STAT_PASSED, bytes);
}

/* after - before must equal want, every slot, packets and bytes. */
void check_stats(const char *label, const struct fb_stats *before, const struct fb_stats *after,
		 const struct fb_stats *want)
{
	char detail[512] = "";
	size_t n = 0;
	int i;

	for (i = 0; i < FB_STAT_SLOTS; i++) {
		__u64 dp = after->c[i].packets - before->c[i].packets;
		__u64 db = after->c[i].bytes - before->c[i].bytes;

		if (dp == want->c[i].packets && db == want->c[i].bytes)
			continue;
		if (n < sizeof(detail))
			n += snprintf(detail + n, sizeof(detail) - n,
				      "%s%s +%llu pkts/+%llu B, want +%llu/+%llu", n ? "; " : "",
				      stat_name[i] ? stat_name[i] : "slot", (unsigned long long)dp,
				      (unsigned long long)db,
				      (unsigned long long)want->c[i].packets,
				      (unsigned long long)want->c[i].bytes);
	}
	test_check(!n, label, detail);
}

static const char *lab(char *buf, size_t len, const char *base, const char *what)
{
	snprintf(buf, len, "%s: %s", base, what);
	return buf;
}

/* A traced key: its 5-tuple as FLOW text (whatever kind matched), then the rest. */
static void key_text(const struct fb_key *k, char *buf, size_t len)
{
	struct fb_key tuple = *k;
	char flow[128];

	tuple.kind = FB_KIND_FLOW;
	fb_flow_format(&tuple, flow, sizeof(flow));
	snprintf(buf, len, "'%s' kind %u plen %u family %u", flow, k->kind, k->plen, k->family);
}

/* Run one frame through one loaded program and check everything observable. */
void check_run(const char *base, struct flowbloom_bpf *s, const struct cfg *c, const __u8 *data,
	       size_t len, const struct expect *e)
{
	check_run_lin(base, s, c, data, len, 0, e);
}

void check_run_lin(const char *base, struct flowbloom_bpf *s, const struct cfg *c, const __u8 *data,
		   size_t len, size_t lin, const struct expect *e)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = data, .data_size_in = len, .repeat = 1);
	/* The first buffer's length (Linux 6.18 on: ctx's data_end). */
	struct xdp_md ctx = { .data_end = lin };
	__u8 action = c->action ? c->action : FB_ACTION_DROP; /* the filter's own */
	int stats_fd = bpf_map__fd(s->maps.fb_stats), trace_fd = bpf_map__fd(s->maps.fb_trace);
	struct fb_stats before, after, want;
	struct fb_trace tr;
	__u32 zero = 0, verdict = want_verdict(e, action, c->malformed);
	char l[512], d[384];
	int err;

	ASSERT_EQ(read_stats(stats_fd, &before), 0, lab(l, sizeof(l), base, "read stats"));
	if (c->trace) {
		memset(&tr, 0xa5, sizeof(tr)); /* a stale record cannot pass */
		bpf_map_update_elem(trace_fd, &zero, &tr, BPF_ANY);
	}
	if (lin) {
		t.ctx_in = &ctx;
		t.ctx_size_in = sizeof(ctx);
	}
	err = bpf_prog_test_run_opts(bpf_program__fd(s->progs.flowbloom), &t);
	if (!ASSERT_EQ(err, 0, lab(l, sizeof(l), base, "test_run")))
		return;
	if (t.retval == XDP_ABORTED)
		aborted_runs++;
	ASSERT_EQ(t.retval, verdict, lab(l, sizeof(l), base, "verdict"));

	read_stats(stats_fd, &after);
	want_stats(e, verdict, len, &want);
	check_stats(lab(l, sizeof(l), base, "counters"), &before, &after, &want);

	if (!c->trace)
		return;
	ASSERT_EQ(bpf_map_lookup_elem(trace_fd, &zero, &tr), 0,
		  lab(l, sizeof(l), base, "read trace"));
	snprintf(d, sizeof(d), "parse %u fragment %u kind %u verdict %u, want %d %d %d %u",
		 tr.parse, tr.fragment, tr.kind, tr.verdict, e->parse, e->frag, e->kind, t.retval);
	test_check(tr.parse == (__u32)e->parse && tr.fragment == (__u32)e->frag &&
			   tr.kind == (__u32)e->kind && tr.verdict == t.retval,
		   lab(l, sizeof(l), base, "trace record"), d);
	if (e->parse == FB_PARSE_OK) {
		struct fb_key k = e->key;
		char got[160], wnt[160];

		k.kind = e->kind ? e->kind : FB_KIND_FLOW;
		key_text(&tr.key, got, sizeof(got));
		key_text(&k, wnt, sizeof(wnt));
		snprintf(d, sizeof(d), "got %s, want %s", got, wnt);
		test_check(!memcmp(&tr.key, &k, sizeof(k)), lab(l, sizeof(l), base, "trace key"),
			   d);
	} else if (e->parse == FB_PARSE_NONIP || !e->addrs) {
		static const struct fb_key none;

		test_check(!memcmp(&tr.key, &none, sizeof(none)),
			   lab(l, sizeof(l), base, "trace key all zero"), NULL);
	} else {
		char got[160], wnt[160];

		/* Malformed with its addresses read: those and the family. */
		key_text(&tr.key, got, sizeof(got));
		key_text(&e->key, wnt, sizeof(wnt));
		snprintf(d, sizeof(d), "got %s, want its addresses from %s", got, wnt);
		test_check(!memcmp(tr.key.saddr, e->key.saddr, 32) &&
				   tr.key.family == e->key.family,
			   lab(l, sizeof(l), base, "trace key addresses"), d);
		/* A transport header cut after its ports: those too. */
		if (e->ports)
			test_check(tr.key.sport == e->key.sport && tr.key.dport == e->key.dport &&
					   tr.key.proto == e->key.proto,
				   lab(l, sizeof(l), base, "trace key ports"), d);
	}
}

/* Frames below the Ethernet header: test_run must refuse them. */
void check_too_short(const char *base, struct flowbloom_bpf *s, const __u8 *data)
{
	char l[512], d[160] = "";
	size_t len;
	int bad = 0;

	for (len = 0; len < 14; len++) {
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = data, .data_size_in = len,
			    .repeat = 1);
		int err = bpf_prog_test_run_opts(bpf_program__fd(s->progs.flowbloom), &t);

		if (err != -EINVAL && !bad++)
			snprintf(d, sizeof(d), "%zu bytes: err %d retval %u, want -EINVAL", len,
				 err, t.retval);
	}
	test_check(!bad, lab(l, sizeof(l), base, "0..13 bytes refused with EINVAL"), d);
}

bool rig_up(const char *name, __u8 layout, __u8 hash, const struct cfg *cfgs, size_t n, bool frags,
	    struct fb_store *f, struct flowbloom_bpf **skel)
{
	struct fb_create_opts co = {
		.nblocks = 1024,
		.k = 7,
		.layout = layout,
		.hash = hash,
		.action = FB_ACTION_DROP,
	};
	char l[256];
	bool ok = true;
	size_t c;

	memset(skel, 0, n * sizeof(*skel));
	*f = (struct fb_store){ .dir_fd = -1, .outer_fd = -1, .bits_fd = -1, .stats_fd = -1 };
	snprintf(l, sizeof(l), "create the %s filter", name);
	if (!ASSERT_EQ(fb_store_create(name, &co), 0, l))
		return false;
	snprintf(l, sizeof(l), "open the %s filter", name);
	if (!ASSERT_EQ(fb_store_open(name, f), 0, l)) {
		*f = (struct fb_store){ .dir_fd = -1 }; /* nothing to close */
		return false;
	}
	for (c = 0; c < n; c++) {
		struct fb_load_opts o = {
			.action = cfgs[c].action,
			.malformed = cfgs[c].malformed,
			.trace = cfgs[c].trace,
			.frags = frags,
			.private_stats = true,
		};

		skel[c] = fb_load(f, &o);
		snprintf(l, sizeof(l), "%s: load the %s program%s", name, cfgs[c].name,
			 frags ? " multi-buffer" : "");
		ok &= ASSERT_TRUE(skel[c], l);
	}
	return ok;
}

void rig_down(const char *name, struct fb_store *f, struct flowbloom_bpf **skel, size_t n)
{
	char l[256];
	size_t c;

	for (c = 0; c < n; c++)
		if (skel[c])
			flowbloom_bpf__destroy(skel[c]);
	if (f->dir_fd >= 0)
		fb_store_close(f);
	snprintf(l, sizeof(l), "destroy the %s filter", name);
	ASSERT_EQ(fb_store_destroy(name), 0, l);
}
