// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom bgp`'s input (user/lib/fleet/bgp.c, bgpmsg.c): ExaBGP JSON
 * messages, one a line, through fb_bgp_line() as the verb feeds them, the
 * filter simulated beside it: what add says enters it (or is refused, as a
 * full filter would, when the options byte asks), what del says leaves it.
 * The input: one options byte (bit 0 --rtbh src, bit 1 flush on session
 * down, bits 2-3 the --min-length pair, bit 4 the filter refuses each
 * line's first rule, bit 5 the filter is replaced before each odd line's
 * outcome is applied, the new array refusing the first rule added again,
 * as cmd_bgp's resync does it, bit 6 --max-paths 6), then the lines.
 *
 * What must hold: a malformed line changes nothing; add names rules the
 * filter lacks, that the route's family could make (fb_rules_valid), del
 * rules it holds; after each line the rules the paths hold are exactly the
 * simulated filter's, each held by a path, and no more paths held than
 * --max-paths lets (when bit 6 sets it); the state file written at the
 * end reads back into the same rules and paths, dropping none; --flush
 * deletes every rule.
 */
#include "fuzz.h"
#include "fleet/bgp.h"
#include "rules/rules.h"

#define MAX_RULES 4096
#define FUZZ_MAX_PATHS 6 /* --max-paths with bit 6 */

struct model {
	struct fb_key k[MAX_RULES];
	size_t n;
};

static ssize_t find(const struct model *m, const struct fb_key *k)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!memcmp(&m->k[i], k, sizeof(*k)))
			return (ssize_t)i;
	return -1;
}

static void on_note(void *ctx, const char *msg)
{
	(void)ctx;
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "note: %s\n", msg);
}

/* The paths' rules are the model's, each held. */
static void same_rules(const struct fb_bgp *b, const struct model *m, const char *when)
{
	struct fb_key *r;
	size_t n = fb_bgp_rules(b, &r), i;

	FUZZ_ASSERT(n == m->n, "%s: %zu rules held, %zu in the filter", when, n, m->n);
	for (i = 0; i < n; i++) {
		FUZZ_ASSERT(find(m, &r[i]) >= 0, "%s: a rule held that the filter lacks", when);
		FUZZ_ASSERT(fb_bgp_refs(b, &r[i]) > 0, "%s: a rule in the filter, no path", when);
	}
	free(r);
}

static void init(struct fb_bgp *b, unsigned flags)
{
	static const int mins[4][2] = { { 24, 48 }, { 0, 0 }, { 32, 128 }, { 8, 19 } };
	struct fb_bgp_opts o = { .community = FB_BGP_BLACKHOLE,
				 .rtbh_src = flags & 1,
				 .flush_on_down = flags & 2,
				 .min_v4 = mins[(flags >> 2) & 3][0],
				 .min_v6 = mins[(flags >> 2) & 3][1],
				 .max_paths = flags & 64 ? FUZZ_MAX_PATHS : 0 };

	if (fb_bgp_init(b, &o))
		abort();
	b->note = on_note;
	b->source = "fuzz";
}

/* The filter replaced (an empty new array) with a line's outcome waiting,
 * as bgpfilter.c's resync meets it: the rules in the old array are lost,
 * added again but the first (refused: its routes go whole), and the
 * line's additions a refused route took leave them. */
static void replaced(struct fb_bgp *b, struct model *m, size_t lineno)
{
	struct fb_key *keys;
	size_t n = fb_bgp_rules(b, &keys), i, j;

	if (!keys)
		abort();
	n = fb_bgp_lost(b, keys, n);
	if (n) {
		fb_bgp_refused(b, &keys[0], NULL, NULL);
		FUZZ_ASSERT(!fb_bgp_refs(b, &keys[0]), "line %zu: a rule refused again still held",
			    lineno);
	}
	for (i = j = 0; i < n; i++)
		if (fb_bgp_refs(b, &keys[i]))
			keys[j++] = keys[i];
	fb_bgp_added(b, keys, j);
	if (j > MAX_RULES)
		abort();
	memcpy(m->k, keys, j * sizeof(*keys));
	m->n = j;
	free(keys);
	for (i = j = 0; i < b->nadd; i++)
		if (fb_bgp_refs(b, &b->add[i]))
			b->add[j++] = b->add[i];
	b->nadd = j;
}

static void line(struct fb_bgp *b, struct model *m, const char *s, size_t len, size_t lineno,
		 bool refuse_first, bool replace)
{
	char why[256];
	ssize_t at;
	size_t i;
	int r = fb_bgp_line(b, s, len, lineno);

	FUZZ_ASSERT(!b->o.max_paths || b->npaths <= b->o.max_paths,
		    "line %zu: %zu paths held, past --max-paths %zu", lineno, b->npaths,
		    b->o.max_paths);
	if (r) {
		FUZZ_ASSERT(r == -1 && !b->nadd && !b->ndel && !b->changed,
			    "line %zu: refused (%d), yet %zu adds, %zu deletes, changed %d", lineno,
			    r, b->nadd, b->ndel, b->changed);
		return;
	}
	if (replace && lineno % 2)
		replaced(b, m, lineno);
	if (refuse_first && b->nadd) {
		/* Its routes are refused whole: their other parts' rules
		 * leave the additions (or, in the filter, join del). */
		size_t j;

		fb_bgp_refused(b, &b->add[0], NULL, NULL);
		FUZZ_ASSERT(!fb_bgp_refs(b, &b->add[0]), "line %zu: a refused rule still held",
			    lineno);
		b->add[0] = b->add[--b->nadd];
		for (i = j = 0; i < b->nadd; i++)
			if (fb_bgp_refs(b, &b->add[i]))
				b->add[j++] = b->add[i];
		b->nadd = j;
	}
	for (i = 0; i < b->ndel; i++) {
		at = find(m, &b->del[i]);
		FUZZ_ASSERT(at >= 0, "line %zu: deletes a rule the filter lacks", lineno);
		FUZZ_ASSERT(!fb_bgp_refs(b, &b->del[i]), "line %zu: deletes a held rule", lineno);
		m->k[at] = m->k[--m->n];
	}
	for (i = 0; i < b->nadd; i++) {
		FUZZ_ASSERT(!fb_rules_valid(&b->add[i], why, sizeof(why)),
			    "line %zu: adds an invalid rule: %s", lineno, why);
		FUZZ_ASSERT(find(m, &b->add[i]) < 0, "line %zu: adds a rule the filter holds",
			    lineno);
		FUZZ_ASSERT(fb_bgp_refs(b, &b->add[i]) > 0, "line %zu: adds a rule no path holds",
			    lineno);
		if (m->n == MAX_RULES)
			abort();
		m->k[m->n++] = b->add[i];
	}
	fb_bgp_done(b);
	same_rules(b, m, "after a line");
}

/* The state file read back: the same rules and paths, none dropped. */
static void state_round_trip(const struct fb_bgp *b, unsigned flags, const struct model *m)
{
	struct fb_bgp again;
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	if (!fp)
		abort();
	FUZZ_ASSERT(!fb_bgp_save(b, fp), "state: save failed");
	fclose(fp);
	init(&again, flags);
	fp = fmemopen(text, len, "r");
	if (!fp)
		abort();
	FUZZ_ASSERT(!fb_bgp_load(&again, fp, "fuzz-state"), "state: what was saved fails to load");
	fclose(fp);
	FUZZ_ASSERT(!again.ndel, "state: %zu rules dropped on loading", again.ndel);
	FUZZ_ASSERT(again.npaths == b->npaths, "state: %zu paths back of %zu", again.npaths,
		    b->npaths);
	same_rules(&again, m, "state read back");
	fb_bgp_free(&again);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model m;
	struct fb_bgp b;
	const char *p, *end, *nl;
	size_t lineno = 0, i;
	unsigned flags;

	fuzz_silence();
	if (size < 1)
		return -1;
	flags = data[0];
	init(&b, flags);
	m.n = 0;
	for (p = (const char *)data + 1, end = (const char *)data + size; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		line(&b, &m, p, nl - p, ++lineno, flags & 16, flags & 32);
	}
	state_round_trip(&b, flags, &m);
	fb_bgp_remove_all(&b);
	FUZZ_ASSERT(b.ndel == m.n && !b.nadd, "flush: deletes %zu of %zu rules", b.ndel, m.n);
	for (i = 0; i < b.ndel; i++)
		FUZZ_ASSERT(find(&m, &b.del[i]) >= 0, "flush: deletes a rule the filter lacks");
	fb_bgp_free(&b);
	return 0;
}
