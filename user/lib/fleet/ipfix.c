// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IPFIX encoding through libfixbuf (see ipfix.h for the templates). fixbuf
 * transcodes an "internal" record, a C struct described by an internal
 * template, into the "external" template on the wire; one internal template
 * per record kind holds both address families, and the external templates
 * pick the family's elements by spec flags. Records are appended to
 * fixbuf's message in manual mode (a full message is reported, never sent
 * behind our back) and the message is copied into our buffer when taken:
 * sending it, and what to do when that fails, is ipfix_out.c's.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <fixbuf/public.h>
#include "fleet/ipfix.h"
#include "report.h"

#define F_V4 1u
#define F_V6 2u
#define F_INT 4u /* internal template only: padding */
#define F_L3 8u	 /* estimates of IP octets */
#define F_L2 16u /* estimates of Ethernet frame octets */

/* Internal records: packed, in spec order (fixbuf lays internal records out
 * in template order, without alignment). Integers in host order, IPv4
 * addresses as host-order unsigned32, IPv6 and MAC addresses as network-
 * order bytes. */
/* The start of every record: IE_TUPLE below. */
struct tuple {
	uint64_t start_ms, end_ms;
	uint32_t sip4, dip4;
	uint8_t sip6[16], dip6[16];
	uint16_t sport, dport;
	uint8_t proto;
} __attribute__((packed));

struct nf_rec {
	struct tuple t;
	uint8_t pad1[3];
	uint32_t ingress, egress;
	uint8_t direction, fwd;
	uint8_t pad2[2];
} __attribute__((packed));

#define IE_TUPLE                                                                                   \
	{ "flowStartMilliseconds", 8, 0 }, { "flowEndMilliseconds", 8, 0 },                        \
		{ "sourceIPv4Address", 4, F_V4 }, { "destinationIPv4Address", 4, F_V4 },           \
		{ "sourceIPv6Address", 16, F_V6 }, { "destinationIPv6Address", 16, F_V6 },         \
		{ "sourceTransportPort", 2, 0 }, { "destinationTransportPort", 2, 0 },             \
	{                                                                                          \
		"protocolIdentifier", 1, 0                                                         \
	}

static fbInfoElementSpec_t nf_spec[] = {
	IE_TUPLE,
	{ "paddingOctets", 3, F_INT },
	{ "ingressInterface", 4, 0 },
	{ "egressInterface", 4, 0 },
	{ "flowDirection", 1, 0 },
	/* RFC 7270 made it unsigned8 (it was unsigned32); one octet on the
	 * wire is what collectors decode either way (reduced size). */
	{ "forwardingStatus", 1, 0 },
	{ "paddingOctets", 2, F_INT },
	FB_IESPEC_NULL,
};

struct est_rec {
	struct tuple t;
	uint8_t pad1[3];
	uint32_t ingress, egress;
	uint8_t direction;
	uint8_t pad2[3];
	uint64_t packets, octets, l2octets;
	double confidence, plow, pup, blow, bup;
} __attribute__((packed));

static fbInfoElementSpec_t est_spec[] = {
	IE_TUPLE,
	{ "paddingOctets", 3, F_INT },
	{ "ingressInterface", 4, 0 },
	{ "egressInterface", 4, 0 },
	{ "flowDirection", 1, 0 },
	{ "paddingOctets", 3, F_INT },
	{ "packetDeltaCount", 8, 0 },
	{ "octetDeltaCount", 8, F_L3 },
	{ "layer2OctetDeltaCount", 8, F_L2 },
	/* RFC 5477 accuracy: the truth lies in [lower, upper] with this
	 * probability; first pair for packetDeltaCount, second for octets. */
	{ "confidenceLevel", 8, 0 },
	{ "lowerCILimit", 8, 0 },
	{ "upperCILimit", 8, 0 },
	{ "lowerCILimit", 8, 0 },
	{ "upperCILimit", 8, 0 },
	FB_IESPEC_NULL,
};

struct fl_rec {
	struct tuple t;
	uint8_t tos;
	uint16_t tcp_flags, icmp4, icmp6, vlan;
	uint8_t smac[6], dmac[6];
	uint32_t ingress, egress;
	uint8_t direction, fwd, end_reason;
	uint8_t pad1;
	uint64_t packets, octets;
} __attribute__((packed));

static fbInfoElementSpec_t fl_spec[] = {
	IE_TUPLE,
	{ "ipClassOfService", 1, 0 },
	{ "tcpControlBits", 2, 0 },
	{ "icmpTypeCodeIPv4", 2, F_V4 },
	{ "icmpTypeCodeIPv6", 2, F_V6 },
	{ "vlanId", 2, 0 },
	{ "sourceMacAddress", 6, 0 },
	{ "destinationMacAddress", 6, 0 },
	{ "ingressInterface", 4, 0 },
	{ "egressInterface", 4, 0 },
	{ "flowDirection", 1, 0 },
	{ "forwardingStatus", 1, 0 },
	{ "flowEndReason", 1, 0 },
	{ "paddingOctets", 1, F_INT },
	{ "packetDeltaCount", 8, 0 },
	{ "octetDeltaCount", 8, 0 },
	FB_IESPEC_NULL,
};

struct mit_rec {
	struct tuple t;
	uint8_t event, fwd;
} __attribute__((packed));

static fbInfoElementSpec_t mit_spec[] = {
	IE_TUPLE,
	{ "firewallEvent", 1, 0 },
	{ "forwardingStatus", 1, 0 },
	FB_IESPEC_NULL,
};

_Static_assert(sizeof(struct mit_rec) == 63, "mit_rec matches mit_spec");
_Static_assert(sizeof(struct nf_rec) == 76, "nf_rec matches nf_spec");
_Static_assert(sizeof(struct est_rec) == 140, "est_rec matches est_spec");
_Static_assert(sizeof(struct fl_rec) == 110, "fl_rec matches fl_spec");

#define TID_INT_NF 0xff01
#define TID_INT_EST 0xff02
#define TID_INT_FL 0xff03
#define TID_INT_MIT 0xff04

struct fb_ipfix {
	fbInfoModel_t *model;
	fbSession_t *session;
	fBuf_t *buf;
	int cur_ext; /* external template the buffer is set to, 0: none */
	__u32 domain;
	bool l2_est;
	unsigned records; /* data records appended since the last take */
	bool pending;	  /* anything appended since the last take */
	bool tpl_last;	  /* templates were the last appended (fixbuf is in a template set) */
	size_t msg_max, msg_cap; /* this session's largest message; x->msg's size */
	__u8 *msg;		 /* fixbuf's exporter writes each message here */
	char err[256];
};

static int fail(struct fb_ipfix *x, const char *what, GError *e)
{
	snprintf(x->err, sizeof(x->err), "%s: %s", what, e ? e->message : "failed");
	if (e)
		g_clear_error(&e);
	return -1;
}

static fbTemplate_t *make_tmpl(struct fb_ipfix *x, fbInfoElementSpec_t *spec, uint32_t flags)
{
	fbTemplate_t *t = fbTemplateAlloc(x->model);
	GError *e = NULL;

	if (!fbTemplateAppendSpecArray(t, spec, flags, &e)) {
		fail(x, "building a template", e);
		fbTemplateFreeUnused(t);
		return NULL;
	}
	return t;
}

static int add_tmpl(struct fb_ipfix *x, bool internal, uint16_t tid, fbInfoElementSpec_t *spec,
		    uint32_t flags)
{
	fbTemplate_t *t = make_tmpl(x, spec, flags);
	GError *e = NULL;

	if (!t)
		return -1;
	if (!fbSessionAddTemplate(x->session, internal, tid, t, &e)) {
		fbTemplateFreeUnused(t);
		return fail(x, "adding a template", e);
	}
	return 0;
}

static void teardown(struct fb_ipfix *x)
{
	if (x->buf)
		fBufFree(x->buf); /* frees the session and exporter too */
	else if (x->session)
		fbSessionFree(x->session);
	x->buf = NULL;
	x->session = NULL;
}

/* A fresh session, exporter and buffer: at creation, and for every new
 * transport session (a new session starts its sequence numbers at 0 and
 * must begin with the templates). */
static int build(struct fb_ipfix *x)
{
	uint32_t l = x->l2_est ? F_L2 : F_L3;
	fbExporter_t *exp;

	teardown(x);
	x->cur_ext = 0;
	x->records = 0;
	x->pending = false;
	x->tpl_last = false;
	exp = fbExporterAllocBuffer(x->msg, (uint16_t)x->msg_max);
	x->session = fbSessionAlloc(x->model);
	if (!exp || !x->session) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -1;
	}
	/* Templates belong to an observation domain. */
	fbSessionSetDomain(x->session, x->domain);
	/* Every template before the buffer: one added to a session bound to
	 * a buffer is exported at once, and here put_templates says when. */
	if (add_tmpl(x, true, TID_INT_NF, nf_spec, UINT32_MAX) ||
	    add_tmpl(x, true, TID_INT_EST, est_spec, UINT32_MAX) ||
	    add_tmpl(x, true, TID_INT_FL, fl_spec, UINT32_MAX) ||
	    add_tmpl(x, false, FB_IPFIX_TID_NEW4, nf_spec, F_V4) ||
	    add_tmpl(x, false, FB_IPFIX_TID_NEW6, nf_spec, F_V6) ||
	    add_tmpl(x, false, FB_IPFIX_TID_EST4, est_spec, F_V4 | l) ||
	    add_tmpl(x, false, FB_IPFIX_TID_EST6, est_spec, F_V6 | l) ||
	    add_tmpl(x, false, FB_IPFIX_TID_FLOW4, fl_spec, F_V4) ||
	    add_tmpl(x, false, FB_IPFIX_TID_FLOW6, fl_spec, F_V6) ||
	    add_tmpl(x, true, TID_INT_MIT, mit_spec, UINT32_MAX) ||
	    add_tmpl(x, false, FB_IPFIX_TID_MIT4, mit_spec, F_V4) ||
	    add_tmpl(x, false, FB_IPFIX_TID_MIT6, mit_spec, F_V6))
		return -1;
	x->buf = fBufAllocForExport(x->session, exp);
	if (!x->buf) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -1;
	}
	/* Manual mode: a full message is our call to send, not fixbuf's. */
	fBufSetAutomaticMode(x->buf, FALSE);
	return 0;
}

struct fb_ipfix *fb_ipfix_new(__u32 domain, size_t msg_max, bool l2_estimates)
{
	struct fb_ipfix *x = calloc(1, sizeof(*x));

	if (!x || msg_max < 512 || msg_max > 65535 || !(x->msg = malloc(msg_max))) {
		fb_report_err("ipfix: %s", x ? "bad message size" : "out of memory");
		free(x);
		return NULL;
	}
	x->domain = domain;
	x->msg_max = x->msg_cap = msg_max;
	x->l2_est = l2_estimates;
	x->model = fbInfoModelAlloc();
	if (!x->model || build(x)) {
		fb_report_err("ipfix: %s", x->err[0] ? x->err : "out of memory");
		fb_ipfix_free(x);
		return NULL;
	}
	return x;
}

void fb_ipfix_free(struct fb_ipfix *x)
{
	if (!x)
		return;
	teardown(x);
	if (x->model)
		fbInfoModelFree(x->model);
	free(x->msg);
	free(x);
}

int fb_ipfix_session(struct fb_ipfix *x)
{
	return build(x);
}

void fb_ipfix_set_msg_max(struct fb_ipfix *x, size_t msg_max)
{
	x->msg_max = msg_max < 512 ? 512 : msg_max > x->msg_cap ? x->msg_cap : msg_max;
}

/* fixbuf's "the message is full": 1; another error: -1. */
static int full_or_fail(struct fb_ipfix *x, const char *what, GError *e)
{
	if (e && g_error_matches(e, FB_ERROR_DOMAIN, FB_ERROR_EOM)) {
		g_clear_error(&e);
		return 1;
	}
	return fail(x, what, e);
}

int fb_ipfix_put_templates(struct fb_ipfix *x)
{
	GError *e = NULL;

	if (!fbSessionExportTemplates(x->session, &e)) {
		/* fixbuf starts templates on a message of their own: it ends
		 * the message in hand first (EOM), even an empty one. */
		if (x->pending || !e || !g_error_matches(e, FB_ERROR_DOMAIN, FB_ERROR_EOM))
			return full_or_fail(x, "exporting templates", e);
		g_clear_error(&e);
		if (!fBufEmit(x->buf, &e) || !fbSessionExportTemplates(x->session, &e))
			return fail(x, "exporting templates", e);
	}
	x->pending = true;
	x->tpl_last = true;
	x->cur_ext = 0; /* a template set ends the data set */
	return 0;
}

int fb_ipfix_put_withdrawals(struct fb_ipfix *x)
{
	static const uint16_t tids[] = { FB_IPFIX_TID_NEW4, FB_IPFIX_TID_NEW6,	FB_IPFIX_TID_EST4,
					 FB_IPFIX_TID_EST6, FB_IPFIX_TID_FLOW4, FB_IPFIX_TID_FLOW6,
					 FB_IPFIX_TID_MIT4, FB_IPFIX_TID_MIT6 };
	GError *e = NULL;
	size_t i;

	/* fixbuf writes a withdrawal as it removes a template from a session
	 * bound to a buffer, in a message of templates, and starts one by
	 * ending the message in hand (EOM), the template already removed:
	 * a template exported first takes that turn (and ends the empty
	 * message in hand), unless templates went last: no turn to take. */
	if (x->pending) {
		snprintf(x->err, sizeof(x->err), "withdrawing templates: a message in hand");
		return -1;
	}
	if (!x->tpl_last && !fbSessionExportTemplate(x->session, tids[0], &e)) {
		if (!e || !g_error_matches(e, FB_ERROR_DOMAIN, FB_ERROR_EOM))
			return fail(x, "withdrawing templates", e);
		g_clear_error(&e);
		if (!fBufEmit(x->buf, &e))
			return fail(x, "withdrawing templates", e);
	}
	for (i = 0; i < sizeof(tids) / sizeof(tids[0]); i++)
		if (!fbSessionRemoveTemplate(x->session, FALSE, tids[i], &e))
			return fail(x, "withdrawing a template", e);
	x->pending = true;
	x->cur_ext = 0;
	return 0;
}

static int set_tmpl(struct fb_ipfix *x, uint16_t internal, uint16_t ext)
{
	GError *e = NULL;

	if (x->cur_ext == ext)
		return 0;
	if (!fBufSetInternalTemplate(x->buf, internal, &e) ||
	    !fBufSetExportTemplate(x->buf, ext, &e))
		return fail(x, "selecting a template", e);
	x->cur_ext = ext;
	return 0;
}

static int append(struct fb_ipfix *x, uint16_t internal, uint16_t ext, void *rec, size_t len)
{
	GError *e = NULL;

	if (set_tmpl(x, internal, ext))
		return -1;
	if (!fBufAppend(x->buf, rec, len, &e)) {
		/* After templates fixbuf ends the message once more (EOM),
		 * even an empty one: data starts a message of its own. */
		if (x->pending || !e || !g_error_matches(e, FB_ERROR_DOMAIN, FB_ERROR_EOM))
			return full_or_fail(x, "appending a record", e);
		g_clear_error(&e);
		if (!fBufAppend(x->buf, rec, len, &e))
			return full_or_fail(x, "appending a record", e);
	}
	x->records++;
	x->pending = true;
	x->tpl_last = false;
	return 0;
}

/* The 5-tuple and times; IPv4 addresses (v4-mapped in the key, of an
 * IPv4 packet) as host-order numbers. Returns whether it is IPv4. */
static bool fill(struct tuple *t, const struct fb_key *k, __u64 start_ms, __u64 end_ms)
{
	uint32_t a, b;
	bool v4 = k->family == FB_FAMILY_IPV4 && fb_addr_v4mapped(k->saddr) &&
		  fb_addr_v4mapped(k->daddr);

	t->start_ms = start_ms;
	t->end_ms = end_ms;
	if (v4) {
		memcpy(&a, k->saddr + 12, 4);
		memcpy(&b, k->daddr + 12, 4);
		t->sip4 = ntohl(a);
		t->dip4 = ntohl(b);
	} else {
		memcpy(t->sip6, k->saddr, 16);
		memcpy(t->dip6, k->daddr, 16);
	}
	t->sport = ntohs(k->sport);
	t->dport = ntohs(k->dport);
	t->proto = k->proto;
	return v4;
}

int fb_ipfix_put_newflow(struct fb_ipfix *x, const struct fb_ipfix_newflow *r)
{
	struct nf_rec rec;
	bool v4;

	memset(&rec, 0, sizeof(rec));
	v4 = fill(&rec.t, &r->key, r->start_ms, r->start_ms);
	rec.ingress = r->ifindex;
	rec.direction = FB_IPFIX_DIR_INGRESS;
	rec.fwd = r->fwd;
	return append(x, TID_INT_NF, v4 ? FB_IPFIX_TID_NEW4 : FB_IPFIX_TID_NEW6, &rec, sizeof(rec));
}

int fb_ipfix_put_estimate(struct fb_ipfix *x, const struct fb_ipfix_estimate *r)
{
	struct est_rec rec;
	bool v4;

	memset(&rec, 0, sizeof(rec));
	v4 = fill(&rec.t, &r->key, r->start_ms, r->end_ms);
	rec.direction = FB_IPFIX_DIR_INGRESS;
	rec.packets = r->packets;
	rec.octets = rec.l2octets = r->bytes;
	rec.confidence = r->confidence;
	rec.plow = r->packets_low;
	rec.pup = (double)r->packets;
	rec.blow = r->bytes_low;
	rec.bup = (double)r->bytes;
	return append(x, TID_INT_EST, v4 ? FB_IPFIX_TID_EST4 : FB_IPFIX_TID_EST6, &rec,
		      sizeof(rec));
}

int fb_ipfix_put_flow(struct fb_ipfix *x, const struct fb_ipfix_flow *r)
{
	struct fl_rec rec;
	bool v4;

	memset(&rec, 0, sizeof(rec));
	v4 = fill(&rec.t, &r->key, r->start_ms, r->end_ms);
	rec.tos = r->tos;
	rec.tcp_flags = r->tcp_flags;
	rec.icmp4 = rec.icmp6 = r->icmp;
	rec.vlan = r->vlan;
	memcpy(rec.smac, r->smac, 6);
	memcpy(rec.dmac, r->dmac, 6);
	rec.ingress = r->ingress;
	rec.egress = r->egress;
	rec.direction = FB_IPFIX_DIR_INGRESS;
	rec.fwd = r->fwd;
	rec.end_reason = r->end_reason;
	rec.packets = r->packets;
	rec.octets = r->bytes;
	return append(x, TID_INT_FL, v4 ? FB_IPFIX_TID_FLOW4 : FB_IPFIX_TID_FLOW6, &rec,
		      sizeof(rec));
}

int fb_ipfix_put_mitigation(struct fb_ipfix *x, const struct fb_ipfix_mitigation *r)
{
	const __u8 *a = r->key.kind == FB_KIND_DST ? r->key.daddr : r->key.saddr;
	bool v4 = r->key.family == FB_FAMILY_IPV4, dst = r->key.kind == FB_KIND_DST;
	struct mit_rec rec;
	uint32_t a4;

	memset(&rec, 0, sizeof(rec));
	rec.t.start_ms = r->start_ms;
	rec.t.end_ms = r->end_ms;
	if (v4) {
		memcpy(&a4, a + 12, 4);
		if (dst)
			rec.t.dip4 = ntohl(a4);
		else
			rec.t.sip4 = ntohl(a4);
	} else {
		memcpy(dst ? rec.t.dip6 : rec.t.sip6, a, 16);
	}
	rec.event = r->event;
	rec.fwd = FB_IPFIX_FWD_DROP_ACL;
	return append(x, TID_INT_MIT, v4 ? FB_IPFIX_TID_MIT4 : FB_IPFIX_TID_MIT6, &rec,
		      sizeof(rec));
}

int fb_ipfix_take(struct fb_ipfix *x, const __u8 **msg, size_t *len, unsigned *records)
{
	GError *e = NULL;

	*msg = NULL;
	*len = 0;
	*records = 0;
	if (!x->pending)
		return 0;
	if (!fBufEmit(x->buf, &e))
		return fail(x, "closing a message", e);
	*msg = x->msg;
	*len = fbExporterGetMsgLen(fBufGetExporter(x->buf));
	*records = x->records;
	x->records = 0;
	x->pending = false;
	x->cur_ext = 0;
	return 0;
}

const char *fb_ipfix_error(const struct fb_ipfix *x)
{
	return x->err;
}

__u8 fb_ipfix_fwd_status(unsigned v)
{
	switch (v) {
	case XDP_DROP:
		return FB_IPFIX_FWD_DROP_ACL;
	case XDP_PASS:
	case XDP_TX:
	case XDP_REDIRECT:
		return FB_IPFIX_FWD_FORWARDED;
	default:
		return FB_IPFIX_FWD_UNKNOWN;
	}
}
