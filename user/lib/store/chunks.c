// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A filter's chunks: create, map back to back, install (chunks.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "flowbloom/geometry.h"
#include "flowbloom/maps.h"
#include "report.h"
#include "store/chunks.h"

static int chunk_create(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = FB_CHUNK_MAP_FLAGS);

	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "fb_chunk", sizeof(__u32), FB_CHUNK_BYTES, 1, &o);
}

/* A descriptor per chunk, all open at once until installed: more than
 * the usual soft limit of 1024 for a filter over 255 MiB. The soft limit
 * is raised as far as needed, up to the hard one. */
static void fd_room(__u32 n, struct rlimit *r)
{
	rlim_t want = (rlim_t)n + 128;

	if (getrlimit(RLIMIT_NOFILE, r) || r->rlim_cur >= want)
		return;
	r->rlim_cur = r->rlim_max < want ? r->rlim_max : want;
	setrlimit(RLIMIT_NOFILE, r);
}

int fb_chunks_create(__u32 n, int *fds)
{
	struct rlimit r = { 0, 0 };
	__u32 i;

	fd_room(n, &r);
	for (i = 0; i < n; i++) {
		fds[i] = chunk_create();
		if (fds[i] < 0 && errno == EMFILE) {
			fb_report_err(
				"cannot create a %u-byte filter (%u chunks): %s (a chunk takes "
				"a descriptor until all are made; ulimit -n allows %llu)",
				(unsigned)FB_CHUNK_BYTES * n, n, strerror(errno),
				(unsigned long long)r.rlim_cur);
			fb_chunks_close(fds, i);
			return -1;
		}
		if (fds[i] < 0) {
			fb_report_err("cannot create a %u-byte filter (%u chunks): %s",
				      (unsigned)FB_CHUNK_BYTES * n, n, strerror(errno));
			fb_chunks_close(fds, i);
			return -1;
		}
	}
	return 0;
}

void fb_chunks_close(int *fds, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

static void *reserve(__u32 n)
{
	void *p = mmap(NULL, (size_t)n * FB_CHUNK_BYTES, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		fb_report_err("cannot reserve %zu bytes of address space: %s",
			      (size_t)n * FB_CHUNK_BYTES, strerror(errno));
		return NULL;
	}
	return p;
}

static int map_one(void *map, __u32 i, int fd)
{
	void *at = (char *)map + (size_t)i * FB_CHUNK_BYTES;

	if (mmap(at, FB_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		fb_report_err("cannot mmap a filter chunk: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int fb_chunks_mmap_at(void *map, __u32 from, const int *fds, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (map_one(map, from + i, fds[i]))
			return -1;
	return 0;
}

void *fb_chunks_mmap(const int *fds, __u32 n)
{
	void *map = reserve(n);

	if (map && fb_chunks_mmap_at(map, 0, fds, n)) {
		fb_chunks_munmap(map, n);
		return NULL;
	}
	return map;
}

int fb_chunks_slot_fd(int outer_fd, __u32 slot, __u32 *id)
{
	__u32 mid;
	int fd;

	if (bpf_map_lookup_elem(outer_fd, &slot, &mid))
		return -1;
	fd = bpf_map_get_fd_by_id(mid);
	if (fd >= 0 && id)
		*id = mid;
	return fd;
}

void *fb_chunks_mmap_outer(int outer_fd, int head_fd, __u32 gen, __u32 n)
{
	return fb_chunks_mmap_grown(outer_fd, head_fd, gen, n, NULL, 0);
}

void *fb_chunks_mmap_grown(int outer_fd, int head_fd, __u32 gen, __u32 n, const int *fds,
			   __u32 more)
{
	void *map = reserve(n + more);
	__u32 i;

	if (!map)
		return NULL;
	if (map_one(map, 0, head_fd) || (more && fb_chunks_mmap_at(map, n, fds, more)))
		goto fail;
	for (i = 1; i < n; i++) {
		int fd = fb_chunks_slot_fd(outer_fd, fb_range_slot(gen, i), NULL);

		if (fd < 0) {
			/* Missing, or only not read now (memory, descriptors). */
			if (errno == ENOENT)
				fb_report_err("chunk %u of the filter is missing", i);
			else
				fb_report_err("cannot read chunk %u of the filter: %s", i,
					      strerror(errno));
			goto fail;
		}
		if (map_one(map, i, fd)) {
			close(fd);
			goto fail;
		}
		close(fd); /* the mapping holds the map */
	}
	return map;
fail:
	fb_chunks_munmap(map, n + more);
	return NULL;
}

void fb_chunks_munmap(void *map, __u32 n)
{
	if (map)
		munmap(map, (size_t)n * FB_CHUNK_BYTES);
}

static int update_batch(int outer_fd, __u32 *keys, int *fds, __u32 n, const char *what)
{
	__u32 count = n;

	if (!n)
		return 0;
	if (bpf_map_update_batch(outer_fd, keys, fds, &count, NULL) || count != n) {
		fb_report_err("cannot %s the filter's chunks: %s", what, strerror(errno));
		return -1;
	}
	return 0;
}

/* Chunks fds[0..n) into slots from.. of range gen, in one batch; with
 * head, fds[0] also into slot 0, last. */
static int install(int outer_fd, __u32 gen, __u32 from, const int *fds, __u32 n, int head)
{
	__u32 *keys = calloc(n + 1, sizeof(*keys)), i;
	int *vals = calloc(n + 1, sizeof(*vals)), rc = -1;

	if (!keys || !vals) {
		fb_report_err("out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		keys[i] = fb_range_slot(gen, from + i);
		vals[i] = fds[i];
	}
	/* Last: the head, which makes the chunks before it reachable. */
	if (head) {
		keys[n] = 0;
		vals[n] = fds[0];
	}
	rc = update_batch(outer_fd, keys, vals, n + !!head, "install");
out:
	free(keys);
	free(vals);
	return rc;
}

int fb_chunks_install_at(int outer_fd, __u32 gen, __u32 from, const int *fds, __u32 n)
{
	return install(outer_fd, gen, from, fds, n, 0);
}

int fb_chunks_install(int outer_fd, __u32 gen, const int *fds, __u32 n, int head)
{
	return install(outer_fd, gen, 0, fds, n, head);
}

int fb_chunks_release(int outer_fd, __u32 gen, __u32 from, __u32 to)
{
	__u32 *keys, i, n, slot;
	int *vals, empty = -1, rc = -1;

	/* Without memory for the empty chunk (a memory cgroup at its limit,
	 * most likely with the very chunks to release charged to it), slots
	 * are emptied one at a time from the last (the range stays filled
	 * from its first slot) until what they held, freed, makes room for
	 * it. A delete allocates nothing, but waits for programs still
	 * reading what the slot held (about 13 ms). */
	while (to > from && (empty = chunk_create()) < 0) {
		slot = fb_range_slot(gen, --to);
		if (bpf_map_delete_elem(outer_fd, &slot) && errno != ENOENT) {
			fb_report_err("cannot release the filter's chunks: %s", strerror(errno));
			return -1;
		}
	}
	if (to <= from)
		return 0;
	n = to - from;
	keys = calloc(n, sizeof(*keys));
	vals = calloc(n, sizeof(*vals));
	if (keys && vals) {
		for (i = 0; i < n; i++) {
			keys[i] = fb_range_slot(gen, from + i);
			vals[i] = empty;
		}
		rc = update_batch(outer_fd, keys, vals, n, "release");
	} else {
		fb_report_err("out of memory");
	}
	free(keys);
	free(vals);
	close(empty);
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return (x > y) - (x < y);
}

/* Does chunk fd hold a filter's header (a head, not an empty chunk)? */
static bool holds_head(int fd)
{
	const struct fb_header *h;
	void *p = mmap(NULL, FB_PAGE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	bool yes;

	if (p == MAP_FAILED)
		return true; /* cannot tell: not the empty chunk for sure */
	h = (const struct fb_header *)((char *)p + FB_HEAD_SHIFT * FB_BLOCK_BYTES);
	yes = h->magic == FB_MAGIC;
	munmap(p, FB_PAGE_BYTES);
	return yes;
}

int fb_chunks_span(int outer_fd, __u32 gen, __u32 *maps, bool *head)
{
	__u32 *ids = malloc(FB_MAX_CHUNKS * sizeof(*ids)), n, i, slot;
	int fd;

	if (!ids) {
		fb_report_err("out of memory");
		return -1;
	}
	/* A range is filled from chunk 0 on (installs, grows and releases
	 * all start there): the first empty slot ends it. */
	for (n = 0; n < FB_MAX_CHUNKS; n++) {
		slot = fb_range_slot(gen, n);
		if (bpf_map_lookup_elem(outer_fd, &slot, &ids[n]))
			break;
	}
	/* A slot that cannot be read is no end: check would say clean and
	 * a release would leave the rest. */
	if (n < FB_MAX_CHUNKS && errno != ENOENT)
		goto err;
	if (maps) {
		qsort(ids, n, sizeof(*ids), cmp_u32);
		for (*maps = 0, i = 0; i < n; i++)
			*maps += !i || ids[i] != ids[i - 1];
	}
	free(ids);
	if (head) {
		*head = false;
		fd = fb_chunks_slot_fd(outer_fd, fb_range_slot(gen, 0), NULL);
		if (fd >= 0) {
			*head = holds_head(fd);
			close(fd);
		} else if (errno != ENOENT) {
			goto err_read;
		}
	}
	return (int)n;
err:
	free(ids);
err_read:
	fb_report_err("cannot read the filter's chunks: %s", strerror(errno));
	return -1;
}

int fb_chunks_shared(int outer_fd, __u32 gen, __u32 n, __u32 head_id)
{
	__u32 *ids = malloc((n ? n : 1) * sizeof(*ids)), i, slot;
	int bad = 0;

	if (!ids) {
		fb_report_err("out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		slot = fb_range_slot(gen, i);
		if (bpf_map_lookup_elem(outer_fd, &slot, &ids[i]))
			ids[i] = 0;
		/* Not read is not empty: never reported as damage. */
		if (!ids[i] && errno != ENOENT) {
			fb_report_err("cannot read the filter's chunks: %s", strerror(errno));
			free(ids);
			return -1;
		}
	}
	/* Slot 0 must hold the head; then, with it standing for slot 0,
	 * every id once. */
	if (n && ids[0] != head_id) {
		bad++;
		ids[0] = head_id;
	}
	qsort(ids, n, sizeof(*ids), cmp_u32);
	for (i = 0; i < n; i++)
		bad += !ids[i] || (i && ids[i] == ids[i - 1]);
	free(ids);
	return bad;
}

void fb_chunks_give_back(int outer_fd, __u32 gen, __u32 n)
{
	__u32 key = 0;

	bpf_map_delete_elem(outer_fd, &key);
	fb_chunks_release(outer_fd, gen, 0, n);
}
