// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The batch journal of a counting filter (see counting_log.h): a part of
 * a batch opened and closed, and rolled back by the next lock holder if
 * its writer was killed. */
#include <string.h>
#include <unistd.h>
#include "report.h"
#include "types/counting_int.h"
#include "types/batchlog.h"
#include "types/counting_log.h"
#include "types/plan.h"
#include "store/store.h"

struct fb_cntlog *fb_cntlog_cur;

static size_t data_bytes(const struct fb_store *f)
{
	return fb_counting_data_bytes(fb_header_mbits(f->hdr), f->hdr->counter_bits);
}

/* The journal after the counters, NULL if the map ends with them. */
static struct fb_cntlog_hdr *journal(const struct fb_store *f, size_t *cap)
{
	size_t at = FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES + data_bytes(f);

	*cap = 0;
	if (!f->cnt_hdr || f->cnt_bytes < at + 2 * FB_BLOCK_BYTES)
		return NULL;
	*cap = (f->cnt_bytes - at - FB_BLOCK_BYTES) / sizeof(struct fb_cntlog_rec);
	return (struct fb_cntlog_hdr *)((__u8 *)f->cnt_hdr + at);
}

size_t fb_cntlog_cap(const struct fb_store *f)
{
	size_t cap;

	journal(f, &cap);
	return cap;
}

size_t fb_cntlog_part_flows(const struct fb_store *f)
{
	return fb_cntlog_cap(f) / (f->hdr->k ? f->hdr->k : 1);
}

bool fb_cntlog_begin(struct fb_store *f, struct fb_cntlog *l, __u32 op, size_t flows,
		     size_t through)
{
	struct fb_cntlog_hdr *h;
	size_t cap;

	if (!(h = journal(f, &cap)) || cap < f->hdr->k)
		return false;
	memset(l->seen, 0xff, sizeof(l->seen));
	l->f = f;
	l->h = h;
	l->rec = (struct fb_cntlog_rec *)(h + 1);
	l->n = 0;
	l->cap = cap > UINT32_MAX ? UINT32_MAX : (__u32)cap;
	l->off = false;
	l->pace = fb_plan_test_pace();
	h->nrec = 0;
	h->op = op;
	h->nflows = f->hdr->nflows;
	h->flows = flows;
	h->through = through;
	h->magic = FB_CNTLOG_MAGIC;
	/* Everything above before the mark, the mark before the first
	 * counter changes (a kill keeps the pages: compiler order is what
	 * matters). */
	__atomic_store_n(&h->state, FB_CNTLOG_OPEN, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fb_cntlog_cur = l;
	return true;
}

void fb_cntlog_end(struct fb_cntlog *l)
{
	unsigned pace = fb_plan_test_pace();

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* A kill here, the part applied and the journal open, rolls the
	 * whole part back: the test pause lets tests reach it. */
	if (pace)
		usleep(pace);
	__atomic_store_n(&l->h->state, FB_CNTLOG_IDLE, __ATOMIC_RELEASE);
	fb_cntlog_cur = NULL;
}

bool fb_cntlog_open(const struct fb_store *f)
{
	struct fb_cntlog_hdr *h;
	size_t cap;

	return (h = journal(f, &cap)) &&
	       __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == FB_CNTLOG_OPEN &&
	       h->magic == FB_CNTLOG_MAGIC;
}

/* Each bit of the counters in word w as its counter says: set where it is
 * above 0, cleared where it is 0. */
static void bits_of_word(struct fb_store *f, __u64 w)
{
	unsigned bits = f->cnt_hdr->bits, per = 64 / bits, i;
	bool wide = bits == 8;

	for (i = 0; i < per; i++) {
		__u64 p = w * per + i;

		if (fb_cnt_read(f->cnt, wide, p))
			fb_cnt_bit_set(f->blocks, p);
		else if (fb_block_test_bit(&f->blocks[fb_bit_block(p)], p))
			fb_cnt_bit_clear(f->blocks, p);
	}
}

int fb_cntlog_recover(struct fb_store *f, bool drop)
{
	unsigned pace = fb_plan_test_pace();
	struct fb_cntlog_rec *rec;
	struct fb_cntlog_hdr *h;
	size_t cap, i, words = data_bytes(f) / 8;

	if (!fb_cntlog_open(f) || !(h = journal(f, &cap)))
		return 0;
	rec = (struct fb_cntlog_rec *)(h + 1);
	for (i = 0; h->nrec <= cap && i < h->nrec && rec[i].word < words; i++)
		;
	if (h->nrec > cap || i < h->nrec || h->through > h->flows ||
	    (h->op != FB_JOURNAL_ADD && h->op != FB_JOURNAL_DEL)) {
		fb_report_err("filter '%s': the journal of a batch a killed writer left is "
			      "damaged: `flowbloom check %s --repair` drops it%s",
			      f->name, f->name, drop ? " (dropped)" : "");
		if (drop)
			__atomic_store_n(&h->state, FB_CNTLOG_IDLE, __ATOMIC_RELEASE);
		return -1;
	}
	/* The counters first, newest record first (a word saved twice, its
	 * oldest contents last): the data path does not read them. Then the
	 * bits, each as its counter now says: a bit whose counter is back
	 * above 0 was never cleared for a flow held before, and one cleared
	 * now has a counter of 0 (no flow held needs it). Killed here, the
	 * journal is still open and the next lock holder does it again. */
	for (i = h->nrec; i-- > 0;) {
		__atomic_store_n(&((__u64 *)f->cnt)[rec[i].word], rec[i].old, __ATOMIC_RELAXED);
		if (pace)
			usleep(pace);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < h->nrec; i++)
		bits_of_word(f, rec[i].word);
	__atomic_store_n(&f->hdr->nflows, h->nflows, __ATOMIC_RELEASE);
	/* The flow the per-flow journal may name is part of what was put
	 * back. */
	FB_JOURNAL_STORE(f->cnt_hdr->journal.op, FB_JOURNAL_IDLE);
	__atomic_store_n(&h->state, FB_CNTLOG_IDLE, __ATOMIC_RELEASE);
	fb_batch_rolled_back(f, h->op == FB_JOURNAL_DEL, h->through, h->flows);
	return 1;
}
