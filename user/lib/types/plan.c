// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Write plans: an overlay of copied buckets and an ordered store log (see
 * plan.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "types/plan.h"

void fb_plan_init(struct fb_plan *p, void *live, unsigned bucket_shift)
{
	memset(p, 0, sizeof(*p));
	p->live = live;
	p->bucket_shift = bucket_shift;
}

void fb_plan_free(struct fb_plan *p)
{
	free(p->ids);
	free(p->data);
	free(p->log);
	memset(p, 0, sizeof(*p));
}

static size_t slot_of(const struct fb_plan *p, __u64 id)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 17) & (p->cap - 1);
}

/* Overlay slot of bucket id, or cap if the plan never wrote it. */
static size_t find(const struct fb_plan *p, __u64 id)
{
	size_t i;

	if (!p->cap)
		return 0; /* == cap: not found */
	for (i = slot_of(p, id); p->ids[i]; i = (i + 1) & (p->cap - 1))
		if (p->ids[i] == id + 1)
			return i;
	return p->cap;
}

static int grow(struct fb_plan *p)
{
	size_t bb = (size_t)1 << p->bucket_shift, cap = p->cap ? p->cap * 2 : 64, i;
	__u64 *ids = calloc(cap, sizeof(*ids));
	unsigned char *data = malloc(cap * bb);
	struct fb_plan old = *p;

	if (!ids || !data) {
		free(ids);
		free(data);
		return -1;
	}
	p->ids = ids;
	p->data = data;
	p->cap = cap;
	for (i = 0; i < old.cap; i++) {
		size_t j;

		if (!old.ids[i])
			continue;
		for (j = slot_of(p, old.ids[i] - 1); ids[j]; j = (j + 1) & (cap - 1))
			;
		ids[j] = old.ids[i];
		memcpy(data + j * bb, old.data + i * bb, bb);
	}
	free(old.ids);
	free(old.data);
	return 0;
}

const void *fb_plan_bucket(struct fb_plan *p, __u64 off)
{
	__u64 id = off >> p->bucket_shift;
	size_t i = find(p, id);

	if (i < p->cap)
		return p->data + (i << p->bucket_shift);
	return p->live + (id << p->bucket_shift);
}

static int log_store(struct fb_plan *p, void *addr, unsigned width, __u64 val)
{
	if ((__u64)(uintptr_t)addr >> 62)
		return -1; /* not a user-space address: never */
	if (p->nlog == p->caplog) {
		size_t n = p->caplog ? p->caplog * 2 : 64;
		struct fb_plan_store *l = realloc(p->log, n * sizeof(*l));

		if (!l)
			return -1;
		p->log = l;
		p->caplog = n;
	}
	p->log[p->nlog++] = (struct fb_plan_store){
		.at = (__u64)(uintptr_t)addr | (__u64)(width == 1   ? 0
						       : width == 2 ? 1
						       : width == 4 ? 2
								    : 3)
						       << 62,
		.val = val,
	};
	return 0;
}

static void put(void *dst, unsigned width, __u64 val)
{
	__u8 v8 = val;
	__u16 v16 = val;
	__u32 v32 = val;

	if (width == 1)
		memcpy(dst, &v8, 1);
	else if (width == 2)
		memcpy(dst, &v16, 2);
	else if (width == 4)
		memcpy(dst, &v32, 4);
	else
		memcpy(dst, &val, 8);
}

int fb_plan_set(struct fb_plan *p, __u64 off, unsigned width, __u64 val)
{
	size_t bb = (size_t)1 << p->bucket_shift;
	__u64 id = off >> p->bucket_shift;
	size_t i = find(p, id);

	if (i >= p->cap) {
		if ((p->used + 1) * 2 > p->cap && grow(p))
			return -1;
		for (i = slot_of(p, id); p->ids[i]; i = (i + 1) & (p->cap - 1))
			;
		p->ids[i] = id + 1;
		memcpy(p->data + i * bb, p->live + (id << p->bucket_shift), bb);
		p->used++;
	}
	put(p->data + i * bb + (off & (bb - 1)), width, val);
	return log_store(p, p->live + off, width, val);
}

int fb_plan_set_ext(struct fb_plan *p, void *addr, unsigned width, __u64 val)
{
	return log_store(p, addr, width, val);
}

size_t fb_plan_slot(const struct fb_plan *p, __u64 off)
{
	return find(p, off >> p->bucket_shift);
}

void fb_plan_apply_paced(struct fb_plan *p, unsigned pause_us)
{
	fb_plan_apply_range(p, 0, p->nlog, pause_us);
}

void fb_plan_apply_range(struct fb_plan *p, size_t from, size_t to, unsigned pause_us)
{
	size_t i;

	for (i = from; i < to; i++) {
		struct fb_plan_store *s = &p->log[i];
		void *addr = fb_plan_store_addr(s);

		switch (s->at >> 62) {
		case 0:
			__atomic_store_n((__u8 *)addr, (__u8)s->val, __ATOMIC_RELEASE);
			break;
		case 1:
			__atomic_store_n((__u16 *)addr, (__u16)s->val, __ATOMIC_RELEASE);
			break;
		case 2:
			__atomic_store_n((__u32 *)addr, (__u32)s->val, __ATOMIC_RELEASE);
			break;
		default:
			__atomic_store_n((__u64 *)addr, s->val, __ATOMIC_RELEASE);
			break;
		}
		if (pause_us)
			usleep(pause_us);
	}
}

void fb_plan_apply(struct fb_plan *p)
{
	fb_plan_apply_paced(p, 0);
}

unsigned fb_plan_test_pace(void)
{
	static int us = -1;

	if (us < 0) {
		const char *e = getenv("FLOWBLOOM_TEST_RELOC_DELAY_US");

		us = e ? atoi(e) : 0;
		if (us < 0 || us > 1000000)
			us = 0;
	}
	return (unsigned)us;
}
