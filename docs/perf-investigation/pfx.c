// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 10 proof of concept runner, prefix lists: N entries (N/10 prefixes
 * /11../24 shaped like Spamhaus DROP, the rest single /32 addresses; all
 * prefixes when N <= 1500) in a blocked Bloom filter (SipHash per length,
 * and the incremental multilinear hash), an LPM trie, and one exact hash
 * map probed per length. ns/packet for hits and misses, memory, load time.
 *   taskset -c 1 build/pfx N...
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flowbloom/geometry.h"
#include "packet.h"
#include "perf_hash.h"

struct blk64 {
	__u64 w[8];
};
#include "pfx.skel.h"

#define PX_HDR 17

static unsigned repeat = 1000000;

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

/* Median of 3 kernel-reported ns/packet; *rate = hits per packet. */
static double measure(int fd, __u64 *hits, double *rate)
{
	struct fb_key k = { 0 };
	uint8_t frame[128];
	double kn[3];
	int i;

	k.saddr[10] = k.saddr[11] = k.daddr[10] = k.daddr[11] = 0xff;
	k.saddr[12] = 198, k.saddr[13] = 51, k.saddr[14] = 100, k.saddr[15] = 1;
	k.daddr[12] = 203, k.daddr[14] = 113, k.daddr[15] = 1;
	k.proto = 17;
	k.kind = FB_KIND_FLOW;
	for (i = 0; i < 3; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .repeat = repeat);
		__u64 h0 = *hits;

		t.data_size_in = test_build_frame(&k, frame);
		if (bpf_prog_test_run_opts(fd, &t)) {
			fprintf(stderr, "pfx: test run: %s\n", strerror(errno));
			exit(1);
		}
		kn[i] = t.duration;
		*rate = (double)(*hits - h0) / repeat;
	}
	qsort(kn, 3, sizeof(double), cmpd);
	return kn[1];
}

struct entry {
	__u32 addr; /* network byte order, masked */
	__u8 len;   /* 0..32 */
};

/* Spamhaus DROP-like weights for /11../24. */
static const double drop_w[14] = { 0.2, 0.3, 0.5, 1, 1, 4, 2, 4, 6, 8, 8, 20, 10, 35 };

static __u32 mask4(int len)
{
	return len ? htonl(~0U << (32 - len)) : 0;
}

static void gen_list(struct entry *e, size_t n, uint64_t *seed)
{
	size_t i, np = n <= 1500 ? n : n / 10;
	double tot = 0;
	int l;

	for (l = 0; l < 14; l++)
		tot += drop_w[l];
	for (i = 0; i < n; i++) {
		__u32 a = (__u32)test_rand64(seed);
		int len = 32;

		if (i < np) {
			double r = (double)(test_rand64(seed) >> 11) / (1ULL << 53) * tot;

			for (l = 0; l < 13 && r >= drop_w[l]; l++)
				r -= drop_w[l];
			len = 11 + l;
		}
		e[i].len = len;
		e[i].addr = a & mask4(len);
	}
}

/* The masked source-rule key of an entry, as flowbloom builds it. */
static void entry_key(const struct entry *e, struct fb_key *k)
{
	memset(k, 0, sizeof(*k));
	k->w[1] = fb_key_word_v4mapped(e->addr);
	k->w[4] = fb_key_word_tail(0, 0, 0, FB_KIND_SRC, 96 + e->len);
}

static void ml2_sums(const __u64 *w, const __u64 *K, __u64 *s1, __u64 *s2)
{
	int i;

	*s1 = K[0], *s2 = K[11];
	for (i = 0; i < 10; i++) {
		__u64 m = ph_chunk(w, i);

		*s1 += K[1 + i] * m;
		*s2 += K[12 + i] * m;
	}
}

static unsigned long long memlock(int fd)
{
	char path[64], line[256];
	unsigned long long v = 0;
	FILE *in;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	in = fopen(path, "r");
	if (!in)
		return 0;
	while (fgets(line, sizeof(line), in))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(in);
	return v;
}

static int cmp_len_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

static void run(size_t n)
{
	struct entry *e = malloc(n * sizeof(*e)), *orig;
	size_t norig;
	uint64_t seed = 0x5eed + n;
	__u64 sk[2], K[PH_KEYWORDS], *img[3];
	int lens[33] = { 0 }, order[16], nlen = 0, l, alg;
	__u32 nb;
	__u64 *probe_hit, *probe_miss;
	size_t i, bytes;
	double t0, t_lpm, t_hash, t_fb[3];
	struct pfx_bpf *s;
	struct fb_key k;

	if (getrandom(sk, sizeof(sk), 0) != sizeof(sk) || getrandom(K, sizeof(K), 0) != sizeof(K))
		exit(1);
	gen_list(e, n, &seed);
	orig = e;
	norig = n;
	if (getenv("PFX_LENGTHS")) {
		/* Controlled prefix expansion (Srinivasan & Varghese 1999): each
		 * prefix becomes 2^(t-len) prefixes of the next target length t,
		 * so the probe loop runs over the targets only. The LPM trie and
		 * the hash map get the same expanded list (the trie would not
		 * need it; the comparison keeps one list). */
		int tl[33] = { 0 }, next[33], t = 33;
		size_t m = 0, cap;
		struct entry *x;
		char *str = strdup(getenv("PFX_LENGTHS")), *tok;

		for (tok = strtok(str, ","); tok; tok = strtok(NULL, ","))
			tl[atoi(tok)] = 1;
		free(str);
		tl[32] = 1;
		for (l = 32; l >= 0; l--) {
			if (tl[l])
				t = l;
			next[l] = t;
		}
		for (i = 0, cap = 0; i < n; i++)
			cap += 1ULL << (next[e[i].len] - e[i].len);
		x = malloc(cap * sizeof(*x));
		for (i = 0; i < n; i++) {
			int nl = next[e[i].len];
			__u32 j, cnt = 1U << (nl - e[i].len);

			for (j = 0; j < cnt; j++) {
				x[m].len = nl;
				x[m].addr = e[i].addr |
					    htonl(nl == 32 && e[i].len == 32 ? 0 : j << (32 - nl));
				m++;
			}
		}
		printf("\n(expanded %zu entries to %zu for lengths %s,32: Bloom and hash map; the "
		       "LPM "
		       "trie keeps the %zu originals)",
		       n, m, getenv("PFX_LENGTHS"), n);
		e = x;
		n = m;
	}
	for (i = 0; i < n; i++)
		lens[e[i].len] = 1;
	for (l = 32; l >= 0; l--)
		if (lens[l])
			order[nlen++] = 96 + l;
	qsort(order, nlen, sizeof(int), cmp_len_desc);
	/* ~16 entries per 512-bit block: 32 bits per entry. */
	for (nb = 64; nb < n / 16; nb *= 2)
		;
	bytes = (size_t)(PX_HDR + nb) * 64;

	s = pfx_bpf__open();
	bpf_map__set_max_entries(s->maps.filt, PX_HDR + nb);
	bpf_map__set_max_entries(s->maps.lpm, norig);
	bpf_map__set_max_entries(s->maps.hmap, n);
	if (pfx_bpf__load(s)) {
		fprintf(stderr, "pfx: load failed\n");
		exit(1);
	}
	/* LPM trie: a syscall per prefix. */
	t0 = now();
	for (i = 0; i < norig; i++) {
		struct {
			__u32 plen, addr;
		} lk = { orig[i].len, orig[i].addr };
		__u32 one = 1;

		if (bpf_map_update_elem(bpf_map__fd(s->maps.lpm), &lk, &one, BPF_ANY)) {
			fprintf(stderr, "pfx: lpm update: %s\n", strerror(errno));
			exit(1);
		}
	}
	t_lpm = now() - t0;
	t0 = now();
	for (i = 0; i < n; i++) {
		__u64 hk = e[i].addr | (__u64)(96 + e[i].len) << 32;
		__u32 one = 1;

		if (bpf_map_update_elem(bpf_map__fd(s->maps.hmap), &hk, &one, BPF_ANY)) {
			fprintf(stderr, "pfx: hash update: %s\n", strerror(errno));
			exit(1);
		}
	}
	t_hash = now() - t0;
	/* Bloom images, one per hash: header, lengths, constants, bits. */
	for (alg = 0; alg < 3; alg++) {
		__u64 *w = calloc(bytes / 8, 8);

		t0 = now();
		w[0] = nb, w[1] = nlen, w[2] = sk[0], w[3] = sk[1], w[4] = K[4], w[5] = K[15];
		for (l = 0; l < nlen; l++) {
			struct entry z = { 0, order[l] - 96 };

			w[8 * (1 + l)] = order[l];
			entry_key(&z, &k); /* chunk 3 zero: the constant part */
			ml2_sums(k.w, K, &w[8 * (1 + l) + 1], &w[8 * (1 + l) + 2]);
		}
		for (i = 0; i < n; i++) {
			__u64 h, *blk;
			int b;

			entry_key(&e[i], &k);
			h = alg == 2   ? fb_fmix64(ph_ml2(k.w, K))
			    : alg == 1 ? ph_ml2(k.w, K)
				       : fb_siphash(k.w, 40, sk, 1, 3);
			if (alg == 1)
				h = (h ^ h >> 29) * 0xbf58476d1ce4e5b9ULL;
			blk = w + 8 * (size_t)(PX_HDR + fb_reduce32(h >> 32, nb));
			for (b = 0; b < 8; b++)
				blk[b] |= ph_mask8((__u32)h, b);
		}
		t_fb[alg] = now() - t0;
		img[alg] = w;
	}
	/* Probe addresses: hits inside random entries, misses nowhere. */
	probe_hit = malloc(8 << 16);
	probe_miss = malloc(8 << 16);
	for (i = 0; i < 1 << 16; i++) {
		const struct entry *x = &orig[test_rand64(&seed) % norig];

		probe_hit[i] = x->addr | ((__u32)test_rand64(&seed) & ~mask4(x->len));
		for (;;) {
			struct {
				__u32 plen, addr;
			} lk = { 32, (__u32)test_rand64(&seed) };
			__u32 v;

			if (bpf_map_lookup_elem(bpf_map__fd(s->maps.lpm), &lk, &v)) {
				probe_miss[i] = lk.addr;
				break;
			}
		}
	}
	printf("\n== %zu list entries (%zu prefixes /11-/24, rest /32), %zu stored, %d lengths; "
	       "Bloom %u blocks (%.1f bits/stored entry)\n",
	       norig, norig <= 1500 ? norig : norig / 10, n, nlen, nb, (double)nb * 512 / n);
	{
		void *fm = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
				bpf_map__fd(s->maps.filt), 0);
		void *am = mmap(NULL, 8 << 16, PROT_READ | PROT_WRITE, MAP_SHARED,
				bpf_map__fd(s->maps.addrs), 0);
		double parse[2], ns[2], rate[2];
		int miss, v;
		const char *names[6] = { "parse only",
					 "LPM trie",
					 "hash map per length",
					 "flowbloom SipHash per length",
					 "flowbloom ML2 incr, 1-mul mix",
					 "flowbloom ML2 incr, fmix64" };

		if (fm == MAP_FAILED || am == MAP_FAILED)
			exit(1);
		for (v = 0; v < 6; v++) {
			struct bpf_program *p = v == 0	 ? s->progs.x_parse
						: v == 1 ? s->progs.x_lpm
						: v == 2 ? s->progs.x_hash
							 : s->progs.x_bloom;
			struct pfx_bpf *s2 = NULL;

			memcpy(fm, img[v < 3 ? 0 : v - 3], bytes);
			if (v >= 3) {
				/* cfg_alg is read-only data: a second load for each. */
				s2 = pfx_bpf__open();
				s2->rodata->cfg_alg = v == 3   ? PH_SIP13
						      : v == 4 ? PH_ML2_RAW
							       : PH_ML2_FMIX;
				bpf_map__set_max_entries(s2->maps.filt, PX_HDR + nb);
				bpf_map__reuse_fd(s2->maps.filt, bpf_map__fd(s->maps.filt));
				bpf_map__reuse_fd(s2->maps.addrs, bpf_map__fd(s->maps.addrs));
				bpf_map__set_max_entries(s2->maps.lpm, 1);
				bpf_map__set_max_entries(s2->maps.hmap, 1);
				if (pfx_bpf__load(s2))
					exit(1);
				p = s2->progs.x_bloom;
			}
			for (miss = 0; miss < 2; miss++) {
				memcpy(am, miss ? probe_miss : probe_hit, 8 << 16);
				ns[miss] =
					measure(bpf_program__fd(p),
						s2 ? &s2->bss->hits : &s->bss->hits, &rate[miss]);
				if (!v)
					parse[miss] = ns[miss];
			}
			printf("  %-30s hit %6.1f (+%5.1f)  miss %6.1f (+%5.1f)  hitrate %.4f "
			       "FP %.2e\n",
			       names[v], ns[0], ns[0] - parse[0], ns[1], ns[1] - parse[1], rate[0],
			       v ? rate[1] : 0.0);
			fflush(stdout);
			if (s2)
				pfx_bpf__destroy(s2);
		}
		munmap(fm, bytes);
		munmap(am, 8 << 16);
	}
	printf("  memory: Bloom %zu B (%.2f B/entry), LPM trie %llu B (memlock), hash map %llu B "
	       "(memlock)\n",
	       bytes, (double)bytes / norig, memlock(bpf_map__fd(s->maps.lpm)),
	       memlock(bpf_map__fd(s->maps.hmap)));
	printf("  load: Bloom SipHash %.1f ms, Bloom ML2 %.1f ms (user-space hashing into the "
	       "image), LPM trie %.1f ms, hash map %.1f ms (a syscall per entry)\n",
	       t_fb[0] * 1e3, t_fb[1] * 1e3, t_lpm * 1e3, t_hash * 1e3);
	pfx_bpf__destroy(s);
	free(img[0]);
	free(img[1]);
	free(img[2]);
	free(probe_hit);
	free(probe_miss);
	if (e != orig)
		free(orig);
	free(e);
}

int main(int argc, char **argv)
{
	int i;

	libbpf_set_print(NULL);
	printf("prefix PoC: kernel-reported ns/packet, median of 3 x %u; (+x) = over parse only\n",
	       repeat);
	for (i = 1; i < argc; i++)
		run(strtoul(argv[i], NULL, 0));
	return 0;
}
