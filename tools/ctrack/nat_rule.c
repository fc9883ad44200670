/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_rule.c - parsing and matching the tool's NAT rules (nat_rule.h has
 * the syntax).
 *
 * The parser is a hand-written scanner over whitespace-separated words,
 * because the grammar is a dozen keywords and the messages must point at
 * a column: every word keeps the column it started at, and a value that
 * is wrong inside a word (the port of "10.0.0.1:99999") is reported at
 * its own column.  Each keyword may appear once; what the rule says is
 * then checked as a whole for things that can never match, which are
 * warnings and not errors, because nftables accepts them too (a rule can
 * be written before the traffic it is meant for exists).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nat_rule.h"

#define MAX_WORDS 64

struct word {
	char s[128];
	unsigned col;            /* 1-based */
};

struct scan {
	struct word w[MAX_WORDS];
	unsigned n, i;
	unsigned end_col;        /* one past the last character */
	struct nat_rule_diag *err;
};

static int fail(struct scan *sc, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct scan *sc, unsigned col, const char *fmt, ...)
{
	va_list ap;

	sc->err->column = col;
	va_start(ap, fmt);
	/* clang-analyzer 14 loses the va_start above on some paths (as in
	 * format.c) */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	vsnprintf(sc->err->msg, sizeof(sc->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int split(struct scan *sc, const char *text)
{
	const char *p = text;

	sc->n = 0;
	sc->i = 0;
	while (*p) {
		size_t len = 0;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (sc->n == MAX_WORDS)
			return fail(sc, (unsigned)(p - text) + 1, "too many words (at most %d)",
				    MAX_WORDS);
		sc->w[sc->n].col = (unsigned)(p - text) + 1;
		while (p[len] && !isspace((unsigned char)p[len]))
			len++;
		if (len >= sizeof(sc->w[0].s))
			return fail(sc, sc->w[sc->n].col, "a word of %zu characters", len);
		memcpy(sc->w[sc->n].s, p, len);
		sc->w[sc->n].s[len] = '\0';
		sc->n++;
		p += len;
	}
	sc->end_col = (unsigned)(p - text) + 1;
	return 0;
}

static const struct word *peek(const struct scan *sc)
{
	return sc->i < sc->n ? &sc->w[sc->i] : NULL;
}

static bool take(struct scan *sc, const char *kw)
{
	if (sc->i < sc->n && strcmp(sc->w[sc->i].s, kw) == 0) {
		sc->i++;
		return true;
	}
	return false;
}

/* the value after keyword @kw */
static const struct word *value(struct scan *sc, const char *kw, const char *what)
{
	if (sc->i >= sc->n) {
		fail(sc, sc->end_col, "'%s' needs %s after it", kw, what);
		return NULL;
	}
	return &sc->w[sc->i++];
}

/* ---- numbers, addresses, ports ------------------------------------ */

static bool number(const char *s, size_t len, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (len == 0 || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

/* "P" or "P-Q" at @s (@len chars), reported at @col */
static int ports(struct scan *sc, const char *s, size_t len, unsigned col,
		 struct nat_rule_ports *p)
{
	const char *dash = memchr(s, '-', len);
	unsigned long lo, hi;

	if (!number(s, dash ? (size_t)(dash - s) : len, 65535, &lo))
		return fail(sc, col, "'%.*s' is not a port (0-65535)",
			    (int)(dash ? (size_t)(dash - s) : len), s);
	hi = lo;
	if (dash && !number(dash + 1, len - (size_t)(dash - s) - 1, 65535, &hi))
		return fail(sc, col + (unsigned)(dash - s) + 1, "'%.*s' is not a port (0-65535)",
			    (int)(len - (size_t)(dash - s) - 1), dash + 1);
	if (hi < lo)
		return fail(sc, col, "port range %lu-%lu runs backwards", lo, hi);
	p->set = true;
	p->lo = (uint16_t)lo;
	p->hi = (uint16_t)hi;
	return 0;
}

/* an address at @s (@len chars): IPv4 or IPv6, family into *@l3 */
static bool address(const char *s, size_t len, union ct_addr *a, uint8_t *l3)
{
	char buf[64];

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, buf, &a->ip4) == 1) {
		*l3 = CT_L3_IPV4;
		return true;
	}
	if (inet_pton(AF_INET6, buf, a->ip6) == 1) {
		*l3 = CT_L3_IPV6;
		return true;
	}
	return false;
}

static int addr_cmp(uint8_t l3, const union ct_addr *a, const union ct_addr *b)
{
	return memcmp(a, b, l3 == CT_L3_IPV4 ? 4 : 16);
}

static void mask(union ct_addr *a, uint8_t l3, unsigned len, bool set_host)
{
	unsigned bits = l3 == CT_L3_IPV4 ? 32 : 128;

	for (unsigned i = len; i < bits; i++) {
		if (set_host)
			a->ip6[i / 8] |= (uint8_t)(0x80 >> (i % 8));
		else
			a->ip6[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
	}
}

/* PREFIX: ADDR or ADDR/LEN */
static int prefix(struct scan *sc, const struct word *w, struct nat_rule_prefix *p)
{
	const char *slash = strchr(w->s, '/');
	size_t alen = slash ? (size_t)(slash - w->s) : strlen(w->s);
	unsigned long len;

	if (!address(w->s, alen, &p->addr, &p->l3))
		return fail(sc, w->col, "'%.*s' is not an IPv4 or IPv6 address", (int)alen, w->s);
	len = p->l3 == CT_L3_IPV4 ? 32 : 128;
	if (slash && !number(slash + 1, strlen(slash + 1), len, &len))
		return fail(sc, w->col + (unsigned)alen + 1, "'%s' is not a prefix length (0-%d)",
			    slash + 1, p->l3 == CT_L3_IPV4 ? 32 : 128);
	p->len = (uint8_t)len;
	mask(&p->addr, p->l3, p->len, false);
	p->set = true;
	return 0;
}

/*
 * The target: ADDR, ADDR-ADDR, each optionally :PORT[-PORT]; IPv6 in
 * brackets when a port follows ("[A]-[B]:P-Q"), or bare without ports.
 */
static int target(struct scan *sc, const struct word *w, struct nat_rule *r)
{
	const char *s = w->s, *port = NULL;
	size_t n = strlen(s);
	union ct_addr a, b;
	uint8_t la, lb;
	struct nat_rule_ports p = { false, 0, 0 };

	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		const char *rest;

		if (!close)
			return fail(sc, w->col, "'[' without ']'");
		if (!address(s + 1, (size_t)(close - s - 1), &a, &la) || la != CT_L3_IPV6)
			return fail(sc, w->col + 1, "'%.*s' is not an IPv6 address",
				    (int)(close - s - 1), s + 1);
		b = a;
		lb = la;
		rest = close + 1;
		if (rest[0] == '-') {
			const char *close2;

			if (rest[1] != '[' || !(close2 = strchr(rest + 2, ']')))
				return fail(sc, w->col + (unsigned)(rest - s) + 1,
					    "expected '[ADDRESS]' after '-'");
			if (!address(rest + 2, (size_t)(close2 - rest - 2), &b, &lb) ||
			    lb != CT_L3_IPV6)
				return fail(sc, w->col + (unsigned)(rest - s) + 2,
					    "'%.*s' is not an IPv6 address",
					    (int)(close2 - rest - 2), rest + 2);
			rest = close2 + 1;
		}
		if (rest[0] == ':')
			port = rest + 1;
		else if (rest[0])
			return fail(sc, w->col + (unsigned)(rest - s), "unexpected '%s'", rest);
	} else {
		const char *colon = strchr(s, ':');
		const char *dash;
		size_t alen = n;

		/* one colon: IPv4 and a port; more: a bare IPv6 address */
		if (colon && !strchr(colon + 1, ':')) {
			port = colon + 1;
			alen = (size_t)(colon - s);
		}
		dash = memchr(s, '-', alen);
		if (!address(s, dash ? (size_t)(dash - s) : alen, &a, &la))
			return fail(sc, w->col, "'%.*s' is not an IPv4 or IPv6 address",
				    (int)(dash ? (size_t)(dash - s) : alen), s);
		b = a;
		lb = la;
		if (dash && !address(dash + 1, alen - (size_t)(dash - s) - 1, &b, &lb))
			return fail(sc, w->col + (unsigned)(dash - s) + 1,
				    "'%.*s' is not an IPv4 or IPv6 address",
				    (int)(alen - (size_t)(dash - s) - 1), dash + 1);
		if (port && la == CT_L3_IPV6)
			return fail(sc, w->col, "an IPv6 address with a port is written [ADDRESS]:PORT");
	}
	if (la != lb)
		return fail(sc, w->col, "the range mixes IPv4 and IPv6");
	if (addr_cmp(la, &a, &b) > 0)
		return fail(sc, w->col, "address range runs backwards");
	if (port) {
		if (ports(sc, port, strlen(port), w->col + (unsigned)(port - s), &p) < 0)
			return -1;
		r->range.flags |= CT_NAT_RANGE_PROTO_SPECIFIED;
		r->range.min_proto = p.lo;
		r->range.max_proto = p.hi;
	}
	r->range.flags |= CT_NAT_RANGE_MAP_IPS;
	r->range.min_addr = a;
	r->range.max_addr = b;
	r->to_family = la;
	r->has_to = true;
	return 0;
}

static int flags(struct scan *sc, struct nat_rule *r)
{
	const struct word *w;

	while ((w = peek(sc))) {
		char buf[128];
		char *save = NULL, *f;
		bool any = false;

		snprintf(buf, sizeof(buf), "%s", w->s);
		for (f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
			unsigned col = w->col + (unsigned)(f - buf);

			if (strcmp(f, "persistent") == 0)
				r->range.flags |= CT_NAT_RANGE_PERSISTENT;
			else if (strcmp(f, "random") == 0)
				r->range.flags |= CT_NAT_RANGE_PROTO_RANDOM;
			else if (strcmp(f, "fully-random") == 0)
				r->range.flags |= CT_NAT_RANGE_PROTO_RANDOM_FULLY;
			else if (any)
				return fail(sc, col, "'%s' is not a flag (persistent, random, "
					    "fully-random)", f);
			else
				return fail(sc, col, "unexpected '%s' after the target (flags: "
					    "persistent, random, fully-random)", f);
			any = true;
		}
		sc->i++;
	}
	return 0;
}

/* ---- the rule ---------------------------------------------------------- */

static const struct {
	const char *name;
	int num;
} protos[] = {
	{ "tcp", 6 }, { "udp", 17 }, { "udplite", 136 }, { "sctp", 132 },
	{ "icmp", 1 }, { "icmpv6", 58 }, { "ipv6-icmp", 58 }, { "gre", 47 },
	{ "dccp", 33 }, { "esp", 50 }, { "ah", 51 },
};

static int proto_of(const char *s)
{
	unsigned long v;

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (strcmp(s, protos[i].name) == 0)
			return protos[i].num;
	if (number(s, strlen(s), 255, &v))
		return (int)v;
	return -1;
}

static bool has_ports(int l4)
{
	return l4 == 6 || l4 == 17 || l4 == 136 || l4 == 132 || l4 == 33;
}

static int set_family(struct scan *sc, struct nat_rule *r, const struct word *w, uint8_t f)
{
	if (r->family && r->family != f)
		return fail(sc, w->col, "'%s' contradicts the family given before", w->s);
	r->family = f;
	return 0;
}

static int set_proto(struct scan *sc, struct nat_rule *r, const struct word *w, int l4)
{
	if (r->l4 >= 0 && r->l4 != l4)
		return fail(sc, w->col, "a second protocol '%s'", w->s);
	r->l4 = l4;
	return 0;
}

static int matches(struct scan *sc, struct nat_rule *r)
{
	const struct word *w;

	while ((w = peek(sc))) {
		const struct word *v;
		int l4;

		if (!strcmp(w->s, "snat") || !strcmp(w->s, "dnat") || !strcmp(w->s, "masquerade"))
			return 0;
		sc->i++;
		if (!strcmp(w->s, "ip") || !strcmp(w->s, "ip6")) {
			if (set_family(sc, r, w, w->s[2] ? CT_L3_IPV6 : CT_L3_IPV4) < 0)
				return -1;
		} else if (!strcmp(w->s, "saddr") || !strcmp(w->s, "daddr")) {
			struct nat_rule_prefix *p = w->s[0] == 's' ? &r->saddr : &r->daddr;

			if (p->set)
				return fail(sc, w->col, "'%s' given twice", w->s);
			if (!(v = value(sc, w->s, "an address or PREFIX/LEN")) || prefix(sc, v, p) < 0)
				return -1;
		} else if (!strcmp(w->s, "sport") || !strcmp(w->s, "dport")) {
			struct nat_rule_ports *p = w->s[0] == 's' ? &r->sport : &r->dport;

			if (p->set)
				return fail(sc, w->col, "'%s' given twice", w->s);
			if (!(v = value(sc, w->s, "PORT or PORT-PORT")) ||
			    ports(sc, v->s, strlen(v->s), v->col, p) < 0)
				return -1;
		} else if (!strcmp(w->s, "l4proto")) {
			if (!(v = value(sc, w->s, "a protocol")))
				return -1;
			if ((l4 = proto_of(v->s)) < 0)
				return fail(sc, v->col, "'%s' is not a protocol", v->s);
			if (set_proto(sc, r, v, l4) < 0)
				return -1;
		} else if ((l4 = proto_of(w->s)) >= 0 && !isdigit((unsigned char)w->s[0])) {
			if (set_proto(sc, r, w, l4) < 0)
				return -1;
		} else if (!strcmp(w->s, "zone") || !strcmp(w->s, "iif")) {
			unsigned long n;
			int32_t *dst = w->s[0] == 'z' ? &r->zone : &r->iif;

			if (*dst >= 0)
				return fail(sc, w->col, "'%s' given twice", w->s);
			if (!(v = value(sc, w->s, "a number")))
				return -1;
			if (!number(v->s, strlen(v->s), w->s[0] == 'z' ? 65535 : 0x7fffffff, &n))
				return fail(sc, v->col, "'%s' is not a %s", v->s,
					    w->s[0] == 'z' ? "zone (0-65535)" : "pcapng interface number");
			*dst = (int32_t)n;
		} else if (!strcmp(w->s, "iifname")) {
			size_t len;
			const char *s;

			if (r->iifname[0])
				return fail(sc, w->col, "'iifname' given twice");
			if (!(v = value(sc, w->s, "an interface name")))
				return -1;
			s = v->s;
			len = strlen(s);
			if (len >= 2 && s[0] == '"' && s[len - 1] == '"') {
				s++;
				len -= 2;
			}
			if (len == 0 || len >= sizeof(r->iifname))
				return fail(sc, v->col, "an interface name of 1-%zu characters",
					    sizeof(r->iifname) - 1);
			memcpy(r->iifname, s, len);
			r->iifname[len] = '\0';
		} else if (!strcmp(w->s, "meta") || !strcmp(w->s, "ct")) {
			/* nftables' "meta l4proto X", "ct zone N" */
			const struct word *nx = peek(sc);

			if (!nx || strcmp(nx->s, w->s[0] == 'm' ? "l4proto" : "zone") != 0)
				return fail(sc, nx ? nx->col : sc->end_col, "expected '%s' after '%s'",
					    w->s[0] == 'm' ? "l4proto" : "zone", w->s);
		} else {
			return fail(sc, w->col, "'%s' is not a match (ip, ip6, saddr, daddr, a "
				    "protocol, sport, dport, zone, iif, iifname) or an action (snat, "
				    "dnat, masquerade)", w->s);
		}
	}
	return fail(sc, sc->end_col, "no action: expected snat, dnat or masquerade");
}

static int action(struct scan *sc, struct nat_rule *r)
{
	const struct word *w = peek(sc), *v;
	bool pfx;

	if (!w)
		return fail(sc, sc->end_col, "no action: expected snat, dnat or masquerade");
	sc->i++;
	r->action = !strcmp(w->s, "snat") ? NAT_RULE_SNAT :
		    !strcmp(w->s, "dnat") ? NAT_RULE_DNAT : NAT_RULE_MASQUERADE;
	if (r->action == NAT_RULE_MASQUERADE) {
		if (!take(sc, "to"))
			return fail(sc, peek(sc) ? peek(sc)->col : sc->end_col,
				    "masquerade needs 'to ADDRESS' (the outgoing interface's "
				    "address, which a capture does not say)");
		if (!(v = value(sc, "to", "the address")) || target(sc, v, r) < 0)
			return -1;
		if (addr_cmp(r->to_family, &r->range.min_addr, &r->range.max_addr) != 0)
			return fail(sc, v->col, "masquerade takes one address, not a range");
		return flags(sc, r);
	}
	/* "snat ip to ..." (nftables inet tables) */
	if (take(sc, "ip"))
		r->to_family = CT_L3_IPV4;
	else if (take(sc, "ip6"))
		r->to_family = CT_L3_IPV6;
	pfx = take(sc, "prefix");
	if (!take(sc, "to") && pfx)
		return fail(sc, peek(sc) ? peek(sc)->col : sc->end_col, "expected 'to' after 'prefix'");
	if (!(v = value(sc, w->s, "the target address")))
		return -1;
	if (pfx) {
		struct nat_rule_prefix p;
		uint8_t said = r->to_family;

		memset(&p, 0, sizeof(p));
		if (prefix(sc, v, &p) < 0)
			return -1;
		if (said && said != p.l3)
			return fail(sc, v->col, "'%s' is not an %s prefix", v->s,
				    said == CT_L3_IPV4 ? "IPv4" : "IPv6");
		r->range.flags |= CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_NETMAP;
		r->range.min_addr = p.addr;
		r->range.max_addr = p.addr;
		mask(&r->range.max_addr, p.l3, p.len, true);
		r->to_family = p.l3;
		r->has_to = true;
	} else {
		uint8_t said = r->to_family;

		if (target(sc, v, r) < 0)
			return -1;
		if (said && said != r->to_family)
			return fail(sc, v->col, "'%s' is not an %s address", v->s,
				    said == CT_L3_IPV4 ? "IPv4" : "IPv6");
	}
	return flags(sc, r);
}

static void warn(struct nat_rule_diag *d, unsigned col, const char *msg)
{
	if (!d || d->msg[0])
		return;
	d->column = col;
	snprintf(d->msg, sizeof(d->msg), "%s", msg);
}

/* things that parse but can never match */
static void check(const struct nat_rule *r, struct nat_rule_diag *w)
{
	uint8_t fam = r->family;

	if (r->saddr.set && fam && r->saddr.l3 != fam)
		warn(w, 1, "can never match: saddr is of the other family");
	if (r->daddr.set && fam && r->daddr.l3 != fam)
		warn(w, 1, "can never match: daddr is of the other family");
	if (r->saddr.set && r->daddr.set && r->saddr.l3 != r->daddr.l3)
		warn(w, 1, "can never match: saddr and daddr are of different families");
	if (!fam)
		fam = r->saddr.set ? r->saddr.l3 : r->daddr.set ? r->daddr.l3 : 0;
	if (r->l4 == 1 && fam == CT_L3_IPV6)
		warn(w, 1, "can never match: icmp is IPv4's (icmpv6 for IPv6)");
	if (r->l4 == 58 && fam == CT_L3_IPV4)
		warn(w, 1, "can never match: icmpv6 is IPv6's (icmp for IPv4)");
	if (r->l4 == 1 && !fam)
		fam = CT_L3_IPV4;
	if (r->l4 == 58 && !fam)
		fam = CT_L3_IPV6;
	if ((r->sport.set || r->dport.set) && r->l4 >= 0 && !has_ports(r->l4))
		warn(w, 1, "can never match: sport/dport on a protocol without ports");
	if (r->to_family && fam && r->to_family != fam)
		warn(w, 1, "can never apply: the target is of the other family than the "
		     "traffic the rule matches");
	if (r->action == NAT_RULE_MASQUERADE && r->to_family == CT_L3_IPV4 &&
	    r->saddr.set && r->saddr.l3 == CT_L3_IPV4 && r->saddr.len == 32 &&
	    r->saddr.addr.ip4 == 0)
		warn(w, 1, "can never apply: masquerade leaves a source of 0.0.0.0 alone");
}

int nat_rule_parse(const char *text, struct nat_rule *r, struct nat_rule_diag *err,
		   struct nat_rule_diag *wd)
{
	struct scan *sc = calloc(1, sizeof(*sc));
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->l4 = -1;
	r->zone = -1;
	r->iif = -1;
	snprintf(r->text, sizeof(r->text), "%s", text);
	memset(err, 0, sizeof(*err));
	if (wd)
		memset(wd, 0, sizeof(*wd));
	if (!sc) {
		err->column = 1;
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -1;
	}
	sc->err = err;
	if (split(sc, text) < 0)
		goto out;
	if (sc->n == 0) {
		fail(sc, 1, "empty rule");
		goto out;
	}
	if (matches(sc, r) < 0 || action(sc, r) < 0)
		goto out;
	check(r, wd);
	rc = 0;
out:
	free(sc);
	return rc;
}

void nat_rule_format(char *buf, size_t size, const char *origin, const char *text,
		     const struct nat_rule_diag *d)
{
	snprintf(buf, size, "%s: rule '%s': column %u: %s", origin, text, d->column, d->msg);
}

void nat_rules_free(struct nat_rules *rs)
{
	free(rs->v);
	rs->v = NULL;
	rs->n = rs->cap = 0;
}

int nat_rules_add(struct nat_rules *rs, const char *origin, const char *text, char *msg,
		  size_t msglen, void (*on_warn)(void *arg, const char *line), void *arg)
{
	struct nat_rule_diag err, wd;
	struct nat_rule r;

	if (nat_rule_parse(text, &r, &err, &wd) < 0) {
		nat_rule_format(msg, msglen, origin, text, &err);
		return -1;
	}
	if (wd.msg[0] && on_warn) {
		char line[600];

		nat_rule_format(line, sizeof(line), origin, text, &wd);
		on_warn(arg, line);
	}
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 8;
		struct nat_rule *v = realloc(rs->v, cap * sizeof(*v));

		if (!v) {
			snprintf(msg, msglen, "%s: out of memory", origin);
			return -1;
		}
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n++] = r;
	return 0;
}

int nat_rules_load(struct nat_rules *rs, const char *path, char *msg, size_t msglen,
		   void (*on_warn)(void *arg, const char *line), void *arg)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned lineno = 0;

	if (!f) {
		snprintf(msg, msglen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char origin[512], *p = line, *hash, *e;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(msg, msglen, "%s:%u: line longer than %zu characters", path, lineno,
				 sizeof(line) - 2);
			fclose(f);
			return -1;
		}
		hash = strchr(p, '#');
		if (hash)
			*hash = '\0';
		while (isspace((unsigned char)*p))
			p++;
		e = p + strlen(p);
		while (e > p && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (!*p)
			continue;
		snprintf(origin, sizeof(origin), "%s:%u", path, lineno);
		if (nat_rules_add(rs, origin, p, msg, msglen, on_warn, arg) < 0) {
			fclose(f);
			return -1;
		}
	}
	if (ferror(f)) {
		snprintf(msg, msglen, "%s: read error", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static bool prefix_match(const struct nat_rule_prefix *p, uint8_t l3, const union ct_addr *a)
{
	union ct_addr m = *a;

	if (p->l3 != l3)
		return false;
	mask(&m, l3, p->len, false);
	return addr_cmp(l3, &m, &p->addr) == 0;
}

bool nat_rule_matches(const struct nat_rule *r, const struct ct_tuple *t, int32_t iif,
		      const char *iifname)
{
	if (r->family && r->family != t->l3)
		return false;
	if (r->to_family && r->to_family != t->l3)
		return false;
	if (r->l4 >= 0 && r->l4 != t->l4)
		return false;
	if (r->saddr.set && !prefix_match(&r->saddr, t->l3, &t->src))
		return false;
	if (r->daddr.set && !prefix_match(&r->daddr, t->l3, &t->dst))
		return false;
	if ((r->sport.set || r->dport.set) && !has_ports(t->l4))
		return false;
	if (r->sport.set && (t->sport < r->sport.lo || t->sport > r->sport.hi))
		return false;
	if (r->dport.set && (t->dport < r->dport.lo || t->dport > r->dport.hi))
		return false;
	if (r->zone >= 0 && r->zone != t->zone)
		return false;
	if (r->iif >= 0 && r->iif != iif)
		return false;
	if (r->iifname[0] && (!iifname || strcmp(r->iifname, iifname) != 0))
		return false;
	return true;
}

const struct nat_rule *nat_rules_first(const struct nat_rules *rs, enum ct_nat_manip manip,
				       const struct ct_tuple *t, int32_t iif,
				       const char *iifname)
{
	for (size_t i = 0; i < rs->n; i++) {
		const struct nat_rule *r = &rs->v[i];
		bool dst = r->action == NAT_RULE_DNAT;

		if (dst != (manip == CT_NAT_MANIP_DST))
			continue;
		if (nat_rule_matches(r, t, iif, iifname))
			return r;
	}
	return NULL;
}
