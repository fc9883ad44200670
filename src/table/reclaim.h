/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reclaim.h - deferred reclaim: unlinked entries, and namespaces whose
 * last reference went, given back after a grace period (private).
 *
 * An unlinked entry goes into its thread's free batch; a full batch (or
 * the end of a call) is handed to call_rcu as one callback, so a grace
 * period is paid per 64 entries, not per entry.  Each queued entry holds
 * a reference on its namespace (struct ct_ns.refs), so a namespace torn
 * down meanwhile keeps its slabs until its last queued entry is freed;
 * whoever drops the last reference frees the namespace.
 *
 * Callers: any thread attached to the table, inside a read-side section
 * for ct_reclaim_queue* (the entry was unlinked in it), for its own
 * struct ct_thread; ct_reclaim_ns_put* from anywhere.
 */
#ifndef CT_RECLAIM_H
#define CT_RECLAIM_H

#include "base/state.h"

/* Hand @thr's partial batch (and orphans) to call_rcu now: the collector's
 * passes, flushes, teardown and detach end with it. */
void ct_reclaim_flush(struct ct_thread *thr);

/* ct_reclaim_queue_noref's start of a batch (out of line: malloc). */
void ct_reclaim_queue_first(struct ct_thread *thr, struct ct_conn *c);

/* Queue an unlinked entry to be freed after a grace period; it takes a
 * reference on the entry's namespace (dropped when the entry is freed). */
void ct_reclaim_queue(struct ct_thread *thr, struct ct_conn *c);

/* The same for a caller that takes the namespace reference itself, later
 * but within the same read-side section as the unlink (the collector adds
 * a run's references at once, expire/visit.c): until that section ends no
 * grace period can pass, so neither the entry's batch nor a teardown's
 * published reference can be dropped before the reference is there.
 * Inline: the collector calls it for every entry it removes. */
static inline void ct_reclaim_queue_noref(struct ct_thread *thr, struct ct_conn *c)
{
	struct ct_free_batch *b = thr->pending;

	if (__builtin_expect(!b, 0)) {
		ct_reclaim_queue_first(thr, c);
		return;
	}
	b->conns[b->n++] = c;
	if (b->n == CT_FREE_BATCH)
		ct_reclaim_flush(thr);
}

/* Drop @n references to @ns (one); the last frees its memory, slabs
 * whole (ct_reclaim_ns_free). */
void ct_reclaim_ns_put_n(struct ct_ns *ns, uint64_t n);
void ct_reclaim_ns_put(struct ct_ns *ns);

/* Free @ns now: its slabs back to the arena, its settings, itself.  For
 * its last reference, and for the table's end (nobody else is left). */
void ct_reclaim_ns_free(struct ct_ns *ns);

#endif /* CT_RECLAIM_H */
