// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom create`: geometry from capacity and rate, or given. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "types/create.h"
#include "types/ftype.h"
#include "output.h"
#include "types/sizing.h"
#include "store/memuse.h"
#include "store/store.h"
#include "util.h"

static int parse_u64(const char *opt, const char *s, unsigned long long *v)
{
	if (fb_parse_u64(s, v))
		return fb_usage("bad number '%s' for %s", fb_quote(s), opt), -1;
	return 0;
}

/* The exact sets of --confirm exact cost kernel memory from the start
 * (their hash table: 16 bytes a bucket, twice the capacity rounded up to
 * a power of two) and more with each rule: what the kernel holds now for
 * the whole filter, or 0. */
static unsigned long long exact_kernel_bytes(const char *name, const struct fb_create_opts *o)
{
	bool quiet = fb_report_quiet;
	struct fb_store f;
	struct fb_mem m = { 0 };

	if (!o->confirm)
		return 0;
	fb_report_quiet = true;
	if (!fb_store_open(name, &f)) {
		if (fb_store_memory(&f, &m))
			m.total = 0;
		fb_store_close(&f);
	}
	fb_report_quiet = quiet;
	return m.total;
}

/* What create says it made (apply's create step too). */
void fb_print_created(const char *name, const struct fb_create_opts *o)
{
	unsigned long long bytes = fb_create_bytes(o), kbytes = exact_kernel_bytes(name, o);
	char what[160];

	if (fb_ftype(o->type)->flags & FB_FTYPE_TABLE) {
		fb_ftype_geometry(o->type, o->geom, what, sizeof(what));
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("name", name);
			jw_str("type", fb_ftype_name(o->type));
			jw_u64("bytes", bytes);
			if (kbytes)
				jw_u64("kernel_bytes", kbytes);
			jw_str("geometry", what);
			jw_obj_close();
			jw_end();
		} else {
			printf("created %s: %s, %s, %llu bytes\n", name, fb_ftype_name(o->type),
			       what, bytes);
		}
		goto exact;
	}
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("name", name);
		jw_u64("bits", (unsigned long long)o->nblocks * FB_BLOCK_BITS);
		jw_u64("bits_asked", o->bits_asked
					     ? o->bits_asked
					     : (unsigned long long)o->nblocks * FB_BLOCK_BITS);
		jw_u64("hashes", o->k);
		jw_u64("bytes", bytes);
		if (kbytes)
			jw_u64("kernel_bytes", kbytes);
		jw_u64("counter_bits", o->counter_bits);
		jw_bool("compact", o->compact);
		jw_obj_close();
		jw_end();
	} else {
		printf("created %s: m=%llu bits, k=%u, %llu bytes%s\n", name,
		       (unsigned long long)o->nblocks * FB_BLOCK_BITS, o->k, bytes,
		       o->counter_bits ? (o->counter_bits == 4 ? " with 4-bit counters"
							       : " with 8-bit counters")
				       : "");
		if (o->compact)
			printf("  (compact: the bits its size needs, in whole 4 KiB pages of its "
			       "256 KiB chunks)\n");
		else if (o->bits_asked &&
			 o->bits_asked < (unsigned long long)o->nblocks * FB_BLOCK_BITS)
			printf("  (%llu bits asked: a filter takes whole 256 KiB chunks and gets "
			       "all their bits, a lower false-positive rate)\n",
			       (unsigned long long)o->bits_asked);
	}
exact:
	if (!fb_json && kbytes)
		printf("  (--confirm exact: %llu bytes of kernel memory in all now, the exact "
		       "sets' hash table included; each rule adds about 100 more)\n",
		       kbytes);
}

int cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "capacity", required_argument, NULL, 'n' },
		{ "fp-rate", required_argument, NULL, 'p' },
		{ "bits", required_argument, NULL, 'm' },
		{ "hashes", required_argument, NULL, 'k' },
		{ "layout", required_argument, NULL, 'l' },
		{ "hash", required_argument, NULL, 'H' },
		{ "action", required_argument, NULL, 'a' },
		{ "counting", no_argument, NULL, 'c' },
		{ "counter-bits", required_argument, NULL, 'b' },
		{ "confirm", required_argument, NULL, 'C' },
		{ "type", required_argument, NULL, 't' },
		{ "grow", no_argument, NULL, 'g' },
		{ "compact", no_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const widths[] = { "4", "8", NULL };
	static const int width_v[] = { 4, 8 };
	/* --type; else a Bloom filter, or the growing type with --grow */
	struct fb_create_req r = { .type = -1 };
	struct fb_create_opts o;
	bool counting = false;
	int width = 4;
	char why[256];
	int c, v;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_u64("--capacity", optarg, &r.capacity))
				return 2;
			r.have_capacity = true;
			break;
		case 'p':
			if (fb_parse_real(optarg, &r.fp_rate) || !fb_fp_rate_ok(r.fp_rate))
				return fb_usage("--fp-rate must be a number " FB_FP_RATE_RANGE
						", not '%s'",
						fb_quote(optarg));
			r.have_fp_rate = true;
			break;
		case 'm':
			if (parse_u64("--bits", optarg, &r.bits))
				return 2;
			r.have_bits = true;
			break;
		case 'k':
			if (parse_u64("--hashes", optarg, &r.hashes))
				return 2;
			r.have_hashes = true;
			break;
		case 'l':
			if ((v = fb_pick("--layout", optarg, fb_layout_names + 1, NULL)) < 0)
				return 2;
			r.layout = v;
			break;
		case 't':
			if ((r.type = fb_pick("--type", optarg, fb_ftype_create_names,
					      fb_ftype_create_values)) < 0)
				return 2;
			break;
		case 'g':
			r.grow = true;
			break;
		case 'K':
			r.compact = true;
			break;
		case 'H':
			if ((v = fb_pick("--hash", optarg, fb_hash_choices,
					 fb_hash_choice_values)) < 0)
				return 2;
			r.hash = v;
			break;
		case 'a':
			if ((v = fb_parse_action(optarg)) < 0)
				return 2;
			r.action = v;
			break;
		case 'c':
			counting = true;
			break;
		case 'C':
			if (strcmp(optarg, "exact"))
				return fb_usage("bad value '%s' for --confirm (want exact)",
						fb_quote(optarg));
			r.confirm = true;
			break;
		case 'b':
			if ((width = fb_pick("--counter-bits", optarg, widths, width_v)) < 0)
				return 2;
			counting = true;
			break;
		default:
			return fb_bad_option(c, argv);
		}
	}
	r.counter_bits = counting ? width : 0;
	if (optind >= argc)
		return fb_usage("missing NAME");
	if (optind < argc - 1)
		return fb_usage("unexpected '%s'", fb_quote(argv[optind + 1]));
	r.name = argv[optind];
	/* The sizing rule and what goes together: user/lib/types/create.c. */
	switch (fb_create_opts_make(&r, &o, why, sizeof(why))) {
	case 0:
		break;
	case FB_CREATE_USAGE:
		return fb_usage("%s", why);
	default:
		fb_err("%s", why);
		return 1;
	}
	if (fb_store_create(argv[optind], &o))
		return 1;
	fb_print_created(argv[optind], &o);
	return 0;
}
