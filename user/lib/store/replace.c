// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Replace a filter's array: a new one (and counters, exact sets) filled
 * aside, then switched to in one step. What fills it is the caller's
 * (rules.c: `load --replace`; algebra.c; lifetime.c). A scalable filter's
 * growth (fb_replace_grow) appends chunks to the array in use instead. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "store/counters.h"
#include "store/exact.h"
#include "store/gens.h"
#include "store/chunks.h"
#include "store/head.h"
#include "report.h"
#include "store/pintree.h"
#include "store/replace.h"
#include "util.h"

/* Records of rs bytes (*arg), in byte order. */
static int memcmp_rs(const void *x, const void *y, void *arg)
{
	return memcmp(x, y, *(const size_t *)arg);
}

struct dump {
	char *r;	       /* records: key, then its __u32 value */
	size_t n, cap, ks, rs; /* records, room, key and record bytes */
};

static int dump_one(const void *k, __u32 v, void *arg)
{
	struct dump *d = arg;

	if (d->n == d->cap) {
		char *r = realloc(d->r, d->cap * 2 * d->rs);

		if (!r)
			return -1;
		d->r = r;
		d->cap *= 2;
	}
	memcpy(d->r + d->n * d->rs, k, d->ks);
	memcpy(d->r + d->n++ * d->rs + d->ks, &v, sizeof(v));
	return 0;
}

/* The entries of exact set fd of f (keys of ks bytes, values __u32), as
 * records key + value, sorted, into *out (free it): their count, or -1
 * (out of memory, unreadable: quietly, the caller replaces then). */
static long set_dump(const struct fb_store *f, int fd, size_t ks, char **out)
{
	struct dump d = { malloc(4096 * (ks + sizeof(__u32))), 0, 4096, ks, ks + sizeof(__u32) };
	bool quiet = fb_report_quiet;
	int rc;

	if (!d.r)
		return -1;
	fb_report_quiet = true;
	rc = fb_exact_walk(f, fd, ks, dump_one, &d);
	fb_report_quiet = quiet;
	if (rc) {
		free(d.r);
		return -1;
	}
	qsort_r(d.r, d.n, d.rs, memcmp_rs, &d.rs);
	*out = d.r;
	return (long)d.n;
}

/* Do exact sets a (live) and b (built aside) hold the same rules, each
 * as many times? */
static bool same_set(const struct fb_store *f, int a, int b, size_t ks)
{
	char *ra = NULL, *rb = NULL;
	long na = set_dump(f, a, ks, &ra), nb = na < 0 ? -1 : set_dump(f, b, ks, &rb);
	bool same = na >= 0 && na == nb && !memcmp(ra, rb, (size_t)na * (ks + sizeof(__u32)));

	free(ra);
	free(rb);
	return same;
}

/* Is nf, the content built aside, what f holds: everything a packet
 * meets (the header but for its generation slot and its generations of
 * rules with a lifetime, which a replace carries over unchanged; the
 * prefix and shape table; the bits; a counting filter's counters; the
 * exact sets), f's head up to date? Byte for byte: a content the same
 * in effect but written otherwise (another order of prefix lengths, a
 * rule added twice) is not the same, and is replaced. */
static bool same_content(const struct fb_store *f, const struct fb_store *nf)
{
	struct fb_header a = *f->hdr, b = *nf->hdr;
	size_t n;

	a.gen = b.gen = 0;
	a.gens = b.gens = 0;
	if (memcmp(&a, &b, sizeof(a)) || !fb_head_current(f))
		return false;
	n = (size_t)FB_HDR_BLOCKS + a.nblocks;
	if (n > fb_store_nblocks(f) || n > fb_store_nblocks(nf) ||
	    memcmp(&f->blocks[1], &nf->blocks[1], (n - 1) * FB_BLOCK_BYTES))
		return false;
	if (!f->cnt_hdr != !nf->cnt_hdr ||
	    (f->cnt_hdr &&
	     memcmp(f->cnt, nf->cnt,
		    fb_counting_data_bytes(fb_header_mbits(f->hdr), f->hdr->counter_bits))))
		return false;
	return !f->hdr->confirm ||
	       (same_set(f, f->set_fd[0], nf->set_fd[0], sizeof(struct fb_key)) &&
		same_set(f, f->set_fd[1], nf->set_fd[1], sizeof(struct fb_lpm_key)) &&
		same_set(f, f->set_fd[2], nf->set_fd[2], sizeof(struct fb_lpm_key)));
}

int fb_replace_fill(struct fb_store *f, __u32 nblocks, __u8 k, size_t nsets,
		    int (*fill)(struct fb_store *nf, void *arg), void *arg)
{
	struct fb_store nf = *f;
	__u32 n = fb_chunks_for(nblocks), gen = f->hdr->gen ^ 1, old_n = f->nchunks, i;
	bool pinned = false, quiet, kept = false, installed = false;
	int err = -1, *fds, fd0 = -1, span;

	if (nblocks > FB_MAX_BLOCKS) {
		fb_report_err("a filter holds at most %u blocks", FB_MAX_BLOCKS);
		return -1;
	}
	/* A dry run (apply --check) changes nothing, the old pin name
	 * either: it reads the counters by it. */
	if (!f->dry && fb_store_migrate_counters(f))
		return -1;
	fds = malloc(n * sizeof(*fds));
	if (!fds) {
		fb_report_err("out of memory");
		return -1;
	}
	for (i = 0; i < n; i++)
		fds[i] = -1;
	nf.cnt_hdr = NULL;
	nf.cnt_fd = -1;
	nf.set_fd[0] = nf.set_fd[1] = nf.set_fd[2] = -1;
	nf.map = NULL;
	/* Not f's: a failure before the new head is made retires what
	 * nf.hdr's mask names (it retired f's live generations). */
	nf.hdr = NULL;
	nf.blocks = NULL;
	nf.bits_fd = -1;
	nf.aside = true;
	nf.keep_same = nf.dry = false;
	f->same = false;
	if (fb_chunks_create(n, fds))
		goto out;
	nf.map = fb_chunks_mmap(fds, n);
	if (!nf.map)
		goto out;
	nf.nchunks = n;
	nf.map_bytes = (size_t)n * FB_CHUNK_BYTES;
	nf.hdr = (struct fb_header *)((char *)nf.map + FB_HEAD_SHIFT * FB_BLOCK_BYTES);
	nf.blocks = (struct fb_block *)nf.hdr;
	/* (0, an id not read, would be no array's: readers tell a replace
	 * by it) */
	fb_store_head(&nf)->keys.array_id = fb_map_id(fds[0]);
	if (!fb_store_head(&nf)->keys.array_id) {
		fb_report_err("cannot read the new chunks' id: %s", strerror(errno));
		goto out;
	}
	/* Same identity, key and settings; new geometry, no rules yet. */
	*nf.hdr = *f->hdr;
	nf.hdr->nblocks = nblocks;
	nf.hdr->k = k;
	nf.hdr->kinds = 0;
	nf.hdr->nflows = 0;
	nf.hdr->gens = 0;
	/* The other generation: of the chunks, of the exact sets, and of the
	 * counters' pin name (and the other set of generations of rules with
	 * a lifetime). Switching the head switches them all. */
	nf.hdr->gen = gen;
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
		/* Fresh sets, filled aside like the chunks. As large as create
		 * makes them, so the filter takes rules up to its capacity
		 * afterwards too, or the new rules twice. */
		__u64 want = fb_exact_sets_for(nf.hdr->capacity, nblocks);

		if (fb_exact_create_sets(want > 2 * (__u64)nsets ? want : 2 * (__u64)nsets,
					 nf.set_fd))
			goto out;
	}
	if (fill(&nf, arg) || fb_head_sync(&nf, false))
		goto out;
	/* Asked to: the same content is kept (nothing switched, the new one
	 * dropped as a failed replace drops it). */
	if (f->keep_same || f->dry) {
		f->same = same_content(f, &nf);
		if (f->same || f->dry) {
			kept = true;
			goto out;
		}
	}
	/* Rules with a lifetime go on living in the new filter, copied into
	 * the other set of generation slots, unless fill made generations of
	 * its own (load --replace --ttl replaces those instead). */
	if (!nf.hdr->gens && fb_gens_carry(f, &nf))
		goto out;
	/* The new sets go into the other generation's slot of the live
	 * outer maps only now, after the comparison: a dry or unchanged run
	 * writes nothing there (a kill would leave them behind). Unused
	 * until the new filter, whose header names that generation, is in. */
	installed = f->hdr->confirm; /* (a failure may have put some in) */
	if (installed && fb_exact_install(f->exact_fd, f->lpm_fd, gen, nf.set_fd))
		goto out;
	if (f->cnt_hdr) {
		/* The new counters get their pin before the switch, under the
		 * new generation's name (removing what a killed replace may
		 * have left there): whichever array is in use, its counters
		 * are pinned. */
		unlinkat(f->dir_fd, fb_store_cnt_pin(gen), 0);
		if (fb_pin_at(nf.cnt_fd, f->dir_fd, fb_store_cnt_pin(gen))) {
			fb_report_err("cannot pin the new counters of '%s': %s", f->name,
				      strerror(errno));
			goto out;
		}
		pinned = true;
	}
	/* The switch: one batch update of the outer map, the new chunks,
	 * then the head. A packet sees the old filter or the new one, whole. */
	if (fb_chunks_install(f->outer_fd, gen, fds, n, 1))
		goto out;
	fd0 = fds[0];
	fds[0] = -1;
	/* The old counters' pin goes after the switch (a kill before leaves
	 * it, unused: check reports it, check --repair removes it). */
	if (f->cnt_hdr)
		unlinkat(f->dir_fd, fb_store_cnt_pin(f->hdr->gen), 0);
	/* The retired set's generations, unused now (a kill before this
	 * leaves them: ignored, check --repair removes them). */
	fb_gens_retire(f, f->hdr->gen, f->hdr->gens);
	err = 0;
out:
	fb_chunks_close(fds + 1, n - 1);
	if (err && fds[0] >= 0)
		close(fds[0]);
	free(fds);
	if (err) {
		if (nf.hdr)
			fb_gens_retire(f, nf.hdr->gen, nf.hdr->gens);
		if (pinned)
			unlinkat(f->dir_fd, fb_store_cnt_pin(gen), 0);
		if (installed)
			fb_exact_clear_slot(f->exact_fd, f->lpm_fd, gen);
		for (i = 0; i < 3; i++)
			if (nf.set_fd[i] >= 0 && nf.set_fd[i] != f->set_fd[i])
				close(nf.set_fd[i]);
		fb_chunks_munmap(nf.map, n);
		if (nf.cnt_hdr)
			munmap(nf.cnt_hdr, nf.cnt_bytes);
		if (nf.cnt_fd >= 0)
			close(nf.cnt_fd);
		return kept ? 0 : -1;
	}
	/* The update that switched filters waited for programs still
	 * running on the old one (map-in-map updates synchronize RCU), so the
	 * old generation's chunks and sets are unused now: release them, and
	 * whatever else its slots hold (an earlier, larger filter's empty
	 * chunks, or what a killed replace left), so that they hold one empty
	 * chunk at most (a failure here only leaves memory held, which check
	 * reports and check --repair releases). */
	span = fb_chunks_span(f->outer_fd, f->hdr->gen, NULL, NULL);
	quiet = fb_report_quiet;
	fb_report_quiet = true;
	if (fb_chunks_release(f->outer_fd, f->hdr->gen, 0, span > (int)old_n ? (__u32)span : old_n))
		fb_report(FB_REPORT_NOTE,
			  "'%s' is replaced, but its old chunks are still held (%s): "
			  "`flowbloom check --repair %s` releases them",
			  f->name, fb_report_last, f->name);
	fb_report_quiet = quiet;
	if (f->hdr->confirm) {
		fb_exact_clear_slot(f->exact_fd, f->lpm_fd, f->hdr->gen);
		for (i = 0; i < 3; i++) {
			close(f->set_fd[i]);
			f->set_fd[i] = nf.set_fd[i];
		}
	}
	/* f now describes the new filter; release the old mappings. */
	fb_chunks_munmap(f->map, f->nchunks);
	close(f->bits_fd);
	if (f->cnt_hdr) {
		munmap(f->cnt_hdr, f->cnt_bytes);
		close(f->cnt_fd);
	}
	f->bits_fd = fd0;
	f->head_id = f->bits_id = fb_map_id(fd0);
	f->map = nf.map;
	f->nchunks = n;
	f->map_bytes = nf.map_bytes;
	f->hdr = nf.hdr;
	f->blocks = nf.blocks;
	f->cnt_fd = nf.cnt_fd;
	f->cnt_hdr = nf.cnt_hdr;
	f->cnt = nf.cnt;
	f->cnt_bytes = nf.cnt_bytes;
	/* The permanent rules' identity: carried over by a fill that kept
	 * them (load --replace --ttl, head.h), else this array's. */
	f->perm_id = fb_store_head(f)->keys.perm_id ? fb_store_head(f)->keys.perm_id : f->bits_id;
	return 0;
}

/* A scalable filter's room for its next stages: more chunks of the same
 * generation, appended. The data path finds a stage's blocks through the
 * stage's descriptor, which the caller writes only once the chunks are in
 * place; nothing it probes moves. */
int fb_replace_grow(struct fb_store *f, __u32 nblocks)
{
	__u32 n = fb_chunks_for(nblocks), old = f->nchunks;
	int *fds = NULL, rc = -1;
	void *map;

	if (nblocks > FB_MAX_BLOCKS || nblocks <= f->hdr->nblocks) {
		fb_report_err("cannot grow '%s' to %u blocks", f->name, nblocks);
		return -1;
	}
	if (n > old) {
		fds = malloc((n - old) * sizeof(*fds));
		if (!fds) {
			fb_report_err("out of memory");
			return -1;
		}
		if (fb_chunks_create(n - old, fds))
			goto out;
		/* Mapped first, installed last: a failure before the install
		 * leaves the outer map's slots as they were. */
		map = fb_chunks_mmap_grown(f->outer_fd, f->bits_fd, f->hdr->gen, old, fds, n - old);
		if (!map)
			goto out;
		if (fb_chunks_install_at(f->outer_fd, f->hdr->gen, old, fds, n - old)) {
			fb_chunks_munmap(map, n);
			goto out;
		}
		fb_chunks_munmap(f->map, old);
		f->map = map;
		f->nchunks = n;
		f->map_bytes = (size_t)n * FB_CHUNK_BYTES;
		f->hdr = (struct fb_header *)((char *)map + FB_HEAD_SHIFT * FB_BLOCK_BYTES);
		f->blocks = (struct fb_block *)f->hdr;
	}
	f->hdr->nblocks = nblocks;
	rc = 0;
out:
	if (fds)
		fb_chunks_close(fds, n - old);
	free(fds);
	return rc;
}
