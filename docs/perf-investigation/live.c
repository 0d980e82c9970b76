// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 10 PoC, live traffic generator (see gen.bpf.c).
 *   live NETNS GEN IDLE NSRC FRAMES      send FRAMES frames, print seconds
 *   live NETNS - - count RX              attach the count receiver to RX,
 *                                        wait for stdin EOF, detach
 * Sources are 2001:db8::1:N, N = 0..NSRC-1 (the list `srcs.txt` written
 * by live.sh holds the same).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "gen.skel.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char path[128];
	unsigned gen_if, idle_if, nsrc, frames, i;
	struct gen_bpf *g;
	int fd;

	if (argc < 6)
		return 2;
	snprintf(path, sizeof(path), "/run/netns/%s", argv[1]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "live: netns %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	libbpf_set_print(NULL);
	if (!strcmp(argv[4], "count")) {
		unsigned rx = if_nametoindex(argv[5]);
		char buf[16];

		g = gen_bpf__open_and_load();
		if (!g ||
		    bpf_xdp_attach(rx, bpf_program__fd(g->progs.count), XDP_FLAGS_DRV_MODE, NULL)) {
			fprintf(stderr, "live: count attach: %s\n", strerror(errno));
			return 1;
		}
		printf("attached\n");
		fflush(stdout);
		while (read(0, buf, sizeof(buf)) > 0)
			;
		bpf_xdp_detach(rx, XDP_FLAGS_DRV_MODE, NULL);
		gen_bpf__destroy(g);
		return 0;
	}
	gen_if = if_nametoindex(argv[2]);
	idle_if = if_nametoindex(argv[3]);
	nsrc = atoi(argv[4]);
	frames = atoi(argv[5]);
	g = gen_bpf__open();
	g->rodata->cfg_ifindex = gen_if;
	g->rodata->cfg_nsrc = nsrc;
	if (gen_bpf__load(g))
		return 1;
	for (i = 0; i < nsrc; i++) {
		__u8 a[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, i >> 8, i };

		bpf_map_update_elem(bpf_map__fd(g->maps.srcs), &i, a, BPF_ANY);
	}
	/* Attached to a down veth: saves two dispatcher updates per call. */
	if (bpf_xdp_attach(idle_if, bpf_program__fd(g->progs.gen), XDP_FLAGS_DRV_MODE, NULL)) {
		fprintf(stderr, "live: idle attach: %s\n", strerror(errno));
		return 1;
	}
	{
		__u8 frame[128] = { 0 };
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .data_size_in = 14 + 40 + 8 + 2,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);
		double t0;
		int rc;

		frame[0] = 0x02, frame[5] = 0x02, frame[6] = 0x02, frame[11] = 0x01;
		frame[12] = 0x86, frame[13] = 0xdd;
		frame[14] = 0x60;
		frame[19] = 10; /* payload length: UDP 8 + 2 */
		frame[20] = 17; /* next header UDP */
		frame[21] = 64;
		memcpy(frame + 38, (__u8[16]){ 0x20, 0x01, 0x0d, 0xb8, [15] = 2 }, 16);
		frame[54] = 0x13, frame[55] = 0x88; /* sport 5000 */
		frame[56] = 0x00, frame[57] = 0x35; /* dport 53 */
		frame[59] = 10;
		t.repeat = 100000; /* warm up */
		bpf_prog_test_run_opts(bpf_program__fd(g->progs.gen), &t);
		t.repeat = frames;
		t0 = now();
		rc = bpf_prog_test_run_opts(bpf_program__fd(g->progs.gen), &t);
		printf("%.6f\n", now() - t0);
		if (rc)
			fprintf(stderr, "live: test run: %s\n", strerror(errno));
	}
	bpf_xdp_detach(idle_if, XDP_FLAGS_DRV_MODE, NULL);
	gen_bpf__destroy(g);
	return 0;
}
