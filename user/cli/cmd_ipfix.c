// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom ipfix`: a long-running IPFIX exporter. New-flow events (attach
 * --new-flows) become one record each as they arrive; every --interval the
 * heaviest flows of that interval (attach --monitor: the sketch's top
 * talkers, by packets and by bytes) become estimate records. The encoding
 * and the templates are in ipfix.c; this file is the loop: ring buffer,
 * timers, template refresh, errors, clean shutdown.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "cmd.h"
#include "fleet/ipfix.h"
#include "monview.h"
#include "output.h"
#include "util.h"

struct exporter {
	struct fb_ipfix *x;
	__u64 mono_to_real_ms; /* CLOCK_MONOTONIC ns / 1e6 + this = epoch ms */
	__u64 newflows, estimates, errors;
	bool queued;	 /* records waiting to be sent */
	bool failing;	 /* the last send failed (said once until it recovers) */
	bool need_tpl;	 /* templates must precede the next records */
	bool broken;	 /* the session could not be rebuilt */
	double retry_at; /* after a failure, no new attempt before this */
};

static __u64 epoch_ms(void)
{
	return fb_clock_real_ns() / 1000000ULL;
}

/* HOST:PORT, [V6]:PORT. */
static int split_collector(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon;
	size_t n;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -1;
		n = close - s - 1;
		colon = close + 1;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon)
			return -1;
		n = colon - s;
	}
	if (!n || n >= hlen || !colon[1] || strlen(colon + 1) >= plen)
		return -1;
	memcpy(host, s, n);
	host[n] = 0;
	strcpy(port, colon + 1);
	n = strspn(port, "0123456789");
	if (port[n] || atoi(port) < 1 || atoi(port) > 65535)
		return -1;
	return 0;
}

/* Queue templates before records when they are due. */
static int before_records(struct exporter *ex)
{
	if (!ex->need_tpl)
		return 0;
	if (fb_ipfix_templates(ex->x))
		return -1;
	ex->need_tpl = false;
	ex->queued = true;
	return 0;
}

static void send_failed(struct exporter *ex)
{
	ex->errors++;
	if (!ex->failing)
		fb_err("ipfix: %s (retrying with the next records)", fb_ipfix_error(ex->x));
	ex->failing = true;
	/* A new connection (TCP) or a collector that lost its state (UDP)
	 * needs the templates again: the new session has them queued. */
	if (fb_ipfix_reset(ex->x))
		ex->broken = true;
	ex->queued = true;
	ex->retry_at = fb_now() + 1; /* not a connection attempt per record */
}

static void flush(struct exporter *ex)
{
	if (!ex->queued || ex->broken || fb_now() < ex->retry_at)
		return;
	if (fb_ipfix_flush(ex->x)) {
		send_failed(ex);
		return;
	}
	if (ex->failing)
		fprintf(stderr, "flowbloom: ipfix: the collector takes records again\n");
	ex->failing = false;
	ex->queued = false;
}

static int on_event(void *ctx, void *data, size_t len)
{
	const struct fb_mon_event *e = data;
	struct exporter *ex = ctx;
	struct fb_ipfix_newflow r;

	if (len < sizeof(*e) || ex->broken)
		return 0;
	memset(&r, 0, sizeof(r));
	r.key = e->key;
	r.start_ms = e->ts_ns / 1000000ULL + ex->mono_to_real_ms;
	r.ifindex = e->ifindex;
	r.bytes = e->bytes;
	r.fwd = fb_ipfix_fwd_status(e->verdict);
	/* A record that does not fit ends the message: fixbuf sends it and
	 * starts another (automatic mode), so an error here is a send error. */
	if (before_records(ex) || fb_ipfix_add_newflow(ex->x, &r)) {
		send_failed(ex);
		return 0;
	}
	ex->queued = true;
	ex->newflows++;
	return 0;
}

static bool same_key(const struct fb_key *a, const struct fb_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* The top flows of the interval between base and now, by packets and by
 * bytes (each list up to n; a flow in both is sent once). */
static int export_estimates(struct exporter *ex, const struct fb_monitor *m,
			    const struct fb_mon_snap *base, const struct fb_mon_snap *now,
			    __u64 start_ms, __u64 end_ms, size_t n)
{
	struct fb_top_entry *by_p = NULL, *by_b = NULL;
	__u64 np = now->packets - base->packets, nb = now->bytes - base->bytes;
	double eps = fb_monitor_epsilon(m), conf = 1 - fb_monitor_delta(m);
	int gp, gb, i, j, rc = -1;

	gp = fb_monitor_top(m, now, base, false, n, &by_p);
	gb = gp < 0 ? -1 : fb_monitor_top(m, now, base, true, n, &by_b);
	if (gp < 0 || gb < 0)
		goto out;
	for (i = 0; i < gp + gb; i++) {
		const struct fb_top_entry *t = i < gp ? &by_p[i] : &by_b[i - gp];
		struct fb_ipfix_estimate r;

		if (!t->packets)
			continue;
		for (j = 0; i >= gp && j < gp; j++)
			if (same_key(&by_p[j].key, &t->key))
				break;
		if (i >= gp && j < gp)
			continue;
		memset(&r, 0, sizeof(r));
		r.key = t->key;
		r.start_ms = start_ms;
		r.end_ms = end_ms;
		r.packets = t->packets;
		r.bytes = t->bytes;
		r.packets_low = fmax(0, (double)t->packets - eps * np);
		r.bytes_low = fmax(0, (double)t->bytes - eps * nb);
		r.confidence = conf;
		if (ex->broken)
			break;
		if (before_records(ex) || fb_ipfix_add_estimate(ex->x, &r)) {
			send_failed(ex);
			break;
		}
		ex->queued = true;
		ex->estimates++;
	}
	rc = 0;
out:
	free(by_p);
	free(by_b);
	return rc;
}

int cmd_ipfix(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "collector", required_argument, NULL, 'c' },
		{ "udp", no_argument, NULL, 'u' },
		{ "tcp", no_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "top", required_argument, NULL, 'n' },
		{ "observation-domain", required_argument, NULL, 'o' },
		{ "template-refresh", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	char host[256], port[16], *end;
	const char *collector = NULL;
	double interval = 60, refresh = 60, next_est, next_tpl, t0;
	unsigned long long top = 100, domain = 1;
	struct fb_mon_snap base = { 0 }, now = { 0 };
	struct exporter ex = { 0 };
	struct ring_buffer *rb = NULL;
	struct fb_monitor m;
	struct fb_store f;
	bool tcp = false, sketch, events;
	__u64 start_ms;
	int c, r, lock_fd = -1, rc = 1, mrc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			collector = optarg;
			break;
		case 'u':
		case 't':
			tcp = c == 't';
			break;
		case 'i':
		case 'r': {
			double v = strtod(optarg, &end);

			if (end == optarg || *end || !(v >= 0.1 && v <= 86400))
				return fb_usage(
					"bad value '%s' for --%s (want 0.1 to 86400 seconds)",
					optarg, c == 'i' ? "interval" : "template-refresh");
			*(c == 'i' ? &interval : &refresh) = v;
			break;
		}
		case 'n':
		case 'o': {
			unsigned long long v;

			if (fb_parse_u64(optarg, &v) || (c == 'n' && (v < 1 || v > 100000)) ||
			    v > 0xffffffffULL)
				return fb_usage("bad value '%s' for --%s (want %s)", optarg,
						c == 'n' ? "top" : "observation-domain",
						c == 'n' ? "1 to 100000" : "0 to 4294967295");
			*(c == 'n' ? &top : &domain) = v;
			break;
		}
		default:
			return fb_usage("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return fb_usage(argc - optind < 1 ? "missing NAME" : "too many arguments");
	if (!collector)
		return fb_usage("missing --collector HOST:PORT");
	if (split_collector(collector, host, sizeof(host), port, sizeof(port)))
		return fb_usage("bad collector '%s' (want HOST:PORT or [IPV6]:PORT)", collector);

	if (fb_store_open(argv[optind], &f))
		return 1;
	mrc = fb_monitor_open(&f, &m);
	if (mrc) {
		if (mrc > 0)
			fb_err("filter '%s' has no monitoring (attach it with --new-flows and/or "
			       "--monitor)",
			       f.name);
		fb_store_close(&f);
		return 1;
	}
	sketch = m.cfg.flags & FB_MON_SKETCH;
	events = m.cfg.flags & FB_MON_NEWFLOWS;
	if (events) {
		lock_fd = fb_monview_lock_events(&f, &m);
		if (lock_fd < 0)
			goto out;
		rb = ring_buffer__new(m.events_fd, on_event, &ex, NULL);
		if (!rb) {
			fb_err("cannot read the new-flow ring buffer of '%s': %s", f.name,
			       strerror(errno));
			goto out;
		}
	}
	ex.x = fb_ipfix_open_net(host, port, tcp, (__u32)domain);
	if (!ex.x)
		goto out;
	ex.mono_to_real_ms = epoch_ms() - fb_clock_mono_ns() / 1000000ULL;
	ex.queued = true; /* opening queued the templates */
	if (sketch && fb_monitor_snap_take(&m, &base))
		goto out;
	start_ms = epoch_ms();
	t0 = fb_now();
	next_est = t0 + interval;
	next_tpl = t0 + refresh;
	fprintf(stderr,
		"flowbloom: ipfix: exporting %s%s%s of '%s' to %s over %s, observation domain "
		"%llu\n",
		events ? "new flows" : "", events && sketch ? " and " : "",
		sketch ? "top-talker estimates" : "", f.name, collector, tcp ? "TCP" : "UDP",
		domain);
	/* Templates go out at once: a collector learns them before any data. */
	flush(&ex);
	fb_catch_interrupt();
	for (;;) {
		bool stop;

		if (rb) {
			/* The program wakes readers only when the ring fills up:
			 * drain on the timeout too (as `flows --follow`). */
			r = ring_buffer__poll(rb, 100);
			if (r >= 0 || r == -EINTR)
				r = ring_buffer__consume(rb);
			if (r < 0 && r != -EINTR) {
				fb_err("reading new-flow events: %s", strerror(-r));
				goto out;
			}
		} else {
			usleep(100000);
		}
		stop = fb_interrupted();
		t0 = fb_now();
		if (sketch && (t0 >= next_est || stop)) {
			__u64 end_ms = epoch_ms();

			if (fb_monitor_snap_take(&m, &now))
				goto out;
			if (export_estimates(&ex, &m, &base, &now, start_ms, end_ms, top))
				goto out;
			fb_monitor_snap_free(&base);
			base = now;
			memset(&now, 0, sizeof(now));
			start_ms = end_ms;
			while (next_est <= t0)
				next_est += interval;
		}
		/* RFC 7011 section 8.4: over UDP, templates are sent again
		 * periodically, or a collector that restarted never learns them. */
		if (!tcp && t0 >= next_tpl && !ex.broken) {
			ex.need_tpl = true;
			before_records(&ex);
			while (next_tpl <= t0)
				next_tpl += refresh;
		}
		flush(&ex);
		if (ex.broken) {
			fb_err("ipfix: cannot start a new session: %s", fb_ipfix_error(ex.x));
			goto out;
		}
		if (stop)
			break;
	}
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", f.name);
		jw_str("collector", collector);
		jw_u64("new_flow_records", ex.newflows);
		jw_u64("estimate_records", ex.estimates);
		jw_u64("send_errors", ex.errors);
		jw_obj_close();
		jw_end();
	} else {
		printf("sent %llu new-flow records and %llu estimate records to %s (%llu send "
		       "errors)\n",
		       (unsigned long long)ex.newflows, (unsigned long long)ex.estimates, collector,
		       (unsigned long long)ex.errors);
	}
	rc = 0;
out:
	fb_ipfix_close(ex.x);
	fb_monitor_snap_free(&base);
	fb_monitor_snap_free(&now);
	ring_buffer__free(rb);
	if (lock_fd >= 0)
		close(lock_fd);
	fb_monitor_close(&m);
	fb_store_close(&f);
	return rc;
}
