/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread.c - a thread's handle on a table: attach, detach, its RCU
 * states, the count delta it folds in.
 *
 * A handle carries what its thread keeps to itself so that packets write
 * no shared line: counters (summed when read), a table-count delta folded
 * in every 64 entries, magazines of free entries, a free batch, and its
 * ring of due handles (base/state.h).  Detaching gives all of it back:
 * the batch to call_rcu, the delta to the count, the ring to the wheel,
 * the counters to the table's dead_ctr, the magazines to their slabs.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/rcu.h"
#include "table/reclaim.h"
#include "table/stats.h"
#include "table/thread.h"
#include "table/wheel.h"

struct ct_thread *ct_thread_attach(struct ct_table *t)
{
	struct ct_thread *thr = aligned_alloc(64, (sizeof(*thr) + 63) & ~(size_t)63);

	if (!thr)
		return NULL;
	/* all but the ring's buffer (1 MB, the struct's tail): its pages are
	 * touched only as handles are queued, not here */
	memset(thr, 0, offsetof(struct ct_thread, ring) + offsetof(struct ct_ring, buf));
	thr->t = t;
	thr->ns_shard = (unsigned)(atomic_fetch_add_explicit(&t->threads_attached, 1,
							     memory_order_relaxed) % CT_NS_SHARDS);
	ct_rcu_reg(t->cfg.rcu);
	pthread_mutex_lock(&t->thr_lock);
	cds_list_add(&thr->node, &t->threads);
	pthread_mutex_unlock(&t->thr_lock);
	return thr;
}

uint64_t ct_thread_take_next_due(struct ct_thread *thr)
{
	uint64_t due = ~thr->due_inv_max;

	thr->due_inv_max = 0;
	return due;
}

void ct_thread_detach(struct ct_thread *thr)
{
	struct ct_table *t;

	if (!thr)
		return;
	t = thr->t;
	ct_reclaim_flush(thr);
	ct_thread_fold_count(thr);
	/* handles still on the ring go to the wheel (the collector's, so
	 * under its lock; not nested with thr_lock, which the collector
	 * takes inside gc_lock) */
	if (!ct_ring_empty(&thr->ring)) {
		pthread_mutex_lock(&t->gc_lock);
		ct_wheel_ring_drain(t->wheel, &thr->ring);
		pthread_mutex_unlock(&t->gc_lock);
	}
	pthread_mutex_lock(&t->thr_lock);
	cds_list_del(&thr->node);
	ct_stats_counters_add(&t->dead_ctr, &thr->ctr);
	pthread_mutex_unlock(&t->thr_lock);
	/* objects cached in magazines go back to their slabs; the namespace
	 * may be gone already (generation mismatch), then they went with it */
	for (int i = 0; i < CT_N_CLASSES; i++) {
		struct ct_slab_mag *m = &thr->mags[i];
		struct ct_ns *ns;

		if (!m->n)
			continue;
		t->rcu->read_lock();
		ns = ct_ns_get(t, m->zone);
		if (ns && ns->gen == m->slab_gen)
			ct_slab_free_bulk(m->slab, m->objs, m->n);
		t->rcu->read_unlock();
		m->n = 0;
	}
	ct_rcu_unreg(t->cfg.rcu);
	free(thr->pend);   /* a pending entry is only scratch (track/pending.c) */
	free(thr);
}

void ct_thread_quiescent(struct ct_thread *thr)
{
	if (thr->t->cfg.rcu == CT_RCU_QSBR)
		thr->t->rcu->read_quiescent_state();
}

void ct_thread_offline(struct ct_thread *thr)
{
	if (thr->t->cfg.rcu == CT_RCU_QSBR)
		thr->t->rcu->thread_offline();
}

void ct_thread_online(struct ct_thread *thr)
{
	if (thr->t->cfg.rcu == CT_RCU_QSBR)
		thr->t->rcu->thread_online();
}

void ct_thread_fold_count(struct ct_thread *thr)
{
	if (thr->count_delta) {
		atomic_fetch_add_explicit(&thr->t->count, thr->count_delta,
					  memory_order_relaxed);
		__atomic_store_n(&thr->count_delta, 0, __ATOMIC_RELAXED);
	}
}

