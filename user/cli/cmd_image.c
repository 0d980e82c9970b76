// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom export` and `import`: a filter as a file, so one router can
 * build a list and ship it to many (a Bloom filter is a compact, mergeable
 * summary of a set: the seeds' shared-cache and Bloom-join uses). The
 * format, its writer and its reader are the library's (user/lib/fleet/fbx.h):
 * here, the arguments and what is printed.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "cmd.h"
#include "fleet/fbx.h"
#include "output.h"
#include "safefile.h"
#include "types/ftype.h"
#include "util.h"

/* Is stdout a file, or a named FIFO, that users other than root (and the
 * caller) can read? The shell made it (`export NAME - >FILE`), under its
 * umask (0644 with the usual 022) or as someone else's file: the key would
 * be readable there, where export's own FILE is 0600. A FIFO of another
 * user's (or root's mode 666 one) hands the key to whoever reads it: its
 * reader may be waiting already. An unnamed pipe (`| ssh ...`) is the
 * caller's own. Says why. */
static bool stdout_shared(void)
{
	const char *what = "file";
	struct statfs sfs;
	struct stat st;

	if (fstat(STDOUT_FILENO, &st))
		return false;
	if (S_ISFIFO(st.st_mode)) {
		if (!fstatfs(STDOUT_FILENO, &sfs) && sfs.f_type == PIPEFS_MAGIC)
			return false;
		what = "FIFO";
	} else if (!S_ISREG(st.st_mode)) {
		return false;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid())
		fb_report_err("FILE '-': stdout is a %s that users other than root can read "
			      "(owned by uid %u): the export holds the filter's hash key; give "
			      "FILE instead (written 0600)",
			      what, (unsigned)st.st_uid);
	else if (st.st_mode & (S_IRGRP | S_IROTH))
		fb_report_err("FILE '-': stdout is a %s that users other than root can read "
			      "(mode %o): the export holds the filter's hash key; give FILE "
			      "instead (written 0600)%s",
			      what, (unsigned)(st.st_mode & 07777),
			      S_ISFIFO(st.st_mode) ? "" : " or redirect under umask 077");
	else
		return false;
	return true;
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "plain", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	/* The file holds the hash key, a secret (docs/cli.md: "An export holds a
	 * secret"): only its owner reads it unless --mode says otherwise. */
	mode_t mode = 0600;
	bool mode_set = false, plain = false;
	const char *name, *file;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c == 'p') {
			plain = true; /* the uncompressed form, for readers before it */
			continue;
		}
		if (c != 'm')
			return fb_bad_option(c, argv);
		if (fb_safefile_parse_mode(optarg, &mode))
			return fb_usage("bad --mode '%s' (octal, 0 to 0777, e.g. 0640)",
					fb_quote(optarg));
		mode_set = true;
	}
	if (argc - optind != 2)
		return fb_usage(argc - optind < 2 ? "missing NAME or FILE" : "too many arguments");
	name = argv[optind];
	file = argv[optind + 1];
	if (mode_set && !strcmp(file, "-"))
		return fb_usage("--mode needs a FILE, not stdout");
	/* As capture -w -: an {"error"} there would land inside the export. */
	if (fb_json && !strcmp(file, "-"))
		return fb_usage("-j with FILE '-': the export and JSON would share stdout");
	/* As capture -w -: binary on a terminal, and this one holds the
	 * filter's secret key, into the scrollback and any session log. */
	if (!strcmp(file, "-") && isatty(STDOUT_FILENO))
		return fb_usage("FILE '-': stdout is a terminal (pipe it, e.g. into ssh HOST "
				"flowbloom import - NAME)");
	if (!strcmp(file, "-") && stdout_shared())
		return 1;
	if (fb_fbx_export(name, file, mode, plain))
		return 1;
	if (!strcmp(file, "-"))
		return 0;
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("exported", name);
		jw_str("file", file);
		jw_obj_close();
		jw_end();
	} else {
		printf("exported %s to %s\n", name, fb_shown(file));
	}
	return 0;
}

/* A hash an attacker who probes the filter resists less than the one
 * create gives a filter of this action (docs/design.md, "Choosing the
 * hash"): nh-v1 always, NH for an allow-list. */
static bool hash_weaker(const struct fb_header *h)
{
	return h->hash == FB_HASH_NH ||
	       (h->action == FB_ACTION_ALLOW && h->hash != FB_HASH_SIPHASH13 &&
		h->hash != FB_HASH_SIPHASH24);
}

int cmd_import(int argc, char **argv)
{
	struct fb_header h;
	const char *action;

	if (fb_no_options(&argc, argv))
		return 2;
	if (argc != 3)
		return fb_usage(argc < 3 ? "missing FILE or NAME" : "too many arguments");
	if (fb_fbx_import(argv[1], argv[2], &h))
		return 1;
	/* The file's, not the operator's: `attach` takes it by default, so a
	 * block-list made a monitor or allow-list is said, not found later;
	 * so is a hash weaker than create would give that action (a
	 * block-list's NH, made an allow-list). */
	action = FB_NAME(fb_action_names, h.action);
	if (hash_weaker(&h))
		fb_report(FB_REPORT_NOTE,
			  "%s: hash %s, not %s as create gives a filter of action %s: an "
			  "attacker who probes it forges false positives more easily (see "
			  "docs/design.md, Choosing the hash)",
			  argv[1], FB_NAME(fb_hash_names, h.hash),
			  FB_NAME(fb_hash_names, fb_hash_default(h.action)), action);
	if (fb_json) {
		jw_obj_open(NULL);
		jw_str("imported", argv[2]);
		jw_u64("bits", fb_header_mbits(&h));
		jw_u64("flows", h.nflows);
		jw_str("action", action);
		jw_str("hash", FB_NAME(fb_hash_names, h.hash));
		jw_obj_close();
		jw_end();
	} else if (fb_ftype(h.type)->flags & FB_FTYPE_TABLE) {
		printf("imported %s from %s: %s, %llu flow%s, action %s\n", argv[2],
		       fb_shown(argv[1]), fb_ftype_name(h.type), (unsigned long long)h.nflows,
		       h.nflows == 1 ? "" : "s", action);
	} else {
		printf("imported %s from %s: m=%llu bits, k=%u, %llu flow%s, action %s\n", argv[2],
		       fb_shown(argv[1]), (unsigned long long)fb_header_mbits(&h), h.k,
		       (unsigned long long)h.nflows, h.nflows == 1 ? "" : "s", action);
	}
	return 0;
}
