/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lifecycle.c - a table made and unmade: its configuration's defaults,
 * creation (rows, zone 0, the collector's policy and wheel), the table's
 * end; and the namespace objects the table holds (ct_table_ns_new).
 *
 * Creation is the only place that knows every part of the state: the
 * rest of table/ and the stages above work on a table that exists.  The
 * end waits for every deferred reclaim (free batches, teardown batches)
 * before it frees anything, so a caller may destroy a table straight
 * after its last call.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/rcu.h"
#include "table/due.h"
#include "table/htab.h"
#include "table/lifecycle.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/wheel.h"

void ct_table_config_default(struct ct_table_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	ct_settings_default(&cfg->settings);
	cfg->rcu = CT_RCU_MEMB;
	cfg->max_chain = 64;
	cfg->resize_load_pct = 75;
	cfg->resize_growth_pct = CT_GROWTH_PCT_DEFAULT;
}


struct ct_ns *ct_table_ns_new(struct ct_table *t, uint16_t id,
			       const struct ct_settings *s)
{
	struct ct_ns *ns = aligned_alloc(64, (sizeof(*ns) + 63) & ~(size_t)63);
	struct ct_settings *copy = malloc(sizeof(*copy));

	if (!ns || !copy) {
		free(ns);
		free(copy);
		return NULL;
	}
	memset(ns, 0, sizeof(*ns));
	*copy = *s;
	ns->id = id;
	ns->table = t;
	ns->gen = atomic_fetch_add(&t->ns_gen, 1) + 1;
	atomic_init(&ns->refs, 1);
	atomic_init(&ns->settings, copy);
	/* before any packet can create an entry under these settings */
	atomic_fetch_or_explicit(&t->ext_seen, ct_settings_ext(t, s) |
				 (t->cfg.tcp_flags ? CT_EXT_TCPF : 0), memory_order_relaxed);
	for (int i = 0; i < CT_N_CLASSES; i++) {
		ct_slab_init(&ns->slabs[i], &t->arena,
			     (uint32_t)(sizeof(struct ct_conn) + (size_t)i * 8),
			     (uint32_t)offsetof(struct ct_conn, status));
		ns->slabs[i].owner = ns;
		ns->slabs[i].zone = id;
	}
	return ns;
}

static int ns_zero(struct ct_table *t)
{
	struct ct_ns *ns = ct_table_ns_new(t, 0, &t->cfg.settings);

	if (!ns)
		return -ENOMEM;
	atomic_store(&t->ns[0], ns);
	t->ns_hi = 1;
	return 0;
}

static void ns_free_all(struct ct_table *t)
{
	/* not all 65,536 slots: untouched pages of the array would each be
	 * faulted in to be read as zeros */
	for (uint32_t i = 0; i < t->ns_hi; i++) {
		struct ct_ns *ns = atomic_load(&t->ns[i]);
		if (ns) {
			atomic_store(&t->ns[i], NULL);
			ct_reclaim_ns_free(ns);
		}
	}
}

int ct_table_create(const struct ct_table_config *cfg, struct ct_table **out)
{
	struct ct_table *t;
	int err;

	if (!cfg || !out || cfg->rcu > CT_RCU_QSBR)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cfg = *cfg;
	if (!t->cfg.max_chain)
		t->cfg.max_chain = 64;
	if (!t->cfg.resize_load_pct)
		t->cfg.resize_load_pct = 75;
	if (!t->cfg.resize_growth_pct)
		t->cfg.resize_growth_pct = CT_GROWTH_PCT_DEFAULT;
	if (t->cfg.resize_growth_pct < 110 || t->cfg.resize_growth_pct > 400) {
		free(t);
		return -EINVAL;
	}
	t->rcu = ct_rcu_flavor(cfg->rcu);
	if (cfg->hash_key) {
		memcpy(&t->key, cfg->hash_key, sizeof(t->key));
	} else if ((err = ct_hash_key_random(&t->key)) < 0) {
		free(t);
		return err;
	}
	t->max = cfg->settings.max;
	t->max95 = t->max / 100 * 95 + (t->max % 100) * 95 / 100;
	pthread_mutex_init(&t->resize_lock, NULL);
	pthread_mutex_init(&t->ns_lock, NULL);
	pthread_mutex_init(&t->thr_lock, NULL);
	pthread_mutex_init(&t->gc_lock, NULL);
	pthread_mutex_init(&t->gc_sleep_lock, NULL);
	pthread_cond_init(&t->gc_sleep_cond, NULL);
	CDS_INIT_LIST_HEAD(&t->threads);
	if (ct_arena_init(&t->arena) < 0)
		goto nomem;
	t->ns = calloc(CT_MAX_ZONES, sizeof(*t->ns));
	if (!t->ns)
		goto nomem;
	t->htab = ct_htab_new(ct_htab_rows_round(cfg->settings.buckets ? cfg->settings.buckets : 1024));
	if (!t->htab)
		goto nomem;
	atomic_init(&t->n_rows, atomic_load(&t->htab)->n_rows);
	t->wheel = calloc(1, sizeof(*t->wheel));
	if (!t->wheel)
		goto nomem;
	if (ns_zero(t) < 0)
		goto nomem;
	/* the collector's policy, and with it the wheel (due.h) */
	ct_gc_policy_default(&t->gc);
	ct_due_wheel_switch(t);
	*out = t;
	return 0;
nomem:
	ct_table_destroy(t);
	return -ENOMEM;
}

void ct_table_destroy(struct ct_table *t)
{
	struct ct_htab *h;

	if (!t)
		return;
	/* wait for every free batch and namespace reclaim to run (the
	 * counter makes this independent of how reclaims are scheduled) */
	ct_rcu_reg(t->cfg.rcu);
	do
		t->rcu->barrier();
	while (atomic_load_explicit(&t->ns_reclaims, memory_order_acquire));
	ct_rcu_unreg(t->cfg.rcu);
	{
		/* the source index and the port map (nat/) */
		void (*nat_free)(struct ct_table *) = atomic_load(&t->nat_free);

		if (nat_free)
			nat_free(t);
	}
	h = atomic_load(&t->htab);
	if (h) {
		struct ct_htab *f = atomic_load(&h->future);
		ct_htab_free(f);
		ct_htab_free(h);
	}
	if (t->ns)
		ns_free_all(t);
	free(t->ns);
	if (t->wheel) {
		ct_wheel_free(t->wheel);
		free(t->wheel);
	}
	if (t->arena.regions || t->arena.n_regions)
		ct_arena_fini(&t->arena);
	pthread_mutex_destroy(&t->resize_lock);
	pthread_mutex_destroy(&t->ns_lock);
	pthread_mutex_destroy(&t->thr_lock);
	pthread_mutex_destroy(&t->gc_lock);
	pthread_mutex_destroy(&t->gc_sleep_lock);
	pthread_cond_destroy(&t->gc_sleep_cond);
	free(t);
}

