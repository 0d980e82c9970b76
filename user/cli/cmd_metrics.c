// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom metrics`: every filter's counters and monitoring numbers in
 * the Prometheus text exposition format.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "monitor/flowacct.h"
#include "monview.h"
#include "output.h"
#include "monitor/guard.h"
#include "store/gens.h"
#include "store/jiffies.h"
#include "store/pintree.h"
#include "safefile.h"
#include "store/stats.h"
#include "store/memuse.h"
#include "util.h"

/* One filter's numbers, read once so every family shows one instant. */
struct mfilter {
	char name[NAME_MAX + 1]; /* a skipped one's may be no filter name */
	bool up;		 /* read; else skipped: only its flowbloom_filter_up sample */
	struct fb_stats st;
	__u64 flows, size, kmem; /* kmem: every map's memlock (memuse.h) */
	bool sketch, newflows, acct;
	__u64 packets, bytes, err_p, err_b, created;
	double eps, delta, fill;
	struct fb_mon_stats ms;
	__u64 gens, timed_flows; /* generations of rules with a lifetime */
	bool gens_read;		 /* ... and whether they could be read */
	bool guard;		 /* a guard banned into it */
	bool active_unknown;	 /* its bans in force could not all be read */
	struct fb_guard_stats gs;
	struct fb_acct_totals at;
};

enum mkind { M_COUNTER, M_GAUGE };
/* A sample's value: a count, exact (a double holds 53 bits: a byte
 * counter passes 2^53 in 8 days at 100 Gb/s), or a ratio. */
struct mval {
	bool whole;
	__u64 u;
	double d;
};
/* Which value of struct mfilter a family shows. */
typedef bool (*mget)(const struct mfilter *mf, int arg, struct mval *v);

struct mfamily {
	char name[96];
	const char *help;
	enum mkind kind;
	mget get;
	int arg;
};

/* v is the count u, or the ratio d; has: whether the filter has it. */
static bool whole(struct mval *v, __u64 u, bool has)
{
	*v = (struct mval){ .whole = true, .u = u };
	return has;
}

static bool ratio(struct mval *v, double d, bool has)
{
	*v = (struct mval){ .d = d };
	return has;
}

static bool get_stat_packets(const struct mfilter *mf, int i, struct mval *v)
{
	return whole(v, mf->st.c[i].packets, true);
}

static bool get_stat_bytes(const struct mfilter *mf, int i, struct mval *v)
{
	return whole(v, mf->st.c[i].bytes, true);
}

enum {
	G_UP,
	G_FLOWS,
	G_SIZE,
	G_KMEM,
	G_PACKETS,
	G_BYTES,
	G_ERR_P,
	G_ERR_B,
	G_EPS,
	G_DELTA,
	G_START,
	G_NEW,
	G_LOST,
	G_CARRIED,
	G_FILL,
	G_GENS,
	G_TIMED,
	G_BANS,
	G_EXTENDED,
	G_UNBANS,
	G_ACTIVE,
	G_REFUSED,
	G_LIMITED,
	G_ACCT_LIVE,
	G_ACCT_CAP,
	G_ACCT_TAKEN,
	G_ACCT_OVER_P,
	G_ACCT_OVER_B,
};

static bool get_other(const struct mfilter *mf, int what, struct mval *v)
{
	switch (what) {
	case G_UP:
		return whole(v, mf->up, true);
	case G_FLOWS:
		return whole(v, mf->flows, true);
	case G_SIZE:
		return whole(v, mf->size, true);
	case G_KMEM:
		return whole(v, mf->kmem, mf->kmem > 0);
	case G_PACKETS:
		return whole(v, mf->packets, mf->sketch);
	case G_BYTES:
		return whole(v, mf->bytes, mf->sketch);
	case G_ERR_P:
		return whole(v, mf->err_p, mf->sketch);
	case G_ERR_B:
		return whole(v, mf->err_b, mf->sketch);
	case G_EPS:
		return ratio(v, mf->eps, mf->sketch);
	case G_DELTA:
		return ratio(v, mf->delta, mf->sketch);
	case G_START:
		return whole(v, mf->created / 1000000000ULL, mf->sketch || mf->newflows);
	case G_NEW:
		return whole(v, mf->ms.c[FB_MON_STAT_NEW], mf->newflows);
	case G_LOST:
		return whole(v, mf->ms.c[FB_MON_STAT_LOST], mf->newflows);
	case G_CARRIED:
		return whole(v, mf->ms.c[FB_MON_STAT_REFRESHED], mf->newflows);
	case G_FILL:
		return ratio(v, mf->fill, mf->newflows);
	case G_GENS:
		return whole(v, mf->gens, mf->gens_read);
	case G_TIMED:
		return whole(v, mf->timed_flows, mf->gens_read);
	case G_BANS:
		return whole(v, mf->gs.bans, mf->guard);
	case G_EXTENDED:
		return whole(v, mf->gs.extended, mf->guard);
	case G_UNBANS:
		return whole(v, mf->gs.unbans, mf->guard);
	case G_ACTIVE:
		return whole(v, mf->gs.active, mf->guard && !mf->active_unknown);
	case G_REFUSED:
		return whole(v, mf->gs.refused, mf->guard);
	case G_LIMITED:
		return whole(v, mf->gs.limited, mf->guard);
	case G_ACCT_LIVE:
		return whole(v, mf->at.live, mf->acct);
	case G_ACCT_CAP:
		return whole(v, mf->at.capacity, mf->acct);
	case G_ACCT_TAKEN:
		return whole(v, mf->at.taken, mf->acct);
	case G_ACCT_OVER_P:
		return whole(v, mf->at.overflow_packets, mf->acct);
	case G_ACCT_OVER_B:
		return whole(v, mf->at.overflow_bytes, mf->acct);
	}
	return false;
}

static const struct {
	const char *name, *help;
	enum mkind kind;
	int what;
} others[] = {
	{ "flowbloom_filter_up",
	  "1 if the filter was read, 0 if metrics skipped it (broken, untrusted or not readable: "
	  "flowbloom list says why); a skipped filter has no other series.",
	  M_GAUGE, G_UP },
	{ "flowbloom_filter_flows", "Flows added to the filter.", M_GAUGE, G_FLOWS },
	{ "flowbloom_filter_size_bytes", "Bytes of the filter's bit array.", M_GAUGE, G_SIZE },
	{ "flowbloom_filter_kernel_memory_bytes",
	  "Kernel memory of every map the filter holds (bits, counters, generations, exact "
	  "sets, monitoring), as info's kernel memory.",
	  M_GAUGE, G_KMEM },
	{ "flowbloom_monitor_packets_total", "Packets counted by the flow sketch (its N).",
	  M_COUNTER, G_PACKETS },
	{ "flowbloom_monitor_bytes_total", "Bytes counted by the flow sketch.", M_COUNTER,
	  G_BYTES },
	{ "flowbloom_monitor_max_error_packets",
	  "A per-flow packet estimate exceeds the truth by at most this (eps * N), with "
	  "probability 1 - delta.",
	  M_GAUGE, G_ERR_P },
	{ "flowbloom_monitor_max_error_bytes",
	  "A per-flow byte estimate exceeds the truth by at most this, with probability "
	  "1 - delta.",
	  M_GAUGE, G_ERR_B },
	{ "flowbloom_monitor_epsilon", "The sketch's error bound, relative to N.", M_GAUGE, G_EPS },
	{ "flowbloom_monitor_delta", "Probability that an estimate exceeds its bound.", M_GAUGE,
	  G_DELTA },
	{ "flowbloom_monitor_start_time_seconds",
	  "When the monitoring maps were created (counting started), Unix time.", M_GAUGE,
	  G_START },
	{ "flowbloom_monitor_new_flows_total", "New flows detected (events sent + events lost).",
	  M_COUNTER, G_NEW },
	{ "flowbloom_monitor_events_lost_total",
	  "New-flow events lost because the ring buffer was full.", M_COUNTER, G_LOST },
	{ "flowbloom_monitor_flows_carried_total",
	  "Flows active across an aging period boundary (not reported again).", M_COUNTER,
	  G_CARRIED },
	{ "flowbloom_monitor_seen_fill_ratio",
	  "Share of the seen-set's bits set in the current aging period.", M_GAUGE, G_FILL },
	{ "flowbloom_filter_generations",
	  "Generations of rules with a lifetime (live, or ended and not yet reclaimed).", M_GAUGE,
	  G_GENS },
	{ "flowbloom_filter_flows_with_lifetime", "Flows added to those generations.", M_GAUGE,
	  G_TIMED },
	{ "flowbloom_guard_bans_total", "Addresses guard banned into the filter.", M_COUNTER,
	  G_BANS },
	{ "flowbloom_guard_extended_total",
	  "Bans extended: the address was still above the threshold.", M_COUNTER, G_EXTENDED },
	{ "flowbloom_guard_unbans_total", "Bans that ended (their lifetime ran out).", M_COUNTER,
	  G_UNBANS },
	{ "flowbloom_guard_active_bans",
	  "Bans in force in the filter, whichever guard placed them, each until its end.", M_GAUGE,
	  G_ACTIVE },
	{ "flowbloom_guard_refused_total",
	  "Bans the filter could not take (reported by guard when they happened).", M_COUNTER,
	  G_REFUSED },
	{ "flowbloom_guard_limited_total",
	  "Addresses above the threshold not banned: the ban limit (the filter's capacity, or "
	  "--max-bans) was reached; one per address and interval.",
	  M_COUNTER, G_LIMITED },
	{ "flowbloom_accounting_flows", "Flows in the accounting table now (all CPUs).", M_GAUGE,
	  G_ACCT_LIVE },
	{ "flowbloom_accounting_capacity_flows", "Flows the accounting table holds (all CPUs).",
	  M_GAUGE, G_ACCT_CAP },
	{ "flowbloom_accounting_admitted_flows_total",
	  "Flows that took a place in the accounting table.", M_COUNTER, G_ACCT_TAKEN },
	{ "flowbloom_accounting_overflow_packets_total",
	  "Packets of flows the accounting table had no room for (counted by the overflow "
	  "sketch only).",
	  M_COUNTER, G_ACCT_OVER_P },
	{ "flowbloom_accounting_overflow_bytes_total", "IP octets of those packets.", M_COUNTER,
	  G_ACCT_OVER_B },
};

/* The generations of rules with a lifetime and guard's bans in force
 * (which only a live generation holds), for fb_gens_read(): metrics reads
 * without the lock, and a replace (load --replace, merge, fold) retires
 * the generations f's head names, so they are read again, f mapped again,
 * until f is the filter in use after them. Each try reads them afresh.
 * Not read (memory): the family left out, never fewer given as all. */
static int gens_fig(struct fb_store *f, void *arg)
{
	struct mfilter *mf = arg;
	int gfd;

	mf->gens = mf->timed_flows = 0;
	mf->gens_read = true;
	mf->active_unknown = false;
	if (f->hdr->gens) {
		struct fb_gen gl[FB_GEN_SLOTS];
		int ng = fb_gens_list(f, gl), i;

		mf->gens_read = ng >= 0;
		mf->gens = ng > 0 ? ng : 0;
		for (i = 0; i < ng; i++)
			mf->timed_flows += gl[i].nflows;
	}
	/* The bans in force now, each until its own end, whichever guard
	 * placed them: the record beside the filter, when a guard of this
	 * build keeps one. The record, or a ban in it, unreadable: the
	 * family leaves it out (never a smaller count, nor the counters'). */
	gfd = mf->guard ? fb_guard_bans_open(f, false, 0) : -1;
	if (gfd < 0 && mf->guard && errno != ENOENT)
		mf->active_unknown = true;
	if (gfd >= 0) {
		struct fb_gen_views gv;
		__u64 live, last;

		if (fb_gens_views_open(f, &gv) >= 0) {
			if (!fb_guard_bans_count(gfd, &gv, fb_jiffies_now(), false, &live, &last))
				mf->gs.active = live;
			else
				mf->active_unknown = true;
			fb_gens_views_close(&gv);
		} else {
			mf->active_unknown = true;
		}
		close(gfd);
	}
	return 0;
}

/* 0, or -1 with why in *fail (fb_store_open()'s; 0: opened, not read). */
static int read_mfilter(const char *name, struct mfilter *mf, enum fb_open_fail *fail)
{
	struct fb_mon_snap s;
	struct fb_monitor m;
	struct fb_store f;
	int rc;

	memset(mf, 0, sizeof(*mf));
	*fail = 0;
	if (fb_store_open(name, &f)) {
		*fail = f.fail;
		return -1;
	}
	snprintf(mf->name, sizeof(mf->name), "%s", name);
	mf->up = true;
	{
		int gfd = fb_guard_stats_open(&f, false);

		if (gfd >= 0) {
			mf->guard = !fb_guard_stats_read(gfd, &mf->gs);
			close(gfd);
			/* Bans guard left in force when it stopped end by
			 * themselves (the last at active_until). */
			if (mf->guard && mf->gs.active_until &&
			    fb_jiffies_now() >= mf->gs.active_until)
				mf->gs.active = 0;
		}
	}
	{
		bool quiet = fb_report_quiet;

		/* First: it may map f again, and f, mapped then, is what the
		 * rest reads (one content, as info's). */
		fb_report_quiet = true;
		if (fb_gens_read(&f, gens_fig, NULL, mf) < 0) {
			mf->gens_read = false;
			mf->active_unknown = true;
		}
		fb_report_quiet = quiet;
		if (!f.hdr) {
			/* Not mapped again (memory): not read. */
			if (!quiet)
				fb_report_err("%s", fb_report_last);
			fb_store_close(&f);
			return -1;
		}
	}
	if (fb_stats_read(&f, &mf->st)) {
		fb_store_close(&f);
		return -1;
	}
	mf->flows = f.hdr->nflows;
	mf->size = (__u64)f.hdr->nblocks * FB_BLOCK_BYTES;
	{
		struct fb_mem mm;
		bool quiet = fb_report_quiet;

		/* Unreadable (a writer mid-change): the family leaves it out. */
		fb_report_quiet = true;
		if (!fb_store_memory(&f, &mm))
			mf->kmem = mm.total;
		fb_report_quiet = quiet;
	}
	/* Monitoring maps of another flowbloom's layout (an older build's,
	 * its program still feeding them) take out only their own series:
	 * the filter's counters are still reported, and the note says what
	 * to do. */
	{
		bool quiet = fb_report_quiet;

		fb_report_quiet = true;
		rc = fb_monitor_open(&f, &m);
		fb_report_quiet = quiet;
	}
	if (rc == -3) {
		fb_report(FB_REPORT_NOTE,
			  "%s (until then, metrics leaves out its monitoring series)",
			  fb_report_last);
	} else if (rc < 0) {
		if (!fb_report_quiet)
			fb_report_err("%s", fb_report_last);
		fb_store_close(&f);
		return -1;
	}
	if (rc == 0) {
		mf->created = m.cfg.created_ns;
		if (m.cfg.flags & FB_MON_SKETCH) {
			if (fb_monitor_snap_take(&m, &s)) {
				fb_monview_close(&f, &m);
				return -1;
			}
			mf->sketch = true;
			mf->packets = s.packets;
			mf->bytes = s.bytes;
			mf->err_p = fb_monview_max_error(&m, s.packets);
			mf->err_b = fb_monview_max_error(&m, s.bytes);
			mf->eps = fb_monitor_epsilon(&m);
			mf->delta = fb_monitor_delta(&m);
			fb_monitor_snap_free(&s);
		}
		if (m.cfg.flags & FB_MON_NEWFLOWS) {
			if (fb_monitor_read_stats(&m, &mf->ms)) {
				fb_monview_close(&f, &m);
				return -1;
			}
			mf->newflows = true;
			mf->fill = fb_monitor_seen_fill(&m);
		}
		if (m.cfg.flags & FB_MON_ACCT) {
			mf->acct = true;
			fb_acct_totals(&m, &mf->at);
		}
		fb_monitor_close(&m);
	}
	fb_store_close(&f);
	return 0;
}

/* A label value is UTF-8 (a byte of no UTF-8 sequence makes node_exporter
 * refuse the whole file): such a byte, in the name of a directory that is
 * no filter, is written as U+FFFD, as -j writes it. */
static void label_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		int n = (unsigned char)*s >= 0x80 ? fb_utf8_len((const unsigned char *)s) : 1;

		if (!n) {
			fputs("\xef\xbf\xbd", out);
		} else if (n > 1) {
			fwrite(s, 1, n, out);
			s += n - 1;
		} else if (*s == '\\' || *s == '"') {
			fprintf(out, "\\%c", *s);
		} else if (*s == '\n') {
			fputs("\\n", out);
		} else {
			fputc(*s, out);
		}
	}
}

static void help_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

/* A count as its digits, what stats says (Prometheus reads a float64). */
static void print_value(FILE *out, const struct mval *v)
{
	if (v->whole)
		fprintf(out, "%llu\n", (unsigned long long)v->u);
	else
		fprintf(out, "%.15g\n", v->d);
}

/* Filter mf's sample of family fam: a skipped filter has only its up. */
static bool sample(const struct mfamily *fam, const struct mfilter *mf, struct mval *v)
{
	if (!mf->up && !(fam->get == get_other && fam->arg == G_UP))
		return false;
	return fam->get(mf, fam->arg, v);
}

/* The exposition: HELP and TYPE once per family, then one sample per
 * filter that has the value; families without samples are left out. json:
 * the families as JSON objects on stdout instead (-j without --textfile). */
static void render(FILE *out, bool json, const struct mfamily *fam, size_t nfam,
		   const struct mfilter *mf, size_t nmf)
{
	size_t i, j;
	struct mval v;

	for (i = 0; i < nfam; i++) {
		bool any = false;

		for (j = 0; j < nmf; j++)
			if (sample(&fam[i], &mf[j], &v))
				any = true;
		if (!any)
			continue;
		if (json) {
			jw_obj_open(NULL);
			jw_str("name", fam[i].name);
			jw_str("type", fam[i].kind == M_COUNTER ? "counter" : "gauge");
			jw_str("help", fam[i].help);
			jw_arr_open("samples");
			for (j = 0; j < nmf; j++)
				if (sample(&fam[i], &mf[j], &v)) {
					jw_obj_open(NULL);
					jw_str("filter", mf[j].name);
					/* Counts whole: %g would round them. */
					if (v.whole)
						jw_u64("value", v.u);
					else
						jw_double("value", v.d);
					jw_obj_close();
				}
			jw_arr_close();
			jw_obj_close();
			continue;
		}
		fprintf(out, "# HELP %s ", fam[i].name);
		help_text(out, fam[i].help);
		fprintf(out, "\n# TYPE %s %s\n", fam[i].name,
			fam[i].kind == M_COUNTER ? "counter" : "gauge");
		for (j = 0; j < nmf; j++)
			if (sample(&fam[i], &mf[j], &v)) {
				fprintf(out, "%s{filter=\"", fam[i].name);
				label_value(out, mf[j].name);
				fputs("\"} ", out);
				print_value(out, &v);
			}
	}
}

/* node_exporter's textfile collector may read at any moment: write a
 * temporary file in the same directory, then rename it over PATH
 * (safefile.c: never through a planted symlink). 0644: the collector
 * often runs as another user, and the figures hold no secret. */
static int write_textfile(const char *path, const struct mfamily *fam, size_t nfam,
			  const struct mfilter *mf, size_t nmf)
{
	struct fb_safefile sf;

	if (fb_safefile_open(&sf, path, 0644))
		return -1;
	render(sf.out, false, fam, nfam, mf, nmf);
	return fb_safefile_commit(&sf);
}

int cmd_metrics(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "textfile", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct mfamily fam[2 * FB_STAT_NR + sizeof(others) / sizeof(others[0])];
	const char *textfile = NULL;
	struct mfilter *mf = NULL;
	char **names = NULL, **why = NULL;
	size_t nfam = 0, nmf = 0, skipped = 0, i;
	int c, n, rc = 1;
	bool all;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c != 't')
			return fb_bad_option(c, argv);
		textfile = optarg;
	}
	all = optind >= argc;
	if (!all) {
		n = argc - optind;
		names = calloc(n, sizeof(*names));
		for (i = 0; names && i < (size_t)n; i++)
			names[i] = strdup(argv[optind + i]);
	} else {
		/* No NAME: every filter, for a scrape of the whole host. */
		n = fb_pin_list(&names);
		if (n < 0)
			return 1;
	}
	mf = calloc(n ? n : 1, sizeof(*mf));
	why = calloc(n ? n : 1, sizeof(*why));
	/* (a name without memory: NULL, which the compare below crashed on) */
	for (i = 0; names && i < (size_t)n && names[i]; i++)
		;
	if (!mf || !why || (n && !names) || i < (size_t)n) {
		fb_err("out of memory");
		goto out;
	}
	/* A NAME that is no filter name is a usage error (main: status 2),
	 * whatever the others are: nothing read, nothing written. */
	for (i = 0; !all && i < (size_t)n; i++)
		if (fb_pin_check_name(names[i]))
			goto out;
	for (i = 0; i < (size_t)n; i++) {
		bool quiet = fb_report_quiet;
		enum fb_open_fail fail;
		size_t j;
		int r;

		/* A name given twice is one filter: its series once, as
		 * Prometheus refuses a scrape with duplicate samples. */
		for (j = 0; j < i && strcmp(names[j], names[i]); j++)
			;
		if (j < i)
			continue;

		/* A filter not read is skipped, said so as list says it
		 * (broken, untrusted or not known) and shown by its up 0, the
		 * others still reported, then exit 1 (a timer's unit fails):
		 * named or not, so that an alert on up 0 sees it (the file of
		 * an earlier run, its up 1, is replaced). Scraping every
		 * filter, one destroyed since it was listed is gone; a NAME
		 * that is no filter is an error: nothing printed or written
		 * (as a mistyped NAME is no filter to report on). */
		fb_report_quiet = true;
		fb_report_last[0] = 0;
		r = read_mfilter(names[i], &mf[nmf], &fail);
		fb_report_quiet = quiet;
		if (!r) {
			nmf++;
			continue;
		}
		if (fail == FB_OPEN_ABSENT && !all) {
			fb_err("%s", fb_report_last);
			goto out;
		}
		if (fail == FB_OPEN_ABSENT)
			continue;
		if (asprintf(&why[skipped], "skipping %sfilter '%s'%s: %s",
			     fail == FB_OPEN_DAMAGED	 ? "broken "
			     : fail == FB_OPEN_UNTRUSTED ? "untrusted "
							 : "",
			     names[i],
			     fail == FB_OPEN_DAMAGED || fail == FB_OPEN_UNTRUSTED ? ""
										  : " (not known)",
			     *fb_report_last ? fb_report_last : "not read") < 0) {
			why[skipped] = NULL;
			fb_err("out of memory");
			goto out;
		}
		memset(&mf[nmf], 0, sizeof(mf[nmf]));
		snprintf(mf[nmf++].name, sizeof(mf->name), "%s", names[i]);
		skipped++;
	}
	/* Said once every filter is read: a NAME found missing after
	 * another was skipped is the run's one error. */
	for (i = 0; i < skipped; i++)
		fb_err("%s", why[i]);

	for (i = 0; i < FB_STAT_NR; i++) {
		snprintf(fam[nfam].name, sizeof(fam[nfam].name), "flowbloom_%s_packets_total",
			 fb_stat_name(i));
		fam[nfam].help = "Packets by counter of the XDP program (flowbloom stats).";
		fam[nfam].kind = M_COUNTER;
		fam[nfam].get = get_stat_packets;
		fam[nfam++].arg = i;
		snprintf(fam[nfam].name, sizeof(fam[nfam].name), "flowbloom_%s_bytes_total",
			 fb_stat_name(i));
		fam[nfam].help = "Bytes by counter of the XDP program (flowbloom stats).";
		fam[nfam].kind = M_COUNTER;
		fam[nfam].get = get_stat_bytes;
		fam[nfam++].arg = i;
	}
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		snprintf(fam[nfam].name, sizeof(fam[nfam].name), "%s", others[i].name);
		fam[nfam].help = others[i].help;
		fam[nfam].kind = others[i].kind;
		fam[nfam].get = get_other;
		fam[nfam++].arg = others[i].what;
	}

	if (textfile) {
		if (write_textfile(textfile, fam, nfam, mf, nmf))
			goto out;
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("textfile", textfile);
			jw_u64("filters", nmf - skipped);
			jw_u64("skipped", skipped);
			jw_obj_close();
			jw_end();
		}
	} else if (fb_json) {
		jw_obj_open(NULL);
		jw_arr_open("metrics");
		render(stdout, true, fam, nfam, mf, nmf);
		jw_arr_close();
		jw_obj_close();
		jw_end();
	} else {
		render(stdout, false, fam, nfam, mf, nmf);
	}
	rc = skipped ? 1 : 0;
out:
	for (i = 0; names && i < (size_t)n; i++)
		free(names[i]);
	free(names);
	for (i = 0; why && i < skipped; i++)
		free(why[i]);
	free(why);
	free(mf);
	return rc;
}
