// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom create`: geometry from capacity and rate, or given. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "types/counting.h"
#include "types/ftype.h"
#include "output.h"
#include "types/sizing.h"
#include "store/store.h"
#include "util.h"

static int parse_u64(const char *opt, const char *s, unsigned long long *v)
{
	if (fb_parse_u64(s, v))
		return fb_usage("bad number '%s' for %s", s, opt), -1;
	return 0;
}

/* What a new filter of another type got. */
static void print_typed(const char *name, const struct fb_create_opts *o, unsigned long long bytes)
{
	char what[160];

	fb_ftype_geometry(o->type, o->geom, what, sizeof(what));
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("name", name);
		jw_str("type", fb_ftype_name(o->type));
		jw_u64("bytes", bytes);
		jw_str("geometry", what);
		jw_obj_close();
		jw_end();
	} else {
		printf("created %s: %s, %s, %llu bytes\n", name, fb_ftype_name(o->type), what,
		       bytes);
	}
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
		{ NULL, 0, NULL, 0 },
	};
	static const char *const widths[] = { "4", "8", NULL };
	static const int width_v[] = { 4, 8 };
	struct fb_create_opts o = { .layout = FB_LAYOUT_BLOCKED, .action = FB_ACTION_DROP };
	unsigned long long cap = 0, bits = 0, k = 0, bytes, requested;
	bool have_cap = false, have_p = false, have_bits = false, have_k = false, counting = false;
	bool grow = false, have_layout = false;
	const struct fb_ftype_ops *ops;
	int type = -1; /* --type; else a Bloom filter, or the growing type with --grow */
	int width = 4;
	double p = 0;
	char *end;
	int c, v;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_u64("--capacity", optarg, &cap))
				return 2;
			have_cap = true;
			break;
		case 'p':
			errno = 0;
			p = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(p > 0 && p < 1))
				return fb_usage("--fp-rate must be a number in (0, 1), not '%s'",
						optarg);
			have_p = true;
			break;
		case 'm':
			if (parse_u64("--bits", optarg, &bits))
				return 2;
			have_bits = true;
			break;
		case 'k':
			if (parse_u64("--hashes", optarg, &k))
				return 2;
			have_k = true;
			break;
		case 'l':
			if ((v = fb_pick("--layout", optarg, fb_layout_names + 1, NULL)) < 0)
				return 2;
			o.layout = v;
			have_layout = true;
			break;
		case 't':
			if ((type = fb_pick("--type", optarg, fb_ftype_create_names,
					    fb_ftype_create_values)) < 0)
				return 2;
			break;
		case 'g':
			grow = true;
			break;
		case 'H':
			if ((v = fb_pick("--hash", optarg, fb_hash_choices,
					 fb_hash_choice_values)) < 0)
				return 2;
			o.hash = v;
			break;
		case 'a':
			if ((v = fb_parse_action(optarg)) < 0)
				return 2;
			o.action = v;
			break;
		case 'c':
			counting = true;
			break;
		case 'C':
			if (strcmp(optarg, "exact"))
				return fb_usage("bad value '%s' for --confirm (want exact)",
						optarg);
			o.confirm = 1;
			break;
		case 'b':
			if ((width = fb_pick("--counter-bits", optarg, widths, width_v)) < 0)
				return 2;
			counting = true;
			break;
		default:
			return fb_usage("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	o.counter_bits = counting ? width : 0;
	if (optind >= argc)
		return fb_usage("missing NAME");
	if (optind < argc - 1)
		return fb_usage("unexpected '%s'", argv[optind + 1]);
	if (grow) {
		if (type >= 0 && (fb_ftype(type)->flags & FB_FTYPE_TABLE))
			return fb_usage("--grow makes a scalable Bloom filter: not with --type %s",
					fb_ftype_name(type));
		type = fb_ftype_by_name("scalable");
	} else if (type < 0) {
		type = fb_ftype_by_name("bloom");
	}
	ops = fb_ftype(type);
	if (ops->flags & FB_FTYPE_TABLE) {
		/* The other types are sized from capacity and rate only, and
		 * take what their flags say of a Bloom layout and counters. */
		if (have_bits || have_k)
			return fb_usage("--%s takes --capacity and --fp-rate, not --bits/--hashes",
					grow ? "grow" : "type");
		if ((counting && !(ops->flags & FB_FTYPE_COUNTING)) ||
		    (have_layout && !(ops->flags & FB_FTYPE_LAYOUT)))
			return fb_usage("--%s and --%s do not go together",
					counting ? "counting" : "layout", grow ? "grow" : "type");
		if (have_layout && o.layout != FB_LAYOUT_BLOCKED &&
		    !(ops->flags & FB_FTYPE_LAYOUTS))
			return fb_usage("--grow stages use the blocked layout");
		if (!have_cap || !have_p)
			return fb_usage("--%s needs --capacity N --fp-rate P",
					grow ? "grow" : "type");
		if (!cap)
			return fb_usage("--capacity must be at least 1");
		if (optind >= argc)
			return fb_usage("missing NAME");
		if (optind < argc - 1)
			return fb_usage("unexpected '%s'", argv[optind + 1]);
		o.type = type;
		o.layout = 0;
		o.k = 0;
		o.capacity = cap;
		o.fp_rate = p;
		if (fb_ftype_size(type, cap, p, o.geom, &o.nblocks)) {
			fb_err("a %s filter for %llu flows at rate %g is not possible (at most %u "
			       "MiB; rates down to about 1e-9)",
			       fb_ftype_name(type), cap, p,
			       FB_MAX_BLOCKS / (1024 * 1024 / FB_BLOCK_BYTES));
			return 1;
		}
	} else if ((have_cap || have_p) && (have_bits || have_k))
		return fb_usage("give --capacity/--fp-rate or --bits/--hashes, not both");
	if (ops->flags & FB_FTYPE_TABLE) {
		/* sized above */
	} else if (have_cap || have_p) {
		int err;

		if (!have_cap || !have_p)
			return fb_usage("--capacity and --fp-rate go together");
		if (!cap)
			return fb_usage("--capacity must be at least 1");
		err = o.layout == FB_LAYOUT_CLASSIC ? fb_size_classic(cap, p, &o.nblocks, &o.k)
						    : fb_size_blocked(cap, p, &o.nblocks, &o.k);
		if (err) {
			fb_err("capacity %llu at rate %g needs more than %u MiB", cap, p,
			       FB_MAX_BLOCKS / (1024 * 1024 / FB_BLOCK_BYTES));
			return 1;
		}
		o.capacity = cap;
		o.fp_rate = p;
	} else if (have_bits || have_k) {
		if (!have_bits || !have_k)
			return fb_usage("--bits and --hashes go together");
		if (!bits || bits > (unsigned long long)FB_MAX_BLOCKS * FB_BLOCK_BITS)
			return fb_usage("--bits must be 1..%llu",
					(unsigned long long)FB_MAX_BLOCKS * FB_BLOCK_BITS);
		if (!k || k > FB_MAX_K)
			return fb_usage("--hashes must be 1..%d", FB_MAX_K);
		o.nblocks = (bits + FB_BLOCK_BITS - 1) / FB_BLOCK_BITS;
		o.k = k;
	} else {
		return fb_usage("give --capacity N --fp-rate P, or --bits M --hashes K");
	}
	if (o.confirm && !strcmp(argv[optind], FB_IPROUTE_FILTER)) {
		/* An `ip link`-loaded program cannot be handed the exact sets:
		 * it would confirm nothing and let every listed flow through. */
		fb_err("--confirm exact is not available for '%s', the filter `ip link` uses "
		       "(attach another filter with flowbloom attach)",
		       FB_IPROUTE_FILTER);
		return 1;
	}
	if (!o.hash)
		o.hash = fb_hash_default(o.action);
	/* A filter takes whole chunks of 256 KiB (include/flowbloom/
	 * geometry.h): a Bloom filter gets all of their bits, so its
	 * false-positive rate is the size's or lower. */
	requested = (unsigned long long)o.nblocks * FB_BLOCK_BITS;
	if (!o.type)
		o.nblocks = fb_whole_chunks(o.nblocks);
	if (fb_store_create(argv[optind], &o))
		return 1;
	bytes = (unsigned long long)fb_chunks_for(o.nblocks) * FB_CHUNK_BYTES;
	if (o.counter_bits)
		bytes += fb_counting_map_bytes((__u64)o.nblocks * FB_BLOCK_BITS, o.counter_bits);
	if (ops->flags & FB_FTYPE_TABLE) {
		print_typed(argv[optind], &o, bytes);
		return 0;
	}
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("name", argv[optind]);
		jw_u64("bits", (unsigned long long)o.nblocks * FB_BLOCK_BITS);
		jw_u64("bits_asked", requested);
		jw_u64("hashes", o.k);
		jw_u64("bytes", bytes);
		jw_u64("counter_bits", o.counter_bits);
		jw_obj_close();
		jw_end();
	} else {
		printf("created %s: m=%llu bits, k=%u, %llu bytes%s\n", argv[optind],
		       (unsigned long long)o.nblocks * FB_BLOCK_BITS, o.k, bytes,
		       o.counter_bits ? (o.counter_bits == 4 ? " with 4-bit counters"
							     : " with 8-bit counters")
				      : "");
		if (requested < (unsigned long long)o.nblocks * FB_BLOCK_BITS)
			printf("  (%llu bits asked: a filter takes whole 256 KiB chunks and gets "
			       "all "
			       "their bits, a lower false-positive rate)\n",
			       requested);
	}
	return 0;
}
