/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tuple.h - tuples and trackable packets built field by field
 * (tests/support), for tests that feed the tracker without a parser.
 */
#ifndef CT_TS_TUPLE_H
#define CT_TS_TUPLE_H

#include <stdint.h>

#include "ctrack/packet.h"

/* An IPv4 tuple of protocol @l4, addresses in host order, zone 0. */
struct ct_tuple ts_tuple4(uint8_t l4, uint32_t src, uint32_t dst, uint16_t sport,
			  uint16_t dport);

/* An IPv6 tuple with addresses 2001:db8::<src_last> / 2001:db8::<dst_last>. */
struct ct_tuple ts_tuple6(uint8_t l4, uint8_t src_last, uint8_t dst_last, uint16_t sport,
			  uint16_t dport);

/* @t seen from the other end: endpoints and ports swapped (for every
 * protocol but ICMP's queries, whose reply type differs: ct_tuple_invert). */
struct ct_tuple ts_reverse(const struct ct_tuple *t);

/* A trackable packet carrying @t (the direction it travels in), every
 * other field zero. */
void ts_packet_of(struct ct_packet *pkt, const struct ct_tuple *t);

/* A trackable IPv4 UDP datagram with 20 bytes of payload (IP length 48,
 * UDP length 28), addresses in host order, every other field zero. */
struct ct_packet ts_udp4(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport);

#endif /* CT_TS_TUPLE_H */
