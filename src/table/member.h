/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * member.h - an entry's membership of the table: found, inserted,
 * unlinked (private).
 *
 * One slot per connection (htab.h): the hash is direction-blind, so an
 * entry is found from either side in one row - but an entry whose NAT
 * binding changed a tuple, which has a second slot under its reply tuple
 * (inserted by table/rslot.h, removed after its primary one by
 * ct_table_unlink_second).  While a resize runs a row
 * may be MOVED, its entries in the next generation: writers follow the
 * futures (ct_table_lock_row), readers look in the old generation first
 * and then in the next (ct_table_find), and every live entry is always
 * found (resize.c says why).
 *
 * Callers: threads attached to the table, inside a read-side section.
 */
#ifndef CT_MEMBER_H
#define CT_MEMBER_H

#include "base/state.h"
#include "table/due.h"
#include "table/htab.h"

/*
 * What a lookup or an insert needs of a key: the tuple, its inverse (NULL
 * for every protocol whose reply tuple is the tuple swapped: compared in
 * place, htab.h) and its hash.  The tracker keeps one per packet
 * (track/track.h, struct pkt_key begins with it).
 */
struct ct_table_key {
	const struct ct_tuple *key;
	const struct ct_tuple *inv;
	uint64_t hash;
};

/*
 * ct_table_lock_row - lock the row that holds (or would hold) @hash,
 * following rows a resize has MOVED into the next generation.  Returns
 * the locked head row; *@hp is its generation.  Read side held; spins
 * while another writer holds the row (htab.h).
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

/*
 * ct_table_find - the entry whose original tuple is @key or its inverse
 * @inv (NULL: @key swapped, htab.h), hashed @hash; *@dir says which.  The
 * entry may be DYING: the caller checks under its lock.  Read side held;
 * takes no lock, writes nothing; a row and its chain per generation.
 */
struct ct_conn *ct_table_find(struct ct_thread *thr, uint64_t hash,
			      const struct ct_tuple *key,
			      const struct ct_tuple *inv, enum ct_dir *dir);

/*
 * ct_table_unlink - unlink @c, whose entry lock the caller holds, if
 * nobody else did (DYING arbitrates between racing killers): clears its
 * slot under its row's lock (entry lock -> row lock), queues it for
 * freeing after a grace period (reclaim.h) and counts it out of the
 * table and its namespace.  Returns true if this call removed it.
 */
bool ct_table_unlink(struct ct_thread *thr, struct ct_conn *c);

/* Has @c a second slot (htab.h)?  An entry whose NAT binding changed a
 * tuple has, but an IPS_NAT_CLASH one, in the table under its reply tuple
 * only.  Its extensions and status bits but DYING are fixed once it is
 * published. */
static inline bool ct_conn_has_second(const struct ct_conn *c)
{
	return (c->ext & CT_EXT_NAT) && !(ct_conn_status(c) & CT_ST_NAT_CLASH);
}

/*
 * ct_table_unlink_second - remove @c's second slot, if it has one, after
 * its primary slot was cleared by whoever set it DYING (and before @c is
 * queued for freeing): locks the row of its reply hash (following a
 * resize), as its one caller may lock any row - no other row lock held
 * (the collector, flush, teardown and unlink call it after they unlocked
 * the primary's row).  Returns true if a slot was removed.
 */
bool ct_table_unlink_second(struct ct_table *t, struct ct_conn *c);

/*
 * ct_table_insert - confirm @c, which is not published yet and expires at
 * @exp, in the table under key @k (the kernel's __nf_conntrack_confirm):
 * the row is locked (following a resize), the chain limit and a clash
 * with an entry of the same tuple are checked, and @c is stored; then the due bounds are lowered
 * (row and sub under the lock, the group after it: htab.h's order), the
 * collector's wheel told (due.h), and @c counted in the table and in
 * @ns.  Returns CT_INS_OK, or CT_INS_CLASH (*@clash: the entry that holds
 * the tuple), CT_INS_CHAIN (the row's chain holds max_chain entries) or
 * CT_INS_NOMEM (no overflow row), and then @c is untouched but its
 * CONFIRMED bit: the caller frees it.  The caller helps a resize after
 * it (ct_table_after_insert, resize.h) once it has reported the entry.
 * Inline: the creation path (track/create.c) is its one caller, and the
 * insert was written there before; out of line it cost a new connection
 * 48 instructions (scripts/probe.sh new-udp), and with the key's three
 * words passed by value 30 (they stayed live in registers across the
 * loop and the calls, and spilled, where loads through @k are cheap).
 */
static inline __attribute__((always_inline)) enum ct_htab_ins
ct_table_insert(struct ct_thread *thr, struct ct_ns *ns, struct ct_conn *c,
		const struct ct_table_key *k, uint64_t exp, struct ct_conn **clash)
{
	struct ct_table *t = thr->t;
	bool wheel = atomic_load_explicit(&t->wheel_on, memory_order_relaxed);
	enum ct_htab_ins res;
	struct ct_htab *h;
	struct ct_row *r;
	int pos = -1;

	for (;;) {
		r = ct_table_lock_row(t, k->hash, &h);
		res = ct_htab_insert_locked_inline(h, r, c, k->hash, k->key, k->inv,
						   t->cfg.max_chain, clash,
						   wheel ? &pos : NULL);
		ct_row_unlock(r);
		if (res != CT_INS_MOVED)
			break;
	}
	if (res != CT_INS_OK)
		return res;
	/* our own expiry, not c->expires: the entry is public now and others
	 * may be changing it (a longer one needs no lower bound, a shorter
	 * one is lowered by whoever set it) */
	ct_due_lower(&h->group_due_inv[(uint64_t)(r - h->rows) / CT_GROUP_ROWS], exp);
	if (wheel && pos >= 0 && ct_wheel_fits(h->n_rows))
		ct_due_note_slot(thr, (uint32_t)(r - h->rows) | (uint32_t)pos << CT_WH_POS_SHIFT,
				 h->gen, exp);
	else if (wheel)
		ct_due_note_row(thr, k->hash, exp);   /* past the slot handles */
	ct_thread_count_add(thr, 1);
	/* this thread's shard of the namespace (struct ct_ns_shard) */
	ct_ns_count_add_shard(ns, thr->ns_shard, 1);
	return CT_INS_OK;
}

#endif /* CT_MEMBER_H */
