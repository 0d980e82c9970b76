// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_flowacct: per-flow accounting (attach --accounting) through the real
 * XDP program (BPF_PROG_TEST_RUN) and the table's reader
 * (user/lib/monitor/flowacct.c), against counts kept by the test.
 *
 *  - exact: 3,000 flows (IPv4 and IPv6; TCP with flags, UDP, ICMP and
 *    ICMPv6 of several types; VLAN-tagged; ToS/traffic class; IPv6 with a
 *    hop-by-hop header before TCP; one flow the filter drops), 40,000
 *    packets of random sizes from two CPUs: one record per flow (ICMP
 *    type/code and verdict apart), its packets and IP octets exact, TCP
 *    flags ORed, ToS, VLAN id, MACs, ingress device, verdict as sent;
 *    nothing overflowed.
 *  - overflow: 1,000 flows into a table of 64 per CPU: exact counts plus
 *    the overflow counters add up to every packet; no flow's exact count
 *    exceeds its truth, and the overflow sketch's estimate covers the
 *    rest of every flow (so a collector summing both never counts twice).
 *  - ends: idle timeout (a packet after the end starts a new record; both
 *    records add up), TCP FIN (after the quiet time) and RST (at once),
 *    active timeout (records of the news only, also across a restarted
 *    reader), forced end; flowEndReason of each.
 *  - cpus: one flow from two CPUs at once: one merged record, exact.
 *
 * Filters live under /sys/fs/bpf/fbtest_flowacct_<pid>.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flowbloom.skel.h"
#include "monitor/flowacct.h"
#include "monitor/monmaps.h"
#include "packet.h"
#include "rules/rules.h"
#include "prog/loader.h"
#include "store/store.h"
#include "testlib.h"

#define NFLOWS 3000
#define NPACKETS 40000

struct tflow {
	struct fb_key key;
	__u16 icmp, vlan;
	__u8 tos, hbh, verdict;
	__u64 packets, bytes;
	__u16 flags;
	unsigned records;
	__u64 got_packets, got_bytes; /* what the records said */
};

struct rig {
	struct fb_store f;
	struct fb_monitor m;
	struct flowbloom_bpf *skel;
	int prog;
};

static void rig_down(struct rig *r)
{
	char name[FB_NAME_MAX];

	snprintf(name, sizeof(name), "%s", r->f.name);
	flowbloom_bpf__destroy(r->skel);
	if (r->m.flows_fd >= 0)
		fb_monitor_close(&r->m);
	fb_monitor_unpin(&r->f);
	fb_store_close(&r->f);
	fb_store_destroy(name);
}

/* The rig, its program loaded multi-buffer (as on a device of MTU 9000)
 * if frags. */
static bool rig_frags;

static int rig_up(struct rig *r, const char *name, __u64 max_flows, const struct fb_key *block)
{
	struct fb_create_opts co = { .nblocks = 16,
				     .k = 4,
				     .layout = FB_LAYOUT_BLOCKED,
				     .hash = FB_HASH_NHK,
				     .action = FB_ACTION_DROP };
	struct fb_load_opts lo = { .action = FB_ACTION_DROP, .frags = rig_frags };
	struct fb_mon_opts o;
	size_t bad;

	memset(r, 0, sizeof(*r));
	r->m.flows_fd = -1;
	if (fb_store_create(name, &co))
		return -1;
	if (fb_store_open(name, &r->f)) {
		fb_store_destroy(name);
		return -1;
	}
	fb_monitor_opts_default(&o);
	o.sketch = true;
	o.acct = true;
	o.max_flows = max_flows;
	if ((block && fb_rules_add(&r->f, block, 1, &bad)) || fb_monitor_create(&r->f, &o) ||
	    fb_monitor_open(&r->f, &r->m))
		goto fail;
	lo.monitor = &r->m;
	r->skel = fb_load(&r->f, &lo);
	if (!r->skel)
		goto fail;
	r->prog = bpf_program__fd(r->skel->progs.flowbloom);
	return 0;
fail:
	rig_down(r);
	return -1;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* A packet of flow t: payload bytes, TCP flags; returns the frame length
 * and adds the IP length to *ip_len. */
static size_t frame_of(const struct tflow *t, size_t payload, __u16 flags, __u8 *buf, __u64 *ip_len)
{
	const struct fb_key *k = &t->key;
	struct pkt p;
	__u8 *q;

	pkt_init(&p);
	if (t->vlan) {
		pkt_eth(&p, ETH_P_8021Q);
		pkt_vlan(&p, t->vlan | 0x2000 /* PCP 1: not the VLAN id */,
			 k->family ? ETH_P_IPV6 : ETH_P_IP);
	} else {
		pkt_eth(&p, k->family ? ETH_P_IPV6 : ETH_P_IP);
	}
	if (k->family == FB_FAMILY_IPV4) {
		pkt_ipv4(&p, k->proto, 5, 0, &k->saddr[12], &k->daddr[12]);
		p.d[p.l3 + 1] = t->tos;
	} else {
		pkt_ipv6(&p, t->hbh ? 0 : k->proto, k->saddr, k->daddr);
		p.d[p.l3] = 0x60 | t->tos >> 4;
		p.d[p.l3 + 1] = (t->tos & 15) << 4;
		if (t->hbh)
			pkt_ext6(&p, 0, k->proto, 0);
	}
	p.l4 = p.len;
	p.l4proto = k->proto;
	q = pkt_put(&p, k->proto == IPPROTO_TCP ? 20 : 8, true);
	if (k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6) {
		q[0] = t->icmp >> 8;
		q[1] = t->icmp & 0xff;
	} else {
		memcpy(q, &k->sport, 2);
		memcpy(q + 2, &k->dport, 2);
	}
	if (k->proto == IPPROTO_TCP) {
		q[12] = 5 << 4 | (flags >> 8 & 1);
		q[13] = flags & 0xff;
	}
	pkt_payload(&p, payload);
	pkt_finish(&p);
	memcpy(buf, p.d, p.len);
	*ip_len += p.len - p.l3;
	return p.len;
}

static int send_frame(int prog, const void *frame, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .data_size_in = len, .repeat = 1);

	return bpf_prog_test_run_opts(prog, &t) ? -1 : (int)t.retval;
}

/* Send n packets of flow t (random sizes, the given flags). */
static void send_n(int prog, struct tflow *t, int n, __u16 flags, uint64_t *seed)
{
	__u8 buf[1600];
	int i;

	for (i = 0; i < n; i++) {
		size_t len = frame_of(t, test_rand64(seed) % 1200, flags, buf, &t->bytes);

		if (send_frame(prog, buf, len) < 0) {
			ASSERT_TRUE(false, "test_run");
			return;
		}
		t->packets++;
		t->flags |= flags;
	}
}

static void make_flows(struct tflow *fl, size_t n, uint64_t seed)
{
	static const __u16 icmp4[] = { 0x0800, 0x0000, 0x0303, 0x0b00 };
	static const __u16 icmp6[] = { 0x8000, 0x8100, 0x8700, 0x0104 };
	size_t i;

	memset(fl, 0, n * sizeof(*fl));
	for (i = 0; i < n; i++) {
		struct tflow *t = &fl[i];
		uint64_t r = test_rand64(&seed);

		test_random_flow(&seed, &t->key, i & 1);
		/* Every fourth an ICMP flow: the key has no ports; a few ICMP
		 * types share one 5-tuple and must stay apart. */
		if (i % 4 == 3) {
			t->key.proto = t->key.family ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
			t->key.sport = t->key.dport = 0;
			if (i >= 8 && i % 8 == 7) {
				t->key = fl[i - 4].key; /* same 5-tuple, another type */
				t->icmp = (t->key.family ? icmp6 : icmp4)[(r >> 8) & 3];
				if (t->icmp == fl[i - 4].icmp)
					t->icmp ^= 0x0001;
			} else {
				t->icmp = (t->key.family ? icmp6 : icmp4)[r & 3];
			}
		}
		t->tos = (r >> 16) & 0xff;
		t->vlan = i % 5 == 1 ? 1 + (r >> 24) % 4094 : 0;
		t->hbh = t->key.family && t->key.proto == IPPROTO_TCP && i % 3 == 0;
		t->verdict = XDP_PASS;
	}
	fl[0].verdict = XDP_DROP; /* the filter's rule */
}

static struct tflow *find(struct tflow *fl, size_t n, const struct fb_acct_rec *r)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!memcmp(&fl[i].key, &r->key, sizeof(r->key)) && fl[i].icmp == r->icmp)
			return &fl[i];
	return NULL;
}

struct check {
	struct tflow *fl;
	size_t n;
	__u64 unknown, bad_fields, bad_time, t0, t1;
	__u8 want_reason;
	__u64 bad_reason;
};

static int on_rec(const struct fb_acct_rec *r, void *ctx)
{
	static const __u8 src[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01 };
	static const __u8 dst[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x02 };
	struct check *c = ctx;
	struct tflow *t = find(c->fl, c->n, r);

	if (!t) {
		c->unknown++;
		return 0;
	}
	t->records++;
	t->got_packets += r->packets;
	t->got_bytes += r->bytes;
	if (r->tcp_flags != t->flags || r->tos != t->tos || r->vlan != t->vlan ||
	    r->verdict != t->verdict || r->ifindex != 1 || memcmp(r->smac, src, 6) ||
	    memcmp(r->dmac, dst, 6))
		c->bad_fields++;
	if (r->start_ns < c->t0 || r->end_ns > c->t1 || r->end_ns < r->start_ns)
		c->bad_time++;
	if (c->want_reason && r->reason != c->want_reason)
		c->bad_reason++;
	return 0;
}

struct sender {
	int prog, cpu;
	struct tflow *fl;
	size_t n, packets;
	uint64_t seed;
};

static void *sender(void *arg)
{
	struct sender *s = arg;
	size_t i;

	pin_cpu(s->cpu);
	for (i = 0; i < s->packets; i++) {
		/* Skewed: low flows get more. */
		uint64_t r = test_rand64(&s->seed);
		struct tflow *t =
			&s->fl[(r % s->n) * (r >> 32 & 1) + (r % (s->n / 10 + 1)) * !(r >> 32 & 1)];
		__u16 flags = t->key.proto == IPPROTO_TCP ? 0x10 | (r >> 40 & 0x10b) : 0;

		flags &= ~0x5; /* no FIN or RST here: the ends test has them */
		send_n(s->prog, t, 1, flags, &s->seed);
	}
	return NULL;
}

static void test_exact(void)
{
	static struct tflow fl[NFLOWS];
	struct check c = { .fl = fl, .n = NFLOWS, .want_reason = FB_ACCT_END_FORCED };
	struct sender s[2];
	struct fb_acct_totals tot;
	pthread_t th[2];
	struct rig r;
	size_t i, one = 0, exact = 0;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1, n;

	make_flows(fl, NFLOWS, 42);
	if (!ASSERT_EQ(rig_up(&r, "exact", 8192, &fl[0].key), 0, "exact: filter, maps, program"))
		return;
	c.t0 = mono_ns();
	/* Each flow's first packet from one CPU (so its first-packet fields
	 * are known), then the mix from both. */
	{
		uint64_t seed = 1;

		pin_cpu(0);
		for (i = 0; i < NFLOWS; i++)
			send_n(r.prog, &fl[i], 1, fl[i].key.proto == IPPROTO_TCP ? 0x02 : 0, &seed);
	}
	for (n = 0; n < ncpu; n++) {
		s[n] = (struct sender){ r.prog, n, fl, NFLOWS, NPACKETS / ncpu, 7 + n };
		/* Both threads write fl[]: each its own half of the flows. */
		s[n].fl = fl + n * (NFLOWS / ncpu);
		s[n].n = NFLOWS / ncpu;
		pthread_create(&th[n], NULL, sender, &s[n]);
	}
	for (n = 0; n < ncpu; n++)
		pthread_join(th[n], NULL);
	fb_acct_totals(&r.m, &tot);
	ASSERT_EQ(tot.overflow_packets, 0, "exact: no packet overflowed");
	ASSERT_EQ(tot.collisions, 0, "exact: no fingerprint collision");
	ASSERT_TRUE(tot.live >= NFLOWS && tot.live <= 2 * NFLOWS,
		    "exact: every flow holds a way (one per CPU that saw it)");
	c.t1 = mono_ns() + 10000000;
	n = fb_acct_drain(&r.m, mono_ns(), on_rec, &c);
	ASSERT_EQ(n, NFLOWS, "exact: one record per flow (merged over CPUs)");
	for (i = 0; i < NFLOWS; i++) {
		one += fl[i].records == 1;
		exact += fl[i].got_packets == fl[i].packets && fl[i].got_bytes == fl[i].bytes;
		if (getenv("DBG") &&
		    (fl[i].got_packets != fl[i].packets || fl[i].got_bytes != fl[i].bytes))
			fprintf(stderr,
				"flow %zu proto %u fam %u icmp %x vlan %u hbh %u: %llu/%llu pk "
				"%llu/%llu b\n",
				i, fl[i].key.proto, fl[i].key.family, fl[i].icmp, fl[i].vlan,
				fl[i].hbh, fl[i].got_packets, fl[i].packets, fl[i].got_bytes,
				fl[i].bytes);
	}
	ASSERT_EQ(one, NFLOWS, "exact: every flow has its record");
	ASSERT_EQ(exact, NFLOWS, "exact: packets and IP octets exact for every flow");
	ASSERT_EQ(c.unknown, 0, "exact: no record of a flow never sent");
	ASSERT_EQ(c.bad_fields, 0,
		  "exact: TCP flags, ToS, VLAN id, verdict, ingress device, MACs as sent");
	ASSERT_EQ(c.bad_time, 0, "exact: start <= end, both within the run");
	ASSERT_EQ(c.bad_reason, 0, "exact: flowEndReason forced end (the reader stops)");
	fb_acct_totals(&r.m, &tot);
	ASSERT_EQ(tot.live, 0, "exact: the drain freed every way");
	rig_down(&r);
}

static void test_overflow(void)
{
	static struct tflow fl[1000];
	struct check c = { .fl = fl, .n = 1000 };
	struct fb_mon_snap os;
	struct fb_acct_totals tot;
	__u64 sent = 0, got = 0, bytes = 0, gotb = 0;
	size_t i, over = 0, covered = 0, under = 0;
	uint64_t seed = 3;
	struct rig r;

	make_flows(fl, 1000, 9);
	fl[0].verdict = XDP_PASS;
	if (!ASSERT_EQ(rig_up(&r, "over", 64, NULL), 0, "overflow: filter, maps, program"))
		return;
	pin_cpu(0);
	for (i = 0; i < 1000; i++)
		send_n(r.prog, &fl[i], 1 + i % 7, 0, &seed);
	for (i = 0; i < 1000; i++)
		send_n(r.prog, &fl[i], 1 + i % 3, 0, &seed);
	fb_acct_totals(&r.m, &tot);
	ASSERT_TRUE(tot.overflow_packets > 0, "overflow: a full table overflows");
	ASSERT_TRUE(tot.live >= tot.capacity / r.m.cfg.top_planes * 15 / 16,
		    "overflow: CPU 0's plane fills before it overflows (two choices)");
	c.t0 = 0;
	c.t1 = ~0ULL;
	ASSERT_EQ(fb_acct_osnap_take(&r.m, &os), 0, "overflow: the overflow sketch reads");
	fb_acct_drain(&r.m, mono_ns(), on_rec, &c);
	for (i = 0; i < 1000; i++) {
		__u64 ep, eb, h = fb_mon_hash(&fl[i].key, r.m.kw), p = ~0ULL, b = ~0ULL;
		__u32 d;

		sent += fl[i].packets;
		bytes += fl[i].bytes;
		got += fl[i].got_packets;
		gotb += fl[i].got_bytes;
		over += fl[i].got_packets > fl[i].packets;
		/* The overflow sketch's estimate of what the table missed. */
		for (d = 0; d < os.depth; d++) {
			struct fb_mon_cell *cell =
				&os.cells[(d << os.shift) + fb_mon_col(h, d, os.shift)];

			p = cell->packets < p ? cell->packets : p;
			b = cell->bytes < b ? cell->bytes : b;
		}
		ep = p;
		eb = b;
		covered += ep >= fl[i].packets - fl[i].got_packets &&
			   eb >= fl[i].bytes - fl[i].got_bytes;
		under += fl[i].got_packets < fl[i].packets;
	}
	ASSERT_EQ(got + tot.overflow_packets, sent, "overflow: exact + overflow packets = all");
	ASSERT_EQ(gotb + tot.overflow_bytes, bytes, "overflow: exact + overflow octets = all");
	ASSERT_EQ(os.packets, tot.overflow_packets, "overflow: the sketch holds the overflow only");
	ASSERT_EQ(over, 0, "overflow: no flow counted above its truth");
	ASSERT_TRUE(under > 0, "overflow: some flows were only partly counted exactly");
	ASSERT_EQ(covered, 1000, "overflow: the sketch covers what the table missed, per flow");
	ASSERT_EQ(c.unknown, 0, "overflow: no record of a flow never sent");
	fb_monitor_snap_free(&os);
	rig_down(&r);
}

struct one {
	struct fb_acct_rec r[8];
	int n;
};

static int keep(const struct fb_acct_rec *r, void *ctx)
{
	struct one *o = ctx;

	if (o->n < 8)
		o->r[o->n++] = *r;
	return 0;
}

/* A flow's last packet is known to a jiffy (the library reads it as
 * first_ns + elapsed jiffies x tick): up to a tick later than it came. A
 * pass meant to find a flow quiet for T looks T plus more than a jiffy at
 * any HZ (>= 100) ahead; exactly T ahead it may find it quiet for a few ms
 * less, and then the flow ends a pass later (one run failed so: the FIN
 * flow's record came with the next check's). */
#define JIFFY_SLACK_NS 50000000ULL

static void test_ends(void)
{
	struct fb_acct_pass o = { .idle_ns = 10000000000ULL,
				  .active_ns = 1000000000000ULL,
				  .fin_ns = 1000000000ULL };
	struct tflow fl[4];
	struct fb_monitor m2;
	uint64_t seed = 5;
	struct one got;
	struct rig r;
	__u64 sum, t1, t2;

	make_flows(fl, 4, 77);
	fl[0].verdict = XDP_PASS;
	for (int i = 0; i < 3; i++) {
		fl[i].key.proto = IPPROTO_TCP;
		fl[i].icmp = 0;
		fl[i].hbh = 0;
	}
	if (!ASSERT_EQ(rig_up(&r, "ends", 1024, NULL), 0, "ends: filter, maps, program"))
		return;
	pin_cpu(0);

	/* Idle: nothing before the timeout; ended at it (no record yet: the
	 * next pass reads it); a packet after the end starts anew. */
	send_n(r.prog, &fl[0], 3, 0x10, &seed);
	memset(&got, 0, sizeof(got));
	o.now_ns = mono_ns();
	fb_acct_pass(&r.m, &o, keep, &got);
	ASSERT_EQ(got.n, 0, "idle: no record before the idle timeout");
	o.now_ns = mono_ns() + o.idle_ns + JIFFY_SLACK_NS;
	fb_acct_pass(&r.m, &o, keep, &got);
	ASSERT_EQ(got.n, 0, "idle: ended, read at the next pass");
	send_n(r.prog, &fl[0], 2, 0x18, &seed);
	o.now_ns = mono_ns();
	fb_acct_pass(&r.m, &o, keep, &got);
	ASSERT_TRUE(got.n == 1 && got.r[0].packets == 3 && got.r[0].reason == FB_ACCT_END_IDLE &&
			    got.r[0].tcp_flags == 0x10,
		    "idle: one record, 3 packets, flowEndReason 1, flags of its packets");
	memset(&got, 0, sizeof(got));
	fb_acct_drain(&r.m, mono_ns(), keep, &got);
	ASSERT_TRUE(got.n == 1 && got.r[0].packets == 2 && got.r[0].reason == FB_ACCT_END_FORCED,
		    "idle: the packets after the end: their own record (forced end at the drain)");

	/* RST ends at once; FIN once quiet for fin_ns. */
	send_n(r.prog, &fl[1], 4, 0x10, &seed);
	send_n(r.prog, &fl[1], 1, 0x04, &seed);
	send_n(r.prog, &fl[2], 4, 0x10, &seed);
	send_n(r.prog, &fl[2], 1, 0x11, &seed);
	memset(&got, 0, sizeof(got));
	o.now_ns = mono_ns();
	fb_acct_pass(&r.m, &o, keep, &got);
	send_n(r.prog, &fl[2], 1, 0x10, &seed); /* the last ACK, within fin_ns */
	fb_acct_pass(&r.m, &o, keep, &got);
	ASSERT_TRUE(got.n == 1 && !memcmp(&got.r[0].key, &fl[1].key, sizeof(fl[1].key)) &&
			    got.r[0].packets == 5 && got.r[0].reason == FB_ACCT_END_FLOW &&
			    got.r[0].tcp_flags == 0x14,
		    "RST: ended at once, 5 packets, flowEndReason 3, flags ACK|RST");
	o.now_ns = mono_ns() + o.fin_ns + JIFFY_SLACK_NS;
	memset(&got, 0, sizeof(got));
	fb_acct_pass(&r.m, &o, keep, &got);
	fb_acct_pass(&r.m, &o, keep, &got);
	ASSERT_TRUE(got.n == 1 && got.r[0].packets == 6 && got.r[0].reason == FB_ACCT_END_FLOW &&
			    got.r[0].tcp_flags == 0x11,
		    "FIN: ended once quiet, its last ACK included (6 packets, flowEndReason 3)");

	/* Active timeout: the news of each period, the flow kept; a new
	 * reader (the state is in the table) goes on from there. */
	o.active_ns = 1;
	send_n(r.prog, &fl[3], 5, 0, &seed);
	o.now_ns = mono_ns();
	memset(&got, 0, sizeof(got));
	fb_acct_pass(&r.m, &o, keep, &got);
	usleep(20000);
	t1 = mono_ns();
	send_n(r.prog, &fl[3], 3, 0, &seed);
	t2 = mono_ns();
	o.now_ns = mono_ns();
	fb_acct_pass(&r.m, &o, keep, &got);
	ASSERT_TRUE(got.n == 2 && got.r[0].packets == 5 && got.r[1].packets == 3 &&
			    got.r[0].reason == FB_ACCT_END_ACTIVE &&
			    got.r[1].start_ns >= got.r[0].end_ns,
		    "active: 5 then 3 packets, flowEndReason 2, back to back");
	/* flowStartMilliseconds is the record's first packet (RFC 7012), not
	 * the previous record's export, 20 ms before it. */
	ASSERT_TRUE(got.n == 2 && got.r[1].start_ns >= t1 && got.r[1].start_ns <= t2,
		    "active: the second record starts at its first packet");
	send_n(r.prog, &fl[3], 2, 0, &seed);
	ASSERT_EQ(fb_monitor_open(&r.f, &m2), 0, "active: a second reader opens the table");
	memset(&got, 0, sizeof(got));
	fb_acct_drain(&m2, mono_ns(), keep, &got);
	sum = got.n ? got.r[0].packets : 0;
	ASSERT_TRUE(got.n == 1 && sum == 2 && got.r[0].reason == FB_ACCT_END_FORCED,
		    "restarted reader: only the 2 packets not yet exported");
	fb_monitor_close(&m2);
	rig_down(&r);
}

static void *same_flow(void *arg)
{
	struct sender *s = arg;

	pin_cpu(s->cpu);
	send_n(s->prog, s->fl, (int)s->packets, 0, &s->seed);
	return NULL;
}

static void test_cpus(void)
{
	struct tflow fl[2];
	struct sender s[2];
	pthread_t th[2];
	struct one got = { 0 };
	struct rig r;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		test_skip("cpus", "one CPU online");
		return;
	}
	make_flows(fl, 2, 11);
	fl[1] = fl[0];
	if (!ASSERT_EQ(rig_up(&r, "cpus", 1024, NULL), 0, "cpus: filter, maps, program"))
		return;
	for (int i = 0; i < 2; i++) {
		s[i] = (struct sender){ r.prog, i, &fl[i], 1, 20000, 100 + i };
		pthread_create(&th[i], NULL, same_flow, &s[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	fb_acct_drain(&r.m, mono_ns(), keep, &got);
	ASSERT_TRUE(got.n == 1 && got.r[0].packets == 40000 &&
			    got.r[0].bytes == fl[0].bytes + fl[1].bytes,
		    "cpus: one flow from two CPUs: one record, 40000 packets, octets exact");
	rig_down(&r);
}

/* Jumbo frames through the multi-buffer program: a TCP segment of 9000
 * bytes whose IP length field is 0 (a GSO packet longer than the field,
 * which the parser takes; IPv6: payload length 0) counts the IP octets of
 * the whole frame, not of its first buffer (3,520 bytes under test_run, a
 * page's worth on a NIC): a sender could have had its flow counted at a
 * third of what it sent. With the length field set, the field's. */
static void test_jumbo(void)
{
	static __u8 buf[9100];
	struct tflow fl[2];
	struct check c = { .fl = fl, .n = 2 };
	struct rig r;
	uint64_t seed = 99;
	int i, n;

	memset(fl, 0, sizeof(fl));
	for (i = 0; i < 2; i++) {
		test_random_flow(&seed, &fl[i].key, i);
		fl[i].key.proto = IPPROTO_TCP;
		fl[i].verdict = XDP_PASS;
		fl[i].flags = 0x10;
	}
	rig_frags = true;
	n = rig_up(&r, "jumbo", 1024, NULL);
	rig_frags = false;
	if (!ASSERT_EQ(n, 0, "jumbo: filter, maps, multi-buffer program"))
		return;
	c.t0 = mono_ns();
	for (i = 0; i < 2; i++) {
		int zero;

		/* Its headers as frame_of() makes them, 9000 bytes in all. */
		for (zero = 1; zero >= 0; zero--) {
			__u64 hl = 0;
			size_t h = frame_of(&fl[i], 0, 0x10, buf, &hl), ip = 9000 - 14;
			__u16 f = htons(zero ? 0 : i ? ip - 40 : ip);

			memset(buf + h, 'j', 9000 - h);
			/* IPv4's total length, IPv6's payload length: 0 or as it is. */
			memcpy(buf + 14 + (i ? 4 : 2), &f, 2);
			ASSERT_EQ(send_frame(r.prog, buf, 9000), XDP_PASS,
				  zero ? "jumbo: a 9000-byte frame, length field 0, passes"
				       : "jumbo: ... one with its length field");
			fl[i].packets++;
			fl[i].bytes += ip;
		}
	}
	c.t1 = mono_ns() + 10000000;
	n = fb_acct_drain(&r.m, mono_ns(), on_rec, &c);
	ASSERT_EQ(n, 2, "jumbo: a record per flow");
	for (i = 0; i < 2; i++) {
		char what[96];

		snprintf(what, sizeof(what), "jumbo %s: 2 packets, %llu IP octets (got %llu)",
			 i ? "IPv6, payload length 0" : "IPv4, total length 0",
			 (unsigned long long)fl[i].bytes, (unsigned long long)fl[i].got_bytes);
		ASSERT_TRUE(fl[i].got_packets == 2 && fl[i].got_bytes == fl[i].bytes, what);
	}
	rig_down(&r);
}

int main(void)
{
	char root[128];

	fb_libbpf_logging(getenv("TEST_VERBOSE") != NULL);
	test_private_root("flowacct", root, sizeof(root));
	test_exact();
	test_overflow();
	test_ends();
	test_cpus();
	test_jumbo();
	rmdir(root);
	return test_summary();
}
