// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The compressed export's bits codec (fbz_rice.h): a Bloom filter's bits
 * are close to independent, so the gaps between its set bits are geometric
 * and a Golomb-Rice code of them (Golomb 1966; Rice 1979) comes within a
 * few percent of the entropy bound. One chunk at a time, encoder and
 * decoder; the stream around them is fbz.c's.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/fbz.h"
#include "fleet/fbz_rice.h"

struct bitw {
	unsigned char *p;
	size_t n, cap;
	__u64 acc;
	unsigned fill;
	bool over;
};

static void put_bits(struct bitw *w, __u64 v, unsigned nbits)
{
	while (nbits) {
		unsigned take = nbits < 64 - w->fill ? nbits : 64 - w->fill;

		w->acc |= (take == 64 ? v : v & ((1ULL << take) - 1)) << w->fill;
		w->fill += take;
		v = take == 64 ? 0 : v >> take;
		nbits -= take;
		while (w->fill >= 8) {
			if (w->n == w->cap) {
				w->over = true;
				return;
			}
			w->p[w->n++] = (unsigned char)w->acc;
			w->acc >>= 8;
			w->fill -= 8;
		}
	}
}

static void put_rice(struct bitw *w, __u64 g, unsigned r)
{
	__u64 q = g >> r;

	for (; q >= 32 && !w->over; q -= 32)
		put_bits(w, 0xffffffffULL, 32);
	put_bits(w, (1ULL << q) - 1, q); /* q ones */
	put_bits(w, 0, 1);
	put_bits(w, g, r);
}

static void flush_bits(struct bitw *w)
{
	if (w->fill && !w->over)
		put_bits(w, 0, 8 - w->fill % 8);
}

static int bit_at(const unsigned char *b, size_t i)
{
	return b[i >> 3] >> (i & 7) & 1;
}

/* The gaps between bits equal to want (1 or 0) in b (n bytes), and the
 * gap from the last one to the end; returns how many (at most n * 8 + 1). */
static size_t gaps_of(const unsigned char *b, size_t n, int want, __u32 *gap)
{
	__u64 prev = (__u64)-1;
	size_t i, k = 0;

	for (i = 0; i < n; i += 8) {
		__u64 word = 0;
		size_t take = n - i < 8 ? n - i : 8;

		memcpy(&word, b + i, take); /* little-endian: byte j is bits 8j.. */
		if (!want)
			word = ~word & (take == 8 ? ~0ULL : (1ULL << (8 * take)) - 1);
		while (word) {
			__u64 pos = i * 8 + __builtin_ctzll(word);

			gap[k++] = pos - prev - 1;
			prev = pos;
			word &= word - 1;
		}
	}
	gap[k++] = n * 8 - prev - 1; /* to the end */
	return k;
}

/* Rice's parameter for a geometric source of mean gap mean: the r with
 * 2^r nearest ln 2 * mean (Gallager and van Voorhis 1975 give the exact
 * Golomb rule; for Rice codes this is within one of the best, and the
 * encoder sizes its neighbours too). */
static unsigned rice_r(double mean)
{
	unsigned r = 0;

	while (r < 30 && (double)(1ULL << (r + 1)) <= 0.69314718 * mean + 1)
		r++;
	return r;
}

/* Encode one chunk: mode, r, payload into out (FB_FBZ_PAYLOAD_MAX); gap is
 * scratch for n * 8 + 1 values. Returns the payload's length. */
size_t fb_fbz_encode_chunk(const unsigned char *b, size_t n, unsigned char *out,
			   unsigned char *mode, unsigned char *rp, __u32 *gap)
{
	size_t ones = 0, i, k, best_bits = n * 8, r0, r;
	struct bitw w = { out, 0, FB_FBZ_PAYLOAD_MAX, 0, 0, 0 };
	int want, best_r = -1;

	for (i = 0; i + 8 <= n; i += 8) {
		__u64 word;

		memcpy(&word, b + i, 8);
		ones += __builtin_popcountll(word);
	}
	for (; i < n; i++)
		ones += __builtin_popcount(b[i]);
	want = ones * 2 <= n * 8; /* code the rarer value's positions */
	k = gaps_of(b, n, want, gap);
	/* Each value costs (g >> r) + 1 + r bits: size r0 and its neighbours,
	 * keep the best if it beats the chunk as it is. */
	r0 = rice_r((double)(n * 8 + 1) / k);
	for (r = r0 ? r0 - 1 : 0; r <= r0 + 1 && r <= 30; r++) {
		size_t bits = k * (1 + r);

		for (i = 0; i < k && bits < best_bits; i++)
			bits += gap[i] >> r;
		if (bits + 7 < best_bits) {
			best_bits = bits + 7;
			best_r = r;
		}
	}
	if (best_r < 0) {
		memcpy(out, b, n);
		*mode = FB_FBZ_MODE_RAW;
		*rp = 0;
		return n;
	}
	for (i = 0; i < k; i++)
		put_rice(&w, gap[i], best_r);
	flush_bits(&w);
	*mode = want ? FB_FBZ_MODE_ONES : FB_FBZ_MODE_ZEROS;
	*rp = best_r;
	return w.n; /* fits: its size was computed, and it is under n */
}

size_t fb_fbz_bits_size(const unsigned char *bits, size_t n)
{
	unsigned char out[FB_FBZ_PAYLOAD_MAX], mode, r;
	__u32 *gap = malloc((FB_FBZ_CHUNK * 8 + 1) * sizeof(*gap));
	size_t total = 0, i, take;

	if (!gap)
		return 0;
	for (i = 0; i < n; i += take) {
		take = n - i < FB_FBZ_CHUNK ? n - i : FB_FBZ_CHUNK;
		total += 6 + fb_fbz_encode_chunk(bits + i, take, out, &mode, &r, gap);
	}
	free(gap);
	return total;
}

struct bitr {
	const unsigned char *p;
	size_t n, pos; /* in bits */
};

/* The next Rice value, or -1 past the end of the payload. */
static long long get_rice(struct bitr *rd, unsigned r, __u64 limit)
{
	__u64 q = 0, v = 0;
	unsigned i;

	for (;;) {
		if (rd->pos >= rd->n * 8)
			return -1;
		if (!bit_at(rd->p, rd->pos++))
			break;
		if (++q > limit)
			return -1; /* longer than any gap in a chunk */
	}
	if (rd->pos + r > rd->n * 8)
		return -1;
	for (i = 0; i < r; i++)
		v |= (__u64)bit_at(rd->p, rd->pos++) << i;
	return (long long)(q << r | v);
}

/* Decode a chunk of n bytes of bits from its payload: NULL or why. */
const char *fb_fbz_decode_chunk(const unsigned char *pl, size_t len, int mode, unsigned r,
				unsigned char *out, size_t n)
{
	struct bitr rd = { pl, len, 0 };
	__u64 nbits = n * 8, pos = (__u64)-1;

	if (mode == FB_FBZ_MODE_RAW) {
		if (len != n)
			return "corrupt compressed chunk (length)";
		if (r) /* written 0: no byte of the file is ignored */
			return "corrupt compressed chunk (mode)";
		memcpy(out, pl, n);
		return NULL;
	}
	if ((mode != FB_FBZ_MODE_ONES && mode != FB_FBZ_MODE_ZEROS) || r > 30)
		return "corrupt compressed chunk (mode)";
	memset(out, mode == FB_FBZ_MODE_ONES ? 0 : 0xff, n);
	for (;;) {
		long long g = get_rice(&rd, r, nbits >> r);

		if (g < 0 || (__u64)g > nbits - (pos + 1))
			return "corrupt compressed chunk (a gap past its end)";
		pos += (__u64)g + 1;
		if (pos == nbits)
			break;
		out[pos >> 3] ^= 1 << (pos & 7);
	}
	/* Nothing but padding may follow, and the padding is zero bits (as
	 * written): a flipped bit anywhere in a chunk is refused here or, if
	 * it decodes to other bits, by the CRC, never ignored. */
	if ((rd.pos + 7) / 8 != len || (rd.pos % 8 && pl[len - 1] >> (rd.pos % 8)))
		return "corrupt compressed chunk (trailing payload)";
	return NULL;
}
