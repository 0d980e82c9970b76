// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Counting filters (user/lib/types/counting.c), crash recovery, no kernel (a filter
 * built on anonymous memory): hand-made journal states (a whole add or
 * delete, an add or delete stopped inside position j) must roll back to the
 * state before the operation; and every crash point of real adds and
 * deletes, found by stopping the operation before its N-th store into the
 * filter's memory (x86-64: the memory is read-only, each store faults and is
 * single-stepped, the N-th one longjmps out), must leave no counter without
 * its bit and roll back exactly.
 */
#include "counting_test.h"

/* ---------------------------------------------------------------------- */
/* Unit: hand-made journal states                                          */

/* Set the journal as fb_counting_add/del would have it at a crash. */
static void journal_set(struct fb_store *f, __u32 op, const struct fb_key *key, __u32 done,
			__u32 changed, __u32 cur_old, __u64 nflows_before)
{
	struct fb_journal *j = &f->cnt_hdr->journal;

	j->op = op;
	j->key = *key;
	j->done = done;
	j->changed = changed;
	j->cur_old = cur_old;
	j->nflows_before = nflows_before;
}

/*
 * Apply the first `upto` positions of an add (or delete) of key by hand,
 * the way fb_counting_add/del order their stores, and stop inside position
 * upto at `stage`:
 *   add: 0 cur_old written; 1 bit set; 2 counter raised (changed not yet)
 *   del: 0 cur_old written; 1 counter lowered; 2 bit cleared (changed not yet)
 * Returns the journal's changed mask.
 */
static __u32 emulate(struct fb_store *f, bool add, const struct fb_key *key, unsigned upto,
		     int stage)
{
	struct fb_journal *j = &f->cnt_hdr->journal;
	unsigned max = fb_counting_max(f), k, i, c;
	__u64 pos[FB_MAX_K];

	k = key_pos(f, key, pos);
	/* journal_begin() clears cur_old (0x80000000: no counter +-1). */
	journal_set(f, add ? FB_JOURNAL_ADD : FB_JOURNAL_DEL, key, 0, 0, 0x80000000U,
		    f->hdr->nflows);
	for (i = 0; i < k && i <= upto; i++) {
		c = fb_counting_get(f, pos[i]);
		if (i == upto && stage < 0)
			break; /* done == upto, nothing of position upto yet */
		if (add ? c < max : c && c < max) {
			j->cur_old = c;
			if (i == upto && stage == 0)
				break;
			if (add) {
				bit_put(f, pos[i], true);
				if (i == upto && stage == 1)
					break;
				cnt_set(f, pos[i], c + 1);
			} else {
				cnt_set(f, pos[i], c - 1);
				if (i == upto && stage == 1)
					break;
				if (c == 1)
					bit_put(f, pos[i], false);
			}
			if (i == upto)
				break;
			j->changed |= 1U << i;
			j->cur_old = 0x80000000U; /* cleared before done moves on */
		}
		j->done = i + 1;
	}
	return j->changed;
}

static bool clean_after(struct fake *x)
{
	struct fb_check c;

	fb_counting_check(&x->f, false, &c);
	return !c.stale_bits && !c.missing_bits && !c.journal_dirty && c.count_ok;
}

static void unit_journal(__u8 layout, unsigned bits)
{
	const char *ln = layout == FB_LAYOUT_CLASSIC ? "classic" : "blocked";
	uint64_t seed = 0x10a + layout * 7 + bits;
	__u64 pos[FB_MAX_K];
	unsigned k, i, max, v[FB_MAX_K], jpos, stage, bad_add = 0, bad_del = 0, npart = 0;
	struct fake x;
	struct snap s0, s1;
	struct fb_key fk, bg;
	char label[200];
	__u32 changed;
	int r;

	fake_init(&x, layout, layout == FB_LAYOUT_CLASSIC ? 6 : 8, 1, bits, &seed);
	max = fb_counting_max(&x.f);
	for (i = 0; i < 30; i++) {
		test_random_flow(&seed, &bg, i & 1);
		fb_counting_add(&x.f, &bg);
	}
	test_random_flow(&seed, &fk, 0);
	k = key_pos(&x.f, &fk, pos);
	snap_take(&x, &s0);

	/* A whole add, then the journal as a crash just before it went idle. */
	for (i = 0, changed = 0; i < k; i++)
		v[i] = fb_counting_get(&x.f, pos[i]);
	fb_counting_add(&x.f, &fk);
	for (i = 0; i < k; i++) {
		unsigned x2, before = v[i];

		for (x2 = 0; x2 < i; x2++) /* a repeated position moved already */
			before += pos[x2] == pos[i] && v[x2] < max;
		if (before < max)
			changed |= 1U << i;
	}
	journal_set(&x.f, FB_JOURNAL_ADD, &fk, k, changed, 0, x.f.hdr->nflows - 1);
	r = fb_counting_recover(&x.f);
	snprintf(label, sizeof(label), "%s %u-bit: whole add with journal ADD done=k: rolled back",
		 ln, bits);
	ASSERT_TRUE(r == 1 && snap_same_content(&x, &s0) && clean_after(&x), label);

	/* A whole delete, the same way. */
	snap_restore(&x, &s0);
	fb_counting_add(&x.f, &fk);
	snap_take(&x, &s1);
	for (i = 0, changed = 0; i < k; i++)
		v[i] = fb_counting_get(&x.f, pos[i]);
	ASSERT_EQ(fb_counting_del(&x.f, &fk), 0, "delete of the flow just added");
	for (i = 0; i < k; i++) {
		unsigned x2, before = v[i];

		for (x2 = 0; x2 < i; x2++)
			before -= pos[x2] == pos[i] && v[x2] && v[x2] < max;
		if (before && before < max)
			changed |= 1U << i;
	}
	journal_set(&x.f, FB_JOURNAL_DEL, &fk, k, changed, 0, x.f.hdr->nflows + 1);
	r = fb_counting_recover(&x.f);
	snprintf(label, sizeof(label),
		 "%s %u-bit: whole delete with journal DEL done=k: rolled back", ln, bits);
	ASSERT_TRUE(r == 1 && snap_same_content(&x, &s1) && clean_after(&x), label);

	/* Stopped inside position j, at each stage of it: for the last stage
	 * the counter has moved but `changed` does not say so yet. */
	for (jpos = 0; jpos < k; jpos++) {
		for (stage = 0; stage < 3; stage++) {
			snap_restore(&x, &s0);
			x.f.cnt_hdr->journal.cur_old = 0;
			emulate(&x.f, true, &fk, jpos, stage);
			fb_counting_recover(&x.f);
			bad_add += !snap_same_content(&x, &s0) || !clean_after(&x);
			snap_restore(&x, &s1);
			emulate(&x.f, false, &fk, jpos, stage);
			fb_counting_recover(&x.f);
			bad_del += !snap_same_content(&x, &s1) || !clean_after(&x);
			npart++;
		}
	}
	snprintf(label, sizeof(label),
		 "%s %u-bit: add stopped inside each position j (%u states): rolled back", ln, bits,
		 npart);
	ASSERT_EQ(bad_add, 0, label);
	snprintf(label, sizeof(label),
		 "%s %u-bit: delete stopped inside each position j (%u states): rolled back", ln,
		 bits, npart);
	ASSERT_EQ(bad_del, 0, label);
	snap_free(&s0);
	snap_free(&s1);
	fake_free(&x);
}

/*
 * The window between `done = j` and `cur_old = c_j` (fb_counting_add and
 * fb_counting_del write done at the end of position j-1 and cur_old at the
 * start of position j). Before the fix, fb_counting_recover read a stale cur_old as position
 * j's old value). Crafted so that position j's untouched counter equals
 * the stale cur_old plus one (add) or minus one (delete).
 */
static void unit_journal_window(void)
{
	uint64_t seed = 0x3141;
	__u64 pf[FB_MAX_K], pg[FB_MAX_K];
	struct fb_key fk, g;
	struct fake x;
	struct snap s0;
	struct fb_check c;
	unsigned k, i, tries;
	bool found = false, gshares0, gshares1;

	/* ADD, j = 1: G holds F's position 1 (counter 1), nobody holds F's
	 * position 0 (counter 0). F's add stops after position 0 is done. */
	fake_init(&x, FB_LAYOUT_BLOCKED, 8, 1, 4, &seed);
	test_random_flow(&seed, &fk, 0);
	k = key_pos(&x.f, &fk, pf);
	for (tries = 0; tries < 100000 && !found; tries++) {
		test_random_flow(&seed, &g, tries & 1);
		key_pos(&x.f, &g, pg);
		for (i = 0, gshares0 = gshares1 = false; i < k; i++) {
			gshares0 |= pg[i] == pf[0];
			gshares1 |= pg[i] == pf[1];
		}
		found = gshares1 && !gshares0;
	}
	if (!ASSERT_TRUE(found, "found a flow G sharing F's position 1, not 0"))
		return;
	fb_counting_add(&x.f, &g);
	snap_take(&x, &s0);
	emulate(&x.f, true, &fk, 1, -1); /* done=1, cur_old=0 from position 0 */
	fb_counting_recover(&x.f);
	ASSERT_TRUE(
		snap_same_content(&x, &s0),
		"window add j=1: stopped between done=1 and cur_old=c1 (c1 = c0+1): rolled back");
	ASSERT_TRUE(
		fb_bits_test(&x.f, &g),
		"window add j=1: the other flow G still passes fb_bits_test (no false negative)");
	fb_counting_check(&x.f, false, &c);
	ASSERT_TRUE(c.count_ok, "window add j=1: the counter sum is still k x flows");

	/* ADD, j = 0: the add of F2 stops right after journal_begin, before
	 * position 0's cur_old is written: cur_old is what G's add left (0,
	 * on an empty filter), and F2's position 0 is one of G's (counter 1). */
	for (tries = 0, found = false; tries < 200000 && !found; tries++) {
		test_random_flow(&seed, &fk, tries & 1);
		key_pos(&x.f, &fk, pf);
		for (i = 0; i < k; i++)
			found |= pf[0] == pg[i];
	}
	if (ASSERT_TRUE(found, "found a flow F2 whose position 0 is one of G's")) {
		snap_restore(&x, &s0);
		journal_set(&x.f, FB_JOURNAL_ADD, &fk, 0, 0, x.f.cnt_hdr->journal.cur_old,
			    x.f.hdr->nflows);
		fb_counting_recover(&x.f);
		ASSERT_TRUE(snap_same_content(&x, &s0),
			    "window add j=0: stopped after journal_begin, before cur_old (left "
			    "over: 0; "
			    "c0 = 1): nothing changed after recovery");
		ASSERT_TRUE(fb_bits_test(&x.f, &g),
			    "window add j=0: G still passes fb_bits_test (no false negative)");
	}
	snap_free(&s0);
	fake_free(&x);

	/* DELETE, j = 1: F and H present, H holds F's position 0 (counter 2),
	 * only F holds position 1 (counter 1). F's delete stops after
	 * position 0: cur_old = 2, and position 1's counter is 2 - 1. */
	fake_init(&x, FB_LAYOUT_BLOCKED, 8, 1, 4, &seed);
	test_random_flow(&seed, &fk, 1);
	k = key_pos(&x.f, &fk, pf);
	for (tries = 0, found = false; tries < 100000 && !found; tries++) {
		test_random_flow(&seed, &g, tries & 1);
		key_pos(&x.f, &g, pg);
		for (i = 0, gshares0 = gshares1 = false; i < k; i++) {
			gshares0 |= pg[i] == pf[0];
			gshares1 |= pg[i] == pf[1];
		}
		found = gshares0 && !gshares1;
	}
	if (ASSERT_TRUE(found, "found a flow H sharing F's position 0, not 1")) {
		fb_counting_add(&x.f, &g);
		fb_counting_add(&x.f, &fk);
		snap_take(&x, &s0);
		emulate(&x.f, false, &fk, 1, -1);
		fb_counting_recover(&x.f);
		ASSERT_TRUE(snap_same_content(&x, &s0),
			    "window delete j=1: stopped between done=1 and cur_old=c1 (c1 = c0-1): "
			    "rolled back");
		fb_counting_check(&x.f, false, &c);
		ASSERT_TRUE(c.count_ok, "window delete j=1: the counter sum is still k x flows");
		snap_free(&s0);
	}
	fake_free(&x);
}

/* ---------------------------------------------------------------------- */
/* Unit: every crash point of real operations (x86-64)                     */

static sigjmp_buf trap_env;
static volatile long trap_count, trap_stop;
static struct fake *volatile trap_fake;
static void *volatile trap_addr; /* where the store it stopped before would go */

static void trap_protect(int prot)
{
	mprotect(trap_fake->bmem, trap_fake->blen, prot);
	mprotect(trap_fake->cmem, trap_fake->clen, prot);
}

#if defined(__x86_64__)
static bool in_region(void *a, void *base, size_t len)
{
	return (char *)a >= (char *)base && (char *)a < (char *)base + len;
}

#define TRAP_FLAG 0x100
static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	if (!trap_fake || (!in_region(si->si_addr, trap_fake->bmem, trap_fake->blen) &&
			   !in_region(si->si_addr, trap_fake->cmem, trap_fake->clen))) {
		signal(sig, SIG_DFL); /* a real crash: fault again, for real */
		return;
	}
	if (trap_count == trap_stop) {
		trap_addr = si->si_addr;
		siglongjmp(trap_env, 1); /* the process dies before this store */
	}
	trap_count++;
	trap_protect(PROT_READ | PROT_WRITE);
	uc->uc_mcontext.gregs[REG_EFL] |= TRAP_FLAG; /* step over the store */
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	uc->uc_mcontext.gregs[REG_EFL] &= ~(long long)TRAP_FLAG;
	trap_protect(PROT_READ);
}
#endif

/* Run the operation, stopping it before its stop-th store into the
 * filter's memory. Returns true if it ran to the end; *stores is the count
 * of stores made. */
static bool run_until(struct fake *x, bool add, const struct fb_key *key, long stop, long *stores,
		      int *rc)
{
	volatile bool done = false;

	trap_fake = x;
	trap_count = 0;
	trap_stop = stop;
	if (!sigsetjmp(trap_env, 1)) {
		trap_protect(PROT_READ);
		if (add)
			fb_counting_add(&x->f, key);
		else
			*rc = fb_counting_del(&x->f, key);
		done = true;
	}
	trap_protect(PROT_READ | PROT_WRITE);
	*stores = trap_count;
	trap_fake = NULL;
	return done;
}

struct crash_tally {
	long points, fn_states, not_rolled_back, not_clean;
	long in_window; /* of not_rolled_back: stopped before a store of cur_old or done */
	long lost_bits; /* of not_rolled_back: a bit set before the operation is now clear */
	char first[240];
};

/* Bits set over a non-zero counter in the snapshot, clear now: flows that
 * were present before the operation may now miss. */
static bool lost_a_bit(const struct fake *x, const struct snap *s0)
{
	struct fb_store g = x->f;
	__u64 m = mbits(&x->f), p;

	g.blocks = s0->b;
	g.cnt_hdr = s0->c;
	g.cnt = (__u8 *)s0->c + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
	for (p = 0; p < m; p++)
		if (bit_at(&g, p) && fb_counting_get(&g, p) && !bit_at(&x->f, p))
			return true;
	return false;
}

/* Every crash point of one operation: before recovery no counter may be
 * without its bit; after fb_counting_recover the contents must be those
 * before the operation, and check clean. Leaves x as after the operation. */
static void crash_points(struct fake *x, bool add, const struct fb_key *key, struct crash_tally *t)
{
	struct snap s0, s1;
	struct fb_check c;
	long total, stores, stop;
	int rc = 0;

	snap_take(x, &s0);
	if (!run_until(x, add, key, LONG_MAX, &total, &rc) || rc) {
		snap_free(&s0);
		return;
	}
	snap_take(x, &s1);
	for (stop = 0; stop < total; stop++) {
		struct fb_journal j;
		__u64 pos[FB_MAX_K];
		unsigned cur;

		snap_restore(x, &s0);
		if (run_until(x, add, key, stop, &stores, &rc))
			continue; /* cannot happen: total stores are needed */
		t->points++;
		j = x->f.cnt_hdr->journal;
		key_pos(&x->f, key, pos);
		cur = j.done < x->f.hdr->k ? fb_counting_get(&x->f, pos[j.done]) : 0;
		fb_counting_check(&x->f, false, &c);
		t->fn_states += c.missing_bits != 0;
		fb_counting_recover(&x->f);
		if (!snap_same_content(x, &s0)) {
			t->in_window += trap_addr == &x->f.cnt_hdr->journal.cur_old ||
					trap_addr == &x->f.cnt_hdr->journal.done;
			t->lost_bits += lost_a_bit(x, &s0);
			if (!t->not_rolled_back++)
				snprintf(t->first, sizeof(t->first),
					 "%s stopped before store %ld of %ld: journal done=%u "
					 "changed=%#x cur_old=%u, counter at position done %u "
					 "(%u before the operation)",
					 add ? "add" : "delete", stop, total, j.done, j.changed,
					 j.cur_old, cur,
					 j.done < x->f.hdr->k ? cnt_in_snap(x, &s0, pos[j.done])
							      : 0);
		} else {
			fb_counting_check(&x->f, false, &c);
			t->not_clean +=
				c.stale_bits || c.missing_bits || c.journal_dirty || !c.count_ok;
		}
	}
	snap_restore(x, &s1);
	snap_free(&s0);
	snap_free(&s1);
}

static void unit_crash_points(void)
{
	static const struct {
		const char *name;
		__u8 layout, k;
		unsigned bits, background;
	} cfgs[] = {
		{ "blocked 4-bit", FB_LAYOUT_BLOCKED, 8, 4, 40 },
		{ "classic 4-bit", FB_LAYOUT_CLASSIC, 6, 4, 40 },
		{ "blocked 8-bit", FB_LAYOUT_BLOCKED, 8, 8, 40 },
		{ "classic 8-bit", FB_LAYOUT_CLASSIC, 6, 8, 40 },
		{ "blocked 4-bit saturated", FB_LAYOUT_BLOCKED, 8, 4, 600 },
	};
#if defined(__x86_64__)
	struct sigaction sa = { .sa_flags = SA_SIGINFO | SA_NODEFER }, old_segv, old_trap;
	unsigned ci, fi, i;
	char label[600];

	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_segv;
	sigaction(SIGSEGV, &sa, &old_segv);
	sa.sa_sigaction = on_trap;
	sigaction(SIGTRAP, &sa, &old_trap);
	for (ci = 0; ci < sizeof(cfgs) / sizeof(cfgs[0]); ci++) {
		struct crash_tally ta = { 0 }, td = { 0 };
		uint64_t seed = 0xc4a5 + ci;
		struct fake x;
		struct fb_key key;
		long probe_stores;
		int rc;

		fake_init(&x, cfgs[ci].layout, cfgs[ci].k, 1, cfgs[ci].bits, &seed);
		for (i = 0; i < cfgs[ci].background; i++) {
			test_random_flow(&seed, &key, i & 1);
			fb_counting_add(&x.f, &key);
		}
		/* The trap must see the stores at all. */
		test_random_flow(&seed, &key, 0);
		if (!run_until(&x, true, &key, LONG_MAX, &probe_stores, &rc) || probe_stores < 10) {
			test_skip("crash points", "store trapping does not work here");
			fake_free(&x);
			break;
		}
		for (fi = 0; fi < 6; fi++) {
			test_random_flow(&seed, &key, fi & 1);
			crash_points(&x, true, &key, &ta);  /* fresh flow */
			crash_points(&x, true, &key, &ta);  /* again: counters >= 1 */
			crash_points(&x, false, &key, &td); /* delete one of the two */
			crash_points(&x, false, &key, &td); /* and the other */
		}
		snprintf(label, sizeof(label),
			 "%s: %ld crash points of adds: no counter without its bit before "
			 "recovery",
			 cfgs[ci].name, ta.points);
		ASSERT_EQ(ta.fn_states, 0, label);
		snprintf(label, sizeof(label),
			 "%s: %ld crash points of deletes: no counter without its bit before "
			 "recovery",
			 cfgs[ci].name, td.points);
		ASSERT_EQ(td.fn_states, 0, label);
		snprintf(label, sizeof(label),
			 "%s: every crash point of an add rolls back exactly (first bad: %s)",
			 cfgs[ci].name, ta.first[0] ? ta.first : "none");
		ASSERT_EQ(ta.not_rolled_back, 0, label);
		snprintf(label, sizeof(label),
			 "%s: every crash point of a delete rolls back exactly (first bad: %s)",
			 cfgs[ci].name, td.first[0] ? td.first : "none");
		ASSERT_EQ(td.not_rolled_back, 0, label);
		snprintf(label, sizeof(label), "%s: check is clean after each rollback",
			 cfgs[ci].name);
		ASSERT_EQ(ta.not_clean + td.not_clean, 0, label);
		snprintf(label, sizeof(label),
			 "%s: crash points outside the done -> cur_old window all roll back "
			 "exactly",
			 cfgs[ci].name);
		ASSERT_EQ(ta.not_rolled_back - ta.in_window + td.not_rolled_back - td.in_window, 0,
			  label);
		printf("%s: crash points: adds %ld (%ld not rolled back, %ld of them clearing a "
		       "bit another flow needs), deletes %ld (%ld not rolled back)\n",
		       cfgs[ci].name, ta.points, ta.not_rolled_back, ta.lost_bits, td.points,
		       td.not_rolled_back);
		fake_free(&x);
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGTRAP, &old_trap, NULL);
#else
	(void)cfgs;
	(void)run_until;
	(void)crash_points;
	test_skip("crash points", "store trapping is written for x86-64");
#endif
}

int main(void)
{
	double t0 = now();

	unit_journal(FB_LAYOUT_BLOCKED, 4);
	unit_journal(FB_LAYOUT_CLASSIC, 4);
	unit_journal(FB_LAYOUT_BLOCKED, 8);
	unit_journal(FB_LAYOUT_CLASSIC, 8);
	unit_journal_window();
	unit_crash_points();
	printf("crash part: %.2f s\n", now() - t0);
	return test_summary();
}
