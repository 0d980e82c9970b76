// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What a filter holds in the kernel, map by map (memuse.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "flowbloom/monitor.h"
#include "report.h"
#include "store/memuse.h"
#include "store/pintree.h"

const char *const fb_mem_part_names[FB_MEM_NR] = {
	"bits", "counters", "generations", "exact_sets", "monitoring", "other",
};

/* A map's memlock into *v: 0, or -1 (errno) if its fdinfo has none. */
static int memlock(int fd, __u64 *v)
{
	char path[64], line[128];
	unsigned long long m;
	FILE *fp;

	*v = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	fp = fopen(path, "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "memlock: %llu", &m) == 1) {
			*v = m;
			fclose(fp);
			return 0;
		}
	fclose(fp);
	errno = ENODATA;
	return -1;
}

__u64 fb_map_memlock(int fd)
{
	__u64 v;

	memlock(fd, &v);
	return v;
}

struct seen {
	__u64 *ent; /* id << 8 | part */
	size_t n, cap;
	int err;
	__u32 unread; /* maps (or outer maps' slots) the kernel would not read */
	int unread_errno;
};

/* A read refused with errno e: ENOENT is a map or slot that is not there
 * (gone meanwhile: a writer released it; an empty slot), any other error
 * one not known. */
static void refused(struct seen *s, int e)
{
	if (e == ENOENT)
		return;
	if (!s->unread++)
		s->unread_errno = e;
}

static void note(struct seen *s, __u32 id, enum fb_mem_part part)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		__u64 *e = realloc(s->ent, cap * sizeof(*e));

		if (!e) {
			s->err = -1;
			return;
		}
		s->ent = e;
		s->cap = cap;
	}
	s->ent[s->n++] = (__u64)id << 8 | part;
}

/* The maps an outer map holds. A filter's has 8,197 slots and uses a
 * few: one batch lookup reads the filled ones where the kernel skips the
 * empty (since 2025); an older kernel stops at the first empty slot
 * (EINTR), and every slot is then read one by one (a lookup each). */
static void inner(struct seen *s, int outer_fd, enum fb_mem_part (*part)(__u32 slot),
		  enum fb_mem_part all)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), slot, id, *keys, *ids, n, out, i;

	if (bpf_obj_get_info_by_fd(outer_fd, &info, &len)) {
		refused(s, errno);
		return;
	}
	if (info.type != BPF_MAP_TYPE_ARRAY_OF_MAPS || !info.max_entries)
		return;
	keys = malloc(2 * (size_t)info.max_entries * sizeof(*keys));
	if (keys) {
		ids = keys + info.max_entries;
		n = info.max_entries;
		if (!bpf_map_lookup_batch(outer_fd, NULL, &out, keys, ids, &n, &opts) ||
		    errno == ENOENT) {
			for (i = 0; i < n && i < info.max_entries; i++)
				note(s, ids[i], part ? part(keys[i]) : all);
			free(keys);
			return;
		}
		free(keys);
	}
	for (slot = 0; slot < info.max_entries; slot++)
		if (!bpf_map_lookup_elem(outer_fd, &slot, &id))
			note(s, id, part ? part(slot) : all);
		else
			refused(s, errno);
}

/* The filter's own two slot ranges (and slot 0, its head) hold its bits;
 * the ranges after them, the generations of rules with a lifetime. */
static enum fb_mem_part filter_slot(__u32 slot)
{
	return slot < 1 + 2 * FB_MAX_CHUNKS ? FB_MEM_BITS : FB_MEM_GENERATIONS;
}

static enum fb_mem_part pin_part(const char *name)
{
	if (!strncmp(name, "counters", 8))
		return FB_MEM_COUNTERS;
	if (!strncmp(name, "gcnt", 4))
		return FB_MEM_GENERATIONS;
	if (!strcmp(name, "exact") || !strcmp(name, "lpm"))
		return FB_MEM_EXACT;
	return FB_MEM_OTHER;
}

/* Every pin of directory dfd (not following links), and what the outer
 * maps among them hold. */
static void pins(struct seen *s, int dfd, bool monitor)
{
	int fd = dup(dfd);
	struct dirent *de;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		s->err = -1;
		return;
	}
	while ((de = readdir(d))) {
		enum fb_mem_part part = monitor ? FB_MEM_MONITOR : pin_part(de->d_name);
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int mfd;

		if (de->d_name[0] == '.' || de->d_type == DT_DIR)
			continue;
		/* (A symbolic link is no pin of ours: not followed.) */
		mfd = fb_pin_get(dfd, de->d_name);
		if (mfd < 0) {
			if (errno != ELOOP)
				refused(s, errno);
			continue;
		}
		if (bpf_obj_get_info_by_fd(mfd, &info, &len)) {
			refused(s, errno);
		} else {
			note(s, info.id,
			     part == FB_MEM_EXACT || !strcmp(de->d_name, "filter") ? FB_MEM_OTHER
										   : part);
			if (!strcmp(de->d_name, "filter"))
				inner(s, mfd, filter_slot, 0);
			else if (part == FB_MEM_EXACT)
				inner(s, mfd, NULL, FB_MEM_EXACT);
		}
		close(mfd);
	}
	closedir(d);
}

static int by_id(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a >> 8, y = *(const __u64 *)b >> 8;

	return x < y ? -1 : x > y;
}

int fb_store_memory(const struct fb_store *f, struct fb_mem *m)
{
	struct seen s = { 0 };
	size_t i;
	__u64 v;
	int mon;

	memset(m, 0, sizeof(*m));
	pins(&s, f->dir_fd, false);
	/* monitor/: read only if it is flowbloom's (root's, written by no
	 * one else), as every verb that uses it checks. */
	mon = fb_pin_open_dir(f->dir_fd, FB_MON_DIR);
	if (mon < 0)
		refused(&s, errno);
	else {
		bool quiet = fb_report_quiet;

		fb_report_quiet = true;
		if (!fb_pin_trusted(mon, FB_MON_DIR, false))
			pins(&s, mon, true);
		fb_report_quiet = quiet;
		close(mon);
	}
	if (s.err) {
		free(s.ent);
		fb_report_err("filter '%s': cannot read what it holds: %s", f->name,
			      strerror(errno ? errno : ENOMEM));
		return -1;
	}
	qsort(s.ent, s.n, sizeof(*s.ent), by_id); /* an id is in one part only */
	for (i = 0; i < s.n; i++) {
		__u32 id = s.ent[i] >> 8;
		int fd;

		if (i && id == s.ent[i - 1] >> 8)
			continue;
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0) {
			refused(&s, errno);
			continue;
		}
		if (memlock(fd, &v)) {
			refused(&s, errno);
		} else {
			m->part[s.ent[i] & 0xff] += v;
			m->maps++;
		}
		close(fd);
	}
	for (i = 0; i < FB_MEM_NR; i++)
		m->total += m->part[i];
	free(s.ent);
	m->unread = s.unread;
	if (s.unread) {
		fb_report_err("filter '%s': cannot read all it holds in the kernel (%u map%s or "
			      "slot%s not read: %s)",
			      f->name, s.unread, s.unread == 1 ? "" : "s", s.unread == 1 ? "" : "s",
			      strerror(s.unread_errno));
		return -1;
	}
	return 0;
}
