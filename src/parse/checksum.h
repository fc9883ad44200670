/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * checksum.h - ones'-complement sums (the verdicts are the public
 * ct_packet_*_csum_ok, ctrack/packet.h) (private to parse/).
 */
#ifndef CT_PARSE_CHECKSUM_H
#define CT_PARSE_CHECKSUM_H

#include <stdint.h>

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

#endif /* CT_PARSE_CHECKSUM_H */
