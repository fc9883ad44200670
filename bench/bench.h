/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.h - what the ctrack-bench benchmarks share.
 *
 * Each benchmark lives in its own bench_<name>.c and exports one entry
 * point.  Every benchmark compares policies (or ctrack and a peer) side by
 * side in the same run, and prints one JSON object per measured variant
 * with --json (fields named with their units: us_per_pass, cpu_pct, mpps,
 * bytes_per_conn, ...), or a readable table without it.
 *
 * main.c's table lists each benchmark's options (struct bench_opt), so
 * that `ctrack-bench NAME --help` can describe them and every argument is
 * checked before anything runs: a benchmark takes minutes, and a typo
 * that it silently ignored would cost all of them.
 */
#ifndef CTRACK_BENCH_H
#define CTRACK_BENCH_H

#include <stdbool.h>

struct bench_args {
	bool json;
	int argc;       /* remaining arguments after NAME and --json */
	char **argv;    /* ... checked by main.c; "--opt=V" split into "--opt" "V" */
};

typedef int (*bench_fn)(const struct bench_args *a);

/* What an option's value is (main.c checks it before the run). */
enum bench_val {
	BV_FLAG,        /* --name, no value */
	BV_COUNT,       /* --name N: a count, 1000, 10k, 1.5M, 2G (bu_count) */
	BV_COUNTS,      /* --name N,N,...: counts */
	BV_WORD,        /* --name W: one of the words in .arg ('|' between) */
	BV_WORDS,       /* --name W,W,...: some of the words in .arg (',' between) */
	BV_TEXT,        /* --name TEXT: a path or the like, not empty */
};

struct bench_opt {
	const char *name;       /* without the leading "--" */
	enum bench_val val;
	const char *arg;        /* the value as help shows it ("N", "DIR"), or
				 * for BV_WORD(S) the accepted words */
	const char *help;       /* one line */
	uint64_t lo, hi;        /* a count's range (each of a list's);
				 * hi 0: any count */
};

struct bench_entry {
	const char *name;
	const char *summary;
	bench_fn fn;
	const struct bench_opt *opts;   /* ends with a { NULL } entry */
	const char *operands;   /* bare words it takes ("FILE"), or NULL: none */
	const char *words;      /* the operands allowed ('|' between), or NULL: any */
	const char *operands_help;
};

int bench_gc_yield(const struct bench_args *a);
int bench_list(const struct bench_args *a);
int bench_live(const struct bench_args *a);
int bench_gc_idle(const struct bench_args *a);
int bench_gc_busy(const struct bench_args *a);
int bench_throughput(const struct bench_args *a);
int bench_memory(const struct bench_args *a);
int bench_teardown(const struct bench_args *a);
int bench_ovs(const struct bench_args *a);
int bench_read(const struct bench_args *a);
int bench_sync(const struct bench_args *a);
int bench_nat_search(const struct bench_args *a);
int bench_record(const struct bench_args *a);
int bench_nat(const struct bench_args *a);
int bench_miss(const struct bench_args *a);

#endif
