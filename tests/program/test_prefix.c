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
 *     alone in a 1 MiB filter (swapped in with fb_rules_replace under one
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
 *     /16-/64, far more than 4 lengths each, so `flowbloom load` expands
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
#include "prefix_test.h"

/* ------------------------------------------ 5. replace under traffic */

#define N_C 500
#define N_AONLY 300
#define N_BONLY 300
#define N_SWAPS 20
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

/* A label with the run's name in it, for the assertions of one run. */
static const char *L(const char *label, const char *fmt)
{
	static char b[256];

	snprintf(b, sizeof(b), fmt, label);
	return b;
}

static void replace_under_traffic(const char *create_args, const char *label)
{
	static struct pfx c[N_C], ao[N_AONLY], bo[N_BONLY];
	static struct frame fc[N_FRAMES], fa[N_FRAMES / 4];
	/* C: IPv4 /16 and /24, ten /19s, IPv6 /32 /48. A adds /32 and /40
	 * /64 (four lengths a family: no expansion). B adds eight more IPv4
	 * lengths, 37 or 38 prefixes each (eleven: expanded into four; the
	 * ten /19s are among the cheapest to expand, so C's /19s are /19s
	 * under A and longer under B). */
	static const int c4[] = { 16, 24 }, c6[] = { 32, 48 }, a4[] = { 32, 32, 32 },
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

	snprintf(l, sizeof(l), "replace (%s): create", label);
	if (!ASSERT_EQ(sh("create swap %s >/dev/null", create_args), 0, l))
		return;
	{
		struct fb_prefixes px;
		__u64 n;

		ASSERT_EQ(sh("load swap %s --replace >/dev/null 2>&1", pb), 0,
			  L(label, "replace (%s): load list B"));
		lengths_of("swap", &px, &n);
		ASSERT_TRUE(px.list[FB_PFX_SRC4].n == FB_MAX_LENGTHS &&
				    !has_len(&px.list[FB_PFX_SRC4], 96 + 19),
			    L(label,
			      "replace (%s): under B, C's /19s are expanded into a longer length"));
		ASSERT_EQ(sh("load swap %s --replace >/dev/null", pa), 0,
			  L(label, "replace (%s): load list A"));
		lengths_of("swap", &px, &n);
		ASSERT_TRUE(px.list[FB_PFX_SRC4].n == 4 && has_len(&px.list[FB_PFX_SRC4], 96 + 19),
			    L(label, "replace (%s): under A, C's /19s are /19s"));
	}
	if (fb_store_open("swap", &f))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), L(label, "replace (%s): load the program once")))
		goto close;
	for (i = 0; i < N_FRAMES; i++) {
		__u32 kind;

		missed += run_frame(&pg, &fc[i], &kind) != XDP_DROP || kind != FB_KIND_SRC;
	}
	ASSERT_EQ(missed, 0,
		  L(label, "replace (%s): before: every packet from C matches (A loaded)"));
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
	if (!ASSERT_TRUE(child > 0, L(label, "replace (%s): fork")))
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
	snprintf(l, sizeof(l), "replace (%s): %d of %d `load --replace` runs succeeded", label,
		 swaps, 2 * N_SWAPS);
	ASSERT_EQ(swaps, 2 * N_SWAPS, l);
	snprintf(l, sizeof(l),
		 "replace (%s): %ld packets from C sent during the replaces (>= 1000)", label,
		 sent);
	ASSERT_RANGE(sent, 1000, 1e12, l);
	snprintf(l, sizeof(l), "replace (%s): all %ld packets from C matched during the replaces",
		 label, sent);
	ASSERT_EQ(missed, 0, l);
	ASSERT_EQ(errors, 0, L(label, "replace (%s): every test_run succeeded"));
	ASSERT_EQ(nofilter_packets(&pg), 0,
		  L(label, "replace (%s): the program never found no filter"));
	snprintf(
		l, sizeof(l),
		"replace (%s): A-only packets matched %ld of %ld times: the program saw both lists",
		label, a_hits, a_sent);
	ASSERT_TRUE(a_hits > 0 && a_hits < a_sent, l);
	printf("replace (%s): %d replaces in %.2f s (%.1f ms each), %ld packets from C during them "
	       "(%ld missed), A-only packets matched %ld of %ld\n",
	       label, swaps, t1, t1 * 1e3 / (swaps > 0 ? swaps : 1), sent, missed, a_hits, a_sent);

	/* A is loaded again at the end: all of A matches. */
	missed = 0;
	for (i = 0; i < N_FRAMES / 4; i++) {
		__u32 kind;

		missed += run_frame(&pg, &fa[i], &kind) != XDP_DROP || kind != FB_KIND_SRC;
	}
	ASSERT_EQ(missed, 0,
		  L(label, "replace (%s): after: every packet from A-only prefixes matches"));
	{
		char *e = slurp(pe);

		ASSERT_TRUE(strstr(e, "note: expanded") && !strstr(e, "error"),
			    L(label, "replace (%s): B's loads note the expansion, no errors"));
	}
unload:
	prog_unload(&pg);
close:
	fb_store_close(&f);
destroy:
	ASSERT_EQ(sh("destroy swap >/dev/null"), 0, L(label, "replace (%s): destroy"));
}

int main(int argc, char **argv)
{
	char root[128];
	double t0 = now();

	(void)argc;
	test_private_root("prefix", root, sizeof(root));
	snprintf(cli, sizeof(cli), "%.*s/../../flowbloom", (int)(strrchr(argv[0], '/') - argv[0]),
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
	/* Fixed geometry (one chunk): `load --replace` keeps the fewest
	 * entries in 4 lengths, so A and B differ in their lengths as the
	 * test needs (a filter sized by rate would spend its chunk on fewer
	 * lengths: prefix_cli.sh tests that choice). */
	replace_under_traffic("--bits 2064384 --hashes 8", "Bloom");
	/* Another type's probe reads the filter the packet started with:
	 * before, it looked the filter up a second time, and a replace
	 * between the two lookups could probe C's old length in the new
	 * filter, which holds it expanded (one packet missed). */
	replace_under_traffic("--type cuckoo --capacity 4000 --fp-rate 0.001", "cuckoo");
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
