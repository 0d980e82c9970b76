/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The export file format: its one writer (`export`) and its one reader
 * (`import`, and the set-algebra verbs' file arguments: algebra.c), so
 * every verb accepts exactly the same files, for the same reasons.
 *
 * The layout of the file, field by field, is in fbx_format.h. The files:
 * fbx_write.c the writer (export), fbx_read.c the reader (header, body,
 * CRC), fbx_check.c what the reader accepts as content, fbx_gens.c the
 * generations' section (both ways), fbx_scan.c the first of import's two
 * reads, fbx_import.c import.
 *
 * What the reader accepts is what a filter can be: every header field in
 * its range, a regular file's size the one its header implies, the CRC,
 * and the content as `check` would find it in a filter, clean: a counting
 * filter's bits exactly where its counters are non-zero and the counters
 * adding up to k x flows (unless saturated or an estimate), a cuckoo table
 * whose count and relocation sequence agree with it, a flow count that a
 * filter of that size can hold (fb_flows_max()), exact-set rules that are
 * rules (fb_rules_valid()), each once, with a count, of a kind and prefix
 * length the filter holds. Anything else is refused with the reason.
 */
#ifndef FLOWBLOOM_USER_FBX_H
#define FLOWBLOOM_USER_FBX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "flowbloom/geometry.h"
#include "fleet/fbx_format.h"

struct fb_fbx_rule {
	struct fb_key key;
	__u32 count;
};

/* Write filter NAME to FILE ("-": stdout; else created aside and renamed
 * over FILE with mode, safefile.c), under a shared lock, compressed
 * (fbz.h) unless plain. 0, or -1 (printed; an old FILE is left as it was). */
int fb_fbx_export(const char *name, const char *file, mode_t mode, bool plain);

/* A file being read front to back, with a running CRC: its bits are never
 * held in memory whole by the reader (import streams them into the filter
 * it builds). */
struct fb_fbx_spool;
struct fb_fbx_in {
	const char *label; /* the file, "<stdin>" for "-" */
	FILE *raw;	   /* the file */
	FILE *f;	   /* its plain bytes (fbz.h: compressed or not) */
	bool compressed;
	unsigned long crc;	   /* zlib's crc32 so far */
	struct fb_header h;	   /* block 0 of the filter the file holds */
	struct fb_prefixes px;	   /* block 1 */
	size_t cnt_bytes;	   /* counters section (0: none) */
	struct fb_fbx_rule *rules; /* after fb_fbx_read_body: the exact sets, by key */
	size_t nrules;
	/* The exact-set entries the file holds, known before the build
	 * (a regular file's count, or the first read's). */
	__u64 nsets;
	__u32 ngens;   /* generations of rules with a lifetime after the sets */
	bool gens_ok;  /* the caller reads them (import): else such a file is refused */
	char why[256]; /* what is wrong, after a -1 */
	/* Not 0: the capacity the file says, more than its geometry holds
	 * (a confirming filter merge sized for its rules, fewer since), and
	 * h.capacity what it holds (fbx_read.c, check_capacity). */
	unsigned long long capacity_said;
	/* Read twice (fb_fbx_open_checked): where the file starts, for a
	 * second read that seeks back; else the bytes the first read took
	 * (spool), kept for the second, and the file under them (under). */
	off_t start;
	bool seek;
	struct fb_fbx_spool *spool;
	FILE *under;
	__u8 head[FB_FBX_BITS_OFF]; /* the header's bytes, as first read */
};

/* Open FILE ("-": stdin) and read and check its header (and a regular
 * file's size): 0, or -1 with in->why. Call fb_fbx_close() either way. */
int fb_fbx_open(struct fb_fbx_in *in, const char *file);
/* fb_fbx_open() for a reader that builds what the header says (import):
 * unless FILE is a plain export in a regular file of the size its header
 * implies that only root or we can change, all of it is read and checked
 * first (fbx_scan.c: framing, lengths, exact sets, generations' heads,
 * CRC, end of file) in bounded memory, and then opened again at its body
 * (seeking back, or from the bytes the first read kept). So a truncated or
 * corrupt file costs what it holds, not what its header claims. 0, or -1
 * with in->why; fb_fbx_close() either way. gens_ok as in->gens_ok. */
int fb_fbx_open_checked(struct fb_fbx_in *in, const char *file, bool gens_ok);
/* fbx_read.c's open, for fbx_scan.c: twice, the input set up to be read
 * again (fb_fbx_spool_start) before its first byte is read. */
int fb_fbx_open_as(struct fb_fbx_in *in, const char *file, bool twice);
int fb_fbx_spool_start(struct fb_fbx_in *in);
void fb_fbx_spool_free(struct fb_fbx_in *in);
/* The rest: the bits into blocks[FB_HDR_BLOCKS ..] (blocks 0 and 1 are
 * not touched: the caller writes in->h and in->px there when it wants
 * them), the counters into cnt (in->cnt_bytes), the exact sets into
 * in->rules; the CRC and end of file; then the content. 0, or -1 with
 * in->why. */
int fb_fbx_read_body(struct fb_fbx_in *in, struct fb_block *blocks, __u8 *cnt);
void fb_fbx_close(struct fb_fbx_in *in);

/* A generation of rules with a lifetime, as the file holds it. */
struct fb_fbx_gen {
	__u64 expires_ns; /* CLOCK_REALTIME */
	__u64 flows;
	__u32 nblocks, kinds;
	__u8 k;
	struct fb_prefixes px;
	size_t cnt_bytes;
};
/* After fb_fbx_read_body() of a file with in->ngens (and in->gens_ok):
 * each generation's head, then its body (bits into blocks[FB_HDR_BLOCKS
 * ..], counters into cnt; blocks NULL: read and dropped), then
 * fb_fbx_finish() (the CRC, end of file). 0, or -1 with in->why. */
int fb_fbx_read_gen(struct fb_fbx_in *in, struct fb_fbx_gen *g);
int fb_fbx_read_gen_body(struct fb_fbx_in *in, const struct fb_fbx_gen *g, struct fb_block *blocks,
			 __u8 *cnt);
int fb_fbx_finish(struct fb_fbx_in *in);

/* The reader's pieces, shared by its files (fbx_read.c, fbx_check.c,
 * fbx_gens.c). fb_fbx_rd: n bytes into p, counted in the CRC (0, or -1 at
 * a short read: then fb_fbx_short_read() says why). fb_fbx_bad: in->why
 * from a format, returns -1. */
int fb_fbx_put(FILE *out, const void *p, size_t n, unsigned long *crc);
int fb_fbx_rd(struct fb_fbx_in *in, void *p, size_t n);
int fb_fbx_bad(struct fb_fbx_in *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int fb_fbx_short_read(struct fb_fbx_in *in);
int fb_fbx_read_bits(struct fb_fbx_in *in, struct fb_block *blocks, __u32 nblocks);
/* The exact-set section into in->rules, each entry checked as it arrives. */
int fb_fbx_read_rules(struct fb_fbx_in *in);
/* fbx_check.c: the prefix-length lists of px are lists of prefix lengths. */
int fb_fbx_check_lengths(struct fb_fbx_in *in, const struct fb_prefixes *px);
/* The rule-shape table of px agrees with kinds (each mask valid, listed
 * once, zero-terminated): 0, or -1 with in->why. */
int fb_fbx_check_masks(struct fb_fbx_in *in, const struct fb_prefixes *px, __u32 kinds);
int fb_fbx_check_counters(struct fb_fbx_in *in, const struct fb_header *h,
			  const struct fb_block *blocks, const __u8 *cnt);
/* The content just read (bits, counters, in->rules, sorted here) is what
 * `check` would find clean: 0, or -1 with in->why. */
int fb_fbx_check_content(struct fb_fbx_in *in, struct fb_block *blocks, const __u8 *cnt);
/* Its part on in->rules alone (sorted here). */
int fb_fbx_check_rules(struct fb_fbx_in *in);
/* fbx_gens.c: the size a regular file's generations take from offset at
 * (-1 with in->why); the writer's section. */
int fb_fbx_gens_size(struct fb_fbx_in *in, size_t at, size_t *size);
struct fb_gen_views;
int fb_fbx_write_gens(const struct fb_gen_views *gv, FILE *out, unsigned long *crc);
/* Import: the generations after the filter (in->ngens) into staged filter
 * f (its key already set); those ended are read and dropped. 0; -1 with
 * in->why, or reported (why empty). */
struct fb_store;
int fb_fbx_import_gens(struct fb_fbx_in *in, struct fb_store *f);
/* A file's exact-set rules (each with its count) into f's exact sets, in
 * batches (a few bpf calls, not one or two a rule). 0, or -1 (printed). */
int fb_fbx_rules_into(struct fb_store *f, const struct fb_fbx_rule *r, size_t n);

/* Import FILE as a new filter NAME: built aside while the file is read,
 * published by one rename once all of it checked. 0 with *out its header;
 * -1 printed ("FILE: why; nothing imported"), nothing created. */
int fb_fbx_import(const char *file, const char *name, struct fb_header *out);

#endif
