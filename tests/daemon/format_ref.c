/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * format_ref.c - the reference printer for tests/daemon/test_format.c:
 * tools/ctrack/format.c as it was before it was rewritten for speed
 * (snprintf and inet_ntop, field by field as libnetfilter_conntrack's
 * snprintf_default.c), kept unchanged but for its names, so that the new
 * printer is checked against an independent implementation of the same
 * rules, byte for byte.  (The original text of that file follows.)
 *
 * format.c - the conntrack(8) text formats and one-object-per-line JSON.
 *
 * Field order and spacing are libnetfilter_conntrack's: "%-8s %u " for
 * the protocol columns, "%9s " for the event tag, a single space between
 * fields and none at the end.  Which fields appear in an event follows
 * ctnetlink_conntrack_event(): NEW/UPDATE carry the timeout, and the state
 * only when the state changed (IPCT_PROTOINFO); DESTROY carries counters
 * and state but no timeout; mark appears in events only when set; "use="
 * only in listings.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>

#include "format_ref.h"

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

/* A line is built in memory so the trailing blank can go, as in
 * libnetfilter_conntrack ("Delete the last blank space"). */
struct sbuf {
	char b[1024];
	size_t n;
};

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (sb->n >= sizeof(sb->b))
		return;
	va_start(ap, fmt);
	/* clang-analyzer 14 loses the va_start above on the early-return path */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	r = vsnprintf(sb->b + sb->n, sizeof(sb->b) - sb->n, fmt, ap);
	va_end(ap);
	if (r > 0)
		sb->n += (size_t)r;
	if (sb->n >= sizeof(sb->b))
		sb->n = sizeof(sb->b) - 1;
}

static void sb_flush(struct sbuf *sb, FILE *out)
{
	while (sb->n && sb->b[sb->n - 1] == ' ')
		sb->n--;
	fwrite(sb->b, 1, sb->n, out);
	sb->n = 0;
}

static void put_addr(struct sbuf *out, const struct ct_tuple *t)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	int af = t->l3 == CT_L3_IPV6 ? AF_INET6 : AF_INET;

	inet_ntop(af, t->l3 == CT_L3_IPV6 ? (const void *)t->src.ip6 : (const void *)&t->src.ip4, s, sizeof(s));
	inet_ntop(af, t->l3 == CT_L3_IPV6 ? (const void *)t->dst.ip6 : (const void *)&t->dst.ip4, d, sizeof(d));
	sb_printf(out, "src=%s dst=%s ", s, d);
}

static void put_ports(struct sbuf *out, const struct ct_tuple *t)
{
	switch (t->l4) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
		sb_printf(out, "sport=%u dport=%u ", t->sport, t->dport);
		break;
	case IPPROTO_GRE:
		sb_printf(out, "srckey=0x%x dstkey=0x%x ", t->sport, t->dport);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		sb_printf(out, "type=%d code=%d id=%d ", ct_tuple_icmp_type(t),
			ct_tuple_icmp_code(t), t->sport);
		break;
	default:
		break;
	}
}

/* What a line shows, beyond the tuples and status flags. */
struct line_parts {
	const char *tag;       /* "[NEW]" ... or NULL */
	bool timeout;
	long long timeout_s;
	bool state;
	bool counters;
	bool mark;
	bool use;
};

static void put_text(struct sbuf *out, const struct ref_opts *o,
		     const struct ct_conn_info *ci, const struct line_parts *p)
{
	if (p->tag)
		sb_printf(out, "%9s ", p->tag);
	if (o->format == REF_EXTENDED)
		sb_printf(out, "%-8s %u ", l3_name(ci->orig.l3), ci->orig.l3);
	sb_printf(out, "%-8s %u ", l4_name(ci->orig.l4), ci->orig.l4);
	if (p->timeout)
		sb_printf(out, "%lld ", p->timeout_s < 0 ? 0 : p->timeout_s);
	if (p->state && ci->state_name)
		sb_printf(out, "%s ", ci->state_name);
	put_addr(out, &ci->orig);
	put_ports(out, &ci->orig);
	if (p->counters)
		sb_printf(out, "packets=%" PRIu64 " bytes=%" PRIu64 " ",
			ci->packets[0], ci->bytes[0]);
	if (!(ci->status & CT_ST_SEEN_REPLY))
		sb_printf(out, "[UNREPLIED] ");
	put_addr(out, &ci->reply);
	put_ports(out, &ci->reply);
	if (p->counters)
		sb_printf(out, "packets=%" PRIu64 " bytes=%" PRIu64 " ",
			ci->packets[1], ci->bytes[1]);
	if (ci->status & CT_ST_ASSURED)
		sb_printf(out, "[ASSURED] ");
	if (p->mark)
		sb_printf(out, "mark=%u ", ci->mark);
	if (ci->orig.zone)
		sb_printf(out, "zone=%u ", ci->orig.zone);
	if (p->use)
		sb_printf(out, "use=1");
}

static void json_tuple(FILE *out, const struct ct_tuple *t, const uint64_t *pk,
		       const uint64_t *by, bool counters)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	int af = t->l3 == CT_L3_IPV6 ? AF_INET6 : AF_INET;

	inet_ntop(af, t->l3 == CT_L3_IPV6 ? (const void *)t->src.ip6 : (const void *)&t->src.ip4, s, sizeof(s));
	inet_ntop(af, t->l3 == CT_L3_IPV6 ? (const void *)t->dst.ip6 : (const void *)&t->dst.ip4, d, sizeof(d));
	fprintf(out, "{\"src\":\"%s\",\"dst\":\"%s\"", s, d);
	switch (t->l4) {
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		fprintf(out, ",\"type\":%d,\"code\":%d,\"id\":%d", ct_tuple_icmp_type(t),
			ct_tuple_icmp_code(t), t->sport);
		break;
	case IPPROTO_GRE:
		fprintf(out, ",\"srckey\":%u,\"dstkey\":%u", t->sport, t->dport);
		break;
	default:
		fprintf(out, ",\"sport\":%u,\"dport\":%u", t->sport, t->dport);
		break;
	}
	if (counters)
		fprintf(out, ",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64, *pk, *by);
	fputc('}', out);
}

static void json_ts(FILE *out, const char *name, ct_time_ns ns)
{
	fprintf(out, ",\"%s\":%" PRIu64 ".%09" PRIu64, name,
		(uint64_t)(ns / 1000000000ull), (uint64_t)(ns % 1000000000ull));
}

static void put_json(FILE *out, const struct ref_opts *o,
		     const struct ct_conn_info *ci, const char *event,
		     long long timeout_s, bool with_timeout, ct_time_ns ts)
{
	fputc('{', out);
	if (event) {
		fprintf(out, "\"event\":\"%s\"", event);
		json_ts(out, "time", ts);
		fputc(',', out);
	}
	fprintf(out, "\"l3\":\"%s\",\"l3num\":%u,\"proto\":\"%s\",\"protonum\":%u",
		l3_name(ci->orig.l3), ci->orig.l3, l4_name(ci->orig.l4), ci->orig.l4);
	if (with_timeout)
		fprintf(out, ",\"timeout\":%lld", timeout_s < 0 ? 0 : timeout_s);
	if (ci->state_name)
		fprintf(out, ",\"state\":\"%s\"", ci->state_name);
	fputs(",\"orig\":", out);
	json_tuple(out, &ci->orig, &ci->packets[0], &ci->bytes[0], o->acct);
	fputs(",\"reply\":", out);
	json_tuple(out, &ci->reply, &ci->packets[1], &ci->bytes[1], o->acct);
	fprintf(out, ",\"assured\":%s,\"unreplied\":%s,\"mark\":%u,\"zone\":%u,\"id\":%" PRIu64,
		(ci->status & CT_ST_ASSURED) ? "true" : "false",
		(ci->status & CT_ST_SEEN_REPLY) ? "false" : "true",
		ci->mark, ci->orig.zone, ci->id);
	if (ci->first_seen)
		json_ts(out, "first_seen", ci->first_seen);
	if (ci->last_seen)
		json_ts(out, "last_seen", ci->last_seen);
	fputc('}', out);
}

void ref_listing(FILE *out, const struct ref_opts *o,
		 const struct ct_conn_info *ci, long long timeout_s)
{
	if (o->format == REF_JSON) {
		put_json(out, o, ci, NULL, timeout_s, true, 0);
	} else {
		struct line_parts p = { NULL, true, timeout_s, true, o->acct, true, true };
		struct sbuf sb = { .n = 0 };

		put_text(&sb, o, ci, &p);
		sb_flush(&sb, out);
	}
	fputc('\n', out);
}

void ref_event(FILE *out, const struct ref_opts *o, const struct ct_event *ev,
	       ct_time_ns ts_ns)
{
	static const char *const tags[] = { "[NEW]", "[UPDATE]", "[DESTROY]" };
	static const char *const names[] = { "new", "update", "destroy" };
	bool destroy = ev->type == CT_EV_DESTROY;
	long long left =
		(long long)((ev->conn.expires > ev->ts ? ev->conn.expires - ev->ts : 0) / 1000000000ull);

	if (o->format == REF_JSON) {
		put_json(out, o, &ev->conn, names[ev->type], left, !destroy, ts_ns);
	} else {
		struct line_parts p = {
			.tag = tags[ev->type],
			/* ctnetlink puts the timeout in a DESTROY only when
			 * time is left (an entry killed, not expired) */
			.timeout = !destroy || left > 0,
			.timeout_s = left,
			.state = destroy || (ev->what & CT_EVW_PROTOINFO),
			.counters = destroy && o->acct,
			.mark = ev->conn.mark || (ev->what & CT_EVW_MARK),
			.use = false,
		};
		struct sbuf sb = { .n = 0 };

		fprintf(out, "[%-.8llu.%-.6llu]\t", (unsigned long long)(ts_ns / 1000000000ull),
			(unsigned long long)(ts_ns % 1000000000ull / 1000ull));
		put_text(&sb, o, &ev->conn, &p);
		sb_flush(&sb, out);
	}
	fputc('\n', out);
}
