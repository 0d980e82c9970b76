// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom status`: every flowbloom XDP attachment on the machine, in
 * every network namespace, with the filter it really uses. An attachment
 * whose maps hold no filter (an object loaded by `ip -n` or `ip netns
 * exec`, whose private bpffs hides the pins) passes every packet: status
 * says so and exits 3, so a cron job or a monitoring check catches it. So
 * does one on a device whose packets reach XDP without an Ethernet header
 * (an object loaded by `ip link` on a tun, WireGuard or other layer-3
 * device, which `attach` refuses): it passes every packet as non-IP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture/capctl.h"
#include "cmd.h"
#include "flowbloom/monitor.h"
#include "store/discover.h"
#include "output.h"
#include "prog/loader.h"
#include "report.h"
#include "store/pintree.h"
#include "store/store.h"
#include "util.h"

/* Exit status when some attachment fails open, on empty maps or on a
 * device without an Ethernet header (1 and 2 are taken). */
#define FB_EXIT_FAILS_OPEN 3

static const char *maps_name(enum fb_att_maps m)
{
	switch (m) {
	case FB_ATT_FILTER:
		return "filter";
	case FB_ATT_GLOBALS:
		return "globals";
	case FB_ATT_PRIVATE:
		return "private";
	case FB_ATT_UNKNOWN:
		return "unknown";
	default:
		return "other";
	}
}

/* Does the attachment's device hand XDP frames without an Ethernet
 * header (its link type known, not Ethernet)? */
static bool not_ethernet(const struct fb_att *a)
{
	return a->link_type >= 0 && !fb_link_ethernet(a->link_type);
}

/* What an attachment decides with: its action (the filter's own unless
 * attach --action said another), what it does with malformed packets,
 * and whether it was loaded multi-buffer. false if unknown: another
 * build's program, or maps that hold no filter of a name. */
struct att_settings {
	const char *action;
	const char *sketch_by; /* what its sketch counts (attach --sketch-by); NULL: no sketch */
	bool malformed_drop, frags;
};

/* The first filter settings() could not open now (ulimit -n, memory, the
 * kernel's refusal) or would not (its directory or a pin not trusted):
 * what it uses is not known, and status fails. */
static char unread[sizeof(fb_report_last)];

static bool settings(const struct fb_att *a, struct att_settings *out)
{
	struct fb_load_seen s;
	struct fb_store f;
	const char *name = a->maps == FB_ATT_FILTER ? a->filter : NULL;
	__u8 own = 0;
	bool quiet = fb_report_quiet;
	int err;

	if (!name || fb_load_seen(a->prog_id, &s))
		return false;
	/* The filter's own action, needed only where the attachment has none. */
	if (!s.action) {
		fb_report_quiet = true;
		err = fb_store_open(name, &f);
		fb_report_quiet = quiet;
		if (err && !unread[0] && (f.fail == FB_OPEN_UNKNOWN || f.fail == FB_OPEN_UNTRUSTED))
			snprintf(unread, sizeof(unread), "%s", fb_report_last);
		if (err)
			return false;
		own = f.hdr->action;
		fb_store_close(&f);
	}
	out->action = FB_NAME(fb_action_names, fb_seen_action(&s, own));
	out->malformed_drop = fb_seen_malformed_drop(&s, own);
	out->frags = s.frags;
	/* The program's own: a sketch by address in place of by flow. */
	out->sketch_by = s.mon & FB_MON_BY_SRC	 ? "src"
			 : s.mon & FB_MON_BY_DST ? "dst"
			 : s.mon & FB_MON_SKETCH ? "flow"
						 : NULL;
	return true;
}

static void uses(const struct fb_att *a, char *buf, size_t len)
{
	char what[96];
	size_t n;

	switch (a->maps) {
	case FB_ATT_FILTER: {
		struct att_settings st;

		/* A sketch by address is said: top and guard read it so. */
		if (settings(a, &st))
			snprintf(buf, len, "%s (%s; malformed %s%s%s%s)", a->filter, st.action,
				 st.malformed_drop ? "drop" : "pass",
				 st.frags ? "; multi-buffer" : "",
				 st.sketch_by && strcmp(st.sketch_by, "flow") ? "; sketch by " : "",
				 st.sketch_by && strcmp(st.sketch_by, "flow") ? st.sketch_by : "");
		else
			snprintf(buf, len, "%s", a->filter);
		break;
	}
	case FB_ATT_GLOBALS:
		/* Filter default exists, and these are not its maps: pinned
		 * by this program, loaded while default's pins were missing. */
		snprintf(buf, len, "%s",
			 fb_pin_exists(FB_IPROUTE_FILTER)
				 ? "xdp/globals, NOT default's maps (fails open: reload it "
				   "after check --repair default)"
				 : "xdp/globals, NO FILTER YET (fails open)");
		break;
	case FB_ATT_PRIVATE:
		snprintf(buf, len, "PRIVATE MAPS (fails open)");
		break;
	case FB_ATT_UNKNOWN:
		snprintf(buf, len, "UNKNOWN (the pins under %s not read: %s; map %u)",
			 fb_pin_root(), strerror(a->name_err), a->filter_map_id);
		break;
	default:
		snprintf(buf, len, "a filter not under %s (map %u)", fb_pin_root(),
			 a->filter_map_id);
	}
	if (!not_ethernet(a))
		return;
	n = strlen(buf);
	fb_link_describe(a->link_type, what, sizeof(what));
	snprintf(buf + n, len - n, "; NO ETHERNET HEADER (%s): passes every packet", what);
}

/* A capture ring buffer a killed capture left in a program: kernel memory
 * (up to 1 GiB, --buffer) held until the next capture there or a detach.
 * Not read: said to be unknown (a running capture's ring is its own). */
static void left_rings(const struct fb_att *a, int n)
{
	char ns[FB_ESCAPED_SIZE(sizeof(a->netns))], dev[FB_ESCAPED_SIZE(IF_NAMESIZE)];
	bool running;
	__u64 bytes;
	int i, rc;

	for (i = 0; i < n; i++) {
		rc = fb_capture_held(a[i].prog_id, &bytes, &running);
		if (rc > 0 || (!rc && (!bytes || running)) || (rc == -2 && running))
			continue;
		fb_printable(a[i].netns, ns, sizeof(ns));
		fb_printable(a[i].ifname, dev, sizeof(dev));
		if (rc)
			fprintf(stderr,
				"flowbloom: note: program %u on %s (netns %s): whether it holds a "
				"capture ring buffer is unknown (%s)\n",
				a[i].prog_id, dev, ns, strerror(errno));
		else
			fprintf(stderr,
				"flowbloom: note: program %u on %s (netns %s) holds a capture "
				"ring buffer of %llu bytes that no capture uses (a capture was "
				"killed): the next capture there, or a detach, frees it\n",
				a[i].prog_id, dev, ns, (unsigned long long)bytes);
	}
}

/* null where not known; 0 and false for a program without capture maps */
static void ring_json(const struct fb_att *a)
{
	bool running;
	__u64 bytes;
	int rc = fb_capture_held(a->prog_id, &bytes, &running);

	if (rc == -1 || rc == -2)
		jw_null("capture_ring_bytes");
	else
		jw_u64("capture_ring_bytes", bytes);
	if (rc == -1)
		jw_null("capture_running");
	else
		jw_bool("capture_running", running);
}

/* "program 12, 14 and 3 more found attached nowhere, and 2 processes not
 * looked into (pid 1 (init): its network namespace: Permission denied,
 * ...)": what the walk could not see, up to FB_WALK_NAMED of each. */
#define FB_WALK_NAMED 8

/* "programs 12, 13" (up to FB_WALK_NAMED ids, then "and N more"): the
 * start of the notes below; the length it would have. */
static size_t unplaced_text(const struct fb_walk *w, char *buf, size_t len)
{
	size_t i, n = 0;

#define ADD(...) n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__)
	ADD("program%s ", w->nunplaced == 1 ? "" : "s");
	for (i = 0; i < w->nunplaced && i < FB_WALK_NAMED; i++)
		ADD("%s%u", i ? ", " : "", w->unplaced[i]);
	if (w->nunplaced > FB_WALK_NAMED)
		ADD(" and %zu more", w->nunplaced - FB_WALK_NAMED);
#undef ADD
	return n;
}

static void walk_gaps(const struct fb_walk *w, char *buf, size_t len)
{
	char comm[FB_ESCAPED_SIZE(sizeof(w->refused[0].comm))];
	size_t i, j, n = 0, procs;

#define ADD(...) n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__)
	n = unplaced_text(w, buf, len);
	for (i = procs = 0; i < w->nrefused; i++) {
		for (j = 0; j < i && w->refused[j].pid != w->refused[i].pid; j++)
			;
		procs += j == i;
	}
	ADD(" found attached nowhere, and %zu process%s not looked into (", procs,
	    procs == 1 ? "" : "es");
	for (i = 0; i < w->nrefused && i < FB_WALK_NAMED; i++)
		ADD("%spid %d (%s): its %s: %s", i ? "; " : "", w->refused[i].pid,
		    fb_printable(w->refused[i].comm, comm, sizeof(comm)), w->refused[i].what,
		    strerror(w->refused[i].err));
	if (w->nrefused > FB_WALK_NAMED)
		ADD("; and %zu more", w->nrefused - FB_WALK_NAMED);
	ADD(")");
#undef ADD
}

/* "program 12 found attached nowhere, and 1 network namespace gone
 * before it was looked into (pid 40 (sleep))": up to GONE_NAMED names,
 * each quoted (a name in /run/netns may have 255 bytes). */
#define GONE_NAMED 3

static void gone_gaps(const struct fb_walk *w, char *buf, size_t len)
{
	size_t i, n = 0;

#define ADD(...) n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__)
	n = unplaced_text(w, buf, len);
	ADD(" found attached nowhere, and %zu network namespace%s gone before %s looked "
	    "into (",
	    w->ngone, w->ngone == 1 ? "" : "s", w->ngone == 1 ? "it was" : "they were");
	for (i = 0; i < w->ngone && i < GONE_NAMED; i++)
		ADD("%s%s", i ? "; " : "", fb_quote(w->gone[i]));
	if (w->ngone > GONE_NAMED)
		ADD("; and %zu more", w->ngone - GONE_NAMED);
	ADD(")");
#undef ADD
}

static void walk_json(const struct fb_walk *w)
{
	size_t i;

	jw_bool("complete", !fb_walk_partial(w));
	jw_arr_open("not_found_attached");
	for (i = 0; i < w->nunplaced; i++)
		jw_u64(NULL, w->unplaced[i]);
	jw_arr_close();
	jw_arr_open("not_looked_into");
	for (i = 0; i < w->nrefused; i++) {
		jw_obj_open(NULL);
		jw_u64("pid", (__u64)w->refused[i].pid);
		jw_str("comm", w->refused[i].comm);
		jw_str("what", w->refused[i].what);
		jw_str("error", strerror(w->refused[i].err));
		jw_obj_close();
	}
	jw_arr_close();
	jw_arr_open("gone_before_looked_into");
	for (i = 0; i < w->ngone; i++)
		jw_str(NULL, w->gone[i]);
	jw_arr_close();
}

int cmd_status(int argc, char **argv)
{
	struct fb_walk w;
	struct fb_att *a;
	char buf[1200], ns[FB_ESCAPED_SIZE(sizeof(a->netns))], dev[FB_ESCAPED_SIZE(IF_NAMESIZE)];
	struct att_settings st;
	int n, i, open = 0, l3 = 0, nofs, unknown = 0, e = 0, rc, nolink = 0, le = 0;

	if (fb_no_options(&argc, argv))
		return 2;
	if (argc != 1)
		return fb_usage("too many arguments");
	n = fb_discover_walk(&a, false, &w);
	if (n < 0)
		return 1;
	for (i = 0; i < n; i++) {
		open += a[i].fails_open;
		l3 += not_ethernet(&a[i]);
		if (a[i].maps == FB_ATT_UNKNOWN && !unknown++)
			e = a[i].name_err;
		if (a[i].link_type < 0 && !nolink++)
			le = i;
	}
	if (fb_json) {
		jw_obj_open(NULL);
		jw_arr_open("attachments");
		for (i = 0; i < n; i++) {
			jw_obj_open(NULL);
			jw_str("netns", a[i].netns);
			jw_str("device", a[i].ifname);
			jw_u64("ifindex", a[i].ifindex);
			jw_str("mode", a[i].mode);
			jw_u64("prog_id", a[i].prog_id);
			jw_str("maps", maps_name(a[i].maps));
			if (a[i].maps == FB_ATT_FILTER)
				jw_str("filter", a[i].filter);
			else
				jw_null("filter");
			jw_u64("filter_map_id", a[i].filter_map_id);
			jw_bool("fails_open", a[i].fails_open);
			if (a[i].link_type >= 0)
				jw_u64("link_type", (__u64)a[i].link_type);
			else
				jw_null("link_type");
			if (a[i].link_type >= 0)
				jw_bool("ethernet", !not_ethernet(&a[i]));
			else
				jw_null("ethernet");
			if (settings(&a[i], &st)) {
				jw_str("action", st.action);
				jw_str("malformed", st.malformed_drop ? "drop" : "pass");
				jw_bool("multi_buffer", st.frags);
				if (st.sketch_by)
					jw_str("sketch_by", st.sketch_by);
				else
					jw_null("sketch_by");
			} else {
				jw_null("action");
				jw_null("malformed");
				jw_null("multi_buffer");
				jw_null("sketch_by");
			}
			ring_json(&a[i]);
			jw_obj_close();
		}
		jw_arr_close();
		jw_u64("fails_open", open);
		jw_u64("not_ethernet", l3);
		walk_json(&w);
		jw_obj_close();
		jw_end();
	} else if (!n && fb_walk_partial(&w)) {
		/* Never "none": one may be where the walk could not look. */
		printf("no flowbloom XDP program found attached; the walk was partial (below)\n");
	} else if (!n) {
		printf("no flowbloom XDP program attached, in any network namespace\n");
	} else {
		printf("%-20s %-16s %-8s %8s  %s\n", "NETNS", "DEVICE", "MODE", "PROG", "FILTER");
		for (i = 0; i < n; i++) {
			uses(&a[i], buf, sizeof(buf));
			printf("%-20s %-16s %-8s %8u  %s\n",
			       fb_printable(a[i].netns, ns, sizeof(ns)),
			       fb_printable(a[i].ifname, dev, sizeof(dev)), a[i].mode, a[i].prog_id,
			       buf);
		}
		left_rings(a, n);
		if (open)
			fprintf(stderr,
				"flowbloom: %d attachment%s FAIL%s OPEN: every packet passes "
				"unfiltered (attach in a namespace with flowbloom -n NETNS attach, "
				"or nsenter --net=/run/netns/NETNS ip link set ...; never ip -n or "
				"ip netns exec)\n",
				open, open == 1 ? "" : "s", open == 1 ? "S" : "");
		if (l3)
			fprintf(stderr,
				"flowbloom: %d attachment%s on a device without an Ethernet "
				"header: every packet passes unfiltered, as non-IP (flowbloom -n "
				"NETNS detach DEV, and attach to the Ethernet device the traffic "
				"arrives on)\n",
				l3, l3 == 1 ? "" : "s");
		/* Without bpffs no filter has a name: the attachments still
		 * filter (they hold their maps), but no verb reaches them.
		 * Not told (memory): the names above say what was read. */
		fb_report_quiet = true;
		nofs = fb_pin_check_bpffs() && errno == ENODEV;
		fb_report_quiet = false;
		if (nofs)
			fprintf(stderr,
				"flowbloom: %s: the filters these attachments use cannot be "
				"named or changed\n",
				fb_report_last);
	}
	/* A device whose link type was not read (memory, renamed or moved
	 * meanwhile) may be a layer-3 one, every packet passed: not known,
	 * never taken for Ethernet. */
	if (nolink)
		fb_err("cannot tell whether %d attachment%s get%s an Ethernet header (%s: %s): on "
		       "a "
		       "device without one every packet passes",
		       nolink, nolink == 1 ? "" : "s", nolink == 1 ? "s" : "",
		       fb_printable(a[le].ifname, dev, sizeof(dev)), strerror(a[le].link_err));
	free(a);
	/* What an attachment uses not known: an error, as any verb's. */
	if (unknown)
		fb_err("cannot tell which filter %d attachment%s use%s: the pins under %s not read "
		       "(%s)",
		       unknown, unknown == 1 ? "" : "s", unknown == 1 ? "s" : "", fb_pin_root(),
		       strerror(e));
	else if (unread[0])
		fb_err("cannot tell what an attachment does: %s", unread);
	/* An attachment may be missing: as not known. */
	if (fb_walk_partial(&w)) {
		walk_gaps(&w, buf, sizeof(buf));
		fb_err("cannot tell where flowbloom's programs are attached: %s: one may be in a "
		       "network namespace only those processes hold",
		       buf);
	} else if (w.nunplaced && w.nrefused) {
		walk_gaps(&w, buf, sizeof(buf));
		fb_report(FB_REPORT_NOTE,
			  "%s: a namespace only their open files or mounts hold is not seen", buf);
	}
	/* Each path to it went (its processes exited, its name or mount
	 * was removed) while status looked: with it, its devices and their
	 * attachments, unless something status cannot see (a socket)
	 * still holds it. */
	if (w.nunplaced && w.ngone) {
		gone_gaps(&w, buf, sizeof(buf));
		fb_report(FB_REPORT_NOTE,
			  "%s: every path to %s went away meanwhile (its processes exited, its "
			  "names and mounts were removed)",
			  buf, w.ngone == 1 ? "it" : "them");
	}
	rc = unknown || unread[0] || nolink || fb_walk_partial(&w);
	fb_walk_free(&w);
	if (rc)
		return 1;
	return open || l3 ? FB_EXIT_FAILS_OPEN : 0;
}

int fb_warn_fail_open(bool always_json)
{
	struct fb_att *a;
	char ns[FB_ESCAPED_SIZE(sizeof(a->netns))], dev[FB_ESCAPED_SIZE(IF_NAMESIZE)];
	struct fb_walk w;
	char gaps[FB_ESCAPED_SIZE(sizeof(w.why))];
	int n = fb_discover_walk(&a, true, &w), i;

	/* Not known (the walk failed, or a program on private maps found
	 * nowhere while processes were not looked into): said, never taken
	 * for none. The verb's own answer still stands. */
	if (n < 0 || fb_walk_partial(&w)) {
		/* why may name a path the walk read (a mount point) */
		if (n >= 0)
			walk_gaps(&w, gaps, sizeof(gaps));
		else
			fb_escape(w.why, gaps, sizeof(gaps), true);
		fprintf(stderr,
			"flowbloom: warning: cannot tell whether a flowbloom XDP program fails "
			"open "
			"(passes every packet): %s\n",
			gaps);
		if (fb_json)
			jw_null("fail_open");
		fb_walk_free(&w);
		free(a);
		return -1;
	}
	fb_walk_free(&w);
	if (fb_json && (n || always_json)) {
		jw_arr_open("fail_open");
		for (i = 0; i < n; i++) {
			jw_obj_open(NULL);
			jw_str("netns", a[i].netns);
			jw_str("device", a[i].ifname);
			jw_str("mode", a[i].mode);
			jw_u64("prog_id", a[i].prog_id);
			jw_obj_close();
		}
		jw_arr_close();
	}
	for (i = 0; !fb_json && i < n; i++)
		fprintf(stderr,
			"flowbloom: warning: XDP program %u on %s (netns %s, %s) FAILS OPEN: it is "
			"flowbloom's, but %s: every packet passes (%s; see flowbloom status)\n",
			a[i].prog_id, fb_printable(a[i].ifname, dev, sizeof(dev)),
			fb_printable(a[i].netns, ns, sizeof(ns)), a[i].mode,
			a[i].maps == FB_ATT_GLOBALS ? "its xdp/globals maps hold no filter yet"
						    : "on private, empty maps, not a filter's",
			a[i].maps == FB_ATT_GLOBALS
				? "flowbloom create default"
				: "loaded with `ip -n` or `ip netns exec`? use nsenter --net");
	free(a);
	return n;
}
