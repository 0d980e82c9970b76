// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The export file format's one writer (`export`): a filter, under a shared
 * lock, to a file made aside and renamed over its target (safefile.c),
 * compressed (fbz.h) unless --plain. Field by field as fbx_format.h says;
 * the generations' section is fbx_gens.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/file.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include "fleet/fbx.h"
#include "fleet/fbz.h"
#include "report.h"
#include "rules/exactcheck.h"
#include "store/exact.h"
#include "safefile.h"
#include "store/gens.h"
#include "store/store.h"
#include "types/counting.h"
#include "types/ftype.h"

static int put(FILE *out, const void *p, size_t n, uLong *crc)
{
	*crc = crc32(*crc, p, n);
	return fwrite(p, 1, n, out) == n ? 0 : -1;
}

static void encode_head(__u8 *b, const struct fb_header *h, const struct fb_prefixes *px)
{
	memset(b, 0, FB_FBX_BITS_OFF);
	memcpy(b + FB_FBX_OFF_MAGIC, FB_FBX_MAGIC, 8);
	fb_le_put32(b + FB_FBX_OFF_VERSION, FB_FBX_VERSION);
	fb_le_put32(b + FB_FBX_OFF_HDR_SIZE, FB_FBX_HDR_SIZE);
	b[FB_FBX_OFF_LAYOUT] = h->layout;
	b[FB_FBX_OFF_HASH] = h->hash;
	b[FB_FBX_OFF_K] = h->k;
	b[FB_FBX_OFF_COUNTER_BITS] = h->counter_bits;
	b[FB_FBX_OFF_ACTION] = h->action;
	b[FB_FBX_OFF_CONFIRM] = h->confirm;
	b[FB_FBX_OFF_TYPE] = h->type;
	b[FB_FBX_OFF_FLAGS] = h->flags;
	fb_le_put32(b + FB_FBX_OFF_NBLOCKS, h->nblocks);
	fb_le_put32(b + FB_FBX_OFF_KINDS, h->kinds);
	fb_le_put64(b + FB_FBX_OFF_KEY, h->key[0]);
	fb_le_put64(b + FB_FBX_OFF_KEY + 8, h->key[1]);
	fb_le_put64(b + FB_FBX_OFF_FLOWS, h->nflows);
	fb_le_put64(b + FB_FBX_OFF_CAPACITY, h->capacity);
	fb_le_put32(b + FB_FBX_OFF_FP_PPB, h->fp_ppb);
	memcpy(b + FB_FBX_OFF_PREFIXES, px, sizeof(*px));
}

/* The exact sets: every rule key of the hash set, with its count (the
 * section starts with how many). */
struct sets_out {
	FILE *out;
	uLong *crc;
	__u64 n; /* to count, or still to write */
	bool writing;
};

static int set_rule(const struct fb_key *k, __u32 copies, void *arg)
{
	struct sets_out *o = arg;
	__u8 rec[FB_FBX_RULE_BYTES];

	if (!o->writing) {
		o->n++;
		return 0;
	}
	if (!o->n)
		return -1; /* the set changed under us: writers hold the lock */
	memcpy(rec, k, sizeof(*k));
	fb_le_put32(rec + sizeof(*k), copies);
	o->n--;
	return put(o->out, rec, sizeof(rec), o->crc);
}

static int write_sets(FILE *out, const struct fb_store *f, uLong *crc)
{
	struct sets_out o = { out, crc, 0, false };
	__u8 num[8];

	/* Counted, then written: both walks read the sets in batches. */
	if (fb_exact_each(f, set_rule, &o))
		return -1;
	fb_le_put64(num, o.n);
	if (put(out, num, 8, crc))
		return -1;
	o.writing = true;
	if (fb_exact_each(f, set_rule, &o))
		return -1;
	return o.n ? -1 : 0; /* the set changed under us: writers hold the lock */
}

/* Filter f (locked by the caller) to out, with its live generations gv.
 * 0, or -1 with errno. */
static int write_filter(const struct fb_store *f, const struct fb_gen_views *gv, FILE *out)
{
	const struct fb_header *h = f->hdr;
	__u8 head[FB_FBX_BITS_OFF], word[8], tail[4];
	uLong crc = crc32(0, NULL, 0);
	size_t i;

	encode_head(head, h, fb_store_prefixes(f));
	fb_le_put32(head + FB_FBX_OFF_NGENS, gv->n);
	if (put(out, head, sizeof(head), &crc))
		return -1;
	for (i = 0; i < (size_t)h->nblocks * FB_BLOCK_WORDS; i++) {
		fb_le_put64(word,
			    f->blocks[FB_HDR_BLOCKS + i / FB_BLOCK_WORDS].w[i % FB_BLOCK_WORDS]);
		if (put(out, word, 8, &crc))
			return -1;
	}
	if (f->cnt_hdr && put(out, f->cnt, fb_fbx_counter_bytes(h->nblocks, h->counter_bits), &crc))
		return -1;
	if (h->confirm && write_sets(out, f, &crc))
		return -1;
	if (gv->n && fb_fbx_write_gens(gv, out, &crc))
		return -1;
	fb_le_put32(tail, (__u32)crc);
	return fwrite(tail, 1, 4, out) == 4 ? 0 : -1;
}

/* The exact sets hold what the filter holds, as `check` sees it (else
 * said, with what to do). */
static bool exact_agree(struct fb_store *f)
{
	struct fb_exact_check ex;

	if (fb_exact_check(f, false, &ex))
		return false;
	if (!ex.not_held && !ex.over && !ex.trie_missing && !ex.trie_stale && ex.count_ok)
		return true;
	fb_report_err("the exact sets of '%s' disagree with the filter (a killed add or del): "
		      "flowbloom check %s says how, --repair mends what it can; nothing exported",
		      f->name, f->name);
	return false;
}

int fb_fbx_export(const char *name, const char *file, mode_t mode, bool plain)
{
	struct fb_safefile sf = { .out = NULL };
	struct fb_gen_views gv;
	struct fb_store f;
	bool to_stdout = !strcmp(file, "-");
	FILE *raw = NULL, *out = NULL;
	bool gv_open = false;
	int rc = -1;

	if (fb_store_open(name, &f))
		return -1;
	/* Writers out while we copy: the file is one consistent state. */
	if (fb_store_flock(&f, LOCK_SH))
		goto out;
	/* Rules with a lifetime: the generations live now. */
	if (fb_gens_views_open(&f, &gv) < 0)
		goto unlock;
	gv_open = true;
	/* A writer killed half way left a state no reader accepts (the
	 * counters, the filter's or a generation's, a cuckoo relocation or a
	 * cuckoo or d-left batch half done): repair it first. */
	if (fb_counting_half_done(&f, &gv) || fb_ftype_seq_odd(&f) || fb_batchlog_open(&f)) {
		fb_report_err("'%s' holds a write a killed writer left half done: flowbloom check "
			      "--repair %s first; nothing exported",
			      name, name);
		goto unlock;
	}
	/* Nor exact sets that disagree with the filter (a killed add or
	 * del): no reader accepts them either (fbx_check.c). */
	if (f.hdr->confirm && !exact_agree(&f))
		goto unlock;
	/* Aside, then renamed over FILE (safefile.c): never a half-written
	 * file, never through a planted symlink. */
	if (!to_stdout && fb_safefile_open(&sf, file, mode))
		goto unlock;
	raw = to_stdout ? stdout : sf.out;
	/* Compressed unless plain (fbz.h): a stream layer between the format
	 * and the file; the bytes and the CRC above it are the plain ones. */
	out = plain ? raw : fb_fbz_writer(raw);
	if (!out)
		goto unlock;
	if (write_filter(&f, &gv, out))
		goto ioerr;
	if (out != raw) {
		FILE *z = out;

		out = raw;
		if (fclose(z)) /* the end of the compressed stream */
			goto ioerr;
	}
	if (to_stdout && fflush(stdout))
		goto ioerr;
	rc = to_stdout ? 0 : fb_safefile_commit(&sf); /* failure printed, old FILE intact */
	goto unlock;
ioerr:
	fb_report_err("%s: write failed: %s", file, strerror(errno));
unlock:
	if (out && out != raw)
		fclose(out);
	if (gv_open)
		fb_gens_views_close(&gv);
	if (sf.out)
		fb_safefile_abort(&sf);
	fb_store_unlock(&f);
out:
	fb_store_close(&f);
	return rc;
}

int fb_fbx_put(FILE *out, const void *p, size_t n, unsigned long *crc)
{
	uLong c = *crc;
	int rc = put(out, p, n, &c);

	*crc = c;
	return rc;
}
