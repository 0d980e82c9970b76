// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rows' keys and rules, shared by test_verdict and test_frags: the
 * 5-tuple a row's frame carries, the rules a filter holds for it, and
 * what a frame cut at a length still tells the parser.
 */
#include "verdict.h"

void v4mapped(__u8 out[16], const __u8 a[4])
{
	memset(out, 0, 16);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, a, 4);
}

/* The 5-tuple key the program should extract from the row's frame. */
void row_key(const struct row *r, struct fb_key *k)
{
	memset(k, 0, sizeof(*k));
	if (r->v6) {
		memcpy(k->saddr, V6_SRC, 16);
		memcpy(k->daddr, V6_DST, 16);
		k->family = FB_FAMILY_IPV6;
	} else {
		v4mapped(k->saddr, V4_SRC);
		v4mapped(k->daddr, V4_DST);
	}
	k->sport = htons(r->sport);
	k->dport = htons(r->dport);
	k->proto = r->proto;
	k->kind = FB_KIND_FLOW;
}

/* The kind that matches a row that parses, in a filter holding rules
 * (hit: what the mode says). A later fragment of a protocol with ports
 * (its key has port 0) never meets a 5-tuple, even the one with its own
 * key: a 5-tuple fixes its ports. Nor does a later IPv6 fragment whose
 * fragment header names an extension header: its protocol is unknown.
 * The probes go on to source, then destination. */
int parsed_hit(const struct row *r, int rules, int hit)
{
	if (hit != FB_KIND_FLOW || !r->frag ||
	    (!fb_proto_has_ports(r->proto) && !(r->v6 && fb_proto_ipv6_ext(r->proto))))
		return hit;
	return rules & R_SRC ? FB_KIND_SRC : rules & R_DST ? FB_KIND_DST : 0;
}

/* As `flowbloom add` does it: bits, prefix lengths, then the kind flag. */
void add_rule(struct fb_store *f, const struct fb_key *k)
{
	size_t bad;

	ASSERT_EQ(fb_rules_add(f, k, 1, &bad), 0, "rule added");
}

/* A `src ADDR` or `dst ADDR` rule: the whole address, /128. */
void addr_key(struct fb_key *k, int kind, const __u8 addr[16], __u8 family)
{
	memset(k, 0, sizeof(*k));
	memcpy(kind == FB_KIND_SRC ? k->saddr : k->daddr, addr, 16);
	k->kind = kind;
	k->plen = 128;
	k->family = family;
}

void add_addr(struct fb_store *f, int kind, const __u8 addr[16], __u8 family)
{
	struct fb_key k;

	addr_key(&k, kind, addr, family);
	add_rule(f, &k);
}

void fill_filter(struct fb_store *f, const struct fb_key *flow, int rules)
{
	struct fb_key rev = *flow;

	/* Empty: bits, prefix lengths (block 1) and kinds. */
	memset(&f->blocks[1], 0, ((size_t)f->hdr->nblocks + 1) * FB_BLOCK_BYTES);
	f->hdr->kinds = 0;
	memcpy(rev.saddr, flow->daddr, 16);
	memcpy(rev.daddr, flow->saddr, 16);
	rev.sport = flow->dport;
	rev.dport = flow->sport;
	if (rules & R_FLOW)
		add_rule(f, flow);
	if (rules & R_SRC)
		add_addr(f, FB_KIND_SRC, flow->saddr, flow->family);
	if (rules & R_DST)
		add_addr(f, FB_KIND_DST, flow->daddr, flow->family);
	if (rules & R_RFLOW)
		add_rule(f, &rev);
	if (rules & R_RSRC)
		add_addr(f, FB_KIND_SRC, flow->daddr, flow->family);
	if (rules & R_RDST)
		add_addr(f, FB_KIND_DST, flow->saddr, flow->family);
}

/* Did the parser read the addresses of the first len bytes of the row's
 * frame? Once the fixed IPv4 or IPv6 header is in, yes; never past a third
 * VLAN tag (the IP header is not found). */
int addrs_read(const struct row *r, const struct pkt *p, size_t len)
{
	if (r->build == f_vlan && (r->a == TAGS_ADQQ || r->a == TAGS_QQQ))
		return 0;
	return p->l3 >= 0 && len >= (size_t)p->l3 + (p->v6 ? 40 : 20);
}

/* A first fragment (MF or M set, offset 0) of the table? */
int first_fragment(const struct row *r)
{
	if (r->build == f_v4_frag)
		return (r->b & 0x3fff) == 0x2000;
	if (r->build == f_v6_frag || r->build == f_v6_hop_frag || r->build == f_v6_exts_frag ||
	    r->build == f_v6_frag_ext)
		return (r->b & 0xfff9) == 1; /* offset 0, M (the 2 reserved bits aside) */
	return 0;
}

/* Where a first fragment's frame is known to be one (its IPv4 header, or
 * its IPv6 fragment header, ends): the upper layer, but for the rows
 * whose fragmentable part starts with an extension header. */
size_t first_known(const struct row *r, const struct pkt *p)
{
	return r->build == f_v6_frag_ext ? (size_t)p->l3 + 48 : (size_t)p->l4;
}

const struct cfg cfgs[8] = {
	{ "drop", FB_ACTION_DROP, FB_MALFORMED_DEFAULT, false },
	{ "allow", FB_ACTION_ALLOW, FB_MALFORMED_DEFAULT, false },
	{ "monitor", FB_ACTION_MONITOR, FB_MALFORMED_DEFAULT, false },
	{ "drop+mpass", FB_ACTION_DROP, FB_MALFORMED_PASS, false },
	{ "allow+mpass", FB_ACTION_ALLOW, FB_MALFORMED_PASS, false },
	{ "monitor+mdrop", FB_ACTION_MONITOR, FB_MALFORMED_DROP, false },
	{ "drop+mdrop", FB_ACTION_DROP, FB_MALFORMED_DROP, false },
	/* The filter's own action (created with drop), trace record on: the
	 * defaults an `ip link`-loaded object has. */
	{ "default+trace", FB_ACTION_DEFAULT, FB_MALFORMED_DEFAULT, true },
};
