/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_gc_idle.c - what the collector costs when nothing is due.
 *
 * pf's purge thread went from 1.2% to 0.28% of a core by locking only
 * non-empty rows; the goal here is indistinguishable from zero.  The table
 * holds 1,000,000 long-lived ESTABLISHED TCP connections (handshake, one
 * data segment and its ACK each; 5-day timeout), created with the real
 * monotonic clock as @now so that the library's own collector thread
 * agrees on the time.
 *
 * Fixed schedule.  For each lock policy, this (the main) thread runs one
 * full pass per second with ct_gc_step() for --seconds of wall clock and
 * sleeps between passes; its CPU time (CLOCK_THREAD_CPUTIME_ID) over the
 * wall time is cpu_pct, and the median pass is us_per_pass.  Policies:
 * lock-always, lock-nonempty (pf), due-rows (per-row bounds only),
 * due-time (per-row bounds and per-64-row summaries, scanned) and wheel
 * (the default: due rows found in a timer wheel of row handles; its
 * first pass after being switched on walks every row once to seed it).
 *
 * Adaptive schedule.  Then the library's collector thread (ct_gc_start,
 * CLOCK_MONOTONIC) runs for the same period with its default schedule
 * (a pass at the earliest due time, at least every max_interval = 1 s);
 * the main thread sleeps, and the CPU of every thread but the main one
 * (getrusage minus the main thread's own clock) is the collector's.
 *
 * Row bounds are lower bounds that inserts set from the first packet's
 * timeout (SYN_SENT: 120 s) and refreshes never raise.  The connections
 * are created at now - 121 s, so the first (settling) pass finds every
 * row due, recomputes the bounds exactly and removes nothing (they live
 * 5 days), as the first pass after two minutes of a real run would.
 *
 * Options: --conns N (default 1M), --seconds S (default 10), --quick (3 s).
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static const char *lock_name(enum ct_gc_lock_policy l)
{
	switch (l) {
	case CT_GC_LOCK_ALWAYS: return "lock-always";
	case CT_GC_LOCK_NONEMPTY: return "lock-nonempty";
	case CT_GC_LOCK_DUE_ROWS: return "due-rows";
	case CT_GC_LOCK_WHEEL: return "wheel";
	default: return "due-time";
	}
}

/* Switched on, the wheel is seeded by one walk over the rows in its
 * first pass (what switching it on, or a resize, costs): done here,
 * before the measured period, which is about the steady state.  Returns
 * the walk's wall time in us (0 for the other policies). */
static double seed_wheel(struct ct_thread *thr, enum ct_gc_lock_policy lock)
{
	struct ct_gc_result res;
	uint64_t t0 = bu_mono_ns();

	if (lock != CT_GC_LOCK_WHEEL)
		return 0;
	ct_gc_step(thr, t0, 0, &res);
	return (double)(bu_mono_ns() - t0) / 1000.0;
}

static void fixed_schedule(const struct bench_args *a, struct ct_table *t,
			   struct ct_thread *thr, enum ct_gc_lock_policy lock,
			   unsigned seconds, uint64_t conns)
{
	struct ct_gc_policy pol;
	double *us = calloc(seconds + 1, sizeof(double));
	uint64_t locked = 0, visited = 0, skipped = 0, expired = 0;
	uint64_t wall0, cpu0, wall, cpu;
	unsigned passes = 0;
	struct bu_rec r;
	double seed_us;

	ct_gc_policy_default(&pol);
	pol.lock = lock;
	ct_gc_set_policy(t, &pol);
	seed_us = seed_wheel(thr, lock);
	wall0 = bu_mono_ns();
	cpu0 = bu_thread_cpu_ns();
	for (unsigned i = 0; i < seconds; i++) {
		struct ct_gc_result res;
		uint64_t t0 = bu_mono_ns(), next = wall0 + (i + 1) * 1000000000ull;

		ct_gc_step(thr, t0, 0, &res);
		us[passes++] = (double)(bu_mono_ns() - t0) / 1000.0;
		locked += res.rows_locked;
		visited += res.rows_visited;
		skipped += res.groups_skipped;
		expired += res.expired;
		t0 = bu_mono_ns();
		if (next > t0)
			bu_sleep_ns(next - t0);
	}
	cpu = bu_thread_cpu_ns() - cpu0;
	wall = bu_mono_ns() - wall0;
	bu_rec_begin(&r, a, "gc-idle", lock_name(lock));
	bu_rec_str(&r, "schedule", "fixed-1s");
	bu_rec_int(&r, "conns", conns);
	bu_rec_int(&r, "rows", ct_table_rows(t));
	bu_rec_int(&r, "passes", passes);
	bu_rec_num(&r, "seconds", (double)wall / 1e9);
	bu_rec_num(&r, "cpu_pct", (double)cpu * 100.0 / (double)wall);
	bu_rec_num(&r, "us_per_pass", bu_median(us, passes));
	bu_rec_num(&r, "us_per_pass_max", us[passes - 1]);
	bu_rec_num(&r, "rows_visited_per_pass", (double)visited / passes);
	bu_rec_num(&r, "rows_locked_per_pass", (double)locked / passes);
	bu_rec_num(&r, "groups_skipped_per_pass", (double)skipped / passes);
	bu_rec_int(&r, "expired", expired);
	if (lock == CT_GC_LOCK_WHEEL)
		bu_rec_num(&r, "us_seed_walk", seed_us);
	bu_rec_end(&r);
	free(us);
}

static void adaptive(const struct bench_args *a, struct ct_table *t,
		     struct ct_thread *thr, enum ct_gc_lock_policy lock,
		     unsigned seconds, uint64_t conns)
{
	struct ct_gc_policy pol;
	struct ct_stats s0, s1;
	uint64_t wall0, proc0, self0, wall, other;
	struct bu_rec r;
	int err;

	ct_gc_policy_default(&pol);
	pol.lock = lock;
	ct_gc_set_policy(t, &pol);
	seed_wheel(thr, lock);
	ct_table_get_stats(t, &s0);
	wall0 = bu_mono_ns();
	proc0 = bu_proc_cpu_ns();
	self0 = bu_thread_cpu_ns();
	if ((err = ct_gc_start(t, NULL, NULL)) < 0) {
		fprintf(stderr, "gc-idle: ct_gc_start: %s\n", strerror(-err));
		return;
	}
	bu_sleep_ns((uint64_t)seconds * 1000000000ull);
	ct_gc_stop(t);
	wall = bu_mono_ns() - wall0;
	other = (bu_proc_cpu_ns() - proc0) - (bu_thread_cpu_ns() - self0);
	ct_table_get_stats(t, &s1);
	bu_rec_begin(&r, a, "gc-idle", lock_name(lock));
	bu_rec_str(&r, "schedule", "adaptive-thread");
	bu_rec_int(&r, "conns", conns);
	bu_rec_int(&r, "rows", ct_table_rows(t));
	bu_rec_int(&r, "passes", s1.gc_passes - s0.gc_passes);
	bu_rec_num(&r, "seconds", (double)wall / 1e9);
	/* getrusage ticks in microseconds of scheduler accounting */
	bu_rec_num(&r, "cpu_pct", (double)other * 100.0 / (double)wall);
	bu_rec_num(&r, "cpu_ms", (double)other / 1e6);
	bu_rec_int(&r, "rows_locked", s1.gc_rows_locked - s0.gc_rows_locked);
	bu_rec_end(&r);
}

int bench_gc_idle(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	uint64_t conns = bu_opt_u64(a, "conns", 1000000);
	unsigned seconds = (unsigned)bu_opt_u64(a, "seconds", quick ? 3 : 10);
	static const enum ct_gc_lock_policy fixed[] = {
		CT_GC_LOCK_ALWAYS, CT_GC_LOCK_NONEMPTY, CT_GC_LOCK_DUE_ROWS,
		CT_GC_LOCK_DUE, CT_GC_LOCK_WHEEL,
	};
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_gc_result res;
	uint64_t t0, ok;

	bu_config(&cfg, 0, true);
	t = bu_table(&cfg);
	thr = ct_thread_attach(t);
	t0 = bu_mono_ns();
	ok = bu_fill_tcp(thr, 0, conns, 0, t0 > 200000000000ull ? t0 - 121000000000ull : t0);
	if (ok != conns) {
		fprintf(stderr, "gc-idle: only %llu of %llu flows established\n",
			(unsigned long long)ok, (unsigned long long)conns);
		return 1;
	}
	bu_note(a, "gc-idle: %llu ESTABLISHED connections filled in %.2f s; "
		"%u s per variant", (unsigned long long)conns,
		(double)(bu_mono_ns() - t0) / 1e9, seconds);
	/* settle the bounds (see the top of the file) */
	ct_gc_step(thr, bu_mono_ns(), 0, &res);
	if (res.expired) {
		fprintf(stderr, "gc-idle: settling pass removed entries\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		fixed_schedule(a, t, thr, fixed[i], seconds, conns);
	/* the collector thread attaches itself; this thread goes quiet */
	adaptive(a, t, thr, CT_GC_LOCK_DUE, seconds, conns);
	adaptive(a, t, thr, CT_GC_LOCK_WHEEL, seconds, conns);
	adaptive(a, t, thr, CT_GC_LOCK_NONEMPTY, seconds, conns);
	ct_thread_detach(thr);
	ct_table_destroy(t);
	return 0;
}
