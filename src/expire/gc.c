/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gc.c - the collector: expiry in time-bounded slices, rows locked only
 * when they have work, yields offered at most once per millisecond.  This
 * file is a slice's frame (ct_gc_step: help a resize, decide on early
 * drop, a pass by the wheel or by the scan, the end), its yields and its
 * policy; the passes are pass_wheel.c's and scan.c's, the locked visits
 * visit.c's, the collector's thread thread.c's (run.h joins them).
 *
 * The three lessons, and how far this goes beyond them:
 *  1. Linux's gc_worker works in bounded slices and offers to reschedule
 *     between buckets.  Here a slice resumes at its cursor and ends when
 *     its budget is spent; between rows the collector offers to yield (an
 *     RCU quiescent state and a stop check), but only when a cheap clock,
 *     read once per 64 rows, says a millisecond has passed.
 *  2. pf's purge thread locked only non-empty rows.  Here every row keeps
 *     a lower bound of its earliest expiry, every 8 rows (a sub) a bound
 *     over theirs and every 64 rows (a group) one over its 8 subs: a pass
 *     reads one word per 64 idle rows, one line of sub bounds per due
 *     group, the 8 rows of a due sub, and locks a row only when something
 *     in it is due.  Idle cost follows the table's size divided by 64;
 *     busy cost follows the number of expirations.
 *  Inside a due row, each slot keeps a coarse lower bound of its entry's
 *  expiry beside the rows (table/htab.h, "slot bounds"), set by the collector
 *  whenever it reads an expiry: a due row's entries that are not due are
 *  skipped without touching their lines, so a row with one due entry in
 *  five costs one entry read, not five.
 *  A busy pass is a cache-miss chain: group word, sub line, rows, each
 *  row's due entries.  It is pipelined (gc_queue_group and below): what is
 *  found due is queued with the next level prefetched and worked on a few
 *  finds later, so that the misses of several due entries overlap.  The
 *  queues are emptied before every yield and at the end of a slice.
 *  3. Scheduling follows the work: the collector thread sleeps until the
 *     earliest due time seen, within [min_interval, max_interval].
 *  4. With CT_GC_LOCK_WHEEL (the default) a pass does not scan bounds at
 *     all: the due entries come out of the timer wheel of table/wheel.h, one
 *     slot handle per entry queued by its insert.  A slot handle goes
 *     through a pipeline of its own (gc_wheel_ahead prefetches the row,
 *     gc_wheel_look checks the slot's bound without a lock and prefetches
 *     the entry, gc_slot locks the row and removes or requeues one entry);
 *     a row handle (a shortened timeout, a long chain's far slots, the
 *     seeding walk) goes into the scan's pipeline (gc_queue_row, gc_row),
 *     which then queues a slot handle for each bound it writes anew.  The
 *     scan remains for the naive policies, CT_GC_LOCK_DUE, passes under
 *     early-drop pressure, and tables too large for the wheel's refs.
 * The naive policies (lock every row, lock non-empty rows, yield at every
 * row) stay selectable so the benchmarks compare them in one run.
 *
 * Once an insert has found the table full with nothing to evict, the
 * collector's next pass also evicts entries that never became ASSURED
 * (or that their tracker lets go), while the count is at or above 95% of
 * the maximum - the kernel's gc_worker with gc_work->early_drop set - and
 * for that pass it looks at every non-empty row.
 */
#include <errno.h>
#include <string.h>

#include "expire/run.h"
#include "table/due.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/thread.h"

void ct_gc_set_policy(struct ct_table *t, const struct ct_gc_policy *p)
{
	struct ct_gc_policy d;

	ct_gc_policy_default(&d);
	t->gc = *p;
	if (!t->gc.yield_ns)
		t->gc.yield_ns = d.yield_ns;
	if (!t->gc.min_interval_ns)
		t->gc.min_interval_ns = d.min_interval_ns;
	if (!t->gc.max_interval_ns)
		t->gc.max_interval_ns = d.max_interval_ns;
	ct_due_wheel_switch(t);
}

/* Offer to yield: quiescent state (QSBR) or a fresh read-side section
 * (memb), and the stop check.  Queued rows are collected first: after the
 * yield their generation may be gone. */
void gc_yield(struct gc_run *g)
{
	struct ct_table *t = g->t;

	gc_drain(g);
	if (t->cfg.rcu == CT_RCU_QSBR) {
		t->rcu->read_quiescent_state();
	} else {
		t->rcu->read_unlock();
		t->rcu->read_lock();
	}
	if (atomic_load_explicit(&t->gc_stop, memory_order_relaxed))
		g->stopped = true;
	/* A resize that completed before this new read-side section began
	 * may have handed g->h to call_rcu, and nothing keeps it mapped for
	 * us now: if it is no longer current, the slice ends here without
	 * touching it again.  If it is still current, a later retirement
	 * waits for this section (it ends at the next yield). */
	if (atomic_load_explicit(&t->htab, memory_order_acquire) != g->h) {
		g->retired = true;
		g->stopped = true;
	}
	g->res->yields++;
}

/*
 * Called after every group of rows (@rows of them): the throttled yield
 * and the budget, on a clock read once per 64 rows - a group is 64 rows,
 * so once per group.  (The every-row policy yields inside the group
 * loop.)  Returns false when the slice must end.
 */
bool gc_after_clock(struct gc_run *g)
{
	uint64_t now = gc_mono_ns();

	g->since_clock = 0;
	if (now - g->last_yield >= g->t->gc.yield_ns) {
		gc_yield(g);
		/* a slice that holds gc_lock for long (a seeding walk of
		 * millions of rows, a pass with much due) empties the rings
		 * as it goes: a thread whose ring fills meanwhile cannot,
		 * and would drop its handle and ask for another walk */
		if (g->wheel)
			gc_rings_drain(g->t);
		g->last_yield = now;
	}
	if (g->deadline && now >= g->deadline)
		return false;
	return !g->stopped;
}

/* Work off every queue, groups first (they feed the subs, which feed the
 * rows): run.h. */
void gc_drain(struct gc_run *g)
{
	while (g->a_n)
		gc_wheel_look_oldest(g);
	while (g->gq_n)
		gc_dequeue_group(g);
	while (g->sq_n)
		gc_dequeue_sub(g);
	while (g->q_n)
		gc_dequeue_row(g);
	gc_ns_flush(g);
}


/* Help a resize first: the collector scans one generation.  Each round
 * runs in a read-side section of its own: ct_table_resize_step() looks at
 * the current generation before it takes resize_lock, and a resize
 * completing meanwhile retires that generation.  Within the budget. */
static void gc_help_resize(struct ct_table *t, uint64_t start, uint64_t budget_ns)
{
	for (;;) {
		bool more;

		t->rcu->read_lock();
		more = ct_table_resize_step(t, 256);
		t->rcu->read_unlock();
		if (!more || (budget_ns && gc_mono_ns() - start >= budget_ns))
			break;
	}
}

/*
 * Early drop, as the kernel's gc_worker: only once an insert found the
 * table full with nothing to evict, and only while the count is at or
 * above 95% of max - each removal brings it down, and the pass stops
 * dropping when it gets there.  A table that stays at 96% without a
 * refused insert keeps its entries, as the kernel's does.
 */
static void gc_pressure(struct gc_run *g)
{
	struct ct_table *t = g->t;

	ct_thread_fold_count(g->thr);
	if (atomic_load_explicit(&t->gc_early_drop, memory_order_relaxed)) {
		int64_t count = (int64_t)ct_table_count(t);
		uint64_t max95 = __atomic_load_n(&t->max95, __ATOMIC_RELAXED);

		g->pressure = max95 && count >= (int64_t)max95;
		if (g->pressure)
			g->excess = count - (int64_t)max95 + 1;
		else
			atomic_store_explicit(&t->gc_early_drop, false, memory_order_relaxed);
	}
}

/* The end of a slice, inside its read-side section: what was found due
 * collected, removals credited and handed to reclaim, the pass counted;
 * then the section ends and the counts are folded.  Returns the next due
 * time to report. */
static uint64_t gc_finish(struct gc_run *g, uint64_t next_due)
{
	struct ct_table *t = g->t;
	struct ct_gc_result *res = g->res;

	/* a pass is done only once the rows it found due are collected */
	if (!g->retired)
		gc_drain(g);
	gc_ns_flush(g);
	if (g->next_due < next_due)
		next_due = g->next_due;
	if (res->pass_done)
		atomic_fetch_add(&t->gc_passes, 1);
	if (g->pressure && (res->pass_done || g->excess <= 0))
		atomic_store_explicit(&t->gc_early_drop, false, memory_order_relaxed);
	ct_reclaim_flush(g->thr);
	ct_ovf_retire_flush(&g->ovf_batch, t->rcu);
	t->rcu->read_unlock();
	ct_thread_fold_count(g->thr);
	atomic_fetch_add(&t->gc_rows_locked, res->rows_locked);
	return next_due;
}

int ct_gc_step(struct ct_thread *thr, ct_time_ns now, uint64_t budget_ns,
	       struct ct_gc_result *res)
{
	struct ct_table *t = thr->t;
	struct ct_gc_result local;
	struct gc_run g;
	uint64_t grp, next_due = CT_DUE_NEVER;
	uint64_t start = gc_mono_ns();

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (pthread_mutex_trylock(&t->gc_lock) != 0)
		return -EBUSY;
	gc_help_resize(t, start, budget_ns);
	memset(&g, 0, sizeof(g));
	g.thr = thr;
	g.t = t;
	g.now = now;
	g.res = res;
	g.deadline = budget_ns ? start + budget_ns : 0;
	g.last_yield = start;
	g.next_due = CT_DUE_NEVER;
	gc_pressure(&g);
	g.wheel = t->gc.lock == CT_GC_LOCK_WHEEL;

	t->rcu->read_lock();
	g.h = atomic_load_explicit(&t->htab, memory_order_acquire);
	grp = t->gc_cursor;
	if (grp >= g.h->n_groups)
		grp = 0;
	/* refs name rows in 27 bits (table/wheel.h): a larger table is
	 * scanned */
	if (!ct_wheel_fits(g.h->n_rows))
		g.wheel = false;
	if (g.wheel) {
		bool done = gc_wheel_step(&g);

		if (!g.pressure) {
			/* no scan: the wheel found the due rows */
			res->pass_done = done && !g.retired;
			next_due = done ? ct_wheel_next_due(t->wheel) : now;
			goto end;
		}
	}
	gc_scan(&g, &grp, &next_due);
	t->gc_cursor = grp;
end:
	res->next_due = gc_finish(&g, next_due);
	pthread_mutex_unlock(&t->gc_lock);
	return 0;
}
