/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * track.c - one packet through the tracker: classify, look up, run the
 * protocol's state machine, create, account, report.
 *
 * The order is nf_conntrack_in()'s: packet-level checks (not for us,
 * invalid headers, bad checksums), ICMP errors matched to the connection
 * they quote (RELATED, no entry of their own), then lookup of the tuple in
 * either direction; a miss creates an entry that the tracker initialises
 * from the first packet, and only an accepted first packet is inserted
 * ("confirmed").  SEEN_REPLY is set after the tracker ran, as the kernel
 * does, so a tracker sees the bits as they were before the packet.
 *
 * Events of one packet are merged and delivered once, after every lock is
 * released, like the kernel's event cache.
 *
 * ct_process_burst() hides memory latency as DPDK's bulk lookup does: it
 * hashes every key, prefetches every row, then prefetches the entries
 * whose signatures match, and only then runs the packets in order, by
 * which time their rows and entries are in cache.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "ctrack/nat.h"
#include "proto/icmp.h"
#include "proto/udp.h"
#include "table/due.h"
#include "table/reclaim.h"
#include "table/thread.h"
#include "track/track.h"

/* IPv4 keys a burst hashes before it prefetches their rows */
#define CT_HASH_CHUNK 8

/* Report an event about @c, which the caller does not hold locked. */
static bool is_icmp(const struct ct_packet *pkt)
{
	return (pkt->tuple.l4 == IPPROTO_ICMP && pkt->tuple.l3 == CT_L3_IPV4) ||
	       (pkt->tuple.l4 == IPPROTO_ICMPV6 && pkt->tuple.l3 == CT_L3_IPV6);
}

/*
 * The kernel counts ICMP errors it cannot relate, malformed ICMP and ICMP
 * with bad checksums under `error`, not `invalid` (proto_icmp.h); the
 * packet is INVALID to the rule set all the same.
 */
static void set_invalid_or_error(struct ct_thread *thr, struct ct_ns *ns,
				 struct ct_verdict *v, const struct ct_packet *pkt,
				 uint8_t reason)
{
	bool err = reason == CT_PR_ICMP_BAD || reason == CT_PR_ICMP_NO_MATCH ||
		   (is_icmp(pkt) && (reason == CT_PR_L4_TRUNCATED ||
				     reason == CT_PR_L4_BAD_CSUM));

	if (!err) {
		set_invalid(thr, ns, v, reason);
		return;
	}
	v->cls = CT_V_INVALID;
	v->reason = reason;
	CT_CTR_INC(thr, error);
	if (reason < CT_PR_MAX)
		CT_CTR_INC(thr, invalid_by_reason[reason]);
	if (ns)
		CT_NS_ADD(thr, ns, error, 1);
}

/*
 * ct_packet_l4_csum_ok() with its commonest answer first: a UDP checksum
 * of zero means "none" (checksum.c), whatever else the packet is.
 */
static inline bool l4_csum_ok(const struct ct_packet *pkt)
{
	if (pkt->tuple.l4 == IPPROTO_UDP && pkt->l4 && pkt->l4_caplen >= 8 &&
	    (pkt->l4[6] | pkt->l4[7]) == 0)
		return true;
	return ct_packet_l4_csum_ok(pkt);
}

/*
 * Run @proto's tracker on an entry that exists: UDP's rule inline
 * (proto_udp.h), the commonest established lookup, without the indirect
 * call; the rest through the tracker table.
 */
static inline __attribute__((always_inline)) void
track_packet(const struct ct_proto *proto, struct ct_conn *c,
	     const struct ct_proto_ctx *ctx, struct ct_proto_out *out)
{
	if (proto == &ct_proto_udp)
		ct_udp_packet(c, ctx, out);
	else
		proto->packet(c, ctx, out);
}

/* Account a packet to @c (entry lock held). */
static inline __attribute__((always_inline)) void account(struct ct_conn *c, const struct ct_packet *pkt,
		    enum ct_dir dir, ct_time_ns now)
{
	struct ct_ext_acct *a = ct_conn_acct(c);
	struct ct_ext_tstamp *ts = ct_conn_tstamp(c);
	struct ct_ext_tcpf *tf = ct_conn_tcpf(c);

	if (a) {
		a->packets[dir]++;
		a->bytes[dir] += pkt->l3_len;
	}
	if (ts)
		ts->last_ns = now;
	if (tf)         /* issue 26: only TCP entries have it */
		tf->flags[dir] |= pkt->u.tcp.flags;
}

/* issue 26: the TCP flags of a counted packet, OR-ed into its direction's
 * (entry lock held); out of line, for account_priv (track.h). */
__attribute__((noinline, cold)) void ct_track_account_tcpf(struct ct_conn *c,
		const struct ct_packet *pkt, enum ct_dir dir)
{
	ct_conn_tcpf(c)->flags[dir] |= pkt->u.tcp.flags;
}

/* Apply a tracker's answer for an existing entry (lock held).  Returns the
 * events to report; sets *lowered when the expiry got shorter.  @status is
 * the entry's status read under its lock before the tracker ran: ASSURED
 * and SEEN_REPLY are set only here, under that lock, so it still tells
 * which of them are set (and were it stale, the test-and-set below would
 * still report each bit once). */
static inline __attribute__((always_inline)) uint32_t apply(struct ct_thread *thr, struct ct_conn *c,
		      const struct ct_packet *pkt, enum ct_dir dir,
		      const struct ct_proto_out *out, ct_time_ns now,
		      bool *lowered, uint32_t status, size_t priv_size)
{
	uint32_t what = out->events;

	if (out->verdict == CT_PV_ACCEPT) {
		uint64_t exp = expiry_at(now, out->timeout_ns);

		account_priv(c, pkt, dir, now, priv_size);
		if (exp < c->expires) {
			*lowered = true;
			note_due(thr, exp);
		}
		/* atomic: the collector and migration read it unlocked */
		__atomic_store_n(&c->expires, exp, __ATOMIC_RELAXED);
	} else {
		struct ct_ext_tstamp *ts = ct_conn_tstamp(c);
		if (ts)
			ts->last_ns = now;
	}
	/* bits are only ever set: one already there needs no locked
	 * read-modify-write to be found set */
	if (out->set_assured && !(status & CT_ST_ASSURED) &&
	    !ct_conn_test_and_set(c, CT_ST_ASSURED))
		what |= CT_EVW_ASSURED;
	if (dir == CT_DIR_REPLY && !(status & CT_ST_SEEN_REPLY) &&
	    !ct_conn_test_and_set(c, CT_ST_SEEN_REPLY))
		what |= CT_EVW_REPLY;
	return what;
}

static void related(struct ct_thread *thr, struct ct_ns *ns,
		    const struct ct_packet *pkt, struct ct_verdict *v,
		    struct ct_conn **seen)
{
	struct ct_tuple key, inv, reply;
	struct ct_conn *c;
	enum ct_dir h, inner_dir, err_dir;
	uint8_t reason = 0;

	if (!ct_icmp_error_key(pkt, &key, &reason)) {
		set_invalid_or_error(thr, ns, v, pkt, reason);
		return;
	}
	if (!ct_tuple_invert(&key, &inv))
		inv = key;
	/* the kernel looks up the quoted tuple's inverse: found as an
	 * entry's original or reply tuple (a NAT entry's reply tuple is not
	 * its inverted original), in direction h; the quoted packet went
	 * the other way */
	c = ct_table_find(thr, ct_hash_tuple(&thr->t->key, &key), &inv, &key, &h);
	if (!c || (ct_conn_status(c) & CT_ST_DYING)) {
		set_invalid_or_error(thr, ns, v, pkt, CT_PR_ICMP_NO_MATCH);
		return;
	}
	inner_dir = h == CT_DIR_ORIGINAL ? CT_DIR_REPLY : CT_DIR_ORIGINAL;
	ct_conn_tuple(c, &key);
	ct_conn_reply_of(c, &key, &reply);
	if (!ct_icmp_error_accept(pkt, &key, &reply, inner_dir, &err_dir, &reason)) {
		set_invalid_or_error(thr, ns, v, pkt, reason);
		return;
	}
	v->cls = CT_V_RELATED;
	v->dir = (uint8_t)err_dir;
	/* l4state is written under the entry's lock (base/conn.h) */
	ct_conn_lock(c);
	v->l4state = c->l4state;
	ct_conn_unlock(c);
	CT_CTR_INC(thr, related);
	if (seen)
		*seen = c;
}

/*
 * process_one - the whole path for one packet, inside a read-side
 * section.  @k holds the precomputed key, inverse and hash - except for
 * a single packet (@single, the same key, writable; NULL in a burst),
 * whose hash is computed here once the checks before the lookup have
 * passed: a packet with a bad checksum never pays for it.  Inline in
 * the burst loop: a call per packet, with its frame and spills, cost more
 * than the larger loop (creation, the rare long path, is out of line).
 */
static inline __attribute__((always_inline)) void
process_one(struct ct_thread *thr, const struct ct_packet *pkt,
	    const struct pkt_key *k, ct_time_ns now,
	    struct ct_verdict *v, struct burst_ctx *bc, struct pkt_key *single,
	    const bool pend)
{
	struct ct_table *t = thr->t;
	const struct ct_proto *proto;
	const struct ct_settings *set;
	struct ct_proto_ctx ctx;
	struct ct_proto_out out;
	struct ct_ns *ns;
	struct ct_conn *c, *cached = k->same ? bc->conn : NULL, *cand = k->cand;
	enum ct_dir dir;
	uint32_t what;
	bool lowered, quick;
	int repeats = 0;

	bc->conn = NULL;
	memset(v, 0, sizeof(*v));
	v->zone = pkt->tuple.zone;
	CT_CTR_INC(thr, packets);
	if (pkt->kind != CT_PKT_TRACKABLE) {
		if (pkt->kind == CT_PKT_INVALID) {
			set_invalid_or_error(thr, ct_ns_get(t, pkt->tuple.zone), v,
					     pkt, pkt->reason);
		} else {
			v->cls = CT_V_UNTRACKED;
			CT_CTR_INC(thr, untracked);
		}
		return;
	}
	ns = ct_ns_get(t, pkt->tuple.zone);
	if (!ns) {
		set_invalid(thr, NULL, v, CT_PR_NS_UNKNOWN);
		return;
	}
	if (atomic_load_explicit(&ns->state, memory_order_acquire) != CT_NS_ALIVE) {
		set_invalid(thr, NULL, v, CT_PR_NS_DYING);
		return;
	}
	set = ct_ns_settings(ns);
	proto = ct_proto_find(pkt->tuple.l4);
	/* the kernel checks checksums first: a neighbour solicitation with
	 * a bad checksum is INVALID, not UNTRACKED */
	if (set->checksum && pkt->ip_csum_bad) {
		set_invalid(thr, ns, v, CT_PR_IP_BAD_CSUM);
		return;
	}
	if (set->checksum && !l4_csum_ok(pkt)) {
		set_invalid_or_error(thr, ns, v, pkt, CT_PR_L4_BAD_CSUM);
		return;
	}
	if (proto->classify) {
		uint8_t reason = 0;
		int r = proto->classify(pkt, set, &reason);
		if (r == CT_V_UNTRACKED) {
			v->cls = CT_V_UNTRACKED;
			CT_CTR_INC(thr, untracked);
			return;
		}
		if (r == CT_V_INVALID) {
			set_invalid_or_error(thr, ns, v, pkt, reason);
			return;
		}
	}
	if (!k->lookup) {
		related(thr, ns, pkt, v, pend ? &bc->seen : NULL);
		return;
	}
	if (single && single->unhashed) {
		single->tk.hash = ct_hash_tuple(&t->key, single->tk.key);
		single->unhashed = false;
	}

lookup:
	/* the previous packet's entry, or stage 3's candidate when it holds
	 * the tuple, stand for a lookup (struct burst_ctx, ct_process_burst);
	 * each is tried once */
	quick = true;
	if (cached) {
		c = cached;
		dir = bc->dir;
	} else if (cand && ct_conn_key_equal(cand, k->tk.key)) {
		c = cand;
		dir = CT_DIR_ORIGINAL;
	} else if (cand && ct_conn_key_is_reply(cand, k->tk.key, k->tk.inv) &&
		   !(cand->ext & CT_EXT_NAT)) {
		c = cand;
		dir = CT_DIR_REPLY;
	} else if (cand && __builtin_expect(cand->ext & CT_EXT_NAT, 0) &&
		   ct_conn_reply_equal(cand, k->tk.key)) {
		/* a NAT entry's reply tuple (table/conn_key.h: its inverted
		 * original is no key of it) */
		c = cand;
		dir = CT_DIR_REPLY;
	} else if (k->absent && !repeats &&
		   !(bc->ins_rows[(k->tk.hash >> 6) & 3] & (1ull << (k->tk.hash & 63)))) {
		c = NULL;
		quick = false;
	} else {
		c = ct_table_find(thr, k->tk.hash, k->tk.key, k->tk.inv, &dir);
		quick = false;
	}
	cached = NULL;
	cand = NULL;
	if (c) {
		ct_conn_lock(c);
		memset(&ctx, 0, sizeof(ctx));
		ctx.pkt = pkt;
		ctx.set = set;
		ctx.now = now;
		ctx.status = ct_conn_status(c);
		if (ctx.status & CT_ST_DYING) {
			ct_conn_unlock(c);
			if (quick)      /* gone meanwhile: look it up */
				goto lookup;
			CT_CTR_INC(thr, search_restart);
			goto create;
		}
		if (c->expires <= now) {
			/* a lookup that meets an expired entry reaps it */
			struct ct_conn_info ci;
			bool done = kill(thr, c, CT_DESTROY_TIMEOUT, &ci);
			ct_conn_unlock(c);
			if (done)
				report_destroy(thr, &ci, CT_DESTROY_TIMEOUT, now);
			goto create;
		}
		ctx.dir = dir;
		ctx.is_new = false;
		memset(&out, 0, sizeof(out));
		track_packet(proto, c, &ctx, &out);
		/* ACCEPT and IGNORE go on below; the rest end here */
		switch (__builtin_expect(out.verdict > CT_PV_IGNORE, 0) ? out.verdict
									 : CT_PV_ACCEPT) {
		case CT_PV_INVALID:
			/* TCP may shorten a dead connection's timeout on an
			 * invalid packet (nf_tcp_handle_invalid): lower only */
			lowered = false;
			if (out.timeout_ns && expiry_at(now, out.timeout_ns) < c->expires) {
				__atomic_store_n(&c->expires, expiry_at(now, out.timeout_ns),
						 __ATOMIC_RELAXED);
				lowered = true;
				note_due(thr, expiry_at(now, out.timeout_ns));
			}
			ct_conn_unlock(c);
			if (lowered)
				ct_due_lowered(thr, c, now);
			set_invalid(thr, ns, v, out.reason ? out.reason : CT_PR_TCP_INVALID_STATE);
			bc->conn = c;
			bc->dir = dir;
			return;
		case CT_PV_REPEAT: {
			struct ct_conn_info ci;
			bool done = kill(thr, c, CT_DESTROY_REOPEN, &ci);
			ct_conn_unlock(c);
			if (done)
				report_destroy(thr, &ci, CT_DESTROY_REOPEN, now);
			if (++repeats > 1)
				goto create;
			goto lookup;
		}
		case CT_PV_DESTROY: {
			/* nf_ct_kill_acct(): counted, then killed - before
			 * nf_conntrack_in() would set SEEN_REPLY, so a refused
			 * connection is reported [UNREPLIED] */
			struct ct_conn_info ci;
			bool done;

			account(c, pkt, dir, now);
			done = kill(thr, c, CT_DESTROY_PROTOCOL, &ci);
			ct_conn_unlock(c);
			v->cls = CT_V_ESTABLISHED;
			v->dir = (uint8_t)dir;
			v->l4state = c->l4state;
			v->flags |= CT_VF_DESTROYED;
			CT_CTR_INC(thr, found);
			if (pend)   /* the packet is still translated */
				bc->seen = c;
			if (done)
				report_destroy(thr, &ci, CT_DESTROY_PROTOCOL, now);
			return;
		}
		default:
			break;
		}
		lowered = false;
		what = apply(thr, c, pkt, dir, &out, now, &lowered, ctx.status,
			     proto->priv_size);
		v->cls = CT_V_ESTABLISHED;
		v->dir = (uint8_t)dir;
		v->l4state = c->l4state;
		CT_CTR_INC(thr, found);
		if (out.verdict == CT_PV_IGNORE) {
			v->flags |= CT_VF_IGNORED;
			CT_CTR_INC(thr, ignored);
		}
		if (what && ct_events_on(t)) {
			struct ct_conn_info ci;
			ct_conn_fill_info(t, c, &ci);
			ct_conn_unlock(c);
			ct_event_emit(t, CT_EV_UPDATE, what, CT_DESTROY_NONE, now, &ci);
		} else {
			ct_conn_unlock(c);
		}
		if (lowered)
			ct_due_lowered(thr, c, now);
		bc->conn = c;
		bc->dir = dir;
		if (pend)
			bc->seen = c;
		return;
	}

create:
	if (pend) {
		/* ct_classify: the insert waits for the caller's policy */
		ct_pending_begin(thr, ns, set, proto, pkt, k, now, v);
		return;
	}
	if (ct_track_create(thr, ns, set, proto, pkt, k, now, v, bc, &repeats))
		goto lookup;
}

/*
 * process_run - packets pkts[0..m) that repeat the tuple of the packet
 * before them (keys[j].same), whose entry bc->conn is, tracked under one
 * hold of the entry's lock: what process_one does for each, less what it
 * would find again (namespace, settings, tracker, the entry, its lock).
 * Only without an event handler (events are delivered outside the lock,
 * packet by packet) and for trackers without a classify step.  A packet
 * whose checksum fails ends the run before it is tracked; INVALID,
 * DESTROY and REPEAT verdicts are finished here as process_one finishes
 * them (a REPEAT packet is left to process_one, which looks up again and
 * creates).  Returns how many packets it tracked.  Inline in the burst
 * loop, as process_one.
 */
static inline __attribute__((always_inline)) unsigned
process_run(struct ct_thread *thr, const struct ct_packet *const *pkts,
	    const struct pkt_key *keys, unsigned m, ct_time_ns now0,
	    bool per_pkt, struct ct_verdict *v, struct burst_ctx *bc)
{
	struct ct_table *t = thr->t;
	struct ct_conn *c = bc->conn;
	enum ct_dir dir = bc->dir;
	const struct ct_settings *set;
	const struct ct_proto *proto;
	struct ct_ns *ns;
	bool lowered = false, held = true;
	unsigned j;

	if (ct_events_on(t))
		return 0;
	ns = ct_ns_get(t, pkts[0]->tuple.zone);
	if (!ns || atomic_load_explicit(&ns->state, memory_order_acquire) != CT_NS_ALIVE)
		return 0;
	set = ct_ns_settings(ns);
	proto = ct_proto_find(pkts[0]->tuple.l4);
	if (proto->classify)
		return 0;
	ct_conn_lock(c);
	if ((ct_conn_status(c) & CT_ST_DYING) ||
	    c->expires <= (per_pkt ? pkts[0]->ts : now0)) {
		ct_conn_unlock(c);
		return 0;
	}
	for (j = 0; j < m && keys[j].same; j++) {
		const struct ct_packet *pkt = pkts[j];
		const ct_time_ns now = per_pkt ? pkt->ts : now0;
		struct ct_proto_ctx ctx;
		struct ct_proto_out out;
		struct ct_conn_info ci;

		/* at its own time the entry may have expired: a lookup
		 * (process_one) reaps it */
		if (per_pkt && c->expires <= now)
			break;
		if (set->checksum && (pkt->ip_csum_bad || !l4_csum_ok(pkt)))
			break;
		memset(&ctx, 0, sizeof(ctx));
		ctx.pkt = pkt;
		ctx.set = set;
		ctx.now = now;
		ctx.dir = dir;
		ctx.status = ct_conn_status(c);
		memset(&out, 0, sizeof(out));
		track_packet(proto, c, &ctx, &out);
		if (out.verdict == CT_PV_REPEAT) {
			/* the entry goes; process_one tracks the packet anew */
			kill(thr, c, CT_DESTROY_REOPEN, &ci);
			break;
		}
		memset(&v[j], 0, sizeof(v[j]));
		v[j].zone = pkt->tuple.zone;
		CT_CTR_INC(thr, packets);
		if (out.verdict == CT_PV_INVALID) {
			if (out.timeout_ns && expiry_at(now, out.timeout_ns) < c->expires) {
				__atomic_store_n(&c->expires, expiry_at(now, out.timeout_ns),
						 __ATOMIC_RELAXED);
				lowered = true;
				note_due(thr, expiry_at(now, out.timeout_ns));
			}
			set_invalid(thr, ns, &v[j], out.reason ? out.reason : CT_PR_TCP_INVALID_STATE);
			continue;
		}
		if (out.verdict == CT_PV_DESTROY) {
			account(c, pkt, dir, now);
			kill(thr, c, CT_DESTROY_PROTOCOL, &ci);
			v[j].cls = CT_V_ESTABLISHED;
			v[j].dir = (uint8_t)dir;
			v[j].l4state = c->l4state;
			v[j].flags |= CT_VF_DESTROYED;
			CT_CTR_INC(thr, found);
			ct_conn_unlock(c);
			held = false;
			j++;
			break;
		}
		(void)apply(thr, c, pkt, dir, &out, now, &lowered, ctx.status,
			    proto->priv_size);
		v[j].cls = CT_V_ESTABLISHED;
		v[j].dir = (uint8_t)dir;
		v[j].l4state = c->l4state;
		CT_CTR_INC(thr, found);
		if (out.verdict == CT_PV_IGNORE) {
			v[j].flags |= CT_VF_IGNORED;
			CT_CTR_INC(thr, ignored);
		}
	}
	if (held)
		ct_conn_unlock(c);
	if (lowered)   /* at the time of the run's last packet */
		ct_due_lowered(thr, c, per_pkt ? pkts[j ? j - 1 : 0]->ts : now0);
	/* a DYING entry sends the next packet of the tuple to a lookup */
	return j;
}

/* ct_tuple_equal, the last word first: consecutive packets of different
 * flows mostly differ in their ports, and then one word compare says so. */
static inline bool same_tuple(const struct ct_tuple *a, const struct ct_tuple *b)
{
	return ct_tuple_tail_word(a) == ct_tuple_tail_word(b) &&
	       memcmp(a, b, offsetof(struct ct_tuple, sport)) == 0;
}

/*
 * Fill @k for @pkt; @prev is the previous packet of the burst and its key
 * (NULL for the first or a single packet): a packet with the same tuple
 * takes its inverse and is marked `same` (its hash: that of @prev, which
 * the burst copies once @prev has one).  With @defer KEY_DEFER_IPV4 an
 * IPv4 key is left for the caller to hash and true returned (a burst
 * hashes them eight at a time); with KEY_DEFER_ALL any key is (a single
 * packet hashes it once it is sure to look it up).
 */
enum { KEY_HASH = 0, KEY_DEFER_IPV4 = 1, KEY_DEFER_ALL = 2 };

static inline __attribute__((always_inline)) bool make_key(const struct ct_table *t,
							   const struct ct_packet *pkt,
							   struct pkt_key *k,
							   const struct pkt_key *prev,
							   unsigned defer)
{
	k->lookup = false;
	k->same = false;
	k->absent = false;
	k->unhashed = false;
	k->cand = NULL;
	/* ct_tuple_invert's condition: by protocol, whatever the family */
	bool icmp = pkt->tuple.l4 == IPPROTO_ICMP || pkt->tuple.l4 == IPPROTO_ICMPV6;

	if (pkt->kind != CT_PKT_TRACKABLE)
		return false;
	if (__builtin_expect(icmp, 0) && is_icmp(pkt) && ct_icmp_is_error(pkt))
		return false;
	k->tk.key = &pkt->tuple;
	k->lookup = true;
	if (prev && prev->lookup && same_tuple(prev->tk.key, &pkt->tuple)) {
		k->tk.inv = prev->tk.inv ? &k->icmp_inv : NULL;
		if (prev->tk.inv)
			k->icmp_inv = prev->icmp_inv;
		k->same = true;
		return false;
	}
	k->tk.inv = NULL;
	if (__builtin_expect(icmp, 0)) {
		if (!ct_tuple_invert(k->tk.key, &k->icmp_inv))
			k->icmp_inv = *k->tk.key;
		k->tk.inv = &k->icmp_inv;
	}
	if (defer == KEY_DEFER_ALL || (defer && pkt->tuple.l3 == CT_L3_IPV4))
		return true;
	k->tk.hash = ct_hash_tuple(&t->key, k->tk.key);
	return false;
}

/*
 * Entries freed during a call wait in the thread's batch.  A burst hands
 * its batch to call_rcu at its end (one grace period per burst at most,
 * and nothing stays queued while the thread is idle); a single-packet call
 * lets up to 16 accumulate first, so that a call_rcu is not paid per
 * packet.
 */
static void end_call(struct ct_thread *thr, bool burst)
{
	if (thr->pending && (burst || thr->pending->n >= 16))
		ct_reclaim_flush(thr);
}

int ct_process(struct ct_thread *thr, const struct ct_packet *pkt,
	       ct_time_ns now, struct ct_verdict *v)
{
	struct pkt_key k;
	struct burst_ctx bc = { 0 };

	if (!thr || !pkt || !v)
		return -EINVAL;
	/* hashed in process_one, after the checks that may end the packet */
	k.unhashed = make_key(thr->t, pkt, &k, NULL, KEY_DEFER_ALL);
	ct_read_lock(thr);
	process_one(thr, pkt, &k, now, v, &bc, &k, false);
	end_call(thr, false);
	ct_read_unlock(thr);
	return 0;
}

/*
 * ct_classify (ctrack/nat.h) - ct_process's path with the insert left to
 * the caller: a third instance of process_one, whose pending branches the
 * other two do not have (they are constant-folded away there).
 */
int ct_classify(struct ct_thread *thr, const struct ct_packet *pkt,
		ct_time_ns now, struct ct_classified *out)
{
	struct pkt_key k;
	struct burst_ctx bc = { 0 };
	struct ct_conn *c;

	if (!thr || !pkt || !out)
		return -EINVAL;
	if (thr->pend)
		ct_pending_drop(thr, thr->pend);
	memset(out, 0, sizeof(*out));
	k.unhashed = make_key(thr->t, pkt, &k, NULL, KEY_DEFER_ALL);
	ct_read_lock(thr);
	process_one(thr, pkt, &k, now, &out->v, &bc, &k, true);
	c = bc.seen;
	if (out->v.flags & CT_VF_PENDING) {
		out->cls = CT_CLASS_PENDING;
		out->pending = thr->pend;
		out->binding = *ct_pending_binding(thr->pend);
	} else if (c) {
		out->cls = out->v.cls == CT_V_RELATED ? CT_CLASS_RELATED : CT_CLASS_TRACKED;
		/* the tuples and the NAT bits are fixed once the entry is
		 * published: no lock */
		if (c->ext & CT_EXT_NAT) {
			uint32_t st = ct_conn_status(c);

			out->nat = true;
			ct_conn_tuple(c, &out->binding.orig);
			ct_conn_reply_of(c, &out->binding.orig, &out->binding.reply);
			out->binding.status = (st & CT_ST_SRC_NAT ? CT_NAT_S_SRC : 0) |
					      (st & CT_ST_DST_NAT ? CT_NAT_S_DST : 0) |
					      (st & CT_ST_SRC_NAT_DONE ? CT_NAT_S_SRC_DONE : 0) |
					      (st & CT_ST_DST_NAT_DONE ? CT_NAT_S_DST_DONE : 0) |
					      (st & CT_ST_NAT_CLASH ? CT_NAT_S_CLASH : 0);
		}
	} else {
		out->cls = CT_CLASS_OTHER;
	}
	end_call(thr, false);
	ct_read_unlock(thr);
	if (out->v.cls == CT_V_DROP && out->v.reason == CT_PR_NO_MEMORY && !thr->pend)
		return -ENOMEM;
	return 0;
}

static inline __attribute__((always_inline)) int
burst(struct ct_thread *thr, const struct ct_packet *const *pkts, unsigned n,
      ct_time_ns now, bool per_pkt, struct ct_verdict *v)
{
	struct pkt_key keys[CT_BURST_MAX];
	const struct ct_tuple *q[CT_BURST_MAX];
	uint64_t qh[CT_BURST_MAX];
	uint8_t qi[CT_BURST_MAX];
	unsigned nq = 0;
	struct burst_ctx bc = { 0 };
	struct ct_table *t;
	struct ct_htab *h;
	bool may_skip, wheel, any_same = false;
	size_t ext_bytes;

	if (!thr || (!pkts && n) || (!v && n) || n > CT_BURST_MAX)
		return -EINVAL;
	t = thr->t;
	ext_bytes = ct_ext_size(atomic_load_explicit(&t->ext_seen, memory_order_relaxed));
	ct_read_lock(thr);
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	/* stage 1: every key; a key hashed here (not IPv4) has its row
	 * prefetched at once */
	for (unsigned i = 0; i < n; i++) {
		if (make_key(t, pkts[i], &keys[i], i ? &keys[i - 1] : NULL, KEY_DEFER_IPV4)) {
			q[nq] = keys[i].tk.key;
			qi[nq++] = (uint8_t)i;
		} else if (keys[i].same) {
			any_same = true;
		} else if (keys[i].lookup) {
			__builtin_prefetch(ct_htab_row(h, keys[i].tk.hash));
		}
	}
	/* stage 2: the IPv4 hashes, CT_HASH_CHUNK at a time (four at a time
	 * inside), each chunk's rows prefetched before the next is hashed:
	 * the first rows are on their way while the rest hash, so stage 3
	 * seldom waits for a row, and the misses do not all queue at once */
	for (unsigned j = 0; j < nq; j += CT_HASH_CHUNK) {
		unsigned m = nq - j < CT_HASH_CHUNK ? nq - j : CT_HASH_CHUNK;

		ct_hash_tuple4_many(&t->key, q + j, m, qh + j);
		for (unsigned x = j; x < j + m; x++) {
			keys[qi[x]].tk.hash = qh[x];
			__builtin_prefetch(ct_htab_row(h, qh[x]));
		}
	}
	/* a repeated tuple takes the previous packet's hash */
	if (any_same)
		for (unsigned i = 1; i < n; i++)
			if (keys[i].same)
				keys[i].tk.hash = keys[i - 1].tk.hash;
	/* a tuple absent from its row is absent from the table when the row
	 * has no overflow and no resize is on (struct burst_ctx) */
	may_skip = h->n_rows >= 256 &&
		   !atomic_load_explicit(&h->future, memory_order_acquire);
	wheel = atomic_load_explicit(&thr->t->wheel_on, memory_order_relaxed);
	/* stage 3: prefetch entries whose signature matches */
	for (unsigned i = 0; i < n; i++) {
		const struct ct_row *r;
		uint64_t sig;
		uintptr_t span, next;

		if (!keys[i].lookup || keys[i].same)
			continue;
		r = ct_htab_row(h, keys[i].tk.hash);
		sig = ct_slot_sig(keys[i].tk.hash);
		/* the entry's own extensions are not known yet: those
		 * that any namespace's settings have asked for, at most
		 * (an IPv6 key's tail follows them; every part is a
		 * multiple of 8, as ct_conn_obj_size rounds to) */
		span = sizeof(struct ct_conn) + ext_bytes +
		       ct_proto_find(pkts[i]->tuple.l4)->priv_size;
		if (__builtin_expect(pkts[i]->tuple.l3 != CT_L3_IPV4, 0))
			span += CT_CONN_V6_TAIL;
		for (unsigned m = ct_row_sig_match(r, keys[i].tk.hash); m; m &= m - 1) {
			/* acquire: the candidate's tuple is read in stage 4 */
			uint64_t sl = atomic_load_explicit(&((struct ct_row *)r)->slot[__builtin_ctz(m)],
							   memory_order_acquire);
			if (sl && (sl & 0xffff000000000000ull) == sig) {
				/* the first match in slot order, as
				 * ct_htab_find would try it */
				if (!keys[i].cand)
					keys[i].cand = ct_slot_conn(sl);
				/* the lines the tracker will touch: the core,
				 * the protocol's private area and accounting
				 * (entries are not line-aligned); a prefetch
				 * of a line the entry does not reach would
				 * take a fill buffer from another packet */
				const uintptr_t c = (uintptr_t)ct_slot_conn(sl);
				const uintptr_t end = c + span - 1;
				/* c + 64 is on the second line and end on
				 * the line after it at most; a second
				 * prefetch of a line merges with the first */
				__builtin_prefetch((const void *)c);
				if (span > 64)
					__builtin_prefetch((const void *)(c + 64));
				if (__builtin_expect(span > 128, 0)) {
					for (uintptr_t l = (c & ~(uintptr_t)63) + 128; l <= end; l += 64)
						__builtin_prefetch((const void *)l);
				} else {
					__builtin_prefetch((const void *)end);
				}
			}
		}
		next = atomic_load_explicit(&((struct ct_row *)r)->next, memory_order_relaxed);
		keys[i].absent = may_skip && !keys[i].cand && next == 0;
		/* a packet with no candidate will likely create: its insert
		 * reads the bound of the row's sub (one word per 8 rows, a
		 * line per 64: at a million entries a quarter of a megabyte,
		 * a miss more often than not) and, with the wheel on, writes
		 * the row's slot bound (table/htab.h), in a line of its own */
		if (!keys[i].cand) {
			uint64_t ri = (uint64_t)(r - h->rows);
			const struct ct_row *o = ct_row_link(next);

			__builtin_prefetch(&h->sub_due_inv[ri / CT_SUB_ROWS]);
			if (wheel)
				__builtin_prefetch(ct_slot_due(h, ri), 1);
			/* the lookup reads the first overflow row (a chain
			 * row: 64 bytes of slots, then its slot bounds) */
			if (o) {
				__builtin_prefetch(o);
				if (wheel)
					__builtin_prefetch(o + 1, 1);
			}
		}
	}
	/* stage 4: the trackers, in packet order; a run of packets of one
	 * entry after the first under one hold of its lock */
	for (unsigned i = 0; i < n;) {
		process_one(thr, pkts[i], &keys[i], per_pkt ? pkts[i]->ts : now,
			    &v[i], &bc, NULL, false);
		i++;
		if (bc.conn && i < n && keys[i].same)
			i += process_run(thr, pkts + i, keys + i, n - i, now,
					 per_pkt, v + i, &bc);
	}
	end_call(thr, true);
	ct_read_unlock(thr);
	if (thr->count_delta >= 64 || thr->count_delta <= -64)
		ct_thread_fold_count(thr);
	ct_thread_quiescent(thr);
	return 0;
}

int ct_process_burst(struct ct_thread *thr, const struct ct_packet *const *pkts,
		     unsigned n, ct_time_ns now, struct ct_verdict *v)
{
	return burst(thr, pkts, n, now, false, v);
}

int ct_process_burst_ts(struct ct_thread *thr, const struct ct_packet *const *pkts,
			unsigned n, struct ct_verdict *v)
{
	return burst(thr, pkts, n, 0, true, v);
}

