/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_notrack.c - NOTRACK, conntrackd's mode without repair
 * (sync-notrack.c); ALARM, the other one, is sync_alarm.c.
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
 */
#include <stdlib.h>

#include "sync/sync_node.h"
#include "sync/sync_wire.h"

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
	if (!sync_seq_acceptable(n, h->seq))
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
