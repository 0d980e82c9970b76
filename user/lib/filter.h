/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The filter store: creating, opening and destroying filters pinned in
 * bpffs (one directory per filter), and reading/writing their bits through
 * an mmap of the filter array. Every CLI verb goes through here.
 *
 *   <root>/<NAME>/filter   one-entry ARRAY_OF_MAPS holding the filter array
 *   <root>/<NAME>/stats    per-CPU struct fb_stats
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
#ifndef FLOWBLOOM_USER_FILTER_H
#define FLOWBLOOM_USER_FILTER_H

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

/* fb_filter_flock() flag: lock only, do not re-read the array. */
#define FB_LOCK_NOREFRESH 0x100

struct fb_filter {
	char name[FB_NAME_MAX];
	char dir[512];
	char pin_name[FB_NAME_MAX + 4]; /* the directory's name in the root */
	int root_fd;			/* the verified filter root */
	int dir_fd;			/* the filter's bpffs directory; flock()ed by writers */
	bool staged;			/* being built (fb_filter_create_staged) */
	bool adopted;			/* "default" adopted ip link's maps */
	bool cnt_legacy;		/* counters pinned under an earlier build's name */
	__u32 outer_id;			/* kernel id of the outer map */
	int outer_fd;			/* fb_filter */
	int bits_fd;			/* the filter array inside it */
	int stats_fd;			/* fb_stats */
	__u32 bits_id;			/* kernel id of the filter array */
	__u32 stats_id;			/* kernel id of the stats map */
	struct fb_header *hdr;		/* mmap of the filter array, block 0 */
	struct fb_block *blocks;	/* the same mmap, as blocks */
	size_t map_bytes;		/* length of the mmap */
	/* Counting filters only (hdr->counter_bits != 0), else -1/NULL: */
	int cnt_fd;		       /* NAME/counters */
	struct fb_cnt_header *cnt_hdr; /* mmap of the counter array */
	__u8 *cnt;		       /* the counters, after its header */
	size_t cnt_bytes;	       /* length of that mmap */
	/* --confirm exact only, else -1: the outer maps, and the current
	 * generation's sets (hash of 5-tuples, LPM tries src and dst). */
	int exact_fd, lpm_fd;
	int set_fd[3];
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
	__u64 capacity;
	double fp_rate;
};

/* The bpffs directory that holds all filters. */
const char *fb_root(void);
/* Where the filter "default" is pinned for ip link: FB_IPROUTE_PIN_DIR, or
 * $FLOWBLOOM_IPROUTE_DIR (tests: squat.sh squats a private one). */
const char *fb_iproute_dir(void);
/* 0 if bpffs is mounted where we need it, else -1 with a message printed. */
int fb_check_bpffs(void);
/* 0 if name is a valid filter name, else -1 with a message printed. */
int fb_check_name(const char *name);

/* All functions below print one error line themselves and return -1. */
int fb_filter_create(const char *name, const struct fb_create_opts *o);
int fb_filter_open(const char *name, struct fb_filter *f);
/* Open, then take the lock (op LOCK_SH, or LOCK_EX as fb_filter_lock()). */
int fb_filter_open_locked(const char *name, struct fb_filter *f, int op);
void fb_filter_close(struct fb_filter *f);
/* Works on broken filters too, and removes stale staging directories of
 * NAME (0 also when only those were there). */
int fb_filter_destroy(const char *name);
/* A new filter built aside (FB_STAGE_NEW NAME), opened and locked into f;
 * fill it, then fb_filter_publish() renames it to NAME in one step, or
 * fb_filter_abort() removes it. fb_filter_create() = both. */
int fb_filter_create_staged(const char *name, const struct fb_create_opts *o, struct fb_filter *f);
int fb_filter_publish(struct fb_filter *f);
void fb_filter_abort(struct fb_filter *f);
/* Stale staging directories of NAME: *what bit 0 an interrupted create or
 * import, bit 1 an interrupted destroy. */
int fb_filter_stale(const char *name, unsigned *what);
/* Remove them; returns how many. */
int fb_filter_clean_stale(const char *name);
/* Every stale staging directory of the root (entry names, '~' included),
 * sorted; *names is malloc'd. Returns the count. */
int fb_filter_list_stale(char ***names);

/* Half states an interrupted command can leave beside a working filter. */
struct fb_tree_state {
	bool stale_create;    /* ~NAME: a killed create or import */
	bool stale_destroy;   /* ~~NAME: a killed destroy */
	bool stale_counters;  /* the other generation's counters: a killed replace */
	bool stale_sets;      /* exact sets in the unused generation slot */
	bool iproute_missing; /* "default" without its ip-link pins */
};
/* Find them (call with the lock held); with repair, remove/re-pin them. */
int fb_filter_tree_check(struct fb_filter *f, bool repair, struct fb_tree_state *s);
/* Names of all filters, sorted; *names is malloc'd. Returns the count. */
int fb_filter_list(char ***names);

/* Exclusive lock against other writers of this filter (flock on its dir).
 * Once it holds the lock it re-reads which filter array is in use: a
 * `load --replace` may have switched arrays while it waited (f then
 * describes the new one; -1 if the filter was destroyed meanwhile). For a
 * counting filter it also rolls back a write a crashed writer left half
 * done (a note goes to stderr). */
int fb_filter_lock(struct fb_filter *f);
/* Just the flock (LOCK_SH or LOCK_EX) and the re-read, no recovery: for
 * `check` and `export`. */
int fb_filter_flock(struct fb_filter *f, int op);
void fb_filter_unlock(struct fb_filter *f);

/* Set a key's bits / ask whether all its bits are set. */
void fb_filter_set(struct fb_filter *f, const struct fb_key *key);
bool fb_filter_test(const struct fb_filter *f, const struct fb_key *key);
/* Add rules of any kind (plain or counting): bits, then the prefix
 * lengths they need, then kind flags. -1 if a prefix-length list would
 * exceed FB_MAX_LENGTHS (*bad: the first such rule); nothing changed then.
 * -2 if an exact set refused a rule (printed). Call with the lock held. */
int fb_filter_add_rules(struct fb_filter *f, const struct fb_key *keys, size_t n, size_t *bad);
/* Replace the filter's whole content with keys, in a new filter array of
 * nblocks blocks and k bits (and new counters for a counting filter), then
 * switch the data path to it in one step. -1: nothing changed (*bad as in
 * fb_filter_add_rules, or (size_t)-1). Call with the lock held. */
int fb_filter_replace(struct fb_filter *f, __u32 nblocks, __u8 k, const struct fb_key *keys,
		      size_t n, size_t *bad);
/* --confirm exact: raise (delta 1) or lower (-1) a rule's count in the
 * current exact sets; at 0 it leaves them. 0 ok, -1 error (printed). */
int fb_filter_exact_adjust(struct fb_filter *f, const struct fb_key *k, int delta);
/* --confirm exact: how many times a rule is in the exact sets. */
__u32 fb_filter_exact_count(const struct fb_filter *f, const struct fb_key *k);
/* Merge the lengths keys need into px; -1 with *bad as above. */
int fb_lengths_merge(struct fb_prefixes *px, const struct fb_key *keys, size_t n, size_t *bad);
/* enum fb_prefix_list of an address rule, -1 for a 5-tuple; its name. */
int fb_prefix_list_of(const struct fb_key *k);
const char *fb_prefix_list_name(int l);
/* fb_filter_set() for many keys, faster (prefetches ahead). */
void fb_filter_set_many(struct fb_filter *f, const struct fb_key *keys, size_t n);
/* What `query` answers: a 5-tuple or a prefix rule as fb_filter_test(); a
 * plain address (src/dst ADDR) as the data path would for a packet from or
 * to it, through every prefix length the filter holds. */
bool fb_filter_query(const struct fb_filter *f, const struct fb_key *k);
/* Bits set, out of m. */
__u64 fb_filter_popcount(const struct fb_filter *f);

/* Sum of the per-CPU statistics. */
int fb_filter_read_stats(const struct fb_filter *f, struct fb_stats *out);

/* Loaded programs using the filter, in any network namespace; the first's
 * id in *first_prog. */
int fb_filter_users(const struct fb_filter *f, __u32 *first_prog);
/* Devices the filter is attached to: calls cb for each (ifname, mode). */
typedef void (*fb_attach_cb)(const char *ifname, const char *mode, __u32 prog_id, void *ctx);
int fb_filter_attachments(const struct fb_filter *f, fb_attach_cb cb, void *ctx);

#endif
