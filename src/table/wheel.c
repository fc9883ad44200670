/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wheel.c - the collector's timer wheel of due rows: buckets of handle
 * blocks, and the packet threads' rings that feed it (wheel.h says what
 * a handle means and who may touch what).
 *
 * Everything here but the ring's producer side runs under the table's
 * gc_lock, on one thread at a time, so the wheel itself takes no lock and
 * uses no atomics: the lists are plain singly linked lists of 1 KB
 * blocks.  A push appends to the first block of its list (a new block
 * when that one is full), so a list is read back newest block first; the
 * order within a bucket does not matter, every handle in it is looked at.
 */
#include <stdlib.h>
#include <string.h>

#include "table/htab.h"
#include "table/wheel.h"

_Static_assert(CT_WH_UNIT_SHIFT == CT_SLOT_DUE_SHIFT,
	       "a slot handle's unit is its slot bound's");
_Static_assert(CT_WH_MAX_POS == CT_SLOT_HANDLE_MAX_POS, "one limit");
_Static_assert(CT_WHEEL_BUCKETS / 64 <= 64, "a level's occ words fit occ_sum");

struct ct_wheel_blk *ct_wheel_blk_get(struct ct_wheel *w)
{
	struct ct_wheel_blk *b = w->free;

	if (b) {
		w->free = b->next;
		w->n_free--;
	} else {
		b = malloc(sizeof(*b));
		if (!b) {
			w->nomem = true;
			return NULL;
		}
		w->blocks++;
	}
	b->next = NULL;
	b->n = 0;
	return b;
}

void ct_wheel_blk_done(struct ct_wheel *w, struct ct_wheel_blk *b)
{
	b->next = w->free;
	w->free = b;
	w->n_free++;
}

/* Free the blocks of the free list beyond the first @keep. */
static void free_trim(struct ct_wheel *w, uint64_t keep)
{
	while (w->n_free > keep) {
		struct ct_wheel_blk *n = w->free->next;

		free(w->free);
		w->free = n;
		w->n_free--;
		w->blocks--;
	}
}

/* Put list @l in front of *@dst (walks @l to its last block). */
static void list_splice(struct ct_wheel_blk **dst, struct ct_wheel_blk *l)
{
	struct ct_wheel_blk *e = l;

	if (!l)
		return;
	while (e->next)
		e = e->next;
	e->next = *dst;
	*dst = l;
}

static void list_free_all(struct ct_wheel *w, struct ct_wheel_blk *l)
{
	while (l) {
		struct ct_wheel_blk *n = l->next;

		ct_wheel_blk_done(w, l);
		l = n;
	}
}

static unsigned level_shift(unsigned l)
{
	return CT_WHEEL_SHIFT0 + l * CT_WHEEL_LVL_BITS;
}

void ct_wheel_push_slow(struct ct_wheel *w, uint32_t ref, uint32_t t,
			uint64_t due, bool now_ok)
{
	uint64_t x, p = 0;

	if (due <= w->base) {
		ct_wheel_list_push(w, now_ok ? &w->pending : &w->cur, ref, t);
		return;
	}
	for (unsigned l = 1; l < CT_WHEEL_LEVELS; l++) {
		x = due >> level_shift(l);
		p = w->base >> level_shift(l);
		/* x > p: the level below did not fit (wheel.h) */
		if (x - p < CT_WHEEL_BUCKETS) {
			ct_wheel_bucket_push(w, l, x % CT_WHEEL_BUCKETS, ref, t);
			return;
		}
	}
	/* beyond the top level: its last bucket, taken early and queued
	 * again */
	ct_wheel_bucket_push(w, CT_WHEEL_LEVELS - 1, (p + CT_WHEEL_BUCKETS - 1) % CT_WHEEL_BUCKETS,
			     ref, t);
}

void ct_wheel_advance(struct ct_wheel *w, uint64_t now)
{
	list_splice(&w->pending, w->cur);
	w->cur = NULL;
	if (now <= w->base)
		return;
	for (unsigned l = CT_WHEEL_LEVELS; l-- > 0;) {
		uint64_t p = w->base >> level_shift(l), n = now >> level_shift(l);
		uint64_t k = n - p < CT_WHEEL_BUCKETS ? n - p : CT_WHEEL_BUCKETS;

		for (uint64_t i = 1; i <= k; i++) {
			uint64_t j = (p + i) % CT_WHEEL_BUCKETS;
			struct ct_wheel_blk **bk = &w->b[l][j];

			if (!(w->occ[l][j / 64] & (1ull << (j % 64))))
				continue;
			w->occ[l][j / 64] &= ~(1ull << (j % 64));
			if (!w->occ[l][j / 64])
				w->occ_sum[l] &= ~(1ull << (j / 64));
			list_splice(&w->pending, *bk);
			*bk = NULL;
		}
	}
	w->base = now;
}

struct ct_wheel_blk *ct_wheel_take_pending(struct ct_wheel *w)
{
	struct ct_wheel_blk *l = w->pending;

	w->pending = NULL;
	for (struct ct_wheel_blk *b = l; b; b = b->next)
		w->handles -= b->n;
	return l;
}

void ct_wheel_unpop(struct ct_wheel *w, struct ct_wheel_blk *l)
{
	for (struct ct_wheel_blk *b = l; b; b = b->next)
		w->handles += b->n;
	list_splice(&w->pending, l);
}

/*
 * Most handles on a ring are for a level-0 bucket after base's (a timeout
 * of seconds): for those the bucket is found from the ns time directly,
 * without ct_wheel_push's round trip through the handle's unit.  A time
 * whose level-0 bucket is after base's is after base, and past the
 * epoch (which is before base), so its unit counted from the epoch is
 * the handle's time as ct_wheel_t gives it when it fits in 32 bits.
 */
void ct_wheel_ring_drain(struct ct_wheel *w, struct ct_ring *r)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t b1 = (w->base >> CT_WHEEL_SHIFT0) + 1, ep = w->epoch;
	uint32_t gen = w->gen;

	for (; h != t; h++) {
		const struct ct_ring_ent *x = &r->buf[h % CT_RING_SIZE];
		uint64_t due = x->due, d, u;
		uint32_t ref = x->key;

		if (!x->gen)
			ref = (uint32_t)ct_row_index(ref, w->n_rows) |
			      CT_WH_ROW << CT_WH_POS_SHIFT;
		else if (x->gen == CT_RING_GROUP)
			ref = ((uint32_t)ct_row_index(ref, w->n_rows) & ~(uint32_t)(CT_GROUP_ROWS - 1)) |
			      CT_WH_GROUP << CT_WH_POS_SHIFT;
		else if (x->gen != gen)
			continue;
		d = (due >> CT_WHEEL_SHIFT0) - b1;
		u = (due >> CT_WH_UNIT_SHIFT) - ep;
		if (__builtin_expect(d < CT_WHEEL_BUCKETS - 1 && u <= UINT32_MAX, 1))
			ct_wheel_bucket_push(w, 0, (b1 + d) % CT_WHEEL_BUCKETS, ref, (uint32_t)u);
		else
			ct_wheel_push(w, ref, due, true);
	}
	atomic_store_explicit(&r->head, h, memory_order_release);
}

void ct_wheel_reset(struct ct_wheel *w, uint64_t now, uint32_t gen, uint64_t n_rows)
{
	for (unsigned l = 0; l < CT_WHEEL_LEVELS; l++)
		for (unsigned i = 0; i < CT_WHEEL_BUCKETS; i++) {
			list_free_all(w, w->b[l][i]);
			w->b[l][i] = NULL;
		}
	memset(w->occ, 0, sizeof(w->occ));
	memset(w->occ_sum, 0, sizeof(w->occ_sum));
	list_free_all(w, w->cur);
	list_free_all(w, w->pending);
	w->cur = w->pending = NULL;
	w->handles = 0;
	w->base = now;
	/* handle times reach 2^31 units (~26 days) before and after now;
	 * the collector starts over (ct_wheel_reset) before the latter runs
	 * short (CT_WHEEL_EPOCH_RENEW) */
	w->epoch = (now >> CT_WH_UNIT_SHIFT) > (1ull << 31) ?
		   (now >> CT_WH_UNIT_SHIFT) - (1ull << 31) : 0;
	w->gen = gen;
	w->n_rows = n_rows;
	w->seeded = false;
	w->seed_cursor = 0;
	w->nomem = false;
	free_trim(w, CT_WHEEL_KEEP);
}

void ct_wheel_free(struct ct_wheel *w)
{
	ct_wheel_reset(w, 0, 0, 0);
	free_trim(w, 0);
}

uint64_t ct_wheel_next_due(const struct ct_wheel *w)
{
	uint64_t best = UINT64_MAX;

	if (w->pending || w->cur)
		return w->base;
	for (unsigned l = 0; l < CT_WHEEL_LEVELS; l++) {
		uint64_t p = w->base >> level_shift(l);
		uint64_t b0 = (p + 1) % CT_WHEEL_BUCKETS;

		if (!w->occ_sum[l])
			continue;
		/* the first occupied bucket after p, circularly: bit words
		 * from b0's, the first masked below b0, the last above */
		for (unsigned n = 0; n <= CT_WHEEL_BUCKETS / 64; n++) {
			unsigned wi = (unsigned)((b0 / 64 + n) % (CT_WHEEL_BUCKETS / 64));
			uint64_t bits = w->occ[l][wi];

			if (n == 0)
				bits &= ~0ull << (b0 % 64);
			else if (n == CT_WHEEL_BUCKETS / 64)
				bits &= (b0 % 64) ? ~(~0ull << (b0 % 64)) : 0;
			if (bits) {
				uint64_t j = wi * 64u + (unsigned)__builtin_ctzll(bits);
				uint64_t d = (j - b0 + CT_WHEEL_BUCKETS) % CT_WHEEL_BUCKETS + 1;
				uint64_t start = (p + d) << level_shift(l);

				/* the top level's last bucket also holds
				 * handles beyond it: its start is still a
				 * lower bound */
				if (start < best)
					best = start;
				break;
			}
		}
	}
	return best;
}
