// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom apply FILE`: make a filter and its attachments what a
 * configuration file says (what flowbloom@NAME.service runs at boot, when
 * bpffs is empty). FILE is NAME.conf, lines `key = value`:
 *
 *   capacity, fp-rate | bits, hashes   geometry (at creation)
 *   layout, hash, action               as create's options
 *   counting = no|4|8, confirm = no|exact, compact = no|yes
 *   load = PATH                        a list `load` reads (repeatable;
 *                                      relative to FILE's directory)
 *   attach = DEV [native|generic]      a device (repeatable)
 *   malformed = pass|drop              for every attachment
 *
 * Idempotent: the filter is created if absent (if present, its settings
 * must be the file's), its content replaced by the lists in one step when
 * there are any and it does not hold exactly what they give already (the
 * new content is built aside and compared), and each device attached
 * unless this filter already runs there (with another action or
 * malformed policy than the file's, its program swapped for one that
 * follows the file). Everything is checked first (errors name FILE:LINE);
 * a step that still fails undoes the earlier steps of this run (apply_up).
 * The last line says whether the run changed anything (--check: would).
 * --down detaches the file's devices, --check only checks. The steps are
 * the library calls of the verbs (create, load --replace, attach, detach,
 * destroy), printed as the verbs print them, so their output and errors
 * are theirs.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "applyconf.h"
#include "cmd.h"
#include "store/discover.h"
#include "output.h"
#include "rules/load.h"
#include "store/pintree.h"
#include "types/ftype.h"
#include "prog/xdpdev.h"
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

/* A filter to create: can this process make BPF maps? Where the filter
 * root does not exist yet (a fresh boot), nothing else tells an
 * unprivileged --check that apply would fail at its first step. */
static int may_create(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != EPERM && errno != EACCES)
		return 0; /* the steps say what else goes wrong */
	fb_err("cannot create BPF maps: %s (apply needs root: CAP_BPF, CAP_NET_ADMIN)",
	       strerror(errno));
	return -1;
}

/* want and have differ: the first difference found is what is said, at
 * the line of its key (*key). */
static void differ(const char **what, int *key, char *want, char *have, size_t len, enum ap_key k,
		   const char *w, const char *g)
{
	if (*what || !strcmp(w, g))
		return;
	*what = fb_apply_conf_key(k);
	*key = k;
	snprintf(want, len, "%s", w);
	snprintf(have, len, "%s", g);
}

static const char *counting_name(unsigned bits)
{
	return bits == 4 ? "4" : bits == 8 ? "8" : "no";
}

/* An existing filter must be the one the file describes: apply never
 * re-creates a filter (its content and attachments would go). */
static int same_settings(const struct ap_conf *c, const struct fb_store *f)
{
	const struct fb_create_req *r = &c->create;
	const struct fb_header *h = f->hdr;
	int action = r->action ? r->action : FB_ACTION_DROP;
	struct fb_create_opts o;
	char want[64], have[64], where[16] = "";
	const char *what = NULL;
	int key = AP_NKEYS;

	/* The file describes Bloom filters only: a cuckoo, d-left or
	 * scalable filter of the name is another thing altogether. */
	if (h->type) {
		fb_err("%s: filter '%s' exists as a %s filter, the file describes a Bloom filter: "
		       "destroy it first to re-create it",
		       c->file, c->name, fb_ftype_name(h->type));
		return -1;
	}
	/* Compact first: it changes the geometry the file's size makes. */
	differ(&what, &key, want, have, sizeof(want), AP_COMPACT, r->compact ? "yes" : "no",
	       h->flags & FB_HDRF_COMPACT ? "yes" : "no");
	if (!what && r->have_capacity) {
		__u32 ppb = (__u32)(r->fp_rate * 1e9 + 0.5);

		if (h->capacity != r->capacity || h->fp_ppb != ppb) {
			what = "capacity/fp-rate";
			key = AP_CAPACITY;
			snprintf(want, sizeof(want), "%llu/%s", r->capacity, c->fp_rate_text);
			snprintf(have, sizeof(have), "%llu/%g", (unsigned long long)h->capacity,
				 h->fp_ppb / 1e9);
		}
	} else if (!what && (h->capacity || fb_create_opts_make(r, &o, want, sizeof(want)) ||
			     h->k != o.k || h->nblocks != o.nblocks)) {
		/* What create makes of the file's bits (whole chunks, or
		 * pages), not the bits as written. */
		what = "bits/hashes";
		key = AP_BITS;
		snprintf(want, sizeof(want), "%llu/%llu", r->bits, r->hashes);
		snprintf(have, sizeof(have), "%llu/%u",
			 (unsigned long long)h->nblocks * FB_BLOCK_BITS, h->k);
	}
	differ(&what, &key, want, have, sizeof(want), AP_LAYOUT,
	       FB_NAME(fb_layout_names, r->layout ? r->layout : FB_LAYOUT_BLOCKED),
	       FB_NAME(fb_layout_names, h->layout));
	/* The action first: the default hash follows it. */
	differ(&what, &key, want, have, sizeof(want), AP_ACTION, FB_NAME(fb_action_names, action),
	       FB_NAME(fb_action_names, h->action));
	differ(&what, &key, want, have, sizeof(want), AP_HASH,
	       FB_NAME(fb_hash_names, r->hash ? r->hash : fb_hash_default(action)),
	       FB_NAME(fb_hash_names, h->hash));
	differ(&what, &key, want, have, sizeof(want), AP_COUNTING, counting_name(r->counter_bits),
	       counting_name(h->counter_bits));
	differ(&what, &key, want, have, sizeof(want), AP_CONFIRM, r->confirm ? "exact" : "no",
	       h->confirm ? "exact" : "no");
	if (!what)
		return 0;
	/* The line that says otherwise; none when the file leaves it at its
	 * default. */
	if (c->line_of[key])
		snprintf(where, sizeof(where), ":%d", c->line_of[key]);
	fb_err("%s%s: filter '%s' exists with %s %s, the file says %s%s: destroy it first to "
	       "re-create it",
	       c->file, where, c->name, what, have, want, c->line_of[key] ? "" : " (the default)");
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

	for (i = 0; i < a->c->ndev; i++) {
		if (strcmp(a->c->dev[i].name, ifname))
			continue;
		a->c->dev[i].attached = true;
		a->c->dev[i].prog_id = prog_id;
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
static int check_devices(struct ap_conf *c, bool exists)
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
		if (same_settings(c, &f) || fb_discover_attachments(&f, mark_attached, &a) < 0 ||
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
static void print_already(const struct ap_conf *c, const struct ap_dev *d, __u32 prog_id)
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
		printf("%s already attached to %s (%s%s)\n", c->name, d->name,
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
 * policy (no monitoring). 1 attached; 0 attached already by another apply
 * of the file since this one looked (two at once: a reload during a
 * start), which is as good; -1 refused: the device (no native XDP,
 * another program there meanwhile), said with the FILE:LINE of its attach
 * line. */
static int attach(const struct ap_conf *c, const struct ap_dev *d, bool warn)
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
	err = fb_xdp_attach(&f, d->name, d->mode, &lo, &mb);
	fb_report_quiet = quiet;
	if (err && fb_discover_attachments(&f, find_attached, &m) >= 0 && m.found) {
		fb_store_close(&f);
		print_already(c, d, m.prog_id);
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
 * it, in one step. */
static int swap(const struct ap_conf *c, const struct ap_dev *d)
{
	struct fb_load_opts lo = { .malformed = c->malformed };
	struct fb_store f;
	bool quiet = fb_report_quiet, mb;
	int err;

	if (fb_store_open(c->name, &f))
		return -1;
	fb_report_quiet = true;
	err = fb_xdp_replace(&f, d->name, d->mode, d->prog_id, &lo, &mb);
	fb_report_quiet = quiet;
	fb_store_close(&f);
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
		       c->name, d->name, fb_xdp_mode_name(d->mode), mb ? ", multi-buffer" : "");
	}
	return err;
}

static int detach(const char *dev)
{
	if (fb_xdp_detach(dev))
		return -1;
	fb_print_detached(dev);
	return 0;
}

/* Attached before the lists were loaded: attach's warning, now. */
static void warn_ours(const struct ap_conf *c)
{
	struct fb_store f;
	int i;

	if (fb_store_open(c->name, &f))
		return;
	for (i = 0; i < c->ndev; i++)
		if (c->dev[i].ours)
			fb_warn_empty_allow(&f, 0, c->dev[i].name);
	fb_store_close(&f);
}

/*
 * Create the filter, or, if another apply (or create) made it since this
 * one looked, go on with that one as if it had been there: the same checks
 * (its settings are the file's; the devices are free or run it). Two
 * applies of one file at once (a reload while a start runs) then both
 * succeed, as they would one after the other. While the other is still
 * building it ("in progress"), wait for it, up to 5 s.
 */
static int create_or_join(struct ap_conf *c, const struct fb_create_opts *o, bool *created)
{
	bool quiet = fb_report_quiet;
	int i, e;

	for (i = 0; i < 500; i++) {
		fb_report_quiet = true;
		e = fb_store_create(c->name, o);
		fb_report_quiet = quiet;
		if (!e) {
			*created = true;
			return 0;
		}
		if (e == FB_STORE_BUSY) {
			usleep(10000);
			continue;
		}
		e = filter_exists(c->name);
		if (e > 0)
			return check_devices(c, true);
		break;
	}
	fb_err("%s", fb_report_last);
	return -1;
}

/* The run's last line: did it change anything (what a configuration
 * manager reports)? check: would it (and does the filter exist). */
static void print_changed(const struct ap_conf *c, bool check, bool exists, bool changed)
{
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str(check ? "checked" : "applied", c->file);
		jw_str("filter", c->name);
		if (check)
			jw_bool("exists", exists);
		jw_bool("changed", changed);
		jw_obj_close();
		jw_end();
	} else if (check) {
		printf("%s: ok (filter %s %s)\n", c->file, c->name,
		       !exists	 ? "to be created"
		       : changed ? "exists, apply would change it"
				 : "exists, apply would change nothing");
	} else {
		printf("%s: filter %s %s\n", c->file, c->name, changed ? "changed" : "unchanged");
	}
}

/* The free devices attached (d->ours): how many, or -1 (said). */
static int attach_free(struct ap_conf *c, bool warn)
{
	int i, r, n = 0;

	for (i = 0; i < c->ndev; i++) {
		r = c->dev[i].attached ? 0 : attach(c, &c->dev[i], warn);
		if (r < 0)
			return -1;
		c->dev[i].ours = r > 0;
		n += r;
	}
	return n;
}

/* o: the filter to create when it does not exist; l: the lists, read.
 * check: nothing done, what apply would change said (the filter exists,
 * the devices were checked). What can be undone first: a filter created
 * gets its content, then its devices (an allow filter never runs empty);
 * an existing one its free devices, then its content, so a device refused
 * (no native XDP: no check can tell) leaves the content as it was. The
 * swaps last. */
static int apply_up(struct ap_conf *c, bool exists, const struct fb_create_opts *o,
		    struct fb_list *l, bool check)
{
	int i, err = 0, n = 0;
	bool created = false, changed = !exists;

	for (i = 0; i < c->ndev; i++)
		changed |= !c->dev[i].attached || c->dev[i].swap;
	if (!exists && !check) {
		if (create_or_join(c, o, &created))
			return 1;
		if (created)
			fb_print_created(c->name, o);
	}
	if (exists && !check)
		err = (n = attach_free(c, !c->nload)) < 0;
	if (!err && c->nload && (exists || !check)) {
		/* One load of every list: a good set replaces the content in one
		 * step, unless it is it already (built aside and compared). */
		struct fb_load_req req = { .replace = true, .keep_same = true, .dry = check };
		struct fb_load_result res;

		err = fb_load_list(c->name, l, &req, &res);
		if (!err && !check)
			fb_print_loaded(&res);
		changed |= !err && !res.unchanged;
		if (!err && n > 0)
			warn_ours(c);
	}
	if (!err && !exists && !check)
		err = attach_free(c, true) < 0;
	for (i = 0; !err && !check && i < c->ndev; i++) {
		struct ap_dev *d = &c->dev[i];

		if (d->attached && d->swap)
			err = swap(c, d);
		else if (d->attached)
			print_already(c, d, d->prog_id);
	}
	if (!err) {
		print_changed(c, check, exists, changed);
		return 0;
	}
	/* Undo this run's steps, newest first. */
	for (i = c->ndev - 1; i >= 0; i--)
		if (c->dev[i].ours)
			detach(c->dev[i].name);
	if (created && !fb_store_destroy(c->name))
		fb_print_destroyed(c->name);
	return 1;
}

/* Only the ids of a filter's pinned maps (what programs that use it hold):
 * 0, or -1 if it has none. */
static int pins_only(const char *name, struct fb_store *f)
{
	fb_store_init(f);
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->dir, sizeof(f->dir), "%s/%s", fb_pin_root(), name);
	f->root_fd = fb_pin_open_root(false);
	f->dir_fd = f->root_fd < 0 ? -1 : fb_pin_open_dir(f->root_fd, name);
	if (f->root_fd < 0)
		f->root_fd = -1;
	if (f->dir_fd >= 0 && !fb_pin_trusted(f->dir_fd, f->dir, false)) {
		f->outer_fd = fb_pin_get(f->dir_fd, "filter");
		f->stats_fd = fb_pin_get(f->dir_fd, "stats");
	}
	f->outer_id = f->outer_fd >= 0 ? fb_map_id(f->outer_fd) : 0;
	f->stats_id = f->stats_fd >= 0 ? fb_map_id(f->stats_fd) : 0;
	if (f->outer_id || f->stats_id)
		return 0;
	fb_store_close(f);
	return -1;
}

/* Detach the file's devices where this filter runs; the filter stays. */
static int apply_down(struct ap_conf *c)
{
	struct att_ctx a = { .c = c };
	struct fb_store f;
	int i, err = 0;
	bool quiet;

	err = filter_exists(c->name);
	if (err <= 0)
		return -err; /* absent: nothing runs it; -1: cannot tell */
	/* A filter this build cannot read (an older build's layout, or
	 * broken) still runs where a program holds its pinned maps: found
	 * by them, as destroy finds its users, and detached. */
	quiet = fb_report_quiet;
	fb_report_quiet = true;
	err = fb_store_open(c->name, &f) && pins_only(c->name, &f);
	fb_report_quiet = quiet;
	if (err) {
		fb_err("%s", fb_report_last);
		return 1;
	}
	if (fb_discover_attachments(&f, mark_attached, &a) < 0)
		err = 1;
	fb_store_close(&f);
	for (i = 0; !err && i < c->ndev; i++)
		if (c->dev[i].attached && detach(c->dev[i].name))
			err = 1;
	return err;
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
	while ((opt = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (opt == 'c')
			check = true;
		else if (opt == 'd')
			down = true;
		else
			return fb_bad_option(opt, argv);
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
	if ((err = fb_apply_conf_read(argv[optind], down, c))) {
		free(c);
		return err == -2 ? fb_usage_synopsis() : 1;
	}
	if (fb_pin_check_bpffs()) {
		err = 1;
	} else if (down) {
		err = apply_down(c);
	} else if ((exists = filter_exists(c->name)) < 0 || (!exists && may_create())) {
		err = 1;
	} else {
		/* What apply checks before it changes anything, --check too:
		 * the geometry fits (exists: it is the file's), the devices are
		 * free or run this filter, the lists parse (read once, here: a
		 * bad line and nothing changes). */
		struct fb_create_opts o;
		struct fb_list l = { 0 };

		err = (!exists && fb_apply_conf_opts(c, &o)) || check_devices(c, exists) ||
		      fb_apply_conf_lists(c, &l);
		if (!err)
			err = apply_up(c, exists, &o, &l, check);
		fb_list_free(&l);
	}
	fb_apply_conf_free(c);
	free(c);
	return err;
}
