/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Filter types behind one interface (issue 11): what `create`, `add`,
 * `del`, `query`, `count`, `load`, `info`, `check`, `export` and `import`
 * call for a filter whose header says type cuckoo, dleft or scalable
 * (ftype.c). Each operation dispatches to the type's own room
 * (user/lib/types/cuckoo_table.c, dleft_table.c, scalable_table.c); Bloom filters (type 0) keep
 * their own paths (bits.c, counting.c). The geometry lives in the blocks
 * after the header (include/flowbloom/geometry.h, FB_TYPE_GEOM_BLOCK).
 * Callers hold the filter's lock for the writes.
 */
#ifndef FLOWBLOOM_USER_FTYPE_H
#define FLOWBLOOM_USER_FTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flowbloom/cuckoo.h"
#include "flowbloom/dleft.h"
#include "flowbloom/scalable.h"
#include "types/plan.h"
#include "store/store.h"

/* "bloom", "cuckoo", "dleft", "scalable"; and back (-1: unknown). */
const char *fb_ftype_name(unsigned type);

/* A new typed filter's geometry blocks for capacity flows at rate p
 * (geom: fb_type_geom_blocks(type) blocks, zeroed first) and the blocks
 * after the header the array needs (*nblocks). 0 ok; -1 impossible. */
int fb_ftype_size(unsigned type, double capacity, double p, struct fb_block *geom, __u32 *nblocks);
/* Is the geometry in f usable with f's array? 0 ok; -1 with why. Run on
 * every header read from outside (import, check). */
int fb_ftype_check(const struct fb_header *hdr, const struct fb_block *blocks, char *why,
		   size_t len);

/* A cuckoo filter whose relocation sequence is odd (a writer was killed
 * inside a relocation chain: every probe answers maybe until it ends), and
 * ending it (under the lock). Add does it itself; check --repair too. */
bool fb_ftype_seq_odd(const struct fb_store *f);
void fb_ftype_seq_end(struct fb_store *f);

/* The type's probe on the mmap (the data path's twin). */
bool fb_ftype_test(const struct fb_store *f, const struct fb_key *key);
/* Copies stored: cuckoo slots holding the fingerprint in the flow's two
 * buckets, d-left's counter (3 = saturated), scalable 0/1. */
unsigned fb_ftype_count(const struct fb_store *f, const struct fb_key *key);

/*
 * Add n rules, all or nothing. 0 ok; -1 some rule cannot be placed
 * (err->bad, err->load: cuckoo full at that load factor, d-left all d
 * buckets full, scalable would need a 9th stage); -2 out of memory.
 * A scalable filter that needs a new stage beyond its array grows: a
 * larger array is made, the old content copied, and swapped in (one
 * update of the outer map, as `load --replace`), then the stage is added.
 */
int fb_ftype_add(struct fb_store *f, const struct fb_key *keys, size_t n, struct fb_batch_err *err);
/* Delete one copy of each, all or nothing. 0 ok; -1 some rule absent
 * (err->bad); -2 out of memory; -3 the type cannot delete (scalable). */
int fb_ftype_del(struct fb_store *f, const struct fb_key *keys, size_t n, struct fb_batch_err *err);

/* Items stored (from the table itself where it can say), the load factor
 * (cuckoo: slots, d-left: cells, scalable: flows / capacity of the stages),
 * and the rate expected now from the type's formula. */
__u64 fb_ftype_items(const struct fb_store *f);
double fb_ftype_load(const struct fb_store *f);
double fb_ftype_fpr(const struct fb_store *f);

#endif
