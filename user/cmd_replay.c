// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom replay`: every packet of a capture through the real XDP program
 * with BPF_PROG_TEST_RUN, against a live filter, attaching nothing. The
 * program runs with a private stats map (live counters stay untouched) and
 * with cfg_trace set, so --explain shows the key the program computed.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cmd.h"
#include "filter.h"
#include "flow.h"
#include "loader.h"
#include "output.h"
#include "pcapfile.h"

/* The largest frame replayed whole: an IP datagram with two VLAN tags.
 * BPF_PROG_TEST_RUN puts what exceeds a page into fragments, as a NIC
 * would; longer capture records (none on a real link) are cut. */
#define FB_TEST_RUN_MAX (65535 + 14 + 8)
#define ETH_HLEN 14

static const char *verdict_name(int v)
{
	static const char *const names[] = { "aborted", "drop", "pass", "tx", "redirect" };

	return v >= 0 && v <= XDP_REDIRECT ? names[v] : "?";
}

static const char *kind_name(__u32 k)
{
	return k == FB_KIND_FLOW ? "flow" : k == FB_KIND_SRC ? "src" : k == FB_KIND_DST ? "dst" : NULL;
}

int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "explain", no_argument, NULL, 'e' },
		{ "action", required_argument, NULL, 'a' },
		{ "malformed", required_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long count[XDP_REDIRECT + 1] = { 0 }, runt = 0, truncated = 0, total = 0;
	unsigned long long matched = 0, nonip = 0, malformed = 0, frags = 0, failed = 0;
	struct fb_load_opts lo = { .trace = true, .private_stats = true };
	char text[FB_FLOW_STR];
	struct flowbloom_bpf *skel = NULL;
	bool explain = false;
	static __u8 frame[FB_TEST_RUN_MAX];
	struct fb_filter f;
	struct fb_pcap *pc;
	size_t len;
	int c, v, cut, prog_fd, trace_fd, rc = 1;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			explain = true;
			break;
		case 'a':
			if ((v = fb_parse_action(optarg)) < 0)
				return 2;
			lo.action = v;
			break;
		case 'M':
			if ((v = fb_parse_malformed(optarg)) < 0)
				return 2;
			lo.malformed_drop = v;
			break;
		default:
			return fb_usage("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return fb_usage(argc - optind < 2 ? "missing NAME or FILE" : "too many arguments");
	pc = fb_pcap_open(argv[optind + 1]);
	if (!pc)
		return 1;
	if (fb_filter_open(argv[optind], &f)) {
		fb_pcap_close(pc);
		return 1;
	}
	skel = fb_load(&f, &lo);
	if (!skel)
		goto out;
	prog_fd = bpf_program__fd(skel->progs.flowbloom);
	trace_fd = bpf_map__fd(skel->maps.fb_trace);

	while ((v = fb_pcap_next(pc, frame, sizeof(frame), &len, &cut)) == 1) {
		LIBBPF_OPTS(bpf_test_run_opts, t, .repeat = 1);
		struct fb_trace tr;
		__u32 zero = 0;
		int err;

		total++;
		if (len < ETH_HLEN) {
			/* The kernel refuses frames shorter than an Ethernet
			 * header; no NIC delivers one either. */
			runt++;
			if (explain && fb_json) {
				jw_obj_open(NULL);
				jw_u64("packet", total);
				jw_str("verdict", "skipped");
				jw_str("reason", "shorter than an Ethernet header");
				jw_obj_close();
				jw_end();
			} else if (explain) {
				printf("%llu skipped (shorter than an Ethernet header)\n", total);
			}
			continue;
		}
		truncated += cut;
		t.data_in = frame;
		t.data_size_in = len;
		err = bpf_prog_test_run_opts(prog_fd, &t);
		if (err || bpf_map_lookup_elem(trace_fd, &zero, &tr)) {
			fb_err("%s: packet %llu: test run failed: %s", argv[optind + 1], total,
			       strerror(-err));
			failed++;
			continue;
		}
		if (t.retval <= XDP_REDIRECT)
			count[t.retval]++;
		matched += tr.kind != 0;
		nonip += tr.parse == FB_PARSE_NONIP;
		malformed += tr.parse == FB_PARSE_MALFORMED;
		frags += tr.fragment;
		if (!explain)
			continue;
		if (tr.parse == FB_PARSE_OK) {
			tr.key.kind = FB_KIND_FLOW;
			fb_flow_format(&tr.key, text, sizeof(text));
		}
		if (fb_json) {
			jw_obj_open(NULL);
			jw_u64("packet", total);
			jw_str("verdict", verdict_name(t.retval));
			jw_str("parse", tr.parse == FB_PARSE_OK	     ? "ok"
					: tr.parse == FB_PARSE_NONIP ? "non_ip"
								     : "malformed");
			jw_bool("fragment", tr.fragment);
			if (tr.parse == FB_PARSE_OK)
				jw_str("flow", text);
			else
				jw_null("flow");
			if (kind_name(tr.kind))
				jw_str("match", kind_name(tr.kind));
			else
				jw_null("match");
			jw_obj_close();
			jw_end();
		} else {
			printf("%llu %-5s %-5s %s%s\n", total, verdict_name(t.retval),
			       kind_name(tr.kind) ?: "-",
			       tr.parse == FB_PARSE_OK	    ? text
			       : tr.parse == FB_PARSE_NONIP ? "(non-ip)"
							    : "(malformed)",
			       tr.fragment ? " (fragment)" : "");
		}
	}
	if (v < 0)
		goto out;
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("file", argv[optind + 1]);
		jw_u64("packets", total);
		jw_u64("pass", count[XDP_PASS]);
		jw_u64("drop", count[XDP_DROP]);
		jw_u64("aborted", count[XDP_ABORTED]);
		jw_u64("other", count[XDP_TX] + count[XDP_REDIRECT]);
		jw_u64("matched", matched);
		jw_u64("non_ip", nonip);
		jw_u64("malformed", malformed);
		jw_u64("fragments", frags);
		jw_u64("skipped_runt", runt);
		jw_u64("truncated", truncated);
		jw_u64("failed", failed);
		jw_obj_close();
		jw_end();
	} else {
		printf("%s: %llu packets: %llu pass, %llu drop, %llu aborted; %llu matched, "
		       "%llu non-ip, %llu malformed, %llu fragments; %llu skipped (runt), "
		       "%llu run truncated to %d bytes\n",
		       argv[optind + 1], total, count[XDP_PASS], count[XDP_DROP],
		       count[XDP_ABORTED], matched, nonip, malformed, frags, runt, truncated,
		       FB_TEST_RUN_MAX);
	}
	rc = failed ? 1 : 0;
out:
	flowbloom_bpf__destroy(skel);
	fb_filter_close(&f);
	fb_pcap_close(pc);
	return rc;
}
