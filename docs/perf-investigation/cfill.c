// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 10 PoC: counting-filter fill rate into 256 MiB of bits (k = 8,
 * blocked) with 4-bit counters, in user space, three ways:
 *  today:     counters in bit order (a 512-bit block's counters are 256
 *             bytes = 4 lines), batch of 8 hashed + prefetched, then
 *             applied with a per-flow journal (as user/counting.c)
 *  pipelined: same layout, prefetch distance D flows ahead (no batch
 *             barrier), same journal
 *  one-line:  "blocked counting": each flow's 8 counters in one 64-byte
 *             line — bits restricted to one 16-bit slice per word (the
 *             slice picked by the hash), counters of slice s of all 8
 *             words stored together; plus the bit line. Costs FP (below).
 * Hash: SipHash-1-3 (today) or ML2+fmix. 4M flows.
 *   build/cfill
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include "flowbloom/bench.h"
#include "flowbloom/geometry.h"
#include "perf_hash.h"

#define NB (1U << 22) /* 256 MiB of bits */
#define K 8

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct journal {
	struct fb_key key;
	__u64 nflows_before;
	__u32 op, done, changed, cur_old;
} jr;

static int noj;
#define JS(f, v)                                                                                   \
	do {                                                                                       \
		if (!noj)                                                                          \
			__atomic_store_n(&(f), (v), __ATOMIC_RELEASE);                             \
	} while (0)

static __u64 *bits;
static __u8 *cnt;
static __u64 sk[2], KW[PH_KEYWORDS];
static int alg;

static inline __u64 hash(const struct fb_key *k)
{
	return alg ? fb_fmix64(ph_ml2(k->w, KW)) : fb_siphash(k->w, 40, sk, 1, 3);
}

/* Bit-order layout: position p = block*512 + w*64 + b; counter p. */
static inline void pos_std(__u64 h, __u64 *p)
{
	__u64 base = (__u64)fb_reduce32(h >> 32, NB) * 512;
	int w;

	for (w = 0; w < K; w++)
		p[w] = base + w * 64 + (((__u32)h * fb_salt(w)) >> 26);
}

static inline unsigned cget(__u64 p)
{
	return (cnt[p / 2] >> ((p & 1) * 4)) & 0xf;
}

static inline void cput(__u64 p, unsigned v)
{
	__u8 *b = &cnt[p / 2];
	unsigned s = (p & 1) * 4;

	*b = (*b & ~(0xf << s)) | (v << s);
}

static void apply_std(const struct fb_key *key, const __u64 *p, __u64 nflows)
{
	int i;

	jr.key = *key;
	jr.nflows_before = nflows;
	jr.done = 0, jr.changed = 0, jr.cur_old = ~0U;
	JS(jr.op, 1);
	for (i = 0; i < K; i++) {
		unsigned c = cget(p[i]);

		if (c < 15) {
			JS(jr.cur_old, c);
			if (!c) {
				__u64 *w = &bits[p[i] / 64];

				__atomic_store_n(w, *w | 1ULL << (p[i] % 64), __ATOMIC_RELAXED);
			}
			cput(p[i], c + 1);
			JS(jr.changed, jr.changed | 1U << i);
			JS(jr.cur_old, ~0U);
		}
		JS(jr.done, i + 1);
	}
	JS(jr.op, 0);
}

/* Plain bits only, batch 16 hashed and prefetched (fb_filter_set_many). */
static double fill_plain(const struct fb_key *keys, size_t n)
{
	__u64 h[16];
	size_t x, y, m;
	double t0 = now();
	int w;

	for (x = 0; x < n; x += m) {
		m = n - x < 16 ? n - x : 16;
		for (y = 0; y < m; y++) {
			h[y] = hash(&keys[x + y]);
			__builtin_prefetch(&bits[(size_t)fb_reduce32(h[y] >> 32, NB) * 8], 1);
		}
		for (y = 0; y < m; y++) {
			__u64 *b = &bits[(size_t)fb_reduce32(h[y] >> 32, NB) * 8];

			for (w = 0; w < K; w++)
				b[w] |= ph_mask8((__u32)h[y], w);
		}
	}
	return n / (now() - t0);
}

static double fill_today(const struct fb_key *keys, size_t n)
{
	__u64 pos[8][K];
	size_t x, y, m;
	double t0 = now();
	int i;

	for (x = 0; x < n; x += m) {
		m = n - x < 8 ? n - x : 8;
		for (y = 0; y < m; y++) {
			pos_std(hash(&keys[x + y]), pos[y]);
			for (i = 0; i < K; i++) {
				__builtin_prefetch(&cnt[pos[y][i] / 2], 1);
				__builtin_prefetch(&bits[pos[y][i] / 64], 1);
			}
		}
		for (y = 0; y < m; y++)
			apply_std(&keys[x + y], pos[y], x + y);
	}
	return n / (now() - t0);
}

static double fill_pipe(const struct fb_key *keys, size_t n, unsigned D)
{
	__u64(*pos)[K] = malloc(64 * sizeof(*pos)); /* ring of 64 >= D */
	size_t x;
	double t0 = now();
	int i;

	for (x = 0; x < n + D; x++) {
		if (x < n) {
			__u64 *p = pos[x & 63];

			pos_std(hash(&keys[x]), p);
			/* A block's counters are 4 adjacent lines; its bits one. */
			__builtin_prefetch(&bits[p[0] / 64], 1);
			for (i = 0; i < K; i += 2)
				__builtin_prefetch(&cnt[p[i] / 2], 1);
		}
		if (x >= D)
			apply_std(&keys[x - D], pos[(x - D) & 63], x - D);
	}
	free(pos);
	return n / (now() - t0);
}

/* One-line layout: slice s (2 bits of the hash) picks bits 16s..16s+15 of
 * every word; counters of (block, slice) are 8 words x 16 x 4 bits = one
 * 64-byte line at cnt + (block * 4 + s) * 64, word w's at 8 bytes each. */
static double fill_oneline(const struct fb_key *keys, size_t n, unsigned D, double *fp)
{
	struct {
		__u32 blk, s;
		__u64 h;
	} *q = malloc(64 * sizeof(*q));
	size_t x;
	double t0 = now(), r;
	int w;

	for (x = 0; x < n + D; x++) {
		if (x < n) {
			__u64 h = hash(&keys[x]);

			q[x & 63].h = h;
			q[x & 63].blk = fb_reduce32(h >> 32, NB);
			q[x & 63].s = h >> 30 & 3;
			__builtin_prefetch(&bits[(size_t)q[x & 63].blk * 8], 1);
			__builtin_prefetch(&cnt[((size_t)q[x & 63].blk * 4 + q[x & 63].s) * 64], 1);
		}
		if (x >= D) {
			size_t y = x - D;
			__u32 blk = q[y & 63].blk, s = q[y & 63].s;
			__u64 h = q[y & 63].h, *line = (__u64 *)&cnt[((size_t)blk * 4 + s) * 64];

			jr.key = keys[y];
			jr.nflows_before = y;
			jr.done = 0, jr.changed = 0, jr.cur_old = ~0U;
			JS(jr.op, 1);
			for (w = 0; w < K; w++) {
				unsigned b = ((__u32)h * fb_salt(w)) >> 28; /* 0..15 in slice */
				unsigned c = line[w] >> (4 * b) & 15;

				if (c < 15) {
					JS(jr.cur_old, c);
					if (!c) {
						__u64 *bw = &bits[(size_t)blk * 8 + w];

						__atomic_store_n(bw, *bw | 1ULL << (16 * s + b),
								 __ATOMIC_RELAXED);
					}
					line[w] += 1ULL << (4 * b);
					JS(jr.changed, jr.changed | 1U << w);
					JS(jr.cur_old, ~0U);
				}
				JS(jr.done, w + 1);
			}
			JS(jr.op, 0);
		}
	}
	r = n / (now() - t0);
	{
		/* FP of this layout against the standard one, same load:
		 * 1M random non-members. */
		__u64 seed = 99, hits = 0;
		size_t i;

		for (i = 0; i < 1000000; i++) {
			struct fb_key k;
			__u64 h, miss = 0;
			__u32 blk, s2;

			fb_bench_flow((__u32)i | FB_BENCH_MISS, 1, &k);
			k.w[4] ^= seed * i;
			h = hash(&k);
			blk = fb_reduce32(h >> 32, NB);
			s2 = h >> 30 & 3;
			for (w = 0; w < K; w++) {
				__u64 m = 1ULL << (16 * s2 + (((__u32)h * fb_salt(w)) >> 28));

				miss |= (bits[(size_t)blk * 8 + w] & m) ^ m;
			}
			hits += !miss;
		}
		*fp = hits / 1e6;
	}
	free(q);
	return r;
}

/* Bulk path sorted by block: hash everything, bucket by block >> 6 (one
 * 4 KiB page of bits, four of counters) with a counting sort, then apply
 * in bucket order (today's counter layout, journaled) so each page is
 * visited once per bucket rather than once per flow. */
static double fill_sorted(const struct fb_key *keys, size_t n)
{
	__u32 nbk = NB >> 6, *start = calloc(nbk + 1, 4), *ord = malloc(n * 4);
	__u64 *hs = malloc(n * 8), pos[K];
	double t0 = now();
	size_t i;

	for (i = 0; i < n; i++) {
		hs[i] = hash(&keys[i]);
		start[(fb_reduce32(hs[i] >> 32, NB) >> 6) + 1]++;
	}
	for (i = 1; i <= nbk; i++)
		start[i] += start[i - 1];
	for (i = 0; i < n; i++)
		ord[start[fb_reduce32(hs[i] >> 32, NB) >> 6]++] = i;
	for (i = 0; i < n; i++) {
		if (i + 16 < n) {
			__u64 pf[K];
			int w;

			pos_std(hs[ord[i + 16]], pf);
			__builtin_prefetch(&bits[pf[0] / 64], 1);
			for (w = 0; w < K; w += 2)
				__builtin_prefetch(&cnt[pf[w] / 2], 1);
		}
		pos_std(hs[ord[i]], pos);
		apply_std(&keys[ord[i]], pos, i);
	}
	free(start), free(ord), free(hs);
	return n / (now() - t0);
}

int main(void)
{
	size_t n = getenv("CF_N") ? strtoul(getenv("CF_N"), NULL, 0) : 4000000, i;
	struct fb_key *keys = malloc(n * sizeof(*keys));
	size_t bbytes = (size_t)NB * 64, cbytes = bbytes * 4;

	if (getrandom(sk, sizeof(sk), 0) != sizeof(sk) ||
	    getrandom(KW, sizeof(KW), 0) != sizeof(KW))
		return 1;
	bits = mmap(NULL, bbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cnt = mmap(NULL, cbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	noj = !!getenv("CF_NOJ");
	if (getenv("CF_HUGE")) {
		/* Transparent huge pages (the BPF maps' vmalloc memory does not
		 * get them: this only shows what TLB misses cost). */
		madvise(bits, bbytes, MADV_HUGEPAGE);
		madvise(cnt, cbytes, MADV_HUGEPAGE);
	}
	for (i = 0; i < n; i++)
		fb_bench_flow(i, i & 1, &keys[i]);
	printf("counting fill, 256 MiB bits + 1 GiB 4-bit counters, %zu flows, k=8 (M flows/s)\n",
	       n);
	for (alg = 0; alg < 2; alg++) {
		double fp;
		unsigned d;

		printf(" hash %s\n", alg ? "ml2+fmix" : "sip13");
		memset(bits, 0, bbytes);
		printf("  plain bits only (batch 16), reference   %6.2f\n",
		       fill_plain(keys, n) / 1e6);
		memset(bits, 0, bbytes), memset(cnt, 0, cbytes);
		printf("  today (batch 8, 4 counter lines)        %6.2f\n",
		       fill_today(keys, n) / 1e6);
		for (d = 8; d <= 32; d *= 2) {
			memset(bits, 0, bbytes), memset(cnt, 0, cbytes);
			printf("  pipelined, distance %2u                  %6.2f\n", d,
			       fill_pipe(keys, n, d) / 1e6);
		}
		memset(bits, 0, bbytes), memset(cnt, 0, cbytes);
		printf("  today's layout, sorted by page+prefetch %6.2f\n",
		       fill_sorted(keys, n) / 1e6);
		memset(bits, 0, bbytes), memset(cnt, 0, cbytes);
		printf("  one-line counters, distance 16          %6.2f",
		       fill_oneline(keys, n, 16, &fp) / 1e6);
		printf("   (FP %.2e at %zu flows in %u blocks)\n", fp, n, NB);
	}
	return 0;
}
