/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * table.c - the table as a whole: creation, threads, membership of
 * entries in rows (insert, unlink, find across a resize), deferred
 * reclaim, online resize, and the read-only views (dump, lookup).
 *
 * Online resize follows the idea of Redis' incremental rehash, made safe
 * for lock-free readers: a resize allocates the next generation and hangs
 * it on the current one (htab->future); rows are then migrated one at a
 * time, each under its lock, by inserting threads (a few rows per insert),
 * by the collector and by ct_table_resize_step().  An entry is stored in
 * the new generation before it is cleared from the old one, and a reader
 * that finds nothing in the old generation looks in the future one, so
 * every live entry is always found.  Writers that meet a row marked MOVED
 * go to the future generation.  When every row has moved, the future
 * becomes current and the old generation is freed after a grace period.
 * A reader that still holds an old generation follows the chain of
 * futures, all of which stay allocated until its read section ends.  No
 * writer ever waits for more than one row's migration.
 *
 * Growth.  A resize makes the table resize_growth_pct (default 125%) of
 * its rows, not twice: rows are found by a multiply-shift of the hash
 * (ct_row_index), so their number need not be a power of two, and at the
 * default 75% threshold the load stays between 60% and 75%, where rows
 * cost 14-18 bytes per entry instead of the 17-34 of a doubling.  The
 * price is paid while the table grows: an entry is migrated about
 * g / (g - 1) = 5 times on the way to any size instead of about twice, so
 * migration moves an old row's entries in batches, one lock hold per
 * target row (migrate_batch), reading no tuple.
 *
 * Iterations over rows (dump, flush, the collector, namespace sweeps) hold
 * resize_lock, which pauses migration (never inserts), so they see each
 * entry exactly once.
 *
 * Deferred reclaim: an unlinked entry goes into its thread's free batch;
 * a full batch (or the end of a call) is handed to call_rcu as one
 * callback, so a grace period is paid per 64 entries, not per entry.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "base/rcu.h"
#include "table/table_impl.h"

/* Threads registered with each flavour, so attaching to two tables of the
 * same flavour registers once (liburcu asserts on double registration). */
static _Thread_local unsigned rcu_regs[2];

void ct_rcu_reg(struct ct_table *t)
{
	if (rcu_regs[t->cfg.rcu]++ == 0)
		t->rcu->register_thread();
}

void ct_rcu_unreg(struct ct_table *t)
{
	if (--rcu_regs[t->cfg.rcu] == 0)
		t->rcu->unregister_thread();
}

void ct_table_config_default(struct ct_table_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	ct_settings_default(&cfg->settings);
	cfg->rcu = CT_RCU_MEMB;
	cfg->max_chain = 64;
	cfg->resize_load_pct = 75;
	cfg->resize_growth_pct = CT_GROWTH_PCT_DEFAULT;
}

/* Rows: at least 64 and a multiple of 64 (whole collector groups). */
static uint64_t rows_round(uint64_t v)
{
	if (v < CT_GROUP_ROWS)
		return CT_GROUP_ROWS;
	if (v > CT_ROWS_MAX)
		return CT_ROWS_MAX;
	return (v + CT_GROUP_ROWS - 1) / CT_GROUP_ROWS * CT_GROUP_ROWS;
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
	t->htab = ct_htab_new(rows_round(cfg->settings.buckets ? cfg->settings.buckets : 1024));
	if (!t->htab)
		goto nomem;
	atomic_init(&t->n_rows, atomic_load(&t->htab)->n_rows);
	if (ct_ns_init_zero(t) < 0)
		goto nomem;
	ct_gc_init(t);
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
	ct_rcu_reg(t);
	do
		t->rcu->barrier();
	while (atomic_load_explicit(&t->ns_reclaims, memory_order_acquire));
	ct_rcu_unreg(t);
	h = atomic_load(&t->htab);
	if (h) {
		struct ct_htab *f = atomic_load(&h->future);
		ct_htab_free(f);
		ct_htab_free(h);
	}
	if (t->ns)
		ct_ns_free_all(t);
	free(t->ns);
	ct_wheel_free(&t->wheel);
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

struct ct_thread *ct_thread_attach(struct ct_table *t)
{
	struct ct_thread *thr = aligned_alloc(64, (sizeof(*thr) + 63) & ~(size_t)63);

	if (!thr)
		return NULL;
	/* all but the ring's buffer (1 MB, the struct's tail): its pages are
	 * touched only as handles are queued, not here */
	memset(thr, 0, offsetof(struct ct_thread, ring) + offsetof(struct ct_wheel_ring, buf));
	thr->t = t;
	thr->ns_shard = (unsigned)(atomic_fetch_add_explicit(&t->threads_attached, 1,
							     memory_order_relaxed) % CT_NS_SHARDS);
	ct_rcu_reg(t);
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
	ct_thread_flush_frees(thr);
	ct_thread_fold_count(thr);
	/* handles still on the ring go to the wheel (the collector's, so
	 * under its lock; not nested with thr_lock, which the collector
	 * takes inside gc_lock) */
	if (atomic_load_explicit(&thr->ring.tail, memory_order_relaxed) !=
	    atomic_load_explicit(&thr->ring.head, memory_order_relaxed)) {
		pthread_mutex_lock(&t->gc_lock);
		ct_wheel_ring_drain(&t->wheel, &thr->ring);
		pthread_mutex_unlock(&t->gc_lock);
	}
	pthread_mutex_lock(&t->thr_lock);
	cds_list_del(&thr->node);
	ct_counters_add(&t->dead_ctr, &thr->ctr);
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
	ct_rcu_unreg(t);
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

/* ---- entry layout ---- */

size_t ct_conn_size(const struct ct_table *t, uint8_t l4)
{
	return ct_conn_size_l3(t, CT_L3_IPV6, l4);
}

size_t ct_conn_size_l3(const struct ct_table *t, uint8_t l3, uint8_t l4)
{
	struct ct_settings s;
	unsigned ext;

	ct_table_get_settings(t, &s);
	ext = ct_settings_ext(t, &s);
	return ct_conn_obj_size(l3, ct_proto_find(l4)->priv_size, ext);
}

void ct_conn_fill_info(struct ct_table *t, struct ct_conn *c,
		       struct ct_conn_info *ci)
{
	const struct ct_proto *p = ct_proto_by_index(c->proto);
	struct ct_ext_acct *a = ct_conn_acct(c);
	struct ct_ext_tstamp *ts = ct_conn_tstamp(c);
	struct ct_ext_labels *lb = ct_conn_labels(c);

	memset(ci, 0, sizeof(*ci));
	ct_conn_tuple(c, &ci->orig);
	if (!ct_tuple_invert(&ci->orig, &ci->reply))
		ci->reply = ci->orig;
	/* like the kernel's ct id: a keyed hash of the address, so ids do
	 * not leak pointers */
	ci->id = ct_hash_u64(&t->key, (uint64_t)(uintptr_t)c) >> 32;
	ci->expires = c->expires;
	ci->status = ct_conn_status(c);
	ci->mark = c->mark;
	ci->l4state = c->l4state;
	ci->state_name = p->state_name ? p->state_name(c->l4state) : NULL;
	if (a) {
		memcpy(ci->packets, a->packets, sizeof(ci->packets));
		memcpy(ci->bytes, a->bytes, sizeof(ci->bytes));
	}
	if (ts) {
		ci->first_seen = ts->first_ns;
		ci->last_seen = ts->last_ns;
	}
	if (lb)
		memcpy(ci->labels, lb->bits, sizeof(ci->labels));
}

/* ---- deferred reclaim ---- */

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
		ct_ns_put_n(ns, m);
	}
	for (c = b->chain; c; c = next) {
		next = (struct ct_conn *)(uintptr_t)c->expires;
		ns = ct_slab_chunk_of(c)->slab->owner;
		ct_slab_free(c);
		ct_ns_put(ns);
	}
	free(b);
}

void ct_thread_flush_frees(struct ct_thread *thr)
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
 * for more, or for ct_thread_flush_frees() (collector passes, flushes,
 * teardown, detach).  If no batch can be allocated the entry is kept on the
 * thread's orphan list, linked through its expires word - nobody reads the
 * expiry of an unlinked, DYING entry - and leaves with the next batch.
 */
void ct_table_queue_free(struct ct_thread *thr, struct ct_conn *c)
{
	struct ct_ns *ns = ct_slab_chunk_of(c)->slab->owner;

	atomic_fetch_add_explicit(&ns->refs, 1, memory_order_relaxed);
	ct_table_queue_free_noref(thr, c);
}

void ct_table_queue_free_first(struct ct_thread *thr, struct ct_conn *c)
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

void ct_thread_fold_count(struct ct_thread *thr)
{
	if (thr->count_delta) {
		atomic_fetch_add_explicit(&thr->t->count, thr->count_delta,
					  memory_order_relaxed);
		__atomic_store_n(&thr->count_delta, 0, __ATOMIC_RELAXED);
	}
}

/* ---- membership in rows ---- */

static bool unlink_common(struct ct_thread *thr, struct ct_conn *c)
{
	struct ct_ns *ns = ct_slab_chunk_of(c)->slab->owner;
	struct ct_htab *h;
	struct ct_row *r = ct_table_lock_row(thr->t, c->hash, &h);
	bool found = ct_htab_remove_locked(r, c);

	ct_row_unlock(r);
	if (!found)
		return false;
	ct_thread_count_add(thr, -1);
	if (thr->count_delta <= -64)
		ct_thread_fold_count(thr);
	ct_ns_count_add_shard(ns, thr->ns_shard, -1);
	ct_table_queue_free(thr, c);
	return true;
}

bool ct_conn_unlink_locked(struct ct_thread *thr, struct ct_conn *c)
{
	if (ct_conn_test_and_set(c, CT_ST_DYING))
		return false;
	return unlink_common(thr, c);
}

bool ct_conn_unlink(struct ct_thread *thr, struct ct_conn *c)
{
	return ct_conn_unlink_locked(thr, c);
}

struct ct_conn *ct_table_find(struct ct_thread *thr, uint64_t hash,
			      const struct ct_tuple *key,
			      const struct ct_tuple *inv, enum ct_dir *dir)
{
	struct ct_htab *h = atomic_load_explicit(&thr->t->htab, memory_order_acquire);

	/* a reader that loaded an old generation follows the futures: every
	 * generation it can reach stays allocated until its read section ends */
	for (; h; h = atomic_load_explicit(&h->future, memory_order_acquire)) {
		struct ct_conn *c = ct_htab_find(h, hash, key, inv, dir);
		if (c)
			return c;
	}
	return NULL;
}

bool ct_wheel_ring_self_drain(struct ct_thread *thr)
{
	struct ct_table *t = thr->t;

	struct ct_wheel *w = &t->wheel;
	bool ok;

	if (pthread_mutex_trylock(&t->gc_lock) != 0)
		return false;
	/* a wheel no step has set up yet (generation 0) has no rows to
	 * name; one whose seeding walk is under way takes handles as the
	 * collector's yields give it (gc.c), duplicates of what the walk
	 * queues being stale handles like any other - refusing them asked
	 * for the walk to start over; nor may a wheel that nobody empties
	 * grow past its bound */
	ok = w->gen && w->handles <= CT_WHEEL_PER_ROW * w->n_rows + CT_WHEEL_FLOOR;
	if (ok)
		ct_wheel_ring_drain(w, &thr->ring);
	pthread_mutex_unlock(&t->gc_lock);
	return ok;
}

void ct_wheel_ring_full(struct ct_thread *thr, uint32_t key, uint32_t gen, uint64_t due)
{
	if (!(ct_wheel_ring_self_drain(thr) &&
	      ct_wheel_ring_put_slot(&thr->ring, key, gen, due)))
		atomic_store_explicit(&thr->t->wheel_reseed, true, memory_order_seq_cst);
}

void ct_conn_due_lowered(struct ct_thread *thr, struct ct_conn *c, ct_time_ns now)
{
	struct ct_table *t = thr->t;
	struct ct_htab *h = atomic_load_explicit(&t->htab, memory_order_acquire);
	struct ct_htab *f = atomic_load_explicit(&h->future, memory_order_acquire);
	uint64_t exp, idx;

	/* the store of c->expires must be ordered before the loads of the
	 * bounds (gc.c explains the pairing) */
	atomic_thread_fence(memory_order_seq_cst);
	exp = __atomic_load_n(&c->expires, __ATOMIC_RELAXED);
	idx = ct_row_index(c->hash, h->n_rows);
	ct_htab_lower_due(h, idx, exp);
	if (f)
		ct_htab_lower_due(f, ct_row_index(c->hash, f->n_rows), exp);
	if (!atomic_load_explicit(&t->wheel_on, memory_order_relaxed))
		return;
	/* A handle whether or not a bound was lowered - slot visits leave
	 * row bounds low, so the row's last handle may be long gone
	 * (wheel.h) - but a group handle, and none when the group's mark
	 * shows one queued at or before @exp (htab.h: group-handle marks),
	 * which a connection with data in flight finds at nearly every
	 * segment.  The mark is stored before the handle is queued.  While
	 * a resize runs, a row handle and no mark: a handle is a hash, one
	 * for either generation will do (and the resize's end seeds the
	 * wheel again anyway). */
	if (!f && ct_hmark_fits(exp, now)) {
		uint64_t grp = idx / CT_GROUP_ROWS;

		if (ct_group_hmark_covers(h, grp, exp, now))
			return;
		atomic_store_explicit(ct_group_hmark(h, grp), ct_hmark_enc(exp),
				      memory_order_seq_cst);
		ct_wheel_note_slot(thr, (uint32_t)c->hash, CT_WRING_GROUP, exp);
		return;
	}
	ct_wheel_note_slot(thr, (uint32_t)c->hash, 0, exp);
}

/* ---- online resize ---- */

static void old_htab_free_cb(struct rcu_head *head)
{
	ct_htab_free(caa_container_of(head, struct ct_htab, rcu));
}

/* Prefetch the entries of row @r (without its lock: a stale pointer is
 * only a wasted prefetch, which never faults): migrate_row reads each
 * one's hash, a cache miss per entry otherwise, taken one at a time under
 * the row locks. */
static void prefetch_row_entries(const struct ct_row *r)
{
	for (int k = 0; k < CT_ROW_SLOTS; k++) {
		uint64_t s = atomic_load_explicit(&((struct ct_row *)r)->slot[k],
						  memory_order_relaxed);
		if (s)
			__builtin_prefetch(&ct_slot_conn(s)->hash);
	}
}

/* Entries a migration carries at a time (one old row has 4.5 on average). */
#define MIG_BATCH 16

/*
 * Store @n entries (slot values @slot, rows @idx in @f, expiries @exp)
 * in @f, each target row under one hold of its lock: an old row's entries
 * go to two or three neighbouring rows (ct_row_index is monotone), so this
 * takes a row lock and lowers the due bounds about twice per old row
 * rather than once per entry.  Returns false when out of memory (the
 * entries stored so far stay stored, and h->mig_partial says so).
 */
static bool migrate_batch(struct ct_htab *h, struct ct_htab *f,
			  const uint64_t *slot, uint64_t *idx, const uint64_t *exp,
			  unsigned n)
{
	bool ok = true;

	for (unsigned a = 0; a < n && ok; a++) {
		uint64_t row = idx[a], due = CT_DUE_NEVER;
		struct ct_row *nr;
		unsigned empty;

		if (row == UINT64_MAX)
			continue;
		nr = &f->rows[row];
		ct_row_lock(nr);
		/* the head's free slots, read once (slots change only under
		 * the lock we hold); the chain only once the head is full */
		empty = h->mig_partial ? 0 : ct_row_empty(nr);
		for (unsigned b = a; b < n; b++) {
			if (idx[b] != row)
				continue;
			if (empty) {
				atomic_store_explicit(&nr->slot[__builtin_ctz(empty)],
						      slot[b], memory_order_release);
				empty &= empty - 1;
			} else if (!ct_htab_place_locked(f, nr, slot[b], h->mig_partial)) {
				h->mig_partial = true;
				ok = false;
				break;
			}
			idx[b] = UINT64_MAX;
			if (exp[b] < due)
				due = exp[b];
		}
		/* the order of an insert: row, sub, unlock, group (gc.c) */
		ct_due_lower(&nr->due_inv, due);
		ct_due_lower(&f->sub_due_inv[row / CT_SUB_ROWS], due);
		ct_row_unlock(nr);
		ct_due_lower(&f->group_due_inv[row / CT_GROUP_ROWS], due);
	}
	return ok;
}

/* Move every entry of old row @i into generation @f.  Caller holds
 * resize_lock.  Returns false when out of memory (row left in place). */
static bool migrate_row(struct ct_table *t, struct ct_htab *h,
			struct ct_htab *f, uint64_t i)
{
	struct ct_row *head = &h->rows[i];
	uint64_t slot[MIG_BATCH], idx[MIG_BATCH], exp[MIG_BATCH];
	unsigned n = 0;
	bool ok = true;

	(void)t;
	ct_row_lock(head);
	if (ct_row_moved(head)) {
		ct_row_unlock(head);
		return true;
	}
	for (struct ct_row *r = head; r; r = ct_row_next(r)) {
		for (int k = 0; k < CT_ROW_SLOTS; k++) {
			uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_relaxed);
			struct ct_conn *c;

			if (!s)
				continue;
			c = ct_slot_conn(s);
			/* the slot bound stays behind: the new row's bounds
			 * are the collector's to set (htab.h) */
			slot[n] = s & ~CT_SLOT_BOUND;
			idx[n] = ct_row_index(c->hash, f->n_rows);
			/* read before c is published in f: c is live, and its
			 * writers hold its lock, not the row's; one who
			 * shortens it later lowers the bounds of both
			 * generations (ct_conn_due_lowered) */
			exp[n] = __atomic_load_n(&c->expires, __ATOMIC_RELAXED);
			if (++n == MIG_BATCH) {
				/* no chain limit and no clash check: the
				 * entries are members already, they only
				 * change rows */
				if (!migrate_batch(h, f, slot, idx, exp, n)) {
					ok = false;
					goto out;
				}
				n = 0;
			}
		}
	}
	if (n && !migrate_batch(h, f, slot, idx, exp, n)) {
		ok = false;
		goto out;
	}
	/* every entry is now in f: clear the old chain and mark it moved */
	for (struct ct_row *r = head; r; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS; k++)
			atomic_store_explicit(&r->slot[k], 0, memory_order_release);
	atomic_fetch_or_explicit(&head->next, CT_ROW_MOVED, memory_order_release);
out:
	ct_row_unlock(head);
	return ok;
}

bool ct_table_resize_step(struct ct_table *t, uint64_t rows)
{
	struct ct_htab *h = atomic_load_explicit(&t->htab, memory_order_acquire);
	struct ct_htab *f = atomic_load_explicit(&h->future, memory_order_acquire);

	if (!f)
		return false;
	if (pthread_mutex_trylock(&t->resize_lock) != 0)
		return true;
	/* re-check under the lock: another thread may have finished it */
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	f = atomic_load_explicit(&h->future, memory_order_acquire);
	if (!f) {
		pthread_mutex_unlock(&t->resize_lock);
		return false;
	}
	if (atomic_load_explicit(&h->mig_next, memory_order_relaxed) < h->n_rows)
		prefetch_row_entries(&h->rows[atomic_load_explicit(&h->mig_next,
								   memory_order_relaxed)]);
	while (rows--) {
		uint64_t i = atomic_load_explicit(&h->mig_next, memory_order_relaxed);
		if (i >= h->n_rows)
			break;
		/* the next row's entries arrive while this one moves */
		if (rows && i + 1 < h->n_rows)
			prefetch_row_entries(&h->rows[i + 1]);
		if (!migrate_row(t, h, f, i))
			break;
		atomic_store_explicit(&h->mig_next, i + 1, memory_order_relaxed);
	}
	if (atomic_load_explicit(&h->mig_next, memory_order_relaxed) >= h->n_rows) {
		atomic_store_explicit(&t->htab, f, memory_order_release);
		atomic_store_explicit(&t->n_rows, f->n_rows, memory_order_relaxed);
		atomic_fetch_add(&t->resizes, 1);
		pthread_mutex_unlock(&t->resize_lock);
		/* after unlocking: call_rcu wakes the reclaim thread, and a
		 * waker the scheduler preempts must not hold up the next
		 * resize meanwhile */
		t->rcu->update_call_rcu(&h->rcu, old_htab_free_cb);
		return false;
	}
	pthread_mutex_unlock(&t->resize_lock);
	return true;
}

void ct_table_maybe_grow(struct ct_table *t)
{
	struct ct_htab *h = atomic_load_explicit(&t->htab, memory_order_acquire);
	uint64_t cap = h->n_rows * CT_ROW_SLOTS;
	int64_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
	struct ct_htab *f, *expect = NULL;

	if (t->cfg.resize_load_pct > 100 || n <= 0 ||
	    (uint64_t)n * 100 <= cap * t->cfg.resize_load_pct)
		return;
	if (atomic_load_explicit(&h->future, memory_order_relaxed))
		return;
	if (pthread_mutex_trylock(&t->resize_lock) != 0)
		return;
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	if (atomic_load_explicit(&h->future, memory_order_relaxed) ||
	    (uint64_t)n * 100 <= h->n_rows * CT_ROW_SLOTS * t->cfg.resize_load_pct) {
		pthread_mutex_unlock(&t->resize_lock);
		return;
	}
	/* grow by the growth factor g; by more only while the entries would
	 * fill more than 2 / (1 + g) of the new threshold (with g = 1.25,
	 * 89%: a migration's worth of room).  Just past the threshold they
	 * fill 1/g of it (80%), so the normal resize grows by g once.  (A
	 * test of 1/g itself was true at every resize, for an entry count
	 * just past the old threshold is just past 1/g of the new one, and
	 * grew by g twice whenever rounding added no slack.)  At most to
	 * CT_ROWS_MAX. */
	{
		uint64_t g = t->cfg.resize_growth_pct, rows = h->n_rows;

		if (rows >= CT_ROWS_MAX) {
			pthread_mutex_unlock(&t->resize_lock);
			return;
		}
		do
			rows = rows_round(rows * g / 100);
		while (rows < CT_ROWS_MAX &&
		       (uint64_t)n * (100 + g) > 2 * rows * CT_ROW_SLOTS * t->cfg.resize_load_pct);
		f = ct_htab_new(rows);
	}
	if (f && !atomic_compare_exchange_strong(&h->future, &expect, f))
		ct_htab_free(f);
	pthread_mutex_unlock(&t->resize_lock);
}

/* ---- views ---- */

struct dump_ctx {
	struct ct_table *t;
	int zone;
	ct_dump_fn fn;
	void *arg;
	int ret;
};

static int dump_row(struct dump_ctx *d, struct ct_row *head)
{
	for (struct ct_row *r = head; r; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS; k++) {
			uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_acquire);
			struct ct_conn *c;
			struct ct_conn_info ci;

			if (!s)
				continue;
			c = ct_slot_conn(s);
			if (d->zone >= 0 && ct_conn_zone(c) != d->zone)
				continue;
			ct_conn_lock(c);
			if (ct_conn_status(c) & CT_ST_DYING) {
				ct_conn_unlock(c);
				continue;
			}
			ct_conn_fill_info(d->t, c, &ci);
			ct_conn_unlock(c);
			if ((d->ret = d->fn(&ci, d->arg)) != 0)
				return d->ret;
		}
	return 0;
}

int ct_table_dump(struct ct_thread *thr, int zone, ct_dump_fn fn, void *arg)
{
	struct ct_table *t = thr->t;
	struct dump_ctx d = { t, zone, fn, arg, 0 };
	struct ct_htab *h, *f;

	pthread_mutex_lock(&t->resize_lock);
	ct_read_lock(thr);
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	f = atomic_load_explicit(&h->future, memory_order_acquire);
	for (uint64_t i = 0; i < h->n_rows && !d.ret; i++)
		dump_row(&d, &h->rows[i]);
	for (uint64_t i = 0; f && i < f->n_rows && !d.ret; i++)
		dump_row(&d, &f->rows[i]);
	ct_read_unlock(thr);
	pthread_mutex_unlock(&t->resize_lock);
	return d.ret;
}

int ct_table_lookup(struct ct_thread *thr, const struct ct_tuple *tuple,
		    struct ct_conn_info *ci, enum ct_dir *dir)
{
	struct ct_tuple inv;
	struct ct_conn *c;
	enum ct_dir d;
	int found = 0;

	if (!ct_tuple_invert(tuple, &inv))
		inv = *tuple;
	ct_read_lock(thr);
	c = ct_table_find(thr, ct_hash_tuple(&thr->t->key, tuple), tuple, &inv, &d);
	if (c) {
		ct_conn_lock(c);
		if (!(ct_conn_status(c) & CT_ST_DYING)) {
			if (ci)
				ct_conn_fill_info(thr->t, c, ci);
			if (dir)
				*dir = d;
			found = 1;
		}
		ct_conn_unlock(c);
	}
	ct_read_unlock(thr);
	return found;
}

static int set_attr(struct ct_thread *thr, const struct ct_tuple *tuple,
		    uint32_t mark, uint32_t mask, const uint8_t *labels,
		    ct_time_ns now)
{
	struct ct_tuple inv;
	struct ct_conn *c;
	struct ct_conn_info ci;
	enum ct_dir d;
	uint32_t what = 0;
	int found = 0;

	if (!ct_tuple_invert(tuple, &inv))
		inv = *tuple;
	ct_read_lock(thr);
	c = ct_table_find(thr, ct_hash_tuple(&thr->t->key, tuple), tuple, &inv, &d);
	if (c) {
		ct_conn_lock(c);
		if (!(ct_conn_status(c) & CT_ST_DYING)) {
			found = 1;
			if (labels) {
				struct ct_ext_labels *lb = ct_conn_labels(c);
				if (!lb) {
					found = -ENOSPC;
				} else if (memcmp(lb->bits, labels, 16) != 0) {
					memcpy(lb->bits, labels, 16);
					what = CT_EVW_LABEL;
				}
			} else {
				uint32_t m = (c->mark & ~mask) | (mark & mask);
				if (m != c->mark) {
					c->mark = m;
					what = CT_EVW_MARK;
				}
			}
			if (what && ct_events_on(thr->t))
				ct_conn_fill_info(thr->t, c, &ci);
		}
		ct_conn_unlock(c);
		if (what && ct_events_on(thr->t))
			ct_event_emit(thr->t, CT_EV_UPDATE, what, CT_DESTROY_NONE, now, &ci);
	}
	ct_read_unlock(thr);
	return found;
}

int ct_table_set_mark(struct ct_thread *thr, const struct ct_tuple *tuple,
		      uint32_t mark, uint32_t mask, ct_time_ns now)
{
	return set_attr(thr, tuple, mark, mask, NULL, now);
}

int ct_table_set_labels(struct ct_thread *thr, const struct ct_tuple *tuple,
			const uint8_t labels[16], ct_time_ns now)
{
	return set_attr(thr, tuple, 0, 0, labels, now);
}

/* Flush: collect a row's victims under its lock, emit after.  The
 * overflow rows it empties leave the chain for reuse (htab.h), into
 * *@ovf, which the caller hands to call_rcu. */
static long flush_row(struct ct_thread *thr, struct ct_htab *h, struct ct_row *head,
		      int zone, ct_time_ns now, struct ct_ovf_retire **ovf)
{
	struct ct_conn *victims[CT_ROW_SLOTS * 16];
	unsigned n;
	long removed = 0;
	bool more;

again:
	n = 0;
	more = false;
	ct_row_lock(head);
	for (struct ct_row *r = head; r && !more; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS; k++) {
			uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_relaxed);
			struct ct_conn *c;

			if (!s)
				continue;
			c = ct_slot_conn(s);
			if (zone >= 0 && ct_conn_zone(c) != zone)
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
	if (!more && ct_row_next(head) && !ct_row_moved(head))
		ct_htab_ovf_unlink_empty(h, head, ovf, thr->t->rcu,
					 atomic_load_explicit(&thr->t->wheel_on, memory_order_relaxed));
	ct_row_unlock(head);
	for (unsigned i = 0; i < n; i++) {
		struct ct_conn *c = victims[i];
		struct ct_ns *ns = ct_slab_chunk_of(c)->slab->owner;

		if (ct_events_on(thr->t)) {
			struct ct_conn_info ci;
			ct_conn_lock(c);
			ct_conn_fill_info(thr->t, c, &ci);
			ct_conn_unlock(c);
			ct_event_emit(thr->t, CT_EV_DESTROY, CT_EVW_DESTROY,
				      CT_DESTROY_FLUSH, now, &ci);
		}
		ct_thread_count_add(thr, -1);
		ct_ns_count_add(ns, -1);
		CT_CTR_INC(thr, deleted);
		ct_table_queue_free(thr, c);
		removed++;
	}
	if (more)
		goto again;
	return removed;
}

long ct_table_flush(struct ct_thread *thr, int zone, ct_time_ns now)
{
	struct ct_table *t = thr->t;
	struct ct_htab *h, *f;
	struct ct_ovf_retire *ovf = NULL;
	long n = 0;

	/* one zone: its own slabs, at the cost of its own entries */
	if (zone >= 0)
		return zone < CT_MAX_ZONES ? ct_ns_flush_zone(thr, (uint16_t)zone, now) : 0;

	pthread_mutex_lock(&t->resize_lock);
	ct_read_lock(thr);
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	f = atomic_load_explicit(&h->future, memory_order_acquire);
	for (uint64_t i = 0; i < h->n_rows; i++)
		n += flush_row(thr, h, &h->rows[i], zone, now, &ovf);
	for (uint64_t i = 0; f && i < f->n_rows; i++)
		n += flush_row(thr, f, &f->rows[i], zone, now, &ovf);
	ct_ovf_retire_flush(&ovf, t->rcu);
	ct_read_unlock(thr);
	pthread_mutex_unlock(&t->resize_lock);
	ct_thread_flush_frees(thr);
	ct_thread_fold_count(thr);
	return n;
}

uint64_t ct_table_count(const struct ct_table *t)
{
	struct ct_table *tt = (struct ct_table *)t;
	int64_t n = atomic_load(&tt->count);
	struct ct_thread *thr;

	pthread_mutex_lock(&tt->thr_lock);
	cds_list_for_each_entry(thr, &tt->threads, node)
		n += __atomic_load_n(&thr->count_delta, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&tt->thr_lock);
	return n < 0 ? 0 : (uint64_t)n;
}

uint64_t ct_table_rows(const struct ct_table *t)
{
	/* not t->htab->n_rows: the caller holds no read-side section, and
	 * a resize may retire and free that generation meanwhile */
	return atomic_load_explicit(&((struct ct_table *)t)->n_rows,
				    memory_order_relaxed);
}

void ct_table_get_settings(const struct ct_table *ct, struct ct_settings *out)
{
	struct ct_table *t = (struct ct_table *)ct;

	/* zone 0's copy may be replaced (and freed after a grace period) by
	 * ct_ns_set_settings: copy it out under the lock that serialises
	 * replacements, so the caller needs no read-side section */
	pthread_mutex_lock(&t->ns_lock);
	*out = *ct_ns_settings(ct_ns_get(t, 0));
	pthread_mutex_unlock(&t->ns_lock);
}
