/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * due.h - the writers' side of expiry: what an insert or a shortened
 * timeout leaves for the collector (private).
 *
 * The collector (expire/) finds what is due from two indexes the table
 * keeps beside its entries: lower bounds of the rows' earliest expiries
 * (htab.h: row, sub, group, slot bounds) and, with CT_GC_LOCK_WHEEL, a
 * wheel of handles by time (wheel.h).  A writer keeps both true without
 * the collector's lock: it lowers the bounds (htab.h's store-then-scan
 * order) and queues a handle on its own ring (base/ring.h), which the
 * collector empties into the wheel - or the writer itself when the ring
 * fills and gc_lock is free.  Whatever a writer cannot queue (a full ring,
 * the lock held by others) it makes up for by asking the collector to
 * seed the wheel again from the bounds (the table's wheel_reseed flag).
 *
 * Callers: packet threads attached to the table, inside a read-side
 * section, for their own ring.
 */
#ifndef CT_DUE_H
#define CT_DUE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/state.h"
#include "table/wheel.h"

/* @thr's ring into the wheel, when gc_lock is free (a trylock); it is
 * full, or half full and tried once per CT_RING_TRY handles.  Returns
 * whether it was emptied. */
bool ct_due_ring_drain(struct ct_thread *thr);

/* @thr's ring was full when it queued this handle: empty it and queue the
 * handle, or drop it and set the reseed flag.  Out of line, so that
 * ct_due_note_slot stays small enough to inline into the insert. */
void ct_due_ring_full(struct ct_thread *thr, uint32_t key, uint32_t gen, uint64_t due);

/*
 * ct_due_note_slot - @thr inserted an entry at ref @key of generation
 * @gen, expiring at @due, and wrote its slot bound: queue the slot handle
 * (wheel.h); with @gen 0, @key is a hash of an entry of the row (a row
 * handle, ct_due_note_row).  Every insert queues one, so a ring fills
 * whenever the collector lags by CT_RING_SIZE inserts; the thread
 * empties its own ring into the wheel whenever gc_lock is free, trying
 * from half full on (one trylock per CT_RING_TRY inserts, ~CT_RING_SIZE /
 * 2 short pushes), and only a lock held by others for the whole second
 * half makes it fall back to the reseed flag.  Release: a collector that
 * sees the flag sees the bound.  The caller has seen the wheel on.
 */
static inline void ct_due_note_slot(struct ct_thread *thr, uint32_t key, uint32_t gen,
				    uint64_t due)
{
	struct ct_table *t = thr->t;

	/* A walk is due anyway: it will read this row's bounds, which we
	 * stored before this load (seq_cst both, and the collector clears
	 * the flag with a seq_cst exchange before its walk reads the rows).
	 * Nor is the flag written again while it is set: threads that
	 * create while no collector drains their rings would otherwise
	 * pass its line between them at every insert. */
	if (atomic_load_explicit(&t->wheel_reseed, memory_order_seq_cst))
		return;
	if (__builtin_expect(!ct_ring_put(&thr->ring, key, gen, due), 0))
		ct_due_ring_full(thr, key, gen, due);
	else if (__builtin_expect(ct_ring_half(&thr->ring), 0))
		ct_due_ring_drain(thr);   /* a try: the collector empties it otherwise */
}

/*
 * ct_due_note_row - a row handle for the row of @hash at @due (a timeout
 * shortened, an entry past the slot handles' positions), if the wheel
 * is on.
 */
static inline void ct_due_note_row(struct ct_thread *thr, uint64_t hash, uint64_t due)
{
	if (atomic_load_explicit(&thr->t->wheel_on, memory_order_relaxed))
		ct_due_note_slot(thr, (uint32_t)hash, 0, due);
}

/* @c's expiry, which its writer holds the lock of, got shorter (stored
 * before the call): lower the bounds of its row in every generation it
 * may be in and, with the wheel on, queue a group or row handle for it
 * (htab.h: group-handle marks).  Read side held. */
void ct_due_lowered(struct ct_thread *thr, struct ct_conn *c, ct_time_ns now);

/* Turn the wheel on or off as t->gc.lock says (CT_GC_LOCK_WHEEL); turned
 * on, it starts unseeded (the reseed flag).  At creation and from
 * ct_gc_set_policy. */
void ct_due_wheel_switch(struct ct_table *t);

#endif /* CT_DUE_H */
