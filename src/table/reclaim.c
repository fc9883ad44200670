/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reclaim.c - deferred reclaim (reclaim.h): free batches handed to
 * call_rcu 64 entries at a time, and namespaces freed by their last
 * reference.
 *
 * A batch is returned to its slabs one slab at a time, so the callback
 * thread takes each slab's lock once per batch; a batch that cannot be
 * allocated leaves its entries on the thread's orphan list, linked
 * through their expiry word (nobody reads the expiry of an unlinked,
 * DYING entry), to leave with the next batch.
 */
#include <stdlib.h>

#include "table/reclaim.h"

void ct_reclaim_ns_free(struct ct_ns *ns)
{
	for (int i = 0; i < CT_N_CLASSES; i++)
		ct_slab_release(&ns->slabs[i]);
	free(atomic_load(&ns->settings));
	free(ns);
}

void ct_reclaim_ns_put_n(struct ct_ns *ns, uint64_t n)
{
	if (atomic_fetch_sub_explicit(&ns->refs, n, memory_order_acq_rel) == n)
		ct_reclaim_ns_free(ns);
}

void ct_reclaim_ns_put(struct ct_ns *ns)
{
	ct_reclaim_ns_put_n(ns, 1);
}

/*
 * A batch goes back to its slabs one slab at a time, each under one
 * acquisition of the slab's lock: taking it per entry made the callback
 * thread and the packet threads refilling their magazines contend on it
 * (under churn at the maximum, 40% of the CPU went to slab_lock) and let
 * reclaim fall behind.
 */
static void free_batch_cb(struct rcu_head *head)
{
	struct ct_free_batch *b = caa_container_of(head, struct ct_free_batch, rcu);
	void *run[CT_FREE_BATCH];
	bool done[CT_FREE_BATCH] = { false };
	struct ct_conn *c, *next;
	struct ct_ns *ns;

	for (unsigned i = 0; i < b->n; i++) {
		struct ct_slab *s;
		unsigned m = 0;

		if (done[i])
			continue;
		s = ct_slab_chunk_of(b->conns[i])->slab;
		ns = s->owner;
		for (unsigned j = i; j < b->n; j++)
			if (!done[j] && ct_slab_chunk_of(b->conns[j])->slab == s) {
				run[m++] = b->conns[j];
				done[j] = true;
			}
		ct_slab_free_bulk(s, run, m);
		/* last: a torn-down namespace's slabs may go with these
		 * references */
		ct_reclaim_ns_put_n(ns, m);
	}
	for (c = b->chain; c; c = next) {
		next = (struct ct_conn *)(uintptr_t)c->expires;
		ns = ct_slab_chunk_of(c)->slab->owner;
		ct_slab_free(c);
		ct_reclaim_ns_put(ns);
	}
	free(b);
}

void ct_reclaim_flush(struct ct_thread *thr)
{
	struct ct_free_batch *b = thr->pending;

	if (!b)
		return;
	thr->pending = NULL;
	b->chain = thr->orphans;
	thr->orphans = NULL;
	thr->t->rcu->update_call_rcu(&b->rcu, free_batch_cb);
}

/*
 * Queue an unlinked entry for freeing after a grace period.  Batches of 64
 * go to call_rcu (one grace period per 64 entries); a partial batch waits
 * for more, or for ct_reclaim_flush() (collector passes, flushes,
 * teardown, detach).  If no batch can be allocated the entry is kept on the
 * thread's orphan list, linked through its expires word - nobody reads the
 * expiry of an unlinked, DYING entry - and leaves with the next batch.
 */
void ct_reclaim_queue(struct ct_thread *thr, struct ct_conn *c)
{
	struct ct_ns *ns = ct_slab_chunk_of(c)->slab->owner;

	atomic_fetch_add_explicit(&ns->refs, 1, memory_order_relaxed);
	ct_reclaim_queue_noref(thr, c);
}

void ct_reclaim_queue_first(struct ct_thread *thr, struct ct_conn *c)
{
	struct ct_free_batch *b = malloc(sizeof(*b));

	if (!b) {
		__atomic_store_n(&c->expires, (uint64_t)(uintptr_t)thr->orphans, __ATOMIC_RELAXED);
		thr->orphans = c;
		return;
	}
	b->n = 1;
	b->chain = NULL;
	b->conns[0] = c;
	thr->pending = b;
}

