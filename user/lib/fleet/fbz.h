/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Compressed exports: a stream layer under the export format (fbx.h). The
 * writer turns the plain export's bytes into the compressed form as they
 * are written; the reader gives back the plain bytes of either form,
 * compressed or plain told apart by the magic. Everything above (the
 * header checks, the CRC-32 over the plain bytes, the streaming reads of
 * import, merge, intersect and card) works on the plain bytes as before.
 *
 * Compressed form, version 1, little-endian:
 *   0   "FLOWBLZ\n"
 *   8   u32 version = 1, u32 flags = 0
 *   16  the plain export's first FB_FBX_BITS_OFF bytes (its header), as is
 *   ... the bits section (nblocks x 64 bytes) in chunks of at most 64 KiB
 *       of bits, each: u8 mode, u8 r, u32 payload bytes, payload
 *       (fbz_rice.c codes one chunk).
 *         mode 0: the chunk's bytes as they are (r 0)
 *         mode 1: the gaps between set bits, Golomb-Rice coded with
 *                 parameter r (Golomb 1966; Rice 1979), then one gap to the
 *                 end of the chunk, then zero bits to the byte
 *         mode 2: the same over clear bits (chunks more than half full)
 *       A Bloom filter's bits are close to independent with probability f
 *       of being set, so the gaps are geometric and Rice's code of them
 *       comes within a few percent of m H(f) bits, the entropy bound, at
 *       the fills filters are used at (the bench prints both).
 *   ... the rest of the plain export (counters, exact sets, CRC) as one
 *       zstd frame, window at most 8 MiB
 *
 * The reader refuses, with a reason (fb_fbz_why): a stream that would
 * expand past what its export header says (a decompression bomb or a
 * corrupt file: output never exceeds the header's sizes), truncated or
 * corrupt chunks (a raw chunk's r or a coded chunk's padding bits not
 * zero included: no bit of the file outside the zstd frame is ignored), a
 * truncated or trailing zstd frame, an unknown version. Inside the zstd
 * frame a few bits are ones zstd's decoder ignores (reserved bits, an
 * offset into a run of equal bytes): a flip there decodes to the same
 * plain bytes; any flip that changes them fails zstd's checksum and the
 * export's CRC-32.
 * It holds one chunk and zstd's buffers, never the whole file.
 */
#ifndef FLOWBLOOM_USER_FBZ_H
#define FLOWBLOOM_USER_FBZ_H

#include <stdbool.h>
#include <stdio.h>

#define FB_FBZ_MAGIC "FLOWBLZ\n"
#define FB_FBZ_VERSION 1

/* A stream that compresses what an export writes into raw; fclose() it to
 * finish (raw stays open, and must then be flushed and closed as usual).
 * NULL: error reported. */
FILE *fb_fbz_writer(FILE *raw);
/* A stream of the plain export bytes read from raw, which may hold either
 * form; *compressed says which (known once the first read returned).
 * fclose() it before raw. NULL: error reported. */
FILE *fb_fbz_reader(FILE *raw, bool *compressed);
/* Why the last read of f (a reader) failed, or NULL if it did not fail
 * in this layer (then ferror/feof say what happened below). */
const char *fb_fbz_why(FILE *f);

/* The bits codec alone, for the benchmark and tests: the encoded size in
 * bytes of n bytes of bits (every chunk's mode, r and length included). */
size_t fb_fbz_bits_size(const unsigned char *bits, size_t n);

#endif
