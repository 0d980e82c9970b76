// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `apply`'s NAME.conf (user/cli/applyconf.c): fb_apply_conf_read() on the
 * fuzzer's bytes as DIR/fz.conf, then, as apply goes on, the filter it
 * describes (fb_apply_conf_opts) and its lists (fb_apply_conf_lists). DIR
 * holds three lists a configuration may name: good.list, bad.list (its
 * line 2 is no entry) and empty.list (comments only); fz.conf, the file
 * itself, is one too.
 *
 * What must hold: a refusal names the file (FILE:LINE, or FILE for the
 * file as a whole); an accepted file names filter fz, its numbers are ones
 * create accepts (fb_parse_u64: create cannot refuse what apply accepted),
 * its devices fit a name, its lists are readable; the lists read into rules
 * the data path can match, or fail naming LIST:LINE; lists of no rules are
 * refused naming FILE:LINE of a load line unless allow-empty = yes, and
 * only then accepted.
 */
#include "fuzz.h"
#include <limits.h>
#include <sys/stat.h>
#include "applyconf.h"
#include "rules/rules.h"
#include "util.h"

static char dir[64], conf[96];

static void cleanup(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/good.list", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/bad.list", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/empty.list", dir);
	unlink(p);
	unlink(conf);
	rmdir(dir);
}

static void put(const char *name, const void *data, size_t len)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	/* 0600 whatever the umask: apply refuses a file others may write. */
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) || chmod(p, 0600))
		abort();
}

static void setup(void)
{
	static const char good[] = "198.51.100.0/24\n2001:db8::/32 ; SBL1\n"
				   "udp 198.51.100.1:53 203.0.113.7:4000\n";
	static const char bad[] = "198.51.100.7\nnot-an-address\n";
	static const char empty[] = "# FireHOL header only\n\n; a comment\n";

	if (dir[0])
		return;
	snprintf(dir, sizeof(dir), "/tmp/fbfuzz-apply.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(conf, sizeof(conf), "%s/fz.conf", dir);
	put("good.list", good, sizeof(good) - 1);
	put("bad.list", bad, sizeof(bad) - 1);
	put("empty.list", empty, sizeof(empty) - 1);
	atexit(cleanup);
}

/* The value the input's line n gives, as a reader of `key = value` would
 * cut it (comment, blanks); NULL if there is none. */
static char *value_of_line(const uint8_t *data, size_t size, int n, char *buf, size_t len)
{
	const uint8_t *p = data, *end = data + size, *nl;
	char *eq, *v, *e;

	for (; n > 1 && p < end; n--) {
		nl = memchr(p, '\n', end - p);
		p = nl ? nl + 1 : end;
	}
	nl = memchr(p, '\n', end - p);
	if (!nl)
		nl = end;
	if ((size_t)(nl - p) >= len)
		return NULL;
	memcpy(buf, p, nl - p);
	buf[nl - p] = 0;
	if ((e = strchr(buf, '#')))
		*e = 0;
	eq = strchr(buf, '=');
	if (!eq)
		return NULL;
	v = eq + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	e = v + strlen(v);
	while (e > v && strchr(" \t\r", e[-1]))
		*--e = 0;
	return v;
}

static void check_number(const uint8_t *data, size_t size, const struct ap_conf *c, enum ap_key key,
			 unsigned long long got)
{
	unsigned long long v;
	char buf[4200], *text;

	if (!c->line_of[key])
		return;
	text = value_of_line(data, size, c->line_of[key], buf, sizeof(buf));
	FUZZ_ASSERT(text, "line %d: no value found", c->line_of[key]);
	FUZZ_ASSERT(!fb_parse_u64(text, &v) && v == got,
		    "line %d: '%s' accepted as %llu, which create would refuse", c->line_of[key],
		    text, got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ap_conf c;
	struct fb_create_opts o;
	struct fb_list l = { 0 };
	char why[256];
	size_t i;
	int n;

	fuzz_silence();
	setup();
	if (size > 16384)
		return -1;
	put("fz.conf", data, size);
	if (fb_apply_conf_read(conf, false, &c)) {
		FUZZ_ASSERT(!strncmp(fuzz_last_error, conf, strlen(conf)) &&
				    fuzz_last_error[strlen(conf)] == ':',
			    "refused as '%s': names no place", fuzz_last_error);
		return 0;
	}
	FUZZ_ASSERT(!fuzz_errors, "accepted, with an error: %s", fuzz_last_error);
	FUZZ_ASSERT(!strcmp(c.name, "fz"), "filter '%s'", c.name);
	check_number(data, size, &c, AP_CAPACITY, c.create.capacity);
	check_number(data, size, &c, AP_BITS, c.create.bits);
	check_number(data, size, &c, AP_HASHES, c.create.hashes);
	FUZZ_ASSERT(c.nload <= AP_MAX_ITEMS && c.ndev <= AP_MAX_ITEMS, "%d lists, %d devices",
		    c.nload, c.ndev);
	for (n = 0; n < c.nload; n++)
		FUZZ_ASSERT(!access(c.load[n], R_OK), "list '%s' not readable", c.load[n]);
	for (n = 0; n < c.ndev; n++)
		FUZZ_ASSERT(c.dev[n].name[0] && strlen(c.dev[n].name) < IF_NAMESIZE, "device '%s'",
			    c.dev[n].name);
	fuzz_silence();
	if (fb_apply_conf_opts(&c, &o))
		FUZZ_ASSERT(!strncmp(fuzz_last_error, conf, strlen(conf)),
			    "geometry refused as '%s': names no place", fuzz_last_error);
	/* The lists are read only when all are DIR's own: a path elsewhere
	 * may be a FIFO or /proc/kmsg, which would wait for ever. */
	for (n = 0; n < c.nload; n++) {
		char real[PATH_MAX];

		if (!realpath(c.load[n], real) || strncmp(real, dir, strlen(dir)) ||
		    (real[strlen(dir)] && real[strlen(dir)] != '/'))
			goto out;
	}
	fuzz_silence();
	if (fb_apply_conf_lists(&c, &l)) {
		char at[128];

		snprintf(at, sizeof(at), "%s:", conf);
		if (strstr(fuzz_last_error, " no rules: nothing changed (allow-empty = yes")) {
			FUZZ_ASSERT(!c.allow_empty && !strncmp(fuzz_last_error, at, strlen(at)) &&
					    atoi(fuzz_last_error + strlen(at)) == c.load_line[0],
				    "lists refused as '%s' (allow-empty %d)", fuzz_last_error,
				    c.allow_empty);
		} else {
			/* A bad line of bad.list, or of fz.conf read as a list. */
			FUZZ_ASSERT(strstr(fuzz_last_error, "/bad.list:2: ") ||
					    !strncmp(fuzz_last_error, at, strlen(at)) ||
					    strstr(fuzz_last_error, ": is a directory"),
				    "lists refused as '%s'", fuzz_last_error);
		}
	} else {
		FUZZ_ASSERT(l.n || !c.nload || c.allow_empty, "lists of no rules accepted");
		for (i = 0; i < l.n; i++)
			FUZZ_ASSERT(!fb_rules_valid(&l.keys[i], why, sizeof(why)),
				    "list entry %zu invalid: %s", i, why);
	}
	fb_list_free(&l);
out:
	fb_apply_conf_free(&c);
	return 0;
}
