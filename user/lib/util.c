// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Small helpers the library shares. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "flowbloom/geometry.h"
#include "flowbloom/hash.h"
#include "flowbloom/key.h"
#include "flowbloom/maps.h"
#include "report.h"
#include "util.h"

__u32 fb_map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

int fb_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* [0] is no value a user names (FB_*_DEFAULT or unused), so table + 1 is
 * the NULL-terminated list of choices in value order. */
const char *const fb_layout_names[4] = {
	[FB_LAYOUT_BLOCKED] = "blocked", [FB_LAYOUT_CLASSIC] = "classic"
};
const char *const fb_hash_names[6] = { [FB_HASH_SIPHASH13] = "siphash13",
				       [FB_HASH_SIPHASH24] = "siphash24",
				       [FB_HASH_NH] = "nh-v1",
				       [FB_HASH_NHK] = "nh" };
/* What create and a NAME.conf may ask for: nh-v1 only reads old filters. */
const char *const fb_hash_choices[4] = { "siphash13", "siphash24", "nh", NULL };
const int fb_hash_choice_values[3] = { FB_HASH_SIPHASH13, FB_HASH_SIPHASH24, FB_HASH_NHK };

/* The hash a filter gets when none is asked for: NH for block-lists and
 * monitoring, SipHash-1-3 (a PRF) for allow-lists, which an attacker may
 * probe adaptively (docs/design.md, "Choosing the hash"). */
int fb_hash_default(int action)
{
	return action == FB_ACTION_ALLOW ? FB_HASH_SIPHASH13 : FB_HASH_NHK;
}
const char *const fb_action_names[5] = {
	[FB_ACTION_DROP] = "drop", [FB_ACTION_ALLOW] = "allow", [FB_ACTION_MONITOR] = "monitor"
};
const char *const fb_malformed_names[4] = {
	[FB_MALFORMED_PASS] = "pass", [FB_MALFORMED_DROP] = "drop"
};
const char *const fb_kind_names[FB_KIND_MAX + 1] = { [FB_KIND_FLOW] = "flow",
						     [FB_KIND_SRC] = "src",
						     [FB_KIND_DST] = "dst",
						     [FB_KIND_MASK] = "shape" };
const char *const fb_verdict_names[XDP_REDIRECT + 1] = {
	[XDP_ABORTED] = "aborted", [XDP_DROP] = "drop",		[XDP_PASS] = "pass",
	[XDP_TX] = "tx",	   [XDP_REDIRECT] = "redirect",
};
const char *const fb_stat_names[FB_STAT_NR] = {
	[FB_STAT_SEEN] = "seen",	   [FB_STAT_MATCHED] = "matched",
	[FB_STAT_DROPPED] = "dropped",	   [FB_STAT_PASSED] = "passed",
	[FB_STAT_NONIP] = "non_ip",	   [FB_STAT_FRAGMENT] = "fragments",
	[FB_STAT_MALFORMED] = "malformed", [FB_STAT_HIT_FLOW] = "hit_flow",
	[FB_STAT_HIT_SRC] = "hit_src",	   [FB_STAT_HIT_DST] = "hit_dst",
	[FB_STAT_NOFILTER] = "no_filter",  [FB_STAT_UNCONFIRMED] = "unconfirmed",
	[FB_STAT_HIT_MASK] = "hit_shape",
};

/* Filter types: [0] is the Bloom filter, named like the others. */
const char *const fb_type_names[5] = {
	[FB_TYPE_BLOOM] = "bloom",
	[FB_TYPE_CUCKOO] = "cuckoo",
	[FB_TYPE_DLEFT] = "dleft",
	[FB_TYPE_SCALABLE] = "scalable",
};

const char *fb_name_or(const char *const *table, size_t n, unsigned v, const char *none)
{
	return v < n && table[v] ? table[v] : none;
}

const char *fb_stat_name(int i)
{
	return i >= 0 ? FB_NAME_OR(fb_stat_names, (unsigned)i, "unnamed") : "unnamed";
}

int fb_parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	/* strtoull() would skip blanks and take a sign (" -5" is 2^64 - 5). */
	errno = 0;
	if (*s < '0' || *s > '9')
		return -1;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int fb_parse_dec(const char *s, size_t n, unsigned long max, unsigned long *v)
{
	size_t i;

	*v = 0;
	if (!n || (s[0] == '0' && n > 1))
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (unsigned long)(s[i] - '0');
		if (*v > max)
			return -1;
	}
	return 0;
}

int fb_parse_real_prefix(const char *s, double *v, const char **end)
{
	char *e;
	size_t n = strspn(s, "0123456789.eE+-");

	if ((*s < '0' || *s > '9') && (*s != '.' || s[1] < '0' || s[1] > '9'))
		return -1;
	errno = 0;
	*v = strtod(s, &e);
	/* What strtod took must be all decimal: 0x1p-4 stops at x otherwise. */
	if (errno || e == s || (size_t)(e - s) > n || !isfinite(*v))
		return -1;
	*end = e;
	return 0;
}

int fb_parse_real(const char *s, double *v)
{
	const char *end;

	return fb_parse_real_prefix(s, v, &end) || *end ? -1 : 0;
}

double fb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

char *fb_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

char *fb_conf_text(char *s, int n)
{
	char *hash;

	/* A UTF-8 byte order mark some editors write first: not text. */
	if (n == 1 && !strncmp(s, "\xef\xbb\xbf", 3))
		s += 3;
	hash = strchr(s, '#');
	if (hash)
		*hash = 0;
	return fb_trim(s);
}

const char *fb_printable(const char *s, char *buf, size_t len)
{
	return fb_escape(s, buf, len, false);
}

const char *fb_netns_entered;

int fb_ns_open(const char *path, struct stat *st)
{
	int pfd = open(path, O_PATH | O_CLOEXEC), fd = -1, e;
	char self[32];
	struct statfs sfs;

	if (pfd < 0)
		return -1;
	if (fstatfs(pfd, &sfs) || fstat(pfd, st))
		goto out;
	if (sfs.f_type != NSFS_MAGIC) {
		errno = EINVAL;
		goto out;
	}
	/* The very file looked at: pfd holds it. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
out:
	e = errno;
	close(pfd);
	errno = e;
	return fd;
}

int fb_enter_netns(const char *name)
{
	char path[sizeof("/run/netns/") + NAME_MAX];
	struct stat st;
	int fd = -1, n;

	/* A name cut to fit would be another namespace's (the one named by
	 * its start): refused, as one the kernel could not have named. */
	n = snprintf(path, sizeof(path), "/run/netns/%s", name);
	if (!*name || n < 0 || (size_t)n >= sizeof(path))
		errno = !*name ? ENOENT : ENAMETOOLONG;
	else
		fd = fb_ns_open(path, &st);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fb_report_err("cannot enter network namespace '%s': %s", name,
			      errno == EINVAL ? "not a network namespace" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	fb_netns_entered = name;
	return 0;
}

int fb_link_type(const char *dev)
{
	struct ifreq ifr;
	int fd, e;

	if (strlen(dev) >= sizeof(ifr.ifr_name)) {
		errno = ENODEV;
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, dev, strlen(dev));
	/* Any socket of this namespace asks its devices; a local one needs
	 * no protocol family to be there. */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	e = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	return e ? -1 : ifr.ifr_hwaddr.sa_family;
}

bool fb_link_ethernet(int type)
{
	return type == ARPHRD_ETHER || type == ARPHRD_LOOPBACK;
}

void fb_link_describe(int type, char *buf, size_t len)
{
	static const struct {
		int type;
		const char *name, *what;
	} known[] = {
		{ ARPHRD_ETHER, "ether", "Ethernet" },
		{ ARPHRD_LOOPBACK, "loopback", "loopback" },
		{ ARPHRD_NONE, "none", "a layer-3 device such as tun or WireGuard" },
		{ ARPHRD_TUNNEL, "ipip", "an IP tunnel" },
		{ ARPHRD_TUNNEL6, "tunnel6", "an IP tunnel" },
		{ ARPHRD_SIT, "sit", "an IP tunnel" },
		{ ARPHRD_IPGRE, "gre", "an IP tunnel" },
		{ 823 /* ARPHRD_IP6GRE, not in glibc's list */, "gre6", "an IP tunnel" },
		{ ARPHRD_PPP, "ppp", "a PPP link" },
		{ ARPHRD_RAWIP, "rawip", "a layer-3 device" },
		{ ARPHRD_INFINIBAND, "infiniband", "InfiniBand" },
	};
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].type == type) {
			snprintf(buf, len, "link/%s: %s", known[i].name, known[i].what);
			return;
		}
	snprintf(buf, len, "link type %d: not Ethernet", type);
}
