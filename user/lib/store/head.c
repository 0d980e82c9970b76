// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The head's probe table and the header's derived fields, kept in step
 * with the header and the prefix table (head.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "report.h"
#include "util.h"
#include "store/chunks.h"
#include "store/gens.h"
#include "store/head.h"

int fb_head_want(const struct fb_store *f, struct fb_head_want *w)
{
	const struct fb_prefixes *px = (const struct fb_prefixes *)&f->blocks[1];

	memset(w, 0, sizeof(*w));
	fb_nhk_words(f->hdr->key, w->keys.kw);
	w->keys.key_of[0] = f->hdr->key[0];
	w->keys.key_of[1] = f->hdr->key[1];
	w->keys.array_id = fb_store_head(f)->keys.array_id;
	w->keys.perm_id = fb_store_head(f)->keys.perm_id;
	w->fast = fb_probes_fast(f->hdr);
	if (fb_probes_build(f->hdr, px, w->keys.kw, w->probe, w->nprobe)) {
		fb_report_err("filter '%s' has more than %d prefix lengths in a list: this build "
			      "probes at most %d (load --replace from its rule list expands them)",
			      f->name, FB_MAX_LENGTHS, FB_MAX_LENGTHS);
		return -1;
	}
	return 0;
}

static bool same(const struct fb_store *f, const struct fb_head_want *w)
{
	const struct fb_head *h = fb_store_head(f);

	return !memcmp(&h->keys, &w->keys, sizeof(w->keys)) &&
	       !memcmp(h->probe, w->probe, sizeof(w->probe)) && h->hdr.fast == w->fast &&
	       !memcmp(h->hdr.nprobe, w->nprobe, sizeof(w->nprobe));
}

bool fb_head_current(const struct fb_store *f)
{
	struct fb_head_want w;

	return !fb_head_want(f, &w) && same(f, &w);
}

/* Can the live table grow into w by appending? */
static bool appends(const struct fb_head *h, const struct fb_head_want *w)
{
	int fam;

	if (memcmp(&h->keys, &w->keys, sizeof(w->keys)) || h->hdr.fast != w->fast)
		return false;
	for (fam = 0; fam < FB_FAMILIES; fam++)
		if (h->hdr.nprobe[fam] > w->nprobe[fam] ||
		    memcmp(h->probe[fam], w->probe[fam],
			   h->hdr.nprobe[fam] * sizeof(struct fb_probe)))
			return false;
	return true;
}

static void write_all(struct fb_head *h, const struct fb_head_want *w)
{
	memcpy(h->probe, w->probe, sizeof(h->probe));
	h->keys = w->keys;
	h->hdr.fast = w->fast;
	memcpy(h->hdr.nprobe, w->nprobe, sizeof(w->nprobe));
}

/* The head swapped whole: a copy of chunk 0 holding the new table. */
static int swap(struct fb_store *f, const struct fb_head_want *w)
{
	void *copy;
	int fd, err = -1;

	if (fb_chunks_create(1, &fd))
		return -1;
	copy = fb_chunks_mmap(&fd, 1);
	if (!copy)
		goto out;
	memcpy(copy, f->map, FB_CHUNK_BYTES);
	write_all(copy, w);
	/* Chunk 0's slot first, then slot 0: a packet that finds the new
	 * head finds its chunk 0, and the old chunk 0 has the same bits. A
	 * generation of rules with a lifetime (ttl.h) has no slot 0: its
	 * head is its range's chunk 0. */
	if (fb_chunks_install(f->outer_fd, f->hdr->gen, &fd, 1,
			      !(f->hdr->flags & FB_HDRF_GENERATION)))
		goto out;
	/* The mapping follows: the copy takes the old chunk 0's place. */
	if (fb_chunks_mmap_at(f->map, 0, &fd, 1))
		goto out;
	close(f->bits_fd);
	f->bits_fd = fd;
	f->head_id = fb_map_id(fd);
	fd = -1;
	err = 0;
out:
	if (copy)
		fb_chunks_munmap(copy, 1);
	if (fd >= 0)
		close(fd);
	return err;
}

int fb_head_sync(struct fb_store *f, bool live)
{
	struct fb_head *h = fb_store_head(f);
	struct fb_head_want w;
	int fam, i;

	if (fb_head_want(f, &w))
		return -1;
	if (same(f, &w))
		return 0;
	if (!live) {
		write_all(h, &w);
		return 0;
	}
	if (!appends(h, &w))
		return swap(f, &w);
	for (fam = 0; fam < FB_FAMILIES; fam++) {
		for (i = h->hdr.nprobe[fam]; i < w.nprobe[fam]; i++)
			h->probe[fam][i] = w.probe[fam][i];
		__atomic_store_n(&h->hdr.nprobe[fam], w.nprobe[fam], __ATOMIC_RELEASE);
	}
	return 0;
}

/* f's probe table and each live generation's (its own head, ttl.h): 0 if
 * all are current, 1 if one is not (with sync: was, and is rebuilt), -1
 * if a rebuild failed (reported). Generations that cannot be opened are
 * left to check. */
static int heads(struct fb_store *f, bool sync)
{
	struct fb_gen_views gv;
	bool quiet = fb_report_quiet;
	int i, n, rc = 0;

	if (!fb_head_current(f)) {
		if (sync && fb_head_sync(f, fb_store_live(f)))
			return -1;
		rc = 1;
	}
	if (!f->hdr->gens)
		return rc;
	fb_report_quiet = true;
	n = fb_gens_views_open(f, &gv);
	fb_report_quiet = quiet;
	for (i = 0; i < n; i++) {
		if (fb_head_current(&gv.v[i]))
			continue;
		rc = 1;
		if (sync && fb_head_sync(&gv.v[i], true)) {
			rc = -1;
			break;
		}
	}
	if (n > 0)
		fb_gens_views_close(&gv);
	return rc;
}

int fb_head_refresh(struct fb_store *f)
{
	int rc;

	if (!heads(f, false))
		return 0;
	if (fb_store_lock(f))
		return -1;
	/* Looked at again under the lock: another writer may have synced. */
	rc = heads(f, true);
	if (rc > 0)
		fb_report(FB_REPORT_NOTE,
			  "filter '%s': rebuilt the data path's probe table (another build "
			  "of flowbloom wrote it)",
			  f->name);
	fb_store_unlock(f);
	return rc < 0 ? -1 : 0;
}
