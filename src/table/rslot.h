/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rslot.h - an entry confirmed under both of its keys, with the kernel's
 * clash resolution (private; the two-step first packet's insert).
 *
 * The one-call path (track/create.c) inserts an entry whose reply tuple
 * is its inverted original under one key (member.h, ct_table_insert).  A
 * confirm after NAT (ct_pending_confirm, track/pending.c) may have a
 * reply tuple of its own: the entry then takes its primary slot in the
 * row of its original tuple and a second slot in the row of its reply
 * tuple (htab.h), both written under both rows' locks, as the kernel's
 * __nf_conntrack_confirm holds nf_conntrack_double_lock.  A clash found
 * under those locks is resolved as the kernel's nf_ct_resolve_clash
 * does, still under them: for a protocol that allows clashes (UDP,
 * UDP-Lite, ICMP, ICMPv6, GRE) an existing entry with the same two tuples
 * (or the same two crosswise: nf_ct_match_reverse) takes the packet
 * (MERGED); failing that, if the reply tuple is free the entry goes in
 * under its reply tuple only, marked IPS_NAT_CLASH
 * (nf_ct_resolve_clash_harder); otherwise the packet is dropped.
 *
 * Lock order.  Two row locks are taken in the order of their generation
 * (older first: migration locks an old row, then rows of the next one)
 * and, within a generation, of their address; a row found MOVED sends its
 * key to the next generation, all locks released.  Nothing else holds
 * two row locks but migration (base/state.h).
 */
#ifndef CT_RSLOT_H
#define CT_RSLOT_H

#include "table/member.h"

enum ct_rslot_res {
	CT_RSLOT_OK = 0,        /* inserted under its keys */
	CT_RSLOT_REPLY_ONLY,    /* inserted under its reply tuple only, with
				 * IPS_NAT_CLASH (clash_resolve) */
	CT_RSLOT_MERGED,        /* an entry with the same tuples was there:
				 * *@other takes the packet (clash_resolve);
				 * @c was not inserted */
	CT_RSLOT_CLASH,         /* a clash not resolved: @c not inserted, the
				 * packet is dropped (insert_failed, drop) */
	CT_RSLOT_CHAIN,         /* a row holds max_chain entries
				 * (chaintoolong, insert_failed) */
	CT_RSLOT_NOMEM,         /* no overflow row (drop) */
};

struct ct_rslot_req {
	struct ct_conn *c;              /* unpublished: key, reply, hash set */
	struct ct_table_key orig;       /* its original tuple, inverse, hash */
	struct ct_table_key reply;      /* its reply tuple, inverse, hash */
	uint64_t exp;                   /* its expiry */
	uint64_t clash_exp;             /* its expiry if it goes in under its
					 * reply tuple only (the kernel gives
					 * it 1 s: now + 1 s) */
	bool allow_clash;               /* the protocol's allow_clash */
	bool reply_only;                /* go in under the reply tuple only
					 * (CT_RSLOT_REPLY_ONLY, with clash_exp)
					 * or not at all: a restored
					 * IPS_NAT_CLASH entry (record/); its
					 * original tuple is not looked at */
};

/*
 * ct_rslot_insert - confirm @rq->c under its keys, resolving a clash as
 * above.  On CT_RSLOT_OK and _REPLY_ONLY @c is CONFIRMED and public,
 * counted in the table and @ns, its due bounds lowered and the wheel told
 * (as ct_table_insert); a REPLY_ONLY entry has IPS_NAT_CLASH set and its
 * c->hash made its reply's (its only row).  Otherwise @c is untouched but
 * its CONFIRMED bit: the caller frees it.  *@other is the entry that
 * clashed (MERGED: the one that takes the packet; CLASH: the one found).
 * Caller: an attached thread in a read-side section, no lock held.
 * Cost: two rows (one when both keys hash to one), their chains.
 */
enum ct_rslot_res ct_rslot_insert(struct ct_thread *thr, struct ct_ns *ns,
				  const struct ct_rslot_req *rq, struct ct_conn **other);

#endif /* CT_RSLOT_H */
