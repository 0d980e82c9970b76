// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_monitor, a sketch by address (attach --sketch-by src|dst): through
 * the real program, one source sending 400 one-packet flows (a port each)
 * and another 5 packets, IPv4 and IPv6. The top-talker table holds the
 * address key user space builds (fb_mon_sketch_key(): family and address,
 * every other field zero), under the hash user space computes for it (the
 * reader keeps only keys that hash to their fingerprint), its estimate is
 * the address's packets and bytes, whichever flow of it is asked; the
 * seen-set still counts flows (400 new-flow events). The same traffic in a
 * sketch by flow: no candidate above one packet.
 */
#include "monitor_test.h"

#define BY_FLOWS 400

static void flow_key(struct fb_key *k, const char *proto, const char *src, int sport,
		     const char *dst, int dport)
{
	char s[64], d[64], err[128], *argv[3] = { (char *)proto, s, d };

	snprintf(s, sizeof(s), strchr(src, ':') ? "[%s]:%d" : "%s:%d", src, sport);
	snprintf(d, sizeof(d), strchr(dst, ':') ? "[%s]:%d" : "%s:%d", dst, dport);
	if (fb_flow_parse(3, argv, k, err, sizeof(err)) != 3) {
		fprintf(stderr, "bad test flow: %s\n", err);
		exit(1);
	}
}

/* The candidate of key a (an address key) among m's top talkers, or -1. */
static int find_top(const struct fb_top_entry *e, int n, const struct fb_key *a)
{
	int i;

	for (i = 0; i < n; i++)
		if (!memcmp(&e[i].key, a, sizeof(*a)))
			return i;
	return -1;
}

static void one(const char *fam, __u32 by, bool newflows)
{
	const bool v6 = !strcmp(fam, "ipv6");
	const char *heavy = v6 ? "2001:db8::7" : "198.51.100.7",
		   *light = v6 ? "2001:db8::8" : "198.51.100.8",
		   *dst = v6 ? "2001:db8::1" : "203.0.113.1", *other;
	const char *what = by == FB_MON_BY_SRC ? "by src" : by ? "by dst" : "by flow";
	struct fb_key k, a, heavy_a, light_a;
	struct evlog log = { 0 };
	struct fb_mon_snap s = { 0 };
	struct fb_top_entry *e = NULL;
	__u64 p, b, bytes = 0, eb = 0;
	__u8 frame[256];
	struct fb_mon_opts o;
	struct rig r;
	int i, n, at;
	size_t len;

	fb_monitor_opts_default(&o);
	o.sketch = true;
	o.sketch_by = by;
	o.newflows = newflows;
	snprintf(label, sizeof(label), "sketch %s, %s: set up", what, fam);
	if (!ASSERT_EQ(rig_up(&r, "byaddr", &o, false), 0, label))
		return;
	if (newflows)
		r.rb = ring_buffer__new(r.m.events_fd, on_event, &log, NULL);
	/* The heavy source: a new source port every packet (to one dst), or
	 * for a sketch by dst, ever new sources' ports to one destination. */
	for (i = 0; i < BY_FLOWS; i++) {
		if (by == FB_MON_BY_DST)
			flow_key(&k, "udp", light, 1024 + i, heavy, 53);
		else
			flow_key(&k, "udp", heavy, 1024 + i, dst, 53);
		len = build(&k, (size_t)i % 7, frame);
		bytes += len;
		send_frame(r.prog, frame, len);
	}
	fb_monitor_sketch_key(&r.m, &k, &heavy_a);
	for (i = 0; i < 5; i++) {
		if (by == FB_MON_BY_DST)
			flow_key(&k, "tcp", heavy, 40000, light, 443);
		else
			flow_key(&k, "tcp", light, 40000, dst, 443);
		len = build(&k, 0, frame);
		eb += len;
		send_frame(r.prog, frame, len);
	}
	fb_monitor_sketch_key(&r.m, &k, &light_a);
	if (newflows) {
		ring_buffer__consume(r.rb);
		snprintf(label, sizeof(label), "sketch %s, %s: the seen-set counts flows", what,
			 fam);
		ASSERT_EQ(log.total, BY_FLOWS + 1, label);
	}
	if (!ASSERT_EQ(fb_monitor_snap_take(&r.m, &s), 0, "byaddr: snapshot"))
		goto out;
	n = fb_monitor_top(&r.m, &s, NULL, false, 1000, &e);
	if (!by) {
		snprintf(label, sizeof(label),
			 "sketch by flow, %s: every candidate one packet (or the light flow's 5)",
			 fam);
		for (i = 0, at = 0; i < n; i++)
			at += e[i].packets > 5;
		ASSERT_EQ(at, 0, label);
		goto out;
	}
	/* The address key, built here as the program builds it. */
	memset(&a, 0, sizeof(a));
	if (by == FB_MON_BY_SRC) {
		a.w[0] = heavy_a.w[0];
		a.w[1] = heavy_a.w[1];
	} else {
		a.w[2] = heavy_a.w[2];
		a.w[3] = heavy_a.w[3];
	}
	a.family = v6 ? FB_FAMILY_IPV6 : FB_FAMILY_IPV4;
	snprintf(label, sizeof(label), "sketch %s, %s: the address key is family and address", what,
		 fam);
	ASSERT_TRUE(!memcmp(&a, &heavy_a, sizeof(a)), label);
	at = find_top(e, n, &heavy_a);
	snprintf(label, sizeof(label),
		 "sketch %s, %s: the table holds it, under the hash user space computes", what,
		 fam);
	if (!ASSERT_TRUE(at >= 0, label))
		goto out;
	snprintf(label, sizeof(label), "sketch %s, %s: it ranks first", what, fam);
	ASSERT_EQ(at, 0, label);
	snprintf(label, sizeof(label), "sketch %s, %s: %d packets of %d flows, one estimate", what,
		 fam, BY_FLOWS, BY_FLOWS);
	ASSERT_EQ(e[at].packets, BY_FLOWS, label);
	snprintf(label, sizeof(label), "sketch %s, %s: and their bytes", what, fam);
	ASSERT_EQ(e[at].bytes, bytes, label);
	/* Any flow of the address estimates as the address. */
	other = v6 ? "2001:db8::99" : "198.51.100.99";
	if (by == FB_MON_BY_DST)
		flow_key(&k, "tcp", other, 9, heavy, 7);
	else
		flow_key(&k, "tcp", heavy, 9, other, 7);
	fb_monitor_sketch_key(&r.m, &k, &a);
	fb_monitor_estimate(&r.m, &s, NULL, &a, &p, &b);
	snprintf(label, sizeof(label), "sketch %s, %s: another flow of it estimates the address",
		 what, fam);
	ASSERT_EQ(p, BY_FLOWS, label);
	fb_monitor_estimate(&r.m, &s, NULL, &light_a, &p, &b);
	snprintf(label, sizeof(label), "sketch %s, %s: the light address: 5 packets", what, fam);
	ASSERT_EQ(p, 5, label);
	snprintf(label, sizeof(label), "sketch %s, %s: and its bytes", what, fam);
	ASSERT_EQ(b, eb, label);
out:
	free(e);
	fb_monitor_snap_free(&s);
	rig_down(&r);
}

void test_byaddr(void)
{
	one("ipv4", FB_MON_BY_SRC, true);
	one("ipv6", FB_MON_BY_SRC, false);
	one("ipv4", FB_MON_BY_DST, false);
	one("ipv6", FB_MON_BY_DST, true);
	one("ipv4", 0, false);
}
