// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The path and rule tables' life (bgp.h): made empty under a hash key of
 * their own, and freed with every path, rule and stale count they hold.
 * The tables themselves, and what a line does to them, are bgp.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "fleet/bgp.h"
#include "fleet/bgp_int.h"
#include "report.h"

/*
 * The tables' hash key, from the kernel's random pool. Never a fallback
 * from the clock, the pid and an address: a key a peer can guess (a boot's
 * first seconds, a pid among a few hundred) lets it choose colliding ids
 * again. Before the pool is ready (early boot: the unit may start ExaBGP
 * first) the call waits for it, as every other key and file name of
 * flowbloom does (the state file's first write would wait the same); on
 * this kernel that is well under a second after boot. Said when it waits,
 * so a slow start has its reason on stderr. 0, or -1 reported.
 */
static int draw_key(__u64 *key, size_t len)
{
	unsigned flags = GRND_NONBLOCK;
	size_t got = 0;
	ssize_t r;

	while (got < len) {
		r = getrandom((char *)key + got, len - got, flags);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN && flags) {
			fb_report(FB_REPORT_NOTE, "bgp: the kernel's random pool is not ready yet "
						  "(early boot): waiting for it to key the path "
						  "table's hash");
			flags = 0;
			continue;
		}
		fb_report_err("cannot draw the key of the path table's hash: getrandom: %s",
			      r < 0 ? strerror(errno) : "no bytes");
		return -1;
	}
	return 0;
}

int fb_bgp_init(struct fb_bgp *b, const struct fb_bgp_opts *o)
{
	memset(b, 0, sizeof(*b));
	b->o = *o;
	if (draw_key(b->hkey, sizeof(b->hkey)))
		return -1;
	b->nbuckets = 1024;
	b->paths = calloc(b->nbuckets, sizeof(*b->paths));
	b->rules = calloc(b->nbuckets, sizeof(*b->rules));
	if (!b->paths || !b->rules) {
		free(b->paths);
		free(b->rules);
		fb_report_err("out of memory");
		return -1;
	}
	return 0;
}

void fb_bgp_free(struct fb_bgp *b)
{
	size_t i;

	for (i = 0; i < b->nbuckets; i++) {
		while (b->paths[i]) {
			struct fb_bgp_path *p = b->paths[i];

			b->paths[i] = p->next;
			free(p->peer);
			free(p);
		}
		while (b->rules[i]) {
			struct fb_bgp_rule *r = b->rules[i];

			b->rules[i] = r->next;
			free(r);
		}
	}
	fb_bgp_stale_free(b);
	free(b->paths);
	free(b->rules);
	free(b->add);
	free(b->del);
	free(b->talk);
	memset(b, 0, sizeof(*b));
}
