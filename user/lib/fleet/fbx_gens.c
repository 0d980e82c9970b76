// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The export format's generations of rules with a lifetime (see fbx.h):
 * written after the exact sets, each with its expiry as wall-clock time,
 * so a file imported later (or on another machine) keeps each rule's end;
 * generations ended by then are dropped on import. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "fleet/fbx.h"
#include "flowbloom/ttl.h"
#include "report.h"
#include "store/gens.h"
#include "store/head.h"
#include "store/jiffies.h"
#include "types/sizing.h"

/* fbx_write.c's writer, whatever it writes through. */
static int put(FILE *out, const void *p, size_t n, unsigned long *crc)
{
	return fb_fbx_put(out, p, n, crc);
}

int fb_fbx_write_gens(const struct fb_gen_views *gv, FILE *out, unsigned long *crc)
{
	struct timespec ts;
	__u8 head[FB_FBX_GEN_HEAD], word[8];
	int g;

	clock_gettime(CLOCK_REALTIME, &ts);
	for (g = 0; g < gv->n; g++) {
		const struct fb_store *v = &gv->v[g];
		const struct fb_header *h = v->hdr;
		/* A tick later than the middle of the clock's bracket: the
		 * importer's rules end no earlier than here. */
		double secs = fb_jiffies_secs(h->expires) + fb_jiffies_tick();
		size_t i;

		memset(head, 0, sizeof(head));
		fb_le_put64(head,
			    (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec + (__u64)(secs * 1e9));
		fb_le_put64(head + 8, h->nflows);
		fb_le_put32(head + 16, h->nblocks);
		fb_le_put32(head + 20, h->kinds);
		head[24] = h->k;
		memcpy(head + 32, &v->blocks[FB_PREFIX_BLOCK], FB_BLOCK_BYTES);
		if (put(out, head, sizeof(head), crc))
			return -1;
		for (i = 0; i < (size_t)h->nblocks * FB_BLOCK_WORDS; i++) {
			fb_le_put64(word, v->blocks[FB_HDR_BLOCKS + i / FB_BLOCK_WORDS]
						  .w[i % FB_BLOCK_WORDS]);
			if (put(out, word, 8, crc))
				return -1;
		}
		if (v->cnt_hdr &&
		    put(out, v->cnt, fb_fbx_counter_bytes(h->nblocks, h->counter_bits), crc))
			return -1;
	}
	return 0;
}

/* A generation's head into g, checked against the filter's header. */
static int decode(struct fb_fbx_in *in, const __u8 *b, struct fb_fbx_gen *g)
{
	__u32 ok = FB_KINDF(FB_KIND_FLOW) | FB_KINDF(FB_KIND_SRC) | FB_KINDF(FB_KIND_DST) |
		   FB_KINDF(FB_KIND_MASK);
	int i;

	g->expires_ns = fb_le_get64(b);
	g->flows = fb_le_get64(b + 8);
	g->nblocks = fb_le_get32(b + 16);
	g->kinds = fb_le_get32(b + 20);
	g->k = b[24];
	memcpy(&g->px, b + 32, sizeof(g->px));
	for (i = 25; i < 32; i++)
		if (b[i])
			return fb_fbx_bad(in, "a generation's reserved bytes are not zero");
	if (!g->nblocks || g->nblocks > FB_MAX_BLOCKS || !g->k || g->k > FB_MAX_K)
		return fb_fbx_bad(in, "a generation's geometry is bad");
	/* What a filter's generation can be (fb_gen_make): refused here,
	 * before its bits are read, not when the build makes it. */
	if (fb_chunks_for(g->nblocks) > FB_GEN_MAX_CHUNKS)
		return fb_fbx_bad(
			in,
			"a generation of %u chunks of %u KiB (a generation of rules with a "
			"lifetime holds at most %u)",
			fb_chunks_for(g->nblocks), FB_CHUNK_BYTES / 1024, FB_GEN_MAX_CHUNKS);
	if (g->kinds & ~ok)
		return fb_fbx_bad(in, "a generation holds unknown rule kinds");
	if (g->flows > fb_flows_max(g->nblocks))
		return fb_fbx_bad(in, "a generation holds more flows than its bits can");
	g->cnt_bytes = fb_fbx_counter_bytes(g->nblocks, in->h.counter_bits);
	return fb_fbx_check_lengths(in, &g->px) || fb_fbx_check_masks(in, &g->px, g->kinds) ? -1
											    : 0;
}

int fb_fbx_read_gen(struct fb_fbx_in *in, struct fb_fbx_gen *g)
{
	__u8 b[FB_FBX_GEN_HEAD];

	if (fb_fbx_rd(in, b, sizeof(b)))
		return fb_fbx_short_read(in);
	return decode(in, b, g);
}

int fb_fbx_read_gen_body(struct fb_fbx_in *in, const struct fb_fbx_gen *g, struct fb_block *blocks,
			 __u8 *cnt)
{
	enum { CHUNK = 1 << 16 };
	size_t total = (size_t)g->nblocks * FB_BLOCK_BYTES + g->cnt_bytes, i, n;
	struct fb_header h;
	__u8 buf[4096];

	if (!blocks) {
		/* Ended: read (the CRC covers it) and dropped. */
		for (i = 0; i < total; i += n) {
			n = total - i < sizeof(buf) ? total - i : sizeof(buf);
			if (fb_fbx_rd(in, buf, n))
				return fb_fbx_short_read(in);
		}
		return 0;
	}
	if (fb_fbx_read_bits(in, &blocks[FB_HDR_BLOCKS], g->nblocks))
		return fb_fbx_short_read(in);
	for (i = 0; i < g->cnt_bytes; i += n) {
		n = g->cnt_bytes - i < CHUNK ? g->cnt_bytes - i : CHUNK;
		if (fb_fbx_rd(in, cnt + i, n))
			return fb_fbx_short_read(in);
	}
	if (!g->cnt_bytes)
		return 0;
	h = in->h;
	h.nblocks = g->nblocks;
	h.k = g->k;
	h.nflows = g->flows;
	h.flags = 0;
	return fb_fbx_check_counters(in, &h, blocks, cnt);
}

int fb_fbx_gens_size(struct fb_fbx_in *in, size_t at, size_t *size)
{
	struct stat st;
	__u8 b[FB_FBX_GEN_HEAD];
	struct fb_fbx_gen g;
	__u32 i;

	*size = 0;
	if (fstat(fileno(in->raw), &st))
		return 0;
	for (i = 0; i < in->ngens; i++) {
		if ((size_t)st.st_size < at + sizeof(b) ||
		    pread(fileno(in->raw), b, sizeof(b), at) != sizeof(b))
			return fb_fbx_bad(in, "truncated");
		if (decode(in, b, &g))
			return -1;
		at += sizeof(b) + (size_t)g.nblocks * FB_BLOCK_BYTES + g.cnt_bytes;
		*size += sizeof(b) + (size_t)g.nblocks * FB_BLOCK_BYTES + g.cnt_bytes;
		if (at > (size_t)st.st_size)
			return fb_fbx_bad(in, "truncated");
	}
	return 0;
}

/* The generations of rules with a lifetime after the filter (in->ngens),
 * into staged filter f; those already ended are read and dropped. 0; -1
 * with in->why (why set) or reported (why empty). */
int fb_fbx_import_gens(struct fb_fbx_in *in, struct fb_store *f)
{
	struct timespec ts;
	__u32 mask = 0, g;

	for (g = 0; g < in->ngens; g++) {
		struct fb_fbx_gen gh;
		struct fb_store gs;
		double secs;

		if (fb_fbx_read_gen(in, &gh))
			return -1;
		clock_gettime(CLOCK_REALTIME, &ts);
		secs = ((double)gh.expires_ns - ((double)ts.tv_sec * 1e9 + ts.tv_nsec)) / 1e9;
		if (secs <= 0) {
			if (fb_fbx_read_gen_body(in, &gh, NULL, NULL))
				return -1;
			continue;
		}
		/* No generation outlives the longest lifetime and the
		 * quarter after it: an end past that (a file from a host
		 * whose clock is ahead, or made by hand) is cut to it, or
		 * its rules would match for years. */
		if (secs > FB_GEN_MAX_SECS) {
			fb_report(FB_REPORT_NOTE,
				  "%s: generation %u ends in %.0f s, past the longest lifetime "
				  "and its quarter (%.0f s): it ends then (is the exporting "
				  "host's clock ahead?)",
				  in->label, g, secs, FB_GEN_MAX_SECS);
			secs = FB_GEN_MAX_SECS;
		}
		if (fb_gens_import(f, g, secs, gh.nblocks, gh.k, &gs)) {
			in->why[0] = 0;
			return -1;
		}
		if (fb_fbx_read_gen_body(in, &gh, gs.blocks, gs.cnt)) {
			fb_gen_close(&gs);
			return -1;
		}
		memcpy(fb_store_prefixes(&gs), &gh.px, sizeof(gh.px));
		gs.hdr->nflows = gh.flows;
		__atomic_store_n(&gs.hdr->kinds, gh.kinds, __ATOMIC_RELEASE);
		/* Its probe table (store/head.h), before the mask names it. */
		if (fb_head_sync(&gs, false)) {
			fb_gen_close(&gs);
			in->why[0] = 0;
			return -1;
		}
		fb_gen_close(&gs);
		mask |= 1U << g;
	}
	if (fb_fbx_finish(in))
		return -1;
	__atomic_store_n(&f->hdr->gens, mask, __ATOMIC_RELEASE);
	return 0;
}
