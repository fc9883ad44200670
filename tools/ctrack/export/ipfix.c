/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ipfix.c - the IPFIX exporter sink (ipfix.h).
 *
 * Records are written straight into the message by ipfix_enc.c (why: its
 * header); ipfix_xport.c sends the messages.  Templates and record
 * layouts - IPv4 or IPv6, ports or ICMP type and code, with or without
 * RFC 5103's reverse elements - are the encoder's; this file decides per
 * record which one (a compare) and fills it from the connection.
 *
 * The counters are read by other threads (a daemon's `ctrack stats` and
 * metrics scrapes) while the sink's thread writes them: relaxed atomics,
 * one writer.
 *
 * Active timeouts keep, per connection already reported, what was
 * reported (GLib's GHashTable): the next
 * record carries the difference, so a collector that adds a flow's
 * records up gets the connection's counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <glib.h>

#include "ctrack/control.h"
#include "ipfix.h"
#include "ipfix_enc.h"

enum {
	REASON_IDLE = 1,
	REASON_ACTIVE = 2,
	REASON_END = 3,
	REASON_FORCED = 4,
	REASON_RESOURCES = 5,
};

/* What was reported of a connection still open (active timeouts). */
struct reported {
	uint64_t key;                  /* flow_key() */
	ct_time_ns reported_at;        /* tick time of the last record */
	ct_time_ns end_ns;             /* its flowEnd: the next one's start */
	uint64_t packets[2], bytes[2];
};

/* The counters other threads read (ctrack stats, a metrics scrape):
 * written by the sink's thread alone, read with relaxed loads. */
struct ipfix_ctrs {
	_Atomic uint64_t records, records_active, records_final, records_lost,
		 template_sends, encode_errors;
};

struct ipfix_sink {
	struct ex_sink base;           /* first: the sink list's view */
	struct ipfix_config cfg;
	struct ipfix_ctrs st;
	struct ipfix_xport *x;
	struct ipfix_enc enc;
	GHashTable *reported;          /* flow_key -> struct reported */
	uint8_t *msg;                  /* the data message being built */
	uint8_t tmsg[IPFIX_TMPL_MSG_MAX];   /* the templates' message */
	uint32_t msg_size;
	uint32_t msgs_since_templates;
	uint64_t templates_at_ms;      /* monotonic ms of the last template send */
	uint64_t msg_started_ms;       /* monotonic ms of the message's first record */
	ct_time_ns active_ns;
	ct_time_ns tick_ns;
};

static void inc(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint32_t export_s(void)
{
	return (uint32_t)time(NULL);
}

/* id is a 32-bit keyed hash (table.c); with the first packet's time it
 * names one connection for as long as this file needs to */
static uint64_t flow_key(const struct ct_conn_info *ci)
{
	return (ci->id & 0xffffffffu) | (ci->first_seen << 32);
}

static bool has_ports(uint8_t l4)
{
	return l4 == IPPROTO_TCP || l4 == IPPROTO_UDP || l4 == IPPROTO_UDPLITE ||
	       l4 == IPPROTO_SCTP || l4 == IPPROTO_DCCP;
}

static bool is_icmp(const struct ct_tuple *t)
{
	return (t->l3 == CT_L3_IPV4 && t->l4 == IPPROTO_ICMP) ||
	       (t->l3 == CT_L3_IPV6 && t->l4 == IPPROTO_ICMPV6);
}

static uint64_t to_ms(const struct ipfix_sink *x, ct_time_ns ns)
{
	int64_t v = (int64_t)ns + x->cfg.time_offset_ns;

	return v > 0 ? (uint64_t)v / 1000000u : 0;
}

static void set_tuple(struct ipfix_rec *r, const struct ct_tuple *t)
{
	if (t->l3 == CT_L3_IPV6) {
		memcpy(r->src, t->src.ip6, 16);
		memcpy(r->dst, t->dst.ip6, 16);
		r->tmpl = IPFIX_T_V6;
	} else {
		memcpy(r->src, &t->src.ip4, 4);
		memcpy(r->dst, &t->dst.ip4, 4);
		r->tmpl = 0;
	}
	r->sport = r->dport = r->icmp = 0;
	if (is_icmp(t)) {
		r->tmpl |= IPFIX_T_ICMP;
		r->icmp = t->dport;
	} else if (has_ports(t->l4)) {
		r->sport = t->sport;
		r->dport = t->dport;
	}
	r->proto = t->l4;
	r->vrf = t->zone;
}

/*
 * The post-NAT elements of a record whose tuple is one direction of a
 * NATed connection: what that direction's packets become, which is the
 * other direction's tuple inverted (@other: the reply tuple for the
 * original direction's record, the original tuple for the reply's).
 * So for a biflow or the original direction: postNATSource = reply.dst,
 * postNATDestination = reply.src, postNAPTSource = reply.dport,
 * postNAPTDestination = reply.sport (docs/export.md has the table).
 * Connections without a binding that changed a tuple (CT_ST_NAT_MASK:
 * no NAT, or the null binding) keep the plain template.
 */
static void set_post_nat(struct ipfix_rec *r, const struct ct_conn_info *ci,
			 const struct ct_tuple *other)
{
	if (!(ci->status & CT_ST_NAT_MASK))
		return;
	r->tmpl |= IPFIX_T_NAT;
	if (other->l3 == CT_L3_IPV6) {
		memcpy(r->nat_src, other->dst.ip6, 16);
		memcpy(r->nat_dst, other->src.ip6, 16);
	} else {
		memcpy(r->nat_src, &other->dst.ip4, 4);
		memcpy(r->nat_dst, &other->src.ip4, 4);
	}
	r->nat_sport = r->nat_dport = 0;
	if (!is_icmp(other) && has_ports(other->l4)) {
		r->nat_sport = other->dport;
		r->nat_dport = other->sport;
	}
}

/* ---- messages ---- */

/* Every template, in a message of their own (RFC 7011 8: a collector
 * must see a template before the data that uses it; over UDP it must be
 * sent again, 10.3.6, for a collector that started late or lost it). */
static int send_templates(struct ipfix_sink *x)
{
	size_t cap = sizeof(x->tmsg) < x->msg_size ? sizeof(x->tmsg) : x->msg_size;
	size_t len = ipfix_enc_templates(&x->enc, x->tmsg, cap, export_s());

	if (len) {
		ipfix_xport_send(x->x, x->tmsg, len);
	} else {
		/* a NAT session's eight templates in a message smaller than
		 * them (--ipfix-mtu 512): the plain four, then the NAT four */
		for (unsigned part = 0; part < (x->enc.nat ? 2u : 1u); part++) {
			len = ipfix_enc_templates_part(&x->enc, part, x->tmsg, cap, export_s());
			if (!len) {
				inc(&x->st.encode_errors, 1);
				return -EIO;
			}
			ipfix_xport_send(x->x, x->tmsg, len);
		}
	}
	inc(&x->st.template_sends, 1);
	x->msgs_since_templates = 0;
	x->templates_at_ms = mono_ms();
	return 0;
}

static bool templates_due(const struct ipfix_sink *x)
{
	return x->cfg.proto == IPFIX_UDP &&
	       (x->msgs_since_templates >= x->cfg.template_refresh_msgs ||
		mono_ms() - x->templates_at_ms >= (uint64_t)x->cfg.template_refresh_s * 1000u);
}

/* Close the message being built and send it - over UDP after the
 * templates when they are due, so that a collector that starts late can
 * decode the first data message it gets after a refresh. */
static void emit(struct ipfix_sink *x)
{
	uint32_t n = x->enc.recs;
	size_t len = ipfix_enc_finish(&x->enc, export_s());

	if (!len)
		return;
	if (templates_due(x))
		send_templates(x);
	if (ipfix_xport_send(x->x, x->msg, len) < 0)
		inc(&x->st.records_lost, n);
	x->msgs_since_templates++;
}

static void append(struct ipfix_sink *x, const struct ipfix_rec *r)
{
	if (!ipfix_enc_add(&x->enc, r)) {
		emit(x);
		if (!ipfix_enc_add(&x->enc, r)) {   /* cannot happen: mtu >= 512 */
			inc(&x->st.encode_errors, 1);
			return;
		}
	}
	if (x->enc.recs == 1)
		x->msg_started_ms = mono_ms();
	inc(&x->st.records, 1);
}

/* A record waits in its message at most a second of wall clock (a replay
 * that goes quiet, a daemon between events: ipfix_sink_flush). */
static void flush_if_old(struct ipfix_sink *x)
{
	if (x->enc.recs && mono_ms() - x->msg_started_ms >= 1000)
		emit(x);
}

void ipfix_sink_flush(struct ex_sink *s)
{
	struct ipfix_sink *x = (struct ipfix_sink *)s;

	if (x->enc.recs)
		emit(x);
	else if (templates_due(x))
		send_templates(x);
}

uint64_t ipfix_sink_pending_ms(struct ex_sink *s)
{
	struct ipfix_sink *x = (struct ipfix_sink *)s;

	return x->enc.recs ? mono_ms() - x->msg_started_ms : 0;
}

void ipfix_sink_set_time_offset(struct ex_sink *s, int64_t offset_ns)
{
	((struct ipfix_sink *)s)->cfg.time_offset_ns = offset_ns;
}

/* ---- records ---- */

/*
 * Report @ci: the counters since what @rep says was reported (NULL: since
 * the start), from @start_ns to its last packet, ended for @reason.
 * Returns the records written (0 when nothing moved).
 */
static unsigned report(struct ipfix_sink *x, const struct ct_conn_info *ci,
		       const struct reported *rep, uint8_t reason)
{
	uint64_t dp[2], db[2];
	ct_time_ns start = rep ? rep->end_ns : ci->first_seen;
	struct ipfix_rec r;
	unsigned n = 0;

	for (int d = 0; d < 2; d++) {
		dp[d] = ci->packets[d] - (rep ? rep->packets[d] : 0);
		db[d] = ci->bytes[d] - (rep ? rep->bytes[d] : 0);
	}
	/* a periodic record only when something happened since the last */
	if (reason == REASON_ACTIVE && !dp[0] && !dp[1])
		return 0;
	r.start_ms = to_ms(x, start);
	r.end_ms = to_ms(x, ci->last_seen ? ci->last_seen : start);
	r.flow_id = ci->id;
	r.reason = reason;
	set_tuple(&r, &ci->orig);
	if (x->cfg.nat)
		set_post_nat(&r, ci, &ci->reply);
	r.packets = dp[0];
	r.octets = db[0];
	r.tcp_flags = ci->tcp_flags[0];
	if (!x->cfg.uniflow) {
		r.r_packets = dp[1];
		r.r_octets = db[1];
		r.r_tcp_flags = ci->tcp_flags[1];
		append(x, &r);
		return 1;
	}
	/* uniflow: the original direction always (a connection is at least
	 * its first packet), the reply when it carried packets */
	r.r_packets = r.r_octets = 0;
	r.r_tcp_flags = 0;
	if (dp[0] || !dp[1] || rep == NULL) {
		append(x, &r);
		n++;
	}
	if (dp[1]) {
		set_tuple(&r, &ci->reply);
		if (x->cfg.nat)
			set_post_nat(&r, ci, &ci->orig);
		r.packets = dp[1];
		r.octets = db[1];
		r.tcp_flags = ci->tcp_flags[1];
		append(x, &r);
		n++;
	}
	return n;
}

static uint8_t end_reason(const struct ct_event *ev)
{
	const struct ct_conn_info *ci = &ev->conn;

	switch (ev->destroy_cause) {
	case CT_DESTROY_TIMEOUT:
		/* a TCP connection that closed is found by its timeout
		 * (TIME_WAIT, CLOSE), but it was its end that was seen */
		if (ci->orig.l4 == IPPROTO_TCP && ci->state_name &&
		    (!strcmp(ci->state_name, "TIME_WAIT") || !strcmp(ci->state_name, "CLOSE")))
			return REASON_END;
		return REASON_IDLE;
	case CT_DESTROY_PROTOCOL:
	case CT_DESTROY_REOPEN:
		return REASON_END;
	case CT_DESTROY_EARLY_DROP:
		return REASON_RESOURCES;
	case CT_DESTROY_FLUSH:
	case CT_DESTROY_NS:
	case CT_DESTROY_DELETE:
	case CT_DESTROY_NONE:
	default:
		return REASON_FORCED;
	}
}

static void ipfix_event(struct ex_sink *s, const struct ct_event *ev, ct_time_ns when)
{
	struct ipfix_sink *x = (struct ipfix_sink *)s;
	uint64_t key;
	struct reported *rep = NULL;

	(void)when;
	if (ev->type != CT_EV_DESTROY)
		return;
	if (x->reported) {
		key = flow_key(&ev->conn);
		rep = g_hash_table_lookup(x->reported, &key);
	}
	report(x, &ev->conn, rep, end_reason(ev));
	if (rep)
		g_hash_table_remove(x->reported, &key);
	flush_if_old(x);
}

struct tick_ctx {
	struct ipfix_sink *x;
	ct_time_ns now;
	bool final;
};

static int tick_one(const struct ct_conn_info *ci, void *arg)
{
	struct tick_ctx *c = arg;
	struct ipfix_sink *x = c->x;
	uint64_t key = flow_key(ci);
	struct reported *rep = x->reported ? g_hash_table_lookup(x->reported, &key) : NULL;
	ct_time_ns since = rep ? rep->reported_at : ci->first_seen;
	unsigned n;

	if (c->final) {
		n = report(x, ci, rep, REASON_FORCED);
		inc(&x->st.records_final, n);
		return 0;
	}
	if (c->now < since || c->now - since < x->active_ns)
		return 0;
	n = report(x, ci, rep, REASON_ACTIVE);
	if (!n)
		return 0;
	inc(&x->st.records_active, n);
	if (!rep) {
		rep = g_new0(struct reported, 1);
		rep->key = key;
		g_hash_table_insert(x->reported, &rep->key, rep);
	}
	rep->reported_at = c->now;
	rep->end_ns = ci->last_seen;
	memcpy(rep->packets, ci->packets, sizeof(rep->packets));
	memcpy(rep->bytes, ci->bytes, sizeof(rep->bytes));
	return 0;
}

static ct_time_ns ipfix_tick(struct ex_sink *s, struct ct_thread *thr, ct_time_ns now)
{
	struct ipfix_sink *x = (struct ipfix_sink *)s;
	struct tick_ctx c = { .x = x, .now = now };

	if (!x->active_ns)
		return UINT64_MAX;
	ex_table_walk(thr, tick_one, &c);
	if (x->enc.recs)
		emit(x);   /* periodic records leave with their period */
	return now + x->tick_ns;
}

static int ipfix_finish(struct ex_sink *s, struct ct_thread *thr, ct_time_ns now)
{
	struct ipfix_sink *x = (struct ipfix_sink *)s;
	struct ipfix_xport_stats xs;
	int r;

	if (!x->cfg.no_final) {
		struct tick_ctx c = { .x = x, .now = now, .final = true };

		ex_table_walk(thr, tick_one, &c);
	}
	if (x->enc.recs)
		emit(x);
	r = ipfix_xport_flush(x->x, 5000);
	ipfix_xport_get_stats(x->x, &xs);
	if (r < 0) {
		snprintf(s->error, sizeof(s->error),
			 "IPFIX export to %s over TCP failed: %s; %" PRIu64 " of %" PRIu64
			 " records were not delivered", ipfix_xport_peer(x->x),
			 strerror(-r), atomic_load(&x->st.records_lost),
			 atomic_load(&x->st.records));
		return r;
	}
	if (xs.dropped || xs.refused) {
		snprintf(s->error, sizeof(s->error),
			 "warning: %" PRIu64 " of %" PRIu64 " IPFIX messages could not be sent "
			 "to %s over %s (%s)%s", xs.dropped + xs.refused,
			 xs.messages + xs.dropped, ipfix_xport_peer(x->x),
			 x->cfg.proto == IPFIX_TCP ? "TCP" : "UDP", strerror(xs.last_errno),
			 xs.refused ? "; the collector's host refused them: nothing was "
			 "listening there" : "");
		return x->cfg.proto == IPFIX_TCP ? -EIO : 1;
	}
	return 0;
}

static void ipfix_destroy(struct ex_sink *s)
{
	struct ipfix_sink *x = (struct ipfix_sink *)s;

	if (x->reported)
		g_hash_table_destroy(x->reported);
	ipfix_xport_close(x->x);
	free(x->msg);
	free(x);
}

static const struct ex_sink_ops ipfix_ops = {
	.name = "ipfix",
	.event = ipfix_event,
	.tick = ipfix_tick,
	.finish = ipfix_finish,
	.destroy = ipfix_destroy,
};

void ipfix_sink_get_stats(struct ex_sink *s, struct ipfix_stats *st)
{
	struct ipfix_sink *x = (struct ipfix_sink *)s;

	st->records = atomic_load_explicit(&x->st.records, memory_order_relaxed);
	st->records_active = atomic_load_explicit(&x->st.records_active, memory_order_relaxed);
	st->records_final = atomic_load_explicit(&x->st.records_final, memory_order_relaxed);
	st->records_lost = atomic_load_explicit(&x->st.records_lost, memory_order_relaxed);
	st->template_sends = atomic_load_explicit(&x->st.template_sends, memory_order_relaxed);
	st->encode_errors = atomic_load_explicit(&x->st.encode_errors, memory_order_relaxed);
	ipfix_xport_get_stats(x->x, &st->xport);
}

const char *ipfix_sink_peer(struct ex_sink *s)
{
	return ipfix_xport_peer(((struct ipfix_sink *)s)->x);
}

struct ex_sink *ipfix_sink_create(const struct ipfix_config *cfg, char *err, size_t errlen)
{
	struct ipfix_sink *x = calloc(1, sizeof(*x));

	if (!x) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	x->base.ops = &ipfix_ops;
	x->cfg = *cfg;
	if (!x->cfg.template_refresh_s)
		x->cfg.template_refresh_s = 60;
	if (!x->cfg.template_refresh_msgs)
		x->cfg.template_refresh_msgs = 100;
	if (!x->cfg.mtu)
		x->cfg.mtu = 1400;
	x->msg_size = cfg->proto == IPFIX_TCP ? 16384 : x->cfg.mtu;
	x->active_ns = (ct_time_ns)cfg->active_timeout_s * 1000000000ull;
	/* a quarter of the timeout, at least a second: a connection is
	 * reported at most a quarter late, at the cost of a walk per tick */
	x->tick_ns = x->active_ns / 4 > 1000000000ull ? x->active_ns / 4 : 1000000000ull;
	x->base.next_tick = x->active_ns ? 0 : UINT64_MAX;
	if (ipfix_xport_open(cfg->proto, cfg->host, cfg->port,
			     cfg->connect_timeout_ms ? cfg->connect_timeout_ms : 3000,
			     cfg->queue_bytes, &x->x, err, errlen) < 0)
		goto fail;
	x->msg = malloc(x->msg_size);
	if (!x->msg) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	ipfix_enc_init(&x->enc, x->msg, x->msg_size, cfg->domain, !cfg->uniflow, cfg->nat);
	if (x->active_ns)
		x->reported = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
	if (send_templates(x) < 0) {
		snprintf(err, errlen, "cannot encode the IPFIX templates");
		goto fail;
	}
	return &x->base;
fail:
	ipfix_destroy(&x->base);
	return NULL;
}
