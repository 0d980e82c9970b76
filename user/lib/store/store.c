// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The filter store: create (staged, then published), open, lock and close
 * a filter, and map its filter array and counters (destroy: destroy.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <net/if.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "store/counters.h"
#include "store/discover.h"
#include "store/exact.h"
#include "store/gens.h"
#include "store/chunks.h"
#include "store/head.h"
#include "report.h"
#include "store/pintree.h"
#include "util.h"

/* The filter types above the store (fb_store_types_set). */
static const struct fb_store_types *types;

void fb_store_types_set(const struct fb_store_types *t)
{
	types = t;
}

void fb_store_init(struct fb_store *f)
{
	memset(f, 0, sizeof(*f));
	f->dir_fd = f->root_fd = f->outer_fd = f->bits_fd = f->stats_fd = f->cnt_fd = -1;
	f->exact_fd = f->lpm_fd = f->set_fd[0] = f->set_fd[1] = f->set_fd[2] = -1;
}

static int open_pins(struct fb_store *f);
static void unmap_array(struct fb_store *f);

/* The chunks of a new filter: fds[0..n) created and mapped into f (which
 * then owns fds[0] as bits_fd and closes the others on close). */
static int new_chunks(struct fb_store *f, __u32 nblocks, int *fds)
{
	__u32 n = fb_chunks_for(nblocks), id;

	if (fb_chunks_create(n, fds))
		return -1;
	/* Its id goes into the head (readers tell a replace by it): 0, an
	 * id not read, would be no array's. */
	if (!(id = fb_map_id(fds[0]))) {
		fb_report_err("cannot read the new chunks' id: %s", strerror(errno));
		fb_chunks_close(fds, n);
		return -1;
	}
	f->map = fb_chunks_mmap(fds, n);
	if (!f->map) {
		fb_chunks_close(fds, n);
		return -1;
	}
	f->nchunks = n;
	f->map_bytes = (size_t)n * FB_CHUNK_BYTES;
	f->hdr = (struct fb_header *)((char *)f->map + FB_HEAD_SHIFT * FB_BLOCK_BYTES);
	f->blocks = (struct fb_block *)f->hdr;
	f->bits_fd = fds[0];
	f->head_id = f->bits_id = f->perm_id = id;
	fb_store_head(f)->keys.array_id = f->bits_id;
	return 0;
}

int fb_store_create_staged(const char *name, const struct fb_create_opts *o, struct fb_store *f)
{
	bool is_default = !strcmp(name, FB_IPROUTE_FILTER), made;
	int outer_fd = -1, stats_fd = -1, cnt_fd = -1, adopted = 0, err = -1, *fds = NULL;
	__u32 n = fb_chunks_for(o->nblocks);
	__u64 sets;
	struct fb_header *hdr;
	struct stat st;

	fb_store_init(f);
	if (fb_pin_check_name(name) || fb_pin_check_bpffs())
		return -1;
	snprintf(f->name, sizeof(f->name), "%s", name);
	fb_pin_stage_name(f->pin_name, sizeof(f->pin_name), FB_STAGE_NEW, name);
	snprintf(f->dir, sizeof(f->dir), "%s/%s", fb_pin_root(), f->pin_name);
	if (o->nblocks > FB_MAX_BLOCKS) {
		fb_report_err("a filter holds at most %u blocks", FB_MAX_BLOCKS);
		return -1;
	}
	f->root_fd = fb_pin_open_root(true);
	if (f->root_fd < 0) {
		f->root_fd = -1;
		return -1;
	}
	if (!fstatat(f->root_fd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		fb_report_err("filter '%s' already exists", name);
		goto fail;
	}
	/* Build aside, in a directory no filter name can take, and publish
	 * by one rename: a killed create leaves no half-made filter. Made and
	 * locked under the stage lock (pintree.h): unlocked, another create
	 * of the name would remove it as stale. */
	if (fb_pin_stage_lock(f->root_fd))
		goto fail;
	fb_pin_remove_stale(f->root_fd, f->pin_name);
	made = !mkdirat(f->root_fd, f->pin_name, 0700);
	if (!made && errno != EEXIST) {
		fb_report_err("cannot create %s: %s", f->dir, strerror(errno));
		fb_pin_stage_unlock(f->root_fd);
		goto fail;
	}
	/* EEXIST: a live one (not stale), whose flock fails below. */
	f->dir_fd = fb_pin_open_dir(f->root_fd, f->pin_name);
	if (f->dir_fd < 0 || flock(f->dir_fd, LOCK_EX | LOCK_NB) ||
	    fb_pin_trusted(f->dir_fd, f->dir, false)) {
		if (made) {
			fb_report_err("cannot lock %s: %s", f->dir, strerror(errno));
			unlinkat(f->root_fd, f->pin_name, AT_REMOVEDIR);
		} else {
			fb_report_err("another create or import of '%s' is in progress", name);
		}
		fb_pin_stage_unlock(f->root_fd);
		if (f->dir_fd >= 0)
			close(f->dir_fd);
		f->dir_fd = -1;
		fb_store_close(f);
		return made ? -1 : FB_STORE_BUSY;
	}
	fb_pin_stage_unlock(f->root_fd);
	f->staged = true;
	if (is_default) {
		adopted = fb_pin_iproute_maps(&outer_fd, &stats_fd);
		if (adopted < 0)
			goto out;
		if (adopted && o->scratch) {
			/* ip link's program reads them: a trial writes
			 * none of its maps, it makes its own. */
			close(outer_fd);
			close(stats_fd);
			outer_fd = stats_fd = -1;
			adopted = 0;
		}
		f->adopted = adopted;
	}

	fds = malloc(n * sizeof(*fds));
	if (!fds) {
		fb_report_err("out of memory");
		goto out;
	}
	for (__u32 i = 0; i < n; i++)
		fds[i] = -1;
	if (new_chunks(f, o->nblocks, fds))
		goto out;
	/* The header is complete before the data path can see the filter. */
	hdr = f->hdr;
	hdr->magic = FB_MAGIC;
	hdr->version = FB_VERSION;
	hdr->layout = o->layout;
	hdr->hash = o->hash;
	hdr->k = o->k;
	hdr->nblocks = o->nblocks;
	hdr->action = o->action ? o->action : FB_ACTION_DROP;
	hdr->counter_bits = o->counter_bits;
	hdr->confirm = o->confirm;
	hdr->capacity = o->capacity;
	hdr->fp_ppb = (__u32)(o->fp_rate * 1e9 + 0.5);
	hdr->type = o->type;
	hdr->flags = o->compact ? FB_HDRF_COMPACT : 0;
	if (o->type)
		memcpy(&f->blocks[FB_TYPE_GEOM_BLOCK], o->geom,
		       fb_type_geom_blocks(o->type) * FB_BLOCK_BYTES);
	if (getrandom(hdr->key, sizeof(hdr->key), 0) != sizeof(hdr->key)) {
		fb_report_err("getrandom: %s", strerror(errno));
		goto out;
	}
	if (fb_head_sync(f, false))
		goto out;

	if (!adopted) {
		LIBBPF_OPTS(bpf_map_create_opts, outer_opts, .inner_map_fd = fds[0]);

		/* Slot 0 the filter, then two sets of generations (ttl.h). */
		outer_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, FB_MAP_FILTER, sizeof(__u32),
					  sizeof(__u32), FB_FILTER_SLOTS, &outer_opts);
		stats_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, FB_MAP_STATS, sizeof(__u32),
					  sizeof(struct fb_stat_cells), 1, NULL);
		if (outer_fd < 0 || stats_fd < 0) {
			fb_report_err("cannot create maps: %s", strerror(errno));
			goto out;
		}
	}
	sets = fb_exact_sets_for(o->capacity, o->nblocks);
	if (o->confirm && fb_exact_create(f->dir_fd, sets > o->sets ? sets : o->sets))
		goto out;
	if (o->counter_bits) {
		size_t cbytes =
			fb_counting_map_bytes((__u64)o->nblocks * FB_BLOCK_BITS, o->counter_bits);
		LIBBPF_OPTS(bpf_map_create_opts, cnt_opts, .map_flags = BPF_F_MMAPABLE);
		void *cmem;

		cnt_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fb_counters", sizeof(__u32),
					FB_BLOCK_BYTES, cbytes / FB_BLOCK_BYTES, &cnt_opts);
		if (cnt_fd < 0) {
			fb_report_err("cannot create a %zu-byte counter array: %s", cbytes,
				      strerror(errno));
			goto out;
		}
		cmem = mmap(NULL, cbytes, PROT_READ | PROT_WRITE, MAP_SHARED, cnt_fd, 0);
		if (cmem == MAP_FAILED) {
			fb_report_err("cannot mmap the counter array: %s", strerror(errno));
			goto out;
		}
		fb_counting_init(cmem, o->counter_bits);
		munmap(cmem, cbytes);
		if (fb_pin_at(cnt_fd, f->dir_fd, fb_store_cnt_pin(hdr->gen)))
			goto pin_err;
	}
	/* One step: the chunks, then the head. */
	if (fb_chunks_install(outer_fd, hdr->gen, fds, n, 1))
		goto out;
	if (fb_pin_at(outer_fd, f->dir_fd, "filter") || fb_pin_at(stats_fd, f->dir_fd, "stats"))
		goto pin_err;
	/* Open it again the way every verb does, through the pins. */
	unmap_array(f);
	err = open_pins(f);
	goto out;
pin_err:
	fb_report_err("cannot pin the maps of '%s' in %s: %s", name, f->dir, strerror(errno));
out:
	/* Adopted maps belong to ip link's program: given back empty. */
	if (err && adopted > 0)
		fb_chunks_give_back(outer_fd, 0, n);
	/* fds[0] is f's (bits_fd), closed with it. */
	if (fds)
		fb_chunks_close(fds + 1, n - 1);
	free(fds);
	if (outer_fd >= 0)
		close(outer_fd);
	if (stats_fd >= 0)
		close(stats_fd);
	if (cnt_fd >= 0)
		close(cnt_fd);
	if (!err)
		return 0;
	fb_store_abort(f);
	return -1;
fail:
	fb_store_close(f);
	return -1;
}

int fb_store_publish(struct fb_store *f)
{
	if (!f->staged)
		return 0;
	/* Whatever the maker wrote into the header (an import: a key, kinds,
	 * lengths), the head agrees before anyone can attach the filter. */
	if (fb_head_sync(f, fb_store_live(f)))
		return -1;
	if (fb_pin_rename(f->root_fd, f->pin_name, f->name)) {
		if (errno == EEXIST || errno == ENOTEMPTY)
			fb_report_err("filter '%s' already exists", f->name);
		else
			fb_report_err("cannot publish filter '%s': %s", f->name, strerror(errno));
		return -1;
	}
	f->staged = false;
	snprintf(f->pin_name, sizeof(f->pin_name), "%s", f->name);
	snprintf(f->dir, sizeof(f->dir), "%s/%s", fb_pin_root(), f->name);
	/* After the rename: a kill in between leaves "default" without its
	 * ip-link pins (check reports it, check --repair pins them), never
	 * pins of a filter that does not exist. */
	if (!strcmp(f->name, FB_IPROUTE_FILTER) && fb_pin_iproute(f))
		return -1;
	return 0;
}

void fb_store_abort(struct fb_store *f)
{
	if (f->staged && f->root_fd >= 0) {
		if (f->adopted && f->outer_fd >= 0) {
			/* What an import put in generations of rules with a
			 * lifetime, too. */
			if (f->hdr && f->hdr->gens)
				fb_gens_retire(f, f->hdr->gen, f->hdr->gens);
			fb_chunks_give_back(f->outer_fd, f->hdr ? f->hdr->gen : 0, f->nchunks);
		}
		fb_pin_remove_tree(f->root_fd, f->pin_name, 0);
	}
	fb_store_close(f);
	rmdir(fb_pin_root()); /* only succeeds if no other filter is there */
}

int fb_store_create(const char *name, const struct fb_create_opts *o)
{
	struct fb_store f;
	int rc = fb_store_create_staged(name, o, &f);

	if (rc)
		return rc;
	if (fb_store_publish(&f)) {
		if (f.staged)
			fb_store_abort(&f);
		else
			fb_store_close(&f);
		return -1;
	}
	fb_store_close(&f);
	return 0;
}

/* Release the filter in use and what hangs off it (counters, the current
 * exact sets), keeping the pins open. */
static void unmap_array(struct fb_store *f)
{
	fb_chunks_munmap(f->map, f->nchunks);
	f->map = NULL;
	f->nchunks = 0;
	f->hdr = NULL;
	f->blocks = NULL;
	if (f->bits_fd >= 0)
		close(f->bits_fd);
	f->bits_fd = -1;
	f->bits_id = f->head_id = f->perm_id = 0;
	if (f->cnt_hdr)
		munmap(f->cnt_hdr, f->cnt_bytes);
	f->cnt_hdr = NULL;
	f->cnt = NULL;
	if (f->cnt_fd >= 0)
		close(f->cnt_fd);
	f->cnt_fd = -1;
	for (int i = 0; i < 3; i++) {
		if (f->set_fd[i] >= 0)
			close(f->set_fd[i]);
		f->set_fd[i] = -1;
	}
}

/* Is fd a chunk of this build's shape? 1, 0, or -1 if it cannot be read
 * now (errno: memory), which is no older build's. */
static int is_chunk(int fd, __u32 *id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	*id = info.id;
	return info.type == BPF_MAP_TYPE_ARRAY && info.key_size == sizeof(__u32) &&
	       info.value_size == FB_CHUNK_BYTES && info.max_entries == 1 &&
	       info.map_flags == FB_CHUNK_MAP_FLAGS;
}

/* A filter pinned by a build before the chunk layout: its outer map holds
 * one array of any size. Said plainly, never read. */
static int older_build(const struct fb_store *f)
{
	fb_report_err("filter '%s' was made by an older build of flowbloom (another map "
		      "layout): export it with that build and import it here, or `flowbloom "
		      "destroy %s` and create it again",
		      f->name, f->name);
	return -1;
}

/* Map the filter the outer map holds now (its head in slot 0, its chunks
 * in its generation's slots), and its counters and current exact sets. */
static int map_array(struct fb_store *f)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0, id, n;
	struct fb_head *page;
	bool quiet;
	int err, e;

	if (bpf_obj_get_info_by_fd(f->outer_fd, &info, &len))
		return fb_store_open_err(f);
	if (info.type != BPF_MAP_TYPE_ARRAY_OF_MAPS)
		return older_build(f);
	if (info.max_entries != FB_FILTER_SLOTS)
		return older_build(f);
	if (bpf_map_lookup_elem(f->outer_fd, &key, &id) ||
	    (f->bits_fd = bpf_map_get_fd_by_id(id)) < 0) {
		f->bits_fd = -1;
		if (errno != ENOENT)
			return fb_store_open_err(f);
		fb_report_err(
			"filter '%s' has no filter array (%s): flowbloom destroy %s removes it",
			f->name, strerror(errno), f->name);
		return -1;
	}
	err = is_chunk(f->bits_fd, &f->head_id);
	if (err < 0)
		return fb_store_open_err(f);
	if (!err)
		return older_build(f);
	/* The head first, by a copy: it says how many chunks to map. */
	page = malloc(FB_CHUNK_BYTES);
	if (!page) {
		fb_report_err("out of memory");
		return -1;
	}
	err = bpf_map_lookup_elem(f->bits_fd, &key, page);
	if (err) { /* a copy of a chunk: memory */
		free(page);
		return fb_store_open_err(f);
	}
	n = fb_chunks_for(page->hdr.nblocks);
	if (err || page->hdr.magic != FB_MAGIC || page->hdr.version != FB_VERSION ||
	    page->hdr.nblocks > FB_MAX_BLOCKS ||
	    (!page->hdr.type && (!page->hdr.k || page->hdr.k > FB_MAX_K))) {
		if (!err && page->hdr.magic == FB_MAGIC && page->hdr.version < FB_VERSION) {
			free(page);
			return older_build(f);
		}
		fb_report_err("filter '%s': bad header (magic %#x, version %u)", f->name,
			      page->hdr.magic, page->hdr.version);
		free(page);
		return -1;
	}
	quiet = fb_report_quiet;
	fb_report_quiet = true;
	f->map = fb_chunks_mmap_outer(f->outer_fd, f->bits_fd, page->hdr.gen, n);
	e = errno;
	fb_report_quiet = quiet;
	free(page);
	if (!f->map) {
		/* A chunk not read now (memory, descriptors): not damage, and
		 * said as check and list tell it ("cannot open filter"). */
		errno = e;
		if (fb_store_err_now(e))
			return fb_store_open_err(f);
		fb_report_err("%s", fb_report_last);
		return -1;
	}
	f->nchunks = n;
	f->map_bytes = (size_t)n * FB_CHUNK_BYTES;
	f->hdr = (struct fb_header *)((char *)f->map + FB_HEAD_SHIFT * FB_BLOCK_BYTES);
	f->blocks = (struct fb_block *)f->hdr;
	f->bits_id = fb_store_head(f)->keys.array_id;
	f->perm_id = fb_store_head(f)->keys.perm_id ? fb_store_head(f)->keys.perm_id : f->bits_id;
	/* Another filter type's geometry is input too (the types' check,
	 * types/ftype.h); an import being built aside checks it once read. */
	if (f->hdr->type && !f->staged) {
		char why[200] = "filter types unknown to this program";

		if (f->hdr->counter_bits || !types ||
		    types->check(f->hdr, f->blocks, why, sizeof(why))) {
			fb_report_err("filter '%s': bad header (%s)", f->name,
				      f->hdr->counter_bits ? "counters on a typed filter" : why);
			return -1;
		}
	}
	if (f->hdr->counter_bits && fb_store_open_counters(f))
		return -1;
	if (f->hdr->confirm && fb_exact_open(f))
		return -1;
	return 0;
}

/* The id of the head in the outer map now (0: none). */
static __u32 current_array(const struct fb_store *f)
{
	__u32 key = 0, id = 0;

	return bpf_map_lookup_elem(f->outer_fd, &key, &id) ? 0 : id;
}

/* The array in use, mapped whole. A reader without the lock may meet a
 * `load --replace` between reading the head in slot 0 and mapping its
 * chunks, counters and sets, which it releases (an empty chunk then
 * answers "no" to every flow) or a second replace fills anew: the head
 * must still be in slot 0 (each replace makes a new one) once all is
 * mapped, else it tries again, the last time under a shared lock. */
#define MAP_TRIES 5
static int map_current(struct fb_store *f)
{
	bool quiet = fb_report_quiet, alone = f->locked || f->staged, lock;
	int tries, rc;

	for (tries = 0;; tries++) {
		__u32 tried;

		lock = !alone && tries == MAP_TRIES - 1 && !flock(f->dir_fd, LOCK_SH);
		fb_report_quiet = quiet || tries < MAP_TRIES - 1;
		rc = map_array(f);
		fb_report_quiet = quiet;
		if (!rc && (alone || lock || current_array(f) == f->head_id))
			break;
		tried = f->head_id;
		unmap_array(f);
		if (lock)
			flock(f->dir_fd, LOCK_UN);
		if (rc && (tries == MAP_TRIES - 1 || !tried || current_array(f) == tried)) {
			if (tries < MAP_TRIES - 1 && !quiet)
				fb_report_err("%s", fb_report_last);
			return -1;
		}
		if (!rc && tries == MAP_TRIES - 1) {
			fb_report_err("filter '%s' was replaced again and again while it was "
				      "read: try again",
				      f->name);
			return -1;
		}
	}
	if (lock)
		flock(f->dir_fd, LOCK_UN);
	return 0;
}

int fb_store_remap(struct fb_store *f)
{
	unmap_array(f);
	return map_current(f);
}

bool fb_store_moved(const struct fb_store *f)
{
	return !f->locked && !f->staged && current_array(f) != f->head_id;
}

/* With dir_fd open: the pins, then the array in use. */
static int open_pins(struct fb_store *f)
{
	f->outer_fd = fb_pin_get(f->dir_fd, "filter");
	if (f->outer_fd >= 0)
		f->stats_fd = fb_pin_get(f->dir_fd, "stats");
	if (f->outer_fd < 0 || f->stats_fd < 0) {
		/* Damaged; or a link, or only not opened now (ulimit -n,
		 * memory, the kernel's refusal): said as such. */
		if (fb_store_pin_refused(f, f->outer_fd < 0 ? "filter" : "stats"))
			return -1;
		fb_report_err("filter '%s' is incomplete (%s): flowbloom destroy %s removes it",
			      f->name, strerror(errno), f->name);
		return -1;
	}
	f->outer_id = fb_map_id(f->outer_fd);
	f->stats_id = fb_map_id(f->stats_fd);
	return map_current(f);
}

int fb_store_open(const char *name, struct fb_store *f)
{
	bool quiet = fb_report_quiet;
	int e;

	fb_store_init(f);
	f->fail = FB_OPEN_DAMAGED;
	fb_pin_why = FB_PIN_NONE;
	if (fb_pin_check_name(name))
		return -1;
	snprintf(f->name, sizeof(f->name), "%s", name);
	/* bpffs not known to be there or not (memory): not opened now. */
	fb_report_quiet = true;
	e = fb_pin_check_bpffs() ? errno : 0;
	fb_report_quiet = quiet;
	if (e) {
		errno = e;
		if (fb_store_err_now(e))
			fb_store_open_err(f);
		else
			fb_report_err("%s", fb_report_last);
		goto fail;
	}
	snprintf(f->pin_name, sizeof(f->pin_name), "%s", name);
	snprintf(f->dir, sizeof(f->dir), "%s/%s", fb_pin_root(), name);
	/* The walk to it, or its directory, not opened for a limit of this
	 * process (ulimit -n, memory) or refused by the kernel: the filter is
	 * not known to be absent or broken (fb_pin_why says which). */
	fb_report_quiet = true;
	f->root_fd = fb_pin_open_root(false);
	e = errno;
	fb_report_quiet = quiet;
	if (f->root_fd < 0) {
		errno = e;
		if (f->root_fd == -2) {
			fb_report_err("no filter named '%s' (see flowbloom list)", name);
			f->fail = FB_OPEN_ABSENT;
		} else if (fb_store_err_now(e) && e != EPERM && e != EACCES) {
			fb_store_open_err(f);
		} else { /* (the kernel's refusal: where, and what it needs) */
			fb_report_err("%s", fb_report_last);
		}
		f->root_fd = -1;
		goto fail;
	}
	f->dir_fd = fb_pin_open_dir(f->root_fd, name);
	if (f->dir_fd < 0) {
		if (errno == ENOENT) {
			fb_report_err("no filter named '%s' (see flowbloom list)", name);
			f->fail = FB_OPEN_ABSENT;
		} else if (fb_pin_why == FB_PIN_UNTRUSTED)
			fb_pin_report_link(f->dir);
		else if (errno == ELOOP || errno == ENOTDIR)
			fb_report_err("%s is not a directory: refusing it", f->dir);
		else if (fb_store_err_now(errno))
			fb_store_open_err(f);
		else
			fb_report_err("cannot open %s: %s", f->dir, strerror(errno));
		goto fail;
	}
	if (fb_pin_trusted(f->dir_fd, f->dir, false) || open_pins(f))
		goto fail;
	f->fail = 0;
	return 0;
fail:
	/* Why, as decided where it failed (fb_pin_why). */
	if (f->fail != FB_OPEN_ABSENT && fb_pin_why)
		f->fail = fb_pin_why == FB_PIN_UNTRUSTED ? FB_OPEN_UNTRUSTED : FB_OPEN_UNKNOWN;
	fb_store_close(f);
	return -1;
}

void fb_store_close(struct fb_store *f)
{
	unmap_array(f);
	if (f->exact_fd >= 0)
		close(f->exact_fd);
	if (f->lpm_fd >= 0)
		close(f->lpm_fd);
	f->exact_fd = f->lpm_fd = -1;
	if (f->dir_fd >= 0)
		close(f->dir_fd);
	if (f->root_fd >= 0)
		close(f->root_fd);
	if (f->outer_fd >= 0)
		close(f->outer_fd);
	if (f->stats_fd >= 0)
		close(f->stats_fd);
	f->dir_fd = f->root_fd = f->outer_fd = f->stats_fd = -1;
}

/* After waiting for the lock: is this still the filter (not destroyed
 * meanwhile), and is its array still the one in use (not replaced)? A
 * writer that opened the filter before a `load --replace` switched arrays
 * would otherwise write into the retired one. */
static int refresh(struct fb_store *f)
{
	if (!fb_store_still_named(f, f->pin_name)) {
		fb_report_err("filter '%s' was destroyed while this command waited for its lock",
			      f->name);
		return -1;
	}
	/* A scalable filter's growth keeps the head and appends chunks
	 * (fb_replace_grow): a mapping made before it is too short for the
	 * header's blocks, and a write past it would fault, or grow the
	 * filter again over the chunks just appended. */
	if (f->outer_fd < 0 || (current_array(f) == f->head_id &&
				(!f->hdr || fb_chunks_for(f->hdr->nblocks) <= f->nchunks)))
		return 0;
	unmap_array(f);
	return map_array(f);
}

int fb_store_flock(struct fb_store *f, int op)
{
	if (flock(f->dir_fd, op & ~FB_LOCK_NOREFRESH)) {
		fb_report_err("cannot lock filter '%s': %s", f->name, strerror(errno));
		return -1;
	}
	f->locked = !(op & LOCK_UN);
	if (!(op & (LOCK_UN | FB_LOCK_NOREFRESH)) && refresh(f)) {
		fb_store_unlock(f);
		return -1;
	}
	return 0;
}

int fb_store_lock(struct fb_store *f)
{
	if (fb_store_flock(f, LOCK_EX))
		return -1;
	if (f->cnt_hdr && !types) {
		fb_report_err("filter '%s': counting filters are unknown to this program", f->name);
		fb_store_unlock(f);
		return -1;
	}
	/* Counting filters roll back a flow; cuckoo and d-left filters
	 * roll back a batch (types/batchlog.h). (A typed filter was opened only
	 * by a program that knows the types.) */
	if (f->cnt_hdr || (types && f->hdr->type)) {
		int r = types->recover(f);

		if (r < 0) {
			fb_store_unlock(f);
			return -1;
		}
		if (r)
			fb_report(FB_REPORT_NOTE, "rolled back one flow of an interrupted write");
	}
	return 0;
}

void fb_store_unlock(struct fb_store *f)
{
	flock(f->dir_fd, LOCK_UN);
	f->locked = false;
}
