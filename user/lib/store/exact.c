// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --confirm exact: the exact sets (hash of 5-tuples, LPM tries of source and
 * destination prefixes) in per-generation slots of two outer maps. */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "report.h"
#include "store/exact.h"
#include "store/pintree.h"

/* Fresh exact sets for up to n rules: [0] 5-tuples, [1] source and [2]
 * destination prefixes. Entries are allocated as rules arrive
 * (BPF_F_NO_PREALLOC); n only bounds them. */
int fb_exact_create_sets(__u64 n, int fd[3])
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	/* At least 64k: entries cost memory only as rules arrive; the hash's
	 * bucket array (16 bytes for each of max rounded up to a power of
	 * two: 1 MiB here, 2 GiB at the most) is the floor's price. */
	__u32 max = n < 65536 ? 65536 : n > FB_EXACT_MAX_RULES ? FB_EXACT_MAX_RULES : (__u32)n;

	fd[0] = bpf_map_create(BPF_MAP_TYPE_HASH, "fb_exact_set", sizeof(struct fb_key),
			       sizeof(__u32), max, &opts);
	fd[1] = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "fb_lpm_src", sizeof(struct fb_lpm_key),
			       sizeof(__u32), max, &opts);
	fd[2] = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "fb_lpm_dst", sizeof(struct fb_lpm_key),
			       sizeof(__u32), max, &opts);
	if (fd[0] >= 0 && fd[1] >= 0 && fd[2] >= 0)
		return 0;
	fb_report_err("cannot create the exact sets: %s", strerror(errno));
	for (int i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return -1;
}

/* Put sets into generation slot gen of the outer maps. */
int fb_exact_install(int exact_fd, int lpm_fd, int gen, const int fd[3])
{
	__u32 e = gen, s = gen * 2, d = gen * 2 + 1;

	if (bpf_map_update_elem(exact_fd, &e, &fd[0], BPF_ANY) ||
	    bpf_map_update_elem(lpm_fd, &s, &fd[1], BPF_ANY) ||
	    bpf_map_update_elem(lpm_fd, &d, &fd[2], BPF_ANY)) {
		fb_report_err("cannot install the exact sets: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void fb_exact_clear_slot(int exact_fd, int lpm_fd, int gen)
{
	__u32 e = gen, s = gen * 2, d = gen * 2 + 1;

	bpf_map_delete_elem(exact_fd, &e);
	bpf_map_delete_elem(lpm_fd, &s);
	bpf_map_delete_elem(lpm_fd, &d);
}

int fb_exact_create(int dir_fd, __u64 n)
{
	int set[3], exact_fd = -1, lpm_fd = -1, err = -1, i;
	const char *what = "exact";

	if (fb_exact_create_sets(n, set))
		return -1;
	{
		LIBBPF_OPTS(bpf_map_create_opts, eo, .inner_map_fd = set[0]);
		LIBBPF_OPTS(bpf_map_create_opts, lo, .inner_map_fd = set[1]);

		exact_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, FB_MAP_EXACT, sizeof(__u32),
					  sizeof(__u32), 2, &eo);
		lpm_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, FB_MAP_LPM, sizeof(__u32),
					sizeof(__u32), 4, &lo);
	}
	if (exact_fd < 0 || lpm_fd < 0) {
		fb_report_err("cannot create the exact-set maps: %s", strerror(errno));
		goto out;
	}
	if (fb_exact_install(exact_fd, lpm_fd, 0, set))
		goto out;
	if (fb_pin_at(exact_fd, dir_fd, what))
		goto pin;
	what = "lpm";
	if (fb_pin_at(lpm_fd, dir_fd, what))
		goto pin;
	err = 0;
	goto out;
pin:
	fb_report_err("cannot pin the exact sets (%s): %s", what, strerror(errno));
out:
	for (i = 0; i < 3; i++)
		close(set[i]);
	if (exact_fd >= 0)
		close(exact_fd);
	if (lpm_fd >= 0)
		close(lpm_fd);
	return err;
}

/* The current generation's sets, from the outer maps. */
static int open_sets(struct fb_store *f)
{
	__u32 slots[3] = { f->hdr->gen, f->hdr->gen * 2u, f->hdr->gen * 2u + 1 }, id;
	int i;

	for (i = 0; i < 3; i++) {
		if (f->set_fd[i] >= 0)
			close(f->set_fd[i]);
		f->set_fd[i] = -1;
		if (bpf_map_lookup_elem(i ? f->lpm_fd : f->exact_fd, &slots[i], &id) ||
		    (f->set_fd[i] = bpf_map_get_fd_by_id(id)) < 0) {
			fb_report_err("filter '%s': exact set missing (%s)", f->name,
				      strerror(errno));
			return -1;
		}
	}
	return 0;
}

int fb_exact_open(struct fb_store *f)
{
	if (f->exact_fd < 0)
		f->exact_fd = fb_pin_get(f->dir_fd, "exact");
	if (f->lpm_fd < 0)
		f->lpm_fd = fb_pin_get(f->dir_fd, "lpm");
	if (f->exact_fd < 0 || f->lpm_fd < 0) {
		fb_report_err(
			"filter '%s' confirms hits but its exact sets are missing (%s): flowbloom "
			"destroy %s removes it",
			f->name, strerror(errno), f->name);
		return -1;
	}
	return open_sets(f);
}

/* The exact sets: the hash map counts every rule by its exact key (what
 * deletes check, and what the data path looks a 5-tuple or another shape's
 * masked key up in); the LPM trie of its direction mirrors each prefix
 * rule while its count is non-zero (what the data path looks up). */
__u32 fb_exact_count(const struct fb_store *f, const struct fb_key *k)
{
	__u32 v = 0;

	return bpf_map_lookup_elem(f->set_fd[0], k, &v) ? 0 : v;
}

int fb_exact_adjust(struct fb_store *f, const struct fb_key *k, int delta)
{
	__u32 old = fb_exact_count(f, k), v, one = 1;
	int err;

	if (delta < 0 && !old)
		return 0;
	v = old + delta;
	err = v ? bpf_map_update_elem(f->set_fd[0], k, &v, BPF_ANY)
		: bpf_map_delete_elem(f->set_fd[0], k);
	/* The trie holds the prefix while its count is non-zero. */
	if (!err && (k->kind == FB_KIND_SRC || k->kind == FB_KIND_DST) && (!v || !old)) {
		struct fb_lpm_key lk;
		int fd = f->set_fd[k->kind == FB_KIND_DST ? 2 : 1];

		fb_lpm_key_of(&lk, k, k->kind, k->plen);
		err = v ? bpf_map_update_elem(fd, &lk, &one, BPF_ANY)
			: bpf_map_delete_elem(fd, &lk);
		/* The count back as it was: the key is in both or neither. */
		if (err) {
			int e = errno;

			if (old)
				bpf_map_update_elem(f->set_fd[0], k, &old, BPF_ANY);
			else
				bpf_map_delete_elem(f->set_fd[0], k);
			errno = e;
		}
	}
	if (err) {
		if (errno == E2BIG)
			fb_report_err(
				"the exact sets of '%s' are full (sized for its capacity): create "
				"it "
				"with a larger --capacity",
				f->name);
		else
			fb_report_err("cannot update the exact sets of '%s': %s", f->name,
				      strerror(errno));
		return -1;
	}
	return 0;
}
