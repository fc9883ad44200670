/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ip6_ext.h - the IPv6 extension-header walk: a leaf that the IPv6 header
 * parser, the quoted packet of an ICMPv6 error (l4.c) and reassembly use (private to parse/).
 */
#ifndef CT_PARSE_IP6_EXT_H
#define CT_PARSE_IP6_EXT_H

#include <stdbool.h>
#include <stdint.h>

#include "parse/wire.h"

/* Is @nh an extension header the walk steps over (hop-by-hop, routing,
 * fragment, AH, none, destination options)? */
static inline bool ct_ip6_is_ext(uint8_t nh)
{
	return nh == CT_IPPROTO_HOPOPTS || nh == CT_IPPROTO_ROUTING ||
	       nh == CT_IPPROTO_FRAGMENT || nh == CT_IPPROTO_AH ||
	       nh == CT_IPPROTO_NONE || nh == CT_IPPROTO_DSTOPTS;
}

/*
 * ct_ip6_skip_exthdr - the kernel's ipv6_skip_exthdr() over a buffer of
 * @avail bytes: walks extension headers from @start (the byte after the
 * fixed header) while *@nexthdr is one of hop-by-hop, routing, fragment,
 * AH, none, destination options.  Stops at a fragment header whose offset
 * is not zero (*@frag_off gets its raw offset field).  Returns the offset
 * of the upper-layer header (it may lie past @avail, as in the kernel),
 * or -1 when a header cannot be read or the chain ends in "no next
 * header".
 */
int32_t ct_ip6_skip_exthdr(const uint8_t *ip6, uint32_t avail, uint32_t start,
			   uint8_t *nexthdr, uint16_t *frag_off);

/* Smallest upper-layer header nf_defrag_ipv6 wants to see in a first
 * fragment before it queues it (ipv6frag_thdr_truncated). */
static inline uint32_t ct_ip6_min_upper(uint8_t nh)
{
	switch (nh) {
	case CT_IPPROTO_TCP:
		return 20;
	case CT_IPPROTO_UDP:
	case CT_IPPROTO_ICMPV6:
		return 8;
	default:
		return 1;
	}
}

/* Length of the IPv6 extension header @h of type @nh. */
static inline uint32_t ct_ip6_ext_len(uint8_t nh, const uint8_t *h)
{
	if (nh == CT_IPPROTO_FRAGMENT)
		return 8;
	if (nh == CT_IPPROTO_AH)                /* 4-byte units, minus 2 */
		return ((uint32_t)h[1] + 2) * 4;
	return ((uint32_t)h[1] + 1) * 8;        /* 8-byte units, minus 1 */
}

#endif /* CT_PARSE_IP6_EXT_H */
