// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * inet_ntop's text by hand (ntop.h): IPv4 dotted decimal; IPv6 as RFC
 * 5952 and glibc write it: groups in lower-case hex without leading
 * zeros, the first longest run of two or more zero groups as "::", and
 * the last 32 bits dotted when the first 96 are zero (IPv4-compatible,
 * ::a.b.c.d) or 0:0:0:0:0:ffff (v4-mapped, ::ffff:a.b.c.d). The test
 * (unit_flow.c) holds it to inet_ntop's own text.
 */
#include <string.h>
#include "rules/ntop.h"

static size_t put_dec(char *s, unsigned v)
{
	size_t n = 0;

	if (v >= 100)
		s[n++] = '0' + v / 100;
	if (v >= 10)
		s[n++] = '0' + v / 10 % 10;
	s[n++] = '0' + v % 10;
	return n;
}

size_t fb_ntop4(const __u8 a[4], char *out)
{
	size_t n = 0;
	int i;

	for (i = 0; i < 4; i++) {
		if (i)
			out[n++] = '.';
		n += put_dec(out + n, a[i]);
	}
	out[n] = 0;
	return n;
}

size_t fb_ntop6(const __u8 a[16], char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned w[8];
	int i, base = -1, len = 0, cb = -1, cl = 0;
	size_t n = 0;

	for (i = 0; i < 8; i++)
		w[i] = a[2 * i] << 8 | a[2 * i + 1];
	/* The first longest run of zero groups, of two or more. */
	for (i = 0; i < 8; i++) {
		if (!w[i]) {
			if (cb < 0)
				cb = i, cl = 0;
			if (++cl > len && cl >= 2)
				base = cb, len = cl;
		} else {
			cb = -1;
		}
	}
	for (i = 0; i < 8; i++) {
		if (base >= 0 && i >= base && i < base + len) {
			if (i == base)
				out[n++] = ':';
			continue;
		}
		if (i)
			out[n++] = ':';
		if (i == 6 && base == 0 && (len == 6 || (len == 5 && w[5] == 0xffff)))
			return n + fb_ntop4(a + 12, out + n);
		if (w[i] >= 0x1000)
			out[n++] = hex[w[i] >> 12];
		if (w[i] >= 0x100)
			out[n++] = hex[w[i] >> 8 & 15];
		if (w[i] >= 0x10)
			out[n++] = hex[w[i] >> 4 & 15];
		out[n++] = hex[w[i] & 15];
	}
	if (base >= 0 && base + len == 8)
		out[n++] = ':';
	out[n] = 0;
	return n;
}
