// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The filter store: bpffs pins, the mmap'd filter array, bit operations. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "counting.h"
#include "filter.h"
#include "monitor.h"
#include "output.h"

#define BPF_FS_MAGIC_NR 0xcafe4a11

const char *fb_root(void)
{
	const char *r = getenv("FLOWBLOOM_ROOT");

	return r && *r ? r : "/sys/fs/bpf/flowbloom";
}

int fb_check_bpffs(void)
{
	char parent[512];
	struct statfs st;
	char *slash;

	snprintf(parent, sizeof(parent), "%s", fb_root());
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = 0;
	if (statfs(parent, &st) || st.f_type != BPF_FS_MAGIC_NR) {
		fb_err("bpffs is not mounted at %s (mount -t bpf bpf /sys/fs/bpf)", parent);
		return -1;
	}
	return 0;
}

int fb_check_name(const char *name)
{
	const char *p;

	if (!*name || strlen(name) >= FB_NAME_MAX || name[0] == '-')
		goto bad;
	for (p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			goto bad;
	return 0;
bad:
	/* bpffs refuses '.' in names: reserved for the kernel. '~' is ours:
	 * staging directories (FB_STAGE_NEW, FB_STAGE_OLD). */
	fb_err("bad filter name '%s' (letters, digits, '_', '-'; at most %d)", name,
	       FB_NAME_MAX - 1);
	return -1;
}

static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

/*
 * The pin tree, walked safely. /sys/fs/bpf is mode 1777: any user can make
 * directories and symbolic links in it, so a path is trusted only after a
 * walk from / that opens one component at a time with O_NOFOLLOW and checks
 * each directory; everything below is then reached through the verified
 * directory fds (openat, unlinkat, renameat2, and BPF_OBJ_GET/PIN with
 * BPF_F_PATH_FD), never by re-resolving a path.
 */

/* A directory is trusted when root (or the caller) owns it and no one else
 * can write to it: then no one else can add, rename or remove its entries.
 * On the way to it, a sticky directory owned by root (the bpffs root, mode
 * 1777) is accepted: others can create entries there, but not rename or
 * remove ours, and the next component is checked itself. */
static int trusted(int fd, const char *path, bool on_the_way)
{
	struct stat st;

	if (fstat(fd, &st)) {
		fb_err("cannot stat %s: %s", path, strerror(errno));
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		fb_err("%s belongs to uid %u, not root: refusing to use it (remove it if you did "
		       "not make it)",
		       path, (unsigned)st.st_uid);
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(on_the_way && st.st_uid == 0 && (st.st_mode & S_ISVTX))) {
		fb_err("%s is writable by other users (mode %04o): refusing to use it", path,
		       (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

/* Open directory `path` from /, one component at a time, never following a
 * symbolic link, every directory trusted(). mkmode != 0 creates the last
 * component if it is missing. Returns the fd; -1 (printed); -2 (nothing
 * printed) if the directory does not exist. */
static int open_tree(const char *path, mode_t mkmode)
{
	char buf[512], sofar[512] = "", *comp, *next, *save = NULL;
	int fd, nfd;

	if (path[0] != '/' || strlen(path) >= sizeof(buf)) {
		fb_err("%s: not an absolute path", path);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", path);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || trusted(fd, "/", true))
		goto fail;
	for (comp = strtok_r(buf, "/", &save); comp; comp = next) {
		bool last;

		next = strtok_r(NULL, "/", &save);
		last = !next;
		snprintf(sofar + strlen(sofar), sizeof(sofar) - strlen(sofar), "/%s", comp);
		if (!strcmp(comp, "..")) {
			fb_err("%s: '..' in the filter root", path);
			goto fail;
		}
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && last && mkmode) {
			if (mkdirat(fd, comp, mkmode) && errno != EEXIST) {
				fb_err("cannot create %s: %s", sofar, strerror(errno));
				goto fail;
			}
			nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int e = errno;
			struct stat st;

			if (e == ENOENT && (last || !mkmode)) {
				close(fd);
				errno = ENOENT;
				return -2;
			}
			if (!fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
				fb_err("%s is a symbolic link: refusing to follow it", sofar);
			else
				fb_err("cannot open %s: %s", sofar, strerror(e));
			goto fail;
		}
		close(fd);
		fd = nfd;
		if (trusted(fd, sofar, !last))
			goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The filter root (fb_root()); with create, made if missing (mode 0700). */
static int open_root(bool create)
{
	return open_tree(fb_root(), create ? 0700 : 0);
}

const char *fb_iproute_dir(void)
{
	const char *d = getenv("FLOWBLOOM_IPROUTE_DIR");

	return d && *d ? d : FB_IPROUTE_PIN_DIR;
}

/* fb_iproute_dir()'s parent (/sys/fs/bpf/xdp). */
static void iproute_parent(char *buf, size_t len)
{
	char *slash;

	snprintf(buf, len, "%s", fb_iproute_dir());
	slash = strrchr(buf, '/');
	if (slash && slash != buf)
		*slash = 0;
}

/* The `ip link` pin directory /sys/fs/bpf/xdp/globals; with create, made
 * (with /sys/fs/bpf/xdp) if missing. A directory someone else made there is
 * refused: whoever owns it could swap the pins an ip-link program uses. */
static int open_iproute(bool create)
{
	char parent[512];
	int fd;

	if (create) {
		iproute_parent(parent, sizeof(parent));
		fd = open_tree(parent, 0700);
		if (fd < 0)
			return -1;
		close(fd);
	}
	return open_tree(fb_iproute_dir(), create ? 0700 : 0);
}

/* BPF_OBJ_GET / BPF_OBJ_PIN of `name` inside directory fd dfd: the kernel
 * resolves name relative to dfd (BPF_F_PATH_FD, Linux 6.5), so the
 * directory is the one we verified. Older kernels: the same directory
 * through /proc/self/fd. The attribute is spelled out: the installed
 * <linux/bpf.h> may predate path_fd. */
struct obj_attr {
	__u64 pathname;
	__u32 bpf_fd;
	__u32 file_flags;
	__s32 path_fd;
	__u32 zero;
};
#define FB_BPF_F_PATH_FD (1U << 14)

static int obj_at(int cmd, int fd, int dfd, const char *name)
{
	struct obj_attr a;
	char path[64];
	long r;

	memset(&a, 0, sizeof(a));
	a.pathname = (unsigned long)name;
	a.bpf_fd = cmd == BPF_OBJ_PIN ? fd : 0;
	a.file_flags = FB_BPF_F_PATH_FD;
	a.path_fd = dfd;
	r = syscall(__NR_bpf, cmd, &a, sizeof(a));
	if (r >= 0 || errno != EINVAL)
		return r;
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, name);
	return cmd == BPF_OBJ_GET ? bpf_obj_get(path) : bpf_obj_pin(fd, path);
}

/* A pin in a verified directory; never through a symbolic link. */
static int get_at(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -1;
	if (S_ISLNK(st.st_mode)) {
		errno = ELOOP;
		return -1;
	}
	return obj_at(BPF_OBJ_GET, 0, dfd, name);
}

static int pin_at(int fd, int dfd, const char *name)
{
	return obj_at(BPF_OBJ_PIN, fd, dfd, name);
}

static int open_dir_at(int dfd, const char *name)
{
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Remove directory `name` in dfd with everything in it (pins, monitor/),
 * never following a link. */
static int remove_tree_at(int dfd, const char *name, int depth)
{
	int fd = open_dir_at(dfd, name), pass, found = 1;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	/* Removing entries while reading the directory may skip some:
	 * read it again until a pass finds nothing. */
	for (pass = 0; found && pass < 8; pass++) {
		found = 0;
		rewinddir(d);
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			found = 1;
			if (de->d_type == DT_DIR) {
				if (depth < 4)
					remove_tree_at(fd, de->d_name, depth + 1);
			} else {
				unlinkat(fd, de->d_name, 0);
			}
		}
	}
	closedir(d);
	return unlinkat(dfd, name, AT_REMOVEDIR);
}

/* A staging directory nobody works in any more: its maker holds a flock on
 * it while it builds, which the kernel drops if the maker dies. Removes it
 * then (1); 0 if absent or in use. */
static int remove_stale(int root, const char *stage)
{
	int fd = open_dir_at(root, stage);

	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return 0;
	}
	remove_tree_at(root, stage, 0);
	close(fd);
	return 1;
}

static void stage_name(char *buf, size_t len, const char *prefix, const char *name)
{
	snprintf(buf, len, "%s%s", prefix, name);
}

static int rename_noreplace(int dfd, const char *from, const char *to)
{
	return syscall(SYS_renameat2, dfd, from, dfd, to, 1 /* RENAME_NOREPLACE */);
}

/* The counters of a counting filter are pinned per generation (the
 * header's gen, which `load --replace` flips with the array): the array in
 * use names its counters, so bits and counters are switched together. */
static const char *cnt_pin(unsigned gen)
{
	return gen & 1 ? "counters1" : "counters";
}

/* `ip link` may have pinned empty maps of its own before `create default`:
 * adopt them if they are empty and of the right shape, else refuse. */
static int iproute_pins(int *outer_fd, int *stats_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0, id;
	int gdir = open_iproute(false);

	*outer_fd = *stats_fd = -1;
	if (gdir == -2)
		return 0;
	if (gdir < 0)
		return -1;
	*outer_fd = get_at(gdir, FB_MAP_FILTER);
	*stats_fd = get_at(gdir, FB_MAP_STATS);
	close(gdir);
	if (*outer_fd < 0 && *stats_fd < 0)
		return 0;
	if (*outer_fd < 0 || *stats_fd < 0)
		goto bad;
	if (bpf_obj_get_info_by_fd(*outer_fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_ARRAY_OF_MAPS || info.max_entries != 1)
		goto bad;
	if (!bpf_map_lookup_elem(*outer_fd, &key, &id)) {
		fb_err("%s/%s already holds a filter; remove the stale pins first",
		       fb_iproute_dir(), FB_MAP_FILTER);
		goto fail;
	}
	memset(&info, 0, sizeof(info));
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(*stats_fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_PERCPU_ARRAY || info.value_size != sizeof(struct fb_stats))
		goto bad;
	return 1;
bad:
	fb_err("incompatible pins in %s (fb_filter, fb_stats): remove them first",
	       fb_iproute_dir());
fail:
	if (*outer_fd >= 0)
		close(*outer_fd);
	if (*stats_fd >= 0)
		close(*stats_fd);
	*outer_fd = *stats_fd = -1;
	return -1;
}

/* Pin the filter "default" where `ip link` looks (unless its maps are
 * there already: adopted ones). */
static int pin_iproute(const struct fb_filter *f)
{
	static const char *const names[2] = { FB_MAP_FILTER, FB_MAP_STATS };
	const int fds[2] = { f->outer_fd, f->stats_fd };
	int gdir = open_iproute(true), i, fd;

	if (gdir < 0)
		return -1;
	for (i = 0; i < 2; i++) {
		fd = get_at(gdir, names[i]);
		if (fd >= 0) {
			bool ours = map_id(fd) == map_id(fds[i]);

			close(fd);
			if (ours)
				continue;
			fb_err("%s/%s holds another map: remove the stale pin first",
			       fb_iproute_dir(), names[i]);
			goto fail;
		}
		if (pin_at(fds[i], gdir, names[i])) {
			fb_err("cannot pin %s/%s: %s", fb_iproute_dir(), names[i], strerror(errno));
			goto fail;
		}
	}
	close(gdir);
	return 0;
fail:
	close(gdir);
	return -1;
}

/* Remove the ip-link pins if they are filter f's (its map ids). */
static void unpin_iproute(const struct fb_filter *f)
{
	static const char *const names[2] = { FB_MAP_FILTER, FB_MAP_STATS };
	bool quiet = fb_err_quiet;
	char parent[512];
	int gdir, xdp, i, fd;

	fb_err_quiet = true; /* a foreign directory there: not ours to touch */
	gdir = open_iproute(false);
	fb_err_quiet = quiet;
	if (gdir < 0)
		return;
	for (i = 0; i < 2; i++) {
		__u32 id;

		fd = get_at(gdir, names[i]);
		if (fd < 0)
			continue;
		id = map_id(fd);
		close(fd);
		if (id && (id == f->outer_id || id == f->stats_id))
			unlinkat(gdir, names[i], 0);
	}
	close(gdir);
	/* The directories create made; left alone if anything else is in
	 * them (rmdir fails). */
	iproute_parent(parent, sizeof(parent));
	fb_err_quiet = true;
	xdp = open_tree(parent, 0);
	fb_err_quiet = quiet;
	if (xdp >= 0) {
		unlinkat(xdp, strrchr(fb_iproute_dir(), '/') + 1, AT_REMOVEDIR);
		close(xdp);
		rmdir(parent);
	}
}

/* Fresh exact sets for up to n rules: [0] 5-tuples, [1] source and [2]
 * destination prefixes. Entries are allocated as rules arrive
 * (BPF_F_NO_PREALLOC); n only bounds them. */
static int create_sets(__u64 n, int fd[3])
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	/* At least 64k: entries cost memory only as rules arrive; the hash's
	 * bucket array (about 1 MiB here) is the floor's price. */
	__u32 max = n < 65536 ? 65536 : n > (1U << 28) ? 1U << 28 : (__u32)n;

	fd[0] = bpf_map_create(BPF_MAP_TYPE_HASH, "fb_exact_set", sizeof(struct fb_key),
			       sizeof(__u32), max, &opts);
	fd[1] = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "fb_lpm_src", sizeof(struct fb_lpm_key),
			       sizeof(__u32), max, &opts);
	fd[2] = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "fb_lpm_dst", sizeof(struct fb_lpm_key),
			       sizeof(__u32), max, &opts);
	if (fd[0] >= 0 && fd[1] >= 0 && fd[2] >= 0)
		return 0;
	fb_err("cannot create the exact sets: %s", strerror(errno));
	for (int i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return -1;
}

/* Put sets into generation slot gen of the outer maps. */
static int install_sets(int exact_fd, int lpm_fd, int gen, const int fd[3])
{
	__u32 e = gen, s = gen * 2, d = gen * 2 + 1;

	if (bpf_map_update_elem(exact_fd, &e, &fd[0], BPF_ANY) ||
	    bpf_map_update_elem(lpm_fd, &s, &fd[1], BPF_ANY) ||
	    bpf_map_update_elem(lpm_fd, &d, &fd[2], BPF_ANY)) {
		fb_err("cannot install the exact sets: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void clear_slot(int exact_fd, int lpm_fd, int gen)
{
	__u32 e = gen, s = gen * 2, d = gen * 2 + 1;

	bpf_map_delete_elem(exact_fd, &e);
	bpf_map_delete_elem(lpm_fd, &s);
	bpf_map_delete_elem(lpm_fd, &d);
}

static int create_confirm(int dir_fd, __u64 n)
{
	int set[3], exact_fd = -1, lpm_fd = -1, err = -1, i;
	const char *what = "exact";

	if (create_sets(n, set))
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
		fb_err("cannot create the exact-set maps: %s", strerror(errno));
		goto out;
	}
	if (install_sets(exact_fd, lpm_fd, 0, set))
		goto out;
	if (pin_at(exact_fd, dir_fd, what))
		goto pin;
	what = "lpm";
	if (pin_at(lpm_fd, dir_fd, what))
		goto pin;
	err = 0;
	goto out;
pin:
	fb_err("cannot pin the exact sets (%s): %s", what, strerror(errno));
out:
	for (i = 0; i < 3; i++)
		close(set[i]);
	if (exact_fd >= 0)
		close(exact_fd);
	if (lpm_fd >= 0)
		close(lpm_fd);
	return err;
}

static void filter_init(struct fb_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->dir_fd = f->root_fd = f->outer_fd = f->bits_fd = f->stats_fd = f->cnt_fd = -1;
	f->exact_fd = f->lpm_fd = f->set_fd[0] = f->set_fd[1] = f->set_fd[2] = -1;
}

static int open_pins(struct fb_filter *f);

int fb_filter_create_staged(const char *name, const struct fb_create_opts *o, struct fb_filter *f)
{
	LIBBPF_OPTS(bpf_map_create_opts, inner_opts, .map_flags = FB_INNER_MAP_FLAGS);
	bool is_default = !strcmp(name, FB_IPROUTE_FILTER);
	int bits_fd = -1, outer_fd = -1, stats_fd = -1, cnt_fd = -1, adopted = 0, err = -1;
	__u32 entries = o->nblocks + FB_HDR_BLOCKS, key = 0;
	struct fb_header *hdr;
	size_t bytes = (size_t)entries * FB_BLOCK_BYTES;
	void *mem = MAP_FAILED;
	struct stat st;

	filter_init(f);
	if (fb_check_bpffs() || fb_check_name(name))
		return -1;
	snprintf(f->name, sizeof(f->name), "%s", name);
	stage_name(f->pin_name, sizeof(f->pin_name), FB_STAGE_NEW, name);
	snprintf(f->dir, sizeof(f->dir), "%s/%s", fb_root(), f->pin_name);
	f->root_fd = open_root(true);
	if (f->root_fd < 0) {
		f->root_fd = -1;
		return -1;
	}
	if (!fstatat(f->root_fd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		fb_err("filter '%s' already exists", name);
		goto fail;
	}
	/* Build aside, in a directory no filter name can take, and publish
	 * by one rename: a killed create leaves no half-made filter. */
	remove_stale(f->root_fd, f->pin_name);
	if (mkdirat(f->root_fd, f->pin_name, 0700)) {
		if (errno == EEXIST)
			fb_err("another create or import of '%s' is in progress", name);
		else
			fb_err("cannot create %s: %s", f->dir, strerror(errno));
		goto fail;
	}
	f->dir_fd = open_dir_at(f->root_fd, f->pin_name);
	if (f->dir_fd < 0 || flock(f->dir_fd, LOCK_EX | LOCK_NB) ||
	    trusted(f->dir_fd, f->dir, false)) {
		fb_err("another create or import of '%s' is in progress", name);
		if (f->dir_fd >= 0)
			close(f->dir_fd);
		f->dir_fd = -1;
		goto fail;
	}
	f->staged = true;
	if (is_default) {
		adopted = iproute_pins(&outer_fd, &stats_fd);
		if (adopted < 0)
			goto out;
		f->adopted = adopted;
	}

	bits_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fb_bits", sizeof(__u32), FB_BLOCK_BYTES,
				 entries, &inner_opts);
	if (bits_fd < 0) {
		fb_err("cannot create a %zu-byte filter array: %s", bytes, strerror(errno));
		goto out;
	}
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bits_fd, 0);
	if (mem == MAP_FAILED) {
		fb_err("cannot mmap the filter array: %s", strerror(errno));
		goto out;
	}
	/* The header is complete before the data path can see the array. */
	hdr = mem;
	hdr->magic = FB_MAGIC;
	hdr->version = FB_VERSION;
	hdr->layout = o->layout;
	hdr->hash = o->hash;
	hdr->k = o->k;
	hdr->nblocks = o->nblocks;
	hdr->action = o->action ? o->action : FB_ACTION_DROP;
	hdr->counter_bits = o->counter_bits;
	hdr->confirm = o->confirm;
	hdr->capacity = o->capacity;
	hdr->fp_ppb = (__u32)(o->fp_rate * 1e9 + 0.5);
	if (getrandom(hdr->key, sizeof(hdr->key), 0) != sizeof(hdr->key)) {
		fb_err("getrandom: %s", strerror(errno));
		goto out;
	}

	if (!adopted) {
		LIBBPF_OPTS(bpf_map_create_opts, outer_opts, .inner_map_fd = bits_fd);

		outer_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, FB_MAP_FILTER, sizeof(__u32),
					  sizeof(__u32), 1, &outer_opts);
		stats_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, FB_MAP_STATS, sizeof(__u32),
					  sizeof(struct fb_stats), 1, NULL);
		if (outer_fd < 0 || stats_fd < 0) {
			fb_err("cannot create maps: %s", strerror(errno));
			goto out;
		}
	}
	if (o->confirm &&
	    create_confirm(f->dir_fd,
			   o->capacity ? 2 * o->capacity : (__u64)o->nblocks * FB_BLOCK_BITS / 8))
		goto out;
	if (o->counter_bits) {
		size_t cbytes =
			fb_counting_map_bytes((__u64)o->nblocks * FB_BLOCK_BITS, o->counter_bits);
		LIBBPF_OPTS(bpf_map_create_opts, cnt_opts, .map_flags = BPF_F_MMAPABLE);
		void *cmem;

		cnt_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fb_counters", sizeof(__u32),
					FB_BLOCK_BYTES, cbytes / FB_BLOCK_BYTES, &cnt_opts);
		if (cnt_fd < 0) {
			fb_err("cannot create a %zu-byte counter array: %s", cbytes,
			       strerror(errno));
			goto out;
		}
		cmem = mmap(NULL, cbytes, PROT_READ | PROT_WRITE, MAP_SHARED, cnt_fd, 0);
		if (cmem == MAP_FAILED) {
			fb_err("cannot mmap the counter array: %s", strerror(errno));
			goto out;
		}
		fb_counting_init(cmem, o->counter_bits);
		munmap(cmem, cbytes);
		if (pin_at(cnt_fd, f->dir_fd, cnt_pin(hdr->gen)))
			goto pin_err;
	}
	if (bpf_map_update_elem(outer_fd, &key, &bits_fd, BPF_ANY)) {
		fb_err("cannot install the filter array: %s", strerror(errno));
		goto out;
	}
	if (pin_at(outer_fd, f->dir_fd, "filter") || pin_at(stats_fd, f->dir_fd, "stats"))
		goto pin_err;
	/* The kernel maps an mmapable array's pages in whole: one mapping
	 * at a time, or a big filter costs twice its size in memory. */
	munmap(mem, bytes);
	mem = MAP_FAILED;
	err = open_pins(f);
	goto out;
pin_err:
	fb_err("cannot pin the maps of '%s' in %s: %s", name, f->dir, strerror(errno));
out:
	/* Adopted maps belong to ip link's program: give them back empty. */
	if (err && adopted > 0)
		bpf_map_delete_elem(outer_fd, &key);
	if (mem != MAP_FAILED)
		munmap(mem, bytes);
	if (bits_fd >= 0)
		close(bits_fd);
	if (outer_fd >= 0)
		close(outer_fd);
	if (stats_fd >= 0)
		close(stats_fd);
	if (cnt_fd >= 0)
		close(cnt_fd);
	if (!err)
		return 0;
	fb_filter_abort(f);
	return -1;
fail:
	fb_filter_close(f);
	return -1;
}

int fb_filter_publish(struct fb_filter *f)
{
	if (!f->staged)
		return 0;
	if (rename_noreplace(f->root_fd, f->pin_name, f->name)) {
		if (errno == EEXIST || errno == ENOTEMPTY)
			fb_err("filter '%s' already exists", f->name);
		else
			fb_err("cannot publish filter '%s': %s", f->name, strerror(errno));
		return -1;
	}
	f->staged = false;
	snprintf(f->pin_name, sizeof(f->pin_name), "%s", f->name);
	snprintf(f->dir, sizeof(f->dir), "%s/%s", fb_root(), f->name);
	/* After the rename: a kill in between leaves "default" without its
	 * ip-link pins (check reports it, check --repair pins them), never
	 * pins of a filter that does not exist. */
	if (!strcmp(f->name, FB_IPROUTE_FILTER) && pin_iproute(f))
		return -1;
	return 0;
}

void fb_filter_abort(struct fb_filter *f)
{
	if (f->staged && f->root_fd >= 0) {
		if (f->adopted && f->outer_fd >= 0) {
			__u32 key = 0;

			bpf_map_delete_elem(f->outer_fd, &key);
		}
		remove_tree_at(f->root_fd, f->pin_name, 0);
	}
	fb_filter_close(f);
	rmdir(fb_root()); /* only succeeds if no other filter is there */
}

int fb_filter_create(const char *name, const struct fb_create_opts *o)
{
	struct fb_filter f;

	if (fb_filter_create_staged(name, o, &f))
		return -1;
	if (fb_filter_publish(&f)) {
		if (f.staged)
			fb_filter_abort(&f);
		else
			fb_filter_close(&f);
		return -1;
	}
	fb_filter_close(&f);
	return 0;
}

static int open_counters(struct fb_filter *f)
{
	size_t want = fb_counting_map_bytes(fb_header_mbits(f->hdr), f->hdr->counter_bits);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	f->cnt_fd = get_at(f->dir_fd, cnt_pin(f->hdr->gen));
	f->cnt_legacy = false;
	if (f->cnt_fd < 0 && errno == ENOENT && (f->hdr->gen & 1)) {
		/* Made by a build that pinned the counters as "counters" in
		 * both generations. (Unreachable otherwise: an array of
		 * generation 1 is installed only after "counters1" is
		 * pinned.) migrate_counters() renames it. */
		f->cnt_fd = get_at(f->dir_fd, "counters");
		f->cnt_legacy = f->cnt_fd >= 0;
	}
	if (f->cnt_fd < 0) {
		fb_err("counting filter '%s' has no counters (%s): flowbloom destroy %s removes it",
		       f->name, strerror(errno), f->name);
		return -1;
	}
	if (bpf_obj_get_info_by_fd(f->cnt_fd, &info, &len) ||
	    (size_t)info.max_entries * info.value_size != want) {
		fb_err("filter '%s': counter array has the wrong size", f->name);
		return -1;
	}
	f->cnt_bytes = want;
	f->cnt_hdr = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, f->cnt_fd, 0);
	if (f->cnt_hdr == MAP_FAILED) {
		f->cnt_hdr = NULL;
		fb_err("cannot mmap the counters of '%s': %s", f->name, strerror(errno));
		return -1;
	}
	f->cnt = (__u8 *)f->cnt_hdr + FB_CNT_HDR_BLOCKS * FB_BLOCK_BYTES;
	if (f->cnt_hdr->magic != FB_CNT_MAGIC || f->cnt_hdr->bits != f->hdr->counter_bits) {
		fb_err("filter '%s': bad counter header", f->name);
		return -1;
	}
	return 0;
}

/* The current generation's sets, from the outer maps. */
static int open_sets(struct fb_filter *f)
{
	__u32 slots[3] = { f->hdr->gen, f->hdr->gen * 2u, f->hdr->gen * 2u + 1 }, id;
	int i;

	for (i = 0; i < 3; i++) {
		if (f->set_fd[i] >= 0)
			close(f->set_fd[i]);
		f->set_fd[i] = -1;
		if (bpf_map_lookup_elem(i ? f->lpm_fd : f->exact_fd, &slots[i], &id) ||
		    (f->set_fd[i] = bpf_map_get_fd_by_id(id)) < 0) {
			fb_err("filter '%s': exact set missing (%s)", f->name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int open_confirm(struct fb_filter *f)
{
	if (f->exact_fd < 0)
		f->exact_fd = get_at(f->dir_fd, "exact");
	if (f->lpm_fd < 0)
		f->lpm_fd = get_at(f->dir_fd, "lpm");
	if (f->exact_fd < 0 || f->lpm_fd < 0) {
		fb_err("filter '%s' confirms hits but its exact sets are missing (%s): flowbloom "
		       "destroy %s removes it",
		       f->name, strerror(errno), f->name);
		return -1;
	}
	return open_sets(f);
}

/* Release the filter array in use and what hangs off it (counters, the
 * current exact sets), keeping the pins open. */
static void unmap_array(struct fb_filter *f)
{
	if (f->hdr && f->hdr != MAP_FAILED)
		munmap(f->hdr, f->map_bytes);
	f->hdr = NULL;
	f->blocks = NULL;
	if (f->bits_fd >= 0)
		close(f->bits_fd);
	f->bits_fd = -1;
	f->bits_id = 0;
	if (f->cnt_hdr)
		munmap(f->cnt_hdr, f->cnt_bytes);
	f->cnt_hdr = NULL;
	f->cnt = NULL;
	if (f->cnt_fd >= 0)
		close(f->cnt_fd);
	f->cnt_fd = -1;
	for (int i = 0; i < 3; i++) {
		if (f->set_fd[i] >= 0)
			close(f->set_fd[i]);
		f->set_fd[i] = -1;
	}
}

/* Map the filter array the outer map holds now, and its counters and
 * current exact sets. */
static int map_array(struct fb_filter *f)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0, id;

	if (bpf_map_lookup_elem(f->outer_fd, &key, &id) ||
	    (f->bits_fd = bpf_map_get_fd_by_id(id)) < 0) {
		f->bits_fd = -1;
		fb_err("filter '%s' has no filter array (%s): flowbloom destroy %s removes it",
		       f->name, strerror(errno), f->name);
		return -1;
	}
	if (bpf_obj_get_info_by_fd(f->bits_fd, &info, &len) || info.value_size != FB_BLOCK_BYTES ||
	    info.max_entries <= FB_HDR_BLOCKS) {
		fb_err("filter '%s': unexpected filter array", f->name);
		return -1;
	}
	f->bits_id = info.id;
	f->map_bytes = (size_t)info.max_entries * FB_BLOCK_BYTES;
	f->hdr = mmap(NULL, f->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, f->bits_fd, 0);
	if (f->hdr == MAP_FAILED) {
		f->hdr = NULL;
		fb_err("cannot mmap filter '%s': %s", f->name, strerror(errno));
		return -1;
	}
	f->blocks = (struct fb_block *)f->hdr;
	if (f->hdr->magic != FB_MAGIC || f->hdr->version != FB_VERSION ||
	    f->hdr->nblocks + FB_HDR_BLOCKS != info.max_entries || !f->hdr->k ||
	    f->hdr->k > FB_MAX_K) {
		fb_err("filter '%s': bad header (magic %#x, version %u)", f->name, f->hdr->magic,
		       f->hdr->version);
		return -1;
	}
	if (f->hdr->counter_bits && open_counters(f))
		return -1;
	if (f->hdr->confirm && open_confirm(f))
		return -1;
	return 0;
}

/* The inner array's id in the outer map now (0: none). */
static __u32 current_array(const struct fb_filter *f)
{
	__u32 key = 0, id = 0;

	return bpf_map_lookup_elem(f->outer_fd, &key, &id) ? 0 : id;
}

/* With dir_fd open: the pins, then the array in use. A reader without the
 * lock may meet a `load --replace` between reading the array and opening
 * its counters: then it tries again with the new array. */
static int open_pins(struct fb_filter *f)
{
	bool quiet = fb_err_quiet;
	int tries, rc;

	f->outer_fd = get_at(f->dir_fd, "filter");
	f->stats_fd = get_at(f->dir_fd, "stats");
	if (f->outer_fd < 0 || f->stats_fd < 0) {
		fb_err("filter '%s' is incomplete (%s): flowbloom destroy %s removes it", f->name,
		       strerror(errno), f->name);
		return -1;
	}
	f->outer_id = map_id(f->outer_fd);
	f->stats_id = map_id(f->stats_fd);
	for (tries = 0;; tries++) {
		__u32 tried;

		fb_err_quiet = quiet || tries < 2;
		rc = map_array(f);
		fb_err_quiet = quiet;
		if (!rc)
			return 0;
		tried = f->bits_id;
		unmap_array(f);
		if (tries == 2 || !tried || current_array(f) == tried) {
			if (tries < 2 && !quiet)
				fb_err("%s", fb_err_last);
			return -1;
		}
	}
}

int fb_filter_open(const char *name, struct fb_filter *f)
{
	filter_init(f);
	if (fb_check_bpffs() || fb_check_name(name))
		return -1;
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->pin_name, sizeof(f->pin_name), "%s", name);
	snprintf(f->dir, sizeof(f->dir), "%s/%s", fb_root(), name);
	f->root_fd = open_root(false);
	if (f->root_fd < 0) {
		if (f->root_fd == -2)
			fb_err("no filter named '%s' (see flowbloom list)", name);
		f->root_fd = -1;
		goto fail;
	}
	f->dir_fd = open_dir_at(f->root_fd, name);
	if (f->dir_fd < 0) {
		if (errno == ENOENT)
			fb_err("no filter named '%s' (see flowbloom list)", name);
		else if (errno == ELOOP || errno == ENOTDIR)
			fb_err("%s is not a directory (a symbolic link?): refusing it", f->dir);
		else
			fb_err("cannot open %s: %s", f->dir, strerror(errno));
		goto fail;
	}
	if (trusted(f->dir_fd, f->dir, false) || open_pins(f))
		goto fail;
	return 0;
fail:
	fb_filter_close(f);
	return -1;
}

int fb_filter_open_locked(const char *name, struct fb_filter *f, int op)
{
	if (fb_filter_open(name, f))
		return -1;
	if (op == LOCK_EX ? fb_filter_lock(f) : fb_filter_flock(f, op)) {
		fb_filter_close(f);
		return -1;
	}
	return 0;
}

void fb_filter_close(struct fb_filter *f)
{
	unmap_array(f);
	if (f->exact_fd >= 0)
		close(f->exact_fd);
	if (f->lpm_fd >= 0)
		close(f->lpm_fd);
	f->exact_fd = f->lpm_fd = -1;
	if (f->dir_fd >= 0)
		close(f->dir_fd);
	if (f->root_fd >= 0)
		close(f->root_fd);
	if (f->outer_fd >= 0)
		close(f->outer_fd);
	if (f->stats_fd >= 0)
		close(f->stats_fd);
	f->dir_fd = f->root_fd = f->outer_fd = f->stats_fd = -1;
}

static bool prog_uses(__u32 prog_id, const struct fb_filter *f);

struct first_attach {
	char ifname[IF_NAMESIZE];
};

static void note_first(const char *ifname, const char *mode, __u32 prog_id, void *ctx)
{
	struct first_attach *fa = ctx;

	(void)mode;
	(void)prog_id;
	if (!fa->ifname[0])
		snprintf(fa->ifname, sizeof(fa->ifname), "%s", ifname);
}

int fb_filter_users(const struct fb_filter *f, __u32 *first_prog)
{
	__u32 id = 0;
	int n = 0;

	/* Every loaded program, whichever network namespace its device is
	 * in: a netlink XDP attachment holds its program, and the program
	 * holds the maps. */
	while (!bpf_prog_get_next_id(id, &id)) {
		if (!prog_uses(id, f))
			continue;
		if (!n && first_prog)
			*first_prog = id;
		n++;
	}
	return n;
}

int fb_filter_clean_stale(const char *name)
{
	char stage[FB_NAME_MAX + 4];
	int root, n = 0;

	if (fb_check_bpffs() || fb_check_name(name))
		return -1;
	root = open_root(false);
	if (root == -2)
		return 0;
	if (root < 0)
		return -1;
	stage_name(stage, sizeof(stage), FB_STAGE_NEW, name);
	n += remove_stale(root, stage);
	stage_name(stage, sizeof(stage), FB_STAGE_OLD, name);
	n += remove_stale(root, stage);
	close(root);
	return n;
}

int fb_filter_stale(const char *name, unsigned *what)
{
	char stage[FB_NAME_MAX + 4];
	const char *const pre[2] = { FB_STAGE_NEW, FB_STAGE_OLD };
	int root, i, fd;

	*what = 0;
	if (fb_check_bpffs() || fb_check_name(name))
		return -1;
	root = open_root(false);
	if (root == -2)
		return 0;
	if (root < 0)
		return -1;
	for (i = 0; i < 2; i++) {
		stage_name(stage, sizeof(stage), pre[i], name);
		fd = open_dir_at(root, stage);
		if (fd < 0)
			continue;
		/* In use by a live create, import or destroy: not stale. */
		if (!flock(fd, LOCK_SH | LOCK_NB))
			*what |= 1U << i;
		close(fd);
	}
	close(root);
	return 0;
}

/*
 * Destroy: wait for the filter's writers (its lock), refuse if a program
 * uses it, remove the ip-link pins if they are its own, then take the
 * name away in one step (rename to FB_STAGE_OLD NAME) and remove the pins
 * from there. A kill at any point leaves the filter whole or gone (plus a
 * stale directory that the next destroy, or check --repair, removes).
 * Works on broken filters: it needs only the directory.
 */
int fb_filter_destroy(const char *name)
{
	struct first_attach fa = { "" };
	char gone[FB_NAME_MAX + 4];
	struct fb_filter f;
	int cleaned, tries;
	__u32 prog = 0;

	cleaned = fb_filter_clean_stale(name);
	if (cleaned < 0)
		return -1;
	filter_init(&f);
	snprintf(f.name, sizeof(f.name), "%s", name);
	snprintf(f.dir, sizeof(f.dir), "%s/%s", fb_root(), name);
	f.root_fd = open_root(false);
	if (f.root_fd == -1)
		return -1;
	if (f.root_fd == -2) {
		f.root_fd = -1;
		goto missing;
	}
	f.dir_fd = open_dir_at(f.root_fd, name);
	if (f.dir_fd < 0) {
		if (errno == ENOENT)
			goto missing;
		fb_err("cannot open %s: %s", f.dir, strerror(errno));
		goto fail;
	}
	if (trusted(f.dir_fd, f.dir, false) || fb_filter_flock(&f, LOCK_EX | FB_LOCK_NOREFRESH))
		goto fail;
	/* What programs could use: its outer and stats maps, if pinned. */
	f.outer_fd = get_at(f.dir_fd, "filter");
	f.stats_fd = get_at(f.dir_fd, "stats");
	f.outer_id = f.outer_fd >= 0 ? map_id(f.outer_fd) : 0;
	f.stats_id = f.stats_fd >= 0 ? map_id(f.stats_fd) : 0;
	if (f.outer_id || f.stats_id) {
		fb_filter_attachments(&f, note_first, &fa);
		if (fa.ifname[0]) {
			fb_err("filter '%s' is attached to %s: detach it first", name, fa.ifname);
			goto fail;
		}
		if (fb_filter_users(&f, &prog)) {
			fb_err("filter '%s' is in use by XDP program %u (attached in another "
			       "network namespace?): detach it first",
			       name, prog);
			goto fail;
		}
	}
	if (!strcmp(name, FB_IPROUTE_FILTER))
		unpin_iproute(&f);
	stage_name(gone, sizeof(gone), FB_STAGE_OLD, name);
	for (tries = 0; rename_noreplace(f.root_fd, name, gone); tries++) {
		/* A leftover of an earlier destroy of this name: remove it. */
		if (tries || (errno != EEXIST && errno != ENOTEMPTY) ||
		    !remove_stale(f.root_fd, gone)) {
			fb_err("cannot remove filter '%s': %s", name, strerror(errno));
			goto fail;
		}
	}
	remove_tree_at(f.root_fd, gone, 0);
	fb_filter_close(&f);
	rmdir(fb_root()); /* only succeeds once the last filter is gone */
	return 0;
fail:
	fb_filter_close(&f);
	return -1;
missing:
	fb_filter_close(&f);
	if (cleaned > 0) {
		rmdir(fb_root()); /* only succeeds once the last filter is gone */
		return 0;	  /* only what an interrupted command left */
	}
	fb_err("no filter named '%s' (see flowbloom list)", name);
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int fb_filter_list(char ***names)
{
	DIR *d;
	struct dirent *de;
	int n = 0, cap = 0, root;
	char **v = NULL;

	*names = NULL;
	if (fb_check_bpffs())
		return -1;
	root = open_root(false);
	if (root == -2)
		return 0; /* no filter created yet */
	if (root < 0)
		return -1;
	d = fdopendir(root);
	if (!d) {
		close(root);
		return 0;
	}
	while ((de = readdir(d))) {
		/* '.' entries and staging directories (FB_STAGE_*) are no
		 * filters. */
		if (de->d_name[0] == '.' || de->d_name[0] == '~' || de->d_type != DT_DIR)
			continue;
		if (n == cap) {
			char **nv = realloc(v, sizeof(*v) * (cap = cap ? cap * 2 : 16));

			if (!nv)
				break;
			v = nv;
		}
		v[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*names = v;
	return n;
}

int fb_filter_list_stale(char ***names)
{
	int n = 0, cap = 0, root, fd;
	struct dirent *de;
	char **v = NULL;
	DIR *d;

	*names = NULL;
	if (fb_check_bpffs())
		return -1;
	root = open_root(false);
	if (root == -2)
		return 0;
	if (root < 0)
		return -1;
	d = fdopendir(root);
	if (!d) {
		close(root);
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] != '~' || de->d_type != DT_DIR)
			continue;
		fd = open_dir_at(dirfd(d), de->d_name);
		if (fd < 0)
			continue;
		/* Held by a live create, import or destroy: not stale. */
		if (!flock(fd, LOCK_SH | LOCK_NB) && n < 4096) {
			if (n == cap) {
				char **nv = realloc(v, sizeof(*v) * (cap = cap ? cap * 2 : 8));

				if (!nv) {
					close(fd);
					break;
				}
				v = nv;
			}
			v[n++] = strdup(de->d_name);
		}
		close(fd);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*names = v;
	return n;
}

/* After waiting for the lock: is this still the filter (not destroyed
 * meanwhile), and is its array still the one in use (not replaced)? A
 * writer that opened the filter before a `load --replace` switched arrays
 * would otherwise write into the retired one. */
static int refresh(struct fb_filter *f)
{
	struct stat a, b;

	if (fstat(f->dir_fd, &a) || fstatat(f->root_fd, f->pin_name, &b, AT_SYMLINK_NOFOLLOW) ||
	    a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
		fb_err("filter '%s' was destroyed while this command waited for its lock", f->name);
		return -1;
	}
	if (f->outer_fd < 0 || current_array(f) == f->bits_id)
		return 0;
	unmap_array(f);
	return map_array(f);
}

int fb_filter_flock(struct fb_filter *f, int op)
{
	if (flock(f->dir_fd, op & ~FB_LOCK_NOREFRESH)) {
		fb_err("cannot lock filter '%s': %s", f->name, strerror(errno));
		return -1;
	}
	if (!(op & (LOCK_UN | FB_LOCK_NOREFRESH)) && refresh(f)) {
		flock(f->dir_fd, LOCK_UN);
		return -1;
	}
	return 0;
}

/* A filter from an earlier build in generation 1 with its counters pinned
 * as "counters": pin them as "counters1" too, then drop the old name
 * (killed in between, both names hold the same map: still consistent).
 * Call with the lock held. */
static int migrate_counters(struct fb_filter *f)
{
	if (!f->cnt_legacy)
		return 0;
	if (pin_at(f->cnt_fd, f->dir_fd, cnt_pin(1)) && errno != EEXIST) {
		fb_err("cannot pin the counters of '%s' as %s: %s", f->name, cnt_pin(1),
		       strerror(errno));
		return -1;
	}
	unlinkat(f->dir_fd, cnt_pin(0), 0);
	f->cnt_legacy = false;
	return 0;
}

int fb_filter_replace(struct fb_filter *f, __u32 nblocks, __u8 k, const struct fb_key *keys,
		      size_t n, size_t *bad)
{
	LIBBPF_OPTS(bpf_map_create_opts, inner_opts, .map_flags = FB_INNER_MAP_FLAGS);
	struct fb_filter nf = *f;
	__u32 entries = nblocks + FB_HDR_BLOCKS, zero = 0;
	size_t bytes = (size_t)entries * FB_BLOCK_BYTES;
	bool pinned = false;
	int err = -1;

	*bad = (size_t)-1;
	if (migrate_counters(f))
		return -1;
	nf.cnt_hdr = NULL;
	nf.cnt_fd = -1;
	nf.set_fd[0] = nf.set_fd[1] = nf.set_fd[2] = -1;
	nf.bits_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fb_bits", sizeof(__u32), FB_BLOCK_BYTES,
				    entries, &inner_opts);
	if (nf.bits_fd < 0) {
		fb_err("cannot create a %zu-byte filter array: %s", bytes, strerror(errno));
		return -1;
	}
	nf.map_bytes = bytes;
	nf.hdr = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, nf.bits_fd, 0);
	if (nf.hdr == MAP_FAILED) {
		fb_err("cannot mmap the new filter array: %s", strerror(errno));
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
			fb_err("cannot create the new counter array: %s", strerror(errno));
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
		if (create_sets(n * 2, nf.set_fd))
			goto out;
		if (install_sets(f->exact_fd, f->lpm_fd, nf.hdr->gen, nf.set_fd))
			goto out;
	}
	if (fb_filter_add_rules(&nf, keys, n, bad))
		goto out;
	if (f->cnt_hdr) {
		/* The new counters get their pin before the switch, under the
		 * new generation's name (removing what a killed replace may
		 * have left there): whichever array is in use, its counters
		 * are pinned. */
		unlinkat(f->dir_fd, cnt_pin(nf.hdr->gen), 0);
		if (pin_at(nf.cnt_fd, f->dir_fd, cnt_pin(nf.hdr->gen))) {
			fb_err("cannot pin the new counters of '%s': %s", f->name, strerror(errno));
			goto out;
		}
		pinned = true;
	}
	/* The switch: one update of the outer map. A packet sees the old
	 * filter or the new one, whole. */
	if (bpf_map_update_elem(f->outer_fd, &zero, &nf.bits_fd, BPF_ANY)) {
		fb_err("cannot install the new filter array: %s", strerror(errno));
		goto out;
	}
	/* The old counters' pin goes after the switch (a kill before leaves
	 * it, unused: check reports it, check --repair removes it). */
	if (f->cnt_hdr)
		unlinkat(f->dir_fd, cnt_pin(f->hdr->gen), 0);
	err = 0;
out:
	if (err) {
		if (pinned)
			unlinkat(f->dir_fd, cnt_pin(nf.hdr->gen), 0);
		if (f->hdr->confirm && nf.hdr)
			clear_slot(f->exact_fd, f->lpm_fd, f->hdr->gen ^ 1);
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
		clear_slot(f->exact_fd, f->lpm_fd, f->hdr->gen);
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
	f->bits_id = map_id(nf.bits_fd);
	f->hdr = nf.hdr;
	f->blocks = nf.blocks;
	f->map_bytes = nf.map_bytes;
	f->cnt_fd = nf.cnt_fd;
	f->cnt_hdr = nf.cnt_hdr;
	f->cnt = nf.cnt;
	f->cnt_bytes = nf.cnt_bytes;
	return 0;
}

int fb_filter_lock(struct fb_filter *f)
{
	if (fb_filter_flock(f, LOCK_EX))
		return -1;
	if (f->cnt_hdr && fb_counting_recover(f))
		fprintf(stderr, "flowbloom: note: rolled back one flow of an interrupted write\n");
	return 0;
}

void fb_filter_unlock(struct fb_filter *f)
{
	flock(f->dir_fd, LOCK_UN);
}

int fb_filter_tree_check(struct fb_filter *f, bool repair, struct fb_tree_state *s)
{
	unsigned stale;
	__u32 slot, id;
	int fd;

	memset(s, 0, sizeof(*s));
	if (fb_filter_stale(f->name, &stale))
		return -1;
	s->stale_create = stale & 1;
	s->stale_destroy = stale & 2;
	if (repair && stale)
		fb_filter_clean_stale(f->name);
	if (f->cnt_hdr && f->cnt_legacy && repair && migrate_counters(f))
		return -1;
	if (f->cnt_hdr && !f->cnt_legacy) {
		fd = get_at(f->dir_fd, cnt_pin(f->hdr->gen ^ 1));
		if (fd >= 0) {
			s->stale_counters = true;
			close(fd);
			if (repair)
				unlinkat(f->dir_fd, cnt_pin(f->hdr->gen ^ 1), 0);
		}
	}
	if (f->hdr->confirm) {
		slot = f->hdr->gen ^ 1;
		if (!bpf_map_lookup_elem(f->exact_fd, &slot, &id)) {
			s->stale_sets = true;
			if (repair)
				clear_slot(f->exact_fd, f->lpm_fd, f->hdr->gen ^ 1);
		}
	}
	if (!strcmp(f->name, FB_IPROUTE_FILTER)) {
		bool quiet = fb_err_quiet;
		int gdir, o = -1, st = -1;

		fb_err_quiet = true;
		gdir = open_iproute(false);
		fb_err_quiet = quiet;
		if (gdir >= 0) {
			o = get_at(gdir, FB_MAP_FILTER);
			st = get_at(gdir, FB_MAP_STATS);
			close(gdir);
		}
		s->iproute_missing =
			o < 0 || st < 0 || map_id(o) != f->outer_id || map_id(st) != f->stats_id;
		if (o >= 0)
			close(o);
		if (st >= 0)
			close(st);
		if (repair && s->iproute_missing && pin_iproute(f))
			return -1;
	}
	return 0;
}

void fb_filter_set(struct fb_filter *f, const struct fb_key *key)
{
	const struct fb_header *hdr = f->hdr;
	__u64 h = fb_hash_key(key, hdr->hash, hdr->key);
	__u32 i;
	int w;

	if (hdr->layout == FB_LAYOUT_CLASSIC) {
		__u64 mbits = fb_header_mbits(hdr);

		for (i = 0; i < hdr->k; i++) {
			__u64 p = fb_classic_bit(h, i, mbits);

			f->blocks[fb_bit_block(p)].w[fb_bit_word(p)] |= fb_bit_mask(p);
		}
	} else {
		struct fb_block *blk =
			&f->blocks[FB_HDR_BLOCKS + fb_blocked_index(h, hdr->nblocks)];

		for (w = 0; w < FB_BLOCK_WORDS; w++)
			blk->w[w] |= fb_blocked_word_mask(h, hdr->k, w);
	}
}

/* By the rule's family, never by its address: an IPv6 prefix expanded
 * into ::ffff:0:0/96 stays an IPv6 rule. */
int fb_prefix_list_of(const struct fb_key *k)
{
	int v6 = k->family == FB_FAMILY_IPV6;

	if (k->kind == FB_KIND_SRC)
		return v6 ? FB_PFX_SRC6 : FB_PFX_SRC4;
	if (k->kind == FB_KIND_DST)
		return v6 ? FB_PFX_DST6 : FB_PFX_DST4;
	return -1;
}

int fb_lengths_merge(struct fb_prefixes *px, const struct fb_key *keys, size_t n, size_t *bad)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int l = fb_prefix_list_of(&keys[i]), j;
		struct fb_lengths *ls;

		if (l < 0)
			continue;
		ls = &px->list[l];
		for (j = 0; j < ls->n; j++)
			if (ls->len[j] == keys[i].plen)
				break;
		if (j < ls->n)
			continue;
		if (ls->n == FB_MAX_LENGTHS) {
			*bad = i;
			return -1;
		}
		ls->len[ls->n++] = keys[i].plen;
	}
	return 0;
}

const char *fb_prefix_list_name(int l)
{
	static const char *const names[FB_PFX_NR] = { "IPv4 source", "IPv6 source",
						      "IPv4 destination", "IPv6 destination" };

	return l >= 0 && l < FB_PFX_NR ? names[l] : "?";
}

/* The exact sets: the hash map counts every rule by its exact key (what
 * deletes check); the LPM trie of its direction mirrors each prefix rule
 * while its count is non-zero (what the data path looks up). */
__u32 fb_filter_exact_count(const struct fb_filter *f, const struct fb_key *k)
{
	__u32 v = 0;

	return bpf_map_lookup_elem(f->set_fd[0], k, &v) ? 0 : v;
}

int fb_filter_exact_adjust(struct fb_filter *f, const struct fb_key *k, int delta)
{
	__u32 old = fb_filter_exact_count(f, k), v, one = 1;
	int err;

	if (delta < 0 && !old)
		return 0;
	v = old + delta;
	err = v ? bpf_map_update_elem(f->set_fd[0], k, &v, BPF_ANY)
		: bpf_map_delete_elem(f->set_fd[0], k);
	/* The trie holds the prefix while its count is non-zero. */
	if (!err && k->kind != FB_KIND_FLOW && (!v || !old)) {
		struct fb_lpm_key lk;
		int fd = f->set_fd[k->kind == FB_KIND_DST ? 2 : 1];

		fb_lpm_key_set(&lk, k->family, k->kind == FB_KIND_DST ? k->daddr : k->saddr,
			       k->plen);
		err = v ? bpf_map_update_elem(fd, &lk, &one, BPF_ANY)
			: bpf_map_delete_elem(fd, &lk);
	}
	if (err) {
		if (errno == E2BIG)
			fb_err("the exact sets of '%s' are full (sized for its capacity): create "
			       "it "
			       "with a larger --capacity",
			       f->name);
		else
			fb_err("cannot update the exact sets of '%s': %s", f->name,
			       strerror(errno));
		return -1;
	}
	return 0;
}

int fb_filter_add_rules(struct fb_filter *f, const struct fb_key *keys, size_t n, size_t *bad)
{
	struct fb_prefixes *px = (struct fb_prefixes *)&f->blocks[1], next = *px;
	__u32 kinds = 0;
	size_t i;
	int l;

	if (fb_lengths_merge(&next, keys, n, bad))
		return -1;
	for (i = 0; i < n; i++)
		kinds |= FB_KINDF(keys[i].kind);
	/* Exact sets before bits: every Bloom hit must be confirmable. */
	for (i = 0; f->hdr->confirm && i < n; i++)
		if (fb_filter_exact_adjust(f, &keys[i], 1))
			return -2;
	if (f->cnt_hdr) {
		fb_counting_add_many(f, keys, n);
	} else {
		fb_filter_set_many(f, keys, n);
		f->hdr->nflows += n;
	}
	/* Then the lengths: new ones are appended (the order of a list does
	 * not change what matches), each written before the count that makes
	 * it visible. Then the kind flags. The data path thus never probes
	 * for rules whose bits are not all set. */
	for (l = 0; l < FB_PFX_NR; l++) {
		struct fb_lengths *cur = &px->list[l];
		int j;

		for (j = cur->n; j < next.list[l].n; j++) {
			cur->len[j] = next.list[l].len[j];
			__atomic_store_n(&cur->n, j + 1, __ATOMIC_RELEASE);
		}
	}
	__atomic_fetch_or(&f->hdr->kinds, kinds, __ATOMIC_RELEASE);
	return 0;
}

void fb_filter_set_many(struct fb_filter *f, const struct fb_key *keys, size_t n)
{
	/* At 256 MiB nearly every flow's block is a DRAM miss (~130 ns). Hash a
	 * batch first and prefetch its blocks, so the misses overlap instead
	 * of queueing one after another. */
	enum { BATCH = 16 };
	const struct fb_header *hdr = f->hdr;
	__u64 h[BATCH];
	size_t i, j, m;

	if (hdr->layout == FB_LAYOUT_CLASSIC) {
		for (i = 0; i < n; i++)
			fb_filter_set(f, &keys[i]);
		return;
	}
	for (i = 0; i < n; i += m) {
		m = n - i < BATCH ? n - i : BATCH;
		for (j = 0; j < m; j++) {
			h[j] = fb_hash_key(&keys[i + j], hdr->hash, hdr->key);
			__builtin_prefetch(
				&f->blocks[FB_HDR_BLOCKS + fb_blocked_index(h[j], hdr->nblocks)],
				1);
		}
		for (j = 0; j < m; j++) {
			struct fb_block *blk =
				&f->blocks[FB_HDR_BLOCKS + fb_blocked_index(h[j], hdr->nblocks)];
			int w;

			for (w = 0; w < FB_BLOCK_WORDS; w++)
				blk->w[w] |= fb_blocked_word_mask(h[j], hdr->k, w);
		}
	}
}

bool fb_filter_test(const struct fb_filter *f, const struct fb_key *key)
{
	const struct fb_header *hdr = f->hdr;
	__u64 h = fb_hash_key(key, hdr->hash, hdr->key);
	__u32 i;
	int w;

	if (hdr->layout == FB_LAYOUT_CLASSIC) {
		__u64 mbits = fb_header_mbits(hdr);

		for (i = 0; i < hdr->k; i++) {
			__u64 p = fb_classic_bit(h, i, mbits);

			if (!(f->blocks[fb_bit_block(p)].w[fb_bit_word(p)] & fb_bit_mask(p)))
				return false;
		}
		return true;
	}
	const struct fb_block *blk = &f->blocks[FB_HDR_BLOCKS + fb_blocked_index(h, hdr->nblocks)];

	for (w = 0; w < FB_BLOCK_WORDS; w++) {
		__u64 m = fb_blocked_word_mask(h, hdr->k, w);

		if ((blk->w[w] & m) != m)
			return false;
	}
	return true;
}

bool fb_filter_query(const struct fb_filter *f, const struct fb_key *k)
{
	const struct fb_prefixes *px = (const struct fb_prefixes *)&f->blocks[1];
	const struct fb_lengths *l;
	int list, i, w = k->kind == FB_KIND_DST ? 2 : 0;

	if (k->kind == FB_KIND_FLOW || k->plen != 128)
		return fb_filter_test(f, k);
	/* An address: as the data path does, its prefix at each length. */
	list = fb_prefix_list_of(k);
	l = &px->list[list];
	for (i = 0; i < l->n && i < FB_MAX_LENGTHS; i++) {
		struct fb_key m = *k;

		m.w[w] &= fb_prefix_mask(l->len[i], 0);
		m.w[w + 1] &= fb_prefix_mask(l->len[i], 1);
		m.plen = l->len[i];
		if (fb_filter_test(f, &m))
			return true;
	}
	return false;
}

__u64 fb_filter_popcount(const struct fb_filter *f)
{
	__u64 n = 0, b;
	int w;

	for (b = FB_HDR_BLOCKS; b < (__u64)f->hdr->nblocks + FB_HDR_BLOCKS; b++)
		for (w = 0; w < FB_BLOCK_WORDS; w++)
			n += __builtin_popcountll(f->blocks[b].w[w]);
	return n;
}

int fb_filter_read_stats(const struct fb_filter *f, struct fb_stats *out)
{
	int ncpu = libbpf_num_possible_cpus(), c, i;
	struct fb_stats *per;
	__u32 key = 0;

	memset(out, 0, sizeof(*out));
	if (ncpu < 1)
		return -1;
	per = calloc(ncpu, sizeof(*per));
	if (!per)
		return -1;
	if (bpf_map_lookup_elem(f->stats_fd, &key, per)) {
		fb_err("cannot read stats of '%s': %s", f->name, strerror(errno));
		free(per);
		return -1;
	}
	for (c = 0; c < ncpu; c++)
		for (i = 0; i < FB_STAT_SLOTS; i++) {
			out->c[i].packets += per[c].c[i].packets;
			out->c[i].bytes += per[c].c[i].bytes;
		}
	free(per);
	return 0;
}

/* Does program prog_id use filter f (its stats or outer map)? */
static bool prog_uses(__u32 prog_id, const struct fb_filter *f)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[32], i;
	int fd = bpf_prog_get_fd_by_id(prog_id);
	bool found = false;

	if (fd < 0)
		return false;
	info.nr_map_ids = 32;
	info.map_ids = (__u64)(unsigned long)ids;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		for (i = 0; i < info.nr_map_ids && i < 32; i++)
			if ((f->stats_id && ids[i] == f->stats_id) ||
			    (f->outer_id && ids[i] == f->outer_id))
				found = true;
	close(fd);
	return found;
}

int fb_filter_attachments(const struct fb_filter *f, fb_attach_cb cb, void *ctx)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	int n = 0;

	if (!ifs)
		return 0;
	for (i = ifs; i->if_index; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		if (bpf_xdp_query(i->if_index, 0, &q))
			continue;
		if (q.drv_prog_id && prog_uses(q.drv_prog_id, f)) {
			cb(i->if_name, "native", q.drv_prog_id, ctx);
			n++;
		}
		if (q.skb_prog_id && prog_uses(q.skb_prog_id, f)) {
			cb(i->if_name, "generic", q.skb_prog_id, ctx);
			n++;
		}
	}
	if_freenameindex(ifs);
	return n;
}
