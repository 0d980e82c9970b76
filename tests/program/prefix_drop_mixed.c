// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_prefix, 4 and 6: a Spamhaus DROP-shaped list, and random mixed-family
 * lists with the border prefixes: families never mix in expansion.
 */
#include "prefix_test.h"

/* ------------------------------------------------ 4. DROP-shaped list */

#define N_DROP4 1500
#define N_DROP6 50

void drop_list(void)
{
	/* Lengths /11../24, weights per mille shaped like Spamhaus DROP. */
	static const struct {
		int len, w;
	} wt[] = { { 24, 400 }, { 22, 180 }, { 23, 100 }, { 21, 80 }, { 20, 70 },
		   { 19, 50 },	{ 16, 40 },  { 18, 30 },  { 17, 20 }, { 15, 12 },
		   { 14, 8 },	{ 13, 5 },   { 12, 3 },	  { 11, 2 } };
	struct pfx *p = calloc(N_DROP4 + N_DROP6, sizeof(*p));
	uint64_t seed = 0xd209;
	char p4[128], p6[128], err[128], l[256];
	struct fb_store f;
	struct prog pg = { 0 };
	FILE *o4, *o6;
	long missed;
	size_t i;
	double t0 = now(), t1;

	snprintf(p4, sizeof(p4), "%s/drop.txt", tmpdir);
	snprintf(p6, sizeof(p6), "%s/dropv6.txt", tmpdir);
	snprintf(err, sizeof(err), "%s/drop.err", tmpdir);
	o4 = fopen(p4, "w");
	o6 = fopen(p6, "w");
	fprintf(o4, "; Spamhaus DROP List 2025/01/01 - (c) 2025 The Spamhaus Project SLU\n"
		    "; https://www.spamhaus.org/drop/drop.txt\n"
		    "; Last-Modified: Wed, 01 Jan 2025 00:00:00 GMT\n"
		    "; Expires: Wed, 01 Jan 2025 01:00:00 GMT\n");
	fprintf(o6, "; Spamhaus IPv6 DROP List 2025/01/01 - (c) 2025 The Spamhaus Project SLU\n"
		    "; https://www.spamhaus.org/drop/dropv6.txt\n");
	for (i = 0; i < N_DROP4 + N_DROP6; i++) {
		char t[96];
		int len = 0;

		if (i < N_DROP4) {
			int r = test_rand64(&seed) % 1000, k;

			for (k = 0; r >= wt[k].w; k++)
				r -= wt[k].w;
			len = wt[k].len;
		} else {
			len = 29 + test_rand64(&seed) % 20; /* /29../48 */
		}
		rand_pfx(&seed, i < N_DROP4, len, &p[i]);
		pfx_text(&p[i], t, sizeof(t));
		fprintf(i < N_DROP4 ? o4 : o6, "%s ; SBL%06zu\n", t, 100000 + i * 7);
	}
	fclose(o4);
	fclose(o6);

	if (!ASSERT_EQ(sh("create drop --capacity 20000 --fp-rate 0.001 >/dev/null"), 0,
		       "DROP list: create"))
		goto out;
	t1 = now();
	ASSERT_EQ(sh("load drop %s %s >/dev/null 2>%s", p4, p6, err), 0,
		  "DROP list: load drop.txt and dropv6.txt in one call");
	printf("DROP list: %d + %d prefixes loaded in %.3f s (CLI, incl. process start)\n", N_DROP4,
	       N_DROP6, now() - t1);
	ASSERT_TRUE(strstr(slurp(err), "note: expanded"), "DROP list: stderr notes the expansion");
	if (fb_store_open("drop", &f))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "DROP list: load the program"))
		goto close;
	seed = 0xd20b;
	missed = check_inside(&pg, p, N_DROP4 + N_DROP6, N_INSIDE, &seed);
	snprintf(l, sizeof(l), "DROP list: %d packets from inside listed prefixes all drop",
		 N_INSIDE);
	ASSERT_EQ(missed, 0, l);
	missed = check_edges(&pg, p, N_DROP4 + N_DROP6, "DROP list");
	ASSERT_EQ(missed, 0, "DROP list: first and last address of every prefix drop");
	prog_unload(&pg);
	printf("DROP list: %.2f s\n", now() - t0);
close:
	fb_store_close(&f);
destroy:
	ASSERT_EQ(sh("destroy drop >/dev/null"), 0, "DROP list: destroy");
out:
	free(p);
}

/* ----------------------------------- 6. families never mix in expansion */

#define MIX_MAX 160
#define MIX_ROUNDS 4
#define MIX_OUTSIDE 4000

/* An IPv6 prefix from text (hex for ::ffff:0:0/96: IPv6 as written). */
static void pfx6(const char *text, struct pfx *p)
{
	char err[128];
	__u8 pl;

	if (fb_prefix_parse(text, p->a, &pl, &p->fam, err, sizeof(err)) ||
	    p->fam != FB_FAMILY_IPV6) {
		fprintf(stderr, "test bug: '%s' is not an IPv6 prefix\n", text);
		abort();
	}
	p->plen = pl;
}

/* A random address of family fam for the outside sample: IPv4 anywhere,
 * or IPv6 in 2000::/3, in ::ffff:0:0/96 (a v4-mapped source) or in ::/64. */
static void rand_addr(uint64_t *seed, __u8 fam, __u8 out[16])
{
	struct pfx all = { .fam = fam };
	int which = test_rand64(seed) % 3;

	memset(all.a, 0, 16);
	if (fam == FB_FAMILY_IPV4 || which == 1) {
		all.a[10] = all.a[11] = 0xff;
		all.plen = 96;
	} else if (which == 0) {
		all.a[0] = 0x20;
		all.plen = 3;
	} else {
		all.plen = 64;
	}
	rand_in(&all, seed, out);
}

/*
 * Random mixed lists: IPv4 prefixes of every length /1-/32 (and /0 in one
 * round), IPv6 prefixes of many lengths, and the prefixes at the family
 * border: ::/N for N < 96 (which cover ::ffff:0:0/96 numerically),
 * ::fffe:0:0/95 (expanding it to /96 makes ::ffff:0:0/96), ::ffff:0:0/96
 * and longer written in hex (IPv6 rules), 64:ff9b::/96, ::/0 in one round.
 * Each list has more than 4 lengths per family, so `load` expands both;
 * each round's IPv6 lengths lie in one window (the border cases where they
 * fall), since four lengths cannot cover /0 to /128 within the expansion
 * cap.
 * Then, through the real program: every listed prefix's first, last and
 * random addresses match as sources of a packet of the prefix's family,
 * and packets from outside every prefix of their own family (IPv4, IPv6,
 * IPv6 from v4-mapped sources) match no more often than the false-positive
 * rate says. And no length appears in a family's list that no prefix of
 * that family could have been expanded into.
 */
void mixed_families(void)
{
	static const char *const border[] = {
		"::/8",		 "::/40",
		"::/64",	 "::/80",
		"::/88",	 "::/94",
		"::fffe:0:0/95", "::ffff:0:0/96",
		"::ffff:0:0/97", "::ffff:c633:6400/120",
		"64:ff9b::/96",	 "::ffff:cb00:714d",
	};
	/* IPv6 lengths per round: high (the v4-mapped border), low, middle
	 * (with ::/0), and the v4-mapped /96 from below. */
	static const int len6[MIX_ROUNDS][8] = { { 88, 94, 95, 97, 100, 112, 120, 127 },
						 { 8, 12, 16, 20, 24, 29, 32, 32 },
						 { 36, 40, 44, 48, 52, 56, 60, 64 },
						 { 64, 68, 72, 76, 80, 84, 88, 96 } };
	static const int lo6[MIX_ROUNDS] = { 88, 0, 36, 64 }, hi6[MIX_ROUNDS] = { 128, 32, 64, 96 };
	struct pfx *p = calloc(MIX_MAX, sizeof(*p));
	uint64_t seed = 0x3a9ed;
	struct prog pg = { 0 };
	struct fb_store f;
	char path[128], l[256];
	double t0 = now();
	int round;

	if (!p || !ASSERT_EQ(sh("create mix --bits " BIG_BITS " --hashes 8 >/dev/null"), 0,
			     "mixed families: create a 1 MiB filter"))
		goto out;
	if (!ASSERT_EQ(fb_store_open("mix", &f), 0, "mixed families: open it"))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "mixed families: load the program"))
		goto close;
	snprintf(path, sizeof(path), "%s/mix.txt", tmpdir);
	for (round = 0; round < MIX_ROUNDS; round++) {
		struct fb_prefixes px;
		size_t n = 0, i;
		long miss = 0, fp = 0, sent[2] = { 0, 0 }, allowed;
		int min4 = 128, min6 = 128, j, e, bad_len = 0;
		unsigned probes;
		__u64 nflows;
		double rate;

		for (i = 0; i < 50; i++, n++) {
			int len = 1 + (int)(test_rand64(&seed) % 32);

			rand_pfx(&seed, 1, len, &p[n]);
			/* The short ones in 128.0.0.0/1: room outside below. */
			if (len < 8)
				p[n].a[12] |= 0x80;
		}
		if (round == 1)
			rand_pfx(&seed, 1, 0, &p[n++]); /* 0.0.0.0/0 */
		for (i = 0; i < 60; i++)
			rand_pfx(&seed, 0, len6[round][test_rand64(&seed) % 8], &p[n++]);
		for (i = 0; i < sizeof(border) / sizeof(border[0]); i++) {
			pfx6(border[i], &p[n]);
			if (p[n].plen >= lo6[round] && p[n].plen <= hi6[round])
				n++;
		}
		if (round == 2)
			pfx6("::/0", &p[n++]);
		for (i = 0; i < n; i++) {
			if (p[i].fam == FB_FAMILY_IPV4 && p[i].plen < min4)
				min4 = p[i].plen;
			if (p[i].fam == FB_FAMILY_IPV6 && p[i].plen < min6)
				min6 = p[i].plen;
		}
		write_list(path, "w", p, n, "");
		snprintf(l, sizeof(l), "mixed families, round %d: load %zu prefixes (expands)",
			 round, n);
		if (!ASSERT_EQ(sh("load mix %s --replace >/dev/null 2>&1", path), 0, l))
			continue;

		/* Lengths: each family's list holds only lengths its own
		 * prefixes expand into. */
		lengths_of("mix", &px, &nflows);
		for (j = 0; j < FB_PFX_NR; j++)
			for (e = 0; e < px.list[j].n; e++) {
				int len = px.list[j].len[e];
				bool v4 = j == FB_PFX_SRC4 || j == FB_PFX_DST4;

				if (j == FB_PFX_DST4 || j == FB_PFX_DST6 ||
				    len < (v4 ? min4 : min6))
					bad_len++;
			}
		snprintf(l, sizeof(l),
			 "mixed families, round %d: IPv4 lengths none below /%d, IPv6 none below "
			 "/%d, no destination list",
			 round, min4 - 96, min6);
		ASSERT_EQ(bad_len, 0, l);

		/* Inside: first, last and two random addresses of each. */
		for (i = 0; i < n; i++)
			for (e = 0; e < 4; e++) {
				const __u8 *o;
				__u8 a[16];
				__u32 kind;
				int v;

				if (e < 2)
					edge_of(&p[i], e, a);
				else
					rand_in(&p[i], &seed, a);
				o = other_of(a);
				v = send_pkt_fam(&pg, a, o, p[i].fam, &kind);
				if ((v != XDP_DROP || kind != FB_KIND_SRC) && miss++ < 5) {
					char t[96], at[64];

					pfx_text(&p[i], t, sizeof(t));
					inet_ntop(AF_INET6, a, at, sizeof(at));
					printf("  round %d: %s packet from %s inside %s: verdict "
					       "%d "
					       "kind %u\n",
					       round, p[i].fam ? "IPv6" : "IPv4", at, t, v, kind);
				}
			}
		snprintf(l, sizeof(l),
			 "mixed families, round %d: every prefix's edges and random addresses "
			 "match, in their own family",
			 round);
		ASSERT_EQ(miss, 0, l);

		/* Outside, both families, v4-mapped IPv6 sources among them. */
		for (i = 0; i < MIX_OUTSIDE * 20 && sent[0] + sent[1] < MIX_OUTSIDE; i++) {
			__u8 fam = i & 1 ? FB_FAMILY_IPV6 : FB_FAMILY_IPV4, a[16];
			const __u8 *o;
			bool inside = false;
			__u32 kind;
			size_t q;
			int v;

			rand_addr(&seed, fam, a);
			for (q = 0; q < n && !inside; q++)
				inside = ref_inside_fam(&p[q], a, fam);
			if (inside)
				continue;
			sent[fam == FB_FAMILY_IPV6]++;
			o = other_of(a);
			v = send_pkt_fam(&pg, a, o, fam, &kind);
			if (v == XDP_DROP || kind) {
				char at[64];

				if (fp++ < 5) {
					inet_ntop(AF_INET6, a, at, sizeof(at));
					printf("  round %d: %s packet from %s (outside) matched "
					       "(kind %u)\n",
					       round, fam ? "IPv6" : "IPv4", at, kind);
				}
			}
		}
		rate = expected_rate("mix", &probes);
		allowed = (long)(3 * rate * (sent[0] + sent[1])) + 2;
		snprintf(l, sizeof(l),
			 "mixed families, round %d: %ld IPv4 and %ld IPv6 packets from outside: "
			 "%ld matched (allowed %ld: rate %.2g per packet)",
			 round, sent[0], sent[1], fp, allowed, rate);
		/* 0.0.0.0/0 (round 1) and ::/0 (round 2) leave no outside. */
		ASSERT_TRUE(fp <= allowed && (sent[0] > 0 || round == 1) &&
				    (sent[1] > 0 || round == 2),
			    l);
	}
	printf("mixed families: %d rounds in %.1f s\n", MIX_ROUNDS, now() - t0);
	prog_unload(&pg);
close:
	fb_store_close(&f);
destroy:
	ASSERT_EQ(sh("destroy mix >/dev/null"), 0, "mixed families: destroy");
out:
	free(p);
}
