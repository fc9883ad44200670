/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * table_impl.h - the insides of struct ct_table, ct_thread and ct_ns.
 *
 * Shared by the core files (table.c, track.c, gc.c, ns.c, event.c,
 * stats.c).  Locking rules are stated at each structure.
 */
#ifndef CT_TABLE_IMPL_H
#define CT_TABLE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/call-rcu.h>
#include <urcu/flavor.h>
#include <urcu/list.h>

#include "base/conn.h"
#include "table/conn_key.h"
#include "ctrack/events.h"
#include "ctrack/ns.h"
#include "ctrack/gc.h"
#include "ctrack/stats.h"
#include "ctrack/table.h"
#include "base/hash.h"
#include "table/htab.h"
#include "proto/proto.h"
#include "base/slab.h"
#include "table/wheel.h"

#define CT_MAX_ZONES 65536
/* object size classes: core + priv (0..64) + extensions (0..64) + an
 * IPv6 key's tail (0 or 24), step 8; class i holds objects of
 * sizeof(struct ct_conn) + 8 * i bytes (ct_conn_class) */
#define CT_N_CLASSES ((int)(64 + 64 + CT_CONN_V6_TAIL) / 8 + 1)

/* Counters a thread keeps to itself (summed on read). */
struct ct_counters {
	uint64_t found, invalid, insert, insert_failed, drop, early_drop;
	uint64_t error, search_restart, clash_resolve, chaintoolong;
	uint64_t packets, untracked, ignored, related, expired, deleted;
	uint64_t invalid_by_reason[CT_PR_MAX];
};

/*
 * A namespace.  Published in t->ns[id] with rcu_assign; freed after a
 * grace period.  settings: replaced whole by ct_ns_set_settings (RCU).
 * count and counters: in per-thread shards.  slabs[]: each slab has its own lock.
 */
enum { CT_NS_ALIVE = 0, CT_NS_DYING = 1 };

/*
 * A namespace's entry count and counters, in CT_NS_SHARDS shards of a
 * cache line each: a thread adds to its own shard (ct_thread.ns_shard,
 * with CT_NS_ADD), so threads creating connections in one namespace, or
 * meeting a flood of invalid packets there, do not pass one line between
 * them at every packet (two threads made 1.2x the connections of one with
 * a shared count, 1.8x without), and readers sum the shards (exact: every
 * add is atomic).  The counters are those of struct ct_counters that a
 * namespace keeps (ct_ns_get_stats).
 */
#define CT_NS_SHARDS 16
struct ct_ns_shard {
	_Atomic int64_t count;             /* entries added less removed */
	_Atomic uint64_t insert, invalid, error, drop, early_drop, expired;
} __attribute__((aligned(64)));

#define CT_NS_ADD(thr, ns, field, val) \
	atomic_fetch_add_explicit(&(ns)->shard[(thr)->ns_shard].field, (val), \
				  memory_order_relaxed)

struct ct_ns {
	/* read by every packet of the namespace, written seldom: the first
	 * line, which nothing on the packet path writes */
	uint16_t id;
	_Atomic int state;                 /* CT_NS_ALIVE / CT_NS_DYING */
	uint64_t gen;                      /* unique per creation (magazines) */
	_Atomic(struct ct_settings *) settings;
	struct ct_table *table;
	struct ct_ns *next_dead;           /* teardown batch list */
	struct rcu_head rcu;
	struct ct_ns_shard shard[CT_NS_SHARDS];
	_Atomic uint64_t refs;             /* 1 while published, plus one per
					    * entry queued for freeing: the
					    * namespace's memory goes when it
					    * drops to 0 (ct_ns_put); after
					    * the shards, off the first line */
	struct ct_slab slabs[CT_N_CLASSES];
};

/* Entries waiting for a grace period, freed together by one call_rcu. */
#define CT_FREE_BATCH 64

/* Default resize growth (ct_table_config.resize_growth_pct): with the
 * default threshold of 75% the load stays between 60% and 75%, where rows
 * cost 14-18 bytes per entry (a doubling let it fall to 37.5%, 27 bytes)
 * and one row in six to ten carries an overflow row. */
#define CT_GROWTH_PCT_DEFAULT 125
struct ct_free_batch {
	struct rcu_head rcu;
	unsigned n;
	struct ct_conn *chain;   /* entries queued when no batch could be
				  * allocated, linked through their (no
				  * longer read) expires word */
	struct ct_conn *conns[CT_FREE_BATCH];
};

struct ct_thread {
	struct ct_table *t;
	struct cds_list_head node;         /* in t->threads, under t->thr_lock */
	struct ct_counters ctr;            /* written by the owner only, with
					    * CT_CTR_INC (read by others) */
	struct ct_free_batch *pending;     /* entries to free after a GP */
	struct ct_conn *orphans;           /* queued while malloc failed */
	int64_t count_delta;               /* not yet folded into t->count;
					    * ct_thread_count_add */
	struct ct_slab_mag mags[CT_N_CLASSES];
	unsigned ns_shard;                 /* its shard of each namespace's
					    * count (struct ct_ns_shard) */
	bool in_read_section;
	bool gc_running;                   /* this thread is inside gc_step */
	/* ~(earliest expiry this thread's packets gave an entry since the
	 * last ct_thread_take_next_due): zero means none; owner only */
	uint64_t due_inv_max;
	/* handles for the collector's wheel (wheel.h; ct_wheel_note,
	 * ct_wheel_note_slot); last, so that ct_thread_attach can leave
	 * the buffer's megabyte untouched */
	struct ct_wheel_ring ring;
};

struct ct_table {
	struct ct_table_config cfg;
	const struct rcu_flavor_struct *rcu;
	struct ct_hash_key key;
	_Atomic(struct ct_htab *) htab;     /* current generation */
	_Atomic uint64_t n_rows;            /* its rows, for readers outside
					     * any read-side section */
	pthread_mutex_t resize_lock;        /* held while rows are iterated
					     * (dump, flush, sweep, gc) or
					     * migrated */
	_Atomic int64_t count;              /* entries (folded thread deltas) */
	uint64_t max;                       /* settings.max, 0 = no limit;
					     * atomic access once shared */
	uint64_t max95;
	/* an insert found the table full and nothing to evict (the kernel's
	 * gc_work->early_drop): the collector then drops entries that may
	 * go early until the count is below max95, and clears it */
	_Atomic bool gc_early_drop;
	_Atomic(struct ct_ns *) *ns;        /* [CT_MAX_ZONES] */
	uint32_t ns_hi;                     /* every id ever published is
					     * below this (under ns_lock):
					     * the table's end walks no
					     * further than the ids in use */
	_Atomic uint64_t ns_gen;
	_Atomic unsigned ext_seen;          /* every extension some namespace's
					     * settings asked for (only grows):
					     * how far an entry may reach, for
					     * track.c's prefetch */
	pthread_mutex_t ns_lock;            /* serialises create/destroy */
	_Atomic uint64_t ns_reclaims;       /* teardown batches not yet freed
					     * (ct_table_destroy waits) */
	struct ct_arena arena;
	ct_event_fn ev_fn;
	void *ev_arg;
	pthread_mutex_t thr_lock;
	struct cds_list_head threads;
	_Atomic unsigned threads_attached; /* ever: each thread's ns_shard */
	struct ct_counters dead_ctr;        /* from detached threads */
	_Atomic uint64_t resizes;
	/* collector */
	struct ct_gc_policy gc;
	pthread_mutex_t gc_lock;            /* one collector at a time */
	uint64_t gc_cursor;                 /* next group to visit */
	_Atomic uint64_t gc_passes;
	_Atomic uint64_t gc_rows_locked;
	_Atomic uint64_t gc_wheel_seeds;
	pthread_t gc_thread;
	bool gc_thread_on;
	_Atomic bool gc_stop;
	ct_clock_fn gc_clock;
	void *gc_clock_arg;
	pthread_mutex_t gc_sleep_lock;
	pthread_cond_t gc_sleep_cond;
	/* the wheel of due rows (wheel.h): wheel_on while the policy is
	 * CT_GC_LOCK_WHEEL (read by packet threads); wheel_reseed set by
	 * whoever made the wheel incomplete (a full ring, the policy
	 * switched on; a resize is seen by the generation the wheel was
	 * seeded for); the wheel itself under gc_lock.  The two
	 * flags, which packet threads read, keep a line apart from the
	 * wheel, which the collector writes all the time (padding: the
	 * table is not allocated 64-aligned) */
	char pad_wheel0[64];
	_Atomic bool wheel_on;
	_Atomic bool wheel_reseed;
	char pad_wheel1[64];
	struct ct_wheel wheel;
};

/* ---- helpers shared by the core files ---- */

/* @thr's ring into the wheel, when gc_lock is free (table.c); it is full,
 * or half full and tried once per CT_WHEEL_RING_TRY handles.  Returns
 * whether it was emptied. */
bool ct_wheel_ring_self_drain(struct ct_thread *thr);

/* @thr's ring was full when it queued this handle: empty it and queue the
 * handle, or drop it and set the reseed flag (table.c).  Out of line, so
 * that ct_wheel_note_slot stays small enough to inline into the insert. */
void ct_wheel_ring_full(struct ct_thread *thr, uint32_t key, uint32_t gen, uint64_t due);

/*
 * ct_wheel_note_slot - @thr inserted an entry at ref @key of generation
 * @gen, expiring at @due, and wrote its slot bound: queue the slot handle
 * (wheel.h); with @gen 0, @key is a hash of an entry of the row (a row
 * handle, ct_wheel_note).  Every insert queues one, so a ring fills
 * whenever the collector lags by CT_WHEEL_RING inserts; the thread
 * empties its own ring into the wheel whenever gc_lock is free, trying
 * from half full on (one trylock per CT_WHEEL_RING_TRY inserts,
 * ~CT_WHEEL_RING / 2 short pushes), and only a lock held by others for
 * the whole second half makes it fall back to the reseed flag.  Release: a
 * collector that sees the flag sees the bound.  The caller has seen the
 * wheel on.
 */
static inline void ct_wheel_note_slot(struct ct_thread *thr, uint32_t key, uint32_t gen,
				      uint64_t due)
{
	struct ct_table *t = thr->t;

	/* A walk is due anyway: it will read this row's bounds, which we
	 * stored before this load (seq_cst both, and the collector clears
	 * the flag with a seq_cst exchange before its walk reads the rows).
	 * Nor is the flag written again while it is set: threads that
	 * create while no collector drains their rings would otherwise
	 * pass its line between them at every insert. */
	if (atomic_load_explicit(&t->wheel_reseed, memory_order_seq_cst))
		return;
	if (__builtin_expect(!ct_wheel_ring_put_slot(&thr->ring, key, gen, due), 0))
		ct_wheel_ring_full(thr, key, gen, due);
	else if (__builtin_expect(ct_wheel_ring_half(&thr->ring), 0))
		ct_wheel_ring_self_drain(thr);   /* a try: the collector empties it otherwise */
}

/*
 * ct_wheel_note - a row handle for the row of @hash at @due (a timeout
 * shortened, an entry past the slot handles' positions), if the wheel
 * is on.
 */
static inline void ct_wheel_note(struct ct_thread *thr, uint64_t hash, uint64_t due)
{
	if (atomic_load_explicit(&thr->t->wheel_on, memory_order_relaxed))
		ct_wheel_note_slot(thr, (uint32_t)hash, 0, due);
}

/*
 * A thread's counters and count delta have one writer, their owner, and
 * readers on other threads (ct_table_get_stats, ct_table_count) that load
 * them with relaxed atomics.  The owner updates them with a plain load and
 * a relaxed atomic store: no locked instruction (there is one writer), and
 * no torn or invented store for the readers either.
 */
#define CT_CTR_ADD(thr, field, v) \
	__atomic_store_n(&(thr)->ctr.field, (thr)->ctr.field + (v), __ATOMIC_RELAXED)
#define CT_CTR_INC(thr, field) CT_CTR_ADD(thr, field, 1)

static inline void ct_thread_count_add(struct ct_thread *thr, int64_t d)
{
	__atomic_store_n(&thr->count_delta, thr->count_delta + d, __ATOMIC_RELAXED);
}

static inline struct ct_ns *ct_ns_get(const struct ct_table *t, uint16_t zone)
{
	return atomic_load_explicit(&t->ns[zone], memory_order_acquire);
}

static inline struct ct_settings *ct_ns_settings(const struct ct_ns *ns)
{
	return atomic_load_explicit(&((struct ct_ns *)ns)->settings,
				    memory_order_acquire);
}

static inline void ct_read_lock(struct ct_thread *thr)
{
	thr->t->rcu->read_lock();
}

static inline void ct_read_unlock(struct ct_thread *thr)
{
	thr->t->rcu->read_unlock();
}

/*
 * ct_table_lock_row - lock the row that holds (or would hold) @hash,
 * following rows a resize has MOVED into the next generation.  Returns
 * the locked head row; *@hp is its generation.  Read side held.
 */
static inline struct ct_row *ct_table_lock_row(struct ct_table *t, uint64_t hash,
					       struct ct_htab **hp)
{
	struct ct_htab *h = atomic_load_explicit(&t->htab, memory_order_acquire);

	for (;;) {
		struct ct_row *r = ct_htab_row(h, hash);

		ct_row_lock(r);
		if (!ct_row_moved(r)) {
			*hp = h;
			return r;
		}
		ct_row_unlock(r);
		h = atomic_load_explicit(&h->future, memory_order_acquire);
	}
}

/* An entry's object size: core, private area, extensions, the rest of a
 * family-@l3 key (conn_key.h), rounded to 8 (inline: every creation asks). */
static inline size_t ct_conn_obj_size(uint8_t l3, uint8_t priv_size, unsigned ext)
{
	size_t sz = sizeof(struct ct_conn) + priv_size + ct_conn_key_extra(l3) +
		    ct_ext_size(ext);

	return (sz + 7) & ~(size_t)7;
}

/* The extensions an entry created under settings @s carries. */
static inline unsigned ct_settings_ext(const struct ct_table *t, const struct ct_settings *s)
{
	return (s->acct ? CT_EXT_ACCT : 0) | (s->timestamp ? CT_EXT_TSTAMP : 0) |
	       (t->cfg.labels ? CT_EXT_LABELS : 0);
}

/* The slab size class of an object of @size bytes (ct_conn_obj_size). */
static inline unsigned ct_conn_class(size_t size)
{
	return (unsigned)((size - sizeof(struct ct_conn)) / 8);
}

static inline struct ct_ext_acct *ct_conn_acct(struct ct_conn *c)
{
	return (c->ext & CT_EXT_ACCT)
		? (struct ct_ext_acct *)((char *)c + ct_conn_ext_off(c, CT_EXT_ACCT))
		: NULL;
}

static inline struct ct_ext_tstamp *ct_conn_tstamp(struct ct_conn *c)
{
	return (c->ext & CT_EXT_TSTAMP)
		? (struct ct_ext_tstamp *)((char *)c + ct_conn_ext_off(c, CT_EXT_TSTAMP))
		: NULL;
}

static inline struct ct_ext_labels *ct_conn_labels(struct ct_conn *c)
{
	return (c->ext & CT_EXT_LABELS)
		? (struct ct_ext_labels *)((char *)c + ct_conn_ext_off(c, CT_EXT_LABELS))
		: NULL;
}

/* table.c */
void ct_conn_fill_info(struct ct_table *t, struct ct_conn *c,
		       struct ct_conn_info *ci);
/* Unlink @c (whose entry lock the caller does NOT hold) if nobody else
 * did: sets DYING, clears its slot, queues it for freeing, adjusts counts.
 * Returns true if this call removed it. */
bool ct_conn_unlink(struct ct_thread *thr, struct ct_conn *c);
/* The same, for a caller that holds the entry's lock. */
bool ct_conn_unlink_locked(struct ct_thread *thr, struct ct_conn *c);
void ct_thread_flush_frees(struct ct_thread *thr);
/* ct_table_queue_free_noref's start of a batch (out of line: malloc). */
void ct_table_queue_free_first(struct ct_thread *thr, struct ct_conn *c);
/* Queue an unlinked entry to be freed after a grace period; it takes a
 * reference on the entry's namespace (dropped when the entry is freed). */
void ct_table_queue_free(struct ct_thread *thr, struct ct_conn *c);
/* The same for a caller that takes the namespace reference itself, later
 * but within the same read-side section as the unlink (the collector adds
 * a run's references at once, gc.c): until that section ends no grace
 * period can pass, so neither the entry's batch nor a teardown's
 * published reference can be dropped before the reference is there.
 * Inline: the collector calls it for every entry it removes. */
static inline void ct_table_queue_free_noref(struct ct_thread *thr, struct ct_conn *c)
{
	struct ct_free_batch *b = thr->pending;

	if (__builtin_expect(!b, 0)) {
		ct_table_queue_free_first(thr, c);
		return;
	}
	b->conns[b->n++] = c;
	if (b->n == CT_FREE_BATCH)
		ct_thread_flush_frees(thr);
}
/* Register / unregister the calling thread with the table's RCU flavour
 * (counted, so nesting is fine). */
void ct_rcu_reg(struct ct_table *t);
void ct_rcu_unreg(struct ct_table *t);
void ct_thread_fold_count(struct ct_thread *thr);
struct ct_conn *ct_table_find(struct ct_thread *thr, uint64_t hash,
			      const struct ct_tuple *key,
			      const struct ct_tuple *inv, enum ct_dir *dir);
/* Lower the due bounds of @c's row after its expiry got shorter. */
void ct_conn_due_lowered(struct ct_thread *thr, struct ct_conn *c, ct_time_ns now);
/* Help an ongoing resize: migrate up to @rows rows.  Returns true while
 * a resize is still in progress.  Call inside a read-side section. */
bool ct_table_resize_step(struct ct_table *t, uint64_t rows);
void ct_table_maybe_grow(struct ct_table *t);
/*
 * After an insert (inside a read-side section): help a resize under way
 * by migrating 8 rows of the current generation, or else start one if
 * the load is past the threshold (ct_table_maybe_grow's first test,
 * inline: every creation asks, and the answer is nearly always no).
 * Every insert helps, wherever its entry went: an insert that helped only
 * when its own row had not moved yet would help less and less as the
 * migration advanced, and a migration of R rows would take some
 * R/8 * ln(R) inserts instead of R/8, longer than the 1.25x growth
 * leaves room for (1.1 R entries between two thresholds).
 */
static inline void ct_table_after_insert(struct ct_table *t)
{
	struct ct_htab *h = atomic_load_explicit(&t->htab, memory_order_acquire);
	int64_t n;

	if (__builtin_expect(atomic_load_explicit(&h->future, memory_order_relaxed) != NULL, 0)) {
		ct_table_resize_step(t, 8);
		return;
	}
	n = atomic_load_explicit(&t->count, memory_order_relaxed);
	if (t->cfg.resize_load_pct > 100 || n <= 0 ||
	    (uint64_t)n * 100 <= h->n_rows * CT_ROW_SLOTS * t->cfg.resize_load_pct)
		return;
	ct_table_maybe_grow(t);
}

/* event.c */
void ct_event_emit(struct ct_table *t, enum ct_event_type type, uint32_t what,
		   enum ct_destroy_cause cause, ct_time_ns now,
		   const struct ct_conn_info *ci);
static inline bool ct_events_on(const struct ct_table *t)
{
	return t->ev_fn != NULL;
}

/* ns.c */
int ct_ns_init_zero(struct ct_table *t);
void ct_ns_free_all(struct ct_table *t);
/* Add @d to @ns's entry count: in shard @shard (a packet thread's
 * ns_shard; 0 for the rare callers without one). */
static inline void ct_ns_count_add_shard(struct ct_ns *ns, unsigned shard, int64_t d)
{
	atomic_fetch_add_explicit(&ns->shard[shard].count, d, memory_order_relaxed);
}
void ct_ns_count_add(struct ct_ns *ns, int64_t d);
/* @ns's entry count: the sum of its shards (CT_NS_SHARDS loads). */
int64_t ct_ns_count(const struct ct_ns *ns);
/* Remove every entry of one namespace, walking its slabs (ns.c). */
long ct_ns_flush_zone(struct ct_thread *thr, uint16_t zone, ct_time_ns now);
/* Drop a reference to @ns; the last one frees its memory. */
void ct_ns_put(struct ct_ns *ns);
void ct_ns_put_n(struct ct_ns *ns, uint64_t n);

/* stats.c */
void ct_counters_add(struct ct_counters *dst, const struct ct_counters *src);

/* gc.c */
void ct_gc_init(struct ct_table *t);
/* Decide whether an entry can be evicted early. */
bool ct_conn_can_early_drop(const struct ct_conn *c);

#endif /* CT_TABLE_IMPL_H */
