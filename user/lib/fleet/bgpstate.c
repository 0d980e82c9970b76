// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BGP state file (see bgp.h): one path a line, its strings escaped so
 * that whatever a peer sends stays one field of one line; read back with
 * every path held to the limits a peer's route is held to (fb_bgp_admit).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/bgp.h"
#include "fleet/bgp_int.h"
#include "report.h"
#include "rules/flow.h"

/*
 * The state file is rewritten whole at each commit, a line a path (35 MB
 * for 500,000 paths): formatted by hand into a buffer of lines, written
 * out as it fills, where stdio per field (fprintf, fputc a byte) took
 * most of a commit's CPU. The text is the same, byte for byte
 * (test_fleet's bgp save).
 */
struct out {
	FILE *fp;
	size_t n;
	char b[1 << 16];
};

static void out_flush(struct out *o)
{
	if (o->n)
		fwrite(o->b, 1, o->n, o->fp); /* its error: ferror(fp) */
	o->n = 0;
}

static void out_put(struct out *o, const char *s, size_t n)
{
	if (o->n + n > sizeof(o->b)) {
		out_flush(o);
		if (n > sizeof(o->b)) {
			fwrite(s, 1, n, o->fp);
			return;
		}
	}
	memcpy(o->b + o->n, s, n);
	o->n += n;
}

/* A field as one line's text: backslash escapes for the separators (tab,
 * newline), the backslash itself, every other control byte, and '#' (\x23:
 * a line that started with one would be read back as a comment, its path
 * forgotten while its rule stays in the filter). */
static void put_field(struct out *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;

	for (;; s++) {
		unsigned char c = *s;
		char e[4] = { '\\', 0, 0, 0 };
		size_t n = 2;

		if (c >= 0x20 && c != 0x7f && c != '#' && c != '\\')
			continue;
		out_put(o, run, s - run);
		if (!c)
			return;
		run = s + 1;
		if (c == '\\' || c == '\t' || c == '\n' || c == '\r') {
			e[1] = c == '\\' ? '\\' : c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
		} else {
			e[1] = 'x';
			e[2] = hex[c >> 4];
			e[3] = hex[c & 15];
			n = 4;
		}
		out_put(o, e, n);
	}
}

/* Undo put_field() in place: 0, or -1 on a bad escape (or one making a
 * NUL). */
static int get_field(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s != '\\') {
			*o++ = *s;
			continue;
		}
		switch (*++s) {
		case '\\':
			*o++ = '\\';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 'x': {
			unsigned v;

			if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]) ||
			    sscanf(s + 1, "%2x", &v) != 1 || !v)
				return -1;
			*o++ = (char)v;
			s += 2;
			break;
		}
		default:
			return -1;
		}
	}
	*o = 0;
	return 0;
}

/* The header of a file whose ids are as a route's messages make them now
 * (bgpid.c); a file without it was written before, its ids made so as
 * they are read (fb_bgp_old_id). */
#define STATE_2 "# flowbloom bgp state 2"
/* After a path's line: the path is stale (held over its session's restart
 * until the peer's End-of-RIB, bgpstale.c). A comment to a reader that does
 * not know it, as the header is: an older run loses the marks, nothing
 * else. */
#define STALE_LINE "# stale"

int fb_bgp_save(const struct fb_bgp *b, FILE *fp)
{
	char text[FB_FLOW_STR + 2];
	struct fb_bgp_path *p;
	struct out *o = malloc(sizeof(*o));
	size_t i, n;

	if (!o) {
		errno = ENOMEM;
		return -1;
	}
	o->fp = fp;
	o->n = 0;
	fprintf(fp, "%s: peer, family, route id, rule (one path a line)\n", STATE_2);
	text[0] = '\t';
	for (i = 0; i < b->nbuckets; i++)
		for (p = b->paths[i]; p; p = p->next) {
			put_field(o, p->peer);
			out_put(o, "\t", 1);
			put_field(o, p->family);
			out_put(o, "\t", 1);
			put_field(o, p->nlri);
			fb_flow_format(&p->key, text + 1, FB_FLOW_STR);
			n = strlen(text);
			text[n] = '\n';
			out_put(o, text, n + 1);
			if (p->stale)
				out_put(o, STALE_LINE "\n", sizeof(STALE_LINE));
		}
	out_flush(o);
	free(o);
	return ferror(fp) ? -1 : 0;
}

/*
 * A file holding more paths than --max-paths allows now (lowered since the
 * run that wrote it): the promise is the same as to a peer, past it no
 * path is held. Its first max_paths are kept, whole routes (a route of
 * several parts is kept or dropped whole); each route past them ends as
 * its withdrawal would (its rules, unless a kept path holds them, leave
 * the filter) and is named once, with its line. ops[i] is of line
 * lines[i]. 0, or -1 out of memory.
 */
static int over_max(struct fb_bgp_ctx *c, const size_t *lines, const char *name)
{
	struct fb_bgp *b = c->b;
	size_t i = c->nops, held = b->npaths, max = b->o.max_paths;
	long n;

	if (!max || held <= max)
		return 0;
	while (b->npaths > max && i--) {
		const struct fb_bgp_op *o = &c->ops[i];

		n = fb_bgp_route_end(c, o->peer, o->family, o->nlri);
		if (n < 0)
			return -1;
		if (!n)
			continue; /* ended with another of its parts */
		b->changed = true;
		b->refused_paths++;
		fb_bgp_note(b, FB_BGP_PAST_MAX, 0,
			    "%s:%zu: '%s' from %s: %ld path%s past --max-paths %zu (the file "
			    "holds %zu); dropped",
			    name, lines[i], fb_quote_len(o->nlri, fb_bgp_route_len(o->nlri, NULL)),
			    fb_quote(o->peer), n, n == 1 ? "" : "s", max, held);
	}
	return 0;
}

int fb_bgp_load(struct fb_bgp *b, FILE *fp, const char *name)
{
	struct fb_bgp_ctx c = { .b = b };
	char *line = NULL, *f[5], *rest, err[256], text[FB_FLOW_STR], id[1200];
	struct fb_key k, *drop = NULL;
	size_t cap = 0, lineno = 0, i, ndrop = 0, *lines = NULL, cap_lines = 0;
	ssize_t len;
	int blank, rc = -1;
	bool now = false; /* ids as they are made now (STATE_2) */
	/* The op of the path on the line before (for STALE_LINE); -1: no path
	 * line before, -2: one dropped (its mark goes with it). */
	long last = -1;

	while ((len = getline(&line, &cap, fp)) > 0) {
		lineno++;
		if (memchr(line, 0, len)) {
			fb_report_err("%s:%zu: NUL byte in line", name, lineno);
			goto out;
		}
		/* Every line written ends with one: a last line without it
		 * was cut short (a torn write, an edit). Read as it is, "dst
		 * 203.0.113.77" cut to "dst 203.0.113.7" names a rule bgp never
		 * added, which the route's withdrawal would delete (the
		 * operator's, or bits of others), and a "# delete" line so cut
		 * would be applied at start. */
		if (line[len - 1] != '\n') {
			fb_report_err(
				"%s:%zu: the last line is cut short (no newline at its end: a "
				"torn write?); nothing loaded, the filter left as it is (complete "
				"or remove that line)",
				name, lineno);
			goto out;
		}
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, STATE_2 ":", strlen(STATE_2) + 1))
			now = true;
		if (!strcmp(line, STALE_LINE)) {
			if (last == -1) {
				fb_report_err("%s:%zu: stale mark with no path line before it",
					      name, lineno);
				goto out;
			}
			if (last >= 0)
				c.ops[last].stale = true;
			last = -1;
			continue;
		}
		last = -1;
		if (!line[0] || line[0] == '#')
			continue;
		rest = line;
		for (i = 0; i < 5 && rest; i++)
			f[i] = strsep(&rest, "\t");
		if (i != 4 || rest) {
			fb_report_err("%s:%zu: want 4 fields separated by tabs", name, lineno);
			goto out;
		}
		if (get_field(f[0]) || get_field(f[1]) || get_field(f[2])) {
			fb_report_err("%s:%zu: bad backslash escape", name, lineno);
			goto out;
		}
		if (fb_flow_parse_line(f[3], &k, &blank, err, sizeof(err)) || blank) {
			fb_report_err("%s:%zu: %s", name, lineno, blank ? "no rule" : err);
			goto out;
		}
		/* The rule exactly as it is in the filter (fb_flow_format
		 * writes an IPv6 rule's v4-mapped address in hex): a path whose
		 * rule its route could not make now is dropped. */
		if (fb_bgp_admit(b, f[1], &k, err, sizeof(err))) {
			struct fb_key *d = realloc(drop, (ndrop + 1) * sizeof(*d));

			fb_flow_format(&k, text, sizeof(text));
			fb_bgp_note(b, FB_BGP_INVALID, 0, "%s:%zu: '%s' from %s: %s; dropped", name,
				    lineno, text, fb_quote(f[0]), err);
			if (!d)
				goto out;
			drop = d;
			drop[ndrop++] = k;
			last = -2;
			continue;
		}
		if (c.nops == cap_lines) {
			size_t nc = cap_lines ? 2 * cap_lines : 64,
			       *nl = realloc(lines, nc * sizeof(*nl));

			if (!nl) {
				c.oom = true;
				goto out;
			}
			lines = nl;
			cap_lines = nc;
		}
		if (fb_bgp_push_op(&c, true, f[0], f[1],
				   now ? f[2] : fb_bgp_old_id(f[1], f[2], id, sizeof(id)), &k))
			goto out;
		lines[c.nops - 1] = lineno;
		last = (long)c.nops - 1;
	}
	/* getline ends on an error too (EIO, no memory for a huge line): the
	 * paths after it would be forgotten, their rules left in the filter
	 * for good. */
	if (!feof(fp)) {
		fb_report_err("%s:%zu: cannot read: %s", name, lineno + 1, strerror(errno));
		goto out;
	}
	for (i = 0; i < c.nops; i++)
		if (fb_bgp_apply_op(&c, &c.ops[i]))
			goto out;
	if (over_max(&c, lines, name)) {
		c.oom = true;
		goto out;
	}
	/* A dropped path's rule is in the filter (we added it): unless an
	 * admitted path holds it too, it goes, as with a withdrawal. */
	for (i = 0; i < ndrop; i++) {
		struct fb_bgp_rule *r = fb_bgp_rule_get(b, &drop[i]);

		if (!r || fb_bgp_touch(&c, r))
			goto out;
		b->changed = true;
	}
	b->nadd = b->ndel = 0;
	for (i = 0; i < c.ntouched; i++) {
		struct fb_bgp_rule *r = c.touched[i];

		r->touched = false;
		r->in_filter = true;
		if (!r->refs && fb_bgp_push_key(&b->del, &b->ndel, &b->cap_del, &r->key))
			goto out;
	}
	rc = 0;
out:
	if (rc && c.oom)
		fb_report_err("%s: out of memory", name);
	free(line);
	free(drop);
	free(lines);
	fb_bgp_ctx_free(&c);
	return rc;
}
