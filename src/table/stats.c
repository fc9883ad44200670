/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.c - summing the per-thread counters into conntrack -S figures
 * (ct_table_get_stats; a namespace's own are ns/ns.c's).
 *
 * Threads count into their own struct ct_counters, each counter written
 * by its owner only, with a relaxed atomic store (CT_CTR_INC: no locked
 * instruction); a reader sums them with relaxed loads under the
 * thread-list lock, plus
 * what detached threads left behind.  The sum may trail concurrent work
 * by a few packets, never by more.
 */
#include <string.h>

#include "table/stats.h"

#define N_CTR (sizeof(struct ct_counters) / sizeof(uint64_t))

void ct_stats_counters_add(struct ct_counters *dst, const struct ct_counters *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < N_CTR; i++)
		d[i] += __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

void ct_stats_from_counters(const struct ct_counters *c, struct ct_stats *s)
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
	s->nat_exhausted = c->nat_exhausted;
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
	ct_stats_counters_add(&sum, &t->dead_ctr);
	cds_list_for_each_entry(thr, &t->threads, node)
		ct_stats_counters_add(&sum, &thr->ctr);
	pthread_mutex_unlock(&t->thr_lock);
	ct_stats_from_counters(&sum, s);
	s->count = ct_table_count(t);
	s->gc_passes = atomic_load(&t->gc_passes);
	s->gc_rows_locked = atomic_load(&t->gc_rows_locked);
	s->gc_wheel_seeds = atomic_load(&t->gc_wheel_seeds);
	s->resizes = atomic_load(&t->resizes);
}

/* issue 25 (the daemon's cpu=N lines): one thread's counters, stats.h */
void ct_thread_get_stats(const struct ct_thread *thr, struct ct_stats *s)
{
	struct ct_counters c;

	memset(&c, 0, sizeof(c));
	ct_stats_counters_add(&c, &thr->ctr);
	memset(s, 0, sizeof(*s));
	ct_stats_from_counters(&c, s);
}

