/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_node.c - one end of a sync link: the caches, the queues, framing
 * of what arrives and batching of what leaves (conntrackd's sync-mode.c,
 * channel.c, internal_cache.c and external_cache.c, without sockets,
 * threads or clocks).
 *
 * What goes out.  ct_sync_node_event() updates the internal cache and
 * queues the object; ct_sync_node_run() builds each queued object's
 * message from its state *when it goes out* (so a connection that changed
 * five times while queued is sent once) and packs messages into datagrams
 * the way conntrackd's channel buffer does: a message is added while the
 * datagram stays below datagram_max, else the datagram goes first.  One
 * thing is computed later than conntrackd computes it, on purpose: the
 * TIMEOUT attribute.  conntrackd sends the timeout its cache copied from
 * the kernel's last event, however long ago that was (a resync of an
 * hour-old connection tells the peer the timeout it had an hour ago);
 * ctrack keeps the connection's expiry and sends what is left of it.
 *
 * What comes in.  ct_sync_node_recv() walks the messages of a datagram as
 * channel_handler_routine() does (a bad length ends the datagram, a bad
 * version skips one message), hands each to the mode (FTFW, NOTRACK or
 * ALARM: sequence tracking, ACK/NACK, resync) and applies data messages
 * to the external cache.  A stream node (TCP) keeps a message cut by the
 * end of a read until the rest arrives; a stream whose framing is lost
 * (a length that cannot be) is skipped until a plausible header shows up,
 * counted in msg_rcv_stream_resyncs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sync/sync_node.h"
#include "sync/sync_wire.h"

void ct_sync_config_default(struct ct_sync_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = CT_SYNC_FTFW;
	cfg->initial_seq = 0;     /* the caller's: conntrackd uses time(NULL) */
	cfg->datagram_max = 1500 - 28;
	cfg->window_size = 300;
	cfg->resend_queue_max = 131072;
	cfg->alive_ms = 1000;
	cfg->refresh_s = 60;
	cfg->cache_timeout_s = 180;
	cfg->internal_max = 262144;
	cfg->external_max = 262144;
	cfg->seq_window = 1u << 20;
	cfg->startup_resync = true;
	cfg->resync_on_hello = true;
}

static bool config_ok(const struct ct_sync_config *c)
{
	return c->send && c->mode <= CT_SYNC_ALARM && c->window_size > 0 &&
	       c->resend_queue_max > 0 && c->alive_ms > 0 && c->refresh_s > 0 &&
	       c->cache_timeout_s > 0 && c->internal_max > 0 && c->external_max > 0 &&
	       c->seq_window > 0 && c->seq_window < (1u << 31) &&
	       c->datagram_max > CT_SYNC_CONN_MSG_MAX && c->datagram_max <= 65507;
}

int ct_sync_node_create(const struct ct_sync_config *cfg, ct_time_ns now,
			struct ct_sync_node **out)
{
	struct ct_sync_node *n;
	int rc;

	if (!cfg || !out || !config_ok(cfg))
		return -EINVAL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->cfg = *cfg;
	n->out = malloc(cfg->datagram_max);
	if (cfg->stream)
		n->in = malloc(SYNC_STREAM_MAX);
	rc = n->out && (!cfg->stream || n->in) ? 0 : -ENOMEM;
	if (!rc)
		rc = sync_cache_init(&n->internal, cfg->internal_max, cfg->hash_seed);
	if (!rc)
		rc = sync_cache_init(&n->external, cfg->external_max,
				     cfg->hash_seed ? cfg->hash_seed + 1 : 0);
	if (rc) {
		ct_sync_node_destroy(n);
		return rc;
	}
	sq_init(&n->tx);
	sq_init(&n->rs);
	n->next_seq = cfg->initial_seq;
	n->rseq.window = cfg->seq_window;
	n->window_left = cfg->window_size;
	n->alive_due = now + cfg->alive_ms * SYNC_NS_PER_MS;
	n->resync_wanted = cfg->startup_resync && cfg->mode != CT_SYNC_ALARM;
	n->rng = (cfg->hash_seed ? cfg->hash_seed : (uint64_t)now) | 1;
	*out = n;
	return 0;
}

static void free_queue(struct ct_sync_node *n, struct sq_list *q)
{
	while (q->head.next != &q->head) {
		struct sq_node *qn = q->head.next;

		sq_del(q, qn);
		if (qn->kind == SQ_CTL)
			free(qn);
		/* objects are freed with their cache */
	}
	(void)n;
}

void ct_sync_node_destroy(struct ct_sync_node *n)
{
	if (!n)
		return;
	if (n->tx.head.next) {
		free_queue(n, &n->tx);
		free_queue(n, &n->rs);
	}
	sync_cache_fini(&n->internal);
	sync_cache_fini(&n->external);
	free(n->out);
	free(n->in);
	free(n);
}

/* ------------------------------------------------------------------ */
/* objects and queues                                                 */

void sync_obj_release(struct ct_sync_node *n, struct sync_obj *o)
{
	if (o->status != OBJ_DEAD || o->qn.where != SQ_NONE)
		return;
	sync_cache_unhash(&n->internal, o);
	sync_cache_free(&n->internal, o);
}

void sync_obj_dequeue(struct ct_sync_node *n, struct sync_obj *o)
{
	struct sq_list *q = sq_of(n, &o->qn);

	if (q)
		sq_del(q, &o->qn);
	sync_obj_release(n, o);
}

/* Drop an object for good: out of its queue and the hash, freed. */
static void obj_destroy(struct ct_sync_node *n, struct sync_obj *o)
{
	struct sq_list *q = sq_of(n, &o->qn);

	if (q)
		sq_del(q, &o->qn);
	sync_cache_unhash(&n->internal, o);
	sync_cache_free(&n->internal, o);
}

void sync_enqueue(struct ct_sync_node *n, struct sync_obj *o)
{
	/* conntrackd's ftfw_enqueue / notrack_enqueue / alarm_enqueue: an
	 * object waiting for its ACK goes back to the transmit queue, one
	 * already there stays where it is. */
	if (o->qn.where == SQ_RS)
		sq_del(&n->rs, &o->qn);
	if (o->qn.where == SQ_NONE)
		sq_add_tail(&n->tx, &o->qn, SQ_TX);
}

void sync_queue_ctl(struct ct_sync_node *n, uint8_t flags, uint32_t from, uint32_t to)
{
	struct sync_ctl *c = calloc(1, sizeof(*c));

	if (!c)
		return;    /* as tx_queue_add_ctlmsg: nothing sent, FTFW repairs */
	c->qn.kind = SQ_CTL;
	c->flags = flags;
	c->from = from;
	c->to = to;
	sq_add_tail(&n->tx, &c->qn, SQ_TX);
}

void sync_bulk(struct ct_sync_node *n)
{
	struct sync_cache *c = &n->internal;

	n->st.bulk_sends++;
	for (uint64_t b = 0; b < c->nbuckets; b++)
		for (struct sync_obj *o = c->buckets[b]; o; o = o->hnext)
			if (o->status != OBJ_DEAD)
				sync_enqueue(n, o);
}

/* ------------------------------------------------------------------ */
/* our own connections                                                */

int ct_sync_node_local(struct ct_sync_node *n, uint8_t type,
		       const struct ct_sync_conn *c, ct_time_ns now)
{
	uint64_t hash = sync_cache_hash(&n->internal, &c->orig);
	struct sync_obj *o = sync_cache_find_h(&n->internal, &c->orig, hash);
	int err = 0;

	switch (type) {
	case CT_SYNC_T_CT_NEW:
		/* internal_cache_ct_event_new: an entry already there (even
		 * one DEAD and waiting for its ACK) is replaced. */
		if (o)
			obj_destroy(n, o);
		o = sync_cache_add(&n->internal, c, hash, now, &err);
		if (!o)
			return err;
		break;
	case CT_SYNC_T_CT_UPD:
		/* cache_update_force: a DEAD one is replaced by a new one. */
		if (o && o->status == OBJ_DEAD) {
			obj_destroy(n, o);
			o = NULL;
		}
		if (!o) {
			o = sync_cache_add(&n->internal, c, hash, now, &err);
			if (!o)
				return err;
		} else {
			if (sync_obj_store(o, c)) {
				n->internal.st.create_failed++;
				return -ENOMEM;
			}
			o->status = OBJ_ALIVE;
			n->internal.st.updated++;
		}
		break;
	case CT_SYNC_T_CT_DEL:
		/* not in the cache, or already dead: nothing to say */
		if (!o || o->status == OBJ_DEAD)
			return 0;
		/* keep the last state known; a DEL carries the tuple */
		sync_cache_set_dead(&n->internal, o);
		break;
	default:
		return -EINVAL;
	}
	o->updated_ns = now;
	if (type != CT_SYNC_T_CT_DEL) {
		o->expires_ns = (c->has & CT_SYNC_HAS_TIMEOUT) ?
				now + (ct_time_ns)c->timeout_s * SYNC_NS_PER_S : 0;
	}
	sync_enqueue(n, o);
	return 0;
}

int ct_sync_node_event(struct ct_sync_node *n, const struct ct_event *ev,
		       ct_time_ns now)
{
	struct ct_sync_conn c;
	uint8_t type;
	struct sync_obj *o;
	int rc;

	switch (ev->type) {
	case CT_EV_NEW:
		type = CT_SYNC_T_CT_NEW;
		break;
	case CT_EV_UPDATE:
		type = CT_SYNC_T_CT_UPD;
		break;
	case CT_EV_DESTROY:
		type = CT_SYNC_T_CT_DEL;
		break;
	default:
		return -EINVAL;
	}
	ct_sync_conn_from_info(&c, &ev->conn, ev->ts);
	rc = ct_sync_node_local(n, type, &c, now);
	/* the expiry is the connection's own, on the event's clock */
	if (rc == 0 && type != CT_SYNC_T_CT_DEL) {
		o = sync_cache_find(&n->internal, &c.orig);
		if (o)
			o->expires_ns = ev->conn.expires > ev->ts ?
					now + (ev->conn.expires - ev->ts) : now;
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* what comes in                                                      */

void sync_count_malformed(struct ct_sync_node *n, enum ct_sync_err e)
{
	struct ct_sync_stats *s = &n->st;

	switch (e) {
	case CT_SYNC_OK:
	case CT_SYNC_E_MAX:
		return;
	case CT_SYNC_E_TRUNCATED:
		s->msg_rcv_truncated++;
		break;
	case CT_SYNC_E_BAD_SIZE:
		s->msg_rcv_bad_size++;
		break;
	case CT_SYNC_E_BAD_VERSION:
		s->msg_rcv_bad_version++;
		break;
	case CT_SYNC_E_BAD_HEADER:
		s->msg_rcv_bad_header++;
		break;
	case CT_SYNC_E_BAD_TYPE:
		s->msg_rcv_bad_type++;
		break;
	case CT_SYNC_E_BAD_PAYLOAD:
		s->msg_rcv_bad_payload++;
		break;
	case CT_SYNC_E_UNKNOWN_ATTR:
		s->msg_rcv_unknown_attr++;
		break;
	case CT_SYNC_E_DUP_ATTR:
		s->msg_rcv_dup_attr++;
		break;
	case CT_SYNC_E_IMPOSSIBLE:
		s->msg_rcv_impossible++;
		break;
	}
	s->msg_rcv_malformed++;
}

void sync_apply_data(struct ct_sync_node *n, const uint8_t *msg,
		     const struct ct_sync_hdr *h, ct_time_ns now)
{
	struct sync_cache *ext = &n->external;
	struct ct_sync_conn c;
	struct sync_obj *o;
	enum ct_sync_err e;
	uint64_t hash;
	bool cut;
	int err;

	if (h->type > CT_SYNC_T_STATE_MAX) {
		sync_count_malformed(n, CT_SYNC_E_BAD_TYPE);
		return;
	}
	if (h->type >= CT_SYNC_T_EXP_NEW) {
		n->st.msg_rcv_exp++;
		return;
	}
	e = ct_sync_msg_parse_conn(msg, h, &c, &cut);
	if (e != CT_SYNC_OK) {
		sync_count_malformed(n, e);
		return;
	}
	if (cut)
		n->st.msg_rcv_labels_cut++;
	hash = sync_cache_hash(ext, &c.orig);
	o = sync_cache_find_h(ext, &c.orig, hash);

	switch (h->type) {
	case CT_SYNC_T_CT_NEW:
		/* external_cache_ct_new: replace what is there */
		if (o) {
			sync_cache_unhash(ext, o);
			ext->st.destroyed++;
			sync_cache_free(ext, o);
		}
		o = sync_cache_add(ext, &c, hash, now, &err);
		break;
	case CT_SYNC_T_CT_UPD:
		/* cache_update_force */
		if (o) {
			if (sync_obj_store(o, &c)) {
				ext->st.create_failed++;
				return;
			}
			o->updated_ns = now;
			o->status = OBJ_ALIVE;
			ext->st.updated++;
		} else {
			o = sync_cache_add(ext, &c, hash, now, &err);
		}
		break;
	default: /* CT_DEL */
		if (o) {
			sync_cache_unhash(ext, o);
			ext->st.destroyed++;
			sync_cache_free(ext, o);
		}
		return;
	}
	if (o && n->cfg.mode == CT_SYNC_ALARM)
		sync_lru_add_tail(ext, o);
}

/* One whole message of a datagram or stream. */
static void handle_msg(struct ct_sync_node *n, const uint8_t *msg,
		       const struct ct_sync_hdr *h, ct_time_ns now, int *accepted)
{
	int r;

	n->st.msgs_recv++;
	switch (n->cfg.mode) {
	case CT_SYNC_FTFW:
		r = sync_ftfw_recv(n, msg, h, now);
		break;
	case CT_SYNC_NOTRACK:
		r = sync_notrack_recv(n, msg, h, now);
		break;
	default:
		r = sync_alarm_recv(n, msg, h, now);
		break;
	}
	switch (r) {
	case MSG_DATA:
		sync_apply_data(n, msg, h, now);
		/* fall through */
	case MSG_CTL:
		n->st.peer_seen = true;
		n->st.peer_last_ns = now;
		(*accepted)++;
		break;
	case MSG_BAD:
		sync_count_malformed(n, CT_SYNC_E_BAD_HEADER);
		break;
	default: /* MSG_DROP: counted by the mode */
		break;
	}
}

/* No sender writes a longer message: conntrackd builds each in a 4096-byte
 * buffer (BUILD_NETMSG_FROM_CT).  A stream header that claims more has
 * lost the framing; it is not waited for. */
#define SYNC_MSG_PLAUSIBLE 4096

/* Walk the messages in @p[0..len); returns the bytes consumed (a stream
 * keeps the rest: a message cut by the end of what arrived). */
static size_t walk(struct ct_sync_node *n, const uint8_t *p, size_t len,
		   ct_time_ns now, int *accepted)
{
	size_t off = 0;

	while (off < len) {
		struct ct_sync_hdr h;
		enum ct_sync_err e = ct_sync_msg_header(p + off, len - off, &h);

		if (e == CT_SYNC_E_TRUNCATED ||
		    (e == CT_SYNC_E_BAD_SIZE && h.len > len - off &&
		     h.len >= CT_SYNC_HDR_LEN && h.len <= SYNC_MSG_PLAUSIBLE)) {
			if (n->cfg.stream)
				return off;          /* the rest comes later */
			sync_count_malformed(n, e);
			return len;
		}
		if (e == CT_SYNC_E_BAD_SIZE) {
			/* a length that cannot be: the rest of the datagram
			 * (or the stream's framing) is lost */
			sync_count_malformed(n, e);
			if (n->cfg.stream) {
				n->in_skipping = true;
				n->st.msg_rcv_stream_resyncs++;
				return off + 1;
			}
			return len;
		}
		if (e == CT_SYNC_E_BAD_VERSION) {
			/* conntrackd skips just this message */
			n->st.msgs_recv++;
			sync_count_malformed(n, e);
			off += h.len;
			continue;
		}
		handle_msg(n, p + off, &h, now, accepted);
		off += h.len;
	}
	return off;
}

/* A stream that lost its framing: skip to the next bytes that look like
 * what a sender writes.  Checked: version 1; a control message of 8 or 16
 * bytes with known flags; a data message of an aligned length up to
 * SYNC_MSG_PLAUSIBLE, only HELLO flags, whose first TLV is the address
 * pair of its family (conntrackd's ct2msg and exp2msg both start so).
 * Returns the offset of the first candidate, or of the last bytes that
 * could still begin one when more arrive.  The peer resends nothing over
 * TCP (NOTRACK): what is skipped is lost, and counted. */
static bool stream_plausible(const uint8_t *p, size_t avail, bool *need_more)
{
	uint8_t type = p[0] & 0x0f, flags = p[1];
	uint16_t mlen = ct_sync_rd16(p + 2);

	*need_more = false;
	if ((p[0] >> 4) != CT_SYNC_VERSION)
		return false;
	if (type == CT_SYNC_T_CTL)
		return (mlen == CT_SYNC_HDR_LEN || mlen == CT_SYNC_ACK_LEN) &&
		       flags && !(flags & ~0x7eu);
	if (type > CT_SYNC_T_STATE_MAX || (flags & ~(CT_SYNC_F_HELLO | CT_SYNC_F_HELLO_BACK)))
		return false;
	if (mlen < CT_SYNC_HDR_LEN + 12 || mlen > SYNC_MSG_PLAUSIBLE || (mlen & 3))
		return false;
	if (avail < CT_SYNC_HDR_LEN + 4) {
		*need_more = true;
		return true;
	}
	return (ct_sync_rd16(p + 8) == 12 && ct_sync_rd16(p + 10) == CT_SYNC_A_IPV4) ||
	       (ct_sync_rd16(p + 8) == 36 && ct_sync_rd16(p + 10) == CT_SYNC_A_IPV6);
}

static size_t stream_find_header(const uint8_t *p, size_t len, bool *verified)
{
	*verified = false;
	for (size_t i = 0; i < len; i++) {
		bool more;

		if (len - i < CT_SYNC_HDR_LEN)
			return i;                /* decide when more arrives */
		if (stream_plausible(p + i, len - i, &more)) {
			*verified = !more;
			return i;
		}
	}
	return len;
}

int ct_sync_node_recv(struct ct_sync_node *n, const void *buf, size_t len,
		      ct_time_ns now)
{
	const uint8_t *p = buf;
	int accepted = 0;

	n->st.datagrams_recv++;
	n->st.bytes_recv += len;
	if (!n->cfg.stream) {
		walk(n, p, len, now, &accepted);
		return accepted;
	}
	while (len > 0) {
		size_t room = SYNC_STREAM_MAX - n->in_len, take = len < room ? len : room;
		size_t used;

		memcpy(n->in + n->in_len, p, take);
		n->in_len += take;
		p += take;
		len -= take;
		for (;;) {
			if (n->in_skipping) {
				bool verified;
				size_t skip = stream_find_header(n->in, n->in_len, &verified);

				memmove(n->in, n->in + skip, n->in_len - skip);
				n->in_len -= skip;
				if (!verified)
					break;
				n->in_skipping = false;
			}
			used = walk(n, n->in, n->in_len, now, &accepted);
			memmove(n->in, n->in + used, n->in_len - used);
			n->in_len -= used;
			if (!n->in_skipping)
				break;
		}
		if (n->in_len == SYNC_STREAM_MAX) {
			/* cannot be: no message is that long */
			n->in_len = 0;
			n->in_skipping = true;
			n->st.msg_rcv_stream_resyncs++;
		}
	}
	return accepted;
}

/* ------------------------------------------------------------------ */
/* what goes out                                                      */

static void out_flush(struct ct_sync_node *n)
{
	int rc;

	if (!n->out_len)
		return;
	rc = n->cfg.send(n->cfg.send_arg, n->out, n->out_len);
	if (rc < 0)
		n->st.send_errors++;
	n->st.datagrams_sent++;
	n->st.bytes_sent += n->out_len;
	n->out_len = 0;
}

/* Room left in the datagram for one more message: conntrackd's
 * channel_send adds a message while the datagram stays below
 * datagram_max (buffer->len + len < size), else sends the datagram first.
 * The message is written in place with this much room; if it does not
 * fit, the caller flushes and writes it again at the start. */
static size_t out_room(const struct ct_sync_node *n)
{
	return n->cfg.datagram_max - n->out_len - 1;
}

static void xmit_ctl(struct ct_sync_node *n, struct sync_ctl *c)
{
	uint8_t flags = c->flags;
	int len;

	if (n->cfg.mode == CT_SYNC_FTFW)
		flags |= sync_ftfw_hello_flags(n);
	c->seq = n->next_seq;
	len = ct_sync_msg_ctl(n->out + n->out_len, out_room(n), flags, c->seq, c->from, c->to);
	if (len == -ENOSPC) {
		out_flush(n);
		len = ct_sync_msg_ctl(n->out, out_room(n), flags, c->seq, c->from, c->to);
	}
	if (len < 0) {
		n->st.msg_snd_malformed++;
		free(c);
		return;
	}
	n->next_seq++;
	n->out_len += (size_t)len;
	n->st.msgs_sent++;
	if (c->flags & CT_SYNC_F_ACK)
		n->st.acks_sent++;
	else if (c->flags & CT_SYNC_F_NACK)
		n->st.nacks_sent++;
	else if (c->flags & CT_SYNC_F_RESYNC)
		n->st.resync_sent++;
	else if (c->flags & CT_SYNC_F_ALIVE)
		n->st.alive_sent++;
	if (n->cfg.mode == CT_SYNC_FTFW)
		sync_ftfw_after_send(n, &c->qn);
	else
		free(c);
}

static const uint8_t status_type[] = {
	[OBJ_NEW] = CT_SYNC_T_CT_NEW,
	[OBJ_ALIVE] = CT_SYNC_T_CT_UPD,
	[OBJ_DEAD] = CT_SYNC_T_CT_DEL,
};

static void xmit_obj(struct ct_sync_node *n, struct sync_obj *o, ct_time_ns now)
{
	struct ct_sync_conn c;
	unsigned opts = 0;
	uint8_t flags = 0;
	int len;

	sync_obj_load(o, &c);
	if (!n->cfg.commit_timeout_s && (c.has & CT_SYNC_HAS_TIMEOUT)) {
		opts |= CT_SYNC_ENC_TIMEOUT;
		c.timeout_s = o->expires_ns > now ?
			      (uint32_t)((o->expires_ns - now) / SYNC_NS_PER_S) : 0;
	}
	if (n->cfg.window_tracking)
		opts |= CT_SYNC_ENC_WSCALE;
	if (n->cfg.mode == CT_SYNC_FTFW)
		flags = sync_ftfw_hello_flags(n);
	len = ct_sync_msg_conn(n->out + n->out_len, out_room(n), status_type[o->status], flags,
			       n->next_seq, &c, opts);
	if (len == -ENOSPC) {
		out_flush(n);
		len = ct_sync_msg_conn(n->out, out_room(n), status_type[o->status], flags,
				       n->next_seq, &c, opts);
	}
	if (len < 0) {
		n->st.msg_snd_malformed++;
		sync_obj_release(n, o);
		return;
	}
	o->seq = n->next_seq++;
	o->sent_ns = now;
	n->out_len += (size_t)len;
	n->st.msgs_sent++;
	if (n->cfg.mode == CT_SYNC_FTFW) {
		sync_ftfw_after_send(n, &o->qn);
	} else {
		if (n->cfg.mode == CT_SYNC_ALARM && o->status != OBJ_DEAD)
			sync_lru_add_tail(&n->internal, o);
		sync_obj_release(n, o);
	}
}

ct_time_ns ct_sync_node_run(struct ct_sync_node *n, ct_time_ns now,
			    unsigned budget)
{
	unsigned sent = 0;
	ct_time_ns next;

	switch (n->cfg.mode) {
	case CT_SYNC_FTFW:
		sync_ftfw_timers(n, now);
		break;
	case CT_SYNC_NOTRACK:
		sync_notrack_timers(n, now);
		break;
	default:
		sync_alarm_timers(n, now);
		break;
	}
	if (n->resync_wanted) {
		n->resync_wanted = false;
		sync_queue_ctl(n, CT_SYNC_F_RESYNC, 0, 0);
	}
	while (n->tx.head.next != &n->tx.head && (!budget || sent < budget)) {
		struct sq_node *qn = n->tx.head.next;

		sq_del(&n->tx, qn);
		if (qn->kind == SQ_CTL)
			xmit_ctl(n, (struct sync_ctl *)qn);
		else
			xmit_obj(n, (struct sync_obj *)qn, now);
		sent++;
	}
	out_flush(n);
	/* conntrackd re-arms its alive alarm after every transmission */
	if (sent && n->cfg.mode != CT_SYNC_ALARM)
		n->alive_due = now + n->cfg.alive_ms * SYNC_NS_PER_MS;
	if (n->tx.head.next != &n->tx.head)
		return now;
	/* ALARM has no keepalive: its refreshes and expiries are its clock */
	next = n->cfg.mode == CT_SYNC_ALARM ? sync_alarm_next_due(n) : n->alive_due;
	if (n->hello_loss && n->hello_settled_ns > now && n->hello_settled_ns < next)
		next = n->hello_settled_ns;
	return next;
}

void ct_sync_node_request_resync(struct ct_sync_node *n)
{
	n->resync_wanted = true;
}

void ct_sync_node_send_bulk(struct ct_sync_node *n)
{
	sync_bulk(n);
}

/* ------------------------------------------------------------------ */
/* listing, flushing, counters                                        */

static void entry_of(const struct sync_obj *o, bool internal, ct_time_ns now,
		     struct ct_sync_entry *e)
{
	sync_obj_load(o, &e->conn);
	e->first_ns = o->first_ns;
	e->updated_ns = o->updated_ns;
	e->timeout_left_s = 0;
	if (!(o->core.has & CT_SYNC_HAS_TIMEOUT))
		return;
	if (internal) {
		e->timeout_left_s = o->expires_ns > now ?
				    (uint32_t)((o->expires_ns - now) / SYNC_NS_PER_S) : 0;
		e->conn.timeout_s = e->timeout_left_s;
	} else {
		uint64_t el = now > o->updated_ns ? (now - o->updated_ns) / SYNC_NS_PER_S : 0;

		e->timeout_left_s = el < o->core.timeout_s ?
				    (uint32_t)(o->core.timeout_s - el) : 0;
	}
}

int ct_sync_node_dump(struct ct_sync_node *n, enum ct_sync_cache_id which,
		      ct_time_ns now, ct_sync_dump_fn fn, void *arg)
{
	struct sync_cache *c = which == CT_SYNC_INTERNAL ? &n->internal : &n->external;
	struct ct_sync_entry e;

	for (uint64_t b = 0; b < c->nbuckets; b++) {
		for (struct sync_obj *o = c->buckets[b]; o; o = o->hnext) {
			int rc;

			if (o->status == OBJ_DEAD)
				continue;
			entry_of(o, which == CT_SYNC_INTERNAL, now, &e);
			rc = fn(&e, arg);
			if (rc)
				return rc;
		}
	}
	return 0;
}

bool ct_sync_node_find(struct ct_sync_node *n, enum ct_sync_cache_id which,
		       const struct ct_tuple *orig, ct_time_ns now,
		       struct ct_sync_entry *out)
{
	struct sync_cache *c = which == CT_SYNC_INTERNAL ? &n->internal : &n->external;
	struct sync_obj *o = sync_cache_find(c, orig);

	if (!o || o->status == OBJ_DEAD)
		return false;
	entry_of(o, which == CT_SYNC_INTERNAL, now, out);
	return true;
}

uint64_t ct_sync_node_flush(struct ct_sync_node *n, enum ct_sync_cache_id which)
{
	struct sync_cache *c = which == CT_SYNC_INTERNAL ? &n->internal : &n->external;
	uint64_t removed = 0;

	for (uint64_t b = 0; b < c->nbuckets; b++) {
		struct sync_obj *o = c->buckets[b];

		while (o) {
			struct sync_obj *next = o->hnext;
			struct sq_list *q = sq_of(n, &o->qn);

			if (o->status != OBJ_DEAD)
				removed++;
			if (q)
				sq_del(q, &o->qn);
			sync_lru_unlink(o);
			sync_cache_free(c, o);   /* its rare part too */
			o = next;
		}
		c->buckets[b] = NULL;
	}
	c->st.destroyed += removed;
	c->count = c->live = 0;
	c->st.active = 0;
	return removed;
}

void ct_sync_node_get_stats(const struct ct_sync_node *n, struct ct_sync_stats *s)
{
	*s = n->st;
	s->rs_queue_len = n->rs.len;
	s->tx_queue_len = n->tx.len;
	s->internal = n->internal.st;
	s->external = n->external.st;
}
