/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ipfix.c - the IPFIX exporter sink (ipfix.h).
 *
 * Encoding is libfixbuf's (Debian libfixbuf 2.4.1, CERT NetSA's IPFIX
 * library): the information model by name, RFC 5103 reverse elements,
 * templates, sets, message headers and sequence numbers.  It encodes into
 * a buffer (fbExporterAllocBuffer) and ipfix_xport.c sends the messages,
 * because libfixbuf's own sockets connect late and block (docs/export.md
 * says what was tried).
 *
 * One internal template describes struct rec, the record as this file
 * fills it; four external templates - IPv4 or IPv6, ports or ICMP type
 * and code - are the subsets a collector receives, cut from one spec
 * array by libfixbuf's spec flags, with or without the reverse elements.
 * Deciding the template per record costs a compare.
 *
 * Active timeouts keep, per connection already reported, what was
 * reported (GHashTable from GLib, which libfixbuf brings): the next
 * record carries the difference, so a collector that adds a flow's
 * records up gets the connection's counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <fixbuf/public.h>

#include "ipfix.h"

/* spec flags: an element is in a template whose flags hold all of its */
enum {
	SF_BI = 1,       /* reverse (RFC 5103) elements */
	SF_V4 = 2,
	SF_V6 = 4,
	SF_PORTS = 8,
	SF_ICMP = 16,
	SF_PAD = 32,     /* only in the internal template */
};

static fbInfoElementSpec_t rec_spec[] = {
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "octetDeltaCount", 8, 0 },
	{ "packetDeltaCount", 8, 0 },
	{ "reverseOctetDeltaCount", 8, SF_BI },
	{ "reversePacketDeltaCount", 8, SF_BI },
	{ "flowId", 8, 0 },
	{ "sourceIPv6Address", 16, SF_V6 },
	{ "destinationIPv6Address", 16, SF_V6 },
	{ "sourceIPv4Address", 4, SF_V4 },
	{ "destinationIPv4Address", 4, SF_V4 },
	{ "ingressVRFID", 4, 0 },
	{ "sourceTransportPort", 2, SF_PORTS },
	{ "destinationTransportPort", 2, SF_PORTS },
	{ "icmpTypeCodeIPv4", 2, SF_V4 | SF_ICMP },
	{ "icmpTypeCodeIPv6", 2, SF_V6 | SF_ICMP },
	/* the reverse flags before the forward ones: nfdump 1.7.1 reads a
	 * reverse element it has no reverse for as the forward one
	 * (LookupElement in its ipfix.c), so the later forward value wins
	 * there; RFC 7011 collectors do not care about the order */
	{ "reverseTcpControlBits", 2, SF_BI },
	{ "tcpControlBits", 2, 0 },
	{ "protocolIdentifier", 1, 0 },
	{ "flowEndReason", 1, 0 },
	{ "paddingOctets", 6, SF_PAD },
	FB_IESPEC_NULL
};

/* The record in memory, field for field the spec above. */
struct rec {
	uint64_t start_ms, end_ms;
	uint64_t octets, packets;
	uint64_t r_octets, r_packets;
	uint64_t flow_id;
	uint8_t src6[16], dst6[16];
	uint32_t src4, dst4;           /* host order: libfixbuf swaps */
	uint32_t vrf;
	uint16_t sport, dport;
	uint16_t icmp4, icmp6;
	uint16_t r_tcp_flags, tcp_flags;
	uint8_t proto;
	uint8_t reason;
	uint8_t pad[6];
};
_Static_assert(sizeof(struct rec) == 120, "struct rec must match rec_spec");

enum {
	REASON_IDLE = 1,
	REASON_ACTIVE = 2,
	REASON_END = 3,
	REASON_FORCED = 4,
	REASON_RESOURCES = 5,
};

#define TID_INTERNAL 256
#define TID_BASE 256    /* + bi*4 + v6*2 + icmp */

/* What was reported of a connection still open (active timeouts). */
struct reported {
	uint64_t key;                  /* flow_key() */
	ct_time_ns reported_at;        /* tick time of the last record */
	ct_time_ns end_ns;             /* its flowEnd: the next one's start */
	uint64_t packets[2], bytes[2];
};

struct ipfix_sink {
	struct ex_sink base;           /* first: the sink list's view */
	struct ipfix_config cfg;
	struct ipfix_stats st;
	struct ipfix_xport *x;
	fbInfoModel_t *model;
	fbSession_t *session;
	fbExporter_t *exporter;
	fBuf_t *fbuf;
	GHashTable *reported;          /* flow_key -> struct reported */
	uint8_t *msg;                  /* what fBufEmit copies out */
	uint8_t *held;                 /* a data message waiting for the
					* templates to go first */
	uint32_t msg_size;
	uint32_t in_msg;               /* records in the message being built */
	uint32_t msgs_since_templates;
	uint64_t templates_at_ms;      /* wall clock of the last template send */
	uint64_t msg_started_ms;       /* wall clock of the message's first record */
	ct_time_ns active_ns;
	ct_time_ns tick_ns;
	uint16_t cur_tid;
};

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
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

static uint16_t tid_for(const struct ipfix_sink *x, const struct ct_tuple *t)
{
	return (uint16_t)(TID_BASE + (x->cfg.uniflow ? 0 : 4) +
			  (t->l3 == CT_L3_IPV6 ? 2 : 0) + (is_icmp(t) ? 1 : 0));
}

static uint64_t to_ms(const struct ipfix_sink *x, ct_time_ns ns)
{
	int64_t v = (int64_t)ns + x->cfg.time_offset_ns;

	return v > 0 ? (uint64_t)v / 1000000u : 0;
}

static void set_tuple(struct rec *r, const struct ct_tuple *t)
{
	if (t->l3 == CT_L3_IPV6) {
		memcpy(r->src6, t->src.ip6, 16);
		memcpy(r->dst6, t->dst.ip6, 16);
	} else {
		r->src4 = ntohl(t->src.ip4);
		r->dst4 = ntohl(t->dst.ip4);
	}
	if (is_icmp(t)) {
		if (t->l3 == CT_L3_IPV6)
			r->icmp6 = t->dport;
		else
			r->icmp4 = t->dport;
	} else if (has_ports(t->l4)) {
		r->sport = t->sport;
		r->dport = t->dport;
	}
	r->proto = t->l4;
	r->vrf = t->zone;
}

/* ---- messages ---- */

static void set_templates(struct ipfix_sink *x)
{
	GError *e = NULL;

	if (!fBufSetInternalTemplate(x->fbuf, TID_INTERNAL, &e))
		g_clear_error(&e);
	if (x->cur_tid && !fBufSetExportTemplate(x->fbuf, x->cur_tid, &e))
		g_clear_error(&e);
}

/* Close the message being built (into x->msg); its length, 0 if none. */
static size_t close_msg(struct ipfix_sink *x)
{
	GError *e = NULL;
	size_t len;

	if (!fBufEmit(x->fbuf, &e)) {
		g_clear_error(&e);
		x->st.encode_errors++;
		return 0;
	}
	len = fbExporterGetMsgLen(x->exporter);
	set_templates(x);
	return len;
}

/* Every template, in a message of their own (RFC 7011 8: a collector
 * must see a template before the data that uses it; over UDP it must be
 * sent again, 10.3.6, for a collector that started late or lost it). */
static int send_templates(struct ipfix_sink *x)
{
	GError *e = NULL;
	size_t len;

	/* libfixbuf closes the current message with an end-of-message
	 * "error" before it starts a template set: try again once */
	if (!fbSessionExportTemplates(x->session, &e)) {
		bool eom = g_error_matches(e, FB_ERROR_DOMAIN, FB_ERROR_EOM);

		g_clear_error(&e);
		if (!eom || !fbSessionExportTemplates(x->session, &e)) {
			g_clear_error(&e);
			x->st.encode_errors++;
			return -EIO;
		}
	}
	len = close_msg(x);
	if (!len)
		return -EIO;
	x->st.template_sends++;
	ipfix_xport_send(x->x, x->msg, len);
	x->msgs_since_templates = 0;
	x->templates_at_ms = wall_ms();
	return 0;
}

static bool templates_due(const struct ipfix_sink *x)
{
	return x->cfg.proto == IPFIX_UDP &&
	       (x->msgs_since_templates >= x->cfg.template_refresh_msgs ||
		wall_ms() - x->templates_at_ms >= (uint64_t)x->cfg.template_refresh_s * 1000u);
}

/* Close the message being built and send it - over UDP after the
 * templates when they are due, so that a collector that starts late can
 * decode the first data message it gets after a refresh. */
static void emit(struct ipfix_sink *x)
{
	size_t len = close_msg(x);

	if (!len) {
		x->st.records_lost += x->in_msg;
		x->in_msg = 0;
		return;
	}
	if (templates_due(x)) {
		memcpy(x->held, x->msg, len);
		send_templates(x);
		memcpy(x->msg, x->held, len);
	}
	if (ipfix_xport_send(x->x, x->msg, len) < 0)
		x->st.records_lost += x->in_msg;
	x->in_msg = 0;
	x->msgs_since_templates++;
}

static void append(struct ipfix_sink *x, const struct rec *r, uint16_t tid)
{
	GError *e = NULL;

	if (tid != x->cur_tid) {
		x->cur_tid = tid;
		if (!fBufSetExportTemplate(x->fbuf, tid, &e)) {
			g_clear_error(&e);
			x->st.encode_errors++;
			return;
		}
	}
	/* libfixbuf answers "end of message" both when the message is full
	 * and, once, after templates were written: emit what there is and
	 * try again (three tries cover both) */
	for (int tries = 0;; tries++) {
		bool eom;

		if (fBufAppend(x->fbuf, (uint8_t *)(uintptr_t)r, sizeof(*r), &e))
			break;
		eom = g_error_matches(e, FB_ERROR_DOMAIN, FB_ERROR_EOM);
		g_clear_error(&e);
		if (!eom || tries == 2) {
			x->st.encode_errors++;
			return;
		}
		if (x->in_msg)
			emit(x);
	}
	if (!x->in_msg++)
		x->msg_started_ms = wall_ms();
	x->st.records++;
}

/* A record waits in its message at most a second of wall clock (a replay
 * that goes quiet, a daemon between events: ipfix_sink_flush). */
static void flush_if_old(struct ipfix_sink *x)
{
	if (x->in_msg && wall_ms() - x->msg_started_ms >= 1000)
		emit(x);
}

void ipfix_sink_flush(struct ex_sink *s)
{
	struct ipfix_sink *x = (struct ipfix_sink *)s;

	if (x->in_msg)
		emit(x);
	else if (templates_due(x))
		send_templates(x);
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
	struct rec r;
	unsigned n = 0;

	for (int d = 0; d < 2; d++) {
		dp[d] = ci->packets[d] - (rep ? rep->packets[d] : 0);
		db[d] = ci->bytes[d] - (rep ? rep->bytes[d] : 0);
	}
	/* a periodic record only when something happened since the last */
	if (reason == REASON_ACTIVE && !dp[0] && !dp[1])
		return 0;
	memset(&r, 0, sizeof(r));
	r.start_ms = to_ms(x, start);
	r.end_ms = to_ms(x, ci->last_seen ? ci->last_seen : start);
	r.flow_id = ci->id;
	r.reason = reason;
	if (!x->cfg.uniflow) {
		set_tuple(&r, &ci->orig);
		r.packets = dp[0];
		r.octets = db[0];
		r.r_packets = dp[1];
		r.r_octets = db[1];
		r.tcp_flags = ci->tcp_flags[0];
		r.r_tcp_flags = ci->tcp_flags[1];
		append(x, &r, tid_for(x, &ci->orig));
		return 1;
	}
	/* uniflow: the original direction always (a connection is at least
	 * its first packet), the reply when it carried packets */
	set_tuple(&r, &ci->orig);
	r.packets = dp[0];
	r.octets = db[0];
	r.tcp_flags = ci->tcp_flags[0];
	if (dp[0] || !dp[1] || rep == NULL) {
		append(x, &r, tid_for(x, &ci->orig));
		n++;
	}
	if (dp[1]) {
		struct rec q;

		memset(&q, 0, sizeof(q));
		q.start_ms = r.start_ms;
		q.end_ms = r.end_ms;
		q.flow_id = ci->id;
		q.reason = reason;
		set_tuple(&q, &ci->reply);
		q.packets = dp[1];
		q.octets = db[1];
		q.tcp_flags = ci->tcp_flags[1];
		append(x, &q, tid_for(x, &ci->reply));
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
	case CT_DESTROY_NONE:
	default:
		return REASON_FORCED;
	}
}

static void ipfix_event(struct ex_sink *s, const struct ct_event *ev, ct_time_ns when)
{
	struct ipfix_sink *x = (struct ipfix_sink *)s;
	uint64_t key;
	struct reported *rep;

	if (ev->type != CT_EV_DESTROY)
		return;
	key = flow_key(&ev->conn);
	rep = x->reported ? g_hash_table_lookup(x->reported, &key) : NULL;
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
		x->st.records_final += n;
		return 0;
	}
	if (c->now < since || c->now - since < x->active_ns)
		return 0;
	n = report(x, ci, rep, REASON_ACTIVE);
	if (!n)
		return 0;
	x->st.records_active += n;
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
	ct_table_dump(thr, -1, tick_one, &c);
	if (x->in_msg)
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

		ct_table_dump(thr, -1, tick_one, &c);
	}
	if (x->in_msg)
		emit(x);
	r = ipfix_xport_flush(x->x, 5000);
	ipfix_xport_get_stats(x->x, &xs);
	if (r < 0) {
		snprintf(s->error, sizeof(s->error),
			 "IPFIX export to %s over TCP failed: %s; %" PRIu64 " of %" PRIu64
			 " records were not delivered", ipfix_xport_peer(x->x),
			 strerror(-r), x->st.records_lost, x->st.records);
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
	if (x->fbuf)
		fBufFree(x->fbuf);     /* frees the session and exporter */
	else if (x->session)
		fbSessionFree(x->session);
	if (x->model)
		fbInfoModelFree(x->model);
	ipfix_xport_close(x->x);
	free(x->msg);
	free(x->held);
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

	*st = x->st;
	ipfix_xport_get_stats(x->x, &st->xport);
}

static int add_template(struct ipfix_sink *x, bool internal, uint16_t tid,
			uint32_t flags, char *err, size_t errlen)
{
	GError *e = NULL;
	fbTemplate_t *t = fbTemplateAlloc(x->model);

	if (!fbTemplateAppendSpecArray(t, rec_spec, flags, &e) ||
	    !fbSessionAddTemplate(x->session, internal, tid, t, &e)) {
		snprintf(err, errlen, "IPFIX template %u: %s", tid, e ? e->message : "?");
		g_clear_error(&e);
		fbTemplateFreeUnused(t);
		return -EINVAL;
	}
	return 0;
}

struct ex_sink *ipfix_sink_create(const struct ipfix_config *cfg, char *err, size_t errlen)
{
	struct ipfix_sink *x = calloc(1, sizeof(*x));
	uint32_t bi;

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
	 * reported at most a quarter late, at the cost of a dump per tick */
	x->tick_ns = x->active_ns / 4 > 1000000000ull ? x->active_ns / 4 : 1000000000ull;
	x->base.next_tick = x->active_ns ? 0 : UINT64_MAX;
	if (ipfix_xport_open(cfg->proto, cfg->host, cfg->port,
			     cfg->connect_timeout_ms ? cfg->connect_timeout_ms : 3000,
			     0, &x->x, err, errlen) < 0)
		goto fail;
	x->msg = malloc(x->msg_size);
	x->held = malloc(x->msg_size);
	x->model = fbInfoModelAlloc();
	x->session = x->model ? fbSessionAlloc(x->model) : NULL;
	if (!x->msg || !x->held || !x->session) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	fbSessionSetDomain(x->session, cfg->domain);
	bi = cfg->uniflow ? 0 : SF_BI;
	if (add_template(x, true, TID_INTERNAL, UINT32_MAX, err, errlen) < 0 ||
	    add_template(x, false, (uint16_t)(TID_BASE + (bi ? 4 : 0)), bi | SF_V4 | SF_PORTS, err, errlen) < 0 ||
	    add_template(x, false, (uint16_t)(TID_BASE + (bi ? 4 : 0) + 1), bi | SF_V4 | SF_ICMP, err, errlen) < 0 ||
	    add_template(x, false, (uint16_t)(TID_BASE + (bi ? 4 : 0) + 2), bi | SF_V6 | SF_PORTS, err, errlen) < 0 ||
	    add_template(x, false, (uint16_t)(TID_BASE + (bi ? 4 : 0) + 3), bi | SF_V6 | SF_ICMP, err, errlen) < 0)
		goto fail;
	x->exporter = fbExporterAllocBuffer(x->msg, (uint16_t)x->msg_size);
	x->fbuf = fBufAllocForExport(x->session, x->exporter);
	fBufSetAutomaticMode(x->fbuf, FALSE);
	x->cur_tid = 0;
	set_templates(x);
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
