/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gc.c - the collector: expiry in time-bounded slices, rows locked only
 * when they have work, yields offered at most once per millisecond.
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
 *  expiry beside the rows (htab.h, "slot bounds"), set by the collector
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
 *     all: the due entries come out of the timer wheel of wheel.h, one
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
 * Keeping bounds exact without losing a lowering.  A bound may be lowered
 * by any writer (insert, a timeout getting shorter) while the collector
 * recomputes it.  The collector first stores "never" in the bound, then
 * reads what it summarises (the entries' expiries, or the rows' bounds),
 * then lowers the bound to the minimum it read.  A writer first stores its
 * new expiry (or row bound), then loads the bound and lowers it if needed.
 * All of these are sequentially consistent, so of two racing sides at
 * least one sees the other's store: either the collector reads the new
 * expiry, or the writer reads "never" (or the collector's result) and
 * lowers it itself.  No expiry is ever hidden behind a bound.
 *
 * A locked row's overflow rows that are left empty are taken out of its
 * chain for reuse (htab.h), here because the collector is the one that
 * empties rows in bulk and already holds the lock - with the wheel on,
 * only an empty tail, since slot handles name positions in the chain.
 *
 * Once an insert has found the table full with nothing to evict, the
 * collector's next pass also evicts entries that never became ASSURED
 * (or that their tracker lets go), while the count is at or above 95% of
 * the maximum - the kernel's gc_worker with gc_work->early_drop set - and
 * for that pass it looks at every non-empty row.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "proto/proto.h"
#include "base/rcu.h"
#include "table/table_impl.h"

#define GC_VICTIMS (CT_ROW_SLOTS * 8)
/* due groups, subs and rows found but not yet worked on (gc_queue_row) */
#ifndef GC_QUEUE
#define GC_QUEUE 8
#endif
#define GC_QUEUE_SUBS 4
#define GC_QUEUE_GROUPS 4
/* wheel handles whose rows are prefetched before their bounds are read */
#define GC_WHEEL_AHEAD 8

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ct_gc_policy_default(struct ct_gc_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->lock = CT_GC_LOCK_WHEEL;
	p->yield = CT_GC_YIELD_THROTTLED;
	p->yield_ns = 1000000;
	p->min_interval_ns = 10000000;
	p->max_interval_ns = 1000000000;
}

/* The wheel is on while the policy asks for it; switched on, it starts
 * unseeded (wheel.h). */
static void gc_wheel_switch(struct ct_table *t)
{
	bool on = t->gc.lock == CT_GC_LOCK_WHEEL;

	if (on && !atomic_load(&t->wheel_on))
		atomic_store_explicit(&t->wheel_reseed, true, memory_order_release);
	atomic_store(&t->wheel_on, on);
}

void ct_gc_init(struct ct_table *t)
{
	ct_gc_policy_default(&t->gc);
	gc_wheel_switch(t);
}

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
	gc_wheel_switch(t);
}

bool ct_conn_can_early_drop(const struct ct_conn *c)
{
	const struct ct_proto *p;
	uint32_t st = ct_conn_status(c);

	if (st & CT_ST_DYING)
		return false;
	if (!(st & CT_ST_ASSURED))
		return true;
	p = ct_proto_by_index(c->proto);
	return p->can_early_drop && p->can_early_drop(c);
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
				* queued in the wheel (wheel.h) */
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
		uint32_t ref;          /* a slot handle's (wheel.h), or
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
	/* empty overflow rows unlinked, waiting for call_rcu (htab.h) */
	struct ct_ovf_retire *ovf_batch;
	/* removals not yet credited to their namespace (gc_ns_flush) */
	struct ct_ns *ns;
	uint64_t ns_expired, ns_early;
};

/*
 * Credit the namespace of the last removals with them: one atomic add per
 * counter per run of removals from one namespace, instead of per entry,
 * and so for the references the removed entries hold on it until their
 * batch is freed (ct_table_queue_free_noref).  The namespace stays
 * allocated meanwhile: its published reference is dropped a grace period
 * after a teardown, and the removals' batches are freed a grace period
 * after they were queued, and gc_yield() flushes before it offers a
 * quiescent state, ct_gc_step before its read-side section ends.
 */
static void gc_ns_flush(struct gc_run *g)
{
	struct ct_ns *ns = g->ns;

	if (!ns)
		return;
	atomic_fetch_add_explicit(&ns->refs, g->ns_expired + g->ns_early,
				  memory_order_relaxed);
	if (g->ns_expired)
		CT_NS_ADD(g->thr, ns, expired, g->ns_expired);
	if (g->ns_early)
		CT_NS_ADD(g->thr, ns, early_drop, g->ns_early);
	ct_ns_count_add_shard(ns, g->thr->ns_shard, -(int64_t)(g->ns_expired + g->ns_early));
	g->ns = NULL;
	g->ns_expired = g->ns_early = 0;
}

static void gc_drain(struct gc_run *g);
static void gc_rings_drain(struct ct_table *t);

/* Offer to yield: quiescent state (QSBR) or a fresh read-side section
 * (memb), and the stop check.  Queued rows are collected first: after the
 * yield their generation may be gone. */
static void gc_yield(struct gc_run *g)
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
static bool gc_after_clock(struct gc_run *g)
{
	uint64_t now = mono_ns();

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

/* inline: the wheel calls it once per handle */
static inline bool gc_after_rows(struct gc_run *g, uint64_t rows)
{
	if (g->t->gc.yield != CT_GC_YIELD_EVERY_ROW &&
	    (g->since_clock += (unsigned)rows) >= 64)
		return gc_after_clock(g);
	return !g->stopped;
}

/* Set the bound of slot @sl (holding @s) from the expiry just read, with
 * the row locked, and mark it valid; stores skipped where nothing would
 * change.  Release: the slot still publishes its entry to readers. */
static inline void gc_slot_due_set(_Atomic uint64_t *sl, uint64_t s,
				   _Atomic uint16_t *p, uint64_t exp)
{
	uint16_t v = ct_slot_due_enc(exp);

	if (!(s & CT_SLOT_BOUND) || atomic_load_explicit(p, memory_order_relaxed) != v)
		atomic_store_explicit(p, v, memory_order_relaxed);
	if (!(s & CT_SLOT_BOUND))
		atomic_store_explicit(sl, s | CT_SLOT_BOUND, memory_order_release);
}

/* Clear group @grp's handle mark (htab.h), before its dirty bits are
 * read: a store only when there is one. */
static inline void gc_hmark_clear(struct ct_htab *h, uint64_t grp)
{
	_Atomic uint32_t *m = ct_group_hmark(h, grp);

	if (atomic_load_explicit(m, memory_order_relaxed))
		atomic_store_explicit(m, 0, memory_order_seq_cst);
}

static bool row_nonempty(const struct ct_row *head)
{
	for (const struct ct_row *r = head; r; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS; k++)
			if (atomic_load_explicit(&((struct ct_row *)r)->slot[k],
						 memory_order_relaxed))
				return true;
	return false;
}

/* Expire what is due in one row (the row is not moved).  Returns the
 * row's new bound.  A row with more due entries than one locking takes
 * (GC_VICTIMS) is locked again, so that a full pass leaves nothing due
 * behind but entries another thread held locked.
 *
 * The slot bounds (htab.h) say which entries may be due: the others are
 * not read, their bounds stand in for their expiries in the row's new
 * bound.  An entry without a valid bound is read, and every expiry read
 * of an entry that stays sets its slot's bound.  The row
 * bound is taken (set to "never") before the dirty bit is read, and a
 * writer that shortens a timeout sets the bit before it lowers the row
 * bound: either the bit is seen here, cleared, and every entry read after
 * the writer's store, or the bit stays set for the next visit and the
 * writer's lowering lands after the "never" store.  Under early-drop
 * pressure every entry is read. */
static void gc_victims(struct gc_run *g, struct ct_conn **victims, const uint8_t *early,
		       const struct ct_conn_info *infos, unsigned n);

static uint64_t gc_row(struct gc_run *g, struct ct_row *head)
{
	struct ct_table *t = g->t;
	struct ct_htab *h = g->h;
	struct ct_conn *victims[GC_VICTIMS];
	uint8_t early[GC_VICTIMS];
	struct ct_conn_info *infos = NULL;
	struct ct_conn_info info_buf[8];
	uint64_t idx = (uint64_t)(head - h->rows);
	_Atomic uint64_t *dirty = &h->slot_dirty[idx / CT_GROUP_ROWS];
	uint64_t dbit = 1ull << (idx % CT_GROUP_ROWS);
	unsigned n;
	uint64_t m, d, du, bmask, mdeep;
	unsigned j;
	int64_t lim;
	uint32_t mind;
	bool events = ct_events_on(t);
	bool full, use_sd;

again:
	n = 0;
	m = CT_DUE_NEVER;
	infos = NULL;
	full = false;
	ct_row_lock(head);
	if (ct_row_moved(head)) {
		ct_row_unlock(head);
		return CT_DUE_NEVER;
	}
	if (g->wheel && !g->pressure &&
	    (d = ct_due_get(&head->due_inv)) > g->now) {
		/* a second handle for a row collected since: whoever set
		 * its bound queued a handle for it (wheel.h) */
		ct_row_unlock(head);
		return d;
	}
	g->res->rows_locked++;
	d = ct_due_take(&head->due_inv);
	use_sd = !g->pressure;
	if (atomic_load_explicit(dirty, memory_order_seq_cst) & dbit) {
		atomic_fetch_and_explicit(dirty, ~dbit, memory_order_seq_cst);
		use_sd = false;
	}
	/* slot bounds decoded as distances from the row bound, in units
	 * (ct_slot_due_lower: a bound's decoded time is d's unit plus its
	 * distance): a slot is due when its distance is at most @lim, and
	 * the least distance of the slots not due gives their part of the
	 * new bound.  Without a usable row bound, every slot is read. */
	if (!ct_slot_due_base(d, &du))
		use_sd = false;
	bmask = use_sd ? CT_SLOT_BOUND : 0;
	lim = ct_slot_due_lim(du, g->now);
	mind = UINT32_MAX;
	mdeep = CT_DUE_NEVER;
	j = 0;
	for (struct ct_row *r = head; r; r = ct_row_next(r), j++) {
		_Atomic uint16_t *sd = ct_row_slot_due(h, head, r);

		for (int k = 0; k < CT_ROW_SLOTS; k++) {
			uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_relaxed);
			struct ct_conn *c;
			uint64_t exp;

			if (!s)
				continue;
			if (s & bmask) {
				uint32_t dist = ct_slot_due_dist(
					du, atomic_load_explicit(&sd[k], memory_order_relaxed));

				if ((int64_t)dist > lim) {
					/* not due: the entry is not read */
					if (dist < mind)
						mind = dist;
					if (g->wheel && j * CT_ROW_SLOTS + (unsigned)k > CT_WH_MAX_POS &&
					    ((du + dist) << CT_SLOT_DUE_SHIFT) < mdeep)
						mdeep = (du + dist) << CT_SLOT_DUE_SHIFT;
					continue;
				}
			}
			c = ct_slot_conn(s);
			exp = __atomic_load_n(&c->expires, __ATOMIC_SEQ_CST);
			/* under pressure every entry is a candidate; whether
			 * its tracker lets it go early is read under its lock */
			if (exp > g->now && !(g->pressure && g->excess > 0))
				goto keep;
			if (n == GC_VICTIMS) {
				if (exp <= g->now)
					full = true;
				goto keep;
			}
			if (!ct_conn_trylock(c))
				goto keep;   /* busy: looked at next pass */
			exp = c->expires;
			if (exp > g->now &&
			    !(g->pressure && g->excess > 0 && ct_conn_can_early_drop(c))) {
				ct_conn_unlock(c);
				goto keep;
			}
			if (ct_conn_test_and_set(c, CT_ST_DYING)) {
				ct_conn_unlock(c);
				continue;
			}
			if (events && n < 8) {
				ct_conn_fill_info(t, c, &info_buf[n]);
				infos = info_buf;
			}
			ct_conn_unlock(c);
			atomic_store_explicit(&r->slot[k], 0, memory_order_release);
			early[n] = exp > g->now;
			victims[n++] = c;
			g->excess--;
			continue;
keep:
			/* kept (a busy entry, due, keeps the row due: exp <= now) */
			if (exp < m)
				m = exp;
			if (g->wheel) {
				unsigned pos = j * CT_ROW_SLOTS + (unsigned)k;

				if (pos > CT_WH_MAX_POS) {
					if (exp < mdeep)
						mdeep = exp;
				} else if (!(s & CT_SLOT_BOUND) ||
					   atomic_load_explicit(&sd[k], memory_order_relaxed) !=
					   ct_slot_due_enc(exp)) {
					ct_wheel_push(&t->wheel, (uint32_t)idx | pos << CT_WH_POS_SHIFT,
						      exp, false);
				}
			}
			gc_slot_due_set(&r->slot[k], s, &sd[k], exp);
		}
	}
	if (mind != UINT32_MAX && ((du + mind) << CT_SLOT_DUE_SHIFT) < m)
		m = (du + mind) << CT_SLOT_DUE_SHIFT;
	/* overflow rows left empty leave the chain (htab.h says why) */
	if (ct_row_next(head))
		g->res->ovf_rows_freed +=
			ct_htab_ovf_unlink_empty(h, head, &g->ovf_batch, t->rcu, g->wheel);
	/* slot handles cover the slots up to CT_WH_MAX_POS; a row handle
	 * the ones beyond */
	ct_due_lower(&head->due_inv, m);
	if (g->wheel && mdeep != CT_DUE_NEVER)
		ct_wheel_push(&t->wheel, (uint32_t)idx | CT_WH_ROW << CT_WH_POS_SHIFT,
			      mdeep, false);
	ct_row_unlock(head);
	gc_victims(g, victims, early, infos, n);
	if (full)
		goto again;
	return ct_due_get(&head->due_inv);
}

/* One removed entry, after the unlock: its event (@ci: its fields read
 * under its lock, or NULL: read now), counters, queued freeing.  Inline:
 * a slot handle's visit removes one entry (gc_slot). */
static inline __attribute__((always_inline)) void
gc_victim(struct gc_run *g, struct ct_conn *c, bool early, const struct ct_conn_info *ci)
{
	struct ct_thread *thr = g->thr;
	struct ct_table *t = g->t;
	struct ct_ns *ns = ct_slab_chunk_of(c)->slab->owner;

	if (ct_events_on(t)) {
		struct ct_conn_info late;

		if (!ci) {
			ct_conn_lock(c);
			ct_conn_fill_info(t, c, &late);
			ct_conn_unlock(c);
			ci = &late;
		}
		ct_event_emit(t, CT_EV_DESTROY, CT_EVW_DESTROY,
			      early ? CT_DESTROY_EARLY_DROP : CT_DESTROY_TIMEOUT, g->now, ci);
	}
	if (ns != g->ns) {
		gc_ns_flush(g);
		g->ns = ns;
	}
	/* each removal is counted once, under one cause (stats.h), as
	 * track.c's early_drop() does */
	if (early) {
		CT_CTR_INC(thr, early_drop);
		g->ns_early++;
	} else {
		CT_CTR_INC(thr, expired);
		g->ns_expired++;
	}
	ct_thread_count_add(thr, -1);
	ct_table_queue_free_noref(thr, c);   /* gc_ns_flush adds the reference */
	g->res->expired++;
}

/* The removed entries of one locked row visit (gc_row), after the
 * unlock; the first 8 have @infos (when events are on). */
static void gc_victims(struct gc_run *g, struct ct_conn **victims, const uint8_t *early,
		       const struct ct_conn_info *infos, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		gc_victim(g, victims[i], early[i], infos && i < 8 ? &infos[i] : NULL);
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

/*
 * A slot handle's visit (@key its ref, @ht its time, @seen the slot as
 * gc_wheel_look read it): a due entry in the slot is removed, whichever
 * handle finds it; for one that is not due, the slot's bound says
 * whether the handle is still the slot's - if so the entry was refreshed
 * and is queued again by its expiry, else the handle is stale (its entry
 * left, or a later handle was queued for it) and is dropped.
 */
static inline __attribute__((always_inline)) void
gc_slot(struct gc_run *g, struct ct_row *head, uint32_t key, uint32_t ht, uint64_t seen)
{
	struct ct_table *t = g->t;
	struct ct_htab *h = g->h;
	unsigned pos = key >> CT_WH_POS_SHIFT;
	struct ct_conn_info info;
	bool have_info = false;
	unsigned k = gc_pos_slot(pos);
	struct ct_row *r;
	_Atomic uint16_t *sd;
	struct ct_conn *c;
	uint64_t s, exp;

	/* A slot of the head row whose entry (prefetched) is not due: its
	 * bound, another line, says whether the handle is still the slot's;
	 * a stale one is dropped without the lock.  The entry is readable:
	 * no quiescent state since the slot was read (gc_yield drains the
	 * queues first).  A due entry is removed whichever handle finds it,
	 * and its bound is never read. */
	if (pos < CT_ROW_SLOTS &&
	    __atomic_load_n(&ct_slot_conn(seen)->expires, __ATOMIC_RELAXED) > g->now &&
	    !gc_slot_matches(&t->wheel, seen, &ct_slot_due(h, key & CT_WH_ROW_MASK)[k], ht))
		return;
	ct_row_lock(head);
	g->res->rows_locked++;
	if (ct_row_moved(head))
		goto out;
	r = gc_chain_row(head, pos);
	if (!r)
		goto out;
	s = atomic_load_explicit(&r->slot[k], memory_order_relaxed);
	if (!(s & CT_SLOT_BOUND))
		goto out;
	c = ct_slot_conn(s);
	exp = __atomic_load_n(&c->expires, __ATOMIC_SEQ_CST);
	if (exp > g->now)
		goto requeue;
	/* due: removed whichever handle finds it (the slot bound, another
	 * line, is read only for an entry that stays) */
	if (!ct_conn_trylock(c)) {
		/* busy: the next step looks again */
		ct_wheel_push_t(&t->wheel, key, ht, false);
		goto out;
	}
	exp = c->expires;
	if (exp > g->now) {
		ct_conn_unlock(c);
		goto requeue;
	}
	if (ct_conn_test_and_set(c, CT_ST_DYING)) {
		ct_conn_unlock(c);
		goto out;
	}
	if (ct_events_on(t)) {
		ct_conn_fill_info(t, c, &info);
		have_info = true;
	}
	ct_conn_unlock(c);
	atomic_store_explicit(&r->slot[k], 0, memory_order_release);
	/* only the chain's last row can have become an empty tail */
	if (r != head && !ct_row_next(r) && ct_row_holds_none(r))
		g->res->ovf_rows_freed +=
			ct_htab_ovf_unlink_empty(h, head, &g->ovf_batch, t->rcu, true);
	ct_row_unlock(head);
	gc_victim(g, c, false, have_info ? &info : NULL);
	return;
requeue:
	/* refreshed, if this handle is the slot's (else it is stale: a
	 * later one was queued for the bound there now) */
	sd = ct_row_slot_due(h, head, r);
	if (gc_slot_matches(&t->wheel, s, &sd[k], ht)) {
		atomic_store_explicit(&sd[k], ct_slot_due_enc(exp), memory_order_relaxed);
		ct_wheel_push(&t->wheel, key, exp, false);
	}
out:
	ct_row_unlock(head);
}

/* Collect the oldest queued row and fold its new bound into the bounds
 * above it: they were set to "never" before the row's bound was read, and
 * a lowering after that keeps the store-then-scan order. */
static void gc_dequeue_row(struct gc_run *g)
{
	struct gc_due_row *q = &g->q[g->q_head];

	if (q->ref >> CT_WH_POS_SHIFT != CT_WH_ROW) {
		gc_slot(g, q->row, q->ref, q->t, q->s);
	} else {
		uint64_t rd = gc_row(g, q->row);

		if (q->sub) {
			ct_due_lower(q->sub, rd);
			ct_due_lower(q->group, rd);
		}
		if (rd < g->next_due)
			g->next_due = rd;
	}
	g->q_head = (g->q_head + 1) % GC_QUEUE;
	g->q_n--;
}

static void gc_dequeue_sub(struct gc_run *g);
static void gc_dequeue_group(struct gc_run *g);

/* Work off every queue, groups first (they feed the subs, which feed the
 * rows).  Called before anything that may end the slice or yield (after a
 * yield the generation may be gone), so that nothing due found by a slice
 * outlives it. */
static void gc_wheel_look_oldest(struct gc_run *g);

static void gc_drain(struct gc_run *g)
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
static void gc_queue_push(struct gc_run *g, struct ct_row *r, _Atomic uint64_t *sub,
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

/*
 * Queue due row @r, whose bound was @rd: prefetch the entries its slots
 * point to that no valid slot bound shows as not due yet, and collect
 * the row only when GC_QUEUE more due rows have been found (or at the
 * next drain).  Checking an entry costs one cache miss (its expiry is
 * read); found a few rows ahead, those misses overlap with the work on
 * the rows before it instead of being waited for one by one.  Rows are
 * collected in the order they were found, so DESTROY events keep the
 * order of a pass without the queue.  (The slot bounds are read here
 * without the row lock: a hint for the prefetch only; gc_row reads them
 * again, locked.)
 */
static void gc_queue_row(struct gc_run *g, struct ct_row *r, uint64_t rd,
			 _Atomic uint64_t *sub, _Atomic uint64_t *group)
{
	_Atomic uint16_t *sd = ct_slot_due(g->h, (uint64_t)(r - g->h->rows));
	/* gc_row's decoding, as a hint (rd <= now here) */
	uint64_t du;
	int64_t lim = ct_slot_due_base(rd, &du) ? ct_slot_due_lim(du, g->now) : INT64_MAX;

	for (int k = 0; k < CT_ROW_SLOTS; k++) {
		uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_relaxed);

		if (s && (!(s & CT_SLOT_BOUND) ||
			  (int64_t)ct_slot_due_dist(du, atomic_load_explicit(&sd[k], memory_order_relaxed)) <= lim))
			gc_prefetch_conn(g, s);
	}
	/* an overflow row and its slot bounds: gc_row reads both */
	{
		const struct ct_row *o = ct_row_next(r);

		if (o) {
			__builtin_prefetch(o, 1);
			__builtin_prefetch(o + 1, 1);
		}
	}
	gc_queue_push(g, r, sub, group, CT_WH_ROW << CT_WH_POS_SHIFT, 0, 0);
}

/* Queue slot handle (@ref naming a slot of @r's chain, time @t) whose
 * slot holds @s: its entry prefetched, collected GC_QUEUE finds later. */
static void gc_queue_slot(struct gc_run *g, struct ct_row *r, uint32_t ref, uint32_t t,
			  uint64_t s)
{
	gc_prefetch_conn(g, s);
	gc_queue_push(g, r, NULL, NULL, ref, t, s);
}

/*
 * The rows [first, last) of one sub under the due-time rules, with no
 * yield per row and no early-drop pressure: the loop every busy pass
 * spends its time in, kept down to a load and two compares per row.  Due
 * rows are queued (their bounds then reach @sub and @group when they are
 * collected).  Returns the minimum of the other rows' bounds.
 */
static uint64_t gc_rows_due(struct gc_run *g, struct ct_row *rows,
			    uint64_t first, uint64_t last,
			    _Atomic uint64_t *sub, _Atomic uint64_t *group)
{
	ct_time_ns now = g->now;
	uint64_t gmin = CT_DUE_NEVER;

	for (uint64_t i = first; i < last; i++) {
		uint64_t rd = ct_due_get(&rows[i].due_inv);

		if (rd <= now && !ct_row_moved(&rows[i]))
			gc_queue_row(g, &rows[i], rd, sub, group);
		else if (rd < gmin)
			gmin = rd;
	}
	return gmin;
}

/*
 * The pipeline of a CT_GC_LOCK_DUE pass.  A due group is queued with its
 * line of sub bounds prefetched; when GC_QUEUE_GROUPS more have been
 * found its due subs are queued with their eight rows prefetched; when
 * GC_QUEUE_SUBS more subs have been found those rows' bounds are read and
 * the due rows queued with their entries prefetched (gc_queue_row).  At a
 * few due entries per million rows and short intervals every level is one
 * cache miss per due entry; found ahead, the misses overlap.  Each bound
 * is set to "never" when its level is queued, before anything it
 * summarises is read, and lowered as its parts are done.
 */
static void gc_dequeue_sub(struct gc_run *g)
{
	uint64_t sub = g->sq[g->sq_head];
	uint64_t first = sub * CT_SUB_ROWS, last = first + CT_SUB_ROWS;
	_Atomic uint64_t *group = &g->h->group_due_inv[sub / CT_GROUP_SUBS];
	uint64_t smin;

	g->sq_head = (g->sq_head + 1) % GC_QUEUE_SUBS;
	g->sq_n--;
	if (last > g->h->n_rows)
		last = g->h->n_rows;
	smin = gc_rows_due(g, g->h->rows, first, last, &g->h->sub_due_inv[sub], group);
	g->res->rows_visited += last - first;
	ct_due_lower(&g->h->sub_due_inv[sub], smin);
	ct_due_lower(group, smin);
	if (smin < g->next_due)
		g->next_due = smin;
}

/* Start on sub @sub: its bound to "never" (before its rows are read),
 * and ask for its rows (adjacent lines: all at once) and their slot
 * bounds (8 rows' fill 96 bytes, two lines).  (One function for both: a
 * function of prefetches alone is "pure" to GCC, and its calls are
 * dropped.) */
static inline void gc_sub_begin(struct gc_run *g, uint64_t sub)
{
	struct ct_row *rows = &g->h->rows[sub * CT_SUB_ROWS];
	const char *sd = (const char *)ct_slot_due(g->h, sub * CT_SUB_ROWS);

	/* subs are whole: a table has a multiple of 64 rows (table.c) */
	_Static_assert(CT_GROUP_ROWS <= 64, "the smallest table holds whole groups");
	ct_due_set(&g->h->sub_due_inv[sub], CT_DUE_NEVER);
	for (int i = 0; i < CT_SUB_ROWS; i++)
		__builtin_prefetch(&rows[i], 1);
	__builtin_prefetch(sd, 0);
	__builtin_prefetch(sd + CT_SUB_ROWS * CT_ROW_SLOTS * sizeof(uint16_t) - 1, 0);
}

static void gc_queue_sub(struct gc_run *g, uint64_t sub)
{
	gc_sub_begin(g, sub);
	if (g->sq_n == GC_QUEUE_SUBS)
		gc_dequeue_sub(g);
	g->sq[(g->sq_head + g->sq_n) % GC_QUEUE_SUBS] = sub;
	g->sq_n++;
}

static void gc_dequeue_group(struct gc_run *g)
{
	uint64_t grp = g->gq[g->gq_head];
	uint64_t s0 = grp * CT_GROUP_SUBS, s1 = s0 + CT_GROUP_SUBS;
	uint64_t gmin = CT_DUE_NEVER;

	g->gq_head = (g->gq_head + 1) % GC_QUEUE_GROUPS;
	g->gq_n--;
	if (s1 * CT_SUB_ROWS > g->h->n_rows)
		s1 = (g->h->n_rows + CT_SUB_ROWS - 1) / CT_SUB_ROWS;
	for (uint64_t sub = s0; sub < s1; sub++) {
		uint64_t sd = ct_due_get(&g->h->sub_due_inv[sub]);

		if (sd <= g->now)
			gc_queue_sub(g, sub);
		else if (sd < gmin)
			gmin = sd;
	}
	ct_due_lower(&g->h->group_due_inv[grp], gmin);
	if (gmin < g->next_due)
		g->next_due = gmin;
}

static void gc_queue_group(struct gc_run *g, uint64_t grp)
{
	ct_due_set(&g->h->group_due_inv[grp], CT_DUE_NEVER);
	__builtin_prefetch(&g->h->sub_due_inv[grp * CT_GROUP_SUBS], 1);
	if (g->gq_n == GC_QUEUE_GROUPS)
		gc_dequeue_group(g);
	g->gq[(g->gq_head + g->gq_n) % GC_QUEUE_GROUPS] = grp;
	g->gq_n++;
}

/* The policy a scan follows: the wheel's (a pass under early-drop
 * pressure, or a table too large for its refs) scans as the due-time
 * one. */
static enum ct_gc_lock_policy gc_scan_policy(const struct ct_table *t)
{
	return t->gc.lock == CT_GC_LOCK_WHEEL ? CT_GC_LOCK_DUE : t->gc.lock;
}

/* The same for every other case: the naive lock policies, early-drop
 * pressure, a yield offered after every row. */
static uint64_t gc_rows_policy(struct gc_run *g, struct ct_row *rows,
			       uint64_t first, uint64_t last)
{
	enum ct_gc_lock_policy pol = g->t->gc.lock;
	bool every_row = g->t->gc.yield == CT_GC_YIELD_EVERY_ROW;
	uint64_t gmin = CT_DUE_NEVER;

	for (uint64_t i = first; i < last; i++) {
		struct ct_row *r = &rows[i];
		uint64_t rd = ct_due_get(&r->due_inv);
		bool lock;

		switch (pol) {
		case CT_GC_LOCK_ALWAYS:
			lock = true;
			break;
		case CT_GC_LOCK_NONEMPTY:
			lock = row_nonempty(r);
			break;
		default:
			lock = rd <= g->now || (g->pressure && row_nonempty(r));
			break;
		}
		if (lock && !ct_row_moved(r))
			rd = gc_row(g, r);
		if (rd < gmin)
			gmin = rd;
		if (every_row) {
			gc_yield(g);
			if (g->retired)
				return gmin;    /* rows may be gone: touch nothing */
		}
	}
	return gmin;
}

/*
 * One group of 64 rows, a sub (8 rows) at a time.  Each sub's bound is
 * recomputed with the same store-"never"-then-scan-then-lower order as the
 * group's; under CT_GC_LOCK_DUE a sub whose bound has not passed is
 * skipped without reading its rows.  Returns false when the slice must end.
 */
static bool gc_group(struct gc_run *g, struct ct_htab *h, uint64_t grp,
		     uint64_t *next_due)
{
	struct ct_table *t = g->t;
	enum ct_gc_lock_policy pol = gc_scan_policy(t);
	uint64_t first = grp * CT_GROUP_ROWS;
	uint64_t last = first + CT_GROUP_ROWS;
	uint64_t gmin = CT_DUE_NEVER, visited = 0;
	bool summaries = pol == CT_GC_LOCK_DUE && !g->pressure;
	bool fast = (pol == CT_GC_LOCK_DUE || pol == CT_GC_LOCK_DUE_ROWS) &&
		    !g->pressure && t->gc.yield != CT_GC_YIELD_EVERY_ROW;

	if (last > h->n_rows)
		last = h->n_rows;
	if (summaries) {
		uint64_t gd = ct_due_get(&h->group_due_inv[grp]);
		if (gd > g->now) {
			g->res->groups_skipped++;
			if (gd < *next_due)
				*next_due = gd;
			return true;
		}
		if (fast) {
			/* the pipeline; one clock read per 8 due groups */
			gc_queue_group(g, grp);
			return gc_after_rows(g, CT_SUB_ROWS);
		}
	}
	ct_due_set(&h->group_due_inv[grp], CT_DUE_NEVER);
	for (uint64_t r0 = first; r0 < last; r0 += CT_SUB_ROWS) {
		_Atomic uint64_t *sd = &h->sub_due_inv[r0 / CT_SUB_ROWS];
		uint64_t r1 = r0 + CT_SUB_ROWS < last ? r0 + CT_SUB_ROWS : last;
		uint64_t smin;

		if (summaries) {
			smin = ct_due_get(sd);
			if (smin > g->now) {
				if (smin < gmin)
					gmin = smin;
				continue;
			}
		}
		if (fast) {
			gc_sub_begin(g, r0 / CT_SUB_ROWS);
			smin = gc_rows_due(g, h->rows, r0, r1, sd,
					   &h->group_due_inv[grp]);
		} else {
			ct_due_set(sd, CT_DUE_NEVER);
			smin = gc_rows_policy(g, h->rows, r0, r1);
		}
		if (g->retired)
			return false;   /* h may be gone: touch nothing */
		visited += r1 - r0;
		ct_due_lower(sd, smin);
		if (smin < gmin)
			gmin = smin;
	}
	g->res->rows_visited += visited;
	ct_due_lower(&h->group_due_inv[grp], gmin);
	if (gmin < *next_due)
		*next_due = gmin;
	return gc_after_rows(g, last - first);
}

/* ---- the wheel (CT_GC_LOCK_WHEEL, wheel.h) ---- */

/*
 * A group handle (wheel.h) for the group that starts at row @first: the
 * group's mark goes, then its dirty bits are read, and every dirty row -
 * a timeout in it was shortened since its last visit - is visited by its
 * bound: now if the bound has come (gc_row reads every entry of a dirty
 * row), else by a row handle at it.  A writer that saw the mark before
 * it went had set its bit and lowered its row's bound before (htab.h).
 */
static void gc_wheel_group(struct gc_run *g, uint64_t first)
{
	struct ct_htab *h = g->h;
	uint64_t grp = first / CT_GROUP_ROWS, bits;

	gc_hmark_clear(h, grp);
	bits = atomic_load_explicit(&h->slot_dirty[grp], memory_order_seq_cst);
	for (; bits; bits &= bits - 1) {
		uint64_t i = grp * CT_GROUP_ROWS + (unsigned)__builtin_ctzll(bits);
		struct ct_row *r;
		uint64_t rd;

		if (i >= h->n_rows)
			break;
		r = &h->rows[i];
		if (ct_row_moved(r))
			continue;
		rd = ct_due_get(&r->due_inv);
		if (rd <= g->now)
			gc_queue_row(g, r, rd, NULL, NULL);
		else
			ct_wheel_push(&g->t->wheel, (uint32_t)i | CT_WH_ROW << CT_WH_POS_SHIFT,
				      rd, false);
	}
}

/* A handle's row, its line prefetched GC_WHEEL_AHEAD handles ago: queue
 * it if it is due (gc_queue_row prefetches its due entries), else the
 * handle was stale and is dropped. */
static void gc_wheel_look(struct gc_run *g, const struct gc_ahead *a)
{
	struct ct_wheel *w = &g->t->wheel;
	struct ct_row *r = a->row;
	uint32_t ref = a->ref;
	unsigned pos = ref >> CT_WH_POS_SHIFT;
	uint64_t rd;

	g->res->rows_visited++;
	if (pos == CT_WH_GROUP) {
		gc_wheel_group(g, (uint64_t)(r - g->h->rows));
		return;
	}
	if (pos != CT_WH_ROW) {
		/* a slot handle: dropped unlocked when its slot holds no
		 * entry with a bound (a hint; gc_slot checks again, locked,
		 * and reads the bound itself - another line - only for an
		 * entry that is not due) */
		struct ct_row *o = gc_chain_row(r, pos);
		unsigned k = gc_pos_slot(pos);
		uint64_t s;

		if (!o)
			return;
		/* acquire: the entry is read before its row is locked (here
		 * when taken early, and by gc_slot), after the inserter's
		 * writes that the slot's release store published */
		s = atomic_load_explicit(&o->slot[k], memory_order_acquire);
		if (!(s & CT_SLOT_BOUND))
			return;
		/* taken early (its unit began, its time has not come: the
		 * entry is readable here, the read-side section keeps it) */
		if (a->t && ct_wheel_fire(w, a->t + 1) > g->now) {
			uint64_t exp = __atomic_load_n(&ct_slot_conn(s)->expires, __ATOMIC_RELAXED);

			if (exp > g->now && ct_wheel_t(w, exp) == a->t) {
				ct_wheel_push_t(w, ref, a->t, false);
				return;
			}
		}
		gc_queue_slot(g, r, ref, a->t, s);
		return;
	}
	rd = ct_due_get(&r->due_inv);
	if (rd > g->now) {
		/* stale (the bound moved on, and whoever moved it queued a
		 * handle), or taken early within its unit: again next step */
		if (ct_wheel_t(w, rd) == a->t)
			ct_wheel_push_t(w, ref, a->t, false);
		return;
	}
	if (!ct_row_moved(r))
		gc_queue_row(g, r, rd, NULL, NULL);
}

/* Look at the oldest row of the prefetch queue (and take it off). */
static void gc_wheel_look_oldest(struct gc_run *g)
{
	struct gc_ahead a = g->ahead[g->a_head];

	g->a_head = (g->a_head + 1) % GC_WHEEL_AHEAD;
	g->a_n--;
	gc_wheel_look(g, &a);
}

/* The row of due handle @x: prefetch its line, and
 * look at the row GC_WHEEL_AHEAD handles later (or at the next drain). */
static void gc_wheel_ahead(struct gc_run *g, const struct ct_wh *x)
{
	uint64_t idx;
	struct ct_row *r;
	struct gc_ahead *a;

	/* the wheel holds refs into the generation it was seeded for, which
	 * is g->h (gc_wheel_step starts over when it is not) */
	idx = x->ref & CT_WH_ROW_MASK;
	if (idx >= g->h->n_rows)
		return;
	r = &g->h->rows[idx];

	__builtin_prefetch(r, 1);
	if (g->a_n == GC_WHEEL_AHEAD)
		gc_wheel_look_oldest(g);
	a = &g->ahead[(g->a_head + g->a_n) % GC_WHEEL_AHEAD];
	a->row = r;
	a->ref = x->ref;
	a->t = x->t;
	g->a_n++;
}

/*
 * Work through the wheel's pending handles: a due one's row is visited,
 * one not due yet (from a coarse bucket, or cur) is queued again by its
 * time.  Returns false when the slice must end; what is left goes back
 * to the pending list, in front.
 */
static bool gc_wheel_work(struct gc_run *g)
{
	struct ct_wheel *w = &g->t->wheel;
	struct ct_wheel_blk *l;

	while ((l = ct_wheel_take_pending(w))) {
		while (l) {
			struct ct_wheel_blk *b = l;

			for (uint32_t i = 0; i < b->n; i++) {
				struct ct_wh x = b->h[i];

				if (ct_wheel_fire(w, x.t) > g->now) {
					ct_wheel_push_t(w, x.ref, x.t, false);
					continue;
				}
				gc_wheel_ahead(g, &x);
				if (!gc_after_rows(g, 1) || g->retired) {
					/* the rest of this block, and the
					 * blocks after it, stay pending */
					memmove(b->h, b->h + i + 1,
						(b->n - i - 1) * sizeof(b->h[0]));
					b->n -= i + 1;
					ct_wheel_unpop(w, b);
					return false;
				}
			}
			l = b->next;
			ct_wheel_blk_done(w, b);
		}
	}
	return true;
}

/*
 * The seeding walk (wheel.h): every row with a bound gets a handle, due
 * rows are collected on the way (gc_row queues a handle for what it
 * leaves).  Groups whose bound says "never" hold no entry and are
 * skipped.  Resumable: returns false when the slice must end.
 */
static bool gc_wheel_seed(struct gc_run *g)
{
	struct ct_wheel *w = &g->t->wheel;
	struct ct_htab *h = g->h;

	while (w->seed_cursor < h->n_rows) {
		uint64_t i0 = w->seed_cursor, i1 = i0 + CT_GROUP_ROWS;

		if (i1 > h->n_rows)
			i1 = h->n_rows;
		/* the reset dropped every handle: the group's mark goes
		 * (htab.h), before any of its dirty bits is read */
		gc_hmark_clear(h, i0 / CT_GROUP_ROWS);
		if (ct_due_get(&h->group_due_inv[i0 / CT_GROUP_ROWS]) == CT_DUE_NEVER) {
			g->res->groups_skipped++;
		} else {
			for (uint64_t i = i0; i < i1; i++) {
				struct ct_row *r = &h->rows[i];
				uint64_t rd = ct_due_get(&r->due_inv);
				bool need_row = false;
				unsigned j = 0;

				if (rd == CT_DUE_NEVER)
					continue;
				/* a slot handle for every slot with a bound, a
				 * row handle for the others; locked, as the
				 * bounds of an overflow row are read only so
				 * (a retired one's hold its free-list link) */
				ct_row_lock(r);
				if (ct_row_moved(r)) {
					ct_row_unlock(r);
					continue;
				}
				/* a shortened timeout (the dirty bit, read
				 * after the group's mark was cleared) may lie
				 * below its slot's bound: the row's bound, read
				 * after the bit, is the only one that holds, so
				 * a row handle at it (whose visit reads every
				 * entry; the bit is cleared by that visit, not
				 * here) */
				if (atomic_load_explicit(&h->slot_dirty[i / CT_GROUP_ROWS],
							 memory_order_seq_cst) &
				    (1ull << (i % CT_GROUP_ROWS)))
					need_row = true;
				rd = ct_due_get(&r->due_inv);
				for (struct ct_row *o = r; o; o = ct_row_next(o), j++) {
					_Atomic uint16_t *sd = ct_row_slot_due(h, r, o);

					for (unsigned k = 0; k < CT_ROW_SLOTS; k++) {
						uint64_t s = atomic_load_explicit(&o->slot[k], memory_order_relaxed);
						unsigned pos = j * CT_ROW_SLOTS + k;
						uint64_t lb;

						if (!s)
							continue;
						lb = (s & CT_SLOT_BOUND) && pos <= CT_WH_MAX_POS ?
							ct_slot_due_lower(rd, atomic_load_explicit(&sd[k], memory_order_relaxed)) : 0;
						if (!lb) {
							need_row = true;
							continue;
						}
						ct_wheel_push(w, (uint32_t)i | pos << CT_WH_POS_SHIFT, lb, true);
					}
				}
				if (need_row)
					ct_wheel_push(w, (uint32_t)i | CT_WH_ROW << CT_WH_POS_SHIFT, rd, true);
				ct_row_unlock(r);
			}
			g->res->rows_visited += i1 - i0;
		}
		w->seed_cursor = i1;
		if (!gc_after_rows(g, i1 - i0) || g->retired)
			return false;
	}
	gc_drain(g);
	w->seeded = true;
	return true;
}

/* Every packet thread's ring into the wheel (gc_lock held). */
static void gc_rings_drain(struct ct_table *t)
{
	struct ct_thread *o;

	pthread_mutex_lock(&t->thr_lock);
	cds_list_for_each_entry(o, &t->threads, node)
		ct_wheel_ring_drain(&t->wheel, &o->ring);
	pthread_mutex_unlock(&t->thr_lock);
}

/*
 * A CT_GC_LOCK_WHEEL step: the packet threads' rings into the wheel, the
 * buckets whose time has come onto the pending list, their rows
 * collected; the seeding walk first when the wheel is not complete.
 * Returns true when everything due at @now was collected (a pass).
 */
static bool gc_wheel_step(struct gc_run *g)
{
	struct ct_table *t = g->t;
	struct ct_wheel *w = &t->wheel;

	gc_rings_drain(t);
	/* after the rings: what they held was lowered before the walk
	 * begins, and the walk reads it */
	if (atomic_exchange_explicit(&t->wheel_reseed, false, memory_order_seq_cst) ||
	    w->nomem || w->gen != g->h->gen ||
	    (g->now >> CT_WH_UNIT_SHIFT) - w->epoch > CT_WHEEL_EPOCH_RENEW ||
	    w->handles > CT_WHEEL_PER_ROW * g->h->n_rows + CT_WHEEL_FLOOR) {
		ct_wheel_reset(w, g->now, g->h->gen, g->h->n_rows);
		atomic_fetch_add_explicit(&t->gc_wheel_seeds, 1, memory_order_relaxed);
	}
	ct_wheel_advance(w, g->now);
	if (g->pressure)
		return false;   /* the caller's scan pass does the work */
	if (!w->seeded && !gc_wheel_seed(g))
		return false;
	if (!gc_wheel_work(g))
		return false;
	gc_drain(g);
	return !w->pending && !w->nomem;
}

int ct_gc_step(struct ct_thread *thr, ct_time_ns now, uint64_t budget_ns,
	       struct ct_gc_result *res)
{
	struct ct_table *t = thr->t;
	struct ct_gc_result local;
	struct gc_run g;
	struct ct_htab *h;
	uint64_t grp, next_due = CT_DUE_NEVER;
	uint64_t start = mono_ns();
	bool skip;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (pthread_mutex_trylock(&t->gc_lock) != 0)
		return -EBUSY;
	/* help a resize first: the collector scans one generation.  Each
	 * step runs in a read-side section: ct_table_resize_step() looks at
	 * the current generation before it takes resize_lock, and a resize
	 * completing meanwhile retires that generation */
	for (;;) {
		bool more;

		t->rcu->read_lock();
		more = ct_table_resize_step(t, 256);
		t->rcu->read_unlock();
		if (!more || (budget_ns && mono_ns() - start >= budget_ns))
			break;
	}
	memset(&g, 0, sizeof(g));
	g.thr = thr;
	g.t = t;
	g.now = now;
	g.res = res;
	g.deadline = budget_ns ? start + budget_ns : 0;
	g.last_yield = start;
	g.next_due = CT_DUE_NEVER;
	/* Early drop, as the kernel's gc_worker: only once an insert found
	 * the table full with nothing to evict, and only while the count is
	 * at or above 95% of max - each removal brings it down, and the
	 * pass stops dropping when it gets there.  A table that stays at
	 * 96% without a refused insert keeps its entries, as the kernel's
	 * does. */
	ct_thread_fold_count(thr);
	if (atomic_load_explicit(&t->gc_early_drop, memory_order_relaxed)) {
		int64_t count = (int64_t)ct_table_count(t);
		uint64_t max95 = __atomic_load_n(&t->max95, __ATOMIC_RELAXED);

		g.pressure = max95 && count >= (int64_t)max95;
		if (g.pressure)
			g.excess = count - (int64_t)max95 + 1;
		else
			atomic_store_explicit(&t->gc_early_drop, false, memory_order_relaxed);
	}
	g.wheel = t->gc.lock == CT_GC_LOCK_WHEEL;

	t->rcu->read_lock();
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	g.h = h;
	grp = t->gc_cursor;
	if (grp >= h->n_groups)
		grp = 0;
	/* refs name rows in 27 bits (wheel.h): a larger table is scanned */
	if (!ct_wheel_fits(h->n_rows))
		g.wheel = false;
	if (g.wheel) {
		bool done = gc_wheel_step(&g);

		if (!g.pressure) {
			/* no scan: the wheel found the due rows */
			res->pass_done = done && !g.retired;
			next_due = done ? ct_wheel_next_due(&t->wheel) : now;
			goto end;
		}
	}
	skip = gc_scan_policy(t) == CT_GC_LOCK_DUE && !g.pressure;
	for (;;) {
		bool go_on;

		if (skip) {
			/* groups with nothing due, as gc_group would skip
			 * them, in a tight loop: one load and a compare each
			 * (the budget is looked at every 1024 groups) */
			uint64_t s0 = grp, ng = h->n_groups;
			_Atomic uint64_t *gdi = h->group_due_inv;
			/* on the inverted words: due is ~inv >= ~now, and
			 * the least bound the greatest word */
			uint64_t now_inv = ~now, nd_inv = ~next_due;

			while (grp < ng) {
				uint64_t end = (grp | 1023) + 1;
				bool found = false;

				if (end > ng)
					end = ng;
				for (; grp < end; grp++) {
					uint64_t inv = atomic_load_explicit(&gdi[grp],
									    memory_order_seq_cst);

					if (inv >= now_inv) {
						found = true;
						break;
					}
					nd_inv = inv > nd_inv ? inv : nd_inv;
				}
				if (found || (g.deadline && mono_ns() >= g.deadline))
					break;
			}
			next_due = ~nd_inv;
			res->groups_skipped += grp - s0;
			if (grp >= h->n_groups) {
				grp = 0;
				res->pass_done = true;
				break;
			}
			if (grp > s0 && (grp & 1023) == 0 && g.deadline && mono_ns() >= g.deadline)
				break;
		}
		go_on = gc_group(&g, h, grp, &next_due);

		if (g.retired) {
			grp = 0;        /* a new generation: start it afresh */
			break;
		}
		grp++;
		if (grp >= h->n_groups) {
			grp = 0;
			res->pass_done = true;
			break;
		}
		if (!go_on || g.stopped)
			break;
		/* budget check per group also covers the skipped ones */
		if (g.deadline && (grp & 15) == 0 && mono_ns() >= g.deadline)
			break;
	}
	t->gc_cursor = grp;
end:
	/* a pass is done only once the rows it found due are collected */
	if (!g.retired)
		gc_drain(&g);
	gc_ns_flush(&g);
	if (g.next_due < next_due)
		next_due = g.next_due;
	if (res->pass_done)
		atomic_fetch_add(&t->gc_passes, 1);
	if (g.pressure && (res->pass_done || g.excess <= 0))
		atomic_store_explicit(&t->gc_early_drop, false, memory_order_relaxed);
	ct_thread_flush_frees(thr);
	ct_ovf_retire_flush(&g.ovf_batch, t->rcu);
	t->rcu->read_unlock();
	ct_thread_fold_count(thr);
	atomic_fetch_add(&t->gc_rows_locked, res->rows_locked);
	res->next_due = next_due;
	pthread_mutex_unlock(&t->gc_lock);
	return 0;
}

/* ---- the collector thread ---- */

static ct_time_ns default_clock(void *arg)
{
	(void)arg;
	return mono_ns();
}

static void *gc_thread_main(void *arg)
{
	struct ct_table *t = arg;
	struct ct_thread *thr = ct_thread_attach(t);

	if (!thr)
		return NULL;
	while (!atomic_load(&t->gc_stop)) {
		ct_time_ns now = t->gc_clock(t->gc_clock_arg);
		struct ct_gc_result r;
		uint64_t next_due;
		uint64_t sleep_ns;
		struct timespec ts;

		/* one full pass in slices of 2 ms, yielding the CPU between */
		next_due = CT_DUE_NEVER;
		do {
			if (ct_gc_step(thr, now, 2000000, &r) < 0)
				break;
			if (r.next_due < next_due)
				next_due = r.next_due;
			if (!r.pass_done)
				sched_yield();
			now = t->gc_clock(t->gc_clock_arg);
		} while (!r.pass_done && !atomic_load(&t->gc_stop));
		/* plan the next pass for the earliest due time */
		sleep_ns = next_due > now ? next_due - now : 0;
		if (sleep_ns < t->gc.min_interval_ns)
			sleep_ns = t->gc.min_interval_ns;
		if (sleep_ns > t->gc.max_interval_ns)
			sleep_ns = t->gc.max_interval_ns;
		ct_thread_offline(thr);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)(sleep_ns / 1000000000ull);
		ts.tv_nsec += (long)(sleep_ns % 1000000000ull);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&t->gc_sleep_lock);
		if (!atomic_load(&t->gc_stop))
			pthread_cond_timedwait(&t->gc_sleep_cond, &t->gc_sleep_lock, &ts);
		pthread_mutex_unlock(&t->gc_sleep_lock);
		ct_thread_online(thr);
	}
	ct_thread_detach(thr);
	return NULL;
}

int ct_gc_start(struct ct_table *t, ct_clock_fn clock, void *clock_arg)
{
	pthread_condattr_t ca;
	int err;

	if (t->gc_thread_on)
		return -EALREADY;
	/* liburcu's callback thread, from here (rcu.h says why) */
	ct_rcu_callback_thread_start(t->cfg.rcu);
	t->gc_clock = clock ? clock : default_clock;
	t->gc_clock_arg = clock_arg;
	atomic_store(&t->gc_stop, false);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&t->gc_sleep_cond);
	pthread_cond_init(&t->gc_sleep_cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&t->gc_thread, NULL, gc_thread_main, t);
	if (err)
		return -err;
	/* a name for top -H, ps -L and /proc/PID/task/TID/comm (a failure
	 * only leaves the thread unnamed) */
	(void)pthread_setname_np(t->gc_thread, "ct-gc");
	t->gc_thread_on = true;
	return 0;
}

int ct_gc_stop(struct ct_table *t)
{
	if (!t->gc_thread_on)
		return -ESRCH;
	pthread_mutex_lock(&t->gc_sleep_lock);
	atomic_store(&t->gc_stop, true);
	pthread_cond_broadcast(&t->gc_sleep_cond);
	pthread_mutex_unlock(&t->gc_sleep_lock);
	pthread_join(t->gc_thread, NULL);
	t->gc_thread_on = false;
	atomic_store(&t->gc_stop, false);
	return 0;
}
