// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Small helpers the library shares. */
#define _GNU_SOURCE
#include <string.h>
#include <bpf/bpf.h>
#include "util.h"

__u32 fb_map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

int fb_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}
