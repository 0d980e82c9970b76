// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Captures as `replay` reads them (user/lib/rules/pcapfile.c, on libpcap):
 * the fuzzer's bytes as a file, opened with fb_pcap_open() and read to
 * the end with fb_pcap_next() twice, into a buffer of replay's size and
 * into one of SMALL bytes (each allocated to its exact size, so that a
 * write past it is AddressSanitizer's). Seeds: small captures of tcpdump's
 * test suite (classic pcap, both byte orders), nanosecond pcap, pcapng and
 * other link types.
 *
 * What must hold: a refused file is one error naming it ("FILE: why"); a
 * read error one naming the file and the record ("FILE: record N: why",
 * N the records read before it and one); the end is quiet. A frame is at
 * most the buffer's size, said cut exactly when the record did not fit;
 * its bytes are the file's (whole, or after a made-up Ethernet header of
 * 14 bytes for other link types). Both reads give the same records and end
 * alike; the small read's frames are the first bytes of the large read's.
 * A file of N bytes gives at most N / 16 records.
 */
#include "fuzz.h"
#include "rules/pcapfile.h"

#define LARGE (65535 + 14 + 8) /* replay's FB_TEST_RUN_MAX */
#define SMALL 64
#define ETH_HLEN 14

struct rec {
	size_t len;
	int cut, truncated;
};

struct pass {
	struct rec *recs;
	unsigned char **frames;
	size_t n;
	int end; /* 0 at the end, -1 after a read error */
	char error[1024];
};

/* The frame's bytes come from the file. */
static int from_file(const uint8_t *data, size_t size, const unsigned char *f, size_t len)
{
	if (!len)
		return 1;
	if (memmem(data, size, f, len))
		return 1;
	return len >= ETH_HLEN &&
	       (len == ETH_HLEN || memmem(data, size, f + ETH_HLEN, len - ETH_HLEN));
}

static int names_record(const char *msg, const char *path, size_t record)
{
	char head[128];

	snprintf(head, sizeof(head), "%s: record %zu: ", path, record);
	return !strncmp(msg, head, strlen(head)) && msg[strlen(head)];
}

static void read_all(const uint8_t *data, size_t size, const char *path, size_t cap,
		     struct pass *ps)
{
	struct fb_pcap *p = fb_pcap_open(path);
	size_t max = size / 16 + 1, len;
	unsigned char *buf = malloc(cap);
	int cut, v;

	if (!buf)
		abort();
	memset(ps, 0, sizeof(*ps));
	if (!p) {
		FUZZ_ASSERT(fuzz_errors == 1, "refused with %u errors", fuzz_errors);
		FUZZ_ASSERT(!strncmp(fuzz_last_error, path, strlen(path)) &&
				    fuzz_last_error[strlen(path)] == ':',
			    "refusal does not name the file: %s", fuzz_last_error);
		ps->end = -2;
		snprintf(ps->error, sizeof(ps->error), "%s", fuzz_last_error);
		free(buf);
		return;
	}
	FUZZ_ASSERT(!fuzz_errors, "opened, with an error: %s", fuzz_last_error);
	ps->recs = calloc(max, sizeof(*ps->recs));
	ps->frames = calloc(max, sizeof(*ps->frames));
	if (!ps->recs || !ps->frames)
		abort();
	while ((v = fb_pcap_next(p, buf, cap, &len, &cut)) == 1) {
		struct rec *r;

		FUZZ_ASSERT(ps->n < max, "more than %zu records from %zu bytes", max, size);
		FUZZ_ASSERT(!fuzz_errors, "record %zu read, with an error: %s", ps->n + 1,
			    fuzz_last_error);
		FUZZ_ASSERT(len <= cap, "record %zu: %zu bytes into %zu", ps->n + 1, len, cap);
		FUZZ_ASSERT(cut == 0 || cut == 1, "record %zu: cut %d", ps->n + 1, cut);
		FUZZ_ASSERT(!cut || len == cap, "record %zu: cut at %zu of %zu", ps->n + 1, len,
			    cap);
		FUZZ_ASSERT(from_file(data, size, buf, len), "record %zu: %zu bytes not the file's",
			    ps->n + 1, len);
		r = &ps->recs[ps->n];
		r->len = len;
		r->cut = cut;
		r->truncated = fb_pcap_truncated(p);
		FUZZ_ASSERT(r->truncated == 0 || r->truncated == 1, "truncated %d", r->truncated);
		{
			unsigned int caplen, wire;
			int over = fb_pcap_overlong(p, &caplen, &wire);

			/* More bytes than on the wire: given at the wire length
			 * (a made-up Ethernet header at most added). */
			FUZZ_ASSERT(!over || (caplen > wire && !r->truncated &&
					      len <= (size_t)wire + 14),
				    "record %zu: overlong %u of %u, %zu given", ps->n + 1, caplen,
				    wire, len);
		}
		ps->frames[ps->n] = malloc(len + 1);
		if (!ps->frames[ps->n])
			abort();
		memcpy(ps->frames[ps->n], buf, len);
		ps->n++;
	}
	FUZZ_ASSERT(v == 0 || v == -1, "fb_pcap_next returned %d", v);
	ps->end = v;
	if (v == 0) {
		FUZZ_ASSERT(!fuzz_errors, "the end, with an error: %s", fuzz_last_error);
	} else {
		FUZZ_ASSERT(fuzz_errors == 1, "read error with %u errors", fuzz_errors);
		FUZZ_ASSERT(names_record(fuzz_last_error, path, ps->n + 1),
			    "read error after %zu records: %s", ps->n, fuzz_last_error);
		snprintf(ps->error, sizeof(ps->error), "%s", fuzz_last_error);
	}
	fb_pcap_close(p);
	free(buf);
}

static void pass_free(struct pass *ps)
{
	size_t i;

	for (i = 0; ps->frames && i < ps->n; i++)
		free(ps->frames[i]);
	free(ps->frames);
	free(ps->recs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pass large, small;
	const char *path;
	size_t i;

	fuzz_file(data, size, &path);
	fuzz_silence();
	read_all(data, size, path, LARGE, &large);
	fuzz_silence();
	read_all(data, size, path, SMALL, &small);
	FUZZ_ASSERT(large.end == small.end && large.n == small.n &&
			    !strcmp(large.error, small.error),
		    "large read: %zu records, end %d '%s'; small: %zu, end %d '%s'", large.n,
		    large.end, large.error, small.n, small.end, small.error);
	for (i = 0; i < large.n; i++) {
		const struct rec *l = &large.recs[i], *s = &small.recs[i];

		FUZZ_ASSERT(s->truncated == l->truncated, "record %zu: truncated %d and %d", i + 1,
			    l->truncated, s->truncated);
		FUZZ_ASSERT(s->len == (l->len < SMALL ? l->len : SMALL) &&
				    s->cut == (l->len > SMALL || l->cut),
			    "record %zu: %zu bytes%s, small %zu%s", i + 1, l->len,
			    l->cut ? " cut" : "", s->len, s->cut ? " cut" : "");
		FUZZ_ASSERT(!memcmp(small.frames[i], large.frames[i], s->len),
			    "record %zu: the small read's bytes differ", i + 1);
	}
	pass_free(&large);
	pass_free(&small);
	return 0;
}
