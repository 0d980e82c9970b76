// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading `apply`'s NAME.conf (see applyconf.h, and cmd_apply.c for the
 * format): every setting checked, errors as FILE:LINE: why. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "applyconf.h"
#include "rules/capacity.h"
#include "rules/flow.h"
#include "rules/lists.h"
#include "cmd.h"
#include "optfile.h"
#include "output.h"
#include "report.h"
#include "store/pintree.h"
#include "types/ftype.h"
#include "util.h"

/* Settings that take one value, indexed by enum ap_key: name, and the
 * values allowed (NULL: a number) with what each means (NULL: the
 * position + 1, an enum-name table + 1). */
static const struct {
	const char *key;
	const char *const *values;
	const int *value_of;
} keys[AP_NKEYS] = {
	[AP_CAPACITY] = { "capacity", NULL, NULL },
	[AP_FP_RATE] = { "fp-rate", NULL, NULL },
	[AP_BITS] = { "bits", NULL, NULL },
	[AP_HASHES] = { "hashes", NULL, NULL },
	[AP_LAYOUT] = { "layout", fb_layout_names + 1, NULL },
	[AP_HASH] = { "hash", fb_hash_choices, fb_hash_choice_values },
	[AP_ACTION] = { "action", fb_action_names + 1, NULL },
	[AP_COUNTING] = { "counting", (const char *const[]){ "no", "4", "8", NULL },
			  (const int[]){ 0, 4, 8 } },
	[AP_CONFIRM] = { "confirm", (const char *const[]){ "no", "exact", NULL },
			 (const int[]){ 0, 1 } },
	[AP_COMPACT] = { "compact", (const char *const[]){ "no", "yes", NULL },
			 (const int[]){ 0, 1 } },
	[AP_MALFORMED] = { "malformed", fb_malformed_names + 1, NULL },
	[AP_ALLOW_EMPTY] = { "allow-empty", (const char *const[]){ "no", "yes", NULL },
			     (const int[]){ 0, 1 } },
};

/* Lines are at most this long. */
#define AP_LINE_MAX 4096

/* Values are at most this long (fp-rate is kept as written). */
#define AP_VALUE_MAX 32

/* Numbers are checked here as create checks them, so that create cannot
 * refuse what apply accepted; read once, into c->create. */
const char *fb_apply_conf_key(enum ap_key k)
{
	return k < AP_NKEYS ? keys[k].key : "?";
}

static int set_number(struct ap_conf *c, int line, enum ap_key key, const char *v)
{
	struct fb_create_req *r = &c->create;
	unsigned long long n;

	if (key == AP_FP_RATE) {
		double p;

		if (fb_parse_real(v, &p) || !fb_fp_rate_ok(p)) {
			fb_err("%s:%d: fp-rate must be a number " FB_FP_RATE_RANGE ", not '%s'",
			       c->file, line, fb_quote(v));
			return -1;
		}
		r->fp_rate = p;
		r->have_fp_rate = true;
		return 0;
	}
	if (fb_parse_u64(v, &n) || n == 0) {
		fb_err("%s:%d: %s must be a whole number of at least 1, not '%s'", c->file, line,
		       keys[key].key, fb_quote(v));
		return -1;
	}
	if (key == AP_HASHES && n > FB_MAX_K) {
		fb_err("%s:%d: hashes must be 1..%d", c->file, line, FB_MAX_K);
		return -1;
	}
	if (key == AP_BITS && n > (unsigned long long)FB_MAX_BLOCKS * FB_BLOCK_BITS) {
		fb_err("%s:%d: bits must be 1..%llu", c->file, line,
		       (unsigned long long)FB_MAX_BLOCKS * FB_BLOCK_BITS);
		return -1;
	}
	if (key == AP_CAPACITY) {
		r->capacity = n;
		r->have_capacity = true;
	} else if (key == AP_BITS) {
		r->bits = n;
		r->have_bits = true;
	} else {
		r->hashes = n;
		r->have_hashes = true;
	}
	return 0;
}

/* A value from the key's list, stored where it goes. */
static int set_choice(struct ap_conf *c, int line, enum ap_key key, const char *v)
{
	const char *const *values = keys[key].values;
	char list[128] = "";
	size_t j;
	int x;

	for (j = 0; values[j] && strcmp(v, values[j]); j++)
		;
	if (!values[j]) {
		for (j = 0; values[j]; j++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 j ? "|" : "", values[j]);
		fb_err("%s:%d: bad value '%s' for %s (want %s)", c->file, line, fb_quote(v),
		       keys[key].key, list);
		return -1;
	}
	x = keys[key].value_of ? keys[key].value_of[j] : (int)j + 1;
	switch (key) {
	case AP_LAYOUT:
		c->create.layout = x;
		break;
	case AP_HASH:
		c->create.hash = x;
		break;
	case AP_ACTION:
		c->create.action = x;
		break;
	case AP_COUNTING:
		c->create.counter_bits = x;
		break;
	case AP_CONFIRM:
		c->create.confirm = x;
		break;
	case AP_COMPACT:
		c->create.compact = x;
		break;
	case AP_ALLOW_EMPTY:
		c->allow_empty = x;
		break;
	default:
		c->malformed = x;
	}
	return 0;
}

static int set_key(struct ap_conf *c, int line, const char *key, const char *v)
{
	int i;

	for (i = 0; i < AP_NKEYS && strcmp(key, keys[i].key); i++)
		;
	if (i == AP_NKEYS) {
		fb_err("%s:%d: unknown key '%s' (want capacity, fp-rate, bits, hashes, layout, "
		       "hash, action, counting, confirm, compact, load, attach, malformed, "
		       "allow-empty)",
		       c->file, line, fb_quote(key));
		return -1;
	}
	if (c->line_of[i]) {
		fb_err("%s:%d: '%s' set twice (first at line %d)", c->file, line, key,
		       c->line_of[i]);
		return -1;
	}
	if (keys[i].values ? set_choice(c, line, i, v) : set_number(c, line, i, v))
		return -1;
	if (strlen(v) >= AP_VALUE_MAX) {
		fb_err("%s:%d: value of %s too long", c->file, line, key);
		return -1;
	}
	if (i == AP_FP_RATE)
		strcpy(c->fp_rate_text, v);
	c->line_of[i] = line;
	return 0;
}

static int add_load(struct ap_conf *c, int line, const char *v)
{
	char dir[PATH_MAX], path[PATH_MAX], *copy;
	struct stat st;

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
	/* --down reads no list: one gone since (removed, renamed by what
	 * fetches it) must not keep the unit's ExecStop from detaching. */
	if (!c->down && access(path, R_OK)) {
		fb_err("%s:%d: cannot read '%s': %s", c->file, line, path, strerror(errno));
		return -1;
	}
	if (!c->down && !stat(path, &st) && S_ISDIR(st.st_mode)) {
		fb_err("%s:%d: '%s' is a directory, not a list", c->file, line, path);
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
		fb_err("%s:%d: bad device name '%s'", c->file, line, fb_quote(dev));
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
	d->mode = mode && !strcmp(mode, "generic") ? FB_XDP_GENERIC : FB_XDP_NATIVE;
	d->line = line;
	d->old_fd = -1;
	return 0;
}

void fb_apply_conf_free(struct ap_conf *c)
{
	int i;

	for (i = 0; i < c->nload; i++)
		free(c->load[i]);
	for (i = 0; i < c->ndev; i++)
		if (c->dev[i].old_fd >= 0)
			close(c->dev[i].old_fd);
}

int fb_apply_conf_opts(const struct ap_conf *c, struct fb_create_opts *o)
{
	char why[256];

	switch (fb_create_opts_make(&c->create, o, why, sizeof(why))) {
	case 0:
		return 0;
	case FB_CREATE_TOO_BIG:
		if (c->create.have_capacity) {
			fb_err("%s:%d: capacity %llu at fp-rate %s (line %d) needs more than %u "
			       "MiB",
			       c->file, c->line_of[AP_CAPACITY], c->create.capacity,
			       c->fp_rate_text, c->line_of[AP_FP_RATE],
			       FB_MAX_BLOCKS / (1024 * 1024 / FB_BLOCK_BYTES));
			return -1;
		}
		/* fall through */
	default:
		/* Not reached for what fb_apply_conf_read() accepted. */
		fb_err("%s: %s", c->file, why);
		return -1;
	}
}

/* The most different rules the file's filter can be loaded with, as
 * `load --replace` bounds its input (rules/capacity.h): sized by rate,
 * what the largest filter of its type holds at that rate; by bits, one
 * rule per bit. Lists without end are refused where they pass it. */
static void bound_lists(const struct ap_conf *c, struct fb_list *l)
{
	const struct fb_create_req *r = &c->create;
	int type = r->grow ? FB_TYPE_SCALABLE : r->type < 0 ? FB_TYPE_BLOOM : r->type;
	struct fb_create_opts o;
	char why[160];

	if (r->have_fp_rate) {
		snprintf(why, sizeof(why), "the most the largest %s filter holds at %s's rate %s",
			 fb_ftype_name(type), c->file, c->fp_rate_text);
		fb_list_bound(l, fb_capacity_largest(type, r->layout, r->fp_rate), why);
	} else if (r->have_bits && !fb_create_opts_make(r, &o, why, sizeof(why))) {
		/* The bits the filter gets: whole chunks. */
		fb_list_bound(
			l, (size_t)o.nblocks * FB_BLOCK_BITS,
			"one per bit of the filter: past that it matches nearly every packet");
	}
}

int fb_apply_conf_lists(const struct ap_conf *c, struct fb_list *l)
{
	int i;

	bound_lists(c, l);
	for (i = 0; i < c->nload; i++) {
		if (fb_list_read(c->load[i], l))
			return -1;
		fb_hostbits_file(l->files[l->nfiles - 1].label, &l->files[l->nfiles - 1].hostbits);
	}
	fb_list_unique(l);
	/* Lists of no rules (a download that failed into an empty file)
	 * would empty the filter, or create and attach it empty: an
	 * allow-list then drops every packet. Refused here, before any
	 * step, unless the file says so. No load line: no content step. */
	if (c->nload && !l->n && !c->allow_empty) {
		if (c->nload == 1)
			fb_err("%s:%d: %s holds no rules: nothing changed (allow-empty = yes "
			       "empties the filter)",
			       c->file, c->load_line[0], c->load[0]);
		else
			fb_err("%s:%d: the %d lists hold no rules: nothing changed (allow-empty = "
			       "yes empties the filter)",
			       c->file, c->load_line[0], c->nload);
		return -1;
	}
	return 0;
}

int fb_apply_conf_read(const char *file, bool down, struct ap_conf *c)
{
	char base[PATH_MAX], *b, *dot, *buf;
	struct fb_lines r;
	size_t len;
	int fd, rc, err = 0;

	memset(c, 0, sizeof(*c));
	c->file = file;
	c->down = down;
	snprintf(base, sizeof(base), "%s", file);
	b = basename(base);
	dot = strrchr(b, '.');
	if (!dot || strcmp(dot, ".conf")) {
		fb_err("%s: the file must be named NAME.conf (NAME: the filter)", file);
		return -2;
	}
	*dot = 0;
	/* The file's name names the filter: an error names the file. */
	fb_report_quiet = true;
	rc = fb_pin_check_name(b);
	fb_report_quiet = false;
	if (rc || strlen(b) >= sizeof(c->name)) {
		fb_err("%s: the file must be named NAME.conf, NAME the filter: %s", file,
		       rc ? fb_report_last : "name too long");
		return -2;
	}
	strcpy(c->name, b);
	c->create.name = c->name;
	c->create.type = -1; /* a Bloom filter */
	/* It says what runs on which device: root's own file only, never
	 * through another user's link, never a FIFO (optfile.h). Read with
	 * the line reader `load` uses: lines of bounded length, a NUL or a
	 * read error named FILE:LINE. (getline took running out of memory in
	 * a huge line for the end of the file, and applied what came before.) */
	fd = fb_conf_file_open(file, "what is filtered where");
	if (fd < 0 || fb_lines_fdopen(&r, fd, file))
		return -1;
	r.max = AP_LINE_MAX; /* a longer line, however long, is named so */
	while (!err && (rc = fb_lines_next(&r, &buf, &len)) > 0) {
		int line = (int)r.lineno;
		char *s, *eq, *key, *val;

		s = fb_conf_text(buf, line);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			fb_err("%s:%d: want 'key = value'", file, line);
			err = -1;
			break;
		}
		*eq = 0;
		key = fb_trim(s);
		val = fb_trim(eq + 1);
		if (!*val) {
			fb_err("%s:%d: '%s' has no value", file, line, fb_quote(key));
			err = -1;
		} else if (!strcmp(key, "load")) {
			err = add_load(c, line, val);
		} else if (!strcmp(key, "attach")) {
			err = add_dev(c, line, val);
		} else {
			err = set_key(c, line, key, val);
		}
	}
	if (!err && rc < 0)
		err = -1; /* said by fb_lines_next() */
	fb_lines_close(&r);
	if (!err) {
		const int *at = c->line_of;
		bool by_cap = at[AP_CAPACITY] || at[AP_FP_RATE],
		     by_bits = at[AP_BITS] || at[AP_HASHES];

		if ((by_cap && by_bits) || (by_cap && !(at[AP_CAPACITY] && at[AP_FP_RATE])) ||
		    (by_bits && !(at[AP_BITS] && at[AP_HASHES])) || (!by_cap && !by_bits)) {
			fb_err("%s: give capacity and fp-rate, or bits and hashes", file);
			err = -1;
		} else if (c->create.confirm && !strcmp(c->name, FB_IPROUTE_FILTER)) {
			fb_err("%s: confirm = exact is not available for '%s', the filter `ip "
			       "link` "
			       "uses",
			       file, FB_IPROUTE_FILTER);
			err = -1;
		}
	}
	if (err)
		fb_apply_conf_free(c);
	return err;
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
int fb_apply_conf_same(const struct ap_conf *c, const struct fb_store *f)
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
