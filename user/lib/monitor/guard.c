// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom guard`'s library side (see guard.h): addresses and their
 * lower limits from the sketch, the never-ban list, the pins beside BAN:
 * the counters, the bans in force, the routes announced (their holders:
 * guard_routes.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "flowbloom/prefix.h"
#include "monitor/guard.h"
#include "report.h"
#include "rules/flow.h"
#include "store/gens.h"
#include "store/pintree.h"
#include "types/bits.h"

/* The address rule of one side of a flow key: what a ban adds. */
static void addr_key(const struct fb_key *flow, bool by_dst, struct fb_key *k)
{
	int w = by_dst ? 2 : 0;

	fb_prefix_key(k, by_dst ? FB_KIND_DST : FB_KIND_SRC, flow->w[w], flow->w[w + 1], 128,
		      fb_key_word_family(flow->w[4]));
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(&((const struct fb_guard_addr *)a)->key,
		      &((const struct fb_guard_addr *)b)->key, sizeof(struct fb_key));
}

static int cmp_lo(const void *a, const void *b)
{
	const struct fb_guard_addr *x = a, *y = b;

	if (x->lo_packets != y->lo_packets)
		return x->lo_packets > y->lo_packets ? -1 : 1;
	if (x->lo_bytes != y->lo_bytes)
		return x->lo_bytes > y->lo_bytes ? -1 : 1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

int fb_guard_addresses(const struct fb_monitor *m, const struct fb_mon_snap *s,
		       const struct fb_mon_snap *base, bool by_dst, struct fb_guard_addr **out)
{
	__u64 np = s->packets - (base ? base->packets : 0),
	      nb = s->bytes - (base ? base->bytes : 0);
	double eps = fb_monitor_epsilon(m);
	/* eps' N rounded up: subtracting more only lowers the limit. */
	__u64 ep = (__u64)(eps * (double)np) + 1, eb = (__u64)(eps * (double)nb) + 1;
	struct fb_top_entry *e = NULL;
	struct fb_guard_addr *a;
	int n, i, u;

	*out = NULL;
	/* A sketch by address holds the addresses of one side only. */
	if ((m->cfg.flags & FB_MON_BY_ADDR) && by_dst != !!(m->cfg.flags & FB_MON_BY_DST)) {
		fb_report_err("the sketch in %s counts %s addresses, not %s addresses", m->dir,
			      by_dst ? "source" : "destination", by_dst ? "destination" : "source");
		return -1;
	}
	n = fb_monitor_top(m, s, base, false, (size_t)1 << 30, &e);
	if (n < 0)
		return -1;
	a = calloc(n ? n : 1, sizeof(*a));
	if (!a) {
		free(e);
		fb_report_err("out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		addr_key(&e[i].key, by_dst, &a[i].key);
		a[i].packets = e[i].packets;
		a[i].bytes = e[i].bytes;
		a[i].lo_packets = e[i].packets > ep ? e[i].packets - ep : 0;
		a[i].lo_bytes = e[i].bytes > eb ? e[i].bytes - eb : 0;
		a[i].flows = 1;
	}
	free(e);
	/* One entry per address, sums of its flows. */
	qsort(a, n, sizeof(*a), cmp_key);
	for (i = 0, u = -1; i < n; i++) {
		if (u >= 0 && !memcmp(&a[u].key, &a[i].key, sizeof(a[i].key))) {
			a[u].packets += a[i].packets;
			a[u].bytes += a[i].bytes;
			a[u].lo_packets += a[i].lo_packets;
			a[u].lo_bytes += a[i].lo_bytes;
			a[u].flows++;
			continue;
		}
		a[++u] = a[i];
	}
	n = u + 1;
	qsort(a, n, sizeof(*a), cmp_lo);
	*out = a;
	return n;
}

static int cmp_never(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct fb_key));
}

/* Sorted, each entry once: a list that repeats itself stays small. */
static void never_unique(struct fb_never_list *l)
{
	size_t i, u;

	if (!l->n)
		return;
	qsort(l->p, l->n, sizeof(*l->p), cmp_never);
	for (i = 1, u = 0; i < l->n; i++)
		if (memcmp(&l->p[u], &l->p[i], sizeof(l->p[i])))
			l->p[++u] = l->p[i];
	l->n = u + 1;
}

/* Past FB_NEVER_MAX different entries (counted at l's growth and end). */
static bool never_over(struct fb_never_list *l, const struct fb_lines *r)
{
	if (l->n <= FB_NEVER_MAX)
		return false;
	never_unique(l);
	if (l->n <= FB_NEVER_MAX)
		return false;
	fb_report_err("%s:%zu: more than %d different addresses and prefixes (a --never list "
		      "names whom guard must not ban: list their prefixes); guard not started",
		      r->label, r->lineno, FB_NEVER_MAX);
	return true;
}

int fb_never_read(const char *file, struct fb_never_list *l)
{
	struct fb_lines r;
	char *line, err[256];
	size_t len, cap = 0;
	int rc;

	memset(l, 0, sizeof(*l));
	if (fb_lines_open(&r, file))
		return -1;
	while ((rc = fb_lines_next(&r, &line, &len)) > 0) {
		char *c, *w, *save = NULL;
		struct fb_key k = { 0 };

		for (c = line; *c; c++)
			if (*c == '#' || *c == ';') {
				*c = 0;
				break;
			}
		w = strtok_r(line, " \t\r", &save);
		if (!w)
			continue;
		if (strtok_r(NULL, " \t\r", &save)) {
			fb_report_err("%s:%zu: one address or prefix a line", r.label, r.lineno);
			rc = -1;
			break;
		}
		if (fb_prefix_parse(w, k.saddr, &k.plen, &k.family, err, sizeof(err))) {
			fb_report_err("%s:%zu: %s", r.label, r.lineno, err);
			rc = -1;
			break;
		}
		/* Input without end (`yes ADDR`, distinct addresses) is
		 * held in at most twice the bound: full there, the
		 * duplicates go, or the list is refused. */
		if (l->n == cap && cap >= 2 * FB_NEVER_MAX && never_over(l, &r)) {
			rc = -1;
			break;
		}
		if (l->n == cap) {
			struct fb_key *p = realloc(l->p, (cap = cap ? 2 * cap : 64) * sizeof(*p));

			if (!p) {
				fb_report_err("out of memory");
				rc = -1;
				break;
			}
			l->p = p;
		}
		k.kind = FB_KIND_SRC;
		l->p[l->n++] = k;
	}
	if (!rc && never_over(l, &r))
		rc = -1;
	fb_lines_close(&r);
	if (rc < 0)
		fb_never_free(l);
	return rc < 0 ? -1 : 0;
}

void fb_never_free(struct fb_never_list *l)
{
	free(l->p);
	l->p = NULL;
	l->n = 0;
}

bool fb_never_has(const struct fb_never_list *l, const struct fb_key *addr)
{
	int w = addr->kind == FB_KIND_DST ? 2 : 0;
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct fb_key *p = &l->p[i];

		/* A prefix of the address's family, covering it. */
		if (p->family == addr->family &&
		    (addr->w[w] & fb_prefix_mask(p->plen, 0)) == p->w[0] &&
		    (addr->w[w + 1] & fb_prefix_mask(p->plen, 1)) == p->w[1])
			return true;
	}
	return false;
}

/* A small map pinned in f's directory (never through a link: pintree),
 * checked to be what we make (entries, flags: made with; entries found may
 * be any with any_size). */
static int pinned_map(const struct fb_store *f, bool create, const char *pin, __u32 type,
		      __u32 key_size, __u32 value_size, __u32 entries, __u32 flags, bool any_size)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = flags);
	int fd = fb_pin_get(f->dir_fd, pin), tries = 0;
	struct bpf_map_info info = {};
	bool pinned;
	__u32 len = sizeof(info);

again:
	if (fd >= 0) {
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != type ||
		    info.key_size != key_size || info.value_size != value_size ||
		    (!any_size && info.max_entries != entries) || info.map_flags != flags) {
			close(fd);
			fb_report_err("%s/%s is not what guard pins there", f->dir, pin);
			errno = EEXIST;
			return -1;
		}
		return fd;
	}
	if (!create || errno != ENOENT) {
		if (errno != ENOENT)
			fb_report_err("cannot open %s/%s: %s", f->dir, pin, strerror(errno));
		return -1;
	}
	fd = bpf_map_create(type, "fb_guard", key_size, value_size, entries, &opts);
	pinned = fd >= 0 && !fb_pin_at(fd, f->dir_fd, pin);
	if (fd >= 0 && !pinned && errno == EEXIST && !tries++) {
		/* Another guard pinned it first: its map is ours too. */
		close(fd);
		fd = fb_pin_get(f->dir_fd, pin);
		goto again;
	}
	if (!pinned) {
		fb_report_err("cannot create %s/%s: %s", f->dir, pin, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int fb_guard_stats_open(const struct fb_store *f, bool create)
{
	return pinned_map(f, create, FB_GUARD_PIN, BPF_MAP_TYPE_ARRAY, sizeof(__u32),
			  sizeof(struct fb_guard_stats), 1, 0, false);
}

int fb_guard_events_open(const struct fb_store *f, bool create)
{
	return pinned_map(f, create, FB_GUARD_EVENTS_PIN, BPF_MAP_TYPE_QUEUE, 0,
			  sizeof(struct fb_guard_event), FB_GUARD_EVENTS_MAX, 0, false);
}

int fb_guard_events_push(int fd, const struct fb_guard_event *e)
{
	/* BPF_EXIST: a full queue drops its oldest to make room. */
	if (bpf_map_update_elem(fd, NULL, e, BPF_EXIST)) {
		fb_report_err("cannot queue a guard event: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int fb_guard_events_pop(int fd, struct fb_guard_event *e)
{
	return !bpf_map_lookup_and_delete_elem(fd, NULL, e);
}

int fb_guard_stats_read(int fd, struct fb_guard_stats *s)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, s)) {
		fb_report_err("cannot read guard counters: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int fb_guard_stats_write(int fd, const struct fb_guard_stats *s)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(fd, &zero, s, BPF_ANY)) {
		fb_report_err("cannot write guard counters: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void fb_guard_stats_add(struct fb_guard_stats *s, const struct fb_guard_stats *d)
{
	s->bans += d->bans;
	s->extended += d->extended;
	s->unbans += d->unbans;
	s->intervals += d->intervals;
	s->refused += d->refused;
	s->limited += d->limited;
}

void fb_guard_stats_left(int fd, __u64 now, __u64 *active, __u64 *until)
{
	struct fb_guard_stats s;

	*active = *until = 0;
	if (fd < 0 || fb_guard_stats_read(fd, &s) || !s.active_until || s.active_until <= now)
		return;
	*active = s.active;
	*until = s.active_until;
}

bool fb_guard_gens_hold(const struct fb_gen_views *gv, const struct fb_key *k, __u64 now)
{
	int i;

	for (i = 0; i < gv->n; i++)
		if (gv->v[i].hdr->expires > now && fb_bits_query(&gv->v[i], k))
			return true;
	return false;
}

int fb_guard_bans_open(const struct fb_store *f, bool create, __u32 entries)
{
	return pinned_map(f, create, FB_GUARD_BANS_PIN, BPF_MAP_TYPE_HASH, sizeof(struct fb_key),
			  sizeof(__u64), entries, BPF_F_NO_PREALLOC, true);
}

__u32 fb_guard_bans_max(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

int fb_guard_bans_count(int fd, const struct fb_gen_views *gv, __u64 now, bool sweep, __u64 *live,
			__u64 *last)
{
	struct fb_key k, next, *ended = NULL;
	size_t n = 0, cap = 0, i;
	bool first = true;
	__u64 exp;
	int rc = 0;

	*live = *last = 0;
	/* The ended are deleted after the walk: a key deleted under it
	 * would start it again from the first. */
	while (!bpf_map_get_next_key(fd, first ? NULL : &k, &next)) {
		first = false;
		k = next;
		if (bpf_map_lookup_elem(fd, &k, &exp)) {
			if (errno == ENOENT)
				continue; /* deleted meanwhile (a dry run reads unlocked) */
			break;		  /* refused: not known, never one ban fewer */
		}
		if (exp > now && (!gv || fb_guard_gens_hold(gv, &k, now))) {
			++*live;
			*last = exp > *last ? exp : *last;
			continue;
		}
		if (!sweep)
			continue;
		if (n == cap) {
			struct fb_key *e = realloc(ended, (cap = cap ? 2 * cap : 64) * sizeof(*e));

			if (!e) {
				sweep = false;
				continue;
			}
			ended = e;
		}
		ended[n++] = k;
	}
	if (errno != ENOENT) {
		fb_report_err("cannot read the bans in force: %s", strerror(errno));
		rc = -1;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &ended[i]);
	free(ended);
	return rc;
}

bool fb_guard_bans_has(int fd, const struct fb_gen_views *gv, const struct fb_key *k, __u64 now)
{
	__u64 exp;

	return fd >= 0 && !bpf_map_lookup_elem(fd, k, &exp) && exp > now &&
	       (!gv || fb_guard_gens_hold(gv, k, now));
}

int fb_guard_bans_put(int fd, const struct fb_key *k, size_t n, __u64 expires)
{
	__u64 exp;
	size_t i;
	int tries;

	for (i = 0; i < n; i++) {
		/* Another guard's later end stays: the data path matches the
		 * address until then. Under BAN's lock no other guard writes:
		 * an end read is the one an update replaces. One that cannot
		 * be read is never written over (BPF_NOEXIST: only where none
		 * is recorded); read again once, then left as it is, said. */
		for (tries = 0; tries < 2; tries++) {
			bool known = !bpf_map_lookup_elem(fd, &k[i], &exp);

			if (known && exp >= expires)
				break;
			if (!bpf_map_update_elem(fd, &k[i], &expires,
						 known ? BPF_EXIST : BPF_NOEXIST))
				break;
			if (errno != EEXIST && errno != ENOENT) {
				fb_report_err("cannot record a ban in force: %s", strerror(errno));
				return -1;
			}
		}
		if (tries == 2)
			fb_report(FB_REPORT_NOTE,
				  "cannot read the end recorded for a ban in force: kept (this "
				  "guard's end not recorded)");
	}
	return 0;
}

int fb_guard_routes_open(const struct fb_store *f, bool create, __u32 entries)
{
	return pinned_map(f, create, FB_GUARD_ROUTES_PIN, BPF_MAP_TYPE_HASH,
			  sizeof(struct fb_guard_route), sizeof(struct fb_guard_holders), entries,
			  BPF_F_NO_PREALLOC, true);
}
