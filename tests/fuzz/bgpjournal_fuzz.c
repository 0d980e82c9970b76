// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom bgp`'s journal (user/cli/bgpjournal.c): bgp_journal_read() on
 * the fuzzer's bytes as the file (after its first two: the state file's
 * commit number, 0 to 3, and the longest line, 64 to 4,144 bytes), each
 * line it gives applied with fb_bgp_line() as a restarted run does; with
 * the first byte's bit 2, the 3rd line given stops the read.
 *
 * What must hold: the lines given are exactly, in order, those a plain
 * reading of the bytes finds whole (a newline after them), at most the
 * longest line plus the commit's prefix, "COMMIT<TAB>" with COMMIT 1 to 19
 * digits past the state file's; each with its line number, its text
 * without the prefix and the newline, NUL after it; every report names
 * FILE:LINE; *whole is the end of the last whole line.
 */
#include "fuzz.h"
#include "bgprun.h"
#include "fleet/bgp.h"

#define NAME "fuzz-journal"

struct ref {
	const uint8_t *data;
	size_t size, pos, lineno, calls, stop;
	size_t max;
	unsigned long long after;
	struct fb_bgp b;
};

/* The next line a plain reading gives: 1 (*line, *len, *lineno), 0 none. */
static int next_ref(struct ref *r, const uint8_t **line, size_t *len, size_t *lineno)
{
	while (r->pos < r->size) {
		const uint8_t *p = r->data + r->pos, *nl = memchr(p, '\n', r->size - r->pos);
		unsigned long long c = 0;
		size_t l, i;

		if (!nl)
			return 0; /* no newline: cut short */
		l = (size_t)(nl - p);
		r->pos += l + 1;
		r->lineno++;
		if (l > r->max + 22)
			continue; /* over-long */
		for (i = 0; i < l && i < 20 && p[i] >= '0' && p[i] <= '9'; i++)
			c = c * 10 + (p[i] - '0');
		if (!i || i >= 20 || i >= l || p[i] != '\t' || c <= r->after)
			continue;
		*line = p + i + 1;
		*len = l - i - 1;
		*lineno = r->lineno;
		return 1;
	}
	return 0;
}

static int apply(void *ctx, const char *line, size_t len, size_t lineno)
{
	struct ref *r = ctx;
	const uint8_t *want;
	size_t wlen, wno;

	FUZZ_ASSERT(next_ref(r, &want, &wlen, &wno), "line %zu given, none expected", lineno);
	FUZZ_ASSERT(lineno == wno && len == wlen && !memcmp(line, want, len) && !line[len],
		    "line %zu (%zu bytes) given, line %zu (%zu bytes) expected", lineno, len, wno,
		    wlen);
	if (++r->calls == r->stop)
		return -1;
	if (fb_bgp_line(&r->b, line, len, lineno))
		return 1;
	fb_bgp_done(&r->b);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_bgp_opts o = { .community = FB_BGP_BLACKHOLE, .min_v4 = 24, .min_v6 = 48 };
	struct ref r = { 0 };
	const uint8_t *line, *nl;
	const char *path;
	size_t len, lineno;
	off_t whole;
	long n;
	int fd;

	fuzz_silence();
	if (size < 2)
		return -1;
	r.after = data[0] & 3;
	r.stop = data[0] & 4 ? 3 : 0;
	r.max = 64 + (size_t)data[1] * 16;
	r.data = data + 2;
	r.size = size - 2;
	if (fb_bgp_init(&r.b, &o))
		abort();
	r.b.note = NULL;
	r.b.source = NAME;
	fd = fuzz_file(r.data, r.size, &path);
	if (lseek(fd, 0, SEEK_SET))
		abort();
	n = bgp_journal_read(fd, NAME, r.max, r.after, apply, &r, &whole);
	if (r.stop && r.calls == r.stop) {
		FUZZ_ASSERT(n == -1, "stopped, yet %ld returned", n);
	} else {
		FUZZ_ASSERT(n >= 0 && (size_t)n <= r.calls, "%ld applied of %zu given", n, r.calls);
		FUZZ_ASSERT(!next_ref(&r, &line, &len, &lineno), "line %zu not given", lineno);
		/* *whole: after the last newline. */
		for (nl = r.data + r.size; nl > r.data && nl[-1] != '\n'; nl--)
			;
		FUZZ_ASSERT(whole == nl - r.data, "whole %lld, the last newline's end %zd",
			    (long long)whole, nl - r.data);
	}
	FUZZ_ASSERT(!fuzz_errors || (!strncmp(fuzz_last_error, "bgp: ", 5) &&
				     fuzz_names_line(fuzz_last_error + 5, NAME)),
		    "reported '%s', not FILE:LINE", fuzz_last_error);
	fb_bgp_free(&r.b);
	return 0;
}
