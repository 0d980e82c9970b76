// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every single-bit flip of an export file that carries a generation of
 * rules with a lifetime, in both forms (plain, and compressed: fbz.h),
 * read by the one reader (user/lib/fleet/fbx_read.c) the way import reads
 * it. A flip is either refused, or (only inside the zstd frame, whose own
 * encoding has bits its decoder ignores) decodes to exactly what the
 * original holds: header, prefix table, bits, the generation's head and
 * bits. The plain form and the compressed form's own framing (its header,
 * the chunk headers, the Rice payloads and their padding) have no
 * ignorable bit at all: every flip there is refused.
 *
 * Two small files (2 blocks of bits): the filter's bits sparse (a Rice
 * coded chunk) or random (a chunk stored raw), so both chunk modes are
 * flipped. About 10,000 reads, well under a second.
 */
#define _GNU_SOURCE
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "fleet/fbx.h"
#include "fleet/fbz.h"
#include "fleet.h"
#include "packet.h"

#define NB 2 /* blocks of bits, the filter's and the generation's */

static uint64_t seed = 7;

/* What a read of the file gave: everything import would apply (the
 * arrays sized by the header read, as import sizes the filter it builds). */
struct got {
	struct fb_header h;
	struct fb_prefixes px;
	struct fb_fbx_gen g;
	size_t bytes, gbytes, cbytes, gcbytes;
	struct fb_block *blocks, *gblocks;
	__u8 *cnt, *gcnt;
};

static void got_free(struct got *g)
{
	free(g->blocks);
	free(g->gblocks);
	free(g->cnt);
	free(g->gcnt);
	memset(g, 0, sizeof(*g));
}

static bool got_same(const struct got *a, const struct got *b)
{
	return !memcmp(&a->h, &b->h, sizeof(a->h)) && !memcmp(&a->px, &b->px, sizeof(a->px)) &&
	       !memcmp(&a->g, &b->g, sizeof(a->g)) && a->bytes == b->bytes &&
	       a->gbytes == b->gbytes && a->cbytes == b->cbytes && a->gcbytes == b->gcbytes &&
	       !memcmp(a->blocks, b->blocks, a->bytes) &&
	       !memcmp(a->gblocks, b->gblocks, a->gbytes) && !memcmp(a->cnt, b->cnt, a->cbytes) &&
	       !memcmp(a->gcnt, b->gcnt, a->gcbytes);
}

/* The plain export of a Bloom filter (NB blocks, bits from fill) with one
 * generation an hour from now, into buf; its length. */
static size_t plain_export(__u8 *buf, void (*fill)(__u8 *bits, size_t n, int which))
{
	struct timespec ts;
	__u8 *p = buf;
	uLong crc;

	memset(buf, 0, FB_FBX_BITS_OFF);
	memcpy(p + FB_FBX_OFF_MAGIC, FB_FBX_MAGIC, 8);
	fb_le_put32(p + FB_FBX_OFF_VERSION, FB_FBX_VERSION);
	fb_le_put32(p + FB_FBX_OFF_HDR_SIZE, FB_FBX_HDR_SIZE);
	p[FB_FBX_OFF_LAYOUT] = FB_LAYOUT_BLOCKED;
	p[FB_FBX_OFF_HASH] = FB_HASH_NH;
	p[FB_FBX_OFF_K] = 3;
	p[FB_FBX_OFF_ACTION] = FB_ACTION_DROP;
	fb_le_put32(p + FB_FBX_OFF_NBLOCKS, NB);
	fb_le_put32(p + FB_FBX_OFF_KINDS, FB_KINDF(FB_KIND_FLOW));
	fb_le_put64(p + FB_FBX_OFF_KEY, 0x0123456789abcdefULL);
	fb_le_put64(p + FB_FBX_OFF_KEY + 8, 0xfedcba9876543210ULL);
	fb_le_put64(p + FB_FBX_OFF_FLOWS, 4);
	fb_le_put64(p + FB_FBX_OFF_CAPACITY, 4); /* what NB blocks hold at the rate */
	fb_le_put32(p + FB_FBX_OFF_FP_PPB, 1000000);
	fb_le_put32(p + FB_FBX_OFF_NGENS, 1);
	p += FB_FBX_BITS_OFF;
	fill(p, NB * FB_BLOCK_BYTES, 0);
	p += NB * FB_BLOCK_BYTES;
	memset(p, 0, FB_FBX_GEN_HEAD);
	clock_gettime(CLOCK_REALTIME, &ts);
	fb_le_put64(p, ((__u64)ts.tv_sec + 3600) * 1000000000ULL);
	fb_le_put64(p + 8, 2);
	fb_le_put32(p + 16, NB);
	fb_le_put32(p + 20, FB_KINDF(FB_KIND_FLOW));
	p[24] = 3;
	p += FB_FBX_GEN_HEAD;
	fill(p, NB * FB_BLOCK_BYTES, 1);
	p += NB * FB_BLOCK_BYTES;
	crc = crc32(crc32(0, NULL, 0), buf, p - buf);
	fb_le_put32(p, (__u32)crc);
	return p + 4 - buf;
}

static void sparse(__u8 *bits, size_t n, int which)
{
	memset(bits, 0, n);
	for (int i = 0; i < 12; i++) {
		size_t b = (test_rand64(&seed) + which) % (n * 8);

		bits[b / 8] |= 1 << (b % 8);
	}
}

static void dense(__u8 *bits, size_t n, int which)
{
	for (size_t i = 0; i < n; i++)
		bits[i] = (__u8)test_rand64(&seed);
	if (which) /* the generation's sparse: its own coding does not matter here */
		sparse(bits, n, which);
}

static void put_file(const char *path, const __u8 *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(b, 1, n, f) != n || fclose(f))
		abort();
}

/* Read path as import does (the generation's body kept): 0 and *g (to be
 * freed), or -1. */
static int read_export(const char *path, struct got *g)
{
	struct fb_fbx_in in;
	int rc = -1;

	memset(g, 0, sizeof(*g));
	if (fb_fbx_open(&in, path))
		goto out;
	in.gens_ok = true;
	g->bytes = (size_t)(FB_HDR_BLOCKS + in.h.nblocks) * FB_BLOCK_BYTES;
	g->cbytes = in.cnt_bytes;
	g->blocks = calloc(1, g->bytes);
	g->cnt = calloc(1, g->cbytes + 1);
	if (!g->blocks || !g->cnt || fb_fbx_read_body(&in, g->blocks, g->cnt) || in.ngens != 1 ||
	    fb_fbx_read_gen(&in, &g->g))
		goto out;
	g->gbytes = (size_t)(FB_HDR_BLOCKS + g->g.nblocks) * FB_BLOCK_BYTES;
	g->gcbytes = g->g.cnt_bytes;
	g->gblocks = calloc(1, g->gbytes);
	g->gcnt = calloc(1, g->gcbytes + 1);
	if (!g->gblocks || !g->gcnt || fb_fbx_read_gen_body(&in, &g->g, g->gblocks, g->gcnt) ||
	    fb_fbx_finish(&in))
		goto out;
	g->h = in.h;
	g->px = in.px;
	rc = 0;
out:
	if (rc)
		got_free(g);
	fb_fbx_close(&in);
	return rc;
}

/* Where the zstd frame starts in a compressed export: after its header and
 * the one chunk of bits (6 bytes of framing, then the payload). */
static size_t zstd_start(const __u8 *z)
{
	size_t at = 16 + FB_FBX_BITS_OFF;

	return at + 6 + fb_le_get32(z + at + 2);
}

/* Every bit of file (n bytes) flipped: changed content never accepted,
 * no flip accepted before offset strict_end. */
static void flip_all(const char *label, const __u8 *file, size_t n, size_t strict_end,
		     const char *path)
{
	unsigned changed = 0, ignored = 0, zstd_same = 0;
	size_t first_ignored = 0;
	struct got want, got;
	__u8 *b = malloc(n);
	char l[160];

	put_file(path, file, n);
	snprintf(l, sizeof(l), "%s: the file as written reads", label);
	if (!ASSERT_TRUE(!read_export(path, &want), l))
		goto out;
	for (size_t i = 0; i < n; i++)
		for (int bit = 0; bit < 8; bit++) {
			memcpy(b, file, n);
			b[i] ^= 1 << bit;
			put_file(path, b, n);
			if (read_export(path, &got))
				continue;
			bool same = got_same(&got, &want);

			got_free(&got);
			if (!same)
				changed++;
			else if (i < strict_end) {
				if (!ignored++)
					first_ignored = i * 8 + bit;
			} else
				zstd_same++;
		}
	snprintf(l, sizeof(l), "%s: no flip of its %zu bits accepted with other content", label,
		 n * 8);
	ASSERT_EQ(changed, 0, l);
	snprintf(l, sizeof(l),
		 "%s: no flip accepted in the format's own bytes (first %zu; first accepted: bit "
		 "%zu)",
		 label, strict_end, ignored ? first_ignored : 0);
	ASSERT_EQ(ignored, 0, l);
	if (zstd_same)
		printf("# %s: %u flips inside the zstd frame decode to the same bytes (zstd's "
		       "ignored bits; the content is the CRC's)\n",
		       label, zstd_same);
out:
	got_free(&want);
	free(b);
}

void test_export_flips(void)
{
	static const struct {
		const char *label;
		void (*fill)(__u8 *, size_t, int);
	} f[] = { { "sparse bits (a Rice chunk)", sparse },
		  { "random bits (a raw chunk)", dense } };
	char path[] = "/tmp/fbtest-flip.XXXXXX", zpath[sizeof(path) + 2];
	__u8 plain[4096], z[8192];
	int fd = mkstemp(path);

	if (!ASSERT_TRUE(fd >= 0, "export flips: a temporary file"))
		return;
	close(fd);
	snprintf(zpath, sizeof(zpath), "%s.z", path);
	for (size_t t = 0; t < sizeof(f) / sizeof(f[0]); t++) {
		size_t n = plain_export(plain, f[t].fill), zn;
		FILE *raw = fopen(zpath, "w+b"), *w;
		char l[160];

		if (!raw)
			abort();
		w = fb_fbz_writer(raw);
		if (!w || fwrite(plain, 1, n, w) != n || fclose(w) || fflush(raw))
			abort();
		rewind(raw);
		zn = fread(z, 1, sizeof(z), raw);
		fclose(raw);
		snprintf(l, sizeof(l), "plain, %s", f[t].label);
		flip_all(l, plain, n, n, path);
		snprintf(l, sizeof(l), "compressed, %s", f[t].label);
		ASSERT_EQ(z[16 + FB_FBX_BITS_OFF], t ? 0 : 1, "the bits chunk's mode: raw or Rice");
		flip_all(l, z, zn, zstd_start(z), path);
	}
	unlink(path);
	unlink(zpath);
}
