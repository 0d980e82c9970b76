// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The monitoring verbs: `top` (heaviest flows from the candidate table,
 * scored with the sketch), `traffic` (the sketch's estimate for given
 * flows), `flows` (new-flow events from the ring buffer, --follow to
 * stream them), `metrics` (Prometheus text exposition), and the loop behind
 * `stats --watch`. Also attach's monitoring options. The maps and how to
 * read them are in monitor.c.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cmd.h"
#include "flow.h"
#include "monmaps.h"
#include "output.h"
#include "pintree.h"
#include "safefile.h"
#include "stats.h"
#include "store.h"

/* ------------------------------------------------------------- helpers */

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

void fb_catch_interrupt(void)
{
	struct sigaction sa;

	/* No SA_RESTART: a blocking poll or sleep returns at once with EINTR,
	 * and the loop ends cleanly (exit 0), output flushed. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool fb_interrupted(void)
{
	return interrupted;
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep until CLOCK_MONOTONIC reaches `until` (seconds); false if
 * interrupted first. Absolute deadlines keep periodic output from
 * drifting. */
static bool sleep_until(double until)
{
	struct timespec ts = { .tv_sec = (time_t)until,
			       .tv_nsec = (long)((until - (time_t)until) * 1e9) };

	while (!interrupted) {
		int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (r != EINTR)
			return !interrupted;
	}
	return false;
}

static __u64 real_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static __u64 mono_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ISO 8601 UTC, to the microsecond (frac) or the second. */
static void fmt_time(__u64 ns, bool frac, char *buf, size_t len)
{
	time_t s = ns / 1000000000ULL;
	struct tm tm;
	size_t n;

	gmtime_r(&s, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (frac)
		snprintf(buf + n, len - n, ".%06uZ", (unsigned)(ns % 1000000000ULL / 1000));
	else
		snprintf(buf + n, len - n, "Z");
}

static int parse_double(const char *opt, const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max)) {
		fb_usage("bad value '%s' for %s (want %g to %g)", s, opt, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_u64(const char *opt, const char *s, __u64 min, __u64 max, __u64 *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fb_usage("bad value '%s' for %s (want %llu to %llu)", s, opt,
			 (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

/* A size with an optional K, M or G suffix (powers of 1024). */
static int parse_size(const char *opt, const char *s, __u64 *out)
{
	char num[64], *end;
	unsigned long long v, mult = 1;
	size_t n = strlen(s);

	if (!n || n >= sizeof(num))
		goto bad;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'k':
	case 'K':
		mult = 1ULL << 10;
		break;
	case 'm':
	case 'M':
		mult = 1ULL << 20;
		break;
	case 'g':
	case 'G':
		mult = 1ULL << 30;
		break;
	}
	if (mult > 1)
		num[n - 1] = 0;
	errno = 0;
	v = strtoull(num, &end, 10);
	if (errno || end == num || *end || num[0] == '-' || v > (1ULL << 40) / mult)
		goto bad;
	*out = v * mult;
	return 0;
bad:
	fb_usage("bad size '%s' for %s (bytes, or with K, M, G)", s, opt);
	return -1;
}

int fb_mon_option(int c, const char *arg, struct fb_mon_opts *o)
{
	__u64 v;

	if (c < FB_OPT_MONITOR || c > FB_OPT_RING)
		return 0;
	o->given |= 1U << (c - FB_OPT_MONITOR);
	switch (c) {
	case FB_OPT_MONITOR:
		o->sketch = true;
		return 1;
	case FB_OPT_EPSILON:
		o->sketch = true;
		return parse_double("--epsilon", arg, 1e-6, 0.5, &o->epsilon) ? -1 : 1;
	case FB_OPT_DELTA:
		o->sketch = true;
		return parse_double("--delta", arg, 1e-6, 0.5, &o->delta) ? -1 : 1;
	case FB_OPT_NEWFLOWS:
		o->newflows = true;
		return 1;
	case FB_OPT_AGE:
		o->newflows = true;
		return parse_double("--age", arg, FB_MON_MIN_AGE, FB_MON_MAX_AGE, &o->age) ? -1 : 1;
	case FB_OPT_EXPECT:
		o->newflows = true;
		return parse_u64("--expect", arg, 1, FB_SEEN_MAX_SLOTS, &o->expect) ? -1 : 1;
	case FB_OPT_RING:
		o->newflows = true;
		if (parse_size("--ring", arg, &v))
			return -1;
		if (v < (__u64)getpagesize() || v > (1ULL << 30) || (v & (v - 1))) {
			fb_usage("--ring must be a power of 2 from %d bytes to 1G", getpagesize());
			return -1;
		}
		o->ring_bytes = (__u32)v;
		return 1;
	}
	return 0;
}

/* Open filter NAME and its monitoring maps, which must include `need`. */
static int open_monitor(const char *name, __u32 need, struct fb_store *f, struct fb_monitor *m)
{
	int rc;

	if (fb_store_open(name, f))
		return -1;
	rc = fb_monitor_open(f, m);
	if (rc < 0) {
		fb_store_close(f);
		return -1;
	}
	if (rc > 0 || (m->cfg.flags & need) != need) {
		fb_err("filter '%s' has no %s (attach it with %s)", name,
		       need & FB_MON_SKETCH ? "traffic sketch" : "new-flow detection",
		       need & FB_MON_SKETCH ? "--monitor" : "--new-flows");
		if (!rc)
			fb_monitor_close(m);
		fb_store_close(f);
		return -1;
	}
	return 0;
}

/* Is the filter opened still the one pinned under its name? `destroy`
 * unpins it while a loop holds its maps, which then live on, fed by no
 * program: a loop must stop rather than show zeros forever (and must not
 * follow a new filter created under the same name). */
static bool filter_gone(const struct fb_store *f)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[600];
	bool gone;
	int fd;

	snprintf(path, sizeof(path), "%s/stats", f->dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT;
	gone = !bpf_obj_get_info_by_fd(fd, &info, &len) && info.id != f->stats_id;
	close(fd);
	return gone;
}

static int report_gone(const struct fb_store *f)
{
	fb_err("filter '%s' is gone (destroyed)", f->name);
	return 1;
}

static void close_monitor(struct fb_store *f, struct fb_monitor *m)
{
	fb_monitor_close(m);
	fb_store_close(f);
}

/* The bound eps' * N on any estimate's excess, rounded up. */
static __u64 max_error(const struct fb_monitor *m, __u64 total)
{
	return (__u64)ceil(fb_monitor_epsilon(m) * (double)total);
}

static void flow_text(const struct fb_key *k, char *buf, size_t len)
{
	struct fb_key c = *k;

	/* The program's keys are 5-tuple keys; print them as FLOW syntax. */
	c.kind = FB_KIND_FLOW;
	c.plen = 0;
	fb_flow_format(&c, buf, len);
}

/* ------------------------------------------------------------------ top */

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "interval", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const bys[] = { "packets", "bytes", NULL };
	static const int by_v[] = { 0, 1 };
	struct fb_mon_snap base = { 0 }, now = { 0 };
	double interval = 0, secs = 0, t0;
	struct fb_top_entry *e = NULL;
	__u64 n = 10, tot, err_p, err_b;
	char since[64], text[FB_FLOW_STR];
	struct fb_monitor m;
	struct fb_store f;
	int c, v, by = 0, got, i, rc = 1;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "n:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_u64("-n", optarg, 1, 100000, &n))
				return 2;
			break;
		case 'b':
			if ((v = fb_pick("--by", optarg, bys, by_v)) < 0)
				return 2;
			by = v;
			break;
		case 'i':
			if (parse_double("--interval", optarg, 0.01, 86400, &interval))
				return 2;
			break;
		default:
			return fb_usage("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return fb_usage(argc - optind < 1 ? "missing NAME" : "too many arguments");
	if (open_monitor(argv[optind], FB_MON_SKETCH, &f, &m))
		return 1;
	if (interval > 0) {
		/* The sketch is linear: the difference of two readings is the
		 * sketch of the traffic in between. */
		fb_catch_interrupt();
		if (fb_monitor_snap_take(&m, &base))
			goto out;
		t0 = mono_now();
		if (!sleep_until(t0 + interval)) {
			rc = 0; /* Ctrl-C before the interval ended: nothing to show */
			goto out;
		}
		secs = mono_now() - t0;
		if (filter_gone(&f)) {
			report_gone(&f);
			goto out;
		}
	}
	if (fb_monitor_snap_take(&m, &now))
		goto out;
	got = fb_monitor_top(&m, &now, interval > 0 ? &base : NULL, by, n, &e);
	if (got < 0)
		goto out;
	if (interval > 0) {
		__u64 dp = now.packets - base.packets, db = now.bytes - base.bytes;

		now.packets = dp;
		now.bytes = db;
	}
	tot = by ? now.bytes : now.packets;
	err_p = max_error(&m, now.packets);
	err_b = max_error(&m, now.bytes);
	fmt_time(m.cfg.created_ns, false, since, sizeof(since));
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f.name);
		jw_str("by", bys[by]);
		jw_str("since", since);
		if (interval > 0)
			jw_double("interval", secs);
		else
			jw_null("interval");
		jw_u64("total_packets", now.packets);
		jw_u64("total_bytes", now.bytes);
		jw_u64("max_error_packets", err_p);
		jw_u64("max_error_bytes", err_b);
		jw_double("confidence", 1 - fb_monitor_delta(&m));
		jw_arr_open("flows");
		for (i = 0; i < got; i++) {
			flow_text(&e[i].key, text, sizeof(text));
			jw_obj_open(NULL);
			jw_u64("rank", i + 1);
			jw_str("flow", text);
			jw_u64("packets", e[i].packets);
			jw_u64("bytes", e[i].bytes);
			if (interval > 0) {
				jw_double("pps", e[i].packets / secs);
				jw_double("bps", e[i].bytes * 8.0 / secs);
			}
			jw_obj_close();
		}
		jw_arr_close();
		jw_obj_close();
		jw_end();
	} else {
		if (interval > 0)
			printf("top %d of '%s' by %s over %.2f s: %llu packets, %llu bytes\n", got,
			       f.name, bys[by], secs, (unsigned long long)now.packets,
			       (unsigned long long)now.bytes);
		else
			printf("top %d of '%s' by %s since %s: %llu packets, %llu bytes\n", got,
			       f.name, bys[by], since, (unsigned long long)now.packets,
			       (unsigned long long)now.bytes);
		printf("estimates are never below the truth, and above it by at most %llu packets, "
		       "%llu bytes with probability %.4g%%\n",
		       (unsigned long long)err_p, (unsigned long long)err_b,
		       100 * (1 - fb_monitor_delta(&m)));
		if (interval > 0)
			printf("%4s %14s %16s %7s  %s\n", "rank", "pps", "bits/s", "share", "flow");
		else
			printf("%4s %14s %16s %7s  %s\n", "rank", "packets", "bytes", "share",
			       "flow");
		for (i = 0; i < got; i++) {
			__u64 val = by ? e[i].bytes : e[i].packets;

			flow_text(&e[i].key, text, sizeof(text));
			if (interval > 0)
				printf("%4d %14.1f %16.1f %6.2f%%  %s\n", i + 1,
				       e[i].packets / secs, e[i].bytes * 8.0 / secs,
				       tot ? 100.0 * val / tot : 0.0, text);
			else
				printf("%4d %14llu %16llu %6.2f%%  %s\n", i + 1,
				       (unsigned long long)e[i].packets,
				       (unsigned long long)e[i].bytes,
				       tot ? 100.0 * val / tot : 0.0, text);
		}
	}
	rc = 0;
out:
	free(e);
	fb_monitor_snap_free(&base);
	fb_monitor_snap_free(&now);
	close_monitor(&f, &m);
	return rc;
}

/* -------------------------------------------------------------- traffic */

int cmd_traffic(int argc, char **argv)
{
	const char *file = NULL;
	char since[64], text[FB_FLOW_STR], where[64];
	struct fb_mon_snap s = { 0 };
	struct fb_flows fl;
	struct fb_monitor m;
	struct fb_store f;
	__u64 p, b, err_p, err_b;
	int first = 2, rc = 1;
	size_t i;

	if (argc < 2)
		return fb_usage("missing NAME");
	if (argc >= 4 && !strcmp(argv[2], "-f")) {
		if (argc != 4)
			return fb_usage("give FLOWs or -f FILE, not both");
		file = argv[3];
		first = 4;
	}
	if (fb_read_flows(argc - first, argv + first, file, &fl))
		return 1;
	for (i = 0; i < fl.n; i++)
		if (fl.keys[i].kind != FB_KIND_FLOW || fl.keys[i].plen) {
			fb_flows_where(&fl, i, where, sizeof(where));
			fb_err("%s: the sketch counts 5-tuples (PROTO SRC:PORT DST:PORT), not "
			       "addresses",
			       where);
			fb_flows_free(&fl);
			return 1;
		}
	if (open_monitor(argv[1], FB_MON_SKETCH, &f, &m)) {
		fb_flows_free(&fl);
		return 1;
	}
	if (fb_monitor_snap_take(&m, &s))
		goto out;
	err_p = max_error(&m, s.packets);
	err_b = max_error(&m, s.bytes);
	fmt_time(m.cfg.created_ns, false, since, sizeof(since));
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f.name);
		jw_str("since", since);
		jw_u64("total_packets", s.packets);
		jw_u64("total_bytes", s.bytes);
		jw_u64("max_error_packets", err_p);
		jw_u64("max_error_bytes", err_b);
		jw_double("confidence", 1 - fb_monitor_delta(&m));
		jw_arr_open("flows");
	} else {
		printf("'%s' since %s: %llu packets, %llu bytes\n", f.name, since,
		       (unsigned long long)s.packets, (unsigned long long)s.bytes);
		printf("estimates are never below the truth, and above it by at most %llu packets, "
		       "%llu bytes with probability %.4g%%\n",
		       (unsigned long long)err_p, (unsigned long long)err_b,
		       100 * (1 - fb_monitor_delta(&m)));
		printf("%14s %16s  %s\n", "packets", "bytes", "flow");
	}
	for (i = 0; i < fl.n; i++) {
		fb_monitor_estimate(&m, &s, NULL, &fl.keys[i], &p, &b);
		flow_text(&fl.keys[i], text, sizeof(text));
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("flow", text);
			jw_u64("packets", p);
			jw_u64("bytes", b);
			jw_u64("packets_at_least", p > err_p ? p - err_p : 0);
			jw_u64("bytes_at_least", b > err_b ? b - err_b : 0);
			jw_obj_close();
		} else {
			printf("%14llu %16llu  %s\n", (unsigned long long)p, (unsigned long long)b,
			       text);
		}
	}
	if (fb_json) {
		jw_arr_close();
		jw_obj_close();
		jw_end();
	}
	rc = 0;
out:
	fb_monitor_snap_free(&s);
	fb_flows_free(&fl);
	close_monitor(&f, &m);
	return rc;
}

/* ---------------------------------------------------------------- flows */

struct follow {
	__u64 mono_to_real; /* add to CLOCK_MONOTONIC ns for CLOCK_REALTIME */
	__u64 events;
};

static const char *verdict_name(unsigned v)
{
	static const char *const names[] = { "aborted", "drop", "pass", "tx", "redirect" };

	return v <= XDP_REDIRECT ? names[v] : "?";
}

static void addr_text(const __u8 a[16], char *buf, size_t len)
{
	if (fb_addr_v4mapped(a))
		inet_ntop(AF_INET, a + 12, buf, len);
	else
		inet_ntop(AF_INET6, a, buf, len);
}

static int on_event(void *ctx, void *data, size_t len)
{
	const struct fb_mon_event *e = data;
	struct follow *fo = ctx;
	char when[64], text[FB_FLOW_STR], dev[IF_NAMESIZE] = "?", src[64], dst[64];

	if (len < sizeof(*e))
		return 0;
	fo->events++;
	fmt_time(e->ts_ns + fo->mono_to_real, true, when, sizeof(when));
	flow_text(&e->key, text, sizeof(text));
	if (!if_indextoname(e->ifindex, dev))
		snprintf(dev, sizeof(dev), "if%u", e->ifindex);
	if (fb_json) {
		addr_text(e->key.saddr, src, sizeof(src));
		addr_text(e->key.daddr, dst, sizeof(dst));
		jw_obj_open(NULL);
		jw_str("time", when);
		jw_str("flow", text);
		if (fb_proto_name(e->key.proto))
			jw_str("proto", fb_proto_name(e->key.proto));
		else
			jw_u64("proto", e->key.proto);
		jw_str("src", src);
		jw_u64("sport", ntohs(e->key.sport));
		jw_str("dst", dst);
		jw_u64("dport", ntohs(e->key.dport));
		jw_str("dev", dev);
		jw_u64("ifindex", e->ifindex);
		jw_str("verdict", verdict_name(e->verdict));
		jw_u64("bytes", e->bytes);
		jw_obj_close();
		jw_end();
	} else {
		printf("%s %-10s %-5s %6u  %s\n", when, dev, verdict_name(e->verdict), e->bytes,
		       text);
	}
	return 0;
}

static void report_lost(__u64 lost)
{
	char when[64];

	fmt_time(real_now_ns(), true, when, sizeof(when));
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
	while ((c = getopt_long(argc, argv, "f", opts, NULL)) != -1) {
		if (c != 'f')
			return fb_usage("unknown or incomplete option '%s'", argv[optind - 1]);
		follow = true;
	}
	if (argc - optind != 1)
		return fb_usage(argc - optind < 1 ? "missing NAME" : "too many arguments");
	if (open_monitor(argv[optind], FB_MON_NEWFLOWS, &f, &m))
		return 1;
	/* Readers share the ring's consumer position: one at a time. */
	lock_fd = open(m.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB)) {
		fb_err("another reader is taking the new-flow events of '%s'%s%s", f.name,
		       errno == EWOULDBLOCK ? "" : ": ",
		       errno == EWOULDBLOCK ? "" : strerror(errno));
		goto out;
	}
	fo.mono_to_real = real_now_ns() - mono_now_ns();
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
		if (!follow || fb_interrupted())
			break;
		if (filter_gone(&f)) {
			report_gone(&f);
			goto out;
		}
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
	if (lock_fd >= 0)
		close(lock_fd);
	close_monitor(&f, &m);
	return rc;
}

/* ------------------------------------------------------------- metrics */

/* One filter's numbers, read once so every family shows one instant. */
struct mfilter {
	char name[FB_NAME_MAX];
	struct fb_stats st;
	__u64 flows, size;
	bool sketch, newflows;
	__u64 packets, bytes, err_p, err_b, created;
	double eps, delta, fill;
	struct fb_mon_stats ms;
};

enum mkind { M_COUNTER, M_GAUGE };

/* Which value of struct mfilter a family shows. */
typedef bool (*mget)(const struct mfilter *mf, int arg, double *v);

struct mfamily {
	char name[96];
	const char *help;
	enum mkind kind;
	mget get;
	int arg;
};

static bool get_stat_packets(const struct mfilter *mf, int i, double *v)
{
	*v = (double)mf->st.c[i].packets;
	return true;
}

static bool get_stat_bytes(const struct mfilter *mf, int i, double *v)
{
	*v = (double)mf->st.c[i].bytes;
	return true;
}

enum {
	G_FLOWS,
	G_SIZE,
	G_PACKETS,
	G_BYTES,
	G_ERR_P,
	G_ERR_B,
	G_EPS,
	G_DELTA,
	G_START,
	G_NEW,
	G_LOST,
	G_CARRIED,
	G_FILL,
};

static bool get_other(const struct mfilter *mf, int what, double *v)
{
	switch (what) {
	case G_FLOWS:
		*v = (double)mf->flows;
		return true;
	case G_SIZE:
		*v = (double)mf->size;
		return true;
	case G_PACKETS:
		*v = (double)mf->packets;
		return mf->sketch;
	case G_BYTES:
		*v = (double)mf->bytes;
		return mf->sketch;
	case G_ERR_P:
		*v = (double)mf->err_p;
		return mf->sketch;
	case G_ERR_B:
		*v = (double)mf->err_b;
		return mf->sketch;
	case G_EPS:
		*v = mf->eps;
		return mf->sketch;
	case G_DELTA:
		*v = mf->delta;
		return mf->sketch;
	case G_START:
		*v = (double)(mf->created / 1000000000ULL); /* whole seconds */
		return mf->sketch || mf->newflows;
	case G_NEW:
		*v = (double)mf->ms.c[FB_MON_STAT_NEW];
		return mf->newflows;
	case G_LOST:
		*v = (double)mf->ms.c[FB_MON_STAT_LOST];
		return mf->newflows;
	case G_CARRIED:
		*v = (double)mf->ms.c[FB_MON_STAT_REFRESHED];
		return mf->newflows;
	case G_FILL:
		*v = mf->fill;
		return mf->newflows;
	}
	return false;
}

static const struct {
	const char *name, *help;
	enum mkind kind;
	int what;
} others[] = {
	{ "flowbloom_filter_flows", "Flows added to the filter.", M_GAUGE, G_FLOWS },
	{ "flowbloom_filter_size_bytes", "Bytes of the filter's bit array.", M_GAUGE, G_SIZE },
	{ "flowbloom_monitor_packets_total", "Packets counted by the flow sketch (its N).",
	  M_COUNTER, G_PACKETS },
	{ "flowbloom_monitor_bytes_total", "Bytes counted by the flow sketch.", M_COUNTER,
	  G_BYTES },
	{ "flowbloom_monitor_max_error_packets",
	  "A per-flow packet estimate exceeds the truth by at most this (eps * N), with "
	  "probability 1 - delta.",
	  M_GAUGE, G_ERR_P },
	{ "flowbloom_monitor_max_error_bytes",
	  "A per-flow byte estimate exceeds the truth by at most this, with probability "
	  "1 - delta.",
	  M_GAUGE, G_ERR_B },
	{ "flowbloom_monitor_epsilon", "The sketch's error bound, relative to N.", M_GAUGE, G_EPS },
	{ "flowbloom_monitor_delta", "Probability that an estimate exceeds its bound.", M_GAUGE,
	  G_DELTA },
	{ "flowbloom_monitor_start_time_seconds",
	  "When the monitoring maps were created (counting started), Unix time.", M_GAUGE,
	  G_START },
	{ "flowbloom_monitor_new_flows_total", "New flows detected (events sent + events lost).",
	  M_COUNTER, G_NEW },
	{ "flowbloom_monitor_events_lost_total",
	  "New-flow events lost because the ring buffer was full.", M_COUNTER, G_LOST },
	{ "flowbloom_monitor_flows_carried_total",
	  "Flows active across an aging period boundary (not reported again).", M_COUNTER,
	  G_CARRIED },
	{ "flowbloom_monitor_seen_fill_ratio",
	  "Share of the seen-set's bits set in the current aging period.", M_GAUGE, G_FILL },
};

static int read_mfilter(const char *name, struct mfilter *mf)
{
	struct fb_mon_snap s;
	struct fb_monitor m;
	struct fb_store f;
	int rc;

	memset(mf, 0, sizeof(*mf));
	if (fb_store_open(name, &f))
		return -1;
	snprintf(mf->name, sizeof(mf->name), "%s", name);
	if (fb_stats_read(&f, &mf->st)) {
		fb_store_close(&f);
		return -1;
	}
	mf->flows = f.hdr->nflows;
	mf->size = (__u64)f.hdr->nblocks * FB_BLOCK_BYTES;
	rc = fb_monitor_open(&f, &m);
	if (rc < 0) {
		fb_store_close(&f);
		return -1;
	}
	if (rc == 0) {
		mf->created = m.cfg.created_ns;
		if (m.cfg.flags & FB_MON_SKETCH) {
			if (fb_monitor_snap_take(&m, &s)) {
				close_monitor(&f, &m);
				return -1;
			}
			mf->sketch = true;
			mf->packets = s.packets;
			mf->bytes = s.bytes;
			mf->err_p = max_error(&m, s.packets);
			mf->err_b = max_error(&m, s.bytes);
			mf->eps = fb_monitor_epsilon(&m);
			mf->delta = fb_monitor_delta(&m);
			fb_monitor_snap_free(&s);
		}
		if (m.cfg.flags & FB_MON_NEWFLOWS) {
			if (fb_monitor_read_stats(&m, &mf->ms)) {
				close_monitor(&f, &m);
				return -1;
			}
			mf->newflows = true;
			mf->fill = fb_monitor_seen_fill(&m);
		}
		fb_monitor_close(&m);
	}
	fb_store_close(&f);
	return 0;
}

static void label_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void help_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void print_value(FILE *out, double v, enum mkind kind)
{
	if (kind == M_COUNTER || (v == floor(v) && fabs(v) < 9e15))
		fprintf(out, "%.0f\n", v);
	else
		fprintf(out, "%.15g\n", v);
}

/* The exposition: HELP and TYPE once per family, then one sample per
 * filter that has the value; families without samples are left out. */
static void render(FILE *out, const struct mfamily *fam, size_t nfam, const struct mfilter *mf,
		   size_t nmf)
{
	size_t i, j;
	double v;

	for (i = 0; i < nfam; i++) {
		bool any = false;

		for (j = 0; j < nmf; j++)
			if (fam[i].get(&mf[j], fam[i].arg, &v))
				any = true;
		if (!any)
			continue;
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("name", fam[i].name);
			jw_str("type", fam[i].kind == M_COUNTER ? "counter" : "gauge");
			jw_str("help", fam[i].help);
			jw_arr_open("samples");
			for (j = 0; j < nmf; j++)
				if (fam[i].get(&mf[j], fam[i].arg, &v)) {
					jw_obj_open(NULL);
					jw_str("filter", mf[j].name);
					/* Counters whole: %g would round them. */
					if (v == floor(v) && v >= 0 && v < 9e15)
						jw_u64("value", (unsigned long long)v);
					else
						jw_double("value", v);
					jw_obj_close();
				}
			jw_arr_close();
			jw_obj_close();
			continue;
		}
		fprintf(out, "# HELP %s ", fam[i].name);
		help_text(out, fam[i].help);
		fprintf(out, "\n# TYPE %s %s\n", fam[i].name,
			fam[i].kind == M_COUNTER ? "counter" : "gauge");
		for (j = 0; j < nmf; j++)
			if (fam[i].get(&mf[j], fam[i].arg, &v)) {
				fprintf(out, "%s{filter=\"", fam[i].name);
				label_value(out, mf[j].name);
				fputs("\"} ", out);
				print_value(out, v, fam[i].kind);
			}
	}
}

/* node_exporter's textfile collector may read at any moment: write a
 * temporary file in the same directory, then rename it over PATH
 * (safefile.c: never through a planted symlink). 0644: the collector
 * often runs as another user, and the figures hold no secret. */
static int write_textfile(const char *path, const struct mfamily *fam, size_t nfam,
			  const struct mfilter *mf, size_t nmf)
{
	struct fb_safefile sf;

	if (fb_safefile_open(&sf, path, 0644))
		return -1;
	render(sf.out, fam, nfam, mf, nmf);
	return fb_safefile_commit(&sf);
}

int cmd_metrics(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "textfile", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct mfamily fam[2 * FB_STAT_NR + sizeof(others) / sizeof(others[0])];
	const char *textfile = NULL;
	struct mfilter *mf = NULL;
	char **names = NULL;
	size_t nfam = 0, nmf = 0, i;
	int c, n, rc = 1;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 't')
			return fb_usage("unknown or incomplete option '%s'", argv[optind - 1]);
		textfile = optarg;
	}
	if (optind < argc) {
		n = argc - optind;
		names = calloc(n, sizeof(*names));
		for (i = 0; names && i < (size_t)n; i++)
			names[i] = strdup(argv[optind + i]);
	} else {
		/* No NAME: every filter, for a scrape of the whole host. */
		n = fb_pin_list(&names);
		if (n < 0)
			return 1;
	}
	mf = calloc(n ? n : 1, sizeof(*mf));
	if (!mf || (n && !names)) {
		fb_err("out of memory");
		goto out;
	}
	for (i = 0; i < (size_t)n; i++) {
		bool quiet = fb_err_quiet, all = optind >= argc;
		int r;

		/* Scraping every filter: a broken one is skipped (and said so),
		 * the others still reported. */
		fb_err_quiet = quiet || all;
		r = read_mfilter(names[i], &mf[nmf]);
		fb_err_quiet = quiet;
		if (!r) {
			nmf++;
			continue;
		}
		if (!all)
			goto out;
		fprintf(stderr, "flowbloom: note: skipping broken filter '%s': %s\n", names[i],
			fb_err_last);
	}

	for (i = 0; i < FB_STAT_NR; i++) {
		snprintf(fam[nfam].name, sizeof(fam[nfam].name), "flowbloom_%s_packets_total",
			 fb_stat_name(i));
		fam[nfam].help = "Packets by counter of the XDP program (flowbloom stats).";
		fam[nfam].kind = M_COUNTER;
		fam[nfam].get = get_stat_packets;
		fam[nfam++].arg = i;
		snprintf(fam[nfam].name, sizeof(fam[nfam].name), "flowbloom_%s_bytes_total",
			 fb_stat_name(i));
		fam[nfam].help = "Bytes by counter of the XDP program (flowbloom stats).";
		fam[nfam].kind = M_COUNTER;
		fam[nfam].get = get_stat_bytes;
		fam[nfam++].arg = i;
	}
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		snprintf(fam[nfam].name, sizeof(fam[nfam].name), "%s", others[i].name);
		fam[nfam].help = others[i].help;
		fam[nfam].kind = others[i].kind;
		fam[nfam].get = get_other;
		fam[nfam++].arg = others[i].what;
	}

	if (textfile) {
		if (write_textfile(textfile, fam, nfam, mf, nmf))
			goto out;
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("textfile", textfile);
			jw_u64("filters", nmf);
			jw_obj_close();
			jw_end();
		}
	} else if (fb_json) {
		jw_obj_open(NULL);
		jw_arr_open("metrics");
		render(stdout, fam, nfam, mf, nmf);
		jw_arr_close();
		jw_obj_close();
		jw_end();
	} else {
		render(stdout, fam, nfam, mf, nmf);
	}
	rc = 0;
out:
	for (i = 0; names && i < (size_t)n; i++)
		free(names[i]);
	free(names);
	free(mf);
	return rc;
}

/* --------------------------------------------------------- stats --watch */

int fb_stats_watch(const char *name, double interval)
{
	struct fb_stats prev, cur;
	struct fb_store f;
	double t_prev, t_cur, next, dt;
	char when[64];
	int i;

	if (fb_store_open(name, &f))
		return 1;
	fb_catch_interrupt();
	if (fb_stats_read(&f, &prev)) {
		fb_store_close(&f);
		return 1;
	}
	t_prev = next = mono_now();
	for (;;) {
		next += interval;
		if (!sleep_until(next))
			break;
		if (filter_gone(&f)) {
			report_gone(&f);
			fb_store_close(&f);
			return 1;
		}
		if (fb_stats_read(&f, &cur)) {
			fb_store_close(&f);
			return 1;
		}
		t_cur = mono_now();
		dt = t_cur - t_prev;
		fmt_time(real_now_ns(), false, when, sizeof(when));
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("filter", f.name);
			jw_str("time", when);
			jw_double("interval", dt);
			for (i = 0; i < FB_STAT_NR; i++) {
				jw_obj_open(fb_stat_name(i));
				jw_u64("packets", cur.c[i].packets);
				jw_u64("bytes", cur.c[i].bytes);
				jw_double("pps", (cur.c[i].packets - prev.c[i].packets) / dt);
				jw_double("bps", (cur.c[i].bytes - prev.c[i].bytes) * 8.0 / dt);
				jw_obj_close();
			}
			jw_obj_close();
			jw_end();
		} else {
			printf("%s  %s  over %.2f s\n", f.name, when, dt);
			printf("%-12s %14s %12s %16s %14s\n", "counter", "packets", "pps", "bytes",
			       "bits/s");
			for (i = 0; i < FB_STAT_NR; i++)
				printf("%-12s %14llu %12.1f %16llu %14.1f\n", fb_stat_name(i),
				       (unsigned long long)cur.c[i].packets,
				       (cur.c[i].packets - prev.c[i].packets) / dt,
				       (unsigned long long)cur.c[i].bytes,
				       (cur.c[i].bytes - prev.c[i].bytes) * 8.0 / dt);
			printf("\n");
		}
		prev = cur;
		t_prev = t_cur;
	}
	fb_store_close(&f);
	return 0;
}
