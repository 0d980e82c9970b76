// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `info`'s generations of rules with a lifetime (info_gens.h). */
#include <math.h>
#include <stdio.h>
#include "info_gens.h"
#include "output.h"
#include "report.h"
#include "rules/lifetime.h"
#include "store/jiffies.h"
#include "types/bits.h"
#include "types/sizing.h"

/* Generations of rules with a lifetime: expiry, flows, fill, and what a
 * packet meets with them, read before the rest of info (gens_read). */

static int gens_fig(struct fb_store *f, void *arg)
{
	struct fb_gens_fig *g = arg;
	int i;

	g->n = g->live = 0;
	g->clock = true;
	if (!f->hdr->gens)
		return 0;
	g->clock = !fb_jiffies_init();
	g->n = fb_gens_list(f, g->gl);
	for (i = 0; i < g->n; i++) {
		struct fb_store gs;

		g->fill[i] = -1;
		if (g->gl[i].nblocks && !fb_gen_open(f, g->gl[i].g, &gs)) {
			g->fill[i] = (double)fb_bits_popcount(&gs) / fb_header_mbits(gs.hdr);
			fb_gen_close(&gs);
		}
	}
	if (g->n > 0)
		g->live = fb_gens_packet(f, &g->probes, &g->rate);
	return g->n;
}

/* info reads without the lock: a replace (load --replace, merge, fold)
 * switches the filter and retires the generations its head names, so they
 * are read, and f mapped again, until f is the filter in use after them
 * (fb_gens_read), and f, mapped then, is what the rest of info reads: one
 * content. A generation a writer reclaims between the list and its opening
 * (guard, bgp --ttl) is a race of no consequence: its fill reads -1, and
 * the figures with the generations are left out. Quiet: the generations
 * not read (never shown as none), or the data path's clock (their ends
 * then not known, never "ended"), are said after the rest (inside the
 * output, it cut -j's object in two), their error in why. */
void fb_info_gens_read(struct fb_store *f, struct fb_gens_fig *g, char *why, size_t len)
{
	bool quiet = fb_report_quiet;

	fb_report_quiet = true;
	fb_report_last[0] = 0;
	g->n = fb_gens_read(f, gens_fig, NULL, g);
	fb_report_quiet = quiet;
	if (g->n < 0 || !g->clock)
		snprintf(why, len, "%s",
			 *fb_report_last ? fb_report_last : "cannot read its generations");
}

/* -1 if the generations or the clock could not be read (fb_info_gens_read()). */
int fb_info_gens(const struct fb_store *f, const struct fb_gens_fig *g)
{
	bool clock = g->clock;
	int n = g->n, i;

	if (n < 0) {
		if (fb_json)
			jw_null("generations");
		return -1;
	}

	if (fb_json)
		jw_arr_open("generations");
	else if (n)
		printf("  rules with a lifetime: %d generation%s (each ends within 1/%d of its "
		       "rules' lifetime after them)\n",
		       n, n == 1 ? "" : "s", FB_GEN_DIV);
	for (i = 0; i < n; i++) {
		const struct fb_gen *gl = &g->gl[i];
		double fill = g->fill[i], cap = fb_gens_capacity(f->hdr, gl);

		if (fb_json) {
			jw_obj_open(NULL);
			jw_u64("generation", gl->g);
			if (clock) {
				jw_double("ends_in", gl->secs);
				jw_bool("expired", gl->secs <= 0);
			} else {
				jw_null("ends_in");
				jw_null("expired");
			}
			jw_u64("flows", gl->nflows);
			jw_u64("bits", (__u64)gl->nblocks * FB_BLOCK_BITS);
			jw_u64("hashes", gl->k);
			if (isfinite(cap))
				jw_u64("capacity", (__u64)cap);
			else
				jw_null("capacity");
			jw_double("fill_ratio", fill);
			jw_obj_close();
		} else if (gl->secs > 0 || !clock) {
			if (clock)
				printf("    generation %u: ends in %.3f s, flows %llu", gl->g,
				       gl->secs, (unsigned long long)gl->nflows);
			else
				printf("    generation %u: end not known (the kernel's clock "
				       "unread), flows %llu",
				       gl->g, (unsigned long long)gl->nflows);
			if (isfinite(cap))
				printf(" of %.0f", cap);
			printf(", %llu bits, fill ratio %.6f\n",
			       (unsigned long long)gl->nblocks * FB_BLOCK_BITS, fill);
		} else {
			printf("    generation %u: ended %.3f s ago (reclaimed by the next write), "
			       "flows %llu\n",
			       gl->g, -gl->secs, (unsigned long long)gl->nflows);
		}
	}
	if (fb_json)
		jw_arr_close();
	/* What a packet meets with them, as `load` reports it; the figures
	 * above are the permanent rules' alone. */
	if (n && g->live > 0) {
		if (fb_json) {
			jw_obj_open("with_generations");
			jw_u64("live_generations", g->live);
			jw_u64("probes_per_packet", g->probes);
			jw_double("fp_rate_per_packet", g->rate);
			jw_obj_close();
		} else {
			printf("  with its %d live generation%s: %u probe%s per packet, expected "
			       "false-positive rate per packet %.6g\n",
			       g->live, g->live == 1 ? "" : "s", g->probes,
			       g->probes == 1 ? "" : "s", g->rate);
		}
	}
	return clock ? 0 : -1;
}
