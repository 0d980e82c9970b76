// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom apply FILE`: make a filter and its attachments what a
 * configuration file says (what flowbloom@NAME.service runs at boot, when
 * bpffs is empty). FILE is NAME.conf, lines `key = value`:
 *
 *   capacity, fp-rate | bits, hashes   geometry (at creation)
 *   layout, hash, action               as create's options
 *   counting = no|4|8, confirm = no|exact
 *   load = PATH                        a list `load` reads (repeatable;
 *                                      relative to FILE's directory)
 *   attach = DEV [native|generic]      a device (repeatable)
 *   malformed = pass|drop              for every attachment
 *
 * Idempotent: the filter is created if absent (if present, its settings
 * must be the file's), its content replaced by the lists in one step when
 * there are any, and each device attached unless this filter already runs
 * there. Everything is checked first (errors name FILE:LINE); a step that
 * still fails undoes the earlier steps of this run: devices it attached,
 * the filter it created. --down detaches the file's devices, --check only
 * checks. The steps are the verbs themselves (create, load --replace,
 * attach, detach), so their output and errors are theirs.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "applyconf.h"
#include "cmd.h"
#include "store/discover.h"
#include "output.h"
#include "store/pintree.h"
#include "util.h"

/* 1 if filter name exists, 0 if not; -1 (printed) if we cannot tell: an
 * unprivileged user cannot read the filter root, and must not be told
 * "nothing to do" (or blame another program) when the filter may run. */
static int filter_exists(const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", fb_pin_root(), name);
	if (!stat(path, &st))
		return S_ISDIR(st.st_mode);
	if (errno == ENOENT)
		return 0;
	fb_err("cannot look for filter '%s' in %s: %s%s", name, fb_pin_root(), strerror(errno),
	       errno == EACCES || errno == EPERM ? " (apply needs root: CAP_BPF, CAP_NET_ADMIN)"
						 : "");
	return -1;
}

/* An existing filter must be the one the file describes: apply never
 * re-creates a filter (its content and attachments would go). */
static int same_settings(const struct ap_conf *c, const struct fb_store *f)
{
	const struct fb_header *h = f->hdr;
	char want[64], have[64];
	const char *what = NULL;

	if (c->capacity[0]) {
		unsigned long long cap = strtoull(c->capacity, NULL, 10);
		__u32 ppb = (__u32)(strtod(c->fp_rate, NULL) * 1e9 + 0.5);

		if (h->capacity != cap || h->fp_ppb != ppb) {
			what = "capacity/fp-rate";
			snprintf(want, sizeof(want), "%llu/%s", cap, c->fp_rate);
			snprintf(have, sizeof(have), "%llu/%g", (unsigned long long)h->capacity,
				 h->fp_ppb / 1e9);
		}
	} else if (h->capacity || h->k != strtoul(c->hashes, NULL, 10) ||
		   h->nblocks !=
			   (strtoull(c->bits, NULL, 10) + FB_BLOCK_BITS - 1) / FB_BLOCK_BITS) {
		what = "bits/hashes";
		snprintf(want, sizeof(want), "%s/%s", c->bits, c->hashes);
		snprintf(have, sizeof(have), "%llu/%u",
			 (unsigned long long)h->nblocks * FB_BLOCK_BITS, h->k);
	}
#define CMP(field, table, dflt, label)                                                             \
	if (!what) {                                                                               \
		const char *w = c->field[0] ? c->field : dflt;                                     \
		const char *g = h->label < sizeof(table) / sizeof(table[0]) && table[h->label]     \
					? table[h->label]                                          \
					: "?";                                                     \
		if (strcmp(w, g)) {                                                                \
			what = #field;                                                             \
			snprintf(want, sizeof(want), "%s", w);                                     \
			snprintf(have, sizeof(have), "%s", g);                                     \
		}                                                                                  \
	}
	CMP(layout, fb_layout_names, "blocked", layout)
	/* The action first: the default hash follows it. */
	CMP(action, fb_action_names, "drop", action)
	CMP(hash, fb_hash_names,
	    fb_hash_names[fb_hash_default(c->action[0] && !strcmp(c->action, "allow")
						  ? FB_ACTION_ALLOW
						  : FB_ACTION_DROP)],
	    hash)
#undef CMP
	if (!what) {
		const char *w = c->counting[0] ? c->counting : "no";
		const char *g = h->counter_bits == 4 ? "4" : h->counter_bits == 8 ? "8" : "no";

		if (strcmp(w, g)) {
			what = "counting";
			snprintf(want, sizeof(want), "%s", w);
			snprintf(have, sizeof(have), "%s", g);
		}
	}
	if (!what && (!strcmp(c->confirm, "exact")) != !!h->confirm) {
		what = "confirm";
		snprintf(want, sizeof(want), "%s", h->confirm ? "no" : "exact");
		snprintf(have, sizeof(have), "%s", h->confirm ? "exact" : "no");
	}
	if (!what)
		return 0;
	fb_err("%s: filter '%s' exists with %s %s, the file says %s: destroy it first to "
	       "re-create it",
	       c->file, c->name, what, have, want);
	return -1;
}

struct att_ctx {
	struct ap_conf *c;
	const char *mismatch; /* device attached in another mode */
	const char *mode;
};

static void mark_attached(const char *ifname, const char *mode, __u32 prog_id, void *ctx)
{
	struct att_ctx *a = ctx;
	int i;

	(void)prog_id;
	for (i = 0; i < a->c->ndev; i++) {
		if (strcmp(a->c->dev[i].name, ifname))
			continue;
		a->c->dev[i].attached = true;
		if (strcmp(a->c->dev[i].mode, mode) && !a->mismatch) {
			a->mismatch = a->c->dev[i].name;
			a->mode = mode;
		}
	}
}

/* Before anything changes: the devices exist, and each is free or runs
 * this filter already. */
static int check_devices(struct ap_conf *c, bool exists)
{
	struct att_ctx a = { .c = c };
	struct fb_store f;
	int i;

	for (i = 0; i < c->ndev; i++)
		if (!if_nametoindex(c->dev[i].name)) {
			fb_err("%s:%d: no device '%s'", c->file, c->dev[i].line, c->dev[i].name);
			return -1;
		}
	if (exists) {
		if (fb_store_open(c->name, &f))
			return -1;
		if (same_settings(c, &f) || fb_discover_attachments(&f, mark_attached, &a) < 0) {
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
		       c->file, c->dev[i].line, c->name, a.mismatch, a.mode, c->dev[i].mode);
		return -1;
	}
	for (i = 0; i < c->ndev; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		struct ap_dev *d = &c->dev[i];

		if (d->attached)
			continue;
		if (bpf_xdp_query(if_nametoindex(d->name), 0, &q)) {
			fb_err("%s:%d: cannot query %s: %s", c->file, d->line, d->name,
			       strerror(errno));
			return -1;
		}
		if (q.prog_id || q.drv_prog_id || q.skb_prog_id) {
			fb_err("%s:%d: %s already has an XDP program (id %u), which does not run "
			       "filter '%s': detach it first",
			       c->file, d->line, d->name,
			       q.drv_prog_id   ? q.drv_prog_id
			       : q.skb_prog_id ? q.skb_prog_id
					       : q.prog_id,
			       c->name);
			return -1;
		}
	}
	return 0;
}

/* A verb, as if typed: argv[0] is its name. */
static int run(int (*fn)(int, char **), char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return fn(argc, argv);
}

static int apply_up(struct ap_conf *c, bool exists)
{
	char *argv[2 * AP_MAX_ITEMS + 24];
	int n, i, err = 0;
	bool created = false;

	if (!exists) {
		n = 0;
		argv[n++] = "create";
		argv[n++] = c->name;
#define OPT(field, opt)                                                                            \
	if (c->field[0]) {                                                                         \
		argv[n++] = opt;                                                                   \
		argv[n++] = c->field;                                                              \
	}
		OPT(capacity, "--capacity")
		OPT(fp_rate, "--fp-rate")
		OPT(bits, "--bits")
		OPT(hashes, "--hashes")
		OPT(layout, "--layout")
		OPT(hash, "--hash")
		OPT(action, "--action")
#undef OPT
		if (c->counting[0] && strcmp(c->counting, "no")) {
			argv[n++] = "--counter-bits";
			argv[n++] = c->counting;
		}
		if (!strcmp(c->confirm, "exact")) {
			argv[n++] = "--confirm";
			argv[n++] = "exact";
		}
		argv[n] = NULL;
		if (run(cmd_create, argv))
			return 1;
		created = true;
	}
	if (c->nload) {
		/* One load of every list: a bad line anywhere and nothing
		 * changes; a good set replaces the content in one step. */
		n = 0;
		argv[n++] = "load";
		argv[n++] = c->name;
		for (i = 0; i < c->nload; i++)
			argv[n++] = c->load[i];
		argv[n++] = "--replace";
		argv[n] = NULL;
		err = run(cmd_load, argv);
	}
	for (i = 0; !err && i < c->ndev; i++) {
		struct ap_dev *d = &c->dev[i];

		if (d->attached) {
			if (fb_json) {
				jw_obj_open(NULL);
				jw_str("already_attached", d->name);
				jw_str("mode", d->mode);
				jw_obj_close();
				jw_end();
			} else {
				printf("%s already attached to %s (%s)\n", c->name, d->name,
				       d->mode);
			}
			continue;
		}
		n = 0;
		argv[n++] = "attach";
		argv[n++] = c->name;
		argv[n++] = d->name;
		argv[n++] = "--mode";
		argv[n++] = (char *)d->mode;
		if (c->malformed[0]) {
			argv[n++] = "--malformed";
			argv[n++] = c->malformed;
		}
		argv[n] = NULL;
		err = run(cmd_attach, argv);
		d->ours = !err;
	}
	if (!err)
		return 0;
	/* Undo this run's steps, newest first. */
	for (i = c->ndev - 1; i >= 0; i--)
		if (c->dev[i].ours) {
			argv[0] = "detach";
			argv[1] = c->dev[i].name;
			argv[2] = NULL;
			run(cmd_detach, argv);
		}
	if (created) {
		argv[0] = "destroy";
		argv[1] = c->name;
		argv[2] = NULL;
		run(cmd_destroy, argv);
	}
	return 1;
}

/* Detach the file's devices where this filter runs; the filter stays. */
static int apply_down(struct ap_conf *c)
{
	struct att_ctx a = { .c = c };
	struct fb_store f;
	char *argv[3];
	int i, err = 0;

	err = filter_exists(c->name);
	if (err <= 0)
		return -err; /* absent: nothing runs it; -1: cannot tell */
	err = 0;
	if (fb_store_open(c->name, &f))
		return 1;
	if (fb_discover_attachments(&f, mark_attached, &a) < 0)
		err = 1;
	fb_store_close(&f);
	for (i = 0; !err && i < c->ndev; i++) {
		if (!c->dev[i].attached)
			continue;
		argv[0] = "detach";
		argv[1] = c->dev[i].name;
		argv[2] = NULL;
		err = run(cmd_detach, argv);
	}
	return err ? 1 : 0;
}

int cmd_apply(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "down", no_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	bool check = false, down = false;
	struct ap_conf *c;
	int opt, err, exists;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'c')
			check = true;
		else if (opt == 'd')
			down = true;
		else
			return fb_usage("unknown option '%s'", argv[optind - 1]);
	}
	if (check && down)
		return fb_usage("--check or --down, not both");
	if (argc - optind != 1)
		return fb_usage(argc - optind < 1 ? "missing FILE" : "too many arguments");
	c = malloc(sizeof(*c));
	if (!c) {
		fb_err("out of memory");
		return 1;
	}
	if (fb_apply_conf_read(argv[optind], c)) {
		free(c);
		return 1;
	}
	if (fb_pin_check_bpffs()) {
		err = 1;
	} else if (down) {
		err = apply_down(c);
	} else if ((exists = filter_exists(c->name)) < 0) {
		err = 1;
	} else {
		/* What apply checks before it changes anything, --check too:
		 * the geometry fits (exists: it is the file's), the lists parse
		 * (--check: apply's load would refuse them after creating), the
		 * devices are free or run this filter. */
		err = (!exists && fb_apply_conf_size(c)) || (check && fb_apply_conf_lists(c)) ||
		      check_devices(c, exists);
		if (!err && check) {
			if (fb_json) {
				jw_obj_open(NULL);
				jw_str("checked", c->file);
				jw_str("filter", c->name);
				jw_bool("exists", exists);
				jw_obj_close();
				jw_end();
			} else {
				printf("%s: ok (filter %s %s)\n", c->file, c->name,
				       exists ? "exists" : "to be created");
			}
		} else if (!err) {
			err = apply_up(c, exists);
		}
	}
	fb_apply_conf_free(c);
	free(c);
	return err;
}
