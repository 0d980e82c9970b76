// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 10 proof of concept runner: ns per packet of one blocked-Bloom
 * probe through each map design (perf.bpf.c) and each hash, 1 MiB and
 * 256 MiB, hits and misses, against parse only in the same run, plus the
 * measured false-positive rate against the blocked formula.
 *   taskset -c 1 build/perf [REPEAT]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flowbloom/bench.h"
#include "flowbloom/geometry.h"
#include "packet.h"
#include "perf_hash.h"
struct blk64 {
	__u64 w[8];
};
#include "perf.skel.h"

#define PH_HDR 4
#define CLASS_S (1U << 14)
#define CLASS_L (1U << 22)
#define BIG_VALUE (1U << 20)

static unsigned repeat = 2000000;
static const char *alg_name[] = { "sip13",   "nh",	  "ml2+fmix",
				  "ml2 raw", "ml2+sip1w", "ml2 shift-masks" };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of 3 wall-clock ns/packet; *rate = hits per packet of the last run. */
static double measure(int fd, __u64 *hits, double *rate, double *kern)
{
	struct fb_key k;
	uint8_t frame[128];
	double wall[3], kn[3];
	int i;

	fb_bench_flow(0, 0, &k);
	for (i = 0; i < 3; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .repeat = repeat);
		__u64 h0 = *hits;
		double t0;

		t.data_size_in = test_build_frame(&k, frame);
		t0 = now();
		if (bpf_prog_test_run_opts(fd, &t)) {
			fprintf(stderr, "perf: test run: %s\n", strerror(errno));
			exit(1);
		}
		wall[i] = (now() - t0) * 1e9 / repeat;
		kn[i] = t.duration;
		*rate = (double)(*hits - h0) / repeat;
	}
	qsort(wall, 3, sizeof(double), cmpd);
	qsort(kn, 3, sizeof(double), cmpd);
	*kern = kn[1];
	return wall[1];
}

/* The filter image every design holds: header, keys, bits. */
struct image {
	__u64 *w; /* (PH_HDR + nb) * 8 words */
	__u32 nb;
	size_t bytes;
};

static void build_image(struct image *im, __u32 nb, int alg, __u32 nflows, const __u64 sk[2],
			const __u64 K[PH_KEYWORDS])
{
	struct fb_key key;
	__u32 i;
	int w;

	im->nb = nb;
	im->bytes = (size_t)(PH_HDR + nb) * 64;
	if (!im->w)
		im->w = aligned_alloc(64, (size_t)(PH_HDR + CLASS_L) * 64);
	memset(im->w, 0, im->bytes);
	im->w[0] = nb;
	im->w[1] = 8;
	im->w[2] = sk[0];
	im->w[3] = sk[1];
	memcpy(im->w + 8, K, PH_KEYWORDS * 8);
	for (i = 0; i < nflows; i++) {
		__u64 h, *blk;

		fb_bench_flow(i, 0, &key);
		if (alg == PH_ML2_SHIFT) {
			__u64 s1, s2;

			ph_ml2_pair(key.w, K, &s1, &s2);
			blk = im->w + 8 * (size_t)(PH_HDR + fb_reduce32(s1 >> 32, nb));
			for (w = 0; w < 8; w++)
				blk[w] |= ph_mask_shift(s2, w);
			continue;
		}
		h = ph_hash(alg, key.w, K, sk);
		blk = im->w + 8 * (size_t)(PH_HDR + fb_reduce32(h >> 32, nb));
		for (w = 0; w < 8; w++)
			blk[w] |= ph_mask8((__u32)h, w);
	}
}

/* The blocked formula: E over x ~ Poisson(n/nb) of (1 - (63/64)^x)^8. */
static double fp_formula(double n, double nb)
{
	double lam = n / nb, p = exp(-lam), sum = 0;
	int x;

	for (x = 0; x < 400; x++) {
		sum += p * pow(1 - pow(63.0 / 64, x), 8);
		p *= lam / (x + 1);
	}
	return sum;
}

/* An inner array with these parameters, filled with the image. */
static int make_inner(__u32 flags, __u32 vsize, __u32 entries, const struct image *im)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ph_inner", 4, vsize, entries, &o);
	void *p;

	if (fd < 0) {
		fprintf(stderr, "perf: map create (vsize %u, entries %u): %s\n", vsize, entries,
			strerror(errno));
		exit(1);
	}
	p = mmap(NULL, (size_t)vsize * entries, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "perf: mmap: %s\n", strerror(errno));
		exit(1);
	}
	memcpy(p, im->w, im->bytes);
	munmap(p, (size_t)vsize * entries);
	return fd;
}

static void put_outer(struct bpf_map *outer, int inner)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(outer), &zero, &inner, BPF_ANY)) {
		fprintf(stderr, "perf: outer update %s: %s\n", bpf_map__name(outer),
			strerror(errno));
		exit(1);
	}
}

/* Verified instruction count of a program (bpf_prog_info.verified_insns). */
static unsigned verified(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.verified_insns;
}

/* Helper calls left in the translated program (after the verifier's
 * inlining): bpf_map_lookup_elem calls that were not inlined show here. */
static unsigned calls(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), n, i, c = 0;
	struct bpf_insn *ins;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	n = info.xlated_prog_len / sizeof(*ins);
	ins = calloc(n, sizeof(*ins));
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = n * sizeof(*ins);
	info.xlated_prog_insns = (__u64)(unsigned long)ins;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		for (i = 0; i < n; i++)
			if (ins[i].code == (BPF_JMP | BPF_CALL) && ins[i].src_reg == 0)
				c++;
	free(ins);
	return c;
}

/* Native JITed size, to see whether lookups were inlined. */
static unsigned jited(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.jited_prog_len;
}

int main(int argc, char **argv)
{
	static const int algs[] = { PH_SIP13,	PH_NH,	      PH_ML2_FMIX,
				    PH_ML2_RAW, PH_ML2_SIP1W, PH_ML2_SHIFT };
	struct image im = { 0 };
	__u64 sk[2], K[PH_KEYWORDS];
	int size, ai, kc;
	const char *only = getenv("PERF_ONLY"); /* "small" or "large" */

	if (argc > 1)
		repeat = atoi(argv[1]);
	if (getrandom(sk, sizeof(sk), 0) != sizeof(sk) || getrandom(K, sizeof(K), 0) != sizeof(K))
		return 1;
	libbpf_set_print(NULL);
	printf("issue 10 PoC: %u packets per run, median of 3, wall ns/packet [kernel mean], ratio "
	       "= kernel / parse-only kernel "
	       "brackets)\n",
	       repeat);
	for (size = 0; size < 2; size++) {
		__u32 nb = size ? CLASS_L : CLASS_S;
		__u32 nflows = size ? 1U << 20 : 1U << 19;
		double fpf = fp_formula(nflows, nb);

		if (only && strcmp(only, size ? "large" : "small"))
			continue;
		printf("\n== %s: %u blocks (%u MiB), %u flows, blocked k=8; FP formula %.3g\n",
		       size ? "256 MiB" : "1 MiB", nb, nb / 16384, nflows, fpf);
		for (ai = 0; ai < 6; ai++) {
			const char *oa = getenv("PERF_ALG");

			if (oa && atoi(oa) != algs[ai])
				continue;
			for (kc = 1; kc >= 0; kc--) {
				int alg = algs[ai], dyn, cls, big, nbig, miss;
				struct perf_bpf *s;
				struct {
					const char *name;
					struct bpf_program *p;
				} progs[12];
				int np = 0, i;
				double parse[2] = { 0, 0 };

				/* The runtime-k variant only for SipHash and ml2+fmix. */
				if (!kc && alg != PH_SIP13 && alg != PH_ML2_FMIX)
					continue;
				build_image(&im, nb, alg, nflows, sk, K);
				s = perf_bpf__open();
				s->rodata->cfg_alg = alg;
				s->rodata->cfg_kconst = kc;
				bpf_map__set_max_entries(s->maps.garr, PH_HDR + nb);
				if (perf_bpf__load(s)) {
					fprintf(stderr, "perf: load failed\n");
					return 1;
				}
				dyn = make_inner(BPF_F_INNER_MAP | BPF_F_MMAPABLE, 64, PH_HDR + nb,
						 &im);
				cls = make_inner(BPF_F_MMAPABLE, 64, PH_HDR + nb, &im);
				nbig = (im.bytes + BIG_VALUE - 1) / BIG_VALUE;
				big = make_inner(BPF_F_INNER_MAP | BPF_F_MMAPABLE, BIG_VALUE, nbig,
						 &im);
				put_outer(s->maps.outer_dyn, dyn);
				put_outer(size ? s->maps.outer_cl : s->maps.outer_cs, cls);
				put_outer(s->maps.outer_big, big);
				{
					__u32 zero = 0, v = size;
					void *g = mmap(NULL, im.bytes, PROT_READ | PROT_WRITE,
						       MAP_SHARED, bpf_map__fd(s->maps.garr), 0);

					bpf_map_update_elem(bpf_map__fd(s->maps.sel), &zero, &v, 0);
					if (g == MAP_FAILED)
						return 1;
					memcpy(g, im.w, im.bytes);
					munmap(g, im.bytes);
					if (!size)
						memcpy(s->bss->gbss, im.w, im.bytes);
				}
				progs[np].name = "parse only", progs[np++].p = s->progs.p_parse;
				progs[np].name = "(a) today: INNER_MAP, calls",
				progs[np++].p = s->progs.p_a;
				progs[np].name = "(b) fixed class, inlined",
				progs[np++].p = size ? s->progs.p_bl : s->progs.p_bs;
				progs[np].name = "(b') class selector + 2 classes",
				progs[np++].p = s->progs.p_bsel;
				progs[np].name = "(c) 1 MiB values, INNER_MAP",
				progs[np++].p = s->progs.p_c;
				progs[np].name = "(f) known array, load-time size",
				progs[np++].p = s->progs.p_f;
				if (!size) {
					progs[np].name = "(d) .bss array",
					progs[np++].p = s->progs.p_d;
					progs[np].name = "  split: hash only",
					progs[np++].p = s->progs.p_honly;
					progs[np].name = "  split: block+masks only",
					progs[np++].p = s->progs.p_lonly;
					progs[np].name = "  empty program",
					progs[np++].p = s->progs.p_empty;
				}
				printf("-- hash %s, k %s\n", alg_name[alg],
				       kc ? "const 8" : "from header (loop to 16)");
				for (i = 0; i < np; i++) {
					int fd = bpf_program__fd(progs[i].p);
					double ns[2], kern[2], rate[2];

					for (miss = 0; miss < 2; miss++) {
						s->bss->cfg_bench =
							miss ? FB_BENCH_MISS : nflows - 1;
						s->bss->bench_seq = 0;
						ns[miss] = measure(fd, &s->bss->hits, &rate[miss],
								   &kern[miss]);
					}
					if (i == 0) {
						parse[0] = kern[0];
						parse[1] = kern[1];
					}
					printf("  %-34s hit %6.1f [%3.0f] %5.2fx  miss %6.1f "
					       "[%3.0f] "
					       "%5.2fx  hitrate %.3f FP %.2e  insns %u jit %u "
					       "calls %u\n",
					       progs[i].name, ns[0], kern[0], kern[0] / parse[0],
					       ns[1], kern[1], kern[1] / parse[1], rate[0],
					       i ? rate[1] : 0, verified(fd), jited(fd), calls(fd));
					fflush(stdout);
				}
				close(dyn);
				close(cls);
				close(big);
				perf_bpf__destroy(s);
			}
		}
	}
	return 0;
}
