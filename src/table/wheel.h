/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wheel.h - the timer wheel of due entries, an index of the table by
 * expiry that writers feed and the collector (expire/) reads (private).
 *
 * The scanning collector (expire/scan.c) finds due rows by reading bounds: one
 * word per 64 idle rows, a line of sub bounds per due group, the eight
 * rows of a due sub, then every slot bound of a due row.  When every pass
 * has work - 10% of a million entries falling due each second - finding
 * costs more than removing.  The wheel finds the due entries instead: it
 * holds handles in time buckets, and a pass takes the handles whose time
 * has come and visits only what they name.
 *
 * Slot handles.  Every insert writes its slot's 16-bit bound (htab.h)
 * under the row lock it holds and queues a handle (the row, the slot's
 * position in the row's chain, the expiry).  The handle is valid while
 * the slot still holds an entry whose bound is the handle's unit.  A
 * handle whose slot holds a due entry has the row locked and the entry
 * removed - one slot read, no other slot of the row looked at, and no
 * bound read either: a due entry may go whichever handle finds it.  For
 * an entry that is not due the bound decides: a handle that is not the
 * slot's is dropped (without a lock in a head row; the entry left, or
 * its bound was rewritten and a handle queued for the new one), and the
 * slot's own, its entry refreshed, gets the new bound written and is
 * queued again by the new expiry.  So
 * for every slot with a bound, a handle for that bound is queued or on
 * its way, and a refresh costs nothing until the old time comes.
 *
 * Row handles name a whole row (position CT_WH_ROW), for what a slot
 * handle cannot: a shortened timeout while a resize runs (the writer
 * does not know its slot; it sets the row's dirty bit and queues a row
 * handle), slots past
 * CT_WH_MAX_POS of a long chain, and the seeding walk's rows whose slots
 * have no bound yet.  A row visit is the scan's (gc_row): it reads what
 * is due or unbounded, and queues a slot handle for every bound it
 * writes anew, a row handle for the chain's far slots.  Row bounds stay
 * lower bounds for the scan, though slot visits never raise them.
 *
 * Group handles (position CT_WH_GROUP) are what a shortened timeout
 * queues otherwise, at most one per group and visit (the group's mark,
 * htab.h, says when one is queued early enough): the visit reads the
 * group's dirty bits and visits every dirty row by its bound - at once
 * if the bound has come, else by a row handle at it.
 *
 * Positions must not move under a handle: with the wheel on, only an
 * empty tail of a chain's overflow rows leaves it (an empty row in the
 * middle is filled again by inserts, which take the first free slot).
 *
 * Handles are 8 bytes: a 32-bit time in units of 2^CT_WH_UNIT_SHIFT ns
 * (the slot bounds' unit) counted from the wheel's epoch, and a 32-bit
 * ref (row index in 27 bits - a table of more rows is scanned instead -
 * and position in 5).  A handle is taken at its unit's start, so a pass
 * at time T collects everything due by T; one taken before its entry is
 * due, within the unit, is queued for the next step without a lock.  The
 * epoch is 2^31 units (~26 days) before the wheel was last reset, and
 * the collector resets it once now is CT_WHEEL_EPOCH_RENEW units past
 * it, so times ~13 days ahead always fit; a time too far is queued at the
 * last one, taken early and queued again.  Handles name rows of one
 * generation (ct_wheel.gen): a resize empties the wheel and seeds it
 * again.  Nothing in a handle points at an entry, so no entry's lifetime
 * depends on the wheel.
 *
 * Buckets.  Three levels of 4,096 buckets, 8.4 ms, 34 s and 39 h wide
 * (2^23, 2^35, 2^47 ns), without the kernel's cascade: a handle in a
 * coarse bucket is taken when the bucket's start passes and queued again
 * by its time, so it moves down at most twice and is never taken late.
 * Level 0 spans 34 s, so the timeouts of seconds (UDP's 30 s among them)
 * are queued once.  A bit per bucket says which hold handles: the next
 * due time is a bit search, and taking an idle stretch skips empty ones.
 * Each bucket is a list of 1 KB blocks of handles; blocks are reused,
 * and freed with the table.
 *
 * Bounded.  Stale handles wait for their time; more than
 * CT_WHEEL_PER_ROW per row (plus a floor) and the collector seeds the
 * wheel again, which leaves one per slot.  Emptied, the wheel keeps at
 * most CT_WHEEL_KEEP free blocks.
 *
 * Who touches what.  The wheel (struct ct_wheel) belongs to whoever holds
 * the table's gc_lock.  Packet threads queue into their own ring (struct
 * ct_ring, base/ring.h: one producer, one consumer, no atomic
 * read-modify-write; 16-byte entries that carry the generation, 1 MB a
 * thread, its pages touched as they are used; table/due.h queues), which
 * the collector
 * empties into the wheel at the start of every step and at each of its
 * throttled yields (a long slice, such as the seeding walk of a 10M-row
 * table, ~300 ms, would otherwise let them overflow).  A thread whose
 * ring is full empties it into the wheel itself if gc_lock is free (a
 * trylock; CT_RING_SIZE short pushes, once per CT_RING_SIZE inserts
 * while the collector lags) - and tries from half full on, so that another
 * thread emptying its own ring at that moment, or the collector between
 * two yields, costs no handle.  Only if the lock stays held by others
 * while the ring's second half fills is the handle dropped and the
 * table's reseed flag set (while it is set nothing is queued); so does
 * switching the policy on.  Reseeding
 * empties the wheel and walks every row once (in slices), queueing a slot
 * handle per bounded slot and a row handle for the rest: the wheel is
 * exact again without ever having had to be.
 */
#ifndef CT_WHEEL_H
#define CT_WHEEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/ring.h"

/* a handle in the wheel: its time, in units of 2^CT_WH_UNIT_SHIFT ns
 * counted from the wheel's epoch, and what it names (CT_WH_REF) */
struct ct_wh {
	uint32_t t;
	uint32_t ref;
};

#define CT_WH_UNIT_SHIFT 20     /* = CT_SLOT_DUE_SHIFT (wheel.c checks) */

#define CT_WHEEL_LEVELS 3
#define CT_WHEEL_BUCKETS 4096
#define CT_WHEEL_LVL_BITS 12
#define CT_WHEEL_SHIFT0 23
#define CT_WHEEL_BLK ((1024 - 16) / sizeof(struct ct_wh))

/* a ref: row index | position << 27, position CT_WH_ROW naming the whole
 * row, CT_WH_GROUP the group of 64 rows that starts at the row,
 * 0..CT_WH_MAX_POS a slot of its chain (6 per row, head first) */
#define CT_WH_POS_SHIFT 27
#define CT_WH_ROW_MASK ((1u << CT_WH_POS_SHIFT) - 1)
#define CT_WH_ROW 31u
#define CT_WH_GROUP 30u
#define CT_WH_MAX_POS 29u

/* Whether a table of @n_rows rows can be named by refs (else the
 * collector scans it, and its inserts queue no slot handle). */
static inline bool ct_wheel_fits(uint64_t n_rows)
{
	return n_rows <= (uint64_t)CT_WH_ROW_MASK + 1;
}

/* the wheel starts over (a reseed) when now is this many units past its
 * epoch: handle times then still reach 2^30 units (~13 days) ahead */
#define CT_WHEEL_EPOCH_RENEW (3ull << 30)

#define CT_WHEEL_PER_ROW 12
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
	uint64_t epoch;           /* handle times count from this unit */
	uint32_t gen;             /* the generation it is (being) seeded for */
	uint64_t n_rows;          /* that generation's rows */
	bool seeded;              /* the wheel holds a handle for every row
				   * with a bound (else: a seeding walk) */
	uint64_t seed_cursor;     /* next row of the seeding walk */
	/* buckets[l][i]: handles whose time's level-l index is i mod 64 */
	struct ct_wheel_blk *b[CT_WHEEL_LEVELS][CT_WHEEL_BUCKETS];
	/* occ[l]: a bit per bucket of level l that holds a list; occ_sum[l]:
	 * a bit per word of occ[l] that is not 0 (an empty level is one
	 * test for ct_wheel_next_due) */
	uint64_t occ[CT_WHEEL_LEVELS][CT_WHEEL_BUCKETS / 64];
	uint64_t occ_sum[CT_WHEEL_LEVELS];
	struct ct_wheel_blk *cur;     /* due within base's level-0 bucket,
				       * or found busy: looked at every step */
	struct ct_wheel_blk *pending; /* taken, not yet worked on */
	struct ct_wheel_blk *free;    /* blocks to reuse */
	uint64_t handles;             /* queued now (all lists) */
	uint64_t blocks;              /* allocated */
	uint64_t n_free;              /* on the free list */
	bool nomem;                   /* a block could not be allocated */
};

/* Collector (gc_lock held): move what @r holds into @w, as refs into the
 * generation it is seeded for (a handle for another is dropped). */
void ct_wheel_ring_drain(struct ct_wheel *w, struct ct_ring *r);

/* A handle's time for @due (ns): its unit, from the epoch; a time before
 * the epoch is 0, one too far ahead the last (taken early and queued
 * again, wheel.h's top comment says why that stays rare). */
static inline uint32_t ct_wheel_t(const struct ct_wheel *w, uint64_t due)
{
	uint64_t u = due >> CT_WH_UNIT_SHIFT;

	if (u <= w->epoch)
		return 0;
	u -= w->epoch;
	return u > UINT32_MAX ? UINT32_MAX : (uint32_t)u;
}

/* The time (ns) a handle of time @t is taken at: its unit's first ns, so
 * never after the time it was queued for (a pass at that time collects
 * what is due at it); one taken before its entry is due is queued again
 * for the next step. */
static inline uint64_t ct_wheel_fire(const struct ct_wheel *w, uint32_t t)
{
	return (w->epoch + t) << CT_WH_UNIT_SHIFT;
}

/* Collector: empty @w (up to CT_WHEEL_KEEP blocks kept for reuse) and
 * start over at @now, unseeded, for generation @gen. */
void ct_wheel_reset(struct ct_wheel *w, uint64_t now, uint32_t gen, uint64_t n_rows);

/* Collector: free every block (the table's end). */
void ct_wheel_free(struct ct_wheel *w);

/* Collector: a block from the free list or malloc (NULL: w->nomem set). */
struct ct_wheel_blk *ct_wheel_blk_get(struct ct_wheel *w);

/* Collector: append (@key, @gen, @due) to list *@list (a new first block when
 * the first is full; the handle is dropped, and w->nomem set, when none
 * can be had: the collector then seeds the wheel again). */
static inline void ct_wheel_list_push(struct ct_wheel *w, struct ct_wheel_blk **list,
				      uint32_t ref, uint32_t t)
{
	struct ct_wheel_blk *b = *list;

	if (__builtin_expect(!b || b->n == CT_WHEEL_BLK, 0)) {
		struct ct_wheel_blk *nb = ct_wheel_blk_get(w);

		if (!nb)
			return;
		nb->next = b;
		*list = b = nb;
	}
	b->h[b->n].t = t;
	b->h[b->n].ref = ref;
	b->n++;
	w->handles++;
}

/* Collector: append (@ref, @t) to bucket @i of level @l, marking the
 * bucket as holding handles. */
static inline void ct_wheel_bucket_push(struct ct_wheel *w, unsigned l, uint64_t i,
					uint32_t ref, uint32_t t)
{
	w->occ[l][i / 64] |= 1ull << (i % 64);
	w->occ_sum[l] |= 1ull << (i / 64);
	ct_wheel_list_push(w, &w->b[l][i], ref, t);
}

void ct_wheel_push_slow(struct ct_wheel *w, uint32_t ref, uint32_t t,
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
static inline void ct_wheel_push_t(struct ct_wheel *w, uint32_t ref, uint32_t t,
				   bool now_ok)
{
	uint64_t due = ct_wheel_fire(w, t);
	uint64_t x = due >> CT_WHEEL_SHIFT0, p = w->base >> CT_WHEEL_SHIFT0;

	if (due > w->base) {
		if (x == p) {
			ct_wheel_list_push(w, &w->cur, ref, t);
			return;
		}
		/* x > p */
		if (x - p < CT_WHEEL_BUCKETS) {
			ct_wheel_bucket_push(w, 0, x % CT_WHEEL_BUCKETS, ref, t);
			return;
		}
	}
	ct_wheel_push_slow(w, ref, t, due, now_ok);
}

/* Collector: queue @ref for time @due (ns): ct_wheel_push_t of its unit. */
static inline void ct_wheel_push(struct ct_wheel *w, uint32_t ref, uint64_t due,
				 bool now_ok)
{
	ct_wheel_push_t(w, ref, ct_wheel_t(w, due), now_ok);
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
