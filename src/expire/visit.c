/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * visit.c - the collector's locked visits: a row's due entries removed
 * (gc_row), a slot handle's one entry removed or queued again (gc_slot),
 * and the queue of due rows and slots in front of them (run.h).
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
 * chain for reuse (table/htab.h), here because the collector is the one
 * that empties rows in bulk and already holds the lock - with the wheel
 * on, only an empty tail, since slot handles name positions in the chain.
 */
#include "expire/run.h"
#include "proto/proto.h"
#include "table/conn_info.h"
#include "table/event.h"
#include "table/member.h"
#include "table/reclaim.h"

/*
 * Credit the namespace of the last removals with them: one atomic add per
 * counter per run of removals from one namespace, instead of per entry,
 * and so for the references the removed entries hold on it until their
 * batch is freed (ct_reclaim_queue_noref).  The namespace stays
 * allocated meanwhile: its published reference is dropped a grace period
 * after a teardown, and the removals' batches are freed a grace period
 * after they were queued, and gc_yield() flushes before it offers a
 * quiescent state, ct_gc_step before its read-side section ends.
 */
void gc_ns_flush(struct gc_run *g)
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

static void gc_victims(struct gc_run *g, struct ct_conn **victims, const uint8_t *early,
		       const struct ct_conn_info *infos, unsigned n);

/* Expire what is due in one row (the row is not moved).  Returns the
 * row's new bound.  A row with more due entries than one locking takes
 * (GC_VICTIMS) is locked again, so that a full pass leaves nothing due
 * behind but entries another thread held locked.
 *
 * The slot bounds (table/htab.h) say which entries may be due: the others are
 * not read, their bounds stand in for their expiries in the row's new
 * bound.  An entry without a valid bound is read, and every expiry read
 * of an entry that stays sets its slot's bound.  The row
 * bound is taken (set to "never") before the dirty bit is read, and a
 * writer that shortens a timeout sets the bit before it lowers the row
 * bound: either the bit is seen here, cleared, and every entry read after
 * the writer's store, or the bit stays set for the next visit and the
 * writer's lowering lands after the "never" store.  Under early-drop
 * pressure every entry is read. */
uint64_t gc_row(struct gc_run *g, struct ct_row *head)
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
		 * its bound queued a handle for it (table/wheel.h) */
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

			/* a NAT entry's second slot: the entry is the
			 * collector's at its primary slot (table/htab.h) */
			if (!s || (s & CT_SLOT_SECOND))
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
			    !(g->pressure && g->excess > 0 && ct_proto_can_early_drop(c))) {
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
					ct_wheel_push(t->wheel, (uint32_t)idx | pos << CT_WH_POS_SHIFT,
						      exp, false);
				}
			}
			gc_slot_due_set(&r->slot[k], s, &sd[k], exp);
		}
	}
	if (mind != UINT32_MAX && ((du + mind) << CT_SLOT_DUE_SHIFT) < m)
		m = (du + mind) << CT_SLOT_DUE_SHIFT;
	/* overflow rows left empty leave the chain (table/htab.h says why) */
	if (ct_row_next(head))
		g->res->ovf_rows_freed +=
			ct_htab_ovf_unlink_empty(h, head, &g->ovf_batch, t->rcu, g->wheel);
	/* slot handles cover the slots up to CT_WH_MAX_POS; a row handle
	 * the ones beyond */
	ct_due_lower(&head->due_inv, m);
	if (g->wheel && mdeep != CT_DUE_NEVER)
		ct_wheel_push(t->wheel, (uint32_t)idx | CT_WH_ROW << CT_WH_POS_SHIFT,
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

	/* its primary slot was cleared under a row lock released since */
	if (__builtin_expect(c->ext & CT_EXT_NAT, 0))
		ct_table_unlink_second(t, c);
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
	 * track/create.c's early_drop() does */
	if (early) {
		CT_CTR_INC(thr, early_drop);
		g->ns_early++;
	} else {
		CT_CTR_INC(thr, expired);
		g->ns_expired++;
	}
	ct_thread_count_add(thr, -1);
	ct_reclaim_queue_noref(thr, c);   /* gc_ns_flush adds the reference */
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
	    !gc_slot_matches(t->wheel, seen, &ct_slot_due(h, key & CT_WH_ROW_MASK)[k], ht))
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
		ct_wheel_push_t(t->wheel, key, ht, false);
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
	if (gc_slot_matches(t->wheel, s, &sd[k], ht)) {
		atomic_store_explicit(&sd[k], ct_slot_due_enc(exp), memory_order_relaxed);
		ct_wheel_push(t->wheel, key, exp, false);
	}
out:
	ct_row_unlock(head);
}

/* Collect the oldest queued row and fold its new bound into the bounds
 * above it: they were set to "never" before the row's bound was read, and
 * a lowering after that keeps the store-then-scan order. */
void gc_dequeue_row(struct gc_run *g)
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
void gc_queue_row(struct gc_run *g, struct ct_row *r, uint64_t rd,
		  _Atomic uint64_t *sub, _Atomic uint64_t *group)
{
	_Atomic uint16_t *sd = ct_slot_due(g->h, (uint64_t)(r - g->h->rows));
	/* gc_row's decoding, as a hint (rd <= now here) */
	uint64_t du;
	int64_t lim = ct_slot_due_base(rd, &du) ? ct_slot_due_lim(du, g->now) : INT64_MAX;

	for (int k = 0; k < CT_ROW_SLOTS; k++) {
		uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_relaxed);

		if (s && !(s & CT_SLOT_SECOND) && (!(s & CT_SLOT_BOUND) ||
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

