// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The export reader's exact-set section (user/lib/fleet/fbx_read.c,
 * fb_fbx_read_rules), unit, no kernel. Its duplicate check is pipelined:
 * an entry is hashed as it arrives and looked up LAG (16) entries later,
 * so a duplicate must still be refused within those 16 entries (a stream
 * of one entry repeated is refused after a few hundred bytes, not at its
 * end, however many it claims), and what any refusal says must be what a
 * plain reader says (one that checks each entry as it arrives: the first
 * invalid entry, duplicate or short read, in order). The later qsort check
 * of the content (fbx_check.c) refuses duplicates with the same message:
 * only this suite sees a duplicate the pipeline missed.
 *
 * Each stream is read by fb_fbx_read_rules and by the plain reader below,
 * through a stdio stream that serves it a few bytes at a time and counts
 * them: the same result and message (the rules and CRC too when
 * accepted), the same bytes taken except after a duplicate (at most LAG
 * entries more), and the plain reader held to a model built with the
 * stream (which entry is the first problem). The streams: every distance
 * between two copies from 1 to 2 LAG + 2 (and far), the second copy at
 * the start, the middle and the end, with or without entries after it;
 * 20,000 random ones (duplicates at any distance with the same or another
 * count, invalid keys and counts, cuts at any byte, read errors, the
 * presize hint (in->nsets) absent, short, exact or over); large ones
 * (the table regrown several times); one entry repeated under a claim of
 * 2^28 entries; a count past the limit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <zlib.h>
#include "fleet/fbx.h"
#include "rules/flow.h"
#include "rules/rules.h"
#include "packet.h"
#include "testlib.h"

/* pool[]: MAXN distinct keys, the first NPOOL of every kind and family
 * (many a byte apart), the rest IPv6 flows. */
enum { LAG = 16, NPOOL = 4096, REC = FB_FBX_RULE_BYTES, MAXN = 200000 };

static struct fb_key pool[MAXN];
static uint64_t seed = 0x5ee2u;

/* --------------------------------------------------------------- input */

/* The bytes buf[0..len), chunk at most per read (0: any); past len, end
 * of file or (fail) a read error. pos: the bytes served. */
struct src {
	const unsigned char *buf;
	size_t len, pos, chunk;
	bool fail;
};

static ssize_t src_read(void *c, char *p, size_t n)
{
	struct src *s = c;

	if (s->pos >= s->len) {
		if (s->fail) {
			errno = EIO;
			return -1;
		}
		return 0;
	}
	if (n > s->len - s->pos)
		n = s->len - s->pos;
	if (s->chunk && n > s->chunk)
		n = s->chunk;
	memcpy(p, s->buf + s->pos, n);
	s->pos += n;
	return n;
}

/* Only where the stream is (ftell): the bytes the reader took are those
 * served less those stdio holds. */
static int src_seek(void *c, off64_t *off, int whence)
{
	struct src *s = c;

	if (whence != SEEK_CUR || *off)
		return -1;
	*off = s->pos;
	return 0;
}

/* ------------------------------------------------------- plain reader */

/* The plain reader's own hash of a key (its five words, mixed). */
static uint64_t key_hash(const struct fb_key *k)
{
	uint64_t h = 0;
	int i;

	for (i = 0; i < 5; i++) {
		h = (h ^ k->w[i]) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 32;
	}
	return h;
}

/* The reader the pipelined one must agree with: each entry read, checked
 * and looked up before the next (a table of index + 1, grown as needed). */
static int plain_read(struct fb_fbx_in *in)
{
	unsigned char rec[REC], num[8];
	size_t cap = 0, tsize = 0, j, i;
	size_t *tab = NULL;
	char why[200];
	int rc = 0;
	__u64 n, e;

	if (fb_fbx_rd(in, num, 8))
		return fb_fbx_short_read(in);
	n = fb_le_get64(num);
	if (n > FB_FBX_MAX_RULES)
		return fb_fbx_bad(in, "%llu exact-set entries (at most %u)", (unsigned long long)n,
				  FB_FBX_MAX_RULES);
	for (e = 0; e < n && !rc; e++) {
		struct fb_fbx_rule *r;

		if (fb_fbx_rd(in, rec, REC)) {
			rc = fb_fbx_short_read(in);
			break;
		}
		if (in->nrules == cap) {
			cap = cap ? 2 * cap : 64;
			in->rules = realloc(in->rules, cap * sizeof(*in->rules));
		}
		if (2 * (in->nrules + 1) > tsize) {
			size_t nt = tsize ? 2 * tsize : 128, *t = calloc(nt, sizeof(*t));

			for (i = 0; i < tsize; i++)
				if (tab[i]) {
					for (j = key_hash(&in->rules[tab[i] - 1].key) & (nt - 1);
					     t[j]; j = (j + 1) & (nt - 1))
						;
					t[j] = tab[i];
				}
			free(tab);
			tab = t;
			tsize = nt;
		}
		r = &in->rules[in->nrules++];
		memcpy(&r->key, rec, sizeof(r->key));
		r->count = fb_le_get32(rec + sizeof(r->key));
		if (fb_rules_valid(&r->key, why, sizeof(why))) {
			rc = fb_fbx_bad(in, "exact-set entry %llu: %s", (unsigned long long)e, why);
			break;
		}
		if (!r->count || r->count > FB_FBX_MAX_COUNT) {
			rc = fb_fbx_bad(in, "exact-set entry %llu: count %u (1 to %u)",
					(unsigned long long)e, r->count, FB_FBX_MAX_COUNT);
			break;
		}
		for (j = key_hash(&r->key) & (tsize - 1); tab[j]; j = (j + 1) & (tsize - 1))
			if (!memcmp(&in->rules[tab[j] - 1].key, &r->key, sizeof(r->key)))
				break;
		if (tab[j])
			rc = fb_fbx_bad(in, "an exact-set rule is listed twice");
		else
			tab[j] = in->nrules;
	}
	free(tab);
	return rc;
}

/* ------------------------------------------------------------ streams */

enum bad { BAD_NONE, BAD_COUNT0, BAD_COUNT_HIGH, BAD_KIND, BAD_FAMILY, BAD_NR };

/* A stream being built: n entries claimed, the pool keys in seq[] (bad
 * entry at bad, of kind badkind), counts, then 4 bytes (a CRC's place). */
struct stream {
	__u64 claim;
	size_t n, bad, cut; /* cut: bytes served */
	enum bad badkind;
	bool fail;
	size_t chunk;
	__u64 nsets;
	int seq[MAXN];
	__u32 count[MAXN];
};

static unsigned char sbuf[8 + (size_t)REC * MAXN + 4];

static size_t stream_bytes(const struct stream *s)
{
	size_t i;

	fb_le_put64(sbuf, s->claim);
	for (i = 0; i < s->n; i++) {
		unsigned char *p = sbuf + 8 + (size_t)REC * i;
		__u32 c = s->count[i];

		memcpy(p, &pool[s->seq[i]], sizeof(struct fb_key));
		if (i == s->bad)
			switch (s->badkind) {
			case BAD_COUNT0:
				c = 0;
				break;
			case BAD_COUNT_HIGH:
				c = FB_FBX_MAX_COUNT + 1 + (__u32)(test_rand64(&seed) % 3);
				break;
			case BAD_KIND:
				((struct fb_key *)p)->kind = 0x77;
				break;
			case BAD_FAMILY:
				((struct fb_key *)p)->family = 9;
				break;
			default:
				break;
			}
		fb_le_put32(p + sizeof(struct fb_key), c);
	}
	memset(sbuf + 8 + (size_t)REC * s->n, 0xa5, 4);
	return 8 + (size_t)REC * s->n + 4;
}

/* The model, from how the stream was built: what the plain reader says
 * ("ok", or a word of its message), the entries it holds then and the
 * bytes it took. */
static const char *model(const struct stream *s, size_t *held, size_t *pos)
{
	static unsigned last[MAXN], stamp;
	size_t i;

	*held = 0;
	*pos = s->cut;
	if (s->cut < 8)
		return s->fail ? "read error" : "truncated";
	*pos = 8;
	if (s->claim > FB_FBX_MAX_RULES)
		return "at most";
	stamp++;
	for (i = 0; i < s->claim; i++) {
		*held = i;
		*pos = 8 + (i + 1) * REC;
		if (i >= s->n || s->cut < *pos)
			return *pos = s->cut, s->fail ? "read error" : "truncated";
		*held = i + 1;
		if (i == s->bad && s->badkind != BAD_NONE)
			return s->badkind == BAD_KIND	  ? "unknown rule kind"
			       : s->badkind == BAD_FAMILY ? "unknown address family"
							  : "count";
		if (last[s->seq[i]] == stamp)
			return "listed twice";
		last[s->seq[i]] = stamp;
	}
	return "ok";
}

/* ------------------------------------------------------------ compare */

struct result {
	int rc;
	char why[256];
	size_t nrules;
	size_t pos; /* bytes taken (ftell) */
	unsigned long crc;
	struct fb_fbx_rule *rules;
};

static void run(int (*rd)(struct fb_fbx_in *), const struct stream *s, size_t len, struct result *o)
{
	cookie_io_functions_t io = { .read = src_read, .seek = src_seek };
	struct src in_src = { sbuf, len < s->cut ? len : s->cut, 0, s->chunk, s->fail };
	struct fb_fbx_in in;

	memset(&in, 0, sizeof(in));
	in.crc = crc32(0, NULL, 0);
	in.nsets = s->nsets;
	in.f = fopencookie(&in_src, "r", io);
	o->rc = rd(&in);
	o->pos = ftell(in.f);
	snprintf(o->why, sizeof(o->why), "%s", o->rc ? in.why : "");
	o->nrules = in.nrules;
	o->crc = in.crc;
	o->rules = in.rules;
	fclose(in.f);
}

static bool same_rules(const struct result *a, const struct result *b)
{
	size_t i;

	for (i = 0; i < a->nrules; i++)
		if (memcmp(&a->rules[i].key, &b->rules[i].key, sizeof(struct fb_key)) ||
		    a->rules[i].count != b->rules[i].count)
			return false;
	return true;
}

/* Failures by kind, the first of each described. */
enum { F_MODEL, F_SAME, F_LAG, F_HELD, F_NR };
static unsigned fails[F_NR], streams;
static char first[F_NR][512];

static void fail(int kind, const char *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(int kind, const char *ctx, const char *fmt, ...)
{
	va_list ap;
	int o;

	if (fails[kind]++)
		return;
	o = snprintf(first[kind], sizeof(first[kind]), "%s: ", ctx);
	va_start(ap, fmt);
	vsnprintf(first[kind] + o, sizeof(first[kind]) - o, fmt, ap);
	va_end(ap);
}

static void check_stream(const struct stream *s, const char *ctx)
{
	size_t len = stream_bytes(s), at, pos;
	const char *want = model(s, &at, &pos);
	struct result p, q;
	bool dup;

	streams++;
	run(plain_read, s, len, &p);
	run(fb_fbx_read_rules, s, len, &q);
	if ((!strcmp(want, "ok") ? p.rc != 0 : !p.rc || !strstr(p.why, want)) || p.nrules != at ||
	    p.pos != pos)
		fail(F_MODEL, ctx,
		     "plain reader rc %d '%s' holding %zu entries, %zu bytes taken; model '%s' "
		     "%zu, %zu",
		     p.rc, p.why, p.nrules, p.pos, want, at, pos);
	if (q.rc != p.rc || strcmp(q.why, p.why) ||
	    (!q.rc && (q.nrules != p.nrules || q.crc != p.crc || !same_rules(&q, &p))))
		fail(F_SAME, ctx, "reader rc %d '%s' (%zu rules), plain reader rc %d '%s' (%zu)",
		     q.rc, q.why, q.nrules, p.rc, p.why, p.nrules);
	/* Bytes taken: the plain reader's, or up to LAG entries more past
	 * a duplicate (never before it: the entry that makes it one). */
	dup = p.rc && strstr(p.why, "listed twice");
	if (dup ? q.pos < p.pos || q.pos > p.pos + (size_t)LAG * REC : q.pos != p.pos)
		fail(F_LAG, ctx, "reader took %zu bytes, plain reader %zu (%s)", q.pos, p.pos,
		     p.rc ? p.why : "accepted");
	if (q.nrules > p.nrules + (dup ? LAG : 0))
		fail(F_HELD, ctx, "reader held %zu entries, plain reader %zu", q.nrules, p.nrules);
	free(p.rules);
	free(q.rules);
}

static void report(const char *what)
{
	static const char *names[F_NR] = {
		"the plain reader agrees with the model",
		"the same result and message as the plain reader",
		"a duplicate refused within 16 entries; otherwise the same bytes taken",
		"no more than 16 entries held past the plain reader's",
	};
	char label[256];
	int k;

	for (k = 0; k < F_NR; k++) {
		snprintf(label, sizeof(label), "fbx_seen %s (%u streams): %s", what, streams,
			 names[k]);
		test_check(!fails[k], label, fails[k] ? first[k] : NULL);
	}
	memset(fails, 0, sizeof(fails));
	streams = 0;
}

/* ---------------------------------------------------------------- sets */

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct fb_key));
}

/* The pool: NPOOL keys parsed from text, then IPv6 flows numbered in
 * their source address (2001:db8::/96 + i, above any of the first). */
static void make_pool(void)
{
	static struct fb_key sorted[MAXN];
	char line[160], err[160];
	int i, blank, bad = 0;

	for (i = 0; i < NPOOL; i++) {
		int a = i & 255, b = i >> 8;

		switch (i % 6) {
		case 0:
			snprintf(line, sizeof(line), "udp 198.51.100.%d:%d 203.0.113.7:53", a,
				 1000 + b);
			break;
		case 1:
			snprintf(line, sizeof(line), "tcp [2001:db8::%x]:443 [2001:db8:1::%x]:%d",
				 a, b, 40000 + b);
			break;
		case 2:
			if (b)
				snprintf(line, sizeof(line), "dst 2001:db8:%x:%x::/%d", b, a,
					 64 + b % 3);
			else
				snprintf(line, sizeof(line), "dst 203.0.113.%d", a);
			break;
		case 3:
			snprintf(line, sizeof(line), "src 2001:db8:%x:%x::/64", a, b);
			break;
		case 4:
			snprintf(line, sizeof(line), "tcp 198.51.100.%d:%d 203.0.113.%d:80", a,
				 2000 + b, b);
			break;
		default:
			snprintf(line, sizeof(line), "dst 2001:db8:%x::%x", b, a);
			break;
		}
		if (fb_flow_parse_line(line, &pool[i], &blank, err, sizeof(err)) && !bad++)
			printf("bad test flow %s: %s\n", line, err);
	}
	for (; i < MAXN; i++) {
		pool[i] = pool[1];
		fb_le_put32(pool[i].saddr + 12, (__u32)i);
		if (fb_rules_valid(&pool[i], err, sizeof(err)) && !bad++)
			printf("bad test key %d: %s\n", i, err);
	}
	ASSERT_EQ(bad, 0, "fbx_seen: the key pool's keys are valid");
	memcpy(sorted, pool, sizeof(pool));
	qsort(sorted, MAXN, sizeof(sorted[0]), key_cmp);
	for (i = 1; i < MAXN; i++)
		if (!key_cmp(&sorted[i - 1], &sorted[i]))
			bad++;
	ASSERT_EQ(bad, 0, "fbx_seen: the key pool's keys are distinct");
}

static struct stream S;

/* n distinct entries (the first n of the pool) in random order, counts
 * 1..1000, served whole, no refusal planned. */
static void plain_stream(size_t n)
{
	size_t i;

	S.claim = S.n = n;
	S.cut = 8 + REC * n + 4;
	S.bad = (size_t)-1;
	S.badkind = BAD_NONE;
	S.fail = false;
	S.chunk = 0;
	S.nsets = 0;
	for (i = 0; i < n; i++)
		S.seq[i] = i;
	for (i = n; i-- > 1;) {
		size_t j = test_rand64(&seed) % (i + 1);
		int t = S.seq[i];

		S.seq[i] = S.seq[j];
		S.seq[j] = t;
	}
	for (i = 0; i < n; i++)
		S.count[i] = 1 + test_rand64(&seed) % 1000;
}

/* Two copies dist apart, the second at p, tail entries after it. */
static void test_distances(void)
{
	static const size_t far[] = { 100, 999 };
	static const size_t tails[] = { 0, 1, LAG - 1, LAG, LAG + 1, 3 * LAG, 500 };
	char ctx[128];
	size_t i, d, t, p;

	for (i = 0; i < 2 * LAG + 2 + sizeof(far) / sizeof(far[0]); i++)
		for (d = i < 2 * LAG + 2 ? i + 1 : far[i - 2 * LAG - 2], p = d; p < d + 2 * LAG + 3;
		     p += p < d + LAG + 2 ? 1 : 7)
			for (t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
				plain_stream(p + 1 + tails[t]);
				S.seq[p] = S.seq[p - d];
				S.count[p] = t & 1 ? S.count[p - d] : 7;
				S.nsets = t & 2 ? S.n : 0;
				snprintf(ctx, sizeof(ctx),
					 "distance %zu, second copy at %zu of %zu", d, p, S.n);
				check_stream(&S, ctx);
			}
	report("copies 1 to 999 entries apart");
}

static void test_random(void)
{
	char ctx[160];
	int t;

	for (t = 0; t < 20000; t++) {
		size_t n = 1 + test_rand64(&seed) % (t < 10000 ? 60 : 2000), i, len;
		int ndup = test_rand64(&seed) % 3;

		plain_stream(n);
		for (i = 0; i < (size_t)ndup && n > 1; i++) {
			size_t b = test_rand64(&seed) % n, a = test_rand64(&seed) % n;

			/* Mostly within 3 LAG entries before the other copy. */
			if (test_rand64(&seed) % 4) {
				size_t back = 1 + test_rand64(&seed) % (3 * LAG);

				a = back <= b ? b - back : b;
			}
			if (a != b) {
				S.seq[b] = S.seq[a];
				if (test_rand64(&seed) % 2)
					S.count[b] = S.count[a];
			}
		}
		if (test_rand64(&seed) % 3 == 0) {
			S.bad = test_rand64(&seed) % n;
			S.badkind = 1 + test_rand64(&seed) % (BAD_NR - 1);
		}
		len = 8 + REC * n + 4;
		if (test_rand64(&seed) % 3 == 0)
			S.cut = test_rand64(&seed) % (len + 1);
		S.fail = test_rand64(&seed) % 4 == 0;
		S.chunk = test_rand64(&seed) % 2 ? 0 : 1 + test_rand64(&seed) % 97;
		switch (test_rand64(&seed) % 4) {
		case 0:
			S.nsets = 0;
			break;
		case 1:
			S.nsets = n;
			break;
		default:
			S.nsets = test_rand64(&seed) % (2 * n + 1);
			break;
		}
		snprintf(ctx, sizeof(ctx),
			 "random stream %d (n %zu, %d copies, bad %zu kind %d, %zu of %zu bytes, "
			 "%s, presize %llu)",
			 t, n, ndup, S.bad, S.badkind, S.cut, len, S.fail ? "error" : "eof",
			 (unsigned long long)S.nsets);
		check_stream(&S, ctx);
	}
	report("random streams");
}

/* Past the table's first sizes (2^11 slots; grown to 2^19 by the end
 * unless sized at once), a duplicate early, late, or none. */
static void test_large(void)
{
	static const size_t ns[] = { 70000, MAXN };
	char ctx[128];
	size_t k;

	for (k = 0; k < 12; k++) {
		size_t n = ns[k % 2], p = 0, d = 1 + k;

		plain_stream(n);
		S.nsets = k % 3 == 0 ? n : k % 3 == 1 ? n / 3 : 0;
		if (k / 3 % 2 == 0) {
			p = k < 6 ? 1500 + k : n - 1 - k;
			S.seq[p] = S.seq[p - d];
		}
		if (p)
			snprintf(ctx, sizeof(ctx), "large stream %zu of %zu, second copy at %zu", k,
				 n, p);
		else
			snprintf(ctx, sizeof(ctx), "large stream %zu of %zu, no duplicate", k, n);
		check_stream(&S, ctx);
	}
	report("large streams");
}

/* Claims of 2^28 entries: one entry repeated (refused within LAG + 2
 * entries), a duplicate then a cut 9 entries later (the duplicate said);
 * a count past the limit; none. */
static void test_claims(void)
{
	plain_stream(4000);
	S.claim = FB_FBX_MAX_RULES;
	for (size_t i = 1; i < S.n; i++)
		S.seq[i] = S.seq[0];
	check_stream(&S, "one entry repeated under a claim of 2^28");
	plain_stream(4000);
	S.claim = FB_FBX_MAX_RULES;
	S.nsets = S.n;
	S.seq[3990] = S.seq[3000];
	S.cut = 8 + REC * 3999 + 5;
	check_stream(&S, "a claim of 2^28, a duplicate, cut short 9 entries later");
	plain_stream(10);
	S.claim = (__u64)FB_FBX_MAX_RULES + 1;
	check_stream(&S, "a count past the limit");
	plain_stream(0);
	check_stream(&S, "no entries");
	report("claims");
}

int main(void)
{
	make_pool();
	test_distances();
	test_random();
	test_large();
	test_claims();
	return test_summary();
}
