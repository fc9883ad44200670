/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * parse_priv.h - what the parser's files (parse_link.c, parse_ip.c,
 * parse_l4.c, checksum.c, defrag.c) share and nobody else needs.
 *
 * The parser is split by layer; each layer hands the next a pointer, the
 * bytes the capture holds from there (cap) and the bytes the IP headers
 * say belong to the datagram from there.  Every read is checked against
 * the capture first, so no function here can read outside the frame.
 * Multi-byte fields are read with memcpy (the frame has no alignment
 * promise) and converted from network order.
 */
#ifndef CT_PARSE_PRIV_H
#define CT_PARSE_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ctrack/packet.h"

#define CT_IPPROTO_HOPOPTS  0
#define CT_IPPROTO_ICMP     1
#define CT_IPPROTO_TCP      6
#define CT_IPPROTO_UDP      17
#define CT_IPPROTO_ROUTING  43
#define CT_IPPROTO_FRAGMENT 44
#define CT_IPPROTO_GRE      47
#define CT_IPPROTO_ESP      50
#define CT_IPPROTO_AH       51
#define CT_IPPROTO_ICMPV6   58
#define CT_IPPROTO_NONE     59
#define CT_IPPROTO_DSTOPTS  60
#define CT_IPPROTO_SCTP     132
#define CT_IPPROTO_UDPLITE  136

/* "wire" length meaning: the link layer cannot say how long the datagram
 * was (NFLOG), so trust the IP header. */
#define CT_WIRE_UNKNOWN UINT32_MAX

static inline uint16_t ct_rd16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t ct_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return __builtin_bswap32(v);
}

static inline uint32_t ct_min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * Zero a packet with plain 16-byte stores: for a 160-byte struct the
 * compiler's memset becomes "rep stos", whose start-up alone costs more
 * than the rest of a TCP/IPv4 parse.  The empty asm hides the zero from
 * the optimiser, which would otherwise merge the stores back into memset.
 */
static inline void ct_packet_zero(struct ct_packet *pkt)
{
#if defined(__x86_64__)
	typedef uint64_t ct_v2u64 __attribute__((vector_size(16)));
	ct_v2u64 z = { 0, 0 };
	uint8_t *p = (uint8_t *)pkt;
	size_t i;

	_Static_assert(sizeof(struct ct_packet) % 8 == 0,
		       "ct_packet_zero needs a multiple of 8 bytes");
	__asm__("" : "+x"(z));
	/* unrolled: as a loop it costs four instructions per store */
#pragma GCC unroll 16
	for (i = 0; i + 16 <= sizeof(*pkt); i += 16)
		memcpy(p + i, &z, 16);
	if (i < sizeof(*pkt))
		memcpy(p + i, &z, 8);
#else
	memset(pkt, 0, sizeof(*pkt));
#endif
}

static inline enum ct_pkt_kind ct_parse_fail(struct ct_packet *pkt,
					     enum ct_parse_reason r)
{
	pkt->kind = CT_PKT_INVALID;
	pkt->reason = (uint8_t)r;
	return CT_PKT_INVALID;
}

/* ct_parse_ip6 flags */
enum {
	/* Treat a fragment header with offset 0 as transparent even when M
	 * is set: the packet is what conntrack sees after nf_defrag_ipv6
	 * gave up on it and let it pass (defrag.c). */
	CT_P6_FRAG_PASS = 0x1,
};

/*
 * Layer entry points.  The packet must be zeroed and ts/ifindex/vlan set
 * by the caller; @cap is the bytes captured from @ip on, @wire the bytes
 * the frame had on the wire from @ip on (CT_WIRE_UNKNOWN when unknown).
 */
enum ct_pkt_kind ct_parse_ip4_hdr(struct ct_packet *pkt, const uint8_t *ip,
				  uint32_t cap, uint32_t wire);
enum ct_pkt_kind ct_parse_ip6_hdr(struct ct_packet *pkt, const uint8_t *ip,
				  uint32_t cap, uint32_t wire, unsigned flags);
enum ct_pkt_kind ct_parse_ip_any(struct ct_packet *pkt, const uint8_t *ip,
				 uint32_t cap, uint32_t wire);

/*
 * ct_parse_ip6_pass - @frag, a first IPv6 fragment (kind FRAGMENT, offset
 * 0, more fragments) that defrag lets through, parsed into @out as the
 * whole packet conntrack then sees (its fragment header transparent):
 * the fields the fixed header and the chain in front of the fragment
 * header gave @frag are copied, and the walk of the chain goes on from
 * the fragment header instead of from the fixed header (the same walk
 * ct_parse_ip6_hdr(out, ip, cap, l3_len, CT_P6_FRAG_PASS) would make from
 * the start: tests/parse/test_ip6_resume.c checks the two agree).  The
 * zone is the caller's to set.
 */
enum ct_pkt_kind ct_parse_ip6_pass(struct ct_packet *out,
				   const struct ct_packet *frag);

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

/*
 * ct_parse_l4 - validate and summarise the L4 header at pkt->l4 for a
 * packet that is not a fragment (pkt->tuple.l3/l4, l4, l4_len, l4_caplen,
 * truncated are set).  Fills ports, u.*, payload_len; returns the kind.
 */
enum ct_pkt_kind ct_parse_l4(struct ct_packet *pkt);

/* ct_parse_l4 for TCP and for UDP: the IPv4 parser calls them directly
 * for the two protocols most packets carry. */
enum ct_pkt_kind ct_parse_tcp(struct ct_packet *pkt);
enum ct_pkt_kind ct_parse_udp(struct ct_packet *pkt);

/*
 * ct_l4_tuple_ports - the per-protocol part of the kernel's
 * nf_ct_get_tuple(): fill t->sport/dport from the @avail bytes at @l4 for
 * protocol t->l4.  Returns false where the kernel's tuple extraction
 * fails (too few bytes, enhanced GRE that is not PPP).  Used for the
 * quoted packet in ICMP errors and for the first fragment of a datagram.
 */
bool ct_l4_tuple_ports(struct ct_tuple *t, const uint8_t *l4, uint32_t avail);

/* Ones'-complement sum of @len bytes, not folded, in memory order. */
uint64_t ct_csum_partial(const uint8_t *p, uint32_t len, uint64_t sum);

/* Fold a ct_csum_partial() sum to 16 bits. */
static inline uint16_t ct_csum_fold(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

#endif /* CT_PARSE_PRIV_H */
