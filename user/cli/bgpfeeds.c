// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Whether `flowbloom bgp` holds rules in a filter's permanent rules, for
 * the verbs that would replace them with others derived from them (bgprun.h,
 * bgp_feeds). bgp adds its rules again to a filter array whose permanent
 * rules are not the ones it wrote into (store.h, perm_id): right after a
 * load --replace, whose rules are the operator's, but after an
 * intersection of the filter with another, a rule of bgp's in both is in
 * the result already, as bgp's own copy; added again, it is counted twice,
 * and the route's withdrawal leaves it blocking. bgp cannot tell its copy
 * from one of the other filter's (a counting filter's intersection keeps
 * the smaller count), so the verb is refused instead.
 *
 * The state file looked at is bgp's default, /run/flowbloom/NAME.bgp, read
 * as bgp would read it (a root-only directory, no link, root's file): its
 * first line names the filter and where the rules are ("rules permanent"),
 * the second their permanent rules' identity; it must hold a path. One
 * kept elsewhere (--state FILE) is not looked for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bgprun.h"
#include "report.h"
#include "safefile.h"
#include "store/store.h"

#define STATE_DIR "/run/flowbloom"

int bgp_feeds(const char *name, char *state, size_t len)
{
	bool quiet = fb_report_quiet;
	struct bgp_state_head h;
	struct fb_store f;
	char line[512];
	struct stat st;
	int dir, fd, rc = 0;
	FILE *fp = NULL;
	__u32 perm;

	snprintf(state, len, "%s/%s.bgp", STATE_DIR, name);
	if (lstat(STATE_DIR, &st))
		return 0;
	fb_report_quiet = true; /* a state file bgp itself would not trust holds nothing */
	dir = fb_safe_opendir(STATE_DIR);
	if (dir < 0)
		goto out;
	snprintf(line, sizeof(line), "%s.bgp", name);
	fd = fb_safe_openat(dir, line, state, O_RDONLY, 0);
	close(dir);
	if (fd < 0 || !(fp = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	/* Without "rules", a file of an earlier build: taken to be permanent. */
	if (!bgp_state_head_read(fp, &h) || strcmp(h.name, name) ||
	    (h.part[0] && strcmp(h.part, "permanent")))
		goto out;
	if (fb_store_open(name, &f))
		goto out;
	/* An earlier build's file: the array's identity (bgp_perm_of_array). */
	perm = h.has_perm ? h.perm_id : f.bits_id == h.array_id ? f.perm_id : h.array_id;
	rc = perm == f.perm_id;
	fb_store_close(&f);
	/* And it holds a path (--flush leaves none). */
	while (rc && fgets(line, sizeof(line), fp) && (line[0] == '#' || line[0] == '\n'))
		;
	rc = rc && !feof(fp);
out:
	if (fp)
		fclose(fp);
	fb_report_quiet = quiet;
	return rc;
}
