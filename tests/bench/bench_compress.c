// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `bench compress`: export file sizes. A blocked filter of 8 MiB, k = 8,
 * filled with distinct flows to 1 %, 10 % and 50 % of its bits (and the
 * issue's case, 10,000 flows in 32 MiB); for each: the plain export, the
 * compressed export the CLI writes (Golomb-Rice bits + zstd rest,
 * user/lib/fleet/fbz.h), the bits alone under that code, under zstd at
 * levels 3 and 19, and the information-theoretic bound m H(f) bits for
 * the measured fill f (H the binary entropy: what any code for bits that
 * are independent and set with probability f needs on average; Shannon
 * 1948). Export and import times through the CLI beside.
 */
#include <math.h>
#include <sys/stat.h>
#include <zstd.h>
#include "benchmark.h"
#include "fleet/fbz.h"

static double entropy(double f)
{
	return f <= 0 || f >= 1 ? 0 : -(f * log2(f) + (1 - f) * log2(1 - f));
}

static long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long long)st.st_size;
}

/* Run a shell command, return its wall time in seconds (exit on failure). */
static double timed(const char *cmd)
{
	double t0 = now();

	if (system(cmd)) {
		fprintf(stderr, "bench: compress: '%s' failed\n", cmd);
		exit(1);
	}
	return now() - t0;
}

static void one(const char *name, __u64 bits, __u32 flows, const char *what)
{
	const char *fb = getenv("FLOWBLOOM_BIN") ?: "build/flowbloom";
	size_t nbytes, zcap, z3, z19, rice;
	char cmd[1024], plain[256], comp[256];
	unsigned char *raw, *zbuf;
	double f, bound, te, ti;
	struct fb_store s;
	struct fb_key k;
	__u64 set = 0;
	__u32 i, b, w;

	if (make_filter(name, bits, 8, FB_LAYOUT_BLOCKED, 0, &s))
		exit(1);
	/* The filter's own bits: whole chunks. */
	bits = (__u64)s.hdr->nblocks * FB_BLOCK_BITS;
	nbytes = bits / 8;
	zcap = ZSTD_compressBound(nbytes);
	for (i = 0; i < flows; i++) {
		fb_bench_flow(i, 0, &k);
		fb_bits_set(&s, &k);
	}
	s.hdr->nflows = flows;
	s.hdr->kinds = FB_KINDF(FB_KIND_FLOW);
	raw = malloc(nbytes);
	zbuf = malloc(zcap);
	if (!raw || !zbuf)
		exit(1);
	/* The bits as the export lays them out: little-endian words. */
	for (b = 0; b < s.hdr->nblocks; b++)
		for (w = 0; w < FB_BLOCK_WORDS; w++) {
			__u64 v = s.blocks[FB_HDR_BLOCKS + b].w[w];

			set += __builtin_popcountll(v);
			for (i = 0; i < 8; i++)
				raw[(size_t)b * FB_BLOCK_BYTES + w * 8 + i] = v >> (8 * i);
		}
	f = (double)set / bits;
	bound = bits * entropy(f) / 8;
	z3 = ZSTD_compress(zbuf, zcap, raw, nbytes, 3);
	z19 = ZSTD_compress(zbuf, zcap, raw, nbytes, 19);
	rice = fb_fbz_bits_size(raw, nbytes);
	snprintf(comp, sizeof(comp), "/tmp/fbbench_%d_%s.fbz", getpid(), name);
	snprintf(plain, sizeof(plain), "/tmp/fbbench_%d_%s.plain", getpid(), name);
	snprintf(cmd, sizeof(cmd), "%s export %s %s --plain >/dev/null", fb, name, plain);
	timed(cmd);
	snprintf(cmd, sizeof(cmd), "%s export %s %s >/dev/null", fb, name, comp);
	te = timed(cmd);
	snprintf(cmd, sizeof(cmd), "%s import %s %s_in >/dev/null && %s destroy %s_in >/dev/null",
		 fb, comp, name, fb, name);
	ti = timed(cmd);
	printf("  %-26s fill %6.3f%%  plain %9lld  compressed %9lld  bound %9.0f  (%.3f x)\n", what,
	       100 * f, file_size(plain), file_size(comp), bound, file_size(comp) / bound);
	printf("  %-26s bits alone: Rice %9zu (%.3f x bound)  zstd -3 %9zu (%.3f x)  zstd -19 "
	       "%9zu (%.3f x); export %.2f s, import %.2f s\n",
	       "", rice, rice / bound, z3, z3 / bound, z19, z19 / bound, te, ti);
	if (!strcmp(name, "z10"))
		target("compressed export at 10 % fill / bound", file_size(comp) / bound, 1.1,
		       true);
	unlink(plain);
	unlink(comp);
	free(raw);
	free(zbuf);
	fb_store_close(&s);
	fb_store_destroy(name);
}

void bench_compress(void)
{
	const __u64 m = MIB_BITS(8); /* a filter of 8 MiB */

	printf("\n15. export file sizes, bytes (blocked, k = 8; bound: m H(f) / 8 for the fill "
	       "f)\n");
	/* Flows for a fill f: 1 - exp(-k n / m) = f. */
	one("z1", m, (__u32)(-log(1 - 0.01) * m / 8), "8 MiB, 1 %");
	one("z10", m, (__u32)(-log(1 - 0.10) * m / 8), "8 MiB, 10 %");
	one("z50", m, (__u32)(-log(1 - 0.50) * m / 8), "8 MiB, 50 %");
	one("z32m", MIB_BITS(32), 10000, "32 MiB, 10,000 flows");
}
