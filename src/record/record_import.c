/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_import.c - an entry made from a record.
 *
 * The steps are a creation's (track/create.c) with the tracker's first
 * packet replaced by the record: the record checked whole
 * (record_check.c), the zone's namespace and settings, an object of the
 * size its protocol and the zone's extensions give taken from the
 * thread's magazine, the key, the tracker's private area written by the
 * tracker itself (proto.h's from_record), counters, times, labels, the
 * expiry moved by the time that passed since the record's moment, and the
 * insert (table/member.h) that refuses a clash.  Nothing is published
 * before the entry is whole.
 *
 * A NATed record's entry is a confirm's (track/pending.c): the NAT
 * extension holds its reply tuple, the insert puts it under both keys with
 * the two-row lock and clash check of table/rslot.c (never merging: a
 * restore refuses a key that is taken), and nat/nat_table.h indexes it
 * where a confirm would have, so that the source index and the port map
 * count restored mappings as their own.
 *
 * What is not a creation's: a record whose time ran out is never
 * inserted, but counted as expired and announced with the DESTROY the
 * collector would have given it (it was alive in the table the record
 * came from, and ends here); a full table refuses the record rather than
 * evict (a restore must not drop what it restored a moment before); a
 * restore announces nothing and counts no insert (the counters the
 * entries were made under come back with the state file), while a commit
 * (CT_RECORD_F_COMMIT: a conntrackd peer's connection) is a new entry of
 * this table - counted, and announced with NEW, as the kernel announces
 * what ctnetlink creates.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "nat/nat_table.h"
#include "record/record_priv.h"
#include "table/conn_info.h"
#include "table/htab.h"
#include "table/resize.h"
#include "table/rslot.h"
#include "table/thread.h"
#include "track/track.h"

static int refuse(enum ct_record_reason *why, enum ct_record_reason r, int err)
{
	if (why)
		*why = r;
	return err;
}

/* The entry's contents but the key, from @rec (checked), whose moment was
 * @base in the table's clock. */
static void fill_entry(struct ct_conn *c, const struct ct_proto *p,
		       const struct ct_record *rec, const struct ct_settings *set,
		       ct_time_ns base, ct_time_ns now, bool commit)
{
	struct ct_ext_acct *a = ct_conn_acct(c);
	struct ct_ext_tstamp *ts = ct_conn_tstamp(c);
	struct ct_ext_labels *lb = ct_conn_labels(c);

	c->l4state = rec->l4state;
	c->mark = rec->mark;
	if (p->from_record)
		p->from_record(c, &rec->proto, base, commit, set);
	if (a && !commit && (rec->has & CT_RECORD_HAS_ACCT)) {
		memcpy(a->packets, rec->packets, sizeof(a->packets));
		memcpy(a->bytes, rec->bytes, sizeof(a->bytes));
	}
	if (ts && commit) {
		/* ctnetlink_create_conntrack: nf_ct_tstamp_ext_add, start
		 * now */
		ts->first_ns = now;
		ts->last_ns = now;
	} else if (ts && (rec->has & CT_RECORD_HAS_TSTAMP)) {
		ts->first_ns = base > rec->first_seen_ago_ns ? base - rec->first_seen_ago_ns : 0;
		ts->last_ns = base > rec->last_seen_ago_ns ? base - rec->last_seen_ago_ns : 0;
	}
	if (lb && (rec->has & CT_RECORD_HAS_LABELS))
		memcpy(lb->bits, rec->labels, sizeof(lb->bits));
}

/* Is there room for one more entry in @ns and the table?  As make_room
 * in track/create.c, without its early drop. */
static bool has_room(struct ct_thread *thr, struct ct_ns *ns, const struct ct_settings *set)
{
	struct ct_table *t = thr->t;
	uint64_t max = __atomic_load_n(&t->max, __ATOMIC_RELAXED);

	if (set->max && ns->id != 0 && ct_ns_count(ns) >= (int64_t)set->max)
		return false;
	return !max || atomic_load_explicit(&t->count, memory_order_relaxed) +
		       thr->count_delta < (int64_t)max;
}

/*
 * The insert of a NATed entry (or of a restored IPS_NAT_CLASH one, under
 * its reply tuple only) through table/rslot.c, as a confirm's, with its
 * answers put as ct_table_insert's.  No clash is resolved by merging: a
 * key held by a live entry refuses the record.
 */
static int insert_nat(struct ct_thread *thr, struct ct_ns *ns, struct ct_conn *c,
		      const struct ct_record *rec, uint64_t hash, uint64_t rhash, uint64_t exp)
{
	bool icmp = rec->orig.l4 == IPPROTO_ICMP || rec->orig.l4 == IPPROTO_ICMPV6;
	struct ct_tuple oinv, rinv;
	struct ct_rslot_req rq;
	struct ct_conn *other = NULL;

	memset(&rq, 0, sizeof(rq));
	rq.c = c;
	rq.orig.key = &rec->orig;
	rq.orig.hash = hash;
	rq.reply.key = &rec->reply;
	rq.reply.hash = rhash;
	if (icmp) {
		/* the inverses a lookup compares with (table/htab.h);
		 * ct_record_check made sure both exist */
		if (!ct_tuple_invert(&rec->orig, &oinv) || !ct_tuple_invert(&rec->reply, &rinv))
			return CT_INS_CLASH;
		rq.orig.inv = &oinv;
		rq.reply.inv = &rinv;
	}
	rq.exp = exp;
	rq.clash_exp = exp;
	rq.reply_only = (rec->status & CT_ST_NAT_CLASH) != 0;
	switch (ct_rslot_insert(thr, ns, &rq, &other)) {
	case CT_RSLOT_OK:
	case CT_RSLOT_REPLY_ONLY:
		return CT_INS_OK;
	case CT_RSLOT_CHAIN:
		return CT_INS_CHAIN;
	case CT_RSLOT_NOMEM:
		return CT_INS_NOMEM;
	default:
		return CT_INS_CLASH;
	}
}

/* The part under the read-side section.  Kept out of line: inlined into
 * ct_record_import, GCC 12 under -fsanitize=thread leaves its fence
 * uninstrumented and rejects it (-Wtsan, an error with -Werror) - the
 * same fence in track/create.c's out-of-line path is accepted; one call a
 * record costs nothing next to the row's cache miss. */
static __attribute__((noinline)) int import_locked(struct ct_thread *thr, const struct ct_record *rec,
			 ct_time_ns now, uint64_t elapsed_ns, bool commit,
			 enum ct_record_reason *why)
{
	struct ct_table *t = thr->t;
	const struct ct_tuple *orig = &rec->orig;
	struct ct_ns *ns = ct_ns_get(t, orig->zone);
	const struct ct_proto *p = ct_proto_find(orig->l4);
	const struct ct_settings *set;
	struct ct_table_key k;
	struct ct_slab_mag *mag;
	struct ct_conn *c, *clash = NULL;
	struct ct_conn_info ci;
	ct_time_ns base;
	uint64_t hash, rhash = 0, exp;
	unsigned ext, cls;
	size_t size;
	bool icmp = orig->l4 == IPPROTO_ICMP || orig->l4 == IPPROTO_ICMPV6;
	bool nat = (rec->status & CT_ST_NAT_MASK) != 0;
	uint32_t status = rec->status & ~(uint32_t)CT_ST_CONFIRMED;
	int res;

	if (!ns || atomic_load_explicit(&ns->state, memory_order_acquire) != CT_NS_ALIVE)
		return refuse(why, CT_RECORD_R_ZONE, -ENOENT);
	if (!t->cfg.nat) {
		/* a binding this table cannot keep is refused, never
		 * imported without it; a null binding is a plain entry */
		if (nat)
			return refuse(why, CT_RECORD_R_NAT_OFF, -EOPNOTSUPP);
		status &= ~(uint32_t)CT_ST_NAT_DONE_MASK;
	}
	set = ct_ns_settings(ns);
	ext = ct_settings_ext(t, set) | (nat ? CT_EXT_NAT : 0);
	size = ct_conn_obj_size(orig->l3, p->priv_size, ext);
	cls = ct_conn_class(size);
	mag = ct_track_mag(thr, ns, cls);
	c = ct_slab_alloc(&ns->slabs[cls], mag);
	if (!c)
		return refuse(why, CT_RECORD_R_NOMEM, -ENOMEM);
	hash = ct_hash_tuple(&t->key, orig);
	c->hash = (uint32_t)hash;
	c->proto = ct_proto_l4_index[orig->l4];
	c->ext = (uint8_t)ext;
	ct_conn_set_key(c, orig);        /* after proto and ext: they place it */
	if (nat) {
		rhash = ct_hash_tuple(&t->key, &rec->reply);
		ct_conn_set_reply(c, &rec->reply, (uint32_t)rhash);
	}
	base = now > elapsed_ns ? now - elapsed_ns : 0;
	fill_entry(c, p, rec, set, base, now, commit);
	exp = expiry_at(base, rec->timeout_ns);
	c->expires = exp;
	atomic_store_explicit(&c->status, status, memory_order_relaxed);

	if (rec->timeout_ns <= elapsed_ns) {
		/* its time ran out while it was away: what the collector
		 * would have done, it does now */
		if (ct_events_on(t)) {
			ct_conn_fill_info(t, c, &ci);
			ci.status |= CT_ST_CONFIRMED;
			if (commit)
				ct_event_emit(t, CT_EV_NEW, CT_EVW_NEW, CT_DESTROY_NONE, now, &ci);
			ct_event_emit(t, CT_EV_DESTROY, CT_EVW_DESTROY, CT_DESTROY_TIMEOUT,
				      now, &ci);
		}
		if (commit) {
			CT_CTR_INC(thr, insert);
			CT_NS_ADD(thr, ns, insert, 1);
		}
		CT_CTR_INC(thr, expired);
		CT_NS_ADD(thr, ns, expired, 1);
		ct_slab_unused(mag, c);
		return 0;
	}
	if (!has_room(thr, ns, set)) {
		ct_slab_unused(mag, c);
		return refuse(why, CT_RECORD_R_FULL, -ENOSPC);
	}
	if (nat || (status & CT_ST_NAT_CLASH))
		res = insert_nat(thr, ns, c, rec, hash, nat ? rhash : hash, exp);
	else {
		/* ICMP queries carry their inverse (the reply type differs);
		 * every other protocol's reply is the tuple swapped
		 * (table/htab.h) */
		k = (struct ct_table_key){ orig, icmp ? &rec->reply : NULL, hash };
		res = ct_table_insert(thr, ns, c, &k, exp, &clash);
	}
	switch (res) {
	case CT_INS_OK:
		break;
	case CT_INS_CLASH:
		ct_slab_unused(mag, c);
		return refuse(why, CT_RECORD_R_EXISTS, -EEXIST);
	case CT_INS_CHAIN:
		ct_slab_unused(mag, c);
		return refuse(why, CT_RECORD_R_CHAIN, -ENOSPC);
	default:
		ct_slab_unused(mag, c);
		return refuse(why, CT_RECORD_R_NOMEM, -ENOMEM);
	}
	note_due(thr, exp);
	/* indexed as a confirm indexes (not the loser of a clash, which a
	 * confirm leaves out too); without memory for the index the entry
	 * is in and tracks as it should, only a later setup's reuse of its
	 * mapping is lost (nat_table.h) */
	if (nat && !(status & CT_ST_NAT_CLASH))
		(void)ct_nat_table_adopt(t, c);
	if (commit) {
		CT_CTR_INC(thr, insert);
		CT_NS_ADD(thr, ns, insert, 1);
		if (ct_events_on(t)) {
			ct_conn_lock(c);
			ct_conn_fill_info(t, c, &ci);
			ct_conn_unlock(c);
			ct_event_emit(t, CT_EV_NEW, CT_EVW_NEW, CT_DESTROY_NONE, now, &ci);
		}
	}
	/* a teardown that started meanwhile may have missed it: as a
	 * creation does (track/create.c) */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&ns->state, memory_order_seq_cst) != CT_NS_ALIVE) {
		bool done;

		ct_conn_lock(c);
		done = kill(thr, c, CT_DESTROY_NS, &ci);
		ct_conn_unlock(c);
		if (done)
			report_destroy(thr, &ci, CT_DESTROY_NS, now);
	}
	if (thr->count_delta >= 64)
		ct_thread_fold_count(thr);
	ct_table_after_insert(t);
	return 1;
}

int ct_record_import(struct ct_thread *thr, const struct ct_record *rec,
		     ct_time_ns now, uint64_t elapsed_ns, unsigned flags,
		     enum ct_record_reason *why)
{
	enum ct_record_reason r;
	int ret;

	if (why)
		*why = CT_RECORD_OK;
	if (!thr || !rec)
		return -EINVAL;
	if ((r = ct_record_check(rec)) != CT_RECORD_OK)
		return refuse(why, r, -EINVAL);
	ct_read_lock(thr);
	ret = import_locked(thr, rec, now, elapsed_ns, flags & CT_RECORD_F_COMMIT, why);
	ct_read_unlock(thr);
	return ret;
}

/*
 * ct_record_prefetch (record_priv.h): what the insert of @rec will touch
 * - its row, the row's sub bound and, with the wheel, its slot bounds -
 * asked for ahead, as the burst's stages do for packets (track/track.c):
 * at a million entries each is a miss, and a restore that imports one
 * record after another waits for them one by one.
 */
void ct_record_prefetch(struct ct_thread *thr, const struct ct_record *rec)
{
	struct ct_table *t = thr->t;
	struct ct_htab *h;
	struct ct_row *r;
	uint64_t ri;

	if (rec->orig.l3 != CT_L3_IPV4 && rec->orig.l3 != CT_L3_IPV6)
		return;
	ct_read_lock(thr);
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	r = ct_htab_row(h, ct_hash_tuple(&t->key, &rec->orig));
	ri = (uint64_t)(r - h->rows);
	__builtin_prefetch(r, 1);
	__builtin_prefetch(&h->sub_due_inv[ri / CT_SUB_ROWS], 1);
	if (atomic_load_explicit(&t->wheel_on, memory_order_relaxed))
		__builtin_prefetch(ct_slot_due(h, ri), 1);
	ct_read_unlock(thr);
}
