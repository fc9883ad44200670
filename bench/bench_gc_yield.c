/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_gc_yield.c - what offering to yield costs the collector.
 *
 * Linux's gc_worker offered to reschedule after every bucket; the fix
 * (offer at most once per millisecond) cut a 10,000-bucket pass from
 * 7.1 ms to 6.0 ms.  Here both yield policies run on the same table in
 * the same process, their passes interleaved (A, B, A, B, ...) so that a
 * shared machine's drift hits both alike, and the median pass is
 * reported.
 *
 * What makes a pass visit every row.  Under the default lock policy
 * (due-time) a table with nothing due is skipped 64 rows at a time and
 * never reaches the per-row yield point at all, so there would be nothing
 * to compare.  The kernel's gc_worker looks at every bucket; the closest
 * policy here is pf's lock-nonempty (read every row, lock the non-empty
 * ones, look at their entries), with entries that are not due, so every
 * pass does the same work and nothing is removed.  Two more policies
 * visit every row: due-rows (the due-time policy without its 64-row group
 * summaries: one word read per row, no entry read, no lock) and
 * lock-always.  Both RCU flavours are measured, because the yield itself
 * differs: memb leaves and re-enters its read-side section, QSBR reports
 * a quiescent state (a full memory barrier).
 *
 * Table: 10,000 established TCP connections in 10,000 rows as the kernel
 * benchmark's 10,000 buckets (the table rounds a row count up to a
 * multiple of 64: 10,048).
 *
 * Options: --passes N (default 2000), --entries N, --rows N, --quick,
 *          --lock lock-nonempty|due-rows|lock-always, --rcu memb|qsbr
 *          (run only those).
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

struct yield_cfg {
	enum ct_rcu_flavor rcu;
	enum ct_gc_lock_policy lock;
};

static const char *lock_name(enum ct_gc_lock_policy l)
{
	return l == CT_GC_LOCK_ALWAYS ? "lock-always"
	       : l == CT_GC_LOCK_NONEMPTY ? "lock-nonempty"
	       : l == CT_GC_LOCK_DUE_ROWS ? "due-rows" : "due-time";
}

/* One full pass with @pol; returns its wall time in ns. */
static uint64_t one_pass(struct ct_thread *thr, struct ct_table *t,
			 const struct ct_gc_policy *pol, ct_time_ns now,
			 struct ct_gc_result *res)
{
	uint64_t t0;

	ct_gc_set_policy(t, pol);
	t0 = bu_mono_ns();
	ct_gc_step(thr, now, 0, res);
	return bu_mono_ns() - t0;
}

static int run_cfg(const struct bench_args *a, const struct yield_cfg *yc,
		   uint64_t rows, uint64_t entries, unsigned passes)
{
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_gc_policy pol[2];
	struct ct_gc_result res[2];
	double *us[2], med[2];
	uint64_t yields[2] = { 0, 0 }, visited[2] = { 0, 0 }, locked[2] = { 0, 0 };
	ct_time_ns t0 = 1000000000ull;
	static const char *const names[2] = { "every-row", "throttled" };

	bu_config(&cfg, rows, true);
	cfg.rcu = yc->rcu;
	t = bu_table(&cfg);
	thr = ct_thread_attach(t);
	if (bu_fill_tcp(thr, 0, entries, 0, t0) != entries) {
		fprintf(stderr, "gc-yield: fill failed\n");
		return 1;
	}
	for (int v = 0; v < 2; v++) {
		ct_gc_policy_default(&pol[v]);
		pol[v].lock = yc->lock;
		pol[v].yield = v == 0 ? CT_GC_YIELD_EVERY_ROW : CT_GC_YIELD_THROTTLED;
		us[v] = calloc(passes, sizeof(double));
	}
	/* warm up: caches, branch predictors, page tables */
	for (unsigned i = 0; i < 50; i++)
		for (int v = 0; v < 2; v++)
			one_pass(thr, t, &pol[v], t0 + 1000000000ull, &res[v]);
	for (unsigned i = 0; i < passes; i++)
		for (int v0 = 0; v0 < 2; v0++) {
			/* alternate which goes first, so neither always
			 * inherits the other's cache state */
			int v = (int)((i + (unsigned)v0) & 1);
			uint64_t ns = one_pass(thr, t, &pol[v], t0 + 1000000000ull, &res[v]);

			if (!res[v].pass_done || res[v].expired) {
				fprintf(stderr, "gc-yield: pass incomplete or removed entries\n");
				return 1;
			}
			us[v][i] = (double)ns / 1000.0;
			yields[v] += res[v].yields;
			visited[v] += res[v].rows_visited;
			locked[v] += res[v].rows_locked;
		}
	for (int v = 0; v < 2; v++) {
		struct bu_rec r;
		double p90;

		med[v] = bu_median(us[v], passes);
		p90 = bu_percentile(us[v], passes, 90);
		bu_rec_begin(&r, a, "gc-yield", names[v]);
		bu_rec_str(&r, "lock", lock_name(yc->lock));
		bu_rec_str(&r, "rcu", yc->rcu == CT_RCU_QSBR ? "qsbr" : "memb");
		bu_rec_int(&r, "rows", ct_table_rows(t));
		bu_rec_int(&r, "entries", entries);
		bu_rec_int(&r, "passes", passes);
		bu_rec_num(&r, "us_per_pass", med[v]);
		bu_rec_num(&r, "us_per_pass_p90", p90);
		bu_rec_num(&r, "ns_per_row", med[v] * 1000.0 / (double)ct_table_rows(t));
		bu_rec_num(&r, "rows_locked_per_pass", (double)locked[v] / passes);
		bu_rec_num(&r, "rows_visited_per_pass", (double)visited[v] / passes);
		bu_rec_num(&r, "yields_per_pass", (double)yields[v] / passes);
		if (v == 1) {
			bu_rec_num(&r, "ratio", med[0] / med[1]);
			bu_rec_num(&r, "faster_pct", (med[0] - med[1]) / med[0] * 100.0);
		}
		bu_rec_end(&r);
		free(us[v]);
	}
	ct_thread_detach(thr);
	ct_table_destroy(t);
	return 0;
}

int bench_gc_yield(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	unsigned passes = (unsigned)bu_opt_u64(a, "passes", quick ? 300 : 2000);
	uint64_t entries = bu_opt_u64(a, "entries", 10000);
	uint64_t rows = bu_opt_u64(a, "rows", 10000);
	static const struct yield_cfg cfgs[] = {
		{ CT_RCU_MEMB, CT_GC_LOCK_NONEMPTY },
		{ CT_RCU_QSBR, CT_GC_LOCK_NONEMPTY },
		{ CT_RCU_MEMB, CT_GC_LOCK_DUE_ROWS },
		{ CT_RCU_QSBR, CT_GC_LOCK_DUE_ROWS },
		{ CT_RCU_MEMB, CT_GC_LOCK_ALWAYS },
	};

	bu_note(a, "gc-yield: median full pass, %llu entries, not due; "
		"every-row vs throttled (1 ms) yields, interleaved",
		(unsigned long long)entries);
	const char *only_lock = bu_opt_str(a, "lock", NULL);
	const char *only_rcu = bu_opt_str(a, "rcu", NULL);

	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		if (only_lock && strcmp(only_lock, lock_name(cfgs[i].lock)))
			continue;
		if (only_rcu && strcmp(only_rcu, cfgs[i].rcu == CT_RCU_QSBR ? "qsbr" : "memb"))
			continue;
		if (run_cfg(a, &cfgs[i], rows, entries, passes))
			return 1;
	}
	return 0;
}
