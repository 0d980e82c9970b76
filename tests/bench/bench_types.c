// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark 8 (`bench types`, issue 11): the filter types side by side at
 * equal false-positive rate, each made as `flowbloom create --capacity N
 * --fp-rate P` makes it and filled through fb_rules_add() as `add` does:
 * space (bits per flow as stored, and packed where the table pads cells),
 * the measured rate over 1M non-members against the formula, the load
 * reached before the first refusal (cuckoo, d-left), ns per packet through
 * the real program, and the seeds' space claims as ratios.
 */
#include "benchmark.h"
#include "types/cuckoo_table.h"
#include "types/dleft_table.h"
#include "types/ftype.h"

#define TY_FLOWS 100000U
#define TY_PROBES 1000000U
#define TY_HITS (1U << 16) /* hit packets cycle flows 0..2^16-1, all added */

enum { TY_BLOCKED, TY_CLASSIC, TY_COUNTING, TY_DLEFT, TY_CUCKOO, TY_N };

static const char *const ty_names[TY_N] = { "blocked Bloom", "classic Bloom",
					    "counting Bloom 4-bit", "d-left", "cuckoo" };

struct ty_row {
	double stored, packed; /* bits per flow */
	double fpr, formula, max_load;
	double full; /* packed bits per flow at the first refusal */
};

/* The options `create` builds for type t (see user/cli/cmd_create.c). */
static int ty_opts(int t, double p, struct fb_create_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hash = FB_HASH_SIPHASH13;
	o->action = FB_ACTION_DROP;
	o->capacity = TY_FLOWS;
	o->fp_rate = p;
	if (t == TY_DLEFT || t == TY_CUCKOO) {
		o->type = t == TY_DLEFT ? FB_TYPE_DLEFT : FB_TYPE_CUCKOO;
		return fb_ftype_size(o->type, TY_FLOWS, p, o->geom, &o->nblocks);
	}
	/* The counting filter classic, as the seeds' counting Bloom filter
	 * (`create --counting --counter-bits 4 --layout classic`). */
	o->layout = t == TY_BLOCKED ? FB_LAYOUT_BLOCKED : FB_LAYOUT_CLASSIC;
	o->counter_bits = t == TY_COUNTING ? 4 : 0;
	return o->layout == FB_LAYOUT_CLASSIC ? fb_size_classic(TY_FLOWS, p, &o->nblocks, &o->k)
					      : fb_size_blocked(TY_FLOWS, p, &o->nblocks, &o->k);
}

static bool ty_member(const struct fb_store *f, const struct fb_key *k)
{
	return fb_bits_test(f, k);
}

/* Space of the filter as laid out, and packed: counters of 4 bits only
 * (the seeds' counting Bloom filter), d-left cells of rem_bits + 2 bits,
 * cuckoo slots of fp_bits bits. */
static void ty_space(int t, const struct fb_store *f, struct ty_row *r)
{
	const void *g = &f->blocks[FB_TYPE_GEOM_BLOCK];
	double m = (double)f->hdr->nblocks * FB_BLOCK_BITS;

	if (t == TY_DLEFT) {
		const struct fb_dleft_geom *d = g;
		double cells = (double)FB_DLEFT_D * FB_DLEFT_CELLS * (1ULL << d->bucket_bits);

		r->stored = (double)fb_dleft_blocks(d) * FB_BLOCK_BITS / TY_FLOWS;
		r->packed = cells * (d->rem_bits + 2) / TY_FLOWS;
	} else if (t == TY_CUCKOO) {
		const struct fb_cuckoo_geom *c = g;

		r->stored = (double)fb_cuckoo_blocks(c) * FB_BLOCK_BITS / TY_FLOWS;
		r->packed = (double)FB_CUCKOO_SLOTS * c->nbuckets * c->fp_bits / TY_FLOWS;
	} else if (t == TY_COUNTING) {
		/* The fast-path bits plus the counter map user space keeps. */
		r->stored = (m + 8.0 * fb_counting_map_bytes((__u64)m, 4)) / TY_FLOWS;
		r->packed = 4 * m / TY_FLOWS;
	} else {
		r->stored = r->packed = m / TY_FLOWS;
	}
}

/* Add flows TY_FLOWS.. one at a time until the first refusal. */
static double ty_max_load(struct fb_store *f)
{
	struct fb_key key;
	size_t bad;
	__u32 i;

	for (i = TY_FLOWS; i < 16 * TY_FLOWS; i++) {
		fb_bench_flow(i, 0, &key);
		if (fb_rules_add(f, &key, 1, &bad))
			break;
	}
	return fb_ftype_load(f);
}

static void ty_one(int t, double p, struct ty_row *r)
{
	struct fb_create_opts o;
	struct fb_store f;
	struct fb_key *keys = malloc(TY_FLOWS * sizeof(*keys)), key;
	char label[64];
	size_t bad;
	__u32 i, fp = 0;

	if (!keys || ty_opts(t, p, &o) || fb_store_create("types", &o) ||
	    fb_store_open("types", &f)) {
		fprintf(stderr, "bench: cannot create a %s filter\n", ty_names[t]);
		exit(1);
	}
	for (i = 0; i < TY_FLOWS; i++)
		fb_bench_flow(i, 0, &keys[i]);
	if (fb_rules_add(&f, keys, TY_FLOWS, &bad)) {
		fprintf(stderr, "bench: %s: adding %u flows failed\n", ty_names[t], TY_FLOWS);
		exit(1);
	}
	free(keys);
	ty_space(t, &f, r);
	for (i = 0; i < TY_PROBES; i++) {
		fb_bench_flow(i | FB_BENCH_MISS, 0, &key);
		fp += ty_member(&f, &key);
	}
	r->fpr = (double)fp / TY_PROBES;
	r->formula = f.hdr->type ? fb_ftype_fpr(&f)
				 : fb_fpr(f.hdr->layout, TY_FLOWS, f.hdr->nblocks, f.hdr->k);
	snprintf(label, sizeof(label), "%s %g", ty_names[t], p);
	bench_flowbloom(label, &f, TY_HITS, 0);
	r->max_load = f.hdr->type ? ty_max_load(&f) : 0;
	/* Tables are powers of two: at capacity they are far from full, and
	 * below the rate asked; full, they show the type's own space. */
	r->full = f.hdr->type ? r->packed * TY_FLOWS / fb_ftype_items(&f) : 0;
	fb_store_close(&f);
	fb_store_destroy("types");
}

void bench_types(void)
{
	static const double rates[] = { 0.01, 0.001 };
	struct ty_row r[2][TY_N];
	int i, t;

	printf("\n8. filter types at equal fp rate, %u flows (v4), created as `create "
	       "--capacity %u --fp-rate P` does\n",
	       TY_FLOWS, TY_FLOWS);
	printf("ns per packet (BPF_PROG_TEST_RUN, %u packets)       kernel     wall\n", repeat);
	for (i = 0; i < 2; i++)
		for (t = 0; t < TY_N; t++)
			ty_one(t, rates[i], &r[i][t]);
	for (i = 0; i < 2; i++) {
		struct ty_row *c = r[i];

		printf("\nrate %g: bits per flow, fp rate over %u non-members, load at the first "
		       "refusal\n  (packed: counters, remainders, fingerprints only; full: packed "
		       "bits "
		       "per flow at that load)\n",
		       rates[i], TY_PROBES);
		printf("  %-22s %8s %8s %10s %10s %9s %9s\n", "type", "stored", "packed",
		       "measured", "formula", "max load", "full");
		for (t = 0; t < TY_N; t++) {
			printf("  %-22s %8.2f %8.2f %10.5f %10.5f", ty_names[t], c[t].stored,
			       c[t].packed, c[t].fpr, c[t].formula);
			if (c[t].max_load)
				printf(" %8.1f%% %9.2f\n", 100 * c[t].max_load, c[t].full);
			else
				printf(" %9s %9s\n", "-", "-");
		}
		printf("  d-left / counting Bloom:  %.2f packed, %.2f stored  (claim: ~0.5)\n",
		       c[TY_DLEFT].packed / c[TY_COUNTING].packed,
		       c[TY_DLEFT].stored / c[TY_COUNTING].stored);
		printf("  counting Bloom / cuckoo:  %.2fx packed, %.2fx stored  (claim: 3-4x)\n",
		       c[TY_COUNTING].packed / c[TY_CUCKOO].packed,
		       c[TY_COUNTING].stored / c[TY_CUCKOO].stored);
	}
}
