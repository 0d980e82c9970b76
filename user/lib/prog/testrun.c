// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One frame through the loaded program (see testrun.h). */
#include <errno.h>
#include <bpf/bpf.h>
#include "prog/loader.h"
#include "prog/testrun.h"

int fb_test_run(const struct flowbloom_bpf *skel, const void *frame, size_t len, __u32 *verdict,
		struct fb_trace *tr)
{
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = frame, .data_size_in = len, .repeat = 1);
	__u32 zero = 0;
	int err = bpf_prog_test_run_opts(fb_load_prog_fd(skel), &run);

	if (err)
		return err < 0 ? err : -EINVAL;
	if (bpf_map_lookup_elem(fb_load_trace_fd(skel), &zero, tr))
		return -errno;
	*verdict = run.retval;
	return 0;
}
