/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * resize.h - online resize: the next generation of rows, migrated a few
 * rows at a time while readers and writers go on (private).
 *
 * Callers: threads attached to the table, inside a read-side section.
 * Each call migrates at most the rows it is asked for, one row lock at a
 * time (and a target row's under it: base/state.h's lock order); helpers
 * take resize_lock with a trylock only, so no writer waits for a resize.
 */
#ifndef CT_RESIZE_H
#define CT_RESIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/state.h"
#include "table/htab.h"

/* Default resize growth (ct_table_config.resize_growth_pct): with the
 * default threshold of 75% the load stays between 60% and 75%, where rows
 * cost 14-18 bytes per entry (a doubling let it fall to 37.5%, 27 bytes)
 * and one row in six to ten carries an overflow row. */
#define CT_GROWTH_PCT_DEFAULT 125

/* Help an ongoing resize: migrate up to @rows rows.  Returns true while
 * a resize is still in progress (also when another thread holds
 * resize_lock and this call did nothing). */
bool ct_table_resize_step(struct ct_table *t, uint64_t rows);

/* Start a resize if the load is past the threshold and none is under way
 * (maps the next generation: its rows are zero, so it needs no pass). */
void ct_table_maybe_grow(struct ct_table *t);

/*
 * After an insert (inside a read-side section): help a resize under way
 * by migrating 8 rows of the current generation, or else start one if
 * the load is past the threshold (ct_table_maybe_grow's first test,
 * inline: every creation asks, and the answer is nearly always no).
 * Every insert helps, wherever its entry went: an insert that helped only
 * when its own row had not moved yet would help less and less as the
 * migration advanced, and a migration of R rows would take some
 * R/8 * ln(R) inserts instead of R/8, longer than the 1.25x growth
 * leaves room for (1.1 R entries between two thresholds).
 */
static inline void ct_table_after_insert(struct ct_table *t)
{
	struct ct_htab *h = atomic_load_explicit(&t->htab, memory_order_acquire);
	int64_t n;

	if (__builtin_expect(atomic_load_explicit(&h->future, memory_order_relaxed) != NULL, 0)) {
		ct_table_resize_step(t, 8);
		return;
	}
	n = atomic_load_explicit(&t->count, memory_order_relaxed);
	if (t->cfg.resize_load_pct > 100 || n <= 0 ||
	    (uint64_t)n * 100 <= h->n_rows * CT_ROW_SLOTS * t->cfg.resize_load_pct)
		return;
	ct_table_maybe_grow(t);
}

#endif /* CT_RESIZE_H */
