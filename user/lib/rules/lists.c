// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Block-lists as operators get them (lists.h). One entry per line, mixed
 * freely:
 *   198.51.100.7   203.0.113.0/24   2001:db8:12::/48     a source rule
 *   198.51.100.10-198.51.100.20                          a range: prefixes
 *   1.10.16.0/20 ; SBL256894                             Spamhaus DROP
 *   # comment                                            FireHOL netsets
 *   udp 198.51.100.1:53 203.0.113.7:4000 | src P | dst P any FLOW
 * '#' and ';' start comments. A bad line stops the read, naming FILE:LINE.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include "keysort.h"
#include "report.h"
#include "rules/flow.h"
#include "rules/lists.h"
#include "rules/prefixes.h"

/* Read again for a refusal's lines (record): k onto the origins alone,
 * which hold the key with its line. */
static int push_origin(struct fb_list *l, const struct fb_key *k)
{
	if (l->nfrom == l->capfrom) {
		size_t cap = l->capfrom ? l->capfrom * 2 : 4096;
		struct fb_list_origin *no = realloc(l->from, cap * sizeof(*no));

		if (!no)
			return -1;
		l->from = no;
		l->capfrom = cap;
	}
	l->from[l->nfrom].key = *k;
	l->from[l->nfrom].file = l->nfiles - 1;
	l->from[l->nfrom++].line = l->line;
	return 0;
}

/* Rules read before a bounded list first drops its duplicates. */
#define DEDUP_FIRST (1U << 20)

size_t fb_list_next_check(size_t n, size_t max)
{
	size_t next = n + (n > DEDUP_FIRST ? n : DEDUP_FIRST), quarter = n + n / 4 + 1;

	/* Not past max + 1 (one more than max is enough to refuse), unless
	 * that is less than a quarter more: held to 1.25 max at most, not
	 * twice, and each sort still a quarter or more of new rules. */
	if (max && next > max + 1)
		next = max + 1 > quarter ? max + 1 : quarter;
	return next;
}

/* When a bounded list next drops its duplicates (fb_list_next_check). */
static size_t next_check(const struct fb_list *l)
{
	return fb_list_next_check(l->n, l->max);
}

/* The list's sink (fb_list_sink). */
static int push(const struct fb_key *k, void *ctx, char *err, size_t errlen)
{
	struct fb_list *l = ctx;

	if (l->record) {
		if (!push_origin(l, k))
			return 0;
	} else if (l->max && l->n >= l->check) {
		/* Input without end stops here, in bounded memory; a list
		 * that repeats itself is taken once. */
		fb_list_unique(l);
		if (l->n > l->max) {
			snprintf(err, errlen, "more than %zu different rules (%s); nothing loaded",
				 l->max, l->max_why);
			return -1;
		}
		l->check = next_check(l);
		return push(k, ctx, err, errlen);
	} else if (l->n < l->cap) {
		l->keys[l->n++] = *k;
		return 0;
	} else {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		struct fb_key *nk = realloc(l->keys, cap * sizeof(*nk));

		if (nk) {
			l->keys = nk;
			l->cap = cap;
			l->keys[l->n++] = *k;
			return 0;
		}
	}
	snprintf(err, errlen, "out of memory after %zu entries", l->record ? l->nfrom : l->n);
	return -1;
}

/* A range's prefixes: of the range's family. */
struct range_ctx {
	fb_list_sink sink;
	void *ctx;
	__u8 family;
	char *err;
	size_t errlen;
};

static int push_prefix(const __u8 addr[16], int plen, void *ctx)
{
	struct range_ctx *rc = ctx;
	struct fb_key k = { 0 };

	memcpy(k.saddr, addr, 16);
	k.plen = plen;
	k.kind = FB_KIND_SRC;
	k.family = plen < 96 ? FB_FAMILY_IPV6 : rc->family;
	return rc->sink(&k, rc->ctx, rc->err, rc->errlen);
}

/* One entry, of its n words: a single word is a source address, prefix or
 * range. */
static int parse_entry(int n, char **words, fb_list_sink sink, void *ctx, char *err, size_t errlen)
{
	struct fb_key k, keys[FB_RULE_KEYS_MAX];
	size_t nk, j;
	int used;

	if (!n)
		return 0;
	if (n == 1) {
		char *dash = strchr(words[0], '-');

		if (dash) {
			__u8 lo[16], hi[16], pl, hifam;
			struct range_ctx rctx = { sink, ctx, 0, err, errlen };

			*dash = 0;
			if (fb_prefix_parse(words[0], lo, &pl, &rctx.family, err, errlen) ||
			    pl != 128 || fb_prefix_parse(dash + 1, hi, &pl, &hifam, err, errlen) ||
			    pl != 128 || rctx.family != hifam) {
				snprintf(err, errlen,
					 "bad range '%s-%s' (want ADDR-ADDR, one family)",
					 fb_quote(words[0]), fb_quote(dash + 1));
				return -1;
			}
			if (memcmp(lo, hi, 16) > 0) {
				snprintf(err, errlen, "bad range '%s-%s' (start after end)",
					 fb_quote(words[0]), fb_quote(dash + 1));
				return -1;
			}
			/* The sink says why it failed. */
			return fb_prefixes_from_range(lo, hi, push_prefix, &rctx) < 0 ? -1 : 0;
		}
		memset(&k, 0, sizeof(k));
		if (fb_prefix_parse_field("src", words[0], k.saddr, &k.plen, &k.family, err,
					  errlen))
			return -1;
		k.kind = FB_KIND_SRC;
		return sink(&k, ctx, err, errlen);
	}
	/* "A - B": a range with blanks, which the FLOW reading would call
	 * an address where a protocol belongs. */
	if (n == 3 && words[1][0] == '-' && !words[1][1] &&
	    !fb_prefix_parse(words[0], k.saddr, &k.plen, &k.family, err, errlen)) {
		snprintf(err, errlen, "a range is written without blanks: '%s-%s'",
			 fb_quote(words[0]), fb_quote(words[2]));
		return -1;
	}
	used = fb_flow_parse_keys(n, words, keys, &nk, err, errlen);
	if (used < 0)
		return -1;
	if (used != n) {
		snprintf(err, errlen, "unexpected '%s' after the entry", fb_quote(words[used]));
		return -1;
	}
	for (j = 0; j < nk; j++)
		if (sink(&keys[j], ctx, err, errlen))
			return -1;
	return 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The words before a comment ('#' or ';'), each ended in place: what
 * strtok_r on blanks gives after the comment is cut, in one pass. */
int fb_list_parse_line(char *line, fb_list_sink sink, void *ctx, char *err, size_t errlen)
{
	char *words[FB_FLOW_WORDS], *p = line;
	int n = 0;

	for (;;) {
		while (blank(*p))
			p++;
		if (!*p || *p == '#' || *p == ';')
			break;
		if (n == FB_FLOW_WORDS) {
			snprintf(err, errlen, "too many words for one entry");
			return -1;
		}
		words[n++] = p;
		while (*p && !blank(*p) && *p != '#' && *p != ';')
			p++;
		if (!blank(*p)) {
			*p = 0;
			break;
		}
		*p++ = 0;
	}
	return parse_entry(n, words, sink, ctx, err, errlen);
}

/* The lines of r into l; the prefixes with host bits set into hb (NULL:
 * not counted). */
static int read_lines(struct fb_lines *r, struct fb_list *l, struct fb_hostbits *hb)
{
	struct fb_hostbits *was = fb_hostbits_watch(hb);
	char *line, err[256];
	size_t len;
	int rc;

	while ((rc = fb_lines_next(r, &line, &len)) > 0) {
		unsigned long before = hb ? hb->n : 0;

		l->line = (__u32)r->lineno;
		if (fb_list_parse_line(line, push, l, err, sizeof(err))) {
			fb_report_err("%s:%zu: %s", r->label, r->lineno, err);
			rc = -1;
			break;
		}
		if (hb && !before && hb->n)
			hb->line = r->lineno;
	}
	fb_hostbits_watch(was);
	return rc;
}

int fb_list_read(const char *file, struct fb_list *l)
{
	struct fb_list_file *nf;
	struct fb_lines r;
	int rc;

	if (fb_lines_open(&r, file))
		return -1;
	nf = realloc(l->files, (l->nfiles + 1) * sizeof(*nf));
	if (!nf || !(nf[l->nfiles].label = strdup(r.label))) {
		if (nf)
			l->files = nf;
		fb_report_err("out of memory reading %s", r.label);
		fb_lines_close(&r);
		return -1;
	}
	l->files = nf;
	/* A regular file can be read again, from this descriptor (not its
	 * name, which may name something else by then), to name a refused
	 * rule's line. */
	nf[l->nfiles].fd = r.regular ? fcntl(r.fd, F_DUPFD_CLOEXEC, 0) : -1;
	memset(&nf[l->nfiles].hostbits, 0, sizeof(nf[l->nfiles].hostbits));
	l->nfiles++;
	rc = read_lines(&r, l, &nf[l->nfiles - 1].hostbits);
	fb_lines_close(&r);
	return rc;
}

void fb_list_origins(struct fb_list *l)
{
	struct fb_list t = { .record = true };
	bool quiet = fb_report_quiet;
	size_t i;

	if (l->nfrom)
		return;
	fb_report_quiet = true;
	for (i = 0; i < l->nfiles; i++) {
		struct fb_lines r;
		int fd;

		if (l->files[i].fd < 0 || lseek(l->files[i].fd, 0, SEEK_SET) ||
		    (fd = fcntl(l->files[i].fd, F_DUPFD_CLOEXEC, 0)) < 0 ||
		    fb_lines_fdopen(&r, fd, l->files[i].label))
			continue;
		t.nfiles = i + 1; /* push() takes the last file's index */
		/* An error (the file changed since, or no memory) ends its
		 * origins there: the lines before it are still named. */
		read_lines(&r, &t, NULL);
		fb_lines_close(&r);
	}
	fb_report_quiet = quiet;
	l->from = t.from;
	l->nfrom = t.nfrom;
	l->capfrom = t.capfrom;
}

void fb_list_bound(struct fb_list *l, size_t max, const char *why)
{
	l->max = max;
	l->check = next_check(l);
	snprintf(l->max_why, sizeof(l->max_why), "%s", why);
}

void fb_list_unique(struct fb_list *l)
{
	/* In place: no buffer beside the list (keysort.h). */
	l->n = fb_keys_unique(l->keys, l->n);
}

void fb_list_free(struct fb_list *l)
{
	size_t i;

	for (i = 0; i < l->nfiles; i++) {
		free(l->files[i].label);
		if (l->files[i].fd >= 0)
			close(l->files[i].fd);
	}
	free(l->files);
	free(l->keys);
	free(l->from);
	memset(l, 0, sizeof(*l));
}

/* Does rule o (as a line wrote it) hold rule k, equal or expanded from
 * it: the same kind and family, its address covering k's? */
static bool holds(const struct fb_key *o, const struct fb_key *k)
{
	const __u8 *a = o->kind == FB_KIND_DST ? o->daddr : o->saddr;
	const __u8 *b = o->kind == FB_KIND_DST ? k->daddr : k->saddr;
	int bits = o->plen, i;

	if (!memcmp(o, k, sizeof(*k)))
		return true;
	if (fb_prefix_list(o->kind, o->family) < 0 || o->kind != k->kind ||
	    o->family != k->family || o->plen > k->plen)
		return false;
	for (i = 0; bits > 0; i++, bits -= 8) {
		__u8 m = bits >= 8 ? 0xff : (__u8)(0xff << (8 - bits));

		if ((a[i] ^ b[i]) & m)
			return false;
	}
	return true;
}

void fb_list_where(const struct fb_list *l, const struct fb_key *k, char *buf, size_t len)
{
	size_t i;

	*buf = 0;
	/* The line that wrote k itself, else the first whose rule holds it. */
	for (i = 0; i < l->nfrom; i++)
		if (!memcmp(&l->from[i].key, k, sizeof(*k))) {
			snprintf(buf, len, "%s:%u", l->files[l->from[i].file].label,
				 l->from[i].line);
			return;
		}
	for (i = 0; i < l->nfrom; i++)
		if (holds(&l->from[i].key, k)) {
			snprintf(buf, len, "%s:%u", l->files[l->from[i].file].label,
				 l->from[i].line);
			return;
		}
}
