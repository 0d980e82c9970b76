/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The filter store: creating, opening and destroying filters pinned in
 * bpffs (one directory per filter), and reading/writing their bits through
 * an mmap of the filter array. Every CLI verb goes through here.
 *
 *   <root>/<NAME>/filter   the outer map fb_filter holding the filter's chunks
 *                          (include/flowbloom/geometry.h, "Physical layout")
 *                          and those of its generations of rules with a
 *                          lifetime (ttl.h)
 *   <root>/<NAME>/gcntS    counters of the generation in slot range S (counting)
 *   <root>/<NAME>/stats    per-CPU struct fb_stat_cells (maps.h)
 *   <root>/<NAME>/counters counters of a counting filter (see counting.h);
 *                          "counters1" while the array's header says gen 1
 *   <root>/<NAME>/exact    --confirm exact: outer maps of the exact sets
 *   <root>/<NAME>/lpm      (see include/flowbloom/maps.h)
 *
 * <root> is /sys/fs/bpf/flowbloom, or $FLOWBLOOM_ROOT (tests use their own).
 * Directories in the tree must belong to root and be writable by no one
 * else (the bpffs root's sticky 1777 aside), and are reached without
 * following symbolic links; pins are opened relative to them.
 *
 * Multi-step changes are made aside and published in one step:
 *   <root>/~<NAME>    a create or import being built (renamed to NAME)
 *   <root>/~~<NAME>   a filter being destroyed (renamed from NAME)
 * Their maker holds a flock on them; one nobody holds is stale (its maker
 * was killed): destroy and check --repair remove it.
 * The filter named "default" is pinned a second time under
 * /sys/fs/bpf/xdp/globals/ (fb_filter, fb_stats): the names an object loaded
 * by `ip link` looks for.
 */
#ifndef FLOWBLOOM_USER_STORE_H
#define FLOWBLOOM_USER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/geometry.h"
#include "flowbloom/key.h"
#include "flowbloom/maps.h"

#define FB_NAME_MAX 64

/* Staging directory prefixes: '~' is no valid filter name character. */
#define FB_STAGE_NEW "~"
#define FB_STAGE_OLD "~~"

/* fb_store_flock() flag: lock only, do not re-read the array. */
#define FB_LOCK_NOREFRESH 0x100

/* Why fb_store_open() failed, as decided where it did (the trust check,
 * a symbolic link refused, an open refused to this process): a filter
 * damaged (destroy removes it), none of that name, one whose directory or
 * pins are not trusted (owner, mode, a link: it may be whole; someone else
 * may have put it there), or one not known (ulimit -n, memory, the
 * kernel's EPERM or EACCES: nothing is known of it). */
enum fb_open_fail { FB_OPEN_DAMAGED = 1, FB_OPEN_ABSENT, FB_OPEN_UNTRUSTED, FB_OPEN_UNKNOWN };

struct fb_store {
	char name[FB_NAME_MAX];
	char dir[512];
	char pin_name[FB_NAME_MAX + 4]; /* the directory's name in the root */
	int root_fd;			/* the verified filter root */
	int dir_fd;			/* the filter's bpffs directory; flock()ed by writers */
	bool locked;			/* dir_fd flock()ed here (fb_store_flock) */
	bool staged;			/* being built (fb_store_create_staged) */
	bool aside;			/* being built and not installed (fb_replace_fill) */
	bool adopted;			/* "default" adopted ip link's maps */
	enum fb_open_fail fail;		/* why fb_store_open() failed; 0 once open */
	bool cnt_legacy;		/* counters pinned under an earlier build's name */
	__u32 outer_id;			/* kernel id of the outer map */
	int outer_fd;			/* fb_filter */
	int bits_fd;			/* the filter's chunk 0 (its head) */
	int stats_fd;			/* fb_stats */
	__u32 bits_id;			/* the filter array's identity: new for each replace */
	__u32 perm_id;			/* its permanent rules': kept by load --replace --ttl */
	__u32 head_id;			/* kernel id of chunk 0 (a new head too: head.h) */
	__u32 stats_id;			/* kernel id of the stats map */
	void *map;			/* the chunks mapped back to back (the head first) */
	__u32 nchunks;			/* chunks mapped */
	struct fb_header *hdr;		/* in map: the header, logical block 0 */
	struct fb_block *blocks;	/* the same, as the logical array of blocks */
	size_t map_bytes;		/* memory of the chunks (nchunks x 256 KiB) */
	/* Counting filters only (hdr->counter_bits != 0), else -1/NULL: */
	int cnt_fd;		       /* NAME/counters */
	struct fb_cnt_header *cnt_hdr; /* mmap of the counter array */
	__u8 *cnt;		       /* the counters, after its header */
	size_t cnt_bytes;	       /* length of that mmap */
	/* --confirm exact only, else -1: the outer maps, and the current
	 * generation's sets (hash of 5-tuples, LPM tries src and dst). */
	int exact_fd, lpm_fd;
	int set_fd[3];
	/* fb_rules_add() -3: the filter type's load when it refused a rule. */
	double refused_load;
	/* fb_replace_fill() (replace.h): keep_same, the new content is
	 * compared with the live one before the switch and, the same, dropped
	 * (same set; f as it was); dry, it is always dropped (same says
	 * whether it was the same). */
	bool keep_same, dry, same;
};

/* What `create` asks for. */
struct fb_create_opts {
	__u32 nblocks;
	__u8 k;
	__u8 layout;
	__u8 hash;
	__u8 action;
	__u8 counter_bits; /* 0: plain; 4 or 8: counting */
	__u8 confirm;	   /* 1: exact confirmation sets */
	__u8 compact;	   /* 1: bits in whole pages, not chunks (FB_HDRF_COMPACT) */
	__u64 capacity;
	double fp_rate;
	/* Exact sets for at least this many rules (0: as the capacity
	 * sizes them): import's, for a filter whose sets a replace made
	 * larger than its capacity's. */
	__u64 sets;
	/* Another filter type (enum fb_type; layout and k unused): nblocks
	 * counts geometry and table, geom holds the geometry blocks. */
	__u8 type;
	struct fb_block geom[5];
	/* Bits the sizing asked for before a Bloom filter was rounded up
	 * to whole chunks or pages (fb_create_opts_make; 0: not rounded). */
	__u64 bits_asked;
	/* Built only to be aborted (apply --check's trial load): ip link's
	 * maps are checked as for adoption, never adopted (written). */
	bool scratch;
};

/*
 * What the store asks of the filter types, which sit above it (types/):
 * on open, is a typed filter's geometry usable with its array (0, or -1
 * with why); on lock, roll back a counting filter's write a killed writer
 * left half done (how many flows), or finish a cuckoo or d-left batch
 * (noted itself, 0); -1, reported, refuses the lock.
 * types/ftype.c sets them before main runs; a program built without the
 * types refuses typed filters on open and counting filters on lock, rather
 * than use them unchecked.
 */
struct fb_store_types {
	int (*check)(const struct fb_header *hdr, const struct fb_block *blocks, char *why,
		     size_t len);
	int (*recover)(struct fb_store *f);
};
void fb_store_types_set(const struct fb_store_types *t);

/* All functions below print one error line themselves and return -1;
 * fb_store_create() and fb_store_create_staged() return FB_STORE_BUSY
 * instead while another create or import of the name is building it. */
#define FB_STORE_BUSY -2
int fb_store_create(const char *name, const struct fb_create_opts *o);
int fb_store_open(const char *name, struct fb_store *f);
/* A pin or map of f that exists but could not be opened now (errno not
 * ENOENT: ulimit -n, memory): "cannot open filter 'NAME': ERROR", never
 * "broken" (check and info tell the two apart by it). -1. */
#define FB_STORE_OPEN_ERR "cannot open filter '"
int fb_store_open_err(const struct fb_store *f);
/* Is errno e of a pin that could not be got only a limit of this process
 * (ulimit -n, memory) or the kernel's refusal (EPERM, EACCES)? Else the
 * pin is damaged: missing (ENOENT), or a directory (EISDIR) where it
 * belongs; a link (ELOOP) is refused as untrusted. */
bool fb_store_err_now(int e);
/* Pin `pin` of f not got (errno): a symbolic link (said, with where it
 * points: untrusted) or not opened now (fb_store_open_err()): -1; else 0,
 * damage, for the caller to say. */
int fb_store_pin_refused(const struct fb_store *f, const char *pin);
void fb_store_close(struct fb_store *f);
/* Works on broken filters too, and removes stale staging directories of
 * NAME (0 also when only those were there). */
int fb_store_destroy(const char *name);
/* A new filter built aside (FB_STAGE_NEW NAME), opened and locked into f;
 * fill it, then fb_store_publish() renames it to NAME in one step, or
 * fb_store_abort() removes it. fb_store_create() = both. */
int fb_store_create_staged(const char *name, const struct fb_create_opts *o, struct fb_store *f);
int fb_store_publish(struct fb_store *f);
void fb_store_abort(struct fb_store *f);
/* Exclusive lock against other writers of this filter (flock on its dir).
 * Once it holds the lock it re-reads which filter array is in use: a
 * `load --replace` may have switched arrays while it waited (f then
 * describes the new one; -1 if the filter was destroyed meanwhile). For a
 * counting filter it also rolls back a write a crashed writer left half
 * done, for a cuckoo or d-left filter it finishes one (a note goes to
 * stderr). */
int fb_store_lock(struct fb_store *f);
/* For a reader without the lock: has a replace put another head in slot 0
 * since f was mapped (what it maps next, a generation, may be gone)? And
 * f mapped again, as fb_store_open() maps it. */
bool fb_store_moved(const struct fb_store *f);
int fb_store_remap(struct fb_store *f);
/* Just the flock (LOCK_SH or LOCK_EX) and the re-read, no recovery: for
 * `check` and `export`. */
int fb_store_flock(struct fb_store *f, int op);
void fb_store_unlock(struct fb_store *f);
/* The filter's prefix-length lists (block FB_PREFIX_BLOCK of its array). */
static inline struct fb_prefixes *fb_store_prefixes(const struct fb_store *f)
{
	return (struct fb_prefixes *)&f->blocks[FB_PREFIX_BLOCK];
}
/* Logical blocks mapped from f->blocks on (the chunks after the head's
 * first FB_HEAD_SHIFT blocks, geometry.h): as far as a probe may read. */
static inline __u64 fb_store_nblocks(const struct fb_store *f)
{
	__u64 n = f->map_bytes / FB_BLOCK_BYTES;

	return n > FB_HEAD_SHIFT ? n - FB_HEAD_SHIFT : 0;
}
/* Is the filter opened as f still the one pinned under its name? `destroy`
 * unpins it while a reader (a monitoring loop) holds its maps, which then
 * live on fed by no program; a new filter of the same name is not it.
 * Reached through the verified directory handles, never a path. */
bool fb_store_gone(const struct fb_store *f);
/* Library-internal (store.c, destroy.c): is the directory f opened still
 * the one pinned as pin_name in the root? (Not if a destroy renamed it
 * away, or another filter took the name.) */
bool fb_store_still_named(const struct fb_store *f, const char *pin_name);

/* May a program read f's head now? (If not, fb_head_sync() writes it in
 * place.) A staged filter is read only if it adopted ip link's maps. */
static inline bool fb_store_live(const struct fb_store *f)
{
	return !f->aside && (!f->staged || f->adopted);
}

/* Library-internal: an empty struct (fds -1) (store.c); the counters' pin
 * name of generation gen, opening and mapping f's counters, and their pin
 * migration (counters.c). */
void fb_store_init(struct fb_store *f);
const char *fb_store_cnt_pin(unsigned gen);
int fb_store_open_counters(struct fb_store *f);
int fb_store_migrate_counters(struct fb_store *f);

#endif
