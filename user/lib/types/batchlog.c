// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The journal of cuckoo and d-left batches (see batchlog.h): the old
 * contents of what a batch writes, saved before its stores, put back by
 * the next lock holder if its writer was killed. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report.h"
#include "types/batchlog.h"
#include "types/cuckoo_table.h"
#include "types/dleft_table.h"
#include "types/sizing.h"

/* The table a journal writes: its geometry, its bucket size, its bytes
 * from block 0 [lo, hi), its count and (cuckoo) sequence number. */
struct tbl {
	void *geom;
	unsigned shift;
	__u64 lo, hi;
	__u64 *count;
	__u32 *seq;
};

static int tbl_of(const struct fb_store *f, struct tbl *t)
{
	void *geom = (void *)&f->blocks[FB_TYPE_GEOM_BLOCK];

	memset(t, 0, sizeof(*t));
	t->geom = geom;
	if (f->hdr->type == FB_TYPE_CUCKOO) {
		struct fb_cuckoo_geom *g = geom;

		t->shift = fb_cuckoo_bucket_shift(g->fp_bits);
		t->lo = (__u64)g->first_block * FB_BLOCK_BYTES;
		t->hi = t->lo + fb_cuckoo_blocks(g) * FB_BLOCK_BYTES;
		t->count = &g->count;
		t->seq = &g->seq;
		return 0;
	}
	if (f->hdr->type == FB_TYPE_DLEFT) {
		struct fb_dleft_geom *g = geom;

		t->shift = fb_dleft_bucket_shift(g->cell_bits);
		t->lo = (__u64)g->first_block * FB_BLOCK_BYTES;
		t->hi = t->lo + fb_dleft_blocks(g) * FB_BLOCK_BYTES;
		t->count = &g->count;
		return 0;
	}
	return -1;
}

/* The journal: the blocks after the filter's, to the end of its chunks
 * (NULL if there are fewer than two); *cap: bucket records it holds. */
static struct fb_batchlog_hdr *journal(const struct fb_store *f, unsigned shift, size_t *cap)
{
	__u64 lo = (__u64)FB_HDR_BLOCKS + f->hdr->nblocks, hi = fb_store_nblocks(f);
	size_t rec = 8 + (shift > 3 ? 1U << shift : 8);

	if (!f->blocks || hi < lo + 2)
		return NULL;
	*cap = (size_t)((hi - lo - 1) * FB_BLOCK_BYTES / rec);
	return (struct fb_batchlog_hdr *)&f->blocks[lo];
}

static size_t rec_bytes(unsigned shift)
{
	return 8 + (shift > 3 ? 1U << shift : 8);
}

static unsigned char *rec_at(struct fb_batchlog_hdr *j, unsigned shift, size_t i)
{
	return (unsigned char *)(j + 1) + i * rec_bytes(shift);
}

bool fb_batchlog_open(const struct fb_store *f)
{
	struct fb_batchlog_hdr *j;
	struct tbl t;
	size_t cap;

	if (tbl_of(f, &t) || !(j = journal(f, t.shift, &cap)))
		return false;
	return __atomic_load_n(&j->state, __ATOMIC_ACQUIRE) == FB_BATCHLOG_OPEN &&
	       j->magic == FB_BATCHLOG_MAGIC;
}

/* One part of a batch of n flows, flows [through, ...): the old contents
 * of the buckets it writes (ids, nids) journaled, the journal opened, the
 * plan's stores log[from, to) applied in order, then the counts, the
 * journal closed. */
struct part {
	const __u64 *ids;
	size_t nids, from, to, through, n;
	__u64 count, nflows; /* after it */
};

static void put_u64(__u64 *dst, __u64 v, unsigned pace)
{
	__atomic_store_n(dst, v, __ATOMIC_RELEASE);
	if (pace)
		usleep(pace);
}

static void commit(struct fb_store *f, const struct tbl *t, struct fb_batchlog_hdr *j,
		   struct fb_plan *p, bool del, const struct part *pt)
{
	size_t bb = (size_t)1 << t->shift, i;
	unsigned pace = fb_plan_test_pace();

	for (i = 0; i < pt->nids; i++) {
		unsigned char *rec = rec_at(j, t->shift, i);

		memcpy(rec, &pt->ids[i], 8);
		memcpy(rec + 8, p->live + (pt->ids[i] << t->shift), bb);
	}
	j->nrec = (__u32)pt->nids;
	j->shift = (__u8)t->shift;
	j->type = f->hdr->type;
	j->del = del;
	j->count = *t->count;
	j->nflows = f->hdr->nflows;
	j->flows = pt->n;
	j->through = pt->through;
	j->magic = FB_BATCHLOG_MAGIC;
	/* Everything above before the mark (the process dies, the kernel
	 * keeps the pages: compiler order is what matters), the mark before
	 * the table's first store. */
	__atomic_store_n(&j->state, FB_BATCHLOG_OPEN, __ATOMIC_RELEASE);
	fb_plan_apply_range(p, pt->from, pt->to, pace);
	put_u64(t->count, pt->count, pace);
	put_u64(&f->hdr->nflows, pt->nflows, pace);
	__atomic_store_n(&j->state, FB_BATCHLOG_IDLE, __ATOMIC_RELEASE);
}

/* The counts after k more flows added or deleted (saturating, as the
 * planners count). */
static void counts_after(const struct fb_store *f, const struct tbl *t, bool del, __u64 k,
			 struct part *pt)
{
	__u64 c = *t->count, nf = f->hdr->nflows;

	pt->count = del ? (c >= k ? c - k : 0) : c + k;
	pt->nflows = del ? nf - (nf < k ? nf : k) : fb_flows_add(nf, k, f->hdr->nblocks);
}

/* The table's bucket a log entry writes (its id), or -1 for a store
 * outside it (the sequence number, a chain's note). */
static __s64 bucket_of(const struct tbl *t, const struct fb_plan *p, size_t k)
{
	__u64 off = (__u64)((unsigned char *)fb_plan_store_addr(&p->log[k]) - p->live);

	if ((unsigned char *)fb_plan_store_addr(&p->log[k]) < p->live || off < t->lo ||
	    off >= t->hi)
		return -1;
	return (__s64)(off >> t->shift);
}

/* Flows [from, ...) whose new buckets (not stamped part) fit in cap, the
 * first at least: their ids into ids, stamped. Returns the end. */
static size_t cut(const struct tbl *t, const struct fb_plan *p, const size_t *marks, size_t from,
		  size_t n, size_t cap, unsigned *stamp, unsigned part, __u64 *ids, size_t *nids)
{
	size_t to = from, k;

	for (*nids = 0; to < n; to++) {
		size_t more = 0;

		/* (A bucket the flow writes twice is counted twice here:
		 * parts end a little early, never late.) */
		for (k = marks[to]; k < marks[to + 1]; k++) {
			__s64 id = bucket_of(t, p, k);

			more += id >= 0 && stamp[fb_plan_slot(p, (__u64)id << t->shift)] != part;
		}
		if (*nids + more > cap)
			break;
		for (k = marks[to]; k < marks[to + 1]; k++) {
			__s64 id = bucket_of(t, p, k);
			size_t sl;

			if (id < 0 || stamp[sl = fb_plan_slot(p, (__u64)id << t->shift)] == part)
				continue;
			stamp[sl] = part;
			ids[(*nids)++] = (__u64)id;
		}
	}
	return to;
}

/* More buckets than the journal holds: the plan applied in parts, in the
 * batch's order, each the flows whose buckets fit, each all or nothing.
 * The parts' stores are the whole plan's, in its order (the sequence
 * numbers of its chains rise across them). */
static int write_parts(struct fb_store *f, const struct tbl *t, struct fb_batchlog_hdr *j,
		       struct fb_plan *p, bool del, const size_t *marks, size_t n, size_t cap)
{
	unsigned *stamp = calloc(p->cap, sizeof(*stamp)), part = 0;
	__u64 *ids = malloc(cap * sizeof(*ids));
	size_t from = 0;
	int rc = 0;

	if (!stamp || !ids)
		rc = -2;
	while (!rc && from < n) {
		struct part pt = { .ids = ids, .through = from, .n = n };
		size_t to = cut(t, p, marks, from, n, cap, stamp, ++part, ids, &pt.nids);

		if (to == from) {
			fb_report_err("filter '%s': one flow's relocation writes more buckets than "
				      "the journal holds (%zu)",
				      f->name, cap);
			rc = -4;
			break;
		}
		pt.from = marks[from];
		pt.to = marks[to];
		counts_after(f, t, del, to - from, &pt);
		commit(f, t, j, p, del, &pt);
		from = to;
	}
	free(stamp);
	free(ids);
	return rc;
}

/* A type's plan of a batch on its geometry (fb_cuckoo_plan_add() and the
 * like). */
typedef int (*plan_fn)(struct fb_plan *p, void *geom, const __u64 *h, size_t n,
		       struct fb_batch_err *err);

static int cuckoo_add(struct fb_plan *p, void *g, const __u64 *h, size_t n,
		      struct fb_batch_err *err)
{
	return fb_cuckoo_plan_add(p, g, h, n, err);
}

static int cuckoo_del(struct fb_plan *p, void *g, const __u64 *h, size_t n,
		      struct fb_batch_err *err)
{
	return fb_cuckoo_plan_del(p, g, h, n, err);
}

static int dleft_add(struct fb_plan *p, void *g, const __u64 *h, size_t n, struct fb_batch_err *err)
{
	return fb_dleft_plan_add(p, g, h, n, err);
}

static int dleft_del(struct fb_plan *p, void *g, const __u64 *h, size_t n, struct fb_batch_err *err)
{
	return fb_dleft_plan_del(p, g, h, n, err);
}

static int write_batch(struct fb_store *f, bool del, plan_fn plan, const __u64 *h, size_t n,
		       struct fb_batch_err *err, const struct fb_batch_ready *ready)
{
	struct fb_batchlog_hdr *j;
	size_t cap = 0, *marks;
	struct fb_plan p;
	struct tbl t;
	int rc;

	if (tbl_of(f, &t))
		return -3;
	/* Left open by a writer killed without the lock's recovery after
	 * it (a filter opened by a path that does not lock): rolled back
	 * first, as fb_store_lock() would. */
	if (fb_batchlog_recover(f, true, false) < 0)
		return -4;
	j = journal(f, t.shift, &cap);
	marks = malloc((n + 1) * sizeof(*marks));
	if (!marks)
		return -2;
	fb_plan_init(&p, f->blocks, t.shift);
	p.marks = marks;
	rc = plan(&p, t.geom, h, n, err);
	/* The planners' last store is the table's count. */
	if (!rc && (!p.nlog || fb_plan_store_addr(&p.log[p.nlog - 1]) != t.count))
		rc = -2;
	if (!rc && !j) {
		fb_report_err("filter '%s' has no room for the journal of its batches (its array "
			      "ends with its table): `flowbloom load %s FILE --replace` makes it "
			      "again; nothing changed",
			      f->name, f->name);
		rc = -4;
	}
	if (!rc && ready && ready->fn && ready->fn(f, ready->arg))
		rc = -4;
	if (!rc && p.used <= cap) {
		struct part pt = { .n = n, .to = p.nlog - 1 };
		__u64 *ids = malloc((p.used ? p.used : 1) * sizeof(*ids));
		size_t i;

		for (i = 0; ids && i < p.cap; i++)
			if (p.ids[i])
				ids[pt.nids++] = p.ids[i] - 1;
		counts_after(f, &t, del, n, &pt);
		pt.ids = ids;
		if (ids)
			commit(f, &t, j, &p, del, &pt);
		rc = ids ? 0 : -2;
		free(ids);
	} else if (!rc) {
		marks[n] = p.nlog - 1;
		rc = write_parts(f, &t, j, &p, del, marks, n, cap);
	}
	fb_plan_free(&p);
	free(marks);
	return rc;
}

/* One aligned 4-byte store a word: each slot or cell is old or new, never
 * torn (buckets are 4 to 32 bytes). */
static void put_bucket(unsigned char *dst, const unsigned char *src, size_t bb, unsigned pace)
{
	size_t w;

	for (w = 0; w < bb; w += 4) {
		__u32 v;

		memcpy(&v, src + w, 4);
		__atomic_store_n((__u32 *)(dst + w), v, __ATOMIC_RELEASE);
	}
	if (pace)
		usleep(pace);
}

int fb_batchlog_recover(struct fb_store *f, bool note, bool drop)
{
	struct fb_batchlog_hdr *j;
	unsigned char *base = (unsigned char *)f->blocks;
	unsigned pace = fb_plan_test_pace();
	struct tbl t;
	size_t cap, i, bb;
	__u32 seq = 0;

	if (!fb_batchlog_open(f) || tbl_of(f, &t) || !(j = journal(f, t.shift, &cap)))
		return 0;
	bb = (size_t)1 << t.shift;
	for (i = 0; j->shift == t.shift && j->type == f->hdr->type && j->nrec <= cap && i < j->nrec;
	     i++) {
		__u64 id;

		memcpy(&id, rec_at(j, t.shift, i), 8);
		if (id >= t.hi >> t.shift || id < t.lo >> t.shift)
			break;
	}
	if (j->shift != t.shift || j->type != f->hdr->type || j->nrec > cap || i < j->nrec ||
	    j->through > j->flows) {
		fb_report_err(
			"filter '%s': the journal of a batch a killed writer left is damaged: "
			"`flowbloom check %s --repair` drops it%s",
			f->name, f->name, drop ? " (dropped)" : "");
		if (drop)
			__atomic_store_n(&j->state, FB_BATCHLOG_IDLE, __ATOMIC_RELEASE);
		return -1;
	}
	/* Buckets of a cuckoo table are put back in any order: a flow a
	 * chain moved may be in neither of its buckets meanwhile, so probes
	 * answer maybe (seq odd) until all are written. Odd from a number
	 * beyond any it had, even after: a probe never sees it go back. */
	if (t.seq) {
		seq = __atomic_load_n(t.seq, __ATOMIC_ACQUIRE) | 1;
		__atomic_store_n(t.seq, seq, __ATOMIC_RELEASE);
	}
	for (i = 0; i < j->nrec; i++) {
		const unsigned char *rec = rec_at(j, t.shift, i);
		__u64 id;

		memcpy(&id, rec, 8);
		put_bucket(base + (id << t.shift), rec + 8, bb, pace);
	}
	__atomic_store_n(t.count, j->count, __ATOMIC_RELAXED);
	__atomic_store_n(&f->hdr->nflows, j->nflows, __ATOMIC_RELAXED);
	if (t.seq)
		__atomic_store_n(t.seq, seq + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&j->state, FB_BATCHLOG_IDLE, __ATOMIC_RELEASE);
	if (note)
		fb_batch_rolled_back(f, j->del, j->through, j->flows);
	return 1;
}

void fb_batch_rolled_back(const struct fb_store *f, bool del, __u64 through, __u64 flows)
{
	if (through)
		fb_report(FB_REPORT_NOTE,
			  "filter '%s': rolled back the part of %s a killed writer left half "
			  "applied: the first %llu of its %llu flows are in, the others not (a "
			  "batch that large goes in parts, each whole)",
			  f->name, del ? "a del" : "an add", (unsigned long long)through,
			  (unsigned long long)flows);
	else
		fb_report(FB_REPORT_NOTE,
			  "filter '%s': rolled back %s of %llu flows a killed writer left half "
			  "applied: none of it is in",
			  f->name, del ? "a del" : "an add", (unsigned long long)flows);
}

int fb_batchlog_add(struct fb_store *f, const __u64 *h, size_t n, struct fb_batch_err *err,
		    const struct fb_batch_ready *ready)
{
	return write_batch(f, false, f->hdr->type == FB_TYPE_CUCKOO ? cuckoo_add : dleft_add, h, n,
			   err, ready);
}

int fb_batchlog_del(struct fb_store *f, const __u64 *h, size_t n, struct fb_batch_err *err)
{
	return write_batch(f, true, f->hdr->type == FB_TYPE_CUCKOO ? cuckoo_del : dleft_del, h, n,
			   err, NULL);
}
