/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tuple.c - inverting and printing tuples.
 *
 * ct_tuple_invert() is nf_ct_invert_tuple(): swap the endpoints, and for
 * ICMP/ICMPv6 queries map the request type to its reply type.  The
 * printer writes a tuple exactly as conntrack(8) does, protocol by
 * protocol, because users diff our listings against conntrack -L.
 *
 * The printer is the tool's hottest loop (a listing of a million entries
 * is four addresses and four numbers a line, issue 25: at least 5M lines
 * a second), so it is written by hand into the caller's memory:
 * snprintf parses its format at every field and inet_ntop costs more
 * than the rest of a line, while here an address byte is a 4-byte copy
 * from a table and a number a run of digit pairs.  ct_tuple_put_addr
 * reproduces glibc's inet_ntop exactly (RFC 5952: the first longest run
 * of two or more zero groups compressed, embedded IPv4 in ::a.b.c.d and
 * ::ffff:a.b.c.d), which tests/daemon/test_format.c checks against
 * inet_ntop itself; ct_tuple_format is ct_tuple_put with snprintf's
 * contract, for callers that want a C string.
 */
#include <netinet/in.h>
#include <string.h>

#include "ctrack/dec.h"
#include "ctrack/tuple.h"

/* ICMP request type -> reply type + 1 (0 = not a query we can invert),
 * as the kernel's invmap in nf_conntrack_proto_icmp.c. */
static const uint8_t icmp_invmap[] = {
	[8] = 0 + 1,   /* echo -> echo reply */
	[0] = 8 + 1,   /* echo reply -> echo */
	[13] = 14 + 1, /* timestamp */
	[14] = 13 + 1,
	[15] = 16 + 1, /* info request */
	[16] = 15 + 1,
	[17] = 18 + 1, /* address mask */
	[18] = 17 + 1,
};

/* ICMPv6: echo 128/129, node information 139/140. */
static const uint8_t icmpv6_invmap[] = {
	[128 - 128] = 129 - 128 + 1,
	[129 - 128] = 128 - 128 + 1,
	[139 - 128] = 140 - 128 + 1,
	[140 - 128] = 139 - 128 + 1,
};

bool ct_tuple_invert(const struct ct_tuple *t, struct ct_tuple *out)
{
	struct ct_tuple r = *t;

	r.src = t->dst;
	r.dst = t->src;
	if (t->l4 == IPPROTO_ICMP || t->l4 == IPPROTO_ICMPV6) {
		uint8_t type = ct_tuple_icmp_type(t), code = ct_tuple_icmp_code(t);
		uint8_t inv;

		if (t->l4 == IPPROTO_ICMP) {
			if (type >= sizeof(icmp_invmap) || !icmp_invmap[type])
				return false;
			inv = (uint8_t)(icmp_invmap[type] - 1);
		} else {
			if (type < 128 || type - 128 >= (int)sizeof(icmpv6_invmap) ||
			    !icmpv6_invmap[type - 128])
				return false;
			inv = (uint8_t)(icmpv6_invmap[type - 128] - 1 + 128);
		}
		r.sport = t->sport; /* the id stays */
		r.dport = (uint16_t)(inv << 8 | code);
	} else {
		r.sport = t->dport;
		r.dport = t->sport;
	}
	*out = r;
	return true;
}

/* @v in lower-case hex without leading zeros ("%x"). */
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

static inline char *put_ip4(char *p, const uint8_t *b)
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
			return put_ip4(p, a + 12);
		p = put_hex(p, w[i]);
	}
	if (best >= 0 && best + best_len == 8)
		*p++ = ':';
	return p;
}

static inline char *put_addr(char *p, uint8_t l3, const union ct_addr *a)
{
	if (l3 == CT_L3_IPV6)
		return put_ip6(p, a->ip6);
	return put_ip4(p, (const uint8_t *)&a->ip4);
}

char *ct_tuple_put_addr(char *buf, uint8_t l3, const union ct_addr *a)
{
	return put_addr(buf, l3, a);
}

char *ct_tuple_put(char *p, const struct ct_tuple *t)
{
	p = PUT(p, "src=");
	p = put_addr(p, t->l3, &t->src);
	p = PUT(p, " dst=");
	p = put_addr(p, t->l3, &t->dst);
	switch (t->l4) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
		p = PUT(p, " sport=");
		p = ct_dec_put(p, t->sport);
		p = PUT(p, " dport=");
		return ct_dec_put(p, t->dport);
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		p = PUT(p, " type=");
		p = ct_dec_put(p, ct_tuple_icmp_type(t));
		p = PUT(p, " code=");
		p = ct_dec_put(p, ct_tuple_icmp_code(t));
		p = PUT(p, " id=");
		return ct_dec_put(p, t->sport);
	case IPPROTO_GRE:
		p = PUT(p, " srckey=0x");
		p = put_hex(p, t->sport);
		p = PUT(p, " dstkey=0x");
		return put_hex(p, t->dport);
	default:
		return p;
	}
}

int ct_tuple_format(const struct ct_tuple *t, char *buf, unsigned size)
{
	char text[CT_TUPLE_TEXT_MAX];
	size_t n = (size_t)(ct_tuple_put(text, t) - text);

	if (size) {
		size_t k = n < size - 1 ? n : size - 1;

		memcpy(buf, text, k);
		buf[k] = '\0';
	}
	return (int)n;
}
