// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The head's key words and probe table, kept in step with the header
 * (head.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "report.h"
#include "store/chunks.h"
#include "store/head.h"

int fb_head_want(const struct fb_store *f, struct fb_head_keys *keys,
		 struct fb_probe probe[FB_FAMILIES][FB_MAX_PROBES])
{
	const struct fb_prefixes *px = (const struct fb_prefixes *)&f->blocks[1];

	memset(keys, 0, sizeof(*keys));
	memset(probe, 0, sizeof(struct fb_probe) * FB_FAMILIES * FB_MAX_PROBES);
	fb_nhk_words(f->hdr->key, keys->kw);
	keys->key_of[0] = f->hdr->key[0];
	keys->key_of[1] = f->hdr->key[1];
	if (fb_probes_build(f->hdr, px, keys->kw, probe, keys->nprobe)) {
		fb_report_err("filter '%s' has more than %d prefix lengths in a list: this build "
			      "probes at most %d (load --replace from its rule list expands them)",
			      f->name, FB_MAX_LENGTHS, FB_MAX_LENGTHS);
		return -1;
	}
	return 0;
}

bool fb_head_current(const struct fb_store *f)
{
	struct fb_probe probe[FB_FAMILIES][FB_MAX_PROBES];
	const struct fb_head *h = fb_store_head(f);
	struct fb_head_keys keys;

	return !fb_head_want(f, &keys, probe) && !memcmp(&h->keys, &keys, sizeof(keys)) &&
	       !memcmp(h->probe, probe, sizeof(probe));
}

/* Can the live table grow into want by appending? */
static bool appends(const struct fb_head *h, const struct fb_head_keys *keys,
		    const struct fb_probe want[FB_FAMILIES][FB_MAX_PROBES])
{
	int fam;

	if (memcmp(h->keys.kw, keys->kw, sizeof(keys->kw)) ||
	    memcmp(h->keys.key_of, keys->key_of, sizeof(keys->key_of)))
		return false;
	for (fam = 0; fam < FB_FAMILIES; fam++)
		if (h->keys.nprobe[fam] > keys->nprobe[fam] ||
		    memcmp(h->probe[fam], want[fam], h->keys.nprobe[fam] * sizeof(struct fb_probe)))
			return false;
	return true;
}

/* The head swapped whole: a copy of chunk 0 holding the new table. */
static int swap(struct fb_store *f, const struct fb_head_keys *keys,
		const struct fb_probe want[FB_FAMILIES][FB_MAX_PROBES])
{
	struct fb_head *nh;
	void *copy;
	int fd, err = -1;

	if (fb_chunks_create(1, &fd))
		return -1;
	copy = fb_chunks_mmap(&fd, 1);
	if (!copy)
		goto out;
	memcpy(copy, f->map, FB_CHUNK_BYTES);
	nh = copy;
	memcpy(nh->probe, want, sizeof(nh->probe));
	nh->keys = *keys;
	/* Chunk 0's slot first, then slot 0: a packet that finds the new
	 * head finds its chunk 0, and the old chunk 0 has the same bits. */
	if (fb_chunks_install(f->outer_fd, f->hdr->gen, &fd, 1, 1))
		goto out;
	/* The mapping follows: the copy takes the old chunk 0's place. */
	if (fb_chunks_mmap_at(f->map, 0, &fd, 1))
		goto out;
	close(f->bits_fd);
	f->bits_fd = fd;
	fd = -1;
	f->bits_id = 0;
	{
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(f->bits_fd, &info, &len))
			f->bits_id = info.id;
	}
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
	struct fb_probe want[FB_FAMILIES][FB_MAX_PROBES];
	struct fb_head *h = fb_store_head(f);
	struct fb_head_keys keys;
	int fam, i;

	if (fb_head_want(f, &keys, want))
		return -1;
	if (!memcmp(&h->keys, &keys, sizeof(keys)) && !memcmp(h->probe, want, sizeof(want)))
		return 0;
	if (!live) {
		memcpy(h->probe, want, sizeof(want));
		h->keys = keys;
		return 0;
	}
	if (!appends(h, &keys, want))
		return swap(f, &keys, want);
	for (fam = 0; fam < FB_FAMILIES; fam++) {
		for (i = h->keys.nprobe[fam]; i < keys.nprobe[fam]; i++)
			h->probe[fam][i] = want[fam][i];
		__atomic_store_n(&h->keys.nprobe[fam], keys.nprobe[fam], __ATOMIC_RELEASE);
	}
	return 0;
}
