// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom export` and `import`: a filter as a file, so one router can
 * build a list and ship it to many (a Bloom filter is a compact, mergeable
 * summary of a set: the seeds' shared-cache and Bloom-join uses).
 *
 * File format, every integer little-endian, version 1:
 *   0   "FLOWBLM\n"                          magic (8 bytes)
 *   8   u32 version = 1
 *   12  u32 size of the header that follows (HDR_SIZE, 120)
 *   16  u8 layout, hash, k, counter_bits, action, confirm, 2 x u8 0
 *   24  u32 nblocks, u32 kinds
 *   32  u64 key[2], u64 flows, u64 capacity
 *   64  u32 fp-rate in parts per 10^9, u32 0
 *   72  64 bytes: struct fb_prefixes (bytes only)
 *   136 nblocks x 64 bytes of bits, as little-endian u64 words
 *   ... counters (counting filters): the counter bytes, 4-bit counters two
 *       per byte, low nibble first
 *   ... exact sets (confirm = 1): u64 n, then n x (40-byte struct fb_key as
 *       bytes, u32 count): every rule of the exact sets
 *   end u32 CRC-32 (zlib) of everything before it
 * Import checks size, magic, version, CRC and every geometry field before it
 * creates anything.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "counting.h"
#include "filter.h"
#include "output.h"
#include "safefile.h"

#define MAGIC "FLOWBLM\n"
#define VERSION 1
#define HDR_SIZE 120 /* bytes 16..135 */
#define BITS_OFF (16 + HDR_SIZE)

static void put32(__u8 *p, __u32 v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put64(__u8 *p, __u64 v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static __u32 get32(const __u8 *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

static __u64 get64(const __u8 *p)
{
	return get32(p) | (__u64)get32(p + 4) << 32;
}

static size_t counter_bytes(__u32 nblocks, unsigned bits)
{
	return bits ? fb_counting_map_bytes((__u64)nblocks * FB_BLOCK_BITS, bits) -
			       FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES
		    : 0;
}

static int write_all(FILE *out, const void *p, size_t n, uLong *crc)
{
	*crc = crc32(*crc, p, n);
	return fwrite(p, 1, n, out) == n ? 0 : -1;
}

/* The exact sets: every rule key of the hash set, with its count. */
static int write_sets(FILE *out, const struct fb_filter *f, uLong *crc)
{
	struct fb_key key, next, *prev = NULL;
	__u8 rec[sizeof(struct fb_key) + 4], num[8];
	__u64 n = 0;
	__u32 v;

	/* Count first (the section starts with it). */
	while (!bpf_map_get_next_key(f->set_fd[0], prev, &next)) {
		n++;
		key = next;
		prev = &key;
	}
	put64(num, n);
	if (write_all(out, num, 8, crc))
		return -1;
	prev = NULL;
	while (n && !bpf_map_get_next_key(f->set_fd[0], prev, &next)) {
		if (bpf_map_lookup_elem(f->set_fd[0], &next, &v))
			v = 0;
		memcpy(rec, &next, sizeof(next));
		put32(rec + sizeof(next), v);
		if (write_all(out, rec, sizeof(rec), crc))
			return -1;
		n--;
		key = next;
		prev = &key;
	}
	return n ? -1 : 0; /* the set changed under us: writers hold the lock */
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	__u8 head[BITS_OFF] = { 0 }, word[8], tail[4];
	struct fb_safefile sf = { .out = NULL };
	struct fb_filter f;
	const struct fb_header *h;
	uLong crc = crc32(0, NULL, 0);
	/* The file holds the hash key, a secret (README: "An export holds a
	 * secret"): only its owner reads it unless --mode says otherwise. */
	mode_t mode = 0600;
	bool mode_set = false;
	const char *name, *file;
	FILE *out = NULL;
	size_t i;
	int c, rc = 1;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'm')
			return fb_usage("unknown option '%s'", argv[optind - 1]);
		if (fb_parse_file_mode(optarg, &mode))
			return fb_usage("bad --mode '%s' (octal, 0 to 0777, e.g. 0640)", optarg);
		mode_set = true;
	}
	if (argc - optind != 2)
		return fb_usage(argc - optind < 2 ? "missing NAME or FILE" : "too many arguments");
	name = argv[optind];
	file = argv[optind + 1];
	if (mode_set && !strcmp(file, "-"))
		return fb_usage("--mode needs a FILE, not stdout");
	if (fb_filter_open(name, &f))
		return 1;
	/* Writers out while we copy: the file is one consistent state. */
	if (fb_filter_flock(&f, LOCK_SH))
		goto out;
	h = f.hdr;
	memcpy(head, MAGIC, 8);
	put32(head + 8, VERSION);
	put32(head + 12, HDR_SIZE);
	head[16] = h->layout;
	head[17] = h->hash;
	head[18] = h->k;
	head[19] = h->counter_bits;
	head[20] = h->action;
	head[21] = h->confirm;
	put32(head + 24, h->nblocks);
	put32(head + 28, h->kinds);
	put64(head + 32, h->key[0]);
	put64(head + 40, h->key[1]);
	put64(head + 48, h->nflows);
	put64(head + 56, h->capacity);
	put32(head + 64, h->fp_ppb);
	memcpy(head + 72, &f.blocks[1], FB_BLOCK_BYTES);
	if (!strcmp(file, "-")) {
		out = stdout;
	} else {
		/* Aside, then renamed over FILE (safefile.c): never a half-written
		 * file, never through a planted symlink. */
		if (fb_safefile_open(&sf, file, mode))
			goto unlock;
		out = sf.out;
	}
	if (write_all(out, head, sizeof(head), &crc))
		goto ioerr;
	for (i = 0; i < (size_t)h->nblocks * FB_BLOCK_WORDS; i++) {
		put64(word, f.blocks[FB_HDR_BLOCKS + i / FB_BLOCK_WORDS].w[i % FB_BLOCK_WORDS]);
		if (write_all(out, word, 8, &crc))
			goto ioerr;
	}
	if (f.cnt_hdr && write_all(out, f.cnt, counter_bytes(h->nblocks, h->counter_bits), &crc))
		goto ioerr;
	if (h->confirm && write_sets(out, &f, &crc))
		goto ioerr;
	put32(tail, (__u32)crc);
	if (fwrite(tail, 1, 4, out) != 4)
		goto ioerr;
	if (out == stdout) {
		if (fflush(out))
			goto ioerr;
		rc = 0;
		goto unlock;
	}
	if (fb_safefile_commit(&sf))
		goto unlock; /* printed; the old FILE, if any, is intact */
	rc = 0;
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("exported", f.name);
		jw_str("file", file);
		jw_obj_close();
		jw_end();
	} else {
		printf("exported %s to %s\n", f.name, file);
	}
	goto unlock;
ioerr:
	fb_err("%s: write failed: %s", file, strerror(errno));
unlock:
	if (sf.out)
		fb_safefile_abort(&sf);
	fb_filter_unlock(&f);
out:
	fb_filter_close(&f);
	return rc;
}

static __u8 *read_file(const char *path, size_t *len)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	size_t cap = 1 << 16, n = 0, r;
	__u8 *buf = NULL, *nb;

	if (!in) {
		fb_err("%s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n == cap || !buf) {
			cap = buf ? cap * 2 : cap;
			nb = realloc(buf, cap);
			if (!nb) {
				fb_err("%s: out of memory", path);
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, in);
		n += r;
		if (r == 0) {
			if (ferror(in)) {
				fb_err("%s: read error", path);
				free(buf);
				buf = NULL;
			}
			break;
		}
	}
	if (in != stdin)
		fclose(in);
	*len = n;
	return buf;
}

/* Every field checked; returns NULL or what is wrong. */
static const char *check_image(const __u8 *b, size_t len)
{
	__u32 nblocks, kinds;
	unsigned layout, hash, k, cbits, action, i, j;
	const struct fb_prefixes *px;
	size_t want;

	if (len < BITS_OFF + 4)
		return "too short to be a flowbloom export";
	if (memcmp(b, MAGIC, 8))
		return "not a flowbloom export (bad magic)";
	if (get32(b + 8) != VERSION)
		return "unsupported format version";
	if (get32(b + 12) != HDR_SIZE)
		return "unexpected header size";
	layout = b[16], hash = b[17], k = b[18], cbits = b[19], action = b[20];
	nblocks = get32(b + 24);
	kinds = get32(b + 28);
	if (!nblocks || nblocks > FB_MAX_BLOCKS)
		return "bad number of blocks";
	want = BITS_OFF + (size_t)nblocks * FB_BLOCK_BYTES + counter_bytes(nblocks, cbits) + 4;
	if (cbits != 0 && cbits != 4 && cbits != 8)
		return "bad counter width";
	if (b[21] > 1)
		return "bad confirm flag";
	if (b[21]) {
		__u64 n;

		if (len < want + 8)
			return "truncated";
		n = get64(b + want - 4);
		if (n > (len - want - 8) / (sizeof(struct fb_key) + 4))
			return "truncated";
		want += 8 + n * (sizeof(struct fb_key) + 4);
	}
	if (len != want)
		return len < want ? "truncated" : "trailing bytes after the filter";
	if (get32(b + len - 4) != (__u32)crc32(crc32(0, NULL, 0), b, len - 4))
		return "checksum mismatch (corrupt file)";
	if ((layout != FB_LAYOUT_BLOCKED && layout != FB_LAYOUT_CLASSIC) ||
	    (hash != FB_HASH_SIPHASH13 && hash != FB_HASH_SIPHASH24 && hash != FB_HASH_NH) || !k ||
	    k > FB_MAX_K || action < FB_ACTION_DROP || action > FB_ACTION_MONITOR)
		return "bad geometry";
	if (kinds & ~(FB_KINDF(FB_KIND_FLOW) | FB_KINDF(FB_KIND_SRC) | FB_KINDF(FB_KIND_DST)))
		return "unknown rule kinds";
	px = (const struct fb_prefixes *)(b + 72);
	for (i = 0; i < FB_PFX_NR; i++) {
		if (px->list[i].n > FB_MAX_LENGTHS)
			return "bad prefix-length table";
		for (j = 0; j < px->list[i].n; j++)
			if (px->list[i].len[j] > 128)
				return "bad prefix length";
	}
	return NULL;
}

int cmd_import(int argc, char **argv)
{
	struct fb_create_opts o = { 0 };
	struct fb_filter f;
	const char *why;
	size_t len, i;
	__u8 *b;
	int rc = 1;

	if (argc != 3)
		return fb_usage(argc < 3 ? "missing FILE or NAME" : "too many arguments");
	if (fb_check_name(argv[2]))
		return 1;
	b = read_file(argv[1], &len);
	if (!b)
		return 1;
	why = check_image(b, len);
	if (why) {
		fb_err("%s: %s; nothing imported", argv[1], why);
		goto out;
	}
	o.layout = b[16];
	o.hash = b[17];
	o.k = b[18];
	o.counter_bits = b[19];
	o.confirm = b[21];
	o.action = b[20];
	o.nblocks = get32(b + 24);
	o.capacity = get64(b + 56);
	o.fp_rate = get32(b + 64) / 1e9;
	if (fb_filter_create(argv[2], &o))
		goto out;
	if (fb_filter_open(argv[2], &f) || fb_filter_lock(&f)) {
		fb_filter_destroy(argv[2]);
		goto out;
	}
	/* Key, bits, prefix lengths, counters; the kind flags last, so the
	 * data path (if someone attached already) probes only complete rules. */
	f.hdr->key[0] = get64(b + 32);
	f.hdr->key[1] = get64(b + 40);
	f.hdr->nflows = get64(b + 48);
	memcpy(&f.blocks[1], b + 72, FB_BLOCK_BYTES);
	for (i = 0; i < (size_t)o.nblocks * FB_BLOCK_WORDS; i++)
		f.blocks[FB_HDR_BLOCKS + i / FB_BLOCK_WORDS].w[i % FB_BLOCK_WORDS] =
			get64(b + BITS_OFF + 8 * i);
	if (f.cnt_hdr)
		memcpy(f.cnt, b + BITS_OFF + (size_t)o.nblocks * FB_BLOCK_BYTES,
		       counter_bytes(o.nblocks, o.counter_bits));
	if (o.confirm) {
		const __u8 *p = b + BITS_OFF + (size_t)o.nblocks * FB_BLOCK_BYTES +
				counter_bytes(o.nblocks, o.counter_bits);
		__u64 n = get64(p), e;

		for (p += 8, e = 0; e < n; e++, p += sizeof(struct fb_key) + 4) {
			struct fb_key k;

			memcpy(&k, p, sizeof(k));
			if (k.kind < FB_KIND_FLOW || k.kind >= FB_KIND_MAX || k.pad ||
			    fb_filter_exact_adjust(&f, &k, (int)get32(p + sizeof(k)))) {
				fb_err("%s: bad exact-set entry %llu; nothing imported", argv[1],
				       (unsigned long long)e);
				fb_filter_unlock(&f);
				fb_filter_close(&f);
				fb_filter_destroy(argv[2]);
				goto out;
			}
		}
	}
	__atomic_store_n(&f.hdr->kinds, get32(b + 28), __ATOMIC_RELEASE);
	fb_filter_unlock(&f);
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("imported", argv[2]);
		jw_u64("bits", fb_header_mbits(f.hdr));
		jw_u64("flows", f.hdr->nflows);
		jw_obj_close();
		jw_end();
	} else {
		printf("imported %s from %s: m=%llu bits, k=%u, %llu flows\n", argv[2], argv[1],
		       (unsigned long long)fb_header_mbits(f.hdr), f.hdr->k,
		       (unsigned long long)f.hdr->nflows);
	}
	fb_filter_close(&f);
	rc = 0;
out:
	free(b);
	return rc;
}
