// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `query --packet --dev DEV` and `replay --dev DEV`: the verdict as the
 * program attached on DEV gives it. Its action and malformed policy are
 * per attachment (attach --action, --malformed, apply's file), in its
 * read-only data (fb_load_seen()); the program these verbs load takes
 * them, and whether it was loaded multi-buffer, so the answer is DEV's,
 * not the filter's defaults. Only for a device that runs flowbloom's
 * program on this very filter: anything else is refused, naming what
 * runs there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "output.h"
#include "prog/loader.h"
#include "prog/xdpdev.h"
#include "store/discover.h"
#include "store/store.h"
#include "report.h"
#include "util.h"

/* Does program prog_id read filter f (its fb_filter map)? */
static bool reads(__u32 prog_id, const struct fb_store *f)
{
	struct bpf_prog_info pi = { 0 };
	__u32 ids[64], len = sizeof(pi), i;
	int fd = bpf_prog_get_fd_by_id(prog_id);
	bool yes = false;

	if (fd < 0)
		return false;
	pi.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pi.map_ids = (__u64)(unsigned long)ids;
	if (!bpf_obj_get_info_by_fd(fd, &pi, &len))
		for (i = 0; i < pi.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++)
			yes |= f->outer_id && ids[i] == f->outer_id;
	close(fd);
	return yes;
}

/* DEV runs flowbloom's program prog_id, which does not read f: what it
 * reads, said (found as status finds it, quietly). */
static void other_filter(const char *dev, __u32 prog_id, const struct fb_store *f)
{
	struct fb_att att, *hit = fb_discover_find(prog_id, 0, &att) > 0 ? &att : NULL;

	if (hit && hit->maps == FB_ATT_FILTER)
		fb_err("%s runs filter '%s' (XDP program %u), not '%s'", dev, hit->filter, prog_id,
		       f->name);
	else if (hit && hit->maps == FB_ATT_GLOBALS)
		fb_err("%s runs flowbloom (XDP program %u) on the maps of "
		       "/sys/fs/bpf/xdp/globals, which hold no filter yet, not '%s': it passes "
		       "every packet",
		       dev, prog_id, f->name);
	else if (hit && hit->maps == FB_ATT_PRIVATE)
		fb_err("%s runs flowbloom (XDP program %u) on private maps holding no filter, "
		       "not '%s': it passes every packet (see flowbloom status)",
		       dev, prog_id, f->name);
	else if (hit)
		fb_err("%s runs flowbloom (XDP program %u) with another filter than '%s', one "
		       "pinned outside this filter root",
		       dev, prog_id, f->name);
	else
		fb_err("%s runs XDP program %u, which does not read filter '%s'", dev, prog_id,
		       f->name);
}

int fb_dev_settings(const char *dev, const struct fb_store *f, struct fb_load_opts *lo,
		    struct fb_dev_seen *seen)
{
	struct fb_load_seen s;
	struct fb_xdp_dev x;

	if (fb_xdp_query(dev, &x))
		return -1;
	if (!x.prog_id) {
		fb_err("%s runs no XDP program: no filter decides its packets, every one passes",
		       dev);
		return -1;
	}
	if (!x.flowbloom) {
		fb_err("the XDP program on %s (id %u, '%s') is not flowbloom's%s", dev, x.prog_id,
		       x.name,
		       strcmp(x.name, "xdp_dispatcher")
			       ? ""
			       : " (xdp-loader's dispatcher: an object it loaded runs with the "
				 "filter's own action and the default malformed policy, ask "
				 "without --dev)");
		return -1;
	}
	if (!reads(x.prog_id, f)) {
		other_filter(dev, x.prog_id, f);
		return -1;
	}
	if (fb_load_seen(x.prog_id, &s)) {
		fb_err("cannot read the settings of XDP program %u on %s: replaced meanwhile, or "
		       "another build's program (attach --replace runs this build's)",
		       x.prog_id, dev);
		return -1;
	}
	lo->action = s.action;
	lo->malformed = s.malformed;
	/* As DEV reads a frame longer than a page: multi-buffer, its first
	 * buffer parsed and a malformed one dropped (fb_split_drop()), or
	 * (generic mode) in one piece, the malformed policy deciding. */
	lo->frags = s.frags;
	seen->dev = dev;
	seen->prog_id = x.prog_id;
	seen->action = fb_seen_action(&s, f->hdr->action);
	seen->malformed_drop = fb_seen_malformed_drop(&s, f->hdr->action);
	return 0;
}

void fb_dev_seen_text(const struct fb_dev_seen *s)
{
	if (s->dev)
		printf(" (as on %s: action %s, malformed packets %s)", fb_shown(s->dev),
		       FB_NAME(fb_action_names, s->action),
		       s->malformed_drop ? "dropped" : "passed");
}

void fb_dev_seen_json(const struct fb_dev_seen *s)
{
	if (!s->dev)
		return;
	jw_obj_open("dev");
	jw_str("name", s->dev);
	jw_u64("program", s->prog_id);
	jw_str("action", FB_NAME(fb_action_names, s->action));
	jw_str("malformed", s->malformed_drop ? "drop" : "pass");
	jw_obj_close();
}
