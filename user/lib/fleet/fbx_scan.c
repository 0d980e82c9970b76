// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Import's first read of an export file (fbx.h, fb_fbx_open_checked): all
 * of it, through the one reader, checked as the build would check it
 * (every section's length, each exact-set entry and the set as a whole,
 * each generation's head, the CRC, the end of the file) without building
 * anything, in bounded memory (a chunk of bits at a time; the exact sets,
 * which grow only as entries arrive). Then the file is opened again at its
 * body for the build: a regular file by seeking back to its start, when
 * only root or we can change it between the reads; anything else (a pipe,
 * a file others can write) from the bytes the first read took, kept in
 * memory as they arrived — as many as were sent, never more.
 *
 * Why: a compressed body or a pipe is only known complete once read, and
 * its header alone says how large a filter to build (up to 2^32 bits and
 * 4 GiB of counters). Read once, a short crafted file made import create
 * those maps before finding it truncated; read twice, what a refused file
 * costs is what it holds. A plain export in a regular file that nobody
 * else can change is read once: its size was held to the one its header
 * implies before anything was created (fbx_read.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "fleet/fbx.h"
#include "fleet/fbz.h"

/* The bytes a recording stream read from the file under it. */
struct fb_fbx_spool {
	FILE *under;
	char *buf;
	size_t len, cap;
};

static ssize_t rec_read(void *cookie, char *p, size_t n)
{
	struct fb_fbx_spool *s = cookie;
	size_t got = fread(p, 1, n, s->under);

	if (!got)
		return ferror(s->under) ? -1 : 0;
	if (got > s->cap - s->len) {
		/* Doubled as bytes arrive: what was sent, at most twice. */
		size_t cap = s->cap ? s->cap : 1 << 16;
		char *b;

		while (cap - s->len < got)
			cap *= 2;
		b = realloc(s->buf, cap);
		if (!b) {
			errno = ENOMEM;
			return -1;
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, got);
	s->len += got;
	return got;
}

/* The recording stream's close leaves the file under it and the bytes. */
static int rec_close(void *cookie)
{
	(void)cookie;
	return 0;
}

/* Only root or we can change it: nobody's writes can come between reads. */
static bool steady(const struct stat *st)
{
	return S_ISREG(st->st_mode) && (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int fb_fbx_spool_start(struct fb_fbx_in *in)
{
	static const cookie_io_functions_t io = { .read = rec_read, .close = rec_close };
	struct stat st;

	in->start = ftello(in->raw);
	if (!fstat(fileno(in->raw), &st) && steady(&st) && in->start >= 0) {
		in->seek = true;
		return 0;
	}
	in->spool = calloc(1, sizeof(*in->spool));
	if (!in->spool)
		return fb_fbx_bad(in, "out of memory");
	in->spool->under = in->under = in->raw;
	in->raw = fopencookie(in->spool, "r", io);
	if (!in->raw) {
		in->raw = in->under;
		in->under = NULL;
		return fb_fbx_bad(in, "%s", strerror(errno));
	}
	return 0;
}

void fb_fbx_spool_free(struct fb_fbx_in *in)
{
	if (!in->spool)
		return;
	free(in->spool->buf);
	free(in->spool);
	in->spool = NULL;
}

/* n bytes of the body read and dropped (the CRC counts them). */
static int skip(struct fb_fbx_in *in, size_t n)
{
	__u8 buf[1 << 16];
	size_t i, k;

	for (i = 0; i < n; i += k) {
		k = n - i < sizeof(buf) ? n - i : sizeof(buf);
		if (fb_fbx_rd(in, buf, k))
			return fb_fbx_short_read(in);
	}
	return 0;
}

/* The body after the header, in the order and with the checks of
 * fb_fbx_read_body(), fb_fbx_read_gen() and fb_fbx_finish(), except those
 * that need the filter whole (counters against bits, a typed filter's
 * table), which the build makes on what it built. */
static int scan(struct fb_fbx_in *in)
{
	struct fb_fbx_gen g;
	__u32 i;

	if (skip(in, (size_t)in->h.nblocks * FB_BLOCK_BYTES + in->cnt_bytes))
		return -1;
	if (in->h.confirm && fb_fbx_read_rules(in))
		return -1;
	in->nsets = in->nrules;
	if (in->ngens && !in->gens_ok)
		return fb_fbx_bad(in,
				  "it holds rules with a lifetime, which merge, intersect and card "
				  "leave out: import it, and merge the others --into it");
	for (i = 0; i < in->ngens; i++)
		if (fb_fbx_read_gen(in, &g) || fb_fbx_read_gen_body(in, &g, NULL, NULL))
			return -1;
	if (fb_fbx_finish(in))
		return -1;
	return fb_fbx_check_rules(in);
}

/* Opened again at the body: the same header bytes first. */
static int reopen(struct fb_fbx_in *in)
{
	__u8 b[FB_FBX_BITS_OFF];

	fclose(in->f);
	in->f = NULL;
	free(in->rules);
	in->rules = NULL;
	in->nrules = 0;
	if (in->spool) {
		fclose(in->raw);
		in->raw = fmemopen(in->spool->buf, in->spool->len, "rb");
		if (!in->raw)
			return fb_fbx_bad(in, "%s", strerror(errno));
	} else if (fseeko(in->raw, in->start, SEEK_SET)) {
		return fb_fbx_bad(in, "cannot read it again: %s", strerror(errno));
	}
	in->f = fb_fbz_reader(in->raw, &in->compressed);
	if (!in->f)
		return fb_fbx_bad(in, "%s", strerror(errno));
	in->crc = crc32(0, NULL, 0);
	if (fb_fbx_rd(in, b, sizeof(b)) || memcmp(b, in->head, sizeof(b)))
		return fb_fbx_bad(in, "changed while it was read");
	return 0;
}

int fb_fbx_open_checked(struct fb_fbx_in *in, const char *file, bool gens_ok)
{
	if (fb_fbx_open_as(in, file, true))
		return -1;
	in->gens_ok = gens_ok;
	if (in->seek && !in->compressed)
		return 0;
	if (scan(in))
		return -1;
	return reopen(in);
}
