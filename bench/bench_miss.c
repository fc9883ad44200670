/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_miss.c - ctrack-bench miss: what one cache miss costs on this
 * machine, the unit the NAT targets are judged in (BENCHMARKS.md "nat").
 *
 * At a million connections a new connection's costs are dominated by
 * loads that miss every cache: the table's row for a tuple, an entry, a
 * source-index bucket sit at random places in ~100 MB.  How far apart
 * two paths can be is then set by how many such misses each must take
 * and by what one costs, not by instructions.  This measures that cost
 * the standard way - a pointer chase: a buffer of 64-byte lines linked
 * into one random cycle, each load's address the previous load's value,
 * so that no two overlap - and, side by side in the same run:
 *   - the buffer mapped with transparent huge pages and without (the
 *     table's rows are one big mapping that may get them; entries and
 *     slabs too), since a miss in the TLB adds a page walk that may miss
 *     as well;
 *   - 1, 2, 4 and 8 independent chases interleaved: the time per load
 *     when a path can issue its misses together (prefetching the next
 *     candidates' rows, a burst's lookups), against one after the other;
 *   - a buffer that fits the L1 cache, for the cost of a load that hits.
 * Thread CPU time, the least of --repeat runs (the machine is shared: a
 * preemption inflates one run, never shortens one).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench_util.h"

#define LINE 64u

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Link the @n lines of @buf into one random cycle (Sattolo's shuffle of
 * their order); each line's first word holds the next line's address. */
static void link_cycle(uint8_t *buf, size_t n, uint64_t *rng)
{
	size_t *ord = malloc(n * sizeof(*ord));

	if (!ord) {
		fprintf(stderr, "ctrack-bench: miss: no memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(bu_rand(rng) % i);
		size_t x = ord[i];

		ord[i] = ord[j];
		ord[j] = x;
	}
	for (size_t i = 0; i < n; i++)
		*(void **)(buf + ord[i] * LINE) = buf + ord[(i + 1) % n] * LINE;
	free(ord);
}

/* @k chases of @steps loads each, interleaved, from @k starting lines
 * spread over the cycle; returns ns per load. */
static double chase(uint8_t *buf, size_t n, unsigned k, uint64_t steps)
{
	void *p[8];
	double t0, t;

	for (unsigned c = 0; c < k; c++) {
		p[c] = buf;
		/* start c's chase n*c/k lines along the cycle */
		for (size_t s = 0; s < n / k * c; s++)
			p[c] = *(void **)p[c];
	}
	t0 = cpu_ns();
	for (uint64_t s = 0; s < steps; s++)
		for (unsigned c = 0; c < k; c++)
			p[c] = *(void **)p[c];
	t = cpu_ns() - t0;
	/* the chases' ends are used: the loads stay */
	for (unsigned c = 0; c < k; c++)
		__asm__ volatile("" : : "r"(p[c]) : "memory");
	return t / (double)(steps * k);
}

static void one(const struct bench_args *a, size_t bytes, bool huge, unsigned repeat,
		uint64_t steps)
{
	static const unsigned chains[] = { 1, 2, 4, 8 };
	size_t n = bytes / LINE;
	uint8_t *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t rng = 0x6d6973732d6e7321ull;

	if (buf == MAP_FAILED) {
		fprintf(stderr, "ctrack-bench: miss: cannot map %zu bytes\n", bytes);
		exit(1);
	}
	(void)madvise(buf, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(buf, 0, bytes);
	link_cycle(buf, n, &rng);
	for (unsigned i = 0; i < sizeof(chains) / sizeof(chains[0]); i++) {
		unsigned k = chains[i];
		double best = 1e30;
		uint64_t st = steps / k;
		char what[48];
		struct bu_rec rec;

		if (bytes <= 32768 && k > 1)
			continue;
		if (st > n && bytes > 32768)
			st = n;   /* each line at most once per chase: no reuse */
		for (unsigned r = 0; r < repeat; r++) {
			double x = chase(buf, n, k, st);

			if (x < best)
				best = x;
		}
		snprintf(what, sizeof(what), "%zuMiB-%s-x%u", bytes >> 20,
			 huge ? "thp" : "4k", k);
		if (bytes <= 32768)
			snprintf(what, sizeof(what), "%zuKiB-l1", bytes >> 10);
		bu_rec_begin(&rec, a, "miss", what);
		bu_rec_int(&rec, "buffer_bytes", bytes);
		bu_rec_str(&rec, "pages", huge ? "thp-advised" : "4k");
		bu_rec_int(&rec, "chains", k);
		bu_rec_int(&rec, "loads", st * k);
		bu_rec_num(&rec, "ns_per_load", best);
		bu_rec_str(&rec, "timed", "thread cpu, least of the repeats");
		bu_rec_end(&rec);
	}
	munmap(buf, bytes);
}

int bench_miss(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	size_t mib = (size_t)bu_opt_u64(a, "mib", quick ? 64 : 256);
	unsigned repeat = (unsigned)bu_opt_u64(a, "repeat", quick ? 1 : 3);
	uint64_t steps = bu_opt_u64(a, "loads", quick ? 1000000 : 4000000);

	bu_note(a, "miss: a pointer chase over %zu MiB of 64-byte lines, %u repeats, "
		"%llu loads each", mib, repeat, (unsigned long long)steps);
	one(a, 16384, false, repeat, steps);
	one(a, mib << 20, true, repeat, steps);
	one(a, mib << 20, false, repeat, steps);
	return 0;
}
