// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom ipfix`: a long-running IPFIX exporter. Flows counted exactly
 * (attach --accounting) become flow records when they end (idle timeout,
 * TCP FIN or RST) and at each active timeout; new-flow events (attach
 * --new-flows) become notifications as they arrive; every --interval the
 * heaviest flows of the interval that only a sketch counted (attach
 * --monitor: all of them, or with --accounting the ones the table had no
 * room for) become estimate records. The encoding is ipfix.c, the
 * transport and its failures ipfix_out.c; this file is the loop: ring
 * buffer, table passes, timers, reports, clean shutdown.
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
#include "parse.h"
#include "fleet/ipfix_out.h"
#include "monitor/flowacct.h"
#include "monview.h"
#include "optfile.h"
#include "output.h"
#include "monitor/guard.h"
#include "util.h"

#define QUEUE_RECORDS 65536 /* held while the collector is away (~12 MiB) */
#define FINISH_S 0.5	    /* at the end, what is queued gets this long */

struct ipfix_opts {
	char collector[300];
	bool tcp;
	double interval, refresh, idle, active;
	unsigned long long top, domain;
	char why[160];
};

struct exporter {
	struct fb_ipfix_out *out;
	const char *collector;
	__u64 mono_to_real_ms; /* CLOCK_MONOTONIC ns / 1e6 + this = epoch ms */
};

static const struct option opts[] = {
	{ "collector", required_argument, NULL, 'c' },
	{ "udp", no_argument, NULL, 'u' },
	{ "tcp", no_argument, NULL, 't' },
	{ "interval", required_argument, NULL, 'i' },
	{ "top", required_argument, NULL, 'n' },
	{ "observation-domain", required_argument, NULL, 'o' },
	{ "template-refresh", required_argument, NULL, 'r' },
	{ "idle-timeout", required_argument, NULL, 'I' },
	{ "active-timeout", required_argument, NULL, 'A' },
	{ "config", required_argument, NULL, 'C' },
	{ NULL, 0, NULL, 0 },
};

/* In --config, one of each group (tcp, then udp, is refused). */
static const struct fb_optfile_group groups[] = {
	{ "ut", "the transport" },
	{ NULL, NULL },
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

static const char *opt_name(int c)
{
	const struct option *o;

	for (o = opts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

/* One option, from the command line or --config: NULL, or why not. */
static const char *set_opt(int c, const char *v, void *ctx)
{
	struct ipfix_opts *o = ctx;
	double d;
	int bad;

	switch (c) {
	case 'c': {
		char host[256], port[16];

		/* Checked here, so a bad one in --config is named FILE:LINE. */
		if (strlen(v) >= sizeof(o->collector) ||
		    split_collector(v, host, sizeof(host), port, sizeof(port))) {
			snprintf(o->why, sizeof(o->why),
				 "bad collector '%.80s' (want HOST:PORT or [IPV6]:PORT)", v);
			return o->why;
		}
		strcpy(o->collector, v);
		return NULL;
	}
	case 'u':
	case 't':
		o->tcp = c == 't';
		return NULL;
	case 'i':
	case 'I':
	case 'A':
	case 'r':
		bad = fb_duration_value(v, &d);
		if (!bad && c == 'r' && d == 0) {
			o->refresh = 0; /* templates before every UDP message of records */
			return NULL;
		}
		if (bad || !(d >= 0.1 && d <= 86400)) {
			snprintf(o->why, sizeof(o->why),
				 "bad duration '%s' for --%s (want a number with ms, s, m, h or d, "
				 "%sfrom 100ms to 1d)",
				 fb_quote(v), opt_name(c), c == 'r' ? "0 or " : "");
			return o->why;
		}
		*(c == 'i'   ? &o->interval
		  : c == 'I' ? &o->idle
		  : c == 'A' ? &o->active
			     : &o->refresh) = d;
		return NULL;
	case 'n':
	case 'o': {
		unsigned long long x;

		if (fb_parse_u64(v, &x) || (c == 'n' && (x < 1 || x > 100000)) ||
		    x > 0xffffffffULL) {
			snprintf(o->why, sizeof(o->why), "bad value '%s' for --%s (want %s)",
				 fb_quote(v), opt_name(c),
				 c == 'n' ? "1 to 100000" : "0 to 4294967295");
			return o->why;
		}
		*(c == 'n' ? &o->top : &o->domain) = x;
		return NULL;
	}
	}
	return "unknown option";
}

static void announce(const struct exporter *ex, unsigned ev)
{
	struct fb_ipfix_out_stats s;

	fb_ipfix_out_stats(ex->out, &s);
	/* Reports of a run that goes on, on stderr alone: under -j, stdout
	 * holds the summary, not an {"error"} the exporter did not end with. */
	if (ev & FB_IPFIX_EV_DOWN)
		fprintf(stderr,
			"flowbloom: ipfix: collector %s: %s; keeping records (up to %u) and "
			"retrying every second\n",
			ex->collector, fb_ipfix_out_error(ex->out), QUEUE_RECORDS);
	if (ev & FB_IPFIX_EV_UP)
		fprintf(stderr,
			"flowbloom: ipfix: collector %s takes records again: new session "
			"(%llu records lost so far)\n",
			ex->collector, (unsigned long long)(s.unconfirmed + s.dropped));
	if (ev & FB_IPFIX_EV_DROPPING)
		fprintf(stderr,
			"flowbloom: ipfix: collector %s is not taking records (%u queued): "
			"dropping records until it does\n",
			ex->collector, QUEUE_RECORDS);
}

static int on_event(void *ctx, void *data, size_t len)
{
	const struct fb_mon_event *e = data;
	struct exporter *ex = ctx;
	struct fb_ipfix_newflow r;

	if (len < sizeof(*e))
		return 0;
	memset(&r, 0, sizeof(r));
	r.key = e->key;
	r.start_ms = e->ts_ns / 1000000ULL + ex->mono_to_real_ms;
	r.ifindex = e->ifindex;
	r.fwd = fb_ipfix_fwd_status(e->verdict);
	fb_ipfix_out_newflow(ex->out, &r);
	return 0;
}

static int on_flow(const struct fb_acct_rec *a, void *ctx)
{
	struct exporter *ex = ctx;
	struct fb_ipfix_flow r;

	memset(&r, 0, sizeof(r));
	r.key = a->key;
	r.start_ms = a->start_ns / 1000000ULL + ex->mono_to_real_ms;
	r.end_ms = a->end_ns / 1000000ULL + ex->mono_to_real_ms;
	r.packets = a->packets;
	r.bytes = a->bytes;
	r.ingress = a->ifindex;
	r.tcp_flags = a->tcp_flags;
	r.icmp = a->icmp;
	r.vlan = a->vlan;
	r.tos = a->tos;
	r.fwd = fb_ipfix_fwd_status(a->verdict);
	r.end_reason = a->reason;
	memcpy(r.smac, a->smac, 6);
	memcpy(r.dmac, a->dmac, 6);
	fb_ipfix_out_flow(ex->out, &r);
	return 0;
}

/* Bans and their ends that `flowbloom guard` queued beside the filter
 * (monitor/guard.h): one mitigation record each. The queue appears when a
 * guard first runs: looked for at every call until then. */
static void export_mitigations(struct exporter *ex, const struct fb_store *f, int *fd)
{
	struct fb_guard_event e;

	if (*fd < 0) {
		bool quiet = fb_report_quiet;

		fb_report_quiet = true;
		*fd = fb_guard_events_open(f, false);
		fb_report_quiet = quiet;
		if (*fd < 0)
			return;
	}
	while (fb_guard_events_pop(*fd, &e) == 1) {
		struct fb_ipfix_mitigation r = { .key = e.key,
						 .start_ms = e.start_ns / 1000000ULL,
						 .end_ms = e.end_ns / 1000000ULL,
						 .event = e.event == 1 ? FB_IPFIX_FW_CREATED
								       : FB_IPFIX_FW_DELETED };

		fb_ipfix_out_mitigation(ex->out, &r);
	}
}

static bool same_key(const struct fb_key *a, const struct fb_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* The top flows of the interval between base and now (a sketch, or the
 * overflow sketch), by packets and by bytes (each list up to n; a flow in
 * both is sent once). */
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
		fb_ipfix_out_estimate(ex->out, &r);
	}
	rc = 0;
out:
	free(by_p);
	free(by_b);
	return rc;
}

static void summary(const struct exporter *ex, const char *name, const struct fb_acct_totals *t)
{
	struct fb_ipfix_out_stats s;
	unsigned long long lost;

	fb_ipfix_out_stats(ex->out, &s);
	lost = s.unconfirmed + s.dropped;
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", name);
		jw_str("collector", ex->collector);
		jw_u64("flow_records", s.sent[FB_IPFIX_FLOW]);
		jw_u64("new_flow_records", s.sent[FB_IPFIX_NEWFLOW]);
		jw_u64("estimate_records", s.sent[FB_IPFIX_ESTIMATE]);
		jw_u64("mitigation_records", s.sent[FB_IPFIX_MITIGATION]);
		jw_u64("messages", s.messages);
		jw_u64("lost_records", lost);
		jw_u64("unconfirmed_records", s.unconfirmed);
		jw_u64("dropped_records", s.dropped);
		jw_u64("send_errors", s.send_errors);
		jw_u64("sessions", s.sessions);
		if (t) {
			jw_u64("overflow_packets", t->overflow_packets);
			jw_u64("overflow_bytes", t->overflow_bytes);
		}
		jw_obj_close();
		jw_end();
		return;
	}
	printf("sent %llu flow records, %llu new-flow records and %llu estimate records to %s "
	       "(%llu message%s, %llu session%s); %llu records lost (%llu sent and not received, "
	       "%llu never sent), %llu send error%s\n",
	       (unsigned long long)s.sent[FB_IPFIX_FLOW],
	       (unsigned long long)s.sent[FB_IPFIX_NEWFLOW],
	       (unsigned long long)s.sent[FB_IPFIX_ESTIMATE], ex->collector,
	       (unsigned long long)s.messages, s.messages == 1 ? "" : "s",
	       (unsigned long long)s.sessions, s.sessions == 1 ? "" : "s", lost,
	       (unsigned long long)s.unconfirmed, (unsigned long long)s.dropped,
	       (unsigned long long)s.send_errors, s.send_errors == 1 ? "" : "s");
	if (s.sent[FB_IPFIX_MITIGATION])
		printf("sent %llu mitigation record%s (bans and their ends, from flowbloom "
		       "guard)\n",
		       (unsigned long long)s.sent[FB_IPFIX_MITIGATION],
		       s.sent[FB_IPFIX_MITIGATION] == 1 ? "" : "s");
	if (t && t->overflow_packets)
		printf("the accounting table had no room for %llu packets (%llu octets) meanwhile: "
		       "counted by the overflow sketch only\n",
		       (unsigned long long)t->overflow_packets,
		       (unsigned long long)t->overflow_bytes);
}

int cmd_ipfix(int argc, char **argv)
{
	struct ipfix_opts o = {
		.interval = 60, .refresh = 60, .idle = 15, .active = 60, .top = 100, .domain = 1
	};
	char host[256], port[16];
	double next_est, next_scan, scan, t0;
	struct fb_mon_snap base = { 0 }, now = { 0 };
	int (*take)(const struct fb_monitor *m, struct fb_mon_snap *s);
	struct fb_ipfix_out_opts oo = { 0 };
	struct exporter ex = { 0 };
	struct fb_acct_pass pass = { 0 };
	struct fb_acct_totals tot, tot0;
	struct ring_buffer *rb = NULL;
	struct fb_monitor m;
	struct fb_store f;
	bool sketch, events, acct;
	const char *why;
	__u64 start_ms;
	int c, r, lock_fd = -1, gev_fd = -1, rc = 1, mrc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c == 'C') {
			if (fb_optfile_read(optarg, opts, "config", groups, set_opt, &o))
				return 2;
			continue;
		}
		if (c == '?' || c == ':')
			return fb_bad_option(c, argv);
		why = set_opt(c, optarg, &o);
		if (why)
			return fb_usage("%s", why);
	}
	if (argc - optind != 1)
		return fb_usage(argc - optind < 1 ? "missing NAME" : "too many arguments");
	if (!o.collector[0])
		return fb_usage("missing --collector HOST:PORT");
	/* Checked by set_opt(): it splits. */
	split_collector(o.collector, host, sizeof(host), port, sizeof(port));

	if (fb_store_open(argv[optind], &f))
		return 1;
	mrc = fb_monitor_open(&f, &m);
	if (mrc) {
		if (mrc > 0)
			fb_err("filter '%s' has no monitoring (attach it with --accounting, "
			       "--new-flows and/or --monitor)",
			       f.name);
		fb_store_close(&f);
		return 1;
	}
	sketch = m.cfg.flags & FB_MON_SKETCH;
	events = m.cfg.flags & FB_MON_NEWFLOWS;
	acct = m.cfg.flags & FB_MON_ACCT;
	/* A sketch by address has no flows to estimate: its candidates are
	 * addresses, which the overflow sketch (by flow) does not count
	 * either. Said, never exported as flows of zero ports. */
	if (sketch && (m.cfg.flags & FB_MON_BY_ADDR)) {
		sketch = false;
		if (!acct && !events) {
			fb_err("the sketch of '%s' counts %s addresses (attach --sketch-by %s): "
			       "ipfix exports flows (attach it with --sketch-by flow, "
			       "--accounting or --new-flows)",
			       f.name, fb_monview_key_noun(&m), fb_monitor_sketch_by(&m));
			goto out;
		}
		fprintf(stderr,
			"flowbloom: ipfix: note: the sketch of '%s' counts %s addresses "
			"(--sketch-by %s): no estimate records%s\n",
			f.name, fb_monview_key_noun(&m), fb_monitor_sketch_by(&m),
			acct ? " (flows the accounting table has no room for are counted in "
			       "the totals only)"
			     : "");
	}
	/* One reader of the events and the table: the directory's lock. */
	lock_fd = fb_monview_lock_events(&f, &m);
	if (lock_fd < 0)
		goto out;
	if (events) {
		rb = ring_buffer__new(m.events_fd, on_event, &ex, NULL);
		if (!rb) {
			fb_err("cannot read the new-flow ring buffer of '%s': %s", f.name,
			       strerror(errno));
			goto out;
		}
	}
	oo.host = host;
	oo.port = port;
	oo.tcp = o.tcp;
	oo.domain = (__u32)o.domain;
	oo.refresh = o.refresh;
	oo.queue = QUEUE_RECORDS;
	/* Without the table the sketch counts Ethernet frames. */
	oo.l2_estimates = !acct;
	ex.collector = o.collector;
	ex.out = fb_ipfix_out_open(&oo);
	if (!ex.out)
		goto out;
	ex.mono_to_real_ms = epoch_ms() - fb_clock_mono_ns() / 1000000ULL;
	/* Without the table the sketch's estimates, with it the overflow
	 * sketch's (what the table had no room for). */
	take = acct ? fb_acct_osnap_take : fb_monitor_snap_take;
	if (sketch && take(&m, &base))
		goto out;
	fb_acct_totals(&m, &tot0);
	pass.idle_ns = (__u64)(o.idle * 1e9);
	pass.active_ns = (__u64)(o.active * 1e9);
	pass.fin_ns = (__u64)(fmin(o.idle / 2, 1) * 1e9);
	/* Passes often enough for the shorter timeout, at most a second
	 * apart (a pass reads the whole table). */
	scan = fmax(0.1, fmin(1, fmin(o.idle, o.active) / 4));
	start_ms = epoch_ms();
	t0 = fb_now();
	next_est = t0 + o.interval;
	next_scan = t0 + scan;
	/* Before the line that says it runs: a SIGTERM from then on ends it
	 * cleanly. */
	fb_catch_interrupt();
	fprintf(stderr,
		"flowbloom: ipfix: exporting %s%s%s%s%s of '%s' to %s over %s, observation "
		"domain %llu\n",
		acct ? "flows" : "", acct && events ? ", " : "", events ? "new flows" : "",
		(acct || events) && sketch ? " and " : "",
		sketch ? (acct ? "estimates of what the table missed" : "top-talker estimates")
		       : "",
		f.name, o.collector, o.tcp ? "TCP" : "UDP", o.domain);
	for (;;) {
		bool stop;

		/* The wall clock may be stepped (NTP at boot, an operator)
		 * while the exporter runs for months: record times follow it,
		 * as the messages' export time does. */
		ex.mono_to_real_ms = epoch_ms() - fb_clock_mono_ns() / 1000000ULL;
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
		if (acct && stop) {
			if (fb_acct_drain(&m, fb_clock_mono_ns(), on_flow, &ex) < 0)
				goto out;
		} else if (acct && t0 >= next_scan) {
			pass.now_ns = fb_clock_mono_ns();
			if (fb_acct_pass(&m, &pass, on_flow, &ex) < 0)
				goto out;
			while (next_scan <= t0)
				next_scan += scan;
		}
		if (sketch && (t0 >= next_est || stop)) {
			__u64 end_ms = epoch_ms();
			struct fb_mon_snap lower;
			int err;

			/* Estimates up to now's reading, the next interval from
			 * lower's: their sum stays an upper bound (monmaps.h). */
			if (fb_monitor_snap_pair(&m, take, &lower, &now))
				goto out;
			err = export_estimates(&ex, &m, &base, &now, start_ms, end_ms, o.top);
			fb_monitor_snap_free(&base);
			fb_monitor_snap_free(&now);
			base = lower;
			if (err)
				goto out;
			start_ms = end_ms;
			while (next_est <= t0)
				next_est += o.interval;
		}
		export_mitigations(&ex, &f, &gev_fd);
		r = fb_ipfix_out_pump(ex.out, t0);
		if (r < 0)
			goto out;
		announce(&ex, (unsigned)r);
		if (stop)
			break;
		if (fb_monview_gone(&f, &m)) {
			rc = 1;
			goto out;
		}
	}
	fb_ipfix_out_finish(ex.out, fb_now() + FINISH_S);
	fb_acct_totals(&m, &tot);
	tot.overflow_packets -= tot0.overflow_packets;
	tot.overflow_bytes -= tot0.overflow_bytes;
	summary(&ex, f.name, acct ? &tot : NULL);
	rc = 0;
out:
	fb_ipfix_out_close(ex.out);
	fb_monitor_snap_free(&base);
	fb_monitor_snap_free(&now);
	ring_buffer__free(rb);
	if (lock_fd >= 0)
		close(lock_fd);
	if (gev_fd >= 0)
		close(gev_fd);
	fb_monitor_close(&m);
	fb_store_close(&f);
	return rc;
}
