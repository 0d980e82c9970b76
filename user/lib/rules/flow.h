/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * FLOW syntax, parsed into and printed from struct fb_key:
 *   PROTO SRC:PORT DST:PORT   e.g. udp 198.51.100.1:53 203.0.113.7:4000
 *                                  tcp [2001:db8::1]:443 [2001:db8::2]:51000
 *   src ADDR[/LEN] | dst ADDR[/LEN]
 *   PROTO|any|proto P  then clauses in any order (rule.c):
 *     src ADDR[/LEN] dst ADDR[/LEN] sport P[-Q] dport P[-Q]
 *                             e.g. udp dst 203.0.113.0/24 dport 53
 *                                  src 198.51.100.0/24 proto 6
 * PROTO is a name (tcp, udp, icmp, ...) or a number 0-255. Protocols without
 * ports (icmp, gre, ...) take bare addresses or port 0. A clause FLOW can be
 * several keys: port ranges become port prefixes, and a rule without an
 * address holds for both families.
 */
#ifndef FLOWBLOOM_USER_FLOW_H
#define FLOWBLOOM_USER_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include "flowbloom/key.h"
#include "flowbloom/proto.h" /* fb_proto_has_ports: which protocols carry ports */

#define FB_FLOW_STR 192
/* Most words in one FLOW (a protocol and five clauses of two). */
#define FB_FLOW_WORDS 12
/* Most keys one written rule may become (port ranges x families). */
#define FB_RULE_KEYS_MAX 64

/*
 * Parse one FLOW from argv[0..argc). On success returns the number of
 * words used (2 or 3). On failure returns -1 and writes a message to err.
 */
int fb_flow_parse(int argc, char **argv, struct fb_key *key, char *err, size_t errlen);
/* Any FLOW: its keys (at most FB_RULE_KEYS_MAX) in keys[0..*n); returns
 * the words used or -1. */
int fb_flow_parse_keys(int argc, char **argv, struct fb_key *keys, size_t *n, char *err,
		       size_t errlen);
/* The same within max keys (at most FB_RULE_KEYS_MAX): port ranges are
 * covered by port prefixes within that budget (a caller making copies of
 * the keys, as bgp does for TCP and UDP, keeps its own cap). */
int fb_flow_parse_keys_max(int argc, char **argv, size_t max, struct fb_key *keys, size_t *n,
			   char *err, size_t errlen);
/* Several FLOWs on a command line: the FLOW argv[0..used) is followed by
 * argv[used..argc). A FLOW of one protocol written as fields (`udp dport
 * 53`, `src A proto 6`) followed by a field given again (`dport 54`)
 * would start a rule of every protocol, not of that one: refused, with
 * what to write instead. 0, or -1 with err. */
int fb_flow_next_check(int argc, char **argv, int used, char *err, size_t errlen);
int fb_flow_parse_line_keys(char *line, struct fb_key *keys, size_t *n, int *blank, char *err,
			    size_t errlen);
/* The clause form from argv[0] (a clause keyword), proto preset (-1:
 * none), at most max keys; returns the words used or -1 (rule.c). */
int fb_rule_parse_max(int argc, char **argv, int proto, size_t max, struct fb_key *keys, size_t *n,
		      char *err, size_t errlen);
int fb_rule_keyword(const char *w);
/* A FB_KIND_MASK key: its descriptor (mask.h) and, if values, its fields
 * without the markers; the FLOW text of it; a shape's name for info and
 * replay --explain ("ipv4 proto dst/24 dport/16"). */
__u32 fb_mask_of_key(const struct fb_key *k, struct fb_key *values);
void fb_mask_format(const struct fb_key *k, char *buf, size_t len);
void fb_mask_name(__u32 desc, char *buf, size_t len);
/* Parse one whole line (exactly one FLOW, nothing after it). 0 ok, -1 err;
 * *blank set to 1 for blank and comment-only lines (key untouched). */
int fb_flow_parse_line(char *line, struct fb_key *key, int *blank, char *err, size_t errlen);
/* Format a key as FLOW text (round-trips through fb_flow_parse). */
void fb_flow_format(const struct fb_key *key, char *buf, size_t len);
/* ADDR or ADDR/LEN into a masked address, a 128-bit-space length and the
 * rule's family (enum fb_family: dotted a.b.c.d or ::ffff:a.b.c.d is IPv4,
 * hex is IPv6; a prefix shorter than /96 is IPv6). */
int fb_prefix_parse(const char *s, __u8 addr[16], __u8 *plen, __u8 *family, char *err,
		    size_t errlen);
/* The same, for a prefix written as field ("src", "dst") of a rule: one
 * with host bits set (203.0.113.1/24) is taken masked, as iptables takes
 * it, and noted in the sink fb_hostbits_watch() set, if any, for the
 * caller to tell (the library says nothing). */
int fb_prefix_parse_field(const char *field, const char *s, __u8 addr[16], __u8 *plen, __u8 *family,
			  char *err, size_t errlen);
/* Dotted a.b.c.d into out (network order) exactly as inet_pton(AF_INET)
 * takes it: four decimal parts of 0-255 without a leading zero, nothing
 * else. 0 ok, -1 not such an address (out then undefined). */
int fb_ipv4_parse(const char *s, __u8 out[4]);
#define FB_HOSTBITS_KEEP 4
struct fb_hostbits {
	unsigned long n;    /* prefixes with host bits set */
	unsigned long line; /* a line reader's: of the first one */
	struct {
		char written[80]; /* "src 203.0.113.1/24" */
		char taken[56];	  /* "203.0.113.0/24" */
	} first[FB_HOSTBITS_KEEP];
};
/* Note host bits into hb from now on (NULL: nowhere); returns the sink
 * set before. Per thread. */
struct fb_hostbits *fb_hostbits_watch(struct fb_hostbits *hb);
/* Protocol number from name or number; -1 if unknown. */
int fb_proto_parse(const char *s);
const char *fb_proto_name(int proto);
/* The same for a key of family (FB_FAMILY_*): NULL for ICMP of the other
 * family (protocol 1 over IPv6, 58 over IPv4), whose name would be read
 * back as the family's own ICMP and refused; such a key prints its number. */
const char *fb_proto_name_fam(int proto, int family);

/*
 * Line input (flow.c), behind every FILE the CLI reads: add/del/query/
 * traffic -f and load ("-": stdin), apply's and ipfix's configurations. Refuses directories; lines end at '\n'
 * and are at most FB_LINE_MAX bytes; a NUL byte, a read error or a pipe or
 * device giving more than FB_INPUT_MAX bytes is an error, as is a last line
 * without newline from anything but a regular file (a cut pipe). A leading
 * UTF-8 BOM is skipped. Errors are printed as "FILE:LINE: why".
 */
#define FB_LINE_MAX 8192
#define FB_INPUT_MAX (1ULL << 30)
struct fb_lines {
	int fd;
	bool is_stdin, regular, eof;
	const char *label; /* the file name, "<stdin>" for "-" */
	char *buf;
	size_t cap, start, end;
	size_t lineno;		  /* of the last line returned */
	size_t max;		  /* longest line taken: FB_LINE_MAX, or less if set */
	unsigned long long total; /* bytes read */
	struct timespec mtime;	  /* a regular file's, when opened */
	long long size;		  /* and its size then */
};
int fb_lines_open(struct fb_lines *r, const char *file);
/* The same on fd, open already (closed by fb_lines_close(), also when this
 * fails), its lines named label: for a caller that checked the file first. */
int fb_lines_fdopen(struct fb_lines *r, int fd, const char *label);
/* 1: a line (NUL-terminated, without its '\n') in *line; 0: end; -1: error. */
int fb_lines_next(struct fb_lines *r, char **line, size_t *len);
void fb_lines_close(struct fb_lines *r);

#endif
