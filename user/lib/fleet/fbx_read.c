// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The export file format's one reader, front to back: open (plain or
 * compressed, fbz.h), the header decoded and every field held to its range,
 * a regular file's size held to the one the header implies, then the body
 * (bits, counters, exact-set entries) streamed to the caller, the CRC and
 * the end of the file. What the content must be (prefix lengths, rule
 * shapes, counters, exact-set rules) is fbx_check.c's; the generations'
 * section fbx_gens.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "fleet/fbx.h"
#include "fleet/fbz.h"
#include "inputfile.h"
#include "rules/rules.h"
#include "store/exact.h"
#include "store/gens.h"
#include "types/ftype.h"
#include "types/sizing.h"

int fb_fbx_bad(struct fb_fbx_in *in, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(in->why, sizeof(in->why), fmt, ap);
	va_end(ap);
	return -1;
}

int fb_fbx_rd(struct fb_fbx_in *in, void *p, size_t n)
{
	if (fread(p, 1, n, in->f) != n)
		return -1;
	in->crc = crc32(in->crc, p, n);
	return 0;
}

/* Truncated, or a read error: which (a compressed stream says why). */
int fb_fbx_short_read(struct fb_fbx_in *in)
{
	return fb_fbx_bad(in, "%s",
			  fb_fbz_why(in->f)
				  ?: ferror(in->f) ? "read error"
						   : "truncated");
}

/* The most flows h's geometry holds at its own rate, up to upto (a
 * table type: the largest capacity it would be sized within its blocks
 * for; 0 without a rate). */
static unsigned long long geometry_holds(const struct fb_header *h, unsigned long long upto)
{
	double q = (h->fp_ppb + 1) / 1e9; /* the rate as written, rounded to ppb */
	unsigned long long lo = 0, hi = upto, mid;
	struct fb_block geom[5];
	double c;
	__u32 nb;

	if (!h->fp_ppb)
		return 0;
	if (!h->type) {
		c = fb_capacity_at(h->layout, h->k, h->nblocks, q);
		return c < (double)upto ? (unsigned long long)c : upto;
	}
	/* No table keeps a flow in less than a bit: search no further (a
	 * file's 2^64 - 1 would make each sizing below take seconds). */
	if (upto > (unsigned long long)h->nblocks * FB_BLOCK_BITS)
		upto = (unsigned long long)h->nblocks * FB_BLOCK_BITS;
	hi = upto;
#define FITS(n) (!fb_ftype_size(h->type, (double)(n), q, geom, &nb) && nb <= h->nblocks)
	if (FITS(upto))
		return upto;
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (FITS(mid))
			lo = mid;
		else
			hi = mid - 1;
	}
#undef FITS
	return lo;
}

/* The capacity a filter is sized for is what `info` says, the bound bgp
 * and guard keep, and with --confirm exact what its exact sets are sized
 * for (2 x capacity entries, 16 bytes each of kernel memory before any
 * rule): no more than its geometry holds at its own rate, or than create
 * allows exact sets (a file made by hand could claim 2^24 flows for 2
 * Mbit and take 512 MiB of kernel memory from 258 KB). A filter holding
 * at least that many flows (a merge sized its exact sets for its rules)
 * is what it says. One that held them (a confirming filter of a rate
 * whose capacity merge raised to its rules, past its bits, a del since;
 * an older build's merge raised it whenever the rules outnumbered the
 * capacity) is taken as sized for what its geometry holds, or its flows
 * if more: in->capacity_said keeps what the file says. */
static int check_capacity(struct fb_fbx_in *in)
{
	struct fb_header *h = &in->h;
	unsigned long long cap = h->capacity, m = fb_header_mbits(h), hold;

	if (h->confirm && cap > FB_EXACT_MAX_RULES)
		return fb_fbx_bad(in, "capacity %llu: --confirm exact holds at most %u rules", cap,
				  FB_EXACT_MAX_RULES);
	if (cap <= h->nflows)
		return 0;
	hold = geometry_holds(h, cap);
	if (cap <= hold)
		return 0;
	if (h->confirm && h->fp_ppb) {
		in->capacity_said = cap;
		h->capacity = hold > h->nflows ? hold : h->nflows;
		return 0;
	}
	if (h->type)
		return fb_fbx_bad(in,
				  "capacity %llu: more than a %s filter of %u blocks holds at "
				  "fp-rate %g",
				  cap, fb_ftype_name(h->type), h->nblocks, h->fp_ppb / 1e9);
	if (!h->fp_ppb) {
		if (cap > m)
			return fb_fbx_bad(in, "capacity %llu: more than its %llu bits", cap, m);
		return 0;
	}
	return fb_fbx_bad(in, "capacity %llu: more than %llu bits with k=%u hold at fp-rate %g",
			  cap, m, h->k, h->fp_ppb / 1e9);
}

/* Every header field (the bytes before the bits), into in->h and in->px. */
static int decode_head(struct fb_fbx_in *in, const __u8 *b)
{
	struct fb_header *h = &in->h;
	__u32 ok_kinds = FB_KINDF(FB_KIND_FLOW) | FB_KINDF(FB_KIND_SRC) | FB_KINDF(FB_KIND_DST) |
			 FB_KINDF(FB_KIND_MASK);

	if (memcmp(b + FB_FBX_OFF_MAGIC, FB_FBX_MAGIC, 8))
		return fb_fbx_bad(in, "not a flowbloom export (bad magic)");
	if (fb_le_get32(b + FB_FBX_OFF_VERSION) != FB_FBX_VERSION)
		return fb_fbx_bad(in, "unsupported format version %u",
				  fb_le_get32(b + FB_FBX_OFF_VERSION));
	if (fb_le_get32(b + FB_FBX_OFF_HDR_SIZE) != FB_FBX_HDR_SIZE)
		return fb_fbx_bad(in, "unexpected header size");
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
	h->nblocks = fb_le_get32(b + FB_FBX_OFF_NBLOCKS);
	h->kinds = fb_le_get32(b + FB_FBX_OFF_KINDS);
	h->key[0] = fb_le_get64(b + FB_FBX_OFF_KEY);
	h->key[1] = fb_le_get64(b + FB_FBX_OFF_KEY + 8);
	h->nflows = fb_le_get64(b + FB_FBX_OFF_FLOWS);
	h->capacity = fb_le_get64(b + FB_FBX_OFF_CAPACITY);
	h->fp_ppb = fb_le_get32(b + FB_FBX_OFF_FP_PPB);
	memcpy(&in->px, b + FB_FBX_OFF_PREFIXES, sizeof(in->px));
	if (!h->nblocks || h->nblocks > FB_MAX_BLOCKS)
		return fb_fbx_bad(in, "bad number of blocks %u (1 to %u)", h->nblocks,
				  FB_MAX_BLOCKS);
	if (h->type >= FB_TYPE_MAX)
		return fb_fbx_bad(in, "unknown filter type %u", h->type);
	if (h->type) {
		/* Another type: no Bloom geometry (its own is in the bits,
		 * checked with the content), no counters, no flags. */
		if (h->layout || h->k || h->counter_bits)
			return fb_fbx_bad(in, "bad geometry");
		if (h->flags)
			return fb_fbx_bad(in, "unknown header flags");
	} else {
		if ((h->layout != FB_LAYOUT_BLOCKED && h->layout != FB_LAYOUT_CLASSIC) || !h->k ||
		    h->k > FB_MAX_K)
			return fb_fbx_bad(in, "bad geometry");
		if (h->counter_bits != 0 && h->counter_bits != 4 && h->counter_bits != 8)
			return fb_fbx_bad(in, "bad counter width");
		if (h->flags & ~(FB_HDRF_NFLOWS_ESTIMATE | FB_HDRF_COMPACT))
			return fb_fbx_bad(in, "unknown header flags");
	}
	if (h->hash != FB_HASH_SIPHASH13 && h->hash != FB_HASH_SIPHASH24 && h->hash != FB_HASH_NH &&
	    h->hash != FB_HASH_NHK)
		return fb_fbx_bad(in, "unknown hash algorithm %u", h->hash);
	if (h->action < FB_ACTION_DROP || h->action > FB_ACTION_MONITOR)
		return fb_fbx_bad(in, "bad action");
	if (h->confirm > 1)
		return fb_fbx_bad(in, "bad confirm flag");
	if (h->kinds & ~ok_kinds)
		return fb_fbx_bad(in, "unknown rule kinds");
	in->ngens = fb_le_get32(b + FB_FBX_OFF_NGENS);
	if (in->ngens > FB_GEN_SLOTS)
		return fb_fbx_bad(in, "%u generations of rules with a lifetime (at most %d)",
				  in->ngens, FB_GEN_SLOTS);
	if (in->ngens && (h->type || h->confirm))
		return fb_fbx_bad(in, "rules with a lifetime in a filter that cannot hold them");
	if (h->fp_ppb >= 1000000000U)
		return fb_fbx_bad(in, "bad fp-rate (%u parts per 10^9)", h->fp_ppb);
	if (h->nflows > fb_flows_max(h->nblocks))
		return fb_fbx_bad(
			in,
			"%llu flows: more than a filter of %llu bits can hold (at most %d per "
			"bit)",
			(unsigned long long)h->nflows, (unsigned long long)fb_header_mbits(h),
			FB_FLOWS_PER_BIT);
	if (check_capacity(in))
		return -1;
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
			return fb_fbx_bad(in, "truncated");
		n = fb_le_get64(num);
		if (n > ((size_t)st.st_size - want - 8) / FB_FBX_RULE_BYTES)
			return fb_fbx_bad(in, "truncated");
		want += 8 + n * FB_FBX_RULE_BYTES;
		in->nsets = n;
	}
	if (in->ngens) {
		size_t g;

		if (fb_fbx_gens_size(in, want - 4, &g))
			return -1;
		want += g;
	}
	if ((size_t)st.st_size != want)
		return fb_fbx_bad(in, "%s",
				  (size_t)st.st_size < want ? "truncated"
							    : "trailing bytes after the filter");
	return 0;
}

int fb_fbx_open(struct fb_fbx_in *in, const char *file)
{
	return fb_fbx_open_as(in, file, false);
}

int fb_fbx_open_as(struct fb_fbx_in *in, const char *file, bool twice)
{
	__u8 b[FB_FBX_BITS_OFF];
	struct stat st;

	memset(in, 0, sizeof(*in));
	in->crc = crc32(0, NULL, 0);
	in->label = strcmp(file, "-") ? file : "<stdin>";
	if (strcmp(file, "-")) {
		int fd = fb_input_open(file, false, in->why, sizeof(in->why));

		if (fd < 0)
			return -1;
		in->raw = fdopen(fd, "rb");
		if (!in->raw) {
			close(fd);
			return fb_fbx_bad(in, "%s", strerror(errno));
		}
	} else {
		in->raw = stdin;
	}
	if (!fstat(fileno(in->raw), &st) && S_ISDIR(st.st_mode))
		return fb_fbx_bad(in, "is a directory");
	if (twice && fb_fbx_spool_start(in))
		return -1;
	/* Plain or compressed, told apart by the magic: the plain bytes. */
	in->f = fb_fbz_reader(in->raw, &in->compressed);
	if (!in->f)
		return fb_fbx_bad(in, "%s", strerror(errno));
	if (fb_fbx_rd(in, b, sizeof(b)))
		return fb_fbx_bad(in, "%s",
				  fb_fbz_why(in->f)
					  ?: ferror(in->f) ? "read error"
							   : "too short to be a flowbloom export");
	memcpy(in->head, b, sizeof(b));
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
	if (in->under && in->under != stdin)
		fclose(in->under);
	fb_fbx_spool_free(in);
	in->f = in->raw = in->under = NULL;
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
		if (fb_fbx_rd(in, buf, n * 8))
			return -1;
		for (j = 0; j < n; j++)
			blocks[(i + j) / FB_BLOCK_WORDS].w[(i + j) % FB_BLOCK_WORDS] =
				fb_le_get64(buf + 8 * j);
	}
	return 0;
}

/* The entries read so far, by key: an open-addressing table (linear
 * probing, at most half full) of 8-byte slots, 0 empty, else an entry's
 * index + 1 in the low half and the top 32 bits of its key's SipHash-1-3
 * under a secret of this read (its tag) in the high half. A file cannot
 * hold keys chosen to collide (each lookup of such a set would walk all
 * of it). A key's first slot is its tag's top bits: a regrowth places
 * every slot again from its tag alone, in order (no key hashed or read
 * again), and a probe reads in->rules[] only where the tags are equal
 * (the key itself, or 1 in 2^(32 - bits) of the others).
 *
 * Entries wait SEEN_LAG places between their hash and their probe, their
 * slot prefetched meanwhile: a table of millions of entries is larger
 * than the caches, each probe a miss otherwise. A refusal (an entry that is no rule, a short read)
 * adds the waiting ones first, so the first duplicate is still the one
 * said, as if each was added as it arrived. */
enum { SEEN_LAG = 16 };

struct seen {
	__u64 *slot;
	unsigned int bits; /* 2^bits slots (0: none yet) */
	size_t used;
	__u64 key[2];
	__u64 hash[SEEN_LAG]; /* the waiting entries' hashes, by index % SEEN_LAG */
	size_t next;	      /* the first waiting entry (in->nrules: none) */
};

static size_t home(const struct seen *s, __u32 tag)
{
	return s->bits ? tag >> (32 - s->bits) : 0;
}

/* 2^bits slots, every entry placed again by its tag; -1 out of memory. */
static int seen_grow(struct seen *s, unsigned int bits)
{
	size_t n = (size_t)1 << bits, mask = n - 1, old = s->bits ? (size_t)1 << s->bits : 0, e, j;
	__u64 *slot = calloc(n, sizeof(*slot));

	if (!slot)
		return -1;
	for (e = 0; e < old; e++) {
		if (!s->slot[e])
			continue;
		for (j = (s->slot[e] >> 32) >> (32 - bits); slot[j]; j = (j + 1) & mask)
			;
		slot[j] = s->slot[e];
	}
	free(s->slot);
	s->slot = slot;
	s->bits = bits;
	return 0;
}

/* Room for want entries at most half full (want <= FB_FBX_MAX_RULES, so
 * bits <= 29 and a tag's top bits name a slot). */
static int seen_room(struct seen *s, size_t want)
{
	unsigned int bits = s->bits ? s->bits : 11;

	while (((size_t)1 << bits) < 2 * want)
		bits++;
	return bits == s->bits ? 0 : seen_grow(s, bits);
}

/* 1 if in->rules[i]'s key is one of the entries added before it, else 0
 * (it is now one of them); -1 out of memory. */
static int seen_add(struct fb_fbx_in *in, struct seen *s, size_t i, __u64 h)
{
	const struct fb_key *k = &in->rules[i].key;
	__u64 tag = h >> 32;
	size_t mask, j;

	if (seen_room(s, s->used + 1))
		return -1;
	mask = ((size_t)1 << s->bits) - 1;
	for (j = home(s, tag); s->slot[j]; j = (j + 1) & mask)
		if (s->slot[j] >> 32 == tag &&
		    !memcmp(&in->rules[(__u32)s->slot[j] - 1].key, k, sizeof(*k)))
			return 1;
	s->slot[j] = tag << 32 | (i + 1);
	s->used++;
	return 0;
}

/* in->rules[i] waits: hashed, its slot prefetched. */
static void seen_wait(struct fb_fbx_in *in, struct seen *s, size_t i)
{
	__u64 h = fb_siphash(&in->rules[i].key, sizeof(struct fb_key), s->key, 1, 3);

	s->hash[i % SEEN_LAG] = h;
	if (s->slot)
		__builtin_prefetch(&s->slot[home(s, h >> 32)], 1);
}

/* The waiting entries before entry upto added, in order: 1 at the first
 * one listed twice, -1 out of memory, else 0. */
static int seen_drain(struct fb_fbx_in *in, struct seen *s, size_t upto)
{
	int rc;

	for (; s->next < upto; s->next++)
		if ((rc = seen_add(in, s, s->next, s->hash[s->next % SEEN_LAG])))
			return rc;
	return 0;
}

/* seen_add()'s or seen_drain()'s 1 or -1 said. */
static int seen_refuse(struct fb_fbx_in *in, int rc)
{
	return fb_fbx_bad(in, "%s",
			  rc == 1 ? "an exact-set rule is listed twice" : "out of memory");
}

/* -1 with why for entry e, unless an entry before it is listed twice. */
static int refuse_at(struct fb_fbx_in *in, struct seen *s, size_t e, const char *fmt, ...)
{
	va_list ap;
	int rc = seen_drain(in, s, e);

	if (rc)
		return seen_refuse(in, rc);
	va_start(ap, fmt);
	vsnprintf(in->why, sizeof(in->why), fmt, ap);
	va_end(ap);
	return -1;
}

/* hint: the entries the input can hold, if known (0: not) — what the
 * table and in->rules are sized for at once, else they grow as entries
 * arrive (a pipe that claims many and ends early costs what it sent). */
static int read_entries(struct fb_fbx_in *in, __u64 n, struct seen *s, __u64 hint)
{
	__u8 rec[FB_FBX_RULE_BYTES];
	char why[200];
	size_t cap = 0;
	__u64 e;
	int rc;

	if (hint && n) {
		struct fb_fbx_rule *r;

		cap = hint < n ? hint : n;
		r = realloc(in->rules, cap * sizeof(*r));
		if (!r)
			return fb_fbx_bad(in, "out of memory");
		in->rules = r;
		if (seen_room(s, cap))
			return fb_fbx_bad(in, "out of memory");
	}
	for (e = 0; e < n; e++) {
		struct fb_fbx_rule *r;

		if (fb_fbx_rd(in, rec, sizeof(rec)))
			return (rc = seen_drain(in, s, e)) ? seen_refuse(in, rc)
							   : fb_fbx_short_read(in);
		if (in->nrules == cap) {
			cap = cap ? 2 * cap : 1024;
			r = realloc(in->rules, cap * sizeof(*r));
			if (!r)
				return refuse_at(in, s, e, "out of memory");
			in->rules = r;
		}
		r = &in->rules[in->nrules++];
		memcpy(&r->key, rec, sizeof(r->key));
		r->count = fb_le_get32(rec + sizeof(r->key));
		if (fb_rules_valid(&r->key, why, sizeof(why)))
			return refuse_at(in, s, e, "exact-set entry %llu: %s",
					 (unsigned long long)e, why);
		if (!r->count || r->count > FB_FBX_MAX_COUNT)
			return refuse_at(in, s, e, "exact-set entry %llu: count %u (1 to %u)",
					 (unsigned long long)e, r->count, FB_FBX_MAX_COUNT);
		/* Refused as it arrives (SEEN_LAG entries later), not once
		 * all were read: a compressed stream of one entry repeated
		 * is a few bytes for each million, and would cost 44 MB of
		 * memory each. The entry SEEN_LAG before this one is added
		 * first: this one takes its place among the waiting. */
		if (e >= SEEN_LAG && (rc = seen_drain(in, s, e - SEEN_LAG + 1)))
			return seen_refuse(in, rc);
		seen_wait(in, s, e);
	}
	return (rc = seen_drain(in, s, in->nrules)) ? seen_refuse(in, rc) : 0;
}

int fb_fbx_read_rules(struct fb_fbx_in *in)
{
	struct seen s = { 0 };
	__u8 num[8];
	__u64 n;
	int rc;

	if (fb_fbx_rd(in, num, 8))
		return fb_fbx_short_read(in);
	n = fb_le_get64(num);
	if (n > FB_FBX_MAX_RULES)
		return fb_fbx_bad(in, "%llu exact-set entries (at most %u)", (unsigned long long)n,
				  FB_FBX_MAX_RULES);
	if (n && getrandom(s.key, sizeof(s.key), 0) != sizeof(s.key))
		return fb_fbx_bad(in, "cannot read random bytes (getrandom): %s", strerror(errno));
	/* Sized at once for what the input can hold: a regular plain
	 * file's entries (its size was held to them) or the first read's. */
	rc = read_entries(in, n, &s, in->nsets);
	free(s.slot);
	return rc;
}

int fb_fbx_read_body(struct fb_fbx_in *in, struct fb_block *blocks, __u8 *cnt)
{
	enum { CHUNK = 1 << 16 };
	size_t i, n;

	if (fb_fbx_read_bits(in, &blocks[FB_HDR_BLOCKS], in->h.nblocks))
		return fb_fbx_short_read(in);
	for (i = 0; i < in->cnt_bytes; i += n) {
		n = in->cnt_bytes - i < CHUNK ? in->cnt_bytes - i : CHUNK;
		if (fb_fbx_rd(in, cnt + i, n))
			return fb_fbx_short_read(in);
	}
	if (in->h.confirm && fb_fbx_read_rules(in))
		return -1;
	if (in->ngens) {
		/* The generations follow (fbx_gens.c), then fb_fbx_finish(). */
		if (!in->gens_ok)
			return fb_fbx_bad(
				in,
				"it holds rules with a lifetime, which merge, intersect and card "
				"leave out: import it, and merge the others --into it");
		return fb_fbx_check_content(in, blocks, cnt);
	}
	if (fb_fbx_finish(in))
		return -1;
	return fb_fbx_check_content(in, blocks, cnt);
}

int fb_fbx_finish(struct fb_fbx_in *in)
{
	__u32 crc = (__u32)in->crc;
	__u8 tail[4];

	if (fread(tail, 1, 4, in->f) != 4)
		return fb_fbx_short_read(in);
	if (fgetc(in->f) != EOF)
		return fb_fbx_bad(in, "trailing bytes after the filter");
	/* The stream layer fails the read that finds its end wrong. */
	if (ferror(in->f))
		return fb_fbx_short_read(in);
	if (fb_le_get32(tail) != crc)
		return fb_fbx_bad(in, "checksum mismatch (corrupt file)");
	return 0;
}
