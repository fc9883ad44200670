/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/gc.h - the collector: expiry in bounded slices.
 *
 * Expired entries are removed by the collector, which walks the rows in
 * slices bounded by time, resuming where the last slice stopped.  Each row
 * keeps a lower bound of the earliest expiry among its entries, each run
 * of 8 rows (a sub) a lower bound over its rows, and each group of 64 rows
 * one over its subs, so a pass reads one word per 64 idle rows, the rows
 * of a due sub only, and locks a row only when something in it is due.
 * Between rows the collector offers to yield (RCU quiescent state, stop
 * check) at most once per millisecond, reading a cheap clock.
 *
 * By default (CT_GC_LOCK_WHEEL) the collector does not even read the
 * bounds of rows that are not due: every insert queues its entry's slot
 * in a timer wheel (a packet thread on a ring of its own, at the cost of
 * its slot's bound and a few stores per new entry, and 8 bytes per entry
 * in the wheel), and a pass visits the slots whose time has come.
 * Switching it on, and each online resize, cost one walk over the rows,
 * in slices.
 *
 * Two ways to run it:
 *  - ct_gc_step(): the embedding application calls it from its own loop
 *    with its own @now and a budget; it returns when the budget is spent
 *    or a pass completed.
 *  - ct_gc_start()/ct_gc_stop(): a collector thread owned by the library,
 *    which plans each pass for the earliest due time, between
 *    min_interval_ns and max_interval_ns, and reads @now from a clock the
 *    caller provides (CLOCK_MONOTONIC by default).
 *
 * The naive policies the kernel and pf moved away from are kept,
 * selectable, so the benchmarks can run old and new side by side.
 */
#ifndef CTRACK_GC_H
#define CTRACK_GC_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/table.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ct_gc_lock_policy {
	CT_GC_LOCK_DUE = 0,       /* lock a row only when its due bound has passed */
	CT_GC_LOCK_NONEMPTY,      /* pf: lock every non-empty row */
	CT_GC_LOCK_ALWAYS,        /* lock every row */
	CT_GC_LOCK_DUE_ROWS,      /* as CT_GC_LOCK_DUE, but without the 64-row
				   * group summaries: every row's bound is
				   * read (benchmarks: what the summaries save,
				   * and a pass that visits every row) */
	CT_GC_LOCK_WHEEL,         /* as CT_GC_LOCK_DUE, but due entries are
				   * found in a timer wheel of slot handles,
				   * queued by every insert (and row handles
				   * for shortened timeouts): a pass visits
				   * the entries that are due, not the
				   * bounds around them.  Switching it on
				   * costs one walk over the rows (in
				   * slices), as does every resize */
};

enum ct_gc_yield_policy {
	CT_GC_YIELD_THROTTLED = 0, /* offer to yield at most once per yield_ns */
	CT_GC_YIELD_EVERY_ROW,     /* offer to yield after every row */
};

struct ct_gc_policy {
	enum ct_gc_lock_policy lock;
	enum ct_gc_yield_policy yield;
	uint64_t yield_ns;         /* 0 = 1 ms */
	uint64_t min_interval_ns;  /* thread: shortest gap between passes; 0 = 10 ms */
	uint64_t max_interval_ns;  /* thread: longest gap; 0 = 1 s */
};

/* ct_gc_policy_default - the default policy (the wheel, throttled yields
 * every 1 ms, passes 10 ms to 1 s apart).  Any thread, O(1), cannot fail. */
void ct_gc_policy_default(struct ct_gc_policy *p);

/* ct_gc_set_policy - change the policy (zero fields take the default);
 * switching the wheel on costs the next step one walk over the rows.
 * Any thread, while no collector runs (neither a ct_gc_step nor the
 * collector thread); cannot fail. */
void ct_gc_set_policy(struct ct_table *t, const struct ct_gc_policy *p);

struct ct_gc_result {
	uint64_t rows_visited;    /* rows whose due bound was read (the
				   * wheel: handles looked at) */
	uint64_t groups_skipped;  /* 64-row groups skipped by their summary */
	uint64_t rows_locked;
	uint64_t expired;
	uint64_t yields;          /* times the yield hook ran */
	bool pass_done;           /* this call finished a full pass */
	ct_time_ns next_due;      /* lower bound of the next expiry seen */
	uint64_t ovf_rows_freed;  /* empty overflow rows taken out of their
				   * chains (reused a grace period later) */
};

/*
 * ct_gc_step - run the collector on the calling (attached) thread for at
 * most @budget_ns of wall-clock time (0: until the pass completes), as of
 * time @now; @res (if not NULL) says what it did.  Emits DESTROY events for
 * what it removes, on this thread, with the collector's lock held (a
 * handler must not call ct_gc_step or ct_thread_detach).  Cost: what is
 * due (the wheel) or the table's rows / 64 plus what is due (the scan);
 * it also helps an online resize first, within the budget.  One collector
 * at a time: returns -EBUSY at once when another thread is in a step (the
 * collector thread's included) or, for a moment, a packet thread hands its
 * due handles to the collector's wheel under the collector's lock
 * (table/due.c, ct_thread_detach); else 0.
 */
int ct_gc_step(struct ct_thread *thr, ct_time_ns now, uint64_t budget_ns,
	       struct ct_gc_result *res);

/* A clock for the collector thread: returns @now for the table. */
typedef ct_time_ns (*ct_clock_fn)(void *arg);

/* ct_gc_start - start the collector thread (one per table), named "ct-gc"
 * (top -H, ps -L, /proc/PID/task/TID/comm).  liburcu's call_rcu thread,
 * which frees what the collector removes, is started first from the
 * caller's thread if it is not running yet, so it takes the caller's
 * name, not "ct-gc".  @clock NULL means CLOCK_MONOTONIC.  Any one thread
 * at a time (not concurrently with ct_gc_stop).  Returns 0, -EALREADY (it
 * runs), or the negative errno of pthread_create. */
int ct_gc_start(struct ct_table *t, ct_clock_fn clock, void *clock_arg);

/* ct_gc_stop - stop it and wait for it to end (its current slice, at most
 * about 2 ms, and its thread's detach).  The thread that started it, or
 * any one thread at a time.  Returns 0 or -ESRCH (not running). */
int ct_gc_stop(struct ct_table *t);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_GC_H */
