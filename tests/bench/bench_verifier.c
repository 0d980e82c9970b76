// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark 10: the verifier's work for the real program in each
 * configuration whose read-only data changes the code it sees (the loader's
 * options: action, malformed policy, trace, bench hook, monitoring). The
 * object is loaded as fb_load loads it, with the kernel's statistics log
 * (BPF_LOG_STATS: "processed N insns ..."), one line per configuration,
 * and the length of the program the kernel runs (xlated instructions, as
 * `bpftool prog dump xlated` counts them: the main program and its
 * subprograms, without the code the verifier found dead).
 */
#include <math.h>
#include "benchmark.h"

struct vconf {
	const char *name;
	__u8 action, malformed, trace;
	__u32 bench, mon;
};

static const struct vconf confs[] = {
	{ "default (ip link, attach without options)", 0, 0, 0, 0, 0 },
	{ "--action drop", FB_ACTION_DROP, 0, 0, 0, 0 },
	{ "--action allow", FB_ACTION_ALLOW, 0, 0, 0, 0 },
	{ "--action monitor", FB_ACTION_MONITOR, 0, 0, 0, 0 },
	{ "--malformed pass", 0, FB_MALFORMED_PASS, 0, 0, 0 },
	{ "--malformed drop", 0, FB_MALFORMED_DROP, 0, 0, 0 },
	{ "--action monitor --malformed drop", FB_ACTION_MONITOR, FB_MALFORMED_DROP, 0, 0, 0 },
	{ "trace on (replay --explain)", 0, 0, 1, 0, 0 },
	{ "bench hook on (hits)", FB_ACTION_DROP, 0, 0, 0xffff, 0 },
	{ "bench hook on (misses)", FB_ACTION_DROP, 0, 0, FB_BENCH_MISS, 0 },
	{ "--monitor", 0, 0, 0, 0, FB_MON_SKETCH },
	{ "--monitor (atomic plane)", 0, 0, 0, 0, FB_MON_SKETCH | FB_MON_ATOMIC },
	{ "--new-flows", 0, 0, 0, 0, FB_MON_NEWFLOWS },
	{ "--monitor --new-flows", 0, 0, 0, 0, FB_MON_SKETCH | FB_MON_NEWFLOWS },
	{ "--monitor --sketch-by src", 0, 0, 0, 0, FB_MON_SKETCH | FB_MON_BY_SRC },
	{ "--monitor --new-flows --sketch-by dst", 0, 0, 0, 0,
	  FB_MON_SKETCH | FB_MON_NEWFLOWS | FB_MON_BY_DST },
	{ "--monitor --new-flows, trace on", 0, 0, 1, 0, FB_MON_SKETCH | FB_MON_NEWFLOWS },
	{ "--accounting", 0, 0, 0, 0, FB_MON_ACCT },
	{ "--monitor --accounting", 0, 0, 0, 0, FB_MON_SKETCH | FB_MON_ACCT },
	{ "--monitor --new-flows --accounting", 0, 0, 0, 0,
	  FB_MON_SKETCH | FB_MON_NEWFLOWS | FB_MON_ACCT },
};

static char vlog[1 << 24];

#define VERIFY_TRIES 3

void bench_verifier(void)
{
	struct fb_create_opts fo = {
		.nblocks = 1024, .k = 8, .layout = FB_LAYOUT_BLOCKED, .hash = FB_HASH_NHK
	};
	unsigned long slowest = 0;
	int nfailed = 0;
	struct fb_store f;
	size_t i;

	printf("\n10. verifier: instructions processed per configuration (BPF_LOG_STATS; "
	       "limit 1M), verification time the fastest of %d loads\n",
	       VERIFY_TRIES);
	/* A real filter, and real monitoring maps for the monitored loads. */
	if (fb_store_create("vfy", &fo) || fb_store_open("vfy", &f))
		exit(1);
	for (i = 0; i < sizeof(confs) / sizeof(confs[0]); i++) {
		const struct vconf *c = &confs[i];
		unsigned long insns = 0, usec = ~0UL, xlated = 0;
		char states[160] = "";
		struct fb_monitor m;
		int t, failed = 0;

		if (c->mon) {
			struct fb_mon_opts o;

			fb_monitor_opts_default(&o);
			o.sketch = !!(c->mon & FB_MON_SKETCH);
			o.newflows = !!(c->mon & FB_MON_NEWFLOWS);
			o.atomic = !!(c->mon & FB_MON_ATOMIC);
			o.acct = !!(c->mon & FB_MON_ACCT);
			o.sketch_by = c->mon & FB_MON_BY_ADDR;
			if (fb_monitor_create(&f, &o) || fb_monitor_open(&f, &m))
				exit(1);
		}
		/* The fastest of VERIFY_TRIES loads: the same program takes the
		 * same work, and a slower load only met other processes. */
		for (t = 0; t < VERIFY_TRIES && !failed; t++) {
			struct flowbloom_bpf *skel = flowbloom_bpf__open();
			struct bpf_program *p;
			char *line, *vt;
			int err;

			if (!skel)
				exit(1);
			skel->rodata->cfg_action = c->action;
			skel->rodata->cfg_malformed = c->malformed;
			skel->rodata->cfg_trace = c->trace;
			skel->rodata->cfg_bench = c->bench;
			bpf_map__set_pin_path(skel->maps.fb_filter, NULL);
			bpf_map__set_pin_path(skel->maps.fb_stats, NULL);
			if (bpf_map__reuse_fd(skel->maps.fb_filter, f.outer_fd))
				exit(1);
			if (c->mon && fb_load_setup_monitor(skel, &m))
				exit(1);
			bpf_object__for_each_program(p, skel->obj)
			{
				vlog[0] = 0;
				bpf_program__set_log_buf(p, vlog, sizeof(vlog));
				/* Statistics only; FBBENCH_VLOG=1 adds the log (its
				 * end is printed if the load fails). */
				bpf_program__set_log_level(p, getenv("FBBENCH_VLOG") ? 1 | 4 : 4);
			}
			err = flowbloom_bpf__load(skel);
			line = strstr(vlog, "processed ");
			vt = strstr(vlog, "verification time ");
			if (err || !line) {
				size_t l = strlen(vlog);

				printf("  %-40s load failed: %s\n", c->name, strerror(-err));
				if (getenv("FBBENCH_VLOG"))
					printf("%s\n", vlog + (l > 6000 ? l - 6000 : 0));
				failed = 1;
			} else {
				unsigned long us = vt ? strtoul(vt + 18, NULL, 10) : 0;
				char *st = strstr(line, "total_states"), *nl;

				struct bpf_prog_info pi = {};
				__u32 pil = sizeof(pi);

				insns = strtoul(line + 10, NULL, 10);
				/* What the kernel runs, after the verifier removed the
				 * code the read-only data rules out. */
				if (!bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.flowbloom),
							    &pi, &pil))
					xlated = pi.xlated_prog_len / 8;
				if (st && (nl = strchr(st, '\n')))
					*nl = 0;
				snprintf(states, sizeof(states), "%s", st ? st : "");
				if (us < usec)
					usec = us;
			}
			flowbloom_bpf__destroy(skel);
		}
		if (!failed) {
			printf("  %-40s %7lu insns  %5lu xlated  %6.0f ms  %s\n", c->name, insns,
			       xlated, usec / 1e3, states);
			if (usec > slowest)
				slowest = usec;
		}
		nfailed += failed;
		if (c->mon) {
			fb_monitor_close(&m);
			fb_monitor_unpin(&f);
		}
	}
	fb_store_close(&f);
	fb_store_destroy("vfy");
	/* A configuration that does not load has no time: the target is not
	 * met (an infinite time), never met by the others' times. */
	target("verifier: the slowest configuration's verification, s",
	       nfailed ? INFINITY : slowest / 1e6, 0.5, true);
	target("verifier: configurations that fail to load", nfailed, 0, true);
}
