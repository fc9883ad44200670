/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ns.c - namespaces (zones): creation, settings, existence, counters.
 *
 * A namespace is a zone with its own settings, counters and memory
 * (struct ct_ns, base/state.h; its object is made by table/lifecycle.c,
 * as zone 0's is at the table's creation).  Published in t->ns[] under
 * ns_lock, read by packets under RCU: settings are replaced whole and the
 * old copy freed after a grace period, so a packet reads one consistent
 * set.  Teardown is teardown.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/rcu.h"
#include "table/lifecycle.h"
#include "table/stats.h"

int ct_ns_create(struct ct_table *t, uint16_t id, const struct ct_settings *s)
{
	struct ct_ns *ns;
	int err = 0;

	pthread_mutex_lock(&t->ns_lock);
	if (atomic_load(&t->ns[id])) {
		err = -EEXIST;
		goto out;
	}
	ns = ct_table_ns_new(t, id, s ? s : ct_ns_settings(atomic_load(&t->ns[0])));
	if (!ns) {
		err = -ENOMEM;
		goto out;
	}
	atomic_store_explicit(&t->ns[id], ns, memory_order_release);
	if ((uint32_t)id + 1 > t->ns_hi)
		t->ns_hi = (uint32_t)id + 1;
out:
	pthread_mutex_unlock(&t->ns_lock);
	return err;
}

/* Not attached, so no read-side section: ns_lock keeps @id's namespace
 * from being unpublished and reclaimed while we look (as ct_ns_get_stats). */
bool ct_ns_exists(const struct ct_table *ct, uint16_t id)
{
	struct ct_table *t = (struct ct_table *)ct;
	struct ct_ns *ns;
	bool alive;

	pthread_mutex_lock(&t->ns_lock);
	ns = ct_ns_get(t, id);
	alive = ns && atomic_load(&ns->state) == CT_NS_ALIVE;
	pthread_mutex_unlock(&t->ns_lock);
	return alive;
}

/* An old settings copy waiting for readers to finish with it. */
struct settings_old {
	struct rcu_head rcu;
	struct ct_settings *old;
};

static void settings_free_cb(struct rcu_head *head)
{
	struct settings_old *o = caa_container_of(head, struct settings_old, rcu);

	free(o->old);
	free(o);
}

int ct_ns_set_settings(struct ct_table *t, uint16_t id, const struct ct_settings *s)
{
	struct ct_settings *copy = malloc(sizeof(*copy));
	struct settings_old *o = malloc(sizeof(*o));
	struct ct_ns *ns;

	if (!copy || !o) {
		free(copy);
		free(o);
		return -ENOMEM;
	}
	*copy = *s;
	pthread_mutex_lock(&t->ns_lock);
	ns = atomic_load(&t->ns[id]);
	if (!ns || atomic_load(&ns->state) != CT_NS_ALIVE) {
		pthread_mutex_unlock(&t->ns_lock);
		free(copy);
		free(o);
		return -ENOENT;
	}
	atomic_fetch_or_explicit(&t->ext_seen, ct_settings_ext(t, s), memory_order_relaxed);
	o->old = atomic_exchange_explicit(&ns->settings, copy, memory_order_acq_rel);
	if (id == 0) {
		/* packet threads and the collector read these without
		 * ns_lock: atomic stores */
		t->cfg.settings = *s;
		__atomic_store_n(&t->max, (uint64_t)s->max, __ATOMIC_RELAXED);
		__atomic_store_n(&t->max95,
				 (uint64_t)s->max / 100 * 95 + (uint64_t)s->max % 100 * 95 / 100,
				 __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&t->ns_lock);
	/* packet threads may still read the old copy: free it after a
	 * grace period, without waiting here */
	ct_rcu_reg(t->cfg.rcu);
	t->rcu->update_call_rcu(&o->rcu, settings_free_cb);
	ct_rcu_unreg(t->cfg.rcu);
	return 0;
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
	ct_stats_from_counters(&c, s);
	/* an entry may leave before its inserter counted it in: a moment
	 * of -1, shown as 0 as ct_table_count() does */
	count = ct_ns_count(ns);
	s->count = count < 0 ? 0 : (uint64_t)count;
	pthread_mutex_unlock(&t->ns_lock);
	return 0;
}

