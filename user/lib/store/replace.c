// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Replace a filter's array: a new one (and counters, exact sets) filled
 * aside, then switched to in one step. What fills it is the caller's
 * (rules.c: `load --replace`; algebra.c; a scalable filter's growth). */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "types/counting.h"
#include "store/exact.h"
#include "store/gens.h"
#include "report.h"
#include "store/pintree.h"
#include "store/replace.h"
#include "util.h"

int fb_replace_fill(struct fb_store *f, __u32 nblocks, __u8 k, size_t nsets,
		    int (*fill)(struct fb_store *nf, void *arg), void *arg)
{
	LIBBPF_OPTS(bpf_map_create_opts, inner_opts, .map_flags = FB_INNER_MAP_FLAGS);
	struct fb_store nf = *f;
	__u32 entries = nblocks + FB_HDR_BLOCKS, zero = 0;
	size_t bytes = (size_t)entries * FB_BLOCK_BYTES;
	bool pinned = false;
	int err = -1;

	if (fb_store_migrate_counters(f))
		return -1;
	nf.cnt_hdr = NULL;
	nf.cnt_fd = -1;
	nf.set_fd[0] = nf.set_fd[1] = nf.set_fd[2] = -1;
	nf.bits_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fb_bits", sizeof(__u32), FB_BLOCK_BYTES,
				    entries, &inner_opts);
	if (nf.bits_fd < 0) {
		fb_report_err("cannot create a %zu-byte filter array: %s", bytes, strerror(errno));
		return -1;
	}
	nf.map_bytes = bytes;
	nf.hdr = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, nf.bits_fd, 0);
	if (nf.hdr == MAP_FAILED) {
		fb_report_err("cannot mmap the new filter array: %s", strerror(errno));
		nf.hdr = NULL;
		goto out;
	}
	nf.blocks = (struct fb_block *)nf.hdr;
	/* Same identity, key and settings; new geometry, no rules yet. */
	*nf.hdr = *f->hdr;
	nf.hdr->nblocks = nblocks;
	nf.hdr->k = k;
	nf.hdr->kinds = 0;
	nf.hdr->nflows = 0;
	nf.hdr->gens = 0;
	/* The other generation: of the exact sets, and of the counters' pin
	 * name. Switching the array switches both. */
	nf.hdr->gen = f->hdr->gen ^ 1;
	if (f->cnt_hdr) {
		size_t cbytes =
			fb_counting_map_bytes((__u64)nblocks * FB_BLOCK_BITS, f->hdr->counter_bits);
		LIBBPF_OPTS(bpf_map_create_opts, cnt_opts, .map_flags = BPF_F_MMAPABLE);

		nf.cnt_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fb_counters", sizeof(__u32),
					   FB_BLOCK_BYTES, cbytes / FB_BLOCK_BYTES, &cnt_opts);
		nf.cnt_hdr = nf.cnt_fd < 0 ? MAP_FAILED
					   : mmap(NULL, cbytes, PROT_READ | PROT_WRITE, MAP_SHARED,
						  nf.cnt_fd, 0);
		if (nf.cnt_hdr == MAP_FAILED) {
			fb_report_err("cannot create the new counter array: %s", strerror(errno));
			nf.cnt_hdr = NULL;
			goto out;
		}
		nf.cnt_bytes = cbytes;
		nf.cnt = (__u8 *)nf.cnt_hdr + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
		fb_counting_init(nf.cnt_hdr, f->hdr->counter_bits);
	}
	if (f->hdr->confirm) {
		/* Fresh sets in the other generation's slot: unused until the
		 * new filter (whose header names that generation) is in. */
		if (fb_exact_create_sets(nsets * 2, nf.set_fd))
			goto out;
		if (fb_exact_install(f->exact_fd, f->lpm_fd, nf.hdr->gen, nf.set_fd))
			goto out;
	}
	if (fill(&nf, arg))
		goto out;
	/* Rules with a lifetime go on living in the new filter, copied into
	 * the other set of generation slots, unless fill made generations of
	 * its own (load --replace --ttl replaces those instead). */
	if (!nf.hdr->gens && fb_gens_carry(f, &nf))
		goto out;
	if (f->cnt_hdr) {
		/* The new counters get their pin before the switch, under the
		 * new generation's name (removing what a killed replace may
		 * have left there): whichever array is in use, its counters
		 * are pinned. */
		unlinkat(f->dir_fd, fb_store_cnt_pin(nf.hdr->gen), 0);
		if (fb_pin_at(nf.cnt_fd, f->dir_fd, fb_store_cnt_pin(nf.hdr->gen))) {
			fb_report_err("cannot pin the new counters of '%s': %s", f->name,
				      strerror(errno));
			goto out;
		}
		pinned = true;
	}
	/* The switch: one update of the outer map. A packet sees the old
	 * filter or the new one, whole. */
	if (bpf_map_update_elem(f->outer_fd, &zero, &nf.bits_fd, BPF_ANY)) {
		fb_report_err("cannot install the new filter array: %s", strerror(errno));
		goto out;
	}
	/* The old counters' pin goes after the switch (a kill before leaves
	 * it, unused: check reports it, check --repair removes it). */
	if (f->cnt_hdr)
		unlinkat(f->dir_fd, fb_store_cnt_pin(f->hdr->gen), 0);
	/* The retired set's generations, unused now (a kill before this
	 * leaves them: ignored, check --repair removes them). */
	fb_gens_retire(f, f->hdr->gen, f->hdr->gens);
	err = 0;
out:
	if (err) {
		if (nf.hdr)
			fb_gens_retire(f, nf.hdr->gen, nf.hdr->gens);
		if (pinned)
			unlinkat(f->dir_fd, fb_store_cnt_pin(nf.hdr->gen), 0);
		if (f->hdr->confirm && nf.hdr)
			fb_exact_clear_slot(f->exact_fd, f->lpm_fd, f->hdr->gen ^ 1);
		for (int i = 0; i < 3; i++)
			if (nf.set_fd[i] >= 0 && nf.set_fd[i] != f->set_fd[i])
				close(nf.set_fd[i]);
		if (nf.hdr)
			munmap(nf.hdr, nf.map_bytes);
		if (nf.cnt_hdr)
			munmap(nf.cnt_hdr, nf.cnt_bytes);
		close(nf.bits_fd);
		if (nf.cnt_fd >= 0)
			close(nf.cnt_fd);
		return -1;
	}
	/* The syscall that switched filters waited for programs still
	 * running on the old one (map-in-map updates synchronize RCU), so the
	 * old generation's sets are unused now. */
	if (f->hdr->confirm) {
		fb_exact_clear_slot(f->exact_fd, f->lpm_fd, f->hdr->gen);
		for (int i = 0; i < 3; i++) {
			close(f->set_fd[i]);
			f->set_fd[i] = nf.set_fd[i];
		}
	}
	/* f now describes the new filter; release the old mappings. */
	munmap(f->hdr, f->map_bytes);
	close(f->bits_fd);
	if (f->cnt_hdr) {
		munmap(f->cnt_hdr, f->cnt_bytes);
		close(f->cnt_fd);
	}
	f->bits_fd = nf.bits_fd;
	f->bits_id = fb_map_id(nf.bits_fd);
	f->hdr = nf.hdr;
	f->blocks = nf.blocks;
	f->map_bytes = nf.map_bytes;
	f->cnt_fd = nf.cnt_fd;
	f->cnt_hdr = nf.cnt_hdr;
	f->cnt = nf.cnt;
	f->cnt_bytes = nf.cnt_bytes;
	return 0;
}

struct timed_arg {
	const struct fb_store *f;
	const struct fb_key *keys;
	size_t n, *bad;
	double secs;
};

/* The old filter's permanent rules as they are (same geometry), then one
 * generation holding the new list. */
static int fill_timed(struct fb_store *nf, void *arg)
{
	struct timed_arg *t = arg;
	const struct fb_store *f = t->f;

	memcpy(nf->blocks + 1, f->blocks + 1, nf->map_bytes - FB_BLOCK_BYTES);
	nf->hdr->kinds = f->hdr->kinds;
	nf->hdr->nflows = f->hdr->nflows;
	if (f->cnt_hdr)
		memcpy(nf->cnt, f->cnt, f->cnt_bytes - FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES);
	return fb_gens_fresh(nf, t->keys, t->n, t->secs, t->bad) ? -1 : 0;
}

int fb_replace_timed(struct fb_store *f, const struct fb_key *keys, size_t n, double secs,
		     size_t *bad)
{
	struct timed_arg t = { f, keys, n, bad, secs };

	*bad = (size_t)-1;
	if (fb_gens_supported(f))
		return -1;
	return fb_replace_fill(f, f->hdr->nblocks, f->hdr->k, 0, fill_timed, &t);
}

int fb_replace_grow(struct fb_store *f, __u32 nblocks)
{
	LIBBPF_OPTS(bpf_map_create_opts, inner_opts, .map_flags = FB_INNER_MAP_FLAGS);
	__u32 entries = nblocks + FB_HDR_BLOCKS, zero = 0;
	size_t bytes = (size_t)entries * FB_BLOCK_BYTES;
	struct fb_header *hdr;
	int fd;

	if (nblocks > FB_MAX_BLOCKS || bytes <= f->map_bytes) {
		fb_report_err("cannot grow '%s' to %zu bytes", f->name, bytes);
		return -1;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fb_bits", sizeof(__u32), FB_BLOCK_BYTES, entries,
			    &inner_opts);
	if (fd < 0) {
		fb_report_err("cannot create a %zu-byte filter array: %s", bytes, strerror(errno));
		return -1;
	}
	hdr = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (hdr == MAP_FAILED) {
		fb_report_err("cannot mmap the new filter array: %s", strerror(errno));
		close(fd);
		return -1;
	}
	/* Writers hold the lock and the data path only reads: the copy is
	 * the whole filter, and stays so until the switch. */
	memcpy(hdr, f->hdr, f->map_bytes);
	hdr->nblocks = nblocks;
	if (bpf_map_update_elem(f->outer_fd, &zero, &fd, BPF_ANY)) {
		fb_report_err("cannot install the grown filter array: %s", strerror(errno));
		munmap(hdr, bytes);
		close(fd);
		return -1;
	}
	munmap(f->hdr, f->map_bytes);
	close(f->bits_fd);
	f->bits_fd = fd;
	f->bits_id = fb_map_id(fd);
	f->hdr = hdr;
	f->blocks = (struct fb_block *)hdr;
	f->map_bytes = bytes;
	return 0;
}
