// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom guard`: read the sketch of an attached filter every interval,
 * ban the addresses whose traffic is certainly above a threshold (lower
 * confidence limit, monitor/guard.h) by adding them with a lifetime to a
 * drop filter, extend a ban while its address stays above, and report the
 * end of each ban. The lifetimes are kept by the data path itself
 * (store/gens.h): a ban ends on time whether guard still runs or not.
 *
 * New bans stop at the ban limit (monitor/guard.h): BAN's capacity, and
 * --max-bans; an address refused by it is reported each interval it is
 * above, counted, never announced.
 *
 * Events: one line each on stderr (a JSON object with -j); counters pinned
 * beside the ban filter for `metrics`; a queue beside NAME that `ipfix NAME`
 * turns into IPFIX records; with --announce, ExaBGP API commands
 * on stdout (a blackhole route with community 65535:666, or a FlowSpec
 * discard) and their withdrawal when the ban ends or guard stops, unless
 * another running guard's ban of the address holds it (guard_routes.c).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "clock.h"
#include "cmd.h"
#include "guard.h"
#include "fleet/bgp.h"
#include "monitor/guard.h"
#include "monview.h"
#include "output.h"
#include "parse.h"
#include "report.h"
#include "rules/capacity.h"
#include "rules/lifetime.h"
#include "store/gens.h"
#include "store/jiffies.h"
#include "types/bits.h"
#include "util.h"

/* At the end, the withdrawals for ExaBGP get CMDQ_STOP_WAIT seconds. */
#define CMDQ_STOP_WAIT 1.0
/* Whether NAME or BAN is gone is looked at this often. */
#define GONE_POLL_S 0.5

/* What evaluate() does with an address above the threshold. */
enum { ST_EXTEND, ST_NEW, ST_LIMITED, ST_HELD };
/* Why a new ban needs no room: another guard's, or maybe an older one's. */
enum { OLD_NONE, OLD_REC, OLD_LEGACY };

/* BAN's lock. A SIGTERM while another writer (a long `load`) holds it
 * ends the wait: guard stops then as at any other time, without an error
 * (*stop). 0, or -1 (reported unless *stop). */
static int lock_ban(struct fb_store *bf, bool *stop)
{
	bool quiet = fb_report_quiet;
	int rc;

	fb_report_quiet = true;
	rc = fb_store_lock(bf);
	fb_report_quiet = quiet;
	*stop = rc && fb_interrupted();
	if (rc && !*stop)
		fb_report_err("%s", fb_report_last);
	return rc;
}

static struct ban *find(struct guard *g, const struct fb_key *k)
{
	size_t i;

	for (i = 0; i < g->nbans; i++)
		if (!memcmp(&g->bans[i].key, k, sizeof(*k)))
			return &g->bans[i];
	return NULL;
}

static struct ban *push(struct guard *g, const struct fb_key *k)
{
	if (g->nbans == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		struct ban *b = realloc(g->bans, cap * sizeof(*b));

		if (!b)
			return NULL;
		g->bans = b;
		g->cap = cap;
	}
	memset(&g->bans[g->nbans], 0, sizeof(g->bans[0]));
	g->bans[g->nbans].key = *k;
	return &g->bans[g->nbans++];
}

/* Bans whose lifetime ran out: the data path stopped matching them when
 * the kernel's jiffies reached their expiry (fb_jiffies_now() is never
 * ahead of the kernel's). Spared addresses below for a TTL are forgotten
 * silently: kept for good, a flood from ever new addresses of a --never
 * prefix grew the list (and each interval's lookups in it) without end. */
static void expire(struct guard *g, struct fb_store *bf)
{
	__u64 now = fb_jiffies_now();
	bool locked = false, stop;
	size_t i, j;

	/* Their routes' record is written under BAN's lock (read only
	 * without it: the lock not had, a SIGTERM while another writer
	 * holds it). */
	for (i = 0; g->rfd >= 0 && !locked && i < g->nbans; i++)
		if (!g->bans[i].spared && g->bans[i].expires <= now)
			locked = !lock_ban(bf, &stop);
	if (fb_guard_taken_due(g, now)) {
		locked = locked || !lock_ban(bf, &stop);
		fb_guard_taken_expire(g, now, locked);
	}
	for (i = j = 0; i < g->nbans; i++) {
		struct ban *b = &g->bans[i];

		if (b->spared && b->expires <= now)
			continue;
		if (!b->spared && b->expires <= now) {
			fb_guard_event(g, "unban", &b->key, NULL, 0, -1, fb_now() - b->since);
			fb_guard_withdraw(g, &b->key, locked);
			g->delta.unbans++;
			g->active--;
			continue;
		}
		g->bans[j++] = *b;
	}
	g->nbans = j;
	if (locked)
		fb_store_unlock(bf);
}

/* The earliest expiry among the bans, as a fb_now() deadline (0: none). */
static double next_end(const struct guard *g)
{
	double t = 0, s;
	size_t i;

	for (i = 0; i < g->nbans; i++) {
		if (g->bans[i].spared)
			continue;
		s = fb_now() + fb_jiffies_secs(g->bans[i].expires) + fb_jiffies_tick();
		if (!t || s < t)
			t = s;
	}
	return t;
}

/* One interval's addresses: ban or extend those certainly above, up to
 * the ban limit. */
static int evaluate(struct guard *g, struct fb_store *bf, int sfd, const struct fb_guard_addr *a,
		    int n, double secs)
{
	struct fb_key *keys = calloc(n ? n : 1, sizeof(*keys));
	unsigned char *st = calloc(n ? n : 1, sizeof(*st)), *old = calloc(n ? n : 1, 1);
	const struct fb_guard_addr **of = calloc(n ? n : 1, sizeof(*of));
	struct fb_gen where = { 0 };
	struct fb_gen_views gv;
	size_t nk = 0, nw = 0, bad, i, nold = 0;
	/* A ban that lasts until then needs nothing written this interval. */
	__u64 room = 0, until = fb_jiffies_after(g->ttl);
	bool locked = false, views = false, stop;
	int rc = -1, err;

	if (!keys || !st || !of || !old) {
		fb_err("out of memory");
		goto out;
	}
	for (i = 0; i < (size_t)n; i++) {
		bool above = (g->pps > 0 && a[i].lo_packets / secs > g->pps) ||
			     (g->bps > 0 && a[i].lo_bytes * 8.0 / secs > g->bps);
		struct ban *b;

		if (!above)
			continue;
		b = find(g, &a[i].key);
		if (!b && g->never.n && fb_never_has(&g->never, &a[i].key)) {
			b = push(g, &a[i].key);
			if (!b)
				goto oom;
			b->spared = true;
			b->expires = until;
			fb_guard_event(g, "spare", &a[i].key, &a[i], secs, -1, -1);
			continue;
		}
		if (b && b->spared) {
			b->expires = until;
			continue;
		}
		/* HELD: its generation already lasts a TTL from now, so
		 * nothing to write (a copy per interval would saturate a
		 * counting filter's counters) if the filter still has it. */
		st[nk] = !b ? ST_NEW : b->expires >= until ? ST_HELD : ST_EXTEND;
		of[nk++] = &a[i];
	}
	g->delta.intervals++;
	if (nk && !g->dry_run) {
		if (lock_ban(bf, &stop)) {
			rc = stop ? 0 : -1;
			goto out;
		}
		locked = true;
	}
	/* The bans in force not ours (those BAN's generations still hold):
	 * against --max-bans. New, of an address another guard banned: its
	 * ban, now ours too (OLD_REC); of one BAN holds while an older
	 * guard's are in force: maybe one of those (OLD_LEGACY). */
	views = nk && fb_gens_views_open(bf, &gv) >= 0;
	if (nk && fb_guard_bans_others(g, views ? &gv : NULL, locked))
		goto out;
	for (i = 0; i < nk; i++)
		if (st[i] == ST_NEW &&
		    fb_guard_bans_has(g->bfd, views ? &gv : NULL, &of[i]->key, fb_jiffies_now()))
			old[i] = OLD_REC;
	/* What a `load --replace --ttl` took away (it replaces the
	 * generations) is written again. */
	for (i = 0; locked && views && i < nk; i++) {
		if (st[i] == ST_HELD && !fb_bits_query_gens(bf, &gv, &of[i]->key, until))
			st[i] = ST_EXTEND;
		if (st[i] == ST_NEW && !old[i] && nold < g->legacy &&
		    fb_guard_gens_hold(&gv, &of[i]->key, fb_jiffies_now()))
			old[i] = OLD_LEGACY, nold++;
	}
	if (views)
		fb_gens_views_close(&gv);
	views = false;
	if (nk && fb_capacity_room(&g->lim, bf, g->active, g->dry_run, &room))
		goto out;
	/* The record of the bans in force has its own bound. */
	if (nk && g->bfd >= 0 && !g->dry_run) {
		__u64 max = fb_guard_bans_max(g->bfd);

		room = g->in_force >= max ? 0 : room < max - g->in_force ? room : max - g->in_force;
	}
	/* The heaviest new bans first, up to the room (held as reported
	 * counts them); extensions always, and an earlier guard's bans. */
	for (i = 0; i < nk; i++) {
		if (st[i] == ST_NEW && !old[i] && !room)
			st[i] = ST_LIMITED;
		else if (st[i] == ST_NEW && !old[i])
			room--, g->lim.held++;
		if (st[i] != ST_LIMITED && st[i] != ST_HELD)
			keys[nw++] = of[i]->key;
	}
	if (nw && !g->dry_run) {
		/* One batch, one generation: new bans and extensions alike
		 * live ttl from now. */
		err = fb_gens_add(bf, keys, nw, g->ttl, &bad, &where);
		if (err) {
			/* BAN refused them (no address length, rule shape or
			 * generation slot left): said and counted, nothing
			 * banned this interval, guard goes on (the bans
			 * resume once BAN has room). Another error ends it. */
			g->delta.refused += nw;
			fb_guard_bans_flush(g, bf, sfd);
			if (err == -1)
				fb_err("'%s' cannot take more address lengths; nothing banned",
				       g->into);
			else if (err == -4 && bad != (size_t)-1)
				fb_err("'%s' cannot take more rule shapes; nothing banned",
				       g->into);
			if (err == -1 || err == -4)
				rc = 0;
			goto out;
		}
		fb_capacity_wrote(&g->lim, &where, nw);
		/* In BAN: they count as in force, whichever guard looks. */
		fb_guard_bans_put(g->bfd, keys, nw, where.expires);
		/* Their routes, announced or to be: held until then. */
		fb_guard_hold(g, bf, keys, nw, where.expires);
	} else if (nw) {
		where.expires =
			fb_jiffies_after(g->ttl) + (__u64)(g->ttl / FB_GEN_DIV / fb_jiffies_tick());
	}
	if (locked)
		fb_store_unlock(bf);
	locked = false;
	for (i = 0; i < nk; i++) {
		const struct fb_key *k = &of[i]->key;
		struct ban *b;

		if (st[i] == ST_LIMITED) {
			/* Not banned, not announced: said and counted. */
			g->delta.limited++;
			fb_guard_event(g, "limit", k, of[i], secs, -1, -1);
			continue;
		}
		b = st[i] == ST_NEW ? push(g, k) : find(g, k);
		if (!b)
			goto oom;
		if (st[i] != ST_HELD && where.expires > b->expires)
			b->expires = where.expires;
		if (st[i] != ST_NEW) {
			g->delta.extended++;
			continue;
		}
		b->since = fb_now();
		g->delta.bans++;
		g->active++;
		g->legacy -= old[i] == OLD_LEGACY && g->legacy;
		g->in_force += !old[i] && !g->dry_run;
		if (b->expires > g->last_end && !g->dry_run)
			g->last_end = b->expires;
		fb_guard_event(g, "ban", k, of[i], secs, fb_jiffies_secs(b->expires), -1);
		fb_guard_announce(g, k, false);
	}
	rc = 0;
	goto out;
oom:
	fb_err("out of memory");
out:
	if (views)
		fb_gens_views_close(&gv);
	if (locked)
		fb_store_unlock(bf);
	free(keys);
	free(st);
	free(of);
	free(old);
	return rc;
}

static int parse(int argc, char **argv, struct guard *g)
{
	static const struct option opts[] = {
		{ "into", required_argument, NULL, 'i' },
		{ "pps", required_argument, NULL, 'p' },
		{ "bps", required_argument, NULL, 'b' },
		{ "by", required_argument, NULL, 'y' },
		{ "ttl", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'I' },
		{ "never", required_argument, NULL, 'n' },
		{ "dry-run", no_argument, NULL, 'd' },
		{ "announce", no_argument, NULL, 'a' },
		{ "flowspec", no_argument, NULL, 'f' },
		{ "count", required_argument, NULL, 'c' },
		{ "max-bans", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const bys[] = { "src", "dst", NULL };
	static const int by_v[] = { 0, 1 };
	bool announce_given = false;
	const char *never = NULL;
	int c, v;

	g->interval = 1;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			g->into = optarg;
			break;
		case 'p':
			if (fb_parse_double("--pps", optarg, 0.001, 1e12, &g->pps))
				return 2;
			break;
		case 'b':
			if (fb_parse_double("--bps", optarg, 0.001, 1e15, &g->bps))
				return 2;
			break;
		case 'y':
			if ((v = fb_pick("--by", optarg, bys, by_v)) < 0)
				return 2;
			g->by_dst = v;
			break;
		case 't':
			if (fb_parse_duration("--ttl", optarg, FB_TTL_MIN, FB_TTL_MAX, &g->ttl))
				return 2;
			break;
		case 'I':
			if (fb_parse_duration("--interval", optarg, 0.05, 86400, &g->interval))
				return 2;
			break;
		case 'n':
			never = optarg;
			break;
		case 'd':
			g->dry_run = true;
			break;
		case 'a':
			g->announce = g->announce ? g->announce : ANN_RTBH;
			announce_given = true;
			break;
		case 'f':
			g->announce = ANN_FLOWSPEC;
			break;
		case 'c':
			if (fb_parse_u64_range("--count", optarg, 1, 1ULL << 40, &g->count))
				return 2;
			break;
		case 'm':
			if (fb_parse_u64_range("--max-bans", optarg, 1, 1ULL << 32,
					       &g->lim.max_bans))
				return 2;
			break;
		default:
			return fb_bad_option(c, argv);
		}
	}
	if (argc - optind != 1)
		return fb_usage(argc - optind < 1 ? "missing NAME" : "too many arguments");
	g->name = argv[optind];
	if (!g->into)
		return fb_usage("missing --into BAN (the drop filter bans go to; may be NAME)");
	if (g->pps <= 0 && g->bps <= 0)
		return fb_usage("missing --pps N or --bps N (the threshold)");
	if (g->ttl <= 0)
		return fb_usage("missing --ttl DURATION (how long a ban lasts)");
	/* A ban is extended at the end of each interval: one that ends
	 * sooner lapses while its address still floods, and is made again
	 * (unbanned, banned, withdrawn and announced every interval). */
	if (g->ttl <= g->interval)
		return fb_usage(
			"--ttl %.10g s is not longer than --interval %.10g s: a ban would end "
			"before guard extends it",
			g->ttl, g->interval);
	if (g->announce && !announce_given)
		return fb_usage("--flowspec is a kind of --announce: give both");
	if (never && fb_never_read(never, &g->never))
		return 1;
	return 0;
}

int cmd_guard(int argc, char **argv)
{
	struct guard g = { .evfd = -1, .bfd = -1, .rfd = -1 };
	struct fb_mon_snap base = { 0 }, now = { 0 };
	struct fb_guard_addr *a = NULL;
	struct fb_monitor m;
	struct fb_store f, bf;
	double t0, tick, end, wake, secs, from, at;
	int rc, sfd = -1, n;
	__u64 done = 0, held;
	bool derived, stop, locked;
	size_t i;

	/* -j makes the events JSON (on stderr); errors, usage errors too,
	 * stay text on stderr: stdout carries only ExaBGP commands, and
	 * ExaBGP would read a JSON error object there as one. */
	g.json = fb_json;
	fb_json = false;
	rc = parse(argc, argv, &g);
	if (rc)
		return rc;
	rc = 1;
	if (fb_monview_open(g.name, FB_MON_SKETCH, &f, &m))
		goto free_never;
	/* A sketch by address counts one side's addresses: the other side's
	 * are not in it. */
	g.by_addr = m.cfg.flags & FB_MON_BY_ADDR;
	if (g.by_addr && g.by_dst != !!(m.cfg.flags & FB_MON_BY_DST)) {
		fb_err("the sketch of '%s' counts %s addresses (attach --sketch-by %s): guard "
		       "--by %s needs a sketch by flow or by %s address (attach --sketch-by "
		       "flow or %s)",
		       g.name, fb_monview_key_noun(&m), fb_monitor_sketch_by(&m),
		       g.by_dst ? "dst" : "src", g.by_dst ? "destination" : "source",
		       g.by_dst ? "dst" : "src");
		goto close_mon;
	}
	if (fb_store_open(g.into, &bf))
		goto close_mon;
	if (bf.hdr->action != FB_ACTION_DROP)
		fprintf(stderr,
			"flowbloom: note: '%s' has default action %s: its attachments must "
			"drop what matches (attach --action drop)\n",
			g.into, FB_NAME(fb_action_names, bf.hdr->action));
	if (fb_gens_supported(&bf))
		goto close_ban;
	if (!fb_capacity_held(&bf, fb_jiffies_now(), &held) &&
	    held >= fb_capacity_of(bf.hdr, &derived))
		fprintf(stderr,
			"flowbloom: note: '%s' holds %llu flows, its capacity %llu%s: no new ban "
			"until some of them end\n",
			g.into, (unsigned long long)held,
			(unsigned long long)fb_capacity_of(bf.hdr, NULL),
			derived ? " (m ln 2 / k)" : "");
	/* Each ban is a route upstream: a flood from spoofed sources makes
	 * as many as the ban limit lets it, and a peer's maximum-prefix
	 * limit closes the session past its own. */
	if (g.announce != ANN_NONE && !g.lim.max_bans)
		fprintf(stderr,
			"flowbloom: note: --announce without --max-bans: up to %llu routes (the "
			"capacity of '%s') may be announced under a flood from many sources; "
			"--max-bans N keeps them below what the peers accept\n",
			(unsigned long long)fb_capacity_of(bf.hdr, NULL), g.into);
	if (!g.dry_run && (sfd = fb_guard_stats_open(&bf, true)) < 0)
		goto close_ban;
	if (fb_guard_bans_start(&g, &bf, sfd) || fb_guard_routes_start(&g, &bf))
		goto close_ban;
	g.evfd = g.dry_run ? -1 : fb_guard_events_open(&f, true);
	if (!g.dry_run && g.evfd < 0)
		goto close_ban;
	fb_catch_interrupt();
	/* A terminal or ssh session gone ends it as SIGTERM does: the routes
	 * it announced withdrawn (unless nohup ignores it). */
	fb_catch_hangup();
	/* A reader that went away (ExaBGP stopped) is a write error: guard
	 * says so and stops, rather than dying of SIGPIPE. */
	if (g.announce != ANN_NONE && !g.dry_run)
		signal(SIGPIPE, SIG_IGN);
	/* Routes a killed guard left announced: withdrawn, or held to
	 * their bans' ends (a record that cannot be read: said, and guard
	 * goes on). */
	if (g.rfd >= 0 && !lock_ban(&bf, &stop)) {
		fb_guard_routes_adopt(&g, &bf);
		fb_store_unlock(&bf);
	}
	from = fb_now();
	if (fb_monitor_snap_take(&m, &base))
		goto close_ban;
	t0 = tick = fb_now();
	while (!fb_interrupted() && !g.q.broken) {
		struct fb_mon_snap lower;

		/* Wake at the interval's end, or a ban's if sooner, and
		 * every half second: a filter destroyed is said then, not
		 * at the end of a long interval. */
		end = tick + g.interval;
		wake = next_end(&g);
		if (!wake || wake > end)
			wake = end;
		if (wake > fb_now() + GONE_POLL_S)
			wake = fb_now() + GONE_POLL_S;
		if (!fb_clock_sleep_until(wake))
			break;
		/* What a slow reader left: it may have room now. */
		fb_cmdq_flush(&g.q, 0);
		expire(&g, &bf);
		if (fb_monview_gone(&f, &m))
			goto out;
		/* BAN destroyed: its lock fails, and a filter made again
		 * under its name is another one (a ban into its old maps
		 * would drop nothing). */
		if (fb_store_gone(&bf)) {
			fb_monview_report_gone(&bf);
			goto out;
		}
		if (fb_now() < end)
			continue;
		/* Rates up to now's reading, the next interval from
		 * lower's: no packet falls between the two (monmaps.h). A
		 * reading takes time (a large sketch, many CPUs: tenths of
		 * a second), and each cell is read at its own moment: the
		 * counts span at most from the start of base's reading to
		 * the end of now's. Rates over that span are never above
		 * the truth; over the time between two readings' ends they
		 * were (a source at 1000 pps banned at 1080). */
		at = fb_now();
		if (fb_monitor_snap_pair(&m, fb_monitor_snap_take, &lower, &now))
			goto out;
		tick = fb_now();
		secs = tick - from;
		from = at;
		n = fb_guard_addresses(&m, &now, &base, g.by_dst, &a);
		fb_monitor_snap_free(&base);
		fb_monitor_snap_free(&now);
		base = lower;
		if (n < 0 || evaluate(&g, &bf, sfd, a, n, secs))
			goto out;
		free(a);
		a = NULL;
		if (sfd >= 0 && !fb_interrupted() && !lock_ban(&bf, &stop)) {
			fb_guard_bans_flush(&g, &bf, sfd);
			fb_store_unlock(&bf);
		}
		if (g.count && ++done >= g.count)
			break;
	}
	rc = g.q.broken ? 1 : 0;
out:
	/* Bans in force end by themselves; the routes announced for them
	 * would not, upstream: withdrawn now, if stdout takes them in time,
	 * but those another guard's ban holds (its end withdraws them). BAN
	 * gone: its lock would fail, saying so a second time. */
	locked = g.rfd >= 0 && !fb_store_gone(&bf) && !lock_ban(&bf, &stop);
	g.stopping = true;
	for (i = 0; i < g.nbans; i++)
		if (!g.bans[i].spared)
			fb_guard_withdraw(&g, &g.bans[i].key, locked);
	fb_guard_taken_expire(&g, fb_jiffies_now(), locked);
	if (locked)
		fb_store_unlock(&bf);
	if (fb_cmdq_flush(&g.q, fb_now() + CMDQ_STOP_WAIT) && !g.q.broken) {
		fb_err("guard: %zu commands for ExaBGP not written: stdout not read for %g s",
		       fb_cmdq_lines(&g.q), CMDQ_STOP_WAIT);
		rc = 1;
	}
	if (!g.json)
		fprintf(stderr,
			"flowbloom: guard: stopped after %.1f s; %llu ban%s in force %s "
			"by %s\n",
			fb_now() - t0, (unsigned long long)g.active, g.active == 1 ? "" : "s",
			g.active == 1 ? "ends" : "end", g.active == 1 ? "itself" : "themselves");
	/* BAN gone (destroyed, the reason guard stops, or BAN is NAME):
	 * its counters went with it, and its lock would only fail, saying
	 * so a second time. */
	if (sfd >= 0 && !fb_store_gone(&bf) && !lock_ban(&bf, &stop)) {
		fb_guard_bans_flush(&g, &bf, sfd);
		fb_store_unlock(&bf);
	}
close_ban:
	if (sfd >= 0)
		close(sfd);
	if (g.evfd >= 0)
		close(g.evfd);
	if (g.bfd >= 0)
		close(g.bfd);
	if (g.rfd >= 0)
		close(g.rfd);
	fb_store_close(&bf);
close_mon:
	free(a);
	fb_monitor_snap_free(&base);
	fb_monitor_snap_free(&now);
	fb_monview_close(&f, &m);
free_never:
	fb_never_free(&g.never);
	free(g.bans);
	free(g.taken);
	free(g.q.buf);
	return rc;
}
