// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom query NAME --packet FLOW...`: what the data path does with one
 * packet of each flow, and which rule decides. Each FLOW must name one
 * packet (every field fixed); its frame (prog/frame.h) goes through the
 * real XDP program with BPF_PROG_TEST_RUN exactly as replay's packets do:
 * loaded once against the filter, with a private stats map (the filter's
 * counters stay untouched) and cfg_trace set, so the key, the rule kind
 * and shape printed are the program's own, and so is whether the rule is
 * permanent or has a lifetime (which generation). Prefix rules, shapes, rules
 * with a lifetime, --confirm exact, the action and the malformed policy
 * all come from running it; with --dev DEV, the action and malformed
 * policy of the program attached on DEV (ondev.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "cmd.h"
#include "explain.h"
#include "flowbloom/mask.h"
#include "output.h"
#include "prog/frame.h"
#include "prog/loader.h"
#include "prog/testrun.h"
#include "rules/flow.h"
#include "rules/lists.h"
#include "store/store.h"
#include "util.h"

#define HOW "give PROTO SRC:PORT DST:PORT, or PROTO src ADDR dst ADDR for a protocol without ports"

struct packets {
	struct fb_key *k;
	size_t n, cap;
};

/* Why what one FLOW made (keys[0..n)) is no single packet; NULL if it is. */
static const char *not_one_packet(const struct fb_key *keys, size_t n)
{
	__u32 d;

	if (n != 1)
		return "it makes several rules (a port range, or no address: both families)";
	if (keys[0].kind == FB_KIND_SRC || keys[0].kind == FB_KIND_DST)
		return "it names one address, a packet has a source and a destination";
	if (keys[0].kind == FB_KIND_FLOW)
		return NULL;
	d = fb_mask_of_key(&keys[0], NULL);
	if (!FB_MASK_PROTO(d))
		return "it fixes no protocol";
	if (FB_MASK_SLEN(d) < 128 || FB_MASK_DLEN(d) < 128)
		return FB_MASK_SLEN(d) && FB_MASK_DLEN(d) ? "an address is a prefix"
							  : "an address is missing";
	return FB_MASK_SPLEN(d) && FB_MASK_DPLEN(d) ? "a port is a range" : "a port is missing";
}

static int push(struct packets *p, const struct fb_key *k)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct fb_key *nk = realloc(p->k, cap * sizeof(*nk));

		if (!nk)
			return -1;
		p->k = nk;
		p->cap = cap;
	}
	p->k[p->n++] = *k;
	return 0;
}

/* The FLOWs of argv[0..argc): 0, or 2 (the usage error printed, naming
 * the argument: the first FLOW word is argument 1, as for add). */
static int from_args(int argc, char **argv, struct packets *p)
{
	struct fb_key keys[FB_RULE_KEYS_MAX];
	char err[256], text[FB_FLOW_STR];
	const char *why;
	size_t n, o;
	int i = 0, used, w;

	if (!argc)
		return fb_usage("no FLOW given");
	while (i < argc) {
		used = fb_flow_parse_keys(argc - i, argv + i, keys, &n, err, sizeof(err));
		if (used < 0)
			return fb_usage("argument %d: %s", i + 1, err);
		if ((why = not_one_packet(keys, n))) {
			for (o = 0, w = i; w < i + used && o < sizeof(text); w++)
				o += snprintf(text + o, sizeof(text) - o, "%s%s", w > i ? " " : "",
					      argv[w]);
			return fb_usage("argument %d: '%s' is not one packet: %s; " HOW, i + 1,
					text, why);
		}
		if (push(p, &keys[0]))
			return fb_err("out of memory"), 1;
		i += used;
	}
	return 0;
}

/* A line's rules (fb_list_sink): the first, and how many. */
struct line_keys {
	struct fb_key k;
	size_t n;
};

static int line_push(const struct fb_key *k, void *ctx, char *err, size_t errlen)
{
	struct line_keys *lk = ctx;

	(void)err;
	(void)errlen;
	if (!lk->n++)
		lk->k = *k;
	return 0;
}

/* The FLOWs of FILE, one a line, read as every FILE is (a list's lines,
 * rules/lists.h: a netset's address is read, then refused as no packet):
 * 0 (none is no error: every verb's -f answers an empty list with
 * nothing), or 1 (the error printed with FILE:LINE). */
static int from_file(const char *file, struct packets *p)
{
	char *line, err[256], text[FB_FLOW_STR];
	struct line_keys lk;
	const char *why;
	struct fb_lines r;
	size_t len;
	int rc;

	if (fb_lines_open(&r, file))
		return 1;
	while ((rc = fb_lines_next(&r, &line, &len)) > 0) {
		/* The line as written, for the message (parsing cuts it up). */
		snprintf(text, sizeof(text), "%.*s", (int)strcspn(line, "#;\r"), line);
		lk.n = 0;
		if (fb_list_parse_line(line, line_push, &lk, err, sizeof(err))) {
			fb_err("%s:%zu: %s", r.label, r.lineno, err);
			rc = -1;
			break;
		}
		if (!lk.n)
			continue;
		if ((why = not_one_packet(&lk.k, lk.n))) {
			fb_err("%s:%zu: '%s' is not one packet: %s; " HOW, r.label, r.lineno,
			       fb_trim(text), why);
			rc = -1;
			break;
		}
		if (push(p, &lk.k)) {
			fb_err("%s:%zu: out of memory", r.label, r.lineno);
			rc = -1;
			break;
		}
	}
	fb_lines_close(&r);
	if (rc < 0)
		return 1;
	return 0;
}

/* One flow's answer: verdict, the rule kind that matched (and the
 * shape's name for a shape), the flow as the program keyed it, and
 * whether the rule is permanent or has a lifetime (explain.h). */
static void answer(const struct fb_store *f, const char *verdict, const struct fb_trace *tr)
{
	char text[FB_FLOW_STR], shape[112] = "", life[96];
	const char *match = fb_match_name(tr->kind);
	struct fb_key k = tr->key;
	struct fb_life l;

	fb_life_of(f, tr, &l);
	fb_life_text(&l, life, sizeof(life));
	if (tr->kind == FB_KIND_MASK)
		fb_mask_name(tr->mask, shape, sizeof(shape));
	k.kind = FB_KIND_FLOW;
	if (tr->parse == FB_PARSE_OK)
		fb_flow_format(&k, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "%s",
			 tr->parse == FB_PARSE_NONIP ? "(non-ip)" : "(malformed)");
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("flow", text);
		jw_str("verdict", verdict);
		if (match)
			jw_str("match", match);
		else
			jw_null("match");
		if (*shape)
			jw_str("shape", shape);
		fb_life_json(&l);
		jw_obj_close();
	} else {
		printf("%-4s %-5s %s%s%s%s%s\n", verdict, match ?: "-", text, *shape ? " [" : "",
		       shape, *shape ? "]" : "", life);
	}
}

static int run(const char *name, const char *dev, struct fb_load_opts *lo, const struct packets *p)
{
	struct fb_dev_seen seen = { 0 };
	__u8 frame[FB_FRAME_MAX];
	char why[FB_FLOW_STR + 64] = "";
	size_t i, drop = 0, matched = 0;
	struct flowbloom_bpf *skel;
	struct fb_store f;
	int err, rc = 0;

	if (fb_store_open(name, &f))
		return 1;
	if (dev && fb_dev_settings(dev, &f, lo, &seen)) {
		fb_store_close(&f);
		return 1;
	}
	skel = fb_load(&f, lo);
	if (!skel) {
		fb_store_close(&f);
		return 1;
	}
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f.name);
		jw_arr_open("results");
	}
	for (i = 0; i < p->n; i++) {
		char text[FB_FLOW_STR];
		struct fb_trace tr;
		__u32 verdict;

		err = fb_test_run(skel, frame, fb_frame_of_flow(&p->k[i], frame), &verdict, &tr);
		if (err) {
			/* Said after the answers (inside them, its -j object
			 * cut the results in two). */
			fb_flow_format(&p->k[i], text, sizeof(text));
			snprintf(why, sizeof(why), "'%s': test run failed: %s", text,
				 strerror(-err));
			rc = 1;
			break;
		}
		drop += verdict == XDP_DROP;
		matched += tr.kind != 0;
		answer(&f, FB_NAME(fb_verdict_names, verdict), &tr);
	}
	if (fb_json) {
		jw_arr_close();
		jw_u64("drop", drop);
		jw_u64("pass", i - drop);
		jw_u64("matched", matched);
		jw_u64("total", i);
		fb_dev_seen_json(&seen);
		jw_obj_close();
		jw_end();
	} else if (!rc) {
		printf("%zu of %zu drop; %zu matched a rule", drop, i, matched);
		fb_dev_seen_text(&seen);
		printf("\n");
	}
	if (rc)
		fb_err("%s", why);
	fb_load_close(skel);
	fb_store_close(&f);
	return rc;
}

int fb_query_packet(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "packet", no_argument, NULL, 'p' },
		{ "file", required_argument, NULL, 'f' },
		{ "action", required_argument, NULL, 'a' },
		{ "malformed", required_argument, NULL, 'M' },
		{ "dev", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	struct fb_load_opts lo = { .trace = true, .private_stats = true };
	struct packets p = { 0 };
	const char *file = NULL, *dev = NULL, *name;
	bool packet = false, settings = false;
	int c, v, rc;

	optind = 0;
	opterr = 0;
	/* FLOW words never start with '-': getopt may move them after the
	 * options, in their order. */
	while ((c = getopt_long(argc, argv, ":f:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			packet = true;
			break;
		case 'f':
			if (file)
				return fb_usage("-f given twice");
			file = optarg;
			break;
		case 'd':
			if (dev)
				return fb_usage("--dev given twice");
			dev = optarg;
			break;
		default:
			v = fb_load_option(c, optarg, &lo);
			if (v < 0)
				return 2;
			if (!v)
				return fb_bad_option(c, argv);
			settings = true;
		}
	}
	if (!packet)
		return fb_usage("--action, --malformed and --dev go with --packet (what the "
				"program does with a packet)");
	if (dev && settings)
		return fb_usage(FB_DEV_EXCLUSIVE);
	if (optind >= argc)
		return fb_usage("missing NAME");
	name = argv[optind++];
	if (file && optind < argc)
		return fb_usage("give FLOWs or -f FILE, not both");
	rc = file ? from_file(file, &p) : from_args(argc - optind, argv + optind, &p);
	if (!rc)
		rc = run(name, dev, &lo, &p);
	free(p.k);
	return rc;
}
