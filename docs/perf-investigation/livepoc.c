// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 10 PoC: attach perf.bpf.c's p_live (design (b), 1 MiB class) to RX
 * in NETNS with the NSRC sources 2001:db8::1:N as source rules, until
 * stdin closes.   livepoc NETNS RX NSRC ALG(0 sip13, 2 ml2+fmix)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "flowbloom/geometry.h"
#include "perf_hash.h"
struct blk64 {
	__u64 w[8];
};
#include "perf.skel.h"

#define PH_HDR 4
#define CLASS_S (1U << 14)

int main(int argc, char **argv)
{
	char path[128], buf[16];
	unsigned rx, nsrc, i, alg;
	size_t bytes = (size_t)(PH_HDR + CLASS_S) * 64;
	__u64 sk[2], K[PH_KEYWORDS], *img = calloc(bytes, 1);
	struct perf_bpf *s;
	int fd, inner, w;
	__u32 zero = 0;
	void *p;

	if (argc < 5)
		return 2;
	snprintf(path, sizeof(path), "/run/netns/%s", argv[1]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		return 1;
	rx = if_nametoindex(argv[2]);
	nsrc = atoi(argv[3]);
	alg = atoi(argv[4]);
	if (getrandom(sk, sizeof(sk), 0) != sizeof(sk) || getrandom(K, sizeof(K), 0) != sizeof(K))
		return 1;
	img[0] = CLASS_S, img[1] = 8, img[2] = sk[0], img[3] = sk[1];
	memcpy(img + 8, K, sizeof(K));
	for (i = 0; i < nsrc; i++) {
		struct fb_key k = { 0 };
		__u64 h, *blk;

		k.saddr[0] = 0x20, k.saddr[1] = 0x01, k.saddr[2] = 0x0d, k.saddr[3] = 0xb8;
		k.saddr[13] = 1, k.saddr[14] = i >> 8, k.saddr[15] = i;
		k.kind = FB_KIND_SRC;
		k.plen = 128;
		h = ph_hash(alg, k.w, K, sk);
		blk = img + 8 * (size_t)(PH_HDR + fb_reduce32(h >> 32, CLASS_S));
		for (w = 0; w < 8; w++)
			blk[w] |= ph_mask8((__u32)h, w);
	}
	libbpf_set_print(NULL);
	s = perf_bpf__open();
	s->rodata->cfg_alg = alg;
	s->rodata->cfg_kconst = 1;
	if (perf_bpf__load(s))
		return 1;
	{
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
		inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ph_live", 4, 64, PH_HDR + CLASS_S, &o);
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, inner, 0);
	if (inner < 0 || p == MAP_FAILED)
		return 1;
	memcpy(p, img, bytes);
	if (bpf_map_update_elem(bpf_map__fd(s->maps.outer_cs), &zero, &inner, 0) ||
	    bpf_xdp_attach(rx, bpf_program__fd(s->progs.p_live), XDP_FLAGS_DRV_MODE, NULL)) {
		fprintf(stderr, "livepoc: %s\n", strerror(errno));
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	bpf_xdp_detach(rx, XDP_FLAGS_DRV_MODE, NULL);
	perf_bpf__destroy(s);
	return 0;
}
