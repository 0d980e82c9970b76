// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_monitor, the monitoring hash's key words (monitor.h, fb_mon_words).
 *
 *  - Maps this build makes say layout FB_MON_VERSION, which earlier builds
 *    (they read 2, or 2 and 3, and check no flag) refuse as another layout.
 *  - The words the program is loaded with, read back from the kernel (its
 *    read-only data), are SipHash-1-3 of their index under the maps' key,
 *    none of them key0 * odd_i + key1 (or key1, the final one): the linear
 *    derivation that voids NH's bound. Readers hash with the same words.
 *  - Both sides pick the same cells: a flow sent through the real program
 *    (BPF_PROG_TEST_RUN) is in exactly the sketch cells, the top-talker
 *    bucket and the seen-set bits that user space computes from the words
 *    of the key, and in no other cell; its estimate and its top entry are
 *    its packets. By flow, and by source address.
 *  - Maps an earlier build made (layout 2, a sketch by flow; 3, by source
 *    address; rewritten so here): opened, loaded and read with the linear
 *    words they were made with, the same cells on both sides. Layout 3
 *    without an address key, layout 2 with one, and an unknown layout are
 *    refused.
 */
#include <stddef.h>
#include "monitor_test.h"

#define W_PACKETS 32 /* the top-talker table is offered the flow at 1, 16, 32 */

/* The program's cfg_mon_nh, as the kernel holds it. */
static int rodata_words(const struct rig *r, __u64 kw[FB_MON_NH_WORDS])
{
	struct bpf_map *map = r->skel->maps.rodata;
	size_t size = bpf_map__value_size(map);
	char *v = malloc(size);
	__u32 zero = 0;
	int rc = v && !bpf_map_lookup_elem(bpf_map__fd(map), &zero, v) ? 0 : -1;

	if (!rc)
		memcpy(kw, v + offsetof(struct flowbloom_bpf__rodata, cfg_mon_nh),
		       FB_MON_NH_WORDS * sizeof(*kw));
	free(v);
	return rc;
}

/* Words kw were made from key: linearly (1), by SipHash-1-3 (2), else 0. */
static int derivation(const __u64 key[2], const __u64 kw[FB_MON_NH_WORDS])
{
	int i, lin = 1, sip = 1;

	for (i = 0; i < FB_MON_NH_WORDS; i++) {
		lin &= kw[i] == (i < 5 ? key[0] * fb_odd64(i) + key[1] : key[1]);
		sip &= kw[i] == fb_nhk_word(key, i);
	}
	return lin ? 1 : sip ? 2 : 0;
}

/* Is any word key0 * odd_i + key1 (key1 for the final one)? */
static int any_linear(const __u64 key[2], const __u64 kw[FB_MON_NH_WORDS])
{
	int i, n = 0;

	for (i = 0; i < FB_MON_NH_WORDS; i++)
		n += kw[i] == (i < 5 ? key[0] * fb_odd64(i) + key[1] : key[1]);
	return n;
}

/* W_PACKETS of flow k through r's program, then: is each where user space
 * puts it under words kw, and nowhere else? */
static void same_cells(const char *what, struct rig *r, const __u64 kw[FB_MON_NH_WORDS],
		       const struct fb_key *k)
{
	const struct fb_mon_config *c = &r->m.cfg;
	size_t width = 1U << c->shift, cells = (size_t)c->depth << c->shift;
	LIBBPF_OPTS(bpf_test_run_opts, t, .repeat = W_PACKETS);
	struct fb_top_entry *e = NULL;
	struct fb_mon_snap s = { 0 };
	__u64 h, hf, in = 0, out = 0, p, b, mask;
	__u32 row, col, pl, top = 0, slot;
	struct fb_key sk;
	__u8 frame[256];
	int n;

	t.data_in = frame;
	t.data_size_in = build(k, 10, frame);
	if (!ASSERT_EQ(bpf_prog_test_run_opts(r->prog, &t), 0, "words: the packets ran"))
		return;
	fb_monitor_sketch_key(&r->m, k, &sk);
	h = fb_mon_hash(&sk, kw);
	for (pl = 0; pl < c->planes; pl++)
		for (row = 0; row < c->depth; row++)
			for (col = 0; col < width; col++) {
				__u64 v = r->m.cells[pl * cells + row * width + col].packets;

				if (col == fb_mon_col(h, row, c->shift))
					in += v;
				else
					out += v;
			}
	snprintf(label, sizeof(label), "%s: the program counted in the cell of every row", what);
	ASSERT_EQ(in, (__u64)c->depth * W_PACKETS, label);
	snprintf(label, sizeof(label), "%s: and in no other cell", what);
	ASSERT_EQ(out, 0, label);
	for (pl = 0; pl < c->top_planes; pl++)
		top += r->m.top[pl].b[fb_top_index(h)].fp[0] == h ||
		       r->m.top[pl].b[fb_top_index(h)].fp[1] == h;
	snprintf(label, sizeof(label), "%s: the top-talker bucket user space computes holds it",
		 what);
	ASSERT_EQ(top, 1, label);
	if (c->flags & FB_MON_NEWFLOWS) {
		hf = fb_mon_hash(k, kw); /* the seen-set counts flows */
		slot = fb_seen_index(hf, c->seen_slots);
		mask = fb_seen_mask(hf);
		snprintf(label, sizeof(label), "%s: the seen-set bits user space computes are set",
			 what);
		ASSERT_EQ((r->m.seen[slot].w[0] | r->m.seen[slot].w[1]) & mask, mask, label);
	}
	if (!ASSERT_EQ(fb_monitor_snap_take(&r->m, &s), 0, "words: snapshot"))
		return;
	fb_monitor_estimate(&r->m, &s, NULL, &sk, &p, &b);
	snprintf(label, sizeof(label), "%s: the reader's estimate is its packets", what);
	ASSERT_EQ(p, W_PACKETS, label);
	n = fb_monitor_top(&r->m, &s, NULL, false, 5, &e);
	snprintf(label, sizeof(label), "%s: the reader's top talker, with its packets", what);
	ASSERT_TRUE(n == 1 && !memcmp(&e[0].key, &sk, sizeof(sk)) && e[0].packets == W_PACKETS,
		    label);
	free(e);
	fb_monitor_snap_free(&s);
}

/* The maps of a rig rewritten to layout version (as an earlier build made
 * them), opened again and the program loaded anew over them. */
static int as_layout(struct rig *r, __u32 version)
{
	struct fb_load_opts lo = { .action = FB_ACTION_MONITOR };
	struct fb_mon_config c = r->m.cfg;
	__u32 zero = 0;

	flowbloom_bpf__destroy(r->skel);
	r->skel = NULL;
	c.version = version;
	if (bpf_map_update_elem(r->m.config_fd, &zero, &c, BPF_ANY))
		return -1;
	fb_monitor_close(&r->m);
	if (fb_monitor_open(&r->f, &r->m))
		return -1;
	lo.monitor = &r->m;
	r->skel = fb_load(&r->f, &lo);
	if (!r->skel)
		return -1;
	r->prog = bpf_program__fd(r->skel->progs.flowbloom);
	return 0;
}

static void one(__u32 by, __u32 version, int seed)
{
	const char *kind = by ? "by src" : "by flow";
	__u64 kw[FB_MON_NH_WORDS];
	uint64_t s = 0x3057 + seed;
	struct fb_mon_opts o;
	struct fb_key k;
	struct rig r;
	char what[96];

	snprintf(what, sizeof(what), "words, %s, layout %u", kind, version);
	fb_monitor_opts_default(&o);
	o.sketch = o.newflows = true;
	o.sketch_by = by;
	o.age = 3600; /* one generation for the whole test */
	snprintf(label, sizeof(label), "set up %s", what);
	if (!ASSERT_EQ(rig_up(&r, "words", &o, false), 0, label))
		return;
	snprintf(label, sizeof(label), "%s: maps made with layout %u", what, FB_MON_VERSION);
	ASSERT_EQ(r.m.cfg.version, FB_MON_VERSION, label);
	ASSERT_TRUE(r.m.cfg.version != FB_MON_VERSION_NH1 &&
			    r.m.cfg.version != FB_MON_VERSION_BY_ADDR,
		    "words: a layout every earlier build refuses (they read 2, or 2 and 3)");
	if (version != FB_MON_VERSION) {
		snprintf(label, sizeof(label), "%s: maps rewritten as an earlier build made them",
			 what);
		if (!ASSERT_EQ(as_layout(&r, version), 0, label)) {
			rig_down(&r);
			return;
		}
	}
	if (!ASSERT_EQ(rodata_words(&r, kw), 0, "words: read the program's read-only data")) {
		rig_down(&r);
		return;
	}
	snprintf(label, sizeof(label), "%s: the program's words are %s", what,
		 version == FB_MON_VERSION ? "SipHash-1-3 of the key"
					   : "linear in the key, as the maps were made");
	ASSERT_EQ(derivation(r.m.cfg.key, kw), version == FB_MON_VERSION ? 2 : 1, label);
	if (version == FB_MON_VERSION) {
		snprintf(label, sizeof(label), "%s: no word is key0 * odd_i + key1", what);
		ASSERT_EQ(any_linear(r.m.cfg.key, kw), 0, label);
	}
	snprintf(label, sizeof(label), "%s: the readers hash with the program's words", what);
	ASSERT_TRUE(!memcmp(kw, r.m.kw, sizeof(kw)), label);
	/* The words as the test derives them, not as the program has them. */
	if (version == FB_MON_VERSION)
		for (int i = 0; i < FB_MON_NH_WORDS; i++)
			kw[i] = fb_nhk_word(r.m.cfg.key, i);
	else
		for (int i = 0; i < FB_MON_NH_WORDS; i++)
			kw[i] = i < 5 ? r.m.cfg.key[0] * fb_odd64(i) + r.m.cfg.key[1]
				      : r.m.cfg.key[1];
	test_random_flow(&s, &k, seed & 1);
	same_cells(what, &r, kw, &k);
	rig_down(&r);
}

/* Layouts this build refuses, rewritten into its own maps. */
static void refused(void)
{
	struct {
		__u32 version, by;
		int rc;
		const char *what;
	} cases[] = {
		{ FB_MON_VERSION_BY_ADDR, 0, -1, "layout 3 without an address key: refused" },
		{ FB_MON_VERSION_NH1, FB_MON_BY_SRC, -1, "layout 2 with an address key: refused" },
		{ FB_MON_VERSION + 1, 0, -3, "an unknown layout: refused as another build's" },
	};
	struct fb_mon_opts o;
	struct fb_mon_config c;
	struct rig r;
	__u32 zero = 0;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fb_monitor_opts_default(&o);
		o.sketch = true;
		o.sketch_by = cases[i].by;
		if (!ASSERT_EQ(rig_up(&r, "wordsbad", &o, false), 0, "set up refused layouts"))
			return;
		c = r.m.cfg;
		c.version = cases[i].version;
		flowbloom_bpf__destroy(r.skel);
		r.skel = NULL;
		ASSERT_EQ(bpf_map_update_elem(r.m.config_fd, &zero, &c, BPF_ANY), 0,
			  "words: rewrite the layout");
		fb_monitor_close(&r.m);
		fb_report_quiet = true;
		snprintf(label, sizeof(label), "words: %s", cases[i].what);
		ASSERT_EQ(fb_monitor_open(&r.f, &r.m), cases[i].rc, label);
		fb_report_quiet = false;
		rig_down(&r);
	}
}

void test_words(void)
{
	one(0, FB_MON_VERSION, 0);
	one(FB_MON_BY_SRC, FB_MON_VERSION, 1);
	one(0, FB_MON_VERSION_NH1, 2);
	one(FB_MON_BY_SRC, FB_MON_VERSION_BY_ADDR, 3);
	refused();
}
