/*
 * bench.h - what the ctrack-bench benchmarks share.
 *
 * Each benchmark lives in its own bench_<name>.c and exports one entry
 * point.  Every benchmark compares policies (or ctrack and a peer) side by
 * side in the same run, and prints one JSON object per measured variant
 * with --json (fields named with their units: us_per_pass, cpu_pct, mpps,
 * bytes_per_conn, ...), or a readable table without it.
 */
#ifndef CTRACK_BENCH_H
#define CTRACK_BENCH_H

#include <stdbool.h>

struct bench_args {
	bool json;
	int argc;       /* remaining arguments after NAME and --json */
	char **argv;
};

typedef int (*bench_fn)(const struct bench_args *a);

struct bench_entry {
	const char *name;
	const char *summary;
	bench_fn fn;
};

int bench_gc_yield(const struct bench_args *a);
int bench_gc_idle(const struct bench_args *a);
int bench_gc_busy(const struct bench_args *a);
int bench_throughput(const struct bench_args *a);
int bench_memory(const struct bench_args *a);
int bench_teardown(const struct bench_args *a);
int bench_ovs(const struct bench_args *a);
int bench_read(const struct bench_args *a);

#endif
