/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * track.h - what the tracker's files share: a packet's key, what a burst
 * carries from packet to packet, the creation of an entry, and the small
 * helpers both the hit path and the creation path use (private to
 * track/).
 *
 * The helpers are inline, as they were when the tracker was one file: the
 * hit path (track.c) must not pay a call for them.  set_invalid stays out
 * of line in each file, as it was: the invalid path is cold.
 */
#ifndef CT_TRACK_H
#define CT_TRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/state.h"
#include "proto/proto.h"
#include "table/conn_info.h"
#include "table/conn_key.h"
#include "table/event.h"
#include "table/member.h"

/*
 * A packet's lookup key.  The reply tuple is not built: for every protocol
 * but ICMP/ICMPv6 it is the tuple with endpoints and ports swapped, which
 * the lookup compares in place (table/htab.h); only ICMP queries, whose reply
 * type differs, carry their inverse.
 */
struct pkt_key {
	struct ct_table_key tk;  /* tk.key: the packet's own tuple; tk.inv:
				  * &icmp_inv, or NULL: swapped; tk.hash */
	bool lookup;      /* a normal lookup applies to this packet */
	bool same;        /* a burst's packet with the previous one's tuple */
	bool absent;      /* stage 3 saw the row without the tuple */
	bool unhashed;    /* a single packet's key: hashed only once the
			   * packet has passed the checks before the lookup
			   * (a bad checksum or a fragment makes no lookup) */
	struct ct_conn *cand;  /* the first entry whose signature matched in
				* the row (stage 3), or NULL */
	struct ct_tuple icmp_inv;
};

/*
 * What a burst carries from packet to packet.  Its packets are tracked
 * inside one read-side section, so every entry seen in it stays allocated
 * until it ends; stages 1-3 of ct_process_burst let a packet skip its
 * lookup when an earlier look already answered it:
 *  - conn: the entry the previous packet found or inserted (NULL if it
 *    left none).  Consecutive packets of one connection are common
 *    (packet trains, GRO segments; OVS's benchmark sends one tuple 32
 *    times).  While the entry is not DYING it is in the table, and no
 *    other live entry holds its tuple (inserts check), so it is what a
 *    lookup of the same tuple would return; a packet with the same tuple
 *    takes it, and looks up after all if it finds the entry DYING.
 *  - stage 3's candidate (pkt_key.cand): the first entry of the row whose
 *    signature matched; if it holds the tuple, it is what the row scan
 *    would return, with the same DYING fallback.
 *  - stage 3's "absent" (pkt_key.absent): the row had no signature match,
 *    no overflow row, no lock and no next generation.  Until something is
 *    inserted into that row the tuple cannot be in the table, so the
 *    lookup is skipped; inserts made by this burst mark their hash in
 *    ins_rows (bit: hash & 255; 256 bits, so that a burst's own inserts
 *    seldom send a later packet to a needless lookup), and a packet whose
 *    bit is marked is looked up.  An entry this burst inserts with the
 *    packet's tuple has the packet's hash (it is direction-blind), so it
 *    marks the packet's bit whatever row or generation it went to; the
 *    bit need not follow the row function.  An entry another thread
 *    inserts meanwhile is met by the insert's clash check, as when it
 *    comes just after a lookup.
 */
struct burst_ctx {
	struct ct_conn *conn;
	enum ct_dir dir;
	uint64_t ins_rows[4];
	/* ct_classify only (the two-step first packet): the entry the
	 * packet belonged to (ESTABLISHED, ended by it, or quoted by an
	 * ICMP error), whose binding it needs */
	struct ct_conn *seen;
};

static __attribute__((noinline, unused)) void
set_invalid(struct ct_thread *thr, struct ct_ns *ns, struct ct_verdict *v, uint8_t reason)
{
	v->cls = CT_V_INVALID;
	v->reason = reason;
	CT_CTR_INC(thr, invalid);
	if (reason < CT_PR_MAX)
		CT_CTR_INC(thr, invalid_by_reason[reason]);
	if (ns)
		CT_NS_ADD(thr, ns, invalid, 1);
}

/* Remember @due as an expiry this thread gave an entry (created, or
 * shortened), for ct_thread_take_next_due. */
static inline void note_due(struct ct_thread *thr, uint64_t due)
{
	if (~due > thr->due_inv_max)
		thr->due_inv_max = ~due;
}

/*
 * now + timeout, saturated: the caller's clock may sit anywhere in its
 * 64-bit range (a damaged capture's timestamps do), and an expiry that
 * wrapped past 2^64 would lie in the past, so the entry would be reaped
 * the moment it was made.  CT_DUE_NEVER itself means "nothing due" to the
 * collector's bounds, so the latest expiry is one below it.
 */
static inline uint64_t expiry_at(ct_time_ns now, uint64_t timeout_ns)
{
	uint64_t e = now + timeout_ns;

	return e < now || e >= CT_DUE_NEVER ? CT_DUE_NEVER - 1 : e;
}

void ct_track_account_tcpf(struct ct_conn *c, const struct ct_packet *pkt,
			   enum ct_dir dir);

/*
 * account() for the hit path, where the caller knows the tracker: the
 * extensions start right after its private area (ct_conn_ext_off), so
 * the tracker table need not be read again to find them.
 */
static inline __attribute__((always_inline)) void account_priv(struct ct_conn *c,
		    const struct ct_packet *pkt, enum ct_dir dir, ct_time_ns now,
		    size_t priv_size)
{
	unsigned ext = c->ext;
	char *x = (char *)c + sizeof(struct ct_conn) + priv_size;

	if (ext & CT_EXT_ACCT) {
		struct ct_ext_acct *a = (struct ct_ext_acct *)x;

		a->packets[dir]++;
		a->bytes[dir] += pkt->l3_len;
		x += sizeof(struct ct_ext_acct);
	}
	if (ext & CT_EXT_TSTAMP)
		((struct ct_ext_tstamp *)x)->last_ns = now;
	/* issue 26: only TCP entries have it (out of line: the hit path of
	 * a table without it pays the test alone) */
	if (__builtin_expect(ext & CT_EXT_TCPF, 0))
		ct_track_account_tcpf(c, pkt, dir);
}

/*
 * Unlink @c (DYING arbitrates between racing killers) and count it; the
 * copy for the DESTROY event is taken into *ci while the caller still holds
 * whatever keeps the entry stable, and reported later by report_destroy()
 * once every lock is released.  Returns true if this call removed it.
 */
static inline bool kill(struct ct_thread *thr, struct ct_conn *c,
			enum ct_destroy_cause cause, struct ct_conn_info *ci)
{
	if (ct_events_on(thr->t))
		ct_conn_fill_info(thr->t, c, ci);
	if (!ct_table_unlink(thr, c))
		return false;
	/* each removal is counted once, under one cause (stats.h):
	 * early_drop() counts its own evictions */
	if (cause == CT_DESTROY_TIMEOUT)
		CT_CTR_INC(thr, expired);
	else if (cause != CT_DESTROY_EARLY_DROP)
		CT_CTR_INC(thr, deleted);
	return true;
}

static inline void report_destroy(struct ct_thread *thr, const struct ct_conn_info *ci,
				  enum ct_destroy_cause cause, ct_time_ns now)
{
	if (ct_events_on(thr->t))
		ct_event_emit(thr->t, CT_EV_DESTROY, CT_EVW_DESTROY, cause, now, ci);
}

/*
 * ct_track_create - a lookup missed: the entry made from @pkt, initialised
 * by its tracker, inserted (or not, as the verdict and room say) and
 * counted (create.c).  Out of line, so that the hit path keeps a small
 * frame of its own.  Returns true when another thread inserted the tuple
 * first: the caller looks it up again (*repeats counts such turns).
 */
bool ct_track_create(struct ct_thread *thr, struct ct_ns *ns, const struct ct_settings *set,
		     const struct ct_proto *proto, const struct ct_packet *pkt,
		     const struct pkt_key *k, ct_time_ns now, struct ct_verdict *v,
		     struct burst_ctx *bc, int *repeats);

/*
 * ct_track_mag - @thr's magazine for objects of size class @cls in @ns,
 * switched to @ns's slab if it held another's (the cached objects going
 * back to theirs).  For whoever allocates an entry outside a packet's
 * creation (src/record/'s import); the owner of @thr, read side held.
 */
struct ct_slab_mag *ct_track_mag(struct ct_thread *thr, struct ct_ns *ns, unsigned cls);

/* create.c's helpers, for the two-step first packet (pending.c). */
bool ct_track_router_confirms(const struct ct_packet *pkt);
bool ct_track_make_room(struct ct_thread *thr, struct ct_ns *ns,
			const struct ct_settings *set, uint64_t hash, ct_time_ns now);

/*
 * ct_pending_begin - a lookup missed in ct_classify: the entry made from
 * @pkt in the thread's pending scratch, initialised by its tracker, room
 * made for it (pending.c) - everything ct_track_create does before the
 * insert, which waits for ct_pending_confirm.  The verdict says what
 * happened: NEW with CT_VF_PENDING when there is a pending entry.
 */
void ct_pending_begin(struct ct_thread *thr, struct ct_ns *ns, const struct ct_settings *set,
		      const struct ct_proto *proto, const struct ct_packet *pkt,
		      const struct pkt_key *k, ct_time_ns now, struct ct_verdict *v);

#endif /* CT_TRACK_H */
