// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rule life of a trace record (explain.h): the program says where the
 * deciding rule was (bpf/trace.bpf.h: the filter's own chunks, or a
 * generation's slot range); that range's generation header says when it
 * ends.
 */
#include <stdio.h>
#include "explain.h"
#include "flowbloom/ttl.h"
#include "output.h"
#include "store/gens.h"
#include "store/gens_slot.h"
#include "store/jiffies.h"
#include "report.h"

void fb_life_of(const struct fb_store *f, const struct fb_trace *tr, struct fb_life *l)
{
	struct fb_header h;
	unsigned set;
	bool quiet;
	int r, i;

	*l = (struct fb_life){ 0 };
	if (!tr->kind) {
		l->what = FB_LIFE_NONE;
		return;
	}
	if (tr->gen == FB_TRACE_OWN || tr->gen == FB_TRACE_UNKNOWN) {
		l->what = tr->gen == FB_TRACE_OWN ? FB_LIFE_PERMANENT : FB_LIFE_UNKNOWN;
		return;
	}
	l->what = FB_LIFE_TTL;
	l->g = (tr->gen - 2) % FB_GEN_SLOTS;
	/* The header of the generation in the record's slot range, read
	 * there in the outer map: not through f's head, which a replace
	 * (without the lock, a reader's f may be an earlier filter) retires
	 * with its generations' ranges. A range emptied since the record: a
	 * replace carried the generation, the same g with the same end, to
	 * the other set's range, read then (and back, for a replace more).
	 * Neither read, or the data path's clock unread: its end not known
	 * (never "ended", nor an error inside the answers). */
	set = (tr->gen - 2) / FB_GEN_SLOTS;
	quiet = fb_report_quiet;
	fb_report_quiet = true;
	r = fb_jiffies_init() ? -2 : -1;
	for (i = 0; r == -1 && i < 4; i++)
		r = fb_gslot_header(f, fb_gen_range(set ^ (i & 1), l->g), &h);
	fb_report_quiet = quiet;
	if (!r && h.expires) {
		l->ends_known = true;
		l->ends_in = fb_jiffies_secs(h.expires);
	}
}

void fb_life_text(const struct fb_life *l, char *buf, size_t n)
{
	switch (l->what) {
	case FB_LIFE_NONE:
		snprintf(buf, n, "%s", "");
		break;
	case FB_LIFE_PERMANENT:
		snprintf(buf, n, " (permanent)");
		break;
	case FB_LIFE_UNKNOWN:
		snprintf(buf, n, " (permanent or lifetime: the filter changed during the run)");
		break;
	case FB_LIFE_TTL:
		if (!l->ends_known)
			snprintf(buf, n, " (lifetime, generation %u)", l->g);
		else if (l->ends_in > 0)
			snprintf(buf, n, " (lifetime, generation %u, ends in %.1f s)", l->g,
				 l->ends_in);
		else
			snprintf(buf, n, " (lifetime, generation %u, ended %.1f s ago)", l->g,
				 -l->ends_in);
		break;
	}
}

void fb_life_json(const struct fb_life *l)
{
	if (l->what != FB_LIFE_PERMANENT && l->what != FB_LIFE_TTL) {
		jw_null("lifetime");
		return;
	}
	jw_bool("lifetime", l->what == FB_LIFE_TTL);
	if (l->what != FB_LIFE_TTL)
		return;
	jw_u64("generation", l->g);
	if (l->ends_known)
		jw_double("ends_in", l->ends_in);
	else
		jw_null("ends_in");
}
