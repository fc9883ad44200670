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
 * and addresses are written from a table.  fmt_addr reproduces glibc's
 * inet_ntop exactly (RFC 5952 compression of the first longest run of two
 * or more zero groups, embedded IPv4 in ::a.b.c.d and ::ffff:a.b.c.d),
 * which tests/daemon/test_format.c checks against inet_ntop itself, and
 * the lines against the snprintf printer this file replaced.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <time.h>

#include "format.h"

static const char digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* @v (< 2^32) in decimal at @p: 32-bit arithmetic, the digits counted
 * first so that they are written in place. */
static inline char *put_u32(char *p, uint32_t v)
{
	unsigned n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : v < 100000 ? 5
		   : v < 1000000 ? 6 : v < 10000000 ? 7 : v < 100000000 ? 8
		   : v < 1000000000 ? 9 : 10;
	char *e = p + n, *q = e;

	while (v >= 100) {
		unsigned r = v % 100;

		v /= 100;
		q -= 2;
		memcpy(q, digits2 + 2 * r, 2);
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, digits2 + 2 * v, 2);
	} else {
		*--q = (char)('0' + v);
	}
	return e;
}

/* @v in decimal at @p; returns the end. */
static inline char *put_u64(char *p, uint64_t v)
{
	char tmp[20];

	if (v <= 0xffffffffu)
		return put_u32(p, (uint32_t)v);
	char *e, *q;

	e = tmp + sizeof(tmp);
	q = e;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		q -= 2;
		memcpy(q, digits2 + 2 * r, 2);
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, digits2 + 2 * v, 2);
	} else {
		*--q = (char)('0' + v);
	}
	memcpy(p, q, (size_t)(e - q));
	return p + (e - q);
}

/* At least @width digits, zero-padded (printf's "%.Nllu"). */
static char *put_u64_pad(char *p, uint64_t v, unsigned width)
{
	char tmp[24];
	char *e = put_u64(tmp, v);
	size_t n = (size_t)(e - tmp);

	while (n < width) {
		*p++ = '0';
		width--;
	}
	memcpy(p, tmp, n);
	return p + n;
}

static inline char *put_hex(char *p, unsigned v)
{
	static const char hx[] = "0123456789abcdef";
	char tmp[8];
	int n = 0;

	do {
		tmp[n++] = hx[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
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

/* "0".."255", each in 4 bytes (the unused ones 0): an address byte is a
 * 4-byte copy and a length, no division. */
static const char ip4_txt[256][4] = {
	{ '0', 0, 0, 0 }, { '1', 0, 0, 0 }, { '2', 0, 0, 0 }, { '3', 0, 0, 0 },
	{ '4', 0, 0, 0 }, { '5', 0, 0, 0 }, { '6', 0, 0, 0 }, { '7', 0, 0, 0 },
	{ '8', 0, 0, 0 }, { '9', 0, 0, 0 }, { '1', '0', 0, 0 }, { '1', '1', 0, 0 },
	{ '1', '2', 0, 0 }, { '1', '3', 0, 0 }, { '1', '4', 0, 0 }, { '1', '5', 0, 0 },
	{ '1', '6', 0, 0 }, { '1', '7', 0, 0 }, { '1', '8', 0, 0 }, { '1', '9', 0, 0 },
	{ '2', '0', 0, 0 }, { '2', '1', 0, 0 }, { '2', '2', 0, 0 }, { '2', '3', 0, 0 },
	{ '2', '4', 0, 0 }, { '2', '5', 0, 0 }, { '2', '6', 0, 0 }, { '2', '7', 0, 0 },
	{ '2', '8', 0, 0 }, { '2', '9', 0, 0 }, { '3', '0', 0, 0 }, { '3', '1', 0, 0 },
	{ '3', '2', 0, 0 }, { '3', '3', 0, 0 }, { '3', '4', 0, 0 }, { '3', '5', 0, 0 },
	{ '3', '6', 0, 0 }, { '3', '7', 0, 0 }, { '3', '8', 0, 0 }, { '3', '9', 0, 0 },
	{ '4', '0', 0, 0 }, { '4', '1', 0, 0 }, { '4', '2', 0, 0 }, { '4', '3', 0, 0 },
	{ '4', '4', 0, 0 }, { '4', '5', 0, 0 }, { '4', '6', 0, 0 }, { '4', '7', 0, 0 },
	{ '4', '8', 0, 0 }, { '4', '9', 0, 0 }, { '5', '0', 0, 0 }, { '5', '1', 0, 0 },
	{ '5', '2', 0, 0 }, { '5', '3', 0, 0 }, { '5', '4', 0, 0 }, { '5', '5', 0, 0 },
	{ '5', '6', 0, 0 }, { '5', '7', 0, 0 }, { '5', '8', 0, 0 }, { '5', '9', 0, 0 },
	{ '6', '0', 0, 0 }, { '6', '1', 0, 0 }, { '6', '2', 0, 0 }, { '6', '3', 0, 0 },
	{ '6', '4', 0, 0 }, { '6', '5', 0, 0 }, { '6', '6', 0, 0 }, { '6', '7', 0, 0 },
	{ '6', '8', 0, 0 }, { '6', '9', 0, 0 }, { '7', '0', 0, 0 }, { '7', '1', 0, 0 },
	{ '7', '2', 0, 0 }, { '7', '3', 0, 0 }, { '7', '4', 0, 0 }, { '7', '5', 0, 0 },
	{ '7', '6', 0, 0 }, { '7', '7', 0, 0 }, { '7', '8', 0, 0 }, { '7', '9', 0, 0 },
	{ '8', '0', 0, 0 }, { '8', '1', 0, 0 }, { '8', '2', 0, 0 }, { '8', '3', 0, 0 },
	{ '8', '4', 0, 0 }, { '8', '5', 0, 0 }, { '8', '6', 0, 0 }, { '8', '7', 0, 0 },
	{ '8', '8', 0, 0 }, { '8', '9', 0, 0 }, { '9', '0', 0, 0 }, { '9', '1', 0, 0 },
	{ '9', '2', 0, 0 }, { '9', '3', 0, 0 }, { '9', '4', 0, 0 }, { '9', '5', 0, 0 },
	{ '9', '6', 0, 0 }, { '9', '7', 0, 0 }, { '9', '8', 0, 0 }, { '9', '9', 0, 0 },
	{ '1', '0', '0', 0 }, { '1', '0', '1', 0 }, { '1', '0', '2', 0 }, { '1', '0', '3', 0 },
	{ '1', '0', '4', 0 }, { '1', '0', '5', 0 }, { '1', '0', '6', 0 }, { '1', '0', '7', 0 },
	{ '1', '0', '8', 0 }, { '1', '0', '9', 0 }, { '1', '1', '0', 0 }, { '1', '1', '1', 0 },
	{ '1', '1', '2', 0 }, { '1', '1', '3', 0 }, { '1', '1', '4', 0 }, { '1', '1', '5', 0 },
	{ '1', '1', '6', 0 }, { '1', '1', '7', 0 }, { '1', '1', '8', 0 }, { '1', '1', '9', 0 },
	{ '1', '2', '0', 0 }, { '1', '2', '1', 0 }, { '1', '2', '2', 0 }, { '1', '2', '3', 0 },
	{ '1', '2', '4', 0 }, { '1', '2', '5', 0 }, { '1', '2', '6', 0 }, { '1', '2', '7', 0 },
	{ '1', '2', '8', 0 }, { '1', '2', '9', 0 }, { '1', '3', '0', 0 }, { '1', '3', '1', 0 },
	{ '1', '3', '2', 0 }, { '1', '3', '3', 0 }, { '1', '3', '4', 0 }, { '1', '3', '5', 0 },
	{ '1', '3', '6', 0 }, { '1', '3', '7', 0 }, { '1', '3', '8', 0 }, { '1', '3', '9', 0 },
	{ '1', '4', '0', 0 }, { '1', '4', '1', 0 }, { '1', '4', '2', 0 }, { '1', '4', '3', 0 },
	{ '1', '4', '4', 0 }, { '1', '4', '5', 0 }, { '1', '4', '6', 0 }, { '1', '4', '7', 0 },
	{ '1', '4', '8', 0 }, { '1', '4', '9', 0 }, { '1', '5', '0', 0 }, { '1', '5', '1', 0 },
	{ '1', '5', '2', 0 }, { '1', '5', '3', 0 }, { '1', '5', '4', 0 }, { '1', '5', '5', 0 },
	{ '1', '5', '6', 0 }, { '1', '5', '7', 0 }, { '1', '5', '8', 0 }, { '1', '5', '9', 0 },
	{ '1', '6', '0', 0 }, { '1', '6', '1', 0 }, { '1', '6', '2', 0 }, { '1', '6', '3', 0 },
	{ '1', '6', '4', 0 }, { '1', '6', '5', 0 }, { '1', '6', '6', 0 }, { '1', '6', '7', 0 },
	{ '1', '6', '8', 0 }, { '1', '6', '9', 0 }, { '1', '7', '0', 0 }, { '1', '7', '1', 0 },
	{ '1', '7', '2', 0 }, { '1', '7', '3', 0 }, { '1', '7', '4', 0 }, { '1', '7', '5', 0 },
	{ '1', '7', '6', 0 }, { '1', '7', '7', 0 }, { '1', '7', '8', 0 }, { '1', '7', '9', 0 },
	{ '1', '8', '0', 0 }, { '1', '8', '1', 0 }, { '1', '8', '2', 0 }, { '1', '8', '3', 0 },
	{ '1', '8', '4', 0 }, { '1', '8', '5', 0 }, { '1', '8', '6', 0 }, { '1', '8', '7', 0 },
	{ '1', '8', '8', 0 }, { '1', '8', '9', 0 }, { '1', '9', '0', 0 }, { '1', '9', '1', 0 },
	{ '1', '9', '2', 0 }, { '1', '9', '3', 0 }, { '1', '9', '4', 0 }, { '1', '9', '5', 0 },
	{ '1', '9', '6', 0 }, { '1', '9', '7', 0 }, { '1', '9', '8', 0 }, { '1', '9', '9', 0 },
	{ '2', '0', '0', 0 }, { '2', '0', '1', 0 }, { '2', '0', '2', 0 }, { '2', '0', '3', 0 },
	{ '2', '0', '4', 0 }, { '2', '0', '5', 0 }, { '2', '0', '6', 0 }, { '2', '0', '7', 0 },
	{ '2', '0', '8', 0 }, { '2', '0', '9', 0 }, { '2', '1', '0', 0 }, { '2', '1', '1', 0 },
	{ '2', '1', '2', 0 }, { '2', '1', '3', 0 }, { '2', '1', '4', 0 }, { '2', '1', '5', 0 },
	{ '2', '1', '6', 0 }, { '2', '1', '7', 0 }, { '2', '1', '8', 0 }, { '2', '1', '9', 0 },
	{ '2', '2', '0', 0 }, { '2', '2', '1', 0 }, { '2', '2', '2', 0 }, { '2', '2', '3', 0 },
	{ '2', '2', '4', 0 }, { '2', '2', '5', 0 }, { '2', '2', '6', 0 }, { '2', '2', '7', 0 },
	{ '2', '2', '8', 0 }, { '2', '2', '9', 0 }, { '2', '3', '0', 0 }, { '2', '3', '1', 0 },
	{ '2', '3', '2', 0 }, { '2', '3', '3', 0 }, { '2', '3', '4', 0 }, { '2', '3', '5', 0 },
	{ '2', '3', '6', 0 }, { '2', '3', '7', 0 }, { '2', '3', '8', 0 }, { '2', '3', '9', 0 },
	{ '2', '4', '0', 0 }, { '2', '4', '1', 0 }, { '2', '4', '2', 0 }, { '2', '4', '3', 0 },
	{ '2', '4', '4', 0 }, { '2', '4', '5', 0 }, { '2', '4', '6', 0 }, { '2', '4', '7', 0 },
	{ '2', '4', '8', 0 }, { '2', '4', '9', 0 }, { '2', '5', '0', 0 }, { '2', '5', '1', 0 },
	{ '2', '5', '2', 0 }, { '2', '5', '3', 0 }, { '2', '5', '4', 0 }, { '2', '5', '5', 0 },
};

static inline char *put_octet(char *p, unsigned v)
{
	memcpy(p, ip4_txt[v], 4);
	return p + (v >= 100 ? 3 : v >= 10 ? 2 : 1);
}

static inline char *put_ip4_bytes(char *p, const uint8_t *b)
{
	p = put_octet(p, b[0]);
	*p++ = '.';
	p = put_octet(p, b[1]);
	*p++ = '.';
	p = put_octet(p, b[2]);
	*p++ = '.';
	return put_octet(p, b[3]);
}

/* glibc's inet_ntop6, step for step (see the top of the file). */
static char *put_ip6(char *p, const uint8_t *a)
{
	unsigned w[8];
	int best = -1, best_len = 0, cur = -1, cur_len = 0;

	for (int i = 0; i < 8; i++) {
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
		if (w[i] == 0) {
			if (cur < 0) {
				cur = i;
				cur_len = 1;
			} else {
				cur_len++;
			}
		} else if (cur >= 0) {
			if (best < 0 || cur_len > best_len) {
				best = cur;
				best_len = cur_len;
			}
			cur = -1;
		}
	}
	if (cur >= 0 && (best < 0 || cur_len > best_len)) {
		best = cur;
		best_len = cur_len;
	}
	if (best >= 0 && best_len < 2)
		best = -1;
	for (int i = 0; i < 8; i++) {
		if (best >= 0 && i >= best && i < best + best_len) {
			if (i == best)
				*p++ = ':';
			continue;
		}
		if (i)
			*p++ = ':';
		if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)))
			return put_ip4_bytes(p, a + 12);
		p = put_hex(p, w[i]);
	}
	if (best >= 0 && best + best_len == 8)
		*p++ = ':';
	return p;
}

static inline char *put_addr_of(char *p, uint8_t l3, const union ct_addr *a)
{
	if (l3 == CT_L3_IPV6)
		return put_ip6(p, a->ip6);
	return put_ip4_bytes(p, (const uint8_t *)&a->ip4);
}

size_t fmt_addr(char *buf, uint8_t l3, const union ct_addr *a)
{
	return (size_t)(put_addr_of(buf, l3, a) - buf);
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
	p = put_u64(p, num);
	*p++ = ' ';
	return p;
}

static char *put_tuple_text(char *p, const struct ct_tuple *t)
{
	p = PUT(p, "src=");
	p = put_addr_of(p, t->l3, &t->src);
	p = PUT(p, " dst=");
	p = put_addr_of(p, t->l3, &t->dst);
	*p++ = ' ';
	switch (t->l4) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
		p = PUT(p, "sport=");
		p = put_u64(p, t->sport);
		p = PUT(p, " dport=");
		p = put_u64(p, t->dport);
		*p++ = ' ';
		break;
	case IPPROTO_GRE:
		p = PUT(p, "srckey=0x");
		p = put_hex(p, t->sport);
		p = PUT(p, " dstkey=0x");
		p = put_hex(p, t->dport);
		*p++ = ' ';
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		p = PUT(p, "type=");
		p = put_u64(p, ct_tuple_icmp_type(t));
		p = PUT(p, " code=");
		p = put_u64(p, ct_tuple_icmp_code(t));
		p = PUT(p, " id=");
		p = put_u64(p, t->sport);
		*p++ = ' ';
		break;
	default:
		break;
	}
	return p;
}

static char *put_counters(char *p, uint64_t pk, uint64_t by)
{
	p = PUT(p, "packets=");
	p = put_u64(p, pk);
	p = PUT(p, " bytes=");
	p = put_u64(p, by);
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
		p = put_u64(p, lp->timeout_s < 0 ? 0 : (uint64_t)lp->timeout_s);
		*p++ = ' ';
	}
	if (lp->state && ci->state_name) {
		p = put_str(p, ci->state_name);
		*p++ = ' ';
	}
	p = put_tuple_text(p, &ci->orig);
	if (lp->counters)
		p = put_counters(p, ci->packets[0], ci->bytes[0]);
	if (!(ci->status & CT_ST_SEEN_REPLY))
		p = PUT(p, "[UNREPLIED] ");
	p = put_tuple_text(p, &ci->reply);
	if (lp->counters)
		p = put_counters(p, ci->packets[1], ci->bytes[1]);
	if (ci->status & CT_ST_ASSURED)
		p = PUT(p, "[ASSURED] ");
	if (lp->mark) {
		p = PUT(p, "mark=");
		p = put_u64(p, ci->mark);
		*p++ = ' ';
	}
	if (ci->orig.zone) {
		p = PUT(p, "zone=");
		p = put_u64(p, ci->orig.zone);
		*p++ = ' ';
	}
	if (lp->delta_time) {
		p = PUT(p, "delta-time=");
		p = put_u64(p, lp->delta_s < 0 ? 0 : (uint64_t)lp->delta_s);
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
		p = put_u64(p, ci->id);
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
	p = put_addr_of(p, t->l3, &t->src);
	p = PUT(p, "\",\"dst\":\"");
	p = put_addr_of(p, t->l3, &t->dst);
	*p++ = '"';
	switch (t->l4) {
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		p = PUT(p, ",\"type\":");
		p = put_u64(p, ct_tuple_icmp_type(t));
		p = PUT(p, ",\"code\":");
		p = put_u64(p, ct_tuple_icmp_code(t));
		p = PUT(p, ",\"id\":");
		p = put_u64(p, t->sport);
		break;
	case IPPROTO_GRE:
		p = PUT(p, ",\"srckey\":");
		p = put_u64(p, t->sport);
		p = PUT(p, ",\"dstkey\":");
		p = put_u64(p, t->dport);
		break;
	default:
		p = PUT(p, ",\"sport\":");
		p = put_u64(p, t->sport);
		p = PUT(p, ",\"dport\":");
		p = put_u64(p, t->dport);
		break;
	}
	if (counters) {
		p = PUT(p, ",\"packets\":");
		p = put_u64(p, pk);
		p = PUT(p, ",\"bytes\":");
		p = put_u64(p, by);
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
		p = put_addr_of(p, r->l3, &r->dst);
		p = icmp ? PUT(p, "\",\"id\":") : PUT(p, "\",\"port\":");
		p = put_u64(p, icmp ? r->sport : r->dport);
		*p++ = '}';
		if (ci->status & CT_ST_DST_NAT)
			*p++ = ',';
	}
	if (ci->status & CT_ST_DST_NAT) {
		p = PUT(p, "\"dst\":{\"addr\":\"");
		p = put_addr_of(p, r->l3, &r->src);
		p = icmp ? PUT(p, "\",\"id\":") : PUT(p, "\",\"port\":");
		p = put_u64(p, r->sport);
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
	p = put_u64(p, u / 1000000000ull);
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
	p = put_u64(p, ci->orig.l3);
	p = PUT(p, ",\"proto\":\"");
	p = put_str(p, l4_name(ci->orig.l4));
	p = PUT(p, "\",\"protonum\":");
	p = put_u64(p, ci->orig.l4);
	if (with_timeout) {
		p = PUT(p, ",\"timeout\":");
		p = put_u64(p, timeout_s < 0 ? 0 : (uint64_t)timeout_s);
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
	p = put_u64(p, ci->mark);
	p = PUT(p, ",\"zone\":");
	p = put_u64(p, ci->orig.zone);
	p = PUT(p, ",\"id\":");
	p = put_u64(p, ci->id);
	if (ci->first_seen)
		p = json_ts(p, o, "first_seen", ci->first_seen);
	if (ci->last_seen)
		p = json_ts(p, o, "last_seen", ci->last_seen);
	p = PUT(p, ",\"status\":");
	p = put_u64(p, ci->status);
	p = PUT(p, ",\"l4state\":");
	p = put_u64(p, ci->l4state);
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
