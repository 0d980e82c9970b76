// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Issue 10 PoC: random read-modify-write throughput over SIZE MiB with a
 * prefetch distance of 16, 4 KiB pages (MADV_HUGEPAGE with argv[2]):
 * what one counter line per flow can cost at most.  build/rmw MIB [huge] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
int main(int argc, char **argv)
{
	size_t bytes = (size_t)atoi(argv[1]) << 20, lines = bytes / 64, n = 8000000, i;
	unsigned char *m =
		mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long long s = 88172645463325252ULL, *idx = malloc(n * 8);
	struct timespec a, b;

	if (argc > 2)
		madvise(m, bytes, MADV_HUGEPAGE);
	memset(m, 1, bytes);
	for (i = 0; i < n; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		idx[i] = (s % lines) * 64;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		if (i + 16 < n)
			__builtin_prefetch(m + idx[i + 16], 1);
		m[idx[i]]++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%s MiB%s: %.1f M random line RMW/s\n", argv[1], argc > 2 ? " (THP)" : "",
	       n / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9) / 1e6);
	return 0;
}
