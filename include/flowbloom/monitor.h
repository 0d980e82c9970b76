/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Flow monitoring, shared by the XDP program (bpf/monitor.bpf.h) and the CLI
 * (user/lib/monitor/monmaps.c): the map value structs, the one keyed hash of a flow key
 * and how it becomes sketch cells, a top-talker bucket and seen-set bits.
 *
 * - Count-min sketch (Cormode and Muthukrishnan 2005): depth d rows of width
 *   w cells {packets, bytes}; d = ceil(ln(1 / delta)), w = e / eps rounded
 *   up to a power of two (a column is then one shift; the bound only gets
 *   tighter). A flow adds to one cell per row and its estimate is the
 *   smallest of them: never below the truth, and above truth + (e / w) N
 *   with probability at most e^-d (N: all packets, or all bytes, counted).
 *   Row i's column is the top bits of g_i = h1 + i * h2, h1 and h2 the
 *   halves of one 64-bit hash (Kirsch and Mitzenmacher 2006). Each CPU
 *   updates its own copy (a "plane") with plain adds; readers sum the
 *   planes: faster than atomic adds on one shared plane, on one core and
 *   much more on two (docs/design.md, Monitoring inside).
 * - Top talkers: a small per-CPU table of candidates, four ways per bucket
 *   (two kept by packets, two by bytes), fed from the estimate the sketch
 *   update just produced: a flow takes the way of the lighter resident when
 *   its estimate is larger. User space ranks the candidates of all CPUs by
 *   the whole sketch.
 * - New flows: a Bloom filter of 16-byte slots, each two 64-bit words, one
 *   per generation (the current and the previous aging period). A word is
 *   an 8-bit generation tag and 56 filter bits; a word whose tag is neither
 *   generation is stale, and the first flow of the current generation to
 *   land on it resets it (compare-and-swap). So aging needs no sweep and no
 *   user-space timer, and both generations of a slot share a cache line.
 *
 * The hash is NH (include/flowbloom/hash.h) under its own 128-bit random key,
 * drawn when the monitoring maps are created: a fifth of SipHash-1-3's cost
 * here, universal, but not a PRF (an attacker who watches the estimates can
 * learn about the key; the filter's own hash is unaffected). Its six key
 * words are SipHash-1-3 of their index under that key (fb_mon_nhk_words,
 * as FB_HASH_NHK's), derived once in user space into the program's
 * read-only data: independent and uniform, as NH's bound needs.
 */
#ifndef FLOWBLOOM_MONITOR_H
#define FLOWBLOOM_MONITOR_H

#include <linux/types.h>
#include "geometry.h"
#include "hash.h"
#include "key.h"

#define FB_MON_MAGIC 0x4e4f4d46 /* "FMON" little-endian */
/* The layout this build makes, whatever the flags: NH's key words are
 * SipHash-1-3 of the key (fb_mon_nhk_words). Earlier builds check the
 * version and no flag: they refuse these maps as another layout rather
 * than hash into them, or read them, under the linear words. */
#define FB_MON_VERSION 4
/* Layouts earlier builds made, still read (and fed, when an earlier
 * build's program still feeds them), under the linear key words
 * (fb_mon_nh1_words): 2, a sketch by flow (the seen-set's 16-bit tags);
 * 3, a sketch by address (FB_MON_BY_SRC or FB_MON_BY_DST), which builds
 * before it refused as another layout. */
#define FB_MON_VERSION_NH1 2
#define FB_MON_VERSION_BY_ADDR 3

/* What an attachment monitors (cfg_mon in bpf/monitor.bpf.h, config flags). */
#define FB_MON_SKETCH (1U << 0)	  /* count-min sketch and top-talker table */
#define FB_MON_NEWFLOWS (1U << 1) /* seen-set and new-flow events */
#define FB_MON_ATOMIC (1U << 2)	  /* one shared sketch plane, atomic adds */
#define FB_MON_ACCT (1U << 3)	  /* per-flow accounting table (flowacct.h) */
/* What the sketch and the top-talker table count (attach --sketch-by):
 * neither bit, flows (5-tuples); else the flow's source or destination
 * address alone (fb_mon_sketch_key()). The seen-set and the accounting
 * table count flows whatever these say. */
#define FB_MON_BY_SRC (1U << 4)
#define FB_MON_BY_DST (1U << 5)
#define FB_MON_BY_ADDR (FB_MON_BY_SRC | FB_MON_BY_DST)

#define FB_MON_MAX_DEPTH 8  /* delta >= e^-8 ~ 3.4e-4 */
#define FB_MON_MAX_SHIFT 20 /* width <= 2^20: eps >= 2.6e-6 */
#define FB_TOP_WAYS 4	    /* ways 0-1: by packets, 2-3: by bytes */
#define FB_TOP_SHIFT 10
#define FB_TOP_BUCKETS (1U << FB_TOP_SHIFT) /* per CPU */
#define FB_TOP_EVERY 16			    /* a flow is offered to the table once per 16 packets */
/* A generation word: 48 filter bits under a 16-bit tag, the generation
 * that wrote it modulo 2^16. A word last written 2^16 generations ago
 * looks current again (45 days at the default 60 s period; with an 8-bit
 * tag it was 4 h 16 min, when a flow back after that silence went
 * unreported). */
#define FB_SEEN_BITS 48
#define FB_SEEN_TAG_SHIFT 48
#define FB_SEEN_TAG_MASK (0xffffULL << FB_SEEN_TAG_SHIFT)
/* Bits per flow in a generation word. At 6 flows per 7 words (the size
 * fb_monitor_seen_size() gives), 4 bits miss 3.1e-4 of new flows per
 * generation, 8 would miss fewer but cost 30 more instructions a packet
 * (user/lib/monitor/monmaps.c, seen_fpr). */
#define FB_SEEN_K 4
#define FB_SEEN_HDR_SLOTS 1 /* slot 0: struct fb_seen_clock */
/* One unused slot at the end: the verifier's bound on a computed slot's
 * offset can be a few bytes looser than the truth, depending on how clang
 * arranges the arithmetic. */
#define FB_SEEN_PAD_SLOTS 1

/* Where the pins live, inside the filter's bpffs directory. */
#define FB_MON_DIR "monitor"

struct fb_mon_cell {
	__u64 packets;
	__u64 bytes;
};

/* One bucket of the top-talker table: the part the data path reads when a
 * flow is offered, exactly one cache line. The keys live in a second map,
 * written only when a way changes hands. */
struct fb_top_bucket {
	__u64 fp[FB_TOP_WAYS];	  /* the resident's 64-bit hash; 0: empty */
	__u64 score[FB_TOP_WAYS]; /* when last offered: fb_top_score() */
};

/* A way's score: the epoch of its flow's last offer (bits 40-63, of
 * FB_TOP_EPOCH_S seconds each, modulo 2^24) over its estimate on this CPU
 * then (bits 0-39, capped). Estimates count since the maps were made, so a
 * heavy flow gone silent would hold its way against every newcomer for
 * good: a resident not offered in the current epoch or the one before is
 * taken by any newcomer of its bucket. */
#define FB_TOP_EST_BITS 40
#define FB_TOP_EST_MAX ((1ULL << FB_TOP_EST_BITS) - 1)
#define FB_TOP_EPOCH_MASK ((1ULL << (64 - FB_TOP_EST_BITS)) - 1)
#define FB_TOP_EPOCH_S 4

static __always_inline __u64 fb_top_score(__u64 epoch, __u64 est)
{
	return (epoch & FB_TOP_EPOCH_MASK) << FB_TOP_EST_BITS |
	       (est < FB_TOP_EST_MAX ? est : FB_TOP_EST_MAX);
}

/* Was a way of this score last offered before the previous epoch? */
static __always_inline int fb_top_stale(__u64 score, __u64 epoch)
{
	return ((epoch - (score >> FB_TOP_EST_BITS)) & FB_TOP_EPOCH_MASK) > 1;
}

/* The per-CPU map values: one plane each (one lookup per packet). */
struct fb_top_plane {
	struct fb_top_bucket b[FB_TOP_BUCKETS];
};

struct fb_top_keys {
	struct fb_key k[FB_TOP_BUCKETS * FB_TOP_WAYS];
};

struct fb_seen_slot {
	__u64 w[2]; /* generation g lives in w[g & 1] */
};

/* Slot 0 of the seen map: the current generation, shared by every
 * attachment of the filter and readable by the CLI. */
struct fb_seen_clock {
	__u64 gen;	  /* jiffies / age_jiffies */
	__u64 next_jiffy; /* first jiffy of generation gen + 1 */
};

_Static_assert(sizeof(struct fb_seen_clock) == sizeof(struct fb_seen_slot), "clock is a slot");

/* A new flow, as the ring buffer delivers it. */
struct fb_mon_event {
	struct fb_key key;
	__u64 ts_ns;   /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 ifindex; /* where the packet came in */
	__u32 bytes;   /* length of the first packet */
	__u8 verdict;  /* XDP_* */
	__u8 pad[7];
};

enum fb_mon_stat {
	FB_MON_STAT_NEW = 0,   /* new flows detected (events + lost) */
	FB_MON_STAT_LOST,      /* events the ring buffer had no room for */
	FB_MON_STAT_REFRESHED, /* flows carried over from the previous period */
	FB_MON_STAT_NR,
	/* Not a counter: the data path's per-packet scratch (bpf/monitor.bpf.h). */
	FB_MON_STAT_PENDING = 7,
};

#define FB_MON_STAT_SLOTS 8
_Static_assert(FB_MON_STAT_NR <= FB_MON_STAT_SLOTS, "monitor stat slots");

struct fb_mon_stats {
	__u64 c[FB_MON_STAT_SLOTS];
};

/* The NH key words (include/flowbloom/hash.h): five per-position words
 * and the final one, derived once from the 128-bit key in user space
 * (fb_mon_words), never per packet. */
#define FB_MON_NH_WORDS 6

/* The monitoring maps' geometry, pinned beside them (user space only; the
 * program gets the same numbers as read-only data at load). */
struct fb_mon_config {
	__u32 magic;   /* FB_MON_MAGIC */
	__u32 version; /* FB_MON_VERSION */
	__u32 flags;   /* FB_MON_* */
	__u32 shift;   /* width = 2^shift */
	__u32 depth;
	__u32 planes;	  /* sketch planes: possible CPUs, or 1 with FB_MON_ATOMIC */
	__u32 top_planes; /* top-table planes: possible CPUs */
	__u32 seen_k;	  /* FB_SEEN_K */
	__u64 key[2];	  /* NH key */
	double epsilon;	  /* as asked; width = e / epsilon rounded up to a power of 2 */
	double delta;	  /* as asked; depth = ceil(ln(1 / delta)) */
	__u32 seen_slots;
	__u32 ring_bytes;
	__u64 seen_expect; /* flows per period the seen-set was sized for */
	__u64 age_ns;	   /* aging period */
	__u64 age_jiffies; /* the same in kernel ticks */
	__u64 created_ns;  /* CLOCK_REALTIME when the maps were created */
	/* FB_MON_ACCT: the accounting table's buckets per CPU (flowacct.h). */
	__u32 acct_buckets;
	__u32 acct_pad;
	__u64 reserved[3];
};

/* The words of maps this build makes (FB_MON_VERSION): SipHash-1-3 of
 * their index under the key, as FB_HASH_NHK's five (fb_nhk_word), and a
 * sixth for the final xor. */
static __always_inline void fb_mon_nhk_words(const __u64 key[2], __u64 kw[FB_MON_NH_WORDS])
{
	int i;

	for (i = 0; i < FB_MON_NH_WORDS; i++)
		kw[i] = fb_nhk_word(key, i);
}

/* The words of earlier builds' maps (FB_MON_VERSION_NH1,
 * FB_MON_VERSION_BY_ADDR): linear in the key, as FB_HASH_NH's, which
 * voids NH's bound (hash.h). Kept so that maps an earlier build's program
 * still feeds are read, and fed, with the words they were made with. */
static __always_inline void fb_mon_nh1_words(const __u64 key[2], __u64 kw[FB_MON_NH_WORDS])
{
	int i;

	for (i = 0; i < 5; i++)
		kw[i] = fb_nh_key_word(key, i);
	kw[5] = key[1];
}

/* The words of maps whose config is c: the derivation they were made
 * with. The loader puts them in the program's read-only data, readers
 * hash with them (user/lib/monitor/monmaps.c, fb_monitor_open). */
static inline void fb_mon_words(const struct fb_mon_config *c, __u64 kw[FB_MON_NH_WORDS])
{
	if (c->version == FB_MON_VERSION_NH1 || c->version == FB_MON_VERSION_BY_ADDR)
		fb_mon_nh1_words(c->key, kw);
	else
		fb_mon_nhk_words(c->key, kw);
}

/* NH over a flow key with its six key words: with fb_mon_nh1_words,
 * fb_nh() of hash.h. */
static __always_inline __u64 fb_mon_hash(const struct fb_key *key, const __u64 kw[FB_MON_NH_WORDS])
{
	__u64 sum = 0, m;
	int i;

	for (i = 0; i < 5; i++) {
		m = fb_le64(key->w[i]);
		sum += fb_nh_step(m, kw[i]);
	}
	return fb_fmix64(sum ^ kw[5]);
}

/*
 * The key the sketch and the top-talker table count a packet under, for
 * a sketch by address (flags & FB_MON_BY_ADDR): the family and one
 * address of the flow key, every other field zero (the data path hashes
 * this with fb_mon_hash(); readers estimate an address by the same key).
 * A sketch by flow counts the flow key itself.
 */
static __always_inline void fb_mon_sketch_key(const struct fb_key *key, __u32 flags,
					      struct fb_key *out)
{
	int src = !(flags & FB_MON_BY_DST);

	out->w[0] = src ? key->w[0] : 0;
	out->w[1] = src ? key->w[1] : 0;
	out->w[2] = src ? 0 : key->w[2];
	out->w[3] = src ? 0 : key->w[3];
	out->w[4] = fb_key_word_family(key->w[4]);
}

/*
 * Column of row i (0 <= result < 2^shift): the top bits of
 * g_i = h1 + i * h2 mod 2^32. The data path keeps g_i in the upper half of
 * a 64-bit register, so a row costs one add and one shift; power-of-two
 * widths (e / eps rounded up, never less accurate) make the shift possible.
 */
static __always_inline __u32 fb_mon_col(__u64 h, __u32 i, __u32 shift)
{
	__u32 h1 = (__u32)h, h2 = (__u32)(h >> 32) | 1;

	return (h1 + i * h2) >> (32 - shift);
}

static __always_inline __u32 fb_top_index(__u64 h)
{
	return (__u32)(h >> 20) & (FB_TOP_BUCKETS - 1);
}

static __always_inline __u32 fb_seen_index(__u64 h, __u32 slots)
{
	return FB_SEEN_HDR_SLOTS + fb_reduce32((__u32)(h >> 32), slots - FB_SEEN_HDR_SLOTS);
}

/* The flow's FB_SEEN_K bits among the 48 of a generation word: the
 * split-block salts (geometry.h) give well-spread 32-bit products, and a
 * multiply-shift maps each to [0, 48). */
static __always_inline __u64 fb_seen_mask(__u64 h)
{
	__u32 lo = (__u32)h;
	__u64 mask = 0;
	int i;

	for (i = 0; i < FB_SEEN_K; i++)
		mask |= 1ULL << fb_reduce32(lo * fb_salt(i), FB_SEEN_BITS);
	return mask;
}

static __always_inline __u64 fb_seen_tag(__u64 gen)
{
	return (gen << FB_SEEN_TAG_SHIFT) & FB_SEEN_TAG_MASK;
}

#endif
