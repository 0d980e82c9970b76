// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Counting filters (user/lib/types/counting.c) in the kernel (BPF_PROG_TEST_RUN on the
 * real program, with its trace record): after random adds and deletes
 * through the library, every present flow matches, deleted flows match at
 * no more than 3x the formula's false-positive rate; a 4-bit filter with one
 * flow added 20 times and flows sharing its counters never misses a present
 * flow at any step; a writer that opened the filter before a `load
 * --replace` and locked it after writes into the new array (the program
 * matches its flow), and one whose filter was destroyed meanwhile fails; a
 * replace whose fill refuses leaves the filter and the open descriptors as
 * they were.
 * Four writers at once are test_counting_stress.
 */
#include <dirent.h>
#include "counting_test.h"

static void kernel_sequence(__u8 layout, unsigned bits)
{
	const char *ln = layout == FB_LAYOUT_CLASSIC ? "classic" : "blocked";
	enum { POOL = 40000, CAP = 20000 };
	long distinct = 0;
	uint64_t seed = 0x6b65 + layout * 100 + bits;
	struct fb_key *keys = calloc(POOL, sizeof(*keys));
	unsigned *mult = calloc(POOL, sizeof(*mult));
	bool *ever = calloc(POOL, sizeof(*ever));
	long present = 0, missing = 0, disagree = 0, errors = 0, deleted = 0, del_hit = 0;
	long fresh_hit = 0, del_fail = 0, ops = 0;
	unsigned i, r, batch;
	struct fb_store f;
	struct fb_check c;
	struct prog pr;
	char name[64], label[200];
	double fpr;
	__u32 *rc;

	snprintf(name, sizeof(name), "cnt-seq-%s%u", ln, bits);
	if (!ASSERT_EQ(make_filter(name, layout, bits, CAP, 0.01, &f), 0, "create and open"))
		goto out;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "load the program"))
		goto close;
	for (i = 0; i < POOL; i++)
		test_random_flow(&seed, &keys[i], i & 1);

	/* Fill to about 18k flows (a few twice), then churn: adds of new and
	 * old flows, deletes of present ones; about 18k present at the end. */
	for (batch = 0; batch < 240; batch++) {
		fb_store_lock(&f);
		for (r = 0; r < 256; r++, ops++) {
			unsigned x = test_rand64(&seed) % POOL;
			int roll = test_rand64(&seed) % 100;
			bool add = batch < 80 ? roll < 95 : present < 18000 ? roll < 55 : roll < 40;

			if (add || !present) {
				if (present && test_rand64(&seed) % 32 == 0)
					while (!mult[x])
						x = (x + 1) % POOL; /* again */
				else
					while (mult[x])
						x = (x + 1) % POOL; /* a new one */
				fb_counting_add(&f, &keys[x]);
				mult[x]++;
				ever[x] = true;
				present++;
			} else {
				while (!mult[x])
					x = (x + 1) % POOL;
				del_fail += fb_counting_del(&f, &keys[x]) != 0;
				mult[x]--;
				present--;
			}
		}
		publish_kind(&f);
		fb_store_unlock(&f);
	}
	snprintf(label, sizeof(label), "%s %u-bit: %ld ops, every delete accepted", ln, bits, ops);
	ASSERT_EQ(del_fail, 0, label);

	for (i = 0; i < POOL; i++) {
		int m = matches(&pr, &keys[i]);

		errors += m < 0;
		disagree += m >= 0 && m != fb_bits_test(&f, &keys[i]);
		if (mult[i])
			missing += m != 1;
		else if (ever[i]) {
			deleted++;
			del_hit += m == 1;
		}
	}
	for (i = 0; i < 20000; i++) {
		struct fb_key k;
		int m;

		test_random_flow(&seed, &k, i & 1);
		m = matches(&pr, &k);
		errors += m < 0;
		fresh_hit += m == 1;
	}
	/* The rate for the distinct flows present (a flow added twice sets
	 * its bits once). */
	for (i = 0; i < POOL; i++)
		distinct += mult[i] > 0;
	fpr = fb_fpr(f.hdr->layout, distinct, f.hdr->nblocks, f.hdr->k);
	snprintf(label, sizeof(label), "%s %u-bit: every test run succeeded", ln, bits);
	ASSERT_EQ(errors, 0, label);
	snprintf(label, sizeof(label),
		 "%s %u-bit: all present flows match in the program (no false negative)", ln, bits);
	ASSERT_EQ(missing, 0, label);
	snprintf(label, sizeof(label), "%s %u-bit: program and fb_bits_test agree", ln, bits);
	ASSERT_EQ(disagree, 0, label);
	snprintf(label, sizeof(label),
		 "%s %u-bit: %ld deleted flows match at %.5f <= 3 x formula %.5f", ln, bits,
		 deleted, (double)del_hit / deleted, fpr);
	ASSERT_RANGE((double)del_hit / deleted, 0, 3 * fpr, label);
	snprintf(label, sizeof(label), "%s %u-bit: never-added flows match at %.5f <= 3 x %.5f", ln,
		 bits, fresh_hit / 20000.0, fpr);
	ASSERT_RANGE(fresh_hit / 20000.0, 0, 3 * fpr, label);
	fb_counting_check(&f, false, &c);
	snprintf(label, sizeof(label), "%s %u-bit: bits == (counters > 0), sum = k x flows", ln,
		 bits);
	ASSERT_TRUE(!c.stale_bits && !c.missing_bits && c.count_checked && c.count_ok, label);
	rc = recount(&f, keys, mult, POOL);
	snprintf(label, sizeof(label), "%s %u-bit: every counter equals the exact recount", ln,
		 bits);
	ASSERT_EQ(counters_vs(&f, rc), 0, label);
	snprintf(label, sizeof(label), "%s %u-bit: nflows is the number present", ln, bits);
	ASSERT_EQ(f.hdr->nflows, present, label);
	free(rc);
	printf("%s %u-bit: m=%llu k=%u, %ld present (%ld distinct), %ld deleted: %.5f match, never "
	       "added %.5f, "
	       "formula %.5f\n",
	       ln, bits, (unsigned long long)mbits(&f), f.hdr->k, present, distinct, deleted,
	       (double)del_hit / deleted, fresh_hit / 20000.0, fpr);
	flowbloom_bpf__destroy(pr.skel);
close:
	fb_store_close(&f);
	drop_filter(name);
out:
	free(keys);
	free(mult);
	free(ever);
}

/* ---------------------------------------------------------------------- */
/* Kernel: saturation, step by step                                        */

struct satrun {
	struct fb_store *f;
	struct prog *pr;
	struct fb_key *bg;
	unsigned nbg;
	struct fb_key *sh;
	unsigned *shn; /* times each sharer is present */
	unsigned nsh;
	long steps, misses, errors;
	char first[160];
};

/* Every present flow (background, sharers, A if present) must match. */
static void sat_step(struct satrun *s, const struct fb_key *a, unsigned an, const char *what)
{
	unsigned i;
	int m;

	s->steps++;
	for (i = 0; i < s->nbg + s->nsh + 1; i++) {
		const struct fb_key *k = i < s->nbg	       ? &s->bg[i]
					 : i < s->nbg + s->nsh ? &s->sh[i - s->nbg]
							       : a;

		if (i >= s->nbg && i < s->nbg + s->nsh && !s->shn[i - s->nbg])
			continue;
		if (i == s->nbg + s->nsh && !an)
			continue;
		m = matches(s->pr, k);
		s->errors += m < 0;
		if (m == 0 && !s->misses++)
			snprintf(s->first, sizeof(s->first), "after %s: flow %u misses", what, i);
	}
}

static void kernel_saturation(void)
{
	enum { NBG = 2000, NSH = 8 };
	uint64_t seed = 0x5a75;
	__u64 pa[FB_MAX_K], pos[FB_MAX_K];
	struct fb_key a, bg[NBG], sh[NSH];
	unsigned shn[NSH] = { 0 }, an = 0, i, j, k, found = 0, shared_pos = 0;
	int delrc[20], nok = 0;
	struct satrun s = { 0 };
	struct fb_store f;
	struct prog pr;
	const char *name = "cnt-sat4";
	char label[400];
	long tries = 0;

	if (!ASSERT_EQ(make_filter(name, FB_LAYOUT_BLOCKED, 4, 20000, 0.01, &f), 0,
		       "saturation: create and open"))
		return;
	if (!ASSERT_EQ(prog_load(&f, &pr), 0, "saturation: load the program"))
		goto close;
	s = (struct satrun){
		.f = &f, .pr = &pr, .bg = bg, .nbg = NBG, .sh = sh, .shn = shn, .nsh = NSH
	};
	test_random_flow(&seed, &a, 0);
	k = key_pos(&f, &a, pa);
	/* Flows sharing at least one of A's counters. */
	while (found < NSH && tries < 20000000) {
		struct fb_key c;
		bool share = false;

		tries++;
		test_random_flow(&seed, &c, tries & 1);
		key_pos(&f, &c, pos);
		for (i = 0; i < k; i++)
			for (j = 0; j < k; j++)
				share |= pos[i] == pa[j];
		if (share)
			sh[found++] = c;
	}
	if (!ASSERT_EQ(found, NSH, "found 8 flows sharing a counter with A"))
		goto unload;
	fb_store_lock(&f);
	for (i = 0; i < NBG; i++) {
		test_random_flow(&seed, &bg[i], i & 1);
		fb_counting_add(&f, &bg[i]);
	}
	publish_kind(&f);
	fb_store_unlock(&f);
	sat_step(&s, &a, an, "background");
	for (i = 0; i < 20; i++) {
		fb_store_lock(&f);
		fb_counting_add(&f, &a);
		fb_store_unlock(&f);
		an++;
		sat_step(&s, &a, an, "adding A");
	}
	for (i = 0; i < k; i++)
		shared_pos += fb_counting_get(&f, pa[i]) == 15;
	ASSERT_EQ(shared_pos, k, "A added 20 times: all its 4-bit counters at 15");
	/* Sharers: each added once, the first three twice. */
	for (i = 0; i < NSH; i++)
		for (j = 0; j < (i < 3 ? 2u : 1u); j++) {
			fb_store_lock(&f);
			fb_counting_add(&f, &sh[i]);
			fb_store_unlock(&f);
			shn[i]++;
			sat_step(&s, &a, an, "adding a sharer");
		}
	/* Delete some: sharer 0 once, 1 twice, 3 and 4 once. */
	{
		static const unsigned which[] = { 0, 1, 1, 3, 4 };

		for (i = 0; i < 5; i++) {
			fb_store_lock(&f);
			nok += fb_counting_del(&f, &sh[which[i]]) == 0;
			fb_store_unlock(&f);
			shn[which[i]]--;
			sat_step(&s, &a, an, "deleting a sharer");
		}
	}
	ASSERT_EQ(nok, 5, "the 5 deletes of present sharers succeed");
	for (i = 0; i < 20; i++) {
		fb_store_lock(&f);
		delrc[i] = fb_counting_del(&f, &a);
		fb_store_unlock(&f);
		an = an ? an - 1 : 0;
		sat_step(&s, &a, an, "deleting A");
	}
	for (i = 0, nok = 0; i < 15; i++)
		nok += delrc[i] == 0;
	ASSERT_EQ(nok, 15, "the first 15 deletes of A return 0");
	for (i = 15, nok = 0; i < 20; i++)
		nok += delrc[i] == 0;
	printf("saturation: deletes 16..20 of A returned 0 %d of 5 times (its counters are all "
	       "saturated, so they never move); A's counters now:",
	       nok);
	for (i = 0; i < k; i++)
		printf(" %u", fb_counting_get(&f, pa[i]));
	printf("; A %s in the program\n",
	       matches(&pr, &a) == 1 ? "still matches" : "no longer matches");
	for (i = 0, shared_pos = 0; i < k; i++)
		shared_pos += fb_counting_get(&f, pa[i]) == 15;
	ASSERT_EQ(shared_pos, k, "after 20 deletes of A its saturated counters stay at 15");
	/* The remaining sharers go too. */
	for (i = 0; i < NSH; i++)
		while (shn[i]) {
			fb_store_lock(&f);
			nok = fb_counting_del(&f, &sh[i]);
			fb_store_unlock(&f);
			ASSERT_EQ(nok, 0, "delete a remaining sharer");
			shn[i]--;
			sat_step(&s, &a, an, "deleting the rest");
		}
	snprintf(label, sizeof(label),
		 "saturation: %ld steps, %u flows checked in the program at each: no present "
		 "flow ever missed (%s)",
		 s.steps, NBG + NSH + 1, s.first[0] ? s.first : "none");
	ASSERT_EQ(s.misses, 0, label);
	ASSERT_EQ(s.errors, 0, "saturation: every test run succeeded");
	{
		struct fb_check c;

		fb_counting_check(&f, false, &c);
		ASSERT_TRUE(!c.stale_bits && !c.missing_bits,
			    "saturation: bits == (counters > 0) at the end");
		printf("saturation: %llu saturated counters at the end, nflows %llu\n",
		       (unsigned long long)c.saturated, (unsigned long long)f.hdr->nflows);
	}
unload:
	flowbloom_bpf__destroy(pr.skel);
close:
	fb_store_close(&f);
	drop_filter(name);
}

/* Issue 9: a writer that opened the filter before a `load --replace`
 * switched arrays, and took the lock after it, must write into the array in
 * use. Before the fix its flows went into the retired array: "added 1
 * flow", then neither query nor the program found it. A writer whose
 * filter was destroyed while it waited must fail, not write into the
 * removed maps. */
static void kernel_stale_writer(void)
{
	struct fb_store w, r, q, w2;
	struct fb_key a[20], x;
	uint64_t seed = 2029;
	struct prog pr;
	size_t bad;
	int i, hits = 0;

	if (!ASSERT_EQ(make_filter("stale", FB_LAYOUT_BLOCKED, 4, 1000, 0.001, &w), 0,
		       "stale writer: create a counting filter"))
		return;
	for (i = 0; i < 20; i++)
		test_random_flow(&seed, &a[i], i & 1);
	test_random_flow(&seed, &x, 0);
	/* The writer has opened the filter (w); now another command replaces
	 * its content while the writer waits for the lock. */
	if (!ASSERT_EQ(fb_store_open("stale", &r), 0, "stale writer: open it again"))
		goto out;
	fb_store_lock(&r);
	ASSERT_EQ(fb_rules_replace(&r, r.hdr->nblocks, r.hdr->k, a, 20, &bad), 0,
		  "stale writer: load --replace meanwhile");
	fb_store_unlock(&r);
	fb_store_close(&r);
	ASSERT_EQ(fb_store_lock(&w), 0, "stale writer: the writer takes the lock");
	ASSERT_EQ(fb_rules_add(&w, &x, 1, &bad), 0, "stale writer: adds its flow");
	fb_store_unlock(&w);
	if (!ASSERT_EQ(fb_store_open("stale", &q), 0, "stale writer: a fresh open"))
		goto out;
	ASSERT_TRUE(fb_bits_test(&q, &x), "stale writer: the added flow is in the array in use");
	ASSERT_EQ(fb_counting_min(&q, &x), 1, "stale writer: ... with its counters");
	ASSERT_EQ(q.hdr->nflows, 21, "stale writer: 20 replaced + 1 added flows");
	if (ASSERT_EQ(prog_load(&q, &pr), 0, "stale writer: load the program")) {
		for (i = 0; i < 20; i++)
			hits += matches(&pr, &a[i]) == 1;
		ASSERT_EQ(matches(&pr, &x), 1, "stale writer: the program matches the added flow");
		ASSERT_EQ(hits, 20, "stale writer: ... and every replaced one");
		flowbloom_bpf__destroy(pr.skel);
	}
	fb_store_close(&q);
	/* Destroyed while a writer waits. */
	if (ASSERT_EQ(fb_store_open("stale", &w2), 0, "stale writer: open before a destroy")) {
		fb_store_close(&w);
		ASSERT_EQ(fb_store_destroy("stale"), 0, "stale writer: destroy meanwhile");
		forget("stale");
		ASSERT_EQ(fb_store_lock(&w2), -1, "stale writer: the lock then fails");
		fb_store_close(&w2);
		return;
	}
out:
	fb_store_close(&w);
	drop_filter("stale");
}

/* A replace whose fill refuses (a `load --replace` of a list that does
 * not fit) changes nothing and keeps no descriptor: the new array's
 * chunk 0 must be closed, not read from freed memory (which left it open,
 * its kernel memory held until the process ended, and closed whatever
 * descriptor number the freed memory then held). */
static int refuse_fill(struct fb_store *nf, void *arg)
{
	(void)nf;
	(void)arg;
	return -1;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void kernel_replace_refused(void)
{
	struct fb_store f;
	struct fb_key x;
	uint64_t seed = 2031;
	size_t bad;
	int before;

	if (!ASSERT_EQ(make_filter("refused", FB_LAYOUT_BLOCKED, 4, 1000, 0.001, &f), 0,
		       "refused replace: create a counting filter"))
		return;
	test_random_flow(&seed, &x, 0);
	fb_store_lock(&f);
	ASSERT_EQ(fb_rules_add(&f, &x, 1, &bad), 0, "refused replace: add a flow");
	before = open_fds();
	ASSERT_EQ(fb_replace_fill(&f, f.hdr->nblocks, f.hdr->k, 0, refuse_fill, NULL), -1,
		  "refused replace: a fill that refuses fails the replace");
	ASSERT_EQ(open_fds(), before, "refused replace: ... and leaves no descriptor open");
	ASSERT_EQ(fb_counting_min(&f, &x), 1, "refused replace: ... and the flow where it was");
	fb_store_unlock(&f);
	fb_store_close(&f);
	drop_filter("refused");
}

int main(void)
{
	double t0 = now();

	rig_init();
	kernel_sequence(FB_LAYOUT_BLOCKED, 4);
	kernel_sequence(FB_LAYOUT_CLASSIC, 8);
	kernel_saturation();
	kernel_stale_writer();
	kernel_replace_refused();
	printf("kernel part: %.2f s\n", now() - t0);
	return test_summary();
}
