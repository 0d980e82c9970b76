// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What `flowbloom bgp` does to the filter (bgprun.h): a line's rules
 * added, refusals handled as bgp.h says (a route refused whole), deletions
 * applied once the state file no longer names them, and the rules added
 * again when the filter array was replaced under us. A rule counts as in
 * the filter (fb_bgp_done, fb_bgp_added) only once the filter took it, so
 * a deletion is only ever of a rule we added: lowering the counters of a
 * rule we did not add would take bits from others.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bgprun.h"
#include "output.h"
#include "rules/fit.h"
#include "rules/flow.h"
#include "rules/lifetime.h"
#include "rules/rules.h"
#include "store/exact.h"
#include "store/gens.h"
#include "types/counting.h"

void bgp_say(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	/* One write a line (stderr is unbuffered): a reader of the log, or
	 * another writer to it, never sees a line in pieces. */
	n = snprintf(line, sizeof(line), "flowbloom: bgp: ");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	fwrite(line, 1, (size_t)n, stderr);
}

void bgp_show(size_t lineno, char sign, const struct fb_key *k, const char *tail)
{
	char text[FB_FLOW_STR];

	fb_flow_format(k, text, sizeof(text));
	if (lineno)
		bgp_say("<stdin>:%zu: %c%s%s", lineno, sign, text, tail);
	else
		bgp_say("%c%s%s", sign, text, tail);
}

void bgp_change(struct bgp_run *rn, unsigned talker, size_t lineno, char sign,
		const struct fb_key *k)
{
	char text[FB_FLOW_STR], line[FB_BGP_CHANGE_STR];

	fb_flow_format(k, text, sizeof(text));
	if (lineno)
		snprintf(line, sizeof(line), "<stdin>:%zu: %c%s", lineno, sign, text);
	else
		snprintf(line, sizeof(line), "%c%s", sign, text);
	if (fb_bgp_change(&rn->b, talker, sign, line))
		bgp_say("%s", line);
}

/* keys[bad] refused, err -1 (a prefix length too many) or -4 (a shape
 * too many: mask says why): each route holding it is named once, with
 * why. Returns how many other rules left the additions with its routes. */
static size_t refuse(struct bgp_run *rn, const struct fb_store *f, const struct fb_key *k, int err,
		     const char *mask)
{
	char text[FB_FLOW_STR], why[900];

	fb_flow_format(k, text, sizeof(text));
	if (err == -4)
		snprintf(why, sizeof(why), "'%s' in filter '%s': %s", text, f->name, mask);
	else
		snprintf(why, sizeof(why),
			 "'%s' would need a %dth %s prefix length in filter '%s' (at most %d)",
			 text, FB_MAX_LENGTHS + 1,
			 fb_rules_prefix_list_name(fb_rules_prefix_list(k)), f->name,
			 FB_MAX_LENGTHS);
	return fb_bgp_refused(&rn->b, k, why, NULL);
}

struct add_ctx {
	struct bgp_run *rn;
	const struct fb_store *f;
	const struct fb_key *keys;
};

static size_t fit_refused(void *ctx, const struct fb_fit *t, size_t i, int err)
{
	struct add_ctx *a = ctx;
	char mask[600] = "";

	if (err == -4)
		fb_fit_mask_refusal(t, i, mask, sizeof(mask));
	return refuse(a->rn, a->f, &a->keys[i], err, mask);
}

/* Still held: not gone with a refused route. */
static bool fit_alive(void *ctx, const struct fb_key *k)
{
	return fb_bgp_refs(&((struct add_ctx *)ctx)->rn->b, k) > 0;
}

/*
 * Add keys[0..*n) to the filter: the line's additions, the rules a
 * replaced filter lost (fb_bgp_lost), or, refreshing, the rules in it.
 * What the filter's prefix lengths and shapes cannot take is refused, a
 * rule at a time, in one walk of the batch (rules/fit.h), with the outcome
 * the retry it replaced had: the batch tried again after each refusal,
 * and walked once more to take a refused route's other rules out of it (a
 * line of FlowSpec routes of 56 rules each, 600 of them refused among
 * 67,200 rules, or as many refused among the rules added again to a new
 * filter array, cost seconds of CPU under the filter's lock). A route
 * holding a refused rule is refused whole (fb_bgp_refused): its other
 * parts' rules leave the batch too, so no route is ever partly in the
 * filter. The rest is then added or refused whole (fb_rules_add,
 * fb_gens_add): nothing of the batch is in the filter before. A refused
 * refresh refuses its routes the same way, and their rules, in the filter,
 * join the deletions (b.del; the caller queues them): left there, they
 * would end with their lifetime while the table still counted them held.
 * what: the batch, for a refusal of all of it.
 * Returns how many rules were refused; *n: how many were added.
 */
size_t bgp_add_rules(struct bgp_run *rn, struct fb_store *f, struct fb_key *keys, size_t *n,
		     const char *what)
{
	struct add_ctx a = { rn, f, keys };
	const struct fb_fit_ops ops = { fit_refused, fit_alive, &a };
	struct fb_gen where;
	size_t bad, i, j, gone, n0 = *n;
	int err;

	/* With --ttl, into a generation: the rule ends by itself unless
	 * refreshed, whether this process runs or not. */
	while (*n && (bad = (size_t)-1,
		      err = rn->ttl > 0 ? fb_gens_add_fit(f, keys, n, rn->ttl, &ops, &bad, &where)
					: fb_fit_add(f, keys, n, &ops, &bad))) {
		char why[900], mask[600];

		if ((err != -1 && err != -4) || bad >= *n) {
			/* Refused whole (an exact set, printed; no room in
			 * another filter type; every generation in use,
			 * printed): none of them added. */
			snprintf(why, sizeof(why), "filter '%s' refused %s%s", f->name, what,
				 err == -3 ? " (it is full)" : "");
			for (bad = 0; bad < *n; bad++)
				fb_bgp_refused(&rn->b, &keys[bad], why, NULL);
			*n = 0;
			break;
		}
		/* Not fitted (no memory for the walk): the rule refused, the
		 * batch tried again, a walk of it per refusal. */
		if (err == -4)
			fb_rules_mask_refusal((struct fb_prefixes *)&f->blocks[1], keys, bad, mask,
					      sizeof(mask));
		gone = refuse(rn, f, &keys[bad], err, mask);
		keys[bad] = keys[--*n];
		for (i = j = 0; gone && i < *n; i++)
			if (fb_bgp_refs(&rn->b, &keys[i]))
				keys[j++] = keys[i];
		if (gone)
			*n = j;
	}
	if (rn->ttl > 0 && *n) {
		fb_capacity_wrote(&rn->lim, &where, *n);
		if (bgp_copies_wrote(&rn->copies, &where, keys, *n))
			bgp_say("out of memory recording where %s are: a withdrawal leaves "
				"their copies there to end with their lifetime",
				what);
	}
	return n0 - *n;
}

/* The rules with a copy in each generation, from the record of where we
 * wrote them (withdrawn ones whose deletions wait included: ours still). */
void bgp_count_copies(struct bgp_run *rn, struct fb_store *f)
{
	struct fb_gen_views gv;
	int g;

	memset(rn->lim.wrote, 0, sizeof(rn->lim.wrote));
	rn->counted_id = f->bits_id;
	if (rn->ttl <= 0 || !f->hdr->gens)
		return;
	if (fb_gens_views_open(f, &gv) >= 0) {
		for (g = 0; g < gv.n; g++)
			fb_capacity_wrote(&rn->lim, &gv.g[g], bgp_copies_in(&rn->copies, &gv.g[g]));
		fb_gens_views_close(&gv);
	}
}

/* One permanent copy of k out of the filter (its exact set's too): 0, -1
 * if the counters do not hold it, -2 if the exact set refused (said; the
 * counters put back). */
static int del_copy(struct fb_store *f, const struct fb_key *k)
{
	if (fb_counting_del(f, k))
		return -1;
	/* The exact set refusing (said): the counters back, nothing deleted. */
	if (f->hdr->confirm && fb_exact_adjust(f, k, -1)) {
		fb_counting_add(f, k);
		return -2;
	}
	return 0;
}

/* k's copy out of the permanent rules: 0, -1 if they do not hold it
 * (someone else deleted it: then lowering its counters would take bits
 * from others), -2 if the exact set failed (said; nothing deleted). */
int bgp_del_permanent(struct fb_store *f, const struct fb_key *k)
{
	size_t bad;
	__u32 c = 1;

	if (f->hdr->confirm && fb_exact_get(f, k, &c))
		return -2;
	if (!c || fb_counting_check_dels(f, k, 1, &bad))
		return -1;
	return del_copy(f, k) ? -2 : 0;
}

void bgp_unadd(struct bgp_run *rn, struct fb_store *f, const struct fb_key *keys, size_t n,
	       const char *why)
{
	size_t i;

	for (i = 0; i < n; i++)
		del_copy(f, &keys[i]);
	for (i = 0; i < n; i++)
		fb_bgp_refused(&rn->b, &keys[i], why, NULL);
}

/* Withdrawn, then announced again before the withdrawal was applied. */
static bool reannounced(const struct bgp_run *rn, const struct bgp_pending *p)
{
	return p->gens && !p->moved && !p->gone && rn->ttl > 0 && fb_bgp_refs(&rn->b, &p->key);
}

/* Before the state file is written: the re-announced rules' records keep
 * one copy each (bgp_copies_trim_plan), so the file says what the filter
 * will hold once bgp_del_pending has run. */
void bgp_trim_pending(struct bgp_run *rn)
{
	size_t i;

	for (i = 0; i < rn->npend; i++)
		if (reannounced(rn, &rn->pend[i]))
			bgp_copies_trim_plan(&rn->copies, &rn->pend[i].key);
}

/* The pending deletions of rules with a lifetime, in the order of their
 * keys (then of their queueing): built when one finds none of our copies
 * left. By the keys themselves, not a hash of them a peer could make
 * collide. */
static int cmp_pend(const void *a, const void *b, void *ctx)
{
	const struct bgp_pending *p = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = memcmp(&p[x].key, &p[y].key, sizeof(p[x].key));

	return c ? c : x < y ? -1 : x > y;
}

/* Was pend[i]'s rule withdrawn earlier in this batch (withdrawn, announced
 * and withdrawn again before a commit)? Its first withdrawal took every
 * copy of ours, the second's included: nothing to say of the second. */
static bool withdrawn_before(const struct bgp_run *rn, size_t i, size_t **ix, size_t *nix)
{
	size_t a = 0, b, j;

	if (!*ix) {
		*ix = malloc(rn->npend * sizeof(**ix));
		if (!*ix)
			return false;
		for (j = 0; j < rn->npend; j++)
			if (rn->pend[j].gens && !rn->pend[j].gone)
				(*ix)[(*nix)++] = j;
		qsort_r(*ix, *nix, sizeof(**ix), cmp_pend, rn->pend);
	}
	/* The first of its key in that order: its earliest withdrawal. */
	b = *nix;
	while (a < b) {
		j = a + (b - a) / 2;
		if (memcmp(&rn->pend[(*ix)[j]].key, &rn->pend[i].key, sizeof(rn->pend[i].key)) < 0)
			a = j + 1;
		else
			b = j;
	}
	return a < *nix && (*ix)[a] < i &&
	       !memcmp(&rn->pend[(*ix)[a]].key, &rn->pend[i].key, sizeof(rn->pend[i].key));
}

/*
 * The deletions waiting for the state file, each only from the part of
 * the filter our copies are in (bgp_run.in_gens when it was queued):
 * without --ttl the permanent rules, with it the generations we wrote the
 * rule into (each announcement and refresh writes a copy: bgp_copies),
 * each copy of ours still live. Never from the other part, nor from a
 * generation we did not write it into: a copy there is the operator's or
 * guard's (the same prefix, with a lifetime or without), or a false
 * positive, and lowering its counters takes bits that other rules need.
 */
void bgp_del_pending(struct bgp_run *rn, struct fb_store *f)
{
	struct fb_gen_views gv = { 0 };
	size_t *ix = NULL;
	bool views = false, failed;
	size_t i, j, nix = 0, added = 0;

	bgp_pend_verify(rn);
	for (i = 0; i < rn->npend && !views; i++)
		if (rn->pend[i].gens) {
			if (fb_gens_views_open(f, &gv) < 0)
				return; /* they wait for the next commit */
			views = true;
		}
	for (i = 0; i < rn->npend; i++) {
		struct bgp_pending *p = &rn->pend[i];

		if (p->gone)
			continue; /* announced again: its copy stays */
		/* Noted as started before it is (STATE.deleted), a permanent
		 * copy's with its smallest counter: the next run tells by the
		 * counters whether a kill between the two cut it off, never
		 * deletes it twice. Not noted (said): not started, tried again
		 * at the next commit. */
		if (p->ix >= 0 &&
		    bgp_note_deleting(rn, p->ix, false,
				      p->gens ? -1 : (long)fb_counting_min(f, &p->key))) {
			p->again = true;
			continue;
		}
		/* Withdrawn, then announced again before this commit: one of
		 * its copies stays, in the generation ending last (the
		 * announcement's), on its record for its next withdrawal; the
		 * others leave (a copy more per flap would saturate the
		 * counters, and the withdrawal would leave the rule). */
		if (reannounced(rn, p)) {
			bgp_copies_trim(&rn->copies, &gv, &p->key, &rn->lim);
			continue;
		}
		int r = p->gens ? -!bgp_copies_del(&rn->copies, &gv, &p->key, &rn->lim)
				: bgp_del_permanent(f, &p->key);

		/* The exact set failed (said), nothing deleted: tried again at
		 * the next commit, not left in the filter for good. */
		failed = p->again;
		p->again = r == -2;
		if (p->again && p->ix >= 0)
			bgp_note_deleting(rn, p->ix, true, -1); /* nothing deleted */
		if (r == -2 && !failed)
			bgp_show(p->lineno, '?', &p->key,
				 ": could not be deleted now; tried again at the next commit");
		if (r) {
			/* Else ended with its lifetime, or withdrawn before. */
			if (r == -1 && !p->moved &&
			    !(p->gens && withdrawn_before(rn, i, &ix, &nix)))
				bgp_show(p->lineno, '?', &p->key,
					 ": no longer in the filter; nothing deleted");
			continue;
		}
		if (p->moved)
			continue;
		bgp_change(rn, p->talker, p->lineno, '-', &p->key);
		rn->deleted++;
		added += p->added;
	}
	free(ix);
	if (added)
		bgp_say("%zu rule%s added after the last write of %s, by a run that ended before "
			"the next: deleted",
			added, added == 1 ? "" : "s", rn->state);
	if (views)
		fb_gens_views_close(&gv);
	for (i = j = 0; i < rn->npend; i++)
		if (rn->pend[i].again)
			rn->pend[j++] = rn->pend[i];
	rn->npend = j;
	bgp_pend_reset(rn);
}

/*
 * The state file's "# delete" lines: what bgp_del_pending deletes once it
 * is written, for the next run to apply if this one is killed before it
 * has (the file no longer names their paths, nothing else would). Each
 * names its rule and what goes: "rule" one permanent copy (a withdrawal's,
 * or a killed run's addition), "moved" the same of a rule now with a
 * lifetime (not said); "copies" the copies in the generations,
 * "G:EXPIRES:N,..." (N in slot G's generation ending at EXPIRES), all those
 * on record, "moved-copies" the same not said (a rule made permanent, or
 * the copies trimmed off a rule announced again). A rule's later entries
 * (its first takes every copy) and those taken back are not listed.
 */
int bgp_save_deleting(struct bgp_run *rn, FILE *fp)
{
	char text[FB_FLOW_STR];
	size_t *ix = NULL, nix = 0, i;
	long n = 0;
	unsigned g;

	for (i = 0; i < rn->npend; i++) {
		struct bgp_pending *p = &rn->pend[i];
		const struct bgp_copy *r;
		bool trim, any = false;

		p->ix = -1;
		if (p->gone)
			continue;
		fb_flow_format(&p->key, text, sizeof(text));
		if (!p->gens) {
			fprintf(fp, "# delete\t%s\t%s\n", p->moved ? "moved" : "rule", text);
			p->ix = n++;
			continue;
		}
		if (withdrawn_before(rn, i, &ix, &nix))
			continue;
		if (!ix) {
			errno = ENOMEM;
			return -1;
		}
		if (!(r = bgp_copies_find(&rn->copies, &p->key)))
			continue;
		trim = reannounced(rn, p);
		for (g = 0; g < FB_GEN_SLOTS; g++) {
			unsigned c = r->extra[g] + (trim ? 0 : r->n[g]);

			if (!c || !rn->copies.expires[g])
				continue;
			if (!any)
				fprintf(fp, "# delete\t%s\t%s\t",
					trim || p->moved ? "moved-copies" : "copies", text);
			fprintf(fp, "%s%u:%llu:%u", any ? "," : "", g,
				(unsigned long long)rn->copies.expires[g], c);
			any = true;
		}
		if (any) {
			fputc('\n', fp);
			p->ix = n++;
		}
	}
	free(ix);
	return ferror(fp) ? -1 : 0;
}

size_t bgp_pending_left(const struct bgp_run *rn)
{
	char tail[300], text[FB_FLOW_STR];
	size_t i;

	for (i = 0; i < rn->npend; i++) {
		if (rn->pend[i].gone)
			continue;
		fb_flow_format(&rn->pend[i].key, text, sizeof(text));
		snprintf(tail, sizeof(tail),
			 ": not deleted, this run ends: still in filter '%s' (flowbloom del %s %s "
			 "takes it out)",
			 rn->name, rn->name, text);
		bgp_show(rn->pend[i].lineno, '?', &rn->pend[i].key, tail);
	}
	return rn->npend - rn->ngone;
}

static int push_pending(struct bgp_run *rn, const struct fb_key *k, size_t lineno, bool gens,
			bool moved, unsigned talker)
{
	if (rn->npend == rn->cap_pend) {
		size_t cap = rn->cap_pend ? 2 * rn->cap_pend : 64;
		struct bgp_pending *p = realloc(rn->pend, cap * sizeof(*p));

		if (!p) {
			fb_err("out of memory");
			return -1;
		}
		rn->pend = p;
		rn->cap_pend = cap;
	}
	rn->pend[rn->npend] = (struct bgp_pending){
		.key = *k, .lineno = lineno, .gens = gens, .moved = moved, .ix = -1
	};
	rn->pend[rn->npend++].talker = talker;
	bgp_pend_count(rn, talker, 1);
	return 0;
}

int bgp_queue_del(struct bgp_run *rn, const struct fb_key *k)
{
	return push_pending(rn, k, 0, false, false, FB_BGP_NO_PEER);
}

/* The line's deletions (b.del) wait for the next commit, which writes
 * the state file first: 0, or -1 out of memory. */
int bgp_queue_dels(struct bgp_run *rn, size_t lineno, unsigned talker)
{
	size_t i;

	for (i = 0; i < rn->b.ndel; i++)
		if (push_pending(rn, &rn->b.del[i], lineno, rn->in_gens, false, talker))
			return -1;
	return 0;
}

static bool has_copies(const struct bgp_copy *r)
{
	unsigned g;

	for (g = 0; r && g < FB_GEN_SLOTS; g++)
		if (r->n[g])
			return true;
	return false;
}

/*
 * The filter array changed under us (load --replace, or destroy and
 * create): our rules are not in it any more; add them again. One the new
 * array refuses is refused as a line's addition is: its routes are
 * forgotten whole and named once, without a line (none caused it), so the
 * state file never says it is in the filter, a withdrawal deletes nothing
 * and an announcement tries it again. But load --replace --ttl replaces
 * the rules with a lifetime only and carries the permanent rules over as
 * they were, saying so (their identity, store.h perm_id, is still the one
 * the state file names): our permanent copies are still there, none is
 * added again (a second copy would keep the rule blocked after its
 * withdrawal deleted one).
 *
 * The deletions waiting for the next state write (routes withdrawn before
 * we saw the new array, rules a killed run added, old copies of a --ttl
 * change): those of permanent copies stay if the permanent rules were
 * carried over, else are dropped, with or without --ttl, as the new
 * array's permanent rules hold nothing known to be ours (a copy there is
 * the operator's: deleting it would take bits from his rules; the rules
 * added again come from our table, which no longer has them).
 * Those of copies with a lifetime, with --ttl, stay: a replace carries
 * the rules with a lifetime into the new filter, withdrawn ones included,
 * and dropping their deletions would let a withdrawn route block traffic
 * until its lifetime ends. Deletions take
 * our copies out of the generations only, never out of the array (the
 * operator's); a rule none of whose copies is left (a destroy and create,
 * or load --replace --ttl's own generations) is reported "no longer in the
 * filter; nothing deleted".
 *
 * in_line: called by apply_line, whose additions wait and whose deletions
 * (b.del) it queues itself. Called with the filter locked.
 */
int bgp_resync(struct bgp_run *rn, struct fb_store *f, bool in_line)
{
	struct fb_key *keys;
	size_t n = fb_bgp_rules(&rn->b, &keys), i, j, lineno = rn->b.lineno;
	struct fb_gen_views gv;
	/* The permanent rules carried over, and ours in them. */
	bool kept = rn->perm_id && f->perm_id == rn->perm_id, all = kept && !rn->in_gens;

	if (!keys) {
		/* The run ends rather than count them in a filter that
		 * lacks them; the next start adds them from the state file. */
		fb_err("out of memory listing the BGP rules to add again");
		return -1;
	}
	/* Rules with a lifetime are carried by a replace: only those the
	 * filter lost (destroyed and created again, or load --replace --ttl)
	 * are added, those with no copy of ours in its generations. Ours
	 * permanent and carried: none (bgp_move follows if --ttl moves them). */
	if (all)
		n = 0;
	else if (rn->ttl > 0 && fb_gens_views_open(f, &gv) >= 0) {
		bgp_copies_verify(&rn->copies, &gv);
		for (i = j = 0; i < n; i++)
			if (!has_copies(bgp_copies_find(&rn->copies, &keys[i])))
				keys[j++] = keys[i];
		n = j;
		fb_gens_views_close(&gv);
	}
	n = fb_bgp_lost(&rn->b, keys, n);
	if (rn->filter_id && n)
		bgp_say("filter '%s' was replaced: adding its %zu BGP rules again", f->name, n);
	rn->b.lineno = 0;
	bgp_add_rules(rn, f, keys, &n, "the BGP rules added again");
	rn->b.lineno = lineno;
	fb_bgp_added(&rn->b, keys, n);
	rn->added += n;
	free(keys);
	/* Only the deletions of copies with a lifetime stay (the
	 * generations a replace carries: bgp_copies_verify says which),
	 * and those of permanent copies if the permanent rules were carried.
	 * Else one of a permanent copy was of the old array's permanent rules
	 * (a withdrawal's, a killed run's addition, a --ttl change's old
	 * copy): a copy in the new array's is not known to be ours. */
	bgp_pend_verify(rn);
	for (i = j = 0; i < rn->npend; i++)
		if (rn->pend[i].gens ? rn->ttl > 0 : kept)
			rn->pend[j++] = rn->pend[i];
	if (j < rn->npend) {
		rn->npend = j;
		bgp_pend_reset(rn);
		for (i = 0; i < j; i++)
			rn->ngone += rn->pend[i].gone;
	}
	if (!all)
		rn->in_gens = rn->ttl > 0;
	rn->filter_id = f->bits_id;
	rn->perm_id = f->perm_id;
	rn->dirty = true;
	/* A refused route's part the new array holds (a rule with a
	 * lifetime, carried) is deleted as a withdrawn one is. */
	if (in_line || !rn->b.ndel)
		return 0;
	if (bgp_queue_dels(rn, 0, FB_BGP_NO_PEER))
		return -1;
	fb_bgp_done(&rn->b);
	return 0;
}

/*
 * A restart with the other --ttl setting: the state file says our rules
 * are in the permanent rules and this run gives them a lifetime, or the
 * other way round. Each is added where this run puts it, and its old copy
 * deleted once the state file says where they are now (a crash between
 * leaves an old copy, never a rule the file names missing). Moved into
 * the generations, the permanent copy goes (it would never end); moved out
 * of them, the copies we wrote into the generations (they would end while
 * the route stands, and a withdrawal would not find them). A rule the
 * part refuses is refused as a refresh is: its route whole, named once.
 */
int bgp_move(struct bgp_run *rn, struct fb_store *f)
{
	struct fb_key *keys;
	size_t n = fb_bgp_rules(&rn->b, &keys), i, lineno = rn->b.lineno;
	bool old = rn->in_gens;

	if (!keys) {
		fb_err("out of memory listing the BGP rules to move");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (push_pending(rn, &keys[i], 0, old, true, FB_BGP_NO_PEER)) {
			free(keys);
			return -1;
		}
	rn->in_gens = rn->ttl > 0;
	rn->b.lineno = 0;
	bgp_add_rules(rn, f, keys, &n,
		      rn->in_gens ? "the BGP rules given a lifetime"
				  : "the BGP rules made permanent");
	rn->b.lineno = lineno;
	free(keys);
	/* The refused ones' deletions are queued above, from where they are. */
	fb_bgp_done(&rn->b);
	rn->dirty = true;
	return 0;
}
