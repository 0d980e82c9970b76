/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Small helpers the library and the CLI share (util.c): one of each.
 */
#ifndef FLOWBLOOM_USER_UTIL_H
#define FLOWBLOOM_USER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <linux/types.h>
#include "flowbloom/maps.h"

/* The kernel id of BPF map fd (0 if unknown). */
__u32 fb_map_id(int fd);
/* qsort() comparison of two char * (names). */
int fb_cmp_str(const void *a, const void *b);

/* Names users type and see, indexed by enum value (NULL: none). For the
 * enums starting at 1, table + 1 is the NULL-terminated list of choices. */
extern const char *const fb_layout_names[4]; /* enum fb_layout */
extern const char *const fb_hash_names[6];   /* enum fb_hash_alg */
extern const char *const fb_hash_choices[4]; /* create's --hash values */
extern const int fb_hash_choice_values[3];
int fb_hash_default(int action);		    /* enum fb_action -> enum fb_hash_alg */
extern const char *const fb_action_names[5];	    /* enum fb_action */
extern const char *const fb_malformed_names[4];	    /* enum fb_malformed */
extern const char *const fb_kind_names[6];	    /* enum fb_kind (FB_KIND_MAX + 1) */
extern const char *const fb_verdict_names[5];	    /* XDP_ABORTED .. XDP_REDIRECT */
extern const char *const fb_stat_names[FB_STAT_NR]; /* enum fb_stat */
extern const char *const fb_type_names[5];	    /* enum fb_type (FB_TYPE_MAX + 1) */
/* table[v], or none if v is out of the table or unnamed. */
const char *fb_name_or(const char *const *table, size_t n, unsigned v, const char *none);
#define FB_NAME_OR(table, v, none) fb_name_or(table, sizeof(table) / sizeof((table)[0]), v, none)
#define FB_NAME(table, v) FB_NAME_OR(table, v, "?")
/* A counter's name in `stats` and `metrics` ("unnamed" for none). */
const char *fb_stat_name(int i);

/* A decimal unsigned number, all of s (no sign, no junk, no overflow):
 * 0, or -1 with nothing printed. */
int fb_parse_u64(const char *s, unsigned long long *v);
/* A number of a rule (protocol, port, prefix length): the n bytes at s,
 * decimal digits only, without a leading zero (iproute2 reads /024 as
 * octal /20, iptables port 053 as 43: neither reading is safe to guess),
 * at most max. 0, or -1 with nothing printed. */
int fb_parse_dec(const char *s, size_t n, unsigned long max, unsigned long *v);
/* A decimal real number at the start of s, in the form an operator writes
 * it (digits, a point, an exponent: 0.01, .5, 1e-3), not strtod's others
 * (a sign, leading blanks, hexadecimal 0x1p-4, inf, nan). *end is where it
 * stops; 0, or -1 with nothing printed. */
int fb_parse_real_prefix(const char *s, double *v, const char **end);
/* The same, all of s. */
int fb_parse_real(const char *s, double *v);
/* CLOCK_MONOTONIC in seconds: for elapsed times. */
double fb_now(void);
/* s without its leading blanks and trailing blanks and line end (cut in
 * place). */
char *fb_trim(char *s);
/* The text of a configuration file's line number n (from 1): without a
 * UTF-8 byte-order mark on line 1, a '#' comment and blanks (cut in
 * place); "" for a line with nothing to read. */
char *fb_conf_text(char *s, int n);

/* A name for a terminal, in buf: fb_escape() (report.h), a tab escaped
 * too. For names the kernel holds and others chose (a device's, which
 * root in a container's namespace sets; a process's, which the process
 * sets): an escape sequence in one could rewrite what the operator's
 * screen shows. buf of FB_ESCAPED_SIZE(the name's size) holds it all. */
const char *fb_printable(const char *s, char *buf, size_t len);

/* The namespace file at path (following links: /proc/PID/ns/net,
 * /proc/PID/fd/N), opened for setns() without opening anything else: the
 * path is looked at with O_PATH, and only a file of nsfs is opened, by
 * its descriptor's /proc/self/fd link (O_NONBLOCK, O_NOCTTY). Whatever a
 * process puts there meanwhile (a FIFO, whose open waits for a writer; a
 * device or a terminal, whose open acts) is never opened. A descriptor,
 * what it is in *st; -1 with errno (EINVAL: no namespace file). */
int fb_ns_open(const char *path, struct stat *st);

/* Like `ip -n`: enter the named network namespace (/run/netns/NAME), and
 * only that: `ip netns exec` also remounts /sys, which hides bpffs and
 * with it every filter. 0, or -1 reported. */
int fb_enter_netns(const char *name);
/* The namespace fb_enter_netns() entered; NULL: the one the process
 * started in. */
extern const char *fb_netns_entered;

/* DEV's link type (ARPHRD_*, what `ip link` shows as link/ether,
 * link/none, ...), asked of the kernel in the current network namespace
 * (/sys/class/net is the namespace sysfs was mounted in, not the one `-n`
 * enters). -1 (errno set, nothing printed) if it cannot be asked. */
int fb_link_type(const char *dev);
/* Do a device's frames reach XDP with an Ethernet header, the only link
 * header the program parses? Ethernet (ARPHRD_ETHER: NICs, veth, tap,
 * bridges, bonds, VLAN, macvlan, VXLAN devices) and loopback (its frames
 * carry an Ethernet header of zero addresses). A layer-3 device (tun,
 * WireGuard, IP tunnels, PPP) hands XDP the IP header itself. */
bool fb_link_ethernet(int type);
/* The link type as `ip link` names it and what it is, for messages:
 * "link/none: a layer-3 device such as tun or WireGuard". */
void fb_link_describe(int type, char *buf, size_t len);

#endif
