// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A new filter's settings from create's parameters (user/lib/types/
 * create.c), what `create` and `apply` both call: the geometry is the
 * sizing formula's, combinations that do not go together are usage
 * errors, sizes beyond the largest filter and confirm on ip link's filter
 * are refusals, and the hash defaults by action.
 */
#include "unit.h"
#include "types/create.h"
#include "types/ftype.h"
#include "util.h"

/* r's outcome, and (0) o. */
static int make(const struct fb_create_req *r, struct fb_create_opts *o)
{
	char why[256];

	return fb_create_opts_make(r, o, why, sizeof(why));
}

static void check_usage(struct fb_create_req r, const char *label)
{
	struct fb_create_opts o;

	ASSERT_EQ(make(&r, &o), FB_CREATE_USAGE, label);
}

/* By rate, a blocked filter gets the cheaper of the probe's two fast k
 * (4, then 8) that meets the rate in its whole chunks, else the sized k;
 * the rate at capacity is the asked one or lower either way. */
static void check_fast_k(void)
{
	static const struct {
		unsigned long long n;
		double p;
		unsigned k; /* 0: the sized k */
	} c[] = {
		{ 2508, 0.01, 4 },     /* a small list: one chunk, 80 times the bits asked */
		{ 50000, 0.01, 4 },    /* 0.5 Mbit asked, 2 Mbit given */
		{ 100000, 0.01, 8 },   /* 1 Mbit asked: k = 4 would give 1.2 % */
		{ 10000000, 0.01, 8 }, /* sized to the chunk: k = 4 misses the rate */
		{ 2508, 1e-9, 8 },     /* a tight rate in one chunk */
		{ 50000, 1e-6, 0 },    /* neither fast k reaches it: k = 16 */
	};
	struct fb_create_opts o;
	unsigned i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct fb_create_req r = { .type = -1,
					   .have_capacity = true,
					   .have_fp_rate = true,
					   .capacity = c[i].n,
					   .fp_rate = c[i].p };
		__u32 nblocks;
		__u8 k;
		char label[160];

		snprintf(label, sizeof(label), "create %llu at %g: blocked, k = %u", c[i].n, c[i].p,
			 c[i].k);
		if (!ASSERT_EQ(make(&r, &o), 0, label) ||
		    !ASSERT_EQ(fb_size_blocked(c[i].n, c[i].p, &nblocks, &k), 0, label))
			continue;
		ASSERT_EQ(o.k, c[i].k ? c[i].k : k, label);
		snprintf(label, sizeof(label), "create %llu at %g: rate at capacity %g <= asked",
			 c[i].n, c[i].p, fb_fpr_blocked(c[i].n, o.nblocks, o.k));
		ASSERT_TRUE(fb_fpr_blocked(c[i].n, o.nblocks, o.k) <= c[i].p, label);
	}
	/* Bits and hashes are taken as given. */
	{
		struct fb_create_req r = { .type = -1,
					   .have_bits = true,
					   .have_hashes = true,
					   .bits = 1 << 21,
					   .hashes = 7 };

		ASSERT_TRUE(make(&r, &o) == 0 && o.k == 7, "create --bits --hashes 7: k = 7 kept");
	}
}

/* Compact (--compact): over a grid of sizes and rates, both layouts, the
 * bits are whole pages, meet the rate, take no more chunks than the
 * default would and never more bits; a blocked filter whose k = 4 size
 * takes no more chunks gets k = 4 and the fewest pages that meet the rate
 * with it. Bits and hashes: whole pages, k as given; a table type refuses
 * it. */
static void check_compact(void)
{
	static const unsigned long long ns[] = { 1, 100, 2508, 50000, 1000000, 10000000 };
	static const double ps[] = { 0.5, 0.01, 1e-4, 1e-6, 1e-9 };
	unsigned i, j, layout, bad = 0, k4 = 0, cases = 0;
	char label[200] = "";

	for (layout = FB_LAYOUT_BLOCKED; layout <= FB_LAYOUT_CLASSIC; layout++)
		for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
			for (j = 0; j < sizeof(ps) / sizeof(ps[0]); j++) {
				struct fb_create_req r = { .type = -1,
							   .layout = layout,
							   .have_capacity = true,
							   .have_fp_rate = true,
							   .capacity = ns[i],
							   .fp_rate = ps[j] };
				struct fb_create_opts d, c;
				double rate;
				bool ok;

				if (make(&r, &d))
					continue; /* too big either way */
				r.compact = true;
				if (make(&r, &c)) {
					snprintf(label, sizeof(label), "compact %llu at %g: made",
						 ns[i], ps[j]);
					bad++;
					continue;
				}
				cases++;
				rate = layout == FB_LAYOUT_CLASSIC
					       ? fb_fpr_classic(ns[i],
								fb_header_mbits(&(struct fb_header){
									.layout = layout,
									.nblocks = c.nblocks }),
								c.k)
					       : fb_fpr_blocked(ns[i], c.nblocks, c.k);
				ok = c.compact && c.nblocks % FB_PAGE_BLOCKS == 0 &&
				     rate <= ps[j] && c.nblocks <= d.nblocks &&
				     fb_chunks_for(c.nblocks) <= fb_chunks_for(d.nblocks);
				if (layout == FB_LAYOUT_BLOCKED && c.k == FB_FAST_K_LO) {
					k4++;
					ok = ok &&
					     (c.nblocks == FB_PAGE_BLOCKS ||
					      fb_fpr_blocked(ns[i], c.nblocks - FB_PAGE_BLOCKS,
							     FB_FAST_K_LO) > ps[j]);
				}
				if (!ok) {
					snprintf(label, sizeof(label),
						 "compact %llu at %g, layout %u: %u blocks k %u "
						 "rate %g "
						 "(default %u blocks)",
						 ns[i], ps[j], layout, c.nblocks, c.k, rate,
						 d.nblocks);
					bad++;
				}
			}
	ASSERT_EQ(bad, 0,
		  bad ? label : "compact: whole pages, the rate met, no more than the default");
	ASSERT_TRUE(cases > 40 && k4 > 5, "compact: the grid made filters, some with k = 4");
	{
		struct fb_create_req r = { .type = -1,
					   .have_capacity = true,
					   .have_fp_rate = true,
					   .capacity = 2508,
					   .fp_rate = 0.01,
					   .compact = true };
		struct fb_create_opts o;

		ASSERT_TRUE(make(&r, &o) == 0 && o.k == FB_FAST_K_LO &&
				    o.nblocks == 2 * FB_PAGE_BLOCKS,
			    "compact 2508 at 1 %: k = 4 in two pages");
		r = (struct fb_create_req){ .type = -1,
					    .have_bits = true,
					    .have_hashes = true,
					    .bits = 100000,
					    .hashes = 3,
					    .compact = true };
		ASSERT_TRUE(make(&r, &o) == 0 && o.k == 3 && o.nblocks == 4 * FB_PAGE_BLOCKS,
			    "compact --bits 100000 --hashes 3: four pages, k = 3");
		r = (struct fb_create_req){ .type = fb_ftype_by_name("cuckoo"),
					    .have_capacity = true,
					    .have_fp_rate = true,
					    .capacity = 1000,
					    .fp_rate = 0.01,
					    .compact = true };
		check_usage(r, "compact cuckoo: usage");
	}
}

void test_create_opts(void)
{
	struct fb_create_req r = { .type = -1,
				   .have_capacity = true,
				   .have_fp_rate = true,
				   .capacity = 100000,
				   .fp_rate = 0.001 };
	struct fb_create_opts o;
	char why[256];
	__u32 nblocks;
	__u8 k;

	ASSERT_EQ(make(&r, &o), 0, "create: capacity and rate");
	ASSERT_EQ(fb_size_blocked(100000, 0.001, &nblocks, &k), 0, "create: blocked sizing");
	ASSERT_TRUE(o.nblocks == fb_whole_chunks(nblocks) &&
			    o.k == fb_blocked_fast_k(100000, 0.001, o.nblocks, k) &&
			    o.bits_asked == (__u64)nblocks * FB_BLOCK_BITS,
		    "create: the blocked formula's geometry, in whole chunks");
	check_fast_k();
	check_compact();
	ASSERT_TRUE(o.layout == FB_LAYOUT_BLOCKED && o.action == FB_ACTION_DROP &&
			    o.type == FB_TYPE_BLOOM && o.capacity == 100000 && o.fp_rate == 0.001,
		    "create: defaults blocked, drop, Bloom; capacity and rate kept");
	ASSERT_EQ(o.hash, fb_hash_default(FB_ACTION_DROP), "create: drop's default hash");
	r.layout = FB_LAYOUT_CLASSIC;
	r.action = FB_ACTION_ALLOW;
	r.counter_bits = 8;
	ASSERT_EQ(make(&r, &o), 0, "create: classic, allow, 8-bit counters");
	ASSERT_EQ(fb_size_classic(100000, 0.001, &nblocks, &k), 0, "create: classic sizing");
	ASSERT_TRUE(o.nblocks == fb_whole_chunks(nblocks) && o.k == k && o.counter_bits == 8,
		    "create: the classic formula's geometry in whole chunks, counters kept");
	ASSERT_EQ(o.hash, fb_hash_default(FB_ACTION_ALLOW), "create: allow's default hash");
	ASSERT_EQ(fb_create_bytes(&o) >
			  (unsigned long long)fb_chunks_for(o.nblocks) * FB_CHUNK_BYTES,
		  1, "create: counters count in the bytes");

	r = (struct fb_create_req){ .type = -1,
				    .have_bits = true,
				    .have_hashes = true,
				    .bits = 1000,
				    .hashes = 3,
				    .hash = FB_HASH_SIPHASH24 };
	ASSERT_EQ(make(&r, &o), 0, "create: bits and hashes");
	ASSERT_TRUE(o.nblocks == fb_whole_chunks(2) && o.bits_asked == 2 * FB_BLOCK_BITS &&
			    o.k == 3 && o.capacity == 0 && o.hash == FB_HASH_SIPHASH24,
		    "create: bits rounded up to whole blocks, then whole chunks, the hash asked "
		    "for");
	ASSERT_EQ(fb_create_bytes(&o),
		  (unsigned long long)fb_chunks_for(o.nblocks) * FB_CHUNK_BYTES,
		  "create: bytes of a plain filter: its chunks");

	r.have_capacity = true;
	r.capacity = 10;
	check_usage(r, "create: capacity with bits: usage");
	r = (struct fb_create_req){ .type = -1, .have_capacity = true, .capacity = 10 };
	check_usage(r, "create: capacity without rate: usage");
	r = (struct fb_create_req){ .type = -1, .have_bits = true, .bits = 10 };
	check_usage(r, "create: bits without hashes: usage");
	r = (struct fb_create_req){ .type = -1 };
	check_usage(r, "create: no geometry: usage");
	r = (struct fb_create_req){ .type = -1,
				    .have_bits = true,
				    .have_hashes = true,
				    .bits = 10,
				    .hashes = FB_MAX_K + 1 };
	check_usage(r, "create: too many hashes: usage");
	r = (struct fb_create_req){ .type = -1,
				    .have_capacity = true,
				    .have_fp_rate = true,
				    .capacity = 10,
				    .fp_rate = 1 };
	check_usage(r, "create: rate 1: usage");
	r.fp_rate = 0.01;
	r.capacity = 0;
	check_usage(r, "create: capacity 0: usage");
	r.capacity = 1000000000000ULL;
	ASSERT_EQ(fb_create_opts_make(&r, &o, why, sizeof(why)), FB_CREATE_TOO_BIG,
		  "create: beyond the largest filter: too big");
	ASSERT_TRUE(strstr(why, "needs more than 512 MiB") != NULL, "create: ... says the limit");

	r = (struct fb_create_req){ .type = fb_ftype_by_name("cuckoo"),
				    .have_capacity = true,
				    .have_fp_rate = true,
				    .capacity = 1000,
				    .fp_rate = 0.01 };
	ASSERT_EQ(make(&r, &o), 0, "create: a cuckoo filter");
	ASSERT_TRUE(o.type == (unsigned)fb_ftype_by_name("cuckoo") && o.nblocks > 0 && !o.k,
		    "create: cuckoo sized by its own formula");
	r.counter_bits = 4;
	check_usage(r, "create: cuckoo with counters: usage");
	r.counter_bits = 0;
	r.grow = true;
	check_usage(r, "create: grow with cuckoo: usage");
	r = (struct fb_create_req){ .grow = true,
				    .type = -1,
				    .have_capacity = true,
				    .have_fp_rate = true,
				    .capacity = 1000,
				    .fp_rate = 0.01,
				    .layout = FB_LAYOUT_CLASSIC };
	check_usage(r, "create: grow stages are blocked: usage");
	r.layout = 0;
	ASSERT_EQ(make(&r, &o), 0, "create: grow");
	ASSERT_EQ(o.type, (unsigned)fb_ftype_by_name("scalable"), "create: grow is scalable");

	r = (struct fb_create_req){ .name = FB_IPROUTE_FILTER,
				    .type = -1,
				    .have_capacity = true,
				    .have_fp_rate = true,
				    .capacity = 10,
				    .fp_rate = 0.01,
				    .confirm = true };
	ASSERT_EQ(make(&r, &o), FB_CREATE_REFUSED, "create: confirm on ip link's filter: refused");
	r.name = "edge";
	ASSERT_EQ(make(&r, &o), 0, "create: confirm on another filter");
	ASSERT_EQ(o.confirm, 1, "create: ... kept");
}
