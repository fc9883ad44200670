/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp.c - the TCP tracker, behaving as Linux's nf_conntrack_proto_tcp
 * (6.1 and later; checked against the 6.17 source plus the one later
 * stable fix noted in tcp_check_rst()).
 *
 * The work for one packet has three parts, in the kernel's order:
 *
 *  1. The transition table: (direction, packet kind, state) gives the next
 *     state, or INVALID, or IGNORE.  A handful of rules then refine the
 *     cell (reopening a closed connection, RFC 5961 challenge ACKs,
 *     simultaneous open, RST sequence checks); each rule below names the
 *     kernel code it reproduces, so that a difference found against the
 *     kernel can be traced to one place.
 *  2. Window tracking (tcp_in_window): each direction remembers how far it
 *     has sent (td_end), how far the peer allowed it to send (td_maxend),
 *     its largest window and its highest ack.  A segment must lie within
 *     those bounds.  Since 6.1 only bounds that cannot be explained by a
 *     retransmission or a late ACK make a packet INVALID; packets below the
 *     lower bounds are let through IGNORED (not counted, not refreshing).
 *  3. The timeout: the new state's, shortened when the connection looks
 *     stuck (retransmissions, unacknowledged data, zero window, no reply).
 *
 * The entry's state lives in ct_conn.l4state; everything else in the
 * 56-byte private area (tcp.h).  The tracker never touches the
 * table: it answers with a verdict in struct ct_proto_out.
 *
 * What the kernel does that the core must mirror (see proto.h): SEEN_REPLY
 * is set by the core *after* the tracker ran, so ctx->status lacks it on
 * the first reply packet, exactly as nf_conntrack_in() orders it; and an
 * IGNORE verdict may come with a state change (a reply SYN turning
 * SYN_SENT into SYN_SENT2 is neither counted nor refreshing, but its
 * PROTOINFO event is cached), so events are delivered for IGNORE too.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrack/events.h"
#include "proto/proto.h"
#include "proto/tcp.h"

/* Short names, used only to make the transition table readable. */
#define sNO CT_TCP_NONE
#define sSS CT_TCP_SYN_SENT
#define sSR CT_TCP_SYN_RECV
#define sES CT_TCP_ESTABLISHED
#define sFW CT_TCP_FIN_WAIT
#define sCW CT_TCP_CLOSE_WAIT
#define sLA CT_TCP_LAST_ACK
#define sTW CT_TCP_TIME_WAIT
#define sCL CT_TCP_CLOSE
#define sS2 CT_TCP_SYN_SENT2
#define sIV CT_TCP_INVALID
#define sIG CT_TCP_IGNORE

/*
 * The transition table.  Read a row as "a packet of this kind, sent in
 * this direction, moves an entry from the state above each column to the
 * state in the cell".  sIV marks packets that cannot be right in that
 * state (INVALID); sIG marks packets that may be right although the
 * entry disagrees - the two ends may know better than we do - so they
 * pass untouched and are remembered in case the other end confirms them.
 *
 * ORIGINAL is the direction of the packet that created the entry.
 */
static const uint8_t tcp_next[2][CT_TCP_K_N][CT_TCP_N_STATES] = {
	[CT_DIR_ORIGINAL] = {
/*		     sNO  sSS  sSR  sES  sFW  sCW  sLA  sTW  sCL  sS2 */
[CT_TCP_K_SYN]    = { sSS, sSS, sIG, sIG, sIG, sIG, sIG, sSS, sSS, sS2 },
	/* A SYN opens (NONE), is retransmitted (SYN_SENT, SYN_SENT2) or
	 * reopens a finished connection (TIME_WAIT, CLOSE: RFC 1122,
	 * subject to the reopen rule).  In a live connection it is
	 * ignored: the receiver will answer with a RST or challenge ACK. */
[CT_TCP_K_SYNACK] = { sIV, sIV, sSR, sIV, sIV, sIV, sIV, sIV, sIV, sSR },
	/* The originator answers SYN-ACK only in a simultaneous open
	 * (SYN_SENT2), or retransmits that answer (SYN_RECV). */
[CT_TCP_K_FIN]    = { sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV },
	/* No FIN before the handshake's SYN-ACK.  The first FIN starts
	 * the close, the second (from either side) waits for the last
	 * ACK; retransmitted FINs stay where they are. */
[CT_TCP_K_ACK]    = { sES, sIV, sES, sES, sCW, sCW, sTW, sTW, sCL, sIV },
	/* An ACK picks up a connection mid-stream (NONE, tcp_loose),
	 * completes the handshake (SYN_RECV), acknowledges the first FIN
	 * (FIN_WAIT -> CLOSE_WAIT) or the last one (LAST_ACK -> TIME_WAIT).
	 * Before a SYN-ACK was seen it is invalid. */
[CT_TCP_K_RST]    = { sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
[CT_TCP_K_NONE]   = { sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV },
	},
	[CT_DIR_REPLY] = {
/*		     sNO  sSS  sSR  sES  sFW  sCW  sLA  sTW  sCL  sS2 */
[CT_TCP_K_SYN]    = { sIV, sS2, sIV, sIV, sIV, sIV, sIV, sSS, sIV, sS2 },
	/* A SYN from the responder is a simultaneous open (SYN_SENT) or
	 * its retransmission (SYN_SENT2); in TIME_WAIT it may reopen the
	 * connection with the roles swapped. */
[CT_TCP_K_SYNACK] = { sIV, sSR, sIG, sIG, sIG, sIG, sIG, sIG, sIG, sSR },
	/* The normal answer to the SYN (SYN_SENT) or to a simultaneous
	 * open.  Later SYN-ACKs may answer a SYN we ignored: ignore them
	 * too, and resynchronise if one matches that SYN. */
[CT_TCP_K_FIN]    = { sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV },
[CT_TCP_K_ACK]    = { sIV, sIG, sSR, sES, sCW, sCW, sTW, sTW, sCL, sIG },
	/* An ACK to a bare SYN may come from a half-open connection the
	 * responder still holds: ignore it.  In SYN_RECV it may answer a
	 * resent SYN, so the state stays. */
[CT_TCP_K_RST]    = { sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
[CT_TCP_K_NONE]   = { sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV },
	},
};

static const char *const tcp_state_names[CT_TCP_N_STATES] = {
	[CT_TCP_NONE] = "NONE",
	[CT_TCP_SYN_SENT] = "SYN_SENT",
	[CT_TCP_SYN_RECV] = "SYN_RECV",
	[CT_TCP_ESTABLISHED] = "ESTABLISHED",
	[CT_TCP_FIN_WAIT] = "FIN_WAIT",
	[CT_TCP_CLOSE_WAIT] = "CLOSE_WAIT",
	[CT_TCP_LAST_ACK] = "LAST_ACK",
	[CT_TCP_TIME_WAIT] = "TIME_WAIT",
	[CT_TCP_CLOSE] = "CLOSE",
	[CT_TCP_SYN_SENT2] = "SYN_SENT2",
};

/* The settings keep one timeout per state from SYN_SENT on, then the two
 * special ones; state s uses slot s - 1. */
_Static_assert(CT_TCP_TO_SYN_SENT == CT_TCP_SYN_SENT - 1 &&
	       CT_TCP_TO_CLOSE == CT_TCP_CLOSE - 1 &&
	       CT_TCP_TO_SYN_SENT2 == CT_TCP_SYN_SENT2 - 1,
	       "timeout slots follow the state numbers");
_Static_assert(sizeof(struct ct_tcp_priv) <= CT_TCP_PRIV_SIZE &&
	       CT_TCP_PRIV_SIZE % 8 == 0, "private area size");

/* Largest distance an ACK may lag behind the data it acknowledges
 * (the kernel's MAXACKWINDOW). */
#define TCP_MAXACKWIN_MIN 66000u

/* Remaining lifetime below which an INVALID FIN/RST does not shorten the
 * entry's timeout (nf_tcp_handle_invalid: 120 * HZ). */
#define TCP_INVALID_SHRINK_MIN_S 120u

enum tcp_window_verdict {
	TCP_WIN_ACCEPT,
	TCP_WIN_IGNORE,   /* below a lower bound: retransmission, late ACK */
	TCP_WIN_INVALID,  /* above an upper bound */
};

/* Sequence arithmetic modulo 2^32 (RFC 1982), as the kernel's before()
 * and after(). */
static inline bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool seq_after(uint32_t a, uint32_t b)
{
	return seq_before(b, a);
}

uint8_t ct_tcp_next_state(unsigned dir, unsigned kind, unsigned state)
{
	if (dir > CT_DIR_REPLY || kind >= CT_TCP_K_N || state >= CT_TCP_N_STATES)
		return CT_TCP_INVALID;
	return tcp_next[dir][kind][state];
}

/* get_conntrack_index: RST wins over SYN, SYN over FIN, FIN over ACK. */
static uint8_t tcp_kind(uint8_t flags)
{
	if (flags & CT_TCP_RST)
		return CT_TCP_K_RST;
	if (flags & CT_TCP_SYN)
		return (flags & CT_TCP_ACK) ? CT_TCP_K_SYNACK : CT_TCP_K_SYN;
	if (flags & CT_TCP_FIN)
		return CT_TCP_K_FIN;
	if (flags & CT_TCP_ACK)
		return CT_TCP_K_ACK;
	return CT_TCP_K_NONE;
}

/* segment_seq_plus_len: SYN and FIN each occupy one sequence number.  The
 * payload length comes from the IP lengths, like the kernel's skb->len. */
static uint32_t tcp_seg_end(const struct ct_packet *pkt)
{
	const struct ct_tcp_info *th = &pkt->u.tcp;

	return th->seq + pkt->payload_len + ((th->flags & CT_TCP_SYN) ? 1 : 0) +
	       ((th->flags & CT_TCP_FIN) ? 1 : 0);
}

static uint32_t tcp_timeout_s(const struct ct_settings *set, uint8_t state)
{
	/* The kernel's timeouts[0] (NONE) holds SYN_SENT's value. */
	if (state == CT_TCP_NONE || state >= CT_TCP_N_STATES)
		return set->tcp_timeouts[CT_TCP_TO_SYN_SENT];
	return set->tcp_timeouts[state - 1];
}

/*
 * tcp_options: a header with options resets what the direction knew of
 * them (keeping only BE_LIBERAL, which no packet can take away) and
 * records window scaling and SACK permission.  A header without options
 * changes nothing - the kernel returns before the reset.
 */
static void tcp_take_options(struct ct_tcp_priv *p, unsigned d,
			     const struct ct_tcp_info *th)
{
	if (th->hdr_len <= 20)
		return;
	p->scale[d] = 0;
	p->flags[d] &= CT_TCPF_BE_LIBERAL;
	if (th->opts & CT_TCPOPT_SACK_PERM)
		p->flags[d] |= CT_TCPF_SACK_PERM;
	if (th->opts & CT_TCPOPT_WSCALE) {
		p->scale[d] = th->wscale > 14 ? 14 : th->wscale;
		p->flags[d] |= CT_TCPF_WINDOW_SCALE;
	}
}

/*
 * tcp_init_sender: a SYN-ACK answering the SYN, or a reply SYN in a
 * simultaneous open, (re)starts what we know of its sender.  RFC 7323:
 * scaling applies only when both sides offered it, which is known once
 * the reply direction's SYN is seen.
 */
static void tcp_init_sender(struct ct_tcp_priv *p, unsigned d,
			    const struct ct_tcp_info *th, uint32_t end)
{
	struct ct_tcp_dir *s = &p->seen[d];

	s->td_end = end;
	s->td_maxend = end;
	s->td_maxwin = th->window ? th->window : 1;
	tcp_take_options(p, d, th);
	if (d == CT_DIR_REPLY &&
	    !((p->flags[d] & CT_TCPF_WINDOW_SCALE) &&
	      (p->flags[!d] & CT_TCPF_WINDOW_SCALE))) {
		p->scale[d] = 0;
		p->scale[!d] = 0;
	}
}

/* nf_tcp_log_invalid: a window failure is forgiven when the sender is
 * tracked liberally or tcp_be_liberal is set. */
static enum tcp_window_verdict tcp_window_fail(const struct ct_tcp_priv *p,
					       unsigned d,
					       const struct ct_settings *set,
					       enum tcp_window_verdict v)
{
	if ((p->flags[d] & CT_TCPF_BE_LIBERAL) || set->tcp_be_liberal)
		return TCP_WIN_ACCEPT;
	return v;
}

/*
 * The learning half of tcp_in_window, for a segment that passed its four
 * checks: the sender's end, maximum window and highest ack, the
 * receiver's maximum end and window, the unacknowledged-data flags, and
 * the retransmission counter (same ACK segment again, same direction).
 * @win is the advertised window, scaled unless it came in a SYN.  Inline
 * in both callers: tcp_fast_ack passes constants for @kind and @has_ack.
 */
static inline __attribute__((always_inline)) void
tcp_learn(struct ct_tcp_priv *p, unsigned d, uint8_t kind, bool has_ack,
	  uint32_t seq, uint32_t ack, uint32_t sack, uint32_t end,
	  uint32_t win, uint16_t raw_win)
{
	struct ct_tcp_dir *snd = &p->seen[d];
	struct ct_tcp_dir *rcv = &p->seen[!d];
	uint32_t swin = win + (sack - ack);

	if (snd->td_maxwin < swin)
		snd->td_maxwin = swin;
	if (seq_after(end, snd->td_end)) {
		snd->td_end = end;
		p->flags[d] |= CT_TCPF_DATA_UNACKNOWLEDGED;
	}
	if (has_ack) {
		if (!(p->flags[d] & CT_TCPF_MAXACK_SET)) {
			snd->td_maxack = ack;
			p->flags[d] |= CT_TCPF_MAXACK_SET;
		} else if (seq_after(ack, snd->td_maxack)) {
			snd->td_maxack = ack;
		}
	}

	if (rcv->td_maxwin != 0 && seq_after(end, snd->td_maxend))
		rcv->td_maxwin += end - snd->td_maxend;
	if (seq_after(sack + win, rcv->td_maxend - 1)) {
		rcv->td_maxend = sack + win;
		if (win == 0)
			rcv->td_maxend++;
	}
	if (ack == rcv->td_end)
		p->flags[!d] &= ~CT_TCPF_DATA_UNACKNOWLEDGED;

	if (kind == CT_TCP_K_ACK) {
		if (p->last_dir == d && p->last_seq == seq &&
		    p->last_ack == ack && p->last_end == end &&
		    p->last_win == raw_win) {
			p->retrans++;
		} else {
			p->last_dir = (uint8_t)d;
			p->last_seq = seq;
			p->last_ack = ack;
			p->last_end = end;
			p->last_win = raw_win;
			p->retrans = 0;
		}
	}
}

/*
 * tcp_in_window - is the segment within what the two ends allowed, and
 * if so, learn from it.  @state is the entry's stored state (not the
 * possibly rewritten old state of the caller).  With the sender S and
 * receiver R, and sack the highest (selective) ack:
 *
 *   I.   seq <= S.td_maxend                        else INVALID
 *                                                  (unless the overshoot
 *                                                  is within R's window)
 *   III. sack <= R.td_end                          else INVALID
 *   II.  seq + len >= S.td_end - R.td_maxwin       else IGNORE
 *   IV.  sack >= R.td_end - max(S.td_maxwin, 66000)  else IGNORE
 */
static enum tcp_window_verdict
tcp_in_window(struct ct_tcp_priv *p, uint8_t state, unsigned d, uint8_t kind,
	      const struct ct_packet *pkt, const struct ct_settings *set)
{
	const struct ct_tcp_info *th = &pkt->u.tcp;
	struct ct_tcp_dir *snd = &p->seen[d];
	struct ct_tcp_dir *rcv = &p->seen[!d];
	bool syn = th->flags & CT_TCP_SYN;
	bool has_ack = th->flags & CT_TCP_ACK;
	uint32_t seq = th->seq;
	uint32_t ack = th->ack;
	uint32_t sack = th->ack;
	uint32_t win = th->window;
	uint32_t end = tcp_seg_end(pkt);
	uint32_t maxackwin, swin;

	/* tcp_sack: SACK blocks count only if the receiver permitted them;
	 * the highest right edge after the ack replaces it. */
	if ((p->flags[!d] & CT_TCPF_SACK_PERM) && (th->opts & CT_TCPOPT_SACK) &&
	    seq_after(th->sack_right, sack))
		sack = th->sack_right;

	if (snd->td_maxwin == 0) {
		/* First packet seen from this direction. */
		if (syn) {
			tcp_init_sender(p, d, th, end);
			if (!has_ack)
				return TCP_WIN_ACCEPT;  /* simultaneous open */
		} else {
			/* Mid-stream: take the packet's word for it. */
			snd->td_end = end;
			swin = win << p->scale[d];
			snd->td_maxwin = swin ? swin : 1;
			snd->td_maxend = end + snd->td_maxwin;
			if (rcv->td_maxwin == 0) {
				/* Nothing seen the other way either: make
				 * III and IV pass until something is. */
				rcv->td_end = sack;
				rcv->td_maxend = sack;
			} else if (sack == rcv->td_end + 1) {
				/* Likely the answer to a keepalive. */
				rcv->td_end++;
			}
		}
	} else if (syn && seq_after(end, snd->td_end) &&
		   (state == CT_TCP_SYN_SENT || state == CT_TCP_SYN_RECV)) {
		/* RFC 793: a reinitialised TCP may reconnect at once with
		 * higher sequence numbers; start this direction over. */
		tcp_init_sender(p, d, th, end);
		if (d == CT_DIR_REPLY && !has_ack)
			return TCP_WIN_ACCEPT;
	}

	if (!has_ack) {
		/* No ACK: pretend it acknowledged everything. */
		ack = sack = rcv->td_end;
	} else if ((th->flags & CT_TCP_RST) && th->ack == 0) {
		/* Stacks that send RST|ACK with a zero ack. */
		ack = sack = rcv->td_end;
	}

	/* A RST answering a SYN may carry seq 0: take it as in window. */
	if ((th->flags & CT_TCP_RST) && seq == 0 && state == CT_TCP_SYN_SENT)
		seq = end = snd->td_end;

	maxackwin = snd->td_maxwin > TCP_MAXACKWIN_MIN ? snd->td_maxwin
						       : TCP_MAXACKWIN_MIN;

	/* I. Upper bound for data. */
	if (!seq_before(seq, snd->td_maxend + 1)) {
		uint32_t overshot = end - snd->td_maxend + 1;
		bool ack_ok = seq_after(sack, rcv->td_end - maxackwin - 1);
		bool in_recv_win = rcv->td_maxwin &&
			seq_after(end, snd->td_end - rcv->td_maxwin - 1);

		if (in_recv_win && ack_ok && overshot <= rcv->td_maxwin &&
		    seq_before(sack, rcv->td_end + 1)) {
			/* A sender exceeding the receive window a little:
			 * remember the data so that its ACK is not over
			 * the upper bound later, but ignore this packet. */
			snd->td_end = end;
			p->flags[d] |= CT_TCPF_DATA_UNACKNOWLEDGED;
			return tcp_window_fail(p, d, set, TCP_WIN_IGNORE);
		}
		return tcp_window_fail(p, d, set, TCP_WIN_INVALID);
	}

	/* III. Upper bound for acks: nothing acked that was not sent. */
	if (!seq_before(sack, rcv->td_end + 1))
		return tcp_window_fail(p, d, set, TCP_WIN_INVALID);

	/* II. Lower bound for data: already acknowledged, retransmitted. */
	if (rcv->td_maxwin &&
	    !seq_after(end, snd->td_end - rcv->td_maxwin - 1))
		return tcp_window_fail(p, d, set, TCP_WIN_IGNORE);

	/* IV. Lower bound for acks: an overly delayed ACK. */
	if (!seq_after(sack, rcv->td_end - maxackwin - 1))
		return tcp_window_fail(p, d, set, TCP_WIN_IGNORE);

	/* In window: learn.  Windows in SYNs are never scaled. */
	if (!syn)
		win <<= p->scale[d];
	tcp_learn(p, d, kind, has_ack, seq, ack, sack, end, win, th->window);
	return TCP_WIN_ACCEPT;
}

/*
 * tcp_new - the packet creating an entry.  A SYN starts SYN_SENT with the
 * originator's window and options.  Anything else that the table lets
 * start (an ACK) is a pickup of an established connection, allowed with
 * tcp_loose: the window data is guessed from the packet and both
 * directions are tracked liberally, since the window scale is unknown.
 * Returns false (and sets *reason) when no entry may be created.
 */
static bool tcp_new(struct ct_conn *c, const struct ct_proto_ctx *ctx,
		    uint8_t kind, uint8_t *reason)
{
	struct ct_tcp_priv *p = ct_conn_priv(c);
	const struct ct_packet *pkt = ctx->pkt;
	uint8_t next = tcp_next[CT_DIR_ORIGINAL][kind][CT_TCP_NONE];
	struct ct_tcp_dir *o = &p->seen[CT_DIR_ORIGINAL];

	if (next >= CT_TCP_N_STATES) {
		*reason = CT_PR_TCP_INVALID_STATE;  /* "invalid new" */
		return false;
	}
	if (next != CT_TCP_SYN_SENT && !ctx->set->tcp_loose) {
		*reason = CT_PR_TCP_NEW_NOT_SYN;
		return false;
	}

	*p = (struct ct_tcp_priv){ 0 };
	o->td_end = tcp_seg_end(pkt);
	o->td_maxwin = pkt->u.tcp.window ? pkt->u.tcp.window : 1;
	if (next == CT_TCP_SYN_SENT) {
		o->td_maxend = o->td_end;
		tcp_take_options(p, CT_DIR_ORIGINAL, &pkt->u.tcp);
	} else {
		o->td_maxend = o->td_end + o->td_maxwin;
		p->flags[CT_DIR_ORIGINAL] = CT_TCPF_SACK_PERM | CT_TCPF_BE_LIBERAL;
		p->flags[CT_DIR_REPLY] = CT_TCPF_SACK_PERM | CT_TCPF_BE_LIBERAL;
	}
	c->l4state = CT_TCP_NONE;
	p->last_index = CT_TCP_K_NONE;
	return true;
}

/*
 * The reopen rule (the SYN_SENT case of nf_conntrack_tcp_packet): a SYN
 * in TIME_WAIT or CLOSE replaces the entry when the old connection was
 * closed (a FIN was seen) or aborted by a RST from the same side.
 */
static bool tcp_may_reopen(const struct ct_tcp_priv *p, unsigned d)
{
	return ((p->flags[0] | p->flags[1]) & CT_TCPF_CLOSE_INIT) ||
	       (p->last_dir == d && p->last_index == CT_TCP_K_RST);
}

/*
 * An ignored SYN-ACK that acknowledges the SYN we ignored last, coming
 * from the other side: both ends are in sync and we are not.  Take the
 * window data of that SYN and restart from SYN_SENT -> SYN_RECV.
 * Returns false when the packet is not such an answer.
 */
static bool tcp_resync_on_synack(struct ct_tcp_priv *p, unsigned d,
				 uint8_t kind, const struct ct_tcp_info *th)
{
	unsigned ld = p->last_dir;
	struct ct_tcp_dir *s;

	if (kind != CT_TCP_K_SYNACK || p->last_index != CT_TCP_K_SYN ||
	    ld == d || th->ack != p->last_end)
		return false;

	s = &p->seen[ld];
	s->td_end = p->last_end;
	s->td_maxend = p->last_end;
	s->td_maxwin = p->last_win ? p->last_win : 1;
	p->scale[ld] = p->last_wscale;
	p->last_flags &= ~CT_TCPF_EXP_CHALLENGE_ACK;
	p->flags[ld] = p->last_flags;

	/* nf_ct_tcp_state_reset of the answering direction */
	p->seen[d] = (struct ct_tcp_dir){ 0 };
	p->scale[d] = 0;
	p->flags[d] &= CT_TCPF_BE_LIBERAL;
	return true;
}

/* Remember an ignored packet, so that an answer to it can be recognised. */
static void tcp_note_ignored(struct ct_tcp_priv *p, unsigned d, uint8_t kind,
			     uint8_t old_state, const struct ct_packet *pkt)
{
	const struct ct_tcp_info *th = &pkt->u.tcp;

	p->last_index = kind;
	p->last_dir = (uint8_t)d;
	p->last_seq = th->seq;
	p->last_end = tcp_seg_end(pkt);
	p->last_win = th->window;

	if (kind == CT_TCP_K_SYN && d == CT_DIR_ORIGINAL) {
		/* A SYN the ends may agree with: keep its options for the
		 * SYN-ACK that would resynchronise us.  In LAST_ACK the
		 * answer may be an RFC 5961 challenge ACK instead, which
		 * must not be taken for the last ACK. */
		p->last_flags = 0;
		p->last_wscale = 0;
		if (th->hdr_len > 20 && (th->opts & CT_TCPOPT_WSCALE)) {
			p->last_flags |= CT_TCPF_WINDOW_SCALE;
			p->last_wscale = th->wscale > 14 ? 14 : th->wscale;
		}
		if (th->hdr_len > 20 && (th->opts & CT_TCPOPT_SACK_PERM))
			p->last_flags |= CT_TCPF_SACK_PERM;
		if (old_state == CT_TCP_LAST_ACK)
			p->last_flags |= CT_TCPF_EXP_CHALLENGE_ACK;
	}

	/* An ACK answering the SYN may be a challenge ACK; a RST with
	 * this sequence number would then be its consequence. */
	if (old_state == CT_TCP_SYN_SENT && kind == CT_TCP_K_ACK &&
	    d == CT_DIR_REPLY)
		p->last_ack = th->ack;
}

enum tcp_rst_verdict {
	TCP_RST_CHECK_WINDOW,  /* go on with the window checks */
	TCP_RST_SKIP_WINDOW,   /* accept without window checks */
	TCP_RST_INVALID,       /* RST sequence number unacceptable */
};

/* tcp_can_early_drop: the closing states. */
static bool tcp_closing(uint8_t state)
{
	switch (state) {
	case CT_TCP_FIN_WAIT:
	case CT_TCP_LAST_ACK:
	case CT_TCP_TIME_WAIT:
	case CT_TCP_CLOSE:
	case CT_TCP_CLOSE_WAIT:
		return true;
	default:
		return false;
	}
}

/*
 * The RST rules (the CLOSE case of nf_conntrack_tcp_packet).  May set
 * *new_state back to @old_state: a RST whose sequence number is
 * acceptable but not exact keeps an established connection, as the
 * receiver answers it with a challenge ACK (RFC 5961).
 */
static enum tcp_rst_verdict tcp_check_rst(struct ct_tcp_priv *p, unsigned d,
					  uint8_t old_state, uint8_t *new_state,
					  const struct ct_proto_ctx *ctx)
{
	const struct ct_tcp_info *th = &ctx->pkt->u.tcp;
	bool seen_reply = ctx->status & CT_ST_SEEN_REPLY;
	bool assured = ctx->status & CT_ST_ASSURED;
	bool established = old_state == CT_TCP_ESTABLISHED && assured;

	/* Closing: the tuple may already be reused, the window data stale. */
	if (tcp_closing(old_state))
		return TCP_RST_SKIP_WINDOW;

	/* td_maxack is stale if a SYN was let through since.  Where the
	 * kernel "break"s out of its switch here, the RST goes on to the
	 * window checks. */
	if ((p->flags[!d] & CT_TCPF_MAXACK_SET) &&
	    p->last_index != CT_TCP_K_SYN) {
		uint32_t maxack = p->seen[!d].td_maxack;

		/* seq 0 before ESTABLISHED: most likely the answer to a
		 * SYN we let through. */
		if (th->seq == 0 && !established)
			return TCP_RST_CHECK_WINDOW;
		if (seq_before(th->seq, maxack) &&
		    !ctx->set->tcp_ignore_invalid_rst)
			return TCP_RST_INVALID;
		if (!established || th->seq == maxack)
			return TCP_RST_CHECK_WINDOW;
		/* A RST right after the same side's data, e.g.
		 *   P 235946583:235946602(19) ack 42
		 *   R 235946602:235946602(0)  ack 42 */
		if (p->last_index == CT_TCP_K_ACK && p->last_dir == d &&
		    th->seq == p->last_end)
			return TCP_RST_CHECK_WINDOW;
		/* In window but not exact: the receiver answers with a
		 * challenge ACK (RFC 5961) and the connection lives on. */
		*new_state = old_state;
	}

	/* A RST answering a SYN or ACK we let through (ignored SYN in a
	 * live connection, or a half-open connection): it may acknowledge
	 * data we never tracked, so skip the window checks.  The SYN must
	 * have come from the other side: "do not force CLOSE on
	 * invalid-seq RST without direction check" (May 2026, in stable
	 * 6.18.y and 7.0.y; kernels before it lack the last_dir test). */
	if (((seen_reply && p->last_index == CT_TCP_K_SYN &&
	      p->last_dir != d) ||
	     (!assured && p->last_index == CT_TCP_K_ACK)) &&
	    th->ack == p->last_end)
		return TCP_RST_SKIP_WINDOW;

	/* A RST following the challenge ACK the responder sent to a SYN. */
	if (old_state == CT_TCP_SYN_SENT && p->last_index == CT_TCP_K_ACK &&
	    p->last_dir == CT_DIR_REPLY && th->seq == p->last_ack)
		return TCP_RST_SKIP_WINDOW;

	return TCP_RST_CHECK_WINDOW;
}

/*
 * nf_tcp_handle_invalid: an assured connection whose FIN or RST was out of
 * window, answered by an out-of-window FIN or RST from the other side, is
 * probably dead while we hold it ESTABLISHED: shorten its remaining life
 * to the "unacknowledged" timeout (only when more than 120 s remain).
 * Otherwise remember the packet as the one to be answered.
 */
static void tcp_handle_invalid(struct ct_conn *c, struct ct_tcp_priv *p,
			       unsigned d, uint8_t kind,
			       const struct ct_proto_ctx *ctx,
			       struct ct_proto_out *out)
{
	uint64_t remaining, unack;

	if (!(ctx->status & CT_ST_ASSURED))
		return;
	if (kind != CT_TCP_K_RST && kind != CT_TCP_K_FIN)
		return;

	if (p->last_dir != d && (p->last_index == CT_TCP_K_FIN ||
				 p->last_index == CT_TCP_K_RST)) {
		remaining = c->expires > ctx->now ? c->expires - ctx->now : 0;
		if (remaining < ct_secs(TCP_INVALID_SHRINK_MIN_S))
			return;
		unack = ct_secs(ctx->set->tcp_timeouts[CT_TCP_TO_UNACK]);
		if (remaining > unack)
			out->timeout_ns = unack;
	} else {
		p->last_index = kind;
		p->last_dir = (uint8_t)d;
	}
}

/* The timeout after an accepted packet, before the no-reply rules. */
static inline uint32_t tcp_pick_timeout_s(const struct ct_tcp_priv *p,
				   const struct ct_settings *set,
				   uint8_t kind, uint8_t new_state)
{
	uint32_t state_to = tcp_timeout_s(set, new_state);
	uint32_t retrans_to = set->tcp_timeouts[CT_TCP_TO_RETRANS];
	uint32_t unack_to = set->tcp_timeouts[CT_TCP_TO_UNACK];

	if (p->retrans >= set->tcp_max_retrans && state_to > retrans_to)
		return retrans_to;
	if (kind == CT_TCP_K_RST)
		return set->tcp_timeouts[CT_TCP_TO_CLOSE];
	if (((p->flags[0] | p->flags[1]) & CT_TCPF_DATA_UNACKNOWLEDGED) &&
	    state_to > unack_to)
		return unack_to;
	if (p->last_win == 0 && state_to > retrans_to)
		return retrans_to;
	return state_to;
}

static void tcp_invalid(struct ct_proto_out *out, uint8_t reason)
{
	out->verdict = CT_PV_INVALID;
	out->reason = reason;
}

/* nf_conntrack_tcp_packet, every case; tcp_packet() tries the fast path
 * for the commonest one first. */
static void tcp_packet_general(struct ct_conn *c,
			       const struct ct_proto_ctx *ctx,
			       struct ct_proto_out *out)
{
	struct ct_tcp_priv *p = ct_conn_priv(c);
	const struct ct_packet *pkt = ctx->pkt;
	const struct ct_tcp_info *th = &pkt->u.tcp;
	const struct ct_settings *set = ctx->set;
	unsigned d = ctx->dir == CT_DIR_REPLY ? CT_DIR_REPLY : CT_DIR_ORIGINAL;
	uint8_t kind = tcp_kind(th->flags);
	uint8_t old_state, new_state, reason = 0;
	bool check_window = true;
	uint32_t timeout_s;

	if (ctx->is_new && !tcp_new(c, ctx, kind, &reason)) {
		tcp_invalid(out, reason);
		return;
	}

	old_state = c->l4state < CT_TCP_N_STATES ? c->l4state : CT_TCP_NONE;
	new_state = tcp_next[d][kind][old_state];

	/* A SYN reopening TIME_WAIT or CLOSE: replace the entry when the
	 * old connection is over, else treat the SYN as ignored (it may
	 * belong to a connection the ends still share). */
	if (new_state == CT_TCP_SYN_SENT && old_state >= CT_TCP_TIME_WAIT) {
		if (tcp_may_reopen(p, d)) {
			out->verdict = CT_PV_REPEAT;
			return;
		}
		new_state = CT_TCP_IGNORE;
	}

	switch (new_state) {
	case CT_TCP_IGNORE:
		if (tcp_resync_on_synack(p, d, kind, th)) {
			old_state = CT_TCP_SYN_SENT;
			new_state = CT_TCP_SYN_RECV;
			break;
		}
		tcp_note_ignored(p, d, kind, old_state, pkt);
		out->verdict = CT_PV_IGNORE;
		return;
	case CT_TCP_INVALID:
		tcp_invalid(out, CT_PR_TCP_INVALID_STATE);
		return;
	case CT_TCP_TIME_WAIT:
		/* RFC 5961: the ACK answering a SYN we let through in
		 * LAST_ACK is a challenge ACK, not the last ACK. */
		if (old_state == CT_TCP_LAST_ACK && kind == CT_TCP_K_ACK &&
		    p->last_dir != d && p->last_index == CT_TCP_K_SYN &&
		    (p->last_flags & CT_TCPF_EXP_CHALLENGE_ACK)) {
			p->last_flags &= ~CT_TCPF_EXP_CHALLENGE_ACK;
			out->verdict = CT_PV_IGNORE;
			return;
		}
		break;
	case CT_TCP_SYN_SENT2:
		/* The table cannot tell a simultaneous open's SYN_RECV
		 * from a normal one: remember it. */
		p->last_flags |= CT_TCPF_SIMULTANEOUS_OPEN;
		break;
	case CT_TCP_SYN_RECV:
		/* In a simultaneous open the responder's ACK completes
		 * the handshake. */
		if (d == CT_DIR_REPLY && kind == CT_TCP_K_ACK &&
		    (p->last_flags & CT_TCPF_SIMULTANEOUS_OPEN))
			new_state = CT_TCP_ESTABLISHED;
		break;
	case CT_TCP_CLOSE:
		if (kind != CT_TCP_K_RST)
			break;
		switch (tcp_check_rst(p, d, old_state, &new_state, ctx)) {
		case TCP_RST_INVALID:
			tcp_invalid(out, CT_PR_TCP_INVALID_RST);
			return;
		case TCP_RST_SKIP_WINDOW:
			check_window = false;
			break;
		case TCP_RST_CHECK_WINDOW:
			break;
		}
		break;
	default:
		break;
	}

	if (check_window) {
		switch (tcp_in_window(p, c->l4state, d, kind, pkt, set)) {
		case TCP_WIN_IGNORE:
			out->verdict = CT_PV_IGNORE;
			return;
		case TCP_WIN_INVALID:
			tcp_handle_invalid(c, p, d, kind, ctx, out);
			tcp_invalid(out, CT_PR_TCP_OUT_OF_WINDOW);
			return;
		case TCP_WIN_ACCEPT:
			break;
		}
	}

	/* From here on the packet is in window. */
	p->last_index = kind;
	p->last_dir = (uint8_t)d;
	c->l4state = new_state;
	if (old_state != new_state && new_state == CT_TCP_FIN_WAIT)
		p->flags[d] |= CT_TCPF_CLOSE_INIT;
	if (old_state != new_state)
		out->events |= CT_EVW_PROTOINFO;

	timeout_s = tcp_pick_timeout_s(p, set, kind, new_state);

	if (!(ctx->status & CT_ST_SEEN_REPLY)) {
		/* Nothing answered yet. */
		if (th->flags & CT_TCP_RST) {
			/* Only a RST came back (or the originator gave
			 * up): a refused connection, gone at once. */
			out->verdict = CT_PV_DESTROY;
			out->timeout_ns = ct_secs(timeout_s);
			return;
		}
		if (kind == CT_TCP_K_SYN && old_state == CT_TCP_SYN_SENT) {
			/* SYN retransmits must not keep the entry alive
			 * (port reuse could do so forever). */
			out->verdict = CT_PV_IGNORE;
			return;
		}
		/* A pickup without an answer gets no ESTABLISHED lease. */
		if (new_state == CT_TCP_ESTABLISHED &&
		    timeout_s > set->tcp_timeouts[CT_TCP_TO_UNACK])
			timeout_s = set->tcp_timeouts[CT_TCP_TO_UNACK];
	} else if (!(ctx->status & CT_ST_ASSURED) &&
		   (old_state == CT_TCP_SYN_RECV ||
		    old_state == CT_TCP_ESTABLISHED) &&
		   new_state == CT_TCP_ESTABLISHED) {
		/* The handshake completed, or a picked-up connection was
		 * answered. */
		out->set_assured = true;
	}

	out->verdict = CT_PV_ACCEPT;
	out->timeout_ns = ct_secs(timeout_s);
}

/*
 * tcp_fast_ack - the commonest packet, an ACK (no SYN, FIN or RST) of an
 * ESTABLISHED connection that has seen a reply, both of whose directions
 * have window data, lying inside every bound of tcp_in_window().  For
 * such a packet tcp_packet_general() takes the table's ES -> ES cell, no
 * special rule, and the accepting branch of every window check; this is
 * that path with what cannot vary folded away.  It returns false, having
 * changed nothing, whenever one of those conditions does not hold, and
 * the general code then decides (a window check that fails may still
 * pass with BE_LIBERAL or ignore the packet: that is its business).
 *
 * What it writes must be exactly what the general path writes - tests
 * (tests/proto/test_tcp_fast.c) run both over the same segments and
 * compare the whole private area, state, verdict and timeout.
 */
static inline __attribute__((always_inline)) bool
tcp_fast_ack(struct ct_conn *c, const struct ct_proto_ctx *ctx,
	     struct ct_proto_out *out)
{
	struct ct_tcp_priv *p = ct_conn_priv(c);
	const struct ct_packet *pkt = ctx->pkt;
	const struct ct_tcp_info *th = &pkt->u.tcp;
	const struct ct_settings *set = ctx->set;
	unsigned d = ctx->dir == CT_DIR_REPLY ? CT_DIR_REPLY : CT_DIR_ORIGINAL;
	struct ct_tcp_dir *snd = &p->seen[d];
	struct ct_tcp_dir *rcv = &p->seen[!d];
	uint32_t seq, ack, sack, end, maxackwin, timeout_s;

	/* A new entry has l4state NONE, so is never ESTABLISHED here. */
	if ((th->flags & (CT_TCP_SYN | CT_TCP_FIN | CT_TCP_RST | CT_TCP_ACK)) !=
	    CT_TCP_ACK || c->l4state != CT_TCP_ESTABLISHED ||
	    !(ctx->status & CT_ST_SEEN_REPLY))
		return false;
	/* Window data both ways: not the mid-stream pickup of tcp_in_window,
	 * and check II applies. */
	if (snd->td_maxwin == 0 || rcv->td_maxwin == 0)
		return false;

	seq = th->seq;
	ack = th->ack;
	sack = ack;
	if ((th->opts & CT_TCPOPT_SACK) && (p->flags[!d] & CT_TCPF_SACK_PERM) &&
	    seq_after(th->sack_right, sack))
		sack = th->sack_right;
	end = seq + pkt->payload_len;
	maxackwin = snd->td_maxwin > TCP_MAXACKWIN_MIN ? snd->td_maxwin
						       : TCP_MAXACKWIN_MIN;
	/* tcp_in_window's checks I, III, II, IV, all passing. */
	if (!seq_before(seq, snd->td_maxend + 1) ||
	    !seq_before(sack, rcv->td_end + 1) ||
	    !seq_after(end, snd->td_end - rcv->td_maxwin - 1) ||
	    !seq_after(sack, rcv->td_end - maxackwin - 1))
		return false;

	/* tcp_in_window's learning, for a non-SYN ACK */
	tcp_learn(p, d, CT_TCP_K_ACK, true, seq, ack, sack, end,
		  (uint32_t)th->window << p->scale[d], th->window);

	/* tcp_packet_general's tail: ES -> ES, no event. */
	p->last_index = CT_TCP_K_ACK;
	timeout_s = tcp_pick_timeout_s(p, set, CT_TCP_K_ACK, CT_TCP_ESTABLISHED);
	/* SEEN_REPLY is set: a picked-up connection answered becomes
	 * ASSURED with this packet */
	out->set_assured = !(ctx->status & CT_ST_ASSURED);
	out->verdict = CT_PV_ACCEPT;
	out->timeout_ns = ct_secs(timeout_s);
	return true;
}

void ct_tcp_packet_general(struct ct_conn *c, const struct ct_proto_ctx *ctx,
			   struct ct_proto_out *out)
{
	tcp_packet_general(c, ctx, out);
}

static void tcp_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
		       struct ct_proto_out *out)
{
	if (__builtin_expect(tcp_fast_ack(c, ctx, out), 1))
		return;
	tcp_packet_general(c, ctx, out);
}

static const char *tcp_state_name(uint8_t state)
{
	return state < CT_TCP_N_STATES ? tcp_state_names[state] : NULL;
}

static bool tcp_can_early_drop(const struct ct_conn *c)
{
	return tcp_closing(c->l4state);
}

/*
 * Records (proto.h): the whole private area, field by field, as
 * ctnetlink's protoinfo would carry it if it carried everything (it
 * carries the state, the flags and the scales: that is what a commit
 * takes, below).
 */
static void tcp_to_record(const struct ct_conn *c, union ct_record_proto *rp,
			  ct_time_ns now)
{
	const struct ct_tcp_priv *p = ct_conn_priv_const(c);
	struct ct_record_tcp *r = &rp->tcp;

	for (unsigned d = 0; d < 2; d++) {
		r->dir[d].td_end = p->seen[d].td_end;
		r->dir[d].td_maxend = p->seen[d].td_maxend;
		r->dir[d].td_maxwin = p->seen[d].td_maxwin;
		r->dir[d].td_maxack = p->seen[d].td_maxack;
		r->dir[d].td_scale = p->scale[d];
		r->dir[d].flags = p->flags[d];
	}
	r->last_seq = p->last_seq;
	r->last_ack = p->last_ack;
	r->last_end = p->last_end;
	r->last_win = p->last_win;
	r->last_index = p->last_index;
	r->last_dir = p->last_dir;
	r->last_wscale = p->last_wscale;
	r->last_flags = p->last_flags;
	r->retrans = p->retrans;
}

/* What the tracker can have written: scales are clamped to 14 when taken
 * (tcp_take_options), per-direction flags are IP_CT_TCP_FLAG_*, the last
 * packet's kind and direction are enum values, its flags the two options
 * and the two markers. */
#define TCP_LAST_FLAGS (CT_TCPF_WINDOW_SCALE | CT_TCPF_SACK_PERM | \
			CT_TCPF_EXP_CHALLENGE_ACK | CT_TCPF_SIMULTANEOUS_OPEN)
_Static_assert(CT_RECORD_TCPF_ALL == (CT_TCPF_WINDOW_SCALE | CT_TCPF_SACK_PERM |
				      CT_TCPF_CLOSE_INIT | CT_TCPF_BE_LIBERAL |
				      CT_TCPF_DATA_UNACKNOWLEDGED | CT_TCPF_MAXACK_SET),
	       "record flags are the tracker's");

static enum ct_record_reason tcp_record_check(uint8_t l4state,
					      const union ct_record_proto *rp)
{
	const struct ct_record_tcp *r = &rp->tcp;

	(void)l4state;
	for (unsigned d = 0; d < 2; d++)
		if (r->dir[d].td_scale > 14 || (r->dir[d].flags & ~CT_RECORD_TCPF_ALL))
			return CT_RECORD_R_PROTO;
	if (r->last_index >= CT_TCP_K_N || r->last_dir > CT_DIR_REPLY ||
	    r->last_wscale > 14 || (r->last_flags & ~TCP_LAST_FLAGS))
		return CT_RECORD_R_PROTO;
	return CT_RECORD_OK;
}

static void tcp_from_record(struct ct_conn *c, const union ct_record_proto *rp,
			    ct_time_ns base, bool commit, const struct ct_settings *set)
{
	struct ct_tcp_priv *p = ct_conn_priv(c);
	const struct ct_record_tcp *r = &rp->tcp;

	(void)base;
	(void)set;
	if (commit) {
		/* nlattr_to_tcp on a zeroed ip_ct_tcp: the flags, and the
		 * scales only when both directions say WINDOW_SCALE; no
		 * window data, so tcp_in_window picks each direction up from
		 * its next packet (td_maxwin 0); last_index 0 is the kernel's
		 * TCP_SYN_SET, as its zeroed state has it */
		bool scales = (r->dir[0].flags & CT_TCPF_WINDOW_SCALE) &&
			      (r->dir[1].flags & CT_TCPF_WINDOW_SCALE);

		for (unsigned d = 0; d < 2; d++) {
			p->flags[d] = r->dir[d].flags;
			p->scale[d] = scales ? r->dir[d].td_scale : 0;
		}
		return;
	}
	for (unsigned d = 0; d < 2; d++) {
		p->seen[d].td_end = r->dir[d].td_end;
		p->seen[d].td_maxend = r->dir[d].td_maxend;
		p->seen[d].td_maxwin = r->dir[d].td_maxwin;
		p->seen[d].td_maxack = r->dir[d].td_maxack;
		p->scale[d] = r->dir[d].td_scale;
		p->flags[d] = r->dir[d].flags;
	}
	p->last_seq = r->last_seq;
	p->last_ack = r->last_ack;
	p->last_end = r->last_end;
	p->last_win = r->last_win;
	p->last_index = r->last_index;
	p->last_dir = r->last_dir;
	p->last_wscale = r->last_wscale;
	p->last_flags = r->last_flags;
	p->retrans = r->retrans;
}

const struct ct_proto ct_proto_tcp = {
	.name = "tcp",
	.l4 = 6,
	.priv_size = CT_TCP_PRIV_SIZE,
	.n_states = CT_TCP_N_STATES,
	.packet = tcp_packet,
	.state_name = tcp_state_name,
	.can_early_drop = tcp_can_early_drop,
	.to_record = tcp_to_record,
	.record_check = tcp_record_check,
	.from_record = tcp_from_record,
};
