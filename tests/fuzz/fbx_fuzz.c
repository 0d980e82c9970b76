// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Export files (user/lib/fleet/fbx.h) as import reads them: the fuzzer's
 * bytes as a file, opened with fb_fbx_open_checked() twice, once a file
 * only root can write (its second read seeks back) and once one anyone
 * can (read again from the bytes the first read kept); then, if it was
 * accepted, the body into memory as import streams it into the filter,
 * generations included, with fb_fbx_read_body() and fbx_gens.c's reader.
 * Files whose header claims more than 4,096 blocks are skipped (their
 * second read would take the memory; the first is what compress.sh's
 * largest-header cases measure).
 *
 * What must hold: both ways give the same answer (and the same reason,
 * unless the file is plain: then the first way reads it once); a refusal
 * names a reason; a file the first read accepted is never then
 * refused for what the first read checks (a length, an exact-set entry, a
 * generation's head, the CRC, the end of the file): only for what needs
 * the filter whole (counters against bits, a typed filter's table).
 */
#include "fuzz.h"
#include <sys/stat.h>
#include "fleet/fbx.h"
#include "fleet/fbz.h"

#define MAX_BLOCKS 4096

/* The reasons only the first read may give. */
static const char *const stream_why[] = {
	"truncated",  "checksum",	"corrupt compressed", "trailing", "expands past",
	"read error", "exact-set entr", "generation",	      "changed",  NULL,
};

static __u32 claimed_blocks(const uint8_t *d, size_t n)
{
	size_t at = n >= 8 && !memcmp(d, FB_FBZ_MAGIC, 8) ? 16 : 0;

	if (n < at + FB_FBX_OFF_NBLOCKS + 4)
		return 0;
	return fb_le_get32(d + at + FB_FBX_OFF_NBLOCKS);
}

/* The body and generations after an accepted first read: 0, or -1 with
 * in->why. */
static int build(struct fb_fbx_in *in)
{
	size_t nb = (size_t)in->h.nblocks + FB_HDR_BLOCKS;
	struct fb_block *blocks = calloc(nb, sizeof(*blocks));
	__u8 *cnt = calloc(1, in->cnt_bytes + 1);
	int rc = -1;
	__u32 g;

	if (!blocks || !cnt)
		abort();
	if (fb_fbx_read_body(in, blocks, cnt))
		goto out;
	for (g = 0; g < in->ngens; g++) {
		struct fb_fbx_gen gh;
		struct fb_block *gb;
		__u8 *gc;
		int r;

		if (fb_fbx_read_gen(in, &gh))
			goto out;
		FUZZ_ASSERT(gh.nblocks <= FB_MAX_BLOCKS, "generation of %u blocks", gh.nblocks);
		if (gh.nblocks > MAX_BLOCKS) {
			r = fb_fbx_read_gen_body(in, &gh, NULL, NULL);
		} else {
			gb = calloc((size_t)gh.nblocks + FB_HDR_BLOCKS, sizeof(*gb));
			gc = calloc(1, gh.cnt_bytes + 1);
			if (!gb || !gc)
				abort();
			r = fb_fbx_read_gen_body(in, &gh, gb, gc);
			free(gb);
			free(gc);
		}
		if (r)
			goto out;
	}
	rc = in->ngens ? fb_fbx_finish(in) : 0;
out:
	free(blocks);
	free(cnt);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[2][256];
	const char *path;
	int fd, rc[2], i, j;
	bool scanned[2];
	__u32 nb = claimed_blocks(data, size);

	fuzz_silence();
	if (nb > MAX_BLOCKS)
		return 0;
	fd = fuzz_file(data, size, &path);
	for (i = 0; i < 2; i++) {
		struct fb_fbx_in in;

		if (fchmod(fd, i ? 0666 : 0600))
			abort();
		rc[i] = fb_fbx_open_checked(&in, path, true);
		/* A plain file that only root can write is read once. */
		scanned[i] = !in.seek || in.compressed;
		if (!rc[i]) {
			FUZZ_ASSERT(in.seek == !i, "read %d: seek %d", i, in.seek);
			FUZZ_ASSERT(in.h.nblocks <= MAX_BLOCKS, "accepted %u blocks", in.h.nblocks);
			if (build(&in)) {
				for (j = 0; scanned[i] && stream_why[j]; j++)
					FUZZ_ASSERT(!strstr(in.why, stream_why[j]),
						    "read %d: accepted first, then refused: %s", i,
						    in.why);
				rc[i] = -1;
			}
		}
		FUZZ_ASSERT(!rc[i] || in.why[0], "read %d: refused without a reason", i);
		snprintf(why[i], sizeof(why[i]), "%s", rc[i] ? in.why : "");
		fb_fbx_close(&in);
	}
	/* Accepted both ways or neither; for the same reason when both were
	 * read twice (a plain file read once meets the CRC and the content
	 * checks in another order). */
	FUZZ_ASSERT(rc[0] == rc[1] && (!scanned[0] || !strcmp(why[0], why[1])),
		    "seek: %d '%s', spool: %d '%s'", rc[0], why[0], rc[1], why[1]);
	return 0;
}
