/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * resize.c - online resize (resize.h).
 *
 * Online resize follows the idea of Redis' incremental rehash, made safe
 * for lock-free readers: a resize allocates the next generation and hangs
 * it on the current one (htab->future); rows are then migrated one at a
 * time, each under its lock, by inserting threads (a few rows per insert),
 * by the collector and by ct_table_resize_step().  An entry is stored in
 * the new generation before it is cleared from the old one, and a reader
 * that finds nothing in the old generation looks in the future one, so
 * every live entry is always found.  Writers that meet a row marked MOVED
 * go to the future generation.  When every row has moved, the future
 * becomes current and the old generation is freed after a grace period.
 * A reader that still holds an old generation follows the chain of
 * futures, all of which stay allocated until its read section ends.  No
 * writer ever waits for more than one row's migration.
 *
 * Growth.  A resize makes the table resize_growth_pct (default 125%) of
 * its rows, not twice: rows are found by a multiply-shift of the hash
 * (ct_row_index), so their number need not be a power of two, and at the
 * default 75% threshold the load stays between 60% and 75%, where rows
 * cost 14-18 bytes per entry instead of the 17-34 of a doubling.  The
 * price is paid while the table grows: an entry is migrated about
 * g / (g - 1) = 5 times on the way to any size instead of about twice, so
 * migration moves an old row's entries in batches, one lock hold per
 * target row (migrate_batch), reading no tuple.
 *
 * Iterations over rows (dump, flush, a teardown's sweep) hold
 * resize_lock, which pauses migration (never inserts), so they see each
 * entry exactly once.  The collector does not: it stops a slice when the
 * generation it walks is retired (expire/gc.c).
 */
#include <stdlib.h>

#include "table/resize.h"

static void old_htab_free_cb(struct rcu_head *head)
{
	ct_htab_free(caa_container_of(head, struct ct_htab, rcu));
}

/* Prefetch the entries of row @r (without its lock: a stale pointer is
 * only a wasted prefetch, which never faults): migrate_row reads each
 * one's hash, a cache miss per entry otherwise, taken one at a time under
 * the row locks. */
static void prefetch_row_entries(const struct ct_row *r)
{
	for (int k = 0; k < CT_ROW_SLOTS; k++) {
		uint64_t s = atomic_load_explicit(&((struct ct_row *)r)->slot[k],
						  memory_order_relaxed);
		if (s)   /* a second slot's reply hash may be on the next line */
			__builtin_prefetch(&ct_slot_conn(s)->hash);
	}
}

/* Entries a migration carries at a time (one old row has 4.5 on average). */
#define MIG_BATCH 16

/*
 * Store @n entries (slot values @slot, rows @idx in @f, expiries @exp)
 * in @f, each target row under one hold of its lock: an old row's entries
 * go to two or three neighbouring rows (ct_row_index is monotone), so this
 * takes a row lock and lowers the due bounds about twice per old row
 * rather than once per entry.  Returns false when out of memory (the
 * entries stored so far stay stored, and h->mig_partial says so).
 */
static bool migrate_batch(struct ct_htab *h, struct ct_htab *f,
			  const uint64_t *slot, uint64_t *idx, const uint64_t *exp,
			  unsigned n)
{
	bool ok = true;

	for (unsigned a = 0; a < n && ok; a++) {
		uint64_t row = idx[a], due = CT_DUE_NEVER;
		struct ct_row *nr;
		unsigned empty;

		if (row == UINT64_MAX)
			continue;
		nr = &f->rows[row];
		ct_row_lock(nr);
		/* the head's free slots, read once (slots change only under
		 * the lock we hold); the chain only once the head is full */
		empty = h->mig_partial ? 0 : ct_row_empty(nr);
		for (unsigned b = a; b < n; b++) {
			if (idx[b] != row)
				continue;
			if (empty) {
				atomic_store_explicit(&nr->slot[__builtin_ctz(empty)],
						      slot[b], memory_order_release);
				empty &= empty - 1;
			} else if (!ct_htab_place_locked(f, nr, slot[b], h->mig_partial)) {
				h->mig_partial = true;
				ok = false;
				break;
			}
			idx[b] = UINT64_MAX;
			if (exp[b] < due)
				due = exp[b];
		}
		/* the order of an insert: row, sub, unlock, group (expire/visit.c) */
		ct_due_lower(&nr->due_inv, due);
		ct_due_lower(&f->sub_due_inv[row / CT_SUB_ROWS], due);
		ct_row_unlock(nr);
		ct_due_lower(&f->group_due_inv[row / CT_GROUP_ROWS], due);
	}
	return ok;
}

/* Move every entry of old row @i into generation @f.  Caller holds
 * resize_lock.  Returns false when out of memory (row left in place). */
static bool migrate_row(struct ct_table *t, struct ct_htab *h,
			struct ct_htab *f, uint64_t i)
{
	struct ct_row *head = &h->rows[i];
	uint64_t slot[MIG_BATCH], idx[MIG_BATCH], exp[MIG_BATCH];
	unsigned n = 0;
	bool ok = true;

	(void)t;
	ct_row_lock(head);
	if (ct_row_moved(head)) {
		ct_row_unlock(head);
		return true;
	}
	for (struct ct_row *r = head; r; r = ct_row_next(r)) {
		for (int k = 0; k < CT_ROW_SLOTS; k++) {
			uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_relaxed);
			struct ct_conn *c;

			if (!s)
				continue;
			c = ct_slot_conn(s);
			/* the slot bound stays behind: the new row's bounds
			 * are the collector's to set (htab.h) */
			slot[n] = s & ~CT_SLOT_BOUND;
			if (__builtin_expect(s & CT_SLOT_SECOND, 0)) {
				/* a NAT entry's second slot: the row of its
				 * reply hash, and no due time (the collector
				 * sees the entry at its primary slot) */
				idx[n] = ct_row_index(ct_conn_nat(c)->rhash, f->n_rows);
				exp[n] = CT_DUE_NEVER;
			} else {
				idx[n] = ct_row_index(c->hash, f->n_rows);
				/* read before c is published in f: c is live,
				 * and its writers hold its lock, not the row's;
				 * one who shortens it later lowers the bounds of
				 * both generations (ct_due_lowered) */
				exp[n] = __atomic_load_n(&c->expires, __ATOMIC_RELAXED);
			}
			if (++n == MIG_BATCH) {
				/* no chain limit and no clash check: the
				 * entries are members already, they only
				 * change rows */
				if (!migrate_batch(h, f, slot, idx, exp, n)) {
					ok = false;
					goto out;
				}
				n = 0;
			}
		}
	}
	if (n && !migrate_batch(h, f, slot, idx, exp, n)) {
		ok = false;
		goto out;
	}
	/* every entry is now in f: clear the old chain and mark it moved */
	for (struct ct_row *r = head; r; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS; k++)
			atomic_store_explicit(&r->slot[k], 0, memory_order_release);
	atomic_fetch_or_explicit(&head->next, CT_ROW_MOVED, memory_order_release);
out:
	ct_row_unlock(head);
	return ok;
}

bool ct_table_resize_step(struct ct_table *t, uint64_t rows)
{
	struct ct_htab *h = atomic_load_explicit(&t->htab, memory_order_acquire);
	struct ct_htab *f = atomic_load_explicit(&h->future, memory_order_acquire);

	if (!f)
		return false;
	if (pthread_mutex_trylock(&t->resize_lock) != 0)
		return true;
	/* re-check under the lock: another thread may have finished it */
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	f = atomic_load_explicit(&h->future, memory_order_acquire);
	if (!f) {
		pthread_mutex_unlock(&t->resize_lock);
		return false;
	}
	if (atomic_load_explicit(&h->mig_next, memory_order_relaxed) < h->n_rows)
		prefetch_row_entries(&h->rows[atomic_load_explicit(&h->mig_next,
								   memory_order_relaxed)]);
	while (rows--) {
		uint64_t i = atomic_load_explicit(&h->mig_next, memory_order_relaxed);
		if (i >= h->n_rows)
			break;
		/* the next row's entries arrive while this one moves */
		if (rows && i + 1 < h->n_rows)
			prefetch_row_entries(&h->rows[i + 1]);
		if (!migrate_row(t, h, f, i))
			break;
		atomic_store_explicit(&h->mig_next, i + 1, memory_order_relaxed);
	}
	if (atomic_load_explicit(&h->mig_next, memory_order_relaxed) >= h->n_rows) {
		atomic_store_explicit(&t->htab, f, memory_order_release);
		atomic_store_explicit(&t->n_rows, f->n_rows, memory_order_relaxed);
		atomic_fetch_add(&t->resizes, 1);
		pthread_mutex_unlock(&t->resize_lock);
		/* after unlocking: call_rcu wakes the reclaim thread, and a
		 * waker the scheduler preempts must not hold up the next
		 * resize meanwhile */
		t->rcu->update_call_rcu(&h->rcu, old_htab_free_cb);
		return false;
	}
	pthread_mutex_unlock(&t->resize_lock);
	return true;
}

void ct_table_maybe_grow(struct ct_table *t)
{
	struct ct_htab *h = atomic_load_explicit(&t->htab, memory_order_acquire);
	uint64_t cap = h->n_rows * CT_ROW_SLOTS;
	int64_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
	struct ct_htab *f, *expect = NULL;

	if (t->cfg.resize_load_pct > 100 || n <= 0 ||
	    (uint64_t)n * 100 <= cap * t->cfg.resize_load_pct)
		return;
	if (atomic_load_explicit(&h->future, memory_order_relaxed))
		return;
	if (pthread_mutex_trylock(&t->resize_lock) != 0)
		return;
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	if (atomic_load_explicit(&h->future, memory_order_relaxed) ||
	    (uint64_t)n * 100 <= h->n_rows * CT_ROW_SLOTS * t->cfg.resize_load_pct) {
		pthread_mutex_unlock(&t->resize_lock);
		return;
	}
	/* grow by the growth factor g; by more only while the entries would
	 * fill more than 2 / (1 + g) of the new threshold (with g = 1.25,
	 * 89%: a migration's worth of room).  Just past the threshold they
	 * fill 1/g of it (80%), so the normal resize grows by g once.  (A
	 * test of 1/g itself was true at every resize, for an entry count
	 * just past the old threshold is just past 1/g of the new one, and
	 * grew by g twice whenever rounding added no slack.)  At most to
	 * CT_ROWS_MAX. */
	{
		uint64_t g = t->cfg.resize_growth_pct, rows = h->n_rows;

		if (rows >= CT_ROWS_MAX) {
			pthread_mutex_unlock(&t->resize_lock);
			return;
		}
		do
			rows = ct_htab_rows_round(rows * g / 100);
		while (rows < CT_ROWS_MAX &&
		       (uint64_t)n * (100 + g) > 2 * rows * CT_ROW_SLOTS * t->cfg.resize_load_pct);
		f = ct_htab_new(rows);
	}
	if (f && !atomic_compare_exchange_strong(&h->future, &expect, f))
		ct_htab_free(f);
	pthread_mutex_unlock(&t->resize_lock);
}

