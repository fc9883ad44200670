/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * run.h - one slice of the collector, as its files share it (private to
 * expire/).
 *
 * A slice (ct_gc_step, gc.c) is a pipeline of cache misses: due groups,
 * subs and rows found by the scan (scan.c), or due handles taken from the
 * wheel (pass_wheel.c), are queued with their next level prefetched and
 * worked on a few finds later, when their lines have arrived; the locked
 * visits of rows and slots, which remove what is due, are visit.c's.  The
 * stages feed each other both ways - a row visit queues handles, the
 * queues call the visits when full, and every yield drains every queue
 * (gc_drain) - so they share this one header rather than each other's:
 * the folder is one unit with one door.
 *
 * Everything here runs on the collector's thread, with the table's
 * gc_lock held and inside a read-side section.
 */
#ifndef CT_GC_RUN_H
#define CT_GC_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "base/state.h"
#include "table/event.h"
#include "table/htab.h"
#include "table/wheel.h"

#define GC_VICTIMS (CT_ROW_SLOTS * 8)
/* due groups, subs and rows found but not yet worked on (gc_queue_row) */
#ifndef GC_QUEUE
#define GC_QUEUE 8
#endif
#define GC_QUEUE_SUBS 4
#define GC_QUEUE_GROUPS 4
/* wheel handles whose rows are prefetched before their bounds are read */
#define GC_WHEEL_AHEAD 8

/* The monotonic clock the slices are budgeted on (ns). */
static inline uint64_t gc_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct gc_run {
	struct ct_thread *thr;
	struct ct_table *t;
	ct_time_ns now;
	uint64_t deadline;     /* monotonic ns; 0 = none */
	uint64_t last_yield;   /* monotonic ns */
	unsigned since_clock;  /* rows since the clock was last read */
	bool pressure;         /* early drop (ct_gc_step says when) */
	int64_t excess;        /* under pressure: removals that still bring
				* the count down to 95% of max (an estimate:
				* packet threads insert meanwhile) */
	bool wheel;            /* CT_GC_LOCK_WHEEL: bounds gc_row sets are
				* queued in the wheel (table/wheel.h) */
	bool stopped;
	struct ct_htab *h;     /* the generation this slice walks */
	bool retired;          /* h stopped being current at a yield */
	struct ct_gc_result *res;
	uint64_t next_due;     /* earliest bound seen this slice */
	/* due rows whose entries are being prefetched, oldest first, with
	 * the bounds that summarise them */
	unsigned q_head, q_n;
	struct gc_due_row {
		struct ct_row *row;
		_Atomic uint64_t *sub, *group;
		uint32_t ref;          /* a slot handle's (table/wheel.h), or
					* CT_WH_ROW << CT_WH_POS_SHIFT */
		uint32_t t;            /* a slot handle's time (wheel units) */
		uint64_t s;            /* a slot handle's slot, as looked at */
	} q[GC_QUEUE];
	/* due subs whose rows are being prefetched, and due groups whose
	 * line of sub bounds is (CT_GC_LOCK_DUE without pressure) */
	unsigned sq_head, sq_n, gq_head, gq_n;
	uint64_t sq[GC_QUEUE_SUBS], gq[GC_QUEUE_GROUPS];
	/* rows of wheel handles whose lines are being prefetched */
	unsigned a_head, a_n;
	struct gc_ahead {
		struct ct_row *row;    /* the ref's row */
		uint32_t ref, t;       /* the handle's */
	} ahead[GC_WHEEL_AHEAD];
	/* empty overflow rows unlinked, waiting for call_rcu (table/htab.h) */
	struct ct_ovf_retire *ovf_batch;
	/* removals not yet credited to their namespace (gc_ns_flush) */
	struct ct_ns *ns;
	uint64_t ns_expired, ns_early;
};


/* ---- gc.c: the slice's frame ---- */

/* Offer to yield (a quiescent state, the stop check), queues drained
 * first; may end the slice (g->stopped, g->retired). */
void gc_yield(struct gc_run *g);

/* After every group of rows: the throttled yield and the budget, on a
 * clock read once per 64 rows.  Returns false when the slice must end. */
bool gc_after_clock(struct gc_run *g);

/* Work off every queue, groups first (they feed the subs, which feed the
 * rows).  Called before anything that may end the slice or yield (after
 * a yield the generation may be gone), so that nothing due found by a
 * slice outlives it. */
void gc_drain(struct gc_run *g);

/* ---- visit.c: the locked visits ---- */

/* Expire what is due in one row (not moved); returns the row's new
 * bound. */
uint64_t gc_row(struct gc_run *g, struct ct_row *head);

/* Collect the oldest queued row or slot handle, folding a row's new bound
 * into the bounds above it. */
void gc_dequeue_row(struct gc_run *g);

/* Queue due row @r, whose bound was @rd, its due entries prefetched
 * (@sub, @group: the bounds it folds into when collected, or NULL). */
void gc_queue_row(struct gc_run *g, struct ct_row *r, uint64_t rd,
		  _Atomic uint64_t *sub, _Atomic uint64_t *group);

/* Credit the namespace of the last removals with them (and with the
 * references their queued entries hold). */
void gc_ns_flush(struct gc_run *g);

/* ---- scan.c: the scan (every policy but the wheel's own passes) ---- */

/* The scan from group *@grp on, until the slice ends or the pass is done
 * (res->pass_done); *@grp is where the next slice resumes, *@next_due the
 * least bound seen. */
void gc_scan(struct gc_run *g, uint64_t *grp, uint64_t *next_due);

void gc_dequeue_sub(struct gc_run *g);
void gc_dequeue_group(struct gc_run *g);

/* ---- pass_wheel.c: a pass by the wheel ---- */

/* A CT_GC_LOCK_WHEEL step: rings into the wheel, due handles visited;
 * true when everything due at g->now was collected. */
bool gc_wheel_step(struct gc_run *g);

/* Every packet thread's ring into the wheel. */
void gc_rings_drain(struct ct_table *t);

/* Look at the oldest row of the wheel's prefetch queue (and take it off). */
void gc_wheel_look_oldest(struct gc_run *g);

/* ---- inline: called per row or per handle ---- */

/* inline: the wheel calls it once per handle */
static inline bool gc_after_rows(struct gc_run *g, uint64_t rows)
{
	if (g->t->gc.yield != CT_GC_YIELD_EVERY_ROW &&
	    (g->since_clock += (unsigned)rows) >= 64)
		return gc_after_clock(g);
	return !g->stopped;
}

/* Whether slot @s with bound @sd is the one a slot handle of time @ht
 * was queued for: it has a bound, and the bound is the handle's unit (a
 * handle of time 0 - queued for a time at or before the epoch - matches
 * any bound: it is due, and looking costs one entry read). */
static inline bool gc_slot_matches(const struct ct_wheel *w, uint64_t s,
				   _Atomic uint16_t *sd, uint32_t ht)
{
	if (!s || !(s & CT_SLOT_BOUND))
		return false;
	return !ht || atomic_load_explicit(sd, memory_order_relaxed) ==
		      (uint16_t)(w->epoch + ht);
}

/* The slot within its row of chain position @pos. */
static inline unsigned gc_pos_slot(unsigned pos)
{
	return pos < CT_ROW_SLOTS ? pos : pos % CT_ROW_SLOTS;
}

/* The chain row of slot position @pos (NULL: the chain is shorter). */
static inline struct ct_row *gc_chain_row(struct ct_row *head, unsigned pos)
{
	struct ct_row *r = head;

	if (pos < CT_ROW_SLOTS)
		return r;
	for (unsigned j = pos / CT_ROW_SLOTS; j && r; j--)
		r = ct_row_next(r);
	return r;
}

/* The entry of slot @s, on its way to the cache: an entry is 8-aligned,
 * not 64, so what the pass reads of it may span two lines - its expiry,
 * status and lock (the first 22 bytes) to remove it, the whole 40-byte
 * core (key, addresses) when events copy it out. */
static inline void gc_prefetch_conn(const struct gc_run *g, uint64_t s)
{
	const char *c = (const char *)ct_slot_conn(s);

	__builtin_prefetch(c, 1);
	__builtin_prefetch(c + (ct_events_on(g->t) ? sizeof(struct ct_conn) - 1
						   : offsetof(struct ct_conn, lock)), 1);
}

/* Append (@r, @sub, @group, @ref, @t, @s) to the due queue (struct
 * gc_due_row), collecting its oldest first when it is full. */
static inline void gc_queue_push(struct gc_run *g, struct ct_row *r, _Atomic uint64_t *sub,
			  _Atomic uint64_t *group, uint32_t ref, uint32_t t, uint64_t s)
{
	struct gc_due_row *q;

	if (g->q_n == GC_QUEUE)
		gc_dequeue_row(g);
	q = &g->q[(g->q_head + g->q_n) % GC_QUEUE];
	q->row = r;
	q->sub = sub;
	q->group = group;
	q->ref = ref;
	q->t = t;
	q->s = s;
	g->q_n++;
}

#endif /* CT_GC_RUN_H */
