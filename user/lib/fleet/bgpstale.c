// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Stale paths (bgp.h): held over a session restart until the peer's
 * End-of-RIB for the family, counted per peer and family, so that an
 * End-of-RIB looks at the table only while its peer and family have some
 * (a peer may repeat End-of-RIB as often as it likes).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/bgp.h"
#include "fleet/bgp_int.h"

struct fb_bgp_stale {
	struct fb_bgp_stale *next;
	size_t n;
	char *family;
	char peer[]; /* then family */
};

static struct fb_bgp_stale **stale_find(struct fb_bgp_stale *const *sp, const char *peer,
					const char *family)
{
	for (; *sp; sp = &(*sp)->next)
		if (!strcmp((*sp)->peer, peer) && !strcmp((*sp)->family, family))
			break;
	return (struct fb_bgp_stale **)sp;
}

void fb_bgp_mark_stale(struct fb_bgp *b, struct fb_bgp_path *p)
{
	struct fb_bgp_stale **sp = stale_find(&b->stale, p->peer, p->family), *s;
	size_t lp = strlen(p->peer) + 1, lf = strlen(p->family) + 1;

	if (p->stale)
		return;
	p->stale = true;
	b->stale_changed = true;
	if (!*sp) {
		if (!(s = calloc(1, sizeof(*s) + lp + lf))) {
			b->stale_lost = true;
			return;
		}
		memcpy(s->peer, p->peer, lp);
		s->family = s->peer + lp;
		memcpy(s->family, p->family, lf);
		*sp = s;
	}
	(*sp)->n++;
}

/* Path p is stale no longer (announced again, or ended). */
void fb_bgp_stale_clear(struct fb_bgp *b, struct fb_bgp_path *p)
{
	struct fb_bgp_stale **sp, *s;

	if (!p->stale)
		return;
	p->stale = false;
	b->stale_changed = true;
	sp = stale_find(&b->stale, p->peer, p->family);
	if ((s = *sp) && !--s->n) {
		*sp = s->next;
		free(s);
	}
}

size_t fb_bgp_stale_count(const struct fb_bgp *b, const char *peer, const char *family)
{
	struct fb_bgp_stale *s = *stale_find(&b->stale, peer, family);

	return b->stale_lost ? SIZE_MAX : s ? s->n : 0;
}

void fb_bgp_stale_free(struct fb_bgp *b)
{
	while (b->stale) {
		struct fb_bgp_stale *s = b->stale;

		b->stale = s->next;
		free(s);
	}
	b->stale_lost = false;
}
