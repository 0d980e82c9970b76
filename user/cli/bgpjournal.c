// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom bgp`'s STATE.journal (bgprun.h): the input lines read since
 * the state file was last written, applied again by the next run if this
 * one is killed before it writes the state file again.
 *
 * ExaBGP starts another process when ours dies, and sends it only the
 * routes that change from then on: what the peers announced or withdrew
 * while the state file waited for its next write (up to 1.7 s at 500,000
 * paths, 3 s with --ttl) is sent to no one again. Without the lines, the
 * next run deleted the rules of routes still announced (STATE.added) and
 * kept those of routes withdrawn (still in the state file) for good.
 *
 * A line, "COMMIT<TAB>LINE" (the state write that will hold its outcome;
 * LINE as read, without its newline), is written before its additions
 * reach the filter (write-ahead) and emptied once the state file holds
 * it. Each line that changed something is written (paths started or
 * ended, stale marks set or cleared: End-of-RIB's outcome depends on
 * them), one write each, not synced: a process killed leaves it in the
 * page cache (a crash of the machine loses the pinned filter too). A line
 * cut short by a kill has no newline and is not applied.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "bgprun.h"
#include "linein.h"
#include "output.h"
#include "report.h"
#include "safefile.h"

/* "COMMIT<TAB>": an unsigned long long and a tab at most. */
#define JOURNAL_PREFIX 22

int bgp_open_journal(struct bgp_run *rn)
{
	struct stat st;
	int fd = bgp_open_beside(rn, "journal", rn->journal, sizeof(rn->journal));

	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		fb_err("%s: %s", rn->journal, strerror(errno));
		close(fd);
		return -1;
	}
	rn->journal_fd = fd;
	rn->journal_size = st.st_size;
	return 0;
}

/* Write all of iov[0..n), total bytes: 0, or -1 with errno. */
static int write_all(int fd, struct iovec *iov, int n, size_t total)
{
	while (total) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!w)
				errno = ENOSPC;
			return -1;
		}
		total -= (size_t)w;
		while (n && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

void bgp_journal_line(struct bgp_run *rn, const char *line, size_t len)
{
	char pre[JOURNAL_PREFIX + 8];
	struct iovec iov[3];
	int n;

	if (rn->journal_fd < 0 || rn->journal_off || (!rn->b.changed && !rn->b.stale_changed))
		return;
	n = snprintf(pre, sizeof(pre), "%llu\t", rn->commits + 1);
	iov[0] = (struct iovec){ pre, (size_t)n };
	iov[1] = (struct iovec){ (char *)line, len };
	iov[2] = (struct iovec){ "\n", 1 };
	if (!write_all(rn->journal_fd, iov, 3, (size_t)n + len + 1)) {
		rn->journal_size += n + len + 1;
		return;
	}
	/* Not written (a full disk): the line is applied all the same (left
	 * out, its announcement or withdrawal would be lost for sure; this
	 * way only if the process is killed before the next state write). No
	 * line is written after it until then: the journal stays the lines
	 * up to it, in order, and a part written goes. */
	n = errno;
	if (ftruncate(rn->journal_fd, rn->journal_size))
		bgp_say("cannot cut %s back: %s", rn->journal, strerror(errno));
	rn->journal_off = true;
	if (!rn->journal_said)
		bgp_say("cannot write %s: %s: input line %zu and those after it are applied, but "
			"a kill before the next write of %s would lose them (the next run would "
			"delete the rules of the routes announced since, and keep those of the "
			"routes withdrawn since)",
			rn->journal, strerror(n), rn->lineno, rn->state);
	rn->journal_said = true;
}

void bgp_journal_empty(struct bgp_run *rn)
{
	if (rn->journal_fd < 0)
		return;
	/* Not emptied: its lines are of this write or before, skipped by the
	 * next run; the next lines go after them. */
	if (ftruncate(rn->journal_fd, 0)) {
		bgp_say("cannot empty %s: %s", rn->journal, strerror(errno));
		return;
	}
	rn->journal_size = 0;
	rn->journal_off = false;
}

long bgp_journal_read(int fd, const char *name, size_t max, unsigned long long after,
		      bgp_journal_fn fn, void *ctx, off_t *whole)
{
	struct fb_linein rd = { .fd = fd, .max = max + JOURNAL_PREFIX + 1 };
	unsigned long long c;
	size_t lineno = 0, used, len, i;
	off_t pos = 0;
	long n = 0;
	char *line;
	int r;

	*whole = 0;
	for (;;) {
		while ((line = fb_linein_next(&rd, &used, &len))) {
			if (used == len) {
				/* No newline: cut short by a kill as it was
				 * written; never applied. */
				rd.len = 0;
				break;
			}
			lineno++;
			pos += (off_t)used;
			*whole = pos;
			if (rd.skip) {
				rd.skip = 0; /* the tail of an over-long line */
				fb_linein_consume(&rd, used);
				continue;
			}
			for (i = 0, c = 0; i < len && i < 20 && line[i] >= '0' && line[i] <= '9';
			     i++)
				c = c * 10 + (unsigned long long)(line[i] - '0');
			if (!i || i >= 20 || line[i] != '\t') {
				fb_report_err("bgp: %s:%zu: not COMMIT<TAB>LINE; skipped", name,
					      lineno);
			} else if (c > after) {
				r = fn(ctx, line + i + 1, len - i - 1, lineno);
				if (r < 0) {
					n = -1;
					goto out;
				}
				n += !r;
			}
			fb_linein_consume(&rd, used);
		}
		if (rd.eof)
			break;
		r = fb_linein_fill(&rd);
		if (r < 0) {
			fb_report_err("bgp: %s: cannot read: %s", name, strerror(errno));
			n = -1;
			goto out;
		}
		if (r > 0) {
			if (!rd.skip)
				fb_report_err("bgp: %s:%zu: line longer than %zu bytes; skipped",
					      name, lineno + 1, max);
			pos += (off_t)rd.len;
			rd.len = 0;
			rd.skip = 1;
		}
	}
out:
	free(rd.buf);
	return n;
}

/* At start, after the state file and STATE.added are read: the lines of
 * the commit past the state file's, through the same path as stdin's
 * (apply: fb_bgp_line, then the filter), before the first write. Not
 * written again: they are in the journal, of the commit this run writes
 * first. */
int bgp_replay_journal(struct bgp_run *rn, size_t max, bgp_journal_fn apply)
{
	const char *source = rn->b.source;
	off_t whole;
	long n;

	if (rn->journal_fd < 0 || !rn->journal_size)
		return 0;
	if (!rn->commits && !rn->filter_id) {
		/* No state file (one written before it named its filter array
		 * and counted its writes, if any): the lines are of a state
		 * this run does not have. */
		bgp_say("%s: no state file to apply it to; not applied", rn->journal);
		return 0;
	}
	if (lseek(rn->journal_fd, 0, SEEK_SET)) {
		fb_err("%s: %s", rn->journal, strerror(errno));
		return -1;
	}
	rn->b.source = rn->journal;
	n = bgp_journal_read(rn->journal_fd, rn->journal, max, rn->commits, apply, rn, &whole);
	rn->b.source = source;
	rn->lineno = 0;
	if (n < 0)
		return -1;
	/* A line cut short goes (lines are appended after the whole ones). */
	if (whole < rn->journal_size && !ftruncate(rn->journal_fd, whole))
		rn->journal_size = whole;
	if (n)
		bgp_say("%ld line%s read after the last write of %s, by a run that ended before "
			"the "
			"next: applied again",
			n, n == 1 ? "" : "s", rn->state);
	return 0;
}
