/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.h - removing entries in bulk: every entry row by row
 * (ct_table_flush), the entries of some namespaces by walking their own
 * slabs or by one sweep over the rows (private; ns/teardown.c tears
 * namespaces down with these).
 *
 * Callers: an attached thread, inside a read-side section; the walk holds
 * each slab's lock in turn and takes row locks under it, the sweep holds
 * resize_lock (the caller's) and takes row locks (base/state.h's lock
 * order).  Victims are unlinked here; their DESTROY events wait in the
 * context until ct_flush_report, when no slab lock is held.
 */
#ifndef CT_FLUSH_H
#define CT_FLUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/state.h"
#include "table/htab.h"

/* One bulk removal's state. */
struct ct_flush_ctx {
	struct ct_thread *thr;
	ct_time_ns now;
	long removed;
	bool events;
	struct ct_ns *walking;   /* walk: the namespace being walked, whose
				  * count is lowered once at its end */
	int64_t walked;          /* its victims so far */
	bool flush;              /* a flush: the namespace lives on, so each
				  * victim is freed on its own (else the
				  * namespace's slabs go whole, teardown) */
	/* victims whose DESTROY is reported once no slab lock is held */
	struct ct_conn **defer;
	size_t n_defer, cap_defer;
};

/* Unlink every entry of @ns by walking its slabs (cost: its own
 * entries).  Entries not yet confirmed are left to their inserter, which
 * sees the namespace DYING when it is (track/create.c). */
void ct_flush_walk_ns(struct ct_flush_ctx *vc, struct ct_ns *ns);

/* Unlink every entry of generation @h whose zone has its bit set in
 * @dying (CT_MAX_ZONES bits): every row read once, a victim known by the
 * zone in its chunk's header.  Caller holds resize_lock. */
void ct_flush_sweep(struct ct_flush_ctx *vc, struct ct_htab *h, const uint64_t *dying);

/* Report the DESTROYs the removal deferred, and free the list.  The
 * entries are unlinked but not freed (that needs a grace period, and the
 * caller is in a read-side section). */
void ct_flush_report(struct ct_flush_ctx *vc);

#endif /* CT_FLUSH_H */
