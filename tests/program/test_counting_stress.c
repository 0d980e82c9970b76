// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Counting filters (user/lib/types/counting.c) under load: four processes doing
 * 100,000 adds and deletes each on one filter, under its lock, while this
 * one sends traffic through the program, leave counters equal to the
 * recount of what each says it holds.
 */
#include "counting_test.h"

/* ---------------------------------------------------------------------- */
/* Kernel: four writers and the data path at once                          */

#define NCHILD 4
#define CHILD_OPS 100000
#define CHILD_BATCH 64
#define NRESIDENT 2000

/* Flows of writer id (0..3; NCHILD is the parent's residents), never equal
 * to another writer's: its id is in the source address. */
static void writer_flow(uint64_t *seed, int id, long n, struct fb_key *k)
{
	test_random_flow(seed, k, n & 1);
	if (n & 1)
		k->saddr[8] = 0xe0 + id;
	else
		k->saddr[15] = 0xe0 + id;
}

static void child_main(const char *name, int id, const char *out)
{
	struct fb_key *keys = malloc(CHILD_OPS * sizeof(*keys));
	uint64_t seed = 0xc41d0 + id * 7919;
	long n = 0, done = 0, fails = 0, nmade = 0;
	struct fb_store f;
	FILE *fp;
	int b;

	if (!keys || fb_store_open(name, &f))
		_exit(10);
	while (done < CHILD_OPS) {
		if (fb_store_lock(&f))
			_exit(11);
		for (b = 0; b < CHILD_BATCH && done < CHILD_OPS; b++, done++) {
			if (!n || test_rand64(&seed) % 100 < 70) {
				writer_flow(&seed, id, nmade++, &keys[n]);
				fb_counting_add(&f, &keys[n]);
				n++;
			} else {
				long i = test_rand64(&seed) % n;

				fails += fb_counting_del(&f, &keys[i]) != 0;
				keys[i] = keys[--n];
			}
		}
		publish_kind(&f);
		fb_store_unlock(&f);
	}
	fb_store_close(&f);
	fp = fopen(out, "w");
	if (!fp || fwrite(keys, sizeof(*keys), n, fp) != (size_t)n || fclose(fp))
		_exit(12);
	_exit(fails ? 1 : 0);
}

static void kernel_concurrency(void)
{
	const char *name = "cnt-conc8";
	uint64_t seed = 0xc0c0, rseed = 0x7a11;
	struct fb_key res[NRESIDENT], *all = NULL;
	long nall = 0, probes = 0, res_miss = 0, errors = 0, miss = 0, i;
	int alive = NCHILD, ok_children = 0, c;
	char out[NCHILD][128], label[200];
	pid_t pids[NCHILD];
	struct fb_store f;
	struct fb_check chk;
	struct prog pr;
	double t0, wall;
	__u32 *rc;

	if (!ASSERT_EQ(make_filter(name, FB_LAYOUT_BLOCKED, 8, 400000, 0.01, &f), 0,
		       "concurrency: create and open"))
		return;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "concurrency: load the program"))
		goto close;
	fb_store_lock(&f);
	for (i = 0; i < NRESIDENT; i++) {
		writer_flow(&seed, NCHILD, i, &res[i]);
		fb_counting_add(&f, &res[i]);
	}
	publish_kind(&f);
	fb_store_unlock(&f);

	fflush(stdout);
	t0 = now();
	for (c = 0; c < NCHILD; c++) {
		snprintf(out[c], sizeof(out[c]), "/tmp/fbtest_counting_%d_%d.bin", main_pid, c);
		pids[c] = fork();
		if (pids[c] == 0)
			child_main(name, c, out[c]);
		if (pids[c] < 0) {
			perror("fork");
			alive--;
		}
	}
	/* Traffic while they write: a resident flow (must match, whatever the
	 * writers do to the counters they share) and a random one. */
	while (alive > 0) {
		struct fb_key k;
		int m, st;
		pid_t p;

		m = matches(&pr, &res[probes % NRESIDENT]);
		errors += m < 0;
		res_miss += m == 0;
		test_random_flow(&rseed, &k, probes & 1);
		errors += matches(&pr, &k) < 0;
		probes++;
		if (probes % 64)
			continue;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			alive--;
			ok_children += WIFEXITED(st) && WEXITSTATUS(st) == 0;
		}
	}
	wall = now() - t0;
	snprintf(label, sizeof(label), "concurrency: %d writers exit 0 (every delete accepted)",
		 NCHILD);
	ASSERT_EQ(ok_children, NCHILD, label);
	snprintf(label, sizeof(label),
		 "concurrency: %ld probes of resident flows during the writes: none missed",
		 probes);
	ASSERT_EQ(res_miss, 0, label);

	all = malloc((NRESIDENT + (size_t)NCHILD * CHILD_OPS) * sizeof(*all));
	memcpy(all, res, sizeof(res));
	nall = NRESIDENT;
	for (c = 0; c < NCHILD; c++) {
		FILE *fp = fopen(out[c], "r");
		size_t n;

		if (!fp)
			continue;
		n = fread(all + nall, sizeof(*all), CHILD_OPS, fp);
		nall += n;
		fclose(fp);
		unlink(out[c]);
	}
	rc = recount(&f, all, NULL, nall);
	ASSERT_EQ(counters_vs(&f, rc), 0,
		  "concurrency: every counter equals the recount of all writers' flows");
	free(rc);
	ASSERT_EQ(bits_vs_counters(&f), 0, "concurrency: bits == (counters > 0)");
	ASSERT_EQ(f.hdr->nflows, nall, "concurrency: nflows is the total present");
	fb_counting_check(&f, false, &chk);
	ASSERT_TRUE(!chk.stale_bits && !chk.missing_bits && !chk.journal_dirty &&
			    chk.count_checked && chk.count_ok && !chk.saturated,
		    "concurrency: check clean, nothing saturated");
	for (i = 0; i < nall; i++) {
		int m = matches(&pr, &all[i]);

		errors += m < 0;
		miss += m == 0;
	}
	snprintf(label, sizeof(label), "concurrency: all %ld present flows match in the program",
		 nall);
	ASSERT_EQ(miss, 0, label);
	ASSERT_EQ(errors, 0, "concurrency: every test run succeeded");
	printf("concurrency: %d writers x %d ops in %.3f s (%.0f ops/s, batches of %d under the "
	       "lock), %ld probes meanwhile, %ld flows present\n",
	       NCHILD, CHILD_OPS, wall, NCHILD * (double)CHILD_OPS / wall, CHILD_BATCH, probes,
	       nall);
	free(all);
	flowbloom_bpf__destroy(pr.skel);
close:
	fb_store_close(&f);
	drop_filter(name);
}

int main(void)
{
	double t0 = now();

	rig_init();
	kernel_concurrency();
	printf("stress part: %.2f s\n", now() - t0);
	return test_summary();
}
