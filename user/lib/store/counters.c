// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The counter map (see counters.h): its layout, its pin names, opening
 * and mapping it with its filter (store.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "flowbloom/geometry.h"
#include "report.h"
#include "store/counters.h"
#include "store/pintree.h"
#include "store/store.h"

size_t fb_counting_data_bytes(__u64 mbits, unsigned bits)
{
	__u64 bytes = (mbits * bits + 7) / 8;

	return (bytes + FB_BLOCK_BYTES - 1) / FB_BLOCK_BYTES * FB_BLOCK_BYTES;
}

/* A quarter of the counters: a batch's part then holds about 1/(4 k 16 /
 * 8) of the filter's counters' worth of flows (counting_log.h); at least
 * 32 KiB (290 flows of k = 7 a part), at most 16 MiB. */
size_t fb_counting_log_bytes(size_t data_bytes)
{
	size_t b = data_bytes / 4;

	b = b < ((size_t)32 << 10) ? (size_t)32 << 10 : b;
	b = b > ((size_t)16 << 20) ? (size_t)16 << 20 : b;
	return b / FB_BLOCK_BYTES * FB_BLOCK_BYTES;
}

size_t fb_counting_map_bytes(__u64 mbits, unsigned bits)
{
	size_t data = fb_counting_data_bytes(mbits, bits);

	return FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES + data + fb_counting_log_bytes(data);
}

void fb_counting_init(struct fb_cnt_header *ch, unsigned bits)
{
	ch->magic = FB_CNT_MAGIC;
	ch->bits = bits;
}

/* The counters of a counting filter are pinned per generation (the
 * header's gen, which `load --replace` flips with the array): the array in
 * use names its counters, so bits and counters are switched together. */
const char *fb_store_cnt_pin(unsigned gen)
{
	return gen & 1 ? "counters1" : "counters";
}

int fb_store_open_counters(struct fb_store *f)
{
	size_t want = fb_counting_map_bytes(fb_header_mbits(f->hdr), f->hdr->counter_bits);
	size_t old = FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES +
		     fb_counting_data_bytes(fb_header_mbits(f->hdr), f->hdr->counter_bits);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	f->cnt_fd = fb_pin_get(f->dir_fd, fb_store_cnt_pin(f->hdr->gen));
	f->cnt_legacy = false;
	if (f->cnt_fd < 0 && errno == ENOENT && (f->hdr->gen & 1)) {
		/* Made by a build that pinned the counters as "counters" in
		 * both generations. (Unreachable otherwise: an array of
		 * generation 1 is installed only after "counters1" is
		 * pinned.) fb_store_migrate_counters() renames it. */
		f->cnt_fd = fb_pin_get(f->dir_fd, "counters");
		f->cnt_legacy = f->cnt_fd >= 0;
	}
	if (f->cnt_fd < 0 && fb_store_pin_refused(f, fb_store_cnt_pin(f->hdr->gen)))
		return -1;
	if (f->cnt_fd < 0) {
		fb_report_err("counting filter '%s' has no counters (%s): flowbloom destroy %s "
			      "removes it",
			      f->name, strerror(errno), f->name);
		return -1;
	}
	if (bpf_obj_get_info_by_fd(f->cnt_fd, &info, &len))
		return fb_store_open_err(f); /* memory: not damage */
	/* An earlier build's map has no batch journal (its batches are
	 * journaled a flow at a time, counting_log.h). */
	if ((size_t)info.max_entries * info.value_size == old)
		want = old;
	if ((size_t)info.max_entries * info.value_size != want) {
		fb_report_err("filter '%s': counter array has the wrong size", f->name);
		return -1;
	}
	f->cnt_bytes = want;
	f->cnt_hdr = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, f->cnt_fd, 0);
	if (f->cnt_hdr == MAP_FAILED) {
		f->cnt_hdr = NULL;
		fb_report_err("cannot mmap the counters of '%s': %s", f->name, strerror(errno));
		return -1;
	}
	f->cnt = (__u8 *)f->cnt_hdr + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
	if (f->cnt_hdr->magic != FB_CNT_MAGIC || f->cnt_hdr->bits != f->hdr->counter_bits) {
		fb_report_err("filter '%s': bad counter header", f->name);
		return -1;
	}
	return 0;
}

/* A filter from an earlier build in generation 1 with its counters pinned
 * as "counters": pin them as "counters1" too, then drop the old name
 * (killed in between, both names hold the same map: still consistent).
 * Call with the lock held. */
int fb_store_migrate_counters(struct fb_store *f)
{
	if (!f->cnt_legacy)
		return 0;
	if (fb_pin_at(f->cnt_fd, f->dir_fd, fb_store_cnt_pin(1)) && errno != EEXIST) {
		fb_report_err("cannot pin the counters of '%s' as %s: %s", f->name,
			      fb_store_cnt_pin(1), strerror(errno));
		return -1;
	}
	unlinkat(f->dir_fd, fb_store_cnt_pin(0), 0);
	f->cnt_legacy = false;
	return 0;
}
