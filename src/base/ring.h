/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ring.h - a packet thread's ring of due handles (private).
 *
 * Every insert, and every timeout shortened where its slot is not known,
 * leaves the collector a handle saying "look here at this time"
 * (table/wheel.h says what a handle names).  A thread does not put it in
 * the wheel itself - the wheel belongs to whoever holds the table's
 * gc_lock - but on a ring of its own: one producer (the owner), one
 * consumer (the collector under gc_lock, or the owner under it when it
 * empties its own ring, table/due.h), 16-byte entries, no atomic
 * read-modify-write on either side.  The consumer moves what it finds into
 * the wheel (ct_wheel_ring_drain, table/wheel.c).
 *
 * The ring is the last member of struct ct_thread (base/state.h), 1 MB
 * whose pages are touched only as handles are queued.  It lives in base/
 * because the shared state embeds it; what its entries mean is the
 * table's business.
 *
 * Who touches what: tail and head_seen, and the entries between head and
 * tail, are the owner's until tail is published (release); head is the
 * consumer's, published with release after it has read the entries.
 */
#ifndef CT_RING_H
#define CT_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* A handle on a ring: its time in ns, and a hash of an entry of the row
 * (gen 0: a row handle; gen CT_RING_GROUP: a group handle for the row's
 * group), or a slot ref into generation gen (table/wheel.h). */
struct ct_ring_ent {
	uint64_t due;
	uint32_t key;
	uint32_t gen;
};

#define CT_RING_GROUP UINT32_MAX   /* never a generation (table/htab.c) */

/* Entries a ring holds. */
#define CT_RING_SIZE 65536

struct ct_ring {
	_Atomic uint32_t tail;        /* next to write; owner only writes */
	uint32_t head_seen;           /* owner's copy of head */
	/* head on a line of its own (padding, not an alignment attribute:
	 * struct ct_thread stays 8-aligned, which the list macros that walk
	 * t->threads from its head rely on) */
	char pad0[56];
	_Atomic uint32_t head;        /* next to read; the consumer writes */
	char pad1[60];
	struct ct_ring_ent buf[CT_RING_SIZE];
};

/*
 * ct_ring_put - queue a handle (@key, @gen, @due: struct ct_ring_ent) on
 * the owner's ring.  Returns false when the ring is full.  Owner thread
 * only; a few stores, no read-modify-write.
 */
static inline bool ct_ring_put(struct ct_ring *r, uint32_t key, uint32_t gen, uint64_t due)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	struct ct_ring_ent *w;

	if (t - r->head_seen >= CT_RING_SIZE) {
		r->head_seen = atomic_load_explicit(&r->head, memory_order_acquire);
		if (t - r->head_seen >= CT_RING_SIZE)
			return false;
	}
	w = &r->buf[t % CT_RING_SIZE];
	w->due = due;
	w->key = key;
	w->gen = gen;
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return true;
}

/* A ring's owner tries to empty it itself from half full on (once per
 * CT_RING_TRY handles), so that a lock held for a moment by whoever else
 * empties rings - the collector between yields, another thread's own
 * emptying - has half a ring of headroom before a handle is lost. */
#define CT_RING_TRY 1024

/*
 * ct_ring_half - after a put: is the ring at least half full, at a
 * multiple of CT_RING_TRY handles?  One compare and one test per put; the
 * head is read (a line the consumer writes) only at those multiples.
 * Owner thread only.
 */
static inline bool ct_ring_half(struct ct_ring *r)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (__builtin_expect(t - r->head_seen < CT_RING_SIZE / 2 || t % CT_RING_TRY, 1))
		return false;
	r->head_seen = atomic_load_explicit(&r->head, memory_order_acquire);
	return t - r->head_seen >= CT_RING_SIZE / 2;
}

/* Whether the ring holds anything (any thread; a hint unless the caller
 * excludes the owner and the consumer). */
static inline bool ct_ring_empty(struct ct_ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_relaxed) ==
	       atomic_load_explicit(&r->head, memory_order_relaxed);
}

#endif /* CT_RING_H */
