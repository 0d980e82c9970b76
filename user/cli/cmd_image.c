// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom export` and `import`: a filter as a file, so one router can
 * build a list and ship it to many (a Bloom filter is a compact, mergeable
 * summary of a set: the seeds' shared-cache and Bloom-join uses).
 *
 * File format, every integer little-endian, version 2 (version 1 files,
 * written before the flow key carried the address family, are refused:
 * their IPv6 rules would hash differently and never match):
 *   0   "FLOWBLM\n"                          magic (8 bytes)
 *   8   u32 version = 2
 *   12  u32 size of the header that follows (FB_FBX_HDR_SIZE, 120)
 *   16  u8 layout, hash, k, counter_bits, action, confirm, type, flags (1: flow count estimated)
 *       (type: enum fb_type, 0 for Bloom filters; another type has layout
 *       and k 0, which a reader that predates types refuses, and its
 *       geometry in the first blocks of the bits, checked on import)
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
 * Import checks magic, version and every header field (and a regular file's
 * size) before it creates anything, then streams the rest into a filter
 * built aside and publishes it only once the CRC at the end matched.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "types/counting.h"
#include "store/exact.h"
#include "fleet/fbx.h"
#include "fleet/fbz.h"
#include "types/ftype.h"
#include "output.h"
#include "store/pintree.h"
#include "safefile.h"
#include "store/store.h"

static int write_all(FILE *out, const void *p, size_t n, uLong *crc)
{
	*crc = crc32(*crc, p, n);
	return fwrite(p, 1, n, out) == n ? 0 : -1;
}

/* The exact sets: every rule key of the hash set, with its count. */
static int write_sets(FILE *out, const struct fb_store *f, uLong *crc)
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
	fb_fbx_put64(num, n);
	if (write_all(out, num, 8, crc))
		return -1;
	prev = NULL;
	while (n && !bpf_map_get_next_key(f->set_fd[0], prev, &next)) {
		if (bpf_map_lookup_elem(f->set_fd[0], &next, &v))
			v = 0;
		memcpy(rec, &next, sizeof(next));
		fb_fbx_put32(rec + sizeof(next), v);
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
		{ "plain", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	__u8 head[FB_FBX_BITS_OFF] = { 0 }, word[8], tail[4];
	struct fb_safefile sf = { .out = NULL };
	struct fb_store f;
	const struct fb_header *h;
	uLong crc = crc32(0, NULL, 0);
	/* The file holds the hash key, a secret (README: "An export holds a
	 * secret"): only its owner reads it unless --mode says otherwise. */
	mode_t mode = 0600;
	bool mode_set = false, plain = false;
	const char *name, *file;
	FILE *out = NULL, *raw = NULL;
	size_t i;
	int c, rc = 1;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'p') {
			plain = true;
			continue;
		}
		if (c != 'm')
			return fb_usage("unknown option '%s'", argv[optind - 1]);
		if (fb_safefile_parse_mode(optarg, &mode))
			return fb_usage("bad --mode '%s' (octal, 0 to 0777, e.g. 0640)", optarg);
		mode_set = true;
	}
	if (argc - optind != 2)
		return fb_usage(argc - optind < 2 ? "missing NAME or FILE" : "too many arguments");
	name = argv[optind];
	file = argv[optind + 1];
	if (mode_set && !strcmp(file, "-"))
		return fb_usage("--mode needs a FILE, not stdout");
	if (fb_store_open(name, &f))
		return 1;
	/* Writers out while we copy: the file is one consistent state. */
	if (fb_store_flock(&f, LOCK_SH))
		goto out;
	h = f.hdr;
	memcpy(head, FB_FBX_MAGIC, 8);
	fb_fbx_put32(head + 8, FB_FBX_VERSION);
	fb_fbx_put32(head + 12, FB_FBX_HDR_SIZE);
	head[16] = h->layout;
	head[17] = h->hash;
	head[18] = h->k;
	head[19] = h->counter_bits;
	head[20] = h->action;
	head[21] = h->confirm;
	head[22] = h->type;
	head[23] = h->flags;
	fb_fbx_put32(head + 24, h->nblocks);
	fb_fbx_put32(head + 28, h->kinds);
	fb_fbx_put64(head + 32, h->key[0]);
	fb_fbx_put64(head + 40, h->key[1]);
	fb_fbx_put64(head + 48, h->nflows);
	fb_fbx_put64(head + 56, h->capacity);
	fb_fbx_put32(head + 64, h->fp_ppb);
	memcpy(head + 72, &f.blocks[1], FB_BLOCK_BYTES);
	if (!strcmp(file, "-")) {
		raw = stdout;
	} else {
		/* Aside, then renamed over FILE (safefile.c): never a half-written
		 * file, never through a planted symlink. */
		if (fb_safefile_open(&sf, file, mode))
			goto unlock;
		raw = sf.out;
	}
	/* Compressed unless --plain (fleet/fbz.h): the same bytes, and CRC,
	 * through a stream layer. */
	out = plain ? raw : fb_fbz_writer(raw);
	if (!out)
		goto unlock;
	if (write_all(out, head, sizeof(head), &crc))
		goto ioerr;
	for (i = 0; i < (size_t)h->nblocks * FB_BLOCK_WORDS; i++) {
		fb_fbx_put64(word,
			     f.blocks[FB_HDR_BLOCKS + i / FB_BLOCK_WORDS].w[i % FB_BLOCK_WORDS]);
		if (write_all(out, word, 8, &crc))
			goto ioerr;
	}
	if (f.cnt_hdr &&
	    write_all(out, f.cnt, fb_fbx_counter_bytes(h->nblocks, h->counter_bits), &crc))
		goto ioerr;
	if (h->confirm && write_sets(out, &f, &crc))
		goto ioerr;
	fb_fbx_put32(tail, (__u32)crc);
	if (fwrite(tail, 1, 4, out) != 4)
		goto ioerr;
	if (out != raw) {
		FILE *z = out;

		out = raw;
		if (fclose(z))
			goto ioerr;
	}
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
	if (out && out != raw)
		fclose(out);
	if (sf.out)
		fb_safefile_abort(&sf);
	fb_store_unlock(&f);
out:
	fb_store_close(&f);
	return rc;
}

/* The header of another filter type's export (byte 22: enum fb_type):
 * layout and k are 0 (so fb_fbx_check_head, which the set-algebra verbs
 * use too, refuses it as a Bloom filter); its geometry, in the first
 * blocks of the bits, is checked once read (fb_ftype_check). */
static const char *check_typed_head(const __u8 *b)
{
	__u8 c[FB_FBX_BITS_OFF];
	const char *why;

	if (b[22] >= FB_TYPE_MAX || b[23])
		return "unknown filter type";
	if (b[16] || b[18] || b[19])
		return "bad geometry";
	/* Everything else as for a Bloom filter: checked on a copy that
	 * says blocked, k = 1. */
	memcpy(c, b, sizeof(c));
	c[16] = FB_LAYOUT_BLOCKED;
	c[18] = 1;
	why = fb_fbx_check_head(c);
	return why;
}

/* A regular file's size must be the one its header implies: checked
 * before anything is created (a pipe is checked as it is read). */
static const char *check_size(FILE *fp, const __u8 *b)
{
	__u32 nblocks = fb_fbx_get32(b + 24);
	size_t want = FB_FBX_BITS_OFF + (size_t)nblocks * FB_BLOCK_BYTES +
		      fb_fbx_counter_bytes(nblocks, b[19]) + 4;
	struct stat st;
	__u8 num[8];

	if (fstat(fileno(fp), &st) || !S_ISREG(st.st_mode))
		return NULL;
	if (b[21]) {
		__u64 n;

		if ((size_t)st.st_size < want + 8 || pread(fileno(fp), num, 8, want - 4) != 8)
			return "truncated";
		n = fb_fbx_get64(num);
		if (n > ((size_t)st.st_size - want - 8) / (sizeof(struct fb_key) + 4))
			return "truncated";
		want += 8 + n * (sizeof(struct fb_key) + 4);
	}
	if ((size_t)st.st_size != want)
		return (size_t)st.st_size < want ? "truncated" : "trailing bytes after the filter";
	return NULL;
}

/* Bits, counters, exact sets, CRC: streamed into the staged filter. */
static const char *read_body(struct fb_fbx_in *in, struct fb_store *f, const __u8 *b)
{
	enum { CHUNK = 1 << 16 };
	__u32 nblocks = fb_fbx_get32(b + 24);
	size_t cbytes = fb_fbx_counter_bytes(nblocks, b[19]), i, n;
	__u8 buf[CHUNK], rec[sizeof(struct fb_key) + 4];

	if (fb_fbx_read_bits(in, &f->blocks[FB_HDR_BLOCKS], nblocks))
		return "truncated";
	for (i = 0; i < cbytes; i += n) {
		n = cbytes - i < CHUNK ? cbytes - i : CHUNK;
		if (fb_fbx_read(in, f->cnt + i, n))
			return "truncated";
	}
	if (b[21]) {
		__u64 e, count;

		if (fb_fbx_read(in, buf, 8))
			return "truncated";
		count = fb_fbx_get64(buf);
		for (e = 0; e < count; e++) {
			struct fb_key k;

			if (fb_fbx_read(in, rec, sizeof(rec)))
				return "truncated";
			memcpy(&k, rec, sizeof(k));
			if (k.kind < FB_KIND_FLOW || k.kind >= FB_KIND_MAX ||
			    k.family > FB_FAMILY_IPV6 ||
			    fb_exact_adjust(f, &k, (int)fb_fbx_get32(rec + sizeof(k))))
				return "bad exact-set entry";
		}
	}
	return fb_fbx_read_tail(in);
}

/*
 * Import builds the filter aside (fb_store_create_staged) while it reads
 * the file once, checks the CRC at the end, and only then publishes it
 * under NAME by one rename: a bad file, a crash or a kill never leaves a
 * filter NAME that is empty or half filled.
 */
int cmd_import(int argc, char **argv)
{
	struct fb_create_opts o = { 0 };
	struct fb_fbx_in in = { NULL, crc32(0, NULL, 0) };
	__u8 b[FB_FBX_BITS_OFF];
	char tbad[200];
	struct fb_store f;
	const char *why;
	bool compressed;
	FILE *raw;
	int rc = 1;

	if (argc != 3)
		return fb_usage(argc < 3 ? "missing FILE or NAME" : "too many arguments");
	if (fb_pin_check_name(argv[2]))
		return 1;
	raw = strcmp(argv[1], "-") ? fopen(argv[1], "rb") : stdin;
	if (!raw) {
		fb_err("%s: %s", argv[1], strerror(errno));
		return 1;
	}
	/* Plain or compressed (fleet/fbz.h): the plain bytes either way. */
	in.f = fb_fbz_reader(raw, &compressed);
	if (!in.f)
		goto out;
	if (fb_fbx_read(&in, b, sizeof(b))) {
		why = fb_fbz_why(in.f)
			      ?: ferror(in.f) ? "read error"
					      : "too short to be a flowbloom export";
		goto bad;
	}
	why = b[22] ? check_typed_head(b) : fb_fbx_check_head(b);
	/* A compressed file's size says nothing; its stream is held to the
	 * header's sizes instead. */
	if (!why && !compressed)
		why = check_size(raw, b);
	if (why)
		goto bad;
	o.layout = b[16];
	o.hash = b[17];
	o.k = b[18];
	o.counter_bits = b[19];
	o.confirm = b[21];
	o.type = b[22];
	o.action = b[20];
	o.nblocks = fb_fbx_get32(b + 24);
	o.capacity = fb_fbx_get64(b + 56);
	o.fp_rate = fb_fbx_get32(b + 64) / 1e9;
	if (fb_store_create_staged(argv[2], &o, &f))
		goto out;
	why = read_body(&in, &f, b);
	if (!why && o.type && fb_ftype_check(f.hdr, f.blocks, tbad, sizeof(tbad)))
		why = tbad;
	/* Export holds the lock: an odd sequence (every probe a match) is
	 * no file it wrote. */
	if (!why && fb_ftype_seq_odd(&f))
		why = "cuckoo relocation sequence is odd";
	if (why) {
		if (ferror(in.f))
			why = fb_fbz_why(in.f) ?: "read error";
		fb_store_abort(&f);
		goto bad;
	}
	/* Key, prefix lengths, flows; the kind flags last, so a data path
	 * that sees the array (ip link's adopted maps) probes only complete
	 * rules. */
	f.hdr->key[0] = fb_fbx_get64(b + 32);
	f.hdr->key[1] = fb_fbx_get64(b + 40);
	f.hdr->nflows = fb_fbx_get64(b + 48);
	f.hdr->flags = b[23];
	memcpy(&f.blocks[1], b + 72, FB_BLOCK_BYTES);
	__atomic_store_n(&f.hdr->kinds, fb_fbx_get32(b + 28), __ATOMIC_RELEASE);
	if (fb_store_publish(&f)) {
		if (f.staged)
			fb_store_abort(&f);
		else
			fb_store_close(&f);
		goto out;
	}
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("imported", argv[2]);
		jw_u64("bits", fb_header_mbits(f.hdr));
		jw_u64("flows", f.hdr->nflows);
		jw_obj_close();
		jw_end();
	} else if (f.hdr->type) {
		printf("imported %s from %s: %s, %llu flows\n", argv[2], argv[1],
		       fb_ftype_name(f.hdr->type), (unsigned long long)f.hdr->nflows);
	} else {
		printf("imported %s from %s: m=%llu bits, k=%u, %llu flows\n", argv[2], argv[1],
		       (unsigned long long)fb_header_mbits(f.hdr), f.hdr->k,
		       (unsigned long long)f.hdr->nflows);
	}
	fb_store_close(&f);
	rc = 0;
	goto out;
bad:
	fb_err("%s: %s; nothing imported", argv[1], why);
out:
	if (in.f)
		fclose(in.f);
	if (raw != stdin)
		fclose(raw);
	return rc;
}
