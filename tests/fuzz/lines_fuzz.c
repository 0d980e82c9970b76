// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The line reader behind every file input (fb_lines_*, user/lib/rules/
 * lines.c), on a regular file and on a stream that hands the bytes over in
 * pieces (a SOCK_SEQPACKET socket: one packet per read(2), so the pieces
 * are the fuzzer's choice and every run is the same). The input: one byte
 * for the kind (even: a file, odd: a stream), one for the piece size, then
 * the text.
 *
 * Checked against flow.h's contract, computed here from the text: lines
 * end at '\n'; each line comes back whole and in order (a UTF-8 byte-order
 * mark first in line 1 dropped); a line longer than FB_LINE_MAX, a NUL
 * byte, and a last line without newline from a stream are errors, named
 * "LABEL:LINE: " with the line they are in; nothing is returned after an
 * error, and the end is the end.
 */
#include "fuzz.h"
#include <sys/socket.h>
#include "rules/flow.h"

#define LABEL "fuzz-lines"
#define MAX_PIECES 512

/* A stream of text[0..n) in pieces of piece bytes (the last takes the
 * rest); the reading end, or -1 if the pieces would not fit. */
static int stream_of(const uint8_t *text, size_t n, size_t piece)
{
	int sv[2], buf = 4 << 20;
	size_t off = 0;

	if ((n + piece - 1) / piece > MAX_PIECES)
		piece = (n + MAX_PIECES - 1) / MAX_PIECES;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		abort();
	/* Room for every piece at once (root may pass the sysctl limit). */
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf));
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	while (off < n) {
		size_t len = n - off < piece ? n - off : piece;

		if (write(sv[1], text + off, len) != (ssize_t)len)
			abort();
		off += len;
	}
	close(sv[1]);
	return sv[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_lines r;
	const uint8_t *text, *p, *end;
	const char *path;
	size_t n, lineno = 0, len;
	char *line, want_err[64];
	int fd, stream, got;

	fuzz_silence();
	if (size < 2)
		return -1;
	stream = data[0] & 1;
	text = data + 2;
	n = size - 2;
	if (stream) {
		fd = stream_of(text, n, 1 + (size_t)data[1] * 97);
	} else {
		fuzz_file(text, n, &path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	FUZZ_ASSERT(fd > 0, "no descriptor");
	FUZZ_ASSERT(!fb_lines_fdopen(&r, fd, LABEL), "fdopen refused: %s", fuzz_last_error);
	/* Line by line, what the text says should come. */
	for (p = text, end = text + n;; p += len + 1) {
		const uint8_t *nl = memchr(p, '\n', end - p);
		const uint8_t *want = p;
		size_t want_len;
		bool last = !nl, bad;

		if (p >= end)
			break;
		len = (nl ? nl : end) - p;
		lineno++;
		bad = len > FB_LINE_MAX || memchr(p, 0, len) || (last && stream);
		got = fb_lines_next(&r, &line, &want_len);
		if (bad) {
			FUZZ_ASSERT(got == -1, "line %zu (%zu bytes%s): returned %d, want an error",
				    lineno, len, last ? ", the last, no newline" : "", got);
			snprintf(want_err, sizeof(want_err), "%s:%zu: ", LABEL, lineno);
			FUZZ_ASSERT(!strncmp(fuzz_last_error, want_err, strlen(want_err)),
				    "line %zu: error '%s' names another place", lineno,
				    fuzz_last_error);
			fb_lines_close(&r);
			return 0;
		}
		FUZZ_ASSERT(got == 1, "line %zu: returned %d (%s)", lineno, got, fuzz_last_error);
		if (lineno == 1 && len >= 3 && !memcmp(want, "\xef\xbb\xbf", 3)) {
			want += 3;
			len -= 3;
			p += 3;
		}
		FUZZ_ASSERT(want_len == len && !memcmp(line, want, len) && !line[len],
			    "line %zu: %zu bytes back, %zu in the text, or others", lineno,
			    want_len, len);
		FUZZ_ASSERT(r.lineno == lineno, "line %zu: the reader says line %zu", lineno,
			    r.lineno);
		if (last)
			break;
	}
	got = fb_lines_next(&r, &line, &len);
	FUZZ_ASSERT(got == 0, "after the last line: returned %d", got);
	FUZZ_ASSERT(!fuzz_errors, "an error reported: %s", fuzz_last_error);
	fb_lines_close(&r);
	return 0;
}
