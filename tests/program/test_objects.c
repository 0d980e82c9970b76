// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every BPF object the build makes passes the verifier, whatever runs it:
 * the program (build/flowbloom.bpf.o, and its builds without capture and
 * with the benchmark's cuts), the benchmark's programs, the parser's two
 * test builds, the types' probes and the second program of xdp_loader.sh.
 * Each is opened with its own maps (none pinned, none reused) and loaded;
 * its programs' processed instructions are printed. A build the suites
 * never load (the cut build is loaded only by `make bench`) once stopped
 * verifying unseen: clang spilled a packet pointer in 4 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "testlib.h"
#include "prog/loader.h"

static const char *const objects[] = {
	"flowbloom.bpf.o",   "flowbloom_nocap.bpf.o", "flowbloom_stages.bpf.o",
	"bench.bpf.o",	     "parse_check.bpf.o",     "parse_check_aligned.bpf.o",
	"types_check.bpf.o", "xdp_count.bpf.o",
};

/* Open and load build/NAME with maps of its own; its programs' count, or
 * -1 if it does not load. */
static int load(const char *dir, const char *name)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	struct bpf_map *m;
	char path[600];
	int n = 0;

	snprintf(path, sizeof(path), "%s/../../%s", dir, name);
	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		return -1;
	bpf_object__for_each_map(m, obj) bpf_map__set_pin_path(m, NULL);
	if (bpf_object__load(obj)) {
		bpf_object__close(obj);
		return -1;
	}
	bpf_object__for_each_program(p, obj) n++;
	bpf_object__close(obj);
	return n;
}

int main(int argc, char **argv)
{
	char dir[512], label[700];
	size_t i;
	int n;

	(void)argc;
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(argv[0], '/') - argv[0]), argv[0]);
	fb_libbpf_logging(getenv("TEST_VERBOSE") != NULL);
	for (i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		n = load(dir, objects[i]);
		snprintf(label, sizeof(label), "%s loads (%d program%s verified)", objects[i], n,
			 n == 1 ? "" : "s");
		ASSERT_TRUE(n > 0, label);
	}
	return test_summary();
}
