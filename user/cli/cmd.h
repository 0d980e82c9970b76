/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CLI's verbs. Each cmd_*.c file holds one verb or a small family of
 * them; main.c has the table. A verb returns the process exit status:
 * 0 ok, 1 failure, 2 usage error.
 */
#ifndef FLOWBLOOM_USER_CMD_H
#define FLOWBLOOM_USER_CMD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include "flowbloom/key.h"

struct fb_store;

struct fb_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *synopsis; /* after "flowbloom " */
	const char *help;     /* more lines for `flowbloom help VERB` */
};

int cmd_create(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_destroy(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_del(int argc, char **argv);
int cmd_count(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_intersect(int argc, char **argv);
int cmd_fold(int argc, char **argv);
int cmd_card(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_traffic(int argc, char **argv);
int cmd_flows(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_ipfix(int argc, char **argv);
int cmd_bgp(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_guard(int argc, char **argv);
/* query --packet (cmd_qpacket.c): query's arguments, --packet among them. */
int fb_query_packet(int argc, char **argv);
/* query --packet --dev and replay --dev (ondev.c): the program attached
 * on DEV, as it decides. fb_dev_settings() checks DEV runs flowbloom's
 * program reading filter f and sets lo's action and malformed policy to
 * its own (fb_load_seen()): 0, or -1 with the refusal printed (no such
 * device, no program, another's, another filter's: named). */
struct fb_store;
struct fb_load_opts;
struct fb_dev_seen {
	const char *dev; /* NULL: no --dev */
	__u32 prog_id;
	__u8 action;	     /* enum fb_action, as it decides (the filter's own resolved) */
	bool malformed_drop; /* what no rule decides of a malformed packet */
};
#define FB_DEV_EXCLUSIVE                                                                           \
	"--dev takes the action and the malformed policy of the program on DEV: give --dev, "      \
	"or --action and --malformed, not both"
int fb_dev_settings(const char *dev, const struct fb_store *f, struct fb_load_opts *lo,
		    struct fb_dev_seen *seen);
/* " (as on DEV: action A, malformed packets dropped|passed)" on stdout;
 * JSON: the member "dev" of the current object. Nothing without --dev. */
void fb_dev_seen_text(const struct fb_dev_seen *s);
void fb_dev_seen_json(const struct fb_dev_seen *s);
/* The rule kind the program's trace names (enum fb_kind: flow, src, dst,
 * shape); NULL for none (cmd_replay.c). */
const char *fb_match_name(__u32 kind);

/* cmd_status.c: for `info` and `stats`: the attachments that fail open, as a warning
 * line each on stderr, or (-j) a "fail_open" array in the current object
 * (always_json: also when empty). Returns how many; -1 when it cannot be
 * told (the walk failed or was partial): a warning saying so, "fail_open":
 * null with -j. */
int fb_warn_fail_open(bool always_json);

/* What a verb prints when it made a change, plain or JSON: `apply`
 * prints its steps through the same functions (cmd_create.c, cmd_load.c,
 * cmd_attach.c, cmd_info.c). */
struct fb_create_opts;
struct fb_load_result;
struct fb_monitor;
void fb_print_created(const char *name, const struct fb_create_opts *o);
void fb_print_loaded(const struct fb_load_result *r);
/* mon: the attachment's monitoring (NULL: none); replaced: the program
 * it took the place of (attach --replace; 0: none); multibuf: loaded
 * multi-buffer (a device whose MTU exceeds a page, native mode). */
void fb_print_attached(const char *name, const char *dev, const char *mode,
		       const struct fb_monitor *mon, __u32 replaced, bool multibuf);
void fb_print_detached(const char *dev);
/* A warning on stderr when f, attached to dev with action (0: the
 * filter's own), is an allow-list without rules: every IP packet dropped. */
void fb_warn_empty_allow(const struct fb_store *f, __u8 action, const char *dev);
void fb_print_destroyed(const char *name);

/* Usage error for the running verb: message, synopsis, returns 2. */
int fb_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The running verb's synopsis after a usage error already printed;
 * returns 2. */
int fb_usage_synopsis(void);
/* An option the running verb does not know (the first len bytes of opt):
 * the usage error, which says where a global option (-j, -v, -n) goes. */
int fb_unknown_option(const char *opt, int len);
/* getopt_long returned '?' or ':' (its optstring starts with ':', after
 * any '+'): the usage error naming the option (unknown, without its value,
 * or with a value it takes none of); returns 2. */
int fb_bad_option(int c, char **argv);
/* `--` ends the options, as getopt has it: the first "--" after argv[0]
 * is dropped from argv (and *argc); returns the index of the word that
 * followed it, or *argc when there is none. */
int fb_end_of_options(int *argc, char **argv);
/* A verb without options: any argument before `--` starting with '-' but
 * "-" (stdin) is an unknown option, the usage error (2); 0 if there is
 * none. The `--` is dropped (fb_end_of_options). */
int fb_no_options(int *argc, char **argv);
/* Parse an option value from a fixed list; -1 (error printed) if absent.
 * values NULL: names is an enum-name table + 1 (util.h), the value is the
 * position + 1. */
int fb_pick(const char *opt, const char *val, const char *const *names, const int *values);
int fb_parse_action(const char *val);
int fb_parse_malformed(const char *val);
struct fb_load_opts;
/* The per-attachment options attach and replay share: 'a' (--action) and
 * 'M' (--malformed). 1 handled, 0 not ours, -1 bad value (printed). */
int fb_load_option(int c, const char *arg, struct fb_load_opts *lo);

/* Flows read from argv or a file, and where each came from: its line
 * number (file) or argument number (argv), kept in a byte a flow as the
 * step from the previous flow's (the first's from 0; 0: the same line or
 * argument), or FB_FLOWS_FAR and the number itself next in far[]. */
#define FB_FLOWS_FAR 255
struct fb_flows {
	struct fb_key *keys;
	__u8 *step;
	size_t *far, nfar, farcap;
	size_t n, cap, last; /* last: where the last flow came from */
	const char *file;    /* NULL: argv; "<stdin>" for "-" */
	/* fb_flows_unique: the copies it dropped, and the first one's place. */
	size_t again, again_at;
	/* A flow may be a prefix `load` held expanded (fb_flows_as_stored):
	 * noted as it is read, so that most lists are not read again. */
	bool prefixes;
	/* A file's bound (fb_flows_args with bound): at most max different
	 * flows; at check flows, its duplicates are dropped (check doubles). */
	size_t max, check;
	char max_why[160];
};

/* FLOWs from argv (several, back to back) or from a file ("-": stdin).
 * The whole input is parsed before anything is used: on the first bad
 * word or line it prints "FILE:LINE: why" and returns -1; 2 for a usage
 * error (FLOWs and a file, or nothing). */
int fb_read_flows(int argc, char **argv, const char *file, struct fb_flows *out);
/* Tell of prefixes written with host bits set, taken masked (stderr,
 * never stdout): a line for each of a FLOW argument's; one for a file's,
 * with how many and the first's FILE:LINE. */
struct fb_hostbits;
void fb_hostbits_args(const struct fb_hostbits *hb);
void fb_hostbits_file(const char *file, const struct fb_hostbits *hb);
void fb_flows_free(struct fb_flows *fl);
/* The arguments of every verb that takes flows (add, del, query, count,
 * traffic): NAME FLOW..., or NAME and -f FILE, where -f FILE (also --file
 * FILE, --file=FILE) may come before or after NAME. With bound (add,
 * del), a FILE is held to the most different flows filter NAME can hold
 * (rules/capacity.h: fb_capacity_input), refused at FILE:LINE past it,
 * so input without end ends in bounded memory. 0, or the exit code (2
 * usage, 1 error), printed. */
int fb_flows_args(int argc, char **argv, const char **name, struct fb_flows *fl, bool bound);
/* "FILE:LINE" or "argument N" of flow i, for messages, in a buffer of
 * FB_FLOWS_WHERE (a FILE as long as the kernel takes, and the rest). */
#define FB_FLOWS_WHERE (PATH_MAX + 64)
void fb_flows_where(const struct fb_flows *fl, size_t i, char *buf, size_t len);
/* add's and del's file as `load` takes it: each rule once however often
 * the file names it (the first copy, with its line; fl->again counts the
 * others; done: "added", "deleted", for an error). 0, or -1 (printed; fl
 * unusable: free it). */
int fb_flows_unique(struct fb_flows *fl, const char *done);
/* Once the verb did it: a note of the copies fb_flows_unique dropped, if
 * any, each `done` once. Not of a refused verb, which did nothing. */
void fb_flows_note_again(const struct fb_flows *fl, const char *done);
/* del's input as `load` stored it, on a filter that can forget a flow: a
 * prefix rule of a length a part del takes from does not hold, held whole
 * at a longer length of that part's (load expanded it), becomes its pieces
 * there, each from the same line or argument (a note says so). The parts:
 * f's permanent rules if permanent, and the live generations gv (NULL:
 * none), each with its own lengths. 0, or -1 (printed; fl as it was). */
struct fb_store;
struct fb_gen_views;
int fb_flows_as_stored(struct fb_flows *fl, const struct fb_store *f, bool permanent,
		       const struct fb_gen_views *gv);
/* A verb's NAME and its flows (fb_flows_args), then the filter opened
 * (cmd_add.c, for query and count). 0, or the exit code, printed. */
int fb_flows_open(int argc, char **argv, struct fb_store *f, struct fb_flows *fl);

/* A file of filter name's in /run/flowbloom, per pin root (cmd_common.c):
 * apply's lock (apply, lock), bgp's record of its state files (bgp, feeds). */
void fb_run_file(const char *kind, const char *name, const char *ext, char *file, size_t len);

#endif
