// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rules with a lifetime: making, filling, listing and reclaiming the
 * generations of a filter (see gens.h, include/flowbloom/ttl.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "store/counters.h"
#include "report.h"
#include "store/chunks.h"
#include "store/gens.h"
#include "store/gens_slot.h"
#include "store/head.h"
#include "store/jiffies.h"
#include "store/pintree.h"
#include "util.h"

int fb_gens_supported(const struct fb_store *f)
{
	if (f->hdr->type) {
		fb_report_err("'%s' is a %s filter: rules with a lifetime need a Bloom filter "
			      "(plain or counting)",
			      f->name, FB_NAME(fb_type_names, f->hdr->type));
		return -1;
	}
	if (f->hdr->confirm) {
		fb_report_err("'%s' confirms hits in exact sets: rules with a lifetime need a "
			      "filter without --confirm exact",
			      f->name);
		return -1;
	}
	return fb_jiffies_init();
}

static void view_init(const struct fb_store *f, struct fb_store *gs)
{
	*gs = *f;
	gs->bits_fd = gs->cnt_fd = -1;
	gs->exact_fd = gs->lpm_fd = -1;
	gs->set_fd[0] = gs->set_fd[1] = gs->set_fd[2] = -1;
	gs->map = NULL;
	gs->nchunks = 0;
	gs->head_id = 0;
	gs->hdr = NULL;
	gs->blocks = NULL;
	gs->cnt_hdr = NULL;
	gs->cnt = NULL;
	gs->cnt_legacy = false;
}

void fb_gen_close(struct fb_store *gs)
{
	if (gs->map)
		fb_chunks_munmap(gs->map, gs->nchunks);
	if (gs->cnt_hdr)
		munmap(gs->cnt_hdr, gs->cnt_bytes);
	if (gs->bits_fd >= 0)
		close(gs->bits_fd);
	if (gs->cnt_fd >= 0)
		close(gs->cnt_fd);
	gs->map = NULL;
	gs->hdr = NULL;
	gs->blocks = NULL;
	gs->cnt_hdr = NULL;
	gs->bits_fd = gs->cnt_fd = -1;
}

/* gs's mapping of its n chunks at map. */
static void view_map(struct fb_store *gs, void *map, __u32 n)
{
	gs->map = map;
	gs->nchunks = n;
	gs->map_bytes = (size_t)n * FB_CHUNK_BYTES;
	gs->hdr = (struct fb_header *)((char *)map + FB_HEAD_SHIFT * FB_BLOCK_BYTES);
	gs->blocks = (struct fb_block *)gs->hdr;
}

/* Map the counters of the generation in slot (fd: its counter map); -2
 * if they are damaged. */
static int map_counters(struct fb_store *gs, int fd)
{
	size_t want = fb_counting_map_bytes(fb_header_mbits(gs->hdr), gs->hdr->counter_bits);
	size_t old = FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES +
		     fb_counting_data_bytes(fb_header_mbits(gs->hdr), gs->hdr->counter_bits);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *m;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return fb_store_open_err(gs); /* memory: not damage */
	if ((size_t)info.max_entries * info.value_size == old)
		want = old; /* an earlier build's: no batch journal */
	if ((size_t)info.max_entries * info.value_size != want) {
		fb_report_err("filter '%s': a generation's counters have the wrong size", gs->name);
		return -2;
	}
	m = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		fb_report_err("cannot mmap a generation's counters: %s", strerror(errno));
		return -1;
	}
	gs->cnt_fd = fd;
	gs->cnt_hdr = m;
	gs->cnt_bytes = want;
	gs->cnt = (__u8 *)m + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
	if (gs->cnt_hdr->magic != FB_CNT_MAGIC || gs->cnt_hdr->bits != gs->hdr->counter_bits) {
		fb_report_err("filter '%s': bad counter header in a generation", gs->name);
		return -2;
	}
	return 0;
}

/* Map the generation whose head is fd (its chunks in slot range
 * `range`), and its counters, as gs, a view of f: 0, -1, or -2 for damage
 * no writer leaves (fb_gen_open()). */
static int map_view(const struct fb_store *f, int fd, __u32 range, struct fb_store *gs)
{
	bool quiet = fb_report_quiet;
	struct fb_header h;
	char pin[32];
	void *m;
	__u32 n;
	int r, e, rc = -2;

	view_init(f, gs);
	gs->bits_fd = fd;
	gs->head_id = fb_map_id(fd);
	r = fb_gslot_head_header(fd, range, &h);
	if (r == -2) { /* memory: not damage */
		rc = fb_store_open_err(f);
		goto fail;
	}
	if (r) {
		fb_report_err("filter '%s': bad generation header in slot range %u", f->name,
			      range);
		goto fail;
	}
	n = fb_chunks_for(h.nblocks);
	fb_report_quiet = true;
	m = fb_chunks_mmap_outer(f->outer_fd, fd, range, n);
	e = errno;
	fb_report_quiet = quiet;
	if (!m) {
		/* Only a chunk missing is damage (not memory, descriptors). */
		fb_report_err("%s", fb_report_last);
		rc = e == ENOENT ? -2 : -1;
		goto fail;
	}
	view_map(gs, m, n);
	gs->bits_id = fb_store_head(gs)->keys.array_id;
	if (gs->hdr->magic != FB_MAGIC || !(gs->hdr->flags & FB_HDRF_GENERATION) || gs->hdr->type ||
	    gs->hdr->confirm || gs->hdr->gens || gs->hdr->gen != range ||
	    fb_chunks_for(gs->hdr->nblocks) != n || !gs->hdr->k || gs->hdr->k > FB_MAX_K ||
	    gs->hdr->counter_bits != f->hdr->counter_bits) {
		fb_report_err("filter '%s': bad generation header in slot range %u", f->name,
			      range);
		goto fail;
	}
	if (gs->hdr->counter_bits) {
		int cfd;

		fb_gslot_cnt_pin(pin, sizeof(pin), range);
		cfd = fb_pin_get(f->dir_fd, pin);
		if (cfd < 0) {
			/* (A link, or ulimit -n, memory: not damage.) */
			if (fb_store_pin_refused(f, pin)) {
				rc = -1;
				goto fail;
			}
			fb_report_err("filter '%s': a generation has no counters (%s: %s)", f->name,
				      pin, strerror(errno));
			goto fail;
		}
		if ((rc = map_counters(gs, cfd))) {
			if (!gs->cnt_hdr)
				close(cfd);
			goto fail;
		}
	}
	return 0;
fail:
	fb_gen_close(gs);
	return rc;
}

int fb_gen_open(const struct fb_store *f, unsigned g, struct fb_store *gs)
{
	__u32 range = fb_gen_range(f->hdr->gen, g);
	int fd = fb_gslot_head_fd(f, range);

	view_init(f, gs);
	if (fd < 0) {
		if (fb_store_err_now(errno)) /* ulimit -n, memory: not damage */
			return fb_store_open_err(f);
		fb_report_err("filter '%s': generation %u is missing", f->name, g);
		return -2;
	}
	return map_view(f, fd, range, gs);
}

__u32 fb_gen_max_blocks(__u32 nblocks)
{
	return fb_chunks_for(nblocks) > FB_GEN_MAX_CHUNKS ? fb_chunks_nblocks(FB_GEN_MAX_CHUNKS)
							  : nblocks;
}

/*
 * A new, empty generation g of set: a head and chunks shaped as tmpl (its
 * header copied: geometry, hash, key, action, counter width; at most
 * FB_GEN_MAX_CHUNKS chunks, the same k on fewer bits for a larger filter),
 * expiring at expires, its counters pinned first, then installed in its
 * slot range (whatever a stale generation left there emptied first). The
 * caller sets the mask bit. dir: the filter whose pins and outer map are
 * used.
 */
int fb_gen_make(const struct fb_store *dir, const struct fb_header *tmpl_in, unsigned set,
		unsigned g, __u64 expires, struct fb_store *gs)
{
	struct fb_header t = *tmpl_in, *tmpl = &t;
	__u32 range = fb_gen_range(set, g), n;
	int *fds;

	t.nblocks = fb_gen_max_blocks(t.nblocks);
	n = fb_chunks_for(t.nblocks);
	fds = calloc(n, sizeof(*fds));
	char pin[32];
	void *m;

	view_init(dir, gs);
	if (!fds) {
		fb_report_err("out of memory");
		return -1;
	}
	/* What a failed clear left in the range first: past a smaller new
	 * generation, its chunks would stay held, named by no head. */
	if (fb_gslot_ready(dir, range, n)) {
		fb_report_err("generation slot %u of '%s' still holds an earlier generation's "
			      "chunks (%s): `flowbloom check --repair %s` releases them",
			      g, dir->name, fb_report_last, dir->name);
		free(fds);
		return -1;
	}
	if (fb_chunks_create(n, fds)) {
		free(fds);
		return -1;
	}
	m = fb_chunks_mmap(fds, n);
	if (!m)
		goto fail;
	view_map(gs, m, n);
	gs->bits_fd = fds[0];
	gs->head_id = gs->bits_id = fb_map_id(fds[0]);
	if (!gs->bits_id) { /* (0 would be no array's in its head) */
		fb_report_err("cannot read the new chunks' id: %s", strerror(errno));
		goto fail;
	}
	fb_store_head(gs)->keys.array_id = gs->bits_id;
	*gs->hdr = *tmpl;
	gs->hdr->kinds = 0;
	gs->hdr->nflows = 0;
	gs->hdr->gens = 0;
	gs->hdr->gen = range; /* its chunks' slot range (geometry.h) */
	gs->hdr->confirm = 0;
	gs->hdr->fp_ppb = 0;
	gs->hdr->expires = expires;
	gs->hdr->flags = FB_HDRF_GENERATION;
	/* Not visible yet: the head (key words, empty table) in place. */
	if (fb_head_sync(gs, false))
		goto fail;
	fb_gslot_cnt_pin(pin, sizeof(pin), range);
	unlinkat(dir->dir_fd, pin, 0);
	if (tmpl->counter_bits) {
		size_t cbytes = fb_counting_map_bytes((__u64)tmpl->nblocks * FB_BLOCK_BITS,
						      tmpl->counter_bits);
		LIBBPF_OPTS(bpf_map_create_opts, cnt_opts, .map_flags = BPF_F_MMAPABLE);
		int cfd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fb_gcounters", sizeof(__u32),
					 FB_BLOCK_BYTES, cbytes / FB_BLOCK_BYTES, &cnt_opts);

		if (cfd < 0) {
			fb_report_err("cannot create a generation's counters: %s", strerror(errno));
			goto fail;
		}
		m = mmap(NULL, cbytes, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
		if (m == MAP_FAILED) {
			fb_report_err("cannot mmap a generation's counters: %s", strerror(errno));
			close(cfd);
			goto fail;
		}
		gs->cnt_fd = cfd;
		gs->cnt_hdr = m;
		gs->cnt_bytes = cbytes;
		gs->cnt = (__u8 *)m + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
		fb_counting_init(gs->cnt_hdr, tmpl->counter_bits);
		if (fb_pin_at(cfd, dir->dir_fd, pin)) {
			fb_report_err("cannot pin %s of '%s': %s", pin, dir->name, strerror(errno));
			goto fail;
		}
	}
	/* One batch: the chunks, the head (its range's chunk 0) among them;
	 * the data path reaches them only once the mask names g. */
	if (fb_chunks_install(dir->outer_fd, range, fds, n, 0)) {
		fb_report_err("cannot install a generation of '%s'", dir->name);
		goto unpin;
	}
	fds[0] = -1; /* gs->bits_fd */
	fb_chunks_close(fds + 1, n - 1);
	free(fds);
	return 0;
unpin:
	if (tmpl->counter_bits)
		unlinkat(dir->dir_fd, pin, 0);
fail:
	if (gs->bits_fd == fds[0])
		gs->bits_fd = -1;
	fb_chunks_close(fds, n);
	free(fds);
	fb_gen_close(gs);
	return -1;
}

static int cmp_gen(const void *a, const void *b)
{
	const struct fb_gen *x = a, *y = b;

	return x->expires < y->expires ? -1 : x->expires > y->expires;
}

int fb_gens_list(const struct fb_store *f, struct fb_gen out[FB_GEN_SLOTS])
{
	__u32 mask = __atomic_load_n(&f->hdr->gens, __ATOMIC_ACQUIRE);
	int n = 0, r;
	unsigned g;

	for (g = 0; g < FB_GEN_SLOTS; g++) {
		struct fb_header h;
		struct fb_gen *o = &out[n];

		if (!(mask & 1U << g))
			continue;
		o->g = g;
		o->slot = fb_gen_range(f->hdr->gen, g);
		r = fb_gslot_header(f, o->slot, &h);
		if (r == -2) {
			fb_report_err("cannot read generation %u of '%s': %s", g, f->name,
				      strerror(errno));
			return -1;
		}
		if (r) {
			/* A bit without its array: nothing the data path
			 * can match (it skips the slot); reclaimed as expired. */
			o->expires = 0;
			o->nflows = 0;
			o->nblocks = 0;
			o->k = 0;
		} else {
			o->expires = h.expires;
			o->nflows = h.nflows;
			o->nblocks = h.nblocks;
			o->k = h.k;
		}
		o->secs = fb_jiffies_secs(o->expires);
		n++;
	}
	qsort(out, n, sizeof(*out), cmp_gen);
	return n;
}

/* The generations of f (fb_gens_list) and the data path's clock now:
 * their number, or -1 (reported) if either cannot be read (then which have
 * ended is not known). */
static int gens_now(const struct fb_store *f, struct fb_gen *gl, __u64 *now)
{
	if (fb_jiffies_init())
		return -1;
	*now = fb_jiffies_now();
	return fb_gens_list(f, gl);
}

/* Generation g out of f: out of the mask first (the data path stops
 * looking; it already ignores an expired generation), then its slot
 * range. 0; -1 if the range could not be cleared (why in fb_report_last,
 * unsaid); -2 if its head could not be read (said; nothing changed). */
static int take_out(struct fb_store *f, const struct fb_gen *g)
{
	__u32 n = fb_gslot_chunks(f, g->slot);

	if (!n) {
		fb_report_err("cannot read generation %u of '%s': %s", g->g, f->name,
			      strerror(errno));
		return -2;
	}
	__atomic_fetch_and(&f->hdr->gens, ~(1U << g->g), __ATOMIC_RELEASE);
	return fb_gslot_clear(f, g->slot, n) ? -1 : 0;
}

int fb_gens_reclaim(struct fb_store *f)
{
	struct fb_gen gl[FB_GEN_SLOTS];
	__u64 now;
	int n, i, r, done = 0;

	if (!f->hdr->gens)
		return 0;
	n = gens_now(f, gl, &now);
	for (i = 0; i < n; i++) {
		if (gl[i].expires > now)
			continue;
		r = take_out(f, &gl[i]);
		if (r == -1)
			fb_report_err("generation %u of '%s' has ended, but its chunks are still "
				      "held (%s): `flowbloom check --repair %s` releases them",
				      gl[i].g, f->name, fb_report_last, f->name);
		if (r)
			return -1;
		done++;
	}
	return n < 0 ? -1 : done;
}

int fb_gens_views_open(const struct fb_store *f, struct fb_gen_views *gv)
{
	struct fb_gen gl[FB_GEN_SLOTS];
	__u64 now = 0;
	int n = 0, i;

	gv->n = 0;
	/* The clock not read (reported): ended ones would pass for live. */
	if (f->hdr->gens)
		n = gens_now(f, gl, &now);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		int r;

		if (gl[i].expires <= now || !gl[i].nblocks)
			continue;
		if ((r = fb_gen_open(f, gl[i].g, &gv->v[gv->n]))) {
			fb_gens_views_close(gv);
			return r;
		}
		gv->g[gv->n++] = gl[i];
	}
	return gv->n;
}

int fb_gens_read(struct fb_store *f, int (*fn)(struct fb_store *f, void *arg),
		 void (*undo)(void *arg), void *arg)
{
	bool quiet = fb_report_quiet, lock = false;
	int tries, n;

	for (tries = 0;; tries++) {
		/* The last try under a shared lock (it maps f again). */
		lock = tries == FB_GENS_READ_TRIES - 1 && !f->locked && !fb_store_flock(f, LOCK_SH);
		fb_report_quiet = quiet || tries < FB_GENS_READ_TRIES - 1;
		n = fn(f, arg);
		fb_report_quiet = quiet;
		if (lock || !fb_store_moved(f))
			break;
		if (undo)
			undo(arg);
		if (tries == FB_GENS_READ_TRIES - 1) {
			fb_report_err("filter '%s' was replaced again and again while it was "
				      "read: try again",
				      f->name);
			return -1;
		}
		if (fb_store_remap(f))
			return -1;
	}
	if (lock)
		fb_store_unlock(f);
	else if (n < 0 && !quiet && tries < FB_GENS_READ_TRIES - 1)
		fb_report_err("%s", fb_report_last);
	return n;
}

static int views_fn(struct fb_store *f, void *gv)
{
	return fb_gens_views_open(f, gv);
}

static void views_undo(void *gv)
{
	fb_gens_views_close(gv); /* (none open after a failure: n is 0) */
}

int fb_gens_views_read(struct fb_store *f, struct fb_gen_views *gv)
{
	return fb_gens_read(f, views_fn, views_undo, gv);
}

int fb_gens_damaged(struct fb_store *f, bool repair, unsigned *first, char *why, size_t len)
{
	struct fb_gen gl[FB_GEN_SLOTS];
	bool quiet = fb_report_quiet;
	struct fb_store gs;
	int n, i, r, bad = 0;
	__u64 now;

	if (!f->hdr->gens)
		return 0;
	n = gens_now(f, gl, &now);
	for (i = 0; i < n; i++) {
		if (gl[i].expires <= now || !gl[i].nblocks)
			continue;
		fb_report_quiet = true;
		r = fb_gen_open(f, gl[i].g, &gs);
		fb_report_quiet = quiet;
		if (!r) {
			fb_gen_close(&gs);
			continue;
		}
		if (r != -2) { /* only not read now: not damage */
			fb_report_err("%s", fb_report_last);
			return -1;
		}
		if (!bad++) {
			*first = gl[i].g;
			snprintf(why, len, "%s", fb_report_last);
		}
		/* As a reclaim takes an ended one out. */
		if (repair && (r = take_out(f, &gl[i]))) {
			if (r == -1)
				fb_report_err("%s", fb_report_last);
			return -1;
		}
	}
	return n < 0 ? -1 : bad;
}

void fb_gens_views_close(struct fb_gen_views *gv)
{
	int i;

	for (i = 0; i < gv->n; i++)
		fb_gen_close(&gv->v[i]);
	gv->n = 0;
}

int fb_gens_carry(struct fb_store *f, struct fb_store *nf)
{
	struct fb_gen_views gv;
	unsigned set = nf->hdr->gen & 1;
	int i;

	nf->hdr->gens = 0;
	if (!f->hdr->gens)
		return 0;
	if (fb_gens_views_open(f, &gv) < 0)
		return -1;
	for (i = 0; i < gv.n; i++) {
		struct fb_store *old = &gv.v[i], ns;

		if (fb_gen_make(f, old->hdr, set, gv.g[i].g, old->hdr->expires, &ns))
			goto fail;
		/* The whole logical array: the writers hold the lock and the
		 * data path only reads; the header is the one gen_make wrote,
		 * and the probe table follows from it (not visible yet). */
		memcpy(ns.blocks + 1, old->blocks + 1,
		       ((size_t)ns.hdr->nblocks + FB_HDR_BLOCKS - 1) * FB_BLOCK_BYTES);
		ns.hdr->kinds = old->hdr->kinds;
		ns.hdr->nflows = old->hdr->nflows;
		if (ns.cnt_hdr)
			memcpy(ns.cnt, old->cnt,
			       fb_counting_data_bytes(fb_header_mbits(ns.hdr),
						      ns.hdr->counter_bits));
		if (fb_head_sync(&ns, false)) {
			fb_gen_close(&ns);
			goto fail;
		}
		fb_gen_close(&ns);
		nf->hdr->gens |= 1U << gv.g[i].g;
	}
	fb_gens_views_close(&gv);
	return 0;
fail:
	fb_gens_views_close(&gv);
	return -1;
}

int fb_gens_import(struct fb_store *f, unsigned g, double secs, __u32 nblocks, __u8 k,
		   struct fb_store *gs)
{
	struct fb_header tmpl = *f->hdr;

	if (fb_gens_supported(f))
		return -1;
	if (fb_chunks_for(nblocks) > FB_GEN_MAX_CHUNKS) {
		fb_report_err("a generation of rules with a lifetime holds at most %u chunks of "
			      "%u KiB (this one %u)",
			      FB_GEN_MAX_CHUNKS, FB_CHUNK_BYTES / 1024, fb_chunks_for(nblocks));
		return -1;
	}
	tmpl.nblocks = nblocks;
	tmpl.k = k;
	return fb_gen_make(f, &tmpl, f->hdr->gen, g, fb_jiffies_after(secs), gs);
}
