// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --confirm exact: the exact sets (hash of 5-tuples, LPM tries of source and
 * destination prefixes) in per-generation slots of two outer maps. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "keysort.h"
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
			if (fb_store_err_now(errno)) /* ulimit -n, memory: not damage */
				return fb_store_open_err(f);
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
		/* (A link, or ulimit -n, memory: not damage.) */
		if (fb_store_pin_refused(f, f->exact_fd < 0 ? "exact" : "lpm"))
			return -1;
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
 * rule while its count is non-zero (what the data path looks up). A
 * rule's count there: ENOENT is none, any other failure an error. */
int fb_exact_get(const struct fb_store *f, const struct fb_key *k, __u32 *count)
{
	*count = 0;
	if (!bpf_map_lookup_elem(f->set_fd[0], k, count))
		return 0;
	*count = 0;
	if (errno == ENOENT)
		return 0;
	fb_report_err("cannot read the exact sets of '%s': %s", f->name, strerror(errno));
	return -1;
}

/* A batch the kernel refused before running it because it has no batches
 * for the map type (524: its ENOTSUPP) or none at all. */
static bool no_batches(int e)
{
	return e == EINVAL || e == ENOTSUP || e == EOPNOTSUPP || e == 524;
}

struct rule_fn {
	int (*fn)(const struct fb_key *k, __u32 copies, void *ctx);
	void *ctx;
};

static int rule_entry(const void *k, __u32 v, void *arg)
{
	const struct rule_fn *c = arg;

	return c->fn(k, v, c->ctx);
}

struct trie_fn {
	int (*fn)(const struct fb_lpm_key *k, void *ctx);
	void *ctx;
};

static int trie_entry(const void *k, __u32 v, void *arg)
{
	const struct trie_fn *c = arg;

	(void)v;
	return c->fn(k, c->ctx);
}

int fb_exact_walk(const struct fb_store *f, int fd, size_t ksize,
		  int (*fn)(const void *k, __u32 v, void *ctx), void *ctx)
{
	enum { BATCH = 4096 };
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	/* The batch token: a bucket for a hash map, a key for a trie. */
	__u8 *keys = malloc(BATCH * ksize), *in = calloc(2, ksize + 8), *out = in + ksize + 8;
	__u8 *key = malloc(2 * ksize), *next = key + ksize;
	__u32 *vals = malloc(BATCH * sizeof(*vals)), n, i, v;
	bool first = true, end = false, have = false;
	int rc = -1;

	if (!keys || !in || !key || !vals) {
		fb_report_err("out of memory reading the exact sets of '%s'", f->name);
		goto out;
	}
	while (!end) {
		n = BATCH;
		if (bpf_map_lookup_batch(fd, first ? NULL : in, out, keys, vals, &n, &opts)) {
			if (errno != ENOENT) {
				if (first && no_batches(errno))
					goto by_key;
				fb_report_err("cannot read the exact sets of '%s': %s", f->name,
					      strerror(errno));
				goto out;
			}
			end = true;
		}
		first = false;
		memcpy(in, out, ksize + 8);
		for (i = 0; i < n; i++)
			if (fn(keys + (size_t)i * ksize, vals[i], ctx))
				goto out;
	}
	rc = 0;
	goto out;
by_key:
	while (!bpf_map_get_next_key(fd, have ? key : NULL, next)) {
		/* A key deleted since get_next_key found it is passed over;
		 * any other failure ends the walk as an error, never as its
		 * end (a walk that stopped early would read as whole). */
		if (bpf_map_lookup_elem(fd, next, &v)) {
			if (errno != ENOENT)
				goto by_key_err;
		} else if (fn(next, v, ctx)) {
			goto out;
		}
		memcpy(key, next, ksize);
		have = true;
	}
	if (errno != ENOENT)
		goto by_key_err;
	rc = 0;
	goto out;
by_key_err:
	fb_report_err("cannot read the exact sets of '%s': %s", f->name, strerror(errno));
out:
	free(keys);
	free(in);
	free(key);
	free(vals);
	return rc;
}

int fb_exact_each(const struct fb_store *f,
		  int (*fn)(const struct fb_key *k, __u32 copies, void *ctx), void *ctx)
{
	struct rule_fn c = { fn, ctx };

	return fb_exact_walk(f, f->set_fd[0], sizeof(struct fb_key), rule_entry, &c);
}

int fb_exact_each_prefix(const struct fb_store *f, int set,
			 int (*fn)(const struct fb_lpm_key *k, void *ctx), void *ctx)
{
	struct trie_fn c = { fn, ctx };

	return fb_exact_walk(f, f->set_fd[set], sizeof(struct fb_lpm_key), trie_entry, &c);
}

static void refused(const struct fb_store *f)
{
	if (errno == E2BIG)
		fb_report_err("the exact sets of '%s' are full (sized for its capacity): create it "
			      "with a larger --capacity",
			      f->name);
	else
		fb_report_err("cannot update the exact sets of '%s': %s", f->name, strerror(errno));
}

int fb_exact_adjust(struct fb_store *f, const struct fb_key *k, int delta)
{
	__u32 old, v, one = 1;
	int err;

	/* A count that cannot be read is never taken for none: writing
	 * delta over it would lose the copies it holds. */
	if (fb_exact_get(f, k, &old))
		return -1;
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
		refused(f);
		return -1;
	}
	return 0;
}

/* Many rules at once (fb_exact_add_many): each distinct key once, with
 * its copies added up, then written a batch at a time. */
enum { BATCH = 16384 };

static int cmp_at(const void *a, const void *b, void *keys)
{
	const struct fb_key *k = keys;

	return memcmp(&k[*(const size_t *)a], &k[*(const size_t *)b], sizeof(*k));
}

/* keys[0..n) as distinct keys and their copies into b (b->keys is keys
 * itself when they are already distinct and sorted, as load's are). */
static int distinct(const struct fb_key *keys, const __u32 *copies, size_t n,
		    struct fb_exact_batch *b)
{
	size_t i, j, *at;

	for (i = 1; i < n; i++)
		if (memcmp(&keys[i - 1], &keys[i], sizeof(*keys)) >= 0)
			break;
	b->now = malloc((n ? n : 1) * sizeof(*b->now));
	if (!b->now)
		return -1;
	b->keys = (struct fb_key *)keys;
	if (i >= n) {
		b->n = n;
		for (i = 0; i < n; i++)
			b->now[i] = copies ? copies[i] : 1;
		return 0;
	}
	b->keys = malloc(n * sizeof(*b->keys));
	b->own = true;
	if (!b->keys)
		return -1;
	/* One copy each (add -f, in the input's order): the keys copied
	 * and sorted in place, with no index beside them (keysort.h). */
	if (!copies) {
		memcpy(b->keys, keys, n * sizeof(*keys));
		fb_keys_sort(b->keys, n);
		for (i = j = 0; i < n; i++) {
			if (j && !memcmp(&b->keys[j - 1], &b->keys[i], sizeof(*keys))) {
				b->now[j - 1]++;
				continue;
			}
			b->keys[j] = b->keys[i];
			b->now[j++] = 1;
		}
		b->n = j;
		return 0;
	}
	at = malloc(n * sizeof(*at));
	if (!at)
		return -1;
	for (i = 0; i < n; i++)
		at[i] = i;
	qsort_r(at, n, sizeof(*at), cmp_at, (void *)keys);
	for (i = j = 0; i < n; i++) {
		__u32 c = copies ? copies[at[i]] : 1;

		if (j && !memcmp(&b->keys[j - 1], &keys[at[i]], sizeof(*keys))) {
			b->now[j - 1] += c;
			continue;
		}
		b->keys[j] = keys[at[i]];
		b->now[j++] = c;
	}
	b->n = j;
	free(at);
	return 0;
}

/* n entries of fd written (vals NULL: deleted) in one call, or one at a
 * time where the kernel has no batches for the map; 0, or -1 (errno)
 * with *done the entries written before the error. */
static int write_many(int fd, const void *keys, size_t ksz, const __u32 *vals, __u32 n, __u32 *done)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	__u32 c = n;
	int err;

	*done = n;
	if (!n)
		return 0;
	err = vals ? bpf_map_update_batch(fd, keys, vals, &c, &o)
		   : bpf_map_delete_batch(fd, keys, &c, &o);
	if (!err)
		return 0;
	/* The kernel writes the count back only once the batch ran: one
	 * refused before (a map type without batches, a kernel without
	 * them) leaves it n, nothing written. */
	if (c == n)
		c = 0;
	*done = c;
	if (c || !no_batches(errno))
		return -1;
	for (c = 0; c < n; c++) {
		const void *k = (const char *)keys + c * ksz;

		if (vals ? bpf_map_update_elem(fd, k, &vals[c], BPF_ANY)
			 : bpf_map_delete_elem(fd, k)) {
			*done = c;
			return -1;
		}
	}
	*done = n;
	return 0;
}

static bool is_prefix(const struct fb_key *k)
{
	return k->kind == FB_KIND_SRC || k->kind == FB_KIND_DST;
}

static __u32 old_of(const struct fb_exact_batch *b, size_t i)
{
	return b->old ? b->old[i] : 0;
}

/* The trie entries of the new prefixes among b's [from, to): added, or
 * deleted (del); at most BATCH of them into lk. 0, or -1 (errno). */
static int trie_write(struct fb_store *f, const struct fb_exact_batch *b, size_t from, size_t to,
		      bool del, struct fb_lpm_key *lk, __u32 *one)
{
	for (int t = 1; t <= 2; t++) {
		__u32 m = 0, done;
		size_t i;

		for (i = from; i < to; i++)
			if (is_prefix(&b->keys[i]) && !old_of(b, i) &&
			    (b->keys[i].kind == FB_KIND_DST) == (t == 2))
				fb_lpm_key_of(&lk[m++], &b->keys[i], b->keys[i].kind,
					      b->keys[i].plen);
		if (write_many(f->set_fd[t], lk, sizeof(*lk), del ? NULL : one, m, &done))
			return -1;
	}
	return 0;
}

/* b's counts [0, to) back as they were, and the trie entries of the new
 * prefixes among [0, tries) out again. */
static void restore(struct fb_store *f, const struct fb_exact_batch *b, size_t to, size_t tries,
		    struct fb_lpm_key *lk, struct fb_key *k, __u32 *v)
{
	size_t s, i;
	__u32 m, d, done;

	for (s = 0; s < tries; s += BATCH)
		trie_write(f, b, s, s + BATCH < tries ? s + BATCH : tries, true, lk, v);
	for (s = 0; s < to; s += BATCH) {
		size_t e = s + BATCH < to ? s + BATCH : to;

		for (d = 0; d < 2; d++) {
			for (m = 0, i = s; i < e; i++)
				if (!old_of(b, i) == !d) {
					k[m] = b->keys[i];
					v[m++] = old_of(b, i);
				}
			write_many(f->set_fd[0], k, sizeof(*k), d ? v : NULL, m, &done);
		}
	}
}

int fb_exact_add_many(struct fb_store *f, const struct fb_key *keys, const __u32 *copies, size_t n,
		      struct fb_exact_batch *b)
{
	struct fb_lpm_key *lk = malloc(BATCH * sizeof(*lk));
	struct fb_key *k = malloc(BATCH * sizeof(*k)), probe;
	__u32 *v = malloc(BATCH * sizeof(*v)), done = 0;
	size_t i, s = 0;
	int rc = -1;

	memset(b, 0, sizeof(*b));
	if (!lk || !k || !v || distinct(keys, copies, n, b))
		goto nomem;
	/* The counts the rules have now: none in an empty set (a new
	 * filter's, or the fresh one a replace fills; the lock keeps other
	 * writers out), else each looked up. */
	if (n && (!bpf_map_get_next_key(f->set_fd[0], NULL, &probe) || errno != ENOENT)) {
		b->old = malloc(b->n * sizeof(*b->old));
		if (!b->old)
			goto nomem;
		for (i = 0; i < b->n; i++) {
			/* Nothing written yet: a count not read refuses it all. */
			if (fb_exact_get(f, &b->keys[i], &b->old[i])) {
				fb_exact_batch_free(b);
				goto out;
			}
			b->now[i] += b->old[i];
		}
	}
	/* A batch of counts, then the trie entries of its new prefixes (the
	 * trie holds a prefix while its count is non-zero). */
	for (i = 0; i < BATCH; i++)
		v[i] = 1;
	for (s = 0; s < b->n; s += BATCH) {
		size_t e = s + BATCH < b->n ? s + BATCH : b->n;

		if (write_many(f->set_fd[0], &b->keys[s], sizeof(*k), &b->now[s], e - s, &done)) {
			done += s;
			goto undo;
		}
		if (trie_write(f, b, s, e, false, lk, v)) {
			int err = errno;

			/* Part of this batch's trie entries may be in: each
			 * out again (one not there fails harmlessly). */
			for (i = s; i < e; i++)
				if (is_prefix(&b->keys[i]) && !old_of(b, i)) {
					fb_lpm_key_of(lk, &b->keys[i], b->keys[i].kind,
						      b->keys[i].plen);
					bpf_map_delete_elem(
						f->set_fd[b->keys[i].kind == FB_KIND_DST ? 2 : 1],
						lk);
				}
			errno = err;
			done = e;
			goto undo;
		}
	}
	rc = 0;
	goto out;
nomem:
	fb_report_err("out of memory adding %zu rules to '%s'", n, f->name);
	fb_exact_batch_free(b);
	goto out;
undo:
	/* What was written (counts of batches up to done, trie entries of
	 * those before s) back as it was: a refused batch changes nothing. */
	refused(f);
	{
		int e = errno;

		restore(f, b, done, s, lk, k, v);
		errno = e;
	}
	fb_exact_batch_free(b);
out:
	free(lk);
	free(k);
	free(v);
	return rc;
}

void fb_exact_undo_many(struct fb_store *f, struct fb_exact_batch *b)
{
	struct fb_lpm_key *lk = malloc(BATCH * sizeof(*lk));
	struct fb_key *k = malloc(BATCH * sizeof(*k));
	__u32 *v = malloc(BATCH * sizeof(*v));

	if (lk && k && v)
		restore(f, b, b->n, b->n, lk, k, v);
	else
		for (size_t i = b->n; i--;)
			fb_exact_adjust(f, &b->keys[i], -(int)(b->now[i] - old_of(b, i)));
	free(lk);
	free(k);
	free(v);
}

void fb_exact_batch_free(struct fb_exact_batch *b)
{
	if (b->own)
		free(b->keys);
	free(b->old);
	free(b->now);
	memset(b, 0, sizeof(*b));
}
