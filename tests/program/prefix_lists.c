// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_prefix, 2 and 3: list helpers, a random list loaded by the CLI (zero
 * false negatives, the false-positive rate), expansion exactness.
 */
#include "prefix_test.h"

/* ------------------------------------------------------- list helpers */

/* Write (or append) prefixes one a line, each followed by suffix. */
void write_list(const char *path, const char *mode, const struct pfx *p, size_t n,
		const char *suffix)
{
	FILE *out = fopen(path, mode);
	char t[96];
	size_t i;

	for (i = 0; i < n; i++) {
		pfx_text(&p[i], t, sizeof(t));
		fprintf(out, "%s%s\n", t, suffix);
	}
	fclose(out);
}

/* Every listed prefix: first and last address match as sources. Returns
 * the number that did not (and prints the first few). */
long check_edges(const struct prog *pg, const struct pfx *p, size_t n, const char *what)
{
	long missed = 0;
	size_t i;
	int e;

	for (i = 0; i < n; i++)
		for (e = 0; e < 2; e++) {
			__u8 a[16];
			__u32 kind;
			int v;

			edge_of(&p[i], e, a);
			v = send_pkt(pg, a, other_of(a), &kind);
			if (v != XDP_DROP || kind != FB_KIND_SRC) {
				char t[96], at[64];

				if (missed++ < 5) {
					pfx_text(&p[i], t, sizeof(t));
					addr_text(a, at, sizeof(at));
					printf("  %s: %s address %s of %s: verdict %d kind %u\n",
					       what, e ? "last" : "first", at, t, v, kind);
				}
			}
		}
	return missed;
}

/* n random addresses inside random listed prefixes: how many did not
 * match as sources. */
long check_inside(const struct prog *pg, const struct pfx *p, size_t np, long n, uint64_t *seed)
{
	long missed = 0, i;

	for (i = 0; i < n; i++) {
		const struct pfx *q = &p[test_rand64(seed) % np];
		__u8 a[16];
		__u32 kind;
		int v;

		rand_in(q, seed, a);
		v = send_pkt(pg, a, other_of(a), &kind);
		if (v != XDP_DROP || kind != FB_KIND_SRC) {
			if (missed++ < 5) {
				char t[96], at[64];

				pfx_text(q, t, sizeof(t));
				addr_text(a, at, sizeof(at));
				printf("  %s inside %s: verdict %d kind %u\n", at, t, v, kind);
			}
		}
	}
	return missed;
}

/* Expected per-packet false-positive rate of a filter as it is now. */
double expected_rate(const char *name, unsigned *probes)
{
	struct fb_store f;
	double r;

	if (fb_store_open(name, &f))
		return -1;
	*probes = fb_probes_per_packet(f.hdr->kinds, fb_store_prefixes(&f));
	r = fb_packet_rate(fb_fpr(f.hdr->layout, f.hdr->nflows, f.hdr->nblocks, f.hdr->k), *probes);
	fb_store_close(&f);
	return r;
}

/* Lengths per list of a filter, and the number of rules. */
void lengths_of(const char *name, struct fb_prefixes *px, __u64 *nflows)
{
	struct fb_store f;

	memset(px, 0, sizeof(*px));
	*nflows = 0;
	if (fb_store_open(name, &f))
		return;
	*px = *fb_store_prefixes(&f);
	*nflows = f.hdr->nflows;
	fb_store_close(&f);
}

bool has_len(const struct fb_lengths *l, int len)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->len[i] == len)
			return true;
	return false;
}

/* ------------------------------------- 2 and 3. random list, expansion */

#define N_RND4 100
#define N_RND6 100

void random_list(void)
{
	struct pfx p[N_RND4 + N_RND6];
	uint64_t seed = 0x9f1e57;
	char path[128], out[128], errf[128], l[256];
	struct fb_store f;
	struct prog pg = { 0 };
	struct fb_prefixes px;
	__u64 nflows;
	long missed, fp = 0, i;
	unsigned probes = 0;
	bool seen4[129] = { 0 }, seen6[129] = { 0 };
	int d4 = 0, d6 = 0, j;
	double want, t0 = now();

	for (i = 0; i < N_RND4; i++) {
		int len = 8 + test_rand64(&seed) % 23; /* /8../30 */

		rand_pfx(&seed, 1, len, &p[i]);
		d4 += !seen4[len];
		seen4[len] = true;
	}
	for (i = 0; i < N_RND6; i++) {
		int len = 16 + test_rand64(&seed) % 49; /* /16../64 */

		rand_pfx(&seed, 0, len, &p[N_RND4 + i]);
		d6 += !seen6[len];
		seen6[len] = true;
	}
	snprintf(l, sizeof(l), "random list: %d IPv4 and %d IPv6 lengths (> %d each)", d4, d6,
		 FB_MAX_LENGTHS);
	ASSERT_TRUE(d4 > FB_MAX_LENGTHS && d6 > FB_MAX_LENGTHS, l);
	snprintf(path, sizeof(path), "%s/random.txt", tmpdir);
	snprintf(out, sizeof(out), "%s/random.out", tmpdir);
	snprintf(errf, sizeof(errf), "%s/random.err", tmpdir);
	{
		/* Every other prefix written with host bits set: the loader
		 * masks them (198.51.100.7/24 is 198.51.100.0/24). */
		FILE *o = fopen(path, "w");

		for (i = 0; i < N_RND4 + N_RND6; i++) {
			char t[96];

			if (i & 1) {
				__u8 a[16];

				rand_in(&p[i], &seed, a);
				addr_text(a, t, sizeof(t));
				fprintf(o, "%s/%d\n", t, p[i].plen - (is_v4(a) ? 96 : 0));
			} else {
				pfx_text(&p[i], t, sizeof(t));
				fprintf(o, "%s\n", t);
			}
		}
		fclose(o);
	}

	if (!ASSERT_EQ(sh("create rnd --capacity 1000 --fp-rate 0.01 >/dev/null"), 0,
		       "random list: create (capacity 1000, 1%)"))
		return;
	ASSERT_EQ(sh("-j load rnd %s >%s 2>%s", path, out, errf), 0, "random list: flowbloom load");
	{
		char *o = slurp(out);
		double before = json_num(o, "prefixes_before_expansion"),
		       after = json_num(o, "prefixes_after_expansion");

		ASSERT_EQ(before, N_RND4 + N_RND6, "random list: 200 prefixes before expansion");
		ASSERT_TRUE(after > before, "random list: expanded into more prefixes");
		printf("random list: %.0f prefixes expanded into %.0f\n", before, after);
	}
	ASSERT_TRUE(strstr(slurp(errf), "note: expanded"),
		    "random list: stderr notes the expansion");
	lengths_of("rnd", &px, &nflows);
	for (j = 0; j < FB_PFX_NR; j++) {
		snprintf(l, sizeof(l), "random list: %s uses %u lengths (%d)",
			 fb_rules_prefix_list_name(j), px.list[j].n,
			 j == FB_PFX_SRC4 || j == FB_PFX_SRC6 ? FB_MAX_LENGTHS : 0);
		ASSERT_RANGE(px.list[j].n,
			     j == FB_PFX_SRC4 || j == FB_PFX_SRC6 ? FB_MAX_LENGTHS : 0,
			     j == FB_PFX_SRC4 || j == FB_PFX_SRC6 ? FB_MAX_LENGTHS : 0, l);
	}

	if (fb_store_open("rnd", &f))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "random list: load the program"))
		goto close;

	seed = 0x1a51de;
	missed = check_inside(&pg, p, N_RND4 + N_RND6, N_INSIDE, &seed);
	ASSERT_EQ(missed, 0, "random list: 10,000 addresses inside listed prefixes all match");
	missed = check_edges(&pg, p, N_RND4 + N_RND6, "random list");
	ASSERT_EQ(missed, 0,
		  "random list: first and last address of every prefix match after expansion");

	/* Re-sized for the list: the per-packet rate meets the target. */
	ASSERT_EQ(sh("-j load rnd %s --replace >%s 2>/dev/null", path, out), 0,
		  "random list: load --replace (re-sizes the filter)");
	want = expected_rate("rnd", &probes);
	snprintf(l, sizeof(l), "random list: expected per-packet rate %.4g (%u probes) <= 1%%",
		 want, probes);
	ASSERT_RANGE(want, 0, 0.01 * 1.0001, l);
	seed = 0x1a51de;
	missed = check_inside(&pg, p, N_RND4 + N_RND6, N_INSIDE, &seed);
	ASSERT_EQ(missed, 0, "random list: after --replace, 10,000 inside addresses all match");
	missed = check_edges(&pg, p, N_RND4 + N_RND6, "random list (replaced)");
	ASSERT_EQ(missed, 0, "random list: after --replace, every prefix's edges match");

	seed = 0x0075de;
	for (i = 0; i < N_OUTSIDE;) {
		struct pfx all = { .plen = (i & 1) ? 3 : 96,
				   .fam = (i & 1) ? FB_FAMILY_IPV6 : FB_FAMILY_IPV4 };
		__u8 a[16];
		__u32 kind;
		size_t q;
		bool inside = false;

		memset(all.a, 0, 16);
		if (i & 1)
			all.a[0] = 0x20;
		else
			all.a[10] = all.a[11] = 0xff;
		rand_in(&all, &seed, a);
		for (q = 0; q < N_RND4 + N_RND6 && !inside; q++)
			inside = ref_inside(&p[q], a);
		if (inside)
			continue;
		i++;
		send_pkt(&pg, a, other_of(a), &kind);
		fp += kind != 0;
	}
	snprintf(l, sizeof(l),
		 "random list: %ld of %d outside addresses match (rate %.4f), <= 3 x expected "
		 "%.4f + 0.001",
		 fp, N_OUTSIDE, (double)fp / N_OUTSIDE, want);
	ASSERT_RANGE((double)fp / N_OUTSIDE, 0, 3 * want + 0.001, l);
	printf("random list: outside match rate %.4f, expected per packet <= %.4f; %.2f s\n",
	       (double)fp / N_OUTSIDE, want, now() - t0);
	prog_unload(&pg);
close:
	fb_store_close(&f);
destroy:
	ASSERT_EQ(sh("destroy rnd >/dev/null"), 0, "random list: destroy");
}

/* A length that expansion must remove from a list (gone) and the one it
 * must expand into (kept), 128-bit space. */
struct len_check {
	int list, gone, kept;
};

/* Crafted lists whose expansion is known: the lengths it leaves, the rule
 * count, each prefix's edges and the addresses beside the prefixes. */
static void crafted(const char *name, const char *const *lines, size_t n, const char *const *beside,
		    const struct len_check *lc, size_t nlc, const char *what)
{
	char path[128], l[256];
	struct pfx p[64];
	struct fb_store f;
	struct fb_prefixes px;
	struct prog pg = { 0 };
	__u64 nflows;
	FILE *out;
	size_t i;
	long missed;

	snprintf(path, sizeof(path), "%s/%s.txt", tmpdir, name);
	out = fopen(path, "w");
	for (i = 0; i < n; i++) {
		char err[128];
		__u8 pl;

		fprintf(out, "%s\n", lines[i]);
		fb_prefix_parse(lines[i], p[i].a, &pl, &p[i].fam, err, sizeof(err));
		p[i].plen = pl;
	}
	fclose(out);
	snprintf(l, sizeof(l), "%s: create a 1 MiB filter", what);
	if (!ASSERT_EQ(sh("create %s --bits " BIG_BITS " --hashes 8 >/dev/null", name), 0, l))
		return;
	snprintf(l, sizeof(l), "%s: load (expands)", what);
	ASSERT_EQ(sh("load %s %s >/dev/null 2>&1", name, path), 0, l);
	lengths_of(name, &px, &nflows);
	for (i = 0; i < nlc; i++) {
		const struct fb_lengths *ls = &px.list[lc[i].list];
		int off = lc[i].list == FB_PFX_SRC4 ? 96 : 0;

		snprintf(l, sizeof(l), "%s: %s lengths: %d, /%d expanded into /%d", what,
			 fb_rules_prefix_list_name(lc[i].list), FB_MAX_LENGTHS, lc[i].gone - off,
			 lc[i].kept - off);
		ASSERT_TRUE(ls->n == FB_MAX_LENGTHS && !has_len(ls, lc[i].gone) &&
				    has_len(ls, lc[i].kept),
			    l);
	}
	snprintf(l, sizeof(l), "%s: %zu rules listed, %zu stored", what, n, n + nlc);
	ASSERT_EQ(nflows, n + nlc, l);
	if (fb_store_open(name, &f))
		goto destroy;
	if (!ASSERT_TRUE(prog_load(&pg, &f), "load the program"))
		goto close;
	missed = check_edges(&pg, p, n, what);
	snprintf(l, sizeof(l), "%s: first and last address of every prefix match", what);
	ASSERT_EQ(missed, 0, l);
	for (i = 0; beside && beside[i]; i++) {
		__u8 a[16];
		__u32 kind;
		int v;

		addr(beside[i], a);
		v = send_pkt(&pg, a, other_of(a), &kind);
		snprintf(l, sizeof(l), "%s: %s (beside a prefix) does not match", what, beside[i]);
		ASSERT_TRUE(v == XDP_PASS && kind == 0, l);
	}
	prog_unload(&pg);
close:
	fb_store_close(&f);
destroy:
	snprintf(l, sizeof(l), "%s: destroy", what);
	ASSERT_EQ(sh("destroy %s >/dev/null", name), 0, l);
}

void expansion(void)
{
	/* Five IPv4 lengths; the one /23 is the cheapest to expand (into
	 * two /24s: one extra rule; dropping /20 costs 3 x 7, /16 3 x 15,
	 * /24 a /32 per address). */
	static const char *const l23[] = {
		"10.1.0.0/16",	 "10.2.0.0/16",	  "10.3.0.0/16",     "10.16.0.0/20",
		"10.16.16.0/20", "10.16.32.0/20", "198.51.100.0/23", "203.0.113.0/24",
		"10.40.1.0/24",	 "10.40.2.0/24",  "10.40.3.0/24",    "10.40.4.0/24",
		"10.48.3.1",	 "10.48.3.2",	  "10.48.3.3",	     "10.48.3.4",
	};
	static const char *const b23[] = { "198.51.99.255", "198.51.102.0", "203.0.112.255",
					   "203.0.114.0", NULL };
	static const struct len_check c23[] = { { FB_PFX_SRC4, 96 + 23, 96 + 24 } };
	/* Five IPv4 lengths where the /31 is the cheapest to expand: into
	 * /32s (two addresses); and the same in IPv6, a /127 into /128s. */
	static const char *const l31[] = {
		"10.1.0.0/16",		"10.2.0.0/16",	      "10.3.0.0/16",
		"10.32.0.0/20",		"10.32.16.0/20",      "10.32.32.0/20",
		"10.34.0.0/24",		"10.34.1.0/24",	      "10.34.2.0/24",
		"203.0.113.1",		"203.0.113.2",	      "203.0.113.3",
		"198.51.100.10/31",	"2001:db8:1::/48",    "2001:db8:2::/48",
		"2001:db8:3::/48",	"2001:db8:5::/64",    "2001:db8:5:1::/64",
		"2001:db8:5:2::/64",	"2001:db8:7::/96",    "2001:db8:7::1:0:0/96",
		"2001:db8:7::2:0:0/96", "2001:db8:a::1",      "2001:db8:a::2",
		"2001:db8:a::3",	"2001:db8:b::10/127",
	};
	static const char *const b31[] = { "198.51.100.9", "198.51.100.12", "2001:db8:b::f",
					   "2001:db8:b::12", NULL };
	static const struct len_check c31[] = { { FB_PFX_SRC4, 96 + 31, 128 },
						{ FB_PFX_SRC6, 127, 128 } };
	double t0 = now();

	crafted("x23", l23, sizeof(l23) / sizeof(l23[0]), b23, c23, 1, "expansion /23 -> /24");
	crafted("x31", l31, sizeof(l31) / sizeof(l31[0]), b31, c31, 2,
		"expansion /31 -> /32, /127 -> /128");
	printf("expansion: %.2f s\n", now() - t0);
}
