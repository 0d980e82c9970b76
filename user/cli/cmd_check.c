// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `flowbloom check`: what an interrupted command left (staging
 * directories, the other generation's counters or exact sets, missing
 * ip-link pins, a filter too broken to open); for counting filters, is
 * every bit set exactly where its counter is non-zero, and do the
 * counters add up to k times the flows; with --confirm exact, does the
 * filter hold every rule of the exact sets (rules/exactcheck.h)? */
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include "cmd.h"
#include "types/ftype.h"
#include "types/counting.h"
#include "output.h"
#include "rules/exactcheck.h"
#include "store/gens.h"
#include "store/pintree.h"
#include "store/repair.h"
#include "store/store.h"

/* The filter cannot be opened: say why (f->fail, as decided where it
 * failed), and what stale directories of its name there are. One not
 * trusted or not known is no damage: nothing repaired, nothing removed. */
static int check_broken(const struct fb_store *f, const char *name, bool repair)
{
	char why[sizeof(fb_report_last)];
	bool missing = f->fail == FB_OPEN_ABSENT;
	unsigned st = 0;

	snprintf(why, sizeof(why), "%s", fb_report_last);
	/* Not broken: only not opened now (ulimit -n, memory, the kernel's
	 * refusal). */
	if (f->fail == FB_OPEN_UNKNOWN) {
		fb_err("%s", why);
		return 1;
	}
	if (f->fail == FB_OPEN_UNTRUSTED) {
		if (fb_json) {
			jw_obj_open(NULL);
			jw_str("filter", name);
			jw_bool("clean", false);
			jw_bool("repaired", false);
			jw_str("untrusted", why);
			jw_obj_close();
			jw_end();
		} else {
			printf("%s: UNTRUSTED: %s\n", name, why);
		}
		return 1;
	}
	if (fb_repair_stale(name, &st))
		return 1;
	if (missing && !st) {
		fb_err("%s", why);
		return 1;
	}
	if (repair && st && fb_pin_clean_stale(name) < 0)
		return 1;
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", name);
		jw_bool("clean", false);
		jw_bool("repaired", repair && missing);
		if (!missing)
			jw_str("broken", why);
		jw_bool("interrupted_create", st & 1);
		jw_bool("interrupted_destroy", st & 2);
		jw_obj_close();
		jw_end();
	} else {
		if (missing)
			printf("%s: no such filter, but an interrupted command left a staging "
			       "directory%s\n",
			       name, repair ? " (removed)" : "");
		else
			printf("%s: BROKEN: %s\n", name, why);
		if (st & 1)
			printf("  an interrupted create or import left %s/%s%s%s\n", fb_pin_root(),
			       FB_STAGE_NEW, name, repair ? " (removed)" : "");
		if (st & 2)
			printf("  an interrupted destroy left %s/%s%s%s\n", fb_pin_root(),
			       FB_STAGE_OLD, name, repair ? " (removed)" : "");
	}
	/* Only leftovers, and they are gone now: success. */
	return repair && missing ? 0 : 1;
}

/* What check finds in a cuckoo, d-left or scalable filter (its geometry
 * was checked by open): a batch or a cuckoo relocation a killed writer
 * left open, and the stored count against the table. */
struct typed {
	__u64 items;
	bool batch_open; /* a batch a killed writer left (batchlog.h) */
	bool batch_bad;	 /* ... its journal damaged (dropped by repair) */
	bool seq_odd, count_bad;
	bool counted; /* the type's stored count can be checked (cuckoo) */
};

static void check_typed(struct fb_store *f, bool repair, struct typed *ty)
{
	/* The chain ended first: that takes out the fingerprint it left in
	 * two slots, which a recount would take for a stored one. */
	ty->counted = fb_ftype(f->hdr->type)->recount != NULL;
	/* A batch a killed writer left: rolled back whole, which ends a
	 * chain it was inside too (or, its journal damaged, dropped: the
	 * recount then counts what the table holds). */
	ty->batch_open = fb_batchlog_open(f);
	if (ty->batch_open && repair) {
		bool quiet = fb_report_quiet;

		fb_report_quiet = true;
		ty->batch_bad = fb_batchlog_recover(f, false, true) < 0;
		fb_report_quiet = quiet;
	}
	ty->seq_odd = fb_ftype_seq_odd(f);
	if (repair && ty->seq_odd)
		fb_ftype_seq_end(f);
	ty->items = fb_ftype_items(f);
	ty->count_bad = fb_ftype_recount(f, repair);
}

/* A counting filter's live generations, each checked as the filter is;
 * how many were not consistent (repaired with repair), -1 if they cannot
 * be opened now (reported: not clean either). */
static int check_gens(struct fb_store *f, bool repair)
{
	struct fb_gen_views gv;
	struct fb_check c;
	int i, bad = 0;

	if (!f->hdr->gens)
		return 0;
	if (fb_gens_views_open(f, &gv) < 0)
		return -1;
	for (i = 0; i < gv.n; i++) {
		fb_counting_check(&gv.v[i], repair, &c);
		bad += c.stale_bits || c.missing_bits || c.journal_dirty || !c.count_ok;
	}
	fb_gens_views_close(&gv);
	return bad;
}

/* What check found in the exact sets of a confirming filter. */
static bool exact_bad(const struct fb_exact_check *e)
{
	return e->not_held || e->over || e->trie_missing || e->trie_stale || !e->count_ok;
}

static void exact_json(const struct fb_exact_check *e)
{
	jw_u64("exact_rules", e->rules);
	jw_u64("exact_copies", e->copies);
	jw_u64("exact_not_in_filter", e->not_held);
	jw_u64("exact_over_counted", e->over);
	jw_u64("exact_trie_missing", e->trie_missing);
	jw_u64("exact_trie_stale", e->trie_stale);
	jw_bool("exact_count_checked", e->count_checked);
	jw_bool("exact_count_ok", e->count_ok);
	jw_bool("exact_unrepaired", e->unrepaired);
}

/* One of exact_text()'s findings, if there are any: n, its noun (stem and
 * the endings of one and of more), what, and what repair did. */
static void exact_line(unsigned long long n, const char *stem, const char *one, const char *more,
		       const char *what, const char *done)
{
	if (n)
		printf("  %llu %s%s%s%s\n", n, stem, n == 1 ? one : more, what, done);
}

static void exact_text(const struct fb_exact_check *e, bool counting, bool repair)
{
	unsigned long long d, left;

	printf("  exact sets: %llu rule%s, %llu cop%s", (unsigned long long)e->rules,
	       e->rules == 1 ? "" : "s", (unsigned long long)e->copies,
	       e->copies == 1 ? "y" : "ies");
	if (e->count_checked)
		printf(" for %llu flows: %s\n", (unsigned long long)e->flows,
		       e->count_ok ? "ok" : "MISMATCH");
	else
		printf(" (%s)\n", counting ? "the flow count is an estimate: not compared"
					   : "only a counting filter's flow count is compared");
	exact_line(e->not_held, "exact-set rule", "", "s",
		   " the filter does not hold (a killed add or del left them; they take room in "
		   "the exact sets)",
		   repair ? ": removed" : "");
	exact_line(e->over, "exact-set rule", "", "s",
		   " counted more often than the filter holds (a killed del; a later del would "
		   "lower other flows' counters)",
		   repair ? ": lowered" : "");
	exact_line(e->trie_missing, "address rule", "", "s",
		   " missing from the exact sets' tries (their packets are refused as "
		   "unconfirmed)",
		   repair ? ": put back" : "");
	exact_line(e->trie_stale, "trie entr", "y", "ies",
		   " without a rule (confirming hits of a rule not listed)",
		   repair ? ": removed" : "");
	if (e->count_ok)
		return;
	/* With repair: how far apart they still are. */
	left = e->copies_left > e->flows ? e->copies_left - e->flows : e->flows - e->copies_left;
	if (e->copies > e->flows) {
		d = e->copies - e->flows;
		printf("  the exact sets count %llu cop%s more than the filter's flows", d,
		       d == 1 ? "y" : "ies");
		if (repair && e->unrepaired)
			printf(": %llu NOT repaired, check cannot tell which rules (their bits are "
			       "shared with others'); load --replace with the rule list rebuilds "
			       "both",
			       left);
		else if (repair)
			printf(": the rules above, taken out");
	} else {
		d = e->flows - e->copies;
		printf("  the filter holds %llu flow%s in no exact set: their packets are refused "
		       "as unconfirmed",
		       d, d == 1 ? "" : "s");
		if (repair)
			printf(": NOT repaired, check cannot tell which flows; load --replace with "
			       "the rule list rebuilds both");
	}
	printf("\n");
}

int cmd_check(int argc, char **argv)
{
	bool repair = false, fix, unrepaired, clean, quiet, table;
	int gens_bad;
	struct fb_repair_state t;
	struct fb_store f;
	struct fb_check c;
	struct typed ty = { 0 };
	struct fb_exact_check ex = { .count_ok = true };
	const char *name = NULL;
	int i, r, er = 0, end = fb_end_of_options(&argc, argv);

	for (i = 1; i < argc; i++) {
		if (i >= end && name)
			return fb_usage("too many arguments");
		else if (i >= end)
			name = argv[i];
		else if (!strcmp(argv[i], "--repair"))
			repair = true;
		else if (argv[i][0] == '-')
			return fb_unknown_option(argv[i], (int)strlen(argv[i]));
		else if (name)
			return fb_usage("too many arguments");
		else
			name = argv[i];
	}
	if (!name)
		return fb_usage("missing NAME");
	if (fb_pin_check_name(name))
		return 1;
	quiet = fb_report_quiet;
	fb_report_quiet = true;
	r = fb_store_open(name, &f);
	fb_report_quiet = quiet;
	if (r)
		return check_broken(&f, name, repair);
	/* Keep writers out: a write in progress would look like damage. (Not
	 * fb_store_lock(): it would roll back an interrupted write unseen.) */
	if (fb_store_flock(&f, repair ? LOCK_EX : LOCK_SH)) {
		fb_store_close(&f);
		return 1;
	}
	memset(&c, 0, sizeof(c));
	c.count_ok = true;
	r = fb_repair_check(&f, repair, &t);
	/* Not read (reported): nothing more repaired, nor said twice. */
	if (r) {
		fb_store_unlock(&f);
		fb_store_close(&f);
		return 1;
	}
	/* Bits that two chunk slots share are no guide to what the filter
	 * holds: nothing is repaired against them (repair would take rules
	 * they lost out of the exact sets too). */
	fix = repair && !t.shared_chunks;
	if (f.cnt_hdr)
		fb_counting_check(&f, fix, &c);
	/* (Damaged generations left in: said below, not opened again.) */
	gens_bad = f.cnt_hdr && !(t.damaged_gens && !repair) ? check_gens(&f, fix) : 0;
	table = fb_ftype(f.hdr->type)->flags & FB_FTYPE_TABLE;
	if (table)
		check_typed(&f, fix, &ty);
	/* The exact sets last: against the filter as repaired above. */
	if (f.hdr->confirm)
		er = fb_exact_check(&f, fix, &ex);
	fb_store_unlock(&f);
	if (er || gens_bad < 0) {
		fb_store_close(&f);
		return 1;
	}
	clean = !c.stale_bits && !c.missing_bits && !c.journal_dirty && c.count_ok &&
		!t.stale_create && !t.stale_destroy && !t.stale_counters && !t.stale_sets &&
		!t.stale_chunks && !t.iproute_missing && !t.iproute_stale && !t.stale_head &&
		!ty.batch_open && !ty.seq_odd && !ty.count_bad && !t.stale_gens && !gens_bad &&
		!exact_bad(&ex) && !t.shared_chunks && !t.damaged_gens;
	/* What check --repair cannot repair: pins an ip link program put in
	 * place of the filter's, shared chunks, exact sets whose copies still
	 * differ from the flows. */
	unrepaired = repair && (t.iproute_stale || t.shared_chunks || ex.unrepaired);
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("filter", name);
		jw_bool("clean", clean);
		jw_bool("repaired", repair && !clean && !unrepaired);
		jw_bool("counting", f.cnt_hdr != NULL);
		if (f.cnt_hdr) {
			jw_u64("stale_bits", c.stale_bits);
			jw_u64("missing_bits", c.missing_bits);
			jw_bool("interrupted_write", c.journal_dirty);
			jw_u64("saturated", c.saturated);
			jw_u64("counter_sum", c.counter_sum);
			jw_u64("flows", f.hdr->nflows);
			jw_bool("count_checked", c.count_checked);
			jw_bool("count_ok", c.count_ok);
		}
		if (table) {
			jw_str("type", fb_ftype_name(f.hdr->type));
			jw_u64("items", ty.items);
			jw_bool("interrupted_batch", ty.batch_open);
			jw_bool("interrupted_relocation", ty.seq_odd);
			jw_bool("count_ok", !ty.count_bad);
		}
		if (f.hdr->confirm)
			exact_json(&ex);
		jw_bool("interrupted_create", t.stale_create);
		jw_bool("interrupted_destroy", t.stale_destroy);
		jw_bool("stale_counters", t.stale_counters);
		jw_bool("stale_exact_sets", t.stale_sets);
		jw_u64("stale_chunks", t.stale_chunks);
		jw_bool("iproute_pins_missing", t.iproute_missing);
		jw_bool("iproute_pins_stale", t.iproute_stale);
		jw_u64("stale_generations", t.stale_gens);
		jw_u64("ended_generations", t.expired_gens);
		jw_u64("inconsistent_generations", gens_bad);
		jw_u64("damaged_generations", t.damaged_gens);
		jw_bool("stale_probe_table", t.stale_head);
		jw_u64("shared_chunks", t.shared_chunks);
		jw_obj_close();
		jw_end();
	} else {
		const char *fixed = repair ? ": removed" : "";

		printf("%s: %s%s\n", name, clean ? "clean" : "NOT clean",
		       unrepaired	  ? " (not all repaired)"
		       : repair && !clean ? " (repaired)"
					  : "");
		if (f.cnt_hdr) {
			printf("  bits set over a zero counter %llu, counters without their bit "
			       "%llu\n",
			       (unsigned long long)c.stale_bits,
			       (unsigned long long)c.missing_bits);
			if (c.journal_dirty)
				printf("  a write was interrupted (one flow half applied)%s\n",
				       repair ? ": rolled back" : "");
			printf("  counters sum %llu for %llu flows x k=%u: %s\n",
			       (unsigned long long)c.counter_sum, (unsigned long long)f.hdr->nflows,
			       f.hdr->k,
			       !c.count_checked
				       ? (c.saturated ? "not checkable (saturated counters)"
						      : "not checkable (an intersection: flows "
							"estimated)")
			       : c.count_ok ? "ok"
					    : "MISMATCH");
			printf("  saturated counters %llu\n", (unsigned long long)c.saturated);
		} else if (table) {
			/* A d-left table's counters saturate and flows share
			 * fingerprints: no count to check it against. */
			printf("  %s filter: geometry ok, %llu stored%s%s\n",
			       fb_ftype_name(f.hdr->type), (unsigned long long)ty.items,
			       !ty.counted    ? ""
			       : ty.count_bad ? "; count in the geometry MISMATCH"
					      : "; count in the geometry ok",
			       ty.count_bad && repair ? ": recounted" : "");
			if (ty.batch_open)
				printf("  a batch was interrupted (part of it applied)%s\n",
				       !repair	      ? ""
				       : ty.batch_bad ? ": its journal is damaged, dropped"
						      : ": rolled back");
			if (ty.seq_odd)
				printf("  a relocation was interrupted (every probe answers "
				       "maybe)%s\n",
				       repair ? ": ended" : "");
		} else {
			printf("  plain filter: no counters to check its bits against\n");
		}
		if (f.hdr->confirm)
			exact_text(&ex, f.cnt_hdr != NULL, repair);
		if (t.stale_create)
			printf("  an interrupted create or import of this name left %s/%s%s%s\n",
			       fb_pin_root(), FB_STAGE_NEW, name, fixed);
		if (t.stale_destroy)
			printf("  an interrupted destroy left %s/%s%s%s\n", fb_pin_root(),
			       FB_STAGE_OLD, name, fixed);
		if (t.stale_counters)
			printf("  an interrupted load --replace left the unused generation's "
			       "counters pinned%s\n",
			       fixed);
		if (t.stale_sets)
			printf("  an interrupted load --replace left exact sets in the unused "
			       "generation%s\n",
			       fixed);
		if (t.stale_chunks)
			printf("  an interrupted load --replace left %u chunk%s (%u KiB) in the "
			       "unused generation%s\n",
			       t.stale_chunks, t.stale_chunks == 1 ? "" : "s",
			       t.stale_chunks * (FB_CHUNK_BYTES / 1024),
			       repair ? ": released" : "");
		if (t.iproute_missing)
			printf("  the ip link pins (%s) are missing%s\n", fb_pin_iproute_dir(),
			       repair ? ": pinned again" : "");
		if (t.iproute_stale)
			printf("  the ip link pins (%s) name other maps than the filter's: an ip "
			       "link "
			       "program loaded while they were missing runs on them and passes "
			       "every "
			       "packet (detach it, remove the two pins, check --repair, load it "
			       "again)%s\n",
			       fb_pin_iproute_dir(), repair ? ": NOT repaired" : "");
		if (t.stale_gens) {
			bool one = t.stale_gens == 1;

			printf("  %d generation%s of rules with a lifetime no longer in use still "
			       "hold%s %s kernel memory (%s release failed or was cut short)%s\n",
			       t.stale_gens, one ? "" : "s", one ? "s" : "", one ? "its" : "their",
			       one ? "its" : "their",
			       repair ? ": released"
			       : one  ? ": check --repair releases it"
				      : ": check --repair releases them");
		}
		if (t.expired_gens)
			printf("  %d generation%s of rules with a lifetime ended (ignored by the "
			       "data path)%s\n",
			       t.expired_gens, t.expired_gens == 1 ? "" : "s",
			       repair ? ": reclaimed" : "; the next write reclaims them");
		if (t.damaged_gens)
			printf("  generation %u of rules with a lifetime is damaged (%s)%s%s%s\n",
			       t.damaged_g, t.damaged_why, t.damaged_gens > 1 ? ", and others" : "",
			       repair ? ": taken out, and its rules with it"
				      : ": check --repair takes it out, and its rules with it",
			       !repair && f.cnt_hdr ? "; every write is refused until then" : "");
		if (gens_bad)
			printf("  %d generation%s with counters and bits that disagree, or an "
			       "interrupted write%s\n",
			       gens_bad, gens_bad == 1 ? "" : "s", repair ? ": repaired" : "");
		if (t.shared_chunks)
			printf("  %u chunk slot%s of the filter hold%s no chunk of its own (two "
			       "parts of the bits are one: rules in them are lost)%s\n",
			       t.shared_chunks, t.shared_chunks == 1 ? "" : "s",
			       t.shared_chunks == 1 ? "s" : "",
			       repair ? ": NOT repaired, nothing else repaired against these bits; "
					"load --replace with the rule list rebuilds the filter"
				      : "");
		if (t.stale_head)
			printf("  the data path's probe table is not what the header and prefix "
			       "lengths say%s\n",
			       repair ? ": rebuilt" : " (check --repair or attach rebuilds it)");
	}
	fb_store_close(&f);
	/* After a repair the filter is consistent: success, unless some of
	 * what check found is beyond repair. */
	return clean || (repair && !unrepaired) ? 0 : 1;
}
