// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The export file format: one writer, one reader, import (see fbx.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include "fleet/fbx.h"
#include "fleet/fbz.h"
#include "report.h"
#include "rules/rules.h"
#include "rules/flow.h"
#include "safefile.h"
#include "store/exact.h"
#include "store/gens.h"
#include "store/jiffies.h"
#include "store/pintree.h"
#include "store/store.h"
#include "types/counting.h"
#include "types/ftype.h"
#include "types/sizing.h"

static void put32(__u8 *p, __u32 v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put64(__u8 *p, __u64 v)
{
	put32(p, (__u32)v);
	put32(p + 4, (__u32)(v >> 32));
}

static __u32 get32(const __u8 *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

static __u64 get64(const __u8 *p)
{
	return get32(p) | (__u64)get32(p + 4) << 32;
}

/* -------------------------------------------------------------- writing */

static int put(FILE *out, const void *p, size_t n, uLong *crc)
{
	*crc = crc32(*crc, p, n);
	return fwrite(p, 1, n, out) == n ? 0 : -1;
}

static void encode_head(__u8 *b, const struct fb_header *h, const struct fb_prefixes *px)
{
	memset(b, 0, FB_FBX_BITS_OFF);
	memcpy(b + FB_FBX_OFF_MAGIC, FB_FBX_MAGIC, 8);
	put32(b + FB_FBX_OFF_VERSION, FB_FBX_VERSION);
	put32(b + FB_FBX_OFF_HDR_SIZE, FB_FBX_HDR_SIZE);
	b[FB_FBX_OFF_LAYOUT] = h->layout;
	b[FB_FBX_OFF_HASH] = h->hash;
	b[FB_FBX_OFF_K] = h->k;
	b[FB_FBX_OFF_COUNTER_BITS] = h->counter_bits;
	b[FB_FBX_OFF_ACTION] = h->action;
	b[FB_FBX_OFF_CONFIRM] = h->confirm;
	b[FB_FBX_OFF_TYPE] = h->type;
	b[FB_FBX_OFF_FLAGS] = h->flags;
	put32(b + FB_FBX_OFF_NBLOCKS, h->nblocks);
	put32(b + FB_FBX_OFF_KINDS, h->kinds);
	put64(b + FB_FBX_OFF_KEY, h->key[0]);
	put64(b + FB_FBX_OFF_KEY + 8, h->key[1]);
	put64(b + FB_FBX_OFF_FLOWS, h->nflows);
	put64(b + FB_FBX_OFF_CAPACITY, h->capacity);
	put32(b + FB_FBX_OFF_FP_PPB, h->fp_ppb);
	memcpy(b + FB_FBX_OFF_PREFIXES, px, sizeof(*px));
}

/* The exact sets: every rule key of the hash set, with its count (the
 * section starts with how many). */
static int write_sets(FILE *out, const struct fb_store *f, uLong *crc)
{
	struct fb_key key, next, *prev = NULL;
	__u8 rec[FB_FBX_RULE_BYTES], num[8];
	__u64 n = 0;
	__u32 v;

	while (!bpf_map_get_next_key(f->set_fd[0], prev, &next)) {
		n++;
		key = next;
		prev = &key;
	}
	put64(num, n);
	if (put(out, num, 8, crc))
		return -1;
	prev = NULL;
	while (n && !bpf_map_get_next_key(f->set_fd[0], prev, &next)) {
		if (bpf_map_lookup_elem(f->set_fd[0], &next, &v))
			v = 0;
		memcpy(rec, &next, sizeof(next));
		put32(rec + sizeof(next), v);
		if (put(out, rec, sizeof(rec), crc))
			return -1;
		n--;
		key = next;
		prev = &key;
	}
	return n ? -1 : 0; /* the set changed under us: writers hold the lock */
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
	put32(head + FB_FBX_OFF_NGENS, gv->n);
	if (put(out, head, sizeof(head), &crc))
		return -1;
	for (i = 0; i < (size_t)h->nblocks * FB_BLOCK_WORDS; i++) {
		put64(word, f->blocks[FB_HDR_BLOCKS + i / FB_BLOCK_WORDS].w[i % FB_BLOCK_WORDS]);
		if (put(out, word, 8, &crc))
			return -1;
	}
	if (f->cnt_hdr && put(out, f->cnt, fb_fbx_counter_bytes(h->nblocks, h->counter_bits), &crc))
		return -1;
	if (h->confirm && write_sets(out, f, &crc))
		return -1;
	if (gv->n && fb_fbx_write_gens(gv, out, &crc))
		return -1;
	put32(tail, (__u32)crc);
	return fwrite(tail, 1, 4, out) == 4 ? 0 : -1;
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
	/* A writer killed half way left a state no reader accepts (the
	 * counters or a cuckoo relocation half done): repair it first. */
	if ((f.cnt_hdr && f.cnt_hdr->journal.op != FB_JOURNAL_IDLE) || fb_ftype_seq_odd(&f)) {
		fb_report_err("'%s' holds a write a killed writer left half done: flowbloom check "
			      "--repair %s first; nothing exported",
			      name, name);
		goto unlock;
	}
	/* Aside, then renamed over FILE (safefile.c): never a half-written
	 * file, never through a planted symlink. */
	if (!to_stdout && fb_safefile_open(&sf, file, mode))
		goto unlock;
	/* Rules with a lifetime: the generations live now. */
	if (fb_gens_views_open(&f, &gv) < 0)
		goto unlock;
	gv_open = true;
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

/* -------------------------------------------------------------- reading */

static int bad(struct fb_fbx_in *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct fb_fbx_in *in, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(in->why, sizeof(in->why), fmt, ap);
	va_end(ap);
	return -1;
}

static int rd(struct fb_fbx_in *in, void *p, size_t n)
{
	if (fread(p, 1, n, in->f) != n)
		return -1;
	in->crc = crc32(in->crc, p, n);
	return 0;
}

/* Truncated, or a read error: which (a compressed stream says why). */
static int short_read(struct fb_fbx_in *in)
{
	return bad(in, "%s", fb_fbz_why(in->f) ?: ferror(in->f) ? "read error" : "truncated");
}

/* The prefix-length lists: at most FB_MAX_LENGTHS each, each length one
 * of its family (IPv4 lists count from 96), none twice. */
int fb_fbx_check_lengths(struct fb_fbx_in *in, const struct fb_prefixes *px)
{
	int l, i, j;

	for (l = 0; l < FB_PFX_NR; l++) {
		const struct fb_lengths *ls = &px->list[l];
		int lo = fb_prefix_list_family(l) == FB_FAMILY_IPV4 ? 96 : 0;

		if (ls->n > FB_MAX_LENGTHS)
			return bad(in, "bad prefix-length table (%u lengths in a list, at most %d)",
				   ls->n, FB_MAX_LENGTHS);
		for (i = 0; i < ls->n; i++) {
			if (ls->len[i] < lo || ls->len[i] > 128)
				return bad(in, "bad prefix length %d in the %s list",
					   fb_prefix_list_written(l, ls->len[i]),
					   fb_rules_prefix_list_name(l));
			for (j = 0; j < i; j++)
				if (ls->len[j] == ls->len[i])
					return bad(in, "prefix length listed twice");
		}
	}
	return 0;
}

/* The rule shapes (flowbloom/mask.h): valid, distinct, zero-terminated
 * with zeros after, and there exactly when the kinds say so. */
int fb_fbx_check_masks(struct fb_fbx_in *in, const struct fb_prefixes *px, __u32 kinds)
{
	int i, j;

	for (i = 0; i < FB_MAX_MASKS; i++) {
		__u32 d = fb_mask_get(px->masks, i);

		if (!d)
			break;
		if (!fb_mask_valid(d))
			return bad(in, "bad rule shape %d in the shape table", i + 1);
		for (j = 0; j < i; j++)
			if (fb_mask_get(px->masks, j) == d)
				return bad(in, "a rule shape listed twice");
	}
	for (j = i; j < FB_MAX_MASKS; j++)
		if (fb_mask_get(px->masks, j))
			return bad(in, "bad rule-shape table (an entry after its end)");
	if (!!(kinds & FB_KINDF(FB_KIND_MASK)) != (i > 0))
		return bad(in, "the rule-shape table and the rule kinds disagree");
	return 0;
}

/* Every header field (the bytes before the bits), into in->h and in->px. */
static int decode_head(struct fb_fbx_in *in, const __u8 *b)
{
	struct fb_header *h = &in->h;
	__u32 ok_kinds = FB_KINDF(FB_KIND_FLOW) | FB_KINDF(FB_KIND_SRC) | FB_KINDF(FB_KIND_DST) |
			 FB_KINDF(FB_KIND_MASK);

	if (memcmp(b + FB_FBX_OFF_MAGIC, FB_FBX_MAGIC, 8))
		return bad(in, "not a flowbloom export (bad magic)");
	if (get32(b + FB_FBX_OFF_VERSION) != FB_FBX_VERSION)
		return bad(in, "unsupported format version %u", get32(b + FB_FBX_OFF_VERSION));
	if (get32(b + FB_FBX_OFF_HDR_SIZE) != FB_FBX_HDR_SIZE)
		return bad(in, "unexpected header size");
	memset(h, 0, sizeof(*h));
	h->magic = FB_MAGIC;
	h->version = FB_VERSION;
	h->layout = b[FB_FBX_OFF_LAYOUT];
	h->hash = b[FB_FBX_OFF_HASH];
	h->k = b[FB_FBX_OFF_K];
	h->counter_bits = b[FB_FBX_OFF_COUNTER_BITS];
	h->action = b[FB_FBX_OFF_ACTION];
	h->confirm = b[FB_FBX_OFF_CONFIRM];
	h->type = b[FB_FBX_OFF_TYPE];
	h->flags = b[FB_FBX_OFF_FLAGS];
	h->nblocks = get32(b + FB_FBX_OFF_NBLOCKS);
	h->kinds = get32(b + FB_FBX_OFF_KINDS);
	h->key[0] = get64(b + FB_FBX_OFF_KEY);
	h->key[1] = get64(b + FB_FBX_OFF_KEY + 8);
	h->nflows = get64(b + FB_FBX_OFF_FLOWS);
	h->capacity = get64(b + FB_FBX_OFF_CAPACITY);
	h->fp_ppb = get32(b + FB_FBX_OFF_FP_PPB);
	memcpy(&in->px, b + FB_FBX_OFF_PREFIXES, sizeof(in->px));
	if (!h->nblocks || h->nblocks > FB_MAX_BLOCKS)
		return bad(in, "bad number of blocks %u (1 to %u)", h->nblocks, FB_MAX_BLOCKS);
	if (h->type >= FB_TYPE_MAX)
		return bad(in, "unknown filter type %u", h->type);
	if (h->type) {
		/* Another type: no Bloom geometry (its own is in the bits,
		 * checked with the content), no counters, no flags. */
		if (h->layout || h->k || h->counter_bits)
			return bad(in, "bad geometry");
		if (h->flags)
			return bad(in, "unknown header flags");
	} else {
		if ((h->layout != FB_LAYOUT_BLOCKED && h->layout != FB_LAYOUT_CLASSIC) || !h->k ||
		    h->k > FB_MAX_K)
			return bad(in, "bad geometry");
		if (h->counter_bits != 0 && h->counter_bits != 4 && h->counter_bits != 8)
			return bad(in, "bad counter width");
		if (h->flags & ~FB_HDRF_NFLOWS_ESTIMATE)
			return bad(in, "unknown header flags");
	}
	if (h->hash != FB_HASH_SIPHASH13 && h->hash != FB_HASH_SIPHASH24 && h->hash != FB_HASH_NH &&
	    h->hash != FB_HASH_NHK)
		return bad(in, "unknown hash algorithm %u", h->hash);
	if (h->action < FB_ACTION_DROP || h->action > FB_ACTION_MONITOR)
		return bad(in, "bad action");
	if (h->confirm > 1)
		return bad(in, "bad confirm flag");
	if (h->kinds & ~ok_kinds)
		return bad(in, "unknown rule kinds");
	in->ngens = get32(b + FB_FBX_OFF_NGENS);
	if (in->ngens > FB_GEN_SLOTS)
		return bad(in, "%u generations of rules with a lifetime (at most %d)", in->ngens,
			   FB_GEN_SLOTS);
	if (in->ngens && (h->type || h->confirm))
		return bad(in, "rules with a lifetime in a filter that cannot hold them");
	if (h->fp_ppb >= 1000000000U)
		return bad(in, "bad fp-rate (%u parts per 10^9)", h->fp_ppb);
	if (h->nflows > fb_flows_max(h->nblocks))
		return bad(in,
			   "%llu flows: more than a filter of %llu bits can hold (at most %d per "
			   "bit)",
			   (unsigned long long)h->nflows, (unsigned long long)fb_header_mbits(h),
			   FB_FLOWS_PER_BIT);
	in->cnt_bytes = fb_fbx_counter_bytes(h->nblocks, h->counter_bits);
	return fb_fbx_check_lengths(in, &in->px) || fb_fbx_check_masks(in, &in->px, in->h.kinds)
		       ? -1
		       : 0;
}

/* A regular file's size must be the one its header implies: checked
 * before anything is created (a pipe is checked as it is read). */
static int check_size(struct fb_fbx_in *in)
{
	size_t want = FB_FBX_BITS_OFF + (size_t)in->h.nblocks * FB_BLOCK_BYTES + in->cnt_bytes + 4;
	struct stat st;
	__u8 num[8];

	/* A compressed file's size says nothing: its stream is held to the
	 * header's sizes instead (fbz.h). */
	if (in->compressed || fstat(fileno(in->raw), &st) || !S_ISREG(st.st_mode))
		return 0;
	if (in->h.confirm) {
		__u64 n;

		if ((size_t)st.st_size < want + 8 || pread(fileno(in->raw), num, 8, want - 4) != 8)
			return bad(in, "truncated");
		n = get64(num);
		if (n > ((size_t)st.st_size - want - 8) / FB_FBX_RULE_BYTES)
			return bad(in, "truncated");
		want += 8 + n * FB_FBX_RULE_BYTES;
	}
	if (in->ngens) {
		size_t g;

		if (fb_fbx_gens_size(in, want - 4, &g))
			return -1;
		want += g;
	}
	if ((size_t)st.st_size != want)
		return bad(in, "%s",
			   (size_t)st.st_size < want ? "truncated"
						     : "trailing bytes after the filter");
	return 0;
}

int fb_fbx_open(struct fb_fbx_in *in, const char *file)
{
	__u8 b[FB_FBX_BITS_OFF];
	struct stat st;

	memset(in, 0, sizeof(*in));
	in->crc = crc32(0, NULL, 0);
	in->label = strcmp(file, "-") ? file : "<stdin>";
	in->raw = strcmp(file, "-") ? fopen(file, "rb") : stdin;
	if (!in->raw)
		return bad(in, "%s", strerror(errno));
	if (!fstat(fileno(in->raw), &st) && S_ISDIR(st.st_mode))
		return bad(in, "is a directory");
	/* Plain or compressed, told apart by the magic: the plain bytes. */
	in->f = fb_fbz_reader(in->raw, &in->compressed);
	if (!in->f)
		return bad(in, "%s", strerror(errno));
	if (rd(in, b, sizeof(b)))
		return bad(in, "%s",
			   fb_fbz_why(in->f)
				   ?: ferror(in->f) ? "read error"
						    : "too short to be a flowbloom export");
	if (decode_head(in, b))
		return -1;
	return check_size(in);
}

void fb_fbx_close(struct fb_fbx_in *in)
{
	if (in->f)
		fclose(in->f);
	if (in->raw && in->raw != stdin)
		fclose(in->raw);
	in->f = in->raw = NULL;
	free(in->rules);
	in->rules = NULL;
	in->nrules = 0;
}

int fb_fbx_read_bits(struct fb_fbx_in *in, struct fb_block *blocks, __u32 nblocks)
{
	enum { CHUNK = 1 << 16 };
	size_t words = (size_t)nblocks * FB_BLOCK_WORDS, i, n, j;
	__u8 buf[CHUNK];

	for (i = 0; i < words; i += n) {
		n = words - i < CHUNK / 8 ? words - i : CHUNK / 8;
		if (rd(in, buf, n * 8))
			return -1;
		for (j = 0; j < n; j++)
			blocks[(i + j) / FB_BLOCK_WORDS].w[(i + j) % FB_BLOCK_WORDS] =
				get64(buf + 8 * j);
	}
	return 0;
}

static int rule_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct fb_fbx_rule *)a)->key, &((const struct fb_fbx_rule *)b)->key,
		      sizeof(struct fb_key));
}

/* The exact-set section, each entry checked as it arrives. */
static int read_rules(struct fb_fbx_in *in)
{
	__u8 num[8], rec[FB_FBX_RULE_BYTES];
	char why[200];
	size_t cap = 0;
	__u64 n, e;

	if (rd(in, num, 8))
		return short_read(in);
	n = get64(num);
	if (n > FB_FBX_MAX_RULES)
		return bad(in, "%llu exact-set entries (at most %u)", (unsigned long long)n,
			   FB_FBX_MAX_RULES);
	for (e = 0; e < n; e++) {
		struct fb_fbx_rule *r;

		if (rd(in, rec, sizeof(rec)))
			return short_read(in);
		if (in->nrules == cap) {
			/* Grown as entries arrive: a pipe that claims many and
			 * ends early costs what it sent. */
			cap = cap ? 2 * cap : 1024;
			r = realloc(in->rules, cap * sizeof(*r));
			if (!r)
				return bad(in, "out of memory");
			in->rules = r;
		}
		r = &in->rules[in->nrules++];
		memcpy(&r->key, rec, sizeof(r->key));
		r->count = get32(rec + sizeof(r->key));
		if (fb_rules_valid(&r->key, why, sizeof(why)))
			return bad(in, "exact-set entry %llu: %s", (unsigned long long)e, why);
		if (!r->count || r->count > FB_FBX_MAX_COUNT)
			return bad(in, "exact-set entry %llu: count %u (1 to %u)",
				   (unsigned long long)e, r->count, FB_FBX_MAX_COUNT);
	}
	return 0;
}

/* A view of memory as a filter, for the type's own checks. */
static void view(struct fb_store *v, struct fb_header *h, struct fb_block *blocks)
{
	fb_store_init(v);
	v->hdr = h;
	v->blocks = blocks;
}

/* As fb_counting_check(): a bit set exactly where its counter is
 * non-zero, and k x flows the counters' sum unless one saturated (or the
 * count is an estimate). */
int fb_fbx_check_counters(struct fb_fbx_in *in, const struct fb_header *h,
			  const struct fb_block *blocks, const __u8 *cnt)
{
	__u64 m = fb_header_mbits(h), p, sum = 0, sat = 0, wrong = 0;
	unsigned max = h->counter_bits == 8 ? 255 : 15;

	for (p = 0; p < m; p++) {
		unsigned c = h->counter_bits == 8 ? cnt[p] : (cnt[p / 2] >> ((p & 1) * 4)) & 0xf;

		sum += c;
		sat += c == max;
		wrong += !c != !fb_block_test_bit(&blocks[fb_bit_block(p)], p);
	}
	if (wrong)
		return bad(in, "%llu bits contradict their counters", (unsigned long long)wrong);
	if (!sat && !(h->flags & FB_HDRF_NFLOWS_ESTIMATE) && sum != h->nflows * h->k)
		return bad(in, "counters sum %llu, not k x flows = %llu", (unsigned long long)sum,
			   (unsigned long long)(h->nflows * h->k));
	return 0;
}

/* What `check` finds in a filter, on the content just read: the file is
 * refused unless it would say clean. */
static int check_content(struct fb_fbx_in *in, struct fb_block *blocks, const __u8 *cnt)
{
	const struct fb_header *h = &in->h;
	char why[200];
	size_t i;

	if (h->type) {
		struct fb_store v;

		if (fb_ftype_check(h, blocks, why, sizeof(why)))
			return bad(in, "%s", why);
		view(&v, &in->h, blocks);
		if (fb_ftype_seq_odd(&v))
			return bad(in, "cuckoo relocation sequence is odd");
		if (h->type == FB_TYPE_CUCKOO &&
		    ((const struct fb_cuckoo_geom *)&blocks[FB_TYPE_GEOM_BLOCK])->count !=
			    fb_ftype_items(&v))
			return bad(in, "cuckoo count does not match its table");
	}
	if (in->cnt_bytes && fb_fbx_check_counters(in, h, blocks, cnt))
		return -1;
	/* Each rule once, of a kind and prefix length the filter probes. */
	if (in->nrules)
		qsort(in->rules, in->nrules, sizeof(*in->rules), rule_cmp);
	for (i = 0; i < in->nrules; i++) {
		const struct fb_key *k = &in->rules[i].key;
		int l = fb_rules_prefix_list(k), j;

		if (i && !rule_cmp(&in->rules[i - 1], &in->rules[i]))
			return bad(in, "an exact-set rule is listed twice");
		if (!(h->kinds & FB_KINDF(k->kind)))
			return bad(in, "an exact-set rule of a kind the filter does not hold");
		for (j = 0; l >= 0 && j < in->px.list[l].n; j++)
			if (in->px.list[l].len[j] == k->plen)
				break;
		if (l >= 0 && j == in->px.list[l].n)
			return bad(in, "an exact-set rule of a prefix length the filter does not "
				       "probe");
		if (k->kind == FB_KIND_MASK) {
			__u32 d = fb_mask_of_key(k, NULL);

			for (j = 0; j < FB_MAX_MASKS && fb_mask_get(in->px.masks, j) != d; j++)
				;
			if (j == FB_MAX_MASKS)
				return bad(
					in,
					"an exact-set rule of a shape the filter does not probe");
		}
	}
	return 0;
}

int fb_fbx_read_body(struct fb_fbx_in *in, struct fb_block *blocks, __u8 *cnt)
{
	enum { CHUNK = 1 << 16 };
	size_t i, n;
	__u8 tail[4];
	__u32 crc;

	if (fb_fbx_read_bits(in, &blocks[FB_HDR_BLOCKS], in->h.nblocks))
		return short_read(in);
	for (i = 0; i < in->cnt_bytes; i += n) {
		n = in->cnt_bytes - i < CHUNK ? in->cnt_bytes - i : CHUNK;
		if (rd(in, cnt + i, n))
			return short_read(in);
	}
	if (in->h.confirm && read_rules(in))
		return -1;
	if (in->ngens) {
		/* The generations follow (fbx_gens.c), then fb_fbx_finish(). */
		if (!in->gens_ok)
			return bad(in, "it holds rules with a lifetime: import it, then use the "
				       "filter");
		return check_content(in, blocks, cnt);
	}
	crc = (__u32)in->crc;
	if (fread(tail, 1, 4, in->f) != 4)
		return short_read(in);
	if (fgetc(in->f) != EOF)
		return bad(in, "trailing bytes after the filter");
	/* The stream layer fails the read that finds its end wrong. */
	if (ferror(in->f))
		return short_read(in);
	if (get32(tail) != crc)
		return bad(in, "checksum mismatch (corrupt file)");
	return check_content(in, blocks, cnt);
}

int fb_fbx_finish(struct fb_fbx_in *in)
{
	__u32 crc = (__u32)in->crc;
	__u8 tail[4];

	if (fread(tail, 1, 4, in->f) != 4)
		return short_read(in);
	if (fgetc(in->f) != EOF)
		return bad(in, "trailing bytes after the filter");
	if (get32(tail) != crc)
		return bad(in, "checksum mismatch (corrupt file)");
	return 0;
}

int fb_fbx_put(FILE *out, const void *p, size_t n, unsigned long *crc)
{
	uLong c = *crc;
	int rc = put(out, p, n, &c);

	*crc = c;
	return rc;
}

int fb_fbx_rd(struct fb_fbx_in *in, void *p, size_t n)
{
	return rd(in, p, n);
}

int fb_fbx_bad(struct fb_fbx_in *in, const char *why)
{
	return bad(in, "%s", why);
}

int fb_fbx_short_read(struct fb_fbx_in *in)
{
	return short_read(in);
}

/* ------------------------------------------------------------ importing */

int fb_fbx_import(const char *file, const char *name, struct fb_header *out)
{
	struct fb_create_opts o = { 0 };
	struct fb_fbx_in in;
	struct fb_store f;
	int rc = -1;
	size_t i;

	if (fb_pin_check_name(name))
		return -1;
	if (fb_fbx_open(&in, file))
		goto refuse;
	if (in.h.confirm && !strcmp(name, FB_IPROUTE_FILTER)) {
		/* An ip-link-loaded program cannot confirm: it would fail open. */
		snprintf(in.why, sizeof(in.why),
			 "it confirms hits (--confirm exact), which '%s', the filter `ip link` "
			 "uses, cannot",
			 FB_IPROUTE_FILTER);
		goto refuse;
	}
	o.layout = in.h.layout;
	o.hash = in.h.hash;
	o.k = in.h.k;
	o.counter_bits = in.h.counter_bits;
	o.confirm = in.h.confirm;
	o.type = in.h.type;
	o.action = in.h.action;
	o.nblocks = in.h.nblocks;
	o.capacity = in.h.capacity;
	o.fp_rate = in.h.fp_ppb / 1e9;
	/* Built aside (its kinds 0: a data path that already sees the array,
	 * ip link's adopted maps, probes nothing), streamed into. */
	if (fb_store_create_staged(name, &o, &f))
		goto out;
	in.gens_ok = true;
	if (fb_fbx_read_body(&in, f.blocks, f.cnt)) {
		fb_store_abort(&f);
		goto refuse;
	}

	for (i = 0; i < in.nrules; i++)
		if (fb_exact_adjust(&f, &in.rules[i].key, (int)in.rules[i].count)) {
			fb_store_abort(&f);
			goto out;
		}
	/* Key, prefix lengths, flows; the kind flags last, so a data path
	 * that sees the array probes only complete rules. */
	f.hdr->key[0] = in.h.key[0];
	f.hdr->key[1] = in.h.key[1];
	f.hdr->nflows = in.h.nflows;
	f.hdr->flags = in.h.flags;
	memcpy(fb_store_prefixes(&f), &in.px, sizeof(in.px));
	/* Generations take the filter's header (its key) as theirs. */
	if (in.ngens && fb_fbx_import_gens(&in, &f)) {
		fb_store_abort(&f);
		if (in.why[0])
			goto refuse;
		goto out;
	}
	__atomic_store_n(&f.hdr->kinds, in.h.kinds, __ATOMIC_RELEASE);
	if (fb_store_publish(&f)) {
		if (f.staged)
			fb_store_abort(&f);
		else
			fb_store_close(&f);
		goto out;
	}
	*out = *f.hdr;
	fb_store_close(&f);
	rc = 0;
	goto out;
refuse:
	fb_report_err("%s: %s; nothing imported", in.label, in.why);
out:
	fb_fbx_close(&in);
	return rc;
}
