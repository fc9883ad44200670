/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ns.c - namespaces: creation, settings, and batched teardown.
 *
 * Teardown is the kernel's nf_conntrack_cleanup_net_list() taken
 * further.  The kernel unlinks the entries of a list of namespaces and
 * pays one synchronize_net() for the whole list instead of one per
 * namespace.  Here:
 *  1. every namespace of the batch is marked DYING (packets for it now get
 *     CT_PR_NS_DYING, and an insert that raced with the mark removes
 *     itself: see the seq_cst pair with track.c);
 *  2. their entries are unlinked by walking the namespaces' own slabs
 *     (cost: their own entries), prefetching each entry's row a few
 *     entries ahead.  The other strategy, one sequential sweep over the
 *     rows that identifies a victim from the header of the 32 KiB chunk
 *     its pointer falls in, is kept for CT_NS_SWEEP: it was the default
 *     for batches holding over a quarter of the table, but measured with
 *     the prefetching walk it costs about twice as much even when the
 *     batch is the whole table (it reads every row, claims victims in row
 *     order, and still walks the slabs after it for entries a concurrent
 *     resize moved behind it);
 *  3. unlinked entries are NOT freed one by one: their memory is their
 *     namespaces' slabs, which go back to the arena whole;
 *  4. one call_rcu for the whole batch reclaims it after ONE grace period,
 *     and the caller does not wait for it (unless CT_NS_SYNC).
 * Entries of a dying namespace that some thread had already queued for
 * freeing hold a reference each; the namespace's memory goes when the last
 * reference does (ct_ns_put), whoever drops it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "table/table_impl.h"

static struct ct_ns *ns_alloc(struct ct_table *t, uint16_t id,
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
	atomic_fetch_or_explicit(&t->ext_seen, ct_settings_ext(t, s), memory_order_relaxed);
	for (int i = 0; i < CT_N_CLASSES; i++) {
		ct_slab_init(&ns->slabs[i], &t->arena,
			     (uint32_t)(sizeof(struct ct_conn) + (size_t)i * 8),
			     (uint32_t)offsetof(struct ct_conn, status));
		ns->slabs[i].owner = ns;
		ns->slabs[i].zone = id;
	}
	return ns;
}

static void ns_free_now(struct ct_ns *ns)
{
	for (int i = 0; i < CT_N_CLASSES; i++)
		ct_slab_release(&ns->slabs[i]);
	free(atomic_load(&ns->settings));
	free(ns);
}

int ct_ns_init_zero(struct ct_table *t)
{
	struct ct_ns *ns = ns_alloc(t, 0, &t->cfg.settings);

	if (!ns)
		return -ENOMEM;
	atomic_store(&t->ns[0], ns);
	t->ns_hi = 1;
	return 0;
}

void ct_ns_free_all(struct ct_table *t)
{
	/* not all 65,536 slots: untouched pages of the array would each be
	 * faulted in to be read as zeros */
	for (uint32_t i = 0; i < t->ns_hi; i++) {
		struct ct_ns *ns = atomic_load(&t->ns[i]);
		if (ns) {
			atomic_store(&t->ns[i], NULL);
			ns_free_now(ns);
		}
	}
}

void ct_ns_put_n(struct ct_ns *ns, uint64_t n)
{
	if (atomic_fetch_sub_explicit(&ns->refs, n, memory_order_acq_rel) == n)
		ns_free_now(ns);
}

void ct_ns_put(struct ct_ns *ns)
{
	ct_ns_put_n(ns, 1);
}

void ct_ns_count_add(struct ct_ns *ns, int64_t d)
{
	ct_ns_count_add_shard(ns, 0, d);
}

int64_t ct_ns_count(const struct ct_ns *ns)
{
	int64_t n = 0;

	for (int i = 0; i < CT_NS_SHARDS; i++)
		n += atomic_load_explicit(&((struct ct_ns *)ns)->shard[i].count,
					  memory_order_relaxed);
	return n;
}

int ct_ns_create(struct ct_table *t, uint16_t id, const struct ct_settings *s)
{
	struct ct_ns *ns;
	int err = 0;

	pthread_mutex_lock(&t->ns_lock);
	if (atomic_load(&t->ns[id])) {
		err = -EEXIST;
		goto out;
	}
	ns = ns_alloc(t, id, s ? s : ct_ns_settings(atomic_load(&t->ns[0])));
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
	ct_rcu_reg(t);
	t->rcu->update_call_rcu(&o->rcu, settings_free_cb);
	ct_rcu_unreg(t);
	return 0;
}

/* ---- teardown ---- */

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
		ct_ns_put(b->ns[i]);
	free(b);
	/* last: ct_table_destroy may free the table once this reads 0 */
	atomic_fetch_sub_explicit(&t->ns_reclaims, 1, memory_order_release);
}

struct victim_ctx {
	struct ct_thread *thr;
	ct_time_ns now;
	long removed;
	bool events;
	struct ct_ns *walking;   /* walk: the namespace being walked, whose
				  * count is lowered once at its end */
	int64_t walked;          /* its victims so far */
	bool flush;              /* a flush: the namespace lives on, so each
				  * victim is freed on its own */
	/* victims whose DESTROY is reported once no slab lock is held */
	struct ct_conn **defer;
	size_t n_defer, cap_defer;
};

static void report_one(struct victim_ctx *vc, struct ct_conn *c)
{
	struct ct_conn_info ci;

	ct_conn_lock(c);
	ct_conn_fill_info(vc->thr->t, c, &ci);
	ct_conn_unlock(c);
	ct_event_emit(vc->thr->t, CT_EV_DESTROY, CT_EVW_DESTROY,
		      vc->flush ? CT_DESTROY_FLUSH : CT_DESTROY_NS, vc->now, &ci);
}

/* Report the deferred DESTROYs.  The entries are unlinked but not freed:
 * that needs a grace period, and the caller is in a read-side section. */
static void report_deferred(struct victim_ctx *vc)
{
	for (size_t i = 0; i < vc->n_defer; i++)
		report_one(vc, vc->defer[i]);
	free(vc->defer);
	vc->defer = NULL;
	vc->n_defer = vc->cap_defer = 0;
}

/* Unlink one victim whose row lock the caller holds or not (@row NULL). */
static void victim_done(struct victim_ctx *vc, struct ct_conn *c)
{
	struct ct_thread *thr = vc->thr;
	struct ct_ns *ns = ct_slab_chunk_of(c)->slab->owner;

	ct_thread_count_add(thr, -1);
	if (ns == vc->walking)
		vc->walked++;        /* one atomic per namespace, not per entry */
	else
		ct_ns_count_add(ns, -1);
	CT_CTR_INC(thr, deleted);
	vc->removed++;
	if (vc->events) {
		/* the event handler must not run under the slab lock the walk
		 * holds: keep the entry and report it afterwards */
		if (vc->n_defer == vc->cap_defer) {
			size_t cap = vc->cap_defer ? vc->cap_defer * 2 : 1024;
			struct ct_conn **n = realloc(vc->defer, cap * sizeof(struct ct_conn *));
			if (n) {
				vc->defer = n;
				vc->cap_defer = cap;
			}
		}
		if (vc->n_defer < vc->cap_defer)
			vc->defer[vc->n_defer++] = c;
		else
			report_one(vc, c);   /* no memory: report it now */
	}
	if (vc->flush)
		ct_table_queue_free(thr, c);
}

/* Is @c in the chain of (locked) row @head? */
static bool row_holds(struct ct_row *head, const struct ct_conn *c)
{
	for (struct ct_row *r = head; r; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS; k++)
			if (ct_slot_conn(atomic_load_explicit(&r->slot[k],
							      memory_order_relaxed)) == c)
				return true;
	return false;
}

/*
 * Walk strategy: every live object of the namespaces' slabs.  The walk
 * reads an object's status (the slab's guard word, slab.h) and nothing
 * else until status says CONFIRMED: only then was the entry inserted
 * (htab.c sets it under the row lock, with release order, just before the
 * entry becomes visible), and only then can it not be recycled under our
 * feet (a published entry is freed after a grace period, and this walk
 * runs in a read-side section).  Other objects - free, in a magazine, a
 * creation that failed - may be rewritten by their owner at any time.
 *
 * An entry is claimed (DYING) only once it is found in its locked row,
 * so that a claim always ends with the entry leaving its row.  An entry
 * not confirmed yet is left to its inserter, which sees the namespace
 * DYING after inserting (the seq_cst pair with track.c).
 */
static void walk_one(void *obj, void *arg)
{
	struct victim_ctx *vc = arg;
	struct ct_conn *c = obj;
	uint32_t st = ct_conn_status(c);
	struct ct_table *t = vc->thr->t;
	struct ct_htab *h;
	struct ct_row *r;

	if (!(st & CT_ST_CONFIRMED) || (st & CT_ST_DYING))
		return;
	r = ct_table_lock_row(t, c->hash, &h);
	if (!row_holds(r, c) || ct_conn_test_and_set(c, CT_ST_DYING)) {
		ct_row_unlock(r);
		return;
	}
	ct_htab_remove_locked(r, c);
	ct_row_unlock(r);
	victim_done(vc, c);
}

/* Objects ahead of the current one whose rows the walk prefetches. */
#define WALK_AHEAD 8

/*
 * The objects sit one after the other in their chunks, but each one's row
 * is anywhere in the table: locking it is a cache miss per entry, and the
 * lock (a full barrier) keeps the next entry's miss from overlapping.  So
 * the walk reads the hash of the entry WALK_AHEAD objects further on (the
 * same acquire-then-read order as walk_one) and prefetches its row.
 */
static void walk_chunk(struct victim_ctx *vc, struct ct_slab_chunk *ch)
{
	struct ct_htab *h = atomic_load_explicit(&vc->thr->t->htab,
						 memory_order_acquire);
	uint8_t *base = (uint8_t *)ch + ch->first_off;
	uint32_t used = ch->used, size = ch->obj_size;

	for (uint32_t i = 0; i < used; i++) {
		if (i + WALK_AHEAD < used) {
			struct ct_conn *n = (struct ct_conn *)(base + (size_t)(i + WALK_AHEAD) * size);

			if ((ct_conn_status(n) & (CT_ST_CONFIRMED | CT_ST_DYING)) ==
			    CT_ST_CONFIRMED)
				__builtin_prefetch(ct_htab_row(h, n->hash), 1);
		}
		walk_one(base + (size_t)i * size, vc);
	}
}

static void walk_ns(struct victim_ctx *vc, struct ct_ns *ns)
{
	vc->walking = ns;
	vc->walked = 0;
	for (int i = 0; i < CT_N_CLASSES; i++) {
		struct ct_slab *s = &ns->slabs[i];

		/* the slab lock freezes the chunk list; objects carved after
		 * this are caught by their inserter (it sees DYING) */
		ct_spin_lock(&s->lock);
		for (struct ct_slab_chunk *ch = s->chunks; ch; ch = ch->next)
			walk_chunk(vc, ch);
		ct_spin_unlock(&s->lock);
	}
	if (vc->walked)
		ct_ns_count_add(ns, -vc->walked);
	vc->walking = NULL;
	vc->walked = 0;
}

/* Rows ahead of the current one whose victims the sweep prefetches. */
#define SWEEP_AHEAD 8

static bool zone_dying(const uint64_t *dying, const struct ct_conn *c)
{
	uint32_t z = ct_slab_chunk_of(c)->zone;

	return dying[z >> 6] & (1ull << (z & 63));
}

/*
 * Claiming a victim (DYING, a locked read-modify-write on the entry) is a
 * cache miss per victim, the entries being anywhere in memory, and under
 * the row lock nothing overlaps it.  So the sweep looks at the row
 * SWEEP_AHEAD rows on (the rows are read in order, so that one is already
 * on its way) and asks for its victims' status words in exclusive state.
 */
static void sweep_prefetch(struct ct_row *r, const uint64_t *dying)
{
	for (int k = 0; k < CT_ROW_SLOTS; k++) {
		uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_acquire);

		if (s && zone_dying(dying, ct_slot_conn(s)))
			__builtin_prefetch(&ct_slot_conn(s)->status, 1);
	}
}

/* Sweep strategy: every row once; a victim is known by its chunk's zone. */
static void sweep_rows(struct victim_ctx *vc, struct ct_htab *h,
		       const uint64_t *dying)
{
	for (uint64_t i = 0; i < h->n_rows; i++) {
		struct ct_row *head = &h->rows[i];
		struct ct_conn *victims[CT_ROW_SLOTS * 4];
		unsigned n;
		bool more, any = false;

		if (i + SWEEP_AHEAD < h->n_rows)
			sweep_prefetch(&h->rows[i + SWEEP_AHEAD], dying);
		/* look without the lock first: most rows have no victim
		 * (acquire: the chunk header of what a slot points to was
		 * written before the slot) */
		for (struct ct_row *r = head; r && !any; r = ct_row_next(r))
			for (int k = 0; k < CT_ROW_SLOTS; k++) {
				uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_acquire);
				uint32_t z;

				if (!s)
					continue;
				z = ct_slab_chunk_of(ct_slot_conn(s))->zone;
				if (dying[z >> 6] & (1ull << (z & 63))) {
					any = true;
					break;
				}
			}
		if (!any)
			continue;
		do {
			n = 0;
			more = false;
			ct_row_lock(head);
			for (struct ct_row *r = head; r && !more; r = ct_row_next(r))
				for (int k = 0; k < CT_ROW_SLOTS; k++) {
					uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_relaxed);
					struct ct_conn *c;
					uint32_t z;

					if (!s)
						continue;
					c = ct_slot_conn(s);
					z = ct_slab_chunk_of(c)->zone;
					if (!(dying[z >> 6] & (1ull << (z & 63))))
						continue;
					if (n == sizeof(victims) / sizeof(victims[0])) {
						more = true;
						break;
					}
					if (ct_conn_test_and_set(c, CT_ST_DYING))
						continue;
					atomic_store_explicit(&r->slot[k], 0, memory_order_release);
					victims[n++] = c;
				}
			ct_row_unlock(head);
			for (unsigned j = 0; j < n; j++)
				victim_done(vc, victims[j]);
		} while (more);
	}
}

long ct_ns_destroy(struct ct_thread *thr, const uint16_t *ids, unsigned k,
		   ct_time_ns now, unsigned flags)
{
	struct ct_table *t = thr->t;
	struct victim_ctx vc = { .thr = thr, .now = now, .events = ct_events_on(t) };
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
		sweep_rows(&vc, h, dying);
		if (f)
			sweep_rows(&vc, f, dying);
		pthread_mutex_unlock(&t->resize_lock);
		/* the sweep misses entries inserted in a moved row's future
		 * generation after it passed: the walk below catches any */
		free(dying);
	}
	for (unsigned i = 0; i < b->n; i++)
		walk_ns(&vc, b->ns[i]);
	report_deferred(&vc);
	thr->t->rcu->read_unlock();

	/* 3. unpublish: the ids are free for reuse at once */
	for (unsigned i = 0; i < b->n; i++)
		atomic_store_explicit(&t->ns[b->ns[i]->id], NULL, memory_order_release);
	pthread_mutex_unlock(&t->ns_lock);
	ct_thread_fold_count(thr);
	ct_thread_flush_frees(thr);

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

/*
 * ct_ns_flush_zone - remove every entry of namespace @zone, leaving the
 * namespace itself in place (conntrack -F for one zone).  Walks the
 * namespace's own slabs, so the cost follows its entries, not the table's
 * (Open vSwitch walks the whole table to flush a zone).  Entries inserted
 * while the walk runs may stay.  Returns the number removed.
 */
long ct_ns_flush_zone(struct ct_thread *thr, uint16_t zone, ct_time_ns now)
{
	struct ct_table *t = thr->t;
	struct victim_ctx vc = { .thr = thr, .now = now, .events = ct_events_on(t),
				 .flush = true };
	struct ct_ns *ns;

	t->rcu->read_lock();
	ns = ct_ns_get(t, zone);
	if (ns)
		walk_ns(&vc, ns);
	report_deferred(&vc);
	t->rcu->read_unlock();
	ct_thread_flush_frees(thr);
	ct_thread_fold_count(thr);
	return vc.removed;
}
