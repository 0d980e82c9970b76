// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_prefix's helpers: the CLI through the shell, prefixes and addresses
 * (the reference semantics: same family, equal under the mask), the program
 * loaded with its trace record and one UDP packet through it.
 */
#include "prefix_test.h"

char cli[512];
char tmpdir[64];
long test_runs_failed;

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run `flowbloom ARGS` through the shell; returns the exit status. */
int sh(const char *fmt, ...)
{
	char args[1536], cmd[2200];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s %s", cli, args);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

char *slurp(const char *path)
{
	FILE *in = fopen(path, "r");
	static char buf[65536];
	size_t n;

	buf[0] = 0;
	if (!in)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, in);
	buf[n] = 0;
	fclose(in);
	return buf;
}

/* A number after "key": in a JSON object; -1 if absent. */
double json_num(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	return p ? atof(p + strlen(pat)) : -1;
}

/* ------------------------------------------------------------ addresses */

void addr(const char *s, __u8 out[16])
{
	char err[128];
	__u8 pl, fam;

	if (fb_prefix_parse(s, out, &pl, &fam, err, sizeof(err)) || pl != 128) {
		fprintf(stderr, "test bug: bad address '%s'\n", s);
		abort();
	}
}

bool is_v4(const __u8 a[16])
{
	return test_is_v4(a);
}

/* Byte i of the mask of a 128-bit-space prefix length. */
static __u8 mask_byte(int plen, int i)
{
	int keep = plen - 8 * i;

	return keep >= 8 ? 0xff : keep <= 0 ? 0 : (__u8)(0xff << (8 - keep));
}

/* The family of a packet carrying address a, where the test does not say:
 * IPv4 for ::ffff:a.b.c.d. */
__u8 fam_of(const __u8 a[16])
{
	return is_v4(a) ? FB_FAMILY_IPV4 : FB_FAMILY_IPV6;
}

/* The documented semantics: same family, equal under the mask. fam: the
 * family of the packet carrying a. */
bool ref_inside_fam(const struct pfx *p, const __u8 a[16], __u8 fam)
{
	int i;

	if (p->fam != fam)
		return false;
	for (i = 0; i < 16; i++) {
		__u8 m = mask_byte(p->plen, i);

		if ((a[i] & m) != p->a[i])
			return false;
	}
	return true;
}

bool ref_inside(const struct pfx *p, const __u8 a[16])
{
	return ref_inside_fam(p, a, fam_of(a));
}

void pfx_text(const struct pfx *p, char *buf, size_t len)
{
	char t[INET6_ADDRSTRLEN];

	if (p->fam == FB_FAMILY_IPV6 && is_v4(p->a)) {
		/* All hex: the IPv6 spelling of ::ffff:0:0/96 (flow.c). */
		snprintf(buf, len, "::ffff:%x:%x/%d", p->a[12] << 8 | p->a[13],
			 p->a[14] << 8 | p->a[15], p->plen);
	} else if (p->fam == FB_FAMILY_IPV4) {
		inet_ntop(AF_INET, p->a + 12, t, sizeof(t));
		snprintf(buf, len, "%s/%d", t, p->plen - 96);
	} else {
		inet_ntop(AF_INET6, p->a, t, sizeof(t));
		snprintf(buf, len, "%s/%d", t, p->plen);
	}
}

void addr_text(const __u8 a[16], char *buf, size_t len)
{
	if (is_v4(a))
		inet_ntop(AF_INET, a + 12, buf, len);
	else
		inet_ntop(AF_INET6, a, buf, len);
}

/* A random address inside p. */
void rand_in(const struct pfx *p, uint64_t *seed, __u8 out[16])
{
	uint64_t r[2] = { test_rand64(seed), test_rand64(seed) };
	const __u8 *rb = (const __u8 *)r;
	int i;

	for (i = 0; i < 16; i++) {
		__u8 m = mask_byte(p->plen, i);

		out[i] = (p->a[i] & m) | (rb[i] & ~m);
	}
}

/* The first (last = 0) or last address of p. */
void edge_of(const struct pfx *p, int last, __u8 out[16])
{
	int i;

	for (i = 0; i < 16; i++) {
		__u8 m = mask_byte(p->plen, i);

		out[i] = last ? (p->a[i] | (__u8)~m) : (p->a[i] & m);
	}
}

/* A random prefix of length len (IPv4 /len, or IPv6 /len under 2000::/3). */
void rand_pfx(uint64_t *seed, int v4, int len, struct pfx *p)
{
	struct pfx all = { .plen = v4 ? 96 : 3, .fam = v4 ? FB_FAMILY_IPV4 : FB_FAMILY_IPV6 };

	if (v4)
		all.a[10] = all.a[11] = 0xff;
	else
		all.a[0] = 0x20;
	rand_in(&all, seed, p->a);
	p->plen = v4 ? 96 + len : len;
	p->fam = all.fam;
	edge_of(p, 0, p->a); /* mask to the length */
}

/* ----------------------------------------------------------- the program */

bool prog_load(struct prog *pg, const struct fb_store *f)
{
	struct fb_load_opts o = { .trace = true, .private_stats = true, .action = FB_ACTION_DROP };

	pg->skel = fb_load(f, &o);
	if (!pg->skel)
		return false;
	pg->fd = bpf_program__fd(pg->skel->progs.flowbloom);
	pg->trace_fd = bpf_map__fd(pg->skel->maps.fb_trace);
	pg->stats_fd = bpf_map__fd(pg->skel->maps.fb_stats);
	return true;
}

void prog_unload(struct prog *pg)
{
	if (pg->skel)
		flowbloom_bpf__destroy(pg->skel);
	pg->skel = NULL;
}

/* Send one UDP packet src -> dst of family fam; returns the verdict and
 * the matched kind from the trace record, or -1 if test_run failed. */
int send_pkt_fam(const struct prog *pg, const __u8 src[16], const __u8 dst[16], __u8 fam,
		 __u32 *kind)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .repeat = 1);
	struct fb_key k = { .proto = 17, .kind = FB_KIND_FLOW, .family = fam };
	uint8_t frame[128];
	struct fb_trace tr;
	__u32 zero = 0;

	memcpy(k.saddr, src, 16);
	memcpy(k.daddr, dst, 16);
	k.sport = htons(40000);
	k.dport = htons(53);
	t.data_in = frame;
	t.data_size_in = test_build_frame(&k, frame);
	if (bpf_prog_test_run_opts(pg->fd, &t) || bpf_map_lookup_elem(pg->trace_fd, &zero, &tr)) {
		test_runs_failed++;
		return -1;
	}
	*kind = tr.kind;
	return (int)t.retval;
}

/* The same, of the family the source address reads as. */
int send_pkt(const struct prog *pg, const __u8 src[16], const __u8 dst[16], __u32 *kind)
{
	return send_pkt_fam(pg, src, dst, fam_of(src), kind);
}

__u64 nofilter_packets(const struct prog *pg)
{
	struct fb_stats s;

	return fb_stats_read_fd(pg->stats_fd, "test", &s) ? 0 : s.c[FB_STAT_NOFILTER].packets;
}

/* The "other" address of a packet: same family, fixed. */
const __u8 *other_of(const __u8 a[16])
{
	static __u8 o4[16], o6[16];
	static bool init;

	if (!init) {
		addr("203.0.113.77", o4);
		addr("2001:db8:ffff::77", o6);
		init = true;
	}
	return is_v4(a) ? o4 : o6;
}
