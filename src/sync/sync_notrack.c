/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_notrack.c - NOTRACK and ALARM, conntrackd's modes without repair
 * (sync-notrack.c, sync-alarm.c).
 *
 * NOTRACK sends each change once and forgets it; the receiver tracks the
 * sequence numbers only to count what was lost (msg_rcv_lost), which is
 * the whole of its loss reporting: nothing is resent, nothing NACKed, and
 * a DEL that is lost leaves the peer's entry in its external cache until
 * a resync.  An ALIVE goes out after alive_ms without sending.  A RESYNC
 * request makes the node send its whole table.
 *
 * Replays: conntrackd's NOTRACK takes a message whatever its number.
 * ctrack drops one that is behind the expected number (a replay, or one
 * overtaken by newer state, which it would roll back) and one out of
 * window; a run of consecutive numbers behind or out of window means the
 * peer restarted (NOTRACK has no HELLO) and restarts the tracking
 * (sync_seq.c), so a restarted conntrackd loses at most the first few
 * messages, counted.
 *
 * ALARM sends every entry again refresh_s after it was last sent, and
 * the peer forgets an entry not refreshed for cache_timeout_s.  conntrackd
 * draws each entry's refresh time at random within RefreshTime; here the
 * entries are kept in the order they were last sent, so the next refresh
 * due is the list's head (O(1) a refresh, no timer per entry), and each
 * entry is refreshed exactly refresh_s after it was last sent - the spread
 * comes from when the connections changed.  ALARM's receiver ignores
 * control messages and does not send any but data, as conntrackd's.
 */
#include <stdlib.h>

#include "sync/sync_node.h"
#include "sync/sync_wire.h"

/* Behind or out of window: dropped, unless a run of them says the
 * peer's numbering moved (then taken, and the tracking restarts). */
static bool seq_acceptable(struct ct_sync_node *n, uint32_t seq)
{
	enum seq_verdict v = sync_seq_check(n, seq);

	if (v != SEQ_BEFORE && v != SEQ_OUT_OF_WINDOW)
		return true;
	if (sync_seq_moved(n, seq))
		return true;
	if (v == SEQ_OUT_OF_WINDOW)
		n->st.msg_rcv_out_of_window++;
	return false;
}

static int notrack_digest(struct ct_sync_node *n, const struct ct_sync_hdr *h)
{
	switch (ct_sync_msg_class(h)) {
	case CT_SYNC_C_DATA:
		return MSG_DATA;
	case CT_SYNC_C_RESYNC:
		n->st.resync_recv++;
		sync_bulk(n);
		return MSG_CTL;
	case CT_SYNC_C_ALIVE:
		n->st.alive_recv++;
		return MSG_CTL;
	default:
		/* an ACK or NACK: NOTRACK has none (conntrackd: MSG_BAD) */
		return MSG_BAD;
	}
}

int sync_notrack_recv(struct ct_sync_node *n, const uint8_t *msg,
		      const struct ct_sync_hdr *h, ct_time_ns now)
{
	int ret;

	(void)msg;
	(void)now;
	if (!seq_acceptable(n, h->seq))
		return MSG_DROP;
	ret = notrack_digest(n, h);
	if (ret != MSG_BAD)
		sync_seq_update(n, h->seq);
	return ret;
}

void sync_notrack_timers(struct ct_sync_node *n, ct_time_ns now)
{
	if (now < n->alive_due)
		return;
	if (n->tx.len == 0)
		sync_queue_ctl(n, CT_SYNC_F_ALIVE, 0, 0);
	n->alive_due = now + n->cfg.alive_ms * SYNC_NS_PER_MS;
}

int sync_alarm_recv(struct ct_sync_node *n, const uint8_t *msg,
		    const struct ct_sync_hdr *h, ct_time_ns now)
{
	(void)msg;
	(void)now;
	/* alarm_recv: anything with flags is a control message, ignored */
	if (h->flags)
		return MSG_CTL;
	if (!seq_acceptable(n, h->seq))
		return MSG_DROP;
	sync_seq_update(n, h->seq);
	return MSG_DATA;
}

void sync_alarm_timers(struct ct_sync_node *n, ct_time_ns now)
{
	struct sync_cache *in = &n->internal, *ex = &n->external;
	ct_time_ns refresh = (ct_time_ns)n->cfg.refresh_s * SYNC_NS_PER_S;
	ct_time_ns keep = (ct_time_ns)n->cfg.cache_timeout_s * SYNC_NS_PER_S;

	/* refreshes due: the head was sent longest ago */
	while (in->lru.lnext != &in->lru) {
		struct sync_obj *o = in->lru.lnext;

		if (o->sent_ns + refresh > now)
			break;
		sync_lru_unlink(o);
		if (o->status != OBJ_DEAD)
			sync_enqueue(n, o);
	}
	/* the peer's entries not refreshed in time */
	while (ex->lru.lnext != &ex->lru) {
		struct sync_obj *o = ex->lru.lnext;

		if (o->updated_ns + keep > now)
			break;
		sync_cache_unhash(ex, o);
		ex->st.expired++;
		sync_cache_free(ex, o);
	}
}

ct_time_ns sync_alarm_next_due(struct ct_sync_node *n)
{
	ct_time_ns due = UINT64_MAX;
	const struct sync_obj *o;

	o = n->internal.lru.lnext;
	if (o != &n->internal.lru)
		due = o->sent_ns + (ct_time_ns)n->cfg.refresh_s * SYNC_NS_PER_S;
	o = n->external.lru.lnext;
	if (o != &n->external.lru) {
		ct_time_ns e = o->updated_ns + (ct_time_ns)n->cfg.cache_timeout_s * SYNC_NS_PER_S;

		if (e < due)
			due = e;
	}
	return due;
}
