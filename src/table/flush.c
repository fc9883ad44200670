/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.c - removing entries in bulk (flush.h): conntrack -F for the
 * whole table or one zone, and the unlinking half of a namespace teardown.
 *
 * Three ways, by what they cost:
 *  - every entry: every row once, victims collected under the row's lock
 *    and reported after it (ct_table_flush);
 *  - one namespace's entries (a zone flush, a teardown): its own slabs
 *    walked, so the cost follows its entries, not the table's (Open
 *    vSwitch walks the whole table to flush a zone), each entry's row
 *    prefetched a few objects ahead;
 *  - several namespaces' entries by one sweep over the rows, a victim
 *    recognised by the zone in the header of the 32 KiB chunk its pointer
 *    falls in (CT_NS_SWEEP; measured with the prefetching walk it costs
 *    about twice as much, even when the batch is the whole table).
 */
#include <stdlib.h>

#include "table/conn_info.h"
#include "table/event.h"
#include "table/flush.h"
#include "table/member.h"
#include "table/reclaim.h"
#include "table/thread.h"


static void report_one(struct ct_flush_ctx *vc, struct ct_conn *c)
{
	struct ct_conn_info ci;

	ct_conn_lock(c);
	ct_conn_fill_info(vc->thr->t, c, &ci);
	ct_conn_unlock(c);
	ct_event_emit(vc->thr->t, CT_EV_DESTROY, CT_EVW_DESTROY,
		      vc->flush ? CT_DESTROY_FLUSH : CT_DESTROY_NS, vc->now, &ci);
}

/* Report the deferred DESTROYs.  The entries are unlinked but not freed:
 * that needs a grace period, and the caller is in a read-side section. */
void ct_flush_report(struct ct_flush_ctx *vc)
{
	for (size_t i = 0; i < vc->n_defer; i++)
		report_one(vc, vc->defer[i]);
	free(vc->defer);
	vc->defer = NULL;
	vc->n_defer = vc->cap_defer = 0;
}

/* Unlink one victim whose row lock the caller holds or not (@row NULL). */
static void victim_done(struct ct_flush_ctx *vc, struct ct_conn *c)
{
	struct ct_thread *thr = vc->thr;
	struct ct_ns *ns = ct_slab_chunk_of(c)->slab->owner;

	/* its primary slot went under a row lock the caller has released */
	ct_table_unlink_second(thr->t, c);
	ct_thread_count_add(thr, -1);
	if (ns == vc->walking)
		vc->walked++;        /* one atomic per namespace, not per entry */
	else
		ct_ns_count_add(ns, -1);
	CT_CTR_INC(thr, deleted);
	vc->removed++;
	if (vc->events) {
		/* the event handler must not run under the slab lock the walk
		 * holds: keep the entry and report it afterwards */
		if (vc->n_defer == vc->cap_defer) {
			size_t cap = vc->cap_defer ? vc->cap_defer * 2 : 1024;
			struct ct_conn **n = realloc(vc->defer, cap * sizeof(struct ct_conn *));
			if (n) {
				vc->defer = n;
				vc->cap_defer = cap;
			}
		}
		if (vc->n_defer < vc->cap_defer)
			vc->defer[vc->n_defer++] = c;
		else
			report_one(vc, c);   /* no memory: report it now */
	}
	if (vc->flush)
		ct_reclaim_queue(thr, c);
}

/* Is @c in the chain of (locked) row @head? */
static bool row_holds(struct ct_row *head, const struct ct_conn *c)
{
	for (struct ct_row *r = head; r; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS; k++)
			if (ct_slot_conn(atomic_load_explicit(&r->slot[k],
							      memory_order_relaxed)) == c)
				return true;
	return false;
}

/*
 * Walk strategy: every live object of the namespaces' slabs.  The walk
 * reads an object's status (the slab's guard word, base/slab.h) and nothing
 * else until status says CONFIRMED: only then was the entry inserted
 * (htab.h's insert sets it under the row lock, with release order, just before the
 * entry becomes visible), and only then can it not be recycled under our
 * feet (a published entry is freed after a grace period, and this walk
 * runs in a read-side section).  Other objects - free, in a magazine, a
 * creation that failed - may be rewritten by their owner at any time.
 *
 * An entry is claimed (DYING) only once it is found in its locked row,
 * so that a claim always ends with the entry leaving its row.  An entry
 * not confirmed yet is left to its inserter, which sees the namespace
 * DYING after inserting (the seq_cst pair with track/create.c).
 */
static void walk_one(void *obj, void *arg)
{
	struct ct_flush_ctx *vc = arg;
	struct ct_conn *c = obj;
	uint32_t st = ct_conn_status(c);
	struct ct_table *t = vc->thr->t;
	struct ct_htab *h;
	struct ct_row *r;

	if (!(st & CT_ST_CONFIRMED) || (st & CT_ST_DYING))
		return;
	r = ct_table_lock_row(t, c->hash, &h);
	if (!row_holds(r, c) || ct_conn_test_and_set(c, CT_ST_DYING)) {
		ct_row_unlock(r);
		return;
	}
	ct_htab_remove_locked(r, c);
	ct_row_unlock(r);
	victim_done(vc, c);
}

/* Objects ahead of the current one whose rows the walk prefetches. */
#define WALK_AHEAD 8

/*
 * The objects sit one after the other in their chunks, but each one's row
 * is anywhere in the table: locking it is a cache miss per entry, and the
 * lock (a full barrier) keeps the next entry's miss from overlapping.  So
 * the walk reads the hash of the entry WALK_AHEAD objects further on (the
 * same acquire-then-read order as walk_one) and prefetches its row.
 */
static void walk_chunk(struct ct_flush_ctx *vc, struct ct_slab_chunk *ch)
{
	struct ct_htab *h = atomic_load_explicit(&vc->thr->t->htab,
						 memory_order_acquire);
	uint8_t *base = (uint8_t *)ch + ch->first_off;
	uint32_t used = ch->used, size = ch->obj_size;

	for (uint32_t i = 0; i < used; i++) {
		if (i + WALK_AHEAD < used) {
			struct ct_conn *n = (struct ct_conn *)(base + (size_t)(i + WALK_AHEAD) * size);

			if ((ct_conn_status(n) & (CT_ST_CONFIRMED | CT_ST_DYING)) ==
			    CT_ST_CONFIRMED)
				__builtin_prefetch(ct_htab_row(h, n->hash), 1);
		}
		walk_one(base + (size_t)i * size, vc);
	}
}

void ct_flush_walk_ns(struct ct_flush_ctx *vc, struct ct_ns *ns)
{
	vc->walking = ns;
	vc->walked = 0;
	for (int i = 0; i < CT_N_CLASSES; i++) {
		struct ct_slab *s = &ns->slabs[i];

		/* the slab lock freezes the chunk list; objects carved after
		 * this are caught by their inserter (it sees DYING) */
		ct_spin_lock(&s->lock);
		for (struct ct_slab_chunk *ch = s->chunks; ch; ch = ch->next)
			walk_chunk(vc, ch);
		ct_spin_unlock(&s->lock);
	}
	if (vc->walked)
		ct_ns_count_add(ns, -vc->walked);
	vc->walking = NULL;
	vc->walked = 0;
}

/* Rows ahead of the current one whose victims the sweep prefetches. */
#define SWEEP_AHEAD 8

static bool zone_dying(const uint64_t *dying, const struct ct_conn *c)
{
	uint32_t z = ct_slab_chunk_of(c)->zone;

	return dying[z >> 6] & (1ull << (z & 63));
}

/*
 * Claiming a victim (DYING, a locked read-modify-write on the entry) is a
 * cache miss per victim, the entries being anywhere in memory, and under
 * the row lock nothing overlaps it.  So the sweep looks at the row
 * SWEEP_AHEAD rows on (the rows are read in order, so that one is already
 * on its way) and asks for its victims' status words in exclusive state.
 */
static void sweep_prefetch(struct ct_row *r, const uint64_t *dying)
{
	for (int k = 0; k < CT_ROW_SLOTS; k++) {
		uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_acquire);

		if (s && !(s & CT_SLOT_SECOND) && zone_dying(dying, ct_slot_conn(s)))
			__builtin_prefetch(&ct_slot_conn(s)->status, 1);
	}
}

/* Sweep strategy: every row once; a victim is known by its chunk's zone. */
void ct_flush_sweep(struct ct_flush_ctx *vc, struct ct_htab *h, const uint64_t *dying)
{
	for (uint64_t i = 0; i < h->n_rows; i++) {
		struct ct_row *head = &h->rows[i];
		struct ct_conn *victims[CT_ROW_SLOTS * 4];
		unsigned n;
		bool more, any = false;

		if (i + SWEEP_AHEAD < h->n_rows)
			sweep_prefetch(&h->rows[i + SWEEP_AHEAD], dying);
		/* look without the lock first: most rows have no victim
		 * (acquire: the chunk header of what a slot points to was
		 * written before the slot) */
		for (struct ct_row *r = head; r && !any; r = ct_row_next(r))
			for (int k = 0; k < CT_ROW_SLOTS; k++) {
				uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_acquire);
				uint32_t z;

				if (!s || (s & CT_SLOT_SECOND))
					continue;
				z = ct_slab_chunk_of(ct_slot_conn(s))->zone;
				if (dying[z >> 6] & (1ull << (z & 63))) {
					any = true;
					break;
				}
			}
		if (!any)
			continue;
		do {
			n = 0;
			more = false;
			ct_row_lock(head);
			for (struct ct_row *r = head; r && !more; r = ct_row_next(r))
				for (int k = 0; k < CT_ROW_SLOTS; k++) {
					uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_relaxed);
					struct ct_conn *c;
					uint32_t z;

					/* a second slot goes with its primary one */
					if (!s || (s & CT_SLOT_SECOND))
						continue;
					c = ct_slot_conn(s);
					z = ct_slab_chunk_of(c)->zone;
					if (!(dying[z >> 6] & (1ull << (z & 63))))
						continue;
					if (n == sizeof(victims) / sizeof(victims[0])) {
						more = true;
						break;
					}
					if (ct_conn_test_and_set(c, CT_ST_DYING))
						continue;
					atomic_store_explicit(&r->slot[k], 0, memory_order_release);
					victims[n++] = c;
				}
			ct_row_unlock(head);
			for (unsigned j = 0; j < n; j++)
				victim_done(vc, victims[j]);
		} while (more);
	}
}

/*
 * flush_zone - remove every entry of namespace @zone, leaving the
 * namespace itself in place (conntrack -F for one zone).  Walks the
 * namespace's own slabs, so the cost follows its entries, not the table's
 * (Open vSwitch walks the whole table to flush a zone).  Entries inserted
 * while the walk runs may stay.  Returns the number removed.
 */
static long flush_zone(struct ct_thread *thr, uint16_t zone, ct_time_ns now)
{
	struct ct_table *t = thr->t;
	struct ct_flush_ctx vc = { .thr = thr, .now = now, .events = ct_events_on(t),
				 .flush = true };
	struct ct_ns *ns;

	t->rcu->read_lock();
	ns = ct_ns_get(t, zone);
	if (ns)
		ct_flush_walk_ns(&vc, ns);
	ct_flush_report(&vc);
	t->rcu->read_unlock();
	ct_reclaim_flush(thr);
	ct_thread_fold_count(thr);
	return vc.removed;
}

/* Flush: collect a row's victims under its lock, emit after.  The
 * overflow rows it empties leave the chain for reuse (htab.h), into
 * *@ovf, which the caller hands to call_rcu. */
static long flush_row(struct ct_thread *thr, struct ct_htab *h, struct ct_row *head,
		      int zone, ct_time_ns now, struct ct_ovf_retire **ovf)
{
	struct ct_conn *victims[CT_ROW_SLOTS * 16];
	unsigned n;
	long removed = 0;
	bool more;

again:
	n = 0;
	more = false;
	ct_row_lock(head);
	for (struct ct_row *r = head; r && !more; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS; k++) {
			uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_relaxed);
			struct ct_conn *c;

			/* a second slot goes with its primary one */
			if (!s || (s & CT_SLOT_SECOND))
				continue;
			c = ct_slot_conn(s);
			if (zone >= 0 && ct_conn_zone(c) != zone)
				continue;
			if (n == sizeof(victims) / sizeof(victims[0])) {
				more = true;
				break;
			}
			if (ct_conn_test_and_set(c, CT_ST_DYING))
				continue;
			atomic_store_explicit(&r->slot[k], 0, memory_order_release);
			victims[n++] = c;
		}
	if (!more && ct_row_next(head) && !ct_row_moved(head))
		ct_htab_ovf_unlink_empty(h, head, ovf, thr->t->rcu,
					 atomic_load_explicit(&thr->t->wheel_on, memory_order_relaxed));
	ct_row_unlock(head);
	for (unsigned i = 0; i < n; i++) {
		struct ct_conn *c = victims[i];
		struct ct_ns *ns = ct_slab_chunk_of(c)->slab->owner;

		ct_table_unlink_second(thr->t, c);
		if (ct_events_on(thr->t)) {
			struct ct_conn_info ci;
			ct_conn_lock(c);
			ct_conn_fill_info(thr->t, c, &ci);
			ct_conn_unlock(c);
			ct_event_emit(thr->t, CT_EV_DESTROY, CT_EVW_DESTROY,
				      CT_DESTROY_FLUSH, now, &ci);
		}
		ct_thread_count_add(thr, -1);
		ct_ns_count_add(ns, -1);
		CT_CTR_INC(thr, deleted);
		ct_reclaim_queue(thr, c);
		removed++;
	}
	if (more)
		goto again;
	return removed;
}

long ct_table_flush(struct ct_thread *thr, int zone, ct_time_ns now)
{
	struct ct_table *t = thr->t;
	struct ct_htab *h, *f;
	struct ct_ovf_retire *ovf = NULL;
	long n = 0;

	/* one zone: its own slabs, at the cost of its own entries */
	if (zone >= 0)
		return zone < CT_MAX_ZONES ? flush_zone(thr, (uint16_t)zone, now) : 0;

	pthread_mutex_lock(&t->resize_lock);
	ct_read_lock(thr);
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	f = atomic_load_explicit(&h->future, memory_order_acquire);
	for (uint64_t i = 0; i < h->n_rows; i++)
		n += flush_row(thr, h, &h->rows[i], zone, now, &ovf);
	for (uint64_t i = 0; f && i < f->n_rows; i++)
		n += flush_row(thr, f, &f->rows[i], zone, now, &ovf);
	ct_ovf_retire_flush(&ovf, t->rcu);
	ct_read_unlock(thr);
	pthread_mutex_unlock(&t->resize_lock);
	ct_reclaim_flush(thr);
	ct_thread_fold_count(thr);
	return n;
}

