/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.h - what every file of the parser reads the wire with, and what
 * nobody outside parse/ needs: bounded big-endian reads, protocol
 * numbers, zeroing a packet, failing one.
 *
 * The parser is split by layer; each layer hands the next a pointer, the
 * bytes the capture holds from there (cap) and the bytes the IP headers
 * say belong to the datagram from there.  Every read is checked against
 * the capture first, so no function here can read outside the frame.
 * Multi-byte fields are read with memcpy (the frame has no alignment
 * promise) and converted from network order.
 */
#ifndef CT_PARSE_WIRE_H
#define CT_PARSE_WIRE_H

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

#endif /* CT_PARSE_WIRE_H */
