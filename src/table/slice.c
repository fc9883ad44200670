/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * slice.c - listing the table in slices, in hash order
 * (ct_table_dump_slice, control.h).
 *
 * A daemon's `ctrack list` must not hold a read-side section (and the
 * resize lock) while a client reads a million lines at its own pace, so
 * the listing is cut into slices of a few thousand entries with a cursor
 * in between.  The cursor is a hash value: ct_row_index maps the entry's
 * 32-bit hash to a row by a multiply-shift, monotone in the hash, so row
 * r of an n-row generation holds exactly the hashes in
 * [ceil(r * 2^32 / n), ceil((r + 1) * 2^32 / n)) and a slice that visits
 * whole rows from the cursor's on ends at a hash boundary valid in every
 * generation.  A row that holds hashes below the cursor (the first row of
 * a slice after a resize changed the row count) passes only the entries
 * at or above it.
 *
 * While a resize is under way an entry lives in the current generation
 * if its row there has not moved, and in the next one if it has (writers
 * that meet a MOVED row go to the future); the slice holds resize_lock,
 * which pauses migration, so the MOVED marks stand still and each entry
 * is found in exactly one place: for a row that moved, the rows of the
 * next generation covering its hash range are visited instead, passing
 * only that range.  An entry copied ahead by a migration that ran out of
 * memory half-way (htab->mig_partial) still has its row unmoved, so the
 * copy in the next generation is not passed twice.
 */
#include <errno.h>
#include <string.h>

#include "ctrack/control.h"
#include "base/conn.h"
#include "base/state.h"
#include "table/conn_info.h"
#include "table/conn_key.h"
#include "table/htab.h"
#include "table/member.h"

#define HASH_END (1ull << 32)
/* Rows ahead whose entries are prefetched: a listing visits entries in
 * hash order, which is random in memory, so each is a cache miss (300 ns
 * on these VMs); with the next rows' entries on their way the walk runs at
 * the printer's pace instead (BENCHMARKS.md, list). */
#define PREFETCH_ROWS 4

/* The first hash value of row @r of an @n-row generation. */
static uint64_t row_first_hash(uint64_t r, uint64_t n)
{
	return (uint64_t)((((unsigned __int128)r << 32) + n - 1) / n);
}

struct slice {
	struct ct_table *t;
	ct_dump_fn fn;
	void *arg;
	int zone;
	unsigned flags;
	int ret;
	unsigned taken;
	unsigned visited;
};

/* The entries of a head row (the chain's first six: most rows have no
 * more), two cache lines each: the core and what follows it (the
 * protocol's area, the counters). */
static void prefetch_row(const struct ct_row *r)
{
	for (int k = 0; k < CT_ROW_SLOTS; k++) {
		uint64_t v = atomic_load_explicit(&((struct ct_row *)r)->slot[k],
						  memory_order_relaxed);

		if (v) {
			const char *c = (const char *)ct_slot_conn(v);

			__builtin_prefetch(c);
			__builtin_prefetch(c + 64);
		}
	}
}

/* Pass the entries of the chain at @head whose hash is in [@lo, @hi). */
static int slice_row(struct slice *s, struct ct_row *head, uint64_t lo, uint64_t hi)
{
	for (struct ct_row *row = head; row; row = ct_row_next(row))
		for (int k = 0; k < CT_ROW_SLOTS; k++) {
			uint64_t v = atomic_load_explicit(&row->slot[k], memory_order_acquire);
			struct ct_conn_info ci;
			struct ct_conn *c;
			int r;

			if (!v)
				continue;
			c = ct_slot_conn(v);
			if (c->hash < lo || c->hash >= hi)
				continue;
			if (s->zone >= 0 && ct_conn_zone(c) != s->zone)
				continue;
			ct_conn_lock(c);
			if (ct_conn_status(c) & CT_ST_DYING) {
				ct_conn_unlock(c);
				continue;
			}
			ct_conn_fill_info(s->t, c, &ci);
			s->visited++;
			if (s->flags & CT_DUMP_ZERO_COUNTERS) {
				/* decided under the lock: a skipped entry keeps
				 * its counters, a taken one loses none */
				struct ct_ext_acct *a = ct_conn_acct(c);

				r = s->fn(&ci, s->arg);
				if (r == 0 && a)
					memset(a, 0, sizeof(*a));
				ct_conn_unlock(c);
			} else {
				ct_conn_unlock(c);
				r = s->fn(&ci, s->arg);
			}
			if (r < 0)
				return s->ret = r;
			if (r == 0)
				s->taken++;
		}
	return 0;
}

int ct_table_dump_slice(struct ct_thread *thr, int zone, struct ct_dump_cursor *cur,
			unsigned max_entries, unsigned flags, ct_dump_fn fn, void *arg)
{
	struct ct_table *t = thr->t;
	struct slice s = { t, fn, arg, zone, flags, 0, 0, 0 };
	struct ct_htab *h, *f;
	uint64_t next = cur->next_hash;

	if (next >= HASH_END)
		return 0;
	pthread_mutex_lock(&t->resize_lock);
	ct_read_lock(thr);
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	f = atomic_load_explicit(&h->future, memory_order_acquire);
	for (uint64_t i = ct_row_index(next, h->n_rows), p = i; i < h->n_rows; i++) {
		struct ct_row *head = &h->rows[i];

		for (; p < h->n_rows && p <= i + PREFETCH_ROWS; p++)
			if (!f || !ct_row_moved(&h->rows[p]))
				prefetch_row(&h->rows[p]);
		uint64_t lo = row_first_hash(i, h->n_rows), hi = row_first_hash(i + 1, h->n_rows);

		if (lo < next)
			lo = next;
		if (!f || !ct_row_moved(head)) {
			if (slice_row(&s, head, lo, hi))
				break;
		} else if (lo < hi) {
			uint64_t j = ct_row_index(lo, f->n_rows), last = ct_row_index(hi - 1, f->n_rows);

			for (; j <= last; j++)
				if (slice_row(&s, &f->rows[j], lo, hi))
					break;
			if (s.ret)
				break;
		}
		next = hi;
		if (s.visited >= max_entries)
			break;
	}
	ct_read_unlock(thr);
	pthread_mutex_unlock(&t->resize_lock);
	if (s.ret)
		return s.ret;
	cur->next_hash = next;
	return (int)s.taken;
}
