// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `apply`'s devices (applydev.h): what runs on the file's devices, checked
 * before anything changes, and the steps on them (attach, swap, and their
 * undo when a later step fails).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "applydev.h"
#include "cmd.h"
#include "output.h"
#include "rules/load.h"
#include "store/discover.h"
#include "prog/xdpdev.h"
#include "util.h"

struct att_ctx {
	struct ap_conf *c;
	const char *mismatch; /* device attached in another mode */
	const char *mode;
};

static void mark_attached(const char *ifname, const char *mode, __u32 prog_id, void *ctx)
{
	struct att_ctx *a = ctx;
	int i;

	for (i = 0; i < a->c->ndev; i++) {
		if (strcmp(a->c->dev[i].name, ifname))
			continue;
		a->c->dev[i].attached = true;
		a->c->dev[i].prog_id = prog_id;
		a->c->dev[i].run_mode = strcmp(mode, "generic") ? FB_XDP_NATIVE : FB_XDP_GENERIC;
		if (strcmp(fb_xdp_mode_name(a->c->dev[i].mode), mode) && !a->mismatch) {
			a->mismatch = a->c->dev[i].name;
			a->mode = mode;
		}
	}
}

/* What runs on d (fb_xdp_query()); its error said with FILE:LINE. */
static int query(const struct ap_conf *c, const struct ap_dev *d, struct fb_xdp_dev *x)
{
	bool quiet = fb_report_quiet;
	int rc;

	fb_report_quiet = true;
	rc = fb_xdp_query(d->name, x);
	fb_report_quiet = quiet;
	if (rc)
		fb_err("%s:%d: %s", c->file, d->line, fb_report_last);
	return rc;
}

/* An attachment of this filter runs as the file says (its action, which
 * is the filter's, and its malformed policy, as they decide packets), or
 * is marked to be swapped for one that does (apply_up, in one step). One
 * with monitoring (attach --monitor), which the file cannot describe, is
 * refused: the swap would end it. */
static int check_settings(struct ap_conf *c, const struct fb_header *h)
{
	bool drop = fb_malformed_drop(c->malformed, h->action);
	int i;

	for (i = 0; i < c->ndev; i++) {
		struct ap_dev *d = &c->dev[i];
		struct fb_load_seen s;
		__u8 act;

		if (!d->attached)
			continue;
		/* Unreadable: another build's program; swapped. */
		if (fb_load_seen(d->prog_id, &s)) {
			d->swap = true;
			continue;
		}
		act = fb_seen_action(&s, h->action);
		if (act == h->action && fb_seen_malformed_drop(&s, h->action) == drop)
			continue;
		if (s.mon) {
			fb_err("%s:%d: '%s' runs on %s with monitoring, action %s and malformed "
			       "packets %s, the file says action %s, malformed packets %s: apply "
			       "--down first to change it",
			       c->file, d->line, c->name, d->name, FB_NAME(fb_action_names, act),
			       fb_seen_malformed_drop(&s, h->action) ? "dropped" : "passed",
			       FB_NAME(fb_action_names, h->action), drop ? "dropped" : "passed");
			return -1;
		}
		d->swap = true;
	}
	return 0;
}

/* DEV's packets reach XDP with an Ethernet header (fb_xdp_check_link());
 * its error said with FILE:LINE. */
static int check_link(const struct ap_conf *c, const struct ap_dev *d)
{
	bool quiet = fb_report_quiet;
	int rc;

	fb_report_quiet = true;
	rc = fb_xdp_check_link(d->name);
	fb_report_quiet = quiet;
	if (rc)
		fb_err("%s:%d: %s", c->file, d->line, fb_report_last);
	return rc;
}

/* Before anything changes: the devices exist, the program can read their
 * packets, and each is free or runs this filter already (in the file's
 * mode; with its settings, or to be swapped for them). */
int fb_apply_check_devices(struct ap_conf *c, bool exists)
{
	struct att_ctx a = { .c = c };
	struct fb_store f;
	int i;

	for (i = 0; i < c->ndev; i++) {
		if (!if_nametoindex(c->dev[i].name)) {
			fb_err("%s:%d: no device '%s'", c->file, c->dev[i].line, c->dev[i].name);
			return -1;
		}
		if (check_link(c, &c->dev[i]))
			return -1;
	}
	if (exists) {
		if (fb_store_open(c->name, &f))
			return -1;
		if (fb_apply_conf_same(c, &f) ||
		    fb_discover_attachments(&f, mark_attached, &a) < 0 ||
		    (!a.mismatch && check_settings(c, f.hdr))) {
			fb_store_close(&f);
			return -1;
		}
		fb_store_close(&f);
	}
	if (a.mismatch) {
		for (i = 0; strcmp(c->dev[i].name, a.mismatch); i++)
			;
		fb_err("%s:%d: '%s' runs on %s in %s mode, not %s: apply --down first to change "
		       "it",
		       c->file, c->dev[i].line, c->name, a.mismatch, a.mode,
		       fb_xdp_mode_name(c->dev[i].mode));
		return -1;
	}
	for (i = 0; i < c->ndev; i++) {
		struct ap_dev *d = &c->dev[i];
		struct fb_xdp_dev x;

		if (d->attached)
			continue;
		if (query(c, d, &x))
			return -1;
		if (x.prog_id) {
			fb_err("%s:%d: %s already has an XDP program (id %u), which does not run "
			       "filter '%s': detach it first%s",
			       c->file, d->line, d->name, x.prog_id, c->name,
			       x.flowbloom ? ", or move the device to it in one step with attach "
					     "--replace"
					   : "");
			return -1;
		}
	}
	return 0;
}

/* d runs c's program already, prog_id (0: unknown); said with its mode,
 * and multi-buffer where it was loaded so, as attach says it. */
void fb_apply_print_already(const struct ap_conf *c, const struct ap_dev *d, __u32 prog_id)
{
	struct fb_load_seen s;
	bool mb = prog_id && !fb_load_seen(prog_id, &s) && s.frags;

	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("already_attached", d->name);
		jw_str("mode", fb_xdp_mode_name(d->mode));
		if (mb)
			jw_bool("multi_buffer", true);
		jw_obj_close();
		jw_end();
	} else {
		printf("%s already attached to %s (%s%s)\n", c->name, fb_shown(d->name),
		       fb_xdp_mode_name(d->mode), mb ? ", multi-buffer" : "");
	}
}

struct meanwhile {
	const char *dev, *mode;
	bool found;
	__u32 prog_id;
};

static void find_attached(const char *ifname, const char *mode, __u32 prog_id, void *ctx)
{
	struct meanwhile *m = ctx;

	if (!strcmp(ifname, m->dev) && !strcmp(mode, m->mode)) {
		m->found = true;
		m->prog_id = prog_id;
	}
}

/* attach's step: the device, then the program with the file's malformed
 * policy (no monitoring). 1 attached; 0 attached already, by hand, since
 * this one looked, which is as good (not this run's: never undone); -1
 * refused: the device (no native XDP,
 * another program there meanwhile), said with the FILE:LINE of its attach
 * line. d->new_id: the program attached. */
int fb_apply_attach(const struct ap_conf *c, struct ap_dev *d, bool warn)
{
	struct fb_load_opts lo = { .malformed = c->malformed };
	struct meanwhile m = { d->name, fb_xdp_mode_name(d->mode), false, 0 };
	struct fb_xdp_dev dev;
	struct fb_store f;
	bool quiet = fb_report_quiet, mb;
	int err;

	if (query(c, d, &dev) || fb_store_open(c->name, &f))
		return -1;
	fb_report_quiet = true;
	err = fb_xdp_attach(&f, d->name, d->mode, &lo, &mb, &d->new_id);
	fb_report_quiet = quiet;
	if (err && fb_discover_attachments(&f, find_attached, &m) >= 0 && m.found) {
		fb_store_close(&f);
		fb_apply_print_already(c, d, m.prog_id);
		return 0;
	}
	if (err) {
		/* attach's advice, as the file writes it. */
		char *adv = strstr(fb_report_last, "use --mode generic");

		fb_store_close(&f);
		if (adv) {
			*adv = 0;
			fb_err("%s:%d: %swrite 'attach = %s generic'", c->file, d->line,
			       fb_report_last, d->name);
		} else {
			fb_err("%s:%d: %s", c->file, d->line, fb_report_last);
		}
		return -1;
	}
	fb_print_attached(c->name, d->name, fb_xdp_mode_name(d->mode), NULL, 0, mb);
	if (warn)
		fb_warn_empty_allow(&f, 0, d->name);
	fb_store_close(&f);
	return 1;
}

/* The step for a device this filter runs on with other settings than
 * the file's: its program swapped for one loaded as attach's step loads
 * it, in one step. The program swapped out is held (d->old_fd) until the
 * run ends, for fb_apply_undo() to put it back; d->new_id: the one put
 * there. */
int fb_apply_swap(const struct ap_conf *c, struct ap_dev *d)
{
	struct fb_load_opts lo = { .malformed = c->malformed };
	struct fb_store f;
	bool quiet = fb_report_quiet, mb;
	int err;

	d->old_fd = bpf_prog_get_fd_by_id(d->prog_id);
	if (d->old_fd < 0) {
		fb_err("%s:%d: the XDP program on %s changed while re-attaching (program %u is "
		       "gone); not re-attaching",
		       c->file, d->line, d->name, d->prog_id);
		return -1;
	}
	if (fb_store_open(c->name, &f))
		return -1;
	fb_report_quiet = true;
	err = fb_xdp_replace(&f, d->name, d->mode, d->prog_id, &lo, &mb, &d->new_id);
	fb_report_quiet = quiet;
	fb_store_close(&f);
	d->swapped = !err;
	if (err) {
		fb_err("%s:%d: %s", c->file, d->line, fb_report_last);
	} else if (fb_json) {
		jw_obj_open(NULL);
		jw_str("reattached", c->name);
		jw_str("dev", d->name);
		jw_str("mode", fb_xdp_mode_name(d->mode));
		if (mb)
			jw_bool("multi_buffer", true);
		jw_obj_close();
		jw_end();
	} else {
		printf("re-attached %s to %s (%s%s) with the file's action and malformed policy\n",
		       c->name, fb_shown(d->name), fb_xdp_mode_name(d->mode),
		       mb ? ", multi-buffer" : "");
	}
	return err;
}

/*
 * A step failed: undo this run's steps, newest first. Only what is still
 * this run's: a device attached here is detached, a swapped one gets its
 * program back, each only while the program this run put there still runs
 * (XDP_FLAGS_REPLACE with it). Another apply waits for this one (the
 * lock), but an attach --replace or a detach and attach by hand may have
 * moved the device since: that stays, and the line says so (the run fails
 * either way).
 */
void fb_apply_undo(struct ap_conf *c)
{
	int i;

	for (i = c->ndev - 1; i >= 0; i--) {
		struct ap_dev *d = &c->dev[i];

		if (d->swapped && !fb_xdp_put_back(d->name, d->mode, d->new_id, d->old_fd)) {
			if (fb_json) {
				jw_obj_open(NULL);
				jw_str("restored", d->name);
				jw_u64("prog_id", d->prog_id);
				jw_obj_close();
				jw_end();
			} else {
				printf("put back the program that ran on %s (id %u)\n",
				       fb_shown(d->name), d->prog_id);
			}
		}
		if (d->ours && !fb_xdp_put_back(d->name, d->mode, d->new_id, -1))
			fb_print_detached(d->name);
	}
}

/* The file's devices that run c's filter (f), marked attached: 0, or -1
 * (said). */
int fb_apply_find_attached(struct ap_conf *c, struct fb_store *f)
{
	struct att_ctx a = { .c = c };

	return fb_discover_attachments(f, mark_attached, &a) < 0 ? -1 : 0;
}
