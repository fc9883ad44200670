/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_ftfw.c - FTFW, conntrackd's reliable mode (sync-ftfw.c).
 *
 * Every message, data or control, takes the next sequence number of its
 * sender's stream.  The receiver acknowledges a window of window_size
 * messages at a time (ACK [from, to]), and when a number is skipped it
 * sends ACK for what it had and NACK [expected, seq - 1] for the gap.  The
 * sender keeps what it sent - objects, and its own ACK/NACK/RESYNC - in
 * the resend queue until an ACK covers it; a NACK moves the covered ones
 * back to the transmit queue, where they get new numbers.  Control
 * messages being in the resend queue is what makes the scheme whole: a
 * lost NACK is a gap in the other direction's stream, NACKed in turn.  An
 * ALIVE (or the pending ACK) goes out after alive_ms without sending, so
 * that a gap at the end of a burst is found within a second.
 *
 * HELLO: a node sets HELLO on every message until the peer answers one
 * with HELLO_BACK; a node that gets a HELLO answers on its next message.
 * conntrackd flushes its resend queue at *every* message carrying HELLO
 * (the peer restarted and knows nothing of those numbers), which throws
 * away resends of what it is sending the peer during the whole handshake.
 * ctrack flushes once, when a HELLO episode starts (the peer's previous
 * message had no HELLO, or there was none), counts it in hello_recv, and
 * with resync_on_hello queues its whole table for the peer, which has
 * just lost it (conntrackd waits to be asked: StartupResync).
 *
 * The handshake is FTFW's blind spot.  While a HELLO is about, conntrackd
 * does not check the numbers of HELLO messages (so it NACKs nothing), and
 * every HELLO it receives empties its resend queue (so it resends
 * nothing): what is lost then is lost for good - seen on a 5% lossy link
 * against conntrackd, a few entries of every startup under churn.  ctrack
 * checks the numbers of HELLO messages after an episode's first (NACKing
 * a gap as usual), and when a gap was seen while either side's HELLO was
 * about, or within HELLO_SETTLE_NS after, it asks the peer for its whole
 * table once both handshakes are over (hello_resyncs).  A DEL lost in the
 * blind spot still leaves its entry behind: a resync sends what lives,
 * not what died.
 *
 * Where the number stands is sync_seq.c's: out-of-window numbers are
 * dropped (conntrackd takes any), behind ones are dropped as conntrackd
 * drops them.  ACK/NACK ranges naming numbers this node never sent are
 * counted (msg_rcv_ack_stale) and change nothing, except for the sequence
 * tracking they take part in like any message.
 */
#include <stdlib.h>

#include "sync/sync_node.h"
#include "sync/sync_wire.h"

enum {
	HELLO_INIT = 0,
	HELLO_SAY,
	HELLO_DONE,
};

/* After a handshake ends, a HELLO of ours may still be on its way and
 * empty the peer's resend queue: gaps seen this long after still count. */
#define HELLO_SETTLE_NS (2 * SYNC_NS_PER_S)

static bool hello_about(const struct ct_sync_node *n, ct_time_ns now)
{
	return n->hello_state != HELLO_DONE || n->peer_hello || now < n->hello_settled_ns;
}

static void settle_at(struct ct_sync_node *n, ct_time_ns now)
{
	if (now + HELLO_SETTLE_NS > n->hello_settled_ns)
		n->hello_settled_ns = now + HELLO_SETTLE_NS;
}

uint8_t sync_ftfw_hello_flags(struct ct_sync_node *n)
{
	uint8_t f = 0;

	if (n->hello_state == HELLO_INIT)
		n->hello_state = HELLO_SAY;
	if (n->hello_state == HELLO_SAY)
		f |= CT_SYNC_F_HELLO;
	if (n->say_hello_back) {
		f |= CT_SYNC_F_HELLO_BACK;
		n->say_hello_back = false;
	}
	return f;
}

/* The resend queue's head is the oldest: when full, it goes (conntrackd's
 * rs_queue_purge_full). */
void sync_ftfw_after_send(struct ct_sync_node *n, struct sq_node *qn)
{
	if (qn->kind == SQ_CTL) {
		struct sync_ctl *c = (struct sync_ctl *)qn;

		if (!(c->flags & (CT_SYNC_F_ACK | CT_SYNC_F_NACK | CT_SYNC_F_RESYNC))) {
			free(c);
			return;
		}
	}
	if (n->rs.len >= n->cfg.resend_queue_max) {
		struct sq_node *old = n->rs.head.next;

		sq_del(&n->rs, old);
		n->st.rs_queue_dropped++;
		if (old->kind == SQ_CTL)
			free(old);
		else
			sync_obj_release(n, (struct sync_obj *)old);
	}
	sq_add_tail(&n->rs, qn, SQ_RS);
}

static uint32_t node_seq_of(const struct sq_node *qn)
{
	return qn->kind == SQ_CTL ? ((const struct sync_ctl *)qn)->seq :
				    ((const struct sync_obj *)qn)->seq;
}

/* The range names numbers we sent and may still hold: [from, to] within
 * [first number ever sent, last one sent]. */
static bool range_known(const struct ct_sync_node *n, uint32_t from, uint32_t to)
{
	uint32_t first = n->cfg.initial_seq, last = n->next_seq - 1;

	if (n->next_seq == first)
		return false;                       /* sent nothing yet */
	return !ct_sync_after(to, last) && !ct_sync_before(from, first) &&
	       !ct_sync_before(to, from);
}

static void rs_ack(struct ct_sync_node *n, uint32_t from, uint32_t to)
{
	struct sq_node *qn = n->rs.head.next;

	while (qn != &n->rs.head) {
		struct sq_node *next = qn->next;
		uint32_t seq = node_seq_of(qn);

		if (ct_sync_before(seq, from)) {
			qn = next;
			continue;
		}
		if (ct_sync_after(seq, to))
			break;
		sq_del(&n->rs, qn);
		if (qn->kind == SQ_CTL)
			free(qn);
		else
			sync_obj_release(n, (struct sync_obj *)qn);
		qn = next;
	}
}

static void rs_nack(struct ct_sync_node *n, uint32_t from, uint32_t to)
{
	struct sq_node *qn = n->rs.head.next;

	while (qn != &n->rs.head) {
		struct sq_node *next = qn->next;
		uint32_t seq = node_seq_of(qn);

		if (ct_sync_before(seq, from)) {
			qn = next;
			continue;
		}
		if (ct_sync_after(seq, to))
			break;
		sq_del(&n->rs, qn);
		sq_add_tail(&n->tx, qn, SQ_TX);
		n->st.resent++;
		qn = next;
	}
}

void sync_ftfw_flush_rs(struct ct_sync_node *n)
{
	while (n->rs.head.next != &n->rs.head) {
		struct sq_node *qn = n->rs.head.next;

		sq_del(&n->rs, qn);
		if (qn->kind == SQ_CTL)
			free(qn);
		else
			sync_obj_release(n, (struct sync_obj *)qn);
	}
}

/* digest_msg(): what the message is, and what it does to our queues. */
static int digest(struct ct_sync_node *n, const struct ct_sync_hdr *h)
{
	switch (ct_sync_msg_class(h)) {
	case CT_SYNC_C_DATA:
		return MSG_DATA;
	case CT_SYNC_C_ACK:
		if (ct_sync_before(h->to, h->from))
			return MSG_BAD;
		n->st.acks_recv++;
		if (range_known(n, h->from, h->to))
			rs_ack(n, h->from, h->to);
		else
			n->st.msg_rcv_ack_stale++;
		return MSG_CTL;
	case CT_SYNC_C_NACK:
		if (ct_sync_before(h->to, h->from))
			return MSG_BAD;
		n->st.nacks_recv++;
		if (range_known(n, h->from, h->to))
			rs_nack(n, h->from, h->to);
		else
			n->st.msg_rcv_ack_stale++;
		return MSG_CTL;
	case CT_SYNC_C_RESYNC:
		n->st.resync_recv++;
		sync_bulk(n);
		return MSG_CTL;
	case CT_SYNC_C_ALIVE:
		n->st.alive_recv++;
		return MSG_CTL;
	default:
		return MSG_BAD;
	}
}

/* The in-sync path (and HELLO's bypass): count the message in the window
 * and acknowledge a full one. */
static int in_window(struct ct_sync_node *n, const struct ct_sync_hdr *h)
{
	int ret = digest(n, h);

	if (ret == MSG_BAD)
		return ret;
	if (!n->ack_from_set) {
		n->ack_from_set = true;
		n->ack_from = h->seq;
	}
	if (--n->window_left == 0) {
		sync_queue_ctl(n, CT_SYNC_F_ACK, n->ack_from, h->seq);
		n->window_left = n->cfg.window_size;
		n->ack_from_set = false;
	}
	return ret;
}

int sync_ftfw_recv(struct ct_sync_node *n, const uint8_t *msg,
		   const struct ct_sync_hdr *h, ct_time_ns now)
{
	bool hello = h->flags & CT_SYNC_F_HELLO;
	int ret;
	uint32_t expected;

	(void)msg;
	if (h->flags & CT_SYNC_F_HELLO_BACK) {
		if (n->hello_state == HELLO_SAY) {
			n->hello_state = HELLO_DONE;
			settle_at(n, now);
		}
	}
	if (hello) {
		n->say_hello_back = true;
		if (!n->peer_hello) {
			/* a new episode: the peer (re)started */
			n->peer_hello = true;
			n->st.hello_recv++;
			if (n->rseq.set && h->seq != n->rseq.last + 1)
				n->st.msg_rcv_seq_resets++;
			sync_ftfw_flush_rs(n);
			if (n->cfg.resync_on_hello)
				sync_bulk(n);
		} else if (n->rseq.set &&
			   sync_seq_check(n, h->seq) == SEQ_AFTER &&
			   ct_sync_msg_class(h) != CT_SYNC_C_BAD) {
			/* a gap inside the episode: NACK it, and remember */
			expected = n->rseq.last + 1;
			if (n->ack_from_set) {
				sync_queue_ctl(n, CT_SYNC_F_ACK, n->ack_from, expected - 1);
				n->ack_from_set = false;
				n->window_left = n->cfg.window_size;
			}
			sync_queue_ctl(n, CT_SYNC_F_NACK, expected, h->seq - 1);
			n->hello_loss = true;
		}
		/* the peer knows nothing of the window we were counting */
		if (n->ack_from_set && ct_sync_before(h->seq, n->ack_from)) {
			n->window_left = n->cfg.window_size - 1;
			n->ack_from = h->seq;
		}
		if (n->window_left == 0)
			n->window_left = 1;
		ret = in_window(n, h);
		goto out;
	}
	if (n->peer_hello) {
		n->peer_hello = false;
		settle_at(n, now);
	}

	expected = n->rseq.last + 1;
	switch (sync_seq_check(n, h->seq)) {
	case SEQ_AFTER:
		ret = digest(n, h);
		if (ret == MSG_BAD)
			goto out;
		if (hello_about(n, now))
			n->hello_loss = true;
		if (n->ack_from_set) {
			sync_queue_ctl(n, CT_SYNC_F_ACK, n->ack_from, expected - 1);
			n->ack_from_set = false;
		}
		sync_queue_ctl(n, CT_SYNC_F_NACK, expected, h->seq - 1);
		/* this message opens the new window */
		n->window_left = n->cfg.window_size - 1;
		n->ack_from = h->seq;
		n->ack_from_set = true;
		if (n->window_left == 0) {
			sync_queue_ctl(n, CT_SYNC_F_ACK, h->seq, h->seq);
			n->window_left = n->cfg.window_size;
			n->ack_from_set = false;
		}
		break;
	case SEQ_BEFORE:
		/* "we don't accept delayed packets" */
		return MSG_DROP;
	case SEQ_OUT_OF_WINDOW:
		if (!sync_seq_moved(n, h->seq)) {
			n->st.msg_rcv_out_of_window++;
			return MSG_DROP;
		}
		/* the peer's numbering moved for good: start again from
		 * here, and ask for its table, which we may have missed */
		n->ack_from_set = false;
		n->window_left = n->cfg.window_size;
		n->resync_wanted = true;
		ret = in_window(n, h);
		break;
	default: /* SEQ_UNSET, SEQ_IN_SYNC */
		ret = in_window(n, h);
		break;
	}
out:
	if (ret == MSG_DATA || ret == MSG_CTL)
		sync_seq_update(n, h->seq);
	return ret;
}

void sync_ftfw_timers(struct ct_sync_node *n, ct_time_ns now)
{
	if (n->hello_loss && !hello_about(n, now)) {
		n->hello_loss = false;
		n->resync_wanted = true;
		n->st.hello_resyncs++;
	}
	if (now < n->alive_due)
		return;
	/* do_alive_alarm: the pending ACK if there is one, else ALIVE -
	 * unless data is about to go, which says as much */
	if (n->ack_from_set && n->rseq.set) {
		sync_queue_ctl(n, CT_SYNC_F_ACK, n->ack_from, n->rseq.last);
		n->ack_from_set = false;
	} else if (n->tx.len == 0) {
		sync_queue_ctl(n, CT_SYNC_F_ALIVE, 0, 0);
	}
	n->alive_due = now + n->cfg.alive_ms * SYNC_NS_PER_MS;
}
