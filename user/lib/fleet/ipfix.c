// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IPFIX export through libfixbuf (see ipfix.h for the templates). fixbuf
 * transcodes an "internal" record, a C struct described by an internal
 * template, into the "external" template on the wire; one internal template
 * per record kind holds both address families, and the external templates
 * pick the family's elements by spec flags. Records are appended to fixbuf's
 * message buffer and sent when it fills or at fb_ipfix_flush().
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

/* Internal records: packed, in spec order (fixbuf lays internal records out
 * in template order, without alignment). Integers in host order, IPv4
 * addresses as host-order unsigned32, IPv6 as 16 network-order bytes. */
struct nf_rec {
	uint64_t start_ms, end_ms;
	uint32_t sip4, dip4;
	uint8_t sip6[16], dip6[16];
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t pad1[3];
	uint32_t ingress;
	uint8_t fwd;
	uint8_t pad2[3];
	uint64_t packets, octets;
} __attribute__((packed));

static fbInfoElementSpec_t nf_spec[] = {
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "sourceIPv4Address", 4, F_V4 },
	{ "destinationIPv4Address", 4, F_V4 },
	{ "sourceIPv6Address", 16, F_V6 },
	{ "destinationIPv6Address", 16, F_V6 },
	{ "sourceTransportPort", 2, 0 },
	{ "destinationTransportPort", 2, 0 },
	{ "protocolIdentifier", 1, 0 },
	{ "paddingOctets", 3, F_INT },
	{ "ingressInterface", 4, 0 },
	/* RFC 7270 made it unsigned8 (it was unsigned32); one octet on the
	 * wire is what collectors decode either way (reduced size). */
	{ "forwardingStatus", 1, 0 },
	{ "paddingOctets", 3, F_INT },
	{ "packetDeltaCount", 8, 0 },
	{ "octetDeltaCount", 8, 0 },
	FB_IESPEC_NULL,
};

struct est_rec {
	uint64_t start_ms, end_ms;
	uint32_t sip4, dip4;
	uint8_t sip6[16], dip6[16];
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t pad1[3];
	uint64_t packets, octets;
	double confidence, plow, pup, blow, bup;
} __attribute__((packed));

static fbInfoElementSpec_t est_spec[] = {
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "sourceIPv4Address", 4, F_V4 },
	{ "destinationIPv4Address", 4, F_V4 },
	{ "sourceIPv6Address", 16, F_V6 },
	{ "destinationIPv6Address", 16, F_V6 },
	{ "sourceTransportPort", 2, 0 },
	{ "destinationTransportPort", 2, 0 },
	{ "protocolIdentifier", 1, 0 },
	{ "paddingOctets", 3, F_INT },
	{ "packetDeltaCount", 8, 0 },
	{ "octetDeltaCount", 8, 0 },
	/* RFC 5477 accuracy: the truth lies in [lower, upper] with this
	 * probability; first pair for packetDeltaCount, second for octets. */
	{ "confidenceLevel", 8, 0 },
	{ "lowerCILimit", 8, 0 },
	{ "upperCILimit", 8, 0 },
	{ "lowerCILimit", 8, 0 },
	{ "upperCILimit", 8, 0 },
	FB_IESPEC_NULL,
};

_Static_assert(sizeof(struct nf_rec) == 88, "nf_rec matches nf_spec");
_Static_assert(sizeof(struct est_rec) == 120, "est_rec matches est_spec");

#define TID_INT_NF 0xff01
#define TID_INT_EST 0xff02

struct fb_ipfix {
	fbInfoModel_t *model;
	fbSession_t *session;
	fbExporter_t *exporter;
	fBuf_t *buf;
	int cur_ext; /* external template the buffer is set to, 0: none */
	/* Where to, kept to start over after a failure. */
	char host[256], port[16];
	bool tcp;
	FILE *fp;
	__u32 domain;
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

/* A fresh session, exporter and buffer, the templates queued: at open,
 * and after a failure (a new transport session starts its sequence
 * numbers at 0 and must begin with the templates; a message fixbuf failed
 * to send must not reach the next connection ahead of them). */
static int build(struct fb_ipfix *x)
{
	fbExporter_t *exp;

	if (x->fp) {
		exp = fbExporterAllocFP(x->fp);
	} else {
		fbConnSpec_t spec;

		memset(&spec, 0, sizeof(spec));
		spec.transport = x->tcp ? FB_TCP : FB_UDP;
		spec.host = x->host;
		spec.svc = x->port;
		exp = fbExporterAllocNet(&spec);
	}
	x->cur_ext = 0;
	x->session = fbSessionAlloc(x->model);
	if (!exp || !x->session) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -1;
	}
	/* Internal templates first: adding an external one to a session
	 * bound to a buffer queues it for export. */
	if (add_tmpl(x, true, TID_INT_NF, nf_spec, UINT32_MAX) ||
	    add_tmpl(x, true, TID_INT_EST, est_spec, UINT32_MAX))
		return -1;
	x->buf = fBufAllocForExport(x->session, exp);
	x->exporter = exp;
	fbSessionSetDomain(x->session, x->domain);
	if (add_tmpl(x, false, FB_IPFIX_TID_NEW4, nf_spec, F_V4) ||
	    add_tmpl(x, false, FB_IPFIX_TID_NEW6, nf_spec, F_V6) ||
	    add_tmpl(x, false, FB_IPFIX_TID_EST4, est_spec, F_V4) ||
	    add_tmpl(x, false, FB_IPFIX_TID_EST6, est_spec, F_V6))
		return -1;
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
	x->exporter = NULL;
}

static struct fb_ipfix *open_with(struct fb_ipfix *x)
{
	x->model = fbInfoModelAlloc();
	if (!x->model || build(x)) {
		fb_report_err("ipfix: %s", x->err[0] ? x->err : "out of memory");
		fb_ipfix_close(x);
		return NULL;
	}
	return x;
}

struct fb_ipfix *fb_ipfix_open_net(const char *host, const char *port, bool tcp, __u32 domain)
{
	struct fb_ipfix *x = calloc(1, sizeof(*x));

	if (!x) {
		fb_report_err("ipfix: out of memory");
		return NULL;
	}
	snprintf(x->host, sizeof(x->host), "%s", host);
	snprintf(x->port, sizeof(x->port), "%s", port);
	x->tcp = tcp;
	x->domain = domain;
	return open_with(x);
}

struct fb_ipfix *fb_ipfix_open_file(FILE *fp, __u32 domain)
{
	struct fb_ipfix *x = calloc(1, sizeof(*x));

	if (!x) {
		fb_report_err("ipfix: out of memory");
		return NULL;
	}
	x->fp = fp;
	x->domain = domain;
	return open_with(x);
}

int fb_ipfix_templates(struct fb_ipfix *x)
{
	GError *e = NULL;

	if (!fbSessionExportTemplates(x->session, &e))
		return fail(x, "exporting templates", e);
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

static bool is_v4(const struct fb_key *k, uint32_t *s, uint32_t *d)
{
	static const __u8 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint32_t a, b;

	*s = *d = 0;
	if (memcmp(k->saddr, mapped, 12) || memcmp(k->daddr, mapped, 12))
		return false;
	memcpy(&a, k->saddr + 12, 4);
	memcpy(&b, k->daddr + 12, 4);
	*s = ntohl(a);
	*d = ntohl(b);
	return true;
}

static int append(struct fb_ipfix *x, void *rec, size_t len)
{
	GError *e = NULL;

	if (!fBufAppend(x->buf, rec, len, &e))
		return fail(x, "appending a record", e);
	return 0;
}

int fb_ipfix_add_newflow(struct fb_ipfix *x, const struct fb_ipfix_newflow *r)
{
	struct nf_rec rec;
	uint32_t s4, d4;
	bool v4;

	memset(&rec, 0, sizeof(rec));
	v4 = is_v4(&r->key, &s4, &d4);
	rec.sip4 = s4;
	rec.dip4 = d4;
	if (!v4) {
		memcpy(rec.sip6, r->key.saddr, 16);
		memcpy(rec.dip6, r->key.daddr, 16);
	}
	rec.start_ms = rec.end_ms = r->start_ms;
	rec.sport = ntohs(r->key.sport);
	rec.dport = ntohs(r->key.dport);
	rec.proto = r->key.proto;
	rec.ingress = r->ifindex;
	rec.fwd = r->fwd;
	rec.packets = 1;
	rec.octets = r->bytes;
	if (set_tmpl(x, TID_INT_NF, v4 ? FB_IPFIX_TID_NEW4 : FB_IPFIX_TID_NEW6))
		return -1;
	return append(x, &rec, sizeof(rec));
}

int fb_ipfix_add_estimate(struct fb_ipfix *x, const struct fb_ipfix_estimate *r)
{
	struct est_rec rec;
	uint32_t s4, d4;
	bool v4;

	memset(&rec, 0, sizeof(rec));
	v4 = is_v4(&r->key, &s4, &d4);
	rec.sip4 = s4;
	rec.dip4 = d4;
	if (!v4) {
		memcpy(rec.sip6, r->key.saddr, 16);
		memcpy(rec.dip6, r->key.daddr, 16);
	}
	rec.start_ms = r->start_ms;
	rec.end_ms = r->end_ms;
	rec.sport = ntohs(r->key.sport);
	rec.dport = ntohs(r->key.dport);
	rec.proto = r->key.proto;
	rec.packets = r->packets;
	rec.octets = r->bytes;
	rec.confidence = r->confidence;
	rec.plow = r->packets_low;
	rec.pup = (double)r->packets;
	rec.blow = r->bytes_low;
	rec.bup = (double)r->bytes;
	if (set_tmpl(x, TID_INT_EST, v4 ? FB_IPFIX_TID_EST4 : FB_IPFIX_TID_EST6))
		return -1;
	return append(x, &rec, sizeof(rec));
}

int fb_ipfix_flush(struct fb_ipfix *x)
{
	GError *e = NULL;

	if (!fBufEmit(x->buf, &e))
		return fail(x, "sending", e);
	return 0;
}

int fb_ipfix_reset(struct fb_ipfix *x)
{
	teardown(x);
	return build(x);
}

const char *fb_ipfix_error(const struct fb_ipfix *x)
{
	return x->err;
}

void fb_ipfix_close(struct fb_ipfix *x)
{
	if (!x)
		return;
	teardown(x);
	if (x->model)
		fbInfoModelFree(x->model);
	free(x);
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
