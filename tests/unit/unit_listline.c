// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_unit, the list line reader's own string work against the libc calls
 * it replaces (user/lib/rules/lists.c, flow.c): every line of a file goes
 * through it, so it splits words, reads dotted IPv4 and names protocols
 * by hand. Each must take and refuse exactly what the libc call did:
 * - fb_ipv4_parse against inet_pton(AF_INET) (leading zeros, 256, a part
 *   too many or too few, stray dots and signs);
 * - fb_list_parse_line of a line against the same of its words as
 *   strcspn("#;") and strtok_r(" \t\r\n") split them, joined by single
 *   blanks: the same keys or the same error, on generated lines of every
 *   entry form with tabs, CR, comments and malformed words;
 * - fb_proto_parse against strcasecmp over the names fb_proto_name knows.
 */
#include <ctype.h>
#include "unit.h"
#include "rules/lists.h"
#include "util.h"

static const char *const octets[] = {
	"0",   "1",   "9",   "10",  "00",  "01",   "001", "010", "99", "100", "199", "200",
	"249", "250", "255", "256", "260", "1000", "-1",  "+1",	 " 1", "a",   "0x1", "",
};
#define NOCT (sizeof(octets) / sizeof(octets[0]))

static void check_ipv4(const char *s, unsigned *bad)
{
	struct in_addr a;
	__u8 b[4];
	int want = inet_pton(AF_INET, s, &a) == 1, got = !fb_ipv4_parse(s, b);

	if (got != want || (got && memcmp(b, &a, 4))) {
		if (++*bad <= 5)
			test_check(false, "fb_ipv4_parse is inet_pton(AF_INET)", s);
	}
}

static void test_ipv4(void)
{
	const char alpha[] = "0123456789.";
	uint64_t seed = 1;
	unsigned bad = 0;
	size_t a, b, c, d, i, j;
	char s[64];

	/* Four parts of every kind, and three and five of most. */
	for (a = 0; a < NOCT; a++)
		for (b = 0; b < NOCT; b++)
			for (c = 0; c < NOCT; c++)
				for (d = 0; d < NOCT; d++) {
					snprintf(s, sizeof(s), "%s.%s.%s.%s", octets[a], octets[b],
						 octets[c], octets[d]);
					check_ipv4(s, &bad);
					if (d < 4) {
						snprintf(s, sizeof(s), "%s.%s.%s", octets[a],
							 octets[b], octets[c]);
						check_ipv4(s, &bad);
						snprintf(s, sizeof(s), "%s.%s.%s.%s.%s", octets[a],
							 octets[b], octets[c], octets[d],
							 octets[d]);
						check_ipv4(s, &bad);
					}
				}
	/* Strings of digits and dots. */
	for (i = 0; i < 300000; i++) {
		size_t n = test_rand64(&seed) % 18;

		for (j = 0; j < n; j++)
			s[j] = alpha[test_rand64(&seed) % (sizeof(alpha) - 1)];
		s[n] = 0;
		check_ipv4(s, &bad);
	}
	ASSERT_EQ(bad, 0, "fb_ipv4_parse takes exactly what inet_pton(AF_INET) takes");
}

/* The words a line's parts are drawn from: every entry form, good and bad. */
static const char *const parts[] = {
	"udp",
	"UDP",
	"Tcp",
	"icmp",
	"ICMPv6",
	"ipv6-icmp",
	"gre",
	"17",
	"017",
	"256",
	"any",
	"proto",
	"src",
	"dst",
	"sport",
	"dport",
	"create",
	"-",
	"198.51.100.7",
	"198.51.100.07",
	"198.51.100.256",
	"198.51.100.0/24",
	"198.51.100.1/24",
	"198.51.100.0/33",
	"203.0.113.9/024",
	"198.51.100.10-198.51.100.20",
	"198.51.100.20-198.51.100.10",
	"2001:db8::1",
	"2001:DB8::/32",
	"::ffff:198.51.100.5",
	"::FFFF:c633:6405",
	"2001:db8::1-2001:db8::ff",
	"198.51.100.1:53",
	"198.51.100.1:0",
	"198.51.100.1:65535",
	"198.51.100.1:65536",
	"198.51.100.1:053",
	"203.0.113.7:4000",
	"[2001:db8::1]:443",
	"[2001:db8::2]",
	"[198.51.100.1]:5",
	"1.2.3.4::5",
	"53",
	"1024-65535",
	"80-79",
	"0-65535",
};
#define PORTS (NPARTS - 4)
#define NPARTS (sizeof(parts) / sizeof(parts[0]))
/* Where each kind of word starts in parts. */
#define PROTOS 11
#define KWS 11
#define ADDRS 18
#define EPS 32

/* Word j of n: mostly of the form n words make (an address, PROTO SRC
 * DST, PROTO FIELD VALUE), else any. */
static const char *part(size_t n, size_t j, uint64_t *seed)
{
	uint64_t r = test_rand64(seed);

	if (r % 4 == 0)
		return parts[r / 4 % NPARTS];
	r /= 4;
	if (n == 1)
		return parts[ADDRS + r % (NPARTS - ADDRS)];
	if (j == 0)
		return parts[r % PROTOS];
	if (n == 3)
		return parts[EPS + r % (PORTS - EPS)];
	if (j % 2)
		return parts[KWS + r % (ADDRS - KWS)];
	return parts[ADDRS + r % (NPARTS - ADDRS)];
}

struct keys {
	struct fb_key k[4 * FB_RULE_KEYS_MAX];
	size_t n;
};

static int keep(const struct fb_key *k, void *ctx, char *err, size_t errlen)
{
	struct keys *ks = ctx;

	if (ks->n == sizeof(ks->k) / sizeof(ks->k[0])) {
		snprintf(err, errlen, "test: too many keys");
		return -1;
	}
	ks->k[ks->n++] = *k;
	return 0;
}

/* line's words as the reader before split them, one blank between. */
static void old_words(const char *line, char *out, size_t len)
{
	char buf[512], *save = NULL, *w;
	size_t o = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	buf[strcspn(buf, "#;")] = 0;
	*out = 0;
	for (w = strtok_r(buf, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save))
		o += (size_t)snprintf(out + o, len - o, "%s%s", o ? " " : "", w);
}

static void test_words(void)
{
	static const char *const blanks[] = { " ", " ", " ", "\t", "  ", " \t ", "\r", "\n" };
	static const size_t counts[] = { 0, 1, 1, 1, 2, 3, 3, 3, 4, 6 };
	static const char *const ends[] = { "", "", "", "\r", " ", "# c", " ; SBL1", "#", ";x y" };
	static struct keys a, b;
	char line[512], canon[512], ea[256], eb[256];
	uint64_t seed = 7;
	unsigned bad = 0, taken = 0;
	size_t i, j;

	for (i = 0; i < 200000; i++) {
		size_t n = counts[test_rand64(&seed) % 10], o = 0;
		int ra, rb;

		if (test_rand64(&seed) % 2)
			o += (size_t)snprintf(line, sizeof(line), "%s",
					      test_rand64(&seed) % 2 ? "\t" : " ");
		for (j = 0; j < n; j++)
			o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s",
					      j ? blanks[test_rand64(&seed) % 8] : "",
					      part(n, j, &seed));
		snprintf(line + o, sizeof(line) - o, "%s", ends[test_rand64(&seed) % 9]);
		if (test_rand64(&seed) % 16 == 0) {
			/* A comment mark inside a word. */
			o = strlen(line);
			if (o)
				line[test_rand64(&seed) % o] = test_rand64(&seed) % 2 ? '#' : ';';
		}
		if (test_rand64(&seed) % 64 == 0) {
			/* More words than an entry takes. */
			o = strlen(line);
			for (j = 0; j < FB_FLOW_WORDS && o < 400; j++)
				o += (size_t)snprintf(line + o, sizeof(line) - o, " src");
		}
		old_words(line, canon, sizeof(canon));
		a.n = b.n = 0;
		*ea = *eb = 0;
		ra = fb_list_parse_line(line, keep, &a, ea, sizeof(ea));
		rb = fb_list_parse_line(canon, keep, &b, eb, sizeof(eb));
		taken += !ra && a.n;
		if (ra != rb || a.n != b.n || memcmp(a.k, b.k, a.n * sizeof(a.k[0])) ||
		    (ra && strcmp(ea, eb))) {
			if (++bad <= 5)
				test_check(false, "fb_list_parse_line splits as strtok_r did",
					   canon);
		}
	}
	ASSERT_EQ(bad, 0, "fb_list_parse_line: a line and its words one blank apart agree");
	fprintf(stderr, "taken %u\n", taken);
	ASSERT_TRUE(taken > 10000, "the generated lines include many accepted entries");
}

/* fb_proto_parse as it was: strcasecmp over the names, else a number. */
static int old_proto(const char *s)
{
	unsigned long v;
	int p;

	if (!strcasecmp(s, "ipv6-icmp"))
		return 58;
	for (p = 0; p < 256; p++)
		if (fb_proto_name(p) && !strcasecmp(s, fb_proto_name(p)))
			return p;
	return fb_parse_dec(s, strlen(s), 255, &v) ? -1 : (int)v;
}

static void test_protos(void)
{
	static const char *const more[] = { "",	 "u", "ud",  "udpx", "i",   "ip", "ipv6",
					    "x", "0", "017", "255",  "256", "-1", "1a" };
	char w[32];
	unsigned bad = 0;
	int p, flip;
	size_t i, n;

	/* Every name in every mix of case. */
	for (p = 0; p < 257; p++) {
		const char *name = p < 256 ? fb_proto_name(p) : "ipv6-icmp";

		if (!name)
			continue;
		n = strlen(name);
		for (flip = 0; flip < 1 << n; flip++) {
			for (i = 0; i < n; i++)
				w[i] = (char)(flip >> i & 1 ? toupper(name[i]) : name[i]);
			w[n] = 0;
			if (fb_proto_parse(w) != old_proto(w) && ++bad <= 5)
				test_check(false, "fb_proto_parse is strcasecmp over the names", w);
		}
	}
	for (i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		if (fb_proto_parse(more[i]) != old_proto(more[i]) && ++bad <= 5)
			test_check(false, "fb_proto_parse is strcasecmp over the names", more[i]);
	for (i = 0; i < NPARTS; i++)
		if (fb_proto_parse(parts[i]) != old_proto(parts[i]) && ++bad <= 5)
			test_check(false, "fb_proto_parse is strcasecmp over the names", parts[i]);
	ASSERT_EQ(bad, 0, "fb_proto_parse names what strcasecmp over the names did");
}

void test_list_line(void)
{
	test_ipv4();
	test_words();
	test_protos();
}
