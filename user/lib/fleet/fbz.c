// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The compressed export stream (fbz.h): a writer and a reader, each a
 * stdio stream (fopencookie) so the export code above reads and writes
 * plain bytes through fread/fwrite as it always did. This file owns the
 * framing: the compressed header, the bits section cut into chunks (each
 * chunk's coding is fbz_rice.c's), the zstd frame of the rest, and the
 * bounds that hold the output to what the export header says.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "flowbloom/geometry.h"
#include "flowbloom/ttl.h"
#include "fleet/fbx_format.h"
#include "fleet/fbz.h"
#include "fleet/fbz_rice.h"
#include "report.h"

#define ZSTD_LEVEL 3
#define ZSTD_WLOG 23 /* 8 MiB window at most, written and accepted */
#define SET_REC FB_FBX_RULE_BYTES

/* What the plain header says the rest of the stream is. */
struct shape {
	__u64 bits; /* bytes of the bits section */
	__u64 rest; /* bytes after it, as far as known (exact sets: once their count is read) */
	bool confirm;
	size_t cbytes; /* counter bytes */
	unsigned counter_bits;
	__u32 ngens; /* generations of rules with a lifetime after the sets */
};

/* 0, or -1 if the header's sizes make no sense (fbx's checks then say why). */
static int shape_of(const unsigned char *h, struct shape *s)
{
	__u32 nblocks = fb_le_get32(h + FB_FBX_OFF_NBLOCKS);
	unsigned cbits = h[FB_FBX_OFF_COUNTER_BITS];

	if (memcmp(h, FB_FBX_MAGIC, 8) || !nblocks || nblocks > FB_MAX_BLOCKS ||
	    (cbits != 0 && cbits != 4 && cbits != 8) || h[FB_FBX_OFF_CONFIRM] > 1)
		return -1;
	s->bits = (__u64)nblocks * FB_BLOCK_BYTES;
	s->cbytes = fb_fbx_counter_bytes(nblocks, cbits);
	s->confirm = h[FB_FBX_OFF_CONFIRM];
	s->counter_bits = cbits;
	s->ngens = fb_le_get32(h + FB_FBX_OFF_NGENS);
	if (s->ngens > FB_GEN_SLOTS)
		return -1;
	/* A first generation's head, if any: the rest of each is known once
	 * its head was served (read_rest). */
	s->rest = s->cbytes + (s->confirm ? 8 : 0) + 4 + (s->ngens ? FB_FBX_GEN_HEAD : 0);
	return 0;
}

/* ---- the writer ---- */

struct zw {
	FILE *raw;
	unsigned char head[FB_FBX_BITS_OFF];
	size_t hn;	 /* header bytes so far */
	struct shape s;	 /* once the header is complete */
	__u64 bits_done; /* bits section bytes consumed */
	unsigned char chunk[FB_FBZ_CHUNK];
	size_t cn; /* bytes in chunk */
	__u32 gap[FB_FBZ_CHUNK * 8 + 1];
	ZSTD_CCtx *z; /* the rest */
	bool bad;     /* the header made no sense: stored raw, the reader refuses it */
};

static int raw_write(FILE *raw, const void *p, size_t n)
{
	return fwrite(p, 1, n, raw) == n ? 0 : -1;
}

static int write_chunk(struct zw *w)
{
	unsigned char out[FB_FBZ_PAYLOAD_MAX], h[6];
	size_t len;

	if (!w->cn)
		return 0;
	len = fb_fbz_encode_chunk(w->chunk, w->cn, out, &h[0], &h[1], w->gap);
	h[2] = len;
	h[3] = len >> 8;
	h[4] = len >> 16;
	h[5] = len >> 24;
	w->cn = 0;
	return raw_write(w->raw, h, 6) || raw_write(w->raw, out, len) ? -1 : 0;
}

static int zstd_out(struct zw *w, const void *p, size_t n, ZSTD_EndDirective end)
{
	ZSTD_inBuffer in = { p, n, 0 };
	unsigned char buf[1 << 16];
	size_t left;

	do {
		ZSTD_outBuffer out = { buf, sizeof(buf), 0 };

		left = ZSTD_compressStream2(w->z, &out, &in, end);
		if (ZSTD_isError(left)) {
			errno = EIO;
			return -1;
		}
		if (raw_write(w->raw, buf, out.pos))
			return -1;
	} while (end == ZSTD_e_end ? left != 0 : in.pos < in.size);
	return 0;
}

static ssize_t zw_write(void *cookie, const char *p, size_t n)
{
	struct zw *w = cookie;
	size_t done = 0, take;

	while (done < n) {
		if (w->hn < sizeof(w->head)) {
			take = n - done < sizeof(w->head) - w->hn ? n - done
								  : sizeof(w->head) - w->hn;
			memcpy(w->head + w->hn, p + done, take);
			w->hn += take;
			done += take;
			if (w->hn < sizeof(w->head))
				continue;
			w->bad = shape_of(w->head, &w->s) != 0;
			if (w->bad)
				w->s.bits = 0;
			if (raw_write(w->raw, FB_FBZ_MAGIC, 8) ||
			    raw_write(w->raw, "\1\0\0\0\0\0\0\0", 8) ||
			    raw_write(w->raw, w->head, sizeof(w->head)))
				return -1;
		} else if (w->bits_done < w->s.bits) {
			take = n - done;
			if (take > FB_FBZ_CHUNK - w->cn)
				take = FB_FBZ_CHUNK - w->cn;
			if (take > w->s.bits - w->bits_done)
				take = w->s.bits - w->bits_done;
			memcpy(w->chunk + w->cn, p + done, take);
			w->cn += take;
			w->bits_done += take;
			done += take;
			if ((w->cn == FB_FBZ_CHUNK || w->bits_done == w->s.bits) && write_chunk(w))
				return -1;
		} else {
			if (zstd_out(w, p + done, n - done, ZSTD_e_continue))
				return -1;
			done = n;
		}
	}
	return n;
}

static int zw_close(void *cookie)
{
	struct zw *w = cookie;
	int rc = 0;

	/* An export always completes the sections; a short one is an error
	 * that fclose() of the caller reports (and the file is discarded). */
	if (w->hn < sizeof(w->head) || w->bits_done < w->s.bits)
		rc = -1;
	else if (zstd_out(w, NULL, 0, ZSTD_e_end))
		rc = -1;
	ZSTD_freeCCtx(w->z);
	free(w);
	return rc;
}

FILE *fb_fbz_writer(FILE *raw)
{
	static const cookie_io_functions_t io = { .write = zw_write, .close = zw_close };
	struct zw *w = calloc(1, sizeof(*w));
	FILE *f;

	if (!w || !(w->z = ZSTD_createCCtx())) {
		free(w);
		fb_report_err("cannot start compression: out of memory");
		return NULL;
	}
	w->raw = raw;
	ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, ZSTD_LEVEL);
	ZSTD_CCtx_setParameter(w->z, ZSTD_c_windowLog, ZSTD_WLOG);
	ZSTD_CCtx_setParameter(w->z, ZSTD_c_checksumFlag, 1);
	f = fopencookie(w, "w", io);
	if (!f) {
		ZSTD_freeCCtx(w->z);
		free(w);
		fb_report_err("cannot start compression: %s", strerror(errno));
	}
	return f;
}

/* ---- the reader ---- */

struct zr {
	FILE *raw;
	bool compressed;
	const char *why;
	/* plain: the magic bytes read to tell, served first */
	unsigned char peek[8];
	size_t npeek, peek_at;
	/* compressed */
	unsigned char head[FB_FBX_BITS_OFF];
	size_t head_at;
	struct shape s;
	bool shaped;
	__u64 bits_out;			   /* bits section bytes served */
	unsigned char chunk[FB_FBZ_CHUNK]; /* decoded */
	size_t cn, c_at;		   /* bytes in chunk, served */
	unsigned char payload[FB_FBZ_PAYLOAD_MAX];
	ZSTD_DCtx *z;
	unsigned char zin[1 << 16];
	ZSTD_inBuffer in;
	__u64 rest_out;	       /* bytes of the rest served */
	unsigned char setn[8]; /* the exact-set count, as served */
	/* Generations (fbx_gens.c): the head being served, where it starts
	 * in the rest, how many heads were served whole. */
	unsigned char genh[FB_FBX_GEN_HEAD];
	__u64 gen_at;
	__u32 gens_seen;
	bool frame_done;
};

/* A small registry from FILE to cookie, for fb_fbz_why (the CLI reads a
 * few files at a time, one after the other). */
#define NREG 16
static struct {
	FILE *f;
	struct zr *r;
} reg[NREG];

const char *fb_fbz_why(FILE *f)
{
	int i;

	for (i = 0; i < NREG; i++)
		if (reg[i].f == f && f)
			return reg[i].r->why;
	return NULL;
}

static ssize_t fail(struct zr *r, const char *why)
{
	if (!r->why)
		r->why = why;
	errno = EIO;
	return -1;
}

static int read_exact(struct zr *r, void *p, size_t n)
{
	return fread(p, 1, n, r->raw) == n ? 0 : -1;
}

static ssize_t next_chunk(struct zr *r)
{
	unsigned char h[6];
	__u64 left = r->s.bits - r->bits_out;
	size_t n = left < FB_FBZ_CHUNK ? left : FB_FBZ_CHUNK, len;
	const char *why;

	if (read_exact(r, h, 6))
		return fail(r, ferror(r->raw) ? "read error" : "truncated (in the bits)");
	len = fb_le_get32(h + 2);
	if (len > FB_FBZ_PAYLOAD_MAX)
		return fail(r, "corrupt compressed chunk (length)");
	if (read_exact(r, r->payload, len))
		return fail(r, ferror(r->raw) ? "read error" : "truncated (in the bits)");
	why = fb_fbz_decode_chunk(r->payload, len, h[0], h[1], r->chunk, n);
	if (why)
		return fail(r, why);
	r->cn = n;
	r->c_at = 0;
	return 0;
}

/* Up to n bytes of the rest into p; 0 at its end. Never more than the
 * header allows: the exact-set count, once served, extends the bound. */
static ssize_t read_rest(struct zr *r, char *p, size_t n)
{
	__u64 bound = r->s.rest, cnt_end = r->s.cbytes + 8;
	ZSTD_outBuffer out;
	size_t ret;

	if (r->s.confirm && r->rest_out >= cnt_end) {
		__u64 sets = fb_le_get64(r->setn);

		if (sets > (UINT64_MAX - bound) / SET_REC)
			return fail(r, "expands past what its export header says");
		bound += sets * SET_REC;
	}
	if (r->s.confirm && r->rest_out < cnt_end && n > cnt_end - r->rest_out)
		n = cnt_end - r->rest_out; /* stop at the count, to read it */
	/* Generations follow the sets (files with both are refused by fbx):
	 * each head, once served, extends the bound by its array and
	 * counters, and by the next head. */
	if (r->s.ngens) {
		__u64 at = r->gen_at;

		if (r->gens_seen == 0 && !r->gen_at)
			r->gen_at = at = r->s.cbytes + (r->s.confirm ? 8 : 0);
		if (r->rest_out >= at + FB_FBX_GEN_HEAD && r->gens_seen < r->s.ngens) {
			__u32 nb = fb_le_get32(r->genh + 16);

			if (!nb || nb > FB_MAX_BLOCKS)
				return fail(r, "expands past what its export header says");
			r->gens_seen++;
			r->gen_at = at + FB_FBX_GEN_HEAD + (__u64)nb * FB_BLOCK_BYTES +
				    fb_fbx_counter_bytes(nb, r->s.counter_bits);
			r->s.rest += r->gen_at - (at + FB_FBX_GEN_HEAD) +
				     (r->gens_seen < r->s.ngens ? FB_FBX_GEN_HEAD : 0);
			at = r->gen_at;
		}
		bound = r->s.rest;
		if (r->gens_seen < r->s.ngens && r->rest_out < at + FB_FBX_GEN_HEAD &&
		    n > at + FB_FBX_GEN_HEAD - r->rest_out)
			n = at + FB_FBX_GEN_HEAD - r->rest_out; /* stop at the head's end */
	}
	if (r->rest_out == bound) {
		/* All the header allows was served: the frame must end here,
		 * and the file with it. */
		if (!r->frame_done) {
			unsigned char extra;

			out = (ZSTD_outBuffer){ &extra, 1, 0 };
			do {
				if (r->in.pos == r->in.size) {
					r->in.size = fread(r->zin, 1, sizeof(r->zin), r->raw);
					r->in.pos = 0;
					if (!r->in.size)
						return fail(r, "truncated (compressed stream)");
				}
				ret = ZSTD_decompressStream(r->z, &out, &r->in);
				if (ZSTD_isError(ret))
					return fail(r, "corrupt compressed stream");
				if (out.pos)
					return fail(r, "expands past what its export header "
						       "says (a decompression bomb, or corrupt)");
			} while (ret);
			r->frame_done = true;
		}
		if (r->in.pos < r->in.size || fgetc(r->raw) != EOF)
			return fail(r, "trailing bytes after the compressed stream");
		return 0;
	}
	if (n > bound - r->rest_out)
		n = bound - r->rest_out;
	out = (ZSTD_outBuffer){ p, n, 0 };
	while (!out.pos) {
		if (r->frame_done)
			return fail(r, "truncated (compressed stream ends early)");
		if (r->in.pos == r->in.size) {
			r->in.size = fread(r->zin, 1, sizeof(r->zin), r->raw);
			r->in.pos = 0;
			if (!r->in.size)
				return fail(r, ferror(r->raw) ? "read error"
							      : "truncated (compressed stream)");
		}
		ret = ZSTD_decompressStream(r->z, &out, &r->in);
		if (ZSTD_isError(ret))
			return fail(r, "corrupt compressed stream");
		if (!ret)
			r->frame_done = true;
	}
	if (r->s.confirm && r->rest_out < cnt_end && r->rest_out + out.pos > r->s.cbytes) {
		size_t from = r->rest_out < r->s.cbytes ? r->s.cbytes - r->rest_out : 0, i;

		for (i = from; i < out.pos; i++)
			r->setn[r->rest_out + i - r->s.cbytes] = p[i];
	}
	if (r->s.ngens && r->gens_seen < r->s.ngens && r->rest_out + out.pos > r->gen_at &&
	    r->rest_out < r->gen_at + FB_FBX_GEN_HEAD) {
		size_t i;

		for (i = 0; i < out.pos; i++)
			if (r->rest_out + i >= r->gen_at &&
			    r->rest_out + i < r->gen_at + FB_FBX_GEN_HEAD)
				r->genh[r->rest_out + i - r->gen_at] = p[i];
	}
	r->rest_out += out.pos;
	return out.pos;
}

static ssize_t zr_read(void *cookie, char *p, size_t n)
{
	struct zr *r = cookie;
	size_t take;

	if (r->why) {
		errno = EIO;
		return -1;
	}
	if (!r->compressed) {
		if (r->peek_at < r->npeek) {
			take = n < r->npeek - r->peek_at ? n : r->npeek - r->peek_at;
			memcpy(p, r->peek + r->peek_at, take);
			r->peek_at += take;
			return take;
		}
		take = fread(p, 1, n, r->raw);
		if (!take && ferror(r->raw))
			return -1;
		return take;
	}
	if (r->head_at < sizeof(r->head)) {
		take = n < sizeof(r->head) - r->head_at ? n : sizeof(r->head) - r->head_at;
		memcpy(p, r->head + r->head_at, take);
		r->head_at += take;
		return take;
	}
	if (!r->shaped)
		return fail(r, "unusable export header inside the compressed stream");
	if (r->bits_out < r->s.bits) {
		if (r->c_at == r->cn && next_chunk(r))
			return -1;
		take = n < r->cn - r->c_at ? n : r->cn - r->c_at;
		memcpy(p, r->chunk + r->c_at, take);
		r->c_at += take;
		r->bits_out += take;
		return take;
	}
	return read_rest(r, p, n);
}

static int zr_close(void *cookie)
{
	struct zr *r = cookie;
	int i;

	for (i = 0; i < NREG; i++)
		if (reg[i].r == r)
			reg[i].f = NULL, reg[i].r = NULL;
	ZSTD_freeDCtx(r->z);
	free(r);
	return 0;
}

FILE *fb_fbz_reader(FILE *raw, bool *compressed)
{
	static const cookie_io_functions_t io = { .read = zr_read, .close = zr_close };
	struct zr *r = calloc(1, sizeof(*r));
	unsigned char v[8];
	FILE *f;
	int i;

	if (!r) {
		fb_report_err("out of memory");
		return NULL;
	}
	r->raw = raw;
	r->npeek = fread(r->peek, 1, 8, raw);
	r->compressed = r->npeek == 8 && !memcmp(r->peek, FB_FBZ_MAGIC, 8);
	if (r->compressed) {
		r->z = ZSTD_createDCtx();
		if (!r->z) {
			free(r);
			fb_report_err("out of memory");
			return NULL;
		}
		ZSTD_DCtx_setParameter(r->z, ZSTD_d_windowLogMax, ZSTD_WLOG);
		r->in.src = r->zin;
		if (read_exact(r, v, 8) || read_exact(r, r->head, sizeof(r->head)))
			r->why = ferror(raw) ? "read error" : "truncated (compressed header)";
		else if (fb_le_get32(v) != FB_FBZ_VERSION || fb_le_get32(v + 4))
			r->why = "unsupported compressed format version";
		else
			r->shaped = !shape_of(r->head, &r->s);
	}
	*compressed = r->compressed;
	f = fopencookie(r, "r", io);
	if (!f) {
		ZSTD_freeDCtx(r->z);
		free(r);
		fb_report_err("cannot read: %s", strerror(errno));
		return NULL;
	}
	for (i = 0; i < NREG; i++)
		if (!reg[i].f) {
			reg[i].f = f;
			reg[i].r = r;
			break;
		}
	return f;
}
