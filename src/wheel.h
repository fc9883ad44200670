/*
 * wheel.h - the collector's timer wheel of due rows (private).
 *
 * The scanning collector (gc.c) finds due rows by reading bounds: one
 * word per 64 idle rows, a line of sub bounds per due group, the eight
 * rows of a due sub.  When every pass has work - 10% of a million entries
 * falling due each second - most of that reading is spent on rows that
 * share a sub with a due one: 2.4 to 8 rows read per expired entry, and
 * ~3/4 of the pass's time spent finding, not removing.  The wheel finds
 * them instead: it holds handles (a row, the row's due bound) in time
 * buckets, and a pass takes the handles whose time has come and visits
 * only their rows.
 *
 * What a handle says.  Whoever lowers a row's bound to D, and whose store
 * is the one that takes effect (ct_due_lower returned true), queues a
 * handle (the row, D).  So for every row whose bound is D, a handle for
 * D is queued or on its way (a packet thread's ring, below).  A handle
 * found when its row's bound is later than its time is stale - the row
 * was collected, or its bound raised by the collector, which then queued
 * a handle for the new bound - and is dropped without locking the row.
 *
 * A packet thread names the row by the 32-bit hash of its entry (whose
 * row index, ct_row_index, is the row in any generation); the collector
 * by the row's index, tagged with the generation's number (ct_htab.gen).
 * The wheel is complete for one generation (ct_wheel.gen): a resize, after
 * which migration has lowered the new rows' bounds without queueing,
 * empties it and seeds it again for the new one, and a handle tagged for
 * another generation is dropped.  Nothing in a handle points at an
 * entry, so no entry's lifetime depends on the wheel.
 *
 * Buckets.  Four levels of 256 buckets, 8.4 ms, 2.1 s, 9.2 min and 39 h
 * wide (2^23, 2^31, 2^39, 2^47 ns), as the kernel's timer wheel, but
 * without its cascade: a handle in a coarse bucket is taken when the
 * bucket's start passes and queued again by its exact time, so it moves
 * down at most three times and is never taken late.  Level 0 spans 2.1 s,
 * so a row whose next expiry is seconds away (most of them, in a table
 * whose entries live seconds) moves once.  Handles beyond the top level's
 * 1.1 years wait in its last bucket.  Each bucket is a list of 1 KB
 * blocks of handles; blocks are reused, and freed with the table.
 *
 * Bounded.  Stale handles wait for their time, and a table that churns
 * (rows emptied and filled again, timeouts of seconds next to days) can
 * queue many per row before they come: more than CT_WHEEL_PER_ROW per row
 * (plus a floor) and the collector seeds the wheel again, which leaves one
 * per non-empty row.  Emptied, the wheel keeps at most CT_WHEEL_KEEP free
 * blocks.
 *
 * Who touches what.  The wheel (struct ct_wheel) belongs to the
 * collector: only a thread holding the table's gc_lock reads or writes
 * it.  Packet threads queue into their own ring (struct ct_wheel_ring,
 * one producer, one consumer, no lock, no atomic read-modify-write),
 * which the collector empties into the wheel at the start of every step.
 * A full ring drops the handle and sets the table's reseed flag (and
 * while it is set, nothing is queued: the walk will read those rows); so
 * does switching the policy on, and a new generation (a resize) makes the
 * collector reseed by itself (ct_wheel.gen).  Reseeding empties the wheel
 * and walks every row once (in slices), queueing each non-empty row's
 * bound: the wheel is exact again without ever having had to be.
 */
#ifndef CT_WHEEL_H
#define CT_WHEEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* a handle: the row's bound when it was queued, and the row: a hash of
 * one of its entries (gen 0: packet threads), or its index in generation
 * gen (the collector, which knows the row but not a hash) */
struct ct_wh {
	uint64_t due;
	uint32_t key;
	uint32_t gen;
};

#define CT_WHEEL_LEVELS 4
#define CT_WHEEL_BUCKETS 256
#define CT_WHEEL_LVL_BITS 8
#define CT_WHEEL_SHIFT0 23
#define CT_WHEEL_BLK ((1024 - 16) / sizeof(struct ct_wh))

#define CT_WHEEL_PER_ROW 4
#define CT_WHEEL_FLOOR 65536
#define CT_WHEEL_KEEP 64

struct ct_wheel_blk {
	struct ct_wheel_blk *next;
	uint32_t n;
	uint32_t spare;
	struct ct_wh h[CT_WHEEL_BLK];
};

struct ct_wheel {
	uint64_t base;            /* time (ns) up to which buckets are taken */
	uint32_t gen;             /* the generation it is (being) seeded for */
	bool seeded;              /* the wheel holds a handle for every row
				   * with a bound (else: a seeding walk) */
	uint64_t seed_cursor;     /* next row of the seeding walk */
	/* buckets[l][i]: handles whose time's level-l index is i mod 64 */
	struct ct_wheel_blk *b[CT_WHEEL_LEVELS][CT_WHEEL_BUCKETS];
	struct ct_wheel_blk *cur;     /* due within base's level-0 bucket,
				       * or found busy: looked at every step */
	struct ct_wheel_blk *pending; /* taken, not yet worked on */
	struct ct_wheel_blk *free;    /* blocks to reuse */
	uint64_t handles;             /* queued now (all lists) */
	uint64_t blocks;              /* allocated */
	uint64_t n_free;              /* on the free list */
	bool nomem;                   /* a block could not be allocated */
};

/* A packet thread's ring: one producer (the thread), one consumer (the
 * collector, under gc_lock). */
#define CT_WHEEL_RING 8192

struct ct_wheel_ring {
	_Atomic uint32_t tail;        /* next to write; owner only writes */
	uint32_t head_seen;           /* owner's copy of head */
	/* head on a line of its own (padding, not an alignment attribute:
	 * struct ct_thread stays 8-aligned, which the list macros that walk
	 * t->threads from its head rely on) */
	char pad0[56];
	_Atomic uint32_t head;        /* next to read; the collector writes */
	char pad1[60];
	struct ct_wh buf[CT_WHEEL_RING];
};

/*
 * ct_wheel_ring_put - queue (@hash of an entry of the row, @due) on the
 * owner's ring.  Returns
 * false when the ring is full (the caller sets the table's reseed flag).
 * Owner thread only; a few stores, no read-modify-write.
 */
static inline bool ct_wheel_ring_put(struct ct_wheel_ring *r, uint32_t hash,
				     uint64_t due)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	struct ct_wh *w;

	if (t - r->head_seen >= CT_WHEEL_RING) {
		r->head_seen = atomic_load_explicit(&r->head, memory_order_acquire);
		if (t - r->head_seen >= CT_WHEEL_RING)
			return false;
	}
	w = &r->buf[t % CT_WHEEL_RING];
	w->due = due;
	w->key = hash;
	w->gen = 0;
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return true;
}

/* Collector (gc_lock held): move what @r holds into @w (as hashes). */
void ct_wheel_ring_drain(struct ct_wheel *w, struct ct_wheel_ring *r);

/* Collector: empty @w (up to CT_WHEEL_KEEP blocks kept for reuse) and
 * start over at @now, unseeded, for generation @gen. */
void ct_wheel_reset(struct ct_wheel *w, uint64_t now, uint32_t gen);

/* Collector: free every block (the table's end). */
void ct_wheel_free(struct ct_wheel *w);

/* Collector: a block from the free list or malloc (NULL: w->nomem set). */
struct ct_wheel_blk *ct_wheel_blk_get(struct ct_wheel *w);

/* Collector: append (@key, @gen, @due) to list *@list (a new first block when
 * the first is full; the handle is dropped, and w->nomem set, when none
 * can be had: the collector then seeds the wheel again). */
static inline void ct_wheel_list_push(struct ct_wheel *w, struct ct_wheel_blk **list,
				      uint32_t key, uint32_t gen, uint64_t due)
{
	struct ct_wheel_blk *b = *list;

	if (__builtin_expect(!b || b->n == CT_WHEEL_BLK, 0)) {
		struct ct_wheel_blk *nb = ct_wheel_blk_get(w);

		if (!nb)
			return;
		nb->next = b;
		*list = b = nb;
	}
	b->h[b->n].due = due;
	b->h[b->n].key = key;
	b->h[b->n].gen = gen;
	b->n++;
	w->handles++;
}

void ct_wheel_push_slow(struct ct_wheel *w, uint32_t key, uint32_t gen,
			uint64_t due, bool now_ok);

/*
 * Collector: queue (@key, @gen, @due) (struct ct_wh).  A time at or before base goes to the
 * pending list when @now_ok (to be worked on in this step), else to cur
 * (the next step): a row found busy is not retried in a loop.  A time in
 * base's level-0 bucket, which is taken already, goes to cur too (looked
 * at every step); a later one to its bucket.  Inline for the two common
 * cases (cur and level 0), which the collector takes about twice per
 * expired entry.
 */
static inline void ct_wheel_push(struct ct_wheel *w, uint32_t key, uint32_t gen,
				 uint64_t due, bool now_ok)
{
	uint64_t x = due >> CT_WHEEL_SHIFT0, p = w->base >> CT_WHEEL_SHIFT0;

	if (due > w->base) {
		if (x == p) {
			ct_wheel_list_push(w, &w->cur, key, gen, due);
			return;
		}
		/* x > p */
		if (x - p < CT_WHEEL_BUCKETS) {
			ct_wheel_list_push(w, &w->b[0][x % CT_WHEEL_BUCKETS], key, gen, due);
			return;
		}
	}
	ct_wheel_push_slow(w, key, gen, due, now_ok);
}

/* Collector: take the buckets whose start is at or before @now, and cur,
 * onto the pending list; base becomes @now (if later). */
void ct_wheel_advance(struct ct_wheel *w, uint64_t now);

/* Collector: detach the pending list (the caller works through it and
 * gives back what it did not finish with ct_wheel_unpop). */
struct ct_wheel_blk *ct_wheel_take_pending(struct ct_wheel *w);
void ct_wheel_unpop(struct ct_wheel *w, struct ct_wheel_blk *list);

/* Collector: a block emptied by the caller, back to the free list. */
void ct_wheel_blk_done(struct ct_wheel *w, struct ct_wheel_blk *b);

/* Collector: a lower bound of the earliest time queued after base
 * (UINT64_MAX: nothing queued; base when something is pending or cur). */
uint64_t ct_wheel_next_due(const struct ct_wheel *w);

#endif /* CT_WHEEL_H */
