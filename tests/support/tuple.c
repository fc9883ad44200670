/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tuple.c - tuples and trackable packets built field by field (tuple.h).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "tuple.h"

struct ct_tuple ts_tuple4(uint8_t l4, uint32_t src, uint32_t dst, uint16_t sport,
			  uint16_t dport)
{
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = CT_L3_IPV4;
	t.l4 = l4;
	t.src.ip4 = htonl(src);
	t.dst.ip4 = htonl(dst);
	t.sport = sport;
	t.dport = dport;
	return t;
}

struct ct_tuple ts_tuple6(uint8_t l4, uint8_t src_last, uint8_t dst_last, uint16_t sport,
			  uint16_t dport)
{
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = CT_L3_IPV6;
	t.l4 = l4;
	t.src.ip6[0] = 0x20;
	t.src.ip6[1] = 0x01;
	t.src.ip6[2] = 0x0d;
	t.src.ip6[3] = 0xb8;
	t.dst = t.src;
	t.src.ip6[15] = src_last;
	t.dst.ip6[15] = dst_last;
	t.sport = sport;
	t.dport = dport;
	return t;
}

struct ct_tuple ts_reverse(const struct ct_tuple *t)
{
	struct ct_tuple r = *t;

	r.src = t->dst;
	r.dst = t->src;
	r.sport = t->dport;
	r.dport = t->sport;
	return r;
}

void ts_packet_of(struct ct_packet *pkt, const struct ct_tuple *t)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->tuple = *t;
	pkt->kind = CT_PKT_TRACKABLE;
}

struct ct_packet ts_udp4(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
	struct ct_tuple t = ts_tuple4(IPPROTO_UDP, src, dst, sport, dport);
	struct ct_packet p;

	ts_packet_of(&p, &t);
	p.l3_len = 48;
	p.l4_len = 28;
	p.payload_len = 20;
	return p;
}
