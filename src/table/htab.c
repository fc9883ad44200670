/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * htab.c - one generation of the hash table: rows, slots, row locks.
 *
 * See htab.h for the layout.  The row array is mmap'd with
 * MADV_HUGEPAGE from 2 MiB on: at millions of entries the rows are the
 * first cache miss of every lookup and a TLB miss on top of it would
 * double it, and at thousands the rows' 4 KiB pages are each faulted in
 * twice (see map_zeroed).  Overflow
 * rows hold the entries of rows that got more than six (at the 60-75%
 * load the table keeps, one row in six to one in ten has one).  They are
 * carved from mapped blocks (4 KiB, doubling up to 2 MiB) rather than
 * malloc'd one by one: a malloc'd 64-byte aligned row costs its header
 * and alignment slack on top, and the heap keeps the rows of retired
 * generations resident.  An overflow row the collector finds empty is
 * unlinked and, a grace period later, put on its pool's free list for
 * the next chain that needs one (htab.h, ct_htab_ovf_unlink_empty): a
 * reader can follow a link it loaded with no protection but RCU.  The
 * blocks are unmapped with the pool, whose last reference is the
 * generation's or that of a retirement batch still waiting.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <urcu/arch.h>
#include <urcu/flavor.h>

#include "table/htab.h"

/* The header of a block of overflow rows (its first row). */
struct ct_ovf_block {
	struct ct_ovf_block *next;
	size_t len;                    /* bytes mapped */
};

/* One generation's overflow rows. */
struct ct_ovf_pool {
	_Atomic uint64_t refs;         /* the generation's, + one a batch */
	_Atomic uint8_t lock;
	struct ct_row *next;           /* next unused row of the last block */
	uint64_t left;                 /* row units left after it there */
	struct ct_ovf_block *blocks;
	struct ct_row *free;           /* retired rows past their grace
					* period (linked: ovf_link) */
	_Atomic uint64_t live;         /* rows in chains */
	_Atomic uint64_t mapped;       /* rows carved from blocks */
};

/* Rows unlinked by the collector, waiting for a grace period (made with
 * its first row: never empty). */
struct ct_ovf_retire {
	struct rcu_head rcu;
	struct ct_ovf_pool *pool;
	struct ct_row *rows;           /* linked: ovf_link */
};

/* A retired row is linked through the first word of its slot-bounds
 * line: readers still in the row read its slots and its link, never its
 * bounds, and only the collector, under the head's lock, reads the
 * bounds of rows in a chain. */
static struct ct_row **ovf_link(struct ct_row *r)
{
	return (struct ct_row **)(void *)(r + 1);
}

static void ovf_pool_put(struct ct_ovf_pool *p)
{
	if (!p || atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1)
		return;
	while (p->blocks) {
		struct ct_ovf_block *b = p->blocks;

		p->blocks = b->next;
		munmap(b, b->len);
	}
	free(p);
}

_Static_assert(sizeof(struct ct_ovf_block) <= sizeof(struct ct_row),
	       "a block's header fits in its first row");

static void *map_zeroed(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* Huge pages from one huge page's worth on.  A huge page costs its
	 * whole 2 MiB of zeroing at the first write (~0.8 ms more for a
	 * capture of one connection in the default 64k rows, 4 MiB), but
	 * rows are written at random: a table of a few thousand entries
	 * touches nearly every 4 KiB page of it, and each page then takes
	 * two faults (the zero page at the lookup that missed, a copy at the
	 * insert) - 2,000 faults, ~4 ms of `ctrack read`'s system time, on
	 * the shared captures' concatenation (3,731 connections). */
	if (len >= 2u * 1024 * 1024)
		madvise(p, len, MADV_HUGEPAGE);
	return p;
}

/* every generation's number, process-wide (never 0: wheel.h) */
static _Atomic uint32_t htab_gens;

struct ct_htab *ct_htab_new(uint64_t n_rows)
{
	struct ct_htab *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	if (!n_rows || n_rows > CT_ROWS_MAX) {
		free(h);
		return NULL;
	}
	h->ovf = calloc(1, sizeof(*h->ovf));
	if (!h->ovf) {
		free(h);
		return NULL;
	}
	atomic_init(&h->ovf->refs, 1);
	do
		h->gen = atomic_fetch_add_explicit(&htab_gens, 1, memory_order_relaxed) + 1;
	while (!h->gen || h->gen == UINT32_MAX);   /* base/ring.h: CT_RING_GROUP */
	h->n_rows = n_rows;
	h->n_groups = (n_rows + CT_GROUP_ROWS - 1) / CT_GROUP_ROWS;
	h->rows = map_zeroed(n_rows * sizeof(struct ct_row));
	h->group_due_inv = map_zeroed(h->n_groups * sizeof(*h->group_due_inv));
	h->n_subs = h->n_groups * CT_GROUP_SUBS;
	h->sub_due_inv = map_zeroed(h->n_subs * sizeof(*h->sub_due_inv));
	h->slot_due = map_zeroed(n_rows * CT_ROW_SLOTS * sizeof(*h->slot_due));
	h->slot_dirty = map_zeroed(h->n_groups * sizeof(*h->slot_dirty));
	h->group_hmark = map_zeroed(h->n_groups * sizeof(*h->group_hmark));
	if (!h->rows || !h->group_due_inv || !h->sub_due_inv || !h->slot_due ||
	    !h->slot_dirty || !h->group_hmark) {
		ct_htab_free(h);
		return NULL;
	}
	return h;
}

void ct_htab_free(struct ct_htab *h)
{
	if (!h)
		return;
	if (h->rows)
		munmap(h->rows, h->n_rows * sizeof(struct ct_row));
	ovf_pool_put(h->ovf);
	if (h->group_due_inv)
		munmap(h->group_due_inv, h->n_groups * sizeof(*h->group_due_inv));
	if (h->sub_due_inv)
		munmap(h->sub_due_inv, h->n_subs * sizeof(*h->sub_due_inv));
	if (h->slot_due)
		munmap(h->slot_due, h->n_rows * CT_ROW_SLOTS * sizeof(*h->slot_due));
	if (h->group_hmark)
		munmap(h->group_hmark, h->n_groups * sizeof(*h->group_hmark));
	if (h->slot_dirty)
		munmap(h->slot_dirty, h->n_groups * sizeof(*h->slot_dirty));
	free(h);
}

void ct_row_lock_slow(struct ct_row *r)
{
	unsigned spins = 0;

	for (;;) {
		uintptr_t v = atomic_load_explicit(&r->next, memory_order_relaxed);
		if (!(v & CT_ROW_LOCK) &&
		    atomic_compare_exchange_weak_explicit(&r->next, &v,
							  v | CT_ROW_LOCK,
							  memory_order_acquire,
							  memory_order_relaxed))
			return;
		ct_spin_relax(&spins);
	}
}

struct ct_conn *ct_htab_find(struct ct_htab *h, uint64_t hash,
			     const struct ct_tuple *key,
			     const struct ct_tuple *inv, enum ct_dir *dir)
{
	const struct ct_row *r = ct_htab_row(h, hash);
	uint64_t sig = ct_slot_sig(hash);

	do {
		for (unsigned m = ct_row_sig_match(r, hash); m; m &= m - 1) {
			int i = __builtin_ctz(m);
			uint64_t s = atomic_load_explicit(
				&((struct ct_row *)r)->slot[i], memory_order_acquire);
			struct ct_conn *c;

			if (!s || (s & 0xffff000000000000ull) != sig)
				continue;
			c = ct_slot_conn(s);
			int d = ct_conn_matches(c, key, inv, s & CT_SLOT_RPL);

			if (d >= 0) {
				*dir = (enum ct_dir)d;
				return c;
			}
		}
		r = ct_row_next(r);
	} while (r);
	return NULL;
}

/* Overflow rows per block: the first block's, and the most (2 MiB). */
#define OVF_BLOCK_MIN 64
#define OVF_BLOCK_MAX 32768

struct ct_row *ct_htab_ovf_new(struct ct_htab *h)
{
	/* the row, then its slot bounds in the next line (htab.h): two
	 * row-sized units of a block */
	struct ct_ovf_pool *p = h->ovf;
	struct ct_row *r = NULL;

	_Static_assert(CT_ROW_SLOTS * sizeof(uint16_t) <= sizeof(*r),
		       "an overflow row's slot bounds fit the line after it");
	ct_spin_lock(&p->lock);
	if (p->free) {
		/* past its grace period: nobody reads it any more */
		r = p->free;
		p->free = *ovf_link(r);
		memset(r, 0, 2 * sizeof(*r));
		goto out;
	}
	if (p->left < 2) {
		/* the block's first row is its header; the rest are fresh,
		 * zeroed rows */
		uint64_t rows = p->blocks ? p->blocks->len / sizeof(*r) * 2
					  : OVF_BLOCK_MIN;
		struct ct_ovf_block *b;

		if (rows > OVF_BLOCK_MAX)
			rows = OVF_BLOCK_MAX;
		b = map_zeroed(rows * sizeof(*r));
		if (!b)
			goto out;
		b->next = p->blocks;
		b->len = rows * sizeof(*r);
		p->blocks = b;
		p->next = (struct ct_row *)(void *)b + 1;
		p->left = rows - 1;
	}
	r = p->next;
	p->next += 2;
	p->left -= 2;
	atomic_fetch_add_explicit(&p->mapped, 1, memory_order_relaxed);
out:
	if (r)
		atomic_fetch_add_explicit(&p->live, 1, memory_order_relaxed);
	ct_spin_unlock(&p->lock);
	return r;
}

uint64_t ct_htab_ovf_live(const struct ct_htab *h)
{
	return atomic_load_explicit(&h->ovf->live, memory_order_relaxed);
}

uint64_t ct_htab_ovf_mapped(const struct ct_htab *h)
{
	return atomic_load_explicit(&h->ovf->mapped, memory_order_relaxed);
}

static void ovf_retire_cb(struct rcu_head *head)
{
	struct ct_ovf_retire *b = caa_container_of(head, struct ct_ovf_retire, rcu);
	struct ct_ovf_pool *p = b->pool;
	struct ct_row *last = b->rows;

	while (*ovf_link(last))
		last = *ovf_link(last);
	ct_spin_lock(&p->lock);
	*ovf_link(last) = p->free;
	p->free = b->rows;
	ct_spin_unlock(&p->lock);
	ovf_pool_put(p);
	free(b);
}

void ct_ovf_retire_flush(struct ct_ovf_retire **batch,
			 const struct rcu_flavor_struct *rcu)
{
	struct ct_ovf_retire *b = *batch;

	if (!b)
		return;
	*batch = NULL;
	rcu->update_call_rcu(&b->rcu, ovf_retire_cb);
}

unsigned ct_htab_ovf_unlink_empty(struct ct_htab *h, struct ct_row *head,
				  struct ct_ovf_retire **batch,
				  const struct rcu_flavor_struct *rcu, bool tail_only)
{
	struct ct_row *prev = head, *r;
	unsigned n = 0;

	/* tail_only (slot handles name positions in the chain): only the
	 * empty rows after the last one that holds an entry */
	if (tail_only)
		for (r = ct_row_next(head); r; r = ct_row_next(r))
			if (!ct_row_holds_none(r))
				prev = r;
	for (r = ct_row_next(prev); r; r = ct_row_next(prev)) {
		struct ct_ovf_retire *b = *batch;
		uintptr_t v;

		if (!ct_row_holds_none(r)) {
			prev = r;
			continue;
		}
		if (b && b->pool != h->ovf)
			ct_ovf_retire_flush(batch, rcu);
		if (!*batch) {
			b = malloc(sizeof(*b));
			if (!b)
				break;
			b->pool = h->ovf;
			b->rows = NULL;
			atomic_fetch_add_explicit(&h->ovf->refs, 1, memory_order_relaxed);
			*batch = b;
		}
		b = *batch;
		/* prev skips r, keeping its own flag bits (the head's lock
		 * among them); r keeps its link for readers inside it */
		v = atomic_load_explicit(&prev->next, memory_order_relaxed);
		atomic_store_explicit(&prev->next,
				      (uintptr_t)ct_row_next(r) | (v & CT_ROW_FLAGS),
				      memory_order_release);
		*ovf_link(r) = b->rows;
		b->rows = r;
		n++;
		atomic_fetch_sub_explicit(&h->ovf->live, 1, memory_order_relaxed);
	}
	return n;
}

bool ct_htab_place_locked(struct ct_htab *h, struct ct_row *head, uint64_t s,
			  bool dedupe)
{
	struct ct_row *r = head, *last = head;
	_Atomic uint64_t *free_slot = NULL;

	for (; r; last = r, r = ct_row_next(r)) {
		unsigned empty = ct_row_empty(r);

		if (empty && !free_slot) {
			free_slot = &r->slot[__builtin_ctz(empty)];
			if (!dedupe)
				break;
		}
		if (dedupe)
			for (int k = 0; k < CT_ROW_SLOTS; k++)
				if ((atomic_load_explicit(&r->slot[k],
							  memory_order_relaxed) &
				     ~CT_SLOT_BOUND) == s)
					return true;
	}
	if (free_slot) {
		atomic_store_explicit(free_slot, s, memory_order_release);
		return true;
	}
	r = ct_htab_ovf_new(h);
	if (!r)
		return false;
	atomic_store_explicit(&r->slot[0], s, memory_order_relaxed);
	{
		/* publish the filled overflow row at the end of the chain,
		 * keeping last's flag bits (the head's lock bit included) */
		uintptr_t v = atomic_load_explicit(&last->next, memory_order_relaxed);

		atomic_store_explicit(&last->next, (uintptr_t)r | (v & CT_ROW_FLAGS),
				      memory_order_release);
	}
	return true;
}

bool ct_htab_remove_locked(struct ct_row *head, const struct ct_conn *c)
{
	for (struct ct_row *r = head; r; r = ct_row_next(r))
		for (int i = 0; i < CT_ROW_SLOTS; i++) {
			uint64_t s = atomic_load_explicit(&r->slot[i],
							  memory_order_relaxed);
			/* the entry's primary slot: not its second one, which
			 * may share the chain */
			if (s && ct_slot_conn(s) == c && !(s & CT_SLOT_SECOND)) {
				atomic_store_explicit(&r->slot[i], 0,
						      memory_order_release);
				return true;
			}
		}
	return false;
}

bool ct_htab_remove_kind_locked(struct ct_row *head, const struct ct_conn *c, bool second)
{
	uint64_t want = second ? CT_SLOT_SECOND : 0;

	for (struct ct_row *r = head; r; r = ct_row_next(r))
		for (int i = 0; i < CT_ROW_SLOTS; i++) {
			uint64_t s = atomic_load_explicit(&r->slot[i],
							  memory_order_relaxed);
			if (s && ct_slot_conn(s) == c && (s & CT_SLOT_SECOND) == want) {
				atomic_store_explicit(&r->slot[i], 0,
						      memory_order_release);
				return true;
			}
		}
	return false;
}

void ct_htab_lower_due(struct ct_htab *h, uint64_t idx, uint64_t due)
{
	ct_slot_due_dirty(h, idx);
	ct_due_lower(&h->rows[idx].due_inv, due);
	ct_due_lower(&h->sub_due_inv[idx / CT_SUB_ROWS], due);
	ct_due_lower(&h->group_due_inv[idx / CT_GROUP_ROWS], due);
}

unsigned ct_row_count(const struct ct_row *r)
{
	unsigned n = 0;

	for (; r; r = ct_row_next(r))
		for (int i = 0; i < CT_ROW_SLOTS; i++)
			if (atomic_load_explicit(&((struct ct_row *)r)->slot[i],
						 memory_order_relaxed))
				n++;
	return n;
}
