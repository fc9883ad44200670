/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * due.c - the writers' side of expiry (due.h): a thread emptying its own
 * ring into the wheel, a shortened timeout's bounds and handle.
 */
#include <pthread.h>

#include "table/due.h"
#include "table/htab.h"

bool ct_due_ring_drain(struct ct_thread *thr)
{
	struct ct_table *t = thr->t;
	struct ct_wheel *w = t->wheel;
	bool ok;

	if (pthread_mutex_trylock(&t->gc_lock) != 0)
		return false;
	/* a wheel no step has set up yet (generation 0) has no rows to
	 * name; one whose seeding walk is under way takes handles as the
	 * collector's yields give it (expire/gc.c), duplicates of what the walk
	 * queues being stale handles like any other - refusing them asked
	 * for the walk to start over; nor may a wheel that nobody empties
	 * grow past its bound */
	ok = w->gen && w->handles <= CT_WHEEL_PER_ROW * w->n_rows + CT_WHEEL_FLOOR;
	if (ok)
		ct_wheel_ring_drain(w, &thr->ring);
	pthread_mutex_unlock(&t->gc_lock);
	return ok;
}

void ct_due_ring_full(struct ct_thread *thr, uint32_t key, uint32_t gen, uint64_t due)
{
	if (!(ct_due_ring_drain(thr) &&
	      ct_ring_put(&thr->ring, key, gen, due)))
		atomic_store_explicit(&thr->t->wheel_reseed, true, memory_order_seq_cst);
}

void ct_due_lowered(struct ct_thread *thr, struct ct_conn *c, ct_time_ns now)
{
	struct ct_table *t = thr->t;
	struct ct_htab *h = atomic_load_explicit(&t->htab, memory_order_acquire);
	struct ct_htab *f = atomic_load_explicit(&h->future, memory_order_acquire);
	uint64_t exp, idx;

	/* the store of c->expires must be ordered before the loads of the
	 * bounds (expire/visit.c explains the pairing) */
	atomic_thread_fence(memory_order_seq_cst);
	exp = __atomic_load_n(&c->expires, __ATOMIC_RELAXED);
	idx = ct_row_index(c->hash, h->n_rows);
	ct_htab_lower_due(h, idx, exp);
	if (f)
		ct_htab_lower_due(f, ct_row_index(c->hash, f->n_rows), exp);
	if (!atomic_load_explicit(&t->wheel_on, memory_order_relaxed))
		return;
	/* A handle whether or not a bound was lowered - slot visits leave
	 * row bounds low, so the row's last handle may be long gone
	 * (wheel.h) - but a group handle, and none when the group's mark
	 * shows one queued at or before @exp (htab.h: group-handle marks),
	 * which a connection with data in flight finds at nearly every
	 * segment.  The mark is stored before the handle is queued.  While
	 * a resize runs, a row handle and no mark: a handle is a hash, one
	 * for either generation will do (and the resize's end seeds the
	 * wheel again anyway). */
	if (!f && ct_hmark_fits(exp, now)) {
		uint64_t grp = idx / CT_GROUP_ROWS;

		if (ct_group_hmark_covers(h, grp, exp, now))
			return;
		atomic_store_explicit(ct_group_hmark(h, grp), ct_hmark_enc(exp),
				      memory_order_seq_cst);
		ct_due_note_slot(thr, (uint32_t)c->hash, CT_RING_GROUP, exp);
		return;
	}
	ct_due_note_slot(thr, (uint32_t)c->hash, 0, exp);
}

void ct_due_wheel_switch(struct ct_table *t)
{
	bool on = t->gc.lock == CT_GC_LOCK_WHEEL;

	if (on && !atomic_load(&t->wheel_on))
		atomic_store_explicit(&t->wheel_reseed, true, memory_order_release);
	atomic_store(&t->wheel_on, on);
}

