// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the fleet verbs' translations, host only:
 * - IPFIX encoding (user/lib/fleet/ipfix.c through libfixbuf): messages written to a
 *   file are decoded here from RFC 7011 alone: header, sequence numbers,
 *   the exact templates, every field of every record.
 * - ExaBGP JSON to rules (user/lib/fleet/bgp.c): RTBH and FlowSpec translation,
 *   reference counts per path across peers and add-path ids, implicit
 *   withdrawals, session policies and End-of-RIB, what is refused, the
 *   state file, and malformed input (every truncation and random byte
 *   changes of real lines: never a crash, never a partial change).
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

struct decoded {
	unsigned nmsg, ntmpl_sets, nrec[4]; /* records per template 256..259 */
	unsigned seq[16], domain[16], data[16];
	struct tmpl t[8];
	unsigned nt;
	unsigned char rec[4][8][160]; /* first records of each template */
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

		if (be16(b + off) != 10 || mlen < 16 || off + mlen > len || m >= 16) {
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
			} else if (sid >= 256 && sid <= 259) {
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

static void test_ipfix(void)
{
	static const unsigned nf4[][2] = { { 152, 8 }, { 153, 8 }, { 8, 4 }, { 12, 4 },
					   { 7, 2 },   { 11, 2 },  { 4, 1 }, { 10, 4 },
					   { 89, 1 },  { 2, 8 },   { 1, 8 } };
	static const unsigned est6[][2] = { { 152, 8 }, { 153, 8 }, { 27, 16 }, { 28, 16 },
					    { 7, 2 },	{ 11, 2 },  { 4, 1 },	{ 2, 8 },
					    { 1, 8 },	{ 338, 8 }, { 337, 8 }, { 336, 8 },
					    { 337, 8 }, { 336, 8 } };
	struct fb_ipfix_newflow nf = { 0 };
	struct fb_ipfix_estimate es = { 0 };
	struct decoded d;
	unsigned char *buf;
	struct fb_ipfix *x;
	struct tmpl *t;
	FILE *fp = tmpfile();
	long len;
	int i, o;

	x = fb_ipfix_open_file(fp, 42);
	if (!ASSERT_TRUE(x, "ipfix: exporter to a file"))
		return;
	key_of("udp 198.51.100.1:40001 203.0.113.7:53", &nf.key);
	nf.start_ms = 1700000000123ULL;
	nf.ifindex = 7;
	nf.bytes = 142;
	nf.fwd = fb_ipfix_fwd_status(XDP_DROP);
	ASSERT_EQ(fb_ipfix_add_newflow(x, &nf), 0, "ipfix: IPv4 new flow appended");
	key_of("tcp [2001:db8::1]:443 [2001:db8::2]:51000", &nf.key);
	nf.fwd = fb_ipfix_fwd_status(XDP_PASS);
	ASSERT_EQ(fb_ipfix_add_newflow(x, &nf), 0, "ipfix: IPv6 new flow appended");
	ASSERT_EQ(fb_ipfix_flush(x), 0, "ipfix: first message sent");
	key_of("udp [2001:db8::1]:4000 [2001:db8::2]:5000", &es.key);
	es.start_ms = 1700000000000ULL;
	es.end_ms = 1700000060000ULL;
	es.packets = 1000;
	es.bytes = 142000;
	es.packets_low = 990.5;
	es.bytes_low = 140000;
	es.confidence = 0.9933;
	for (i = 0; i < 3; i++)
		fb_ipfix_add_estimate(x, &es);
	key_of("udp 198.51.100.1:1 198.51.100.2:2", &es.key);
	ASSERT_EQ(fb_ipfix_add_estimate(x, &es), 0, "ipfix: IPv4 estimate appended");
	ASSERT_EQ(fb_ipfix_flush(x), 0, "ipfix: second message sent");
	fflush(fp);
	len = ftell(fp);
	buf = malloc(len);
	rewind(fp);
	if (!buf || fread(buf, 1, len, fp) != (size_t)len) {
		ASSERT_TRUE(false, "ipfix: read the messages back");
		goto out;
	}
	decode(buf, len, &d);
	ASSERT_TRUE(!d.bad, "ipfix: messages well-formed (version 10, lengths add up)");
	/* fixbuf sends the templates in a message of their own, then one
	 * message per flush. */
	ASSERT_EQ(d.nmsg, 3, "ipfix: three messages: templates, then one per flush");
	ASSERT_EQ(d.ntmpl_sets, 1, "ipfix: templates sent once");
	ASSERT_EQ(d.seq[0], 0, "ipfix: first message's sequence number is 0");
	ASSERT_EQ(d.data[0] + d.data[1] + d.data[2], 6, "ipfix: six data records in all");
	ASSERT_TRUE(d.seq[1] == d.data[0] && d.seq[2] == d.data[0] + d.data[1],
		    "ipfix: each sequence number = data records sent before the message");
	ASSERT_EQ(d.domain[0] == 42 && d.domain[1] == 42, 1, "ipfix: observation domain 42");
	ASSERT_TRUE(same_fields(find_t(&d, 256), nf4, 11), "ipfix: template 256 (new flow, IPv4)");
	ASSERT_TRUE(same_fields(find_t(&d, 259), est6, 14),
		    "ipfix: template 259 (estimate, IPv6, RFC 5477 confidence fields)");
	for (t = NULL, i = 0; i < (int)d.nt; i++)
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
		ASSERT_EQ(r[field_at(t, 89, 0)], 129, "ipfix: forwardingStatus of a drop: 129");
		ASSERT_EQ(be64(r + field_at(t, 2, 0)), 1, "ipfix: packetDeltaCount 1");
		ASSERT_EQ(be64(r + field_at(t, 1, 0)), 142, "ipfix: octetDeltaCount 142");
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
	o = fb_ipfix_fwd_status(XDP_ABORTED);
	ASSERT_EQ(o, 0, "ipfix: forwardingStatus of an abort: unknown");
out:
	free(buf);
	fb_ipfix_close(x);
	fclose(fp);
}

int main(void)
{
	test_ipfix();
	test_bgp_rtbh();
	test_bgp_flowspec();
	test_bgp_bad_input();
	test_bgp_state();
	test_bgp_hostile();
	return test_summary();
}
