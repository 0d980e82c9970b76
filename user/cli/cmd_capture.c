// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom capture`: the frames the attached program dropped (or
 * passed) into a pcapng or pcap file, from a ring buffer the program
 * fills only while this runs (user/lib/capture/).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/capctl.h"
#include "capture/pcapout.h"
#include "clock.h"
#include "cmd.h"
#include "output.h"
#include "parse.h"
#include "safefile.h"
#include "util.h"

#define DEFAULT_RING (4ULL << 20)

struct reader {
	struct fb_pcapout w;
	__u64 mono_to_real; /* add to CLOCK_MONOTONIC ns for CLOCK_REALTIME */
	__u64 limit;	    /* --count; 0: none */
	__u64 bad;	    /* records too short to be ours (never expected) */
	int err;	    /* errno of a failed write */
	/* What reached the file whole at the last flush: a full disk ends the
	 * capture, and the file is cut back to it and kept. */
	__u64 kept_bytes, kept_packets;
	unsigned unsynced; /* records since */
};

/* Flush; on success, what is written so far is complete blocks in the file. */
static void sync_out(struct reader *rd)
{
	if (rd->err)
		return;
	if (fflush(rd->w.out)) {
		rd->err = errno ? errno : EIO;
		return;
	}
	rd->kept_bytes = rd->w.bytes;
	rd->kept_packets = rd->w.packets;
	rd->unsynced = 0;
}

static int on_record(void *ctx, void *data, size_t len)
{
	const struct fb_cap_rec *r = data;
	struct reader *rd = ctx;

	if (rd->err || (rd->limit && rd->w.packets >= rd->limit))
		return 0;
	if (len < sizeof(*r) || r->caplen > len - sizeof(*r)) {
		rd->bad++;
		return 0;
	}
	if (fb_pcapout_packet(&rd->w, r, r + 1, r->ts_ns + rd->mono_to_real))
		rd->err = errno ? errno : EIO;
	else if (++rd->unsynced >= 256)
		sync_out(rd); /* a full disk loses at most these */
	return 0;
}

static bool done(const struct reader *rd)
{
	return rd->err || (rd->limit && rd->w.packets >= rd->limit);
}

/* Which of the capture's programs are still attached where they were:
 * one detached or replaced (`detach`, `apply` re-attaching with another
 * action) is noted once, naming its device, and marked gone. Returns how
 * many are left. */
static unsigned attached(const struct fb_capture *c, const unsigned *ifindex, bool *gone)
{
	unsigned i, left = 0;

	for (i = 0; i < c->nprogs; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		__u32 now = 0;

		if (gone[i])
			continue;
		if (ifindex[i] && !bpf_xdp_query(ifindex[i], 0, &q))
			now = strcmp(c->prog[i].mode, "native") ? q.skb_prog_id : q.drv_prog_id;
		if (now == c->prog[i].prog_id) {
			left++;
			continue;
		}
		gone[i] = true;
		if (now)
			fb_report(FB_REPORT_NOTE,
				  "the program on %s (id %u) was replaced by program %u: capture "
				  "there ended (start it again to follow)",
				  c->prog[i].ifname, c->prog[i].prog_id, now);
		else
			fb_report(FB_REPORT_NOTE,
				  "the program on %s (id %u) was detached: capture there ended",
				  c->prog[i].ifname, c->prog[i].prog_id);
	}
	return left;
}

/* A write failed (a full disk): cut the file back to what reached it whole
 * and keep that, rather than lose every frame. -1: nothing to keep. */
static int keep(struct fb_safefile *sf, struct reader *rd)
{
	if (!rd->kept_bytes)
		return -1;
	__fpurge(sf->out); /* what did not reach the file */
	clearerr(sf->out);
	if (ftruncate(sf->fd, rd->kept_bytes))
		return -1;
	rd->w.bytes = rd->kept_bytes;
	rd->w.packets = rd->kept_packets;
	return 0;
}

/* -w -: has the pipe's reader gone (a write would fail with EPIPE)? Asked
 * while no frames come, so an idle capture notices too. */
static bool reader_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

static void summary(FILE *out, const char *name, const char *file, const struct fb_capture *c,
		    const struct fb_cap_opts *o, int format, const __u64 *st,
		    const struct reader *rd, double secs, unsigned lapses)
{
	const char *verdict = o->verdicts == (1U << XDP_DROP)	? "drop"
			      : o->verdicts == (1U << XDP_PASS) ? "pass"
								: "any";
	const char *fmt = format == FB_PCAP_NG ? "pcapng" : "pcap";
	unsigned i;

	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", name);
		jw_str("file", file);
		jw_str("format", fmt);
		jw_str("verdict", verdict);
		jw_u64("sample", o->sample);
		jw_u64("snaplen", o->snaplen);
		jw_arr_open("devices");
		for (i = 0; i < c->nprogs; i++) {
			jw_obj_open(NULL);
			jw_str("dev", c->prog[i].ifname);
			jw_str("mode", c->prog[i].mode);
			jw_u64("prog_id", c->prog[i].prog_id);
			jw_obj_close();
		}
		jw_arr_close();
		jw_double("seconds", secs);
		jw_u64("matched", st[FB_CAP_STAT_MATCHED]);
		jw_u64("sampled", st[FB_CAP_STAT_SAMPLED]);
		jw_u64("lost", st[FB_CAP_STAT_LOST]);
		jw_u64("written", rd->w.packets);
		jw_u64("file_bytes", rd->w.bytes);
		jw_u64("lease_lapses", lapses);
		jw_obj_close();
		jw_end();
		return;
	}
	fprintf(out,
		"%s: %llu packets written to %s (%s) in %.1f s; the program saw %llu with verdict "
		"%s, sampled %llu (1 in %u), lost %llu\n",
		name, (unsigned long long)rd->w.packets, fb_shown(file), fmt, secs,
		(unsigned long long)st[FB_CAP_STAT_MATCHED], verdict,
		(unsigned long long)st[FB_CAP_STAT_SAMPLED], o->sample,
		(unsigned long long)st[FB_CAP_STAT_LOST]);
	if (st[FB_CAP_STAT_LOST])
		fprintf(out,
			"%s: the ring buffer was full for %llu packets: a larger --buffer or "
			"--sample N keeps up\n",
			name, (unsigned long long)st[FB_CAP_STAT_LOST]);
	if (lapses)
		fprintf(out,
			"%s: capture paused %u times (this process was stopped past its lease)\n",
			name, lapses);
}

int cmd_capture(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "write", required_argument, NULL, 'w' },
		{ "verdict", required_argument, NULL, 'V' },
		{ "sample", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'c' },
		{ "snaplen", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'F' },
		{ "buffer", required_argument, NULL, 'B' },
		{ "duration", required_argument, NULL, 'D' },
		{ "dev", required_argument, NULL, 'd' },
		{ "mode", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const verdicts[] = { "drop", "pass", "any", NULL };
	static const int verdict_v[] = { 1 << XDP_DROP, 1 << XDP_PASS,
					 1 << XDP_DROP | 1 << XDP_PASS };
	static const char *const formats[] = { "pcapng", "pcap", NULL };
	static const int format_v[] = { FB_PCAP_NG, FB_PCAP_CLASSIC };
	struct fb_cap_opts o = { .verdicts = 1 << XDP_DROP,
				 .sample = 1,
				 .snaplen = FB_CAP_SNAP_MAX,
				 .ring_bytes = DEFAULT_RING };
	struct fb_safefile sf = { .out = NULL };
	struct reader rd = { .err = 0 };
	struct ring_buffer *rb = NULL;
	const char *file = NULL, *dev = NULL;
	bool mode_set = false, armed = false, taken = false, stopped;
	int c, v, format = FB_PCAP_NG, rc = 1, r;
	double duration = 0, t0, next_renew;
	unsigned lapses = 0, ifindex[FB_CAP_MAX_PROGS];
	bool gone[FB_CAP_MAX_PROGS] = { false };
	__u64 st[FB_CAP_STAT_NR], u;
	struct fb_capture cap;
	struct fb_store f;
	mode_t mode = 0600;
	FILE *out;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:c:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'w':
			file = optarg;
			break;
		case 'V':
			if ((v = fb_pick("--verdict", optarg, verdicts, verdict_v)) < 0)
				return 2;
			o.verdicts = v;
			break;
		case 'S':
			if (fb_parse_u64_range("--sample", optarg, 1, 1U << 31, &u))
				return 2;
			o.sample = u;
			break;
		case 'c':
			if (fb_parse_u64_range("--count", optarg, 1, ~0ULL >> 1, &rd.limit))
				return 2;
			break;
		case 's':
			if (fb_parse_u64_range("--snaplen", optarg, 1, FB_CAP_SNAP_MAX, &u))
				return 2;
			o.snaplen = u;
			break;
		case 'F':
			if ((v = fb_pick("--format", optarg, formats, format_v)) < 0)
				return 2;
			format = v;
			break;
		case 'B':
			if (fb_parse_size("--buffer", optarg, &o.ring_bytes))
				return 2;
			if (o.ring_bytes < (__u64)getpagesize() || o.ring_bytes > (1ULL << 30) ||
			    (o.ring_bytes & (o.ring_bytes - 1)))
				return fb_usage("--buffer must be a power of 2 from %d bytes to 1G",
						getpagesize());
			break;
		case 'D':
			if (fb_parse_duration("--duration", optarg, 0.001, 365 * 86400.0,
					      &duration))
				return 2;
			break;
		case 'd':
			dev = optarg;
			break;
		case 'm':
			if (fb_safefile_parse_mode(optarg, &mode))
				return fb_usage("bad --mode '%s' (octal, 0 to 0777, e.g. 0640)",
						fb_quote(optarg));
			mode_set = true;
			break;
		default:
			return fb_bad_option(c, argv);
		}
	}
	if (argc - optind != 1)
		return fb_usage(argc - optind < 1 ? "missing NAME" : "too many arguments");
	if (!file)
		return fb_usage("missing -w FILE ('-': stdout)");
	if (!strcmp(file, "-") && fb_json)
		return fb_usage("-j with -w -: the summary and the capture would share stdout");
	if (!strcmp(file, "-") && mode_set)
		return fb_usage("--mode needs a FILE, not stdout");
	if (!strcmp(file, "-") && isatty(STDOUT_FILENO))
		return fb_usage("-w -: stdout is a terminal (pipe it into tcpdump -r - or tshark "
				"-r -)");
	if (fb_store_open(argv[optind], &f))
		return 1;
	if (fb_capture_open(&f, dev, &cap)) {
		fb_store_close(&f);
		return 1;
	}
	/* A file is written aside and renamed over FILE when the capture
	 * ends (safefile.c); 0600 by default: frames carry payloads. */
	if (!strcmp(file, "-")) {
		/* A reader that goes away (tcpdump -c) is a write error, ended
		 * cleanly, not a SIGPIPE that leaves capture on until the lease
		 * runs out. */
		signal(SIGPIPE, SIG_IGN);
		out = stdout;
	} else {
		if (fb_safefile_open(&sf, file, mode))
			goto out;
		out = sf.out;
	}
	if (fb_pcapout_begin(&rd.w, out, format, o.snaplen))
		goto write_err;
	for (unsigned i = 0; i < cap.nprogs; i++) {
		char descr[160];

		snprintf(descr, sizeof(descr), "flowbloom filter %s, %s XDP, program %u", f.name,
			 cap.prog[i].mode, cap.prog[i].prog_id);
		if (fb_pcapout_iface(&rd.w, cap.prog[i].ifname, descr))
			goto write_err;
	}
	for (unsigned i = 0; i < cap.nprogs; i++)
		ifindex[i] = if_nametoindex(cap.prog[i].ifname);
	fb_catch_interrupt();
	/* A terminal or ssh session that goes away ends the capture as
	 * Ctrl-C does: by default SIGHUP would kill it, the file removed. */
	fb_catch_hangup();
	if (fb_capture_start(&cap, &o) < 0)
		goto out;
	armed = true;
	rd.mono_to_real = fb_clock_real_ns() - fb_clock_mono_ns();
	rb = ring_buffer__new(cap.ring_fd, on_record, &rd, NULL);
	if (!rb) {
		fb_err("cannot read the capture ring buffer: %s", strerror(errno));
		goto out;
	}
	fprintf(stderr, "flowbloom: capturing %s packets of '%s' on",
		o.verdicts == 1U << XDP_DROP   ? "dropped"
		: o.verdicts == 1U << XDP_PASS ? "passed"
					       : "all",
		f.name);
	for (unsigned i = 0; i < cap.nprogs; i++) {
		char dev[FB_ESCAPED_SIZE(IF_NAMESIZE)];

		fprintf(stderr, "%s %s (%s)", i ? "," : "",
			fb_printable(cap.prog[i].ifname, dev, sizeof(dev)), cap.prog[i].mode);
	}
	fprintf(stderr, ", 1 in %u; Ctrl-C to stop\n", o.sample);
	t0 = fb_now();
	next_renew = t0 + FB_CAP_RENEW_NS / 1e9;
	while (!done(&rd) && !fb_interrupted()) {
		r = ring_buffer__poll(rb, 100);
		if (r < 0 && r != -EINTR) {
			fb_err("reading the capture ring buffer: %s", strerror(-r));
			goto out;
		}
		if (duration && fb_now() - t0 >= duration)
			break;
		if (fb_now() >= next_renew) {
			next_renew = fb_now() + FB_CAP_RENEW_NS / 1e9;
			if (fb_capture_renew(&cap, &lapses)) {
				taken = true; /* reported; what was captured is kept */
				break;
			}
			/* What was captured so far reaches the file (or its
			 * temporary name, should this process be killed). */
			sync_out(&rd);
			/* Frames get wall-clock times: a step of the clock (NTP
			 * at boot) is followed from the next records on. */
			rd.mono_to_real = fb_clock_real_ns() - fb_clock_mono_ns();
			if (out == stdout && reader_gone())
				rd.err = EPIPE;
			if (!attached(&cap, ifindex, gone)) {
				fb_report(FB_REPORT_NOTE,
					  "'%s' is captured nowhere now: capture ends", f.name);
				break;
			}
		}
		if (out == stdout)
			sync_out(&rd);
	}
	/* Off first, then what the ring still holds: a packet already past
	 * the check when capture went off finishes its write meanwhile. */
	fb_capture_stop(&cap);
	armed = false;
	usleep(1000);
	ring_buffer__consume(rb);
	if (out != stdout)
		sync_out(&rd);
	/* Ctrl-C of `capture -w - | READER` reaches the reader too, which
	 * can be gone before the frames still held here are written (EPIPE),
	 * or interrupts a write the full pipe held (EINTR): the stop asked
	 * for, not a failed write. What such an error left held goes. */
	stopped = fb_interrupted() && out == stdout;
	if (stopped && (rd.err == EPIPE || rd.err == EINTR ||
			(!rd.err && fflush(out) && (errno == EPIPE || errno == EINTR)))) {
		rd.err = 0;
		__fpurge(out);
		clearerr(out);
	}
	if (rd.err) {
		if (out == stdout || keep(&sf, &rd)) {
			errno = rd.err;
			goto write_err;
		}
		fb_err("%s: write failed: %s: capture ended, the %llu frames before kept", file,
		       strerror(rd.err), (unsigned long long)rd.w.packets);
	}
	if (fb_capture_stats(&cap, st))
		goto out;
	if (out == stdout) {
		if (fflush(out))
			goto write_err;
	} else if (fb_safefile_commit(&sf)) {
		goto out;
	}
	summary(out == stdout ? stderr : stdout, f.name, file, &cap, &o, format, st, &rd,
		fb_now() - t0, lapses);
	rc = taken || rd.err ? 1 : 0;
	goto out;
write_err:
	fb_err("%s: write failed: %s", file, strerror(errno));
out:
	if (armed)
		fb_capture_stop(&cap);
	ring_buffer__free(rb);
	if (sf.out)
		fb_safefile_abort(&sf);
	fb_capture_close(&cap);
	fb_store_close(&f);
	return rc;
}
