// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Helpers every verb uses: option values and FLOW input (see cmd.h). */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "cmd.h"
#include "store/pintree.h"
#include "prog/loader.h"
#include "rules/capacity.h"
#include "rules/flow.h"
#include "rules/lists.h"
#include "rules/prefixes.h"
#include "rules/rules.h"
#include "store/gens.h"
#include "store/store.h"
#include "types/ftype.h"
#include "flowbloom/geometry.h"
#include "flowbloom/hash.h"
#include "output.h"
#include "util.h"

int fb_pick(const char *opt, const char *val, const char *const *names, const int *values)
{
	char list[256] = "";
	int i;

	for (i = 0; names[i]; i++) {
		if (!strcmp(val, names[i]))
			return values ? values[i] : i + 1;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "|" : "",
			 names[i]);
	}
	fb_usage("bad value '%s' for %s (want %s)", fb_quote(val), opt, list);
	return -1;
}

int fb_bad_option(int c, char **argv)
{
	const char *a = argv[optind - 1];
	int n = (int)strcspn(a, "=");

	/* glibc: optopt is 0 for an unknown long option, the option's value
	 * for one missing its argument or given one it does not take, the
	 * character for a short one (which may sit inside a cluster, where
	 * argv[optind - 1] is another word). */
	if (!strncmp(a, "--", 2)) {
		if (c == ':')
			return fb_usage("option '%s' needs a value", fb_quote_len(a, (size_t)n));
		if (!optopt)
			return fb_unknown_option(a, n);
		if (a[n])
			return fb_usage("option '%s' takes no value", fb_quote_len(a, (size_t)n));
	}
	if (c == ':')
		return fb_usage("option '-%c' needs a value", optopt);
	return fb_unknown_option((char[]){ '-', (char)optopt }, 2);
}

int fb_end_of_options(int *argc, char **argv)
{
	int i, j;

	for (i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--"))
			continue;
		for (j = i; j + 1 < *argc; j++)
			argv[j] = argv[j + 1];
		argv[--*argc] = NULL;
		return i;
	}
	return *argc;
}

int fb_no_options(int *argc, char **argv)
{
	int i, end = fb_end_of_options(argc, argv);

	for (i = 1; i < end; i++)
		if (argv[i][0] == '-' && argv[i][1])
			return fb_unknown_option(argv[i], (int)strlen(argv[i]));
	return 0;
}

int fb_load_option(int c, const char *arg, struct fb_load_opts *lo)
{
	int v;

	if (c == 'a') {
		if ((v = fb_parse_action(arg)) < 0)
			return -1;
		lo->action = v;
		return 1;
	}
	if (c == 'M') {
		if ((v = fb_parse_malformed(arg)) < 0)
			return -1;
		lo->malformed = v;
		return 1;
	}
	return 0;
}

int fb_parse_action(const char *val)
{
	return fb_pick("--action", val, fb_action_names + 1, NULL);
}

int fb_parse_malformed(const char *val)
{
	return fb_pick("--malformed", val, fb_malformed_names + 1, NULL);
}

/* Can rule k be held expanded at all: a prefix of a list, not a host nor
 * a 5-tuple (most rules of a list). */
static inline bool may_be_expanded(const struct fb_key *k)
{
	return k->plen < 128 && fb_prefix_list(k->kind, k->family) >= 0;
}

/* k onto fl, from where (a line, an argument): 0, or -1 out of memory. */
static int push_key(struct fb_flows *fl, const struct fb_key *k, size_t where)
{
	size_t d = where - fl->last;

	if (fl->n == fl->cap) {
		size_t cap = fl->cap ? fl->cap * 2 : 1024;
		struct fb_key *nk = realloc(fl->keys, cap * sizeof(*nk));
		__u8 *ns = nk ? realloc(fl->step, cap) : NULL;

		if (nk)
			fl->keys = nk;
		if (!ns)
			goto oom;
		fl->step = ns;
		fl->cap = cap;
	}
	/* Lines and arguments only go forward; a step too long for its byte
	 * (blank lines, comments, a long argument list) goes to far[]. */
	if (d >= FB_FLOWS_FAR) {
		if (fl->nfar == fl->farcap) {
			size_t cap = fl->farcap ? fl->farcap * 2 : 64;
			size_t *nf = realloc(fl->far, cap * sizeof(*nf));

			if (!nf)
				goto oom;
			fl->far = nf;
			fl->farcap = cap;
		}
		fl->far[fl->nfar++] = where;
		d = FB_FLOWS_FAR;
	}
	fl->keys[fl->n] = *k;
	fl->step[fl->n++] = d;
	fl->prefixes |= may_be_expanded(k);
	fl->last = where;
	return 0;
oom:
	return -1;
}

/* The same, saying so when memory runs out. */
static int push(struct fb_flows *fl, const struct fb_key *k, size_t where)
{
	if (!push_key(fl, k, where))
		return 0;
	if (fl->file)
		fb_err("%s:%zu: out of memory after %zu flows", fl->file, where, fl->n);
	else
		fb_err("argument %zu: out of memory", where);
	return -1;
}

void fb_hostbits_args(const struct fb_hostbits *hb)
{
	unsigned long i;

	for (i = 0; i < hb->n && i < FB_HOSTBITS_KEEP; i++)
		fb_warn("%s has host bits set: taken as %s", hb->first[i].written,
			hb->first[i].taken);
}

void fb_hostbits_file(const char *file, const struct fb_hostbits *hb)
{
	if (hb->n == 1)
		fb_warn("%s:%lu: %s has host bits set: taken as %s", file, hb->line,
			hb->first[0].written, hb->first[0].taken);
	else if (hb->n)
		fb_warn("%s: %lu prefixes have host bits set, taken masked; the first: %s:%lu: %s "
			"taken as %s",
			file, hb->n, file, hb->line, hb->first[0].written, hb->first[0].taken);
}

/* A line's rules onto the flows (fb_list_sink). */
struct file_sink {
	struct fb_flows *fl;
	size_t line;
};

static int file_push(const struct fb_key *k, void *ctx, char *err, size_t errlen)
{
	struct file_sink *s = ctx;
	struct fb_flows *fl = s->fl;

	if (fl->max && fl->n >= fl->check) {
		/* Input without end stops here, in bounded memory; a file
		 * that repeats itself is taken once (as it would be). */
		if (fb_flows_unique(fl, "done"))
			return snprintf(err, errlen, "out of memory"), -1;
		if (fl->n > fl->max) {
			snprintf(err, errlen, "more than %zu different flows (%s); nothing done",
				 fl->max, fl->max_why);
			return -1;
		}
		fl->check = fb_list_next_check(fl->n, fl->max);
	}
	if (!push_key(fl, k, s->line))
		return 0;
	snprintf(err, errlen, "out of memory after %zu flows", s->fl->n);
	return -1;
}

/* FILE as `load` reads it (rules/lists.c): addresses, prefixes and ranges
 * (source rules), netsets, Spamhaus DROP and FLOW lines, each rule with
 * its line. */
static int read_file(const char *file, struct fb_flows *fl)
{
	struct fb_hostbits hb = { 0 }, *was = fb_hostbits_watch(&hb);
	struct file_sink sink = { fl, 0 };
	struct fb_lines r;
	char *line, err[256];
	size_t len;
	int rc;

	if (fb_lines_open(&r, file)) {
		fb_hostbits_watch(was);
		return -1;
	}
	fl->file = r.label;
	while ((rc = fb_lines_next(&r, &line, &len)) > 0) {
		unsigned long before = hb.n;

		sink.line = r.lineno;
		if (fb_list_parse_line(line, file_push, &sink, err, sizeof(err))) {
			fb_err("%s:%zu: %s", fl->file, r.lineno, err);
			rc = -1;
			break;
		}
		if (!before && hb.n)
			hb.line = r.lineno;
	}
	fb_hostbits_watch(was);
	/* Told once the file is read, as a bad line's error would have
	 * been instead: nothing is taken from a file that fails. */
	if (!rc)
		fb_hostbits_file(r.label, &hb);
	fb_lines_close(&r);
	return rc;
}

void fb_flows_free(struct fb_flows *fl)
{
	free(fl->keys);
	free(fl->step);
	free(fl->far);
	memset(fl, 0, sizeof(*fl));
}

/* Where flow i came from: the steps summed, from the start (for messages
 * only). */
static size_t where_of(const struct fb_flows *fl, size_t i)
{
	size_t w = 0, y, x = 0;

	for (y = 0; y <= i; y++)
		w = fl->step[y] == FB_FLOWS_FAR ? fl->far[x++] : w + fl->step[y];
	return w;
}

void fb_flows_where(const struct fb_flows *fl, size_t i, char *buf, size_t len)
{
	size_t a = i, b = i + 1, o, w = where_of(fl, i);

	if (fl->file)
		o = (size_t)snprintf(buf, len, "%s:%zu", fl->file, w);
	else
		o = (size_t)snprintf(buf, len, "argument %zu", w);
	/* A written rule that makes several (port ranges, families, a pair
	 * of addresses): the one named below is not what was written. Its
	 * flows are those with step 0 after the first. */
	while (a > 0 && !fl->step[a])
		a--;
	while (b < fl->n && !fl->step[b])
		b++;
	if (b - a > 1 && o < len)
		snprintf(buf + o, len - o, " (rule %zu of the %zu it makes)", i - a + 1, b - a);
}

/* The duplicates' table hashes a file's keys, which anyone who writes a
 * list chooses: NH under words drawn from a secret of this run (the
 * filters' own keyed hash, universal for a secret key), so no list (a
 * hostile one, or only addresses in order: an unkeyed multiply-and-shift
 * put 200k consecutive IPv6 hosts into a few slots, 34 s) makes its
 * probes long. */
static __u64 key_hash(const struct fb_key *k, const __u64 *kw)
{
	return fb_nhk(k, kw);
}

int fb_flows_unique(struct fb_flows *fl, const char *done)
{
	size_t i, j = 0, x = 0, w = 0, last = 0, nfar = 0, farcap = 0, *far = NULL, mask, first = 0;
	__u64 secret[2], kw[FB_NHK_WORDS], hs[16];
	__u32 *slot;

	if (fl->n < 2)
		return 0;
	if (fl->n >= UINT32_MAX / 2) {
		fb_err("%s: %zu flows: too many to find the duplicates of", fl->file, fl->n);
		return -1;
	}
	if (getrandom(secret, sizeof(secret), 0) != sizeof(secret)) {
		fb_err("getrandom: %s", strerror(errno));
		return -1;
	}
	fb_nhk_words(secret, kw);
	for (mask = 1; mask < 2 * fl->n; mask <<= 1)
		;
	slot = calloc(mask--, sizeof(*slot)); /* kept flow's index + 1; 0: none */
	if (!slot)
		goto oom;
	/* In order, keeping the first copy: its place is what messages name,
	 * and the steps between places are summed over the copies dropped. */
	for (i = 0; i < fl->n; i++) {
		size_t h, d;

		/* A batch's slots hashed and fetched ahead: a large table's
		 * lines are cache misses, overlapped so. */
		if (!(i & 15)) {
			for (d = 0; d < 16 && i + d < fl->n; d++) {
				hs[d] = key_hash(&fl->keys[i + d], kw) & mask;
				__builtin_prefetch(&slot[hs[d]]);
			}
		}
		h = hs[i & 15];

		w = fl->step[i] == FB_FLOWS_FAR ? fl->far[x++] : w + fl->step[i];
		while (slot[h] && memcmp(&fl->keys[slot[h] - 1], &fl->keys[i], sizeof(fl->keys[i])))
			h = (h + 1) & mask;
		if (slot[h]) {
			if (!first)
				first = w;
			continue;
		}
		slot[h] = (__u32)j + 1;
		d = w - last;
		if (d >= FB_FLOWS_FAR) {
			if (nfar == farcap) {
				size_t cap = farcap ? farcap * 2 : 64,
				       *nf = realloc(far, cap * sizeof(*nf));

				if (!nf)
					goto oom_undo;
				far = nf;
				farcap = cap;
			}
			far[nfar++] = w;
			d = FB_FLOWS_FAR;
		}
		fl->keys[j] = fl->keys[i];
		fl->step[j++] = (__u8)d;
		last = w;
	}
	free(slot);
	/* Added to an earlier pass's (a bounded file's, as it is read):
	 * whose copies all came before this pass's. */
	if (!fl->again)
		fl->again_at = first;
	fl->again += fl->n - j;
	free(fl->far);
	fl->far = far;
	fl->nfar = nfar;
	fl->farcap = farcap;
	fl->n = j;
	fl->last = last;
	return 0;
oom_undo:
	/* Some keys were moved already: the caller frees them, unused. */
	free(far);
	free(slot);
oom:
	fb_err("%s: out of memory finding duplicates; nothing %s", fl->file, done);
	return -1;
}

void fb_flows_note_again(const struct fb_flows *fl, const char *done)
{
	if (fl->again)
		fb_report(FB_REPORT_NOTE,
			  "%s names %zu rule%s again (the first at %s:%zu): each %s once, as "
			  "`load` holds it",
			  fl->file, fl->again, fl->again == 1 ? "" : "s", fl->file, fl->again_at,
			  done);
}

/* Is 128-bit-space length t one of the list's? */
static bool list_has(const struct fb_lengths *ls, int t)
{
	int i;

	for (i = 0; i < ls->n && i < FB_MAX_LENGTHS; i++)
		if (ls->len[i] == t)
			return true;
	return false;
}

/* The length prefix rule k is held whole at, expanded, in the first of
 * the parts asked (f's permanent rules, then each generation of gv, each
 * by its own lengths) whose lengths lack k's; 0 if none. With lacks, only
 * whether a part lacks k's length: 1 or 0. */
static int stored_at(const struct fb_key *k, const struct fb_store *f, bool permanent,
		     const struct fb_gen_views *gv, bool lacks)
{
	const struct fb_store *s;
	int l, g, at = 0;

	if (!may_be_expanded(k))
		return 0;
	l = fb_rules_prefix_list(k);
	for (g = permanent ? -1 : 0; g < (gv ? gv->n : 0) && !at; g++) {
		s = g < 0 ? f : &gv->v[g];
		if (list_has(&fb_store_prefixes(s)->list[l], k->plen))
			continue;
		if (lacks)
			return 1;
		fb_prefixes_held_expanded(k, &fb_store_prefixes(s)->list[l], fb_ftype_held,
					  (void *)s, &at);
	}
	return at;
}

int fb_flows_as_stored(struct fb_flows *fl, const struct fb_store *f, bool permanent,
		       const struct fb_gen_views *gv)
{
	unsigned flags = fb_ftype(f->hdr->type)->flags;
	struct fb_flows out;
	size_t i, x = 0, w = 0, pieces = 0, expanded = 0;
	struct fb_key e;
	__u64 c, cnt;
	int at;

	/* Only a filter that can forget a flow has pieces to delete. */
	if ((flags & FB_FTYPE_TABLE) ? !(flags & FB_FTYPE_DELETES) : !f->cnt_hdr)
		return 0;
	/* Most inputs hold no such rule: no copy of them then, and with no
	 * prefix at all not a look at them (a pass over 40 bytes a flow). */
	if (!fl->prefixes)
		return 0;
	for (i = 0; i < fl->n; i++)
		if (stored_at(&fl->keys[i], f, permanent, gv, true))
			break;
	if (i == fl->n)
		return 0;
	memset(&out, 0, sizeof(out));
	out.file = fl->file;
	out.again = fl->again;
	out.again_at = fl->again_at;
	for (i = 0; i < fl->n; i++) {
		const struct fb_key *k = &fl->keys[i];

		w = fl->step[i] == FB_FLOWS_FAR ? fl->far[x++] : w + fl->step[i];
		/* A length every part asked holds: the rule as written. */
		at = stored_at(k, f, permanent, gv, false);
		if (!at) {
			if (push(&out, k, w))
				goto oom;
			continue;
		}
		cnt = 1ull << (at - k->plen);
		if (cnt > FB_EXPAND_MAX - pieces) {
			fb_err("the prefixes held expanded make more than %u rules to delete; "
			       "nothing deleted",
			       FB_EXPAND_MAX);
			fb_flows_free(&out);
			return -1;
		}
		pieces += cnt;
		expanded++;
		for (c = 0; c < cnt; c++) {
			fb_prefix_piece(k, at, c, &e);
			if (push(&out, &e, w))
				goto oom;
		}
	}
	if (expanded)
		fprintf(stderr,
			"flowbloom: note: %zu prefix%s held as %zu longer prefixes (load expanded "
			"%s): deleting those\n",
			expanded, expanded == 1 ? " is" : "es are", pieces,
			expanded == 1 ? "it" : "them");
	fb_flows_free(fl);
	*fl = out;
	return 0;
oom:
	fb_flows_free(&out);
	return -1;
}

/* fb_read_flows, a file held to max different flows (0: no bound). */
static int read_flows(int argc, char **argv, const char *file, struct fb_flows *fl, size_t max,
		      const char *why)
{
	char err[256];
	int i = 0;

	memset(fl, 0, sizeof(*fl));
	fl->max = max;
	fl->check = fb_list_next_check(0, max);
	snprintf(fl->max_why, sizeof(fl->max_why), "%s", why);
	if (file) {
		if (argc)
			return fb_usage("give FLOWs or -f FILE, not both");
		if (read_file(file, fl))
			goto fail;
		return 0;
	}
	if (!argc)
		return fb_usage("no FLOW given");
	while (i < argc) {
		struct fb_key keys[FB_RULE_KEYS_MAX];
		struct fb_hostbits hb = { 0 }, *was = fb_hostbits_watch(&hb);
		size_t n, j;
		int used = fb_flow_parse_keys(argc - i, argv + i, keys, &n, err, sizeof(err));

		fb_hostbits_watch(was);
		/* A FLOW word the grammar refuses is a malformed command line:
		 * a usage error (exit 2), as `query --packet` says of its own. */
		if (used < 0) {
			fb_flows_free(fl);
			return fb_usage("argument %d: %s", i + 1, err);
		}
		if (fb_flow_next_check(argc - i, argv + i, used, err, sizeof(err))) {
			fb_flows_free(fl);
			return fb_usage("argument %d: %s", i + used + 1, err);
		}
		fb_hostbits_args(&hb);
		for (j = 0; j < n; j++)
			if (push(fl, &keys[j], i + 1))
				goto fail;
		i += used;
	}
	return 0;
fail:
	fb_flows_free(fl);
	return -1;
}

int fb_read_flows(int argc, char **argv, const char *file, struct fb_flows *fl)
{
	return read_flows(argc, argv, file, fl, 0, "");
}

int fb_flows_args(int argc, char **argv, const char **name, struct fb_flows *fl, bool bound)
{
	char why[160] = "";
	size_t max = 0;
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL;
	bool dashed;
	int c, rc, n;

	optind = 0;
	opterr = 0;
	/* "+": stop at the first non-option, so FLOW words are never options. */
	while ((c = getopt_long(argc, argv, "+:f:", opts, NULL)) != -1) {
		if (c != 'f')
			return fb_bad_option(c, argv);
		/* A second -f would silently drop the first file's flows. */
		if (file)
			return fb_usage("-f given twice (one FILE: `load` takes several)");
		file = optarg;
	}
	/* getopt stopped at `--` (not a -f FILE named "--"): no options after. */
	dashed = optind > 1 && !strcmp(argv[optind - 1], "--") && argv[optind - 1] != file;
	if (optind >= argc)
		return fb_usage("missing NAME");
	*name = argv[optind++];
	/* After NAME, only -f/--file can come: a FLOW word never starts with '-'. */
	if (!dashed && !file && optind < argc &&
	    (!strcmp(argv[optind], "-f") || !strcmp(argv[optind], "--file"))) {
		if (optind + 1 >= argc)
			return fb_usage("%s needs a FILE ('-' for stdin)", argv[optind]);
		file = argv[optind + 1];
		optind += 2;
	} else if (!dashed && !file && optind < argc && !strncmp(argv[optind], "--file=", 7)) {
		file = argv[optind++] + 7;
	}
	/* The rest is FLOWs: a word starting with '-' is an option, misplaced
	 * or unknown, unless it follows `--` (dropped here). */
	n = argc - optind + 1;
	if (!dashed && (rc = fb_no_options(&n, argv + optind - 1)))
		return rc;
	argc = n + optind - 1;
	if (bound && file) {
		struct fb_store f;

		/* The filter, for its bound only (the verb opens it again);
		 * one that cannot be opened is said now, not after an input
		 * that may never end. */
		if (fb_store_open(*name, &f))
			return 1;
		max = fb_capacity_input(f.hdr, false, why, sizeof(why));
		fb_store_close(&f);
	}
	rc = read_flows(argc - optind, argv + optind, file, fl, max, why);
	return rc == 2 ? 2 : rc ? 1 : 0;
}

/* A file of filter NAME in /run/flowbloom: KIND-NAME.EXT for the default
 * pin root, KIND-NAME-HASH.EXT (FNV-1a of the root) for another. The root
 * as the pin tree opens it, a component at a time: "//", "/./" and a
 * trailing "/" name the same root, and so the same file. (A root too long
 * or with "..", was refused before: fb_pin_check_bpffs().) */
void fb_run_file(const char *kind, const char *name, const char *ext, char *file, size_t len)
{
	char buf[512], root[512] = "", *comp, *save = NULL;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", fb_pin_root());
	for (comp = strtok_r(buf, "/", &save); comp; comp = strtok_r(NULL, "/", &save))
		if (strcmp(comp, ".") && n < sizeof(root))
			n += snprintf(root + n, sizeof(root) - n, "/%s", comp);
	if (!strcmp(root, "/sys/fs/bpf/flowbloom")) {
		snprintf(file, len, "%s-%s.%s", kind, name, ext);
	} else {
		__u64 h = 0xcbf29ce484222325ULL;

		for (comp = root; *comp; comp++)
			h = (h ^ (unsigned char)*comp) * 0x100000001b3ULL;
		snprintf(file, len, "%s-%s-%016llx.%s", kind, name, (unsigned long long)h, ext);
	}
}
