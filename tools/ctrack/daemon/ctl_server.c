/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_server.c - the control socket and the main loop: clients, event
 * subscribers, signals and the once-a-second housekeeping, on one thread.
 *
 * One thread serves every client with epoll, because what clients ask
 * for is either small (count, stats, get, set) or a stream that must not
 * hold anything while the client reads: a listing runs as a job of
 * slices (ct_table_dump_slice: a few thousand entries, no lock and no
 * read-side section between slices), each formatted straight into the
 * client's output buffer, and the next slice waits until the client has
 * taken most of the last one.  A client that reads slowly therefore costs
 * its buffer and nothing else; one that disconnects mid-listing ends its
 * job at the next write; fifty clients listing at once take turns, one
 * slice each, with the event rings drained between slices.  The packet
 * threads never wait for this thread (evbus.c).
 *
 * Who may do what (SO_PEERCRED, SO_PEERGROUPS at accept): root, and
 * members of --socket-group (primary or supplementary), may connect; the
 * socket's mode (0660, group --socket-group) keeps the others out at
 * connect(2) already, and the check here holds even if the mode is
 * loosened.  Commands that change state (flush, delete, set) need root or
 * --admin-group.  Every refusal is a JSON error line and a counter.
 *
 * Hostile input: a request line is at most CTL_REQUEST_MAX bytes (longer
 * gets E2BIG and the connection is closed: there is no way to find the
 * next request in an endless line), malformed JSON or an unknown command
 * gets its error and the connection stays usable, --max-clients bounds
 * the connections (one over the limit gets EBUSY), and an `events` client
 * that does not read loses events - counted, and told how many at its
 * next line - once its buffer (--events-buffer-kb) is full.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_request.h"
#include "daemon.h"
#include "dm_sync.h"

#define SLICE_ENTRIES 2048
#define OUT_LOW (256u << 10)     /* a listing's next slice when below */
#define EV_BATCH 4096

enum cstate { CS_IDLE, CS_LIST, CS_DELETE, CS_EVENTS, CS_CLOSING };

struct obuf {
	char *b;
	size_t off, len, cap;
};

struct client {
	struct client *prev, *next;
	int fd;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	bool root, admin;
	enum cstate st;
	bool epollout;
	bool dead;          /* a send failed: freed by the main loop */
	char *in;
	size_t in_len;
	struct obuf out;
	struct ctl_request req;
	struct fmt_opts fo;
	struct ct_dump_cursor cur;
	uint64_t count;
	bool count_only;
	/* delete: the tuples a slice matched, deleted after it */
	struct ct_tuple *del;
	size_t n_del, cap_del;
	/* events */
	uint64_t ev_lost_pending;
	uint64_t ev_lost;
	uint64_t ev_sent;
	uint64_t serial;    /* the connection's number (metrics' client label) */
};

struct ctl_server {
	int lfd, epfd, sigfd, tfd;
	dev_t sock_dev;
	ino_t sock_ino;
	struct client *clients;
	unsigned n_clients, n_subs;
	gid_t sock_gid, admin_gid;
	bool sock_gid_set, admin_gid_set;
	struct ct_event *evbuf;
	/* counters for `ctrack stats` */
	uint64_t accepted, refused_perm, refused_full, requests, bad_requests, too_long,
		 denied_admin, disconnect_mid_job, ev_lost_clients, listed;
	uint64_t last_ring_drops;
	bool subs_dirty;    /* a subscriber came, went or lost events: the
			     * metrics' copy is behind */
	bool stop;
};

static void drain_events(struct daemon *d);

/* epoll tags for the non-client descriptors */
static char tag_listen, tag_signal, tag_timer, tag_sync;

/* ---- output buffers ---- */

static bool ob_reserve(struct obuf *o, size_t n)
{
	if (o->cap - o->len >= n)
		return true;
	if (o->off) {
		memmove(o->b, o->b + o->off, o->len - o->off);
		o->len -= o->off;
		o->off = 0;
		if (o->cap - o->len >= n)
			return true;
	}
	{
		size_t cap = o->cap ? o->cap : 64 << 10;
		char *b;

		while (cap - o->len < n)
			cap *= 2;
		b = realloc(o->b, cap);
		if (!b)
			return false;
		o->b = b;
		o->cap = cap;
	}
	return true;
}

static size_t ob_pending(const struct obuf *o)
{
	return o->len - o->off;
}

static void ob_put(struct obuf *o, const char *s, size_t n)
{
	if (ob_reserve(o, n)) {
		memcpy(o->b + o->len, s, n);
		o->len += n;
	}
}

/* A control line: the JSON, compact, with "v" first (json_dumps keeps the
 * order members were added in), and a newline. */
static void put_json(struct client *c, json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);

	if (s) {
		ob_put(&c->out, s, strlen(s));
		ob_put(&c->out, "\n", 1);
		free(s);
	}
	json_decref(j);
}

static void put_error(struct client *c, const char *code, const char *msg)
{
	put_json(c, json_pack("{s:i,s:b,s:s,s:s}", "v", CTL_PROTO_VERSION, "ok", 0,
			      "error", msg, "code", code));
}

/* ---- clients ---- */

static void want_out(struct ctl_server *s, struct client *c, bool on)
{
	struct epoll_event ev;

	if (c->epollout == on)
		return;
	c->epollout = on;
	ev.events = (c->st == CS_CLOSING ? 0 : EPOLLIN) | (on ? EPOLLOUT : 0) | EPOLLRDHUP;
	ev.data.ptr = c;
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* A subscriber came (+1) or went (-1): what the table builds follows. */
static void subscribers(struct daemon *d, int delta)
{
	d->srv->n_subs = (unsigned)((int)d->srv->n_subs + delta);
	evbus_subscribers(d->bus, delta);
	ct_table_set_event_mask(d->t, evbus_want(d->bus));
	d->srv->subs_dirty = true;
}

/* The subscribers as a metrics scrape shows them (dm_export.c). */
static void publish_subs(struct daemon *d)
{
	struct ctl_server *s = d->srv;
	struct dm_sub_stat st[256];
	size_t n = 0;

	s->subs_dirty = false;
	if (!d->ex)
		return;
	for (struct client *c = s->clients; c && n < 256; c = c->next)
		if (c->st == CS_EVENTS)
			st[n++] = (struct dm_sub_stat){ c->serial, (int)c->pid, (unsigned)c->uid,
							c->ev_sent, c->ev_lost };
	dm_export_publish_subs(d, st, n, s->ev_lost_clients);
}

static void client_free(struct daemon *d, struct client *c)
{
	struct ctl_server *s = d->srv;

	if (c->st == CS_EVENTS)
		subscribers(d, -1);
	if (c->st == CS_LIST || c->st == CS_DELETE)
		s->disconnect_mid_job++;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->n_clients--;
	free(c->in);
	free(c->out.b);
	free(c->del);
	free(c);
}

static void put_lost_note(struct client *c);

/* Write what is pending; false when the client is gone (freed). */
static bool client_flush(struct daemon *d, struct client *c)
{
again:
	while (ob_pending(&c->out)) {
		ssize_t n = send(c->fd, c->out.b + c->out.off, ob_pending(&c->out),
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			c->out.off += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			want_out(d->srv, c, true);
			return true;
		}
		if (n < 0 && errno == EINTR)
			continue;
		client_free(d, c);
		return false;
	}
	c->out.off = c->out.len = 0;
	/* a subscriber that lost events hears how many as soon as there is
	 * room again, even if no event follows */
	if (c->st == CS_EVENTS && c->ev_lost_pending) {
		put_lost_note(c);
		goto again;
	}
	want_out(d->srv, c, false);
	if (c->st == CS_CLOSING) {
		client_free(d, c);
		return false;
	}
	/* a client that wrote a big buffer away gives the memory back */
	if (c->out.cap > (8u << 20) && c->st != CS_LIST) {
		free(c->out.b);
		c->out.b = NULL;
		c->out.cap = 0;
	}
	return true;
}

static bool in_group(gid_t g, gid_t primary, const gid_t *groups, int n)
{
	if (primary == g)
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == g)
			return true;
	return false;
}

static void do_accept(struct daemon *d)
{
	struct ctl_server *s = d->srv;

	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cr;
		socklen_t l = sizeof(cr);
		gid_t groups[256];
		socklen_t gl = sizeof(groups);
		int ng = 0;
		struct client *c;
		struct epoll_event ev;
		bool member;

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				dm_log("control: accept: %s", strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0) {
			close(fd);
			continue;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &gl) == 0)
			ng = (int)(gl / sizeof(gid_t));
		/* root, the daemon's own user (a daemon a user runs for
		 * themselves, e.g. over a capture) and the socket group */
		member = cr.uid == 0 || cr.uid == geteuid() ||
			 (s->sock_gid_set && in_group(s->sock_gid, cr.gid, groups, ng));
		if (!member || s->n_clients >= d->opt.max_clients) {
			char line[512];
			int n;

			if (!member) {
				s->refused_perm++;
				n = snprintf(line, sizeof(line),
					     "{\"v\":%d,\"ok\":false,\"error\":\"permission denied: uid "
					     "%u is neither root nor in the daemon's socket group%s%s\","
					     "\"code\":\"EPERM\"}\n", CTL_PROTO_VERSION, (unsigned)cr.uid,
					     s->sock_gid_set ? " " : "",
					     s->sock_gid_set ? d->opt.socket_group : "");
			} else {
				s->refused_full++;
				n = snprintf(line, sizeof(line),
					     "{\"v\":%d,\"ok\":false,\"error\":\"too many clients (%u, "
					     "--max-clients): try again later\",\"code\":\"EBUSY\"}\n",
					     CTL_PROTO_VERSION, d->opt.max_clients);
			}
			if (n > 0)
				(void)!send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (c)
			c->in = malloc(CTL_REQUEST_MAX + 1);
		if (!c || !c->in) {
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->serial = s->accepted + 1;
		c->pid = cr.pid;
		c->uid = cr.uid;
		c->gid = cr.gid;
		c->root = cr.uid == 0;
		c->admin = c->root || cr.uid == geteuid() || (s->admin_gid_set && in_group(s->admin_gid, cr.gid, groups, ng));
		c->next = s->clients;
		if (s->clients)
			s->clients->prev = c;
		s->clients = c;
		s->n_clients++;
		s->accepted++;
		ev.events = EPOLLIN | EPOLLRDHUP;
		ev.data.ptr = c;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			client_free(d, c);
	}
}

/* ---- commands ---- */

static void set_fmt(struct daemon *d, struct client *c)
{
	struct ct_settings set;

	ct_table_get_settings(d->t, &set);
	memset(&c->fo, 0, sizeof(c->fo));
	c->fo.format = c->req.format;
	c->fo.acct = set.acct;
	c->fo.delta_time = set.timestamp;
	c->fo.id = c->req.id;
	c->fo.ktimestamp = c->req.ktimestamp;
	c->fo.wall_ns = atomic_load(&d->wall_ns);
}

static const char *format_name(enum out_format f)
{
	return f == FMT_EXTENDED ? "extended" : f == FMT_JSON ? "json" : "conntrack";
}

/* One data line: a text line as a JSON string, a JSON object as itself. */
static void put_line(struct client *c, const char *line, size_t n)
{
	if (!ob_reserve(&c->out, n + 3))
		return;
	if (c->fo.format == FMT_JSON) {
		memcpy(c->out.b + c->out.len, line, n);
		c->out.len += n;
	} else {
		c->out.b[c->out.len++] = '"';
		memcpy(c->out.b + c->out.len, line, n);
		c->out.len += n;
		c->out.b[c->out.len++] = '"';
	}
	c->out.b[c->out.len++] = '\n';
}

struct list_ctx {
	struct client *c;
	ct_time_ns now;
	uint64_t listed;
};

static int list_cb(const struct ct_conn_info *ci, void *arg)
{
	struct list_ctx *x = arg;
	struct client *c = x->c;
	long long left;
	char *p;
	size_t n;

	/* an entry whose time is up is gone, whether or not the collector
	 * has been there yet (the kernel's dump skips and reaps them too) */
	if (ci->expires <= x->now || !ctl_filter_match(&c->req.filter, ci))
		return CT_DUMP_SKIP;
	c->count++;
	if (c->count_only)
		return 0;
	if (c->st == CS_DELETE) {
		if (c->n_del == c->cap_del) {
			size_t cap = c->cap_del ? c->cap_del * 2 : 1024;
			struct ct_tuple *t = realloc(c->del, cap * sizeof(*t));

			if (!t)
				return -ENOMEM;
			c->del = t;
			c->cap_del = cap;
		}
		c->del[c->n_del++] = ci->orig;
		c->count--;   /* counted when deleted */
		return 0;
	}
	left = ci->expires > x->now ? (long long)((ci->expires - x->now) / 1000000000ull) : 0;
	if (!ob_reserve(&c->out, FMT_LINE_MAX + 3))
		return -ENOMEM;
	x->listed++;
	/* format in place, between the quotes */
	p = c->out.b + c->out.len + (c->fo.format == FMT_JSON ? 0 : 1);
	n = fmt_listing_line(p, &c->fo, ci, left, x->now);
	if (c->fo.format == FMT_JSON) {
		c->out.len += n;
	} else {
		c->out.b[c->out.len] = '"';
		c->out.len += n + 1;
		c->out.b[c->out.len++] = '"';
	}
	c->out.b[c->out.len++] = '\n';
	return 0;
}

static void job_end(struct daemon *d, struct client *c)
{
	const char *what = c->st == CS_DELETE ? "delete" : c->count_only ? "count" : "list";

	if (c->count_only)
		put_json(c, json_pack("{s:i,s:b,s:s,s:I}", "v", CTL_PROTO_VERSION, "ok", 1,
				      "cmd", "count", "count", (json_int_t)c->count));
	else
		put_json(c, json_pack("{s:i,s:s,s:I}", "v", CTL_PROTO_VERSION, "end", what,
				      "count", (json_int_t)c->count));
	c->st = CS_IDLE;
	(void)d;
}

/* One slice of a listing, counting or deleting job. */
static void job_step(struct daemon *d, struct client *c)
{
	struct list_ctx x = { c, dclock_now(), 0 };
	unsigned flags = c->req.zero ? CT_DUMP_ZERO_COUNTERS : 0;
	int zone = (c->req.filter.have & CF_ZONE) ? c->req.filter.zone : -1;
	int r = ct_table_dump_slice(d->thr, zone, &c->cur, SLICE_ENTRIES, flags, list_cb, &x);

	d->srv->listed += x.listed;
	if (r < 0) {
		put_error(c, "ENOMEM", "out of memory while listing");
		c->st = CS_IDLE;
		return;
	}
	if (c->st == CS_DELETE) {
		if (c->n_del)
			drain_events(d);
		for (size_t i = 0; i < c->n_del; i++) {
			struct ct_conn_info ci;

			if (ct_table_delete(d->thr, &c->del[i], x.now, &ci) == 1) {
				char line[FMT_LINE_MAX];
				long long left = ci.expires > x.now
					? (long long)((ci.expires - x.now) / 1000000000ull) : 0;
				size_t n = fmt_listing_line(line, &c->fo, &ci, left, x.now);

				c->count++;
				put_line(c, line, n);
			}
		}
		c->n_del = 0;
	}
	if (ct_dump_cursor_done(&c->cur))
		job_end(d, c);
}

static json_t *stats_json(const struct ct_stats *s, bool full)
{
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			      "found", (json_int_t)s->found, "invalid", (json_int_t)s->invalid,
			      "insert", (json_int_t)s->insert,
			      "insert_failed", (json_int_t)s->insert_failed,
			      "drop", (json_int_t)s->drop, "early_drop", (json_int_t)s->early_drop,
			      "error", (json_int_t)s->error,
			      "search_restart", (json_int_t)s->search_restart,
			      "clash_resolve", (json_int_t)s->clash_resolve,
			      "chaintoolong", (json_int_t)s->chaintoolong);

	if (full && o) {
		json_t *r = json_object();

		json_object_set_new(o, "count", json_integer((json_int_t)s->count));
		json_object_set_new(o, "packets", json_integer((json_int_t)s->packets));
		json_object_set_new(o, "untracked", json_integer((json_int_t)s->untracked));
		json_object_set_new(o, "ignored", json_integer((json_int_t)s->ignored));
		json_object_set_new(o, "related", json_integer((json_int_t)s->related));
		json_object_set_new(o, "expired", json_integer((json_int_t)s->expired));
		json_object_set_new(o, "deleted", json_integer((json_int_t)s->deleted));
		json_object_set_new(o, "gc_passes", json_integer((json_int_t)s->gc_passes));
		json_object_set_new(o, "resizes", json_integer((json_int_t)s->resizes));
		for (int i = 1; i < CT_PR_MAX && r; i++)
			if (s->invalid_by_reason[i])
				json_object_set_new(r, ct_parse_reason_name((enum ct_parse_reason)i),
						    json_integer((json_int_t)s->invalid_by_reason[i]));
		json_object_set_new(o, "invalid_by_reason", r);
	}
	return o;
}

static void cmd_stats(struct daemon *d, struct client *c)
{
	struct ctl_server *s = d->srv;
	struct ct_stats st;
	json_t *cpus = json_array(), *rings = json_array(), *j;
	uint64_t drops = 0;

	ct_table_get_stats(d->t, &st);
	for (unsigned i = 0; i < d->n_workers; i++) {
		struct dm_worker *w = &d->w[i];
		struct ct_stats ws;
		json_t *o;

		ct_thread_get_stats(w->thr, &ws);
		o = stats_json(&ws, false);
		json_object_set_new(o, "frames", json_integer((json_int_t)atomic_load_explicit(
			&w->frames, memory_order_relaxed)));
		json_object_set_new(o, "bursts", json_integer((json_int_t)atomic_load_explicit(
			&w->bursts, memory_order_relaxed)));
		json_object_set_new(o, "unsupported_link", json_integer((json_int_t)
			atomic_load_explicit(&w->bad_link, memory_order_relaxed)));
		{
			/* the burst latency histogram: [floor_ns, count] per bucket
			 * used (clients subtract two of them for an interval) */
			json_t *h = json_array();

			for (unsigned b = 0; b < DM_LAT_BUCKETS; b++) {
				uint64_t k = atomic_load_explicit(&w->lat[b], memory_order_relaxed);

				if (k)
					json_array_append_new(h, json_pack("[I,I]",
						(json_int_t)dm_lat_floor(b), (json_int_t)k));
			}
			json_object_set_new(o, "burst_ns_histogram", h);
		}
		json_array_append_new(cpus, o);
		if (w->ring) {
			struct dm_ring_stats rs;

			dm_live_stats(d, i, &rs);
			drops += rs.drops;
			json_array_append_new(rings, json_pack("{s:I,s:I,s:I}",
				"packets", (json_int_t)rs.packets, "drops", (json_int_t)rs.drops,
				"freezes", (json_int_t)rs.freezes));
		}
	}
	j = json_pack("{s:i,s:b,s:s,s:o,s:o,s:o}", "v", CTL_PROTO_VERSION, "ok", 1, "cmd", "stats",
		      "total", stats_json(&st, true), "cpu", cpus, "rings", rings);
	json_object_set_new(j, "ring_drops", json_integer((json_int_t)drops));
	json_object_set_new(j, "events", json_pack("{s:i,s:I,s:I}",
		"subscribers", (int)s->n_subs,
		"lost_in_rings", (json_int_t)evbus_lost_total(d->bus),
		"lost_at_clients", (json_int_t)s->ev_lost_clients));
	json_object_set_new(j, "control", json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"clients", (int)s->n_clients, "accepted", (json_int_t)s->accepted,
		"refused_permission", (json_int_t)s->refused_perm,
		"refused_too_many", (json_int_t)s->refused_full,
		"requests", (json_int_t)s->requests,
		"bad_requests", (json_int_t)s->bad_requests,
		"too_long", (json_int_t)s->too_long,
		"denied_admin", (json_int_t)s->denied_admin,
		"disconnected_mid_listing", (json_int_t)s->disconnect_mid_job,
		"lines_listed", (json_int_t)s->listed));
	json_object_set_new(j, "table", json_pack("{s:I,s:I,s:I}",
		"count", (json_int_t)st.count, "rows", (json_int_t)ct_table_rows(d->t),
		"max", (json_int_t)d->opt.set.max));
	if (d->rp) {
		struct dm_replay_stats rs;

		dm_replay_stats(d, &rs);
		json_object_set_new(j, "replay", json_pack("{s:s,s:I,s:I,s:b,s:s}",
			"file", d->opt.replay, "frames", (json_int_t)rs.frames,
			"bytes", (json_int_t)rs.bytes, "done", rs.done, "error", rs.error));
	}
	if (d->ex)
		json_object_set_new(j, "export", dm_export_stats_json(d));
	if (d->nat_on)
		json_object_set_new(j, "nat", dm_nat_stats_json(d));
	json_object_set_new(j, "uptime_s", json_real((double)(dclock_now() - d->started) / 1e9));
	json_object_set_new(j, "reloads", json_integer((json_int_t)d->reloads));
	put_json(c, j);
}

static void cmd_set(struct daemon *d, struct client *c)
{
	struct ct_settings set;
	const char *msg = "";
	char val[64], text[256];
	int r;

	ct_table_get_settings(d->t, &set);
	r = ct_settings_set(&set, c->req.name, c->req.value, &msg);
	if (r < 0) {
		snprintf(text, sizeof(text), "%s: '%s' %s", c->req.name,
			 r == CT_SETTINGS_BAD_VALUE ? c->req.value : c->req.name, msg);
		put_error(c, r == CT_SETTINGS_READ_ONLY ? "EPERM" : "EINVAL", text);
		return;
	}
	if (!strcmp(c->req.name, "nf_conntrack_buckets") ||
	    !strcmp(c->req.name, "net.netfilter.nf_conntrack_buckets")) {
		put_error(c, "EPERM", "nf_conntrack_buckets: the table resizes itself; the "
			  "initial size is set at start (--set)");
		return;
	}
	if (d->opt.ex.ipfix[0] && !set.timestamp) {
		put_error(c, "EPERM", "nf_conntrack_timestamp: flow records (--ipfix) carry the "
			  "first and last packet's times; it stays 1 while the daemon exports");
		return;
	}
	if ((r = ct_ns_set_settings(d->t, 0, &set)) < 0) {
		put_error(c, "ENOMEM", "out of memory");
		return;
	}
	d->opt.set = set;
	dm_settings_changed(d);
	if (ct_settings_get(&set, c->req.name, val, sizeof(val)) < 0)
		snprintf(val, sizeof(val), "%s", c->req.value);
	put_json(c, json_pack("{s:i,s:b,s:s,s:s,s:s,s:b}", "v", CTL_PROTO_VERSION, "ok", 1,
			      "cmd", "set", "name", c->req.name, "value", val,
			      "ignored", r == CT_SETTINGS_IGNORED));
	dm_log("control: uid %u set %s = %s", (unsigned)c->uid, c->req.name, val);
}

static void cmd_sysctl(struct daemon *d, struct client *c)
{
	struct ct_settings set;
	json_t *o = json_object();
	char val[64];

	ct_table_get_settings(d->t, &set);
	if (c->req.name[0]) {
		if (ct_settings_get(&set, c->req.name, val, sizeof(val)) < 0) {
			char text[200];

			json_decref(o);
			snprintf(text, sizeof(text), "%s: not a conntrack setting", c->req.name);
			put_error(c, "EINVAL", text);
			return;
		}
		json_object_set_new(o, c->req.name, json_string(val));
	} else {
		const char *n;

		for (unsigned i = 0; (n = ct_settings_name(i)); i++)
			if (ct_settings_get(&set, n, val, sizeof(val)) == 0)
				json_object_set_new(o, n, json_string(val));
		snprintf(val, sizeof(val), "%" PRIu64, ct_table_count(d->t));
		json_object_set_new(o, "nf_conntrack_count", json_string(val));
	}
	put_json(c, json_pack("{s:i,s:b,s:s,s:o}", "v", CTL_PROTO_VERSION, "ok", 1,
			      "cmd", "sysctl", "settings", o));
}

static void cmd_hello(struct daemon *d, struct client *c)
{
	json_t *src = json_array();

	for (unsigned i = 0; i < d->opt.n_ifaces; i++)
		json_array_append_new(src, json_string(d->opt.ifaces[i]));
	put_json(c, json_pack("{s:i,s:b,s:s,s:s,s:i,s:i,s:i,s:o,s:s,s:b}",
			      "v", CTL_PROTO_VERSION, "ok", 1, "cmd", "hello",
			      "version", CTRACK_VERSION, "protocol", CTL_PROTO_VERSION,
			      "pid", (int)getpid(), "workers", (int)d->n_workers,
			      "interfaces", src, "replay", d->opt.replay, "admin", c->admin));
}

static void start_job(struct daemon *d, struct client *c, enum cstate st, bool count_only)
{
	set_fmt(d, c);
	ct_dump_cursor_init(&c->cur);
	c->count = 0;
	c->count_only = count_only;
	c->n_del = 0;
	c->st = st;
	if (!count_only)
		put_json(c, json_pack("{s:i,s:b,s:s,s:s}", "v", CTL_PROTO_VERSION, "ok", 1, "cmd",
				      st == CS_DELETE ? "delete" : "list", "format",
				      format_name(c->req.format)));
}

static void sync_put_line(void *arg, const char *line, size_t n)
{
	put_line(arg, line, n);
}

/* The sync commands (dm_sync.c has the node; docs/control.md the
 * replies). */
static void cmd_sync(struct daemon *d, struct client *c)
{
	enum ct_sync_cache_id which = c->req.internal ? CT_SYNC_INTERNAL : CT_SYNC_EXTERNAL;
	const char *cache = c->req.internal ? "internal" : "external";
	const char *name = ctl_cmd_name(c->req.cmd);
	json_t *j;

	if (!dm_sync_enabled(d)) {
		put_error(c, "ENOTCONN", "sync is off: start the daemon with --sync (docs/sync.md)");
		return;
	}
	switch (c->req.cmd) {
	case CMD_SYNC_LIST: {
		uint64_t n;

		set_fmt(d, c);
		c->fo.acct = false;   /* the protocol carries no counters */
		put_json(c, json_pack("{s:i,s:b,s:s,s:s,s:s}", "v", CTL_PROTO_VERSION, "ok", 1,
				      "cmd", name, "format", format_name(c->req.format), "cache",
				      cache));
		drain_events(d);   /* the internal cache up to date first */
		n = dm_sync_list(d, which, &c->fo, sync_put_line, c);
		put_json(c, json_pack("{s:i,s:s,s:I}", "v", CTL_PROTO_VERSION, "end", name,
				      "count", (json_int_t)n));
		break;
	}
	case CMD_SYNC_STATS:
		j = json_pack("{s:i,s:b,s:s}", "v", CTL_PROTO_VERSION, "ok", 1, "cmd", name);
		json_object_set_new(j, "sync", dm_sync_stats_json(d));
		put_json(c, j);
		break;
	case CMD_SYNC_RESYNC:
		dm_sync_resync(d);
		put_json(c, json_pack("{s:i,s:b,s:s}", "v", CTL_PROTO_VERSION, "ok", 1, "cmd", name));
		break;
	case CMD_SYNC_BULK:
		drain_events(d);
		dm_sync_bulk(d);
		put_json(c, json_pack("{s:i,s:b,s:s}", "v", CTL_PROTO_VERSION, "ok", 1, "cmd", name));
		break;
	case CMD_SYNC_FLUSH:
		put_json(c, json_pack("{s:i,s:b,s:s,s:s,s:I}", "v", CTL_PROTO_VERSION, "ok", 1,
				      "cmd", name, "cache", cache, "removed",
				      (json_int_t)dm_sync_flush(d, which)));
		break;
	default: {
		char err[512];
		struct dm_sync_commit_result cr;
		int r;

		drain_events(d);   /* what the table did before, first */
		r = dm_sync_commit(d, &cr, err, sizeof(err));
		if (r < 0) {
			put_error(c, r == -ENOSYS ? "ENOSYS" : r == -ENOMEM ? "ENOMEM" : "EIO", err);
			break;
		}
		put_json(c, json_pack("{s:i,s:b,s:s,s:I,s:I,s:I}", "v", CTL_PROTO_VERSION, "ok", 1,
				      "cmd", name, "committed", (json_int_t)cr.committed, "expired",
				      (json_int_t)cr.expired, "failed", (json_int_t)cr.failed));
		dm_log("control: uid %u committed the external cache (%" PRIu64 " entries, %"
		       PRIu64 " expired, %" PRIu64 " refused)", (unsigned)c->uid, cr.committed,
		       cr.expired, cr.failed);
		break;
	}
	}
}

static void execute(struct daemon *d, struct client *c)
{
	struct ctl_server *s = d->srv;
	ct_time_ns now = dclock_now();

	if (ctl_cmd_is_admin(c->req.cmd) && !c->admin) {
		char text[256];

		s->denied_admin++;
		snprintf(text, sizeof(text), "permission denied: %s changes the table; it needs "
			 "root%s%s", ctl_cmd_name(c->req.cmd),
			 s->admin_gid_set ? " or group " : "",
			 s->admin_gid_set ? d->opt.admin_group : "");
		put_error(c, "EPERM", text);
		return;
	}
	switch (c->req.cmd) {
	case CMD_HELLO:
		cmd_hello(d, c);
		break;
	case CMD_LIST:
		start_job(d, c, CS_LIST, false);
		break;
	case CMD_COUNT:
		if (!c->req.has_filter) {
			put_json(c, json_pack("{s:i,s:b,s:s,s:I}", "v", CTL_PROTO_VERSION, "ok", 1,
					      "cmd", "count", "count",
					      (json_int_t)ct_table_count(d->t)));
			break;
		}
		start_job(d, c, CS_LIST, true);
		break;
	case CMD_GET: {
		struct ct_tuple t;
		struct ct_conn_info ci;
		char err[256], line[FMT_LINE_MAX];

		if (ctl_filter_tuple(&c->req.filter, &t, err, sizeof(err)) < 0) {
			put_error(c, "EINVAL", err);
			break;
		}
		set_fmt(d, c);
		if (ct_table_lookup(d->thr, &t, &ci, NULL) != 1) {
			put_error(c, "ENOENT", "such conntrack doesn't exist");
			break;
		}
		put_json(c, json_pack("{s:i,s:b,s:s,s:s}", "v", CTL_PROTO_VERSION, "ok", 1, "cmd",
				      "get", "format", format_name(c->req.format)));
		put_line(c, line, fmt_listing_line(line, &c->fo, &ci,
			 ci.expires > now ? (long long)((ci.expires - now) / 1000000000ull) : 0, now));
		put_json(c, json_pack("{s:i,s:s,s:i}", "v", CTL_PROTO_VERSION, "end", "get",
				      "count", 1));
		break;
	}
	case CMD_EVENTS:
		set_fmt(d, c);
		c->st = CS_EVENTS;
		subscribers(d, 1);
		put_json(c, json_pack("{s:i,s:b,s:s,s:s}", "v", CTL_PROTO_VERSION, "ok", 1, "cmd",
				      "events", "format", format_name(c->req.format)));
		break;
	case CMD_STATS:
		cmd_stats(d, c);
		break;
	case CMD_FLUSH: {
		long n;

		drain_events(d);   /* what came before the flush, first */
		n = ct_table_flush(d->thr, -1, now);

		put_json(c, json_pack("{s:i,s:b,s:s,s:I}", "v", CTL_PROTO_VERSION, "ok", 1, "cmd",
				      "flush", "removed", (json_int_t)n));
		dm_log("control: uid %u flushed the table (%ld entries)", (unsigned)c->uid, n);
		break;
	}
	case CMD_DELETE:
		start_job(d, c, CS_DELETE, false);
		break;
	case CMD_SET:
		cmd_set(d, c);
		break;
	case CMD_SYSCTL:
		cmd_sysctl(d, c);
		break;
	case CMD_SYNC_LIST:
	case CMD_SYNC_STATS:
	case CMD_SYNC_RESYNC:
	case CMD_SYNC_BULK:
	case CMD_SYNC_FLUSH:
	case CMD_SYNC_COMMIT:
		cmd_sync(d, c);
		break;
	default:
		put_error(c, "ENOSYS", "not implemented");
		break;
	}
}

/* Requests that arrived while the client was idle. */
static void handle_input(struct daemon *d, struct client *c)
{
	struct ctl_server *s = d->srv;

	while (c->st == CS_IDLE) {
		char *nl = memchr(c->in, '\n', c->in_len);
		size_t n;
		char err[512];
		const char *code;

		if (!nl)
			break;
		n = (size_t)(nl - c->in);
		if (n && c->in[n - 1] == '\r')
			n--;
		if (n) {
			s->requests++;
			if (ctl_request_parse(c->in, n, &c->req, err, sizeof(err), &code) < 0) {
				s->bad_requests++;
				put_error(c, code, err);
			} else {
				execute(d, c);
			}
		}
		n = (size_t)(nl - c->in) + 1;
		memmove(c->in, c->in + n, c->in_len - n);
		c->in_len -= n;
	}
	if (c->in_len >= CTL_REQUEST_MAX && c->st == CS_IDLE) {
		char text[128];

		s->too_long++;
		snprintf(text, sizeof(text), "request line longer than %d bytes: closing the "
			 "connection", CTL_REQUEST_MAX);
		put_error(c, "E2BIG", text);
		c->st = CS_CLOSING;
		c->in_len = 0;
		want_out(s, c, true);
	}
}

/* Read what the client sent; false when it is gone (freed). */
static bool client_read(struct daemon *d, struct client *c)
{
	for (;;) {
		char sink[4096];
		char *dst = c->in + c->in_len;
		size_t room = CTL_REQUEST_MAX - c->in_len;
		ssize_t n;

		/* a streaming or closing client's input is read and dropped
		 * (but its end is noticed); so is input past a full buffer
		 * while a job runs */
		if (c->st == CS_EVENTS || c->st == CS_CLOSING || room == 0) {
			dst = sink;
			room = sizeof(sink);
		}
		n = recv(c->fd, dst, room, MSG_DONTWAIT);
		if (n > 0) {
			if (dst != sink)
				c->in_len += (size_t)n;
			else if (c->st == CS_LIST || c->st == CS_DELETE)
				d->srv->too_long++;
			if (c->st == CS_IDLE)
				handle_input(d, c);
			if (c->st == CS_CLOSING)
				return true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		client_free(d, c);
		return false;
	}
}

/* ---- events to subscribers ---- */

static void put_lost_note(struct client *c)
{
	char note[160];
	int k = snprintf(note, sizeof(note), "{\"v\":%d,\"lost\":%" PRIu64
			 ",\"lost_total\":%" PRIu64 "}\n", CTL_PROTO_VERSION,
			 c->ev_lost_pending, c->ev_lost);

	ob_put(&c->out, note, (size_t)k);
	c->ev_lost_pending = 0;
}

/* Send what is pending without waiting and without freeing the client
 * (callers iterate over the client list): a subscriber that reads keeps
 * its buffer short even while this thread produces events in a loop (a
 * flush of a large table). */
static void client_try_send(struct client *c)
{
	while (!c->dead && ob_pending(&c->out)) {
		ssize_t n = send(c->fd, c->out.b + c->out.off, ob_pending(&c->out),
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0)
			c->out.off += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		else
			c->dead = true;
	}
}

static void put_event(struct daemon *d, struct client *c, const struct ct_event *ev)
{
	unsigned bit = ev->type == CT_EV_NEW ? CTL_EV_NEW : ev->type == CT_EV_UPDATE
		       ? CTL_EV_UPDATE : CTL_EV_DESTROY;
	size_t limit = (size_t)d->opt.events_buffer_kb << 10;
	char line[FMT_LINE_MAX];
	size_t n;

	if (c->dead || !(c->req.event_mask & bit) || !ctl_filter_match(&c->req.filter, &ev->conn))
		return;
	if (ob_pending(&c->out) + FMT_LINE_MAX + 128 > limit / 2)
		client_try_send(c);
	if (ob_pending(&c->out) + FMT_LINE_MAX + 128 > limit) {
		c->ev_lost_pending++;
		c->ev_lost++;
		d->srv->ev_lost_clients++;
		d->srv->subs_dirty = true;
		return;
	}
	if (c->ev_lost_pending)
		put_lost_note(c);
	n = fmt_event_line(line, &c->fo, ev, ev->ts, c->req.stamp);
	put_line(c, line, n);
	c->ev_sent++;
}

/* Events the main thread causes itself (flush, delete): to the
 * subscribers at once, after what the rings held before them. */
static void direct_event(const struct ct_event *ev, void *arg)
{
	struct daemon *d = arg;

	dm_export_event(d, ev);
	dm_sync_event(d, ev);
	if (!d->srv->n_subs)
		return;
	for (struct client *c = d->srv->clients; c; c = c->next)
		if (c->st == CS_EVENTS)
			put_event(d, c, ev);
}

static void drain_events(struct daemon *d)
{
	struct ctl_server *s = d->srv;
	uint64_t lost;
	size_t n;

	do {
		n = evbus_drain(d->bus, s->evbuf, EV_BATCH, &lost);
		if (d->sync) {
			dm_sync_lost(d, lost);
			for (size_t i = 0; i < n; i++)
				dm_sync_event(d, &s->evbuf[i]);
		}
		if (lost)
			for (struct client *c = s->clients; c; c = c->next)
				if (c->st == CS_EVENTS) {
					c->ev_lost_pending += lost;
					c->ev_lost += lost;
					s->subs_dirty = true;
				}
		if (d->ex)
			for (size_t i = 0; i < n; i++)
				dm_export_event(d, &s->evbuf[i]);
		if (s->n_subs)
			for (size_t i = 0; i < n; i++)
				for (struct client *c = s->clients; c; c = c->next)
					if (c->st == CS_EVENTS)
						put_event(d, c, &s->evbuf[i]);
		if (n)
			dm_export_kick(d);
	} while (n == EV_BATCH);
	dm_sync_kick(d);
}

void ctl_server_drain(struct daemon *d)
{
	drain_events(d);
}

/* ---- signals and housekeeping ---- */

static void tick(struct daemon *d)
{
	struct ctl_server *s = d->srv;
	uint64_t exp, drops = 0;

	if (read(s->tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		dm_log("control: timer: %s", strerror(errno));
	atomic_store(&d->wall_ns, dclock_wall_offset());
	for (unsigned i = 0; i < d->n_workers; i++)
		if (d->w[i].ring) {
			struct dm_ring_stats rs;

			dm_live_stats(d, i, &rs);
			drops += rs.drops;
		}
	if (drops != s->last_ring_drops) {
		dm_log("rings: %" PRIu64 " packets dropped since the last report (%" PRIu64
		       " in all): the workers fell behind; see ctrack stats",
		       drops - s->last_ring_drops, drops);
		s->last_ring_drops = drops;
	}
	dm_state_tick(d);
}

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->srv->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			dm_reload(d);
		} else {
			dm_log("signal %u: stopping", si.ssi_signo);
			d->srv->stop = true;
		}
	}
}

/* ---- the socket ---- */

static int resolve_group(const char *name, gid_t *g, char *err, size_t errlen,
			 const char *opt)
{
	struct group gr, *res = NULL;
	char buf[16384];
	char *end;
	unsigned long n;

	if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) == 0 && res) {
		*g = res->gr_gid;
		return 0;
	}
	n = strtoul(name, &end, 10);
	if (*name && !*end) {
		*g = (gid_t)n;
		return 0;
	}
	snprintf(err, errlen, "--%s %s: no such group", opt, name);
	return -1;
}

int ctl_server_reconfigure(struct daemon *d, char *err, size_t errlen)
{
	struct ctl_server *s = d->srv;
	gid_t sg = 0, ag = 0;

	if (d->opt.socket_group[0] &&
	    resolve_group(d->opt.socket_group, &sg, err, errlen, "socket-group") < 0)
		return -1;
	if (d->opt.admin_group[0] &&
	    resolve_group(d->opt.admin_group, &ag, err, errlen, "admin-group") < 0)
		return -1;
	s->sock_gid = sg;
	s->sock_gid_set = d->opt.socket_group[0] != 0;
	s->admin_gid = ag;
	s->admin_gid_set = d->opt.admin_group[0] != 0;
	if (s->lfd >= 0) {
		if (chown(d->opt.socket_path, (uid_t)-1, s->sock_gid_set ? sg : (gid_t)-1) < 0 ||
		    chmod(d->opt.socket_path, d->opt.socket_mode) < 0) {
			snprintf(err, errlen, "--socket %s: cannot set its group and mode: %s",
				 d->opt.socket_path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int ctl_server_open(struct daemon *d, char *err, size_t errlen)
{
	struct ctl_server *s = calloc(1, sizeof(*s));
	struct sockaddr_un sa;
	struct epoll_event ev;
	struct stat st;
	sigset_t mask;
	struct itimerspec its = { { 1, 0 }, { 1, 0 } };
	char dir[sizeof(sa.sun_path)];
	char *slash;
	mode_t old;

	if (!s || !(s->evbuf = malloc(EV_BATCH * sizeof(*s->evbuf)))) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->lfd = s->epfd = s->sigfd = s->tfd = -1;
	d->srv = s;
	if (ctl_server_reconfigure(d, err, errlen) < 0)
		return -1;
	/* the directory, as systemd's RuntimeDirectory would make it */
	snprintf(dir, sizeof(dir), "%s", d->opt.socket_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "--socket %s: cannot create %s: %s", d->opt.socket_path,
				 dir, strerror(errno));
			return -1;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->opt.socket_path);
	if (lstat(sa.sun_path, &st) == 0) {
		int probe;

		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "--socket %s exists and is not a socket; not replacing it",
				 sa.sun_path);
			return -1;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			snprintf(err, errlen, "--socket %s: another ctrack daemon is listening there",
				 sa.sun_path);
			return -1;
		}
		if (probe >= 0)
			close(probe);
		unlink(sa.sun_path);   /* a stale socket of a daemon that died */
	}
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		snprintf(err, errlen, "cannot create the control socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0177);
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		umask(old);
		snprintf(err, errlen, "--socket %s: %s", sa.sun_path, strerror(errno));
		close(s->lfd);
		s->lfd = -1;
		return -1;
	}
	umask(old);
	if (stat(sa.sun_path, &st) == 0) {
		s->sock_dev = st.st_dev;
		s->sock_ino = st.st_ino;
	}
	if (ctl_server_reconfigure(d, err, errlen) < 0 || listen(s->lfd, 512) < 0) {
		if (!err[0])
			snprintf(err, errlen, "listen: %s", strerror(errno));
		return -1;
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	s->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->epfd < 0 || s->sigfd < 0 || s->tfd < 0 ||
	    timerfd_settime(s->tfd, 0, &its, NULL) < 0) {
		snprintf(err, errlen, "cannot set up the main loop: %s", strerror(errno));
		return -1;
	}
	ev.events = EPOLLIN;
	ev.data.ptr = &tag_listen;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev);
	ev.data.ptr = &tag_signal;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sigfd, &ev);
	ev.data.ptr = &tag_timer;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &ev);
	return 0;
}

int ctl_server_run(struct daemon *d)
{
	struct ctl_server *s = d->srv;
	struct epoll_event evs[64];

	evbus_set_direct(direct_event, d);
	if (dm_sync_fd(d) >= 0) {
		struct epoll_event sev = { .events = EPOLLIN, .data.ptr = &tag_sync };

		epoll_ctl(s->epfd, EPOLL_CTL_ADD, dm_sync_fd(d), &sev);
	}
	while (!s->stop) {
		bool jobs = false;
		int n, timeout;

		for (struct client *c = s->clients; c; c = c->next)
			if ((c->st == CS_LIST || c->st == CS_DELETE) && ob_pending(&c->out) < OUT_LOW)
				jobs = true;
		/* events are taken every 10 ms while someone reads them */
		timeout = jobs ? 0 : (s->n_subs || d->ex || d->sync) ? 10 : 1000;
		n = epoll_wait(s->epfd, evs, 64, timeout);
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			struct client *c;

			if (p == &tag_listen) {
				do_accept(d);
				continue;
			}
			if (p == &tag_signal) {
				on_signal(d);
				continue;
			}
			if (p == &tag_timer) {
				tick(d);
				continue;
			}
			if (p == &tag_sync) {
				dm_sync_poll(d);
				continue;
			}
			c = p;
			/* a client freed earlier in this round cannot appear: its
			 * events were removed with it, and epoll_wait ran before */
			if ((evs[i].events & EPOLLOUT) && !client_flush(d, c))
				continue;
			if ((evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) &&
			    !client_read(d, c))
				continue;
		}
		drain_events(d);
		/* one slice per job, then everybody's output */
		for (struct client *c = s->clients, *next; c; c = next) {
			next = c->next;
			if ((c->st == CS_LIST || c->st == CS_DELETE) && ob_pending(&c->out) < OUT_LOW) {
				job_step(d, c);
				drain_events(d);
			}
		}
		for (struct client *c = s->clients, *next; c; c = next) {
			next = c->next;
			if (c->dead) {
				client_free(d, c);
				continue;
			}
			if (c->st == CS_EVENTS && c->ev_lost_pending && !ob_pending(&c->out))
				put_lost_note(c);
			if (ob_pending(&c->out) && !c->epollout && !client_flush(d, c))
				continue;
			if (c->st == CS_IDLE && c->in_len)
				handle_input(d, c);
		}
		if (s->subs_dirty)
			publish_subs(d);
	}
	return 0;
}

void ctl_server_close(struct daemon *d)
{
	struct ctl_server *s = d->srv;
	struct stat st;

	if (!s)
		return;
	for (struct client *c = s->clients, *next; c; c = next) {
		next = c->next;
		client_free(d, c);
	}
	if (s->lfd >= 0) {
		close(s->lfd);
		/* only our socket: a daemon started after us may own the path */
		if (stat(d->opt.socket_path, &st) == 0 && st.st_dev == s->sock_dev &&
		    st.st_ino == s->sock_ino)
			unlink(d->opt.socket_path);
	}
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->tfd >= 0)
		close(s->tfd);
	free(s->evbuf);
	free(s);
	d->srv = NULL;
}
