/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state.h - the state every stage shares: struct ct_table, ct_thread and
 * ct_ns, in one header of their own (private).
 *
 * In the manner of Lua's lstate.h: the table, a thread's handle and a
 * namespace are read and written by every stage above base/ - the
 * table's rows and reclaim, the tracker, the collector, teardown - and if
 * each stage declared the part it owns, stages would include each other
 * (before this header, table_impl.h declared five files' private API in
 * one list, and table.c, gc.c, ns.c and stats.c called each other in a
 * circle).  Here the structures are defined once, with the few inline
 * accessors that are a field read (ct_ns_get, CT_CTR_INC...); what is done
 * with them lives in the stage that does it, each with its own header.
 * The generation of rows and the wheel are pointers to types this header
 * does not know (table/htab.h, table/wheel.h): nothing here depends on a
 * stage above base/.
 *
 * Locking rules are stated at each structure; the lock order, once for
 * the whole library, at struct ct_table.
 */
#ifndef CT_STATE_H
#define CT_STATE_H

#include <netinet/in.h>   /* IPPROTO_TCP (issue 26) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/call-rcu.h>
#include <urcu/flavor.h>
#include <urcu/list.h>

#include "base/conn.h"
#include "base/hash.h"
#include "base/ring.h"
#include "base/slab.h"
#include "ctrack/events.h"
#include "ctrack/gc.h"
#include "ctrack/ns.h"
#include "ctrack/stats.h"
#include "ctrack/table.h"

struct ct_htab;      /* one generation of rows (table/htab.h) */
struct ct_wheel;     /* the wheel of due handles (table/wheel.h) */

#define CT_MAX_ZONES 65536
/* object size classes: core + priv (0..64) + extensions (0..96: acct,
 * tstamp, labels, TCP flags and NAT's 24) + an IPv6 key's tail (0 or 24) + an IPv6 NAT reply's
 * (0 or 24), step 8; class i holds objects of sizeof(struct ct_conn) +
 * 8 * i bytes (ct_conn_class, table/conn_key.h) */
#define CT_N_CLASSES ((int)(64 + 96 + 2 * CT_CONN_V6_TAIL) / 8 + 1)

/* Counters a thread keeps to itself (summed on read). */
struct ct_counters {
	uint64_t found, invalid, insert, insert_failed, drop, early_drop;
	uint64_t error, search_restart, clash_resolve, chaintoolong;
	uint64_t packets, untracked, ignored, related, expired, deleted;
	uint64_t nat_exhausted;
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
					    * drops to 0 (ct_reclaim_ns_put);
					    * after the shards, off the first
					    * line */
	struct ct_slab slabs[CT_N_CLASSES];
};

/* Entries waiting for a grace period, freed together by one call_rcu
 * (table/reclaim.h). */
#define CT_FREE_BATCH 64

struct ct_free_batch {
	struct rcu_head rcu;
	unsigned n;
	struct ct_conn *chain;   /* entries queued when no batch could be
				  * allocated, linked through their (no
				  * longer read) expires word */
	struct ct_conn *conns[CT_FREE_BATCH];
};

/*
 * A thread attached to a table (ct_thread_attach).  Everything but the
 * list node is written by its owner only; other threads read the
 * counters and the count delta (relaxed atomics, CT_CTR_ADD), and the
 * collector empties the ring (base/ring.h).
 */
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
	/* the two-step first packet's unconfirmed entry (track/pending.c),
	 * made on first use; owner only */
	struct ct_pending *pend;
	/* handles for the collector's wheel (table/due.h queues them); last,
	 * so that ct_thread_attach can leave the buffer's megabyte untouched */
	struct ct_ring ring;
};

/*
 * The table.
 *
 * Lock order, for the whole library: a lock on the right is taken while
 * the one on its left is held, never the other way round.
 *
 *   gc_lock -> thr_lock                    the collector empties every
 *                                          thread's ring
 *   gc_lock -> resize_lock (try)           the collector helps a resize
 *   gc_lock -> row lock -> entry (try)     the collector's visits
 *   resize_lock -> row lock -> next row    migration: an old row, then a
 *                                          row of the next generation
 *   resize_lock -> row lock                flush, a teardown's sweep
 *   resize_lock -> entry lock              dump (no row lock held)
 *   ns_lock -> resize_lock                 a teardown's sweep
 *   ns_lock -> slab lock -> row lock       a teardown's walk of its slabs
 *   entry lock -> row lock                 unlinking the entry one holds
 *   row lock -> overflow pool lock         an insert taking an overflow
 *                                          row (table/htab.c)
 *   slab lock -> arena lock                a slab taking a chunk
 *
 *  - A packet thread takes gc_lock only with a trylock while it tracks
 *    (emptying its own ring, table/due.c) and waits for it only in
 *    ct_thread_detach; it takes resize_lock only with a trylock (helping
 *    a resize), and so does the collector.  The collector does not hold
 *    resize_lock while it visits rows: it stops a slice when the
 *    generation it walks is retired (expire/gc.c, gc_yield).
 *  - Under a row lock, no entry is allocated or freed, no event is
 *    emitted and nothing calls back into the caller; the only memory
 *    taken is the table's own (an overflow row from its generation's
 *    pool, which maps a block when empty; a malloc'd batch for the
 *    overflow rows a visit empties).  Events are delivered after every
 *    lock is released.
 *  - thr_lock guards the list of threads; ns_lock serialises namespace
 *    creation, teardown and settings changes; resize_lock pauses
 *    migration (never an insert), so an iteration over the rows sees each
 *    entry exactly once.
 */
struct ct_table {
	struct ct_table_config cfg;
	const struct rcu_flavor_struct *rcu;
	struct ct_hash_key key;
	_Atomic(struct ct_htab *) htab;     /* current generation */
	_Atomic uint64_t n_rows;            /* its rows, for readers outside
					     * any read-side section */
	pthread_mutex_t resize_lock;        /* held while rows are iterated
					     * (dump, flush, a teardown's
					     * sweep) or migrated */
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
					     * the burst's prefetch (track/) */
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
	/* the wheel of due rows (table/wheel.h): wheel_on while the policy
	 * is CT_GC_LOCK_WHEEL (read by packet threads); wheel_reseed set by
	 * whoever made the wheel incomplete (a full ring, the policy
	 * switched on; a resize is seen by the generation the wheel was
	 * seeded for); the wheel itself under gc_lock.  The two flags,
	 * which packet threads read, keep a line apart from the collector's
	 * fields above (padding: the table is not allocated 64-aligned) */
	/* NAT (nat/nat_table.c), made by the first NAT confirm: the source
	 * index and the port map.  nat_forget is called with no lock held
	 * for an entry with a second slot as it leaves the table (table/
	 * member.h, ct_table_unlink_second), nat_free by ct_table_destroy:
	 * the table calls NAT through them without knowing it (layers) */
	_Atomic(void *) nat;
	void (*_Atomic nat_forget)(struct ct_table *t, struct ct_conn *c);
	void (*_Atomic nat_free)(struct ct_table *t);
	char pad_wheel0[64];
	_Atomic bool wheel_on;
	_Atomic bool wheel_reseed;
	char pad_wheel1[64];
	struct ct_wheel *wheel;
};

/* ---- accessors: a field read or a one-line update ---- */

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

/* The namespace of @zone, or NULL (read side held, or ns_lock). */
static inline struct ct_ns *ct_ns_get(const struct ct_table *t, uint16_t zone)
{
	return atomic_load_explicit(&t->ns[zone], memory_order_acquire);
}

/* @ns's settings (read side held: a replaced copy is freed after a grace
 * period). */
static inline struct ct_settings *ct_ns_settings(const struct ct_ns *ns)
{
	return atomic_load_explicit(&((struct ct_ns *)ns)->settings,
				    memory_order_acquire);
}

/* Add @d to @ns's entry count: in shard @shard (a packet thread's
 * ns_shard; 0 for the rare callers without one). */
static inline void ct_ns_count_add_shard(struct ct_ns *ns, unsigned shard, int64_t d)
{
	atomic_fetch_add_explicit(&ns->shard[shard].count, d, memory_order_relaxed);
}

/* The same in shard 0, for callers outside the packet path (flushes). */
static inline void ct_ns_count_add(struct ct_ns *ns, int64_t d)
{
	ct_ns_count_add_shard(ns, 0, d);
}

/* @ns's entry count: the sum of its shards (CT_NS_SHARDS loads; it may
 * read -1 for a moment, an entry leaving before its inserter counted it). */
static inline int64_t ct_ns_count(const struct ct_ns *ns)
{
	int64_t n = 0;

	for (int i = 0; i < CT_NS_SHARDS; i++)
		n += atomic_load_explicit(&((struct ct_ns *)ns)->shard[i].count,
					  memory_order_relaxed);
	return n;
}

static inline void ct_read_lock(struct ct_thread *thr)
{
	thr->t->rcu->read_lock();
}

static inline void ct_read_unlock(struct ct_thread *thr)
{
	thr->t->rcu->read_unlock();
}

/* The extensions an entry created under settings @s carries. */
static inline unsigned ct_settings_ext(const struct ct_table *t, const struct ct_settings *s)
{
	return (s->acct ? CT_EXT_ACCT : 0) | (s->timestamp ? CT_EXT_TSTAMP : 0) |
	       (t->cfg.labels ? CT_EXT_LABELS : 0);
}

/* issue 26: ... of protocol @l4 - TCP entries of a table that keeps TCP
 * flags have CT_EXT_TCPF too (not in ct_settings_ext, so that a packet
 * that creates an entry pays one predictable branch for it). */
static inline unsigned ct_settings_ext_l4(const struct ct_table *t,
					  const struct ct_settings *s, uint8_t l4)
{
	unsigned ext = ct_settings_ext(t, s);

	if (__builtin_expect(t->cfg.tcp_flags, 0) && l4 == IPPROTO_TCP)
		ext |= CT_EXT_TCPF;
	return ext;
}

#endif /* CT_STATE_H */
