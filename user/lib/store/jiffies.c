// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The data path's clock from user space (see jiffies.h). */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "store/jiffies.h"
#include "report.h"

static struct {
	int ok;
	__u64 j;      /* bpf_jiffies64() seen by the program */
	__u64 ta, tb; /* CLOCK_MONOTONIC before and after the run, ns */
	__u64 tick;   /* ns per jiffy */
} clk;

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#define INSN(c, d, s, o, i)                                                                        \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* r6 = ctx; r0 = jiffies64(); if (data + 8 <= data_end) *(u64 *)data = r0;
 * return XDP_PASS. */
static int run_probe(__u64 *j, __u64 *ta, __u64 *tb)
{
	const struct bpf_insn prog[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_jiffies64),
		INSN(BPF_LDX | BPF_MEM | BPF_W, 2, 6, 0, 0), /* xdp_md.data */
		INSN(BPF_LDX | BPF_MEM | BPF_W, 3, 6, 4, 0), /* xdp_md.data_end */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 4, 2, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, 8),
		INSN(BPF_JMP | BPF_JGT | BPF_X, 4, 3, 1, 0),
		INSN(BPF_STX | BPF_MEM | BPF_DW, 2, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	__u8 in[64] = { 0 }, out[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = in, .data_size_in = sizeof(in),
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	int fd, err;

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "fb_jiffies", "GPL", prog,
			   sizeof(prog) / sizeof(prog[0]), NULL);
	if (fd < 0)
		return -1;
	*ta = mono_ns();
	err = bpf_prog_test_run_opts(fd, &run);
	*tb = mono_ns();
	close(fd);
	if (err || run.retval != XDP_PASS)
		return -1;
	memcpy(j, out, sizeof(*j));
	return 0;
}

int fb_jiffies_init(void)
{
	struct timespec r;
	int i;

	if (clk.ok)
		return 0;
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &r) || r.tv_sec || r.tv_nsec <= 0) {
		fb_report_err("cannot read the kernel tick (CLOCK_MONOTONIC_COARSE)");
		return -1;
	}
	clk.tick = r.tv_nsec;
	/* The narrowest of a few brackets: a preemption inside one only
	 * widens it (rules then live up to that much longer). */
	for (i = 0; i < 3; i++) {
		__u64 j, ta, tb;

		if (run_probe(&j, &ta, &tb)) {
			fb_report_err("cannot read the kernel's jiffies (BPF_PROG_TEST_RUN): %s",
				      strerror(errno));
			return -1;
		}
		if (!clk.ok || tb - ta < clk.tb - clk.ta) {
			clk.j = j;
			clk.ta = ta;
			clk.tb = tb;
			clk.ok = 1;
		}
		/* Narrow enough: a hundredth of a tick. */
		if (clk.tb - clk.ta < clk.tick / 100)
			break;
	}
	return 0;
}

/*
 * The probe read J at some instant t in [ta, tb], so c lies in
 * (ta - (J + 1) tick, tb - J tick]. Jiffies at time T are then at least
 * J + floor((T - tb) / tick) and below J + 1 + (T - ta) / tick.
 */
__u64 fb_jiffies_now(void)
{
	__u64 t = mono_ns();

	if (fb_jiffies_init())
		return 0;
	return t <= clk.tb ? clk.j : clk.j + (t - clk.tb) / clk.tick;
}

__u64 fb_jiffies_after(double secs)
{
	__u64 t, d;

	if (fb_jiffies_init())
		return ~0ULL;
	t = mono_ns();
	d = secs > 0 ? (__u64)(secs * 1e9) + 1 : 0;
	/* Jiffies at t + d are below J + 1 + (t + d - ta) / tick: x is one
	 * above its floor. */
	return clk.j + 1 + (t + d - clk.ta) / clk.tick + 1;
}

double fb_jiffies_secs(__u64 j)
{
	double now;

	if (fb_jiffies_init())
		return 0;
	/* The middle of the bracket: for display. */
	now = (double)clk.j + 0.5 + ((double)mono_ns() - (clk.ta + clk.tb) / 2.0) / clk.tick;
	return ((double)j - now) * clk.tick / 1e9;
}

double fb_jiffies_tick(void)
{
	return fb_jiffies_init() ? 0 : clk.tick / 1e9;
}
