/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * format.c - the conntrack(8) text formats and one-object-per-line JSON,
 * written by hand into the caller's buffer.
 *
 * Field order and spacing are libnetfilter_conntrack's
 * (__snprintf_conntrack_default): "%-8s %u " for the protocol columns,
 * "%9s " for the event tag, a single space between fields and none at the
 * end; after the reply tuple [ASSURED], mark, zone, delta-time, [start=]
 * [stop=], use and id, in that order.  Which fields appear in an event
 * follows ctnetlink_conntrack_event(): NEW/UPDATE carry the timeout, and
 * the state only when the state changed (IPCT_PROTOINFO); DESTROY carries
 * counters, timestamps and state but no timeout (unless time was left);
 * mark appears in events only when set or changed; "use=" only in
 * listings.
 *
 * Why by hand: the listing of a large table is the tool's hottest loop
 * (issue 25, part 4: at least 5M lines a second).  snprintf parses its
 * format at every field and inet_ntop costs more than the rest of a line;
 * here every field is a memcpy of a known length or a run of digit pairs,
 * and numbers, tuples and addresses are the library's writers (ct_dec_put:
 * ctrack/dec.h, inline; ct_tuple_put, ct_tuple_put_addr: base/tuple.c,
 * which reproduce glibc's inet_ntop exactly).  tests/daemon/test_format.c
 * checks the addresses against inet_ntop itself, the numbers against
 * printf, and the lines against the snprintf printer this file replaced.
 */
#include <netinet/in.h>
#include <string.h>
#include <time.h>

#include "ctrack/dec.h"

#include "format.h"

/* At least @width digits, zero-padded (printf's "%.Nllu"). */
static char *put_u64_pad(char *p, uint64_t v, unsigned width)
{
	char tmp[24];
	char *e = ct_dec_put(tmp, v);
	size_t n = (size_t)(e - tmp);

	while (n < width) {
		*p++ = '0';
		width--;
	}
	memcpy(p, tmp, n);
	return p + n;
}

#define PUT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

static inline char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	/* a line is bytes with a length, not a C string: no NUL */
	/* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
	memcpy(p, s, n);
	return p + n;
}

static const char *l3_name(uint8_t l3)
{
	return l3 == CT_L3_IPV4 ? "ipv4" : l3 == CT_L3_IPV6 ? "ipv6" : "unknown";
}

static const char *l4_name(uint8_t l4)
{
	if (l4 == IPPROTO_DCCP)
		return "dccp";
	return ct_l4_name(l4);
}

/* "%-8s %u " */
static char *put_col(char *p, const char *name, unsigned num)
{
	size_t n = strlen(name);

	/* NOLINTNEXTLINE(bugprone-not-null-terminated-result): no NUL in a line */
	memcpy(p, name, n);
	p += n;
	while (n++ < 8)
		*p++ = ' ';
	*p++ = ' ';
	p = ct_dec_put(p, num);
	*p++ = ' ';
	return p;
}

static char *put_counters(char *p, uint64_t pk, uint64_t by)
{
	p = PUT(p, "packets=");
	p = ct_dec_put(p, pk);
	p = PUT(p, " bytes=");
	p = ct_dec_put(p, by);
	*p++ = ' ';
	return p;
}

/* Table time -> wall-clock seconds. */
static int64_t wall_s(const struct fmt_opts *o, ct_time_ns t)
{
	return ((int64_t)t + o->wall_ns) / 1000000000LL;
}

/* "[start=Tue Dec  1 20:57:46 2026] ", as ctime(3) without its newline. */
static char *put_ctime(char *p, const char *what, int64_t secs)
{
	char tb[64];
	time_t tt = (time_t)secs;
	struct tm tm;

	*p++ = '[';
	p = put_str(p, what);
	*p++ = '=';
	if (localtime_r(&tt, &tm) && asctime_r(&tm, tb)) {
		size_t n = strlen(tb);

		if (n && tb[n - 1] == '\n')
			n--;
		/* NOLINTNEXTLINE(bugprone-not-null-terminated-result): no NUL in a line */
		memcpy(p, tb, n);
		p += n;
	}
	p = PUT(p, "] ");
	return p;
}

/* What a line shows, beyond the tuples and status flags. */
struct line_parts {
	const char *tag;       /* "[NEW]" ... or NULL */
	long long timeout_s;
	int64_t delta_s;       /* delta-time when delta_time */
	int64_t stop_s;        /* [stop=] when > 0 */
	bool timeout;
	bool state;
	bool counters;
	bool mark;
	bool use;
	bool delta_time;
};

static size_t put_text(char *buf, const struct fmt_opts *o,
		       const struct ct_conn_info *ci, const struct line_parts *lp)
{
	char *p = buf;

	if (lp->tag) {
		size_t n = strlen(lp->tag);

		while (n++ < 9)
			*p++ = ' ';
		p = put_str(p, lp->tag);
		*p++ = ' ';
	}
	if (o->format == FMT_EXTENDED)
		p = put_col(p, l3_name(ci->orig.l3), ci->orig.l3);
	p = put_col(p, l4_name(ci->orig.l4), ci->orig.l4);
	if (lp->timeout) {
		p = ct_dec_put(p, lp->timeout_s < 0 ? 0 : (uint64_t)lp->timeout_s);
		*p++ = ' ';
	}
	if (lp->state && ci->state_name) {
		p = put_str(p, ci->state_name);
		*p++ = ' ';
	}
	p = ct_tuple_put(p, &ci->orig);
	*p++ = ' ';
	if (lp->counters)
		p = put_counters(p, ci->packets[0], ci->bytes[0]);
	if (!(ci->status & CT_ST_SEEN_REPLY))
		p = PUT(p, "[UNREPLIED] ");
	p = ct_tuple_put(p, &ci->reply);
	*p++ = ' ';
	if (lp->counters)
		p = put_counters(p, ci->packets[1], ci->bytes[1]);
	if (ci->status & CT_ST_ASSURED)
		p = PUT(p, "[ASSURED] ");
	if (lp->mark) {
		p = PUT(p, "mark=");
		p = ct_dec_put(p, ci->mark);
		*p++ = ' ';
	}
	if (ci->orig.zone) {
		p = PUT(p, "zone=");
		p = ct_dec_put(p, ci->orig.zone);
		*p++ = ' ';
	}
	if (lp->delta_time) {
		p = PUT(p, "delta-time=");
		p = ct_dec_put(p, lp->delta_s < 0 ? 0 : (uint64_t)lp->delta_s);
		*p++ = ' ';
		if (o->ktimestamp) {
			p = put_ctime(p, "start", wall_s(o, ci->first_seen));
			if (lp->stop_s > 0)
				p = put_ctime(p, "stop", lp->stop_s);
		}
	}
	if (lp->use)
		p = PUT(p, "use=1 ");
	if (o->id) {
		p = PUT(p, "id=");
		p = ct_dec_put(p, ci->id);
		*p++ = ' ';
	}
	/* "Delete the last blank space" */
	while (p > buf && p[-1] == ' ')
		p--;
	return (size_t)(p - buf);
}

/* ---- JSON ---- */

static char *json_tuple(char *p, const struct ct_tuple *t, uint64_t pk, uint64_t by,
			bool counters)
{
	p = PUT(p, "{\"src\":\"");
	p = ct_tuple_put_addr(p, t->l3, &t->src);
	p = PUT(p, "\",\"dst\":\"");
	p = ct_tuple_put_addr(p, t->l3, &t->dst);
	*p++ = '"';
	switch (t->l4) {
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		p = PUT(p, ",\"type\":");
		p = ct_dec_put(p, ct_tuple_icmp_type(t));
		p = PUT(p, ",\"code\":");
		p = ct_dec_put(p, ct_tuple_icmp_code(t));
		p = PUT(p, ",\"id\":");
		p = ct_dec_put(p, t->sport);
		break;
	case IPPROTO_GRE:
		p = PUT(p, ",\"srckey\":");
		p = ct_dec_put(p, t->sport);
		p = PUT(p, ",\"dstkey\":");
		p = ct_dec_put(p, t->dport);
		break;
	default:
		p = PUT(p, ",\"sport\":");
		p = ct_dec_put(p, t->sport);
		p = PUT(p, ",\"dport\":");
		p = ct_dec_put(p, t->dport);
		break;
	}
	if (counters) {
		p = PUT(p, ",\"packets\":");
		p = ct_dec_put(p, pk);
		p = PUT(p, ",\"bytes\":");
		p = ct_dec_put(p, by);
	}
	*p++ = '}';
	return p;
}

/* The binding of a NATed connection (issue 24): for each side the NAT
 * translated, the address and port (ICMP: id) it became - the reply
 * tuple's destination for source NAT, its source for destination NAT. */
static char *json_nat(char *p, const struct ct_conn_info *ci)
{
	const struct ct_tuple *r = &ci->reply;
	bool icmp = r->l4 == IPPROTO_ICMP || r->l4 == IPPROTO_ICMPV6;

	if (!(ci->status & (CT_ST_SRC_NAT | CT_ST_DST_NAT)))
		return p;
	p = PUT(p, ",\"nat\":{");
	if (ci->status & CT_ST_SRC_NAT) {
		p = PUT(p, "\"src\":{\"addr\":\"");
		p = ct_tuple_put_addr(p, r->l3, &r->dst);
		p = icmp ? PUT(p, "\",\"id\":") : PUT(p, "\",\"port\":");
		p = ct_dec_put(p, icmp ? r->sport : r->dport);
		*p++ = '}';
		if (ci->status & CT_ST_DST_NAT)
			*p++ = ',';
	}
	if (ci->status & CT_ST_DST_NAT) {
		p = PUT(p, "\"dst\":{\"addr\":\"");
		p = ct_tuple_put_addr(p, r->l3, &r->src);
		p = icmp ? PUT(p, "\",\"id\":") : PUT(p, "\",\"port\":");
		p = ct_dec_put(p, r->sport);
		*p++ = '}';
	}
	*p++ = '}';
	return p;
}

/* ,"name":SEC.NSEC of table time @t shown on the wall clock */
static char *json_ts(char *p, const struct fmt_opts *o, const char *name, ct_time_ns t)
{
	int64_t w = (int64_t)t + o->wall_ns;
	uint64_t u = w < 0 ? 0 : (uint64_t)w;

	p = PUT(p, ",\"");
	p = put_str(p, name);
	p = PUT(p, "\":");
	p = ct_dec_put(p, u / 1000000000ull);
	*p++ = '.';
	return put_u64_pad(p, u % 1000000000ull, 9);
}

const char *fmt_destroy_cause_name(enum ct_destroy_cause c)
{
	static const char *const names[] = {
		[CT_DESTROY_NONE] = "none",
		[CT_DESTROY_TIMEOUT] = "timeout",
		[CT_DESTROY_PROTOCOL] = "protocol",
		[CT_DESTROY_FLUSH] = "flush",
		[CT_DESTROY_NS] = "namespace",
		[CT_DESTROY_EARLY_DROP] = "early_drop",
		[CT_DESTROY_REOPEN] = "reopen",
		[CT_DESTROY_DELETE] = "delete",
	};

	if ((unsigned)c < sizeof(names) / sizeof(names[0]) && names[c])
		return names[c];
	return "unknown";
}

const char *fmt_what_name(unsigned bit)
{
	switch (1u << bit) {
	case CT_EVW_NEW: return "new";
	case CT_EVW_RELATED: return "related";
	case CT_EVW_DESTROY: return "destroy";
	case CT_EVW_REPLY: return "reply";
	case CT_EVW_ASSURED: return "assured";
	case CT_EVW_PROTOINFO: return "protoinfo";
	case CT_EVW_MARK: return "mark";
	case CT_EVW_LABEL: return "label";
	default: return NULL;
	}
}

static size_t put_json(char *buf, const struct fmt_opts *o,
		       const struct ct_conn_info *ci, const struct ct_event *ev,
		       long long timeout_s, bool with_timeout, ct_time_ns ts)
{
	static const char *const names[] = { "new", "update", "destroy" };
	static const char hx[] = "0123456789abcdef";
	char *p = buf;

	*p++ = '{';
	if (ev) {
		p = PUT(p, "\"event\":\"");
		p = put_str(p, names[ev->type]);
		*p++ = '"';
		p = json_ts(p, o, "time", ts);
		*p++ = ',';
	}
	p = PUT(p, "\"l3\":\"");
	p = put_str(p, l3_name(ci->orig.l3));
	p = PUT(p, "\",\"l3num\":");
	p = ct_dec_put(p, ci->orig.l3);
	p = PUT(p, ",\"proto\":\"");
	p = put_str(p, l4_name(ci->orig.l4));
	p = PUT(p, "\",\"protonum\":");
	p = ct_dec_put(p, ci->orig.l4);
	if (with_timeout) {
		p = PUT(p, ",\"timeout\":");
		p = ct_dec_put(p, timeout_s < 0 ? 0 : (uint64_t)timeout_s);
	}
	if (ci->state_name) {
		p = PUT(p, ",\"state\":\"");
		p = put_str(p, ci->state_name);
		*p++ = '"';
	}
	p = PUT(p, ",\"orig\":");
	p = json_tuple(p, &ci->orig, ci->packets[0], ci->bytes[0], o->acct);
	p = PUT(p, ",\"reply\":");
	p = json_tuple(p, &ci->reply, ci->packets[1], ci->bytes[1], o->acct);
	p = json_nat(p, ci);
	p = (ci->status & CT_ST_ASSURED) ? PUT(p, ",\"assured\":true") : PUT(p, ",\"assured\":false");
	p = (ci->status & CT_ST_SEEN_REPLY) ? PUT(p, ",\"unreplied\":false")
					    : PUT(p, ",\"unreplied\":true");
	p = PUT(p, ",\"mark\":");
	p = ct_dec_put(p, ci->mark);
	p = PUT(p, ",\"zone\":");
	p = ct_dec_put(p, ci->orig.zone);
	p = PUT(p, ",\"id\":");
	p = ct_dec_put(p, ci->id);
	if (ci->first_seen)
		p = json_ts(p, o, "first_seen", ci->first_seen);
	if (ci->last_seen)
		p = json_ts(p, o, "last_seen", ci->last_seen);
	p = PUT(p, ",\"status\":");
	p = ct_dec_put(p, ci->status);
	p = PUT(p, ",\"l4state\":");
	p = ct_dec_put(p, ci->l4state);
	p = PUT(p, ",\"labels\":\"");
	for (int i = 0; i < 16; i++) {
		*p++ = hx[ci->labels[i] >> 4];
		*p++ = hx[ci->labels[i] & 15];
	}
	*p++ = '"';
	if (ev) {
		bool first = true;

		p = PUT(p, ",\"what\":[");
		for (unsigned b = 0; b < 32; b++) {
			const char *n = (ev->what & (1u << b)) ? fmt_what_name(b) : NULL;

			if (!n)
				continue;
			if (!first)
				*p++ = ',';
			first = false;
			*p++ = '"';
			p = put_str(p, n);
			*p++ = '"';
		}
		*p++ = ']';
		if (ev->type == CT_EV_DESTROY) {
			p = PUT(p, ",\"destroy_cause\":\"");
			p = put_str(p, fmt_destroy_cause_name(ev->destroy_cause));
			*p++ = '"';
		}
	}
	*p++ = '}';
	return (size_t)(p - buf);
}

size_t fmt_listing_line(char *buf, const struct fmt_opts *o,
			const struct ct_conn_info *ci, long long timeout_s,
			ct_time_ns now)
{
	struct line_parts lp;

	if (o->format == FMT_JSON)
		return put_json(buf, o, ci, NULL, timeout_s, true, 0);
	memset(&lp, 0, sizeof(lp));
	lp.timeout = true;
	lp.timeout_s = timeout_s;
	lp.state = true;
	lp.counters = o->acct;
	lp.mark = true;
	lp.use = true;
	if (o->delta_time && ci->first_seen) {
		lp.delta_time = true;
		lp.delta_s = wall_s(o, now) - wall_s(o, ci->first_seen);
	}
	return put_text(buf, o, ci, &lp);
}

size_t fmt_event_line(char *buf, const struct fmt_opts *o, const struct ct_event *ev,
		      ct_time_ns ts_ns, bool stamp)
{
	static const char *const tags[] = { "[NEW]", "[UPDATE]", "[DESTROY]" };
	bool destroy = ev->type == CT_EV_DESTROY;
	long long left =
		(long long)((ev->conn.expires > ev->ts ? ev->conn.expires - ev->ts : 0) / 1000000000ull);
	struct line_parts lp;
	char *p = buf;

	if (o->format == FMT_JSON)
		return put_json(buf, o, &ev->conn, ev, left, !destroy, ts_ns);
	memset(&lp, 0, sizeof(lp));
	lp.tag = tags[ev->type];
	/* ctnetlink puts the timeout in a DESTROY only when time is left
	 * (an entry killed, not expired) */
	lp.timeout = !destroy || left > 0;
	lp.timeout_s = left;
	lp.state = destroy || (ev->what & CT_EVW_PROTOINFO);
	lp.counters = destroy && o->acct;
	lp.mark = ev->conn.mark || (ev->what & CT_EVW_MARK);
	/* timestamps travel in DESTROY events only (ctnetlink_conntrack_event) */
	if (destroy && o->delta_time && ev->conn.first_seen) {
		lp.delta_time = true;
		lp.delta_s = wall_s(o, ts_ns) - wall_s(o, ev->conn.first_seen);
		lp.stop_s = wall_s(o, ts_ns);
	}
	if (stamp) {
		int64_t w = (int64_t)ts_ns + o->wall_ns;
		uint64_t u = w < 0 ? 0 : (uint64_t)w;

		/* "[%-.8llu.%-.6llu]\t": precision, so zero-padded */
		*p++ = '[';
		p = put_u64_pad(p, u / 1000000000ull, 8);
		*p++ = '.';
		p = put_u64_pad(p, u % 1000000000ull / 1000ull, 6);
		p = PUT(p, "]\t");
	}
	return (size_t)(p - buf) + put_text(p, o, &ev->conn, &lp);
}

void fmt_listing(FILE *out, const struct fmt_opts *o,
		 const struct ct_conn_info *ci, long long timeout_s)
{
	char buf[FMT_LINE_MAX + 1];
	size_t n = fmt_listing_line(buf, o, ci, timeout_s, 0);

	buf[n++] = '\n';
	fwrite(buf, 1, n, out);
}

void fmt_event(FILE *out, const struct fmt_opts *o, const struct ct_event *ev,
	       ct_time_ns ts_ns)
{
	char buf[FMT_LINE_MAX + 1];
	size_t n = fmt_event_line(buf, o, ev, ts_ns, true);

	buf[n++] = '\n';
	fwrite(buf, 1, n, out);
}
