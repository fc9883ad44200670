/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_seq.c - where the peer's sequence number stands against the one
 * expected (network.c's nethdr_track_seq and nethdr_track_update_seq).
 *
 * Two things differ from conntrackd, both written down in docs/sync.md:
 *
 *  - Lost messages are counted exactly (seq - expected).  conntrackd adds
 *    seq - last + 1, two more than it lost, at every gap.
 *
 *  - A window.  conntrackd believes any number: one forged or corrupted
 *    message far ahead makes it NACK up to 2^31 numbers and take that
 *    number as its new base, so that every true message after it is
 *    "before" and dropped.  Here a number more than seq_window from the
 *    expected one is out of window and dropped.  A peer whose numbering
 *    really moved (it restarted in a mode without HELLO, or a link was
 *    down for a very long time) shows it with a run of consecutive
 *    numbers, one after another: after SEQ_MOVED_RUN of them in a row
 *    the tracking restarts from the latest and the message is taken, and
 *    msg_rcv_seq_resets counts it.  A replayed or forged message, alone
 *    or shuffled, never makes such a run.
 */
#include "sync/sync_node.h"
#include "sync/sync_wire.h"

#define SEQ_MOVED_RUN 4

enum seq_verdict sync_seq_check(struct ct_sync_node *n, uint32_t seq)
{
	struct sync_seq *s = &n->rseq;
	uint32_t expected = s->last + 1;
	uint32_t ahead = seq - expected, behind = expected - seq;

	if (!s->set)
		return SEQ_UNSET;
	if (seq == expected)
		return SEQ_IN_SYNC;
	if (ct_sync_after(seq, expected)) {
		if (ahead > s->window)
			return SEQ_OUT_OF_WINDOW;
		n->st.msg_rcv_lost += ahead;
		return SEQ_AFTER;
	}
	if (behind > s->window)
		return SEQ_OUT_OF_WINDOW;
	n->st.msg_rcv_before++;
	return SEQ_BEFORE;
}

void sync_seq_update(struct ct_sync_node *n, uint32_t seq)
{
	n->rseq.set = true;
	n->rseq.last = seq;
	n->rseq.oow_run = 0;
	n->st.last_seq_recv = seq;
}

bool sync_seq_moved(struct ct_sync_node *n, uint32_t seq)
{
	struct sync_seq *s = &n->rseq;

	if (s->oow_run && seq == s->oow_next)
		s->oow_run++;
	else
		s->oow_run = 1;
	s->oow_next = seq + 1;
	if (s->oow_run < SEQ_MOVED_RUN)
		return false;
	s->oow_run = 0;
	s->set = false;            /* the next check says UNSET */
	n->st.msg_rcv_seq_resets++;
	return true;
}

bool sync_seq_acceptable(struct ct_sync_node *n, uint32_t seq)
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
