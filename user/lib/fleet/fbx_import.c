// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `import`: an export file (fbx_read.c) into a new filter, built aside
 * (staged) while the file is streamed into it and published by one rename
 * once all of it, the generations (fbx_gens.c) and the CRC included, was
 * read and checked: a refused file leaves nothing behind. A file not known
 * complete from its size (compressed, a pipe) was read and checked whole
 * once before anything is created (fbx_scan.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/fbx.h"
#include "report.h"
#include "store/exact.h"
#include "store/pintree.h"
#include "store/store.h"
#include "types/bits.h"
#include "types/ftype.h"

int fb_fbx_rules_into(struct fb_store *f, const struct fb_fbx_rule *r, size_t n)
{
	struct fb_exact_batch b = { 0 };
	struct fb_key *keys;
	__u32 *copies;
	size_t i;
	int rc = -1;

	if (!n)
		return 0;
	keys = malloc(n * sizeof(*keys));
	copies = malloc(n * sizeof(*copies));
	if (!keys || !copies) {
		fb_report_err("out of memory adding %zu rules to '%s'", n, f->name);
		goto out;
	}
	for (i = 0; i < n; i++) {
		keys[i] = r[i].key;
		copies[i] = r[i].count;
	}
	rc = fb_exact_add_many(f, keys, copies, n, &b) ? -1 : 0;
	fb_exact_batch_free(&b);
out:
	free(keys);
	free(copies);
	return rc;
}

/* Why building the filter failed, in the store's words (kept while quiet),
 * said as every refusal is: the file, and what is left. published: the
 * rename went through and only `ip link`'s pins of 'default' failed. On
 * the stack, as fb_report_last was touched before (fb_fbx_import): the
 * way out of a full memory cgroup takes no new page. */
static void import_failed(const struct fb_fbx_in *in, const char *name, bool quiet, bool published)
{
	char why[sizeof(fb_report_last)];

	memcpy(why, fb_report_last, sizeof(why));
	if (!why[0])
		snprintf(why, sizeof(why), "cannot build filter '%s'", name);
	fb_report_quiet = quiet;
	if (published)
		fb_report_err("%s: %s; imported as '%s', which `ip link` does not find until "
			      "`flowbloom check --repair`",
			      in->label, why, name);
	else
		fb_report_err("%s: %s; nothing imported", in->label, why);
}

int fb_fbx_import(const char *file, const char *name, struct fb_header *out)
{
	struct fb_create_opts o = { 0 };
	struct fb_fbx_in in;
	struct fb_store f;
	__u64 set = 0;
	double fpr = 0;
	bool quiet = fb_report_quiet;
	int rc = -1;

	if (fb_pin_check_name(name))
		return -1;
	if (fb_fbx_open_checked(&in, file, true))
		goto refuse;
	if (in.h.confirm && !strcmp(name, FB_IPROUTE_FILTER)) {
		/* An ip-link-loaded program cannot confirm: it would fail open. */
		snprintf(in.why, sizeof(in.why),
			 "it confirms hits (--confirm exact), which '%s', the filter `ip link` "
			 "uses, cannot",
			 FB_IPROUTE_FILTER);
		goto refuse;
	}
	o.layout = in.h.layout;
	o.hash = in.h.hash;
	o.k = in.h.k;
	o.counter_bits = in.h.counter_bits;
	o.confirm = in.h.confirm;
	o.type = in.h.type;
	o.action = in.h.action;
	o.nblocks = in.h.nblocks;
	o.capacity = in.h.capacity;
	o.fp_rate = in.h.fp_ppb / 1e9;
	/* As a replace makes them (store/replace.c): room for the rules
	 * twice, where that is more than the capacity's. */
	o.sets = 2 * in.nsets;
	/* The store's errors (memory, an existing filter) are said below with
	 * the file's name and what is left. */
	fb_report_last[0] = 0;
	fb_report_quiet = true;
	/* Built aside (its kinds 0: a data path that already sees the array,
	 * ip link's adopted maps, probes nothing), streamed into. */
	if (fb_store_create_staged(name, &o, &f))
		goto failed;
	fb_report_quiet = quiet;
	if (fb_fbx_read_body(&in, f.blocks, f.cnt)) {
		fb_store_abort(&f);
		goto refuse;
	}
	/* A Bloom filter's flow count is what `import` says it holds; each
	 * flow sets at most k bits (an intersection's count, an estimate
	 * from the bits, rounds to the nearest flow). More bits than that
	 * match more than the count says: a file made to look small. */
	if (!in.h.type && !(in.h.flags & FB_HDRF_NFLOWS_ESTIMATE)) {
		set = fb_bits_popcount(&f);
		if (set > (in.h.nflows + 1) * in.h.k)
			fpr = fb_bits_fpr(&f);
		else
			set = 0;
	}

	fb_report_quiet = true;
	if (fb_fbx_rules_into(&f, in.rules, in.nrules)) {
		fb_store_abort(&f);
		goto failed;
	}
	fb_report_quiet = quiet;
	/* Key, prefix lengths, flows; the kind flags last, so a data path
	 * that sees the array probes only complete rules. */
	f.hdr->key[0] = in.h.key[0];
	f.hdr->key[1] = in.h.key[1];
	f.hdr->nflows = in.h.nflows;
	f.hdr->flags = in.h.flags;
	memcpy(fb_store_prefixes(&f), &in.px, sizeof(in.px));
	/* Generations take the filter's header (its key) as theirs. */
	fb_report_quiet = true;
	if (in.ngens && fb_fbx_import_gens(&in, &f)) {
		fb_store_abort(&f);
		if (in.why[0]) {
			fb_report_quiet = quiet;
			goto refuse;
		}
		goto failed;
	}
	__atomic_store_n(&f.hdr->kinds, in.h.kinds, __ATOMIC_RELEASE);
	if (fb_store_publish(&f)) {
		bool published = !f.staged;

		if (f.staged)
			fb_store_abort(&f);
		else
			fb_store_close(&f);
		import_failed(&in, name, quiet, published);
		goto out;
	}
	fb_report_quiet = quiet;
	*out = *f.hdr;
	fb_store_close(&f);
	if (in.capacity_said) {
		char geom[80];

		if (in.h.type)
			snprintf(geom, sizeof(geom), "a %s filter of %u blocks holds",
				 fb_ftype_name(in.h.type), in.h.nblocks);
		else
			snprintf(geom, sizeof(geom), "%llu bits with k=%u hold",
				 (unsigned long long)fb_header_mbits(&in.h), in.h.k);
		fb_report(FB_REPORT_NOTE,
			  "%s: capacity %llu is more than %s at fp-rate %g (a merge sized its "
			  "exact sets for the rules it had): imported sized for %llu flows",
			  in.label, in.capacity_said, geom, in.h.fp_ppb / 1e9,
			  (unsigned long long)in.h.capacity);
	}
	if (set)
		fb_report(FB_REPORT_NOTE,
			  "%s: %llu of %llu bits set, more than %llu flow%s set with k=%u: it "
			  "matches more than its flow count says (false-positive rate %g per "
			  "probe)",
			  in.label, (unsigned long long)set,
			  (unsigned long long)fb_header_mbits(&in.h),
			  (unsigned long long)in.h.nflows, in.h.nflows == 1 ? "" : "s", in.h.k,
			  fpr);
	rc = 0;
	goto out;
failed:
	import_failed(&in, name, quiet, false);
	goto out;
refuse:
	fb_report_err("%s: %s; nothing imported", in.label, in.why);
out:
	fb_fbx_close(&in);
	return rc;
}
