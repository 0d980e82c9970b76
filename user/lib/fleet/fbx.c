// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The export file format's shared parts (fbx.h). */
#include <string.h>
#include <zlib.h>
#include "types/counting.h"
#include "fleet/fbx.h"

void fb_fbx_put32(__u8 *p, __u32 v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

void fb_fbx_put64(__u8 *p, __u64 v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

__u32 fb_fbx_get32(const __u8 *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

__u64 fb_fbx_get64(const __u8 *p)
{
	return fb_fbx_get32(p) | (__u64)fb_fbx_get32(p + 4) << 32;
}

size_t fb_fbx_counter_bytes(__u32 nblocks, unsigned bits)
{
	return bits ? fb_counting_map_bytes((__u64)nblocks * FB_BLOCK_BITS, bits) -
			       FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES
		    : 0;
}

/* Every header field checked; NULL or what is wrong. */
const char *fb_fbx_check_head(const __u8 *b)
{
	unsigned layout = b[16], hash = b[17], k = b[18], cbits = b[19], action = b[20], i, j;
	__u32 nblocks = fb_fbx_get32(b + 24), kinds = fb_fbx_get32(b + 28);
	const struct fb_prefixes *px;

	if (memcmp(b, FB_FBX_MAGIC, 8))
		return "not a flowbloom export (bad magic)";
	if (fb_fbx_get32(b + 8) != FB_FBX_VERSION)
		return "unsupported format version";
	if (fb_fbx_get32(b + 12) != FB_FBX_HDR_SIZE)
		return "unexpected header size";
	if (!nblocks || nblocks > FB_MAX_BLOCKS)
		return "bad number of blocks";
	if (cbits != 0 && cbits != 4 && cbits != 8)
		return "bad counter width";
	if (b[21] > 1)
		return "bad confirm flag";
	if (b[23] & ~FB_HDRF_NFLOWS_ESTIMATE)
		return "unknown header flags";
	if ((layout != FB_LAYOUT_BLOCKED && layout != FB_LAYOUT_CLASSIC) ||
	    (hash != FB_HASH_SIPHASH13 && hash != FB_HASH_SIPHASH24 && hash != FB_HASH_NH &&
	     hash != FB_HASH_NHK) ||
	    !k || k > FB_MAX_K || action < FB_ACTION_DROP || action > FB_ACTION_MONITOR)
		return "bad geometry";
	if (kinds & ~(FB_KINDF(FB_KIND_FLOW) | FB_KINDF(FB_KIND_SRC) | FB_KINDF(FB_KIND_DST) |
		      FB_KINDF(FB_KIND_MASK)))
		return "unknown rule kinds";
	px = (const struct fb_prefixes *)(b + 72);
	/* The rule shapes: valid, distinct, zero-terminated, zeros after. */
	for (i = 0; i < FB_MAX_MASKS; i++) {
		__u32 d = fb_mask_get(px->masks, i);

		if (!d)
			break;
		if (!fb_mask_valid(d))
			return "bad rule shape";
		for (j = 0; j < i; j++)
			if (fb_mask_get(px->masks, j) == d)
				return "a rule shape twice";
	}
	for (j = i; j < FB_MAX_MASKS; j++)
		if (fb_mask_get(px->masks, j))
			return "bad rule-shape table";
	if (!!(kinds & FB_KINDF(FB_KIND_MASK)) != (i > 0))
		return "rule shapes and rule kinds disagree";
	for (i = 0; i < FB_PFX_NR; i++) {
		if (px->list[i].n > FB_MAX_LENGTHS)
			return "bad prefix-length table";
		for (j = 0; j < px->list[i].n; j++)
			if (px->list[i].len[j] > 128)
				return "bad prefix length";
	}
	return NULL;
}

void fb_fbx_header(const __u8 *b, struct fb_header *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = FB_MAGIC;
	h->version = FB_VERSION;
	h->layout = b[16];
	h->hash = b[17];
	h->k = b[18];
	h->counter_bits = b[19];
	h->action = b[20];
	h->confirm = b[21];
	h->nblocks = fb_fbx_get32(b + 24);
	h->kinds = fb_fbx_get32(b + 28);
	h->key[0] = fb_fbx_get64(b + 32);
	h->key[1] = fb_fbx_get64(b + 40);
	h->nflows = fb_fbx_get64(b + 48);
	h->flags = b[23];
	h->capacity = fb_fbx_get64(b + 56);
	h->fp_ppb = fb_fbx_get32(b + 64);
}

void fb_fbx_in_init(struct fb_fbx_in *in, FILE *f)
{
	in->f = f;
	in->crc = crc32(0, NULL, 0);
}

int fb_fbx_read(struct fb_fbx_in *in, void *p, size_t n)
{
	if (fread(p, 1, n, in->f) != n)
		return -1;
	in->crc = crc32(in->crc, p, n);
	return 0;
}

int fb_fbx_read_bits(struct fb_fbx_in *in, struct fb_block *blocks, __u32 nblocks)
{
	enum { CHUNK = 1 << 16 };
	size_t words = (size_t)nblocks * FB_BLOCK_WORDS, i, n, j;
	__u8 buf[CHUNK];

	for (i = 0; i < words; i += n) {
		n = words - i < CHUNK / 8 ? words - i : CHUNK / 8;
		if (fb_fbx_read(in, buf, n * 8))
			return -1;
		for (j = 0; j < n; j++)
			blocks[(i + j) / FB_BLOCK_WORDS].w[(i + j) % FB_BLOCK_WORDS] =
				fb_fbx_get64(buf + 8 * j);
	}
	return 0;
}

const char *fb_fbx_read_tail(struct fb_fbx_in *in)
{
	__u32 crc = (__u32)in->crc;
	__u8 buf[4];

	if (fread(buf, 1, 4, in->f) != 4)
		return "truncated";
	if (fgetc(in->f) != EOF)
		return "trailing bytes after the filter";
	if (fb_fbx_get32(buf) != crc)
		return "checksum mismatch (corrupt file)";
	return NULL;
}
