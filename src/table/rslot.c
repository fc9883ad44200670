/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rslot.c - an entry confirmed under both of its keys (rslot.h).
 *
 * The kernel's __nf_conntrack_confirm, on ctrack's rows: both rows
 * locked, the original tuple's chain and the reply tuple's chain searched
 * for an entry holding either tuple (as its original, or as its reply:
 * ct_conn_matches, table/conn_key.h, in a primary or a second slot), the
 * chain limit checked, and then the entry stored - its second slot
 * first, so that the first slot a reader can find already has its twin -
 * or the clash resolved as nf_ct_resolve_clash does.  Free slots are
 * found, and overflow rows linked, before anything is published: a
 * confirm that runs out of memory leaves at most an empty overflow row
 * in a chain, which the collector takes out again (htab.h).  The due
 * bounds, the wheel and the counts are those of ct_table_insert
 * (member.h), for the entry's primary slot only.
 */
#include "table/rslot.h"
#include "table/thread.h"

/* The row of @hash in generation @h, locked (a pair of these). */
struct locked {
	struct ct_htab *h;
	struct ct_row *r;
};

/* Is generation @a older than @b (is @b among @a's futures)?  Two
 * generations live at once at most, besides retired ones a reader may
 * still hold, so the walk is a step or two. */
static bool gen_older(const struct ct_htab *a, const struct ct_htab *b)
{
	for (const struct ct_htab *g = a; g;
	     g = atomic_load_explicit(&((struct ct_htab *)g)->future, memory_order_acquire))
		if (g == b)
			return true;
	return false;
}

/* Lock the rows of @h1 and @h2 (the same row once), following rows a
 * resize has MOVED, in the order of rslot.h. */
static void lock_two(struct ct_table *t, uint64_t h1, uint64_t h2,
		     struct locked *a, struct locked *b)
{
	struct ct_htab *g1 = atomic_load_explicit(&t->htab, memory_order_acquire);
	struct ct_htab *g2 = g1;

	for (;;) {
		struct ct_row *r1 = ct_htab_row(g1, h1), *r2 = ct_htab_row(g2, h2);
		struct ct_row *first = r1, *second = r2;
		bool m1, m2;

		if (r1 == r2) {
			ct_row_lock(r1);
			if (!ct_row_moved(r1)) {
				a->h = b->h = g1;
				a->r = b->r = r1;
				return;
			}
			ct_row_unlock(r1);
			g1 = g2 = atomic_load_explicit(&g1->future, memory_order_acquire);
			continue;
		}
		if (g1 == g2 ? (uintptr_t)r2 < (uintptr_t)r1 : gen_older(g2, g1)) {
			first = r2;
			second = r1;
		}
		ct_row_lock(first);
		ct_row_lock(second);
		m1 = ct_row_moved(r1);
		m2 = ct_row_moved(r2);
		if (!m1 && !m2) {
			a->h = g1;
			a->r = r1;
			b->h = g2;
			b->r = r2;
			return;
		}
		ct_row_unlock(second);
		ct_row_unlock(first);
		if (m1)
			g1 = atomic_load_explicit(&g1->future, memory_order_acquire);
		if (m2)
			g2 = atomic_load_explicit(&g2->future, memory_order_acquire);
	}
}

static void unlock_two(struct locked *a, struct locked *b)
{
	ct_row_unlock(a->r);
	if (b->r != a->r)
		ct_row_unlock(b->r);
}

/* The live entry of (locked) chain @head that holds tuple @key (inverse
 * @inv, NULL: swapped) as its original or its reply tuple, or NULL. */
static struct ct_conn *chain_holds(struct ct_row *head, const struct ct_table_key *k)
{
	uint64_t sig = ct_slot_sig(k->hash);

	for (struct ct_row *r = head; r; r = ct_row_next(r))
		for (unsigned m = ct_row_sig_match(r, k->hash); m; m &= m - 1) {
			uint64_t s = atomic_load_explicit(&r->slot[__builtin_ctz(m)],
							  memory_order_relaxed);
			struct ct_conn *o;

			if (!s || (s & 0xffff000000000000ull) != sig)
				continue;
			o = ct_slot_conn(s);
			if (ct_conn_status(o) & CT_ST_DYING)
				continue;
			if (ct_conn_matches(o, k->key, k->inv, s & CT_SLOT_RPL) >= 0)
				return o;
		}
	return NULL;
}

/* Does (locked) chain @head hold max_chain entries? */
static bool chain_full(const struct ct_table *t, struct ct_row *head)
{
	uint32_t max = t->cfg.max_chain;
	unsigned rows = 0;

	if (!max)
		return false;
	for (struct ct_row *r = head; r; r = ct_row_next(r))
		rows++;
	return rows * CT_ROW_SLOTS >= max && ct_row_count(head) >= max;
}

/* nf_ct_match / nf_ct_match_reverse: has @e the tuples of @c, as they
 * are or crosswise?  (Zones are part of the tuples.) */
static bool can_merge(const struct ct_conn *e, const struct ct_conn *c)
{
	struct ct_tuple eo, er, co, cr;

	ct_conn_tuple(e, &eo);
	ct_conn_reply_of(e, &eo, &er);
	ct_conn_tuple(c, &co);
	ct_conn_reply_of(c, &co, &cr);
	return (ct_tuple_equal(&eo, &co) && ct_tuple_equal(&er, &cr)) ||
	       (ct_tuple_equal(&eo, &cr) && ct_tuple_equal(&er, &co));
}

/* The first empty slot of (locked) chain @head but @not; an empty
 * overflow row is linked at its end when it has none.  NULL: no memory.
 * *@rowp and *@posp say where (the row, the position in the chain). */
static _Atomic uint64_t *rslot_free_slot(struct ct_htab *h, struct ct_row *head,
					 const _Atomic uint64_t *not, struct ct_row **rowp,
					 unsigned *posp)
{
	struct ct_row *r = head, *last = head, *o;
	unsigned rows = 0;
	uintptr_t v;

	for (; r; last = r, r = ct_row_next(r), rows++)
		for (unsigned e = ct_row_empty(r); e; e &= e - 1) {
			unsigned i = (unsigned)__builtin_ctz(e);

			if (&r->slot[i] == not)
				continue;
			*rowp = r;
			*posp = rows * CT_ROW_SLOTS + i;
			return &r->slot[i];
		}
	o = ct_htab_ovf_new(h);
	if (!o)
		return NULL;
	/* linked empty, keeping last's flag bits (the head's lock) */
	v = atomic_load_explicit(&last->next, memory_order_relaxed);
	atomic_store_explicit(&last->next, (uintptr_t)o | (v & CT_ROW_FLAGS),
			      memory_order_release);
	*rowp = o;
	*posp = rows * CT_ROW_SLOTS;
	return &o->slot[0];
}

/* nf_ct_resolve_clash, with @e the entry found holding one of @rq's
 * tuples (both rows locked). */
static enum ct_rslot_res resolve(const struct ct_rslot_req *rq, struct locked *lr,
				 struct ct_conn *e, struct ct_conn **other)
{
	struct ct_conn *e2;

	*other = e;
	if (!rq->allow_clash)
		return CT_RSLOT_CLASH;
	if (can_merge(e, rq->c))
		return CT_RSLOT_MERGED;
	/* nf_ct_resolve_clash_harder: the reply direction must not clash,
	 * unless with an entry of the same tuples */
	e2 = chain_holds(lr->r, &rq->reply);
	if (e2) {
		*other = e2;
		return can_merge(e2, rq->c) ? CT_RSLOT_MERGED : CT_RSLOT_CLASH;
	}
	*other = NULL;
	return CT_RSLOT_REPLY_ONLY;
}

enum ct_rslot_res ct_rslot_insert(struct ct_thread *thr, struct ct_ns *ns,
				  const struct ct_rslot_req *rq, struct ct_conn **other)
{
	struct ct_table *t = thr->t;
	struct ct_conn *c = rq->c;
	bool two = (c->ext & CT_EXT_NAT) != 0;
	bool wheel = atomic_load_explicit(&t->wheel_on, memory_order_relaxed);
	uint64_t exp = rq->exp, owner_hash = rq->orig.hash;
	struct locked lo, lr, *own = &lo;
	_Atomic uint64_t *s1 = NULL, *s2 = NULL;
	struct ct_row *row1 = NULL, *row2 = NULL;
	unsigned pos1 = 0, pos2 = 0;
	enum ct_rslot_res res = CT_RSLOT_OK;
	struct ct_conn *e;
	int pos = -1;

	*other = NULL;
	lock_two(t, rq->orig.hash, two ? rq->reply.hash : rq->orig.hash, &lo, &lr);
	if (rq->reply_only) {
		/* a restored loser of a clash: its original tuple is the
		 * winner's, its reply tuple must be free */
		if ((e = chain_holds(lr.r, &rq->reply)) != NULL) {
			*other = e;
			res = CT_RSLOT_CLASH;
			goto out;
		}
		if (chain_full(t, lr.r)) {
			res = CT_RSLOT_CHAIN;
			goto out;
		}
		res = CT_RSLOT_REPLY_ONLY;
	} else if ((e = chain_holds(lo.r, &rq->orig)) != NULL ||
	    (e = chain_holds(lr.r, &rq->reply)) != NULL) {
		res = resolve(rq, &lr, e, other);
		if (res != CT_RSLOT_REPLY_ONLY)
			goto out;
	} else if (chain_full(t, lo.r) || (lr.r != lo.r && chain_full(t, lr.r))) {
		res = CT_RSLOT_CHAIN;
		goto out;
	}
	if (res == CT_RSLOT_REPLY_ONLY) {
		/* under its reply tuple only, which is then its primary slot
		 * in every other respect (htab.h) */
		own = &lr;
		owner_hash = rq->reply.hash;
		exp = rq->clash_exp;
		s1 = rslot_free_slot(lr.h, lr.r, NULL, &row1, &pos1);
	} else {
		if (two)
			s2 = rslot_free_slot(lr.h, lr.r, NULL, &row2, &pos2);
		if (!two || s2)
			s1 = rslot_free_slot(lo.h, lo.r, s2, &row1, &pos1);
	}
	if (!s1) {
		res = CT_RSLOT_NOMEM;
		goto out;
	}
	if (res == CT_RSLOT_REPLY_ONLY) {
		c->hash = (uint32_t)rq->reply.hash;
		c->expires = exp;
		atomic_fetch_or_explicit(&c->status, CT_ST_NAT_CLASH, memory_order_relaxed);
	}
	/* CONFIRMED once it is in a row (htab.h's insert says why) */
	atomic_fetch_or_explicit(&c->status, CT_ST_CONFIRMED, memory_order_release);
	if (s2)
		atomic_store_explicit(s2, ct_slot_make(c, rq->reply.hash) | CT_SLOT_RPL |
					  CT_SLOT_SECOND, memory_order_release);
	atomic_store_explicit(s1, ct_slot_bound_new(own->h, own->r, row1, pos1, exp,
						    ct_slot_make(c, owner_hash) |
						    (res == CT_RSLOT_REPLY_ONLY ? CT_SLOT_RPL : 0),
						    wheel ? &pos : NULL),
			      memory_order_release);
	ct_due_lower(&own->r->due_inv, exp);
	ct_due_lower(&own->h->sub_due_inv[(uint64_t)(own->r - own->h->rows) / CT_SUB_ROWS], exp);
out:
	unlock_two(&lo, &lr);
	if (res != CT_RSLOT_OK && res != CT_RSLOT_REPLY_ONLY)
		return res;
	ct_due_lower(&own->h->group_due_inv[(uint64_t)(own->r - own->h->rows) / CT_GROUP_ROWS], exp);
	if (wheel && pos >= 0 && ct_wheel_fits(own->h->n_rows))
		ct_due_note_slot(thr, (uint32_t)(own->r - own->h->rows) |
				 (uint32_t)pos << CT_WH_POS_SHIFT, own->h->gen, exp);
	else if (wheel)
		ct_due_note_row(thr, owner_hash, exp);
	ct_thread_count_add(thr, 1);
	ct_ns_count_add_shard(ns, thr->ns_shard, 1);
	return res;
}
