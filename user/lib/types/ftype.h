/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Filter types behind one interface: one table of operations per type
 * (struct fb_ftype_ops, ftype.c), what `create`, `add`, `del`, `query`,
 * `count`, `load`, `info`, `check`, `export` and `import` call, so no
 * caller branches on a type. The table operations of cuckoo, dleft and
 * scalable filters dispatch to the type's own room
 * (user/lib/types/cuckoo_table.c, dleft_table.c, scalable_table.c); a
 * Bloom filter's entry has no table operations (its bits and counters
 * have their own paths, bits.c and counting.c) and its flags say what it
 * takes. The geometry lives in the blocks after the header
 * (include/flowbloom/geometry.h, FB_TYPE_GEOM_BLOCK). Callers hold the
 * filter's lock for the writes.
 */
#ifndef FLOWBLOOM_USER_FTYPE_H
#define FLOWBLOOM_USER_FTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/cuckoo.h"
#include "flowbloom/dleft.h"
#include "flowbloom/scalable.h"
#include "types/batchlog.h"
#include "types/plan.h"
#include "store/store.h"

/* What a type is and takes (struct fb_ftype_ops.flags). */
enum {
	FB_FTYPE_BY_TYPE = 1 << 0,  /* chosen by create --type NAME */
	FB_FTYPE_TABLE = 1 << 1,    /* a table of items (the operations below), not Bloom bits */
	FB_FTYPE_LAYOUT = 1 << 2,   /* takes --layout */
	FB_FTYPE_LAYOUTS = 1 << 3,  /* ... of either kind (else blocked only) */
	FB_FTYPE_COUNTING = 1 << 4, /* takes --counting */
	FB_FTYPE_BITS = 1 << 5,	    /* may be sized by --bits and --hashes */
	FB_FTYPE_DELETES = 1 << 6,  /* del removes one stored copy */
	FB_FTYPE_DEL_ASKS = 1 << 7, /* ... which a look-alike could be: del wants
				     * --confirm exact or --force */
	FB_FTYPE_GROWS = 1 << 8,    /* grows by stages as flows arrive */
};

/* Where a type's description goes (info): the CLI prints member() calls
 * as JSON and line() calls as text, one or the other. */
struct fb_ftype_out {
	void (*u64)(void *ctx, const char *key, __u64 v);
	void (*dbl)(void *ctx, const char *key, double v);
	void (*list)(void *ctx, const char *key, bool open); /* an array */
	void (*item)(void *ctx, bool open);		     /* an object in it */
	void (*line)(void *ctx, const char *text);	     /* one text line */
	void *ctx;
};

struct fb_ftype_ops {
	const char *name;   /* as create --type and info say it */
	unsigned flags;	    /* FB_FTYPE_* */
	unsigned count_max; /* count's saturated value, which stays (0: none) */
	/* The rest: FB_FTYPE_TABLE types only, as the fb_ftype_* calls below
	 * say. geom: the type's geometry blocks. */
	int (*size)(double capacity, double p, struct fb_block *geom, __u32 first, __u64 *end);
	int (*check)(const void *geom, __u64 avail, char *why, size_t len);
	unsigned (*count)(const struct fb_store *f, __u64 h);
	int (*add)(struct fb_store *f, const __u64 *h, size_t n, struct fb_batch_err *err,
		   const struct fb_batch_ready *rd);
	int (*del)(struct fb_store *f, const __u64 *h, size_t n, struct fb_batch_err *err);
	__u64 (*items)(const struct fb_store *f);
	double (*load)(const struct fb_store *f);
	double (*fpr)(const struct fb_store *f);
	/* info's lines and members; create's one-line geometry. */
	void (*describe)(const struct fb_store *f, const struct fb_ftype_out *out);
	void (*geometry)(const struct fb_block *geom, char *buf, size_t len);
	/* A write a killed writer left open (probes answer maybe until it
	 * ends), and ending it; NULL: the type has none. */
	bool (*interrupted)(const struct fb_store *f);
	void (*finish)(struct fb_store *f);
	/* A count the table keeps of itself that disagrees with the table
	 * (true), set right with repair; NULL: the type keeps none. */
	bool (*recount)(struct fb_store *f, bool repair);
};

/* Give the store the types' checks (store.h, struct fb_store_types): done
 * before main by any program that links ftype.c or counting.c. */
void fb_ftype_register(void);

/* The operations of type (enum fb_type); NULL for an unknown type. */
const struct fb_ftype_ops *fb_ftype(unsigned type);
/* The type called name ("bloom", "cuckoo", "dleft", "scalable"): its enum
 * fb_type, or -1. */
int fb_ftype_by_name(const char *name);
/* "bloom", "cuckoo", "dleft", "scalable" ("?" if unknown). */
const char *fb_ftype_name(unsigned type);
/* Names of the types create --type offers, NULL-terminated, and their
 * enum fb_type values, for the CLI's option parser. */
extern const char *const fb_ftype_create_names[];
extern const int fb_ftype_create_values[];

/* The rate f's formula expects now, per probe: the type's own, or the
 * Bloom layout's for its flows. */
double fb_ftype_fpr_now(const struct fb_store *f);
/* The geometry for n flows at rate p per probe in f's type and layout
 * (load --replace re-sizes a filter sized by capacity): *nblocks and *k
 * for a Bloom filter, *nblocks and geom for a table. 0, or -1 when no
 * filter of that size can be made. */
int fb_ftype_resize(const struct fb_store *f, double n, double p, __u32 *nblocks, __u8 *k,
		    struct fb_block *geom);

/* What the type of f describes of itself (info); nothing for Bloom. */
void fb_ftype_describe(const struct fb_store *f, const struct fb_ftype_out *out);
/* A new filter's geometry in a line (create), from its geometry blocks. */
void fb_ftype_geometry(unsigned type, const struct fb_block *geom, char *buf, size_t len);

/* A new typed filter's geometry blocks for capacity flows at rate p
 * (geom: fb_type_geom_blocks(type) blocks, zeroed first) and the blocks
 * after the header the array needs (*nblocks). 0 ok; -1 impossible. */
int fb_ftype_size(unsigned type, double capacity, double p, struct fb_block *geom, __u32 *nblocks);
/* Is the geometry in f usable with f's array? 0 ok; -1 with why. Run on
 * every header read from outside (import, check). */
int fb_ftype_check(const struct fb_header *hdr, const struct fb_block *blocks, char *why,
		   size_t len);

/* A write a killed writer left open in the type's table (a cuckoo
 * relocation chain: every probe answers maybe until it ends), and ending
 * it (under the lock): the lock's recovery does it, after rolling back
 * the batch a chain is in (batchlog.h); check --repair too. */
bool fb_ftype_seq_odd(const struct fb_store *f);
void fb_ftype_seq_end(struct fb_store *f);
/* The type's own count of its items disagrees with the table (check);
 * with repair it is set right. */
bool fb_ftype_recount(struct fb_store *f, bool repair);

/* Copies stored: cuckoo slots holding the fingerprint in the flow's two
 * buckets, d-left's counter (3 = saturated), scalable 0/1. */
unsigned fb_ftype_count(const struct fb_store *f, const struct fb_key *key);
/* The copies of key a filter that counts holds (f: its store, or a
 * generation's view): a table type's count, else its counters' least.
 * Shaped as fb_prefixes_held_expanded()'s held(). */
unsigned fb_ftype_held(const struct fb_key *key, void *f);
/* Why keys[bad] of a batch did not fit (err -1 of fb_ftype_add()): the
 * table full at f->refused_load, or, for a cuckoo filter, more copies of
 * the flow than its two buckets hold (in the table and the batch before
 * it). */
void fb_ftype_full_why(const struct fb_store *f, const struct fb_key *keys, size_t bad, char *buf,
		       size_t len);

/*
 * Add n rules, all or nothing (cuckoo and d-left also across a kill of
 * the writer: batchlog.h), and count them in the header's nflows. 0 ok;
 * -1 some rule cannot be placed (err->bad, err->load: cuckoo full at that
 * load factor, d-left all d buckets full, scalable would need a 9th
 * stage); -2 out of memory; -4 failed, reported. A scalable filter that
 * needs a new stage beyond its array grows: zeroed chunks are appended
 * to its array, then the stage is added.
 */
int fb_ftype_add(struct fb_store *f, const struct fb_key *keys, size_t n, struct fb_batch_err *err);
/* The same, with rd run once the batch fits: before the table changes
 * (cuckoo, d-left), after its bits (scalable). */
int fb_ftype_add_ready(struct fb_store *f, const struct fb_key *keys, size_t n,
		       struct fb_batch_err *err, const struct fb_batch_ready *rd);
/* Delete one copy of each, all or nothing, across a kill too, nflows
 * lowered. 0 ok; -1 some rule absent (err->bad); -2 out of memory; -3 the
 * type cannot delete (scalable); -4 failed, reported. */
int fb_ftype_del(struct fb_store *f, const struct fb_key *keys, size_t n, struct fb_batch_err *err);

/* Items stored (from the table itself where it can say), the load factor
 * (cuckoo: slots, d-left: cells, scalable: flows / capacity of the stages),
 * and the rate expected now from the type's formula. */
__u64 fb_ftype_items(const struct fb_store *f);
double fb_ftype_load(const struct fb_store *f);
double fb_ftype_fpr(const struct fb_store *f);

#endif
