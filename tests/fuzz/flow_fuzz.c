// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The FLOW grammar (user/lib/rules/flow.c, rule.c) on one line of text, as
 * the BGP state file and a list's FLOW lines (`load`, `-f FILE`) read it:
 * fb_flow_parse_line_keys() and fb_flow_parse_line(), and fb_prefix_parse()
 * on the line's first word. What must hold of an accepted line: every key it makes is a rule
 * the data path can match (fb_rules_valid), at most FB_RULE_KEYS_MAX of
 * them, and each key printed (fb_flow_format) reads back as exactly that
 * one key; the one-key reader agrees with the many-key one. A refusal
 * says why. A prefix that parses is masked to its length, in its family.
 */
#include "fuzz.h"
#include "rules/flow.h"
#include "rules/rules.h"

static void check_key(const struct fb_key *k, const char *line)
{
	struct fb_key again[FB_RULE_KEYS_MAX];
	char text[FB_FLOW_STR], copy[FB_FLOW_STR], why[256], err[256];
	size_t n;
	int blank;

	FUZZ_ASSERT(!fb_rules_valid(k, why, sizeof(why)), "'%s' made an invalid rule: %s", line,
		    why);
	fb_flow_format(k, text, sizeof(text));
	FUZZ_ASSERT(strlen(text) < sizeof(text) - 1, "'%s': its FLOW text '%s' was cut", line,
		    text);
	memcpy(copy, text, sizeof(copy));
	FUZZ_ASSERT(!fb_flow_parse_line_keys(copy, again, &n, &blank, err, sizeof(err)),
		    "'%s' printed as '%s', which does not parse: %s", line, text, err);
	FUZZ_ASSERT(!blank && n == 1 && !memcmp(&again[0], k, sizeof(*k)),
		    "'%s' printed as '%s', which reads back as %zu other keys", line, text, n);
}

static void check_prefix(const char *word)
{
	__u8 addr[16], plen, family;
	char err[256];
	int i;

	if (fb_prefix_parse(word, addr, &plen, &family, err, sizeof(err))) {
		FUZZ_ASSERT(err[0], "'%s' refused without a reason", word);
		return;
	}
	FUZZ_ASSERT(plen <= 128, "'%s': length %u", word, plen);
	FUZZ_ASSERT(family == FB_FAMILY_IPV6 || (plen >= 96 && fb_addr_v4mapped(addr)),
		    "'%s': an IPv4 prefix of length %u outside ::ffff:0:0/96", word, plen);
	for (i = 0; i < 16; i++) {
		int keep = (int)plen - 8 * i;
		__u8 mask = keep >= 8 ? 0xff : keep <= 0 ? 0 : (__u8)(0xff << (8 - keep));

		FUZZ_ASSERT(!(addr[i] & ~mask), "'%s': bits set past /%u", word, plen);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_key keys[FB_RULE_KEYS_MAX], one;
	char *line, *copy, *word, err[256] = "", err1[256] = "";
	size_t n, i;
	int blank, blank1, rc, rc1, icmp_other;

	fuzz_silence();
	if (size > FB_LINE_MAX)
		return -1;
	line = fuzz_cstr(data, size);
	if (!line)
		return -1;
	copy = strdup(line);
	if (!copy)
		abort();
	rc = fb_flow_parse_line_keys(copy, keys, &n, &blank, err, sizeof(err));
	if (rc) {
		FUZZ_ASSERT(rc == -1 && err[0], "'%s' refused (%d) without a reason", line, rc);
	} else if (!blank) {
		FUZZ_ASSERT(n >= 1 && n <= FB_RULE_KEYS_MAX, "'%s' made %zu keys", line, n);
		for (i = 0; i < n; i++)
			check_key(&keys[i], line);
	}
	/* The one-key reader: the same verdict, one key or a refusal; but it
	 * reads back what flowbloom wrote, so an ICMP name of the other
	 * family, which the operator's reader refuses, it takes (as the
	 * protocol's number). */
	strcpy(copy, line);
	rc1 = fb_flow_parse_line(copy, &one, &blank1, err1, sizeof(err1));
	icmp_other = rc && strstr(err, "ICMP") && strstr(err, "and these addresses are");
	FUZZ_ASSERT(icmp_other || rc1 == ((rc || (!blank && n != 1)) ? -1 : 0),
		    "'%s': %d keys reader %d, one %d", line, rc ? -1 : (int)n, rc, rc1);
	if (icmp_other) {
		free(copy);
		free(line);
		return 0;
	}
	FUZZ_ASSERT(rc1 || blank1 == blank, "'%s': blank %d and %d", line, blank, blank1);
	FUZZ_ASSERT(rc1 || blank || !memcmp(&one, &keys[0], sizeof(one)),
		    "'%s': the one-key reader made another key", line);
	/* The first word as an address or prefix (a list's line, --never). */
	strcpy(copy, line);
	word = strtok(copy, " \t\r\n");
	if (word)
		check_prefix(word);
	free(copy);
	free(line);
	return 0;
}
