/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_alarm.c - ALARM, conntrackd's mode of periodic refreshes
 * (sync-alarm.c).
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

int sync_alarm_recv(struct ct_sync_node *n, const uint8_t *msg,
		    const struct ct_sync_hdr *h, ct_time_ns now)
{
	(void)msg;
	(void)now;
	/* alarm_recv: anything with flags is a control message, ignored */
	if (h->flags)
		return MSG_CTL;
	if (!sync_seq_acceptable(n, h->seq))
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
