/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The export file format (the layout is documented in
 * user/cli/cmd_image.c, which writes and imports it; fbx.c): what every
 * reader shares, so `import` and the set-algebra verbs (algebra.c) accept
 * exactly the same files.
 */
#ifndef FLOWBLOOM_USER_FBX_H
#define FLOWBLOOM_USER_FBX_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "flowbloom/geometry.h"

#define FB_FBX_MAGIC "FLOWBLM\n"
#define FB_FBX_VERSION 2
#define FB_FBX_HDR_SIZE 120		       /* bytes 16..135 */
#define FB_FBX_BITS_OFF (16 + FB_FBX_HDR_SIZE) /* the bits start here */

void fb_fbx_put32(__u8 *p, __u32 v);
void fb_fbx_put64(__u8 *p, __u64 v);
__u32 fb_fbx_get32(const __u8 *p);
__u64 fb_fbx_get64(const __u8 *p);
/* Bytes of the counters section for nblocks blocks of bits-wide counters
 * (0 for a plain filter). */
size_t fb_fbx_counter_bytes(__u32 nblocks, unsigned bits);
/* Every field of the first FB_FBX_BITS_OFF bytes checked: NULL, or what is
 * wrong. */
const char *fb_fbx_check_head(const __u8 *b);
/* The filter header those bytes describe (after fb_fbx_check_head). */
void fb_fbx_header(const __u8 *b, struct fb_header *h);

/* A file being read once, front to back, with a running CRC: it is never
 * held in memory whole. */
struct fb_fbx_in {
	FILE *f;
	unsigned long crc; /* zlib's crc32 so far */
};

void fb_fbx_in_init(struct fb_fbx_in *in, FILE *f);
/* 0, or -1 at the end of the file (or on a read error: errno set). */
int fb_fbx_read(struct fb_fbx_in *in, void *p, size_t n);
/* The bits section into blocks[0..nblocks) (the filter's bits, after its
 * header blocks): 0, or -1 if the file ends first. */
int fb_fbx_read_bits(struct fb_fbx_in *in, struct fb_block *blocks, __u32 nblocks);
/* The CRC-32 at the end, and nothing after it: NULL, or what is wrong. */
const char *fb_fbx_read_tail(struct fb_fbx_in *in);

#endif
