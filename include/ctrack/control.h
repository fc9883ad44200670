/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/control.h - what a control plane asks of a live table: a listing
 * in slices, deleting one connection, zeroing counters while listing.
 *
 * ct_table_dump() lists the whole table inside one read-side section and
 * with online resizing paused, which is right for a tool that prints and
 * exits but wrong for a daemon serving clients: a client that reads a
 * million-entry listing slowly (or stops reading) would hold the section
 * - and with it every grace period, so all memory reclaim - and keep the
 * table from growing, for as long as it pleases.  A sliced dump instead
 * returns after a bounded amount of work with a cursor, holding nothing
 * between slices; the caller writes out what it got and comes back.
 *
 * The cursor is a position in hash order, not a row number, so it stays
 * valid across online resizes: rows are chosen by a multiply-shift of the
 * entry's 32-bit hash (monotone in the hash), so "every entry whose hash
 * is below H has been seen" means the same thing in every generation.  A
 * slice visits the rows that cover its hash range in the current
 * generation and, while a resize is under way, in the next one (migration
 * is paused during a slice, so each entry sits in exactly one of them),
 * and passes only entries whose hash lies in the range.  So, like the
 * kernel's ctnetlink dump, an entry that lives through the whole listing
 * is seen exactly once, one created or removed meanwhile may or may not
 * be; unlike ctnetlink's bucket cursor, a resize never makes the listing
 * skip or repeat an entry.
 */
#ifndef CTRACK_CONTROL_H
#define CTRACK_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/table.h"
#include "ctrack/tuple.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a sliced dump stands: the next hash value to visit.  Plain value;
 * ct_dump_cursor_init starts a listing, ct_dump_cursor_done ends it. */
struct ct_dump_cursor {
	uint64_t next_hash;   /* 0 .. 2^32; 2^32 = past the end */
};

static inline void ct_dump_cursor_init(struct ct_dump_cursor *c)
{
	c->next_hash = 0;
}

static inline bool ct_dump_cursor_done(const struct ct_dump_cursor *c)
{
	return c->next_hash >> 32 != 0;
}

enum {
	/* zero each taken entry's packet and byte counters after copying
	 * them out, under the entry's lock (conntrack -L -z, the kernel's
	 * IPCTNL_MSG_CT_GET_CTRZERO): no packet counted between the copy and
	 * the reset is lost.  @fn then runs with the entry's lock held, so
	 * that what it skips keeps its counters */
	CT_DUMP_ZERO_COUNTERS = 0x1,
};

/* What a slice's @fn returns: 0 takes the entry, CT_DUMP_SKIP leaves it
 * (a filter said no: not counted, not zeroed), a negative value stops the
 * slice. */
#define CT_DUMP_SKIP 1

/*
 * ct_table_dump_slice - call @fn for the live connections (of zone @zone,
 * or all with @zone < 0) whose place in hash order is at the cursor or
 * after it, row by row, until at least @max_entries were visited (taken
 * or skipped) or the end; then advance the cursor past the last row
 * visited.  A slice ends only at a row boundary, so it may visit up to
 * one row's chain (max_chain entries, 64 by default) more than
 * @max_entries; @max_entries 0 means one row.  @fn returning a negative
 * value stops the slice at once (returned as is) and leaves the cursor
 * where the slice began, so the entries it had taken come again if the
 * caller retries.
 *
 * The calling thread must be attached; the slice runs inside one
 * read-side section and with online resizing paused, nothing is held when
 * it returns.  @fn must not call into the table.  Returns the number of
 * entries taken (>= 0) or @fn's negative value.  Cost: the rows visited
 * plus the entries in them, O(@max_entries) for a table at its usual
 * load, whatever @fn skips.
 */
int ct_table_dump_slice(struct ct_thread *thr, int zone, struct ct_dump_cursor *cur,
			unsigned max_entries, unsigned flags, ct_dump_fn fn, void *arg);

/*
 * ct_table_delete - remove the connection holding @tuple (either
 * direction), as `conntrack -D` does: a DESTROY event with cause
 * CT_DESTROY_DELETE, counted in `deleted`.  If @ci is not NULL it gets a
 * copy of the entry as it was.  Returns 1 removed, 0 no such entry (or
 * another thread removed it first).  The calling thread must be attached;
 * cost: one lookup.  Memory is reclaimed after a grace period; the caller
 * does not wait.
 */
int ct_table_delete(struct ct_thread *thr, const struct ct_tuple *tuple,
		    ct_time_ns now, struct ct_conn_info *ci);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_CONTROL_H */
