// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom attach` and `detach`: the XDP program on a device. */
#include <getopt.h>
#include <stdio.h>
#include <net/if.h>
#include <sys/file.h>
#include "cmd.h"
#include "parse.h"
#include "store/head.h"
#include "store/pintree.h"
#include "store/store.h"
#include "prog/xdpdev.h"
#include "monitor/monmaps.h"
#include "output.h"
#include "util.h"

/* The object member "monitor" describing m (fb_monitor_describe() in JSON). */
static void monitor_json(const struct fb_monitor *m)
{
	const struct fb_mon_config *c = &m->cfg;

	jw_obj_open("monitor");
	if (c->flags & FB_MON_SKETCH) {
		jw_obj_open("sketch");
		jw_u64("depth", c->depth);
		jw_u64("width", 1U << c->shift);
		jw_double("epsilon", fb_monitor_epsilon(m));
		jw_double("delta", fb_monitor_delta(m));
		jw_u64("cpus", c->planes);
		jw_str("by", fb_monitor_sketch_by(m));
		jw_obj_close();
	}
	if (c->flags & FB_MON_NEWFLOWS) {
		jw_obj_open("new_flows");
		jw_double("age", c->age_ns / 1e9);
		jw_u64("expect", c->seen_expect);
		jw_u64("ring_bytes", c->ring_bytes);
		jw_double("expected_miss_rate",
			  fb_monitor_seen_miss_rate((double)c->seen_expect, c->seen_slots,
						    c->seen_k));
		jw_obj_close();
	}
	if (c->flags & FB_MON_ACCT) {
		jw_obj_open("accounting");
		jw_u64("flows_per_cpu", (__u64)c->acct_buckets * FB_ACCT_WAYS);
		jw_u64("bytes_per_cpu", m->plane_bytes);
		jw_u64("cpus", c->top_planes);
		jw_obj_close();
	}
	jw_obj_close();
}

void fb_print_attached(const char *name, const char *dev, const char *mode,
		       const struct fb_monitor *mon, __u32 replaced, bool multibuf)
{
	const char *mb = multibuf ? ", multi-buffer" : "";
	char esc[FB_ESCAPED_SIZE(IF_NAMESIZE)];

	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("attached", name);
		jw_str("dev", dev);
		jw_str("mode", mode);
		if (multibuf)
			jw_bool("multi_buffer", true);
		if (replaced)
			jw_u64("replaced_program", replaced);
		if (mon)
			monitor_json(mon);
		jw_obj_close();
		jw_end();
	} else if (replaced) {
		printf("attached %s to %s (%s%s) in place of program %u\n", name,
		       fb_printable(dev, esc, sizeof(esc)), mode, mb, replaced);
	} else {
		printf("attached %s to %s (%s%s)\n", name, fb_printable(dev, esc, sizeof(esc)),
		       mode, mb);
	}
	if (!fb_json && mon) {
		char desc[256];

		fb_monitor_describe(mon, desc, sizeof(desc));
		printf("monitoring: %s\n", desc);
	}
}

void fb_print_detached(const char *dev)
{
	char esc[FB_ESCAPED_SIZE(IF_NAMESIZE)];

	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("detached", dev);
		jw_obj_close();
		jw_end();
	} else {
		printf("detached %s\n", fb_printable(dev, esc, sizeof(esc)));
	}
}

/* An allow-list without rules drops every IP packet on dev, the
 * operator's own session included: allowed, but never silently (as `load
 * --replace` of an empty input says). The header's count is exact unless
 * the filter is an intersection's estimate; rules with a lifetime count
 * while their generation is live. */
void fb_warn_empty_allow(const struct fb_store *f, __u8 action, const char *dev)
{
	const struct fb_header *h = f->hdr;

	if ((action ? action : h->action) != FB_ACTION_ALLOW || h->nflows || h->gens ||
	    (h->flags & FB_HDRF_NFLOWS_ESTIMATE))
		return;
	fb_warn("filter '%s' holds no rules: under allow %s drops every IP packet (non-IP frames "
		"such as ARP pass); add the flows to let through",
		f->name, dev);
}

int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "action", required_argument, NULL, 'a' },
		{ "malformed", required_argument, NULL, 'M' },
		{ "monitor", no_argument, NULL, FB_OPT_MONITOR },
		{ "epsilon", required_argument, NULL, FB_OPT_EPSILON },
		{ "delta", required_argument, NULL, FB_OPT_DELTA },
		{ "new-flows", no_argument, NULL, FB_OPT_NEWFLOWS },
		{ "age", required_argument, NULL, FB_OPT_AGE },
		{ "expect", required_argument, NULL, FB_OPT_EXPECT },
		{ "ring", required_argument, NULL, FB_OPT_RING },
		{ "accounting", no_argument, NULL, FB_OPT_ACCT },
		{ "max-flows", required_argument, NULL, FB_OPT_MAXFLOWS },
		{ "sketch-by", required_argument, NULL, FB_OPT_SKETCHBY },
		{ "replace", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const modes[] = { "native", "generic", NULL };
	static const int mode_v[] = { FB_XDP_NATIVE, FB_XDP_GENERIC };
	struct fb_load_opts lo = { 0 };
	enum fb_xdp_mode mode = FB_XDP_NATIVE;
	struct fb_mon_opts mo;
	struct fb_monitor mon;
	struct fb_xdp_dev dev;
	struct fb_store f;
	bool replace = false, mode_given = false, mb = false, monitoring;
	__u32 old = 0;
	int c, v, err;

	fb_monitor_opts_default(&mo);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if ((v = fb_pick("--mode", optarg, modes, mode_v)) < 0)
				return 2;
			mode = v;
			mode_given = true;
			break;
		case 'r':
			replace = true;
			break;
		default:
			v = fb_load_option(c, optarg, &lo);
			if (!v)
				v = fb_mon_option(c, optarg, &mo);
			if (v < 0)
				return 2;
			if (!v)
				return fb_bad_option(c, argv);
		}
	}
	if (argc - optind != 2)
		return fb_usage(argc - optind < 2 ? "missing NAME or DEV" : "too many arguments");
	/* A NAME that is no name is a usage error, whatever the device is
	 * (main.c); then the device: nothing is made for one that does not
	 * exist, or whose packets the program cannot read. */
	if (fb_pin_check_name(argv[optind]))
		return 1;
	if (fb_xdp_query(argv[optind + 1], &dev) || fb_xdp_check_link(argv[optind + 1]))
		return 1;
	/* --replace: the flowbloom program running there gives way to this
	 * one in one step (XDP_FLAGS_REPLACE), no packet in between without
	 * a program; another tool's program never does. In its mode: native
	 * and generic are two attachments, and one cannot replace the other. */
	if (replace && dev.prog_id) {
		if (!dev.flowbloom) {
			fb_err("the XDP program on %s (id %u, '%s') is not flowbloom's: --replace "
			       "replaces only flowbloom's",
			       argv[optind + 1], dev.prog_id, dev.name);
			return 1;
		}
		if (mode_given && mode != dev.mode) {
			fb_err("%s runs flowbloom in %s mode: --replace keeps its mode (detach "
			       "first "
			       "to change the mode)",
			       argv[optind + 1], fb_xdp_mode_name(dev.mode));
			return 1;
		}
		mode = dev.mode;
		old = dev.prog_id;
	}
	if (fb_store_open(argv[optind], &f))
		return 1;
	/* The program this build attaches reads the table this build writes. */
	if (fb_head_refresh(&f)) {
		fb_store_close(&f);
		return 1;
	}
	/* Monitoring maps (user/lib/monitor/monmaps.c): new ones unless
	 * another device feeds them already. Under the filter's lock until
	 * the program is attached (fb_xdp_attach() sees it held): of two
	 * attaches at once, each saw no program feeding the maps and the
	 * second made them anew, the first's device then feeding maps nobody
	 * reads (top, flows, guard blind to its traffic). */
	monitoring = mo.sketch || mo.newflows || mo.acct;
	if (monitoring && (fb_store_flock(&f, LOCK_EX) || fb_monitor_prepare(&f, &mo, old, &mon))) {
		fb_store_unlock(&f);
		fb_store_close(&f);
		return 1;
	}
	lo.monitor = monitoring ? &mon : NULL;
	err = old ? fb_xdp_replace(&f, argv[optind + 1], mode, old, &lo, &mb, NULL)
		  : fb_xdp_attach(&f, argv[optind + 1], mode, &lo, &mb, NULL);
	fb_store_unlock(&f);
	if (!err) {
		fb_print_attached(argv[optind], argv[optind + 1], fb_xdp_mode_name(mode),
				  lo.monitor, old, mb);
		fb_warn_empty_allow(&f, lo.action, argv[optind + 1]);
	}
	/* The attachment holds the program and its maps; our handles can go. */
	if (lo.monitor)
		fb_monitor_close(&mon);
	fb_store_close(&f);
	return err ? 1 : 0;
}

int cmd_detach(int argc, char **argv)
{
	if (fb_no_options(&argc, argv))
		return 2;
	if (argc != 2)
		return fb_usage(argc < 2 ? "missing DEV" : "too many arguments");
	if (fb_xdp_detach(argv[1]))
		return 1;
	fb_print_detached(argv[1]);
	return 0;
}
