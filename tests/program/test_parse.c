// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The parser's two builds (tests/program/parse_check.bpf.c) agree: the
 * program's own, which on this architecture reads an IPv6 address's key
 * words with one 8-byte load each (FB_UNALIGNED_LOADS, bpf/parsing.bpf.h),
 * and the one built for architectures that read unaligned memory slowly,
 * which reads their 4-byte halves. Random IPv4 and IPv6 flows behind 0 to
 * 2 VLAN tags and IPv6 extension headers: the key is the flow's (a later
 * fragment whose fragment header names an extension header: that number,
 * and its protocol not known); these frames cut at every length, and every
 * frame of ../shared/pcaps (many malformed) whole and cut: the same key,
 * FB_PARSE_* bits and verdict from both builds.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "testlib.h"
#include "packet.h"
#include "parse_check.h"
#include "prog/loader.h"
#include "rules/pcapfile.h"

/* Cuts of a frame are tried up to this length: past it the parser has read
 * everything a frame without extension headers holds. */
#define CUT_MAX 160
/* BPF_PROG_TEST_RUN takes an XDP frame of at most a page less headroom and
 * tailroom. */
#define FRAME_MAX 3000

struct pc {
	struct bpf_object *obj;
	int prog, out;
	long dw; /* 8-byte loads not from the stack: the packet's */
};

struct tally {
	long frames, runs, differ, errors;
	char first[256]; /* the first difference */
};

static int pc_load(struct pc *p, const char *dir, const char *name)
{
	struct bpf_program *prog;
	const struct bpf_insn *in;
	char path[600];
	size_t i, n;

	snprintf(path, sizeof(path), "%s/../../%s", dir, name);
	p->obj = bpf_object__open_file(path, NULL);
	if (!p->obj)
		return -1;
	prog = bpf_object__find_program_by_name(p->obj, "parse_check");
	if (!prog)
		return -1;
	in = bpf_program__insns(prog);
	n = bpf_program__insn_cnt(prog);
	for (i = 0; i < n; i++)
		p->dw += in[i].code == (BPF_LDX | BPF_MEM | BPF_DW) && in[i].src_reg != BPF_REG_10;
	if (bpf_object__load(p->obj))
		return -1;
	p->prog = bpf_program__fd(prog);
	p->out = bpf_map__fd(bpf_object__find_map_by_name(p->obj, "pc_out"));
	return 0;
}

static int pc_run(const struct pc *p, const __u8 *d, size_t len, struct pc_out *o)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = d, .data_size_in = len, .repeat = 1);
	__u32 zero = 0;

	memset(o, 0xa5, sizeof(*o));
	if (bpf_prog_test_run_opts(p->prog, &t) || t.retval != XDP_PASS)
		return -1;
	return bpf_map_lookup_elem(p->out, &zero, o);
}

/* Both builds on d[0..len): equal outputs? (*o: the program's build's.) */
static void both(const struct pc pcs[2], const __u8 *d, size_t len, struct tally *t,
		 const char *what, struct pc_out *o)
{
	struct pc_out b;

	t->runs++;
	if (pc_run(&pcs[0], d, len, o) || pc_run(&pcs[1], d, len, &b)) {
		t->errors++;
		return;
	}
	if (!memcmp(o, &b, sizeof(b)))
		return;
	if (!t->differ++)
		snprintf(t->first, sizeof(t->first),
			 "%s, %zu bytes: parse %d / %d, info %#x / %#x, w0 %#llx / %#llx, w3 %#llx "
			 "/ "
			 "%#llx",
			 what, len, o->parse, b.parse, o->info, b.info,
			 (unsigned long long)o->key.w[0], (unsigned long long)b.key.w[0],
			 (unsigned long long)o->key.w[3], (unsigned long long)b.key.w[3]);
}

/* Every cut of d from the Ethernet header (test runs need 14 bytes) to
 * CUT_MAX or the whole frame. */
static void cuts(const struct pc pcs[2], const __u8 *d, size_t len, struct tally *t,
		 const char *what)
{
	struct pc_out o;
	size_t n;

	for (n = ETH_HLEN; n < len && n <= CUT_MAX; n++)
		both(pcs, d, n, t, what, &o);
}

/* Frame i of the random set: flow k (IPv6 for odd i) behind i % 3 VLAN
 * tags, an IPv6 one behind the extension headers (i / 2) % 8 names. *later:
 * a later fragment (its key has no ports), 2 if its fragment header names
 * an extension header (k's protocol becomes that number: the key's). */
static size_t random_frame(uint64_t *seed, int i, struct fb_key *k, __u8 *out, int *later)
{
	static const __u8 chain[8][3] = {
		{ 0 },
		{ IPPROTO_HOPOPTS },
		{ IPPROTO_DSTOPTS, IPPROTO_ROUTING },
		{ IPPROTO_FRAGMENT },
		{ IPPROTO_HOPOPTS, IPPROTO_FRAGMENT },
		{ IPPROTO_AH, IPPROTO_DSTOPTS },
		{ IPPROTO_FRAGMENT, IPPROTO_DSTOPTS },
		{ IPPROTO_HOPOPTS, IPPROTO_FRAGMENT, IPPROTO_AH },
	};
	int v6 = i & 1, vlans = i % 3, c = (i / 2) % 8, j, n = 0;
	__u8 proto;
	__u16 eth = v6 ? ETH_P_IPV6 : ETH_P_IP;
	struct pkt p;

	test_random_flow(seed, k, v6);
	*later = v6 && chain[c][0] && (i / 12) % 2 &&
		 (chain[c][0] == IPPROTO_FRAGMENT || chain[c][1] == IPPROTO_FRAGMENT);
	pkt_init(&p);
	pkt_eth(&p, vlans ? ETH_P_8021AD : eth);
	for (j = 0; j < vlans; j++)
		pkt_vlan(&p, 100 + j, j + 1 < vlans ? ETH_P_8021Q : eth);
	if (!v6) {
		pkt_ipv4(&p, k->proto, 5 + i % 4, 0, &k->saddr[12], &k->daddr[12]);
	} else {
		while (n < 3 && chain[c][n])
			n++;
		pkt_ipv6(&p, n ? chain[c][0] : k->proto, k->saddr, k->daddr);
		for (j = 0; j < n; j++) {
			__u8 next = j + 1 < n ? chain[c][j + 1] : k->proto;

			if (chain[c][j] == IPPROTO_FRAGMENT)
				pkt_frag6(&p, next, *later ? 185 << 3 : 1);
			else
				pkt_ext6(&p, chain[c][j], next, (i / 4) % 3);
		}
	}
	proto = k->proto;
	for (j = 0; *later && j + 1 < n; j++)
		if (chain[c][j] == IPPROTO_FRAGMENT) {
			*later = 2;
			k->proto = chain[c][j + 1];
		}
	if (!*later)
		pkt_l4(&p, proto, k->sport, k->dport);
	pkt_payload(&p, i % 7);
	pkt_finish(&p);
	memcpy(out, p.d, p.len);
	return p.len;
}

static void test_random(const struct pc pcs[2])
{
	struct tally t = { 0 };
	uint64_t seed = 0x9a45e;
	long wrong = 0, unknown = 0;
	char label[400];
	int i;

	for (i = 0; i < 3000; i++) {
		struct fb_key k;
		struct pc_out o;
		__u8 d[256];
		size_t len;
		int later;

		len = random_frame(&seed, i, &k, d, &later);
		t.frames++;
		both(pcs, d, len, &t, "random frame", &o);
		if (later)
			k.sport = k.dport = 0;
		wrong += o.parse != FB_PARSE_OK || memcmp(o.key.saddr, k.saddr, 16) ||
			 memcmp(o.key.daddr, k.daddr, 16) || o.key.sport != k.sport ||
			 o.key.dport != k.dport || o.key.proto != k.proto ||
			 o.key.family != k.family || o.key.kind != FB_KIND_FLOW ||
			 !(o.info & PC_PARSE_FRAGMENT) != !later ||
			 !(o.info & PC_PARSE_PROTO) != (later == 2);
		unknown += later == 2;
		cuts(pcs, d, len, &t, "random frame cut");
	}
	printf("random: %ld frames, %ld runs of each build\n", t.frames, t.runs);
	ASSERT_EQ(wrong, 0,
		  "random IPv4 and IPv6 flows behind 0-2 VLAN tags and IPv6 extension headers: "
		  "parsed, the key is the flow's (addresses, ports, protocol, family), its "
		  "protocol known but for a later fragment after an extension header");
	ASSERT_TRUE(unknown > 50, "... among them later fragments after an extension header");
	snprintf(label, sizeof(label),
		 "random frames whole and cut at every length: both builds make the same key, "
		 "bits and verdict%s%s",
		 t.differ ? "; first difference: " : "", t.first);
	ASSERT_TRUE(!t.differ && !t.errors && t.runs > 100000, label);
}

static void test_pcaps(const struct pc pcs[2], const char *dir)
{
	static __u8 frame[FRAME_MAX];
	struct tally t = { 0 };
	struct dirent **ents;
	char label[400];
	int n, i;

	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		test_skip("captures: both builds agree", "no ../shared/pcaps");
		return;
	}
	for (i = 0; i < n; i++) {
		struct fb_pcap *pc = NULL;
		char path[2048];
		struct pc_out o;
		size_t len;
		int cut;

		if (strstr(ents[i]->d_name, ".pcap")) {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			pc = fb_pcap_open(path);
		}
		while (pc && fb_pcap_next(pc, frame, sizeof(frame), &len, &cut) == 1) {
			if (len < ETH_HLEN)
				continue;
			t.frames++;
			both(pcs, frame, len, &t, ents[i]->d_name, &o);
			cuts(pcs, frame, len, &t, ents[i]->d_name);
		}
		if (pc)
			fb_pcap_close(pc);
		free(ents[i]);
	}
	free(ents);
	printf("captures: %ld frames, %ld runs of each build\n", t.frames, t.runs);
	snprintf(label, sizeof(label),
		 "captures: every frame whole and cut at every length: both builds make the same "
		 "key, bits and verdict%s%s",
		 t.differ ? "; first difference: " : "", t.first);
	ASSERT_TRUE(!t.differ && !t.errors && t.frames > 1000, label);
}

int main(int argc, char **argv)
{
	struct pc pcs[2] = { 0 };
	char dir[512], pcaps[768];

	(void)argc;
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(argv[0], '/') - argv[0]), argv[0]);
	snprintf(pcaps, sizeof(pcaps), "%s/../../../../shared/pcaps", dir);
	fb_libbpf_logging(getenv("TEST_VERBOSE") != NULL);
	if (!ASSERT_EQ(pc_load(&pcs[0], dir, "parse_check.bpf.o"), 0,
		       "load the parser as the program is built here") ||
	    !ASSERT_EQ(pc_load(&pcs[1], dir, "parse_check_aligned.bpf.o"), 0,
		       "load the parser as built for strict-alignment architectures"))
		goto out;
	printf("8-byte packet loads: %ld in the program's build, %ld in the other\n", pcs[0].dw,
	       pcs[1].dw);
	ASSERT_EQ(pcs[1].dw, 0, "the strict-alignment build reads no 8-byte word of a packet");
	if (pcs[0].dw)
		ASSERT_EQ(pcs[0].dw, 4,
			  "this build reads an IPv6 packet's four address words "
			  "with one load each");
	else
		test_skip("this build's 8-byte loads",
			  "the architecture reads unaligned memory slowly: both builds are one");
	test_random(pcs);
	test_pcaps(pcs, getenv("PCAPS") ? getenv("PCAPS") : pcaps);
out:
	bpf_object__close(pcs[0].obj);
	bpf_object__close(pcs[1].obj);
	return test_summary();
}
