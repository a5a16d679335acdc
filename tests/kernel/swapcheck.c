// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* swapcheck: the swap workload of the kernel tests and bench/vs-nvme-rdma.sh.
 *
 * Usage: swapcheck MiB [SEED]
 *
 * Maps MiB of anonymous memory and fills every 4 KiB page with a pattern
 * derived from (SEED, page number): 511 64-bit words from a xorshift64*
 * generator and, in the last word, a checksum of the other 511 (FNV-1a over
 * the words). Then reads every page back, in the same order (swap readahead
 * brings neighbours in with each fault), and checks both the pattern and the
 * checksum. Run in a cgroup whose
 * memory.max is below MiB, the pages have to go out to swap and come back.
 *
 * Prints one line: "swapcheck: MiB MiB, N pages, fill S s, check S s,
 * bad pages B" and, for the first few bad pages, what was expected and what
 * was found. Exit 0 when every page checks, 1 when one does not, 2 on bad
 * usage or when the memory cannot be mapped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE 4096u
#define WORDS (PAGE / sizeof(uint64_t))

static uint64_t seed_of(uint64_t seed, uint64_t page)
{
	uint64_t x = seed ^ (page * 0x9e3779b97f4a7c15ull);

	return x ? x : 0x2545f4914f6cdd1dull;
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dull;
}

static uint64_t checksum(const uint64_t *w)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < WORDS - 1; i++) {
		h ^= w[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void fill(uint64_t *w, uint64_t seed, uint64_t page)
{
	uint64_t x = seed_of(seed, page);
	size_t i;

	for (i = 0; i < WORDS - 1; i++)
		w[i] = next(&x);
	w[WORDS - 1] = checksum(w);
}

/* 0 when page PAGE holds its pattern; else prints the first difference. */
static int check(const uint64_t *w, uint64_t seed, uint64_t page, int report)
{
	uint64_t x = seed_of(seed, page), want;
	size_t i;

	for (i = 0; i < WORDS - 1; i++) {
		want = next(&x);
		if (w[i] != want) {
			if (report)
				printf("swapcheck: page %" PRIu64 " word %zu: expected 0x%016" PRIx64
				       ", got 0x%016" PRIx64 "\n", page, i, want, w[i]);
			return -1;
		}
	}
	want = checksum(w);
	if (w[WORDS - 1] != want) {
		if (report)
			printf("swapcheck: page %" PRIu64 " checksum: expected 0x%016" PRIx64
			       ", got 0x%016" PRIx64 "\n", page, want, w[WORDS - 1]);
		return -1;
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t mib, seed = 0x5eed, pages, p, bad = 0;
	unsigned char *mem;
	double t0, t1, t2;

	if (argc < 2 || argc > 3 || parse_u64(argv[1], 1u << 20, &mib) || mib == 0 ||
	    (argc == 3 && parse_u64(argv[2], UINT64_MAX, &seed))) {
		fprintf(stderr, "usage: swapcheck MiB [SEED]  (MiB 1..1048576)\n");
		return 2;
	}
	pages = mib * (1024 * 1024 / PAGE);
	mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "swapcheck: mmap %" PRIu64 " MiB: %s\n", mib, strerror(errno));
		return 2;
	}
	t0 = now();
	for (p = 0; p < pages; p++)
		fill((uint64_t *)(mem + p * PAGE), seed, p);
	t1 = now();
	for (p = 0; p < pages; p++)
		if (check((uint64_t *)(mem + p * PAGE), seed, p, bad < 5))
			bad++;
	t2 = now();
	printf("swapcheck: %" PRIu64 " MiB, %" PRIu64 " pages, fill %.2f s, check %.2f s, bad pages %" PRIu64
	       "\n", mib, pages, t1 - t0, t2 - t1, bad);
	munmap(mem, pages * PAGE);
	return bad ? 1 : 0;
}
