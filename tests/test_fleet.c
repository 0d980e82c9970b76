// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the fleet verbs' translations, host only:
 * - IPFIX encoding (user/ipfix.c through libfixbuf): messages written to a
 *   file are decoded here from RFC 7011 alone: header, sequence numbers,
 *   the exact templates, every field of every record.
 * - ExaBGP JSON to rules (user/bgp.c): RTBH and FlowSpec translation,
 *   reference counts per path across peers and add-path ids, implicit
 *   withdrawals, session policies and End-of-RIB, what is refused, the
 *   state file, and malformed input (every truncation and random byte
 *   changes of real lines: never a crash, never a partial change).
 */
#include <arpa/inet.h>
#include <linux/bpf.h>
#include "bgp.h"
#include "flow.h"
#include "ipfix.h"
#include "testlib.h"

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

static void key_of(const char *text, struct fb_key *k)
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

/* --------------------------------------------------------------- BGP */

static char last_note[1024];
static int notes;

static void on_note(void *ctx, const char *msg)
{
	(void)ctx;
	notes++;
	snprintf(last_note, sizeof(last_note), "%s", msg);
	if (getenv("TEST_VERBOSE"))
		printf("  note: %s\n", msg);
}

static void bgp_init(struct fb_bgp *b, bool flush, bool src)
{
	struct fb_bgp_opts o = { .community = FB_BGP_BLACKHOLE,
				 .flush_on_down = flush,
				 .rtbh_src = src,
				 .min_v4 = 24,
				 .min_v6 = 48 };

	fb_bgp_init(b, &o);
	b->note = on_note;
}

/* Feed one line and apply its outcome as the filter would (all accepted). */
static int feed(struct fb_bgp *b, const char *line)
{
	static size_t n;
	int r = fb_bgp_line(b, line, ++n);

	return r;
}

static bool has(const struct fb_key *keys, size_t n, const char *flow)
{
	struct fb_key k;
	size_t i;

	key_of(flow, &k);
	for (i = 0; i < n; i++)
		if (!memcmp(&keys[i], &k, sizeof(k)))
			return true;
	return false;
}

static unsigned refs(const struct fb_bgp *b, const char *flow)
{
	struct fb_key k;

	key_of(flow, &k);
	return fb_bgp_refs(b, &k);
}

#define NB(peer) "\"neighbor\": {\"address\": {\"local\": \"198.51.100.2\", \"peer\": \"" peer "\"}"
#define RTBH_ANN(peer, pfx, extra)                                                                 \
	"{\"type\": \"update\", " NB(                                                              \
		peer) ", \"message\": {\"update\": {\"attribute\": "                               \
		      "{\"community\": [[65535, 666]]}, \"announce\": "                            \
		      "{\"ipv4 unicast\": {\"198.51.100.1\": [{\"nlri\": \"" pfx "\"" extra        \
		      "}]}}}}}}"
#define RTBH_WD(peer, pfx, extra)                                                                  \
	"{\"type\": \"update\", " NB(peer) ", \"message\": {\"update\": {\"withdraw\": "           \
					   "{\"ipv4 unicast\": [{\"nlri\": \"" pfx "\"" extra      \
					   "}]}}}}}"
#define STATE(peer, st) "{\"type\": \"state\", " NB(peer) ", \"state\": \"" st "\"}}"
#define EOR(peer)                                                                                  \
	"{\"type\": \"update\", " NB(                                                              \
		peer) ", \"message\": {\"eor\": {\"afi\": \"ipv4\", \"safi\": \"unicast\"}}}}"
/* A FlowSpec announcement: components (JSON members) and the extended
 * community value (9225060886715039744 = 0x8006000000000000: rate 0). */
#define FLOW_ANN(comps, ext)                                                                       \
	"{\"type\": \"update\", " NB(                                                              \
		"198.51.100.1") ", \"message\": {\"update\": {\"attribute\": "                     \
				"{\"extended-community\": [" ext "]}, "                            \
				"\"announce\": {\"ipv4 flow\": {\"no-nexthop\": [{" comps          \
				", \"string\": \"flow\"}]}}}}}}"
#define DISCARD "{\"value\": 9225060886715039744, \"string\": \"rate-limit:0\"}"

static void test_bgp_rtbh(void)
{
	struct fb_bgp b;

	bgp_init(&b, true, false);
	ASSERT_EQ(feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.7/32", "")), 0,
		  "bgp: announce read");
	ASSERT_TRUE(b.nadd == 1 && has(b.add, b.nadd, "dst 203.0.113.7"),
		    "bgp: blackhole route -> add dst 203.0.113.7");
	fb_bgp_done(&b);
	feed(&b, RTBH_ANN("198.51.100.3", "203.0.113.7/32", ""));
	ASSERT_EQ(b.nadd + b.ndel, 0, "bgp: a second peer's path adds nothing to the filter");
	ASSERT_TRUE(b.changed, "bgp: ... but changes the paths (state saved)");
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 2, "bgp: two paths hold the rule");
	feed(&b, RTBH_ANN("198.51.100.3", "203.0.113.7/32", ""));
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 2, "bgp: the same path announced again counts once");
	feed(&b, RTBH_ANN("198.51.100.3", "203.0.113.7/32", ", \"path-information\": \"0.0.0.2\""));
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 3, "bgp: another add-path id is another path");
	feed(&b, RTBH_WD("198.51.100.1", "203.0.113.7/32", ""));
	ASSERT_EQ(b.ndel, 0, "bgp: withdrawal of one path of three: rule stays");
	feed(&b, RTBH_WD("198.51.100.1", "203.0.113.7/32", ""));
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 2, "bgp: withdrawing an ended path changes nothing");
	/* A route announced again without the community replaces the path. */
	feed(&b, "{\"type\": \"update\", " NB(
			 "198.51.100.3") ", \"message\": {\"update\": "
					 "{\"attribute\": {\"community\": [[65000, 1]]}, "
					 "\"announce\": {\"ipv4 unicast\": {\"x\": "
					 "[{\"nlri\": \"203.0.113.7/32\"}]}}}}}}");
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 1, "bgp: re-announced without the community: ended");
	feed(&b, STATE("198.51.100.3", "down"));
	ASSERT_TRUE(b.ndel == 1 && has(b.del, b.ndel, "dst 203.0.113.7"),
		    "bgp: flush: the last path's session down deletes the rule");
	fb_bgp_done(&b);
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 0, "bgp: rule forgotten");
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.0.0/16", ""));
	ASSERT_TRUE(b.nadd == 0 && strstr(last_note, "shorter than /24"),
		    "bgp: a /16 blackhole is refused (--min-length 24)");
	feed(&b, "{\"type\": \"update\", \"neighbor\": {\"address\": {\"peer\": \"198.51.100.1\"}, "
		 "\"direction\": \"send\", \"message\": {\"update\": {\"attribute\": "
		 "{\"community\": [[65535, 666]]}, \"announce\": {\"ipv4 unicast\": {\"x\": "
		 "[{\"nlri\": \"203.0.113.99/32\"}]}}}}}}");
	ASSERT_TRUE(b.nadd == 0, "bgp: an update ExaBGP sends (direction send) is not applied");
	feed(&b, RTBH_ANN("198.51.100.1", "0.0.0.0/0", ""));
	ASSERT_TRUE(b.nadd == 0, "bgp: a default-route blackhole is refused");
	feed(&b, "{\"type\": \"update\", " NB(
			 "198.51.100.1") ", \"message\": {\"update\": "
					 "{\"attribute\": {\"community\": [[65535, 666]]}, "
					 "\"announce\": {\"ipv6 "
					 "unicast\": {\"2001:db8::9\": [{\"nlri\": "
					 "\"2001:db8::/32\"}, {\"nlri\": "
					 "\"2001:db8:7::1/128\"}]}}}}}}");
	ASSERT_TRUE(b.nadd == 1 && has(b.add, 1, "dst 2001:db8:7::1"),
		    "bgp: IPv6 blackholes: /128 accepted, /32 refused (--min-length 48)");
	fb_bgp_done(&b);
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.0/24", ""));
	ASSERT_TRUE(b.nadd == 1 && has(b.add, 1, "dst 203.0.113.0/24"), "bgp: a /24 is accepted");
	fb_bgp_done(&b);
	/* Withdrawal and announcement of the same rule in one line. */
	feed(&b, "{\"type\": \"update\", " NB(
			 "198.51.100.1") ", \"message\": {\"update\": "
					 "{\"attribute\": {\"community\": [[65535, 666]]}, "
					 "\"withdraw\": {\"ipv4 unicast\": [{\"nlri\": "
					 "\"203.0.113.0/24\"}]}, \"announce\": {\"ipv4 "
					 "unicast\": {\"x\": [{\"nlri\": "
					 "\"203.0.113.0/24\"}]}}}}}}");
	ASSERT_EQ(b.nadd + b.ndel, 0, "bgp: withdrawn and announced in one update: no change");
	ASSERT_EQ(refs(&b, "dst 203.0.113.0/24"), 1, "bgp: ... one path");
	fb_bgp_free(&b);

	/* keep: session loss keeps; up marks stale; End-of-RIB ends the rest. */
	bgp_init(&b, false, true);
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.7/32", ""));
	ASSERT_TRUE(has(b.add, b.nadd, "src 203.0.113.7"), "bgp: --rtbh src: a source rule");
	fb_bgp_done(&b);
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.8/32", ""));
	fb_bgp_done(&b);
	feed(&b, STATE("198.51.100.1", "down"));
	ASSERT_EQ(b.ndel, 0, "bgp: keep: session down deletes nothing");
	feed(&b, STATE("198.51.100.1", "up"));
	feed(&b, RTBH_ANN("198.51.100.1", "203.0.113.8/32", ""));
	ASSERT_EQ(b.nadd + b.ndel, 0, "bgp: keep: a re-announced route is not added again");
	feed(&b, EOR("198.51.100.1"));
	ASSERT_TRUE(b.ndel == 1 && has(b.del, 1, "src 203.0.113.7"),
		    "bgp: keep: End-of-RIB ends the route not announced again");
	fb_bgp_done(&b);
	ASSERT_EQ(refs(&b, "src 203.0.113.8"), 1, "bgp: keep: the re-announced one stays");
	fb_bgp_free(&b);
}

static void test_bgp_flowspec(void)
{
	static const struct {
		const char *comps, *ext, *want; /* want NULL: refused */
		const char *label;
	} cases[] = {
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
		  "[\"198.51.100.2/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "
		  "[\"=5000\"], \"source-port\": [\"=4000\"]",
		  DISCARD, "udp 198.51.100.2:4000 203.0.113.9:5000", "5-tuple, discard" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
		  "[\"198.51.100.2/32\"], \"protocol\": [\"=1\"]",
		  DISCARD, "icmp 198.51.100.2 203.0.113.9", "host pair and ICMP (no ports)" },
		{ "\"destination-ipv4\": [\"203.0.113.0/24\"]", DISCARD, "dst 203.0.113.0/24",
		  "a lone destination prefix" },
		{ "\"source-ipv4\": [\"198.51.100.0/25\"]", DISCARD, "src 198.51.100.0/25",
		  "a lone source prefix" },
		{ "\"destination-ipv4\": [\"203.0.113.0/24\"], \"protocol\": [\"=tcp\"]", DISCARD,
		  NULL, "prefix and protocol: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
		  "[\"198.51.100.2/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "
		  "[\">=5000&<=5010\"], \"source-port\": [\"=4000\"]",
		  DISCARD, NULL, "a port range: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
		  "[\"198.51.100.2/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "
		  "[\"=53\", \"=5000\"], \"source-port\": [\"=4000\"]",
		  DISCARD, NULL, "two ports: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
		  "[\"198.51.100.2/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "
		  "[\"=5000\"]",
		  DISCARD, NULL, "UDP with one port only: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"packet-length\": [\"=1500\"]",
		  DISCARD, NULL, "packet-length: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"], \"fragment\": [\"is-fragment\"]",
		  DISCARD, NULL, "fragment: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"]",
		  "{\"value\": 9225060887789846528, \"string\": \"rate-limit:1000\"}", NULL,
		  "rate-limit 1000: refused" },
		/* 0x800600003f000000: rate 0.5, which ExaBGP prints as rate-limit:0. */
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"]",
		  "{\"value\": 9225060887773003776, \"string\": \"rate-limit:0\"}", NULL,
		  "rate 0.5 (printed rate-limit:0): refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"]",
		  "{\"value\": 9225623836668461056, \"string\": \"redirect:65000:1\"}", NULL,
		  "redirect: refused" },
		{ "\"destination-ipv4\": [\"203.0.113.9/32\"]", "", NULL, "no action: refused" },
		{ "\"destination-ipv4\": [\"203.0.0.0/16\"]", DISCARD, NULL,
		  "a /16: refused (--min-length)" },
	};
	char line[2048];
	struct fb_bgp b;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char label[256];

		bgp_init(&b, true, false);
		snprintf(line, sizeof(line),
			 "{\"type\": \"update\", " NB(
				 "198.51.100.1") ", \"message\": {\"update\": "
						 "{\"attribute\": "
						 "{\"extended-community\": [%s]}, "
						 "\"announce\": {\"ipv4 flow\": "
						 "{\"no-nexthop\": [{%s, \"string\": "
						 "\"flow %zu\"}]}}}}}}",
			 cases[i].ext, cases[i].comps, i);
		notes = 0;
		snprintf(label, sizeof(label), "bgp flowspec: %s", cases[i].label);
		if (cases[i].want)
			ASSERT_TRUE(!feed(&b, line) && b.nadd == 1 &&
					    has(b.add, 1, cases[i].want) && !notes,
				    label);
		else
			ASSERT_TRUE(!feed(&b, line) && b.nadd == 0 && notes == 1, label);
		fb_bgp_free(&b);
	}
	/* IPv6: prefixes carry an offset ("/0"), the protocol is next-header. */
	bgp_init(&b, true, false);
	feed(&b, "{\"type\": \"update\", " NB(
			 "198.51.100.1") ", \"message\": {\"update\": "
					 "{\"attribute\": {\"extended-community\": "
					 "[" DISCARD "]}, \"announce\": {\"ipv6 flow\": "
					 "{\"no-nexthop\": [{\"destination-ipv6\": "
					 "[\"2001:db8::2/128/0\"], \"source-ipv6\": "
					 "[\"2001:db8::1/128/0\"], \"next-header\": "
					 "[\"=tcp\"], \"destination-port\": [\"=443\"], "
					 "\"source-port\": [\"=51000\"], \"string\": "
					 "\"f6\"}]}}}}}}");
	ASSERT_TRUE(b.nadd == 1 && has(b.add, 1, "tcp [2001:db8::1]:51000 [2001:db8::2]:443"),
		    "bgp flowspec: IPv6 5-tuple");
	fb_bgp_done(&b);
	/* The same flow announced with another action ends its path. */
	feed(&b, "{\"type\": \"update\", " NB(
			 "198.51.100.1") ", \"message\": {\"update\": "
					 "{\"attribute\": {}, \"announce\": {\"ipv6 flow\": "
					 "{\"no-nexthop\": [{\"destination-ipv6\": "
					 "[\"2001:db8::2/128/0\"], \"string\": "
					 "\"f6\"}]}}}}}}");
	ASSERT_TRUE(b.ndel == 1, "bgp flowspec: re-announced without discard: rule deleted");
	fb_bgp_done(&b);
	fb_bgp_free(&b);
	/* A line mixing a supported and an unsupported NLRI applies the first. */
	bgp_init(&b, true, false);
	feed(&b, FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"]", DISCARD));
	ASSERT_EQ(b.nadd, 1, "bgp flowspec: FLOW_ANN macro line");
	fb_bgp_free(&b);
}

static void test_bgp_bad_input(void)
{
	static const char *const good[] = {
		RTBH_ANN("198.51.100.1", "203.0.113.7/32", ""),
		RTBH_WD("198.51.100.1", "203.0.113.7/32", ""),
		FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
			 "[\"198.51.100.2/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "
			 "[\"=5000\"], \"source-port\": [\"=4000\"]",
			 DISCARD),
		STATE("198.51.100.1", "down"),
	};
	static const char *const bad[] = {
		"not json",
		"[1, 2]",
		"{}",
		"{\"type\": \"update\"}",
		"{\"type\": \"update\", " NB("198.51.100.1") ", \"message\": {\"update\": "
							     "{\"announce\": []}}}}",
		"{\"type\": \"update\", " NB(
			"198.51.100.1") ", \"message\": {\"update\": "
					"{\"announce\": {\"ipv4 unicast\": {\"x\": "
					"[{\"nlri\": \"203.0.113.1/32\"}, 5]}}}}}}",
		"{\"type\": \"state\", " NB("198.51.100.1") "}}",
		"{\"type\": \"update\", " NB("198.51.100.1") ", \"message\": {\"eor\": {}}}}",
	};
	struct fb_bgp b;
	char line[4096];
	size_t i, j, n;
	unsigned seed = 1;
	bool ok = true, whole = true;

	bgp_init(&b, true, false);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char label[128];

		notes = 0;
		snprintf(label, sizeof(label), "bgp: malformed line %zu refused with a note",
			 i + 1);
		ASSERT_TRUE(feed(&b, bad[i]) == -1 && b.nadd + b.ndel == 0 && notes == 1 &&
				    strstr(last_note, "line skipped"),
			    label);
	}
	/* The second bad line holds a valid NLRI before a bad one: nothing of
	 * it may have been applied. */
	ASSERT_EQ(refs(&b, "dst 203.0.113.1"), 0, "bgp: a half-valid line applies nothing");
	/* Every truncation of real lines: no crash, nothing changed unless the
	 * line parses whole. */
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		n = strlen(good[i]);
		for (j = 0; j < n; j++) {
			snprintf(line, sizeof(line), "%.*s", (int)j, good[i]);
			if (fb_bgp_line(&b, line, 1) != -1 && j > 0)
				whole = false;
			if (b.nadd || b.ndel)
				ok = false;
		}
	}
	ASSERT_TRUE(whole, "bgp: every truncation of a real line is refused");
	ASSERT_TRUE(ok, "bgp: ... and none changes the filter");
	ASSERT_EQ(b.npaths, 0, "bgp: ... nor the paths");
	/* Random byte changes: never a crash; whatever parses is consistent. */
	for (i = 0; i < 20000; i++) {
		const char *g = good[i % 4];
		int k;

		n = strlen(g);
		memcpy(line, g, n + 1);
		for (k = 0; k < 3; k++) {
			seed = seed * 1103515245 + 12345;
			line[(seed >> 8) % n] = "{}[]\":,0a \\/5-"[(seed >> 20) % 14];
		}
		fb_bgp_line(&b, line, i);
		fb_bgp_done(&b);
	}
	ASSERT_TRUE(true, "bgp: 20,000 randomly damaged lines: no crash");
	fb_bgp_free(&b);
}

static void test_bgp_state(void)
{
	struct fb_bgp a, b;
	struct fb_key *keys;
	FILE *fp = tmpfile();
	size_t n;

	bgp_init(&a, true, false);
	feed(&a, RTBH_ANN("198.51.100.1", "203.0.113.7/32", ""));
	feed(&a, RTBH_ANN("198.51.100.3", "203.0.113.7/32", ""));
	feed(&a, FLOW_ANN("\"destination-ipv4\": [\"203.0.113.9/32\"], \"source-ipv4\": "
			  "[\"198.51.100.2/32\"], \"protocol\": [\"=udp\"], \"destination-port\": "
			  "[\"=5000\"], \"source-port\": [\"=4000\"]",
			  DISCARD));
	fb_bgp_done(&a);
	ASSERT_EQ(fb_bgp_save(&a, fp), 0, "bgp state: saved");
	rewind(fp);
	bgp_init(&b, true, false);
	ASSERT_EQ(fb_bgp_load(&b, fp, "state"), 0, "bgp state: loaded");
	ASSERT_EQ(b.npaths, 3, "bgp state: three paths");
	ASSERT_EQ(refs(&b, "dst 203.0.113.7"), 2, "bgp state: two of them hold dst 203.0.113.7");
	n = fb_bgp_rules(&b, &keys);
	ASSERT_TRUE(n == 2 && has(keys, n, "udp 198.51.100.2:4000 203.0.113.9:5000"),
		    "bgp state: two rules, in the filter");
	free(keys);
	feed(&b, RTBH_WD("198.51.100.1", "203.0.113.7/32", ""));
	ASSERT_EQ(b.ndel, 0, "bgp state: after a restart, one peer's withdrawal keeps the rule");
	feed(&b, RTBH_WD("198.51.100.3", "203.0.113.7/32", ""));
	ASSERT_TRUE(b.ndel == 1, "bgp state: the last withdrawal deletes it, once");
	fb_bgp_done(&b);
	fb_bgp_remove_all(&b);
	ASSERT_TRUE(b.ndel == 1 && has(b.del, 1, "udp 198.51.100.2:4000 203.0.113.9:5000"),
		    "bgp state: --flush deletes exactly what is held");
	fb_bgp_free(&b);
	fb_bgp_free(&a);
	fclose(fp);
	fp = tmpfile();
	fputs("198.51.100.1\tipv4 unicast\t203.0.113.7/32\tdst 203.0.113.7\n"
	      "198.51.100.1\tipv4 unicast\tbroken\n",
	      fp);
	rewind(fp);
	bgp_init(&b, true, false);
	ASSERT_TRUE(fb_bgp_load(&b, fp, "state") == -1 && b.npaths == 0,
		    "bgp state: a bad line refuses the whole file");
	fb_bgp_free(&b);
	fclose(fp);
}

int main(void)
{
	test_ipfix();
	test_bgp_rtbh();
	test_bgp_flowspec();
	test_bgp_bad_input();
	test_bgp_state();
	return test_summary();
}
