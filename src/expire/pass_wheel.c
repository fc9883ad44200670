/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pass_wheel.c - a collector pass by the wheel (CT_GC_LOCK_WHEEL, the
 * default): the due entries come out of the timer wheel of
 * table/wheel.h, one slot handle per entry queued by its insert, instead
 * of being found by reading bounds.
 *
 * A slot handle goes through a pipeline of its own: gc_wheel_ahead
 * prefetches the row, gc_wheel_look checks the slot's bound without a
 * lock and prefetches the entry, gc_slot (visit.c) locks the row and
 * removes or requeues one entry.  A row handle (a shortened timeout, a
 * long chain's far slots, the seeding walk) goes into the scan's row
 * queue (gc_queue_row, gc_row), which then queues a slot handle for each
 * bound it writes anew.  The wheel starts over - emptied, seeded again by
 * one walk over the rows in slices - after a resize, a ring that
 * overflowed, a handle that could not be stored, or too many stale
 * handles.
 */
#include <string.h>

#include "expire/run.h"

/* Clear group @grp's handle mark (table/htab.h), before its dirty bits are
 * read: a store only when there is one. */
static inline void gc_hmark_clear(struct ct_htab *h, uint64_t grp)
{
	_Atomic uint32_t *m = ct_group_hmark(h, grp);

	if (atomic_load_explicit(m, memory_order_relaxed))
		atomic_store_explicit(m, 0, memory_order_seq_cst);
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
 * A group handle (table/wheel.h) for the group that starts at row @first: the
 * group's mark goes, then its dirty bits are read, and every dirty row -
 * a timeout in it was shortened since its last visit - is visited by its
 * bound: now if the bound has come (gc_row reads every entry of a dirty
 * row), else by a row handle at it.  A writer that saw the mark before
 * it went had set its bit and lowered its row's bound before (table/htab.h).
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
			ct_wheel_push(g->t->wheel, (uint32_t)i | CT_WH_ROW << CT_WH_POS_SHIFT,
				      rd, false);
	}
}

/* A handle's row, its line prefetched GC_WHEEL_AHEAD handles ago: queue
 * it if it is due (gc_queue_row prefetches its due entries), else the
 * handle was stale and is dropped. */
static void gc_wheel_look(struct gc_run *g, const struct gc_ahead *a)
{
	struct ct_wheel *w = g->t->wheel;
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
void gc_wheel_look_oldest(struct gc_run *g)
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
	struct ct_wheel *w = g->t->wheel;
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
 * The seeding walk (table/wheel.h): every row with a bound gets a handle, due
 * rows are collected on the way (gc_row queues a handle for what it
 * leaves).  Groups whose bound says "never" hold no entry and are
 * skipped.  Resumable: returns false when the slice must end.
 */
static bool gc_wheel_seed(struct gc_run *g)
{
	struct ct_wheel *w = g->t->wheel;
	struct ct_htab *h = g->h;

	while (w->seed_cursor < h->n_rows) {
		uint64_t i0 = w->seed_cursor, i1 = i0 + CT_GROUP_ROWS;

		if (i1 > h->n_rows)
			i1 = h->n_rows;
		/* the reset dropped every handle: the group's mark goes
		 * (table/htab.h), before any of its dirty bits is read */
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

						/* a second slot is not the entry's
						 * (table/htab.h) */
						if (!s || (s & CT_SLOT_SECOND))
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
void gc_rings_drain(struct ct_table *t)
{
	struct ct_thread *o;

	pthread_mutex_lock(&t->thr_lock);
	cds_list_for_each_entry(o, &t->threads, node)
		ct_wheel_ring_drain(t->wheel, &o->ring);
	pthread_mutex_unlock(&t->thr_lock);
}

/*
 * A CT_GC_LOCK_WHEEL step: the packet threads' rings into the wheel, the
 * buckets whose time has come onto the pending list, their rows
 * collected; the seeding walk first when the wheel is not complete.
 * Returns true when everything due at @now was collected (a pass).
 */
bool gc_wheel_step(struct gc_run *g)
{
	struct ct_table *t = g->t;
	struct ct_wheel *w = t->wheel;

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

