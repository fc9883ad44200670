/*
 * htab.c - one generation of the hash table: rows, slots, row locks.
 *
 * See htab.h for the layout.  The row array is mmap'd with
 * MADV_HUGEPAGE: at millions of entries the rows are the first cache miss
 * of every lookup and a TLB miss on top of it would double it.  Overflow
 * rows are rare at the load the table keeps (resize at 75% of the slots)
 * and are freed only with their generation, so readers can follow a link
 * they loaded without further protection than RCU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <urcu/arch.h>

#include "htab.h"

static void *map_zeroed(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (len >= 2u * 1024 * 1024)
		madvise(p, len, MADV_HUGEPAGE);
	return p;
}

struct ct_htab *ct_htab_new(uint64_t n_rows)
{
	struct ct_htab *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->n_rows = n_rows;
	h->mask = n_rows - 1;
	h->n_groups = (n_rows + CT_GROUP_ROWS - 1) / CT_GROUP_ROWS;
	h->rows = map_zeroed(n_rows * sizeof(struct ct_row));
	h->group_due_inv = map_zeroed(h->n_groups * sizeof(*h->group_due_inv));
	h->n_subs = h->n_groups * CT_GROUP_SUBS;
	h->sub_due_inv = map_zeroed(h->n_subs * sizeof(*h->sub_due_inv));
	h->slot_due = map_zeroed(n_rows * CT_ROW_SLOTS * sizeof(*h->slot_due));
	h->slot_dirty = map_zeroed(h->n_groups * sizeof(*h->slot_dirty));
	if (!h->rows || !h->group_due_inv || !h->sub_due_inv || !h->slot_due ||
	    !h->slot_dirty) {
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
	for (uint64_t i = 0; i < h->n_ovf; i++)
		free(h->ovf[i]);
	free(h->ovf);
	if (h->group_due_inv)
		munmap(h->group_due_inv, h->n_groups * sizeof(*h->group_due_inv));
	if (h->sub_due_inv)
		munmap(h->sub_due_inv, h->n_subs * sizeof(*h->sub_due_inv));
	if (h->slot_due)
		munmap(h->slot_due, h->n_rows * CT_ROW_SLOTS * sizeof(*h->slot_due));
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
	const struct ct_row *r = &h->rows[hash & h->mask];
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
			if (ct_tuple_equal(&c->tuple, key)) {
				*dir = CT_DIR_ORIGINAL;
				return c;
			}
			if (ct_tuple_is_reply(&c->tuple, key, inv)) {
				*dir = CT_DIR_REPLY;
				return c;
			}
		}
		r = ct_row_next(r);
	} while (r);
	return NULL;
}

struct ct_row *ct_htab_ovf_new(struct ct_htab *h)
{
	/* the row, then its slot bounds in the next line (htab.h) */
	struct ct_row *r = aligned_alloc(2 * sizeof(*r), 2 * sizeof(*r));
	unsigned spins = 0;

	_Static_assert(CT_ROW_SLOTS * sizeof(uint16_t) <= sizeof(*r),
		       "an overflow row's slot bounds fit the line after it");
	if (!r)
		return NULL;
	memset(r, 0, 2 * sizeof(*r));
	while (atomic_exchange_explicit(&h->ovf_lock, 1, memory_order_acquire))
		ct_spin_relax(&spins);
	if (h->n_ovf == h->cap_ovf) {
		uint64_t cap = h->cap_ovf ? h->cap_ovf * 2 : 64;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct ct_row **v = realloc(h->ovf, cap * sizeof(*v));
		if (!v) {
			atomic_store_explicit(&h->ovf_lock, 0, memory_order_release);
			free(r);
			return NULL;
		}
		h->ovf = v;
		h->cap_ovf = cap;
	}
	h->ovf[h->n_ovf++] = r;
	atomic_store_explicit(&h->ovf_lock, 0, memory_order_release);
	return r;
}

enum ct_htab_ins ct_htab_insert_locked(struct ct_htab *h, struct ct_row *head,
				       struct ct_conn *c, uint64_t hash,
				       const struct ct_tuple *inv,
				       uint32_t max_chain,
				       struct ct_conn **clash)
{
	return ct_htab_insert_locked_inline(h, head, c, hash, inv, max_chain, clash);
}

bool ct_htab_remove_locked(struct ct_row *head, const struct ct_conn *c)
{
	for (struct ct_row *r = head; r; r = ct_row_next(r))
		for (int i = 0; i < CT_ROW_SLOTS; i++) {
			uint64_t s = atomic_load_explicit(&r->slot[i],
							  memory_order_relaxed);
			if (s && ct_slot_conn(s) == c) {
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
