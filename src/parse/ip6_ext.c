/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ip6_ext.c - the kernel's ipv6_skip_exthdr() over a bounded buffer
 * (ip6_ext.h): the one walk of IPv6 extension headers that the quoted
 * packet of an ICMPv6 error and reassembly make (the IPv6 header parser,
 * ip.c, walks the chain itself, recording what it meets on the way).
 */
#include "parse/ip6_ext.h"

int32_t ct_ip6_skip_exthdr(const uint8_t *ip6, uint32_t avail, uint32_t start,
			   uint8_t *nexthdr, uint16_t *frag_off)
{
	uint8_t nh = *nexthdr;

	*frag_off = 0;
	while (ct_ip6_is_ext(nh)) {
		const uint8_t *h;

		if (nh == CT_IPPROTO_NONE)
			return -1;
		if (avail < 2 || start > avail - 2)
			return -1;
		h = ip6 + start;
		if (nh == CT_IPPROTO_FRAGMENT) {
			if (start > avail - 4)
				return -1;
			*frag_off = ct_rd16(h + 2);
			if (*frag_off & ~7u)
				break;
		}
		start += ct_ip6_ext_len(nh, h);
		nh = h[0];
		if (start > INT32_MAX)
			return -1;
	}
	*nexthdr = nh;
	return (int32_t)start;
}
