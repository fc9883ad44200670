/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * create.c - a connection's first packet: the entry allocated, its
 * tracker run on it, admission (a router's confirmation, room in the
 * namespace and the table, early drop as the kernel's), the insert, the
 * NEW event.
 *
 * The order is the kernel's: the tracker runs on the unpublished entry
 * first (nf_conntrack_in), and only an accepted first packet is inserted
 * (__nf_conntrack_confirm); a packet that both creates and ends its
 * connection is reported as the confirmed entry the kernel would have had
 * and never inserted; a refusal is counted as the kernel counts it.  An
 * insert that finds its tuple already there (another thread came first)
 * sends the packet back to the lookup.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "table/resize.h"
#include "table/thread.h"
#include "track/track.h"

/* Rows the eviction scan looks at, as the kernel's NF_CT_EVICTION_RANGE. */
#define CT_EVICTION_RANGE 8

static void emit(struct ct_thread *thr, struct ct_conn *c, enum ct_event_type type,
		 uint32_t what, enum ct_destroy_cause cause, ct_time_ns now)
{
	struct ct_conn_info ci;

	ct_conn_lock(c);
	ct_conn_fill_info(thr->t, c, &ci);
	ct_conn_unlock(c);
	ct_event_emit(thr->t, type, what, cause, now, &ci);
}

/*
 * Make room as the kernel's early_drop() does: the rows from @hash's on,
 * CT_EVICTION_RANGE of them at most; in each, entries whose time has
 * passed are reaped (counted as expired, not as evictions), and every
 * entry that never became ASSURED is evicted - all of that row's, then
 * the search stops.  An ASSURED entry is never evicted here, whatever its
 * tracker's state (the collector's early drop may take those, expire/gc.c).
 * With @zone_only, only entries of namespace @only_zone are evicted.
 * Returns true if anything was evicted; reaping alone does not count, so
 * the insert that asked is refused, as the kernel's is.
 */
static bool early_drop(struct ct_thread *thr, uint64_t hash, uint16_t only_zone,
		       bool zone_only, ct_time_ns now)
{
	struct ct_htab *h = atomic_load_explicit(&thr->t->htab, memory_order_acquire);
	uint64_t idx = ct_row_index(hash, h->n_rows);

	for (unsigned i = 0; i < CT_EVICTION_RANGE; i++, idx++) {
		unsigned drops = 0;
		struct ct_row *r;

		if (idx >= h->n_rows)
			idx = 0;
		r = &h->rows[idx];
		for (; r; r = ct_row_next(r))
			for (int k = 0; k < CT_ROW_SLOTS; k++) {
				uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_acquire);
				enum ct_destroy_cause cause;
				struct ct_conn_info ci;
				struct ct_conn *c;

				/* an entry is considered at its primary slot */
				if (!s || (s & CT_SLOT_SECOND))
					continue;
				c = ct_slot_conn(s);
				/* the state is read under the entry's lock
				 * (busy entries are not candidates anyway) */
				if (!ct_conn_trylock(c))
					continue;
				if (c->expires <= now)
					cause = CT_DESTROY_TIMEOUT;
				else if (!(ct_conn_status(c) & CT_ST_ASSURED) &&
					 (!zone_only || ct_conn_zone(c) == only_zone))
					cause = CT_DESTROY_EARLY_DROP;
				else
					cause = CT_DESTROY_NONE;
				if (cause == CT_DESTROY_NONE || !kill(thr, c, cause, &ci)) {
					ct_conn_unlock(c);
					continue;
				}
				ct_conn_unlock(c);
				if (cause == CT_DESTROY_EARLY_DROP) {
					struct ct_ns *ns = ct_slab_chunk_of(c)->slab->owner;

					CT_CTR_INC(thr, early_drop);
					CT_NS_ADD(thr, ns, early_drop, 1);
					drops++;
				}
				report_destroy(thr, &ci, cause, now);
			}
		if (drops)
			return true;
	}
	return false;
}

/*
 * Would a Linux router confirm @pkt's new entry?  Its conntrack confirms
 * packets it forwards (at postrouting) and packets it delivers to itself
 * (at local input), never those it drops on the way.  Without knowing the
 * router's own addresses, the rules are those of ip_route_input_slow() and
 * ip6_forward() for everything else:
 *  - delivered locally: limited broadcast 255.255.255.255, and the
 *    multicast groups every Linux router joins (224.0.0.1; ff02::1, and
 *    ff02::2 with forwarding on) - whatever the TTL;
 *  - dropped: multicast or broadcast sources, 0.0.0.0 as a source (other
 *    0.0.0.0/8 addresses are ordinary unicast since Linux 5.3), loopback,
 *    other multicast groups (no multicast routing), IPv6 loopback and
 *    unspecified addresses, an IPv6 link-local source going to any other
 *    destination (ip6_forward answers "not a neighbour" when the packet
 *    would leave by another interface), and anything whose TTL or hop
 *    limit would run out (<= 1);
 *  - forwarded: the rest, including an IPv6 link-local destination: its
 *    route is scoped to the incoming interface, so ip6_forward sends it
 *    back out there with a redirect, whatever its source (the kernel
 *    oracle confirmed a link-local self-echo this way);
 */
static inline __attribute__((always_inline)) bool router_confirms(const struct ct_packet *pkt)
{
	const struct ct_tuple *t = &pkt->tuple;

	if (t->l3 == CT_L3_IPV4) {
		uint32_t s = ntohl(t->src.ip4), d = ntohl(t->dst.ip4);

		if ((s >> 28) == 0xe || s == 0xffffffffu)
			return false;
		if (d == 0xffffffffu || d == 0xe0000001u)
			return true;
		if (s == 0 || (d >> 28) == 0xe || (d >> 24) == 0 ||
		    (s >> 24) == 127 || (d >> 24) == 127)
			return false;
		return pkt->ttl > 1;
	}
	{
		static const uint8_t loop[16] = { [15] = 1 };
		static const uint8_t unspec[16];
		static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
		static const uint8_t all_routers[16] = { 0xff, 0x02, [15] = 2 };
		const uint8_t *s = t->src.ip6, *d = t->dst.ip6;

		if (s[0] == 0xff)
			return false;
		if (!memcmp(d, all_nodes, 16) || !memcmp(d, all_routers, 16))
			return true;
		if (d[0] == 0xff)
			return false;
		if (!memcmp(s, loop, 16) || !memcmp(d, loop, 16) ||
		    !memcmp(s, unspec, 16) || !memcmp(d, unspec, 16))
			return false;
		if (d[0] == 0xfe && (d[1] & 0xc0) == 0x80)
			return pkt->ttl > 1;    /* back out the way it came */
		if (s[0] == 0xfe && (s[1] & 0xc0) == 0x80)
			return false;
		return pkt->ttl > 1;
	}
}

/* Is there room for one more entry in @ns (evicting if needed)? */
static inline __attribute__((always_inline)) bool make_room(struct ct_thread *thr, struct ct_ns *ns,
		      const struct ct_settings *set, uint64_t hash, ct_time_ns now)
{
	struct ct_table *t = thr->t;
	/* ct_ns_set_settings(zone 0) may change it meanwhile */
	uint64_t max = __atomic_load_n(&t->max, __ATOMIC_RELAXED);

	if (set->max && ns->id != 0 &&
	    ct_ns_count(ns) >= (int64_t)set->max &&
	    !early_drop(thr, hash, ns->id, true, now))
		return false;
	if (max) {
		int64_t n = atomic_load_explicit(&t->count, memory_order_relaxed) +
			    thr->count_delta;
		if (n >= (int64_t)max && !early_drop(thr, hash, 0, false, now)) {
			/* the collector's next pass drops early (expire/gc.c);
			 * read first: a full table refuses every insert */
			if (!atomic_load_explicit(&t->gc_early_drop, memory_order_relaxed))
				atomic_store_explicit(&t->gc_early_drop, true,
						      memory_order_relaxed);
			return false;
		}
	}
	return true;
}

static inline __attribute__((always_inline)) struct ct_slab_mag *mag_for(struct ct_thread *thr, struct ct_ns *ns,
				   unsigned cls)
{
	struct ct_slab_mag *m = &thr->mags[cls];

	if (m->slab != &ns->slabs[cls] || m->slab_gen != ns->gen || m->zone != ns->id) {
		if (m->n) {
			/* hand cached objects back if their namespace lives,
			 * under one lock: traffic that alternates between
			 * zones switches magazines at every turn */
			struct ct_ns *old = ct_ns_get(thr->t, m->zone);
			if (old && old->gen == m->slab_gen)
				ct_slab_free_bulk(m->slab, m->objs, m->n);
			m->n = 0;
		}
		m->slab = &ns->slabs[cls];
		m->slab_gen = ns->gen;
		m->zone = ns->id;
	}
	return m;
}

/*
 * ct_track_create (track.h).
 */
bool ct_track_create(struct ct_thread *thr, struct ct_ns *ns, const struct ct_settings *set,
		     const struct ct_proto *proto, const struct ct_packet *pkt,
		     const struct pkt_key *k, ct_time_ns now, struct ct_verdict *v,
		     struct burst_ctx *bc, int *repeats)
{
	struct ct_table *t = thr->t;
	struct ct_proto_ctx ctx;
	struct ct_proto_out out;
	struct ct_conn *c;
	uint32_t what;
	uint64_t exp;
	unsigned ext = ct_settings_ext_l4(t, set, pkt->tuple.l4);
	size_t size = ct_conn_obj_size(k->tk.key->l3, proto->priv_size, ext);
	unsigned cls = ct_conn_class(size);
	struct ct_slab_mag *mag = mag_for(thr, ns, cls);
	struct ct_conn *clash = NULL;
	enum ct_htab_ins res;
	uint8_t new_state;

	/* the counters of a refusal are the kernel's: no entry to be had
	 * (no memory, or a full table with nothing to evict) is `drop`
	 * (nf_conntrack_in, "too stressed to deal"); an entry that cannot
	 * be inserted (the chain limit) is `insert_failed` and
	 * `chaintoolong` (__nf_conntrack_confirm), not `drop` */
	c = ct_slab_alloc(&ns->slabs[cls], mag);
	if (!c) {
		v->cls = CT_V_DROP;
		v->reason = CT_PR_NO_MEMORY;
		CT_CTR_INC(thr, drop);
		return false;
	}
	c->hash = (uint32_t)k->tk.hash;
	c->proto = ct_proto_l4_index[pkt->tuple.l4];
	c->ext = (uint8_t)ext;
	ct_conn_set_key(c, k->tk.key);   /* after proto and ext: they place it */
	memset(&ctx, 0, sizeof(ctx));
	ctx.pkt = pkt;
	ctx.set = set;
	ctx.now = now;
	ctx.dir = CT_DIR_ORIGINAL;
	ctx.is_new = true;
	ctx.status = 0;
	memset(&out, 0, sizeof(out));
	proto->packet(c, &ctx, &out);
	if (out.verdict == CT_PV_INVALID) {
		ct_slab_unused(mag, c);
		set_invalid(thr, ns, v, out.reason ? out.reason : CT_PR_TCP_INVALID_STATE);
		return false;
	}
	/* the entry's tracker is @proto: its extensions follow its area */
	account_priv(c, pkt, CT_DIR_ORIGINAL, now, proto->priv_size);
	if (ext & CT_EXT_TSTAMP)
		ct_conn_tstamp(c)->first_ns = now;
	exp = expiry_at(now, out.timeout_ns);
	c->expires = exp;
	/* CONFIRMED comes with the insertion (table/htab.h) */
	atomic_store_explicit(&c->status, out.set_assured ? CT_ST_ASSURED : 0,
			      memory_order_relaxed);
	what = CT_EVW_NEW | out.events | (out.set_assured ? CT_EVW_ASSURED : 0);
	/* the verdict reports the state as created: once the entry is in
	 * its row, other threads may change it under its lock */
	new_state = c->l4state;
	if (out.verdict == CT_PV_DESTROY) {
		/* created and ended by one packet: never inserted, but
		 * reported as the confirmed entry the kernel would have */
		if (ct_events_on(t)) {
			struct ct_conn_info ci;

			ct_conn_fill_info(t, c, &ci);
			ci.status |= CT_ST_CONFIRMED;
			if (ct_events_want(t, CT_EV_NEW))
				ct_event_emit(t, CT_EV_NEW, what, CT_DESTROY_NONE, now, &ci);
			ct_event_emit(t, CT_EV_DESTROY, CT_EVW_DESTROY,
				      CT_DESTROY_PROTOCOL, now, &ci);
		}
		ct_slab_unused(mag, c);
		v->cls = CT_V_NEW;
		v->flags = CT_VF_CREATED | CT_VF_DESTROYED;
		CT_CTR_INC(thr, insert);
		CT_CTR_INC(thr, deleted);
		return false;
	}
	if (set->router && !router_confirms(pkt)) {
		/* the router drops it before confirmation: no entry, no event */
		ct_slab_unused(mag, c);
		v->cls = CT_V_NEW;
		v->flags = CT_VF_UNCONFIRMED;
		return false;
	}
	if (!make_room(thr, ns, set, k->tk.hash, now)) {
		ct_slab_unused(mag, c);
		v->cls = CT_V_DROP;
		v->reason = CT_PR_TABLE_FULL;
		CT_CTR_INC(thr, drop);
		CT_NS_ADD(thr, ns, drop, 1);
		return false;
	}
	res = ct_table_insert(thr, ns, c, &k->tk, exp, &clash);
	switch (res) {
	case CT_INS_OK:
		break;
	case CT_INS_CLASH:
		/* another thread created it first: use theirs */
		ct_slab_unused(mag, c);
		CT_CTR_INC(thr, clash_resolve);
		v->flags |= CT_VF_CLASH;
		if (++*repeats > 2) {
			v->cls = CT_V_DROP;
			v->reason = CT_PR_TABLE_FULL;
			CT_CTR_INC(thr, drop);
			return false;
		}
		return true;
	case CT_INS_CHAIN:
		ct_slab_unused(mag, c);
		v->cls = CT_V_DROP;
		v->reason = CT_PR_CHAIN_TOO_LONG;
		CT_CTR_INC(thr, chaintoolong);
		CT_CTR_INC(thr, insert_failed);
		return false;
	default:
		ct_slab_unused(mag, c);
		v->cls = CT_V_DROP;
		v->reason = CT_PR_NO_MEMORY;
		CT_CTR_INC(thr, drop);
		return false;
	}
	note_due(thr, exp);
	CT_NS_ADD(thr, ns, insert, 1);
	CT_CTR_INC(thr, insert);
	v->cls = CT_V_NEW;
	v->dir = CT_DIR_ORIGINAL;
	v->l4state = new_state;
	v->flags |= CT_VF_CREATED;
	if (ct_events_want(t, CT_EV_NEW))
		emit(thr, c, CT_EV_NEW, what, CT_DESTROY_NONE, now);
	/* a namespace teardown that started meanwhile may have missed us:
	 * the seq_cst pair with ns/teardown.c's store of DYING makes one side see
	 * the other */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&ns->state, memory_order_seq_cst) != CT_NS_ALIVE) {
		struct ct_conn_info ci;
		bool done;

		ct_conn_lock(c);
		done = kill(thr, c, CT_DESTROY_NS, &ci);
		ct_conn_unlock(c);
		if (done)
			report_destroy(thr, &ci, CT_DESTROY_NS, now);
	}
	bc->conn = c;
	bc->dir = CT_DIR_ORIGINAL;
	bc->ins_rows[(k->tk.hash >> 6) & 3] |= 1ull << (k->tk.hash & 63);
	if (thr->count_delta >= 64)
		ct_thread_fold_count(thr);
	ct_table_after_insert(t);
	return false;
}

/* The helpers above for the two-step first packet (track/pending.c) and
 * the record layer's imports (ct_track_mag), out of line so that the
 * one-call path keeps its own inlined copies. */
struct ct_slab_mag *ct_track_mag(struct ct_thread *thr, struct ct_ns *ns, unsigned cls)
{
	return mag_for(thr, ns, cls);
}

bool ct_track_router_confirms(const struct ct_packet *pkt)
{
	return router_confirms(pkt);
}

bool ct_track_make_room(struct ct_thread *thr, struct ct_ns *ns,
			const struct ct_settings *set, uint64_t hash, ct_time_ns now)
{
	return make_room(thr, ns, set, hash, now);
}
