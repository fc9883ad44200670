/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.c - summing the per-thread counters into conntrack -S figures.
 *
 * Threads count into their own struct ct_counters, each counter written
 * by its owner only, with a relaxed atomic store (CT_CTR_INC: no locked
 * instruction); a reader sums them with relaxed loads under the
 * thread-list lock, plus
 * what detached threads left behind.  The sum may trail concurrent work
 * by a few packets, never by more.
 */
#include <errno.h>
#include <string.h>

#include "ctrack/ns.h"
#include "table/table_impl.h"

#define N_CTR (sizeof(struct ct_counters) / sizeof(uint64_t))

void ct_counters_add(struct ct_counters *dst, const struct ct_counters *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < N_CTR; i++)
		d[i] += __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

static void to_stats(const struct ct_counters *c, struct ct_stats *s)
{
	s->found = c->found;
	s->invalid = c->invalid;
	s->insert = c->insert;
	s->insert_failed = c->insert_failed;
	s->drop = c->drop;
	s->early_drop = c->early_drop;
	s->error = c->error;
	s->search_restart = c->search_restart;
	s->clash_resolve = c->clash_resolve;
	s->chaintoolong = c->chaintoolong;
	s->packets = c->packets;
	s->untracked = c->untracked;
	s->ignored = c->ignored;
	s->related = c->related;
	s->expired = c->expired;
	s->deleted = c->deleted;
	memcpy(s->invalid_by_reason, c->invalid_by_reason,
	       sizeof(s->invalid_by_reason));
}

void ct_table_get_stats(const struct ct_table *ct, struct ct_stats *s)
{
	struct ct_table *t = (struct ct_table *)ct;
	struct ct_counters sum;
	struct ct_thread *thr;

	memset(&sum, 0, sizeof(sum));
	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&t->thr_lock);
	ct_counters_add(&sum, &t->dead_ctr);
	cds_list_for_each_entry(thr, &t->threads, node)
		ct_counters_add(&sum, &thr->ctr);
	pthread_mutex_unlock(&t->thr_lock);
	to_stats(&sum, s);
	s->count = ct_table_count(t);
	s->gc_passes = atomic_load(&t->gc_passes);
	s->gc_rows_locked = atomic_load(&t->gc_rows_locked);
	s->gc_wheel_seeds = atomic_load(&t->gc_wheel_seeds);
	s->resizes = atomic_load(&t->resizes);
}

/*
 * The caller need not be attached, so it cannot hold a read-side section:
 * ns_lock keeps the namespace published (ct_ns_destroy unpublishes it, and
 * only then queues its memory for reclaim, under that lock) while we read.
 */
int ct_ns_get_stats(const struct ct_table *ct, uint16_t id, struct ct_stats *s)
{
	struct ct_table *t = (struct ct_table *)ct;
	struct ct_counters c;
	struct ct_ns *ns;
	int64_t count;

	pthread_mutex_lock(&t->ns_lock);
	ns = ct_ns_get(t, id);
	if (!ns) {
		pthread_mutex_unlock(&t->ns_lock);
		return -ENOENT;
	}
	memset(&c, 0, sizeof(c));
	for (int i = 0; i < CT_NS_SHARDS; i++) {
		const struct ct_ns_shard *sh = &ns->shard[i];

		c.insert += atomic_load_explicit(&sh->insert, memory_order_relaxed);
		c.invalid += atomic_load_explicit(&sh->invalid, memory_order_relaxed);
		c.error += atomic_load_explicit(&sh->error, memory_order_relaxed);
		c.drop += atomic_load_explicit(&sh->drop, memory_order_relaxed);
		c.early_drop += atomic_load_explicit(&sh->early_drop, memory_order_relaxed);
		c.expired += atomic_load_explicit(&sh->expired, memory_order_relaxed);
	}
	memset(s, 0, sizeof(*s));
	to_stats(&c, s);
	/* an entry may leave before its inserter counted it in: a moment
	 * of -1, shown as 0 as ct_table_count() does */
	count = ct_ns_count(ns);
	s->count = count < 0 ? 0 : (uint64_t)count;
	pthread_mutex_unlock(&t->ns_lock);
	return 0;
}
