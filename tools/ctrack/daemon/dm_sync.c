/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dm_sync.c - `ctrack daemon --sync`: the daemon's table joined to a
 * conntrackd cluster (dm_sync.h says who does what).
 *
 * Why on the main thread rather than a sync thread of its own: the sync
 * node takes no lock (include/ctrack/sync.h: one thread at a time), the
 * event bus has one consumer (the main thread), and the control commands
 * that read the caches run there too - so one thread owns the node and
 * nothing is shared.  The cost is that a control client's long job delays
 * the link by at most one slice (ctl_server.c runs listings in slices of
 * 2048 entries, and drains the bus between them); the packet threads are
 * never involved.
 *
 * Lost events.  A producer whose ring is full drops the event (evbus.c);
 * the sync node then holds a stale internal cache: a NEW or UPDATE not
 * seen (the peer lacks or has old state) or a DESTROY not seen (the peer
 * keeps a dead connection).  conntrackd has the same hole with netlink's
 * ENOBUFS and answers it with a full resync from the kernel
 * (NetlinkEventsReliable); the daemon does the equivalent here, at most
 * once a second while events are being lost: every internal entry the
 * table no longer holds is destroyed, and every table entry is fed again
 * as an UPDATE (the node sends each once).  Both counted (events_lost,
 * reconciles).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "ctrack/record.h"
#include "dm_sync.h"
#include "sync/sync_config.h"
#include "sync/sync_transport.h"

#define DM_SYNC_MAX_FDS 3
#define RECONCILE_GAP_NS 1000000000ull

struct dm_sync {
	struct ctsync_settings set;
	struct ct_sync_node *node;
	struct cts *link;
	int epfd, tfd;
	int fds[DM_SYNC_MAX_FDS];     /* the link's, as registered in epfd */
	unsigned n_fds;
	ct_time_ns armed;             /* the timer's deadline (0: none) */
	bool dirty;                   /* events fed since the last run */
	/* the feed */
	uint64_t events, event_errors, events_lost, reconciles;
	uint64_t lost_pending;
	ct_time_ns last_reconcile;
	/* commits (ctrack sync commit) */
	uint64_t commits, committed, commit_expired, commit_failed;
};

static char tag_timer;

int dm_sync_check(const char *spec, char *err, size_t errlen)
{
	struct ctsync_settings s;

	ctsync_settings_default(&s);
	return ctsync_settings_parse(&s, spec, err, errlen);
}

bool dm_sync_enabled(const struct daemon *d)
{
	return d->sync != NULL;
}

int dm_sync_fd(const struct daemon *d)
{
	return d->sync ? d->sync->epfd : -1;
}

static void on_datagram(void *arg, const uint8_t *buf, size_t len)
{
	struct dm_sync *s = arg;

	ct_sync_node_recv(s->node, buf, len, dclock_now());
}

/* The link's descriptors come and go (a TCP peer connects, reconnects):
 * keep the epoll set equal to what the transport polls now. */
static void refresh_fds(struct dm_sync *s)
{
	int now[DM_SYNC_MAX_FDS];
	unsigned n = cts_fds(s->link, now, DM_SYNC_MAX_FDS);
	struct epoll_event ev;

	if (n == s->n_fds && !memcmp(now, s->fds, n * sizeof(int)))
		return;
	for (unsigned i = 0; i < s->n_fds; i++)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->fds[i], NULL);
	for (unsigned i = 0; i < n; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.fd = now[i];
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, now[i], &ev);
	}
	memcpy(s->fds, now, n * sizeof(int));
	s->n_fds = n;
}

/* Run the node (send what is queued, keepalives, ALARM refreshes) and
 * set the timer for its next deadline. */
static void run_node(struct dm_sync *s)
{
	ct_time_ns now = dclock_now();
	ct_time_ns next = ct_sync_node_run(s->node, now, 0);
	struct itimerspec its;

	s->dirty = false;
	if (next <= now)
		next = now + 1000000ull;   /* more to do: soon, not in a spin */
	if (next == s->armed)
		return;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(next / 1000000000ull);
	its.it_value.tv_nsec = (long)(next % 1000000000ull);
	if (timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		s->armed = next;
}

int dm_sync_open(struct daemon *d, char *err, size_t errlen)
{
	struct dm_sync *s;
	struct epoll_event ev;
	int r;

	if (!d->opt.sync[0])
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "--sync: out of memory");
		return -1;
	}
	s->epfd = s->tfd = -1;
	ctsync_settings_default(&s->set);
	if (ctsync_settings_parse(&s->set, d->opt.sync, err, errlen) < 0)
		goto fail;
	if (cts_open(&s->set.link, &s->link, err, errlen) < 0) {
		char why[512];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "--sync: %s", why);
		goto fail;
	}
	s->set.node.send = cts_send;
	s->set.node.send_arg = s->link;
	r = ct_sync_node_create(&s->set.node, dclock_now(), &s->node);
	if (r < 0) {
		snprintf(err, errlen, "--sync: cannot start the sync node: %s", strerror(-r));
		goto fail;
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->epfd < 0 || s->tfd < 0) {
		snprintf(err, errlen, "--sync: cannot set up its poll set: %s", strerror(errno));
		goto fail;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &tag_timer;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &ev);
	refresh_fds(s);
	d->sync = s;
	/* one more subscriber: the bus queues events from now on */
	evbus_subscribers(d->bus, 1);
	/* the node needs NEW and UPDATE too, which the table builds only
	 * while someone wants them (dm_export.c masks them otherwise) */
	ct_table_set_event_mask(d->t, evbus_want(d->bus));
	run_node(s);   /* HELLO and, with startup-resync, the RESYNC request */
	dm_log("sync: %s over %s with %s", s->set.node.mode == CT_SYNC_FTFW ? "FTFW" :
	       s->set.node.mode == CT_SYNC_NOTRACK ? "NOTRACK" : "ALARM",
	       s->set.link.kind == CTS_UDP ? "UDP" : s->set.link.kind == CTS_MCAST ?
	       "multicast" : "TCP", d->opt.sync);
	return 0;
fail:
	if (s->node)
		ct_sync_node_destroy(s->node);
	if (s->link)
		cts_close(s->link);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->tfd >= 0)
		close(s->tfd);
	free(s);
	return -1;
}

void dm_sync_close(struct daemon *d)
{
	struct dm_sync *s = d->sync;

	if (!s)
		return;
	ct_sync_node_run(s->node, dclock_now(), 0);
	evbus_subscribers(d->bus, -1);
	ct_table_set_event_mask(d->t, evbus_want(d->bus));
	ct_sync_node_destroy(s->node);
	cts_close(s->link);
	close(s->epfd);
	close(s->tfd);
	free(s);
	d->sync = NULL;
}

void dm_sync_poll(struct daemon *d)
{
	struct dm_sync *s = d->sync;
	struct epoll_event evs[DM_SYNC_MAX_FDS + 1];
	int n;

	if (!s)
		return;
	n = epoll_wait(s->epfd, evs, DM_SYNC_MAX_FDS + 1, 0);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == &tag_timer) {
			uint64_t exp;

			if (read(s->tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
				dm_log("sync: timer: %s", strerror(errno));
			s->armed = 0;
			continue;
		}
		/* a socket that failed is reported by the transport's counters;
		 * the link stays up for the next datagram */
		(void)cts_input(s->link, evs[i].data.fd, on_datagram, s, 64);
	}
	refresh_fds(s);
	dm_sync_kick(d);
	run_node(s);
}

void dm_sync_event(struct daemon *d, const struct ct_event *ev)
{
	struct dm_sync *s = d->sync;

	if (!s)
		return;
	s->events++;
	/* an internal cache that is full refuses the entry: counted here and
	 * in the node (internal.create_failed) */
	if (ct_sync_node_event(s->node, ev, ev->ts) < 0)
		s->event_errors++;
	s->dirty = true;
}

void dm_sync_lost(struct daemon *d, uint64_t lost)
{
	struct dm_sync *s = d->sync;

	if (!s || !lost)
		return;
	s->events_lost += lost;
	s->lost_pending += lost;
}

/* ---- the reconcile after lost events ---- */

struct rec_ctx {
	struct ct_tuple *t;
	size_t n, cap;
	bool oom;
};

static int collect_internal(const struct ct_sync_entry *e, void *arg)
{
	struct rec_ctx *x = arg;

	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 1024;
		struct ct_tuple *t = realloc(x->t, cap * sizeof(*t));

		if (!t) {
			x->oom = true;
			return 1;
		}
		x->t = t;
		x->cap = cap;
	}
	x->t[x->n++] = e->conn.orig;
	return 0;
}

struct refeed_ctx {
	struct dm_sync *s;
	ct_time_ns now;
};

static int refeed(const struct ct_conn_info *ci, void *arg)
{
	struct refeed_ctx *x = arg;
	struct ct_event ev;

	if (ci->expires <= x->now)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.type = CT_EV_UPDATE;
	ev.ts = x->now;
	ev.conn = *ci;
	if (ct_sync_node_event(x->s->node, &ev, x->now) < 0)
		x->s->event_errors++;
	return 0;
}

static void reconcile(struct daemon *d, ct_time_ns now)
{
	struct dm_sync *s = d->sync;
	struct rec_ctx x = { NULL, 0, 0, false };
	struct refeed_ctx f = { s, now };
	uint64_t gone = 0;

	ct_sync_node_dump(s->node, CT_SYNC_INTERNAL, now, collect_internal, &x);
	for (size_t i = 0; i < x.n && !x.oom; i++) {
		struct ct_sync_entry e;

		if (ct_table_lookup(d->thr, &x.t[i], NULL, NULL) == 1)
			continue;
		if (ct_sync_node_find(s->node, CT_SYNC_INTERNAL, &x.t[i], now, &e) &&
		    ct_sync_node_local(s->node, CT_SYNC_T_CT_DEL, &e.conn, now) == 0)
			gone++;
	}
	free(x.t);
	ct_table_dump(d->thr, -1, refeed, &f);
	s->reconciles++;
	s->lost_pending = 0;
	s->last_reconcile = now;
	s->dirty = true;
	dm_log("sync: %" PRIu64 " table events were lost (ring full, --event-ring): the "
	       "internal cache was reconciled with the table (%" PRIu64 " gone entries "
	       "destroyed, every entry sent again)", s->events_lost, gone);
}

void dm_sync_kick(struct daemon *d)
{
	struct dm_sync *s = d->sync;

	if (!s)
		return;
	if (s->lost_pending) {
		ct_time_ns now = dclock_now();

		if (!s->last_reconcile || now - s->last_reconcile >= RECONCILE_GAP_NS)
			reconcile(d, now);
	}
	if (s->dirty)
		run_node(s);
}

/* ---- control ---- */

#define J(o, name, v) json_object_set_new((o), (name), json_integer((json_int_t)(v)))

static json_t *cache_json(const struct ct_sync_cache_stats *c)
{
	json_t *o = json_object();

	J(o, "active", c->active);
	J(o, "created", c->created);
	J(o, "create_failed", c->create_failed);
	J(o, "updated", c->updated);
	J(o, "destroyed", c->destroyed);
	J(o, "expired", c->expired);
	return o;
}

json_t *dm_sync_stats_json(struct daemon *d)
{
	struct dm_sync *s = d->sync;
	struct ct_sync_stats st;
	struct cts_stats l;
	json_t *o, *net, *link, *feed;

	if (!s)
		return NULL;
	ct_sync_node_get_stats(s->node, &st);
	cts_get_stats(s->link, &l);
	o = json_object();
	net = json_object();
#define N(x) J(net, #x, st.x)
	N(msg_rcv_malformed); N(msg_rcv_bad_version); N(msg_rcv_bad_header);
	N(msg_rcv_bad_payload); N(msg_rcv_bad_type); N(msg_rcv_truncated); N(msg_rcv_bad_size);
	N(msg_snd_malformed); N(msg_rcv_lost); N(msg_rcv_before); N(msg_rcv_unknown_attr);
	N(msg_rcv_dup_attr); N(msg_rcv_impossible); N(msg_rcv_out_of_window);
	N(msg_rcv_seq_resets); N(msg_rcv_exp); N(msg_rcv_labels_cut); N(msg_rcv_ack_stale);
	N(msg_rcv_stream_resyncs); N(msgs_sent); N(msgs_recv); N(datagrams_sent);
	N(datagrams_recv); N(bytes_sent); N(bytes_recv); N(send_errors); N(acks_sent);
	N(nacks_sent); N(alive_sent); N(resync_sent); N(acks_recv); N(nacks_recv);
	N(alive_recv); N(resync_recv); N(hello_recv); N(resent); N(bulk_sends);
	N(hello_resyncs); N(rs_queue_len); N(tx_queue_len); N(rs_queue_dropped);
	N(last_seq_recv);
#undef N
	json_object_set_new(net, "peer_seen", json_boolean(st.peer_seen));
	if (st.peer_seen)
		J(net, "peer_last_ago_ms", (dclock_now() - st.peer_last_ns) / 1000000ull);
	link = json_object();
	J(link, "datagrams_in", l.datagrams_in);
	J(link, "bytes_in", l.bytes_in);
	J(link, "datagrams_out", l.datagrams_out);
	J(link, "bytes_out", l.bytes_out);
	J(link, "rejected_peer", l.rejected_peer);
	J(link, "recv_errors", l.recv_errors);
	J(link, "send_errors", l.send_errors);
	J(link, "connects", l.connects);
	J(link, "disconnects", l.disconnects);
	feed = json_object();
	J(feed, "events", s->events);
	J(feed, "event_errors", s->event_errors);
	J(feed, "events_lost", s->events_lost);
	J(feed, "reconciles", s->reconciles);
	J(feed, "commits", s->commits);
	J(feed, "committed", s->committed);
	J(feed, "commit_expired", s->commit_expired);
	J(feed, "commit_failed", s->commit_failed);
	json_object_set_new(o, "mode", json_string(s->set.node.mode == CT_SYNC_FTFW ? "ftfw" :
			    s->set.node.mode == CT_SYNC_NOTRACK ? "notrack" : "alarm"));
	json_object_set_new(o, "transport", json_string(s->set.link.kind == CTS_UDP ? "udp" :
			    s->set.link.kind == CTS_MCAST ? "mcast" : "tcp"));
	json_object_set_new(o, "network", net);
	json_object_set_new(o, "link", link);
	json_object_set_new(o, "internal", cache_json(&st.internal));
	json_object_set_new(o, "external", cache_json(&st.external));
	json_object_set_new(o, "feed", feed);
	return o;
}
#undef J

struct list_ctx {
	const struct fmt_opts *fo;
	void (*put)(void *arg, const char *line, size_t n);
	void *arg;
	ct_time_ns now;
	uint64_t n;
};

/* An entry as a listing line: the record turned into the connection the
 * peer's kernel would hold (the reply tuple set up from the NAT
 * attributes, as a commit would), its timeout what a commit would give. */
static int list_one(const struct ct_sync_entry *e, void *arg)
{
	struct list_ctx *x = arg;
	const struct ct_sync_conn *c = &e->conn;
	struct ct_conn_info ci;
	char line[FMT_LINE_MAX];
	size_t n;

	memset(&ci, 0, sizeof(ci));
	ci.orig = c->orig;
	if (!ct_sync_conn_reply(c, &ci.reply))
		ci.reply = c->orig;
	ci.reply.zone = c->orig.zone;
	ci.status = c->status;
	ci.mark = c->mark;
	ci.l4state = c->l4state;
	ci.state_name = (c->has & CT_SYNC_HAS_STATE) ? ct_l4_state_name(c->orig.l4, c->l4state)
						      : NULL;
	memcpy(ci.labels, c->labels, sizeof(ci.labels));
	ci.expires = x->now + (ct_time_ns)e->timeout_left_s * 1000000000ull;
	n = fmt_listing_line(line, x->fo, &ci, (long long)e->timeout_left_s, x->now);
	x->put(x->arg, line, n);
	x->n++;
	return 0;
}

uint64_t dm_sync_list(struct daemon *d, enum ct_sync_cache_id which,
		      const struct fmt_opts *fo,
		      void (*put)(void *arg, const char *line, size_t n), void *arg)
{
	struct list_ctx x = { fo, put, arg, dclock_now(), 0 };

	if (!d->sync)
		return 0;
	ct_sync_node_dump(d->sync->node, which, x.now, list_one, &x);
	return x.n;
}

void dm_sync_resync(struct daemon *d)
{
	if (!d->sync)
		return;
	ct_sync_node_request_resync(d->sync->node);
	run_node(d->sync);
}

void dm_sync_bulk(struct daemon *d)
{
	if (!d->sync)
		return;
	ct_sync_node_send_bulk(d->sync->node);
	run_node(d->sync);
}

uint64_t dm_sync_flush(struct daemon *d, enum ct_sync_cache_id which)
{
	return d->sync ? ct_sync_node_flush(d->sync->node, which) : 0;
}

/* ---- commit ---- */

struct commit_ctx {
	struct ct_sync_entry *e;
	size_t n, cap;
	bool oom;
};

static int collect_external(const struct ct_sync_entry *e, void *arg)
{
	struct commit_ctx *x = arg;

	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 1024;
		struct ct_sync_entry *t = realloc(x->e, cap * sizeof(*t));

		if (!t) {
			x->oom = true;
			return 1;
		}
		x->e = t;
		x->cap = cap;
	}
	x->e[x->n++] = *e;
	return 0;
}

/*
 * conntrackd -c, through the record layer (src/record/): each external
 * entry made as the kernel makes an entry conntrackd creates over
 * ctnetlink (ct_record_from_sync: TCP BE_LIBERAL both ways unless
 * window-tracking=on), its timeout conntrackd's (cache_ct_commit_step:
 * the one sent less the time since it arrived, 60 s once that is used up;
 * or commit-timeout=), imported with CT_RECORD_F_COMMIT.  The entries are
 * copied out first: each import is a NEW event that reaches the sync
 * node (and the peer) while the external cache would be walked.
 */
int dm_sync_commit(struct daemon *d, struct dm_sync_commit_result *res, char *err,
		   size_t errlen)
{
	struct dm_sync *s = d->sync;
	uint64_t *committed = &res->committed;
	struct commit_ctx x = { NULL, 0, 0, false };
	ct_time_ns now = dclock_now();
	uint64_t expired = 0, failed = 0;
	enum ct_record_reason first_why = CT_RECORD_OK;

	memset(res, 0, sizeof(*res));
	if (!s) {
		snprintf(err, errlen, "sync is off");
		return -ENOTCONN;
	}
	ct_sync_node_dump(s->node, CT_SYNC_EXTERNAL, now, collect_external, &x);
	if (x.oom) {
		free(x.e);
		snprintf(err, errlen, "out of memory while reading the external cache; nothing "
			 "was committed");
		return -ENOMEM;
	}
	for (size_t i = 0; i < x.n; i++) {
		const struct ct_sync_entry *e = &x.e[i];
		uint32_t timeout = s->set.node.commit_timeout_s ? s->set.node.commit_timeout_s :
				   e->timeout_left_s ? e->timeout_left_s : 60;
		struct ct_record rec;
		enum ct_record_reason why = CT_RECORD_OK;
		int r;

		if (!ct_record_from_sync(&e->conn, timeout, s->set.node.window_tracking, &rec)) {
			failed++;
			continue;
		}
		if (rec.orig.zone && !ct_ns_exists(d->t, rec.orig.zone)) {
			struct ct_settings zs;

			ct_table_get_settings(d->t, &zs);
			(void)ct_ns_create(d->t, rec.orig.zone, &zs);
		}
		r = ct_record_import(d->thr, &rec, now, 0, CT_RECORD_F_COMMIT, &why);
		if (r == 1) {
			(*committed)++;
		} else if (r == 0) {
			expired++;
		} else {
			failed++;
			if (first_why == CT_RECORD_OK)
				first_why = why;
		}
	}
	free(x.e);
	res->expired = expired;
	res->failed = failed;
	s->commits++;
	s->committed += *committed;
	s->commit_expired += expired;
	s->commit_failed += failed;
	if (failed)
		dm_log("sync: commit: %" PRIu64 " entries committed, %" PRIu64 " expired, %" PRIu64
		       " refused (the first: %s)", *committed, expired, failed,
		       first_why == CT_RECORD_OK ? "no reply form" :
		       ct_record_reason_name(first_why));
	return 0;
}
