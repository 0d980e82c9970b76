// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the fleet verbs' translations, host only:
 * - IPFIX encoding (user/lib/fleet/ipfix.c through libfixbuf): messages are
 *   decoded here from RFC 7011 alone: header, sequence numbers (also across
 *   messages split at the UDP size, and a new session), the exact
 *   templates, every field of every record.
 * - ExaBGP JSON to rules (user/lib/fleet/bgp.c): RTBH and FlowSpec translation,
 *   reference counts per path across peers and add-path ids, implicit
 *   withdrawals, session policies and End-of-RIB, what is refused, the
 *   state file, and malformed input (every truncation and random byte
 *   changes of real lines: never a crash, never a partial change).
 * - Export files (user/lib/fleet/fbx_read.c, fbz.c): every single-bit flip
 *   of a file with a generation, plain and compressed (fleet_flip.c).
 */
#include "fleet.h"

/* ------------------------------------------------------------- IPFIX */

struct field {
	unsigned ie, len;
};

struct tmpl {
	unsigned id, n;
	struct field f[32];
};

#define NT 6 /* templates 256..261 */
#define MAXMSG 64

struct decoded {
	unsigned nmsg, ntmpl_sets, nrec[NT]; /* records per template 256..261 */
	unsigned seq[MAXMSG], domain[MAXMSG], data[MAXMSG], tsets[MAXMSG];
	struct tmpl t[8];
	unsigned nt;
	unsigned char rec[NT][8][160]; /* first records of each template */
	bool bad;
};

static unsigned be16(const unsigned char *p)
{
	return p[0] << 8 | p[1];
}

static unsigned be32(const unsigned char *p)
{
	return (unsigned)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static unsigned long long be64(const unsigned char *p)
{
	return (unsigned long long)be32(p) << 32 | be32(p + 4);
}

static struct tmpl *find_t(struct decoded *d, unsigned id)
{
	unsigned i;

	for (i = 0; i < d->nt; i++)
		if (d->t[i].id == id)
			return &d->t[i];
	return NULL;
}

static unsigned rec_len(const struct tmpl *t)
{
	unsigned i, n = 0;

	for (i = 0; i < t->n; i++)
		n += t->f[i].len;
	return n;
}

static void decode(const unsigned char *b, size_t len, struct decoded *d)
{
	size_t off = 0;

	memset(d, 0, sizeof(*d));
	while (off + 16 <= len) {
		unsigned mlen = be16(b + off + 2), m = d->nmsg, so;

		if (be16(b + off) != 10 || mlen < 16 || off + mlen > len || m >= MAXMSG) {
			d->bad = true;
			return;
		}
		d->seq[m] = be32(b + off + 8);
		d->domain[m] = be32(b + off + 12);
		for (so = 16; so + 4 <= mlen;) {
			const unsigned char *s = b + off + so;
			unsigned sid = be16(s), slen = be16(s + 2), p = 4;

			if (slen < 4 || so + slen > mlen) {
				d->bad = true;
				return;
			}
			if (sid == 2) {
				d->ntmpl_sets++;
				d->tsets[m]++;
				while (p + 4 <= slen && d->nt < 8) {
					struct tmpl *t = find_t(d, be16(s + p));
					unsigned i, n = be16(s + p + 2);

					if (!t)
						t = &d->t[d->nt++];
					t->id = be16(s + p);
					t->n = n;
					p += 4;
					for (i = 0; i < n && i < 32; i++, p += 4) {
						t->f[i].ie = be16(s + p);
						t->f[i].len = be16(s + p + 2);
					}
				}
			} else if (sid >= 256 && sid < 256 + NT) {
				struct tmpl *t = find_t(d, sid);
				unsigned rl = t ? rec_len(t) : 0, k = sid - 256;

				if (!t) {
					d->bad = true;
					return;
				}
				for (; p + rl <= slen; p += rl) {
					if (d->nrec[k] < 8 && rl <= 160)
						memcpy(d->rec[k][d->nrec[k]], s + p, rl);
					d->nrec[k]++;
					d->data[m]++;
				}
			}
			so += slen;
		}
		d->nmsg++;
		off += mlen;
	}
	if (off != len)
		d->bad = true;
}

/* Offset of the n-th (0-based) occurrence of ie in template t, -1 if none. */
static int field_at(const struct tmpl *t, unsigned ie, int nth)
{
	unsigned i, off = 0;

	for (i = 0; i < t->n; i++) {
		if (t->f[i].ie == ie && !nth--)
			return off;
		off += t->f[i].len;
	}
	return -1;
}

static bool same_fields(const struct tmpl *t, const unsigned (*want)[2], unsigned n)
{
	unsigned i;

	if (!t || t->n != n)
		return false;
	for (i = 0; i < n; i++)
		if (t->f[i].ie != want[i][0] || t->f[i].len != want[i][1])
			return false;
	return true;
}

static double f64(const unsigned char *p)
{
	unsigned long long v = be64(p);
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

void key_of(const char *text, struct fb_key *k)
{
	char buf[128], err[128];
	int blank;

	snprintf(buf, sizeof(buf), "%s", text);
	if (fb_flow_parse_line(buf, k, &blank, err, sizeof(err)))
		fprintf(stderr, "bad test flow %s: %s\n", text, err);
}

bool keys_hold(const struct fb_key *keys, size_t n, const char *flow)
{
	struct fb_key k;
	size_t i;

	key_of(flow, &k);
	for (i = 0; i < n; i++)
		if (!memcmp(&keys[i], &k, sizeof(k)))
			return true;
	return false;
}

char bgp_note[1024];

static void on_note(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(bgp_note, sizeof(bgp_note), "%s", msg);
	if (getenv("TEST_VERBOSE"))
		printf("  note: %s\n", msg);
}

void bgp_defaults(struct fb_bgp *b)
{
	struct fb_bgp_opts o = {
		.community = FB_BGP_BLACKHOLE, .flush_on_down = true, .min_v4 = 24, .min_v6 = 48
	};

	fb_bgp_init(b, &o);
	b->note = on_note;
}

int bgp_feed(struct fb_bgp *b, const char *s)
{
	bgp_note[0] = 0;
	return fb_bgp_line(b, s, strlen(s), 1);
}

/* Messages out of the encoder, one after another, as a collector would
 * read them off a TCP connection. */
struct stream {
	unsigned char b[1 << 16];
	size_t len;
	unsigned msgs, records;
};

static void take(struct fb_ipfix *x, struct stream *st)
{
	const __u8 *m;
	size_t len;
	unsigned recs;

	if (fb_ipfix_take(x, &m, &len, &recs) || len + st->len > sizeof(st->b))
		return;
	memcpy(st->b + st->len, m, len);
	st->len += len;
	st->msgs += len > 0;
	st->records += recs;
}

/* Append a record, taking the message when it is full. */
#define PUT(fn, x, st, r)                                                                          \
	({                                                                                         \
		int _r = fn(x, r);                                                                 \
		if (_r == 1) {                                                                     \
			take(x, st);                                                               \
			_r = fn(x, r);                                                             \
		}                                                                                  \
		_r;                                                                                \
	})

static void test_ipfix(void)
{
	static const unsigned nf4[][2] = { { 152, 8 }, { 153, 8 }, { 8, 4 }, { 12, 4 },
					   { 7, 2 },   { 11, 2 },  { 4, 1 }, { 10, 4 },
					   { 14, 4 },  { 61, 1 },  { 89, 1 } };
	static const unsigned est6[][2] = { { 152, 8 }, { 153, 8 }, { 27, 16 }, { 28, 16 },
					    { 7, 2 },	{ 11, 2 },  { 4, 1 },	{ 10, 4 },
					    { 14, 4 },	{ 61, 1 },  { 2, 8 },	{ 1, 8 },
					    { 338, 8 }, { 337, 8 }, { 336, 8 }, { 337, 8 },
					    { 336, 8 } };
	static const unsigned fl4[][2] = {
		{ 152, 8 }, { 153, 8 }, { 8, 4 },  { 12, 4 },  { 7, 2 },  { 11, 2 }, { 4, 1 },
		{ 5, 1 },   { 6, 2 },	{ 32, 2 }, { 58, 2 },  { 56, 6 }, { 80, 6 }, { 10, 4 },
		{ 14, 4 },  { 61, 1 },	{ 89, 1 }, { 136, 1 }, { 2, 8 },  { 1, 8 }
	};
	static const unsigned char mac1[6] = { 0, 0, 0x5e, 0, 0x53, 1 },
				   mac2[6] = { 0, 0, 0x5e, 0, 0x53, 2 };
	static struct stream st;
	struct fb_ipfix_newflow nf = { 0 };
	struct fb_ipfix_estimate es = { 0 };
	struct fb_ipfix_flow fl = { 0 };
	struct decoded d;
	struct fb_ipfix *x;
	struct tmpl *t;
	unsigned seq_ok = 1, i, before = 0;
	int o;

	x = fb_ipfix_new(42, FB_IPFIX_MSG_UDP, false);
	if (!ASSERT_TRUE(x, "ipfix: an encoder"))
		return;
	st.len = st.msgs = st.records = 0;
	ASSERT_EQ(fb_ipfix_put_templates(x), 0, "ipfix: templates into the first message");
	key_of("udp 198.51.100.1:40001 203.0.113.7:53", &nf.key);
	nf.start_ms = 1700000000123ULL;
	nf.ifindex = 7;
	nf.fwd = fb_ipfix_fwd_status(XDP_DROP);
	ASSERT_EQ(PUT(fb_ipfix_put_newflow, x, &st, &nf), 0, "ipfix: IPv4 new flow appended");
	key_of("tcp [2001:db8::1]:443 [2001:db8::2]:51000", &nf.key);
	nf.fwd = fb_ipfix_fwd_status(XDP_PASS);
	ASSERT_EQ(PUT(fb_ipfix_put_newflow, x, &st, &nf), 0, "ipfix: IPv6 new flow appended");
	take(x, &st);
	key_of("udp [2001:db8::1]:4000 [2001:db8::2]:5000", &es.key);
	es.start_ms = 1700000000000ULL;
	es.end_ms = 1700000060000ULL;
	es.packets = 1000;
	es.bytes = 142000;
	es.packets_low = 990.5;
	es.bytes_low = 140000;
	es.confidence = 0.9933;
	for (i = 0; i < 3; i++)
		PUT(fb_ipfix_put_estimate, x, &st, &es);
	key_of("udp 198.51.100.1:1 198.51.100.2:2", &es.key);
	ASSERT_EQ(PUT(fb_ipfix_put_estimate, x, &st, &es), 0, "ipfix: IPv4 estimate appended");
	/* Flow records, enough for several 1400-byte messages. */
	key_of("tcp 198.51.100.1:40001 203.0.113.7:443", &fl.key);
	fl.start_ms = 1700000000100ULL;
	fl.end_ms = 1700000009100ULL;
	fl.packets = 12;
	fl.bytes = 5040;
	fl.ingress = 7;
	fl.tcp_flags = 0x1b;
	fl.tos = 0xb8;
	fl.vlan = 100;
	fl.fwd = fb_ipfix_fwd_status(XDP_PASS);
	fl.end_reason = 3;
	memcpy(fl.smac, mac1, 6);
	memcpy(fl.dmac, mac2, 6);
	for (i = 0; i < 40; i++)
		ASSERT_TRUE(PUT(fb_ipfix_put_flow, x, &st, &fl) == 0 || i, "ipfix: flow appended");
	key_of("icmpv6 [2001:db8::1]:0 [2001:db8::2]:0", &fl.key);
	fl.icmp = 0x8000;
	fl.tcp_flags = 0;
	PUT(fb_ipfix_put_flow, x, &st, &fl);
	take(x, &st);
	/* A new session: sequence numbers from 0 again. */
	ASSERT_EQ(fb_ipfix_session(x), 0, "ipfix: a new session");
	fb_ipfix_put_templates(x);
	take(x, &st);
	decode(st.b, st.len, &d);
	ASSERT_TRUE(!d.bad, "ipfix: messages well-formed (version 10, lengths add up)");
	ASSERT_TRUE(d.nmsg >= 5 && d.nmsg == st.msgs,
		    "ipfix: records past 1400 bytes go in further messages");
	for (i = 0; i < d.nmsg; i++)
		ASSERT_TRUE(d.domain[i] == 42, "ipfix: observation domain 42");
	ASSERT_EQ(d.seq[0], 0, "ipfix: first message's sequence number is 0");
	for (i = 0; i + 1 < d.nmsg; i++) {
		seq_ok &= d.seq[i] == before;
		before += d.data[i];
	}
	ASSERT_TRUE(seq_ok, "ipfix: each sequence number = data records sent before the message");
	ASSERT_EQ(before, 47, "ipfix: 47 data records in the first session");
	ASSERT_EQ(before, st.records, "ipfix: take counts the data records of its messages");
	ASSERT_TRUE(d.tsets[0] == 1 && d.ntmpl_sets == 2 && d.tsets[d.nmsg - 1] == 1 &&
			    d.seq[d.nmsg - 1] == 0,
		    "ipfix: templates first in each session only; the new one's sequence is 0");
	ASSERT_TRUE(same_fields(find_t(&d, 256), nf4, 11), "ipfix: template 256 (new flow, IPv4)");
	ASSERT_TRUE(same_fields(find_t(&d, 259), est6, 17),
		    "ipfix: template 259 (estimate, IPv6, RFC 5477 confidence fields)");
	ASSERT_TRUE(same_fields(find_t(&d, 260), fl4, 20), "ipfix: template 260 (flow, IPv4)");
	t = find_t(&d, 261);
	ASSERT_TRUE(t && t->n == 20 && t->f[2].ie == 27 && t->f[9].ie == 139,
		    "ipfix: template 261 (flow, IPv6: addresses, icmpTypeCodeIPv6)");
	for (i = 0; i < d.nt; i++)
		if (getenv("TEST_VERBOSE")) {
			unsigned j;

			printf("template %u:", d.t[i].id);
			for (j = 0; j < d.t[i].n; j++)
				printf(" %u/%u", d.t[i].f[j].ie, d.t[i].f[j].len);
			printf("\n");
		}
	ASSERT_EQ(d.nrec[0], 1, "ipfix: one IPv4 new-flow record");
	ASSERT_EQ(d.nrec[1], 1, "ipfix: one IPv6 new-flow record");
	ASSERT_EQ(d.nrec[3], 3, "ipfix: three IPv6 estimate records");
	ASSERT_EQ(d.nrec[2], 1, "ipfix: one IPv4 estimate record");
	ASSERT_EQ(d.nrec[4], 40, "ipfix: forty IPv4 flow records");
	ASSERT_EQ(d.nrec[5], 1, "ipfix: one IPv6 flow record");
	t = find_t(&d, 256);
	if (t && d.nrec[0]) {
		unsigned char *r = d.rec[0][0];

		ASSERT_EQ(be64(r + field_at(t, 152, 0)), 1700000000123ULL,
			  "ipfix: flowStartMilliseconds");
		ASSERT_EQ(be32(r + field_at(t, 8, 0)), 0xc6336401, "ipfix: sourceIPv4Address");
		ASSERT_EQ(be32(r + field_at(t, 12, 0)), 0xcb007107,
			  "ipfix: destinationIPv4Address");
		ASSERT_EQ(be16(r + field_at(t, 7, 0)), 40001, "ipfix: sourceTransportPort");
		ASSERT_EQ(be16(r + field_at(t, 11, 0)), 53, "ipfix: destinationTransportPort");
		ASSERT_EQ(r[field_at(t, 4, 0)], 17, "ipfix: protocolIdentifier");
		ASSERT_EQ(be32(r + field_at(t, 10, 0)), 7, "ipfix: ingressInterface");
		ASSERT_EQ(be32(r + field_at(t, 14, 0)), 0, "ipfix: egressInterface (not known)");
		ASSERT_EQ(r[field_at(t, 61, 0)], 0, "ipfix: flowDirection ingress");
		ASSERT_EQ(r[field_at(t, 89, 0)], 129, "ipfix: forwardingStatus of a drop: 129");
	}
	t = find_t(&d, 257);
	if (t && d.nrec[1]) {
		static const unsigned char a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

		ASSERT_TRUE(!memcmp(d.rec[1][0] + field_at(t, 27, 0), a6, 16),
			    "ipfix: sourceIPv6Address");
		ASSERT_EQ(d.rec[1][0][field_at(t, 89, 0)], 64,
			  "ipfix: forwardingStatus of a pass: 64");
		ASSERT_EQ(d.rec[1][0][field_at(t, 4, 0)], 6, "ipfix: IPv6 protocolIdentifier 6");
	}
	t = find_t(&d, 259);
	if (t && d.nrec[3]) {
		unsigned char *r = d.rec[3][2];

		ASSERT_EQ(be64(r + field_at(t, 2, 0)), 1000, "ipfix: estimate packetDeltaCount");
		ASSERT_EQ(be64(r + field_at(t, 1, 0)), 142000, "ipfix: estimate octetDeltaCount");
		ASSERT_TRUE(f64(r + field_at(t, 338, 0)) == 0.9933, "ipfix: confidenceLevel");
		ASSERT_TRUE(f64(r + field_at(t, 337, 0)) == 990.5 &&
				    f64(r + field_at(t, 336, 0)) == 1000,
			    "ipfix: packets' lowerCILimit, upperCILimit");
		ASSERT_TRUE(f64(r + field_at(t, 337, 1)) == 140000 &&
				    f64(r + field_at(t, 336, 1)) == 142000,
			    "ipfix: octets' lowerCILimit, upperCILimit");
		ASSERT_EQ(be64(r + field_at(t, 153, 0)), 1700000060000ULL,
			  "ipfix: flowEndMilliseconds");
	}
	t = find_t(&d, 260);
	if (t && d.nrec[4]) {
		unsigned char *r = d.rec[4][7];

		ASSERT_EQ(be64(r + field_at(t, 153, 0)), 1700000009100ULL,
			  "ipfix: flow flowEndMilliseconds");
		ASSERT_EQ(be64(r + field_at(t, 2, 0)), 12, "ipfix: flow packetDeltaCount");
		ASSERT_EQ(be64(r + field_at(t, 1, 0)), 5040, "ipfix: flow octetDeltaCount");
		ASSERT_EQ(r[field_at(t, 5, 0)], 0xb8, "ipfix: ipClassOfService");
		ASSERT_EQ(be16(r + field_at(t, 6, 0)), 0x1b, "ipfix: tcpControlBits");
		ASSERT_EQ(be16(r + field_at(t, 58, 0)), 100, "ipfix: vlanId");
		ASSERT_TRUE(!memcmp(r + field_at(t, 56, 0), mac1, 6) &&
				    !memcmp(r + field_at(t, 80, 0), mac2, 6),
			    "ipfix: source and destination MAC addresses");
		ASSERT_EQ(be32(r + field_at(t, 10, 0)), 7, "ipfix: flow ingressInterface");
		ASSERT_EQ(r[field_at(t, 89, 0)], 64, "ipfix: flow forwardingStatus");
		ASSERT_EQ(r[field_at(t, 136, 0)], 3, "ipfix: flowEndReason 3 (end of flow)");
	}
	t = find_t(&d, 261);
	if (t && d.nrec[5])
		ASSERT_EQ(be16(d.rec[5][0] + field_at(t, 139, 0)), 0x8000,
			  "ipfix: icmpTypeCodeIPv6 (echo request)");
	o = fb_ipfix_fwd_status(XDP_ABORTED);
	ASSERT_EQ(o, 0, "ipfix: forwardingStatus of an abort: unknown");
	fb_ipfix_free(x);

	/* Estimates of a sketch that counts frames: layer2OctetDeltaCount. */
	x = fb_ipfix_new(1, FB_IPFIX_MSG_TCP, true);
	if (!ASSERT_TRUE(x, "ipfix: an encoder for frame octets"))
		return;
	st.len = st.msgs = st.records = 0;
	fb_ipfix_put_templates(x);
	take(x, &st);
	decode(st.b, st.len, &d);
	t = find_t(&d, 258);
	ASSERT_TRUE(t && field_at(t, 352, 0) >= 0 && field_at(t, 1, 0) < 0,
		    "ipfix: frame octets as layer2OctetDeltaCount (352), not octetDeltaCount");
	fb_ipfix_free(x);
}

int main(void)
{
	test_ipfix();
	test_bgp_rtbh();
	test_bgp_flowspec();
	test_bgp_refused_route();
	test_bgp_lost();
	test_bgp_bad_input();
	test_bgp_state();
	test_bgp_save();
	test_bgp_hostile();
	test_bgp_quiet();
	test_bgp_exabgp();
	test_bgp_paths();
	test_bgp_fit();
	test_export_flips();
	return test_summary();
}
