// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom flows`: new-flow events from the ring buffer, --follow to
 * stream them.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "cmd.h"
#include "rules/flow.h"
#include "monview.h"
#include "output.h"
#include "util.h"

struct follow {
	__u64 mono_to_real; /* add to CLOCK_MONOTONIC ns for CLOCK_REALTIME */
	__u64 events;
	struct fb_monview_devs devs;
};

/* An address as its packet's family wrote it: an IPv6 packet from
 * ::ffff:a.b.c.d is shown as IPv6, never as the IPv4 address a.b.c.d. */
static void addr_text(const __u8 a[16], __u8 family, char *buf, size_t len)
{
	if (family == FB_FAMILY_IPV4)
		inet_ntop(AF_INET, a + 12, buf, len);
	else
		inet_ntop(AF_INET6, a, buf, len);
}

static int on_event(void *ctx, void *data, size_t len)
{
	const struct fb_mon_event *e = data;
	struct follow *fo = ctx;
	char when[64], text[FB_FLOW_STR], src[64], dst[64];

	if (len < sizeof(*e))
		return 0;
	fo->events++;
	fb_clock_format(e->ts_ns + fo->mono_to_real, true, when, sizeof(when));
	fb_monview_flow_text(&e->key, text, sizeof(text));
	/* The ifindex is the device's in the namespace of the attachment
	 * that saw the packet: named there, not here (monview.h). */
	if (fb_json) {
		struct fb_monview_dev dev;

		fb_monview_dev(&fo->devs, e->ifindex, &dev);
		addr_text(e->key.saddr, e->key.family, src, sizeof(src));
		addr_text(e->key.daddr, e->key.family, dst, sizeof(dst));
		jw_obj_open(NULL);
		jw_str("time", when);
		jw_str("flow", text);
		if (fb_proto_name_fam(e->key.proto, e->key.family))
			jw_str("proto", fb_proto_name_fam(e->key.proto, e->key.family));
		else
			jw_u64("proto", e->key.proto);
		jw_str("src", src);
		jw_u64("sport", ntohs(e->key.sport));
		jw_str("dst", dst);
		jw_u64("dport", ntohs(e->key.dport));
		jw_str("dev", dev.name);
		jw_u64("ifindex", e->ifindex);
		if (dev.netns[0])
			jw_str("netns", dev.netns);
		jw_str("verdict", FB_NAME(fb_verdict_names, e->verdict));
		jw_u64("bytes", e->bytes);
		jw_obj_close();
		jw_end();
	} else {
		char dev[4096];

		fb_monview_dev_text(&fo->devs, e->ifindex, dev, sizeof(dev));
		printf("%s %-10s %-5s %6u  %s\n", when, dev, FB_NAME(fb_verdict_names, e->verdict),
		       e->bytes, text);
	}
	return 0;
}

static void report_lost(__u64 lost)
{
	char when[64];

	fb_clock_format(fb_clock_real_ns(), true, when, sizeof(when));
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("time", when);
		jw_u64("lost", lost);
		jw_obj_close();
		jw_end();
	} else {
		printf("%s lost %llu new-flow events: the ring buffer was full\n", when,
		       (unsigned long long)lost);
	}
}

int cmd_flows(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct follow fo = { 0 };
	struct ring_buffer *rb = NULL;
	struct fb_mon_stats st;
	struct fb_monitor m;
	struct fb_store f;
	bool follow = false;
	__u64 lost;
	int c, lock_fd = -1, rc = 1, r;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f", opts, NULL)) != -1) {
		if (c != 'f')
			return fb_bad_option(c, argv);
		follow = true;
	}
	if (argc - optind != 1)
		return fb_usage(argc - optind < 1 ? "missing NAME" : "too many arguments");
	if (fb_monview_open(argv[optind], FB_MON_NEWFLOWS, &f, &m))
		return 1;
	fb_monview_devs_init(&fo.devs, &f);
	lock_fd = fb_monview_lock_events(&f, &m);
	if (lock_fd < 0)
		goto out;
	fo.mono_to_real = fb_clock_real_ns() - fb_clock_mono_ns();
	rb = ring_buffer__new(m.events_fd, on_event, &fo, NULL);
	if (!rb) {
		fb_err("cannot read the new-flow ring buffer of '%s': %s", f.name, strerror(errno));
		goto out;
	}
	if (fb_monitor_read_stats(&m, &st))
		goto out;
	lost = st.c[FB_MON_STAT_LOST];
	if (!fb_json && follow)
		printf("%-27s %-10s %-5s %6s  %s\n", "time", "dev", "verdict", "bytes", "flow");
	if (follow)
		fb_catch_interrupt();
	for (;;) {
		/* The program wakes us only when the ring fills up (monitor.h):
		 * drain on every timeout too. */
		r = follow ? ring_buffer__poll(rb, 100) : 0;
		if (r >= 0 || r == -EINTR)
			r = ring_buffer__consume(rb);
		if (r < 0 && r != -EINTR) {
			fb_err("reading new-flow events: %s", strerror(-r));
			goto out;
		}
		/* ferror: nowhere to print (a full disk, stdout closed): main
		 * says so. */
		if (!follow || fb_interrupted() || ferror(stdout))
			break;
		/* Events get wall-clock times: a step of the clock (NTP at
		 * boot) is followed from the next events on. */
		fo.mono_to_real = fb_clock_real_ns() - fb_clock_mono_ns();
		if (fb_monview_gone(&f, &m))
			goto out;
		if (fb_monitor_read_stats(&m, &st))
			goto out;
		if (st.c[FB_MON_STAT_LOST] > lost) {
			report_lost(st.c[FB_MON_STAT_LOST] - lost);
			lost = st.c[FB_MON_STAT_LOST];
		}
	}
	if (!follow) {
		if (fb_monitor_read_stats(&m, &st))
			goto out;
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("filter", f.name);
			jw_u64("events", fo.events);
			jw_u64("new_flows", st.c[FB_MON_STAT_NEW]);
			jw_u64("lost", st.c[FB_MON_STAT_LOST]);
			jw_u64("carried", st.c[FB_MON_STAT_REFRESHED]);
			jw_obj_close();
			jw_end();
		} else {
			printf("%llu events; since attach: %llu new flows, %llu events lost, %llu "
			       "flows carried over\n",
			       (unsigned long long)fo.events,
			       (unsigned long long)st.c[FB_MON_STAT_NEW],
			       (unsigned long long)st.c[FB_MON_STAT_LOST],
			       (unsigned long long)st.c[FB_MON_STAT_REFRESHED]);
		}
	}
	rc = 0;
out:
	ring_buffer__free(rb);
	fb_monview_devs_free(&fo.devs);
	if (lock_fd >= 0)
		close(lock_fd);
	fb_monview_close(&f, &m);
	return rc;
}
