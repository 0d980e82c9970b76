/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Cuckoo filter geometry (Fan, Andersen, Kaminsky, Mitzenmacher 2014),
 * compiled into the XDP program and the library (user/lib/types/
 * cuckoo_table.c), so both sides pick the same buckets and fingerprints by
 * construction; the probe itself, written once for both, is
 * include/flowbloom/probe.h.
 *
 * The table is an array of 64-byte blocks from g->first_block on, holding
 * nbuckets buckets (a power of two) of FB_CUCKOO_SLOTS fingerprint slots.
 * A slot is 8, 16 or 32 bits (12-bit fingerprints live in 16-bit slots): a
 * slot is always written with one naturally aligned store of its width, so
 * the data path never sees half a fingerprint. A bucket is 4, 8 or 16 bytes
 * and never straddles a cache line; fingerprint 0 means "empty".
 *
 * From the flow key's 64-bit keyed hash h (include/flowbloom/hash.h):
 *  - i1 = the upper 32 bits reduced to [0, nbuckets) by multiply-shift,
 *  - fp = the lower fp_bits bits (0 mapped to 1),
 * two disjoint halves of a PRF output, so bucket and fingerprint are
 * independent as the analysis assumes. The alternate bucket is partial-key
 * cuckoo hashing i2 = i1 XOR (H(fp) mod nbuckets), H = murmur3's fmix64:
 * it needs only the fingerprint, so a stored fingerprint can be moved
 * without its key, and XOR makes i1 = i2 XOR H(fp) (an involution, which is
 * why nbuckets is a power of two). H needs no secret: fp already is one.
 *
 * Concurrency (one writer under the filter lock, XDP readers on other
 * CPUs): a relocation writes the moved fingerprint to its new slot before
 * the old slot is overwritten, and brackets the whole relocation path with
 * g->seq odd/even (a sequence lock). Ordering alone is not enough: a reader
 * may read the destination bucket before the move and the source after it.
 * So the probe reads seq before and after its two buckets and answers "may
 * be present" when a relocation overlapped it: a spurious match for a few
 * nanoseconds at worst, never a false negative. See docs/types.md.
 */
#ifndef FLOWBLOOM_CUCKOO_H
#define FLOWBLOOM_CUCKOO_H

#include <linux/types.h>
#include "geometry.h"

#define FB_CUCKOO_SLOTS 4 /* b: slots per bucket */
/* Load factor a cuckoo filter is sized for (Fan et al.: ~95 % with b = 4). */
#define FB_CUCKOO_DESIGN_LOAD 0.95
#define FB_CUCKOO_MIN_BUCKETS 16 /* a whole number of 64-byte blocks */
#define FB_CUCKOO_MAX_BUCKETS (1U << 27)

/* Geometry, in the filter's header. Read by the data path (first_block,
 * nbuckets, fp_bits, seq); count is bookkeeping for user space. */
struct fb_cuckoo_geom {
	__u32 first_block; /* 64-byte block where bucket 0 starts */
	__u32 nbuckets;	   /* power of two, FB_CUCKOO_MIN_BUCKETS.. */
	__u8 fp_bits;	   /* 8, 12, 16 or 32 */
	__u8 pad[3];
	__u32 seq;   /* odd while a relocation path is being written */
	__u64 count; /* fingerprints stored */
	/* User space only: the slot a chain's next store writes, as
	 * seq << 32 | (bucket * FB_CUCKOO_SLOTS + slot), stored before it.
	 * Inside a chain that slot holds the one fingerprint that is in two
	 * slots (copied there, or about to be overwritten after its copy),
	 * so a writer ending a chain a killed one left open clears it. */
	__u64 reloc;
};

_Static_assert(sizeof(struct fb_cuckoo_geom) == 32, "cuckoo geometry layout");

/* log2 of a bucket's bytes: 4 slots of 1, 2 or 4 bytes. */
static __always_inline __u32 fb_cuckoo_bucket_shift(__u32 fp_bits)
{
	return fp_bits <= 8 ? 2 : fp_bits <= 16 ? 3 : 4;
}

static __always_inline __u32 fb_cuckoo_slot_bytes(__u32 fp_bits)
{
	return fp_bits <= 8 ? 1 : fp_bits <= 16 ? 2 : 4;
}

static __always_inline __u32 fb_cuckoo_fp(__u64 h, __u32 fp_bits)
{
	__u32 fp = (__u32)h;

	if (fp_bits < 32)
		fp &= (1U << fp_bits) - 1;
	return fp ? fp : 1;
}

static __always_inline __u32 fb_cuckoo_index(__u64 h, __u32 nbuckets)
{
	return fb_reduce32((__u32)(h >> 32), nbuckets);
}

static __always_inline __u32 fb_cuckoo_alt(__u32 i, __u32 fp, __u32 nbuckets)
{
	return i ^ ((__u32)(fb_fmix64(fp) >> 32) & (nbuckets - 1));
}

/* Where bucket i lives: its 64-byte block, and its byte offset inside. */
static __always_inline __u32 fb_cuckoo_block(const struct fb_cuckoo_geom *g, __u32 i)
{
	return g->first_block + (__u32)(((__u64)i << fb_cuckoo_bucket_shift(g->fp_bits)) >> 6);
}

static __always_inline __u32 fb_cuckoo_offset(__u32 i, __u32 fp_bits)
{
	return (i << fb_cuckoo_bucket_shift(fp_bits)) & 63;
}

/* Does the bucket at byte offset off of blk hold fp? Each bucket is read
 * with whole-bucket loads (one or two 64-bit words) through volatile, so
 * the compiler keeps the probe's loads in program order (see seq above),
 * and each fingerprint is seen whole. The offset is masked with a constant
 * per width, which is also what tells the verifier the read stays inside
 * the 64-byte value. */
static __always_inline int fb_cuckoo_bucket_has(const void *blk, __u32 off, __u32 fp_bits, __u32 fp)
{
	const volatile unsigned char *b = (const volatile unsigned char *)blk;
	int j, hit = 0;

	if (fp_bits <= 8) {
		__u32 v = *(const volatile __u32 *)(b + (off & 60));

		for (j = 0; j < 4; j++)
			hit |= ((v >> (8 * j)) & 0xff) == fp;
	} else if (fp_bits <= 16) {
		__u64 v = *(const volatile __u64 *)(b + (off & 56));

		for (j = 0; j < 4; j++)
			hit |= ((v >> (16 * j)) & 0xffff) == fp;
	} else {
		__u64 v0 = *(const volatile __u64 *)(b + (off & 48));
		__u64 v1 = *(const volatile __u64 *)(b + (off & 48) + 8);

		hit = (__u32)v0 == fp || (__u32)(v0 >> 32) == fp || (__u32)v1 == fp ||
		      (__u32)(v1 >> 32) == fp;
	}
	return hit;
}

static __always_inline __u32 fb_cuckoo_read_seq(const struct fb_cuckoo_geom *g)
{
	return *(const volatile __u32 *)&g->seq;
}

#endif
