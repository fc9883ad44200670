/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * member.c - membership (member.h): an entry found across generations,
 * an entry unlinked.
 *
 * Insertion is inline in member.h (its one caller is the creation path).
 * An unlink takes the entry's row lock while the caller holds the
 * entry's: the lock order of base/state.h (entry -> row).
 */
#include "table/member.h"
#include "table/reclaim.h"
#include "table/thread.h"

static bool unlink_common(struct ct_thread *thr, struct ct_conn *c)
{
	struct ct_ns *ns = ct_slab_chunk_of(c)->slab->owner;
	struct ct_htab *h;
	struct ct_row *r = ct_table_lock_row(thr->t, c->hash, &h);
	bool found = ct_htab_remove_locked(r, c);

	ct_row_unlock(r);
	if (!found)
		return false;
	if (__builtin_expect(c->ext & CT_EXT_NAT, 0))
		ct_table_unlink_second(thr->t, c);
	ct_thread_count_add(thr, -1);
	if (thr->count_delta <= -64)
		ct_thread_fold_count(thr);
	ct_ns_count_add_shard(ns, thr->ns_shard, -1);
	ct_reclaim_queue(thr, c);
	return true;
}

bool ct_table_unlink_second(struct ct_table *t, struct ct_conn *c)
{
	struct ct_htab *h;
	struct ct_row *r;
	bool found;

	if (!ct_conn_has_second(c))
		return false;
	r = ct_table_lock_row(t, ct_conn_nat(c)->rhash, &h);
	found = ct_htab_remove_kind_locked(r, c, true);
	ct_row_unlock(r);
	/* the source index and the port map forget it (nat/), once */
	if (found) {
		void (*forget)(struct ct_table *, struct ct_conn *) =
			atomic_load_explicit(&t->nat_forget, memory_order_acquire);

		if (forget)
			forget(t, c);
	}
	return found;
}

bool ct_table_unlink(struct ct_thread *thr, struct ct_conn *c)
{
	if (ct_conn_test_and_set(c, CT_ST_DYING))
		return false;
	return unlink_common(thr, c);
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

