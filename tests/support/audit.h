/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * audit.h - a table's invariants, checked on a quiet table
 * (tests/support): one audit for the hostile tests, the soak, the stress
 * tests and the fuzz target, which each had their own.
 *
 * TS_AUDIT_TABLE: what a caller of the API can check, and the rows behind
 * it - every entry a dump shows is CONFIRMED and not DYING, lives in a
 * namespace that exists, is in a state its tracker has, has the inverted
 * original as its reply, and is found again by a lookup of either tuple;
 * no tuple belongs to two entries; the table's count, its statistics'
 * count, the slots occupied in every generation of rows and the dump
 * agree, and so do each namespace's count and its entries; every removal
 * is counted once (insert = count + expired + deleted + early_drop).
 *
 * TS_AUDIT_MEMORY: where the memory is, exactly rather than through the
 * noise of resident-set figures.  Every object a namespace's slabs ever
 * carved out of their chunks is, at any quiet moment (no packet in
 * flight, every grace period elapsed), in exactly one of three places: a
 * live entry, its chunk's free map, or an attached thread's magazine.  The
 * audit waits for the pending grace periods (rcu_barrier) and counts them;
 * a leak (an entry unlinked but never freed, a free batch dropped) makes
 * carved > live + free + cached; free objects are counted from the maps'
 * bits, and map_bad counts any disagreement with the counters kept beside
 * them.  It also reports the arena's chunk count, whose high-water mark
 * is what the table cost in memory, and the rows' longest chain.  The
 * memory figures are for the caller to judge; they are not violations.
 *
 * Call it from an attached thread, outside a read-side section, while no
 * other thread uses the table and no event handler would see the audit's
 * lookups (it makes none that change anything).
 */
#ifndef CT_TS_AUDIT_H
#define CT_TS_AUDIT_H

#include <stdint.h>

#include "ctrack/ctrack.h"

enum {
	TS_AUDIT_TABLE = 0x1,
	TS_AUDIT_MEMORY = 0x2,
	/* with TABLE: the entries were restored from records without the
	 * table's counters (ct_record_import counts no insert: record.h), so
	 * the removal count (insert = count + expired + ...) is not held */
	TS_AUDIT_RESTORED = 0x4,
};

/* Zones whose entries are counted one by one (zone_entries[]). */
#define TS_AUDIT_ZONES 64

struct ts_audit {
	/* TS_AUDIT_TABLE */
	uint64_t entries;                        /* in the dump */
	uint64_t zone_entries[TS_AUDIT_ZONES];   /* of them, per zone */
	/* TS_AUDIT_MEMORY */
	uint64_t carved, free_objs, cached, live;
	uint64_t map_bad;     /* chunks whose free map disagrees with their
			       * counts (bits set, their n_free, the slab's
			       * n_free) or marks an object never carved */
	uint64_t chunks, chunk_bytes;
	uint64_t rows, max_row;   /* rows of the current generation, longest */
	/* broken invariants: how many, and the first in words */
	unsigned violations;
	bool restored;                           /* TS_AUDIT_RESTORED given */
	char first[256];
};

void ts_audit(struct ct_thread *self, unsigned what, struct ts_audit *a);

#endif /* CT_TS_AUDIT_H */
