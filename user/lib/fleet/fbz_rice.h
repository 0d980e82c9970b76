/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The compressed export's bits codec (fbz_rice.c), for its stream layer
 * (fbz.c): one chunk of a filter's bits, at most FB_FBZ_CHUNK bytes, as
 * they are (mode raw) or as the Golomb-Rice coded gaps between its set
 * bits (mode ones) or its clear bits (mode zeros). The chunk framing (u8
 * mode, u8 r, u32 payload bytes, payload) is fbz.h's.
 */
#ifndef FLOWBLOOM_USER_FBZ_RICE_H
#define FLOWBLOOM_USER_FBZ_RICE_H

#include <stddef.h>
#include <linux/types.h>

#define FB_FBZ_CHUNK (64 * 1024)	       /* bytes of bits per chunk */
#define FB_FBZ_PAYLOAD_MAX (FB_FBZ_CHUNK + 16) /* a coded chunk longer than raw is stored raw */

enum { FB_FBZ_MODE_RAW, FB_FBZ_MODE_ONES, FB_FBZ_MODE_ZEROS };

/* Encode one chunk of n bytes of bits b: its mode and r, its payload into
 * out (FB_FBZ_PAYLOAD_MAX bytes); gap is scratch for n * 8 + 1 values.
 * Returns the payload's length. */
size_t fb_fbz_encode_chunk(const unsigned char *b, size_t n, unsigned char *out,
			   unsigned char *mode, unsigned char *rp, __u32 *gap);
/* Decode a chunk of n bytes of bits into out from its payload pl (len
 * bytes), mode and r: NULL, or why it is corrupt. */
const char *fb_fbz_decode_chunk(const unsigned char *pl, size_t len, int mode, unsigned r,
				unsigned char *out, size_t n);

#endif
