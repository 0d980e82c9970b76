// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Same bits on both sides. For each layout and hash: 100k random flows are
 * added by the CLI (`flowbloom add -f`), then every one is sent as a frame
 * through the real XDP program (BPF_PROG_TEST_RUN): all must match. Then
 * 200k flows never added are probed by the program and by the CLI's own
 * lookup: the two must agree on every single flow (false positives
 * included), and the program's false-positive rate must be within 10 % of
 * the layout's formula. The same for a compact filter (create --compact:
 * its bits in whole pages, the rate asked rather than a lower one), whose
 * rate at capacity is near the one asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "types/bits.h"
#include "rules/flow.h"
#include "flowbloom.skel.h"
#include "prog/loader.h"
#include "packet.h"
#include "types/sizing.h"
#include "store/store.h"
#include "testlib.h"

#define N_ADD 200000
#define N_PROBE 200000

static char cli[512];

static int run(const char *fmt, const char *a, const char *b)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), fmt, cli, a, b);
	return system(cmd);
}

/* extra: more options for create ("" or "--compact"); rate: its
 * --fp-rate. */
static void one(const char *layout, const char *hash, const char *extra, double rate)
{
	char name[64], label[160], path[] = "/tmp/fbsamebits.XXXXXX", text[FB_FLOW_STR];
	struct fb_load_opts lo = { .trace = true, .private_stats = true };
	uint64_t seed = 0x5eed0000 + layout[0] + hash[7];
	struct flowbloom_bpf *skel;
	struct fb_store f;
	long missing = 0, fp = 0, disagree = 0, errors = 0;
	int fd, i, m = 0, v;
	FILE *out;
	double want;

	snprintf(name, sizeof(name), "sb-%s-%s%s", layout, hash,
		 !*extra       ? ""
		 : rate > 0.05 ? "-c10"
			       : "-c");
	snprintf(text, sizeof(text), "%s %s --fp-rate %g --layout %s --hash", name, extra, rate,
		 layout);
	if (!ASSERT_EQ(run("%s create %s %s --capacity 200000 >/dev/null", text, hash), 0,
		       "create via CLI"))
		return;
	fd = mkstemp(path);
	out = fdopen(fd, "w");
	for (i = 0; i < N_ADD; i++) {
		struct fb_key k;

		test_random_flow(&seed, &k, i & 1);
		fb_flow_format(&k, text, sizeof(text));
		fprintf(out, "%s\n", text);
	}
	fclose(out);
	snprintf(label, sizeof(label), "%s: CLI adds %d flows from a file", name, N_ADD);
	ASSERT_EQ(run("%s add %s -f %s >/dev/null", name, path), 0, label);
	unlink(path);

	if (fb_store_open(name, &f))
		goto destroy;
	skel = fb_load(&f, &lo);
	if (!ASSERT_TRUE(skel != NULL, "load program"))
		goto close;

	/* Replay the same random sequence: every added flow must match. */
	seed = 0x5eed0000 + layout[0] + hash[7];
	for (i = 0; i < N_ADD; i++) {
		struct fb_key k;

		test_random_flow(&seed, &k, i & 1);
		v = test_probe_flow(bpf_program__fd(skel->progs.flowbloom),
				    bpf_map__fd(skel->maps.fb_trace), &k, &m);
		errors += v < 0;
		missing += v != 1 /* XDP_DROP */ || !m;
	}
	snprintf(label, sizeof(label), "%s: all %d added flows match in the program", name, N_ADD);
	ASSERT_EQ(missing, 0, label);

	/* Flows never added (another seed): program and CLI agree on each. */
	seed = 0xbadf10e5;
	for (i = 0; i < N_PROBE; i++) {
		struct fb_key k;

		test_random_flow(&seed, &k, i & 1);
		v = test_probe_flow(bpf_program__fd(skel->progs.flowbloom),
				    bpf_map__fd(skel->maps.fb_trace), &k, &m);
		errors += v < 0;
		fp += m;
		disagree += m != fb_bits_test(&f, &k);
	}
	snprintf(label, sizeof(label), "%s: program and CLI agree on %d unadded flows", name,
		 N_PROBE);
	ASSERT_EQ(disagree, 0, label);
	ASSERT_EQ(errors, 0, "every test run succeeded");
	want = fb_fpr(f.hdr->layout, N_ADD, f.hdr->nblocks, f.hdr->k);
	snprintf(label, sizeof(label), "%s: program's fp rate %.5f within 10%% of formula %.5f",
		 name, (double)fp / N_PROBE, want);
	ASSERT_RANGE((double)fp / N_PROBE, want * 0.9, want * 1.1, label);
	printf("%s: m=%llu k=%u measured fp %.5f, formula %.5f\n", name,
	       (unsigned long long)fb_header_mbits(f.hdr), f.hdr->k, (double)fp / N_PROBE, want);
	if (*extra) {
		snprintf(label, sizeof(label),
			 "%s: compact, its bits in whole pages, its rate at capacity %.5f in "
			 "[0.5, 1] x %g",
			 name, want, rate);
		ASSERT_TRUE((f.hdr->flags & FB_HDRF_COMPACT) &&
				    f.hdr->nblocks % FB_PAGE_BLOCKS == 0 && want <= rate &&
				    want >= rate / 2,
			    label);
	}
	flowbloom_bpf__destroy(skel);
close:
	fb_store_close(&f);
destroy:
	run("%s destroy %s >/dev/null%s", name, "");
}

int main(int argc, char **argv)
{
	char root[128];

	(void)argc;
	test_private_root("samebits", root, sizeof(root));
	snprintf(cli, sizeof(cli), "%.*s/../../flowbloom", (int)(strrchr(argv[0], '/') - argv[0]),
		 argv[0]);
	fb_libbpf_logging(false);
	one("blocked", "siphash13", "", 0.01);
	one("classic", "siphash13", "", 0.01);
	one("blocked", "siphash24", "", 0.01);
	one("classic", "siphash24", "", 0.01);
	one("blocked", "nh", "", 0.01);
	one("classic", "nh", "", 0.01);
	/* Compact: at 1 % k = 8 in whole pages (k = 4 would take more
	 * chunks), at 10 % k = 4. */
	one("blocked", "nh", "--compact", 0.01);
	one("blocked", "nh", "--compact", 0.1);
	one("classic", "nh", "--compact", 0.01);
	return test_summary();
}
