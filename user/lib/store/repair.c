// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Half states an interrupted command leaves (stale staging directories,
 * the other generation's counters and exact sets, missing ip-link pins):
 * finding them for `check`, removing them for destroy and check --repair. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "store/chunks.h"
#include "store/exact.h"
#include "store/head.h"
#include "report.h"
#include "store/pintree.h"
#include "store/gens.h"
#include "store/jiffies.h"
#include "store/repair.h"
#include "util.h"

int fb_repair_stale(const char *name, unsigned *what)
{
	char stage[FB_NAME_MAX + 4];
	const char *const pre[2] = { FB_STAGE_NEW, FB_STAGE_OLD };
	int root, i, fd;

	*what = 0;
	root = fb_pin_open_root_of(name);
	if (root < 0)
		return root == -2 ? 0 : -1;
	for (i = 0; i < 2; i++) {
		fb_pin_stage_name(stage, sizeof(stage), pre[i], name);
		fd = fb_pin_open_dir(root, stage);
		if (fd < 0 && errno != ENOENT) { /* not read: not clean either */
			fb_report_err("cannot open %s: %s", stage, strerror(errno));
			close(root);
			return -1;
		}
		if (fd < 0)
			continue;
		/* In use by a live create, import or destroy: not stale. */
		if (!flock(fd, LOCK_SH | LOCK_NB))
			*what |= 1U << i;
		close(fd);
	}
	close(root);
	return 0;
}

int fb_repair_list_stale(char ***names)
{
	int n = 0, cap = 0, root, fd;
	struct dirent *de;
	char **v = NULL;
	DIR *d;

	*names = NULL;
	if (fb_pin_check_bpffs())
		return -1;
	root = fb_pin_open_root(false);
	if (root == -2)
		return 0;
	if (root < 0)
		return -1;
	/* A create's directory between its mkdir and its lock is not stale. */
	if (fb_pin_stage_lock(root) || !(d = fdopendir(root))) {
		close(root);
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] != '~' || de->d_type != DT_DIR)
			continue;
		fd = fb_pin_open_dir(dirfd(d), de->d_name);
		if (fd < 0)
			continue;
		/* Held by a live create, import or destroy: not stale. */
		if (!flock(fd, LOCK_SH | LOCK_NB) && n < 4096) {
			if (n == cap) {
				char **nv = realloc(v, sizeof(*v) * (cap = cap ? cap * 2 : 8));

				if (!nv) {
					close(fd);
					break;
				}
				v = nv;
			}
			/* Without memory for the name: listed no further
			 * (a NULL would reach the sort). */
			if (!(v[n] = strdup(de->d_name))) {
				close(fd);
				break;
			}
			n++;
		}
		close(fd);
	}
	fb_pin_stage_unlock(dirfd(d));
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), fb_cmp_str);
	*names = v;
	return n;
}

int fb_repair_check(struct fb_store *f, bool repair, struct fb_repair_state *s)
{
	unsigned stale;
	__u32 slot, id;
	int fd;

	memset(s, 0, sizeof(*s));
	if (fb_repair_stale(f->name, &stale))
		return -1;
	/* The filter's own chunks, each in its slot: no writer leaves them
	 * otherwise, and nothing here can tell which rules a shared chunk
	 * lost (reported, never repaired). */
	{
		int shared = fb_chunks_shared(f->outer_fd, f->hdr->gen, f->nchunks, f->head_id);

		if (shared < 0)
			return -1;
		s->shared_chunks = (__u32)shared;
	}
	s->stale_create = stale & 1;
	s->stale_destroy = stale & 2;
	if (repair && stale && fb_pin_clean_stale(f->name) < 0)
		return -1;
	if (f->cnt_hdr && f->cnt_legacy && repair && fb_store_migrate_counters(f))
		return -1;
	if (f->cnt_hdr && !f->cnt_legacy) {
		fd = fb_pin_get(f->dir_fd, fb_store_cnt_pin(f->hdr->gen ^ 1));
		if (fd >= 0) {
			s->stale_counters = true;
			close(fd);
			if (repair)
				unlinkat(f->dir_fd, fb_store_cnt_pin(f->hdr->gen ^ 1), 0);
		} else if (errno != ENOENT) { /* not read: not clean either */
			fb_report_err("cannot read the counters of '%s': %s", f->name,
				      strerror(errno));
			return -1;
		}
	}
	/* The unused generation's chunks: a replace leaves one empty chunk
	 * in the slots it used; a kill after its switch leaves the old
	 * filter's chunks there (before it, the new one's), held until
	 * released. */
	{
		__u32 maps;
		bool head;
		int span = fb_chunks_span(f->outer_fd, f->hdr->gen ^ 1, &maps, &head);

		if (span < 0)
			return -1;
		/* A head there: all of them are a killed replace's; else
		 * all but one empty chunk (an older build's releases left
		 * empty chunks of earlier sizes beside it). */
		s->stale_chunks = head ? maps : maps > 1 ? maps - 1 : 0;
		if (repair && s->stale_chunks &&
		    fb_chunks_release(f->outer_fd, f->hdr->gen ^ 1, 0, (__u32)span))
			return -1;
	}
	if (f->hdr->confirm) {
		slot = f->hdr->gen ^ 1;
		if (!bpf_map_lookup_elem(f->exact_fd, &slot, &id)) {
			s->stale_sets = true;
			if (repair)
				fb_exact_clear_slot(f->exact_fd, f->lpm_fd, f->hdr->gen ^ 1);
		} else if (errno != ENOENT) { /* not read: not clean either */
			fb_report_err("cannot read the exact sets of '%s': %s", f->name,
				      strerror(errno));
			return -1;
		}
	}
	/* The data path probes what the head's table says: a table out of
	 * step with the header (a writer that changed one and not the other)
	 * would miss rules. Rebuilt the way a writer keeps it. */
	s->stale_head = !fb_head_current(f);
	if (repair && s->stale_head && fb_head_sync(f, true))
		return -1;
	/* Live generations no writer can open (a chunk or counters missing,
	 * a header overwritten): every writer of a counting filter refuses
	 * to go on over them; repair takes them out, their rules with them. */
	s->damaged_gens =
		fb_gens_damaged(f, repair, &s->damaged_g, s->damaged_why, sizeof(s->damaged_why));
	if (s->damaged_gens < 0)
		return -1;
	/* The same of each live generation of rules with a lifetime (its
	 * own head, ttl.h); not of damaged ones left in. */
	if (f->hdr->gens && !(s->damaged_gens && !repair)) {
		struct fb_gen_views gv;
		int i;

		/* Not opened: not read, not clean either. */
		if (fb_gens_views_open(f, &gv) < 0)
			return -1;
		for (i = 0; i < gv.n; i++) {
			if (fb_head_current(&gv.v[i]))
				continue;
			s->stale_head = true;
			if (repair && fb_head_sync(&gv.v[i], true)) {
				fb_gens_views_close(&gv);
				return -1;
			}
		}
		fb_gens_views_close(&gv);
	}
	/* Generations of rules with a lifetime: slots of either set that
	 * no mask names, and those ended but not yet reclaimed. */
	{
		int a = fb_gens_stale(f, f->hdr->gen, repair), b;

		b = a < 0 ? -1 : fb_gens_stale(f, f->hdr->gen ^ 1, repair);
		if (b < 0)
			return -1;
		s->stale_gens = a + b;
	}
	if (f->hdr->gens) {
		struct fb_gen gl[FB_GEN_SLOTS];
		__u64 now = fb_jiffies_init() ? 0 : fb_jiffies_now();
		int n = now ? fb_gens_list(f, gl) : -1, i;

		if (n < 0) /* the clock or the list not read: not clean */
			return -1;
		for (i = 0; i < n; i++)
			s->expired_gens += gl[i].expires <= now;
		if (repair && s->expired_gens && fb_gens_reclaim(f) < 0)
			return -1;
	}
	if (!strcmp(f->name, FB_IPROUTE_FILTER)) {
		bool quiet = fb_report_quiet;
		int gdir, o = -1, st = -1;

		fb_report_quiet = true;
		gdir = fb_pin_open_iproute(false);
		fb_report_quiet = quiet;
		if (gdir >= 0) {
			o = fb_pin_get(gdir, FB_MAP_FILTER);
			st = fb_pin_get(gdir, FB_MAP_STATS);
			close(gdir);
		}
		/* Present but other maps: pinned by an ip link program
		 * loaded while they were missing, which runs on them. */
		s->iproute_stale = (o >= 0 && fb_map_id(o) != f->outer_id) ||
				   (st >= 0 && fb_map_id(st) != f->stats_id);
		s->iproute_missing = !s->iproute_stale && (o < 0 || st < 0);
		if (o >= 0)
			close(o);
		if (st >= 0)
			close(st);
		if (repair && s->iproute_missing && fb_pin_iproute(f))
			return -1;
	}
	return 0;
}
