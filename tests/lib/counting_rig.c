// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The counting suites' kernel side: filters in a private bpffs root (removed
 * at exit, also on SIGINT/SIGTERM) and the real program loaded on them with
 * its trace record.
 */
#include "counting_test.h"
#include "store/head.h"

static char root[128];
pid_t main_pid;

/* ---------------------------------------------------------------------- */
/* Kernel: filters in a private bpffs root, the real program               */

#define MAX_MADE 8
static char made[MAX_MADE][FB_NAME_MAX];

void forget(const char *name)
{
	int i;

	for (i = 0; i < MAX_MADE; i++)
		if (!strcmp(made[i], name))
			made[i][0] = 0;
}

static void cleanup(void)
{
	int i;

	if (getpid() != main_pid)
		return;
	for (i = 0; i < MAX_MADE; i++)
		if (made[i][0]) {
			fb_store_destroy(made[i]);
			made[i][0] = 0;
		}
	rmdir(root);
}

static void on_signal(int sig)
{
	(void)sig;
	exit(130); /* runs cleanup() */
}

/* Create a counting filter sized for cap flows at rate p and open it. */
int make_filter(const char *name, __u8 layout, unsigned bits, __u64 cap, double p,
		struct fb_store *f)
{
	struct fb_create_opts o = { .layout = layout,
				    .hash = FB_HASH_SIPHASH13,
				    .action = FB_ACTION_DROP,
				    .counter_bits = bits,
				    .capacity = cap,
				    .fp_rate = p };
	int i, err;

	err = layout == FB_LAYOUT_CLASSIC ? fb_size_classic(cap, p, &o.nblocks, &o.k)
					  : fb_size_blocked(cap, p, &o.nblocks, &o.k);
	if (err || fb_store_create(name, &o))
		return -1;
	for (i = 0; i < MAX_MADE; i++)
		if (!made[i][0]) {
			snprintf(made[i], sizeof(made[i]), "%s", name);
			break;
		}
	return fb_store_open(name, f);
}

void drop_filter(const char *name)
{
	ASSERT_EQ(fb_store_destroy(name), 0, "destroy the filter");
	forget(name);
}

/* The data path probes a rule kind only once its flag is set and the
 * head's probe table has its descriptor (rules.c). */
void publish_kind(struct fb_store *f)
{
	__atomic_fetch_or(&f->hdr->kinds, FB_KINDF(FB_KIND_FLOW), __ATOMIC_RELEASE);
	ASSERT_EQ(fb_head_sync(f, true), 0, "the head's probe table follows the kinds");
}

int prog_load(const struct fb_store *f, struct prog *pr)
{
	struct fb_load_opts lo = { .trace = true, .private_stats = true };

	pr->skel = fb_load(f, &lo);
	if (!pr->skel)
		return -1;
	pr->fd = bpf_program__fd(pr->skel->progs.flowbloom);
	pr->trace_fd = bpf_map__fd(pr->skel->maps.fb_trace);
	return 0;
}

/* 1 if the program drops the flow with a flow-rule match, 0 if it does
 * not match, -1 on a failed run. */
int matches(const struct prog *pr, const struct fb_key *k)
{
	int m, v = test_probe_flow(pr->fd, pr->trace_fd, k, &m);

	if (v < 0)
		return -1;
	return v == XDP_DROP && m;
}

/* Counter-by-counter comparison with a recount (uncapped; none saturate). */
__u64 counters_vs(const struct fb_store *f, const __u32 *want)
{
	__u64 m = mbits(f), p, bad = 0;

	for (p = 0; p < m; p++)
		bad += fb_counting_get(f, p) != want[p];
	return bad;
}

/* The private root, its cleanup and libbpf's quiet: first thing in main. */
void rig_init(void)
{
	main_pid = getpid();
	snprintf(root, sizeof(root), "/sys/fs/bpf/fbtest_counting_%d", main_pid);
	setenv("FLOWBLOOM_ROOT", root, 1);
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fb_libbpf_logging(false);
}
