/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * teardown.c - namespaces destroyed in batches (ct_ns_destroy).
 *
 * Teardown is the kernel's nf_conntrack_cleanup_net_list() taken
 * further.  The kernel unlinks the entries of a list of namespaces and
 * pays one synchronize_net() for the whole list instead of one per
 * namespace.  Here:
 *  1. every namespace of the batch is marked DYING (packets for it now get
 *     CT_PR_NS_DYING, and an insert that raced with the mark removes
 *     itself: see the seq_cst pair with track/create.c);
 *  2. their entries are unlinked by walking the namespaces' own slabs
 *     (cost: their own entries, table/flush.c), or, with CT_NS_SWEEP
 *     only, by one sweep over the rows first (the walk after it catches
 *     what a concurrent resize moved behind it).  The sweep was the
 *     default for batches holding over a quarter of the table; measured
 *     with the prefetching walk it costs about twice as much even when the
 *     batch is the whole table (it reads every row, claims victims in row
 *     order, and still walks the slabs after it);
 *  3. unlinked entries are NOT freed one by one: their memory is their
 *     namespaces' slabs, which go back to the arena whole;
 *  4. one call_rcu for the whole batch reclaims it after ONE grace period,
 *     and the caller does not wait for it (unless CT_NS_SYNC).
 * Entries of a dying namespace that some thread had already queued for
 * freeing hold a reference each; the namespace's memory goes when the last
 * reference does (ct_reclaim_ns_put, table/reclaim.h), whoever drops it.
 */
#include <errno.h>
#include <stdlib.h>

#include "table/event.h"
#include "table/flush.h"
#include "table/htab.h"
#include "table/reclaim.h"
#include "table/thread.h"

struct ns_batch {
	struct rcu_head rcu;
	struct ct_table *t;
	unsigned n;
	struct ct_ns *ns[];
};

static void batch_reclaim_cb(struct rcu_head *head)
{
	struct ns_batch *b = caa_container_of(head, struct ns_batch, rcu);
	struct ct_table *t = b->t;

	/* the published reference goes; entries still queued elsewhere keep
	 * the namespace until their own grace period has passed */
	for (unsigned i = 0; i < b->n; i++)
		ct_reclaim_ns_put(b->ns[i]);
	free(b);
	/* last: ct_table_destroy may free the table once this reads 0 */
	atomic_fetch_sub_explicit(&t->ns_reclaims, 1, memory_order_release);
}

long ct_ns_destroy(struct ct_thread *thr, const uint16_t *ids, unsigned k,
		   ct_time_ns now, unsigned flags)
{
	struct ct_table *t = thr->t;
	struct ct_flush_ctx vc = { .thr = thr, .now = now, .events = ct_events_on(t) };
	struct ns_batch *b;
	uint64_t *dying = NULL;
	bool sweep;

	if (!k)
		return 0;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	b = malloc(sizeof(*b) + (size_t)k * sizeof(b->ns[0]));
	if (!b)
		return -ENOMEM;
	b->t = t;
	b->n = 0;
	pthread_mutex_lock(&t->ns_lock);
	for (unsigned i = 0; i < k; i++) {
		struct ct_ns *ns;

		if (ids[i] == 0) {
			pthread_mutex_unlock(&t->ns_lock);
			free(b);
			return -EINVAL;
		}
		ns = atomic_load(&t->ns[ids[i]]);
		if (!ns || atomic_load(&ns->state) != CT_NS_ALIVE) {
			pthread_mutex_unlock(&t->ns_lock);
			free(b);
			return -ENOENT;
		}
		/* the same id twice in a batch counts once */
		for (unsigned j = 0; j < b->n; j++)
			if (b->ns[j] == ns)
				ns = NULL;
		if (ns)
			b->ns[b->n++] = ns;
	}
	/* 1. mark (seq_cst: pairs with the inserter's re-check) */
	for (unsigned i = 0; i < b->n; i++) {
		atomic_store_explicit(&b->ns[i]->state, CT_NS_DYING, memory_order_seq_cst);
	}
	atomic_thread_fence(memory_order_seq_cst);

	/* 2. unlink */
	sweep = (flags & CT_NS_SWEEP) && !(flags & CT_NS_WALK);
	thr->t->rcu->read_lock();
	if (sweep && (dying = calloc(CT_MAX_ZONES / 64, sizeof(*dying)))) {
		struct ct_htab *h, *f;

		for (unsigned i = 0; i < b->n; i++)
			dying[b->ns[i]->id >> 6] |= 1ull << (b->ns[i]->id & 63);
		pthread_mutex_lock(&t->resize_lock);
		h = atomic_load_explicit(&t->htab, memory_order_acquire);
		f = atomic_load_explicit(&h->future, memory_order_acquire);
		ct_flush_sweep(&vc, h, dying);
		if (f)
			ct_flush_sweep(&vc, f, dying);
		pthread_mutex_unlock(&t->resize_lock);
		/* the sweep misses entries inserted in a moved row's future
		 * generation after it passed: the walk below catches any */
		free(dying);
	}
	for (unsigned i = 0; i < b->n; i++)
		ct_flush_walk_ns(&vc, b->ns[i]);
	ct_flush_report(&vc);
	thr->t->rcu->read_unlock();

	/* 3. unpublish: the ids are free for reuse at once */
	for (unsigned i = 0; i < b->n; i++)
		atomic_store_explicit(&t->ns[b->ns[i]->id], NULL, memory_order_release);
	pthread_mutex_unlock(&t->ns_lock);
	ct_thread_fold_count(thr);
	ct_reclaim_flush(thr);

	/* 4. one grace period for the whole batch */
	atomic_fetch_add_explicit(&t->ns_reclaims, 1, memory_order_relaxed);
	if (flags & CT_NS_SYNC) {
		t->rcu->update_synchronize_rcu();
		batch_reclaim_cb(&b->rcu);
	} else {
		t->rcu->update_call_rcu(&b->rcu, batch_reclaim_cb);
	}
	return vc.removed;
}
