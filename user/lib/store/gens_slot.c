// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rules with a lifetime: a generation's slot range in the outer map, read
 * and emptied (gens_slot.h), and the slots of both sets that no mask
 * names (retired, stale). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "report.h"
#include "store/chunks.h"
#include "store/gens.h"
#include "store/gens_slot.h"
#include "store/head.h"
#include "store/pintree.h"
#include "util.h"

/* A generation's counters are pinned by its slot range (ttl.h). */
void fb_gslot_cnt_pin(char *buf, size_t len, __u32 range)
{
	snprintf(buf, len, "gcnt%u", range);
}

/* The head (chunk 0) of the generation in slot range `range`, or -1
 * (none: errno ENOENT). */
int fb_gslot_head_fd(const struct fb_store *f, __u32 range)
{
	return fb_chunks_slot_fd(f->outer_fd, fb_range_slot(range, 0), NULL);
}

/* The header in a head chunk fd (read through a mapping of its first page:
 * a lookup would copy the whole chunk); 0, -1 if it is no generation's
 * of range, -2 if it cannot be mapped (errno). */
int fb_gslot_head_header(int fd, __u32 range, struct fb_header *h)
{
	void *m = mmap(NULL, FB_PAGE_BYTES, PROT_READ, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		return -2;
	memcpy(h, &((const struct fb_head *)m)->hdr, sizeof(*h));
	munmap(m, FB_PAGE_BYTES);
	return h->magic == FB_MAGIC && h->version == FB_VERSION &&
			       (h->flags & FB_HDRF_GENERATION) && h->gen == range &&
			       fb_chunks_for(h->nblocks) <= FB_GEN_MAX_CHUNKS
		       ? 0
		       : -1;
}

/* The header of the generation in slot range `range`; 0, -1 if there
 * is none, -2 if it cannot be read now (errno: memory, descriptors), which
 * is never taken for none (a reclaim would drop a live generation). */
int fb_gslot_header(const struct fb_store *f, __u32 range, struct fb_header *h)
{
	int fd = fb_gslot_head_fd(f, range), rc;

	if (fd < 0)
		return errno == ENOENT ? -1 : -2;
	rc = fb_gslot_head_header(fd, range, h);
	close(fd);
	return rc;
}
/* How many chunks the generation in slot range `range` holds (1 if
 * there is none, or no generation's head), 0 (errno) if its head cannot
 * be read now: cleared as one chunk, its others would stay held where
 * check never looks (the slot's next generation takes the head). */
__u32 fb_gslot_chunks(const struct fb_store *f, __u32 range)
{
	struct fb_header h;
	int r = fb_gslot_header(f, range, &h);

	return r == -2 ? 0 : r ? 1 : fb_chunks_for(h.nblocks);
}

/* The chunk slots of range from `from` on that hold a chunk, up to the
 * first empty one (*end), and how many distinct chunks they hold
 * (*maps): what a smaller generation left past its own. 0, or -1 (errno)
 * if a slot cannot be read (not read is no end). */
static int tail(const struct fb_store *f, __u32 range, __u32 from, __u32 *end, __u32 *maps)
{
	__u32 ids[FB_GEN_MAX_CHUNKS], i, j, slot;

	*maps = 0;
	for (i = from; i < FB_GEN_MAX_CHUNKS; i++) {
		slot = fb_range_slot(range, i);
		if (bpf_map_lookup_elem(f->outer_fd, &slot, &ids[i])) {
			if (errno != ENOENT)
				return -1;
			break;
		}
		for (j = from; j < i && ids[j] != ids[i]; j++)
			;
		*maps += j == i;
	}
	*end = i;
	return 0;
}

/*
 * Empty a slot range of its n chunks (fb_gslot_chunks()) and its counters'
 * pin: its other chunks first, in one batch, then the head. 0, or -1
 * (fb_report_last, quietly) with the head and the pin left: the range is
 * still a generation, which check reports and check --repair clears whole
 * (with the head gone first, chunks it failed to release stayed held
 * where nothing looks). The batch takes the slots past the n as well
 * where they hold more than the one empty chunk an earlier clear left
 * (a larger generation's, or a leftover's chunks): the range then holds
 * that one chunk past its head at most. Each update waits until no
 * program holds what it replaced. A range is cleared once no program
 * reaches it (retired after the switch, or named by no mask) or out of
 * the mask (reclaimed, repaired): a program that read the mask before
 * may still find the head with empty chunks, a miss for a generation that
 * has ended (the data path reads chunks only after the head said it had
 * not, a moment earlier) or whose rules are being taken out.
 */
int fb_gslot_clear(const struct fb_store *f, __u32 range, __u32 n)
{
	__u32 slot = fb_range_slot(range, 0), end, maps;
	bool quiet = fb_report_quiet;
	char pin[32];
	int rc = 0;

	if (tail(f, range, n, &end, &maps)) {
		snprintf(fb_report_last, sizeof(fb_report_last),
			 "cannot read the filter's chunks: %s", strerror(errno));
		return -1;
	}
	fb_report_quiet = true;
	if (n > 1 || maps > 1)
		rc = fb_chunks_release(f->outer_fd, range, 1, end > n ? end : n);
	fb_report_quiet = quiet;
	if (rc)
		return -1;
	if (bpf_map_delete_elem(f->outer_fd, &slot) && errno != ENOENT) {
		snprintf(fb_report_last, sizeof(fb_report_last),
			 "cannot release the filter's chunks: %s", strerror(errno));
		return -1;
	}
	fb_gslot_cnt_pin(pin, sizeof(pin), range);
	unlinkat(f->dir_fd, pin, 0);
	return 0;
}

int fb_gslot_ready(const struct fb_store *f, __u32 range, __u32 n)
{
	__u32 end, maps, nc;
	int fd = fb_gslot_head_fd(f, range);

	if (fd >= 0) {
		close(fd);
		nc = fb_gslot_chunks(f, range);
		if (!nc)
			snprintf(fb_report_last, sizeof(fb_report_last), "cannot read its head: %s",
				 strerror(errno));
		return !nc || fb_gslot_clear(f, range, nc) ? -1 : 0;
	}
	if (errno != ENOENT) {
		snprintf(fb_report_last, sizeof(fb_report_last), "cannot read its head: %s",
			 strerror(errno));
		return -1;
	}
	if (tail(f, range, n, &end, &maps)) {
		snprintf(fb_report_last, sizeof(fb_report_last),
			 "cannot read the filter's chunks: %s", strerror(errno));
		return -1;
	}
	/* An older build's clears left an empty chunk of each size. */
	if (maps > 1) {
		bool quiet = fb_report_quiet;
		int rc;

		fb_report_quiet = true;
		rc = fb_chunks_release(f->outer_fd, range, n, end);
		fb_report_quiet = quiet;
		return rc ? -1 : 0;
	}
	return 0;
}

void fb_gens_retire(struct fb_store *f, unsigned set, __u32 mask)
{
	unsigned g;
	__u32 n;

	for (g = 0; g < FB_GEN_SLOTS; g++) {
		if (!(mask & 1U << g))
			continue;
		/* Its head not read (cleared as one chunk, its others would
		 * stay held where check never looks), or its chunks not
		 * released: left whole, a stale generation check reports. */
		n = fb_gslot_chunks(f, fb_gen_range(set, g));
		if (!n)
			snprintf(fb_report_last, sizeof(fb_report_last), "cannot read its head: %s",
				 strerror(errno));
		if (!n || fb_gslot_clear(f, fb_gen_range(set, g), n))
			fb_report(FB_REPORT_NOTE,
				  "generation %u of '%s' is retired, but its chunks are still held "
				  "(%s): `flowbloom check --repair %s` releases them",
				  g, f->name, fb_report_last, f->name);
	}
}

int fb_gens_stale(struct fb_store *f, unsigned set, bool repair)
{
	__u32 mask = (set & 1) == (f->hdr->gen & 1) ? f->hdr->gens : 0;
	unsigned g;
	int n = 0;

	for (g = 0; g < FB_GEN_SLOTS; g++) {
		__u32 range = fb_gen_range(set, g), slot = fb_range_slot(range, 0), id;
		char pin[32];
		int fd, stale = 0;

		if (mask & 1U << g)
			continue;
		fb_gslot_cnt_pin(pin, sizeof(pin), range);
		stale = !bpf_map_lookup_elem(f->outer_fd, &slot, &id);
		if (!stale && errno != ENOENT)
			goto err;
		fd = fb_pin_get(f->dir_fd, pin);
		if (fd >= 0) {
			close(fd);
			stale = 1;
		} else if (errno != ENOENT) {
			goto err;
		}
		n += stale;
		if (stale && repair) {
			__u32 nc = fb_gslot_chunks(f, range);

			if (!nc)
				goto err;
			if (fb_gslot_clear(f, range, nc)) {
				fb_report_err("%s", fb_report_last);
				return -1;
			}
		}
	}
	return n;
err: /* not read: not clean either */
	fb_report_err("cannot read the generations of '%s': %s", f->name, strerror(errno));
	return -1;
}
