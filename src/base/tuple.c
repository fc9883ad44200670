/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tuple.c - inverting and printing tuples.
 *
 * ct_tuple_invert() is nf_ct_invert_tuple(): swap the endpoints, and for
 * ICMP/ICMPv6 queries map the request type to its reply type.  The
 * formatter prints a tuple exactly as conntrack(8) does, protocol by
 * protocol, because users diff our listings against conntrack -L.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

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

static void addr_str(const struct ct_tuple *t, const union ct_addr *a,
		     char *buf, size_t size)
{
	if (t->l3 == CT_L3_IPV6)
		inet_ntop(AF_INET6, a->ip6, buf, (socklen_t)size);
	else
		inet_ntop(AF_INET, &a->ip4, buf, (socklen_t)size);
}

int ct_tuple_format(const struct ct_tuple *t, char *buf, unsigned size)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	addr_str(t, &t->src, s, sizeof(s));
	addr_str(t, &t->dst, d, sizeof(d));
	switch (t->l4) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
		return snprintf(buf, size, "src=%s dst=%s sport=%u dport=%u",
				s, d, t->sport, t->dport);
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return snprintf(buf, size, "src=%s dst=%s type=%u code=%u id=%u",
				s, d, ct_tuple_icmp_type(t),
				ct_tuple_icmp_code(t), t->sport);
	case IPPROTO_GRE:
		return snprintf(buf, size, "src=%s dst=%s srckey=0x%x dstkey=0x%x",
				s, d, t->sport, t->dport);
	default:
		return snprintf(buf, size, "src=%s dst=%s", s, d);
	}
}
