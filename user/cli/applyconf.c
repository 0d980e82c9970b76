// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading `apply`'s NAME.conf (see applyconf.h, and cmd_apply.c for the
 * format): every setting checked, errors as FILE:LINE: why. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "applyconf.h"
#include "rules/lists.h"
#include "cmd.h"
#include "output.h"
#include "types/sizing.h"
#include "store/pintree.h"
#include "util.h"

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
	K("hash", hash, fb_hash_choices),
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

void fb_apply_conf_free(struct ap_conf *c)
{
	int i;

	for (i = 0; i < c->nload; i++)
		free(c->load[i]);
}

/* Index of key k in keys[] (line_of[]). */
static size_t key_index(const char *k)
{
	size_t i;

	for (i = 0; i < NKEYS && strcmp(keys[i].key, k); i++)
		;
	return i;
}

int fb_apply_conf_size(const struct ap_conf *c)
{
	unsigned long long cap;
	__u32 nblocks;
	double p;
	__u8 k;
	int e;

	if (!c->capacity[0])
		return 0; /* bits and hashes: checked against the limits as read */
	cap = strtoull(c->capacity, NULL, 10);
	p = strtod(c->fp_rate, NULL);
	e = c->layout[0] && !strcmp(c->layout, "classic") ? fb_size_classic(cap, p, &nblocks, &k)
							  : fb_size_blocked(cap, p, &nblocks, &k);
	if (!e)
		return 0;
	fb_err("%s:%d: capacity %s at fp-rate %s (line %d) needs more than %u MiB", c->file,
	       c->line_of[key_index("capacity")], c->capacity, c->fp_rate,
	       c->line_of[key_index("fp-rate")], FB_MAX_BLOCKS / (1024 * 1024 / FB_BLOCK_BYTES));
	return -1;
}

int fb_apply_conf_lists(const struct ap_conf *c)
{
	struct fb_list l = { 0 };
	int i, rc = 0;

	for (i = 0; i < c->nload && !rc; i++)
		rc = fb_list_read(c->load[i], &l);
	fb_list_free(&l);
	return rc;
}

int fb_apply_conf_read(const char *file, struct ap_conf *c)
{
	char *buf = NULL, base[PATH_MAX], *b, *dot;
	size_t cap = 0;
	ssize_t len;
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
	while (!err && (len = getline(&buf, &cap, fp)) > 0) {
		char *s, *eq, *key, *val, *hash;

		line++;
		if (memchr(buf, 0, len)) {
			fb_err("%s:%d: NUL byte in line (not a text file?)", file, line);
			err = -1;
			break;
		}
		if (len > 4096) {
			fb_err("%s:%d: line too long", file, line);
			err = -1;
			break;
		}
		s = buf;
		/* A UTF-8 byte-order mark, as some editors write: not text. */
		if (line == 1 && !strncmp(s, "\xef\xbb\xbf", 3))
			s += 3;
		hash = strchr(s, '#');
		if (hash)
			*hash = 0;
		s = trim(s);
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
	free(buf);
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
		fb_apply_conf_free(c);
	return err;
}
