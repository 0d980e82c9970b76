// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The pin tree: the verified walk from / to the filter root, pins reached
 * through directory fds, the ip-link pins of "default", the filters' names;
 * staging directories and their removal are in pinstage.c. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "report.h"
#include "store/pintree.h"
#include "util.h"

#define BPF_FS_MAGIC_NR 0xcafe4a11

const char *fb_pin_root(void)
{
	const char *r = getenv("FLOWBLOOM_ROOT");

	return r && *r ? r : "/sys/fs/bpf/flowbloom";
}

/* A path open_tree() walks (in a buffer of len bytes): absolute, short
 * enough, no ".." (a root outside the tree it names). 0, or -1 said
 * (errno EINVAL). root: the filter root, so named. */
static int tree_path_refused(const char *path, size_t len, bool root)
{
	const char *p;
	size_t n;

	errno = EINVAL;
	if (path[0] != '/') {
		fb_report_err("%s: not an absolute path", path);
		return -1;
	}
	if (strlen(path) >= len) {
		fb_report_err("%s: longer than %zu bytes", path, len - 1);
		return -1;
	}
	for (p = path; *p; p += n) {
		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (n == 2 && !strncmp(p, "..", 2)) {
			fb_report_err("%s: '..' in the %s", path, root ? "filter root" : "path");
			return -1;
		}
	}
	return 0;
}

int fb_pin_check_bpffs(void)
{
	char parent[512];
	struct statfs st;
	char *slash;

	/* The root refused as the pin tree refuses it, before anything
	 * looks at it (apply takes its lock, --check says ok). */
	if (tree_path_refused(fb_pin_root(), sizeof(parent), true))
		return -1;
	snprintf(parent, sizeof(parent), "%s", fb_pin_root());
	/* (A trailing "/" names the same root, not a child of it.) */
	for (slash = parent + strlen(parent); slash > parent + 1 && slash[-1] == '/'; slash--)
		slash[-1] = 0;
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = 0;
	/* Only a directory that is not there, or is not bpffs, is "not
	 * mounted": a statfs refused (memory, a search permission) cannot
	 * tell, and says why (errno kept). */
	if (statfs(parent, &st)) {
		if (errno != ENOENT && errno != ENOTDIR) {
			fb_report_err("cannot tell whether bpffs is mounted at %s: %s", parent,
				      strerror(errno));
			return -1;
		}
		st.f_type = 0;
	}
	if (st.f_type != BPF_FS_MAGIC_NR) {
		errno = ENODEV;
		fb_report_err("bpffs is not mounted at %s (mount -t bpf bpf /sys/fs/bpf)", parent);
		return -1;
	}
	return 0;
}

char *fb_pin_refused;

int fb_pin_check_name(const char *name)
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
	fb_report_err("bad filter name '%s' (letters, digits, '_' and '-', not starting with '-'; "
		      "at most %d)",
		      name, FB_NAME_MAX - 1);
	free(fb_pin_refused);
	fb_pin_refused = strdup(name);
	return -1;
}

/*
 * The pin tree, walked safely. /sys/fs/bpf is mode 1777: any user can make
 * directories and symbolic links in it, so a path is trusted only after a
 * walk from / that opens one component at a time with O_NOFOLLOW and checks
 * each directory; everything below is then reached through the verified
 * directory fds (openat, unlinkat, renameat2, and BPF_OBJ_GET/PIN with
 * BPF_F_PATH_FD), never by re-resolving a path.
 */

__thread enum fb_pin_why fb_pin_why;
__thread char fb_pin_link_found[FB_PIN_LINK_FOUND];

/* A symbolic link refused (name in dfd): what it is, kept in
 * fb_pin_link_found for the message, and why it is refused: untrusted. */
static void link_found(int dfd, const char *name)
{
	char to[PATH_MAX] = "?";
	struct stat st;
	ssize_t n = readlinkat(dfd, name, to, sizeof(to) - 1);

	if (n > 0)
		to[n] = 0;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		snprintf(fb_pin_link_found, sizeof(fb_pin_link_found), "a symbolic link to %s", to);
	else
		snprintf(fb_pin_link_found, sizeof(fb_pin_link_found),
			 "a symbolic link to %s, owned by uid %u", to, (unsigned)st.st_uid);
	fb_pin_why = FB_PIN_UNTRUSTED;
}

void fb_pin_report_link(const char *path)
{
	fb_report_err("%s is %s: refusing to follow it (remove it if you did not make it)", path,
		      fb_pin_link_found);
}

/* A directory is trusted when root (or the caller) owns it and no one else
 * can write to it: then no one else can add, rename or remove its entries.
 * On the way to it, a sticky directory owned by root (the bpffs root, mode
 * 1777) is accepted: others can create entries there, but not rename or
 * remove ours, and the next component is checked itself. */
static int trusted_stat(const struct stat *st, const char *path, bool on_the_way)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		fb_report_err(
			"%s belongs to uid %u, not root: refusing to use it (remove it if you did "
			"not make it)",
			path, (unsigned)st->st_uid);
		fb_pin_why = FB_PIN_UNTRUSTED;
		errno = EPERM;
		return -1;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(on_the_way && st->st_uid == 0 && (st->st_mode & S_ISVTX))) {
		fb_report_err("%s is writable by other users (mode %04o): refusing to use it", path,
			      (unsigned)(st->st_mode & 07777));
		fb_pin_why = FB_PIN_UNTRUSTED;
		errno = EPERM;
		return -1;
	}
	return 0;
}

int fb_pin_trusted(int fd, const char *path, bool on_the_way)
{
	struct stat st;

	if (fstat(fd, &st)) {
		fb_report_err("cannot stat %s: %s", path, strerror(errno));
		fb_pin_why = FB_PIN_UNKNOWN;
		return -1;
	}
	return trusted_stat(&st, path, on_the_way);
}

static void iproute_parent(char *buf, size_t len);

/*
 * The one symbolic link flowbloom follows: the one iproute2 makes. Its BPF
 * loader (lib/bpf_legacy.c, bpf_gen_hierarchy) creates <bpffs>/tc/ and
 * makes <bpffs>/xdp (and <bpffs>/ip) a symbolic link to the absolute path
 * "<bpffs>/tc/", so `ip link ... xdp obj` before `create default` leaves
 * /sys/fs/bpf/xdp -> /sys/fs/bpf/tc/. Accepted only when the link (named
 * `name` in directory dfd, path `path`) belongs to root (or the caller),
 * says exactly "<dir>/tc/" (or "<dir>/tc"), and that sibling tc, opened
 * itself without following anything, is a trusted directory on the same
 * bpffs. Nobody else can then have made it, or retarget it (root owns it
 * in a sticky or trusted directory). Returns tc's fd, or -1 (printed).
 */
static int iproute_link(int dfd, const char *name, const char *dir, const char *path, bool last)
{
	char want[512], got[512];
	struct stat st, dst;
	struct statfs sfs;
	ssize_t n;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISLNK(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()))
		goto refuse;
	n = readlinkat(dfd, name, got, sizeof(got) - 1);
	if (n <= 0)
		goto refuse;
	got[n] = 0;
	if (snprintf(want, sizeof(want), "%s/tc", strcmp(dir, "/") ? dir : "") >= (int)sizeof(want))
		goto refuse;
	if (strcmp(got, want) &&
	    (strncmp(got, want, strlen(want)) || strcmp(got + strlen(want), "/")))
		goto refuse;
	fd = openat(dfd, "tc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fb_report_err("%s is a symbolic link to %s, which cannot be opened: %s", path, got,
			      strerror(errno));
		return -1;
	}
	if (fstat(dfd, &dst) || fstat(fd, &st) || fstatfs(fd, &sfs) || st.st_dev != dst.st_dev ||
	    sfs.f_type != BPF_FS_MAGIC_NR) {
		fb_report_err("%s is a symbolic link to %s, which is not on the same bpffs", path,
			      got);
		close(fd);
		return -1;
	}
	if (fb_pin_trusted(fd, want, !last)) {
		close(fd);
		return -1;
	}
	return fd;
refuse:
	fb_report_err("%s is a symbolic link: refusing to follow it (only root's link to the "
		      "sibling tc/ that iproute2 makes is followed)",
		      path);
	fb_pin_why = FB_PIN_UNTRUSTED;
	return -1;
}

/* Open directory `path` from /, one component at a time, never following a
 * symbolic link, every directory fb_pin_trusted(). mkmode != 0 creates the last
 * component if it is missing. Returns the fd; -1 (printed; errno why: a
 * limit of this process, EMFILE or ENOMEM, is told from a refusal); -2
 * (nothing printed) if the directory does not exist. via_link: NULL, or the
 * `ip link` pin directory's parent may be iproute2's link (iproute_link()),
 * and *via_link says whether it was. */
static int open_tree(const char *path, mode_t mkmode, bool *via_link)
{
	char link_ok[512] = "";
	char buf[512], sofar[512] = "", *comp, *next, *save = NULL;
	int fd, nfd;

	if (tree_path_refused(path, sizeof(buf), path == fb_pin_root()))
		return -1;
	errno = EINVAL; /* (the refusals below without an errno of their own) */
	snprintf(buf, sizeof(buf), "%s", path);
	if (via_link) {
		*via_link = false;
		iproute_parent(link_ok, sizeof(link_ok));
	}
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fb_report_err("cannot open /: %s", strerror(errno));
		fb_pin_why = fb_pin_err_unknown(errno) ? FB_PIN_UNKNOWN : fb_pin_why;
	}
	if (fd < 0 || fb_pin_trusted(fd, "/", true))
		goto fail;
	for (comp = strtok_r(buf, "/", &save); comp; comp = next) {
		char dir[512];
		bool last;

		next = strtok_r(NULL, "/", &save);
		last = !next;
		snprintf(dir, sizeof(dir), "%s", sofar[0] ? sofar : "/");
		snprintf(sofar + strlen(sofar), sizeof(sofar) - strlen(sofar), "/%s", comp);
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && last && mkmode) {
			if (mkdirat(fd, comp, mkmode) && errno != EEXIST) {
				fb_report_err("cannot create %s: %s", sofar, strerror(errno));
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
			if (!fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode)) {
				if (link_ok[0] && !strcmp(sofar, link_ok)) {
					nfd = iproute_link(fd, comp, dir, sofar, last);
					if (nfd < 0)
						goto fail;
					*via_link = true;
					close(fd);
					fd = nfd;
					continue;
				}
				link_found(fd, comp);
				fb_pin_report_link(sofar);
			} else {
				fb_report_err("cannot open %s: %s%s", sofar, strerror(e),
					      e == EACCES || e == EPERM
						      ? " (flowbloom needs root or CAP_BPF)"
						      : "");
				if (fb_pin_err_unknown(e))
					fb_pin_why = FB_PIN_UNKNOWN;
			}
			errno = e;
			goto fail;
		}
		close(fd);
		fd = nfd;
		if (fb_pin_trusted(fd, sofar, !last))
			goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The filter root (fb_pin_root()); with create, made if missing (mode 0700). */
int fb_pin_open_root(bool create)
{
	return open_tree(fb_pin_root(), create ? 0700 : 0, NULL);
}

const char *fb_pin_iproute_dir(void)
{
	const char *d = getenv("FLOWBLOOM_IPROUTE_DIR");

	return d && *d ? d : FB_IPROUTE_PIN_DIR;
}

/* fb_pin_iproute_dir()'s parent (/sys/fs/bpf/xdp). */
static void iproute_parent(char *buf, size_t len)
{
	char *slash;

	snprintf(buf, len, "%s", fb_pin_iproute_dir());
	slash = strrchr(buf, '/');
	if (slash && slash != buf)
		*slash = 0;
}

/* The `ip link` pin directory /sys/fs/bpf/xdp/globals; with create, made
 * (with /sys/fs/bpf/xdp) if missing. A directory someone else made there is
 * refused: whoever owns it could swap the pins an ip-link program uses.
 * /sys/fs/bpf/xdp may be the link iproute2 makes (iproute_link()). */
int fb_pin_open_iproute(bool create)
{
	char parent[512];
	bool via_link;
	int fd;

	if (create) {
		iproute_parent(parent, sizeof(parent));
		fd = open_tree(parent, 0700, &via_link);
		if (fd < 0)
			return -1;
		close(fd);
	}
	return open_tree(fb_pin_iproute_dir(), create ? 0700 : 0, &via_link);
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

bool fb_pin_err_unknown(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOMEM || e == EPERM || e == EACCES;
}

/* A pin in a verified directory; never through a symbolic link (refused:
 * ELOOP, untrusted), nor a directory (EISDIR: damage; the kernel's EACCES
 * for it would read as a refusal of its own). */
int fb_pin_get(int dfd, const char *name)
{
	struct stat st;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (fb_pin_err_unknown(errno))
			fb_pin_why = FB_PIN_UNKNOWN;
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		link_found(dfd, name);
		errno = ELOOP;
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	fd = obj_at(BPF_OBJ_GET, 0, dfd, name);
	if (fd < 0 && fb_pin_err_unknown(errno))
		fb_pin_why = FB_PIN_UNKNOWN;
	return fd;
}

int fb_pin_at(int fd, int dfd, const char *name)
{
	return obj_at(BPF_OBJ_PIN, fd, dfd, name);
}

int fb_pin_open_dir(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), e = errno;
	struct stat st;

	if (fd >= 0)
		return fd;
	if ((e == ELOOP || e == ENOTDIR) && !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode))
		link_found(dfd, name);
	else if (fb_pin_err_unknown(e))
		fb_pin_why = FB_PIN_UNKNOWN;
	errno = e;
	return -1;
}

/* A pin to adopt in the verified directory dfd: absent (0), or root's (or
 * the caller's) and writable by no one else (0); else -1, printed. The
 * directory being root's does not make its pins so: root may have given
 * one away (chown, chmod), and whoever may write a pin can open it and
 * put a filter of his own in the map an ip-link program uses. */
static int adoptable(int dfd, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	snprintf(path, sizeof(path), "%s/%s", fb_pin_iproute_dir(), name);
	return trusted_stat(&st, path, false);
}

/* `ip link` may have pinned empty maps of its own before `create default`:
 * adopt them if they are root's, empty and of the right shape, else
 * refuse. */
int fb_pin_iproute_maps(int *outer_fd, int *stats_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0, id;
	int gdir = fb_pin_open_iproute(false);

	*outer_fd = *stats_fd = -1;
	if (gdir == -2)
		return 0;
	if (gdir < 0)
		return -1;
	if (adoptable(gdir, FB_MAP_FILTER) || adoptable(gdir, FB_MAP_STATS)) {
		close(gdir);
		return -1;
	}
	*outer_fd = fb_pin_get(gdir, FB_MAP_FILTER);
	*stats_fd = fb_pin_get(gdir, FB_MAP_STATS);
	close(gdir);
	if (*outer_fd < 0 && *stats_fd < 0)
		return 0;
	if (*outer_fd < 0 || *stats_fd < 0)
		goto bad;
	if (bpf_obj_get_info_by_fd(*outer_fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_ARRAY_OF_MAPS || info.max_entries != FB_FILTER_SLOTS)
		goto bad;
	if (!bpf_map_lookup_elem(*outer_fd, &key, &id)) {
		fb_report_err("%s/%s already holds a filter; remove the stale pins first",
			      fb_pin_iproute_dir(), FB_MAP_FILTER);
		goto fail;
	}
	memset(&info, 0, sizeof(info));
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(*stats_fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_PERCPU_ARRAY ||
	    info.value_size != sizeof(struct fb_stat_cells))
		goto bad;
	return 1;
bad:
	fb_report_err("incompatible pins in %s (fb_filter, fb_stats): remove them first",
		      fb_pin_iproute_dir());
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
int fb_pin_iproute(const struct fb_store *f)
{
	static const char *const names[2] = { FB_MAP_FILTER, FB_MAP_STATS };
	const int fds[2] = { f->outer_fd, f->stats_fd };
	int gdir = fb_pin_open_iproute(true), i, fd;

	if (gdir < 0)
		return -1;
	for (i = 0; i < 2; i++) {
		fd = fb_pin_get(gdir, names[i]);
		if (fd >= 0) {
			bool ours = fb_map_id(fd) == fb_map_id(fds[i]);

			close(fd);
			if (ours)
				continue;
			fb_report_err("%s/%s holds another map: remove the stale pin first",
				      fb_pin_iproute_dir(), names[i]);
			goto fail;
		}
		if (fb_pin_at(fds[i], gdir, names[i])) {
			fb_report_err("cannot pin %s/%s: %s", fb_pin_iproute_dir(), names[i],
				      strerror(errno));
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
void fb_pin_iproute_remove(const struct fb_store *f)
{
	static const char *const names[2] = { FB_MAP_FILTER, FB_MAP_STATS };
	bool quiet = fb_report_quiet, via_link;
	char parent[512];
	int gdir, xdp, i, fd;

	fb_report_quiet = true; /* a foreign directory there: not ours to touch */
	gdir = fb_pin_open_iproute(false);
	fb_report_quiet = quiet;
	if (gdir < 0)
		return;
	for (i = 0; i < 2; i++) {
		__u32 id;

		fd = fb_pin_get(gdir, names[i]);
		if (fd < 0)
			continue;
		id = fb_map_id(fd);
		close(fd);
		if (id && (id == f->outer_id || id == f->stats_id))
			unlinkat(gdir, names[i], 0);
	}
	close(gdir);
	/* The directories create made; left alone if anything else is in
	 * them (rmdir fails), or if they are iproute2's (xdp its link). */
	iproute_parent(parent, sizeof(parent));
	fb_report_quiet = true;
	xdp = open_tree(parent, 0, &via_link);
	fb_report_quiet = quiet;
	if (xdp >= 0 && via_link) {
		close(xdp);
	} else if (xdp >= 0) {
		unlinkat(xdp, strrchr(fb_pin_iproute_dir(), '/') + 1, AT_REMOVEDIR);
		close(xdp);
		rmdir(parent);
	}
}

int fb_pin_list(char ***names)
{
	DIR *d;
	struct dirent *de;
	int n = 0, cap = 0, root, err;
	char **v = NULL;

	*names = NULL;
	if (fb_pin_check_bpffs())
		return -1;
	root = fb_pin_open_root(false);
	if (root == -2)
		return 0; /* no filter created yet */
	if (root < 0)
		return -1;
	d = fdopendir(root);
	if (!d) {
		close(root);
		goto err;
	}
	/* A directory that cannot be read, or names without memory, is an
	 * error: a list cut short would say filters are not there. */
	for (errno = 0; (de = readdir(d)); errno = 0) {
		/* '.' entries and staging directories (FB_STAGE_*) are no
		 * filters. */
		if (de->d_name[0] == '.' || de->d_name[0] == '~' || de->d_type != DT_DIR)
			continue;
		if (n == cap) {
			char **nv = realloc(v, sizeof(*v) * (cap = cap ? cap * 2 : 16));

			if (!nv) {
				errno = ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[n] = strdup(de->d_name))) {
			errno = ENOMEM;
			break;
		}
		n++;
	}
	err = errno;
	closedir(d);
	if (err) {
		errno = err;
		while (n--)
			free(v[n]);
		free(v);
		goto err;
	}
	if (n)
		qsort(v, n, sizeof(*v), fb_cmp_str);
	*names = v;
	return n;
err:
	fb_report_err("cannot list the filters in %s: %s", fb_pin_root(), strerror(errno));
	return -1;
}

int fb_pin_open_root_of(const char *name)
{
	if (fb_pin_check_name(name) || fb_pin_check_bpffs())
		return -1;
	return fb_pin_open_root(false);
}

bool fb_pin_exists(const char *name)
{
	bool quiet = fb_report_quiet, yes;
	struct stat st;
	int root;

	fb_report_quiet = true;
	root = fb_pin_open_root(false);
	fb_report_quiet = quiet;
	if (root < 0)
		return false;
	yes = !fstatat(root, name, &st, AT_SYMLINK_NOFOLLOW);
	close(root);
	return yes;
}
