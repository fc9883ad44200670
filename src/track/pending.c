/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pending.c - the two-step first packet: an entry made and held back
 * (ct_pending_begin, for ct_classify), confirmed (ct_track_confirm, for
 * nat/'s ct_pending_confirm) or dropped (ct_pending_drop).
 *
 * The kernel's order: nf_conntrack_in allocates an unconfirmed conntrack
 * (early drop if the table is full, as create.c's make_room), its tracker
 * runs on it; the NAT hooks set its binding up; nf_conntrack_confirm at
 * the end of the hooks inserts it under both tuples or resolves a clash
 * (table/rslot.c).  A dropped first packet frees its conntrack unseen.
 * Here the entry waits in its thread's scratch (pending.h) until then, so
 * that the allocation from the namespace's slab, the one that fixes the
 * entry's extensions, happens once its binding is known.  Everything the
 * one-call path does at a creation is done the same way (create.c): the
 * tracker, the router's confirmation, the counters, the NEW event after
 * the insert, a namespace's teardown met after it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/rslot.h"
#include "table/thread.h"
#include "track/pending.h"
#include "track/track.h"

_Static_assert(CT_PENDING_OBJ >= sizeof(struct ct_conn) + 64 +
	       sizeof(struct ct_ext_acct) + sizeof(struct ct_ext_tstamp) +
	       sizeof(struct ct_ext_labels) + sizeof(struct ct_ext_tcpf) + CT_CONN_V6_TAIL,
	       "a pending entry holds the largest entry without NAT");

void ct_pending_begin(struct ct_thread *thr, struct ct_ns *ns, const struct ct_settings *set,
		      const struct ct_proto *proto, const struct ct_packet *pkt,
		      const struct pkt_key *k, ct_time_ns now, struct ct_verdict *v)
{
	struct ct_table *t = thr->t;
	struct ct_pending *p = thr->pend;
	struct ct_proto_ctx ctx;
	struct ct_proto_out out;
	struct ct_conn *c;
	unsigned ext = ct_settings_ext_l4(t, set, pkt->tuple.l4);
	size_t size = ct_conn_obj_size(k->tk.key->l3, proto->priv_size, ext);

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p) {
			v->cls = CT_V_DROP;
			v->reason = CT_PR_NO_MEMORY;
			CT_CTR_INC(thr, drop);
			return;
		}
		p->thr = thr;
		thr->pend = p;
	}
	c = ct_pending_conn(p);
	memset(c, 0, size);
	c->hash = (uint32_t)k->tk.hash;
	c->proto = ct_proto_l4_index[pkt->tuple.l4];
	c->ext = (uint8_t)ext;
	ct_conn_set_key(c, k->tk.key);
	memset(&ctx, 0, sizeof(ctx));
	ctx.pkt = pkt;
	ctx.set = set;
	ctx.now = now;
	ctx.dir = CT_DIR_ORIGINAL;
	ctx.is_new = true;
	memset(&out, 0, sizeof(out));
	proto->packet(c, &ctx, &out);
	if (out.verdict == CT_PV_INVALID) {
		set_invalid(thr, ns, v, out.reason ? out.reason : CT_PR_TCP_INVALID_STATE);
		return;
	}
	account_priv(c, pkt, CT_DIR_ORIGINAL, now, proto->priv_size);
	if (ext & CT_EXT_TSTAMP)
		ct_conn_tstamp(c)->first_ns = now;
	p->exp = expiry_at(now, out.timeout_ns);
	c->expires = p->exp;
	atomic_store_explicit(&c->status, out.set_assured ? CT_ST_ASSURED : 0,
			      memory_order_relaxed);
	p->what = CT_EVW_NEW | out.events | (out.set_assured ? CT_EVW_ASSURED : 0);
	p->new_state = c->l4state;
	if (out.verdict == CT_PV_DESTROY) {
		/* made and ended by one packet: reported as the one-call
		 * path reports it (create.c), with nothing to confirm */
		if (ct_events_on(t)) {
			struct ct_conn_info ci;

			ct_conn_fill_info(t, c, &ci);
			ci.status |= CT_ST_CONFIRMED;
			ct_event_emit(t, CT_EV_NEW, p->what, CT_DESTROY_NONE, now, &ci);
			ct_event_emit(t, CT_EV_DESTROY, CT_EVW_DESTROY,
				      CT_DESTROY_PROTOCOL, now, &ci);
		}
		v->cls = CT_V_NEW;
		v->flags = CT_VF_CREATED | CT_VF_DESTROYED;
		CT_CTR_INC(thr, insert);
		CT_CTR_INC(thr, deleted);
		return;
	}
	if (set->router && !ct_track_router_confirms(pkt)) {
		v->cls = CT_V_NEW;
		v->flags = CT_VF_UNCONFIRMED;
		return;
	}
	/* the kernel makes room when it allocates the conntrack, before
	 * its policy has decided */
	if (!ct_track_make_room(thr, ns, set, k->tk.hash, now)) {
		v->cls = CT_V_DROP;
		v->reason = CT_PR_TABLE_FULL;
		CT_CTR_INC(thr, drop);
		CT_NS_ADD(thr, ns, drop, 1);
		return;
	}
	p->active = true;
	p->zone = ns->id;
	p->ns_gen = ns->gen;
	p->hash = k->tk.hash;
	p->now = now;
	p->proto = proto;
	p->ext = ext;
	p->key = *k->tk.key;
	p->has_inv = k->tk.inv != NULL;
	if (k->tk.inv)
		p->inv = *k->tk.inv;
	p->n_victims = 0;
	p->probed_valid = false;
	p->bysrc_valid = false;
	if (!ct_nat_binding_init(&p->b, &p->key))
		p->b.reply = p->key;
	v->cls = CT_V_NEW;
	v->dir = CT_DIR_ORIGINAL;
	v->l4state = p->new_state;
	v->flags |= CT_VF_PENDING;
}

const struct ct_nat_binding *ct_pending_binding(const struct ct_pending *p)
{
	return &p->b;
}

void ct_pending_drop(struct ct_thread *thr, struct ct_pending *p)
{
	if (thr && p && p == thr->pend)
		p->active = false;
}

/* The kernel's l4proto->allow_clash: the protocols whose simultaneous
 * first packets are resolved at confirm rather than dropped. */
static bool allow_clash(uint8_t l4)
{
	return l4 == IPPROTO_UDP || l4 == IPPROTO_UDPLITE || l4 == IPPROTO_ICMP ||
	       l4 == IPPROTO_ICMPV6 || l4 == IPPROTO_GRE;
}

/* The entry's status bits for binding status @bs (ctrack/nat.h's
 * CT_NAT_S_* are in the order of the kernel's IPS_* NAT bits). */
static uint32_t nat_status(uint32_t bs)
{
	return (bs & CT_NAT_S_SRC ? CT_ST_SRC_NAT : 0) |
	       (bs & CT_NAT_S_DST ? CT_ST_DST_NAT : 0) |
	       (bs & CT_NAT_S_SRC_DONE ? CT_ST_SRC_NAT_DONE : 0) |
	       (bs & CT_NAT_S_DST_DONE ? CT_ST_DST_NAT_DONE : 0);
}

/* nf_ct_acct_merge: the packet counted to the entry that took it. */
static void merge_acct(struct ct_conn *win, const struct ct_conn *loser)
{
	struct ct_ext_acct *a = ct_conn_acct(win);
	const struct ct_ext_acct *l = ct_conn_acct((struct ct_conn *)loser);

	if (!a || !l)
		return;
	ct_conn_lock(win);
	if (!(ct_conn_status(win) & CT_ST_DYING)) {
		a->packets[CT_DIR_ORIGINAL]++;
		a->bytes[CT_DIR_ORIGINAL] += l->bytes[CT_DIR_ORIGINAL];
	}
	ct_conn_unlock(win);
}

int ct_track_confirm(struct ct_thread *thr, struct ct_pending *p,
		     const struct ct_confirm_hooks *hooks)
{
	struct ct_table *t = thr->t;
	struct ct_conn *s = ct_pending_conn(p), *c, *other = NULL;
	const struct ct_proto *proto = p->proto;
	bool nat = (p->b.status & CT_NAT_S_MASK) != 0;
	unsigned ext = p->ext | (nat ? CT_EXT_NAT : 0);
	size_t size = ct_conn_obj_size(p->key.l3, proto->priv_size, ext);
	struct ct_rslot_req rq;
	struct ct_tuple rinv;
	struct ct_slab_mag *mag;
	struct ct_ns *ns;
	enum ct_rslot_res res;
	int ret;

	if (!p->active)
		return -EINVAL;
	p->active = false;
	ct_read_lock(thr);
	ns = ct_ns_get(t, p->zone);
	if (!ns || ns->gen != p->ns_gen ||
	    atomic_load_explicit(&ns->state, memory_order_acquire) != CT_NS_ALIVE) {
		/* its namespace went away meanwhile: nothing to insert into
		 * (the kernel's confirm of a dying conntrack) */
		CT_CTR_INC(thr, insert_failed);
		CT_CTR_INC(thr, drop);
		ret = -EEXIST;
		goto out;
	}
	mag = ct_track_mag(thr, ns, ct_conn_class(size));
	c = ct_slab_alloc(&ns->slabs[ct_conn_class(size)], mag);
	if (!c) {
		CT_CTR_INC(thr, drop);
		ret = -ENOMEM;
		goto out;
	}
	/* core, private area and extensions as the tracker left them; the
	 * NAT extension after them, then the key's tail (conn_key.h) */
	memcpy(c, s, sizeof(struct ct_conn) + proto->priv_size + ct_ext_size(p->ext));
	c->ext = (uint8_t)ext;
	ct_conn_set_key(c, &p->key);
	atomic_store_explicit(&c->status, ct_conn_status(s) | nat_status(p->b.status),
			      memory_order_relaxed);
	memset(&rq, 0, sizeof(rq));
	rq.c = c;
	rq.orig.key = &p->key;
	rq.orig.inv = p->has_inv ? &p->inv : NULL;
	rq.orig.hash = p->hash;
	rq.reply.key = &p->b.reply;
	rq.reply.inv = NULL;
	if (p->has_inv) {
		if (!ct_tuple_invert(&p->b.reply, &rinv))
			rinv = p->b.reply;
		rq.reply.inv = &rinv;
	}
	/* a reply tuple that is the inverted original hashes as it; one the
	 * setup probed last (its choice, mostly) was hashed then */
	rq.reply.hash = !nat ? p->hash
		      : p->probed_valid && ct_tuple_equal(&p->probed, &p->b.reply) ? p->probed_hash
		      : ct_hash_tuple(&t->key, &p->b.reply);
	if (nat)
		ct_conn_set_reply(c, &p->b.reply, (uint32_t)rq.reply.hash);
	rq.exp = p->exp;
	rq.clash_exp = expiry_at(p->now, 1000000000ull);
	rq.allow_clash = allow_clash(p->key.l4);
	res = ct_rslot_insert(thr, ns, &rq, &other);
	if (res == CT_RSLOT_OK && nat && hooks && hooks->inserted)
		hooks->inserted(p, c);
	switch (res) {
	case CT_RSLOT_OK:
		ret = CT_TRACK_INSERTED;
		break;
	case CT_RSLOT_REPLY_ONLY:
		CT_CTR_INC(thr, clash_resolve);
		p->b.status |= CT_NAT_S_CLASH;
		ret = CT_TRACK_REPLY_ONLY;
		break;
	case CT_RSLOT_MERGED:
		merge_acct(other, c);
		ct_slab_unused(mag, c);
		CT_CTR_INC(thr, clash_resolve);
		ret = CT_TRACK_MERGED;
		goto out;
	case CT_RSLOT_CHAIN:
		ct_slab_unused(mag, c);
		CT_CTR_INC(thr, chaintoolong);
		CT_CTR_INC(thr, insert_failed);
		ret = -ENOSPC;
		goto out;
	case CT_RSLOT_CLASH:
		ct_slab_unused(mag, c);
		CT_CTR_INC(thr, insert_failed);
		CT_CTR_INC(thr, drop);
		ret = -EEXIST;
		goto out;
	default:
		ct_slab_unused(mag, c);
		CT_CTR_INC(thr, drop);
		ret = -ENOMEM;
		goto out;
	}
	note_due(thr, __atomic_load_n(&c->expires, __ATOMIC_RELAXED));
	CT_NS_ADD(thr, ns, insert, 1);
	CT_CTR_INC(thr, insert);
	if (ct_events_on(t)) {
		struct ct_conn_info ci;

		ct_conn_lock(c);
		ct_conn_fill_info(t, c, &ci);
		ct_conn_unlock(c);
		ct_event_emit(t, CT_EV_NEW, p->what, CT_DESTROY_NONE, p->now, &ci);
	}
	/* a teardown that started meanwhile may have missed it (create.c) */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&ns->state, memory_order_seq_cst) != CT_NS_ALIVE)
		ct_track_kill(thr, c, CT_DESTROY_NS, p->now);
	if (thr->count_delta >= 64)
		ct_thread_fold_count(thr);
	ct_table_after_insert(t);
out:
	if (thr->pending && thr->pending->n >= 16)
		ct_reclaim_flush(thr);
	ct_read_unlock(thr);
	return ret;
}

void ct_track_kill(struct ct_thread *thr, struct ct_conn *c, enum ct_destroy_cause cause,
		   ct_time_ns now)
{
	struct ct_conn_info ci;
	bool done;

	ct_conn_lock(c);
	done = kill(thr, c, cause, &ci);
	ct_conn_unlock(c);
	if (done)
		report_destroy(thr, &ci, cause, now);
}
