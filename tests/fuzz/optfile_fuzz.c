// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A verb's options from a file (user/cli/optfile.c), as `ipfix --config
 * FILE` reads them: fb_optfile_read() on the fuzzer's bytes as a file of
 * root's, mode 0600, with ipfix's option table. The setter stands for
 * ipfix's: it keeps what it is given and refuses a count that is not a
 * number (top), so the reader's error path for a value is taken too.
 *
 * What must hold: each value handed over belongs to an option of the
 * table, never the skipped one (config), has a value exactly when the
 * option takes one, and comes without blanks around it or a comment; a
 * refusal is one error, naming FILE:LINE.
 */
#include "fuzz.h"
#include <getopt.h>
#include <sys/stat.h>
#include "optfile.h"
#include "util.h"

static const struct option opts[] = {
	{ "collector", required_argument, NULL, 'c' },
	{ "udp", no_argument, NULL, 'u' },
	{ "tcp", no_argument, NULL, 't' },
	{ "interval", required_argument, NULL, 'i' },
	{ "top", required_argument, NULL, 'n' },
	{ "observation-domain", required_argument, NULL, 'o' },
	{ "template-refresh", required_argument, NULL, 'r' },
	{ "idle-timeout", required_argument, NULL, 'I' },
	{ "active-timeout", required_argument, NULL, 'A' },
	{ "config", required_argument, NULL, 'C' },
	{ NULL, 0, NULL, 0 },
};

static const struct fb_optfile_group groups[] = {
	{ "ut", "the transport" },
	{ NULL, NULL },
};

static char dir[64], file[96];

static void cleanup(void)
{
	unlink(file);
	rmdir(dir);
}

static const char *set(int code, const char *val, void *ctx)
{
	const struct option *o;
	unsigned long long v;
	size_t n;

	(*(unsigned *)ctx)++;
	for (o = opts; o->name && o->val != code; o++)
		;
	FUZZ_ASSERT(o->name && code != 'C', "set: option %d (%s)", code,
		    o->name ? o->name : "none");
	FUZZ_ASSERT(!val == (o->has_arg == no_argument), "set: --%s with value %s", o->name,
		    val ? val : "none");
	if (!val)
		return NULL;
	n = strlen(val);
	FUZZ_ASSERT(n && !strchr(" \t", val[0]) && !strchr(" \t\r\n", val[n - 1]) &&
			    !strchr(val, '#'),
		    "set: --%s value '%s' not cut", o->name, val);
	if (code == 'n' && fb_parse_u64(val, &v))
		return "bad value for --top";
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned calls = 0;
	FILE *f;
	int rc;

	fuzz_silence();
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fbfuzz-optfile.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(file, sizeof(file), "%s/ipfix.conf", dir);
		atexit(cleanup);
	}
	f = fopen(file, "w");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) || chmod(file, 0600))
		abort();
	rc = fb_optfile_read(file, opts, "config", groups, set, &calls);
	if (rc) {
		FUZZ_ASSERT(rc == 1 && fuzz_errors == 1, "refused: %d, %u errors", rc, fuzz_errors);
		FUZZ_ASSERT(fuzz_names_line(fuzz_last_error, file),
			    "refused as '%s', not FILE:LINE", fuzz_last_error);
	} else {
		FUZZ_ASSERT(!fuzz_errors, "accepted, with an error: %s", fuzz_last_error);
	}
	return 0;
}
