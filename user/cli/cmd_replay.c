// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom replay`: every packet of one or more captures through the real
 * XDP program with BPF_PROG_TEST_RUN, against a live filter, attaching
 * nothing. The program is loaded once, with a private stats map (live
 * counters stay untouched) and with cfg_trace set, so --explain shows the
 * key the program itself computed, and whether the rule that decided is
 * permanent or has a lifetime (explain.h). With --dev DEV it takes the
 * action and malformed policy of the program attached on DEV (ondev.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include "cmd.h"
#include "explain.h"
#include "rules/flow.h"
#include "prog/loader.h"
#include "prog/testrun.h"
#include "output.h"
#include "rules/pcapfile.h"
#include "store/store.h"
#include "util.h"

/* The largest frame replayed whole: an IP datagram with two VLAN tags.
 * BPF_PROG_TEST_RUN puts what exceeds a page into fragments, as a NIC
 * would; longer capture records (none on a real link) are cut. */
#define FB_TEST_RUN_MAX (65535 + 14 + 8)
#define ETH_HLEN 14

struct tally {
	unsigned long long verdict[XDP_REDIRECT + 1];
	unsigned long long packets, matched, nonip, malformed, frags, runt, cut, failed;
	unsigned long long truncated; /* by the capture's snap length */
	unsigned long long overlong;  /* more bytes captured than on the wire */
	unsigned long long first_overlong;
	unsigned int first_caplen, first_len;
};

const char *fb_match_name(__u32 k)
{
	return k == FB_KIND_FLOW   ? "flow"
	       : k == FB_KIND_SRC  ? "src"
	       : k == FB_KIND_DST  ? "dst"
	       : k == FB_KIND_MASK ? "shape"
				   : NULL;
}

static const char *parse_name(__u32 p)
{
	return p == FB_PARSE_OK ? "ok" : p == FB_PARSE_NONIP ? "non_ip" : "malformed";
}

static void explain_line(const struct fb_store *f, const char *file, unsigned long long n,
			 const char *verdict, const struct fb_trace *tr, bool truncated,
			 bool overlong)
{
	char text[FB_FLOW_STR], shape[112] = "", life[96] = "", addrs[2 * FB_FLOW_STR] = "";
	struct fb_life l = { 0 };

	if (tr && tr->kind == FB_KIND_MASK) {
		shape[0] = ' ';
		shape[1] = '[';
		fb_mask_name(tr->mask, shape + 2, sizeof(shape) - 3);
		strcat(shape, "]");
	}
	if (tr) {
		fb_life_of(f, tr, &l);
		fb_life_text(&l, life, sizeof(life));
	}
	if (tr && tr->parse == FB_PARSE_OK) {
		struct fb_key k = tr->key;

		k.kind = FB_KIND_FLOW;
		fb_flow_format(&k, text, sizeof(text));
	}
	/* A malformed packet is matched on its addresses if the parser read
	 * them (its key then has a kind): they say which rule it was. */
	if (tr && tr->parse == FB_PARSE_MALFORMED && tr->key.kind) {
		struct fb_key k = tr->key;
		char s[FB_FLOW_STR], d[FB_FLOW_STR];

		k.plen = 128;
		k.kind = FB_KIND_SRC;
		fb_flow_format(&k, s, sizeof(s));
		k.kind = FB_KIND_DST;
		fb_flow_format(&k, d, sizeof(d));
		snprintf(addrs, sizeof(addrs), "%s %s", s, d);
	}
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("file", file);
		jw_u64("packet", n);
		jw_str("verdict", verdict);
		jw_bool("truncated", truncated);
		jw_bool("overlong", overlong);
		if (!tr) {
			jw_str("reason", "shorter than an Ethernet header");
		} else {
			jw_str("parse", parse_name(tr->parse));
			jw_bool("fragment", tr->fragment);
			if (tr->parse == FB_PARSE_OK)
				jw_str("flow", text);
			else
				jw_null("flow");
			if (*addrs)
				jw_str("addresses", addrs);
			else
				jw_null("addresses");
			if (fb_match_name(tr->kind))
				jw_str("match", fb_match_name(tr->kind));
			else
				jw_null("match");
			if (tr->kind == FB_KIND_MASK) {
				shape[strlen(shape) - 1] = 0;
				jw_str("shape", shape + 2);
			}
			fb_life_json(&l);
		}
		jw_obj_close();
		jw_end();
	} else if (!tr) {
		printf("%llu %s (shorter than an Ethernet header)%s%s\n", n, verdict,
		       truncated ? " (truncated capture)" : "",
		       overlong ? " (longer than on the wire)" : "");
	} else {
		printf("%llu %-5s %-5s %s%s%s%s%s%s%s%s%s\n", n, verdict,
		       fb_match_name(tr->kind) ?: "-",
		       tr->parse == FB_PARSE_OK	     ? text
		       : tr->parse == FB_PARSE_NONIP ? "(non-ip)"
						     : "(malformed",
		       *addrs ? ": " : "", addrs, tr->parse == FB_PARSE_MALFORMED ? ")" : "",
		       tr->fragment ? " (fragment)" : "", shape, life,
		       truncated ? " (truncated capture)" : "",
		       overlong ? " (longer than on the wire)" : "");
	}
}

static void summary(const char *file, const struct tally *t, const struct fb_dev_seen *seen)
{
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("file", file);
		jw_u64("packets", t->packets);
		jw_u64("pass", t->verdict[XDP_PASS]);
		jw_u64("drop", t->verdict[XDP_DROP]);
		jw_u64("aborted", t->verdict[XDP_ABORTED]);
		jw_u64("other", t->verdict[XDP_TX] + t->verdict[XDP_REDIRECT]);
		jw_u64("matched", t->matched);
		jw_u64("non_ip", t->nonip);
		jw_u64("malformed", t->malformed);
		jw_u64("fragments", t->frags);
		jw_u64("skipped_runt", t->runt);
		jw_u64("cut", t->cut);
		jw_u64("truncated", t->truncated);
		jw_u64("overlong", t->overlong);
		jw_u64("failed", t->failed);
		fb_dev_seen_json(seen);
		jw_obj_close();
		jw_end();
	} else {
		printf("%s: %llu packet%s: %llu pass, %llu drop, %llu aborted; %llu matched, "
		       "%llu non-ip, %llu malformed, %llu fragments; %llu skipped (runt)",
		       fb_shown(file), t->packets, t->packets == 1 ? "" : "s", t->verdict[XDP_PASS],
		       t->verdict[XDP_DROP], t->verdict[XDP_ABORTED], t->matched, t->nonip,
		       t->malformed, t->frags, t->runt);
		if (t->cut)
			printf(", %llu cut to %d bytes", t->cut, FB_TEST_RUN_MAX);
		/* Each said above, by its record: no verdict counted for them. */
		if (t->failed)
			printf(", %llu not run (test run failed)", t->failed);
		/* Their verdicts are for the bytes the capture kept: headers cut
		 * off make a packet malformed here that the device would see whole. */
		if (t->truncated)
			printf(", %llu truncated by the capture", t->truncated);
		if (t->overlong)
			printf(", %llu longer than on the wire", t->overlong);
		fb_dev_seen_text(seen);
		printf("\n");
	}
}

/* Records holding more bytes than their frames had on the wire: malformed
 * (no capture writes one), replayed as the device saw them, at their
 * length on the wire, and said once per file, naming the first. */
static void overlong_warning(const char *path, const struct tally *t)
{
	if (t->overlong == 1)
		fb_warn("%s: record %llu: %u bytes captured of a %u-byte frame: replayed as its %u "
			"bytes on the wire",
			path, t->first_overlong, t->first_caplen, t->first_len, t->first_len);
	else if (t->overlong)
		fb_warn("%s: %llu records hold more bytes than their frames had on the wire, "
			"replayed as their length on the wire; the first: record %llu, %u bytes "
			"captured of a %u-byte frame",
			path, t->overlong, t->first_overlong, t->first_caplen, t->first_len);
}

/* The capture arg ("-": stdin), named path in what is printed. 0, -1 if
 * reading stopped early, -2 if it could not be opened (printed). */
static int replay_file(const struct fb_store *f, struct flowbloom_bpf *skel, const char *arg,
		       const char *path, bool explain, struct tally *t)
{
	static __u8 frame[FB_TEST_RUN_MAX];
	struct fb_pcap *pc = fb_pcap_open(arg);
	size_t len;
	int cut, v;

	if (!pc)
		return -2;
	while ((v = fb_pcap_next(pc, frame, sizeof(frame), &len, &cut)) == 1) {
		struct fb_trace tr;
		__u32 verdict;
		bool trunc = fb_pcap_truncated(pc);
		unsigned int caplen, wire;
		bool over = fb_pcap_overlong(pc, &caplen, &wire);
		int err;

		t->packets++;
		t->truncated += trunc;
		if (over && !t->overlong++) {
			t->first_overlong = t->packets;
			t->first_caplen = caplen;
			t->first_len = wire;
		}
		if (len < ETH_HLEN) {
			/* The kernel refuses frames shorter than an Ethernet
			 * header; no NIC delivers one either. */
			t->runt++;
			if (explain)
				explain_line(f, path, t->packets, "skipped", NULL, trunc, over);
			continue;
		}
		t->cut += cut;
		err = fb_test_run(skel, frame, len, &verdict, &tr);
		if (err) {
			fb_err("%s: record %llu: test run failed: %s", path, t->packets,
			       strerror(-err));
			t->failed++;
			continue;
		}
		if (verdict <= XDP_REDIRECT)
			t->verdict[verdict]++;
		t->matched += tr.kind != 0;
		t->nonip += tr.parse == FB_PARSE_NONIP;
		t->malformed += tr.parse == FB_PARSE_MALFORMED;
		t->frags += tr.fragment;
		if (explain)
			explain_line(f, path, t->packets, FB_NAME(fb_verdict_names, verdict), &tr,
				     trunc, over);
	}
	fb_pcap_close(pc);
	overlong_warning(path, t);
	return v < 0 ? -1 : 0;
}

int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "explain", no_argument, NULL, 'e' },
		{ "action", required_argument, NULL, 'a' },
		{ "malformed", required_argument, NULL, 'M' },
		{ "dev", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	/* Multi-buffer, as attach loads it for jumbo frames: a frame longer
	 * than a page is then read as a device of that MTU reads it (the
	 * program of one buffer would see the first page only, and pass a
	 * malformed one the device drops); shorter ones are read alike. */
	struct fb_load_opts lo = { .trace = true, .private_stats = true, .frags = true };
	struct fb_dev_seen seen = { 0 };
	struct flowbloom_bpf *skel;
	bool explain = false, settings = false;
	const char *dev = NULL;
	struct fb_store f;
	int c, v, i, rc = 0;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			explain = true;
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
	if (dev && settings)
		return fb_usage(FB_DEV_EXCLUSIVE);
	if (argc - optind < 2)
		return fb_usage("missing NAME or FILE");
	if (fb_store_open(argv[optind], &f))
		return 1;
	if (dev && fb_dev_settings(dev, &f, &lo, &seen)) {
		fb_store_close(&f);
		return 1;
	}
	skel = fb_load(&f, &lo);
	if (!skel) {
		fb_store_close(&f);
		return 1;
	}
	for (i = optind + 1; i < argc; i++) {
		struct tally t = { 0 };
		const char *name = strcmp(argv[i], "-") ? argv[i] : "<stdin>";
		int r = replay_file(&f, skel, argv[i], name, explain, &t);

		if (r || t.failed)
			rc = 1;
		/* A capture that could not be opened has no summary, only its
		 * error; one cut short has the packets read before. */
		if (r != -2)
			summary(name, &t, &seen);
	}
	fb_load_close(skel);
	fb_store_close(&f);
	return rc;
}
