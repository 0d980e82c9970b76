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
#include <libgen.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cmd.h"
#include "discover.h"
#include "output.h"
#include "pintree.h"
#include "store.h"
#include "util.h"

#define AP_MAX_ITEMS 64 /* load and attach lines each */

struct ap_dev {
	char name[IF_NAMESIZE];
	const char *mode; /* "native" or "generic" */
	int line;
	bool attached; /* this filter already runs there (before this run) */
	bool ours;     /* attached by this run (undone on failure) */
};

struct ap_conf {
	const char *file;
	char name[FB_NAME_MAX];
	/* create's options, as they would be typed, and where each was set */
	char capacity[32], fp_rate[32], bits[32], hashes[32];
	char layout[16], hash[16], action[16], counting[8], confirm[8], malformed[8];
	int line_of[16];
	char *load[AP_MAX_ITEMS];
	int load_line[AP_MAX_ITEMS];
	int nload;
	struct ap_dev dev[AP_MAX_ITEMS];
	int ndev;
};

/* Settings that take one value: name, where it goes, allowed values
 * (NULL: checked by parse_value). */
static const struct {
	const char *key;
	size_t off, len;
	const char *const *values;
} keys[] = {
#define K(k, field, vals)                                                                          \
	{                                                                                          \
		k, offsetof(struct ap_conf, field), sizeof(((struct ap_conf *)0)->field), vals     \
	}
	K("capacity", capacity, NULL),
	K("fp-rate", fp_rate, NULL),
	K("bits", bits, NULL),
	K("hashes", hashes, NULL),
	K("layout", layout, fb_layout_names + 1),
	K("hash", hash, fb_hash_names + 1),
	K("action", action, fb_action_names + 1),
	K("counting", counting, ((const char *const[]){ "no", "4", "8", NULL })),
	K("confirm", confirm, ((const char *const[]){ "no", "exact", NULL })),
	K("malformed", malformed, fb_malformed_names + 1),
#undef K
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* Numbers are checked here as create checks them, so that create cannot
 * refuse what apply accepted. */
static int check_number(const struct ap_conf *c, int line, const char *key, const char *v)
{
	char *end;

	errno = 0;
	if (!strcmp(key, "fp-rate")) {
		double p = strtod(v, &end);

		if (errno || *end || end == v || !(p > 0 && p < 1)) {
			fb_err("%s:%d: fp-rate must be a number in (0, 1), not '%s'", c->file, line,
			       v);
			return -1;
		}
		return 0;
	}
	if (v[0] == '-' || strtoull(v, &end, 10) == 0 || errno || *end || end == v) {
		fb_err("%s:%d: %s must be a whole number of at least 1, not '%s'", c->file, line,
		       key, v);
		return -1;
	}
	if (!strcmp(key, "hashes") && strtoull(v, NULL, 10) > FB_MAX_K) {
		fb_err("%s:%d: hashes must be 1..%d", c->file, line, FB_MAX_K);
		return -1;
	}
	if (!strcmp(key, "bits") &&
	    strtoull(v, NULL, 10) > (unsigned long long)FB_MAX_BLOCKS * FB_BLOCK_BITS) {
		fb_err("%s:%d: bits must be 1..%llu", c->file, line,
		       (unsigned long long)FB_MAX_BLOCKS * FB_BLOCK_BITS);
		return -1;
	}
	return 0;
}

static int set_key(struct ap_conf *c, int line, const char *key, const char *v)
{
	size_t i, j;
	char *dst;

	for (i = 0; i < NKEYS; i++) {
		if (strcmp(key, keys[i].key))
			continue;
		dst = (char *)c + keys[i].off;
		if (c->line_of[i]) {
			fb_err("%s:%d: '%s' set twice (first at line %d)", c->file, line, key,
			       c->line_of[i]);
			return -1;
		}
		if (keys[i].values) {
			for (j = 0; keys[i].values[j]; j++)
				if (!strcmp(v, keys[i].values[j]))
					break;
			if (!keys[i].values[j]) {
				char list[128] = "";

				for (j = 0; keys[i].values[j]; j++)
					snprintf(list + strlen(list), sizeof(list) - strlen(list),
						 "%s%s", j ? "|" : "", keys[i].values[j]);
				fb_err("%s:%d: bad value '%s' for %s (want %s)", c->file, line, v,
				       key, list);
				return -1;
			}
		} else if (check_number(c, line, key, v)) {
			return -1;
		}
		if (strlen(v) >= keys[i].len) {
			fb_err("%s:%d: value of %s too long", c->file, line, key);
			return -1;
		}
		strcpy(dst, v);
		c->line_of[i] = line;
		return 0;
	}
	fb_err("%s:%d: unknown key '%s' (want capacity, fp-rate, bits, hashes, layout, hash, "
	       "action, counting, confirm, load, attach, malformed)",
	       c->file, line, key);
	return -1;
}

static int add_load(struct ap_conf *c, int line, const char *v)
{
	char dir[PATH_MAX], path[PATH_MAX], *copy;

	if (c->nload == AP_MAX_ITEMS) {
		fb_err("%s:%d: more than %d load lines", c->file, line, AP_MAX_ITEMS);
		return -1;
	}
	if (v[0] == '/') {
		snprintf(path, sizeof(path), "%s", v);
	} else {
		/* Relative to the configuration file, not to wherever the
		 * unit or the operator happens to run. */
		snprintf(dir, sizeof(dir), "%s", c->file);
		if (snprintf(path, sizeof(path), "%s/%s", dirname(dir), v) >= (int)sizeof(path)) {
			fb_err("%s:%d: path too long", c->file, line);
			return -1;
		}
	}
	if (access(path, R_OK)) {
		fb_err("%s:%d: cannot read '%s': %s", c->file, line, path, strerror(errno));
		return -1;
	}
	copy = strdup(path);
	if (!copy) {
		fb_err("out of memory");
		return -1;
	}
	c->load[c->nload] = copy;
	c->load_line[c->nload++] = line;
	return 0;
}

static int add_dev(struct ap_conf *c, int line, char *v)
{
	char *dev = strtok(v, " \t"), *mode = strtok(NULL, " \t"), *extra = strtok(NULL, " \t");
	struct ap_dev *d;
	int i;

	if (c->ndev == AP_MAX_ITEMS) {
		fb_err("%s:%d: more than %d attach lines", c->file, line, AP_MAX_ITEMS);
		return -1;
	}
	if (extra || (mode && strcmp(mode, "native") && strcmp(mode, "generic"))) {
		fb_err("%s:%d: want 'attach = DEV [native|generic]'", c->file, line);
		return -1;
	}
	if (strlen(dev) >= IF_NAMESIZE) {
		fb_err("%s:%d: bad device name '%s'", c->file, line, dev);
		return -1;
	}
	for (i = 0; i < c->ndev; i++)
		if (!strcmp(c->dev[i].name, dev)) {
			fb_err("%s:%d: %s listed twice (first at line %d)", c->file, line, dev,
			       c->dev[i].line);
			return -1;
		}
	d = &c->dev[c->ndev++];
	snprintf(d->name, sizeof(d->name), "%s", dev);
	d->mode = mode && !strcmp(mode, "generic") ? "generic" : "native";
	d->line = line;
	return 0;
}

static void conf_free(struct ap_conf *c)
{
	int i;

	for (i = 0; i < c->nload; i++)
		free(c->load[i]);
}

/* Parse FILE; every error is printed as FILE:LINE: why. */
static int conf_read(const char *file, struct ap_conf *c)
{
	char buf[4096], base[PATH_MAX], *b, *dot;
	int line = 0, err = 0;
	FILE *fp;

	memset(c, 0, sizeof(*c));
	c->file = file;
	snprintf(base, sizeof(base), "%s", file);
	b = basename(base);
	dot = strrchr(b, '.');
	if (!dot || strcmp(dot, ".conf")) {
		fb_err("%s: the file must be named NAME.conf (NAME: the filter)", file);
		return -1;
	}
	*dot = 0;
	if (strlen(b) >= sizeof(c->name) || fb_pin_check_name(b))
		return -1;
	strcpy(c->name, b);
	fp = fopen(file, "r");
	if (!fp) {
		fb_err("cannot open %s: %s", file, strerror(errno));
		return -1;
	}
	while (!err && fgets(buf, sizeof(buf), fp)) {
		char *s, *eq, *key, *val, *hash;

		line++;
		if (!strchr(buf, '\n') && !feof(fp)) {
			fb_err("%s:%d: line too long", file, line);
			err = -1;
			break;
		}
		hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		s = trim(buf);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			fb_err("%s:%d: want 'key = value'", file, line);
			err = -1;
			break;
		}
		*eq = 0;
		key = trim(s);
		val = trim(eq + 1);
		if (!*val) {
			fb_err("%s:%d: '%s' has no value", file, line, key);
			err = -1;
		} else if (!strcmp(key, "load")) {
			err = add_load(c, line, val);
		} else if (!strcmp(key, "attach")) {
			err = add_dev(c, line, val);
		} else {
			err = set_key(c, line, key, val);
		}
	}
	if (!err && ferror(fp)) {
		fb_err("cannot read %s: %s", file, strerror(errno));
		err = -1;
	}
	fclose(fp);
	if (!err) {
		bool by_cap = c->capacity[0] || c->fp_rate[0], by_bits = c->bits[0] || c->hashes[0];

		if ((by_cap && by_bits) || (by_cap && !(c->capacity[0] && c->fp_rate[0])) ||
		    (by_bits && !(c->bits[0] && c->hashes[0])) || (!by_cap && !by_bits)) {
			fb_err("%s: give capacity and fp-rate, or bits and hashes", file);
			err = -1;
		} else if (!strcmp(c->confirm, "exact") && !strcmp(c->name, FB_IPROUTE_FILTER)) {
			fb_err("%s: confirm = exact is not available for '%s', the filter `ip "
			       "link` "
			       "uses",
			       file, FB_IPROUTE_FILTER);
			err = -1;
		}
	}
	if (err)
		conf_free(c);
	return err;
}

static bool filter_exists(const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", fb_pin_root(), name);
	return !stat(path, &st) && S_ISDIR(st.st_mode);
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
	CMP(hash, fb_hash_names, "siphash13", hash)
	CMP(action, fb_action_names, "drop", action)
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
			fb_err("%s:%d: %s already has an XDP program (id %u) that is not '%s''s",
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

	if (!filter_exists(c->name))
		return 0;
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
	bool check = false, down = false, exists;
	struct ap_conf *c;
	int opt, err;

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
	if (conf_read(argv[optind], c)) {
		free(c);
		return 1;
	}
	if (fb_pin_check_bpffs()) {
		err = 1;
	} else if (down) {
		err = apply_down(c);
	} else {
		exists = filter_exists(c->name);
		err = check_devices(c, exists) ? 1 : 0;
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
	conf_free(c);
	free(c);
	return err;
}
