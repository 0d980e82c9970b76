// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom add` and `query`: flows in, answers out, through the mmap. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cmd.h"
#include "filter.h"
#include "flow.h"
#include "output.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Shared argument handling: NAME then FLOW... or -f FILE. */
static int flows_args(int argc, char **argv, const char **name, struct fb_key **keys, size_t *n)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL;
	int c;

	optind = 0;
	opterr = 0;
	/* "+": stop at the first non-option, so FLOW words are never options. */
	while ((c = getopt_long(argc, argv, "+f:", opts, NULL)) != -1) {
		if (c != 'f')
			return fb_usage("unknown or incomplete option '%s'", argv[optind - 1]);
		file = optarg;
	}
	if (optind >= argc)
		return fb_usage("missing NAME");
	*name = argv[optind++];
	/* -f may also follow NAME. */
	if (!file && optind < argc && !strcmp(argv[optind], "-f")) {
		if (optind + 1 >= argc)
			return fb_usage("-f needs a FILE ('-' for stdin)");
		file = argv[optind + 1];
		optind += 2;
	}
	if (fb_read_flows(argc - optind, argv + optind, file, keys, n))
		return 1;
	return 0;
}

int cmd_add(int argc, char **argv)
{
	struct fb_key *keys;
	struct fb_filter f;
	const char *name;
	size_t n, i;
	double t0;
	int rc = flows_args(argc, argv, &name, &keys, &n);

	if (rc)
		return rc;
	if (fb_filter_open(name, &f)) {
		free(keys);
		return 1;
	}
	if (fb_filter_lock(&f)) {
		fb_filter_close(&f);
		free(keys);
		return 1;
	}
	t0 = now();
	/* Bits first, then the kind flags: the data path starts probing a kind
	 * only once its bits are in place. */
	__u32 kinds = 0;

	for (i = 0; i < n; i++) {
		fb_filter_set(&f, &keys[i]);
		kinds |= FB_KINDF(keys[i].kind);
	}
	__atomic_fetch_or(&f.hdr->kinds, kinds, __ATOMIC_RELEASE);
	f.hdr->nflows += n;
	t0 = now() - t0;
	fb_filter_unlock(&f);
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", name);
		jw_u64("added", n);
		jw_double("seconds", t0);
		jw_obj_close();
		jw_end();
	} else {
		printf("added %zu flow%s to %s in %.3f ms\n", n, n == 1 ? "" : "s", name,
		       t0 * 1e3);
	}
	fb_filter_close(&f);
	free(keys);
	return 0;
}

int cmd_query(int argc, char **argv)
{
	char text[FB_FLOW_STR];
	struct fb_key *keys;
	struct fb_filter f;
	const char *name;
	size_t n, i, maybe = 0;
	int rc = flows_args(argc, argv, &name, &keys, &n);

	if (rc)
		return rc;
	if (fb_filter_open(name, &f)) {
		free(keys);
		return 1;
	}
	if (fb_json) {
		jw_obj_open(NULL);
		jw_arr_open("results");
	}
	for (i = 0; i < n; i++) {
		bool hit = fb_filter_test(&f, &keys[i]);

		maybe += hit;
		fb_flow_format(&keys[i], text, sizeof(text));
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("flow", text);
			jw_str("result", hit ? "maybe" : "no");
			jw_obj_close();
		} else {
			printf("%-5s %s\n", hit ? "maybe" : "no", text);
		}
	}
	if (fb_json) {
		jw_arr_close();
		jw_u64("maybe", maybe);
		jw_u64("total", n);
		jw_obj_close();
		jw_end();
	} else {
		printf("%zu of %zu maybe\n", maybe, n);
	}
	fb_filter_close(&f);
	free(keys);
	return 0;
}
