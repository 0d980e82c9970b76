// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The per-CPU statistics of a filter. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "report.h"
#include "store/stats.h"
#include "store/store.h"

int fb_stats_read(const struct fb_store *f, struct fb_stats *out)
{
	return fb_stats_read_fd(f->stats_fd, f->name, out);
}

int fb_stats_read_fd(int fd, const char *name, struct fb_stats *out)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	struct fb_stat_cells *per;
	__u32 key = 0;

	memset(out, 0, sizeof(*out));
	if (ncpu < 1)
		return -1;
	per = calloc(ncpu, sizeof(*per));
	if (!per)
		return -1;
	if (bpf_map_lookup_elem(fd, &key, per)) {
		fb_report_err("cannot read stats of '%s': %s", name, strerror(errno));
		free(per);
		return -1;
	}
	/* The data path counts outcomes (maps.h); readers get statistics. */
	for (c = 0; c < ncpu; c++)
		fb_stats_fold(&per[c], out);
	free(per);
	return 0;
}
