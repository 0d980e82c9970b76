// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_types, one probe on both sides: tests/program/types_check.bpf.c
 * compiles include/flowbloom/probe.h as the data path does (map lookups),
 * the library as user space does (memory, user/lib/types/probe_mem.h);
 * both read the same filter array, filled through the mmap by the
 * library's writers. For each type and layout (blocked and classic Bloom,
 * cuckoo, d-left, scalable): every member is found by both, and both give
 * the same answer on 50k flows never added, false positives included.
 * Then cuckoo relocations store by store: after each store both sides
 * agree on every flow, with the sequence check (a relocation under way:
 * "maybe" from both) and without it (the buckets alone: no stored flow
 * missing on either side).
 */
#include "types_test.h"

struct same {
	int prog;
	struct fb_block *t; /* the mmap of tc_table: TC_TABLE_BLOCKS blocks */
};

static int run_key(int prog, const struct fb_key *k)
{
	unsigned char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));

	memcpy(pkt, k, sizeof(*k));
	if (bpf_prog_test_run_opts(prog, &o))
		return -1;
	return o.retval;
}

/* The library's answer: the probe behind query, check and add's
 * "already there" (fb_bits_test over a filter's mmap). */
static bool lib_says(const struct same *s, __u64 h)
{
	return fb_probe_array(s->t, TC_TABLE_BLOCKS, h);
}

/* An empty filter of type, its header in block 0. */
static struct fb_header *new_filter(struct same *s, __u8 type, __u8 layout, __u8 k, __u32 nblocks)
{
	struct fb_header *h = (struct fb_header *)s->t;

	memset(s->t, 0, (size_t)TC_TABLE_BLOCKS * FB_BLOCK_BYTES);
	h->magic = FB_MAGIC;
	h->version = FB_VERSION;
	h->type = type;
	h->layout = layout;
	h->k = k;
	h->nblocks = nblocks;
	h->hash = FB_HASH_SIPHASH13;
	h->key[0] = hkey[0];
	h->key[1] = hkey[1];
	return h;
}

/* Set the k bits of h, at the positions the geometry gives (as bits.c
 * and counting.c set them). */
static void bloom_add(struct same *s, const struct fb_header *hd, __u64 h)
{
	__u64 pos[FB_MAX_K];
	__u32 i;

	fb_positions(h, hd->layout, hd->nblocks, hd->k, pos);
	for (i = 0; i < hd->k; i++)
		fb_block_set_bit(&s->t[fb_bit_block(pos[i])], pos[i]);
}

/* Members (added[0..nadd)) and 50k others, program against library. */
static void compare(struct same *s, const char *name, size_t nadd)
{
	const size_t nprobe = 50000;
	long missing = 0, disagree = 0, errors = 0, fp = 0;
	size_t i;

	for (i = 0; i < nadd; i++) {
		int v = run_key(s->prog, &added_keys[i]);

		errors += v < 0;
		missing += v != XDP_DROP || !lib_says(s, added[i]);
	}
	for (i = 0; i < nprobe; i++) {
		int v = run_key(s->prog, &probe_keys[i]);
		bool lib = lib_says(s, probes[i]);

		errors += v < 0;
		fp += lib;
		disagree += (v == XDP_DROP) != lib;
	}
	snprintf(label, sizeof(label),
		 "%s: the XDP program and the library find all %zu flows and agree on %zu others "
		 "(%ld of them false positives)",
		 name, nadd, nprobe, fp);
	ASSERT_TRUE(!missing && !disagree && !errors && fp > 0, label);
	{
		/* Cost of a whole run (key copy, SipHash-1-3, probe), one flow
		 * repeated: tables in cache. */
		unsigned char pkt[64] = { 0 };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
			    .repeat = 200000);
		__u32 hit_ns, miss_ns;

		memcpy(pkt, &added_keys[0], sizeof(struct fb_key));
		bpf_prog_test_run_opts(s->prog, &o);
		hit_ns = o.duration;
		memcpy(pkt, &probe_keys[0], sizeof(struct fb_key));
		bpf_prog_test_run_opts(s->prog, &o);
		miss_ns = o.duration;
		printf("%s in XDP: %u ns per run on a hit, %u ns on a miss (hash + probe, in "
		       "cache)\n",
		       name, hit_ns, miss_ns);
	}
}

static void each_type(struct same *s)
{
	const size_t nadd = 20000;
	struct fb_header *hd;
	__u64 need;
	size_t i;
	int rc;

	/* Bloom filters of 256 blocks (6.5 bits per flow), k = 4: a few
	 * per cent of false positives, so that both sides meet some. */
	hd = new_filter(s, FB_TYPE_BLOOM, FB_LAYOUT_BLOCKED, 4, 256);
	for (i = 0; i < nadd; i++)
		bloom_add(s, hd, added[i]);
	compare(s, "blocked Bloom", nadd);
	hd = new_filter(s, FB_TYPE_BLOOM, FB_LAYOUT_CLASSIC, 4, 256);
	for (i = 0; i < nadd; i++)
		bloom_add(s, hd, added[i]);
	compare(s, "classic Bloom", nadd);

	/* The other types: geometry at FB_TYPE_GEOM_BLOCK, table after it,
	 * filled in place by the library's own writers. */
	{
		struct fb_cuckoo_geom *g = (void *)&s->t[FB_TYPE_GEOM_BLOCK];

		hd = new_filter(s, FB_TYPE_CUCKOO, 0, 0, 0);
		*g = (struct fb_cuckoo_geom){ .first_block = 3, .nbuckets = 8192, .fp_bits = 12 };
		hd->nblocks = (__u32)(3 + fb_cuckoo_blocks(g) - FB_HDR_BLOCKS);
		rc = fb_cuckoo_add(s->t, g, added, nadd, NULL);
		if (ASSERT_EQ(rc, 0, "cuckoo: 20k flows added through the mmap"))
			compare(s, "cuckoo", nadd);
	}
	{
		struct fb_dleft_geom *g = (void *)&s->t[FB_TYPE_GEOM_BLOCK];

		hd = new_filter(s, FB_TYPE_DLEFT, 0, 0, 0);
		*g = (struct fb_dleft_geom){
			.first_block = 3, .bucket_bits = 10, .rem_bits = 10, .cell_bits = 16
		};
		hd->nblocks = (__u32)(3 + fb_dleft_blocks(g) - FB_HDR_BLOCKS);
		rc = fb_dleft_add(s->t, g, added, nadd, NULL);
		if (ASSERT_EQ(rc, 0, "d-left: 20k flows added through the mmap"))
			compare(s, "d-left", nadd);
	}
	{
		struct fb_sbf_geom *g = (void *)&s->t[FB_TYPE_GEOM_BLOCK];

		hd = new_filter(s, FB_TYPE_SCALABLE, 0, 0, 0);
		fb_sbf_init(g, 2000, 0.02, FB_TYPE_GEOM_BLOCK + 5);
		rc = fb_sbf_add(s->t, TC_TABLE_BLOCKS, g, added, nadd, &need, NULL);
		hd->nblocks = (__u32)(fb_sbf_end_block(g) - FB_HDR_BLOCKS);
		snprintf(label, sizeof(label),
			 "scalable: 20k flows added through the mmap (%u stages)", g->nstages);
		if (ASSERT_TRUE(rc == 0 && g->nstages > 1, label))
			compare(s, "scalable", nadd);
	}
}

/* Both sides on flows 0..n and 32 others; *miss counts stored flows
 * either side misses. */
static long agree(struct same *s, size_t n, long *miss)
{
	long wrong = 0;
	size_t i;

	for (i = 0; i < n + 32; i++) {
		const struct fb_key *k = i < n ? &added_keys[i] : &probe_keys[i - n];
		__u64 h = i < n ? added[i] : probes[i - n];
		int v = run_key(s->prog, k);
		bool lib = lib_says(s, h);

		wrong += v < 0 || (v == XDP_DROP) != lib;
		*miss += i < n && (v != XDP_DROP || !lib);
	}
	return wrong;
}

/* Cuckoo relocations store by store (the plan's log applied one store at
 * a time, as fb_plan_apply() writes them to the live table). */
static void relocations(struct same *s)
{
	struct fb_cuckoo_geom *g = (void *)&s->t[FB_TYPE_GEOM_BLOCK];
	long wrong = 0, raw_wrong = 0, miss = 0, raw_miss = 0, odd = 0, moves = 0, states = 0;
	struct fb_header *hd = new_filter(s, FB_TYPE_CUCKOO, 0, 0, 0);
	size_t n, st;

	*g = (struct fb_cuckoo_geom){ .first_block = 3, .nbuckets = 64, .fp_bits = 16 };
	hd->nblocks = (__u32)(3 + fb_cuckoo_blocks(g) - FB_HDR_BLOCKS);
	for (n = 0; n < 250; n++) {
		struct fb_plan p;

		fb_plan_init(&p, s->t, fb_cuckoo_bucket_shift(g->fp_bits));
		if (fb_cuckoo_plan_add(&p, g, &added[n], 1, NULL)) {
			fb_plan_free(&p);
			break;
		}
		if (p.nlog <= 2) { /* a free slot: one store and the count */
			fb_plan_apply(&p);
			fb_plan_free(&p);
			continue;
		}
		moves++;
		for (st = 0; st < p.nlog; st++) {
			struct fb_plan one = p;
			__u32 seq;

			one.log = &p.log[st];
			one.nlog = 1;
			fb_plan_apply(&one);
			states++;
			seq = g->seq;
			odd += seq & 1;
			wrong += agree(s, n, &miss);
			/* The buckets alone: as a reader that saw no
			 * relocation would (this thread is the only writer). */
			g->seq = 0;
			raw_wrong += agree(s, n, &raw_miss);
			g->seq = seq;
		}
		fb_plan_free(&p);
	}
	snprintf(label, sizeof(label),
		 "cuckoo: through %ld relocations (%ld states, %ld with the sequence odd) the XDP "
		 "program and the library agree on every flow, stored or not, and miss no stored "
		 "one",
		 moves, states, odd);
	ASSERT_TRUE(moves > 10 && odd > 0 && !wrong && !miss, label);
	ASSERT_TRUE(!raw_wrong && !raw_miss,
		    "cuckoo: ... and on the buckets alone (sequence check off), still agree, no "
		    "stored flow missing");
}

void types_same(const char *dir)
{
	size_t tbytes = (size_t)TC_TABLE_BLOCKS * FB_BLOCK_BYTES;
	struct same s = { .t = MAP_FAILED };
	struct tc_conf *c = MAP_FAILED;
	struct bpf_object *obj;
	char path[600];

	snprintf(path, sizeof(path), "%s/../../types_check.bpf.o", dir);
	obj = bpf_object__open_file(path, NULL);
	if (!obj || bpf_object__load(obj)) {
		ASSERT_TRUE(0, "load tests/types_check.bpf.o (every type's probe passes the "
			       "verifier)");
		return;
	}
	ASSERT_TRUE(1, "types_check.bpf.o: every type's probe (include/flowbloom/probe.h) passes "
		       "the verifier");
	s.prog = bpf_program__fd(bpf_object__find_program_by_name(obj, "types_check"));
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(bpf_object__find_map_by_name(obj, "tc_conf")), 0);
	s.t = mmap(NULL, tbytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		   bpf_map__fd(bpf_object__find_map_by_name(obj, "tc_table")), 0);
	if (!ASSERT_TRUE(c != MAP_FAILED && s.t != MAP_FAILED, "mmap the test maps"))
		goto out;
	fb_nhk_words(hkey, c->kw);
	each_type(&s);
	relocations(&s);
out:
	if (c != MAP_FAILED)
		munmap(c, sizeof(*c));
	if (s.t != MAP_FAILED)
		munmap(s.t, tbytes);
	bpf_object__close(obj);
}
