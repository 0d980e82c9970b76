// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which loaded programs use a filter, and on which devices of this network
 * namespace (destroy, info, capture, apply --down ask; see discover.h).
 */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "store/discover.h"
#include "store/store.h"
#include "report.h"

/* Does program prog_id use filter f (its stats or outer map)? 1, 0 (also
 * for a program gone meanwhile), or -1 (reported) if it cannot be read
 * now (memory, descriptors): never taken for "no" (destroy would remove a
 * filter in use). */
static int prog_uses(__u32 prog_id, const struct fb_store *f)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[32], i;
	int fd = bpf_prog_get_fd_by_id(prog_id), found = 0;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		fb_report_err("cannot read XDP program %u: %s", prog_id, strerror(errno));
		return -1;
	}
	info.nr_map_ids = 32;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		fb_report_err("cannot read XDP program %u: %s", prog_id, strerror(errno));
		found = -1;
	}
	for (i = 0; !found && i < info.nr_map_ids && i < 32; i++)
		if ((f->stats_id && ids[i] == f->stats_id) ||
		    (f->outer_id && ids[i] == f->outer_id))
			found = 1;
	close(fd);
	return found;
}

int fb_discover_users(const struct fb_store *f, __u32 *first_prog)
{
	__u32 id = 0;
	int n = 0;

	/* Every loaded program, whichever network namespace its device is
	 * in: a netlink XDP attachment holds its program, and the program
	 * holds the maps. */
	while (!bpf_prog_get_next_id(id, &id)) {
		int u = prog_uses(id, f);

		if (u < 0)
			return -1;
		if (!u)
			continue;
		if (!n && first_prog)
			*first_prog = id;
		n++;
	}
	if (errno != ENOENT) {
		fb_report_err("cannot list BPF programs: %s", strerror(errno));
		return -1;
	}
	return n;
}

int fb_discover_attachments(const struct fb_store *f, fb_attach_cb cb, void *ctx)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	int n = 0, u;

	/* Devices that cannot be listed, or a device's programs that cannot
	 * be asked for (netlink refused), are never taken for none. */
	if (!ifs) {
		fb_report_err("cannot list the network devices: %s", strerror(errno));
		return -1;
	}
	for (i = ifs; n >= 0 && i->if_index; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		u = bpf_xdp_query(i->if_index, 0, &q);
		if (u == -ENODEV) /* gone since the list */
			continue;
		if (u) {
			fb_report_err("cannot read the XDP programs of %s: %s", i->if_name,
				      strerror(-u));
			n = -1;
			break;
		}
		if (q.drv_prog_id && (u = prog_uses(q.drv_prog_id, f))) {
			if (u > 0)
				cb(i->if_name, "native", q.drv_prog_id, ctx);
			n = u > 0 ? n + 1 : -1;
		}
		if (n >= 0 && q.skb_prog_id && (u = prog_uses(q.skb_prog_id, f))) {
			if (u > 0)
				cb(i->if_name, "generic", q.skb_prog_id, ctx);
			n = u > 0 ? n + 1 : -1;
		}
	}
	if_freenameindex(ifs);
	return n;
}
