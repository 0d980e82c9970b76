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
 *   allow-empty = no|yes               lists of no rules may empty the
 *                                      filter (else refused)
 *
 * Idempotent: the filter is created if absent (if present, its settings
 * must be the file's), its content replaced by the lists in one step when
 * there are any and it does not hold exactly what they give already (the
 * new content is built aside and compared), and each device attached
 * unless this filter already runs there (with another action or
 * malformed policy than the file's, its program swapped for one that
 * follows the file). Everything is checked first (errors name FILE:LINE);
 * a step that still fails undoes the earlier steps of this run where they
 * are still its own (apply_up, fb_apply_undo()). Applies and --down of one
 * filter run one after the other (apply_lock()).
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
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "applydev.h"
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
 * Create the filter, or, if a create (or import) by hand made it since
 * this one looked, go on with that one as if it had been there: the same
 * checks (its settings are the file's; the devices are free or run it),
 * as one after the other would. Another apply cannot: it holds the lock.
 * While the other is still building it ("in progress"), wait for it, up
 * to 5 s.
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
			return fb_apply_check_devices(c, true);
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
		printf("%s: ok (filter %s %s)\n", fb_shown(c->file), c->name,
		       !exists	 ? "to be created"
		       : changed ? "exists, apply would change it"
				 : "exists, apply would change nothing");
	} else {
		printf("%s: filter %s %s\n", fb_shown(c->file), c->name,
		       changed ? "changed" : "unchanged");
	}
}

/* The free devices attached (d->ours): how many, or -1 (said). */
static int attach_free(struct ap_conf *c, bool warn)
{
	int i, r, n = 0;

	for (i = 0; i < c->ndev; i++) {
		r = c->dev[i].attached ? 0 : fb_apply_attach(c, &c->dev[i], warn);
		if (r < 0)
			return -1;
		c->dev[i].ours = r > 0;
		n += r;
	}
	return n;
}

/* The attachments with other settings than the file's swapped: 0, or -1
 * (said). */
static int swap_all(struct ap_conf *c)
{
	int i;

	for (i = 0; i < c->ndev; i++)
		if (c->dev[i].attached && c->dev[i].swap && fb_apply_swap(c, &c->dev[i]))
			return -1;
	return 0;
}

/* One load of every list: a good set replaces the content in one step,
 * unless it is it already (built aside and compared). n: devices this
 * run attached before (attach's warning of an empty allow-list, now). */
static int load_lists(struct ap_conf *c, struct fb_list *l, bool check, int n, bool *changed)
{
	/* Lists of no rules were refused when read, unless the file
	 * allows them (fb_apply_conf_lists()). */
	struct fb_load_req req = {
		.replace = true, .keep_same = true, .dry = check, .allow_empty = true
	};
	struct fb_load_result res;
	int err = fb_load_list(c->name, l, &req, &res);

	if (!err && !check)
		fb_print_loaded(&res);
	*changed |= !err && !res.unchanged;
	if (!err && n > 0)
		warn_ours(c);
	return err;
}

/* --check of a filter to create with lists: what apply's load makes of
 * them in the new filter, made for real in one built aside and removed
 * (create's staging directory, which no filter name can take, locked
 * until removed; ip link's maps checked, never adopted: o->scratch). A
 * list the new filter refuses (a shape too many, more than the largest
 * filter) is refused with apply's line; nothing created. 0, or -1
 * (said). */
static int trial_load(const struct ap_conf *c, const struct fb_create_opts *o, struct fb_list *l)
{
	struct fb_load_req req = { .replace = true, .keep_same = true, .allow_empty = true };
	struct fb_create_opts so = *o;
	struct fb_load_result res;
	struct fb_store f;
	int err;

	so.scratch = true;
	if (fb_store_create_staged(c->name, &so, &f))
		return -1;
	err = fb_load_into(&f, l, &req, &res);
	fb_store_abort(&f);
	return err ? -1 : 0;
}

/* o: the filter to create when it does not exist; l: the lists, read.
 * check: nothing done, what apply would change said (the filter exists,
 * the devices were checked). What can be undone first: a filter created
 * gets its content, then its devices (an allow filter never runs empty);
 * an existing one its free devices and its swaps, then its content, the
 * last step: a device refused (no native XDP: no check can tell) or a
 * swap refused leaves the content as it was, and a load refused has the
 * devices put back as they were (fb_apply_undo()). */
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
		err = (n = attach_free(c, !c->nload)) < 0 || swap_all(c);
	if (!err && c->nload && (exists || !check))
		err = load_lists(c, l, check, n, &changed);
	if (!err && !exists && check && c->nload)
		err = trial_load(c, o, l);
	if (!err && !exists && !check)
		err = attach_free(c, true) < 0 || swap_all(c);
	for (i = 0; !err && !check && i < c->ndev; i++)
		if (c->dev[i].attached && !c->dev[i].swap)
			fb_apply_print_already(c, &c->dev[i], c->dev[i].prog_id);
	if (!err) {
		print_changed(c, check, exists, changed);
		return 0;
	}
	fb_apply_undo(c);
	if (created && !fb_store_destroy(c->name))
		fb_print_destroyed(c->name);
	return 1;
}

/* Where apply's locks are: not in bpffs (the filter root is flock()ed by
 * create while it stages; the filter's directory by every writer, and does
 * not exist before the filter). */
#define APPLY_LOCK_DIR "/run/flowbloom"

/* APPLY_LOCK_DIR, opened, if root's (or this user's) and written by no
 * one else: its descriptor; -1 (said) if not; -2 (errno set) if it cannot
 * be opened. --check asks too: where apply would refuse to lock, it says
 * so (a directory not there yet, apply makes). */
static int lock_dir(void)
{
	struct stat st;
	int dfd = open(APPLY_LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dfd < 0)
		return -2;
	if (fstat(dfd, &st) || (st.st_uid && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		fb_err("%s belongs to uid %u or others can write to it: refusing to lock in it",
		       APPLY_LOCK_DIR, st.st_uid);
		close(dfd);
		return -1;
	}
	return dfd;
}

/*
 * Applies (and --down) of one filter name run one after the other: the
 * lock's descriptor, or -1 (said). Two at once, a reload while a start
 * runs or two copies of the file, each checked what runs where and then
 * changed it: one failing after its attach undid it, while the other,
 * which had found the device attached meanwhile, said it runs the filter.
 * A second waits for the first (said on stderr), then checks afresh. The
 * directory is root's and written by no one else, the lock file 0600
 * and never reached through a link.
 */
static int apply_lock(const char *name)
{
	char file[FB_NAME_MAX + 40];
	int dfd, fd = -1;

	/* One lock per filter of one pin root: filters of the same name
	 * under another FLOWBLOOM_ROOT are other filters (the default's,
	 * spelled "/sys/fs/bpf//flowbloom/", is apply-NAME.lock). */
	fb_run_file("apply", name, "lock", file, sizeof(file));
	if (mkdir(APPLY_LOCK_DIR, 0700) && errno != EEXIST)
		goto fail;
	dfd = lock_dir();
	if (dfd == -1)
		return -1;
	if (dfd < 0)
		goto fail;
	fd = openat(dfd, file, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0)
		goto fail;
	if (!flock(fd, LOCK_EX | LOCK_NB))
		return fd;
	if (errno == EWOULDBLOCK) {
		fprintf(stderr, "flowbloom: waiting for another apply of filter '%s'\n", name);
		if (!flock(fd, LOCK_EX))
			return fd;
	}
fail:
	fb_err("cannot lock %s/%s: %s%s", APPLY_LOCK_DIR, file, strerror(errno),
	       errno == EACCES || errno == EPERM ? " (apply needs root: CAP_BPF, CAP_NET_ADMIN)"
						 : "");
	if (fd >= 0)
		close(fd);
	return -1;
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

/* d's program, the one found running this filter: detached only while
 * it runs there (one put there since, another filter's, stays). */
static int detach(const struct ap_dev *d)
{
	if (fb_xdp_put_back(d->name, d->run_mode, d->prog_id, -1))
		return -1;
	fb_print_detached(d->name);
	return 0;
}

/* Detach the file's devices where this filter runs; the filter stays. */
static int apply_down(struct ap_conf *c)
{
	struct fb_store f;
	int i, err = 0;
	bool quiet;

	err = filter_exists(c->name);
	if (err <= 0)
		return -err; /* absent: nothing runs it; -1: cannot tell */
	/* The lock (held until the process ends): an apply that runs now
	 * would attach again after, and one that fails would detach. */
	if (apply_lock(c->name) < 0)
		return 1;
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
	if (fb_apply_find_attached(c, &f))
		err = 1;
	fb_store_close(&f);
	for (i = 0; !err && i < c->ndev; i++)
		if (c->dev[i].attached && detach(&c->dev[i]))
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
	int opt, err, exists, dfd = -2;

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
	} else if (!check && (apply_lock(c->name) < 0 || (exists = filter_exists(c->name)) < 0)) {
		/* Held until the process ends; whether the filter exists
		 * read again under it. --check changes nothing: no lock,
		 * but where apply would refuse to lock, it says so. */
		err = 1;
	} else if (check && (dfd = lock_dir()) == -1) {
		err = 1;
	} else {
		/* What apply checks before it changes anything, --check too:
		 * the geometry fits (exists: it is the file's), the devices are
		 * free or run this filter, the lists parse (read once, here: a
		 * bad line and nothing changes). */
		struct fb_create_opts o;
		struct fb_list l = { 0 };

		err = (!exists && fb_apply_conf_opts(c, &o)) || fb_apply_check_devices(c, exists) ||
		      fb_apply_conf_lists(c, &l);
		if (!err)
			err = apply_up(c, exists, &o, &l, check);
		fb_list_free(&l);
	}
	if (dfd >= 0)
		close(dfd);
	fb_apply_conf_free(c);
	free(c);
	return err;
}
